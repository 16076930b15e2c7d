"""The event log: events, user actions, and the state they fold into (net labels, skips, classes)."""

import math
import secrets
from dataclasses import dataclass, field, replace

from .faults import StoreCorruptError, utc_now
from .events import NewEvent
from .schema import EVENT_KINDS, LABEL_SOURCES


@dataclass(frozen=True)
class SessionInfo:
    """One line of :meth:`Store.list_sessions`."""

    id: str
    name: str
    dataset: str
    created: str
    n_labeled: int


@dataclass(frozen=True)
class SessionRecord:
    """A session's row: id, name, data set, configuration (dict) and creation time."""

    id: str
    name: str
    dataset: str
    config: dict
    created: str


@dataclass(frozen=True)
class Event:
    """One stored event.

    Attributes
    ----------
    seq : int
        Position in the session's log, 1-based, without gaps.
    action : int
        ``seq`` of the first event of the user action this event belongs to.
    kind : str
        One of :data:`EVENT_KINDS`.
    index : int or None
        Point index (``label``, ``accept``, ``skip``, ``relabel``, ``unlabel``, ``unskip``).
    label : str or None
        Class name: the class given (``label``, ``accept``, ``relabel``), the class taken
        away (``unlabel``), the new class (``add_class``), the new name (``rename_class``),
        the class removed (``delete_class``).
    source : str or None
        One of :data:`LABEL_SOURCES` for ``label``, ``accept`` and ``relabel`` (a column of
        its own since schema version 3).
    value : object
        JSON payload: ``{"undoes": action}`` for ``undo``, ``{"name", "value", ...}`` for
        ``setting``, ``{"from": old class}`` for ``relabel`` and ``rename_class``, and for
        ``delete_class`` optionally ``{"weight": w}`` (the class's weight in a weighting
        dict, given back by an undo).
    timestamp : str
        ISO 8601 UTC.
    """

    seq: int
    action: int
    kind: str
    index: int | None = None
    label: str | None = None
    source: str | None = None
    value: object = None
    timestamp: str = ""


def group_actions(events) -> list[list[Event]]:
    """Split a list of events (in seq order) into user actions (events sharing ``action``)."""
    groups: list[list[Event]] = []
    for ev in events:
        if groups and groups[-1][0].action == ev.action:
            groups[-1].append(ev)
        else:
            groups.append([ev])
    return groups


# --------------------------------------------------------------------------------------------
# Folding the event log
# --------------------------------------------------------------------------------------------

#: Kinds of the actions :meth:`LogState.apply` puts on the undo stack.
UNDOABLE_KINDS = ("label", "accept", "skip", "relabel", "unlabel", "unskip", "rename_class",
                  "delete_class", "keep")
#: Kinds whose action may hold several events (one per point; for ``setting``, one per
#: setting changed together, e.g. a value and its "auto" flag).
BATCH_KINDS = ("accept", "relabel", "unlabel", "setting")


@dataclass(frozen=True)
class LabelRecord:
    """A net label: point ``index`` got ``label`` from ``source`` in event ``seq``."""

    index: int
    label: str
    source: str
    seq: int
    action: int
    timestamp: str


@dataclass(frozen=True)
class KeepRecord:
    """A reviewed label: point ``index`` was kept as ``label`` in event ``seq``, when its
    suspicion score was ``score`` and the model suggested ``suggested``."""

    index: int
    label: str
    score: float
    suggested: str | None
    seq: int


