"""Schema version 1 of the store: tables, event kinds and label sources."""

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
