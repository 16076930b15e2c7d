"""Model choice by exact leave-one-out while labels arrive (issue 20 §2): ``model="auto"``.

:class:`ModelChoice` is owned by :class:`~labeler.session.session.LabelingSession` (as
``session.model_choice``). In a session created with ``model="auto"`` (stored as the model
that answers first, "rls", and ``model_choice="auto"``) it runs after each change of the labels
(:meth:`ModelChoice.after_labels_change`, called by the session's commit):

* on the schedule of :func:`core.selection.evaluation_due` it evaluates the candidates (kernel
  RLS with the session's settings and the graph models on the session's kNN graph: harmonic,
  LGC, and Poisson learning where the factory builds it) by their exact LOO on the labels,
  weighted by the pool mass each label stands for (:mod:`core.selection`, docs/algorithms.md
  §14), and applies :class:`core.selection.SwitchRule`;
* a switch is ONE ``setting`` event ``model = <name>`` with the evidence in its notes
  (``{"auto": true, "from", "n_labels", "errors", "p_value", "reason"}``): the session gives the
  setting to the learner before it is written (the candidate's warm learner becomes the
  session's), a reopened session replays the stored model and never re-runs the rule;
* undo: when the labels fall below the count at which a switch was made (the labels that
  chose the model are gone), the model it replaced comes back, again as one ``setting`` event;
  the settings written with a switch to RLS (width, lam) are not undone, and RLS stops
  answering at the undo's count (:meth:`ModelChoice.rls_since`).

The model that answers first is chosen from the pool at creation (:meth:`ModelChoice.first_switch`,
docs/algorithms.md §20, as ``labeler simulate``): the harmonic function where the pool's kNN
graph splits into its classes, else RLS. A harmonic first model is a switch of the same form
written with the session (``n_labels`` 0, ``"prior": true``): no undo takes it back.

The candidates other than the one answering are kept here and given the labels they lack
only at an evaluation (one ``add_many``; the graph models refit once, RLS is one block update),
so a label costs the answering model's update plus, when due, every candidate's LOO.
While a graph model answers, the RLS candidate's width and lam are re-tuned by LOO as in
``labeler simulate`` (:class:`.rls_candidate.CandidateTuning`: the simulation's hook, at every
count an evaluation is due since RLS last answered, whatever counts the evaluations ran at);
these re-tunes are the candidate's own state, not written, and a reopened session recomputes
them from the stored labels at its first evaluation. When the choice switches to RLS, the
candidate's width and lam are written as ``setting`` events in the same action as the
``model`` event (:meth:`ModelChoice.switch_rows`), so a reopen replays the RLS that took over.
A session whose width and lam are fixed (``auto_tune`` off) re-tunes nothing.

In the app (:attr:`ModelChoice.background`, turned on with the re-tunes' background by
``LabelingSession.retune_in_background``) a due evaluation never runs in the key press's
request: :class:`.choice_job.ChoiceJob` evaluates a snapshot of the labels, classes, settings
and switches in a worker thread on candidates of its own (a pool kept between jobs, never the
session's learner nor the held candidates above), and the next label takes the result: a
switch is the same ``setting`` event with ``n_labels`` the snapshot's count and
``effective_labels`` the count it took effect at (the worker's learner, given the labels added
since, becomes the session's); a result whose snapshot no longer describes the session (an
undo, a new class, a setting changed) is discarded and the evaluation runs again on the labels
now. One job at a time (:class:`.background_job.JobSlot`): an evaluation due while one runs
starts as soon as that one is done (when it switches the model, at the next label, with the switch). The library
and ``labeler simulate`` evaluate in step (deterministic runs).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from core.kernels import neighbour_graph
from core.learner.base import LOO
from core.selection import ModelSelector, SwitchRule, evaluation_due
from core.selection import selector as _selection
from core.selection.prior import first_model_evidence

from . import model
from .background_job import JobSlotOwner
from .choice_job import ChoiceJob, ChoiceSnapshot
from .config import check_auto_tune
from .rls_candidate import CandidateTuning, answers, as_candidate, build_candidate, learner_spec, tune_flags
from .graphs import MODELS, strategies_for
from ..store import Setting, StoreWriteError

__all__ = ["ModelChoice", "AUTO_CANDIDATES", "MODEL_CHOICES", "DEFAULT_MODEL", "AUTO_MAX_POINTS", "model_words"]

#: The candidates in order of preference on equal errors (those the factory builds take part).
AUTO_CANDIDATES = ("rls", "harmonic", "lgc", "poisson")
#: ``SessionConfig.model_choice``: "fixed" (the model chosen at creation) or "auto".
MODEL_CHOICES = ("fixed", "auto")
#: Above this many points the model choice is off (RLS answers): every evaluation costs the graph
#: models' LOO, one solve per label on the whole graph (at n = 1,000 and 100 labels the benchmark's
#: runs take about 0.5 s per label with every evaluation; larger pools were not measured).
AUTO_MAX_POINTS = 20_000
#: The model of ``labeler app`` and ``labeler simulate`` when none is given (docs/defaults.md,
#: "Model choice by exact leave-one-out": decided on the benchmark's first half).
DEFAULT_MODEL = "auto"

_WORDS = {"rls": "RLS", "harmonic": "harmonic", "lgc": "LGC", "poisson": "Poisson"}


def model_words(name: str) -> str:
    """The short name of a model in the app's sentences ("RLS", "harmonic", "LGC", "Poisson")."""
    return _WORDS.get(name, name)


