"""The store's schema: version 4 (current), versions 1 to 3 (kept to migrate and to test),
and the migrations 1 -> 2 -> 3 -> 4.

Version 2 adds the event kinds ``relabel``, ``unlabel``, ``unskip``, ``rename_class`` and
``delete_class`` (fixing labels and managing classes). SQLite cannot change a CHECK
constraint in place, so :func:`migrate_v1_to_v2` copies the events into a table with the new
constraint, drops the old one and renames the copy.

Version 3 makes the source of a label a column with a CHECK of its own
(:data:`LABEL_SOURCES`: ``initial``, ``selection``, ``similar`` and ``batch`` join ``queried``,
``chosen`` and ``accepted``; versions 1 and 2 wrote the first four as ``accepted`` or ``chosen``
with a JSON mark ``{"initial": true}`` / ``{"via": ...}`` in ``value``), and adds the integrity
chain (:mod:`labeler.store.chain`): every event stores ``hash`` (SHA-256 of its content and of
the previous event's hash), ``heads`` holds each session's last seq and hash, and the rows of
``queries`` and ``risks`` carry a digest of their own. :func:`migrate_v2_to_v3` rewrites the
marked sources into the column and computes the hashes of the old events.

Version 4 adds the event kind ``keep`` (a label the user reviewed and kept; it leaves the
suspects list) and the sources ``batch_guess`` and ``similar_guess`` (a pick of a batch or
"more like this" grid left on the model's guess). :func:`migrate_v3_to_v4` copies the events,
with their hashes unchanged, into a table with the wider CHECK constraints.

The store runs a migration in ONE transaction together with the new ``user_version``
(:meth:`labeler.store.Store._prepare`), so a file is either still at its old version with every
event or at version 4 with every event.
"""

import hashlib
import json

from .chain import event_hash, genesis, record_checksum, row_digest, split_npy_checksum, with_npy_checksum

_CHECKSUM = "checksum"  # key of the record's checksum inside the stored configuration

SCHEMA_VERSION = 4
EVENT_KINDS_V1 = ("label", "skip", "undo", "add_class", "setting", "accept")
#: The kinds of schema versions 2 and 3.
EVENT_KINDS_V3 = EVENT_KINDS_V1 + ("relabel", "unlabel", "unskip", "rename_class", "delete_class")
EVENT_KINDS = EVENT_KINDS_V3 + ("keep",)
#: Where a label came from (the ``source`` column of ``label``, ``accept`` and ``relabel``):
#: the point the learner asked for, a point the user picked, a prediction accepted, a label of
#: the data set drawn at creation, a lasso or box selection, "more like this" (neighbours of a
#: point), a batch of queries chosen together; and (version 4) a pick of a batch or "more like
#: this" grid left on the model's guess (the picker started on it and the user did not change it).
LABEL_SOURCES_V3 = ("queried", "chosen", "accepted", "initial", "selection", "similar", "batch")
LABEL_SOURCES = LABEL_SOURCES_V3 + ("batch_guess", "similar_guess")
#: The sources of schema versions 1 and 2.
LABEL_SOURCES_V2 = ("queried", "chosen", "accepted")
DEFAULT_STORE_ENV = "LABELER_STORE"
_SQLITE_MAGIC = b"SQLite format 3\x00"
_TABLES = ("sessions", "events", "arrays", "queries", "risks")
_TABLES_V3 = _TABLES + ("heads",)
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
              + _EVENTS_V2.format(table="events", kinds=_kinds_check(EVENT_KINDS_V3)).strip() + ";\n"
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
    con.execute(_EVENTS_V2.format(table="events_v2", kinds=_kinds_check(EVENT_KINDS_V3)))
    con.execute(f"INSERT INTO events_v2 ({_COLUMNS}) SELECT {_COLUMNS} FROM events ORDER BY session_id, seq")
    after = con.execute("SELECT count(*) FROM events_v2").fetchone()[0]
    if after != before:  # pragma: no cover - SQLite copies all rows or raises
        raise RuntimeError(f"migration copied {after} of {before} events; nothing was changed.")
    con.execute("DROP TABLE events")
    con.execute("ALTER TABLE events_v2 RENAME TO events")
    con.execute("PRAGMA user_version = 2")
    return after


def _sources_check(sources) -> str:
    return "CHECK (source IS NULL OR source IN (" + ", ".join(f"'{k}'" for k in sources) + "))"


_EVENTS_V3 = """
CREATE TABLE {table} (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    action     INTEGER NOT NULL CHECK (action >= 1 AND action <= seq),
    kind       TEXT NOT NULL
               {kinds},
    idx        INTEGER CHECK (idx IS NULL OR idx >= 0),
    label      TEXT,
    source     TEXT {sources},
    value      TEXT,
    timestamp  TEXT NOT NULL,
    hash       BLOB NOT NULL CHECK (length(hash) = 32),
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID
"""

