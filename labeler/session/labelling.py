"""The labelling actions of a session: label, skip, undo, accept predictions.

:class:`SessionLabelling` is a mixin of :class:`~labeler.session.session.LabelingSession`.
Each action checks its input, then commits one user action through the session's ``_commit``
(stored first, then learnt); ``build()`` decides inside the commit, after catching up with
other tabs, so a stale click (``expected_query``, ``expected_action``, ``expected_version``)
writes nothing. The mixin uses ``_commit``, ``_log``, ``learner``, ``n_samples`` and
``next_query`` of the session.
"""

from __future__ import annotations

import numbers

import numpy as np

from core.validation import check_index

from ..store import LABEL_SOURCES

__all__ = ["SessionLabelling"]


class SessionLabelling:
    """Label, skip, undo and accept (see the module docstring)."""

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
            return (f"Point #{index} is already labelled {rec.label!r} (by another tab, or by an "
                    "earlier press): this press was not applied.")
        if index in self._log.skipped:
            return f"Point #{index} was already skipped: this press was not applied."
        query = self.next_query()
        if expected_query is not None and expected_query != query:
            now = "every point is done" if query is None else f"the query is now point #{query}"
            return (f"This press on point #{index} was not applied: the query moved on (another "
                    f"tab labelled or skipped point #{expected_query} first); {now}.")
        return f"This press on point #{index} was not applied: the page was out of date."

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
        if source not in LABEL_SOURCES:
            raise ValueError(f"Unknown source {source!r}; choose one of {', '.join(LABEL_SOURCES)}.")
        if expected_query is not None:
            expected_query = self._check_point(expected_query)

        def build():
            if index in self._log.labels:
                return None
            if expected_query is not None and expected_query != self.next_query():
                return None
            return [{"kind": "label", "index": index, "label": label, "source": source}]

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
            return [{"kind": "skip", "index": index}]

        return self._commit(build) is not None

    def undo(self, expected_action=None) -> int | None:
        """Undo the last label, accepted batch (all of it) or skip, exactly.

        Parameters
        ----------
        expected_action : int, optional
            The :attr:`last_action` the user saw. If the last undoable action is another one
            (decided inside the commit, after catching up with other tabs), nothing happens:
            a double press undoes one action, not two.

        Returns
        -------
        int or None
            The point whose label or skip was undone (for a batch, its last point); None if
            there is nothing to undo or the press is stale.
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
            return [{"kind": "undo", "value": {"undoes": top[0]}}]

        change = self._commit(build)
        if change is None:
            return None
        if change.unskipped:
            return change.unskipped[-1]
        return change.removed[0].index  # removed in reverse order: [0] is the batch's last

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
                predicted = self.learner.predict()
                chosen = {i: str(predicted[i]) for i in todo}
            else:
                chosen = shown
            return [
                {"kind": "accept", "index": i, "label": chosen[i], "source": "accepted"}
                for i in todo
            ]

        change = self._commit(build)
        return 0 if change is None else len(change.added)
