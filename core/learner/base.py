"""The one learner interface: what every layer above ``core`` may ask of a model.

A learner is a model on a fixed pool of ``n_samples`` points that takes labels one at a time
(or a block at a time), keeps them in labelling order, and answers from its current state:
kernel RLS (:class:`core.learner.ActiveRLS`, on a dense or a low-rank posterior) and the graph
models (:class:`core.graph.active.GraphLearner`: harmonic function, LGC) are the two families.
The labelling session, the query strategies (:mod:`core.strategies`), the batch, the oracle
simulation and the UI read and change a model through :class:`Learner` alone.

* :class:`Learner` lists that interface (a :class:`typing.Protocol`: reads, changes, settings).
* :data:`CAPABILITIES` names what a model may or may not offer (expected-risk scoring, exact
  leave-one-out, the settings ``lam`` / ``kernel`` / ``weighting``, a posterior variance, a
  similarity for explanations). A caller asks ``capability in learner.capabilities`` instead
  of probing attributes; a refused one raises :class:`ValueError` naming the fix
  (:meth:`LearnerBase.require`).
* :class:`LabelBook` is the label bookkeeping every learner shares: labels in labelling order,
  the class list and its index, the class code of each point and the counts per class, and
  the checks of indices, labels and class names.
* :class:`LearnerBase` is the read API that follows from a :class:`LabelBook` and the
  outputs (``predict``, ``score``, ``expected_risk``, ...), written once for every learner.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from ..criteria.risk import predicted_class_indices
from ..validation import check_index

__all__ = ["Learner", "LearnerBase", "LabelBook", "CAPABILITIES", "EXPECTED_RISK", "LOO", "LAM", "KERNEL",
           "WEIGHTING", "POSTERIOR_VARIANCE", "SIMILARITY", "CHEAP_LOO", "GRAPH_VARIANCE", "check_classes"]

#: The learner scores the "arls" strategy (an expected-risk criterion, :attr:`Learner.risk_criterion`).
EXPECTED_RISK = "expected_risk"
#: :meth:`Learner.loo_decision_values` is the exact leave-one-out of the model.
LOO = "loo"
#: ``set_params(lam=...)``: a regularisation to change (and tune by LOO).
LAM = "lam"
#: ``set_params(kernel=...)``: a kernel (an RBF width) to change (and tune by LOO).
KERNEL = "kernel"
#: ``set_params(weighting=...)``: class weights.
WEIGHTING = "weighting"
#: ``posterior_variance()``: the GP predictive variance of each point; ``loo_predictive_sd()``:
#: the leave-one-out predictive standard deviation of each label.
POSTERIOR_VARIANCE = "posterior_variance"
#: ``mean_similarity(rows, cols)``: the model's own similarity between points.
SIMILARITY = "similarity"
#: :meth:`Learner.loo_decision_values` costs O(labels x outputs) from the state the learner keeps
#: (no solve per label), so a caller may read it at every state (RLS: docs/algorithms.md §3).
CHEAP_LOO = "cheap_loo"
#: ``learner.variance_criterion(name)``: the graph's variance criteria VOpt and Sigma-opt
#: (:mod:`core.graph.variance`), the query strategies "vopt" and "sigmaopt".
GRAPH_VARIANCE = "graph_variance"
CAPABILITIES = (EXPECTED_RISK, LOO, LAM, KERNEL, WEIGHTING, POSTERIOR_VARIANCE, SIMILARITY, CHEAP_LOO, GRAPH_VARIANCE)


@runtime_checkable
class Learner(Protocol):
    """What the session, the strategies, the batch, the simulation and the UI use of a model.

    Reads (never change the state)
    ------------------------------
    n_samples, n_classes, n_labeled, n_outputs : int
    classes : list
        Class labels as given (a copy; ints stay ints, str stay str).
    labels : dict {index: label}
        In labelling order (a copy).
    unlabeled_indices : ndarray of int64, shape (n_unlabeled,)
    class_weights : dict {class: weight}
    capabilities : frozenset of str
        Which of :data:`CAPABILITIES` the model offers.
    rng : numpy.random.Generator
        Breaks query ties when the caller gives no generator.
    decision_values : ndarray of shape (n, T)
        Outputs in the RLS coding (T = 1 binary with +1 = classes[1]; T = n_classes otherwise).
    risk_criterion : core.criteria.Criterion
        The criterion behind the "arls" strategy (needs :data:`EXPECTED_RISK`).

    Changes (all or nothing: an error leaves the learner as it was)
    ---------------------------------------------------------------
    add(i, label), add_many(indices, labels), remove(i), remove_many(indices), relabel(i, label),
    add_class(name), rename_class(old, new), rebuild(), set_params(**params)
    """

    n_samples: int
    n_classes: int
    n_labeled: int
    n_outputs: int
    classes: list
    labels: dict
    unlabeled_indices: np.ndarray
    class_weights: dict
    capabilities: frozenset
    decision_values: np.ndarray

    def predict(self) -> np.ndarray:
        """Predicted class of every point, shape (n,), of the classes' own type."""

    def proba(self) -> np.ndarray:
        """Class probabilities, shape (n, n_classes), rows summing to 1."""

    def estimated_risk(self) -> float:
        """The model's estimate of its risk over the pool (a float)."""

    def class_counts(self) -> np.ndarray:
        """Labels per class, shape (n_classes,) int64."""

    def score(self, criterion, candidates=None) -> np.ndarray:
        """``criterion``'s score of each candidate, shape (k,), in the order given."""

    def expected_risk(self, candidates=None) -> np.ndarray:
        """:attr:`risk_criterion`'s scores: (n,) with +inf on labelled points, or (k,)."""

    def scoring_state(self):
        """The read-only :class:`core.criteria.ScoringState` a criterion scores from."""

    def loo_decision_values(self) -> np.ndarray:
        """Leave-one-out outputs of the labelled points, shape (n_labeled, T), :attr:`labels` order."""

    def require(self, capability: str, what: str | None = None) -> None:
        """Raise ValueError naming the fix unless ``capability`` is offered."""

    def add(self, i, label): ...

    def add_many(self, indices, labels): ...

    def remove(self, i): ...

    def remove_many(self, indices): ...

    def relabel(self, i, label): ...

    def add_class(self, name): ...

    def rename_class(self, old, new): ...

    def rebuild(self): ...

    def get_params(self) -> dict: ...

    def set_params(self, **params): ...


