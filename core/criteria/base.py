"""The criterion protocol: score a block of candidates from the learner's state.

A criterion turns the learner's state (outputs, class weights, the lambdas a candidate would
get) and its posterior into one score per candidate, lower meaning "query first". It never
owns storage: rows of the covariance come from the posterior one block at a time
(:meth:`core.posteriors.base.Posterior.candidate_blocks`), so the same criterion runs on a
dense array, a low-rank factor or, later, blocks scored elsewhere.
"""

from __future__ import annotations

from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

__all__ = ["ScoringState", "Criterion"]


class ScoringState(NamedTuple):
    """What a criterion may read of the learner (all arrays are the learner's own: read only).

    Attributes
    ----------
    outputs_T : ndarray of shape (T, n)
        Current outputs ``m`` transposed (T = 1 binary, +1 = classes[1]; T = n_classes
        one-vs-all).
    hypothetical_lam : ndarray of shape (n_classes,)
        ``lam / w_y``: the regularisation a candidate would get with label ``y``.
    class_weights : ndarray of shape (n_classes,)
        Current class weights ``w``.
    class_counts : ndarray of shape (n_classes,) of int, or None
        Labels per class (the "auto" strategy's switch, :mod:`core.criteria.auto`); None
        when the caller does not know them.
    """

    outputs_T: np.ndarray
    hypothetical_lam: np.ndarray
    class_weights: np.ndarray
    class_counts: np.ndarray | None = None

    @property
    def n_classes(self) -> int:
        return int(self.class_weights.shape[0])


@runtime_checkable
class Criterion(Protocol):
    """Scores candidates; lower is queried first."""

    name: str
    needs_posterior: bool  # False: scores from the outputs alone (cheap at any n)

    def score(self, state: ScoringState, posterior, candidates: np.ndarray) -> np.ndarray:
        """Score of each candidate, ndarray of shape (k,)."""
