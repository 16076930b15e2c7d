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

import threading
from dataclasses import dataclass, field

import numpy as np

from . import model
from .model import MemoryBudgetError

__all__ = ["RetuneSnapshot", "RetuneJob"]


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
    """

    spec: model.RlsSpec
    classes: tuple
    labels: tuple
    class_weights: dict
    tune_width: bool
    tune_lam: bool
    widths: np.ndarray | None = field(default=None, compare=False)
    scale: object = field(default=None, compare=False)


class RetuneJob:
    """One background re-tune (see the module docstring).

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
        when nothing moved, or when a second model does not fit in memory: then the session
        applies the values in place, as a synchronous re-tune does).
    error : Exception or None
        What the tuner or the rebuild raised (the session shows it; nothing is applied).
    """

    def __init__(self, snapshot: RetuneSnapshot, X: np.ndarray, start: bool = True):
        self.snapshot = snapshot
        self.X = X
        self.fit = None
        self.learner = None
        self.error: Exception | None = None
        self.no_room: str = ""
        self._done = threading.Event()
        self._cancelled = threading.Event()
        self._thread = None
        if start:
            self._thread = threading.Thread(target=self.run, name="labeler-retune", daemon=True)
            self._thread.start()

    # ---- the worker ---------------------------------------------------------------------
    def run(self) -> None:
        """Tune, then rebuild at the moved values (the worker thread's body)."""
        snap = self.snapshot
        try:
            self.fit = model.auto_tune_labels(snap.spec, self.X, dict(snap.labels), list(snap.classes),
                                              snap.class_weights, tune_width=snap.tune_width,
                                              tune_lam=snap.tune_lam, widths=snap.widths, scale=snap.scale)
            moved = self.moved
            if moved and not self._cancelled.is_set():
                spec = snap.spec
                for name, value in moved.items():
                    spec = spec.with_setting(name, value)
                try:
                    learner = model.build_learner(spec, self.X, list(snap.classes), n_block=len(snap.labels))
                except MemoryBudgetError as exc:  # no room for a second model: applied in place
                    self.no_room = str(exc)
                else:
                    if snap.labels and not self._cancelled.is_set():
                        learner.add_many([i for i, _ in snap.labels], [lab for _, lab in snap.labels])
                    self.learner = None if self._cancelled.is_set() else learner
        except Exception as exc:  # shown by the session; the labels are stored already
            self.error = exc
        finally:
            if self._cancelled.is_set():
                self.learner = None
            self._done.set()

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

    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the job is done; True if it is."""
        return self._done.wait(timeout)

    def cancel(self) -> None:
        """Ask the worker to stop before its rebuild and drop what it built (a stale job)."""
        self._cancelled.set()
        self.learner = None

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def stale_reason(self, spec, classes, labels) -> str:
        """Why the job's result no longer applies to the session now ("" if it does).

        ``labels``: the session's net labels now, ``[(index, label), ...]`` in labelling
        order. The result applies when the settings and classes are those of the snapshot and
        the labels are the snapshot's, each unchanged, followed by new ones.
        """
        snap = self.snapshot
        if self.cancelled:
            return "it was cancelled"
        if spec != snap.spec:
            return "the settings changed meanwhile"
        if tuple(classes) != snap.classes:
            return "the classes changed meanwhile"
        now = dict(labels)
        if any(now.get(i) != lab for i, lab in snap.labels):
            return "labels it was computed on were undone or changed meanwhile"
        return ""

    def catch_up(self, labels) -> object:
        """The rebuilt learner given the labels added since the snapshot (exact incremental
        updates: one ``add``, or one block ``add_many``). ``labels`` as in :meth:`stale_reason`
        (checked there first)."""
        learner = self.learner
        if learner is None:
            return None
        known = {i for i, _ in self.snapshot.labels}
        new = [(i, lab) for i, lab in labels if i not in known]
        if len(new) == 1:
            learner.add(new[0][0], new[0][1])
        elif new:
            learner.add_many([i for i, _ in new], [lab for _, lab in new])
        self.learner = None  # handed over
        return learner
