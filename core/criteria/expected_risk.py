"""The ARLS criterion: expected risk of labelling each candidate (seed 002 eq. 3.50).

``E_i = sum_y p_L(y | x_i) / w_y * R(F_{L + (x_i, y)})`` with the exact rank-one "add point"
update applied hypothetically and the bias-corrected risk ``R`` of eq. 3.47 / 3.49
(ALGORITHMS §3; conventions in :mod:`core.criteria.risk`). One fused pass over the rows of
``C`` scores every candidate for every hypothetical label: O(n) per candidate binary, O(n T)
one-vs-all whatever the class weights.
"""

from __future__ import annotations

import numpy as np

from . import _expected_risk_numba as _nb
from . import _expected_risk_weighted as _nbw
from .base import ScoringState
from .risk import expected_risk_reference_rows

__all__ = ["ExpectedRisk", "BACKENDS"]

BACKENDS = ("numba", "numpy")


def score_block(block, state: ScoringState, backend: str = "numba") -> np.ndarray:
    """Expected risk of the candidates of one :class:`~core.posteriors.base.CandidateBlock`.

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
    if np.all(w == w[0]):
        # equal weights (e.g. "none"): value-only, branch-free fast path, O(n T)
        _nb.expected_risk_multiclass_equal(R, rows, MT, cand, lam_y[0], iw[0], out)
        return out
    # distinct weights: O(n T) whatever the number of distinct hypothetical lambdas
    _nbw.expected_risk_multiclass_weighted(R, rows, cand, MT, np.ascontiguousarray(lam_y),
                                           np.ascontiguousarray(iw), out)
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
        """Expected risk of each candidate, ndarray of shape (k,), in the order given."""
        cand = np.ascontiguousarray(candidates, dtype=np.int64)
        out = np.empty(cand.shape[0])
        pos = 0
        for block in posterior.candidate_blocks(cand):
            k = block.candidates.shape[0]
            out[pos:pos + k] = score_block(block, state, self.backend)
            pos += k
        return out
