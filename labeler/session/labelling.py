"""The labelling actions of a session: label, skip, un-skip, relabel, unlabel, undo, accept
predictions, and label many points at once (a lasso or box selection, "more like this", a
batch of queries).

:class:`Labelling` is owned by :class:`~labeler.session.session.LabelingSession` (as
``session.labelling``; the session's methods of the same names delegate to it). Each action
checks its input, then commits one user action through the session's commit function (stored
first, then learnt); ``build()`` decides inside the commit, after catching up with other tabs,
so a stale click (``expected_query``, ``expected_action``, ``expected_version``) writes
nothing. It is given only what it needs: the number of points, the event-log state, the commit
function, the learner (through a getter: the session may rebuild it) and the next query.
"""

from __future__ import annotations

import numbers

import numpy as np

from core.validation import check_index

from ..store import Accept, Keep, Label, Relabel, Skip, Undo, Unlabel, Unskip
from ..store.events import LABEL_EVENT_SOURCES

__all__ = ["Labelling", "BULK_SOURCES"]

#: How points labelled many at once came to be labelled: the source of their ``accept``
#: events (one action, one undo step), stored in the events' ``source`` column (schema
#: version 3) and shown and exported as it is.
BULK_SOURCES = (
    "selection",  # a lasso or box selection on the map, labelled with one class
    "similar",    # "more like this": nearest neighbours of a point
    "batch",      # a batch of queries chosen together (labeler.session.batch)
)


