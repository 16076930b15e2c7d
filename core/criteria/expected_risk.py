"""The ARLS criterion: expected risk of labelling each candidate (seed 002 eq. 3.50).

``E_i = sum_y p_L(y | x_i) / w_y * R(F_{L + (x_i, y)})`` with the exact rank-one "add point"
update applied hypothetically and the bias-corrected risk ``R`` of eq. 3.47 / 3.49
(docs/algorithms.md §3; conventions in :mod:`core.criteria.risk`). One fused pass over the rows of
``C`` scores every candidate for every hypothetical label: O(n) per candidate binary, O(n T)
one-vs-all whatever the class weights, and O(G) instead of O(T) at the pool points that no
hypothesis can move across a clip bound or past the top output (``G`` distinct class
weights; :mod:`core.criteria._expected_risk_calm`).
"""

from __future__ import annotations

import numpy as np

from . import _expected_risk_bound as _nbb
from . import _expected_risk_numba as _nb
from . import _expected_risk_calm as _nbc
from .base import ScoringState
from .risk import expected_risk_reference_rows

__all__ = ["ExpectedRisk", "BACKENDS"]

BACKENDS = ("numba", "numpy")
#: Fewer candidates than this are scored exactly without bounds (the bound pass is not worth it).
PRUNE_MIN_CANDIDATES = 64
#: A bound is trusted to prune only when it exceeds the threshold by this fraction of itself
#: (the bound and the exact score are rounded differently; both are sums of n terms).
_BOUND_RTOL = 1e-9
#: Candidates scored exactly at a time by :meth:`ExpectedRisk.score_to_pick`, lowest bound
#: first; the threshold is tightened after each batch (a few per thread: they run in parallel).
_PICK_BATCH = 16


def score_block(block, state: ScoringState, backend: str = "numba", calm=None) -> np.ndarray:
    """Expected risk of the candidates of one :class:`~core.posteriors.base.CandidateBlock`.

    ``calm``: :func:`core.criteria._expected_risk_calm.prepare` of ``state`` (one-vs-all), to
    share between the blocks of one scoring call; computed here when omitted.

    Returns
    -------
    E : ndarray of shape (k,)
    """
    R, rows, cand = block
    MT = np.ascontiguousarray(state.outputs_T, dtype=np.float64)
    lam_y = np.asarray(state.hypothetical_lam, dtype=np.float64)
    w = np.asarray(state.class_weights, dtype=np.float64)
    out = np.empty(cand.shape[0])
    if cand.size == 0:
        return out
    if backend == "numpy":
        return expected_risk_reference_rows(R, rows, MT.T, cand, lam_y, w)
    iw = 1.0 / w
    if MT.shape[0] == 1:
        _nb.expected_risk_binary(R, rows, MT[0], cand, lam_y[0], lam_y[1], iw[0], iw[1], out)
        return out
    # one-vs-all, any class weights: O(n T) per candidate, O(n G) where nothing can happen
    _nbc.expected_risk_multiclass(R, rows, cand, MT, lam_y, iw, out, calm=calm)
    return out