@dataclass
class Change:
    """What one user action changed, for the session to apply to its learner.

    ``added`` / ``removed`` labels (in the order to apply them), ``relabeled`` points as
    ``(before, after)`` records, ``skipped`` / ``unskipped`` points, points ``kept`` (a keep
    or its undo: the suspects list changes, not the learner), a ``new_class``, a class
    ``renamed`` ``(old, new)``, a ``deleted_class`` or a ``restored_class`` (an undone
    deletion; ``class_weight`` is its weight in a weighting dict, if it had one), or a
    ``setting`` ``(name, value)``.
    """

    kind: str
    added: list[LabelRecord] = field(default_factory=list)
    removed: list[LabelRecord] = field(default_factory=list)
    relabeled: list[tuple[LabelRecord, LabelRecord]] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    unskipped: list[int] = field(default_factory=list)
    new_class: str | None = None
    renamed: tuple[str, str] | None = None
    deleted_class: str | None = None
    restored_class: str | None = None
    class_weight: float | None = None
    settings: list[tuple] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)

    @property
    def setting(self) -> tuple | None:
        """The first ``(name, value)`` of :attr:`settings`, or None."""
        return self.settings[0] if self.settings else None


def _is_class_name(name) -> bool:
    return isinstance(name, str) and bool(name.strip())


