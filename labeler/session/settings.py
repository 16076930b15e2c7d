"""Changing a session's settings: strategy, class weighting, lam, RBF width, and the
automatic re-tuning of width and lam as labels arrive.

:class:`Settings` is owned by :class:`~labeler.session.session.LabelingSession` (as
``session.settings``; the session's methods of the same names delegate to it). Each setter
checks the value (:func:`.config.check_setting`), then commits it through the session's commit
function, which gives it to the learner through the model factory (:mod:`.model`) BEFORE it
is written: a value the learner rejects raises with nothing stored, so the event log always
reopens.

Automatic tuning
----------------
``config.auto_tune`` says which of width and lam are "auto". After every action that changes
the labels (:meth:`Settings.after_labels_change`, called by the session's ``_commit``) it asks
:func:`core.rls.tuning.retune_due` whether a re-tune is due (after every label up to 50
labels, then on a schedule that doubles its step) and runs :func:`.model.auto_tune` (the one
LOO rule, also ``labeler simulate``'s). A value it moves is written as an ordinary ``setting``
event holding the chosen number (and ``{"auto": true, "loo_error", "n_labels", "reason"}``),
so a reopened session replays the numbers and never runs the tuner to restore its state. A
number typed by the user turns "auto" off for that value (a ``setting`` event of
``auto_tune``); typing "auto" turns it on and re-tunes at once. A re-tune that fails (the
learner rejects the value, the store is read-only) leaves the label stored and the values
as they were; :attr:`tuning_note` says why.

It also keeps the checkpoints of the stopping signal (:mod:`.stopping`) after each change of
the labels. It is given only what it needs: the configuration, the event-log state, the commit
function, the per-state cache, the learner (through a getter: the session may rebuild it), the
features, the session's stored arrays (read, and write when it can) and whether the store is
read-only.
"""

from __future__ import annotations

import numpy as np

from core.criteria.risk import predicted_class_indices
from core.learner.base import KERNEL, LAM, WEIGHTING
from core.rls.tuning import loo_readiness, retune_due
from core.coverage import sampled_clusters
from core.rls.width_scale import MAX_CLUSTER_POINTS

from . import model
from .config import check_auto_tune, check_graph_strategy, check_setting
from .background_job import JobSlotOwner
from .retune import CurvesJob, RetuneJob, RetuneSnapshot
from .stopping import StoppingMonitor
from ..store import GUESS_SOURCES, Setting, StoreWriteError

__all__ = ["Settings", "STOPPING_ARRAY", "CurvesPending"]


class CurvesPending(ValueError):
    """The LOO curves of the labels now are being computed in the background and none of
    earlier labels are there to show meanwhile (:meth:`Settings.tuning` in the app)."""

STOPPING_ARRAY = "stopping-checkpoints"  # store array: the stopping signal's checkpoints


