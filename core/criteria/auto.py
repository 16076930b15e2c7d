"""The default strategy: expected risk while the model is cold, margin once it is warm.

Expected risk (ALGORITHMS §3) is the better criterion while labels are few: it lowers the
estimated risk of the whole pool, so it asks for the centres of unexplored clusters and finds
classes margin cannot see. Once every class is represented it falls behind margin, because the
risk it minimises is the model's own estimate, which is zero wherever the clipped one-vs-all
probabilities saturate, right or wrong, and which with many classes is dominated by the
regions still far from any label (docs/peers.md: the measurements). Margin (the gap between
the two largest outputs) keeps resolving the boundary there.

The switch is the measured label coverage: the model is *warm* once every class has at least
:data:`MIN_LABELS_PER_CLASS` labels. It is a function of the stored labels only (their class
counts), so a reopened session recomputes the same decision and asks the same point.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .base import ScoringState
from .expected_risk import ExpectedRisk
from .simple import Margin

__all__ = ["Auto", "AutoDecision", "MIN_LABELS_PER_CLASS", "decide"]

# Labels every class needs before margin takes over (chosen on benchmarks/peers.py: docs/peers.md).
MIN_LABELS_PER_CLASS = 3


class AutoDecision(NamedTuple):
    """Which plain strategy answers, and the measured signal behind the choice.

    Attributes
    ----------
    strategy : {"arls", "margin"}
    warm : bool
        Every class has at least ``min_labels`` labels.
    fewest : int
        Labels of the least labelled class.
    class_index : int
        Index (in the learner's classes) of the least labelled class (the first such).
    min_labels : int
        The threshold in force.
    """

    strategy: str
    warm: bool
    fewest: int
    class_index: int
    min_labels: int


def decide(class_counts, min_labels: int | None = None) -> AutoDecision:
    """Expected risk while some class has fewer than ``min_labels`` labels, else margin.

    Parameters
    ----------
    class_counts : array-like of int, shape (n_classes,)
        Labels per class (the learner's class order).
    min_labels : int >= 1, optional
        Default :data:`MIN_LABELS_PER_CLASS` (read at call time).

    Returns
    -------
    AutoDecision
    """
    if min_labels is None:
        min_labels = MIN_LABELS_PER_CLASS
    counts = np.asarray(class_counts, dtype=np.int64).reshape(-1)
    if counts.size < 1:
        raise ValueError("class_counts is empty; give the number of labels of every class.")
    if isinstance(min_labels, bool) or int(min_labels) != min_labels or min_labels < 1:
        raise ValueError(f"min_labels must be an integer >= 1; got {min_labels!r}.")
    k = int(np.argmin(counts))
    warm = bool(counts[k] >= min_labels)
    return AutoDecision("margin" if warm else "arls", warm, int(counts[k]), k, int(min_labels))


class Auto:
    """Expected risk while cold, margin once every class has ``min_labels`` labels.

    Parameters
    ----------
    min_labels : int, optional
        Default :data:`MIN_LABELS_PER_CLASS`.
    """

    name = "auto"
    needs_posterior = True  # while cold

    def __init__(self, min_labels: int | None = None):
        self.min_labels = decide([1], min_labels).min_labels  # validates
        self._risk = ExpectedRisk()
        self._margin = Margin()

    def decision(self, state: ScoringState) -> AutoDecision:
        """The :class:`AutoDecision` for ``state`` (which must carry ``class_counts``)."""
        if state.class_counts is None:
            raise ValueError("the auto strategy needs the label count of every class; "
                             "score it through ActiveRLS.score / core.strategies.query.")
        return decide(state.class_counts, self.min_labels)

    def score(self, state: ScoringState, posterior, candidates) -> np.ndarray:
        """Scores of the strategy :meth:`decision` picks, ndarray of shape (k,)."""
        chosen = self._margin if self.decision(state).warm else self._risk
        return chosen.score(state, posterior, candidates)
