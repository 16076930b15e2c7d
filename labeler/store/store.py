"""The SQLite store: sessions, their event logs, cached arrays and recorded queries."""

import hashlib
import io
import json
import math
import os
import secrets
import sqlite3
import threading
import urllib.parse
import weakref
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

import numpy as np

from .chain import event_hash, genesis, record_checksum, split_npy_checksum, with_npy_checksum
from .faults import ChainBrokenError, ConcurrentUpdateError, StoreCorruptError, StoreError, StoreReadOnlyError, StoreVersionError, UnknownSessionError, _ISO_STAMP, _check_size, _read_only_message, _rollback, store_fault, utc_now
from .log import UNDOABLE_KINDS, Event, SessionInfo, SessionRecord, make_events, new_session_id
from .schema import SCHEMA_VERSION, _BUSY_TIMEOUT_S, _SCHEMA_V4, _SQLITE_MAGIC, _TABLES, _TABLES_V3, migrate_v1_to_v2, migrate_v2_to_v3, migrate_v3_to_v4, array_digest, query_digest, risk_digest, source_of_v2_event

#: Stores open in this process, per file (device, inode): see :meth:`Store._hold_inode`.
_OPEN_INODES: dict[tuple[int, int], int] = {}
_OPEN_LOCK = threading.Lock()


def _release_inode(key: tuple[int, int]):
    with _OPEN_LOCK:
        left = _OPEN_INODES.get(key, 0) - 1
        if left > 0:
            _OPEN_INODES[key] = left
        else:
            _OPEN_INODES.pop(key, None)


def _npy_bytes(name: str, array) -> bytes:
    """``.npy`` bytes of a numeric array (no pickle) followed by their SHA-256 (np.load
    ignores trailing bytes, so older versions still read them)."""
    arr = np.asarray(array)
    if arr.dtype == object:
        raise TypeError(f"Only numeric arrays can be stored; {name!r} has dtype object.")
    buf = io.BytesIO()
    np.save(buf, arr, allow_pickle=False)
    return with_npy_checksum(buf.getvalue())


def _npy_checked(blob, required: bool) -> bytes:
    """The ``.npy`` bytes of a stored blob; ValueError when they do not match their checksum
    (or have none where ``required``: every blob of a version-3 store has one)."""
    if not isinstance(blob, bytes):
        raise ValueError("the stored value is not bytes")
    data, digest = split_npy_checksum(blob)
    if digest is None and required:
        raise ValueError("the bytes have lost their checksum")
    if digest is not None and hashlib.sha256(data).digest() != digest:
        raise ValueError("the bytes do not match their checksum")
    return data


def _npy_array(blob: bytes, required: bool = True) -> np.ndarray:
    """Inverse of :func:`_npy_bytes`; ValueError when the checksum does not match."""
    return np.load(io.BytesIO(_npy_checked(blob, required)), allow_pickle=False)


