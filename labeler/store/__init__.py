"""SQLite store of labelling sessions: one file, an append-only event log per session.

The store keeps, per session, the configuration it was created with (JSON, with every "auto"
setting already resolved to a number) and the list of events the user produced: ``label``,
``accept`` (bulk accept of predictions), ``skip``, ``undo``, ``add_class``, ``setting``, and
since schema version 2 ``relabel`` and ``unlabel`` (fixing any earlier label, one point or a
batch), ``unskip``, ``rename_class`` and ``delete_class``. Nothing else is needed to rebuild a
session: :class:`LogState` folds the events into the net labels, skipped points, classes and
settings, and the session replays the same operations on its learner. Arrays that are
expensive to recompute (a t-SNE layout) may be cached as ``.npy`` bytes. There is no pickle
anywhere (unsafe on untrusted files).

File format
-----------
* SQLite in WAL mode (readers never block the writer, two browser tabs or two processes may
  open the same file), ``busy_timeout`` so concurrent writers wait instead of failing,
  ``foreign_keys`` on (deleting a session deletes its events), ``synchronous=FULL``.
* ``PRAGMA user_version`` holds the schema version (:data:`SCHEMA_VERSION`, 4). A file written
  by a newer version raises :class:`StoreVersionError` (older programs refuse newer files this
  way: "written by a newer version of the labeller ... Upgrade the labeller"). A version-1 or
  version-2 or version-3 file is upgraded when it is opened for writing, in one transaction
  that keeps every event (:func:`labeler.store.schema.migrate_v1_to_v2`,
  :func:`~labeler.store.schema.migrate_v2_to_v3`, :func:`~labeler.store.schema.migrate_v3_to_v4`:
  version 4 adds the event kind ``keep`` and the sources ``batch_guess``, ``similar_guess``); a read-only older file is read as it is
  (its marked sources read as version 3 stores them, without a chain to check). A file that is not a database, is empty,
  truncated or damaged, or is some other application's database raises
  :class:`StoreCorruptError`. In both cases the file is not modified: every check runs before
  the first write. Damage found later (text that is not UTF-8, JSON that does not parse, a
  field of the wrong type, a session record or cached array that no longer matches its
  SHA-256 checksum) raises :class:`StoreCorruptError` too, with what to do; never a raw
  ``sqlite3``, ``UnicodeDecodeError`` or ``JSONDecodeError``.
* Integrity chain (:mod:`labeler.store.chain`, schema version 3): SQLite keeps no checksums of
  its data, so every event stores the SHA-256 of its content and of the previous event's hash,
  and ``heads`` keeps each session's last seq and hash. Reading the events checks the chain;
  :class:`ChainBrokenError` names the first damaged or missing event and carries the intact
  events before it (``LabelingSession.open(..., up_to_damage=True)`` opens them read-only).
  The chain detects damage, not a deliberate rewrite: it uses no key.
* Events are built with the typed constructors of :mod:`labeler.store.events` (``Label``,
  ``Accept``, ``Setting``, ...), never as dicts. A label's source is a column with a CHECK
  (:data:`LABEL_SOURCES`).
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
* One transaction per user action (``BEGIN IMMEDIATE`` ... ``COMMIT``); settings changed
  together (a value and its "auto" flag) are one action. :meth:`Store.append`
  only commits when the session's last event is the one the caller has seen, so two tabs
  cannot interleave half-applied actions: the late writer gets :class:`ConcurrentUpdateError`,
  catches up with the new events and decides again.

Tables (schema version 4)::

    sessions(id TEXT PK, name, dataset, config JSON with its checksum, created ISO-8601 UTC)
    events(session_id FK, seq, action, kind, idx, label, source, value JSON, timestamp, hash)
        PK (session_id, seq); ``action`` is the seq of the first event written by the same
        user action (an accepted batch, a relabelled or unlabelled batch, settings changed
        together share it); an undo has value {"undoes": action}, a relabel and a rename
        {"from": old class}, a keep {"score": s, "suggested": class}; ``source`` one of
        LABEL_SOURCES; ``hash`` the chain's
    heads(session_id PK FK, seq, hash)        the session's last event and its hash
    arrays(session_id FK, name, npy BLOB, digest)   cached arrays in .npy format
        (allow_pickle=False) with a SHA-256 trailer; ``digest`` covers session, name, bytes
    queries(session_id PK FK, version, idx, digest)   the next query shown at state
        ``version`` (the number of events): every tab, and a reopened session, shows the same
        point
    risks(session_id FK, seq, risk, digest)   estimated risk of the model right after the
        label event ``seq`` (written after the learner update; history only)
"""


from .events import (
    Accept,
    AddClass,
    DeleteClass,
    GUESS_SOURCES,
    Keep,
    Label,
    NewEvent,
    Relabel,
    RenameClass,
    Setting,
    Skip,
    Undo,
    Unlabel,
    Unskip,
)
from .faults import (
    ChainBrokenError,
    ConcurrentUpdateError,
    StoreBusyError,
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
    StoreVersionError,
    StoreWriteError,
    UnknownSessionError,
    default_store_path,
    store_fault,
    utc_now,
)
from .log import (
    BATCH_KINDS,
    UNDOABLE_KINDS,
    Change,
    Event,
    KeepRecord,
    LabelRecord,
    LogState,
    SessionInfo,
    SessionRecord,
    group_actions,
    make_events,
    new_session_id,
)
from .schema import DEFAULT_STORE_ENV, EVENT_KINDS, EVENT_KINDS_V1, LABEL_SOURCES, SCHEMA_VERSION
from .store import Store

__all__ = [
    "SCHEMA_VERSION",
    "EVENT_KINDS",
    "EVENT_KINDS_V1",
    "UNDOABLE_KINDS",
    "BATCH_KINDS",
    "LABEL_SOURCES",
    "DEFAULT_STORE_ENV",
    "Store",
    "SessionInfo",
    "SessionRecord",
    "Event",
    "LabelRecord",
    "KeepRecord",
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
    "ChainBrokenError",
    "NewEvent",
    "Label",
    "Accept",
    "Skip",
    "Unskip",
    "Relabel",
    "Unlabel",
    "Undo",
    "AddClass",
    "RenameClass",
    "DeleteClass",
    "Setting",
    "Keep",
    "GUESS_SOURCES",
    "StoreWriteError",
    "StoreFullError",
    "StoreReadOnlyError",
    "StoreBusyError",
    "store_fault",
    "UnknownSessionError",
    "ConcurrentUpdateError",
]
