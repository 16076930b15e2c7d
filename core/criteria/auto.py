"""The default strategy: expected risk while the model is cold, margin once it is warm.

Expected risk (docs/algorithms.md §3) is the better criterion while labels are few: it lowers the
estimated risk of the whole pool, so it asks for the centres of unexplored clusters and finds
classes margin cannot see. Once every class is represented it falls behind margin, because the
risk it minimises is the model's own estimate, which is zero wherever the clipped one-vs-all
probabilities saturate, right or wrong, and which with many classes is dominated by the
regions still far from any label (docs/peers.md: the measurements). Margin (the gap between
the two largest outputs) keeps resolving the boundary there.

The switch reads the stored labels only, so a reopened session recomputes the same decision
and asks the same point. The default: expected risk answers the first :data:`MAX_RISK_LABELS`
(10) labels, margin every later one. Chosen on benchmarks/peers.py over seven tasks and 5
seeds against the first rule ("until every class has 3 labels"), a cap on it and five other
switches (docs/peers.md, "The default strategy"): with 10 classes "3 per class" meant 30+
labels of expected risk, while margin was 6-11 points ahead at 25-50 labels; on the binary
MNIST pair switching once both classes had 3 labels (at about 6) cost 7 points at 10 labels
against expected risk. Ten labels of expected risk keep its early lead (it *is* expected risk
up to 10 labels) and margin's later one, within the noise on every task. A coverage rule
(``min_labels``: margin once every class has that many labels, whichever comes first) stays
available, off by default (:data:`MIN_LABELS_PER_CLASS` is ``None``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .base import ScoringState
from .expected_risk import ExpectedRisk
from .simple import Margin

__all__ = ["Auto", "AutoDecision", "MIN_LABELS_PER_CLASS", "MAX_RISK_LABELS", "decide"]

# Labels stored after which margin answers (chosen on benchmarks/peers.py: docs/peers.md, issue 13).
MAX_RISK_LABELS = 10
# Optional coverage rule: margin once every class has this many labels, if that comes first
# (None: off; the first default was 3, without the cap: docs/peers.md says why it went).
MIN_LABELS_PER_CLASS = None


class AutoDecision(NamedTuple):
    """Which plain strategy answers, and the measured signal behind the choice.

    Attributes
    ----------
    strategy : {"arls", "margin"}
    warm : bool
        ``n_labels >= max_labels``, or every class has at least ``min_labels`` labels.
    fewest : int
        Labels of the least labelled class.
    class_index : int
        Index (in the learner's classes) of the least labelled class (the first such).
    min_labels : int or None
        The coverage threshold in force (``None``: no coverage rule).
    n_labels : int
        Labels stored (all classes).
    max_labels : int or None
        The cap in force (``None``: no cap).
    capped : bool
        Warm because of the label count (not because every class has ``min_labels``).
    """

    strategy: str
    warm: bool
    fewest: int
    class_index: int
    min_labels: int | None
    n_labels: int = 0
    max_labels: int | None = None
    capped: bool = False


_DEFAULT = object()


def decide(class_counts, min_labels=_DEFAULT, max_labels=_DEFAULT) -> AutoDecision:
    """Expected risk while fewer than ``max_labels`` labels are stored (and, with a coverage
    rule, some class has fewer than ``min_labels``); margin after.

    Parameters
    ----------
    class_counts : array-like of int, shape (n_classes,)
        Labels per class (the learner's class order).
    min_labels : int >= 1 or None, optional
        Default :data:`MIN_LABELS_PER_CLASS` (read at call time); ``None``: no coverage rule.
    max_labels : int >= 1 or None, optional
        Default :data:`MAX_RISK_LABELS` (read at call time); ``None``: no cap.

    Returns
    -------
    AutoDecision

    Raises
    ------
    ValueError
        Empty counts, a bad threshold, or neither rule (``auto`` would never leave expected risk:
        use the strategy "arls").
    """
    if min_labels is _DEFAULT:
        min_labels = MIN_LABELS_PER_CLASS
    if max_labels is _DEFAULT:
        max_labels = MAX_RISK_LABELS
    counts = np.asarray(class_counts, dtype=np.int64).reshape(-1)
    if counts.size < 1:
        raise ValueError("class_counts is empty; give the number of labels of every class.")
    for name, v in (("min_labels", min_labels), ("max_labels", max_labels)):
        if v is not None and (isinstance(v, bool) or int(v) != v or v < 1):
            raise ValueError(f"{name} must be an integer >= 1 or None (rule off); got {v!r}.")
    if min_labels is None and max_labels is None:
        raise ValueError("min_labels and max_labels are both None, so auto would never switch to margin; "
                         "give one of them, or use the strategy 'arls'.")
    k = int(np.argmin(counts))
    n = int(counts.sum())
    covered = bool(min_labels is not None and counts[k] >= min_labels)
    capped = bool(not covered and max_labels is not None and n >= max_labels)
    warm = covered or capped
    return AutoDecision("margin" if warm else "arls", warm, int(counts[k]), k,
                        None if min_labels is None else int(min_labels), n,
                        None if max_labels is None else int(max_labels), capped)


class Auto:
    """Expected risk while cold, margin once ``max_labels`` labels are stored (or every class
    has ``min_labels`` labels, with a coverage rule).

    Parameters
    ----------
    min_labels : int or None, optional
        Default :data:`MIN_LABELS_PER_CLASS` (``None``: no coverage rule).
    max_labels : int or None, optional
        Default :data:`MAX_RISK_LABELS`; ``None``: no cap.
    """

    name = "auto"
    needs_posterior = True  # while cold

    def __init__(self, min_labels=_DEFAULT, max_labels=_DEFAULT):
        checked = decide([1], min_labels, max_labels)  # validates
        self.min_labels, self.max_labels = checked.min_labels, checked.max_labels
        self._risk = ExpectedRisk()
        self._margin = Margin()

    def decision(self, state: ScoringState) -> AutoDecision:
        """The :class:`AutoDecision` for ``state`` (which must carry ``class_counts``)."""
        if state.class_counts is None:
            raise ValueError("the auto strategy needs the label count of every class; "
                             "score it through ActiveRLS.score / core.strategies.query_one.")
        return decide(state.class_counts, self.min_labels, self.max_labels)

    def score(self, state: ScoringState, posterior, candidates) -> np.ndarray:
        """Scores of the strategy :meth:`decision` picks, ndarray of shape (k,)."""
        chosen = self._margin if self.decision(state).warm else self._risk
        return chosen.score(state, posterior, candidates)