_QUERIES_V3 = """
CREATE TABLE {table} (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    version    INTEGER NOT NULL CHECK (version >= 0),
    idx        INTEGER NOT NULL CHECK (idx >= 0),
    digest     BLOB NOT NULL
) WITHOUT ROWID
"""

_RISKS_V3 = """
CREATE TABLE {table} (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    risk       REAL NOT NULL,
    digest     BLOB NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID
"""

_ARRAYS_V3 = """
CREATE TABLE {table} (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    npy        BLOB NOT NULL,
    digest     BLOB NOT NULL,
    PRIMARY KEY (session_id, name)
) WITHOUT ROWID
"""

_HEADS_V3 = """
CREATE TABLE heads (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL CHECK (seq >= 0),
    hash       BLOB NOT NULL CHECK (length(hash) = 32)
) WITHOUT ROWID
"""

_V1_ARRAYS_START = _SCHEMA_V1.index("CREATE TABLE arrays")
_V1_QUERIES_START = _SCHEMA_V1.index("CREATE TABLE queries")

def _schema_v3_tables(kinds, sources) -> str:
    return (_SCHEMA_V1[:_V1_EVENTS_START]
            + _EVENTS_V3.format(table="events", kinds=_kinds_check(kinds),
                                sources=_sources_check(sources)).strip() + ";\n"
            + _ARRAYS_V3.format(table="arrays").strip() + ";\n"
            + _QUERIES_V3.format(table="queries").strip() + ";\n"
            + _RISKS_V3.format(table="risks").strip() + ";\n"
            + _HEADS_V3.strip() + ";\n")


#: The DDL of schema version 3 (kept to build version-3 stores in tests).
_SCHEMA_V3 = _schema_v3_tables(EVENT_KINDS_V3, LABEL_SOURCES_V3)
#: The DDL of schema version 4: version 3 with the events table's new kind and sources.
_SCHEMA_V4 = _schema_v3_tables(EVENT_KINDS, LABEL_SOURCES)


def query_digest(session_id: str, version: int, index: int) -> bytes:
    """The digest of a recorded query (a row of ``queries``)."""
    return row_digest("query", session_id, int(version), int(index))


def array_digest(session_id: str, name: str, blob: bytes) -> bytes:
    """The digest of a cached array's row (its session, name and stored bytes): a damaged
    name or blob is found when the session is opened."""
    return hashlib.sha256(row_digest("array", session_id, name) + bytes(blob)).digest()


def risk_digest(session_id: str, seq: int, risk: float) -> bytes:
    """The digest of a recorded estimated risk (a row of ``risks``)."""
    return row_digest("risk", session_id, int(seq), float(risk).hex())


def source_of_v2_event(kind: str, source, value_text):
    """``(source, value text)`` of an event written by schema version 1 or 2, as version 3
    writes it: an ``accept`` marked ``{"initial": true}`` has the source ``initial``, one marked
    ``{"via": v}`` (v one of ``selection``, ``similar``, ``batch``) the source ``v``; the mark
    leaves ``value``. Every other event is unchanged. The only place that reads those marks:
    the upgrade, and the reading of a read-only file of an older version."""
    if kind != "accept" or value_text is None:
        return source, value_text
    try:
        value = json.loads(value_text)
    except (TypeError, ValueError):
        return source, value_text  # damage: left to the fold to name
    if value == {"initial": True}:
        return "initial", None
    if isinstance(value, dict) and set(value) == {"via"} and value["via"] in ("selection", "similar", "batch"):
        return value["via"], None
    return source, value_text


