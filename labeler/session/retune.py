"""Automatic re-tunes of width and lam off the key press's request: a background job.

A re-tune (:func:`.model.auto_tune_labels`) and, when it moves a value, the rebuild of the
n x n model at the new value take seconds at 10^4 points; the key press that made the
re-tune due should not wait for them. :class:`RetuneJob` runs both in a worker thread on a
SNAPSHOT of what they read (the model settings, the classes, the labels in labelling order,
the class weights; the features are read only), never on the live learner, which the requests
keep changing meanwhile.

When the job is done, the session takes its result at its next change of the labels
(:meth:`.settings.Settings.after_labels_change`), AFTER that change's incremental update:
:meth:`RetuneJob.catch_up` gives the new learner the labels added since the snapshot (exact
incremental updates, the same as the live learner's), and the session writes the moved values
as ordinary ``setting`` events right then and swaps the learner in. So the event log says at
which label count the change took effect, and a reopened session (which folds the events and
builds one learner with the final settings) replays it exactly as it replays a synchronous
re-tune. What the job read no longer describing the session (a label undone, removed or
changed, a class added or renamed, a setting changed meanwhile) makes its result stale: it is
discarded (:meth:`RetuneJob.catch_up` returns None), never applied.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import model
from .background_job import BackgroundJob, catch_up, labels_added, labels_stale
from .costs import MemoryBudgetError

__all__ = ["RetuneSnapshot", "RetuneJob", "CurvesJob"]


@dataclass(frozen=True)
class RetuneSnapshot:
    """What a re-tune reads, copied in the request that starts it.

    Attributes
    ----------
    spec : RlsSpec
        The model settings in use.
    classes : tuple of str
    labels : tuple of (int, str)
        The net labels in labelling order.
    class_weights : dict
        The learner's class weights ``{class: w}``.
    tune_width, tune_lam : bool
    widths : ndarray or None
        The width grid (when the width is tuned).
    scale : core.rls.width_scale.WidthScale or None
        The pool's width grid and clusters (:func:`.model.width_scale`; when the width is tuned),
        as the synchronous re-tune uses them.
    problem : tuple or None
        A low-rank posterior's LOO problem ``(X_L, kernel, width_tunable)`` copied from the live
        learner (:func:`.model.loo_problem`: the labelled rows of the factor, or the labelled
        features and the Nystrom kernel on the session's landmarks); None for a dense one.
    parts : dict or None
        What rebuilds a Nystrom posterior at a new width (``{"landmarks": Z}``, read only).
    """

    spec: model.RlsSpec
    classes: tuple
    labels: tuple
    class_weights: dict
    tune_width: bool
    tune_lam: bool
    widths: np.ndarray | None = field(default=None, compare=False)
    scale: object = field(default=None, compare=False)
    problem: tuple | None = field(default=None, compare=False)
    parts: dict | None = field(default=None, compare=False)


class RetuneJob(BackgroundJob):
    """One background re-tune (see the module docstring): :class:`.background_job.BackgroundJob`
    with the tuner and the rebuild as its body.

    Parameters
    ----------
    snapshot : RetuneSnapshot
    X : ndarray of shape (n_samples, n_features)
        The features the learner sees (read only).
    start : bool
        Start the worker thread now (tests may run :meth:`run` themselves).

    Attributes
    ----------
    fit : core.rls.tuning.AutoTuning or None
        The tuner's answer, once done.
    learner : core.learner.ActiveRLS or None
        The model rebuilt at the moved values with the snapshot's labels, once done (None
        when nothing moved, when only lam moved on a low-rank posterior (applied in place: an
        r x r refactorisation), or when a second model does not fit in memory: then the
        session applies the values in place, as a synchronous re-tune does).
    error : Exception or None
        What the tuner or the rebuild raised (the session shows it; nothing is applied).
    """

    thread_name = "labeler-retune"

    def __init__(self, snapshot: RetuneSnapshot, X: np.ndarray, start: bool = True):
        self.X = X
        self.fit = None
        self.learner = None
        self.no_room: str = ""
        super().__init__(snapshot, start=start)

    # ---- the worker ---------------------------------------------------------------------
    def compute(self) -> None:
        """Tune, then rebuild at the moved values (the worker thread's body)."""
        snap = self.snapshot
        self.fit = model.auto_tune_labels(snap.spec, self.X, dict(snap.labels), list(snap.classes),
                                          snap.class_weights, tune_width=snap.tune_width,
                                          tune_lam=snap.tune_lam, widths=snap.widths, scale=snap.scale,
                                          problem=snap.problem)
        moved = self.moved
        if not moved or self.cancelled:
            return
        if snap.spec.posterior != "dense" and "width" not in moved:
            return  # lam alone on a factor: an r x r refactorisation, applied in place
        spec = snap.spec
        for name, value in moved.items():
            spec = spec.with_setting(name, value)
        try:
            learner = model.build_learner(spec, self.X, list(snap.classes), n_block=len(snap.labels),
                                          parts=dict(snap.parts) if snap.parts is not None else None)
        except MemoryBudgetError as exc:  # no room for a second model: applied in place
            self.no_room = str(exc)
            return
        if snap.labels and not self.cancelled:
            catch_up(learner, snap.labels)
        self.learner = None if self.cancelled else learner

    def discard(self) -> None:
        self.learner = None

    # ---- the request's side -------------------------------------------------------------
    @property
    def moved(self) -> dict:
        """``{"width": w, "lam": l}``: the values the tuner moved (empty before it is done)."""
        fit = self.fit
        out = {}
        if fit is not None and fit.width_changed:
            out["width"] = float(fit.width)
        if fit is not None and fit.lam_changed:
            out["lam"] = float(fit.lam)
        return out

    def stale_reason(self, spec, classes, labels) -> str:
        """Why the job's result no longer applies to the session now ("" if it does).

        ``labels``: the session's net labels now, ``[(index, label), ...]`` in labelling
        order. The result applies when the settings and classes are those of the snapshot and
        the labels are the snapshot's, each unchanged, followed by new ones
        (:func:`.background_job.labels_stale`).
        """
        snap = self.snapshot
        if self.cancelled:
            return "it was cancelled"
        if spec != snap.spec:
            return "the settings changed meanwhile"
        if tuple(classes) != snap.classes:
            return "the classes changed meanwhile"
        return labels_stale(snap.labels, labels)

    def catch_up(self, labels) -> object:
        """The rebuilt learner given the labels added since the snapshot (exact incremental
        updates: one ``add``, or one block ``add_many``), handed over. ``labels`` as in
        :meth:`stale_reason` (checked there first)."""
        learner = self.learner
        if learner is None:
            return None
        catch_up(learner, labels_added(self.snapshot.labels, labels))
        self.learner = None  # handed over
        return learner


class CurvesJob(BackgroundJob):
    """The LOO curves the Progress tab draws (:meth:`.settings.Settings.tuning`), off the
    request: the tuner's weighted LOO error over the width grid at the lam in use (when
    ``snapshot.tune_width``) and over the lam grid at the width in use, on a snapshot of the
    labels. Nothing is written or swapped: the page shows the result of the last finished job
    (its label count said), and a job on the labels now is started when they changed. Each
    curve costs one LOO path per grid value, O(|L|^3): about 1.5 s at 800 labels, which a key
    press's rerun would otherwise wait for.

    Parameters
    ----------
    snapshot : RetuneSnapshot
        ``tune_width``: draw the width curve (an RBF kernel whose width LOO can move);
        ``tune_lam`` is True.
    X : ndarray of shape (n_samples, n_features)
        Read only.

    Attributes
    ----------
    fits : dict or None
        ``{"width": AutoTuning or None, "lam": AutoTuning}``, once done.
    """

    thread_name = "labeler-loo-curves"

    def __init__(self, snapshot: RetuneSnapshot, X: np.ndarray, start: bool = True):
        self.X = X
        self.fits = None
        super().__init__(snapshot, start=start)

    def compute(self) -> None:
        snap = self.snapshot
        labels, classes = dict(snap.labels), list(snap.classes)
        width = None
        if snap.tune_width:
            width = model.auto_tune_labels(snap.spec, self.X, labels, classes, snap.class_weights,
                                           tune_width=True, tune_lam=False, widths=snap.widths, scale=snap.scale,
                                           problem=snap.problem)
        if self.cancelled:
            return
        lam = model.auto_tune_labels(snap.spec, self.X, labels, classes, snap.class_weights, tune_width=False,
                                     tune_lam=True, problem=snap.problem)
        self.fits = {"width": width, "lam": lam}