class ExpectedRisk:
    """Soft expected risk (seed 002 eq. 3.50), binary and one-vs-all, weighted, bias-corrected.

    Parameters
    ----------
    backend : {"numba", "numpy"}
        Fused kernels, or the plain reference of :mod:`core.criteria.risk` (tests only).
    """

    name = "arls"
    needs_posterior = True

    def __init__(self, backend: str = "numba"):
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}; got {backend!r}.")
        self.backend = backend

    def score(self, state: ScoringState, posterior, candidates) -> np.ndarray:
        """Expected risk of each candidate, ndarray of shape (k,), in the order given.

        Binary, on a posterior with an update pending (a dense ``C`` after a label): the
        update is applied in the same pass over ``C`` as the scoring
        (:meth:`_score_with_pending_update`).
        """
        cand = np.ascontiguousarray(candidates, dtype=np.int64)
        fused = self._score_with_pending_update(state, posterior, cand)
        if fused is not None:
            return fused
        out = np.empty(cand.shape[0])
        calm = None
        if self.backend == "numba" and state.outputs_T.shape[0] > 1 and cand.size:
            calm = _nbc.prepare(state.outputs_T, state.hypothetical_lam, 1.0 / np.asarray(state.class_weights))
        pos = 0
        for block in posterior.candidate_blocks(cand):
            k = block.candidates.shape[0]
            out[pos:pos + k] = score_block(block, state, self.backend, calm)
            pos += k
        return out

    def _score_with_pending_update(self, state: ScoringState, posterior, cand: np.ndarray):
        """Binary scores of ``cand`` by :func:`~core.criteria._expected_risk_numba.update_and_score_binary`
        when ``posterior`` holds a rank-one update (``posterior.apply_pending``), else None.

        The same numbers as applying the update and scoring the rows of ``C``
        (``tests/test_fused_step.py``); one pass over ``C`` instead of two.
        """
        if (self.backend != "numba" or state.outputs_T.shape[0] != 1 or cand.size == 0
                or not posterior.has_pending):
            return None
        n = posterior.n_samples
        position = np.full(n, -1, dtype=np.int64)
        position[cand] = np.arange(cand.size, dtype=np.int64)
        if np.count_nonzero(position >= 0) != cand.size:
            return None  # a candidate given twice: the plain path scores each place
        m = np.ascontiguousarray(state.outputs_T[0], dtype=np.float64)
        lam_y = np.asarray(state.hypothetical_lam, dtype=np.float64)
        iw = 1.0 / np.asarray(state.class_weights, dtype=np.float64)
        out = np.empty(cand.size)

        def apply(C, c, alpha):
            _nb.update_and_score_binary(C, c, alpha, position, m, float(lam_y[0]), float(lam_y[1]),
                                        float(iw[0]), float(iw[1]), out)

        return out if posterior.apply_pending(apply) else None

    def score_to_pick(self, state: ScoringState, posterior, candidates, tie_rtol: float = 0.0) -> np.ndarray:
        """Scores that pick the same candidate as :meth:`score`, at a fraction of its cost.

        One-vs-all with distinct class weights: a cheap lower bound of every candidate's
        expected risk (:mod:`core.criteria._expected_risk_bound`, docs/algorithms.md §16), then
        the exact score of the candidates in increasing order of their bound, until the next
        bound exceeds ``best + tie_rtol * |best|`` (``best`` the lowest exact score so far).
        Every candidate whose score is within that threshold of the minimum is therefore scored
        exactly, as :meth:`score` would (same argmin, same ties); the others keep their bound,
        which is above the threshold. Binary, equal weights, the numpy backend and fewer than
        :data:`PRUNE_MIN_CANDIDATES` candidates: :meth:`score` itself.

        Parameters
        ----------
        state : ScoringState
        posterior : a posterior with ``candidate_blocks``
        candidates : array-like of int, shape (k,)
        tie_rtol : float
            The relative tolerance within which the caller treats scores as tied
            (``core.strategies.TIE_RTOL``).

        Returns
        -------
        s : ndarray of shape (k,)
            Exact expected risk where it can be the minimum (or tied with it), a lower bound
            of it elsewhere.
        """
        cand = np.ascontiguousarray(candidates, dtype=np.int64)
        lam_y = np.ascontiguousarray(state.hypothetical_lam, dtype=np.float64)
        w = np.asarray(state.class_weights, dtype=np.float64)
        equal = bool(np.all(lam_y == lam_y[0]) and np.all(w == w[0]))
        if (self.backend != "numba" or state.outputs_T.shape[0] == 1 or equal
                or cand.size < PRUNE_MIN_CANDIDATES):
            return self.score(state, posterior, cand)
        MT = np.ascontiguousarray(state.outputs_T, dtype=np.float64)
        iw = 1.0 / w
        bound = np.empty(cand.size)
        data = _nbb.prepare_bounds(MT, iw)
        pos = 0
        for R, rows, c in posterior.candidate_blocks(cand):
            _nbb.risk_lower_bounds(R, np.ascontiguousarray(rows, dtype=np.int64), c, MT, lam_y, iw,
                                   bound[pos:pos + c.shape[0]], data)
            pos += c.shape[0]
        out = bound.copy()
        order = np.argsort(bound, kind="stable")
        # a bound rules its candidate out when it exceeds the threshold by _BOUND_RTOL of
        # itself: ``trusted`` is increasing in the bound, so the candidates that can still be
        # within the threshold are a prefix of ``order``
        lb = bound[order]
        trusted = lb - _BOUND_RTOL * np.abs(lb)
        calm = _nbc.prepare(MT, lam_y, iw)
        best = np.inf
        start = 0
        while start < cand.size:
            end = cand.size
            if np.isfinite(best):
                end = int(np.searchsorted(trusted, best + tie_rtol * abs(best), side="right"))
                if end <= start:
                    break  # every remaining bound is above the threshold
            take = np.sort(order[start:min(end, start + _PICK_BATCH)])
            exact = np.empty(take.size)
            p = 0
            for block in posterior.candidate_blocks(cand[take]):
                k = block.candidates.shape[0]
                exact[p:p + k] = score_block(block, state, self.backend, calm)
                p += k
            out[take] = exact
            best = min(best, float(exact.min()))
            start += take.size
        return out
