"""Criteria that need only the outputs: margin (uncertainty) and random."""

from __future__ import annotations

import numpy as np

from .base import ScoringState

__all__ = ["Margin", "Random", "margins"]


def margins(outputs_T: np.ndarray) -> np.ndarray:
    """``|f|`` (binary) or the gap between the two largest one-vs-all outputs, shape (n,).

    Parameters
    ----------
    outputs_T : ndarray of shape (T, n)
    """
    F = np.asarray(outputs_T, dtype=np.float64)
    if F.shape[0] == 1:
        return np.abs(F[0])
    top2 = np.partition(F, F.shape[0] - 2, axis=0)[-2:]
    return top2[1] - top2[0]


class Margin:
    """Margin (uncertainty) sampling: the candidate closest to the decision boundary."""

    name = "margin"
    needs_posterior = False

    def score(self, state: ScoringState, posterior, candidates) -> np.ndarray:
        cand = np.asarray(candidates, dtype=np.int64)
        return margins(state.outputs_T[:, cand])


class Random:
    """Uniform random choice: every candidate scores 0 (ties broken by the query's generator)."""

    name = "random"
    needs_posterior = False

    def score(self, state: ScoringState, posterior, candidates) -> np.ndarray:
        return np.zeros(np.asarray(candidates).shape[0])