def migrate_v2_to_v3(con) -> int:
    """Take a version-2 store to version 3 inside the caller's transaction (``BEGIN
    IMMEDIATE`` ... ``COMMIT``; the caller rolls back on any error).

    The events are copied, in order, into a table with the version-3 columns: the marked
    sources moved into ``source`` (:func:`source_of_v2_event`) and the chain's hashes
    computed; ``queries`` and ``risks`` are copied with their digests; ``heads`` gets every
    session's last event. Only when the copies hold every row are the old tables dropped and
    the copies renamed. Returns the number of events copied.

    Raises
    ------
    RuntimeError
        A copy does not hold every row (nothing is changed once the caller rolls back).
    """
    tables = ("events", "queries", "risks", "arrays")
    counts = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
    con.execute(_EVENTS_V3.format(table="events_v3", kinds=_kinds_check(EVENT_KINDS_V3),
                                  sources=_sources_check(LABEL_SOURCES_V3)))
    con.execute(_QUERIES_V3.format(table="queries_v3"))
    con.execute(_RISKS_V3.format(table="risks_v3"))
    con.execute(_ARRAYS_V3.format(table="arrays_v3"))
    con.execute(_HEADS_V3)
    heads = {}
    rows = []
    for sid, seq, action, kind, idx, label, source, value, stamp in con.execute(
            f"SELECT {_COLUMNS} FROM events ORDER BY session_id, seq").fetchall():
        source, value = source_of_v2_event(kind, source, value)
        prev = heads[sid][1] if sid in heads else genesis(sid)
        digest = event_hash(prev, sid, seq, action, kind, idx, label, source, value, stamp)
        heads[sid] = (seq, digest)
        rows.append((sid, seq, action, kind, idx, label, source, value, stamp, digest))
    con.executemany(f"INSERT INTO events_v3 ({_COLUMNS}, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    con.executemany("INSERT INTO queries_v3 (session_id, version, idx, digest) VALUES (?, ?, ?, ?)",
                    [(sid, v, i, query_digest(sid, v, i)) for sid, v, i in
                     con.execute("SELECT session_id, version, idx FROM queries").fetchall()])
    con.executemany("INSERT INTO risks_v3 (session_id, seq, risk, digest) VALUES (?, ?, ?, ?)",
                    [(sid, q, r, risk_digest(sid, q, r)) for sid, q, r in
                     con.execute("SELECT session_id, seq, risk FROM risks").fetchall()])
    # every session has a head (seq 0 and the genesis hash when it has no event)
    con.executemany("INSERT INTO heads (session_id, seq, hash) VALUES (?, ?, ?)",
                    [(sid, *heads.get(sid, (0, genesis(sid)))) for (sid,) in
                     con.execute("SELECT id FROM sessions").fetchall()])
    # version 3 checks every record and cached array: those written before checksums get one
    for sid, name, dataset, config, created in con.execute(
            "SELECT id, name, dataset, config, created FROM sessions").fetchall():
        try:
            cfg = json.loads(config)
        except (TypeError, ValueError):
            continue  # damage: named when the session is opened
        if isinstance(cfg, dict) and _CHECKSUM not in cfg and all(
                isinstance(v, str) for v in (sid, name, dataset, created)):
            cfg[_CHECKSUM] = record_checksum(sid, name, dataset, created, cfg)
            con.execute("UPDATE sessions SET config = ? WHERE id = ?",
                        (json.dumps(cfg, allow_nan=False, sort_keys=True), sid))
    for sid, name in con.execute("SELECT session_id, name FROM arrays").fetchall():  # one blob at a time
        blob = con.execute("SELECT npy FROM arrays WHERE session_id = ? AND name = ?", (sid, name)).fetchone()[0]
        if isinstance(blob, bytes) and split_npy_checksum(blob)[1] is None:
            blob = with_npy_checksum(blob)
        con.execute("INSERT INTO arrays_v3 (session_id, name, npy, digest) VALUES (?, ?, ?, ?)",
                    (sid, name, blob, array_digest(sid, name, blob) if isinstance(blob, bytes) else b""))
    for table in tables:
        after = con.execute(f"SELECT count(*) FROM {table}_v3").fetchone()[0]
        if after != counts[table]:  # pragma: no cover - SQLite copies all rows or raises
            raise RuntimeError(f"migration copied {after} of {counts[table]} rows of {table}; nothing was changed.")
    for table in tables:
        con.execute(f"DROP TABLE {table}")
        con.execute(f"ALTER TABLE {table}_v3 RENAME TO {table}")
    con.execute("PRAGMA user_version = 3")
    return counts["events"]


_COLUMNS_V3 = _COLUMNS + ", hash"


def migrate_v3_to_v4(con) -> int:
    """Take a version-3 store to version 4 inside the caller's transaction (``BEGIN
    IMMEDIATE`` ... ``COMMIT``; the caller rolls back on any error).

    The events, hashes included (their content does not change, so the chain still
    verifies), are copied into a table with the version-4 CHECK constraints (the kind
    ``keep``, the sources ``batch_guess`` and ``similar_guess``); only when the copy holds every
    event is the old table dropped and the copy renamed. Returns the number of events copied.

    Raises
    ------
    RuntimeError
        The copy does not hold every event (nothing is changed once the caller rolls back).
    """
    before = con.execute("SELECT count(*) FROM events").fetchone()[0]
    con.execute(_EVENTS_V3.format(table="events_v4", kinds=_kinds_check(EVENT_KINDS),
                                  sources=_sources_check(LABEL_SOURCES)))
    con.execute(f"INSERT INTO events_v4 ({_COLUMNS_V3}) SELECT {_COLUMNS_V3} FROM events "
                "ORDER BY session_id, seq")
    after = con.execute("SELECT count(*) FROM events_v4").fetchone()[0]
    if after != before:  # pragma: no cover - SQLite copies all rows or raises
        raise RuntimeError(f"migration copied {after} of {before} events; nothing was changed.")
    con.execute("DROP TABLE events")
    con.execute("ALTER TABLE events_v4 RENAME TO events")
    con.execute("PRAGMA user_version = 4")
    return after
