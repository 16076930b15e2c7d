"""SQLite store of labelling sessions: one file, an append-only event log per session.

The store keeps, per session, the configuration it was created with (JSON, with every "auto"
setting already resolved to a number) and the list of events the user produced: ``label``,
``accept`` (bulk accept of predictions), ``skip``, ``undo``, ``add_class`` and ``setting``.
Nothing else is needed to rebuild a session: :class:`LogState` folds the events into the net
labels, skipped points, classes and settings, and the session replays the same operations on
its learner. Arrays that are expensive to recompute (a t-SNE layout) may be cached as ``.npy``
bytes. There is no pickle anywhere (unsafe on untrusted files).

File format
-----------
* SQLite in WAL mode (readers never block the writer, two browser tabs or two processes may
  open the same file), ``busy_timeout`` so concurrent writers wait instead of failing,
  ``foreign_keys`` on (deleting a session deletes its events), ``synchronous=FULL``.
* ``PRAGMA user_version`` holds the schema version (:data:`SCHEMA_VERSION`). A file written by
  a newer version raises :class:`StoreVersionError`; a file that is not a database, is empty,
  truncated or damaged, or is some other application's database raises
  :class:`StoreCorruptError`. In both cases the file is not modified: every check runs before
  the first write. Damage found later (text that is not UTF-8, JSON that does not parse, a
  field of the wrong type, a session record or cached array that no longer matches its
  SHA-256 checksum) raises :class:`StoreCorruptError` too, with what to do; never a raw
  ``sqlite3``, ``UnicodeDecodeError`` or ``JSONDecodeError``.
* Faults of the disk are named (:func:`store_fault`): :class:`StoreFullError` (disk full),
  :class:`StoreReadOnlyError` (read-only file or folder: the store opens read-only, reads work,
  writes are refused before anything is touched), :class:`StoreBusyError`. A refused write
  leaves the store and the caller's state as they were.
* Files: ``<name>.sqlite`` plus, while it is open, ``<name>.sqlite-wal`` (the write-ahead log:
  the latest actions) and ``<name>.sqlite-shm`` (an index of the log). The log is
  checkpointed into the main file every :attr:`Store.checkpoint_every` actions, after a
  session is created or deleted and on close, so the main file alone lacks at most the last
  few actions. :meth:`Store.backup` writes one self-contained file.
* A session is created in one transaction with its cached arrays and first events (the
  initial labels): it is in the store whole or not at all.
* One transaction per user action (``BEGIN IMMEDIATE`` ... ``COMMIT``). :meth:`Store.append`
  only commits when the session's last event is the one the caller has seen, so two tabs
  cannot interleave half-applied actions: the late writer gets :class:`ConcurrentUpdateError`,
  catches up with the new events and decides again.

Tables (schema version 1)::

    sessions(id TEXT PK, name, dataset, config JSON, created ISO-8601 UTC)
    events(session_id FK, seq, action, kind, idx, label, source, value JSON, timestamp)
        PK (session_id, seq); ``action`` is the seq of the first event written by the same
        user action (an accepted batch shares it); an undo has value {"undoes": action}.
    arrays(session_id FK, name, npy BLOB)     cached arrays in .npy format (allow_pickle=False)
    queries(session_id PK FK, version, idx)   the next query shown at state ``version`` (the
        number of events): every tab, and a reopened session, shows the same point
    risks(session_id FK, seq, risk)           estimated risk of the model right after the
        label event ``seq`` (written after the learner update; history only)
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import os
import re
import secrets
import shutil
import sqlite3
import threading
import urllib.parse
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

__all__ = [
    "SCHEMA_VERSION",
    "EVENT_KINDS",
    "LABEL_SOURCES",
    "DEFAULT_STORE_ENV",
    "Store",
    "SessionInfo",
    "SessionRecord",
    "Event",
    "LabelRecord",
    "Change",
    "LogState",
    "group_actions",
    "make_events",
    "new_session_id",
    "default_store_path",
    "utc_now",
    "StoreError",
    "StoreVersionError",
    "StoreCorruptError",
    "UnknownSessionError",
    "ConcurrentUpdateError",
]

SCHEMA_VERSION = 1
EVENT_KINDS = ("label", "skip", "undo", "add_class", "setting", "accept")
LABEL_SOURCES = ("queried", "chosen", "accepted")
DEFAULT_STORE_ENV = "LABELER_STORE"
_SQLITE_MAGIC = b"SQLite format 3\x00"
_TABLES = ("sessions", "events", "arrays", "queries", "risks")
_BUSY_TIMEOUT_S = 30.0

_SCHEMA_V1 = """
CREATE TABLE sessions (
    id       TEXT PRIMARY KEY,
    name     TEXT NOT NULL,
    dataset  TEXT NOT NULL,
    config   TEXT NOT NULL,
    created  TEXT NOT NULL
);
CREATE TABLE events (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    action     INTEGER NOT NULL CHECK (action >= 1 AND action <= seq),
    kind       TEXT NOT NULL
               CHECK (kind IN ('label', 'skip', 'undo', 'add_class', 'setting', 'accept')),
    idx        INTEGER CHECK (idx IS NULL OR idx >= 0),
    label      TEXT,
    source     TEXT CHECK (source IS NULL OR source IN ('queried', 'chosen', 'accepted')),
    value      TEXT,
    timestamp  TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE arrays (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    npy        BLOB NOT NULL,
    PRIMARY KEY (session_id, name)
) WITHOUT ROWID;
CREATE TABLE queries (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    version    INTEGER NOT NULL CHECK (version >= 0),
    idx        INTEGER NOT NULL CHECK (idx >= 0)
) WITHOUT ROWID;
CREATE TABLE risks (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    risk       REAL NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
"""


class StoreError(Exception):
    """Base class of the store's errors."""


class StoreVersionError(StoreError):
    """The file was written by a newer version of the labeller (schema version too high)."""


class StoreCorruptError(StoreError):
    """The file is not a labeller store, is damaged, or holds an inconsistent event log."""


class StoreWriteError(StoreError):
    """The store cannot be written now (disk full, read-only, an I/O error). Nothing of the
    refused action was written; everything acknowledged before is in the store."""


class StoreFullError(StoreWriteError):
    """The disk (or file system) holding the store is full."""


class StoreReadOnlyError(StoreWriteError):
    """The store file or its folder is read-only: sessions can be viewed, not changed."""


class StoreBusyError(StoreError):
    """Another process held the store locked for longer than the busy timeout."""


class UnknownSessionError(StoreError, LookupError):
    """No session with this id in the store."""


class ConcurrentUpdateError(StoreError):
    """Another tab or process appended events to the session since the caller last read it."""


def utc_now() -> str:
    """Current time as an ISO 8601 UTC string with microseconds (the stored timestamp format)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def default_store_path() -> Path:
    """Store file used when none is given: ``$LABELER_STORE`` or ``~/.labeler/labeler.sqlite``."""
    env = os.environ.get(DEFAULT_STORE_ENV)
    if env:
        return Path(env).expanduser()
    return Path.home() / ".labeler" / "labeler.sqlite"


_ISO_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?([+-]\d\d:\d\d|Z)?")
_FREE_SPACE_LOW = 1 << 20  # bytes: below this an I/O error while writing is a full disk


def _free_bytes(path: Path) -> int | None:
    try:
        return shutil.disk_usage(path if path.is_dir() else path.parent).free
    except OSError:
        return None


def store_fault(exc: BaseException, path: Path, *, opening: bool = False) -> StoreError:
    """The store's own error for a ``sqlite3`` error (or a decoding error of stored text).

    Faults of the disk are named as such (full, read-only, I/O, busy), never as damage of the
    file; damage (a malformed database, text that is not UTF-8, JSON that does not parse)
    becomes :class:`StoreCorruptError` with what to do.
    """
    path = Path(path)
    text = str(exc)
    low = text.lower()
    code = getattr(exc, "sqlite_errorcode", None)
    code = None if code is None else code & 0xFF  # the primary result code
    if isinstance(exc, (UnicodeDecodeError, json.JSONDecodeError)):
        return StoreCorruptError(
            f"{path} is damaged: a stored text cannot be read ({exc}). Restore the file from a "
            "backup (`labeler backup` makes one), or delete the damaged session."
        )
    if code == sqlite3.SQLITE_FULL or "database or disk is full" in low:
        return StoreFullError(_full_message(path, opening))
    if code == sqlite3.SQLITE_READONLY or "readonly" in low or "read-only" in low:
        return StoreReadOnlyError(_read_only_message(path))
    if code in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or "locked" in low or "busy" in low:
        return StoreBusyError(
            f"The store {path} is locked by another process (waited {_BUSY_TIMEOUT_S:.0f} s): "
            f"nothing was written. Try again; if it persists, close the other program ({exc})."
        )
    if code in (sqlite3.SQLITE_IOERR, sqlite3.SQLITE_CANTOPEN) or "disk i/o error" in low \
            or "unable to open" in low:
        free = _free_bytes(path)
        if free is not None and free < _FREE_SPACE_LOW:
            return StoreFullError(_full_message(path, opening))
        return StoreWriteError(
            f"The disk holding {path} reported an error ({exc}); nothing was written. Check the "
            "disk and the file's permissions, then try again."
        )
    if code in (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB) or "malformed" in low \
            or "not a database" in low or "no such table" in low or "no such column" in low \
            or "schema" in low or "could not decode" in low or type(exc) is sqlite3.DatabaseError:
        return StoreCorruptError(
            f"{path} is damaged ({exc}); it was left unchanged. Restore it from a backup "
            "(`labeler backup` makes one) or use another store file (--store or LABELER_STORE)."
        )
    return StoreError(
        f"The store {path} failed: {exc}. Try again; if it persists, the file may be damaged: "
        "restore it from a backup (`labeler backup` makes one) or use another store file."
    )


def _check_size(path: Path, head: bytes):
    """A store file shorter than its header says was truncated (a failed copy, a full disk).

    Checked when the file is at rest (no ``-wal`` with frames), where the header's page count
    (valid when bytes 92-95 equal the change counter, bytes 24-27) is the file's size.
    """
    wal = path.with_name(path.name + "-wal")
    if len(head) < 100 or (wal.exists() and wal.stat().st_size > 0):
        return
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    if head[24:28] != head[92:96] or not pages:
        return
    size = path.stat().st_size
    if size < pages * page_size:
        raise StoreCorruptError(
            f"{path} is truncated: {size} bytes where its header says {pages * page_size} (a "
            "failed copy or a full disk); it was left unchanged. Restore it from a backup or use "
            "another store file."
        )


def _rollback(con: sqlite3.Connection):
    """Roll back the open transaction, if SQLite has not already (it does on a full disk)."""
    if con.in_transaction:
        try:
            con.execute("ROLLBACK")
        except sqlite3.Error:
            pass


def _full_message(path: Path, opening: bool) -> str:
    what = ("the store cannot be opened (SQLite needs a little space for its -wal and -shm "
            "files)") if opening else "the last action was NOT saved"
    return (
        f"The disk holding the store {path} is full: {what}. Everything shown as saved before "
        "is in the store. Free some disk space, then repeat the action."
    )


def _read_only_message(path: Path) -> str:
    return (
        f"The store {path} (or its folder) is read-only: sessions can be viewed but not "
        "changed, and the last action was not saved. Make the file and its folder writable, or "
        "copy the store to a writable folder and open that copy (--store or LABELER_STORE)."
    )


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


_NPY_SUM = b"LBLSHA256"  # trailer of a stored .npy blob: marker + SHA-256 of the .npy bytes


def _npy_bytes(name: str, array) -> bytes:
    """``.npy`` bytes of a numeric array (no pickle) followed by their SHA-256 (np.load
    ignores trailing bytes, so older versions still read them)."""
    arr = np.asarray(array)
    if arr.dtype == object:
        raise TypeError(f"Only numeric arrays can be stored; {name!r} has dtype object.")
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    data = buf.getvalue()
    return data + _NPY_SUM + hashlib.sha256(data).digest()


def _npy_array(blob: bytes) -> np.ndarray:
    """Inverse of :func:`_npy_bytes`; ValueError when the checksum does not match."""
    blob = bytes(blob)
    k = len(_NPY_SUM) + 32
    if len(blob) >= k and blob[-k:-32] == _NPY_SUM:
        data, digest = blob[:-k], blob[-32:]
        if hashlib.sha256(data).digest() != digest:
            raise ValueError("the bytes do not match their checksum")
        blob = data
    return np.load(io.BytesIO(blob), allow_pickle=False)


_CHECKSUM = "checksum"  # key of the record's checksum inside the stored configuration


def _record_checksum(sid: str, name: str, dataset: str, created: str, config: dict) -> str:
    """SHA-256 of a session's record (id, name, data set, creation time, configuration)."""
    return hashlib.sha256(_json_dumps([sid, name, dataset, created, config]).encode()).hexdigest()


# --------------------------------------------------------------------------------------------
# The store
# --------------------------------------------------------------------------------------------


def _json_dumps(obj) -> str:
    """JSON text with floats written exactly (repr), refusing NaN/inf (not JSON)."""
    return json.dumps(obj, allow_nan=False, sort_keys=True)


def _json_loads(text):
    return None if text is None else json.loads(text)


class Store:
    """A labeller store file.

    Parameters
    ----------
    path : str or path-like
        SQLite file; created (with its parent directories) if it does not exist.

    Raises
    ------
    StoreVersionError
        The file has a newer schema version than this program understands.
    StoreCorruptError
        The file is not an SQLite database, is empty (0 bytes), is damaged, or is not a
        labeller store.
    StoreFullError, StoreWriteError, StoreBusyError
        The disk is full (SQLite needs a little space for its ``-wal`` / ``-shm`` files), an
        I/O error, or another process holds the file locked.
    StoreReadOnlyError
        The file does not exist and cannot be created (read-only folder).
    OSError
        The file or its directory cannot be created or opened.

    Notes
    -----
    The object holds one connection, usable from any thread (calls are serialised by a
    lock), so a Streamlit app may keep it across reruns. Close it with :meth:`close` or use
    it as a context manager; an object dropped without closing loses nothing, because every
    action is committed before the call returns.

    A store whose file or folder is read-only is opened read-only (:attr:`read_only`): every
    read works, every write raises :class:`StoreReadOnlyError` before touching anything.

    The write-ahead log is checkpointed into the main file every :attr:`checkpoint_every`
    actions, after creating or deleting a session, and on :meth:`close`, so the ``.sqlite``
    file alone holds all but the last few actions; :meth:`backup` writes one self-contained
    file.
    """

    #: Checkpoint the write-ahead log into the main file every this many appended actions.
    checkpoint_every = 10

    def __init__(self, path):
        self.path = Path(path).expanduser()
        self._lock = threading.RLock()
        self._con: sqlite3.Connection | None = None
        self.read_only = False
        self._appends = 0
        self._dirty = False  # wrote since the last checkpoint
        self._open()

    # ---- opening ---------------------------------------------------------------------------
    def _open(self):
        path = self.path
        if path.is_dir():
            raise IsADirectoryError(
                f"Store path {path} is a directory; give a file name, e.g. {path / 'labeler.sqlite'}."
            )
        exists = path.exists()
        if exists:
            if path.stat().st_size == 0:
                wal = path.with_name(path.name + "-wal")
                hint = (f" Keep {wal.name}: it may hold the labels; restore {path.name} from a "
                        "backup next to it.") if wal.exists() and wal.stat().st_size else (
                        " If you made it on purpose, delete it: the labeller creates its store itself.")
                raise StoreCorruptError(
                    f"{path} is empty (0 bytes), so it is not a labeller store: a copy or the "
                    f"disk may have failed. It was left unchanged.{hint}"
                )
            with open(path, "rb") as fh:
                head = fh.read(100)
            if head[:len(_SQLITE_MAGIC)] != _SQLITE_MAGIC:
                raise StoreCorruptError(
                    f"{path} is not an SQLite database (bad header); it was left unchanged. "
                    "Restore it from a backup, or point the labeller at another store file "
                    "(--store or LABELER_STORE)."
                )
            _check_size(path, head)
        else:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise OSError(
                    f"Cannot create the directory {path.parent} for the store file: {exc}. "
                    "Choose a writable location (--store or LABELER_STORE)."
                ) from exc
            if not os.access(path.parent, os.W_OK):
                raise StoreReadOnlyError(
                    f"Cannot create the store {path}: its folder {path.parent} is read-only. "
                    "Choose a writable location (--store or LABELER_STORE)."
                )
        # a store in WAL mode is written through two more files in its folder (-wal, -shm)
        self.read_only = exists and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK))
        con = self._connect()
        try:
            self._check(con)
            self._prepare(con)
        except BaseException:
            con.close()
            raise
        self._con = con

    def _connect(self) -> sqlite3.Connection:
        path = self.path
        kwargs = dict(timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        try:
            if not self.read_only:
                return sqlite3.connect(str(path), **kwargs)
            uri = f"file:{urllib.parse.quote(str(path.resolve()))}?mode=ro"
            con = sqlite3.connect(uri, uri=True, **kwargs)
            try:
                con.execute("PRAGMA user_version").fetchone()
                return con
            except sqlite3.OperationalError:
                # a WAL store whose -shm file is missing cannot be shared read-only in a
                # read-only folder; nobody can write there, so read it as an unchanging file
                con.close()
                return sqlite3.connect(uri + "&immutable=1", uri=True, **kwargs)
        except sqlite3.Error as exc:
            raise OSError(
                f"Cannot open the store file {path}: {exc}. Check that the directory is "
                "writable, or choose another file (--store or LABELER_STORE)."
            ) from exc

    def _check(self, con: sqlite3.Connection):
        """Read-only checks before the first write: version, integrity, tables."""
        path = self.path
        try:
            version = con.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise StoreVersionError(
                    f"{path} has schema version {version}, written by a newer version of the "
                    f"labeller (this one understands up to {SCHEMA_VERSION}). Upgrade the "
                    "labeller to open it; the file was left unchanged."
                )
            problems = [r[0] for r in con.execute("PRAGMA quick_check").fetchall()]
            if problems != ["ok"]:
                raise StoreCorruptError(
                    f"{path} is damaged ({'; '.join(problems[:3])}); it was left unchanged. "
                    "Restore it from a backup or use another store file."
                )
            tables = {
                r[0]
                for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            }
        except (sqlite3.Error, UnicodeDecodeError) as exc:
            raise store_fault(exc, path, opening=True) from exc
        if version == 0 and tables:
            raise StoreCorruptError(
                f"{path} is an SQLite database of another application (tables: "
                f"{', '.join(sorted(tables))}); it was left unchanged. Use another store file."
            )
        if version == SCHEMA_VERSION and not set(_TABLES) <= tables:
            raise StoreCorruptError(
                f"{path} claims schema version {version} but lacks the tables "
                f"{sorted(set(_TABLES) - tables)}, so it is damaged; it was left unchanged. "
                "Restore it from a backup or use another store file."
            )
        if version == 0 and self.read_only:
            raise StoreReadOnlyError(
                f"{path} is read-only and holds no labeller store yet. Choose a writable "
                "location (--store or LABELER_STORE)."
            )

    def _prepare(self, con: sqlite3.Connection):
        try:
            con.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
            con.execute("PRAGMA foreign_keys = ON")
            if self.read_only:
                return
            mode = con.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":  # pragma: no cover - e.g. a network file system
                raise OSError(
                    f"{self.path}: SQLite could not switch to WAL mode (got {mode!r}); put the "
                    "store on a local disk."
                )
            con.execute("PRAGMA synchronous = FULL")
            con.execute("BEGIN IMMEDIATE")
            try:
                version = con.execute("PRAGMA user_version").fetchone()[0]
                if version == 0:  # new file (another process may have created it meanwhile)
                    for stmt in _SCHEMA_V1.split(";"):
                        if stmt.strip():
                            con.execute(stmt)
                    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                con.execute("COMMIT")
            except BaseException:
                _rollback(con)
                raise
        except sqlite3.Error as exc:
            raise store_fault(exc, self.path, opening=True) from exc

    # ---- plumbing --------------------------------------------------------------------------
    def close(self):
        """Checkpoint the write-ahead log into the main file (when this connection wrote) and
        close (idempotent)."""
        with self._lock:
            if self._con is not None:
                if self._dirty:
                    self.checkpoint("TRUNCATE")
                self._con.close()
                self._con = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def closed(self) -> bool:
        return self._con is None

    @property
    def schema_version(self) -> int:
        """The file's ``PRAGMA user_version``."""
        with self._read() as con:
            return con.execute("PRAGMA user_version").fetchone()[0]

    def checkpoint(self, mode: str = "PASSIVE") -> bool:
        """Copy the write-ahead log into the main file (``PRAGMA wal_checkpoint(mode)``).

        ``"PASSIVE"`` never waits for other connections; ``"TRUNCATE"`` (on close) also
        empties the ``-wal`` file. Returns True when the whole log was copied. A checkpoint
        that cannot run (disk full, read-only, another reader) loses nothing: the log stays.
        """
        if mode not in ("PASSIVE", "FULL", "RESTART", "TRUNCATE"):
            raise ValueError(f"Unknown checkpoint mode {mode!r}.")
        with self._lock:
            if self._con is None or self.read_only:
                return False
            try:
                busy, log, done = self._con.execute(f"PRAGMA wal_checkpoint({mode})").fetchone()
            except sqlite3.Error:
                return False
            complete = busy == 0 and log == done
            if complete:
                self._dirty = False
            return complete

    @contextmanager
    def _read(self):
        """Reads under the lock; a damaged file or a disk fault becomes the store's error."""
        with self._lock:
            if self._con is None:
                raise StoreError(f"The store {self.path} is closed; open it again.")
            try:
                yield self._con
            except (sqlite3.OperationalError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise store_fault(exc, self.path) from exc
            except sqlite3.DatabaseError as exc:
                if type(exc) is not sqlite3.DatabaseError:
                    raise
                raise store_fault(exc, self.path) from exc

    @contextmanager
    def _write(self):
        """One transaction: ``BEGIN IMMEDIATE`` (takes the write lock at once), commit on
        success, roll back on any exception. A full disk, a read-only file or an I/O error
        raise :class:`StoreWriteError` (nothing written), a damaged file
        :class:`StoreCorruptError`."""
        with self._lock:
            if self._con is None:
                raise StoreError(f"The store {self.path} is closed; open it again.")
            if self.read_only:
                raise StoreReadOnlyError(_read_only_message(self.path))
            con = self._con
            self._dirty = True
            try:
                con.execute("BEGIN IMMEDIATE")
                try:
                    yield con
                    con.execute("COMMIT")
                except BaseException:
                    _rollback(con)
                    raise
            except (sqlite3.OperationalError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise store_fault(exc, self.path) from exc
            except sqlite3.DatabaseError as exc:
                if type(exc) is not sqlite3.DatabaseError:
                    raise
                raise store_fault(exc, self.path) from exc

    def _require(self, con, session_id):
        if not isinstance(session_id, str):
            raise UnknownSessionError(f"Session id must be a string; got {session_id!r}.")
        row = con.execute(
            "SELECT id, name, dataset, config, created FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if row is None:
            raise UnknownSessionError(
                f"No session {session_id!r} in {self.path}. List the sessions with "
                "list_sessions() (or `labeler sessions`) and pick one of their ids."
            )
        return row

    # ---- sessions --------------------------------------------------------------------------
    def create_session(self, *, name: str, dataset: str, config: dict, session_id: str | None = None,
                       created: str | None = None, arrays: dict | None = None,
                       events: list[Event] | None = None, risks: dict | None = None) -> str:
        """Add a session and return its id (16 hex digits), all in ONE transaction.

        A session is written whole or not at all: its row, its cached ``arrays``
        ``{name: ndarray}``, its first ``events`` (e.g. the initial labels, made with
        :func:`make_events` ``(rows, after=0)``) and their ``risks`` ``{seq: risk}`` are
        committed together, so a process killed or failing during creation leaves no session
        behind, never one without its initial labels.

        ``config`` must be JSON-serialisable (floats are stored exactly). ``session_id`` (new
        ids are :func:`new_session_id`) must not be in the store yet.
        """
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"Session name must be a non-empty string; got {name!r}.")
        config = {k: v for k, v in config.items() if k != _CHECKSUM}
        _json_dumps(config)  # JSON-serialisable, before anything is written
        created = utc_now() if created is None else str(created)
        blobs = {k: _npy_bytes(k, v) for k, v in (arrays or {}).items()}
        events = list(events or [])
        for k, ev in enumerate(events):
            if ev.seq != k + 1:
                raise ValueError(f"The first events of a session have seq 1, 2, ...; got {ev.seq} at {k}.")
        with self._write() as con:
            sid = session_id
            while True:
                if sid is None:
                    sid = new_session_id()
                if con.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)).fetchone() is None:
                    break
                if session_id is not None:
                    raise ValueError(f"Session id {session_id!r} is in {self.path} already.")
                sid = None
            text = _json_dumps({**config, _CHECKSUM: _record_checksum(sid, name, str(dataset), created, config)})
            con.execute(
                "INSERT INTO sessions (id, name, dataset, config, created) VALUES (?, ?, ?, ?, ?)",
                (sid, name, str(dataset), text, created),
            )
            con.executemany(
                "INSERT INTO arrays (session_id, name, npy) VALUES (?, ?, ?)",
                [(sid, k, b) for k, b in blobs.items()],
            )
            self._insert_events(con, sid, events)
            con.executemany(
                "INSERT INTO risks (session_id, seq, risk) VALUES (?, ?, ?)",
                [(sid, int(k), float(v)) for k, v in (risks or {}).items() if math.isfinite(v)],
            )
        self.checkpoint()  # a clean point: the new session is in the main file
        return sid

    @staticmethod
    def _insert_events(con, session_id: str, events: list[Event]):
        con.executemany(
            "INSERT INTO events (session_id, seq, action, kind, idx, label, source, value, "
            "timestamp) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (session_id, ev.seq, ev.action, ev.kind, ev.index, ev.label, ev.source,
                 None if ev.value is None else _json_dumps(ev.value), ev.timestamp)
                for ev in events
            ],
        )

    def session(self, session_id: str) -> SessionRecord:
        """The session's record; :class:`UnknownSessionError` if there is none.

        Raises
        ------
        StoreCorruptError
            The record was damaged: its configuration is not JSON, or it no longer matches the
            checksum written at creation (sessions made since checksums exist).
        """
        with self._read() as con:
            row = self._require(con, session_id)
            if not all(isinstance(v, str) for v in row):
                raise StoreCorruptError(
                    f"The record of session {session_id!r} in {self.path} is damaged (a field has "
                    "the wrong type). Restore the store from a backup, or delete this session."
                )
            sid, name, dataset, config, created = row
            config = json.loads(config)
        if not isinstance(config, dict):
            raise StoreCorruptError(f"The record of session {session_id!r} in {self.path} is damaged "
                                    "(its configuration is not an object).")
        stored = config.pop(_CHECKSUM, None)
        if stored is not None and stored != _record_checksum(sid, name, dataset, created, config):
            raise StoreCorruptError(
                f"The record of session {session_id!r} in {self.path} is damaged (it does not match "
                "the checksum written when it was created). Restore the store from a backup, or "
                "delete this session; the other sessions are not affected."
            )
        return SessionRecord(sid, name, dataset, config, created)

    def list_sessions(self) -> list[SessionInfo]:
        """All sessions, oldest first, with their number of net labels.

        A damaged name is listed with replacement characters (the session then fails to open
        with :class:`StoreCorruptError`), so one damaged session hides no other.
        """
        with self._read() as con:
            con.text_factory = lambda b: b.decode("utf-8", "replace")
            try:
                rows = con.execute(
                    "SELECT id, name, dataset, created FROM sessions ORDER BY created, id"
                ).fetchall()
                out = []
                for sid, name, dataset, created in rows:
                    n_labeled = self._count_labels(con, sid)
                    out.append(SessionInfo(sid, name, dataset, created, n_labeled))
            finally:
                con.text_factory = str
        return out

    @staticmethod
    def _count_labels(con, sid) -> int:
        # net labels = label/accept events minus those undone; undo only reverts the top of
        # the stack, so the count follows from a fold over (action, kind) alone
        stack: list[tuple[int, str, int]] = []
        for action, kind, count in con.execute(
            "SELECT action, min(kind), count(*) FROM events WHERE session_id = ? "
            "GROUP BY action ORDER BY action",
            (sid,),
        ):
            if kind in ("label", "accept", "skip"):
                stack.append((action, kind, count))
            elif kind == "undo" and stack:
                stack.pop()
        return sum(c for _, k, c in stack if k != "skip")

    def delete_session(self, session_id: str):
        """Delete a session with its events and cached arrays (one transaction)."""
        with self._write() as con:
            self._require(con, session_id)
            con.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
        self.checkpoint()

    def backup(self, path, session_id: str | None = None) -> Path:
        """Write a consistent copy of the store (or of one session) to ``path``: ONE
        self-contained SQLite file, in rollback-journal mode (no ``-wal`` / ``-shm`` beside
        it), that any labeller opens as a store (``--store path``).

        Uses SQLite's online backup (a snapshot; other tabs may keep labelling meanwhile),
        then, for ``session_id``, deletes the other sessions and compacts the copy. The file
        appears complete or not at all (temporary file, fsync, rename).

        Parameters
        ----------
        path : str or path-like
            A new file (an existing one is refused: replacing a store under its own ``-wal``
            would mix two stores).
        session_id : str, optional
            Copy only this session.

        Returns
        -------
        Path
            ``path``.

        Raises
        ------
        FileExistsError
            ``path`` exists (or its ``-wal`` does).
        UnknownSessionError
            No session ``session_id``.
        """
        from .atomic import atomic_target

        dest = Path(path).expanduser()
        for p in (dest, dest.with_name(dest.name + "-wal")):
            if p.exists():
                raise FileExistsError(f"{p} exists; give the backup a new file name.")
        if session_id is not None:
            self.session(session_id)
        with atomic_target(dest) as tmp:
            out = sqlite3.connect(str(tmp), isolation_level=None)
            try:
                with self._read() as con:
                    con.backup(out)
                out.execute("PRAGMA journal_mode = DELETE")
                if session_id is not None:
                    out.execute("PRAGMA foreign_keys = ON")
                    out.execute("DELETE FROM sessions WHERE id != ?", (session_id,))
                    out.execute("VACUUM")
                problems = [r[0] for r in out.execute("PRAGMA quick_check").fetchall()]
                if problems != ["ok"]:  # pragma: no cover - a fault of the disk just written
                    raise StoreCorruptError(f"The backup {dest} failed its check: {problems[:3]}.")
            except sqlite3.Error as exc:
                raise store_fault(exc, dest) from exc
            finally:
                out.close()
            for extra in ("-wal", "-shm", "-journal"):
                Path(str(tmp) + extra).unlink(missing_ok=True)
        return dest

    # ---- events ----------------------------------------------------------------------------
    def events(self, session_id: str, after: int = 0) -> list[Event]:
        """The session's events with ``seq > after``, in order."""
        with self._read() as con:
            self._require(con, session_id)
            rows = con.execute(
                "SELECT seq, action, kind, idx, label, source, value, timestamp FROM events "
                "WHERE session_id = ? AND seq > ? ORDER BY seq",
                (session_id, int(after)),
            ).fetchall()
            return [self._event(session_id, row) for row in rows]

    def _event(self, session_id: str, row) -> Event:
        """An event row, its types and timestamp checked (a damaged row is named as such)."""
        seq, action, kind, idx, label, source, value, stamp = row
        ok = (
            type(seq) is int and type(action) is int and isinstance(kind, str)
            and (idx is None or type(idx) is int) and (label is None or isinstance(label, str))
            and (source is None or isinstance(source, str)) and (value is None or isinstance(value, str))
            and isinstance(stamp, str)
        )
        if ok:
            try:
                ok = _ISO_STAMP.fullmatch(stamp) is not None and bool(datetime.fromisoformat(stamp))
            except ValueError:
                ok = False
        if not ok:
            raise StoreCorruptError(
                f"Event {seq!r} of session {session_id!r} in {self.path} is damaged (a field has "
                "the wrong type or the timestamp is not ISO 8601). Restore the store from a "
                "backup, or delete this session."
            )
        return Event(seq, action, kind, idx, label, source, _json_loads(value), stamp)

    def n_events(self, session_id: str) -> int:
        """Number of events of the session (its last seq)."""
        with self._read() as con:
            self._require(con, session_id)
            return self._last_seq(con, session_id)

    @staticmethod
    def _last_seq(con, session_id) -> int:
        return con.execute(
            "SELECT coalesce(max(seq), 0) FROM events WHERE session_id = ?", (session_id,)
        ).fetchone()[0]

    def append(self, session_id: str, rows: list[dict], *, after: int) -> list[Event]:
        """Append the events of one user action in one transaction and return them.

        Parameters
        ----------
        session_id : str
        rows : list of dict
            Each with ``kind`` and optionally ``index``, ``label``, ``source``, ``value``.
            All get the same timestamp and ``action`` (the seq of the first).
        after : int
            The last seq the caller has seen. If the session has more events (written by
            another tab or process), nothing is written and :class:`ConcurrentUpdateError`
            is raised: read the new events, apply them and decide again.
        """
        if not rows:
            raise ValueError("append() needs at least one event.")
        stamp = utc_now()
        with self._write() as con:
            self._require(con, session_id)
            last = self._last_seq(con, session_id)
            if last != after:
                raise ConcurrentUpdateError(
                    f"Session {session_id!r} has {last} events but the caller has seen {after}: "
                    "it was changed in another tab or process. Reload it."
                )
            out = make_events(rows, after=after, timestamp=stamp)
            self._insert_events(con, session_id, out)
        self._appends += 1
        if self._appends % self.checkpoint_every == 0:
            self.checkpoint()
        return out

    # ---- derived values: next query, estimated risk -----------------------------------------
    def get_query(self, session_id: str, version: int) -> int | None:
        """The next query recorded for state ``version`` (number of events), or None."""
        with self._read() as con:
            row = con.execute(
                "SELECT idx FROM queries WHERE session_id = ? AND version = ?", (session_id, int(version))
            ).fetchone()
        return None if row is None or type(row[0]) is not int else row[0]

    def put_query(self, session_id: str, version: int, index: int) -> int:
        """Record the next query of state ``version`` unless one is recorded already, and
        return the recorded one (the first writer wins, so two tabs agree).

        Nothing is written if the session has moved past ``version``; then ``index`` is
        returned unchanged.
        """
        with self._write() as con:
            self._require(con, session_id)
            if self._last_seq(con, session_id) != int(version):
                return int(index)
            row = con.execute(
                "SELECT version, idx FROM queries WHERE session_id = ?", (session_id,)
            ).fetchone()
            if row is not None and row[0] == int(version):
                return int(row[1])
            con.execute(
                "INSERT OR REPLACE INTO queries (session_id, version, idx) VALUES (?, ?, ?)",
                (session_id, int(version), int(index)),
            )
        return int(index)

    def put_risks(self, session_id: str, risks: dict[int, float]):
        """Record the estimated risk after label events ``{seq: risk}`` (non-finite ones are
        left out: SQLite has no NaN)."""
        with self._write() as con:
            self._require(con, session_id)
            con.executemany(
                "INSERT OR REPLACE INTO risks (session_id, seq, risk) VALUES (?, ?, ?)",
                [(session_id, int(k), float(v)) for k, v in risks.items() if math.isfinite(v)],
            )

    def risks(self, session_id: str) -> dict[int, float]:
        """All recorded estimated risks of the session, ``{seq: risk}``."""
        with self._read() as con:
            rows = con.execute("SELECT seq, risk FROM risks WHERE session_id = ?", (session_id,)).fetchall()
        # history only: a damaged value is left out rather than failing the page
        return {k: float(v) for k, v in rows if type(k) is int and isinstance(v, (int, float))}

    # ---- cached arrays ---------------------------------------------------------------------
    def put_array(self, session_id: str, name: str, array):
        """Cache a numeric array for the session (``.npy`` bytes, no pickle)."""
        blob = _npy_bytes(name, array)
        with self._write() as con:
            self._require(con, session_id)
            con.execute(
                "INSERT OR REPLACE INTO arrays (session_id, name, npy) VALUES (?, ?, ?)",
                (session_id, name, blob),
            )

    def get_array(self, session_id: str, name: str) -> np.ndarray | None:
        """The cached array, or None.

        Raises
        ------
        StoreCorruptError
            The stored bytes are damaged (not ``.npy``, or not matching their checksum).
        """
        with self._read() as con:
            self._require(con, session_id)
            row = con.execute(
                "SELECT npy FROM arrays WHERE session_id = ? AND name = ?", (session_id, name)
            ).fetchone()
        if row is None:
            return None
        try:
            return _npy_array(row[0])
        except (ValueError, OSError, EOFError) as exc:
            raise StoreCorruptError(
                f"Cached array {name!r} of session {session_id!r} in {self.path} is damaged "
                f"({exc}). Restore the store from a backup, or delete this session."
            ) from exc