class Settings(JobSlotOwner):
    """Setters and automatic tuning of a session (see the module docstring).

    Parameters
    ----------
    config : SessionConfig
        The session's current settings (changed by the session when a setting is applied).
    log : labeler.store.LogState
        The session's event-log state (net labels, classes); read only here.
    commit : callable
        ``commit(build)``: the session's one user action (``LabelingSession._commit``).
    cached : callable
        ``cached(key, compute)``: one value per state version (``LabelingSession._cached``).
    learner : callable
        ``learner()``: the session's learner now.
    X : ndarray of shape (n_samples, n_features)
        The features the learner sees (the width grid of the tuner).
    load_array, cache_array : callable
        ``load_array(name)`` -> the session's stored array or None; ``cache_array(name, array)``
        keeps one in the store when it can (the stopping checkpoints).
    read_only : callable
        ``read_only()``: whether the store is read-only (no re-tune is written then).
    auto_settings : dict
        How the "auto" settings were resolved at creation (``model_summary``'s reasons).
    """

    tuning_note: str = ""

    def __init__(self, config, log, commit, cached, learner, X, load_array, cache_array, read_only,
                 auto_settings, swap=None, lock=None, pending=None):
        self._swap = swap
        self._pending = pending  # points labelled in the log the learner does not hold yet (a graph refit)
        self.background = False
        self._open_slot(lock)  # the background re-tune (one at a time)
        self._config = config
        self._log = log
        self._commit = commit
        self._cached = cached
        self._learner = learner
        self.X = X
        self.n_samples = X.shape[0]
        self._load_array = load_array
        self._cache_array = cache_array
        self._read_only = read_only
        self._auto_settings = dict(auto_settings)
        self._widths = None
        self._sampled_clusters = None  # (clusters of a sample of a large pool, or None,), once computed
        self._stopping = None
        self._curves_job = None  # the LOO curves in the background (the app): the job of the labels now
        self._curves_shown = None  # ... and the last finished one, shown meanwhile

    @property
    def _spec(self) -> model.ModelSpec:
        """The model settings of the current configuration."""
        return model.ModelSpec.from_config(self._config)

    def _set(self, name: str, value, **extra):
        """Store the setting ``name = value`` if the learner takes it (checked before)."""
        self._set_many({name: value}, {name: extra})

    def _set_many(self, values: dict, notes: dict | None = None):
        """Store the settings ``values`` ({name: value}, checked before) that differ from the
        current ones, all in ONE action and one transaction, if the learner takes them;
        ``notes`` ({name: dict}) are kept with their events."""
        notes = notes or {}

        def build():
            changed = {k: v for k, v in values.items() if getattr(self._config, k) != v}
            return [Setting(k, v, notes.get(k, {})) for k, v in changed.items()] or None

        self._commit(build)

    # ---- graph models ----------------------------------------------------------------------
    @property
    def model_name(self) -> str:
        """The session's model: "rls", "harmonic" or "lgc" (stored; older sessions: "rls")."""
        return getattr(self._config, "model", None) or "rls"


    def model_summary(self) -> dict:
        """Which model answers and why (the sidebar's learner panel).

        Returns
        -------
        dict
            ``model`` ("rls", "harmonic", "lgc"), ``description`` (the model and its query rule
            in words), ``why`` (how it was chosen: the session's creation, and the notes of its
            "auto" settings), ``settings`` (the names of the settings the app offers for it).
        """
        spec = self._spec
        # (the default of ``labeler app`` is model "auto", whose sentence is the model choice's)
        why = [f"chosen when the session was made (model {self.model_name!r})"]
        notes = self._auto_settings or {}
        for key in ("strategy", "posterior"):
            if notes.get(key):
                why.append(f"{key}: {notes[key]}")
        caps = self._learner().capabilities
        offered = ("strategy",) + tuple(name for name, cap in (("weighting", WEIGHTING), ("width", KERNEL), ("lam", LAM))
                                        if cap in caps)
        return {"model": self.model_name, "description": model.model_description(spec, self.n_samples),
                "why": "; ".join(why), "settings": offered}

    # ---- automatic tuning ------------------------------------------------------------------
    @property
    def auto_tune(self) -> dict:
        """``{"width": bool, "lam": bool}``: the values re-tuned by LOO as labels arrive."""
        flags = check_auto_tune(self._config.auto_tune or {})
        flags["width"] = flags["width"] and self._config.kernel == "rbf"
        return flags

    def _width_scale(self):
        """The pool's width grid and clusters (:func:`.model.width_scale`), computed once."""
        scale = self._widths
        if scale is None:
            scale = self._widths = model.width_scale(self.X)
        return scale

    def pool_clusters(self) -> np.ndarray | None:
        """The cluster of every pool point (components of its nearest-neighbour graph, -1 for
        small ones; :func:`core.rls.width_scale.width_scale`), shape (n_samples,); None above
        ``MAX_CLUSTER_POINTS`` points (no per-point clusters are built there) and when the pool
        has none to check (one connected mass, or no spread)."""
        if self.X.shape[0] > MAX_CLUSTER_POINTS:
            return None
        try:
            return self._width_scale().components
        except ValueError:  # SettingsError: a median distance of 0
            return None

    def coverage_clusters(self):
        """The clusters the stopping rule's coverage reads: :meth:`pool_clusters` up to
        ``MAX_CLUSTER_POINTS`` points, above it those of a seeded sample
        (:class:`core.coverage.SampledClusters`, computed once); None when there are none."""
        if self.X.shape[0] > MAX_CLUSTER_POINTS:
            if self._sampled_clusters is None:
                self._sampled_clusters = (sampled_clusters(self.X, seed=int(self._config.seed)),)
            return self._sampled_clusters[0]
        return self.pool_clusters()

    def _width_grid(self) -> np.ndarray:
        return self._width_scale().widths

    def tuning(self, in_step: bool | None = None) -> dict:
        """What the tuner says about the values in use (cached per state; reads only): the
        LOO error over the width grid at the lam in use (``"width"``: an
        :class:`core.rls.tuning.AutoTuning` of the width, None without an RBF kernel) and over
        the lam grid at the width in use (``"lam"``), and ``"n_labels"``, the labels they are
        computed on, with ``"pending"`` (a computation on the labels now is still running).

        In the app (:attr:`background`, unless ``in_step``) the curves are computed by a
        :class:`.retune.CurvesJob` in a worker thread: this returns the last finished result
        (of fewer labels while ``pending``) and starts a job when the labels or the settings
        changed; the library computes them here.

        Raises
        ------
        ValueError
            Too few labels (at least 2 of each of 2 classes).
        CurvesPending
            (a ValueError) In the app, before the first curves are ready.
        """
        if not (self.background if in_step is None else not in_step):
            self._learner().require(LAM, "LOO tuning of width and lam")
            return self._tuning_now()
        self._check_tunable()
        rbf = self._config.kernel == "rbf"
        snap = self._snapshot(rbf, True)
        job = self._curves_job
        if job is not None and job.done():
            if job.error is None and job.fits is not None:
                self._curves_shown = job
            if job.snapshot == snap:
                if job.error is not None:
                    raise ValueError(str(job.error))
                return {**job.fits, **self._computed_at(snap.spec, len(snap.labels)), "pending": False}
            job = None
        if job is None:
            self._curves_job = job = CurvesJob(snap, self.X)
        shown = self._curves_shown
        if shown is None:
            raise CurvesPending(f"the leave-one-out curves of your {len(snap.labels)} labels are being computed")
        return {**shown.fits, **self._computed_at(shown.snapshot.spec, len(shown.snapshot.labels)), "pending": True}

    @staticmethod
    def _computed_at(spec, n_labels: int) -> dict:
        """What curves were computed on: the label count and the width and lam then in use
        (the page marks those on the curves, not the values now)."""
        return {"n_labels": int(n_labels), "lam_in_use": float(spec.lam),
                "width_in_use": None if spec.width is None else float(spec.width)}

    def _check_tunable(self) -> None:
        """Raise ValueError unless LOO can tune now: a learner with lam, and at least 2 labels of
        each of 2 classes (what :meth:`tuning` would raise, without computing the curves)."""
        self._learner().require(LAM, "LOO tuning of width and lam")
        waiting = loo_readiness([r.label for r in self._log.labels.values()])
        if waiting:
            raise ValueError(waiting)

    def wait_for_curves(self, timeout: float | None = None) -> bool:
        """Wait for the LOO curves' background job (True when none runs or it is done)."""
        job = self._curves_job
        return job is None or job.wait(timeout)

    def cancel_curves(self) -> None:
        """Stop the LOO curves' background job (the session closing)."""
        job, self._curves_job = self._curves_job, None
        if job is not None:
            job.cancel()

    def _tuning_now(self) -> dict:
        """:meth:`tuning` computed in this request (the library; cached per state)."""

        def compute():
            rbf = self._config.kernel == "rbf"
            width = model.auto_tune(self._spec, self._learner(), self.X, tune_width=True, tune_lam=False,
                                    scale=self._width_scale()) if rbf else None
            lam = model.auto_tune(self._spec, self._learner(), self.X, tune_width=False, tune_lam=True)
            return {"width": width, "lam": lam, **self._computed_at(self._spec, len(self._log.labels)),
                    "pending": False}

        return self._cached("loo_fit", compute)

    def _auto_flags(self, name: str, on: bool) -> dict:
        """``{"auto_tune": flags}`` with ``name`` turned ``on``, or {} when it already is."""
        flags = self.auto_tune
        if flags[name] == on:
            return {}
        return {"auto_tune": {**flags, name: on}}

    def _retune(self, width: bool, lam: bool, flags: dict | None = None):
        """Run the tuner for the flagged values and write the values it moves (width first:
        its rebuild uses the lam in use), with ``flags`` (a new ``auto_tune``) if given, in one
        transaction. Raises ValueError with too few labels."""
        width = width and self._config.kernel == "rbf"
        if not (width or lam):
            return None
        fit = model.auto_tune(self._spec, self._learner(), self.X, tune_width=width, tune_lam=lam,
                              scale=self._width_scale() if width else None)
        extra = {"auto": True, "loo_error": float(fit.error), "n_labels": len(self._log.labels),
                 "reason": fit.reason}
        moved = {}
        if fit.width_changed:
            moved["width"] = float(fit.width)
        if fit.lam_changed:
            moved["lam"] = float(fit.lam)
        self._set_many({**moved, **(flags or {})}, {k: extra for k in moved})  # one transaction
        self.tuning_note = fit.reason
        return fit

    # ---- re-tunes in the background (labeler.session.retune) ---------------------------------
    def _labels_now(self) -> tuple:
        return tuple((r.index, r.label) for r in self._log.labels.values())

    def _can_background(self) -> bool:
        """Dense, Nystrom and spectral kernel-RLS sessions re-tune in the background (the app)."""
        return self.background and self._swap is not None and isinstance(self._spec, model.RlsSpec)

    # the background re-tune, under the names the session's call sites use
    retune_pending = JobSlotOwner.pending
    wait_for_retune = JobSlotOwner.wait
    cancel_retune = JobSlotOwner.cancel

    def _snapshot(self, width: bool, lam: bool) -> RetuneSnapshot:
        """What a re-tune reads now (copied: the requests go on changing the session)."""
        spec, labels = self._spec, self._labels_now()
        problem = parts = None
        if spec.posterior != "dense":  # a factor: LOO sees its labelled rows (model.loo_problem)
            learner = self._learner()
            problem = model.loo_problem(spec, learner, self.X, [i for i, _ in labels])
            if spec.posterior == "nystrom":
                parts = {"landmarks": learner.posterior.landmarks}  # a new width re-uses them
            width = width and problem[2]
        return RetuneSnapshot(spec, tuple(self._log.classes), labels, dict(self._learner().class_weights),
                              width, lam, self._width_grid() if width else None,
                              self._width_scale() if width else None, problem, parts)

    def _start_job(self, width: bool, lam: bool) -> None:
        width = width and self._config.kernel == "rbf"
        if not (width or lam):
            return
        snap = self._snapshot(width, lam)
        width, labels = snap.tune_width, snap.labels
        if not (width or lam):
            return
        self._slot.start(RetuneJob(snap, self.X, start=False))
        what = " and ".join(n for n, on in (("width", width), ("λ", lam)) if on)
        self.tuning_note = (f"Re-tuning {what} in the background on {len(labels)} labels: a value it moves "
                            "takes effect at the next label after it is ready.")

    def _stale(self, job: RetuneJob) -> str:
        stale = job.stale_reason(self._spec, self._log.classes, self._labels_now())
        flags, snap = self.auto_tune, job.snapshot
        if not stale and ((snap.tune_width and not flags["width"]) or (snap.tune_lam and not flags["lam"])):
            stale = "a value it tunes was fixed meanwhile"
        return stale

    def _job_finished(self) -> None:
        """A re-tune came due while the background one ran, and that one is done (called by
        the :class:`.background_job.JobSlot` in the worker thread, under the session's lock):
        start the due one now rather than at the next label, unless the finished one moved a
        value (that is applied at the next label, and the due one starts then: a re-tune of
        the old values would be stale, and a swap now could change the query on the page)."""
        job = self._job
        if job is None or self._read_only() or not self._can_background():
            return
        if job.error is None and job.moved and not self._stale(job):
            return
        self._take_job()
        flags = self.auto_tune
        waiting = loo_readiness([r.label for r in self._log.labels.values()])
        if (flags["width"] or flags["lam"]) and LAM in self._learner().capabilities and not waiting:
            self._start_job(flags["width"], flags["lam"])

    def _take_job(self) -> bool:
        """Apply the finished background re-tune, or discard it when stale; True when a
        re-tune is due again (the discarded one, or one that came due while it ran)."""
        job = self._job
        labels = self._labels_now()
        stale = self._stale(job)
        if stale:
            self._slot.take()
            job.cancel()
            self.tuning_note = (f"A background re-tune on {len(job.snapshot.labels)} labels was discarded "
                                f"({stale}); it runs again on the labels now.")
            return True
        if not job.done():
            return False
        self._slot.take()
        again = self._slot.take_due()
        if job.error is not None:
            self.tuning_note = f"The automatic re-tune was not applied: {job.error}"
            return again
        fit, moved = job.fit, job.moved
        self.tuning_note = fit.reason
        if not moved:
            return again
        extra = {"auto": True, "loo_error": float(fit.error), "n_labels": len(job.snapshot.labels),
                 "reason": fit.reason, "background": True, "effective_labels": len(labels)}
        try:
            learner = job.catch_up(labels)
            if learner is None:  # no room for a second model: applied in place, as a synchronous re-tune
                self._set_many(moved, {k: extra for k in moved})
            else:
                self._swap([Setting(k, v, extra) for k, v in moved.items()], learner)
        except Exception as exc:  # not written (the store rolled back): the model in use stays
            self.tuning_note = f"The automatic re-tune was not applied: {exc}"
        return again

    def after_labels_change(self, before: int):
        """After an action that changed the labels (``before`` labels before it): re-tune
        when due, then keep a stopping checkpoint. Never raises for a re-tune that fails: the
        labels are stored already.

        With :attr:`background` (the app) a due re-tune of a dense session runs in a
        :class:`.retune.RetuneJob`; a finished one is applied here, after this change's own
        update (its values are written as ``setting`` events now, at this label count), and
        one that no longer matches the labels (an undo meanwhile) is discarded and started
        again."""
        after = len(self._log.labels)
        flags = self.auto_tune
        rls = LAM in self._learner().capabilities  # a graph model chosen by LOO (model "auto") has no width or lam
        due = (flags["width"] or flags["lam"]) and rls and retune_due(before, after) and not self._read_only()
        if self._job is not None:
            due = self._take_job() or due
            if self._job is not None and due:  # still running: one more once it is done
                self._slot.due, due = True, False
        due = due and (flags["width"] or flags["lam"]) and rls and not self._read_only()
        if due and self._can_background():
            waiting = loo_readiness([r.label for r in self._log.labels.values()])
            if waiting:
                self.tuning_note = waiting
            else:
                self._start_job(flags["width"], flags["lam"])
            due = False
        if due:
            waiting = loo_readiness([r.label for r in self._log.labels.values()])
            if waiting:
                self.tuning_note = waiting
            else:
                try:
                    self._retune(flags["width"], flags["lam"])
                except (ValueError, StoreWriteError) as exc:
                    self.tuning_note = f"The automatic re-tune was not applied: {exc}"
        self.record_stopping()

    # ---- stopping checkpoints --------------------------------------------------------------
    def user_label_count(self) -> int:
        """Labels given by the user (accepted predictions and grid picks left on the model's
        guess, :data:`labeler.store.GUESS_SOURCES`, left out)."""
        return sum(1 for r in self._log.labels.values() if r.source not in GUESS_SOURCES)

    def predicted_codes(self) -> np.ndarray:
        """The learner's predicted class per point, as class indices, shape (n_samples,)."""
        return predicted_class_indices(np.asarray(self._learner().decision_values)).astype(np.int32)

    @property
    def stopping_monitor(self) -> StoppingMonitor:
        """The session's :class:`.stopping.StoppingMonitor` (its checkpoints kept in the store)."""
        monitor = self._stopping
        if monitor is None:
            monitor = self._stopping = StoppingMonitor(self.n_samples)
            monitor.load_array(self._load_array(STOPPING_ARRAY), self.user_label_count())
        return monitor

    def record_stopping(self) -> None:
        """Offer the stopping monitor the learner's predictions, counted with the user labels
        the learner holds: while a graph refit runs in the background (:mod:`.graph_refit`) the
        learner lacks the labels still being fitted, and its checkpoint is that of the labels it
        has (the session records again when the refit is swapped in); no request waits."""
        n_labels = self.user_label_count()
        waiting = [] if self._pending is None else self._pending()
        if len(waiting):
            records = self._log.labels
            n_labels -= sum(1 for i in np.asarray(waiting).tolist()
                            if i in records and records[i].source not in GUESS_SOURCES)
        if self.stopping_monitor.record(n_labels, self.predicted_codes()):
            self._cache_array(STOPPING_ARRAY, self.stopping_monitor.to_array())

    # ---- setters ---------------------------------------------------------------------------
    def set_strategy(self, name: str):
        """Change the query strategy (persisted). A graph model refuses "arls" (and "auto")
        where it has no expected-risk rule (:func:`.config.check_graph_strategy`)."""
        name = check_setting("strategy", name, self._config.kernel, self._log.classes)
        self._set("strategy", check_graph_strategy(self.model_name, name, self.n_samples))

    def set_weighting(self, weighting):
        """Change the class weighting: "none", "balanced" or {class: weight} (persisted).

        Raises
        ------
        ValueError
            An unknown weighting, or weights the learner rejects (nothing stored); a graph model.
        """
        self._learner().require(WEIGHTING, "Class weighting")
        self._set("weighting", check_setting("weighting", weighting, self._config.kernel, self._log.classes))

    def set_lam(self, value):
        """Set the regularisation: a number > 0 (fixed from now on), or "auto": re-tuned by
        exact LOO as labels arrive (:func:`core.rls.tuning.auto_tune`), starting now.

        Raises
        ------
        ValueError
            Not a number > 0; too few labels for "auto" (nothing stored); a value the
            learner rejects (e.g. ``K_LL + Lambda_L`` not positive definite): nothing stored.
        """
        self._learner().require(LAM, "λ (lam)")
        if isinstance(value, str) and value == "auto":
            self._check_tunable()  # too few labels: raises before anything is stored
            self._retune(width=False, lam=True, flags=self._auto_flags("lam", True))
        else:
            value = check_setting("lam", value, self._config.kernel, self._log.classes)
            self._set_many({"lam": value, **self._auto_flags("lam", False)})  # one transaction

    def set_width(self, value):
        """Set the RBF width: a number in ``[MIN_WIDTH, MAX_WIDTH]`` of :mod:`.config` (fixed
        from now on), or "auto": re-tuned by exact LOO over :func:`.model.width_grid` as labels
        arrive, starting now.

        Raises
        ------
        ValueError
            Not an RBF session; a width out of range; too few labels for "auto"; a width the
            learner rejects: nothing is stored.
        """
        self._learner().require(LAM, "The kernel width")  # a setting of kernel RLS (a spectral one: refused below)
        kernel = self._config.kernel
        if isinstance(value, str) and value == "auto":
            check_setting("width", 1.0, kernel, self._log.classes)  # an rbf session?
            self._check_tunable()  # too few labels: raises before anything is stored
            self._retune(width=True, lam=False, flags=self._auto_flags("width", True))
        else:
            value = check_setting("width", value, kernel, self._log.classes)
            self._set_many({"width": value, **self._auto_flags("width", False)})  # one transaction
