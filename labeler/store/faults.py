"""Errors of the store and the storage faults they name (full disk, read-only, damage)."""

import json
import os
import re
import shutil
import sqlite3
from datetime import datetime, timezone
from pathlib import Path


from .schema import DEFAULT_STORE_ENV, _BUSY_TIMEOUT_S


class StoreError(Exception):
    """Base class of the store's errors."""


class StoreVersionError(StoreError):
    """The file was written by a newer version of the labeller (schema version too high)."""


class StoreCorruptError(StoreError):
    """The file is not a labeller store, is damaged, or holds an inconsistent event log."""


class ChainBrokenError(StoreCorruptError):
    """A session's event log fails its integrity chain (:mod:`labeler.store.chain`).

    Attributes
    ----------
    session_id : str
    first_bad : int
        Seq of the first event that is damaged or missing.
    good_events : list of Event
        The events before it (those read in this call), intact: the session up to the damage
        can be opened read-only (``LabelingSession.open(..., up_to_damage=True)``) and exported.
    reason : str
        What is wrong with event ``first_bad``, in words.
    """

    def __init__(self, message: str, *, session_id: str, first_bad: int, good_events: list, reason: str):
        super().__init__(message)
        self.session_id = session_id
        self.first_bad = int(first_bad)
        self.good_events = list(good_events)
        self.reason = reason


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
