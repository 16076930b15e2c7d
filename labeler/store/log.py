"""The event log: events, user actions, and the state they fold into (net labels, skips, classes)."""

import secrets
from dataclasses import dataclass, field

from .faults import StoreCorruptError, utc_now
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
        Point index (``label``, ``accept``, ``skip``).
    label : str or None
        Class name (``label``, ``accept``, ``add_class``).
    source : str or None
        One of :data:`LABEL_SOURCES` for ``label`` and ``accept``.
    value : object
        JSON payload: ``{"undoes": action}`` for ``undo``, ``{"name", "value", ...}`` for
        ``setting``.
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


@dataclass(frozen=True)
class LabelRecord:
    """A net label: point ``index`` got ``label`` from ``source`` in event ``seq``."""

    index: int
    label: str
    source: str
    seq: int
    action: int
    timestamp: str


@dataclass
class Change:
    """What one user action changed, for the session to apply to its learner.

    ``added`` / ``removed`` labels (in the order to apply them), ``skipped`` / ``unskipped``
    points, a ``new_class``, or a ``setting`` ``(name, value)``.
    """

    kind: str
    added: list[LabelRecord] = field(default_factory=list)
    removed: list[LabelRecord] = field(default_factory=list)
    skipped: list[int] = field(default_factory=list)
    unskipped: list[int] = field(default_factory=list)
    new_class: str | None = None
    setting: tuple | None = None


class LogState:
    """Net state of a session's event log, folded one user action at a time.

    Undo semantics: ``label``, ``accept`` (a whole batch) and ``skip`` actions go on a stack;
    ``undo`` pops the top one and reverts it. ``add_class`` and ``setting`` are not undoable.
    An event that contradicts the state (a second label of a labelled point, an undo that does
    not name the top of the stack, an unknown class) raises :class:`StoreCorruptError`: the
    store only ever holds validated actions, so such a log was damaged or edited by hand.

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
        self.n_events = 0
        self._stack: list[tuple[int, str, list]] = []

    @property
    def can_undo(self) -> bool:
        """Whether there is a label, accept or skip action to undo."""
        return bool(self._stack)

    @property
    def last_undoable(self) -> tuple[int, str, list] | None:
        """``(action, kind, items)`` of the action :meth:`apply` of an undo would revert."""
        return self._stack[-1] if self._stack else None

    def _bad(self, ev: Event, why: str):
        raise StoreCorruptError(
            f"Inconsistent event log at event {ev.seq} ({ev.kind}): {why}. The store file was "
            "damaged or edited by hand; restore it from a backup or delete this session."
        )

    def _check_point(self, ev: Event):
        if ev.index is None or not 0 <= ev.index < self.n_samples:
            self._bad(ev, f"point index {ev.index!r} outside 0..{self.n_samples - 1}")

    def apply(self, events: list[Event]) -> Change:
        """Fold one user action (events sharing ``action``) and return what changed."""
        if not events:
            raise ValueError("apply() needs the events of one action; got none.")
        first = events[0]
        kinds = {ev.kind for ev in events}
        for k, ev in enumerate(events):
            if ev.seq != self.n_events + 1 + k or ev.action != first.seq:
                self._bad(ev, f"expected seq {self.n_events + 1 + k} in action {first.seq}")
        if len(kinds) != 1 or (len(events) > 1 and first.kind != "accept"):
            self._bad(first, f"one action mixes or repeats events of kinds {sorted(kinds)}")
        kind = first.kind
        change = Change(kind=kind)
        if kind in ("label", "accept"):
            seen = set()
            for ev in events:
                self._check_point(ev)
                if ev.index in self.labels or ev.index in seen:
                    self._bad(ev, f"point {ev.index} is already labelled")
                if ev.label not in self.classes:
                    self._bad(ev, f"label {ev.label!r} is not a class ({self.classes})")
                if ev.source not in LABEL_SOURCES:
                    self._bad(ev, f"source {ev.source!r} unknown")
                seen.add(ev.index)
            for ev in events:
                rec = LabelRecord(ev.index, ev.label, ev.source, ev.seq, ev.action, ev.timestamp)
                self.labels[ev.index] = rec
                change.added.append(rec)
            self._stack.append((first.seq, kind, [ev.index for ev in events]))
        elif kind == "skip":
            self._check_point(first)
            if first.index in self.skipped or first.index in self.labels:
                self._bad(first, f"point {first.index} is already skipped or labelled")
            self.skipped[first.index] = first.seq
            change.skipped.append(first.index)
            self._stack.append((first.seq, kind, [first.index]))
        elif kind == "undo":
            target = first.value.get("undoes") if isinstance(first.value, dict) else None
            if not self._stack or self._stack[-1][0] != target:
                top = self._stack[-1][0] if self._stack else None
                self._bad(first, f"undo names action {target!r} but the last undoable is {top!r}")
            _, undone_kind, items = self._stack.pop()
            change.kind = f"undo_{undone_kind}"
            if undone_kind == "skip":
                del self.skipped[items[0]]
                change.unskipped.append(items[0])
            else:
                # remove in reverse order of addition (the exact inverse sequence)
                for i in reversed(items):
                    change.removed.append(self.labels.pop(i))
        elif kind == "add_class":
            name = first.label
            if not isinstance(name, str) or not name.strip() or name in self.classes:
                self._bad(first, f"class name {name!r} is empty or already exists")
            self.classes.append(name)
            change.new_class = name
        elif kind == "setting":
            value = first.value
            if not isinstance(value, dict) or "name" not in value or "value" not in value:
                self._bad(first, "a setting event needs a value {'name': ..., 'value': ...}")
            self.settings[value["name"]] = value["value"]
            change.setting = (value["name"], value["value"])
        else:  # pragma: no cover - the table's CHECK constraint forbids other kinds
            self._bad(first, "unknown kind")
        self.n_events += len(events)
        return change


def new_session_id() -> str:
    """A new random session id (16 hex digits)."""
    return secrets.token_hex(8)


def make_events(rows: list[dict], *, after: int, timestamp: str | None = None) -> list[Event]:
    """The :class:`Event` objects of one user action: ``rows`` (dicts with ``kind`` and
    optionally ``index``, ``label``, ``source``, ``value``) as events ``after + 1, ...``, all
    with ``action = after + 1`` and one timestamp (default now).

    Raises
    ------
    ValueError
        No rows, an unknown key or an unknown kind.
    """
    if not rows:
        raise ValueError("An action needs at least one event.")
    stamp = utc_now() if timestamp is None else timestamp
    out = []
    for k, row in enumerate(rows):
        unknown = set(row) - {"kind", "index", "label", "source", "value"}
        if unknown:
            raise ValueError(
                f"Bad event {row!r}: unknown key(s) {sorted(unknown)}; an event has only "
                "kind, index, label, source and value."
            )
        if row.get("kind") not in EVENT_KINDS:
            raise ValueError(f"Bad event {row!r}: kind must be one of {EVENT_KINDS}.")
        out.append(Event(
            seq=after + 1 + k,
            action=after + 1,
            kind=row["kind"],
            index=None if row.get("index") is None else int(row["index"]),
            label=row.get("label"),
            source=row.get("source"),
            value=row.get("value"),
            timestamp=stamp,
        ))
    return out
