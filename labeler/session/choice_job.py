"""The model choice's evaluation off the key press's request: a background job.

An evaluation of the model choice (:mod:`.model_selection`) computes every candidate's exact
leave-one-out (one conjugate-gradient solve per label for each graph model): seconds at 5,000
points, on every label up to 50. :class:`ChoiceJob` runs it in a worker thread on a SNAPSHOT of
what it reads (the labels in labelling order, the classes, each candidate's settings, the
switches made so far), with learners of its OWN: the job is given a pool of candidates
(``{name: (spec, learner)}``) that only the running job touches, builds those missing or built
for other settings or classes, gives them the snapshot's labels and evaluates them. The live
learner and the candidates the request side holds are never read by the worker.

When the job is done, the session takes its result at its next change of the labels
(:meth:`.model_selection.ModelChoice.after_labels_change`): when the snapshot still describes
the session (its labels are the first labels now, each unchanged, and the classes and
settings are those it read) a switch is written as the same ``setting`` event ``model`` as a
synchronous one, with ``n_labels`` the snapshot's count and ``effective_labels`` the count it
took effect at, and the worker's learner of the chosen model becomes the session's after it
is given the labels added since (:meth:`ChoiceJob.catch_up`). A stale result is discarded and
the evaluation runs again on the labels now.

While a graph model answers, the job re-tunes its RLS candidate before the LOO
(:class:`.rls_candidate.CandidateTuning`, owned with the pool: the re-tunes of ``labeler
simulate`` at every due count since RLS last answered); a switch to RLS writes the width and lam
it was re-tuned to with the ``model`` event, in the same action.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from core.learner.base import LOO
from core.selection import ModelSelector

from . import model
from .background_job import BackgroundJob, catch_up, labels_added, labels_stale
from .rls_candidate import CandidateTuning, answers, build_candidate, learner_spec

__all__ = ["ChoiceSnapshot", "ChoiceJob"]


@dataclass(frozen=True)
class ChoiceSnapshot:
    """What an evaluation reads, copied in the request that starts it.

    Attributes
    ----------
    specs : tuple of (str, ModelSpec)
        Each candidate's settings, in the order of preference.
    incumbent : str
        The model answering.
    classes : tuple of str
    labels : tuple of (int, str)
        The net labels in labelling order.
    balanced : bool
        The balanced LOO error (class weights on).
    n_switches : int
        Automatic switches in force (the rule's threshold halves with each).
    rule : core.selection.SwitchRule
    rls_since : int
        The label count at which RLS last stopped answering (the RLS candidate's re-tunes start
        above it: :class:`.rls_candidate.CandidateTuning`).
    tune : (bool, bool)
        Whether the RLS candidate's width and lam are re-tuned (the session's ``auto_tune``).
    """

    specs: tuple
    incumbent: str
    classes: tuple
    labels: tuple
    balanced: bool
    n_switches: int
    rule: object = field(compare=False, default=None)
    rls_since: int = 0
    tune: tuple = (False, False)


class ChoiceJob(BackgroundJob):
    """One background evaluation of the model choice (see the module docstring):
    :class:`.background_job.BackgroundJob` with the candidates' LOO as its body.

    Parameters
    ----------
    snapshot : ChoiceSnapshot
    X : ndarray of shape (n_samples, n_features)
        The features the kernel and the kNN graph see (read only).
    pool : dict {name: (spec, learner)}
        The job's candidates (owned by the job until the request side takes it back with
        :meth:`take_pool` once the job is done).
    parts : dict
        The graph's parts shared by the graph candidates the job builds (owned with the pool).
    start : bool
        Start the worker thread now (tests may run :meth:`run` themselves).
    tuning : .rls_candidate.CandidateTuning, optional
        The RLS candidate's re-tunes (owned with the pool).

    Attributes
    ----------
    decision : core.selection.Decision or None
        The rule's decision, once done.
    error : Exception or None
        What the evaluation raised (nothing is applied then).
    """

    thread_name = "labeler-model-choice"

    def __init__(self, snapshot: ChoiceSnapshot, X, pool: dict, parts: dict, start: bool = True,
                 tuning: CandidateTuning | None = None):
        self.X = X
        self.pool = pool
        self.parts = parts
        self.tuning = tuning if tuning is not None else CandidateTuning(X)
        self.decision = None
        super().__init__(snapshot, start=start)

    # ---- the worker ---------------------------------------------------------------------
    def _learner(self, name: str, spec):
        """The pool's learner of ``name`` when built for ``spec`` and the classes, else a new one."""
        classes = list(self.snapshot.classes)
        held = self.pool.get(name)
        if held is not None and held[0] == spec and held[1].classes == classes:
            return held[1]
        if held is not None:
            self.tuning.release(held[1])  # one n x n matrix at a time
            del self.pool[name]
            held = None
        parts = self.parts if spec.model != "rls" else ({} if spec.has_parts else None)
        learner = build_candidate(spec, self.X, classes, parts=parts)
        learner.require(LOO, f"model choice by leave-one-out (candidate {name!r})")
        self.pool[name] = (spec, learner)
        return learner

    def compute(self) -> None:
        """Evaluate the candidates on the snapshot's labels (the worker thread's body)."""
        snap = self.snapshot
        learners = {}
        for name, spec in snap.specs:
            if self.cancelled:
                return
            learners[name] = self._learner(name, spec)
        if self.cancelled:
            return
        if "rls" in learners and snap.incumbent != "rls":  # re-tuned as in labeler simulate
            self.tuning.bring(learners["rls"], dict(snap.specs)["rls"], snap.rls_since,
                              {"width": snap.tune[0], "lam": snap.tune[1]}, snap.classes, snap.labels)
            if self.cancelled:
                return
        selector = ModelSelector(learners, snap.incumbent, self.X, correction="mass", rule=snap.rule)
        self.decision = selector.evaluate(dict(snap.labels), balanced=snap.balanced, n_switches=snap.n_switches)
        chosen = self.decision.model
        if chosen != snap.incumbent and not answers(learners[chosen]) and not self.cancelled:
            self._full_learner(chosen)

    def _full_learner(self, name: str) -> None:
        """Replace the pool's labelled-block candidate ``name`` by the full learner at its
        settings and with the snapshot's labels (the choice switches to it: the session takes
        it at the next label), built here, off the request."""
        base, block = self.pool[name]
        spec = learner_spec(base, block)
        parts = {} if spec.has_parts else None
        learner = model.build_learner(spec, self.X, list(self.snapshot.classes), n_block=len(self.snapshot.labels),
                                      parts=parts)
        if self.snapshot.labels:
            catch_up(learner, self.snapshot.labels)
        self.tuning.replace(block, learner)
        self.pool[name] = (base, learner)

    # ---- the request's side -------------------------------------------------------------
    @property
    def changes_model(self) -> bool:
        """Whether the finished evaluation chose another model than the snapshot's incumbent."""
        return self.decision is not None and self.decision.model != self.snapshot.incumbent

    def stale_reason(self, snapshot: ChoiceSnapshot) -> str:
        """Why the job's result no longer applies ("" if it does). ``snapshot``: what the
        session would snapshot now; the result applies when its labels extend the job's
        (:func:`.background_job.labels_stale`) and everything else is the same."""
        mine = self.snapshot
        if self.cancelled:
            return "it was cancelled"
        if (snapshot.specs != mine.specs or snapshot.incumbent != mine.incumbent or snapshot.balanced != mine.balanced
                or snapshot.tune != mine.tune):
            return "the settings changed meanwhile"
        if snapshot.classes != mine.classes:
            return "the classes changed meanwhile"
        stale = labels_stale(mine.labels, snapshot.labels)
        if stale:
            return stale
        if snapshot.n_switches != mine.n_switches:
            return "the model was changed meanwhile"
        return ""

    def candidate_spec(self, name: str):
        """The settings of the job's candidate ``name`` (for RLS: its width and lam after the
        re-tunes), or None when the job holds none."""
        held = self.pool.get(name)
        if held is None:
            return None
        return learner_spec(held[0], held[1]) if name == "rls" else held[0]

    def catch_up(self, name: str, labels) -> object:
        """The worker's learner of ``name`` given the labels added since the snapshot (one
        ``add`` or one block ``add_many``: exact incremental updates), handed over (it leaves
        the pool); None when the job has none. ``labels``: the net labels now in labelling
        order (checked by :meth:`stale_reason` first)."""
        held = self.pool.pop(name, None)
        if held is None:
            return None
        return catch_up(held[1], labels_added(self.snapshot.labels, labels))