class ModelChoice(JobSlotOwner):
    """The automatic model choice of a session (module docstring).

    Parameters
    ----------
    config : SessionConfig
        The session's current settings (read; changed by the session when a setting applies).
    log : labeler.store.LogState
        The event-log state (net labels, classes); read only here.
    commit : callable
        ``commit(build)``: the session's one user action.
    learner : callable
        ``learner()``: the session's learner now.
    X : ndarray of shape (n_samples, n_features)
        The features the kernel and the kNN graph see.
    read_only : callable
        ``read_only()``: whether the store is read-only (no switch is written then).
    history : callable
        ``history()``: the session's stored events (the last switches, after a reopen).
    rule : core.selection.SwitchRule, optional
    swap : callable, optional
        ``swap(rows, learner)``: write the ``setting`` rows and make ``learner`` the session's
        (within the action that takes a background evaluation's result); without it the
        evaluations stay in step.
    first_reason : str
        Why the model that answered first did (``config["auto"]["first model"]``, stored by
        :meth:`first_switch` at creation).

    Attributes
    ----------
    background : bool
        Run the evaluations in a :class:`.choice_job.ChoiceJob` (the app; off by default: the
        library and ``labeler simulate`` evaluate in step, so a run is deterministic).
    """

    note: str = ""

    def __init__(self, config, log, commit, learner, X, read_only, history, rule: SwitchRule | None = None,
                 swap=None, lock=None, first_reason: str = ""):
        self._config = config
        self._log = log
        self._commit = commit
        self._learner = learner
        self.X = X
        self._read_only = read_only
        self._history = history
        self.rule = rule or SwitchRule()
        self._held: dict = {}
        self._graph_parts: dict = {}
        self._switches: list | None = None  # [(from, to, n_labels)], oldest first
        self._prior_reason = first_reason  # why the first model answers first (first_switch, stored in the config)
        self._last = None  # (n_events, Decision)
        self._swap = swap
        self._background = False
        self._open_slot(lock)  # the background evaluation (one at a time): pending, wait, cancel
        self._pool: dict = {}  # the background evaluations' own candidates {name: (spec, learner)}
        self._pool_parts: dict = {}  # their graph's parts
        self._tuning: CandidateTuning | None = CandidateTuning(X)  # the RLS candidate's re-tunes (a job holds it)
        self._rls_since: int | None = None  # labels when RLS last stopped answering (read from the events once)

    # ---- state -------------------------------------------------------------------------------
    @property
    def background(self) -> bool:
        """Whether the evaluations run in a background job (see the class docstring)."""
        return self._background

    @background.setter
    def background(self, on: bool) -> None:
        """Turn the background evaluations on or off; the candidates held for in-step
        evaluations become the background jobs' (and back), so that no learner is built twice
        (a dense RLS candidate is an n x n matrix)."""
        on = bool(on)
        if on != self._background and self._job is None:
            if on:
                for name, learner in self._held.items():
                    self._pool.setdefault(name, (self._spec(name), learner))
                self._held = {}
            else:
                for name, (spec, learner) in self._pool.items():
                    if spec == self._spec(name) and name != self.model:
                        self._held.setdefault(name, learner)
                self._pool = {}
            tuning = self._tuning
            if tuning is not None and not any(tuning.learner is held for held in self._held.values()) \
                    and not any(tuning.learner is held for _, held in self._pool.values()):
                tuning.release(tuning.learner)  # the candidate it followed was dropped
        self._background = on

    @property
    def requested(self) -> bool:
        """Whether the session was made with ``model="auto"`` (``model_choice == "auto"``)."""
        return getattr(self._config, "model_choice", "fixed") == "auto"

    @property
    def enabled(self) -> bool:
        """Whether the session chooses its model by LOO: requested, on at most
        :data:`AUTO_MAX_POINTS` points."""
        return self.requested and self.X.shape[0] <= AUTO_MAX_POINTS

    @property
    def model(self) -> str:
        return getattr(self._config, "model", None) or "rls"

    def candidates(self) -> tuple:
        """The candidates the factory builds and the session's strategy can query ("auto" is
        margin on a model without an expected-risk rule: no switch comes before
        :data:`core.criteria.auto.MAX_RISK_LABELS` labels; "arls" keeps to the models with one)."""
        n = self.X.shape[0]
        names = [m for m in AUTO_CANDIDATES if m in MODELS]
        strategy = self._config.strategy
        if strategy == "auto":
            return tuple(names)
        return tuple(m for m in names if m == "rls" or strategy in strategies_for(m, n))

    def _spec(self, name: str):
        return model.ModelSpec.from_config(replace(self._config, model=name))

    def _candidate(self, name: str):
        """The session's learner for the model answering, else a held one (built once)."""
        if name == self.model:
            return self._learner()
        learner = self._held.get(name)
        if learner is None:
            spec = self._spec(name)
            parts = self._graph_parts if spec.model != "rls" else ({} if spec.has_parts else None)
            learner = build_candidate(spec, self.X, self._log.classes, parts=parts)
            learner.require(LOO, f"model choice by leave-one-out (candidate {name!r})")
            self._held[name] = learner
        if learner.classes != list(self._log.classes):  # a class added, renamed or deleted
            del self._held[name]
            if self._tuning is not None:
                self._tuning.release(learner)  # one n x n matrix at a time
            return self._candidate(name)
        return learner

    def take(self, name: str, settings: dict | None = None):
        """The held learner of ``name`` given the session's labels (the session's new learner
        on a switch), or None; the learner handed over leaves this collaborator.

        ``settings`` (``{"width": w, "lam": l}``): the other settings of the switch's action
        (:meth:`switch_rows`); the learner is given those (the RLS candidate has them already
        when its re-tunes chose them), else the session's."""
        learner = self._held.pop(name, None)
        if learner is None and self._job is None:  # the background's candidate, when no job holds it
            held = self._pool.pop(name, None)
            learner = held[1] if held is not None and held[0] == self._spec(name) else None
        if learner is not None and self._tuning is not None:
            self._tuning.release(learner)
        if learner is None or learner.classes != list(self._log.classes) or not answers(learner):
            return None  # (a labelled-block RLS candidate: the session builds the full learner)
        if name == "rls":  # the candidate's width and lam, re-tuned or not, become the switch's
            now, target = learner_spec(self._spec(name), learner), self.target_spec(name, settings)
            if now != target:
                model.apply(now, target, learner)
        ModelSelector({name: learner}, name, correction="none").sync(name, self._labels())
        return learner

    def _block_candidates(self) -> None:
        """A full RLS learner a job built for a switch that was not taken (stale) goes back to
        the pool as a labelled-block candidate (its n x n matrix freed; the re-tunes followed)."""
        held = self._pool.get("rls")
        if held is None or not answers(held[1]):
            return
        block = as_candidate(held[0], held[1], self.X)
        if block is not held[1] and self._tuning is not None:
            self._tuning.replace(held[1], block)
        self._pool["rls"] = (held[0], block)

    def target_spec(self, name: str, settings: dict | None = None):
        """The settings of ``name`` once a switch with the other ``settings`` of its action applies."""
        spec = self._spec(name)
        for key, value in (settings or {}).items():
            spec = spec.with_setting(key, value)
        return spec

    def keep(self, name: str, learner) -> None:
        """Hold the session's previous learner as a candidate (after a switch)."""
        if name == "rls":
            self._rls_since = len(self._log.labels)  # the candidate's re-tunes start above this count
        if learner is not None and LOO in learner.capabilities:
            self._held[name] = as_candidate(self._spec(name), learner, self.X)  # dense RLS: its block alone

    def held_state(self) -> tuple:
        """What a switch changes here (the held candidates and :meth:`rls_since`), for
        :meth:`put_back` when its write fails."""
        return self._rls_since, dict(self._held), dict(self._pool)

    def put_back(self, state: tuple, name: str, learner) -> None:
        """Undo :meth:`take` and :meth:`keep` of a switch to ``name`` whose write failed:
        ``state`` (:meth:`held_state` before the switch) comes back, with ``learner`` (the one
        that would have answered) held as the candidate of ``name`` where it was taken from the
        candidates or none was held. ``rls_since`` is not moved (RLS never answered or never
        stopped), and the RLS candidate's re-tunes are recomputed from ``rls_since`` and the
        labels at the next evaluation (:meth:`.rls_candidate.CandidateTuning.bring`)."""
        self._rls_since, held, pool = state
        self._held, self._pool = held, pool
        for store in (held, pool):
            for key, value in list(store.items()):
                if (value[1] if store is pool else value) is learner:
                    candidate = as_candidate(self._spec(key), learner, self.X)
                    store[key] = (value[0], candidate) if store is pool else candidate
                    return
        if name not in held and name not in pool and learner is not None and LOO in learner.capabilities:
            held[name] = as_candidate(self._spec(name), learner, self.X)

    def _labels(self) -> dict:
        return {i: r.label for i, r in self._log.labels.items()}

    def _selector(self) -> ModelSelector:
        names = self.candidates()
        if self.model not in names:
            names = (self.model,) + names
        learners = {name: self._candidate(name) for name in names}
        return ModelSelector(learners, self.model, self.X, correction="mass", rule=self.rule)

    def _balanced(self) -> bool:
        """Whether the LOO error is balanced: the session's RLS class weights differ."""
        weighting = self._config.weighting
        return weighting == "balanced" or isinstance(weighting, dict) and len(set(weighting.values())) > 1

    def evaluate(self):
        """Every candidate's weighted LOO error on the labels and the rule's decision
        (:class:`core.selection.Decision`), cached per state; changes nothing stored."""
        version = self._log.n_events
        if self._last is not None and self._last[0] == version:
            return self._last[1]
        selector = self._selector()
        if "rls" in selector.candidates and self.model != "rls":  # re-tuned as in labeler simulate
            if self._tuning is None:
                self._tuning = CandidateTuning(self.X)
            self._tuning.bring(selector.candidates["rls"], self._spec("rls"), self.rls_since(),
                               self.tune_flags(), self._log.classes,
                               [(r.index, r.label) for r in self._log.labels.values()])
        decision = selector.evaluate(self._labels(), balanced=self._balanced(), n_switches=self.loo_switches())
        self._last = (version, decision)
        return decision

    # ---- the RLS candidate's re-tunes (labeler.session.rls_candidate) ------------------------
    def tune_flags(self) -> dict:
        """``{"width": bool, "lam": bool}``: what the RLS candidate re-tunes (the session's
        ``auto_tune``; nothing when width and lam are fixed)."""
        return tune_flags(check_auto_tune(self._config.auto_tune or {}), self._spec("rls"))

    def rls_since(self) -> int:
        """The label count at which RLS last stopped answering (0 when it never answered): the
        candidate's re-tunes start above it. Read from the stored switches after a reopen (the
        last ``model`` event from RLS: its ``effective_labels``, else ``n_labels``)."""
        if self._rls_since is None:
            since = 0
            for ev in self._history():
                value = ev.value if isinstance(ev.value, dict) else {}
                if ev.kind == "setting" and value.get("name") == "model" and value.get("from") == "rls":
                    since = int(value.get("effective_labels", value.get("n_labels", 0)))
            self._rls_since = since
        return self._rls_since

    def candidate_spec(self, name: str = "rls"):
        """The settings the candidate ``name`` has now (for RLS while a graph model answers: its
        width and lam after the re-tunes), or None when no candidate of it is held."""
        if name == self.model:
            return model.ModelSpec.from_config(self._config)
        learner = self._held.get(name)
        if learner is None and name in self._pool:
            learner = self._pool[name][1]
        if learner is None:
            return None
        return learner_spec(self._spec(name), learner) if name == "rls" else self._spec(name)

    def switch_rows(self, name: str, notes: dict, spec=None) -> list:
        """The rows of a switch to ``name``: the ``model`` setting (``notes`` its evidence) and,
        for RLS, the width and lam the candidate was re-tuned to (``spec``) where they differ
        from the session's, all written in ONE action (a reopen replays the RLS that took over)."""
        rows = [Setting("model", name, {"auto": True, **notes})]
        if name != "rls" or spec is None:
            return rows
        now = self._spec(name)
        extra = {"auto": True, "n_labels": notes.get("n_labels"), "with_model": True,
                 "reason": "re-tuned by leave-one-out while another model answered; taken over with RLS"}
        for key in ("effective_labels", "background"):
            if key in notes:
                extra[key] = notes[key]
        for key in ("width", "lam"):
            value = getattr(spec, key)
            if value is not None and value != getattr(now, key):
                rows.append(Setting(key, float(value), dict(extra)))
        return rows

    # ---- switches ----------------------------------------------------------------------------
    def switches(self) -> list:
        """The automatic switches in force: ``[(from, to, n_labels)]``, oldest first (read from
        the stored events once, then kept)."""
        if self._switches is None:
            stack = []
            for ev in self._history():
                value = ev.value if isinstance(ev.value, dict) else {}
                if ev.kind != "setting" or value.get("name") != "model" or not value.get("auto"):
                    continue
                if value.get("restored"):  # as after_labels_change: the switches made on more labels go
                    after = int(value.get("n_labels", 0))
                    while stack and after < stack[-1][2]:
                        stack.pop()
                else:
                    stack.append((value.get("from"), value["value"], int(value.get("n_labels", 0))))
            self._switches = stack
        return self._switches

    @property
    def first_reason(self) -> str:
        """Why the model that answered first did ("" when no rule chose it)."""
        return self._prior_reason

    def first_switch(self, seed: int = 0):
        """The model that answers first, chosen from the unlabelled pool (a new session;
        :data:`core.selection.selector.FIRST_MODEL`, read at call time: "prior" is
        :func:`core.selection.prior.first_model_evidence` on the graph candidates' kNN graph).

        Returns
        -------
        labeler.store.Setting or None
            The ``model`` setting to write with the session, or None when RLS answers first
            (the model choice is off, the graph model is no candidate, or the rule says RLS).
            The graph model's learner is held, so the switch takes it warm.
        """
        first = _selection.FIRST_MODEL
        if not self.enabled or first == "rls" or "harmonic" not in self.candidates():
            return None
        self._candidate("harmonic")  # builds the kNN graph once (shared by the candidates) and holds it
        if first == "prior":
            W = neighbour_graph(self._graph_parts["neighbours"], self._graph_parts["distances"])
            try:
                first, reason = first_model_evidence(W, len(self._log.classes), seed=int(seed))
            except (ValueError, ArithmeticError, RuntimeError) as exc:  # e.g. Lanczos without convergence
                first, reason = "rls", f"the pool's kNN graph could not be read ({exc})"
        else:
            reason = f"the model choice starts on {model_words(first)}"
        self._prior_reason = reason
        if first == self.model or first not in self.candidates():
            return None
        return Setting("model", first, {"auto": True, "prior": True, "from": self.model, "n_labels": 0,
                                        "reason": f"{reason}: {model_words(first)} answers until leave-one-out "
                                                  "can tell the models apart"})

    def loo_switches(self) -> int:
        """The switches in force that leave-one-out made (each halves the p-value the next one
        needs, :class:`core.selection.SwitchRule`); the first model's switch, made from the pool
        at 0 labels, is not one (``labeler simulate`` starts its count at 0 on that model too)."""
        return sum(1 for _, _, n_labels in self.switches() if n_labels > 0)

    def _write(self, name: str, notes: dict, spec=None) -> bool:
        try:
            self._commit(lambda: self.switch_rows(name, notes, spec) if name != self.model else None)
        except (ValueError, StoreWriteError) as exc:
            self.note = f"The model choice was not applied: {exc}"
            return False
        return True

    def after_labels_change(self, before: int) -> None:
        """After an action that changed the labels (``before`` labels before it): give back the
        model a switch replaced when the labels that chose it are gone, then evaluate when due.
        Never raises: the labels are stored already."""
        if not self.enabled or self._read_only():
            return
        again = self._take_job() if self._job is not None else False
        after = len(self._log.labels)
        stack = self.switches()
        if stack and after < stack[-1][2]:
            undone = []
            while stack and after < stack[-1][2]:
                undone.append(stack.pop())
            back = undone[-1][0]
            if self._write(back, {"restored": True, "from": self.model, "n_labels": after,
                                  "reason": f"the labels that chose {model_words(undone[0][1])} were taken back"}):
                self.note = f"{model_words(back)} answers again: the labels that chose another model were taken back."
            return
        due = after > before and evaluation_due(after)
        if self._job is not None:  # still running: one more as soon as it is done
            self._slot.due = self._slot.due or due
            return
        if self._can_background():
            if (due or again or self._last is None) and after >= 2:
                self._start_job()
            return
        if not due:
            return
        try:
            decision = self.evaluate()
        except (ValueError, ArithmeticError) as exc:
            self.note = f"The models were not compared: {exc}"
            return
        if decision.model != self.model:
            notes = {"from": self.model, "n_labels": after, "p_value": float(decision.p_value),
                     "errors": {k: float(v) for k, v in decision.errors.items()}, "reason": decision.reason}
            old = self.model
            if self._write(decision.model, notes, self.candidate_spec(decision.model)):
                stack.append((old, decision.model, after))
                self.note = decision.reason

    # ---- evaluations in the background (labeler.session.choice_job) ------------------------
    def _can_background(self) -> bool:
        return self.background and self._swap is not None

    def _snapshot(self) -> ChoiceSnapshot:
        """What an evaluation reads now (copied: the requests go on changing the session)."""
        names = self.candidates()
        if self.model not in names:
            names = (self.model,) + names
        flags = self.tune_flags()
        return ChoiceSnapshot(tuple((name, self._spec(name)) for name in names), self.model,
                              tuple(self._log.classes),
                              tuple((r.index, r.label) for r in self._log.labels.values()),
                              self._balanced(), self.loo_switches(), self.rule,
                              rls_since=self.rls_since(), tune=(flags["width"], flags["lam"]))

    def _start_job(self) -> None:
        snap = self._snapshot()
        pool, parts, self._pool, self._pool_parts = self._pool, self._pool_parts, {}, {}
        tuning, self._tuning = self._tuning or CandidateTuning(self.X), None
        self._slot.start(ChoiceJob(snap, self.X, pool, parts, start=False, tuning=tuning))

    def _job_finished(self) -> None:
        """An evaluation came due while the background one ran, and that one is done (called
        by the :class:`.background_job.JobSlot` in the worker thread, under the session's
        lock): take it and start the due one now rather than at the next label, unless the
        finished one switches the model (the switch is written at the next label, and the due
        evaluation starts then: one of the old model would be stale, and a switch now could
        change the query on the page under the user's key)."""
        job = self._job
        if job is None or self._read_only() or not self._can_background() or not self.enabled:
            return
        if job.error is None and job.changes_model and not job.stale_reason(self._snapshot()):
            return
        self._take_job()
        if self._job is None and len(self._log.labels) >= 2:
            self._start_job()

    def _take_job(self) -> bool:
        """Apply the finished background evaluation, or discard it when stale; True when an
        evaluation is due again (the discarded one, or one that came due while it ran). A job
        still running is left (cancelled when already stale)."""
        try:
            return self._take_result()
        finally:
            if self._job is None:
                self._block_candidates()

    def _take_result(self) -> bool:
        job = self._job
        now = self._snapshot()
        stale = job.stale_reason(now)
        if stale:
            job.cancel()
        if not job.done():
            if stale:
                self._slot.due = True
            return False
        self._slot.take()
        self._pool, self._pool_parts, self._tuning = job.pool, job.parts, job.tuning  # the worker is done with them
        again = self._slot.take_due()
        snap = job.snapshot
        if stale:
            self.note = (f"A comparison of the models on {len(snap.labels)} labels was discarded "
                         f"({stale}); it runs again on the labels now.")
            return True
        if job.error is not None:  # never raised here: the labels are stored already
            self.note = f"The models were not compared: {job.error}"
            return again
        decision = job.decision
        self._last = (self._log.n_events, decision)
        if decision.model == self.model:
            return again
        old, after = self.model, len(now.labels)
        notes = {"auto": True, "from": old, "n_labels": len(snap.labels), "effective_labels": after,
                 "background": True, "p_value": float(decision.p_value),
                 "errors": {k: float(v) for k, v in decision.errors.items()}, "reason": decision.reason}
        try:
            spec = job.candidate_spec(decision.model)
            learner = job.catch_up(decision.model, now.labels)
            if learner is None:
                raise ValueError(f"the evaluation kept no learner for {decision.model!r}")
            self._tuning.release(learner)
            previous = self._learner()
            del notes["auto"]
            self._swap(self.switch_rows(decision.model, notes, spec), learner)
        except Exception as exc:  # not written (the store rolled back): the model in use stays
            self.note = f"The model choice was not applied: {exc}"
            return again
        if old == "rls":
            self._rls_since = after  # the candidate's re-tunes start above this count
        self._pool[old] = (self._spec(old), as_candidate(self._spec(old), previous, self.X))  # the next candidate
        self.switches().append((old, decision.model, len(snap.labels)))
        self._last = (self._log.n_events, decision)
        self.note = decision.reason
        return again

    # ---- display -----------------------------------------------------------------------------
    def summary(self) -> dict | None:
        """Which model answers and why, for the app (None unless ``model_choice == "auto"``).

        Returns
        -------
        dict or None
            ``model``, ``text`` ("Model: harmonic — chosen by leave-one-out: weighted error 12% vs
            RLS 18% on 40 labels", or "... as of label 40 (you have 41: ...)" while the last
            evaluation on the schedule is from an earlier label: not recomputed per page), ``errors``
            ({name: error}), ``n_labels`` (of that evaluation), ``reason``.
        """
        if not self.requested:
            return None
        n = len(self._log.labels)
        if not self.enabled:
            return {"model": self.model, "errors": {}, "n_labels": n, "reason": "",
                    "text": f"Model: {model_words(self.model)} — the choice by leave-one-out is off above "
                            f"{AUTO_MAX_POINTS:,} points (this pool has {self.X.shape[0]:,})"}
        name = self.model
        base = {"model": name, "errors": {}, "n_labels": n, "reason": ""}
        if n < 2:
            if self._prior_reason:
                return {**base, "text": f"Model: {model_words(name)} — answers first, as {self._prior_reason}; "
                                        "the models are compared by leave-one-out once labels arrive"}
            return {**base, "text": f"Model: {model_words(name)} — chosen by leave-one-out once labels arrive"}
        job = self._job
        if self._can_background():  # never evaluated in the request: the last result, or a finished job's
            ready = (job is not None and job.done() and job.decision is not None
                     and not job.stale_reason(self._snapshot()))
            if ready:
                d = job.decision
            elif self._last is None:  # a reopen in the app
                return {**base, "text": f"Model: {model_words(name)} — compared by leave-one-out in the "
                                        "background from the next label"}
        try:  # the last evaluation (the schedule's), or one now when there is none (a reopen)
            if not (self._can_background() and ready):
                d = self._last[1] if self._last is not None else self.evaluate()
        except (ValueError, ArithmeticError) as exc:
            return {**base, "text": f"Model: {model_words(name)} (leave-one-out not available: {exc})"}
        now, n = n, d.n_labels
        kinds = len(set(list(self._labels().values())[:n]))
        if kinds < 2:  # every candidate scores 0% on one class: no comparison to report
            return {**base, "text": f"Model: {model_words(name)} — leave-one-out needs labels of at least "
                                    f"2 classes; there are {n:,} labels of 1 class"}
        errors = {k: v for k, v in d.errors.items() if np.isfinite(v)}
        others = sorted((k for k in errors if k != name), key=lambda k: errors[k])
        vs = f" vs {model_words(others[0])} {100 * errors[others[0]]:.0f}%" if others else ""
        mine = f"{100 * errors[name]:.0f}%" if name in errors else "n/a"
        how = "chosen" if any(n_labels > 0 for _, _, n_labels in self.switches()) else "kept"
        # the error weighs each label by the pool mass it stands for (not the stopping panel's
        # plain LOO error); an evaluation from an earlier label says which label it is from
        when = f"on {n} labels" if n == now else f"as of label {n} (you have {now}: compared again on schedule)"
        text = f"Model: {model_words(name)} — {how} by leave-one-out: weighted error {mine}{vs} {when}"
        return {**base, "text": text, "errors": errors, "reason": d.reason, "n_labels": n}
