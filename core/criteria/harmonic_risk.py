"""Zhu et al.'s expected risk of the harmonic function as a criterion (seed 003 §2.8.1, docs/algorithms.md §5).

:class:`HarmonicExpectedRisk` scores a graph model's candidates by the exact expected risk of
:class:`core.graph.ZhuActiveLearning`: a dense ``u x u`` inverse ``G = (Delta_UU + eps I)^-1``
of the Gaussian field and its harmonic function. The criterion holds that state between two
calls and keeps it by the rule's rank-one downdate (O(u^2), where a fresh inverse is O(u^3))
when exactly one label was appended since it last scored; after any other change (a removal,
a relabel, a new class, or two labels without a score between them) it inverts afresh.

It reads the graph learner's labels through a :class:`GraphField` (the graph, the labelled
points in labelling order and their class indices), the counterpart of an RLS posterior store
(:class:`core.posteriors.base.Posterior`) for :class:`core.criteria.ExpectedRisk`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..graph.zhu import ZhuActiveLearning
from .base import ScoringState

__all__ = ["HarmonicExpectedRisk", "GraphField", "ZHU_EPS"]

#: The regulariser of the rule's inverse (``labeler simulate`` uses the same).
ZHU_EPS = 1e-8


class GraphField(NamedTuple):
    """What :class:`HarmonicExpectedRisk` reads of a graph learner (the learner's own arrays).

    Attributes
    ----------
    graph : scipy.sparse.csr_matrix of shape (n, n)
        Symmetric non-negative weights ``W``.
    labeled : ndarray of int64, shape (l,)
        Labelled points in labelling order.
    codes : ndarray of int64, shape (l,)
        Their class indices.
    n_classes : int
    risk : float
        The current risk ``sum_i (1 - max_t P_it)`` over the unlabelled points (every
        candidate's score while nothing is labelled: a tie).
    """

    graph: object
    labeled: np.ndarray
    codes: np.ndarray
    n_classes: int
    risk: float


class HarmonicExpectedRisk:
    """Zhu et al.'s exact expected risk of labelling each candidate (lower is queried first).

    Parameters
    ----------
    eps : float, default :data:`ZHU_EPS`
        Regulariser of ``Delta_UU`` (components without a label).
    """

    name = "arls"
    needs_posterior = True

    def __init__(self, eps: float = ZHU_EPS):
        self.eps = float(eps)
        self._rule = None
        self._key = None  # (graph id, n_classes, labelled points, their codes) the rule was built for

    def score(self, state: ScoringState, field: GraphField, candidates) -> np.ndarray:
        """Expected risk of each candidate, ndarray of shape (k,), in the order given.

        Raises
        ------
        ValueError
            ``field`` is not a :class:`GraphField` (an RLS learner scores with
            :class:`core.criteria.ExpectedRisk`), or a candidate is labelled.
        """
        if not isinstance(field, GraphField):
            raise ValueError("HarmonicExpectedRisk scores a graph model (core.graph.active.GraphLearner); "
                             "an RLS learner scores expected risk with core.criteria.ExpectedRisk.")
        cand = np.asarray(candidates, dtype=np.int64)
        if field.labeled.size == 0:
            return np.full(cand.size, float(field.risk))
        rule = self._current(field)
        return rule.expected_risks(cand) if cand.size else np.zeros(0)

    def release_stale(self, field: GraphField) -> None:
        """Drop the held inverse unless it is the one of ``field``'s labels (called by the learner
        before a change: an inverse that did not follow the last change would be rebuilt anyway,
        so its O(u^2) memory goes now)."""
        if self._key is not None and self._key != _key(field):
            self._rule = self._key = None

    def _current(self, field: GraphField) -> ZhuActiveLearning:
        key = _key(field)
        if self._rule is not None and key == self._key:
            return self._rule
        old = self._key
        if (self._rule is not None and old[:2] == key[:2] and len(key[2]) == len(old[2]) + 1
                and key[2][:-1] == old[2] and key[3][:-1] == old[3] and self._rule.unlabeled_.size > 1):
            self._rule.add(key[2][-1], key[3][-1])  # the rank-one downdate
        else:
            self._rule = ZhuActiveLearning(eps=self.eps).fit(field.graph, field.labeled, field.codes,
                                                             classes=list(range(field.n_classes)))
        self._key = key
        return self._rule


def _key(field: GraphField) -> tuple:
    return (id(field.graph), int(field.n_classes), tuple(field.labeled.tolist()), tuple(field.codes.tolist()))