def check_classes(classes) -> list:
    """At least two distinct, hashable class labels, as a list (types kept).

    Raises
    ------
    ValueError
        Not a list, an unhashable or repeated label, or fewer than two.
    """
    try:
        classes = list(classes)
    except TypeError:
        raise ValueError(f"classes must be a list of labels; got {classes!r}.") from None
    seen = set()
    for c in classes:
        _check_hashable(c)
        if c in seen:
            raise ValueError(f"class label {c!r} appears twice in classes={classes!r}; give each once.")
        seen.add(c)
    if len(classes) < 2:
        raise ValueError(
            f"at least two classes are needed; got classes={classes!r}. Give every label "
            "you intend to use (more can be added later with add_class)."
        )
    return classes


def _check_hashable(label) -> None:
    try:
        hash(label)
    except TypeError:
        raise ValueError(f"class label {label!r} is not hashable; use str or int labels.") from None


class LabelBook:
    """Labels of a pool in labelling order, with the class list, index, codes and counts.

    Parameters
    ----------
    n_samples : int
        Pool size.
    classes : sequence of hashable
        At least two distinct class labels (:func:`check_classes`).

    Attributes
    ----------
    classes : list
        The class labels; class ``t`` is output column ``t``.
    index : dict {class: t}
    labels : dict {point: label}
        In labelling order (relabelling keeps a point's place).
    codes : ndarray of int64, shape (n_samples,)
        The class index of each labelled point, -1 elsewhere.
    counts : ndarray of int64, shape (n_classes,)
        Labels per class.

    Notes
    -----
    The ``check_*`` methods validate and change nothing; the changing methods assume their
    input was checked. :meth:`copy` is O(n) and is what a learner keeps to undo a failed change.
    """

    def __init__(self, n_samples: int, classes):
        self.classes = check_classes(classes)
        self.index = {c: t for t, c in enumerate(self.classes)}
        self.labels: dict = {}
        self.codes = np.full(int(n_samples), -1, dtype=np.int64)
        self.counts = np.zeros(len(self.classes), dtype=np.int64)
        self._unlabeled = None  # unlabeled_indices, kept until a label is added or removed

    # ------------------------------------------------------------------ reads
    @property
    def n_samples(self) -> int:
        return self.codes.shape[0]

    def labeled_indices(self) -> np.ndarray:
        """Labelled points in labelling order, int64 of shape (n_labeled,)."""
        return np.fromiter(self.labels, dtype=np.int64, count=len(self.labels))

    def labeled_codes(self) -> np.ndarray:
        """Their class indices, int64 of shape (n_labeled,)."""
        return self.codes[self.labeled_indices()]

    def unlabeled_indices(self) -> np.ndarray:
        """Unlabelled points, increasing, int64 of shape (n_unlabeled,): a pass over the pool
        when a label was added or removed since the last call (a query reads it three times),
        else the kept array (a copy)."""
        if self._unlabeled is None:
            self._unlabeled = np.flatnonzero(self.codes < 0)
        return self._unlabeled.copy()

    def label_array(self) -> np.ndarray:
        """The classes as an array that keeps their type (object for mixed or non-scalar labels)."""
        arr = np.array(self.classes)
        if arr.ndim != 1 or arr.dtype.kind not in "biufUS" or arr.tolist() != self.classes:
            arr = np.empty(len(self.classes), dtype=object)
            arr[:] = self.classes
        return arr

    # ------------------------------------------------------------------ checks
    def class_of(self, label) -> int:
        """The class index of ``label``; ValueError naming the classes if it is none of them."""
        try:
            return self.index[label]
        except (KeyError, TypeError):
            raise ValueError(
                f"label {label!r} is not one of the classes {self.classes!r}. Use one of them, "
                "or add it first with add_class(label)."
            ) from None

    def check_unlabeled(self, i) -> int:
        i = check_index(i, self.n_samples)
        if self.codes[i] >= 0:
            raise ValueError(
                f"point {i} is already labelled as {self.labels[i]!r}; use relabel({i}, label) "
                f"to change its label or remove({i}) to undo it."
            )
        return i

    def check_labeled(self, i) -> int:
        i = check_index(i, self.n_samples)
        if self.codes[i] < 0:
            raise ValueError(f"point {i} is not labelled, so it cannot be removed or relabelled.")
        return i

    def check_many(self, indices, labeled: bool) -> list:
        """Distinct valid indices, each labelled (``labeled``) or unlabelled, as ints."""
        check = self.check_labeled if labeled else self.check_unlabeled
        idx = [check(i) for i in np.asarray(indices, dtype=object).ravel()] if len(indices) else []
        if len(set(idx)) != len(idx):
            raise ValueError("indices contain a point twice; give each point once.")
        return idx

    def check_new_labels(self, indices, labels) -> tuple[list, list]:
        """Distinct unlabelled ``indices`` and one class label each, as two lists."""
        idx = self.check_many(indices, labeled=False)
        labels = list(labels)
        if len(labels) != len(idx):
            raise ValueError(f"got {len(idx)} indices but {len(labels)} labels; give one label per index.")
        for label in labels:
            self.class_of(label)
        return idx, labels

    def check_new_class(self, name) -> None:
        _check_hashable(name)
        if name in self.index:
            raise ValueError(f"class {name!r} already exists; classes are {self.classes!r}.")

    # ------------------------------------------------------------------ changes (input checked)
    def add(self, i: int, label) -> int:
        t = self.index[label]
        self.labels[i] = label
        self.codes[i] = t
        self.counts[t] += 1
        self._unlabeled = None
        return t

    def remove(self, i: int) -> int:
        t = int(self.codes[i])
        del self.labels[i]
        self.codes[i] = -1
        self.counts[t] -= 1
        self._unlabeled = None
        return t

    def relabel(self, i: int, label) -> int:
        t_old, t_new = int(self.codes[i]), self.index[label]
        self.labels[i] = label  # same key: labelling order kept
        self.codes[i] = t_new
        self.counts[t_old] -= 1
        self.counts[t_new] += 1
        return t_old

    def add_class(self, name) -> None:
        self.classes.append(name)
        self.index[name] = len(self.classes) - 1
        self.counts = np.append(self.counts, 0)

    def rename_class(self, old, new) -> None:
        t = self.index[old]
        self.classes[t] = new
        self.index = {c: k for k, c in enumerate(self.classes)}
        for i in np.flatnonzero(self.codes == t).tolist():
            self.labels[i] = new

    def copy(self) -> LabelBook:
        twin = object.__new__(LabelBook)
        twin.classes, twin.index, twin.labels = list(self.classes), dict(self.index), dict(self.labels)
        twin.codes, twin.counts = self.codes.copy(), self.counts.copy()
        twin._unlabeled = self._unlabeled
        return twin


