"""The default strategy: expected risk while the model is cold, margin once it is warm.

Expected risk (ALGORITHMS §3) is the better criterion while labels are few: it lowers the
estimated risk of the whole pool, so it asks for the centres of unexplored clusters and finds
classes margin cannot see. Once every class is represented it falls behind margin, because the
risk it minimises is the model's own estimate, which is zero wherever the clipped one-vs-all
probabilities saturate, right or wrong, and which with many classes is dominated by the
regions still far from any label (docs/peers.md: the measurements). Margin (the gap between
the two largest outputs) keeps resolving the boundary there.

The switch reads the stored labels only (their class counts), so a reopened session
recomputes the same decision and asks the same point. The model is *warm*, and margin answers,
once every class has at least :data:`MIN_LABELS_PER_CLASS` labels (the classes are found and
each has a boundary) or once :data:`MAX_RISK_LABELS` labels are stored, whichever comes first.
The cap matters with many classes: "3 labels per class" is 30 labels or more with 10 classes,
and on benchmarks/peers.py margin was 6-11 points ahead between 25 and 50 labels on the
10-class tasks while expected risk was only level with it at 10 labels (docs/peers.md).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .base import ScoringState
from .expected_risk import ExpectedRisk
from .simple import Margin

__all__ = ["Auto", "AutoDecision", "MIN_LABELS_PER_CLASS", "MAX_RISK_LABELS", "decide"]

# Labels every class needs before margin takes over (chosen on benchmarks/peers.py: docs/peers.md).
MIN_LABELS_PER_CLASS = 3
# ... or the number of stored labels after which margin answers anyway (docs/peers.md, issue 13).
MAX_RISK_LABELS = 10


class AutoDecision(NamedTuple):
    """Which plain strategy answers, and the measured signal behind the choice.

    Attributes
    ----------
    strategy : {"arls", "margin"}
    warm : bool
        Every class has at least ``min_labels`` labels, or ``n_labels >= max_labels``.
    fewest : int
        Labels of the least labelled class.
    class_index : int
        Index (in the learner's classes) of the least labelled class (the first such).
    min_labels : int
        The threshold in force.
    n_labels : int
        Labels stored (all classes).
    max_labels : int or None
        The cap in force (``None``: no cap).
    capped : bool
        Warm because of the cap alone (some class still has fewer than ``min_labels``).
    """

    strategy: str
    warm: bool
    fewest: int
    class_index: int
    min_labels: int
    n_labels: int = 0
    max_labels: int | None = None
    capped: bool = False


_DEFAULT = object()


def decide(class_counts, min_labels: int | None = None, max_labels=_DEFAULT) -> AutoDecision:
    """Expected risk while some class has fewer than ``min_labels`` labels and fewer than
    ``max_labels`` labels are stored; margin after.

    Parameters
    ----------
    class_counts : array-like of int, shape (n_classes,)
        Labels per class (the learner's class order).
    min_labels : int >= 1, optional
        Default :data:`MIN_LABELS_PER_CLASS` (read at call time).
    max_labels : int >= 1 or None, optional
        Default :data:`MAX_RISK_LABELS` (read at call time); ``None``: no cap.

    Returns
    -------
    AutoDecision
    """
    if min_labels is None:
        min_labels = MIN_LABELS_PER_CLASS
    if max_labels is _DEFAULT:
        max_labels = MAX_RISK_LABELS
    counts = np.asarray(class_counts, dtype=np.int64).reshape(-1)
    if counts.size < 1:
        raise ValueError("class_counts is empty; give the number of labels of every class.")
    if isinstance(min_labels, bool) or int(min_labels) != min_labels or min_labels < 1:
        raise ValueError(f"min_labels must be an integer >= 1; got {min_labels!r}.")
    if max_labels is not None and (isinstance(max_labels, bool) or int(max_labels) != max_labels
                                   or max_labels < 1):
        raise ValueError(f"max_labels must be an integer >= 1 or None (no cap); got {max_labels!r}.")
    k = int(np.argmin(counts))
    n = int(counts.sum())
    covered = bool(counts[k] >= min_labels)
    capped = bool(not covered and max_labels is not None and n >= max_labels)
    warm = covered or capped
    return AutoDecision("margin" if warm else "arls", warm, int(counts[k]), k, int(min_labels), n,
                        None if max_labels is None else int(max_labels), capped)


class Auto:
    """Expected risk while cold, margin once every class has ``min_labels`` labels or
    ``max_labels`` labels are stored.

    Parameters
    ----------
    min_labels : int, optional
        Default :data:`MIN_LABELS_PER_CLASS`.
    max_labels : int or None, optional
        Default :data:`MAX_RISK_LABELS`; ``None``: no cap.
    """

    name = "auto"
    needs_posterior = True  # while cold

    def __init__(self, min_labels: int | None = None, max_labels=_DEFAULT):
        checked = decide([1], min_labels, max_labels)  # validates
        self.min_labels, self.max_labels = checked.min_labels, checked.max_labels
        self._risk = ExpectedRisk()
        self._margin = Margin()

    def decision(self, state: ScoringState) -> AutoDecision:
        """The :class:`AutoDecision` for ``state`` (which must carry ``class_counts``)."""
        if state.class_counts is None:
            raise ValueError("the auto strategy needs the label count of every class; "
                             "score it through ActiveRLS.score / core.strategies.query.")
        return decide(state.class_counts, self.min_labels, self.max_labels)

    def score(self, state: ScoringState, posterior, candidates) -> np.ndarray:
        """Scores of the strategy :meth:`decision` picks, ndarray of shape (k,)."""
        chosen = self._margin if self.decision(state).warm else self._risk
        return chosen.score(state, posterior, candidates)