class LogState:
    """Net state of a session's event log, folded one user action at a time.

    Undo semantics: the actions of :data:`UNDOABLE_KINDS` (``label``, ``accept`` (a whole
    batch), ``skip``, ``relabel`` and ``unlabel`` (one point or a batch), ``unskip``,
    ``rename_class``, ``delete_class``, ``keep``) go on a stack; ``undo`` pops the top one and reverts
    it exactly. ``add_class`` and ``setting`` are not undoable.

    Because every action that changes labels, skips or class names is on the stack, the
    state an undo finds is the state its action left, except for classes added since (which
    hold no label by then). The one name clash that could break this, adding a class under a
    name that an undo would give back (the old name of a renamed class, a deleted class), is
    refused (:meth:`reserved_names`).

    Net labels are kept in the order of the events that gave them (a relabelled point moves
    to the end; an undo puts a label back at its place).

    An event that contradicts the state (a second label of a labelled point, a relabel or
    unlabel of a point that is not labelled as the event says, an undo that does not name the
    top of the stack, an unknown class, a deleted class that still has labels) raises
    :class:`StoreCorruptError`: the store only ever holds validated actions, so such a log
    was damaged or edited by hand.

    Parameters
    ----------
    classes : list of str
        Classes at session creation.
    n_samples : int
        Number of points of the data set (indices must be in ``[0, n_samples)``).
    """

    def __init__(self, classes, n_samples: int):
        self.classes: list[str] = list(classes)
        self.n_samples = int(n_samples)
        self.labels: dict[int, LabelRecord] = {}
        self.skipped: dict[int, int] = {}
        self.settings: dict[str, object] = {}
        self.kept: dict[int, KeepRecord] = {}  # point -> its latest keep (a reviewed label)
        self.n_events = 0
        self._stack: list[tuple[int, str, list]] = []

    @property
    def can_undo(self) -> bool:
        """Whether there is an action to undo."""
        return bool(self._stack)

    @property
    def last_undoable(self) -> tuple[int, str, list] | None:
        """``(action, kind, items)`` of the action :meth:`apply` of an undo would revert."""
        return self._stack[-1] if self._stack else None

    def reserved_names(self) -> dict[str, str]:
        """Class names an undo would give back, ``{name: why}``: a new class may not take them."""
        out = {}
        for _, kind, items in self._stack:
            if kind == "rename_class":
                old, new = items[0]
                out[old] = f"renamed to {new!r}"
            elif kind == "delete_class":
                out[items[0][0]] = "deleted"
        return out

    def _bad(self, ev: Event, why: str):
        raise StoreCorruptError(
            f"Inconsistent event log at event {ev.seq} ({ev.kind}): {why}. The store file was "
            "damaged or edited by hand; restore it from a backup or delete this session."
        )

    def _check_point(self, ev: Event):
        if ev.index is None or not 0 <= ev.index < self.n_samples:
            self._bad(ev, f"point index {ev.index!r} outside 0..{self.n_samples - 1}")

    def _check_points(self, events: list[Event], labelled: bool):
        """Every event names a distinct point, labelled (or not) as ``labelled`` says."""
        seen = set()
        for ev in events:
            self._check_point(ev)
            if ev.index in seen:
                self._bad(ev, f"point {ev.index} appears twice in one action")
            if labelled and ev.index not in self.labels:
                self._bad(ev, f"point {ev.index} is not labelled")
            if not labelled and ev.index in self.labels:
                self._bad(ev, f"point {ev.index} is already labelled")
            seen.add(ev.index)

    def _check_class(self, ev: Event, name):
        if name not in self.classes:
            self._bad(ev, f"label {name!r} is not a class ({self.classes})")

    def _check_source(self, ev: Event):
        if ev.source not in LABEL_SOURCES:
            self._bad(ev, f"source {ev.source!r} unknown")

    def _sort_labels(self):
        items = sorted(self.labels.items(), key=lambda kv: kv[1].seq)
        self.labels.clear()
        self.labels.update(items)

    def _sort_skipped(self):
        items = sorted(self.skipped.items(), key=lambda kv: kv[1])
        self.skipped.clear()
        self.skipped.update(items)

    def _rename(self, old: str, new: str):
        self.classes[self.classes.index(old)] = new
        for i, rec in self.labels.items():
            if rec.label == old:
                self.labels[i] = replace(rec, label=new)  # same key: same place
        for i, rec in self.kept.items():
            if old in (rec.label, rec.suggested):
                self.kept[i] = replace(rec, label=new if rec.label == old else rec.label,
                                       suggested=new if rec.suggested == old else rec.suggested)

    # ---- one action --------------------------------------------------------------------------
    def apply(self, events: list[Event]) -> Change:
        """Fold one user action (events sharing ``action``) and return what changed."""
        if not events:
            raise ValueError("apply() needs the events of one action; got none.")
        first = events[0]
        kinds = {ev.kind for ev in events}
        for k, ev in enumerate(events):
            if ev.seq != self.n_events + 1 + k or ev.action != first.seq:
                self._bad(ev, f"expected seq {self.n_events + 1 + k} in action {first.seq}")
        if len(kinds) != 1 or (len(events) > 1 and first.kind not in BATCH_KINDS):
            self._bad(first, f"one action mixes or repeats events of kinds {sorted(kinds)}")
        kind = first.kind
        fold = getattr(self, f"_fold_{kind}", None)
        if fold is None:  # pragma: no cover - the table's CHECK constraint forbids other kinds
            self._bad(first, "unknown kind")
        change = Change(kind=kind)
        items = fold(events, change)
        if kind in UNDOABLE_KINDS:
            self._stack.append((first.seq, kind, items))
        self.n_events += len(events)
        return change

    def _fold_label(self, events, change):
        self._check_points(events, labelled=False)
        for ev in events:
            self._check_class(ev, ev.label)
            self._check_source(ev)
        for ev in events:
            rec = LabelRecord(ev.index, ev.label, ev.source, ev.seq, ev.action, ev.timestamp)
            self.labels[ev.index] = rec
            change.added.append(rec)
        return [ev.index for ev in events]

    _fold_accept = _fold_label

    def _fold_relabel(self, events, change):
        self._check_points(events, labelled=True)
        for ev in events:
            self._check_class(ev, ev.label)
            self._check_source(ev)
            was = self.labels[ev.index].label
            said = ev.value.get("from") if isinstance(ev.value, dict) else None
            if said != was:
                self._bad(ev, f"it says point {ev.index} was {said!r}, but it is labelled {was!r}")
            if ev.label == was:
                self._bad(ev, f"point {ev.index} is relabelled to its own class {was!r}")
        items = []
        for ev in events:
            before = self.labels.pop(ev.index)
            after = LabelRecord(ev.index, ev.label, ev.source, ev.seq, ev.action, ev.timestamp)
            self.labels[ev.index] = after  # at the end: the order of the events that gave them
            change.relabeled.append((before, after))
            items.append((before, after))
        return items

    def _fold_unlabel(self, events, change):
        self._check_points(events, labelled=True)
        for ev in events:
            if ev.label != self.labels[ev.index].label:
                self._bad(ev, f"it removes label {ev.label!r} of point {ev.index}, which is "
                              f"labelled {self.labels[ev.index].label!r}")
        for ev in events:
            change.removed.append(self.labels.pop(ev.index))
        return list(change.removed)

    def _fold_skip(self, events, change):
        first = events[0]
        self._check_point(first)
        if first.index in self.skipped or first.index in self.labels:
            self._bad(first, f"point {first.index} is already skipped or labelled")
        self.skipped[first.index] = first.seq
        change.skipped.append(first.index)
        return [first.index]

    def _fold_unskip(self, events, change):
        first = events[0]
        self._check_point(first)
        if first.index not in self.skipped:
            self._bad(first, f"point {first.index} is not skipped")
        seq = self.skipped.pop(first.index)
        change.unskipped.append(first.index)
        return [(first.index, seq)]

    def _fold_add_class(self, events, change):
        first = events[0]
        name = first.label
        if not _is_class_name(name) or name in self.classes:
            self._bad(first, f"class name {name!r} is empty or already exists")
        if name in self.reserved_names():
            self._bad(first, f"class name {name!r} is kept for an undo ({self.reserved_names()[name]})")
        self.classes.append(name)
        change.new_class = name
        return None

    def _fold_rename_class(self, events, change):
        first = events[0]
        old = first.value.get("from") if isinstance(first.value, dict) else None
        new = first.label
        self._check_class(first, old)
        if not _is_class_name(new) or new in self.classes:
            self._bad(first, f"new class name {new!r} is empty or already exists")
        self._rename(old, new)
        change.renamed = (old, new)
        return [(old, new)]

    def _fold_delete_class(self, events, change):
        first = events[0]
        name = first.label
        self._check_class(first, name)
        if any(rec.label == name for rec in self.labels.values()):
            self._bad(first, f"class {name!r} still has labelled points")
        if len(self.classes) <= 2:
            self._bad(first, f"it would leave fewer than two classes ({self.classes})")
        weight = first.value.get("weight") if isinstance(first.value, dict) else None
        if weight is not None and (isinstance(weight, bool) or not isinstance(weight, (int, float))
                                   or not math.isfinite(weight) or weight <= 0):
            self._bad(first, f"class weight {weight!r} is not a number > 0")
        position = self.classes.index(name)
        del self.classes[position]
        change.deleted_class, change.class_weight = name, weight
        return [(name, position, weight)]

    def _fold_setting(self, events, change):
        names = set()
        for ev in events:
            value = ev.value
            if not isinstance(value, dict) or "name" not in value or "value" not in value:
                self._bad(ev, "a setting event needs a value {'name': ..., 'value': ...}")
            if value["name"] in names:
                self._bad(ev, f"setting {value['name']!r} appears twice in one action")
            names.add(value["name"])
        for ev in events:
            self.settings[ev.value["name"]] = ev.value["value"]
            change.settings.append((ev.value["name"], ev.value["value"]))
        return None

    def _fold_keep(self, events, change):
        first = events[0]
        self._check_point(first)
        rec = self.labels.get(first.index)
        if rec is None or rec.label != first.label:
            self._bad(first, f"it keeps label {first.label!r} of point {first.index}, which is "
                             f"{'not labelled' if rec is None else f'labelled {rec.label!r}'}")
        value = first.value if isinstance(first.value, dict) else {}
        score, suggested = value.get("score"), value.get("suggested")
        if (isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score)
                or not 0.0 <= score <= 1.0 or not (suggested is None or isinstance(suggested, str))):
            self._bad(first, "a keep event needs a value {'score': number in [0, 1], 'suggested': class or null}")
        previous = self.kept.get(first.index)
        self.kept[first.index] = KeepRecord(first.index, first.label, float(score), suggested, first.seq)
        change.kept.append(first.index)
        return [(first.index, previous)]

    # ---- undo --------------------------------------------------------------------------------
    def _fold_undo(self, events, change):
        first = events[0]
        target = first.value.get("undoes") if isinstance(first.value, dict) else None
        if not self._stack or self._stack[-1][0] != target:
            top = self._stack[-1][0] if self._stack else None
            self._bad(first, f"undo names action {target!r} but the last undoable is {top!r}")
        _, kind, items = self._stack[-1]
        change.kind = f"undo_{kind}"
        getattr(self, f"_undo_{kind}")(first, items, change)
        self._stack.pop()
        return None

    def _undo_label(self, ev, items, change):
        for i in reversed(items):  # the exact inverse sequence
            if i not in self.labels:
                self._bad(ev, f"point {i} is not labelled any more")
        for i in reversed(items):
            change.removed.append(self.labels.pop(i))

    _undo_accept = _undo_label

    def _undo_relabel(self, ev, items, change):
        for before, after in items:
            now = self.labels.get(after.index)
            if now is None or now.label != after.label:
                self._bad(ev, f"point {after.index} is no longer labelled {after.label!r}")
        for before, after in reversed(items):
            now = self.labels[after.index]
            self.labels[after.index] = before
            change.relabeled.append((now, before))
        self._sort_labels()

    def _undo_unlabel(self, ev, items, change):
        for rec in items:
            if rec.index in self.labels or rec.label not in self.classes:
                self._bad(ev, f"point {rec.index} cannot get its label {rec.label!r} back")
        for rec in items:
            self.labels[rec.index] = rec
            change.added.append(rec)
        self._sort_labels()

    def _undo_skip(self, ev, items, change):
        if items[0] not in self.skipped:
            self._bad(ev, f"point {items[0]} is not skipped any more")
        del self.skipped[items[0]]
        change.unskipped.append(items[0])

    def _undo_unskip(self, ev, items, change):
        index, seq = items[0]
        if index in self.skipped or index in self.labels:
            self._bad(ev, f"point {index} cannot be skipped again (it is skipped or labelled)")
        self.skipped[index] = seq
        self._sort_skipped()
        change.skipped.append(index)

    def _undo_keep(self, ev, items, change):
        index, previous = items[0]
        if index not in self.kept:
            self._bad(ev, f"point {index} is not kept any more")
        if previous is None:
            del self.kept[index]
        else:
            self.kept[index] = previous
        change.kept.append(index)

    def _undo_rename_class(self, ev, items, change):
        old, new = items[0]
        if new not in self.classes or old in self.classes:
            self._bad(ev, f"class {new!r} cannot be renamed back to {old!r}")
        self._rename(new, old)
        change.renamed = (new, old)

    def _undo_delete_class(self, ev, items, change):
        name, position, weight = items[0]
        if name in self.classes or position > len(self.classes):
            self._bad(ev, f"class {name!r} cannot be restored")
        self.classes.insert(position, name)
        change.restored_class, change.class_weight = name, weight


