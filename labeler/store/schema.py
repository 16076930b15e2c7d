"""The store's schema: version 2 (current), version 1 (kept to migrate and to test), and the
migration from 1 to 2.

Version 2 adds the event kinds ``relabel``, ``unlabel``, ``unskip``, ``rename_class`` and
``delete_class`` (fixing labels and managing classes). SQLite cannot change a CHECK
constraint in place, so :data:`MIGRATE_V1_TO_V2` copies the events into a table with the new
constraint, drops the old one and renames the copy: the store runs it in ONE transaction
together with the new ``user_version`` (:meth:`labeler.store.Store._prepare`), so a file is
either still version 1 with every event or version 2 with every event. Nothing else changes:
every version-1 event is a valid version-2 event with the same meaning.
"""

SCHEMA_VERSION = 2
EVENT_KINDS_V1 = ("label", "skip", "undo", "add_class", "setting", "accept")
EVENT_KINDS = EVENT_KINDS_V1 + ("relabel", "unlabel", "unskip", "rename_class", "delete_class")
LABEL_SOURCES = ("queried", "chosen", "accepted")
DEFAULT_STORE_ENV = "LABELER_STORE"
_SQLITE_MAGIC = b"SQLite format 3\x00"
_TABLES = ("sessions", "events", "arrays", "queries", "risks")
_BUSY_TIMEOUT_S = 30.0


def _kinds_check(kinds) -> str:
    return "CHECK (kind IN (" + ", ".join(f"'{k}'" for k in kinds) + "))"


# The DDL of schema version 1, as version 1 wrote it (do not edit: tests build v1 stores from it).
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

_EVENTS_V2 = """
CREATE TABLE {table} (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    action     INTEGER NOT NULL CHECK (action >= 1 AND action <= seq),
    kind       TEXT NOT NULL
               {kinds},
    idx        INTEGER CHECK (idx IS NULL OR idx >= 0),
    label      TEXT,
    source     TEXT CHECK (source IS NULL OR source IN ('queried', 'chosen', 'accepted')),
    value      TEXT,
    timestamp  TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID
"""

_V1_EVENTS_START = _SCHEMA_V1.index("CREATE TABLE events")
_V1_EVENTS_END = _SCHEMA_V1.index("CREATE TABLE arrays")

#: The DDL of schema version 2: version 1 with the events table's new kinds.
_SCHEMA_V2 = (_SCHEMA_V1[:_V1_EVENTS_START]
              + _EVENTS_V2.format(table="events", kinds=_kinds_check(EVENT_KINDS)).strip() + ";\n"
              + _SCHEMA_V1[_V1_EVENTS_END:])

_COLUMNS = "session_id, seq, action, kind, idx, label, source, value, timestamp"


def migrate_v1_to_v2(con) -> int:
    """Take a version-1 store to version 2 inside the caller's transaction (``BEGIN
    IMMEDIATE`` ... ``COMMIT``; the caller rolls back on any error).

    The events are copied into a table with the version-2 CHECK constraint; only when the
    copy holds every event is the old table dropped and the copy renamed. ``user_version`` is
    part of the same transaction. Returns the number of events copied.

    Raises
    ------
    RuntimeError
        The copy does not hold every event (nothing is changed once the caller rolls back).
    """
    before = con.execute("SELECT count(*) FROM events").fetchone()[0]
    con.execute(_EVENTS_V2.format(table="events_v2", kinds=_kinds_check(EVENT_KINDS)))
    con.execute(f"INSERT INTO events_v2 ({_COLUMNS}) SELECT {_COLUMNS} FROM events ORDER BY session_id, seq")
    after = con.execute("SELECT count(*) FROM events_v2").fetchone()[0]
    if after != before:  # pragma: no cover - SQLite copies all rows or raises
        raise RuntimeError(f"migration copied {after} of {before} events; nothing was changed.")
    con.execute("DROP TABLE events")
    con.execute("ALTER TABLE events_v2 RENAME TO events")
    con.execute("PRAGMA user_version = 2")
    return after
