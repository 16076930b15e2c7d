"""Expected risk at scale: a subset of candidates, the risk sum on a subsample of the pool.

Exact expected risk reads one covariance row of length n per candidate: O(n^2) per query
dense, O(n^2 r) with a factor (docs/algorithms.md §8), hopeless at 10^5-10^6 points. This criterion
estimates it:

* candidates: the ``n_uncertain`` points with the smallest margin (the cheap score, O(n T);
  ties by position, found by a partition, not a sort of all n margins) plus ``n_random``
  points drawn uniformly from the rest (in pool order), so that the cluster centres ARLS
  prefers early on stay reachable;
* the risk sum ``R(F) = sum_z r_z(F)`` (eq. 3.49) over a uniform subsample ``Z`` of
  ``n_points`` pool points, the SAME for every candidate (common random numbers: the
  candidates are compared on the same points, so the noise of the estimate mostly cancels in
  their ranking), together with the candidates themselves (each candidate's own column is
  needed for ``C_ii``), scaled by ``n / |Z u candidates|``.

With ``n_points >= n`` and every unlabelled point a candidate the score is the exact expected
risk. Candidates left out score ``+inf``. The generator is seeded per call from ``seed`` and
the number of candidates offered (one fewer after every label), so a query is reproducible.
"""

from __future__ import annotations

import numpy as np

from .base import ScoringState
from .expected_risk import score_block
from .simple import margins

__all__ = ["SubsampledExpectedRisk", "smallest_stable"]


class SubsampledExpectedRisk:
    """Expected risk of a candidate subset, estimated on a common subsample of the pool.

    Parameters
    ----------
    n_uncertain : int
        Candidates with the smallest margin.
    n_random : int
        Further candidates drawn uniformly.
    n_points : int
        Size of the pool subsample the risk sum is taken over.
    seed : int
        Seeds the draws (mixed with the number of candidates offered, so that every query
        of a run draws anew and a rerun draws the same).
    """

    name = "arls-subsampled"
    needs_posterior = True

    def __init__(self, n_uncertain: int = 500, n_random: int = 500, n_points: int = 20_000, seed: int = 0):
        for name, value in (("n_uncertain", n_uncertain), ("n_random", n_random), ("n_points", n_points)):
            if isinstance(value, bool) or int(value) != value or value < 0:
                raise ValueError(f"{name} must be an integer >= 0; got {value!r}.")
        if n_uncertain + n_random < 1 or n_points < 1:
            raise ValueError("at least one candidate and one pool point are needed.")
        self.n_uncertain, self.n_random, self.n_points = int(n_uncertain), int(n_random), int(n_points)
        self.seed = seed

    def choose(self, state: ScoringState, candidates: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The scored subset of ``candidates`` (sorted pool indices)."""
        cand = np.asarray(candidates, dtype=np.int64)
        if cand.size <= self.n_uncertain + self.n_random:
            return np.sort(cand)
        marg = margins(state.outputs_T[:, cand])
        chosen = smallest_stable(marg, self.n_uncertain)
        rest = np.ones(cand.size, dtype=bool)
        rest[chosen] = False
        rest = np.flatnonzero(rest)  # positions in cand, in order (not sorted by margin: O(n))
        extra = rng.choice(rest, size=min(self.n_random, rest.size), replace=False)
        return np.sort(cand[np.concatenate([chosen, extra])])

    def plan(self, state: ScoringState, n_samples: int, candidates) -> tuple[np.ndarray, np.ndarray]:
        """The candidates scored and the pool points the risk sum runs over, for one query.

        Returns
        -------
        scored : ndarray of shape (k,) of int64
            Sorted subset of ``candidates``.
        cols : ndarray of shape (c,) of int64
            Sorted pool points: the subsample and the scored candidates (each candidate's own
            column gives ``C_ii``); the estimate is scaled by ``n_samples / c``.
        """
        cand = np.ascontiguousarray(candidates, dtype=np.int64)
        rng = np.random.default_rng([int(self.seed), int(cand.size)])
        scored = self.choose(state, cand, rng)
        if self.n_points >= n_samples:
            points = np.arange(n_samples)
        else:
            points = np.sort(rng.choice(n_samples, size=self.n_points, replace=False))
        return scored, np.union1d(points, scored)

    def score(self, state: ScoringState, posterior, candidates) -> np.ndarray:
        """Estimated expected risk of each candidate (``+inf`` for those not scored), shape (k,)."""
        cand = np.ascontiguousarray(candidates, dtype=np.int64)
        n = posterior.n_samples
        scored, cols = self.plan(state, n, cand)
        R = np.ascontiguousarray(posterior.cross(scored, cols))
        local = np.searchsorted(cols, scored)
        sub = ScoringState(np.ascontiguousarray(state.outputs_T[:, cols]), state.hypothetical_lam,
                           state.class_weights)
        est = score_block((R, np.arange(scored.size, dtype=np.int64), local), sub) * (n / cols.size)
        out = np.full(cand.size, np.inf)
        out[positions(cand, scored)] = est
        return out


def smallest_stable(values: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` smallest ``values``, ties by position: the first ``k`` of
    ``np.argsort(values, kind="stable")``, in that order, in O(n) plus a sort of the values at
    or below the k-th smallest (not of all n: 0.1-0.3 s at 10^6 margins)."""
    values = np.asarray(values)
    k = int(k)
    if k <= 0:
        return np.zeros(0, dtype=np.intp)
    if k >= values.size:
        return np.argsort(values, kind="stable")
    kth = np.partition(values, k - 1)[k - 1]
    if kth != kth:  # NaN among the k smallest (sorted last): the plain sort orders them
        return np.argsort(values, kind="stable")[:k]
    cand = np.flatnonzero(values <= kth)  # >= k positions, in order
    return cand[np.argsort(values[cand], kind="stable")][:k]


def positions(cand: np.ndarray, scored: np.ndarray) -> np.ndarray:
    """Where each of ``scored`` (a subset of ``cand``) sits in ``cand``."""
    if np.all(np.diff(cand) > 0):
        return np.searchsorted(cand, scored)
    return _positions(cand, scored)


def _positions(cand: np.ndarray, scored: np.ndarray) -> np.ndarray:
    """Where each of ``scored`` sits in the unsorted ``cand``."""
    where = {int(i): k for k, i in enumerate(cand)}
    return np.array([where[int(i)] for i in scored], dtype=np.int64)
