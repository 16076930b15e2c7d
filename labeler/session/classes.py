"""Managing the classes of a session: rename, delete, and move or unlabel all points of a class.

:class:`ClassActions` is owned by :class:`~labeler.session.session.LabelingSession` (as
``session.class_actions``; the session's methods of the same names delegate to it). It holds
only what it needs: the event-log state (:class:`labeler.store.LogState`), the configuration
(a deleted class's weight) and the session's commit function (one user action: stored first,
then learnt). Every action here except ``add_class`` is ONE user action in the event log,
undoable like a label (see :class:`labeler.store.LogState`):

* ``add_class(name)``: a new class while labelling (binary -> multiclass); given to the
  learner before it is written, not undoable.

* ``rename_class(old, new)``: names only; the learner's outputs do not change
  (``ActiveRLS.rename_class``), a class weight of a weighting dict moves to the new name.
* ``move_class_labels(old, new)``: every point labelled ``old`` gets ``new`` (a batch of
  relabels, source "chosen").
* ``unlabel_class(name)``: every point labelled ``name`` loses its label (a batch of unlabels).
* ``delete_class(name)``: only for a class WITHOUT labelled points. A class that still has
  some is refused with the count and the two ways out (move them, or unlabel them: each one
  undoable action), so deleting never drops a label silently, and every step can be undone
  on its own. The learner is rebuilt with the remaining classes (a direct solve: deleting is
  rare, and going from three classes to two changes the learner's outputs from one-vs-all
  columns to one binary column). At least two classes always remain. Undo puts the class back
  at its place, with its weight.

A name that an undo would give back (the old name of a renamed class, a deleted class) cannot
be taken by a NEW class while that undo is possible
(:meth:`labeler.store.LogState.reserved_names`): adding a class is not undoable, so the two
would clash. A rename may take such a name (its own undo comes first).

Class names are checked by :func:`labeler.session.config.check_class_name` (the check of
``add_class``), for a new class plus that reservation (:meth:`ClassActions.check_new_class_name`).
"""

from __future__ import annotations

import numbers

from .config import check_class_name
from ..store import AddClass, DeleteClass, Relabel, RenameClass, Unlabel

__all__ = ["ClassActions"]


class ClassActions:
    """Add, rename, delete, move and unlabel classes (see the module docstring).

    Parameters
    ----------
    log : labeler.store.LogState
        The session's event-log state (net labels, classes, undo stack); read only here.
    config : SessionConfig
        The session's current settings (read: the weight of a deleted class).
    commit : callable
        ``commit(build)``: the session's one user action (``LabelingSession._commit``);
        returns the applied change, or None when ``build()`` returned None.
    """

    def __init__(self, log, config, commit):
        self._log = log
        self._config = config
        self._commit = commit

    def add_class(self, name: str):
        """Add a class while labelling (binary -> multiclass). Persisted; not undoable.

        Raises
        ------
        TypeError, ValueError
            Not a string, empty, already a class, or the learner rejects it (nothing stored).
        """
        def build():
            return [AddClass(self.check_new_class_name(name))]

        self._commit(build)

    def check_new_class_name(self, name) -> str:
        """A name for a new class: a non-empty string (stripped), not a class yet, and not kept
        for an undo.

        Raises
        ------
        TypeError, ValueError
            With the reason and what to do.
        """
        name = check_class_name(name, self._log.classes)
        why = self._log.reserved_names().get(name)
        if why is not None:
            raise ValueError(
                f"The name {name!r} is kept for Undo: a class of that name was {why} by an "
                "action that can still be undone. Pick another name."
            )
        return name

    def _existing_class(self, name) -> str:
        if not isinstance(name, str) or name not in self._log.classes:
            raise ValueError(
                f"There is no class {name!r} (classes: {self._log.classes}); it may have been "
                "renamed or deleted in another tab. Reload the page and pick one of them."
            )
        return name

    def _points_of(self, name) -> list[int]:
        return [i for i, rec in self._log.labels.items() if rec.label == name]

    def _check_version(self, expected_version):
        if expected_version is not None and (
            isinstance(expected_version, bool) or not isinstance(expected_version, numbers.Integral)
            or expected_version < 0
        ):
            raise ValueError(
                f"expected_version must be a state version (session.n_events); got {expected_version!r}."
            )

    def rename_class(self, old, new) -> str:
        """Rename class ``old`` to ``new`` (one undoable action); returns the new name as stored.

        Raises
        ------
        TypeError, ValueError
            ``old`` is not a class (any more), or ``new`` is not a valid new name (empty,
            already a class, kept for an undo). Nothing is written.
        """
        def build():
            self._existing_class(old)
            return [RenameClass(old, check_class_name(new, self._log.classes))]

        change = self._commit(build)
        return change.renamed[1]

    def delete_class(self, name) -> None:
        """Delete a class that has no labelled points (one undoable action).

        Raises
        ------
        ValueError
            ``name`` is not a class; it still has labelled points (move them with
            :meth:`move_class_labels` or unlabel them with :meth:`unlabel_class` first); or
            only two classes are left. Nothing is written.
        """
        def build():
            self._existing_class(name)
            count = len(self._points_of(name))
            if count:
                raise ValueError(
                    f"Class {name!r} still has {count} labelled point{'s' if count != 1 else ''}. "
                    "Move them to another class or unlabel them first (each is one step Undo "
                    "can revert), then delete the class."
                )
            if len(self._log.classes) <= 2:
                raise ValueError(
                    f"A session needs at least two classes, so {name!r} cannot be deleted; add "
                    "another class first if you want to replace it (or rename it)."
                )
            weighting = self._config.weighting
            weight = float(weighting[name]) if isinstance(weighting, dict) and name in weighting else None
            return [DeleteClass(name, weight)]

        self._commit(build)

    def move_class_labels(self, old, new, expected_version=None) -> int:
        """Relabel every point labelled ``old`` as ``new``: one action (a batch of relabels,
        source "chosen"), one Undo step.

        Parameters
        ----------
        old, new : str
            Two different classes.
        expected_version : int, optional
            The :attr:`n_events` of the state the user saw; if the state has changed since
            (decided inside the commit, after catching up with other tabs), nothing is written.

        Returns
        -------
        int
            Number of points relabelled (0 when stale or when ``old`` has no labels).

        Raises
        ------
        ValueError
            Unknown classes, or ``old == new``.
        """
        self._check_version(expected_version)
        if old == new:
            raise ValueError(f"Pick another class to move the labels of {old!r} to.")

        def build():
            self._existing_class(old)
            self._existing_class(new)
            if expected_version is not None and int(expected_version) != self._log.n_events:
                return None
            points = self._points_of(old)
            if not points:
                return None
            return [Relabel(i, new, was=old) for i in points]

        change = self._commit(build)
        return 0 if change is None else len(change.relabeled)

    def unlabel_class(self, name, expected_version=None) -> int:
        """Remove the label of every point labelled ``name``: one action, one Undo step.

        Parameters
        ----------
        name : str
        expected_version : int, optional
            As in :meth:`move_class_labels`.

        Returns
        -------
        int
            Number of points unlabelled (0 when stale or when the class has no labels).
        """
        self._check_version(expected_version)

        def build():
            self._existing_class(name)
            if expected_version is not None and int(expected_version) != self._log.n_events:
                return None
            points = self._points_of(name)
            if not points:
                return None
            return [Unlabel(i, name) for i in points]

        change = self._commit(build)
        return 0 if change is None else len(change.removed)