_CHECKSUM = "checksum"  # key of the record's checksum inside the stored configuration
_record_checksum = record_checksum


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
    read_only : bool, default False
        Open an existing file read-only even where it could be written (e.g. to look at a
        session whose event chain is damaged, :class:`ChainBrokenError`).

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

    def __init__(self, path, *, read_only: bool = False):
        self.path = Path(path).expanduser()
        self._lock = threading.RLock()
        self._con: sqlite3.Connection | None = None
        self._force_read_only = bool(read_only)
        self.read_only = False
        self._version = SCHEMA_VERSION
        self._appends = 0
        self._dirty = False  # wrote since the last checkpoint
        self._release = lambda: None  # set by _hold_inode
        self._open()

    # ---- opening ---------------------------------------------------------------------------
    def _open(self):
        path = self.path
        if path.is_dir():
            raise IsADirectoryError(
                f"Store path {path} is a directory; give a file name, e.g. {path / 'labeler.sqlite'}."
            )
        exists = path.exists()
        if self._force_read_only and not exists:
            raise UnknownSessionError(f"No store {path}: nothing to open read-only.")
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
            self._hold_inode(check_header=True)
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
            self._create_file(path)
            exists = True
            self._hold_inode(check_header=False)
        # a store in WAL mode is written through two more files in its folder (-wal, -shm)
        self.read_only = self._force_read_only or (
            exists and not (os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)))
        # BaseException: the inode count and the connection are released and the error
        # (KeyboardInterrupt too) re-raised at once; nothing slow runs here
        try:
            con = self._connect()
        except BaseException:
            self._release()
            raise
        try:
            self._check(con)
            self._prepare(con)
            self._version = con.execute("PRAGMA user_version").fetchone()[0]
        except BaseException:
            con.close()
            self._release()
            raise
        self._con = con

    def _hold_inode(self, check_header: bool):
        """Count this store among the process's open stores of the file, and read the file's
        header (checked: an SQLite file, not truncated) only when none is open yet.

        POSIX advisory locks belong to the process: closing ANY descriptor of the file drops
        the locks of every SQLite connection of the process to it (SQLite documents this as a
        way to corrupt a database). Another process that opens and closes the store then
        takes itself for the last user, checkpoints and deletes the write-ahead log, and the
        next writes of this process are lost. So the header is read with a descriptor of our
        own only while this process has no connection to the file; a second store of the same
        file (e.g. the list of sessions, drawn on every page of the app) skips that read: the
        file was checked when the first one opened it.
        """
        path = self.path
        st = path.stat()
        key = (st.st_dev, st.st_ino)
        with _OPEN_LOCK:
            if check_header and not _OPEN_INODES.get(key):
                with open(path, "rb") as fh:
                    head = fh.read(100)
                if head[:len(_SQLITE_MAGIC)] != _SQLITE_MAGIC:
                    raise StoreCorruptError(
                        f"{path} is not an SQLite database (bad header); it was left unchanged. "
                        "Restore it from a backup, or point the labeller at another store file "
                        "(--store or LABELER_STORE)."
                    )
                _check_size(path, head)
            _OPEN_INODES[key] = _OPEN_INODES.get(key, 0) + 1
        # released on close, or when the object is dropped without closing
        self._release = weakref.finalize(self, _release_inode, key)

    def _create_file(self, path: Path):
        """Make a new, empty store at ``path`` all at once: never a half-made file.

        The schema is written into a hidden file beside ``path``, which is closed (SQLite then
        folds and removes its write-ahead log) and linked into place; a process killed before
        the link leaves only the hidden file, never an empty or partial store. If another
        process made the store meanwhile, its file is kept.
        """
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.creating")
        try:
            kwargs = dict(timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
            con = sqlite3.connect(str(tmp), **kwargs)
            try:
                self._prepare(con)
            finally:
                con.close()
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass  # made by another process in the meantime: use theirs
        except sqlite3.Error as exc:
            raise store_fault(exc, path, opening=True) from exc
        finally:
            for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
                try:
                    leftover.unlink()
                except FileNotFoundError:
                    pass

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
        needed = set(_TABLES_V3 if version >= 3 else _TABLES)
        if version >= 1 and not needed <= tables:
            raise StoreCorruptError(
                f"{path} claims schema version {version} but lacks the tables "
                f"{sorted(needed - tables)}, so it is damaged; it was left unchanged. "
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
                    for stmt in _SCHEMA_V4.split(";"):
                        if stmt.strip():
                            con.execute(stmt)
                    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                else:  # a store of an older version: upgraded in this transaction, every event kept
                    if version == 1:
                        migrate_v1_to_v2(con)
                    if version <= 2:
                        migrate_v2_to_v3(con)
                    if version <= 3:
                        migrate_v3_to_v4(con)
                con.execute("COMMIT")
            except BaseException:  # a rollback, then the error (Ctrl-C too) goes on at once
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
                self._release()

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
                except BaseException:  # a rollback, then the error (Ctrl-C too) goes on at once
                    _rollback(con)
                    raise
            except (sqlite3.OperationalError, UnicodeDecodeError, json.JSONDecodeError) as exc:
                raise store_fault(exc, self.path) from exc
            except sqlite3.DatabaseError as exc:
                if type(exc) is not sqlite3.DatabaseError:
                    raise
                raise store_fault(exc, self.path) from exc

    @contextmanager
    def _snapshot(self):
        """Reads that see one state of the file (one read transaction: another process's
        commit between two SELECTs is not half seen)."""
        with self._read() as con:
            con.execute("BEGIN")
            try:
                yield con
            finally:
                _rollback(con)

    def _require(self, con, session_id):
        if not isinstance(session_id, str):
            raise UnknownSessionError(f"Session id must be a string; got {session_id!r}.")
        row = con.execute(
            "SELECT id, name, dataset, config, created FROM sessions WHERE id = ?", (session_id,)
        ).fetchone()
        if row is not None and row[0] != session_id:  # a damaged index pointed at another row
            raise StoreCorruptError(
                f"{self.path} is damaged: looking up session {session_id!r} finds another row. "
                "Restore the store from a backup (`labeler backup` makes one)."
            )
        if row is None and con.execute("SELECT 1 FROM events WHERE session_id = ? LIMIT 1",
                                       (session_id,)).fetchone() is not None:
            raise StoreCorruptError(
                f"The record of session {session_id!r} in {self.path} is missing or damaged, but "
                "its events are there. Restore the store from a backup (`labeler backup` makes one)."
            )
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
        :func:`make_events` ``([Accept(...), ...], after=0)``) and their ``risks`` ``{seq: risk}`` are
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
                "INSERT INTO arrays (session_id, name, npy, digest) VALUES (?, ?, ?, ?)",
                [(sid, k, b, array_digest(sid, k, b)) for k, b in blobs.items()],
            )
            self._insert_events(con, sid, events, genesis(sid))
            self._insert_risks(con, sid, risks or {})
        self.checkpoint()  # a clean point: the new session is in the main file
        return sid

    @staticmethod
    def _insert_events(con, session_id: str, events: list[Event], prev: bytes):
        """Insert events after the one whose hash is ``prev``, each with its chain hash, and
        move the session's head (same transaction)."""
        rows = []
        for ev in events:
            value = None if ev.value is None else _json_dumps(ev.value)
            prev = event_hash(prev, session_id, ev.seq, ev.action, ev.kind, ev.index, ev.label,
                              ev.source, value, ev.timestamp)
            rows.append((session_id, ev.seq, ev.action, ev.kind, ev.index, ev.label, ev.source,
                         value, ev.timestamp, prev))
        con.executemany(
            "INSERT INTO events (session_id, seq, action, kind, idx, label, source, value, "
            "timestamp, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
        seq = events[-1].seq if events else 0
        con.execute("INSERT OR REPLACE INTO heads (session_id, seq, hash) VALUES (?, ?, ?)",
                    (session_id, seq, prev))

    @staticmethod
    def _insert_risks(con, session_id: str, risks: dict):
        con.executemany(
            "INSERT OR REPLACE INTO risks (session_id, seq, risk, digest) VALUES (?, ?, ?, ?)",
            [(session_id, int(k), float(v), risk_digest(session_id, k, v))
             for k, v in risks.items() if math.isfinite(v)])

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
        if stored is None and self._version >= 3:  # version 3 gave every record a checksum
            raise StoreCorruptError(
                f"The record of session {session_id!r} in {self.path} is damaged (its checksum is "
                "missing). Restore the store from a backup, or delete this session; the other "
                "sessions are not affected."
            )
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
        # net labels = labels given (label, accept) minus labels taken (unlabel), leaving out
        # undone actions; undo only reverts the top of the stack of undoable actions, so the
        # count follows from a fold over (action, kind, number of events) alone
        delta = {"label": 1, "accept": 1, "unlabel": -1}
        stack: list[int] = []
        for kind, count in con.execute(
            "SELECT min(kind), count(*) FROM events WHERE session_id = ? "
            "GROUP BY action ORDER BY action",
            (sid,),
        ):
            if kind in UNDOABLE_KINDS:
                stack.append(delta.get(kind, 0) * count)
            elif kind == "undo" and stack:
                stack.pop()
        return sum(stack)

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
        from ..atomic import atomic_target

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
        """The session's events with ``seq > after``, in order, their integrity chain checked
        (:mod:`labeler.store.chain`) from event ``after`` to the session's head.

        Raises
        ------
        ChainBrokenError
            An event does not match its hash, or events are missing before the head: the
            error names the first bad event and carries the good events before it.
        StoreCorruptError
            The session's head is missing or damaged.
        """
        after = int(after)
        with self._snapshot() as con:
            self._require(con, session_id)
            if self._version < 3:  # a read-only file of an older version: no chain yet
                rows = con.execute(
                    "SELECT seq, action, kind, idx, label, source, value, timestamp FROM events "
                    "WHERE session_id = ? AND seq > ? ORDER BY seq", (session_id, after)).fetchall()
                return [self._event(session_id, (*row[:5], *source_of_v2_event(row[2], row[5], row[6]), row[7]))
                        for row in rows]
            # the stored session_id too: a damaged key can still be found by the search
            rows = con.execute(
                "SELECT session_id, seq, action, kind, idx, label, source, value, timestamp, hash "
                "FROM events WHERE session_id = ? AND seq > ? ORDER BY seq", (session_id, after)).fetchall()
            head = con.execute("SELECT seq, hash, session_id FROM heads WHERE session_id = ?",
                               (session_id,)).fetchone()
            if head is not None and head[2] != session_id:  # a damaged key found by the search
                head = None
            if after == 0:
                prev = genesis(session_id)
            else:
                row = con.execute("SELECT hash FROM events WHERE session_id = ? AND seq = ?",
                                  (session_id, after)).fetchone()
                prev = None if row is None else row[0]
        return self._verified(session_id, after, prev, rows, head)

    def _verified(self, session_id, after, prev, rows, head) -> list[Event]:
        """Walk the chain over ``rows`` (events ``after + 1, ...``) from ``prev``; check the
        head; return the events or raise :class:`ChainBrokenError`."""
        good: list[Event] = []

        def broken(seq, why):
            return ChainBrokenError(
                f"Session {session_id!r} in {self.path} is damaged from event {seq} on ({why}); "
                f"the {len(good) + after} events before it are intact and can still be viewed and "
                "exported read-only (LabelingSession.open(..., up_to_damage=True)). Restore the "
                "store from a backup (`labeler backup` makes one) to get the rest back.",
                session_id=session_id, first_bad=seq, good_events=good, reason=why)

        if prev is None:
            raise broken(after, f"event {after} is missing")
        for k, row in enumerate(rows):
            seq = after + 1 + k
            owner, *fields, stored = row
            try:
                digest = event_hash(prev, owner, *fields)
            except (TypeError, ValueError):  # a field of a type JSON cannot hold (a blob)
                digest = None
            if owner != session_id or fields[0] != seq or digest is None or digest != stored:
                raise broken(seq, "it does not match its hash" if fields[0] == seq
                             else f"event {seq} is missing or out of place")
            try:
                good.append(self._event(session_id, tuple(fields)))
            except StoreCorruptError:  # pragma: no cover - a hashed event was checked when written
                raise broken(seq, "a field has the wrong type") from None
            prev = stored
        last = after + len(rows)
        if head is None or type(head[0]) is not int:
            raise broken(last + 1, "the session's head record is missing or damaged")
        if head[0] > last:
            raise broken(last + 1, f"the log ends at event {last} but its head says {head[0]}")
        if head[0] < last or head[1] != prev:
            raise broken(last + 1, "the session's head record does not match its last event")
        return good

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

    def append(self, session_id: str, rows, *, after: int) -> list[Event]:
        """Append the events of one user action in one transaction and return them.

        Parameters
        ----------
        session_id : str
        rows : list of event constructors
            :mod:`labeler.store.events` (``Label``, ``Accept``, ``Setting``, ...). All get the
            same timestamp and ``action`` (the seq of the first).
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
            head = con.execute("SELECT seq, hash FROM heads WHERE session_id = ?", (session_id,)).fetchone()
            if head is None or head[0] != last:
                raise StoreCorruptError(
                    f"The event log of session {session_id!r} in {self.path} is damaged (its head "
                    f"record {head!r} does not match its {last} events); nothing was written. "
                    "Restore the store from a backup."
                )
            self._insert_events(con, session_id, out, head[1])
        self._appends += 1
        if self._appends % self.checkpoint_every == 0:
            self.checkpoint()
        return out

    # ---- derived values: next query, estimated risk -----------------------------------------
    def get_query(self, session_id: str, version: int) -> int | None:
        """The next query recorded for state ``version`` (number of events), or None."""
        with self._read() as con:
            if self._version < 3:
                row = con.execute("SELECT idx FROM queries WHERE session_id = ? AND version = ?",
                                  (session_id, int(version))).fetchone()
                return None if row is None or type(row[0]) is not int else row[0]
            row = con.execute(
                "SELECT idx, digest FROM queries WHERE session_id = ? AND version = ?",
                (session_id, int(version))).fetchone()
        # a damaged record is not used: the query is computed again (the same rule)
        if row is None or type(row[0]) is not int or row[1] != query_digest(session_id, version, row[0]):
            return None
        return row[0]

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
                "SELECT version, idx, digest FROM queries WHERE session_id = ?", (session_id,)
            ).fetchone()
            if row is not None and row[0] == int(version) and type(row[1]) is int \
                    and row[2] == query_digest(session_id, version, row[1]):
                return int(row[1])
            con.execute(
                "INSERT OR REPLACE INTO queries (session_id, version, idx, digest) VALUES (?, ?, ?, ?)",
                (session_id, int(version), int(index), query_digest(session_id, version, index)),
            )
        return int(index)

    def put_risks(self, session_id: str, risks: dict[int, float]):
        """Record the estimated risk after label events ``{seq: risk}`` (non-finite ones are
        left out: SQLite has no NaN)."""
        with self._write() as con:
            self._require(con, session_id)
            self._insert_risks(con, session_id, risks)

    def risks(self, session_id: str) -> dict[int, float]:
        """All recorded estimated risks of the session, ``{seq: risk}``."""
        with self._read() as con:
            if self._version < 3:
                rows = [(*r, None) for r in con.execute(
                    "SELECT seq, risk FROM risks WHERE session_id = ?", (session_id,)).fetchall()]
            else:
                rows = con.execute("SELECT seq, risk, digest FROM risks WHERE session_id = ?",
                                   (session_id,)).fetchall()
        # history only: a damaged value (not matching its digest) is left out, never shown
        return {k: float(v) for k, v, d in rows if type(k) is int and isinstance(v, (int, float))
                and (self._version < 3 or d == risk_digest(session_id, k, v))}

    # ---- cached arrays ---------------------------------------------------------------------
    def put_array(self, session_id: str, name: str, array):
        """Cache a numeric array for the session (``.npy`` bytes, no pickle)."""
        blob = _npy_bytes(name, array)
        with self._write() as con:
            self._require(con, session_id)
            con.execute(
                "INSERT OR REPLACE INTO arrays (session_id, name, npy, digest) VALUES (?, ?, ?, ?)",
                (session_id, name, blob, array_digest(session_id, name, blob)),
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
            row = self._array_row(con, session_id, name)
        if row is None:
            return None
        try:
            self._check_array_digest(session_id, name, row)
            return _npy_array(row[0], required=self._version >= 3)
        except (ValueError, OSError, EOFError) as exc:
            raise StoreCorruptError(
                f"Cached array {name!r} of session {session_id!r} in {self.path} is damaged "
                f"({exc}). Restore the store from a backup, or delete this session."
            ) from exc

    def check_arrays(self, session_id: str):
        """Check every cached array of the session against its checksum (opening a session
        does this).

        Raises
        ------
        StoreCorruptError
            An array's bytes are damaged; names it.
        """
        with self._read() as con:
            self._require(con, session_id)
            if con.execute("SELECT 1 FROM arrays WHERE session_id NOT IN (SELECT id FROM sessions) "
                           "LIMIT 1").fetchone() is not None:  # a damaged key: whose array is it?
                raise StoreCorruptError(
                    f"{self.path} is damaged: a cached array belongs to no session (its session id "
                    "was changed). Restore the store from a backup (`labeler backup` makes one)."
                )
            names = [r[0] for r in con.execute("SELECT name FROM arrays WHERE session_id = ?",
                                               (session_id,)).fetchall()]
            for name in names:
                if not isinstance(name, str):
                    raise StoreCorruptError(f"A cached array of session {session_id!r} in {self.path} "
                                            "is damaged (its name). Restore the store from a backup.")
                row = self._array_row(con, session_id, name)
                try:
                    if row is None:
                        raise ValueError("it is listed but cannot be read")
                    self._check_array_digest(session_id, name, row)
                    _npy_checked(row[0], required=self._version >= 3)
                except ValueError as exc:
                    raise StoreCorruptError(
                        f"Cached array {name!r} of session {session_id!r} in {self.path} is damaged "
                        f"({exc}). Restore the store from a backup, or delete this session."
                    ) from None

    def _array_row(self, con, session_id, name):
        if self._version < 3:
            row = con.execute("SELECT npy FROM arrays WHERE session_id = ? AND name = ?",
                              (session_id, name)).fetchone()
            return None if row is None else (row[0], None)
        row = con.execute("SELECT npy, digest, session_id, name FROM arrays WHERE session_id = ? "
                          "AND name = ?", (session_id, name)).fetchone()
        if row is not None and (row[2], row[3]) != (session_id, name):  # a damaged key found anyway
            return (row[0], None)
        return None if row is None else row[:2]

    def _check_array_digest(self, session_id, name, row):
        """ValueError when a version-3 array row does not match its digest (its session, name
        and bytes)."""
        if self._version >= 3 and (not isinstance(row[0], bytes)
                                   or row[1] != array_digest(session_id, name, row[0])):
            raise ValueError("its row does not match its digest")