class LearnerBase:
    """The read API of every learner, from its :class:`LabelBook` ``_book`` and its outputs.

    A subclass sets ``_book``, ``capabilities`` and ``rng``, and provides
    :attr:`decision_values`, :meth:`scoring_state`, :meth:`_scoring_posterior` (what its
    criteria read: an RLS posterior store, a graph field), :attr:`risk_criterion` and
    :meth:`_refusal` (the model, why, and the fix to name for a capability it lacks).
    """

    capabilities: frozenset = frozenset()
    _risk_cache = None

    # ------------------------------------------------------------------ labels
    @property
    def classes(self) -> list:
        """Class labels (a copy; add one with :meth:`add_class`)."""
        return list(self._book.classes)

    @property
    def n_classes(self) -> int:
        return len(self._book.classes)

    @property
    def n_samples(self) -> int:
        return self._book.n_samples

    @property
    def n_labeled(self) -> int:
        return len(self._book.labels)

    @property
    def n_outputs(self) -> int:
        """T: 1 for two classes, ``n_classes`` otherwise."""
        return 1 if self.n_classes == 2 else self.n_classes

    @property
    def labels(self) -> dict:
        """``{index: label}`` in labelling order (a copy)."""
        return dict(self._book.labels)

    @property
    def unlabeled_indices(self) -> np.ndarray:
        """Indices of unlabelled points, ndarray of shape (n_unlabeled,), int64."""
        return self._book.unlabeled_indices()

    def class_counts(self) -> np.ndarray:
        """Labels per class, ndarray of shape (n_classes,) of int64 (a copy)."""
        return self._book.counts.copy()

    # ------------------------------------------------------------------ capabilities
    def require(self, capability: str, what: str | None = None) -> None:
        """Raise ``ValueError`` naming the fix unless this learner offers ``capability``.

        Parameters
        ----------
        capability : str
            One of :data:`CAPABILITIES`.
        what : str, optional
            What the caller wanted, for the message (default: the capability's name).
        """
        if capability not in CAPABILITIES:
            raise ValueError(f"unknown capability {capability!r}; capabilities are {', '.join(CAPABILITIES)}.")
        if capability not in self.capabilities:
            raise ValueError(f"{what or capability} does not apply to {self._refusal(capability)}")

    def _refusal(self, capability: str) -> str:  # pragma: no cover - each learner words its own
        """The rest of the refusal's sentence: "<the model>: <why>; <the fix>"."""
        return "this model; use a model that offers it."

    # ------------------------------------------------------------------ outputs
    def predict(self) -> np.ndarray:
        """Predicted class labels, ndarray of shape (n,) (``f > 0`` / argmax, see core.criteria.risk)."""
        return self._book.label_array()[predicted_class_indices(self.decision_values)]

    # ------------------------------------------------------------------ scores
    def _check_candidates(self, candidates) -> np.ndarray:
        cand = np.asarray(candidates)
        if cand.ndim != 1 or (cand.size and cand.dtype.kind not in "iu"):
            raise ValueError(f"candidates must be a 1-D array of pool indices; got {candidates!r}.")
        cand = cand.astype(np.int64)
        if cand.size and (cand.min() < 0 or cand.max() >= self.n_samples):
            raise IndexError(f"candidates must lie in [0, {self.n_samples}); got {cand.min()}..{cand.max()}.")
        return cand

    def score(self, criterion, candidates=None) -> np.ndarray:
        """Scores of ``criterion`` (a :class:`core.criteria.Criterion`) for candidates.

        Parameters
        ----------
        criterion : core.criteria.Criterion
        candidates : array-like of int, optional
            Pool indices to score (default: every unlabelled point).

        Returns
        -------
        ndarray of shape (k,) in the order of ``candidates``.

        Raises
        ------
        ValueError
            The criterion needs expected-risk scoring and this learner has none (the message
            names the fix).
        """
        if getattr(criterion, "name", None) == "arls":
            self.require(EXPECTED_RISK, "the expected-risk strategy 'arls'")
        unl = self.unlabeled_indices
        cand = unl if candidates is None else self._check_candidates(candidates)
        mine = criterion is self.risk_criterion
        if mine and self._risk_cache is not None and np.array_equal(self._risk_cache[0], cand):
            return self._risk_cache[1].copy()
        out = np.asarray(criterion.score(self.scoring_state(), self._scoring_posterior(), cand), dtype=np.float64)
        if mine and np.array_equal(cand, unl):  # the strategies' whole-pool call: kept until a change
            self._risk_cache = (cand, out.copy())
        return out

    def score_to_pick(self, criterion, candidates, tie_rtol: float = 0.0) -> np.ndarray:
        """Scores that pick as :meth:`score` does: exact wherever a score is within ``tie_rtol``
        of the minimum, possibly a lower bound elsewhere (the criterion's ``score_to_pick``;
        :meth:`score` when it has none, or when the whole-pool scores are already kept).

        Returns
        -------
        ndarray of shape (k,) in the order of ``candidates``.
        """
        unl = self.unlabeled_indices
        cand = unl if candidates is None else self._check_candidates(candidates)
        cached = self._risk_cache is not None and np.array_equal(self._risk_cache[0], unl)
        if criterion is not self.risk_criterion or cached or not hasattr(criterion, "score_to_pick"):
            return self.score(criterion, cand)
        self.require(EXPECTED_RISK, "the expected-risk strategy 'arls'")
        return np.asarray(criterion.score_to_pick(self.scoring_state(), self._scoring_posterior(), cand, tie_rtol),
                          dtype=np.float64)

    def expected_risk(self, candidates=None) -> np.ndarray:
        """Expected risk of labelling each point under :attr:`risk_criterion`.

        Parameters
        ----------
        candidates : array-like of int, optional
            Score only these pool indices and return an array of their length, in their
            order. Default: an array of shape (n,) with every unlabelled point scored and
            ``+inf`` for labelled points.

        Returns
        -------
        E : ndarray of shape (n,) or (len(candidates),)
        """
        if candidates is not None:
            return self.score(self.risk_criterion, candidates)
        E = np.full(self.n_samples, np.inf)
        unl = self.unlabeled_indices
        E[unl] = self.score(self.risk_criterion, unl)
        return E