def new_session_id() -> str:
    """A new random session id (16 hex digits)."""
    return secrets.token_hex(8)


def make_events(drafts, *, after: int, timestamp: str | None = None) -> list[Event]:
    """The :class:`Event` objects of one user action: ``drafts`` (event constructors of
    :mod:`labeler.store.events`, e.g. ``[Label(4, "cat", "queried")]``) as events
    ``after + 1, ...``, all with ``action = after + 1`` and one timestamp (default now).

    Raises
    ------
    ValueError
        No drafts, or something that is not an event constructor.
    """
    drafts = list(drafts)
    if not drafts:
        raise ValueError("An action needs at least one event.")
    stamp = utc_now() if timestamp is None else timestamp
    out = []
    for k, draft in enumerate(drafts):
        if not isinstance(draft, NewEvent) or draft.kind not in EVENT_KINDS:
            raise ValueError(
                f"Bad event {draft!r}: build events with the constructors of labeler.store.events "
                "(Label, Accept, Skip, Unskip, Relabel, Unlabel, Undo, AddClass, RenameClass, "
                "DeleteClass, Setting, Keep)."
            )
        index, label, source, value = draft.columns()
        out.append(Event(seq=after + 1 + k, action=after + 1, kind=draft.kind, index=index,
                         label=label, source=source, value=value, timestamp=stamp))
    return out