class Labelling:
    """Label, skip, un-skip, relabel, unlabel, undo and accept (see the module docstring).

    Parameters
    ----------
    n_samples : int
        Number of points of the session.
    log : labeler.store.LogState
        The session's event-log state (net labels, skips, classes, undo stack); read only here.
    commit : callable
        ``commit(build)``: the session's one user action (``LabelingSession._commit``);
        returns the applied change, or None when ``build()`` returned None.
    learner : callable
        ``learner()``: the session's learner now (read: its predictions).
    next_query : callable
        ``next_query()``: the point the strategy asks for now, or None.
    point_name : callable, optional
        ``point_name(index)``: how the messages name a point ("#58 (1058)" with the data's own
        ids: :func:`labeler.data.point_names.point_name`); default "#58".
    """

    def __init__(self, n_samples: int, log, commit, learner, next_query, point_name=None):
        self.n_samples = int(n_samples)
        self._name = point_name if point_name is not None else (lambda index: f"#{int(index)}")
        self._log = log
        self._commit = commit
        self._learner = learner
        self.next_query = next_query

    def _check_point(self, index) -> int:
        return check_index(index, self.n_samples, name="point index")

    def _check_label(self, label) -> str:
        if not isinstance(label, str) or label not in self._log.classes:
            raise ValueError(
                f"Label {label!r} is not one of the classes {self._log.classes}; pick one of "
                "them or add the class first (add_class)."
            )
        return str(label)

    def why_not_applied(self, index, expected_query=None) -> str:
        """Why a label or skip of ``index`` shown as query ``expected_query`` was refused
        (:meth:`label` or :meth:`skip` returned False), in words for the user."""
        rec = self._log.labels.get(index)
        if rec is not None:
            return (f"Point {self._name(index)} is already labelled {rec.label!r} (by another tab, or by an "
                    "earlier press): this press was not applied.")
        if index in self._log.skipped:
            return f"Point {self._name(index)} was already skipped: this press was not applied."
        query = self.next_query()
        if expected_query is not None and expected_query != query:
            now = "every point is done" if query is None else f"the query is now point {self._name(query)}"
            return (f"This press on point {self._name(index)} was not applied: the query moved on (another "
                    f"tab labelled or skipped point {self._name(expected_query)} first); {now}.")
        return f"This press on point {self._name(index)} was not applied: the page was out of date."

    def label(self, index, label, source: str = "queried", expected_query=None) -> bool:
        """Label a point: stored first, then learnt.

        Parameters
        ----------
        index : int
            Point index in ``[0, n_samples)``.
        label : str
            One of :attr:`classes`.
        source : {"queried", "chosen", "accepted"}
            "queried": the point the learner asked for; "chosen": picked by the user.
        expected_query : int, optional
            The query the user saw. If it is no longer :meth:`next_query` (a stale click,
            e.g. a double click or another tab labelled meanwhile), nothing happens.

        Returns
        -------
        bool
            True if the label was stored; False (nothing written) for a stale click or a
            point already labelled.

        Raises
        ------
        IndexError
            ``index`` out of range. ValueError: unknown label or source. Nothing changes.
        """
        index = self._check_point(index)
        label = self._check_label(label)
        if source not in LABEL_EVENT_SOURCES:
            raise ValueError(f"Unknown source {source!r}; choose one of {', '.join(LABEL_EVENT_SOURCES)}.")
        if expected_query is not None:
            expected_query = self._check_point(expected_query)

        def build():
            if index in self._log.labels:
                return None
            if expected_query is not None and expected_query != self.next_query():
                return None
            return [Label(index, label, source)]

        return self._commit(build) is not None

    def skip(self, index, expected_query=None) -> bool:
        """Do not query this point again in this session.

        Parameters
        ----------
        index : int
        expected_query : int, optional
            The query the user saw. If it is no longer :meth:`next_query` (a stale click:
            decided inside the commit, after catching up with other tabs), nothing happens.

        Returns
        -------
        bool
            True if stored; False (nothing written) if labelled, already skipped or stale.
        """
        index = self._check_point(index)
        if expected_query is not None:
            expected_query = self._check_point(expected_query)

        def build():
            if index in self._log.labels or index in self._log.skipped:
                return None
            if expected_query is not None and expected_query != self.next_query():
                return None
            return [Skip(index)]

        return self._commit(build) is not None

    def unskip(self, index) -> bool:
        """Make a skipped point queryable again (one action; Undo skips it again).

        Returns
        -------
        bool
            True if stored; False (nothing written) when the point is not skipped (any more:
            another tab or an Undo un-skipped it first; :meth:`why_not_changed` says so).
        """
        index = self._check_point(index)

        def build():
            if index not in self._log.skipped:
                return None
            return [Unskip(index)]

        return self._commit(build) is not None

    def _check_expected_label(self, expected_label):
        if expected_label is not None and not isinstance(expected_label, str):
            raise ValueError(
                f"expected_label must be the class name the user saw on the point (a str); got "
                f"{expected_label!r}."
            )
        return expected_label

    def relabel(self, index, label, expected_label=None) -> bool:
        """Change the label of a labelled point: one action, stored first, then applied with
        the learner's exact relabel (``ActiveRLS.relabel``); Undo gives the old label back.

        The point then counts as labelled by the user (source "chosen") at the time of the
        change: it moves to the end of the labelling order.

        Parameters
        ----------
        index : int
            A labelled point.
        label : str
            One of :attr:`classes`, not the point's current label.
        expected_label : str, optional
            The label the user saw on the point. If the point is no longer labelled so (decided
            inside the commit, after catching up with other tabs), nothing is written.

        Returns
        -------
        bool
            True if stored; False (nothing written) when the point is not labelled, already has
            ``label``, is no longer labelled ``expected_label``, or ``label`` is no longer a
            class (:meth:`why_not_changed` says which).

        Raises
        ------
        IndexError
            ``index`` out of range. ValueError: unknown label. Nothing changes.
        """
        index = self._check_point(index)
        label = self._check_label(label)
        expected_label = self._check_expected_label(expected_label)

        def build():
            rec = self._log.labels.get(index)
            if rec is None or rec.label == label or label not in self._log.classes:
                return None
            if expected_label is not None and rec.label != expected_label:
                return None
            return [Relabel(index, label, was=rec.label)]

        return self._commit(build) is not None

    def keep(self, index, score: float, suggested=None, expected_label=None) -> bool:
        """Mark the label of a labelled point as reviewed and kept (from the suspects list):
        one undoable action that changes no label, stored with the suspicion ``score`` and the
        class the model ``suggested`` at the time (:meth:`.views.Views.suspects` reads them back).

        Returns
        -------
        bool
            True if stored; False (nothing written) when the point is not labelled or is no
            longer labelled ``expected_label``.

        Raises
        ------
        IndexError
            ``index`` out of range. ValueError: ``score`` outside [0, 1]. Nothing changes.
        """
        index = self._check_point(index)
        expected_label = self._check_expected_label(expected_label)
        Keep(index, "", score)  # validates the score before anything is written

        def build():
            rec = self._log.labels.get(index)
            if rec is None or (expected_label is not None and rec.label != expected_label):
                return None
            return [Keep(index, rec.label, float(score), None if suggested is None else str(suggested))]

        return self._commit(build) is not None

    def unlabel(self, index, expected_label=None) -> bool:
        """Remove the label of a labelled point: one action, stored first, then applied with
        the learner's exact removal (``ActiveRLS.remove``); the point can be queried again.
        Undo gives the label back.

        Parameters
        ----------
        index : int
        expected_label : str, optional
            The label the user saw on the point (see :meth:`relabel`).

        Returns
        -------
        bool
            True if stored; False (nothing written) when the point is not labelled, or no
            longer labelled ``expected_label``.
        """
        index = self._check_point(index)
        expected_label = self._check_expected_label(expected_label)

        def build():
            rec = self._log.labels.get(index)
            if rec is None or (expected_label is not None and rec.label != expected_label):
                return None
            return [Unlabel(index, rec.label)]

        return self._commit(build) is not None

    def why_not_changed(self, index, action: str, label=None, expected_label=None) -> str:
        """Why a ``relabel``, ``unlabel`` or ``unskip`` of ``index`` was refused (the call
        returned False), in words for the user."""
        rec = self._log.labels.get(index)
        not_applied = "this press was not applied"
        if action in ("relabel", "unlabel"):
            if rec is None:
                return (f"Point {self._name(index)} is not labelled any more (another tab or Undo removed its "
                        f"label): {not_applied}.")
            if expected_label is not None and rec.label != expected_label:
                return (f"Point {self._name(index)} is now labelled {rec.label!r}, not {expected_label!r} "
                        f"(changed in another tab): {not_applied}. Check it and press again.")
            if action == "relabel" and label not in self._log.classes:
                return (f"Class {label!r} no longer exists (renamed or deleted in another tab): "
                        f"{not_applied}.")
            if action == "relabel" and rec.label == label:
                return f"Point {self._name(index)} is already labelled {label!r}: nothing to change."
        if action == "unskip":
            if index in self._log.labels:
                return f"Point {self._name(index)} is labelled now, not skipped: {not_applied}."
            if index not in self._log.skipped:
                return (f"Point {self._name(index)} is not skipped any more (another tab or Undo un-skipped "
                        f"it): {not_applied}.")
        return f"This press on point {self._name(index)} was not applied: the page was out of date."

    def undo(self, expected_action=None) -> int | None:
        """Undo the last undoable action exactly: a label, an accepted batch (all of it), a
        skip or un-skip, a relabel or unlabel (one point or a batch), a class rename or
        deletion, a keep. Adding a class and settings are not undone.

        Parameters
        ----------
        expected_action : int, optional
            The :attr:`last_action` the user saw. If the last undoable action is another one
            (decided inside the commit, after catching up with other tabs), nothing happens:
            a double press undoes one action, not two.

        Returns
        -------
        int or None
            The point whose label or skip was undone (for a batch, its last point; -1 for an
            action on a class); None if there is nothing to undo or the press is stale.
        """
        if expected_action is not None and (
            isinstance(expected_action, bool) or not isinstance(expected_action, numbers.Integral)
        ):
            raise ValueError(
                "expected_action must be an action id (an int, session.last_action); got "
                f"{expected_action!r}."
            )

        def build():
            top = self._log.last_undoable
            if top is None:
                return None
            if expected_action is not None and int(expected_action) != top[0]:
                return None
            return [Undo(top[0])]

        change = self._commit(build)
        if change is None:
            return None
        if change.unskipped or change.skipped:
            return (change.unskipped or change.skipped)[-1]
        if change.relabeled:
            return change.relabeled[0][1].index
        if change.added:
            return change.added[-1].index
        if change.removed:
            return change.removed[0].index  # removed in reverse order: [0] is the batch's last
        if change.kept:
            return change.kept[-1]
        return -1  # a rename or deletion of a class

    def accept_predictions(self, indices, labels=None, expected_version=None) -> int:
        """Label the given points with their predicted class (source "accepted").

        Already labelled points and repeated indices are left out. The whole batch is one
        transaction and one undo step.

        Parameters
        ----------
        indices : sequence of int
        labels : sequence of str (same length as ``indices``) or dict {index: str}, optional
            The classes the user was shown. Default: the prediction at the time of the call.
        expected_version : int, optional
            The :attr:`n_events` of the state the page was drawn from. If the state has
            changed since (decided inside the commit, after catching up with other tabs),
            nothing is written: the predictions the user saw may no longer hold.

        Returns
        -------
        int
            Number of points labelled (0 when stale or nothing to do).
        """
        idx = np.asarray(indices)
        if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
            raise ValueError(f"indices must be a 1-D sequence of point indices; got {indices!r}.")
        checked = [self._check_point(int(i)) for i in idx.tolist()]
        shown = None
        if labels is not None:
            if isinstance(labels, dict):
                missing = [i for i in checked if i not in labels]
                if missing:
                    raise ValueError(f"labels gives no class for point(s) {missing[:5]}; give one per index.")
                shown = {i: self._check_label(labels[i]) for i in checked}
            else:
                labels = list(labels)
                if len(labels) != len(checked):
                    raise ValueError(
                        f"got {len(checked)} indices but {len(labels)} labels; give one label per index."
                    )
                shown = {}
                for i, lab in zip(checked, labels):
                    lab = self._check_label(lab)
                    if shown.setdefault(i, lab) != lab:
                        raise ValueError(f"point {i} is given two labels ({shown[i]!r}, {lab!r}).")
        if expected_version is not None and (
            isinstance(expected_version, bool) or not isinstance(expected_version, numbers.Integral)
            or expected_version < 0
        ):
            raise ValueError(
                f"expected_version must be a state version (session.n_events); got {expected_version!r}."
            )

        def build():
            if expected_version is not None and int(expected_version) != self._log.n_events:
                return None
            todo = list(dict.fromkeys(i for i in checked if i not in self._log.labels))
            if not todo:
                return None
            if shown is None:
                predicted = self._learner().predict()
                chosen = {i: str(predicted[i]) for i in todo}
            else:
                chosen = shown
            return [Accept(i, chosen[i], "accepted") for i in todo]

        change = self._commit(build)
        return 0 if change is None else len(change.added)

    # ---- many points at once --------------------------------------------------------------
    def _check_bulk(self, labels, via, expected_version) -> dict:
        if via not in BULK_SOURCES:
            raise ValueError(f"Unknown bulk source {via!r}; choose one of {', '.join(BULK_SOURCES)}.")
        if isinstance(labels, dict):
            items = list(labels.items())
        else:
            try:
                items = list(labels)
            except TypeError:
                items = None
            if items is None or not all(isinstance(it, tuple) and len(it) == 2 for it in items):
                raise ValueError(
                    "labels must be a dict {point index: class} or a sequence of (index, class) "
                    f"pairs; got {labels!r}. For one class on many points use label_points."
                )
        if not items:
            raise ValueError(
                "No points to label: the selection is empty. Draw a lasso or box around points "
                "on the map (or pick points) first."
            )
        out: dict[int, str] = {}
        for i, lab in items:
            if isinstance(i, bool) or not isinstance(i, numbers.Integral):
                raise ValueError(f"point index {i!r} is not an integer; give point indices.")
            i = self._check_point(int(i))
            lab = self._check_label(lab)
            if out.setdefault(i, lab) != lab:
                raise ValueError(f"point {i} is given two labels ({out[i]!r}, {lab!r}); give one.")
        if expected_version is not None and (
            isinstance(expected_version, bool) or not isinstance(expected_version, numbers.Integral)
            or expected_version < 0
        ):
            raise ValueError(
                f"expected_version must be a state version (session.n_events); got {expected_version!r}."
            )
        return out

    def label_many(self, labels, via: str, expected_version=None, guessed=()) -> int:
        """Label several points, each with its own class, as ONE action (one undo step).

        Parameters
        ----------
        labels : dict {int: str} or sequence of (int, str)
            Point index -> class, in the order to store them.
        via : {"selection", "similar", "batch"}
            How the points were picked (:data:`BULK_SOURCES`): shown and exported as the
            labels' source.
        expected_version : int, optional
            The :attr:`n_events` of the state the page was drawn from. If the state changed
            since (decided inside the commit, after catching up with other tabs), nothing is
            written: the selection the user saw may no longer hold (:meth:`why_not_labelled`).
        guessed : iterable of int, optional
            Points of a "similar" or "batch" grid whose picker started on the model's guess
            and was left on it: stored with the source ``similar_guess`` / ``batch_guess``, so
            that they can be told apart from the user's own picks (calibration leaves them out;
            the export marks them).

        Returns
        -------
        int
            Number of points labelled: the given points not labelled yet (points labelled
            already are left out); 0 when stale or when every point is labelled.

        Raises
        ------
        ValueError
            Empty ``labels``, unknown ``via`` or class, a point given two classes.
            IndexError: an index out of range. Nothing is written.
        """
        wanted = self._check_bulk(labels, via, expected_version)
        guessed = {int(i) for i in guessed}
        if guessed and (via not in ("similar", "batch") or not guessed <= set(wanted)):
            raise ValueError(f"guessed must name points of the {via!r} grid being labelled, and only "
                             f"a 'similar' or 'batch' grid has guesses; got {sorted(guessed)[:5]}.")

        def build():
            if expected_version is not None and int(expected_version) != self._log.n_events:
                return None
            todo = [i for i in wanted if i not in self._log.labels]
            if not todo:
                return None
            return [Accept(i, wanted[i], f"{via}_guess" if i in guessed else via) for i in todo]

        change = self._commit(build)
        return 0 if change is None else len(change.added)

    def label_points(self, indices, label, via: str = "selection", expected_version=None) -> int:
        """Label the points ``indices`` with one class ``label`` as ONE action (a lasso or box
        selection); see :meth:`label_many`. Repeated indices count once."""
        idx = np.asarray(indices)
        if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
            raise ValueError(f"indices must be a 1-D sequence of point indices; got {indices!r}.")
        return self.label_many([(int(i), label) for i in dict.fromkeys(idx.tolist())], via,
                               expected_version)

    def why_not_labelled(self, indices, expected_version=None) -> str:
        """Why :meth:`label_many` / :meth:`label_points` of ``indices`` drawn from state
        ``expected_version`` labelled nothing, in words for the user."""
        idx = [int(i) for i in indices]
        if not idx:
            return ("No points are selected: draw a lasso or box around points on the map "
                    "(the lasso and box tools are in the map's toolbar) and try again.")
        if expected_version is not None and int(expected_version) != self._log.n_events:
            return ("Nothing was labelled: the session changed since this selection was drawn "
                    "(another tab or an earlier press labelled, skipped or undid something). "
                    "Check the points again and press once more.")
        if all(i in self._log.labels for i in idx):
            return (f"Nothing was labelled: all {len(idx)} selected point(s) are labelled already. "
                    "Click a point to change its label.")
        return "Nothing was labelled: the page was out of date."
