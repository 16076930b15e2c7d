"""The candidates of model choice, kept in step with the labels, and the one in use.

:class:`ModelSelector` holds one :class:`core.learner.base.Learner` per candidate (RLS,
harmonic, LGC, Poisson learning, ...). Labels reach a candidate only when it is evaluated
(:meth:`ModelSelector.evaluate` gives it the labels it lacks in one ``add_many`` and takes
away the ones gone in one ``remove_many``), so between evaluations a label costs nothing
beyond the model in use; an evaluation costs each candidate's exact LOO (RLS: O(l T) from
its posterior's diagonal; the graph models: one solve per label), never a refit per label.
"""

from __future__ import annotations


import numpy as np

from ..learner.base import LOO
from .loo import label_weights, loo_losses, nearest_labelled_mass
from .rule import Decision, SwitchRule

__all__ = ["ModelSelector", "evaluation_due", "CORRECTIONS", "GRAPH_STRATEGY", "FIRST_MODEL", "strategy_in_use"]

#: How the labels are weighted: "mass" (the pool mass each label stands for) or "none".
CORRECTIONS = ("mass", "none")

#: What the "auto" strategy asks once a graph model (no expected-risk rule, the graph variance
#: criteria) answers after a switch: None keeps "auto" (margin past its cold phase); "vopt" asks
#: by the drop of the graph's posterior variance (core.graph.variance), the peers' VOpt.
GRAPH_STRATEGY = None

#: The candidate that answers until the first switch, when leave-one-out cannot yet tell the
#: models apart (fewer than :data:`~core.selection.rule.MIN_LABELS` labels): "rls" (kernel RLS
#: with the app's settings), a graph candidate's name ("harmonic": Laplace
#: learning on the kNN graph answers first), or "prior" (harmonic where the pool's kNN graph
#: splits clearly into as many parts as classes, :func:`core.selection.prior.first_model`,
#: docs/algorithms.md §20; the default of ``labeler simulate --model auto``, chosen on the
#: defaults benchmark's first half: docs/defaults.md, round 7). A name that is not a
#: candidate falls back to "rls".
FIRST_MODEL = "prior"


def strategy_in_use(learner, strategy: str) -> str:
    """The strategy the model in use is asked: ``strategy``, or :data:`GRAPH_STRATEGY` (read at
    call time) when ``strategy`` is "auto" and ``learner`` is a graph model (it has
    :data:`~core.learner.base.GRAPH_VARIANCE`, which kernel RLS has not)."""
    from ..learner.base import GRAPH_VARIANCE
    if strategy == "auto" and GRAPH_STRATEGY is not None and GRAPH_VARIANCE in learner.capabilities:
        return GRAPH_STRATEGY
    return strategy


def evaluation_due(n_labels: int, every_up_to: int = 50) -> bool:
    """Whether to evaluate the candidates at ``n_labels`` labels: after every label up to
    ``every_up_to`` (50), then every 5 labels up to 100, every 10 up to 200, ...: ten
    evaluations per doubling of the labels, each O(LOO) per candidate."""
    n = int(n_labels)
    if n <= every_up_to:
        return True
    step = max(1, every_up_to // 10) * 2 ** int(np.floor(np.log2(n / every_up_to)))
    return n % step == 0


class ModelSelector:
    """Candidates, the one in use, and the switching rule.

    Parameters
    ----------
    candidates : dict {name: core.learner.base.Learner}
        Each with :data:`~core.learner.base.LOO` and the same classes; the order is the
        order of preference on equal errors.
    incumbent : str
        The candidate in use at the start.
    X : ndarray of shape (n, d), optional
        Features of the pool for the label weights (``correction="mass"``).
    correction : {"mass", "none"}
        The correction for actively chosen labels (:mod:`core.selection.loo`).
    rule : SwitchRule, optional
    prepare : dict {name: callable(learner, n_before)}, optional
        Run on a candidate after it was given new labels (``n_before``: its label count
        before), e.g. the RLS width re-tune.

    Attributes
    ----------
    incumbent : str
    last : Decision or None
        The last evaluation's outcome.
    n_switches : int
        Switches made (the rule's threshold halves with each, :meth:`SwitchRule.threshold`).
    """

    def __init__(self, candidates: dict, incumbent: str, X=None, *, correction: str = "mass",
                 rule: SwitchRule | None = None, prepare: dict | None = None):
        if not candidates:
            raise ValueError("give at least one candidate model.")
        if incumbent not in candidates:
            raise ValueError(f"the model in use {incumbent!r} is not one of the candidates {list(candidates)}.")
        if correction not in CORRECTIONS:
            raise ValueError(f"correction must be one of {CORRECTIONS}; got {correction!r}.")
        if correction == "mass" and X is None:
            raise ValueError("correction 'mass' weighs labels by the pool points nearest to them: give the features X.")
        for name, learner in candidates.items():
            learner.require(LOO, f"model choice by leave-one-out (candidate {name!r})")
        self.candidates = dict(candidates)
        self.incumbent = incumbent
        self.X = None if X is None else np.asarray(X, dtype=np.float64)
        self.correction = correction
        self.rule = rule or SwitchRule()
        self.prepare = dict(prepare or {})
        self.last: Decision | None = None
        self.n_switches = 0

    @property
    def learner(self):
        """The learner in use."""
        return self.candidates[self.incumbent]

    def sync(self, name: str, labels: dict):
        """Give candidate ``name`` exactly ``labels`` ({index: label}); returns the learner."""
        learner = self.candidates[name]
        have = learner.labels
        gone = [i for i, lab in have.items() if labels.get(i, _MISSING) != lab]
        if gone:
            learner.remove_many(gone)
            have = learner.labels
        new = [(i, lab) for i, lab in labels.items() if i not in have]
        if new:
            before = learner.n_labeled
            learner.add_many([i for i, _ in new], [lab for _, lab in new])
            hook = self.prepare.get(name)
            if hook is not None:
                hook(learner, before)
        return learner

    def weights(self, labels: dict, classes: list, balanced: bool) -> np.ndarray:
        """The labels' weights in the order of ``labels`` (:func:`core.selection.loo.label_weights`)."""
        index = {c: t for t, c in enumerate(classes)}
        idx = np.fromiter(labels, dtype=np.int64, count=len(labels))
        codes = np.array([index[v] for v in labels.values()], dtype=np.int64)
        mass = nearest_labelled_mass(self.X, idx) if self.correction == "mass" else None
        return label_weights(codes, len(classes), mass, balanced)

    def losses(self, labels: dict) -> dict:
        """Each candidate's LOO loss per label, in the order of ``labels``, after syncing it."""
        order = list(labels)
        out = {}
        for name in self.candidates:
            learner = self.sync(name, labels)
            loss = dict(zip(learner.labels, loo_losses(learner)))
            out[name] = np.array([loss[i] for i in order])
        return out

    def evaluate(self, labels: dict, *, balanced: bool = False, n_switches: int | None = None) -> Decision:
        """Evaluate every candidate on ``labels`` and apply the rule (may change :attr:`incumbent`).

        Parameters
        ----------
        labels : dict {index: label}
            The labels in labelling order.
        balanced : bool
            The balanced error (class weights on).
        n_switches : int, optional
            Switches made so far (default: this selector's count).

        Returns
        -------
        Decision
        """
        classes = self.learner.classes
        losses = self.losses(labels)
        made = self.n_switches if n_switches is None else int(n_switches)
        decision = self.rule.decide(self.incumbent, losses, self.weights(labels, classes, balanced), made)
        self.incumbent = decision.model
        self.n_switches += int(decision.switched)
        self.last = decision
        return decision


_MISSING = object()
