"""Atomic file writes: a file is either completely written or left as it was.

The content goes to a temporary file in the target's directory, is flushed to disk
(``os.fsync``) and then renamed over the target with one ``os.replace``. An interrupted or
failed write therefore never leaves a partial file behind, and after a crash the target holds
either the old or the new content. The temporary file gets mode 0644 (``mkstemp`` creates
0600) so the result is readable like any other written file.

One helper for every writer of the ``labeler`` package (reports, curves, exports).

Leftovers of killed writers
---------------------------
A process killed while writing leaves its hidden temporary file ``.<name>.<random>.part``.
The writer holds an exclusive ``flock`` on it for as long as it lives (the kernel drops the
lock when the process dies), so the next write of the same target removes every such file
that nobody holds and that is older than :data:`STALE_AFTER_S` (:func:`sweep_stale_parts`);
a live writer's file is never touched. Without ``fcntl`` (Windows) only the age counts
(:data:`STALE_AFTER_NO_LOCK_S`). :func:`sweep_stale_dirs` does the same, by age, for the
temporary folders of the app's downloads.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

try:  # POSIX: a lock that dies with its process tells a leftover from a live writer
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

__all__ = [
    "atomic_target", "atomic_write", "atomic_write_text", "atomic_write_bytes",
    "sweep_stale_parts", "sweep_stale_dirs", "STALE_AFTER_S", "STALE_AFTER_NO_LOCK_S",
]

#: A temporary file nobody holds is a leftover once it is this old (seconds). The writer locks
#: its file microseconds after creating it; the margin only covers that moment.
STALE_AFTER_S = 10.0
#: The same without ``fcntl`` locks (only the age tells): longer than any write takes.
STALE_AFTER_NO_LOCK_S = 600.0
_PART = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9_]{8}\.part$")


def _lock(fd: int) -> bool:
    """Take an exclusive lock on ``fd`` without waiting; False when someone holds it."""
    if fcntl is None:  # pragma: no cover - Windows
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return False
    return True


def sweep_stale_parts(folder, name: str | None = None, older_than: float | None = None) -> list[Path]:
    """Remove the temporary files that killed writers left in ``folder``.

    Parameters
    ----------
    folder : str or Path
    name : str, optional
        Only the leftovers of writes of this file name (``.<name>.<random>.part``); default
        every ``.*.<random>.part`` of :func:`atomic_target`.
    older_than : float, optional
        Minimum age in seconds (modification time); default :data:`STALE_AFTER_S`, or
        :data:`STALE_AFTER_NO_LOCK_S` without ``fcntl``.

    Returns
    -------
    list of Path
        The files removed. A file held by a live writer (locked) is never removed.
    """
    folder = Path(folder)
    if older_than is None:
        older_than = STALE_AFTER_S if fcntl is not None else STALE_AFTER_NO_LOCK_S
    removed = []
    now = time.time()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        m = _PART.match(entry.name)
        if m is None or (name is not None and m.group("name") != name):
            continue
        try:
            if not entry.is_file(follow_symlinks=False) or now - entry.stat().st_mtime < older_than:
                continue
            fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            if _lock(fd):
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def sweep_stale_dirs(prefix: str, older_than: float = 3600.0, parent=None) -> list[Path]:
    """Remove folders ``<parent>/<prefix>*`` older than ``older_than`` seconds (the temporary
    folders of downloads whose process was killed); default parent: the system's temp folder."""
    parent = Path(tempfile.gettempdir() if parent is None else parent)
    removed = []
    now = time.time()
    try:
        entries = [e for e in os.scandir(parent) if e.name.startswith(prefix)]
    except OSError:
        return removed
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False) and now - entry.stat().st_mtime >= older_than:
                shutil.rmtree(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            pass
    return removed


@contextlib.contextmanager
def atomic_target(path) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success make it durable and rename it over ``path``.

    Parameters
    ----------
    path : str or Path
        Target file; its directory must exist (``~`` is expanded).

    Yields
    ------
    Path
        The temporary file (already created, empty) to write completely.

    Raises
    ------
    IsADirectoryError
        If ``path`` is a directory.
    FileNotFoundError
        If the directory of ``path`` does not exist.
    NotADirectoryError
        If the parent of ``path`` is a file.
    PermissionError
        If no file can be created in the directory.
    """
    path = Path(path).expanduser()
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise IsADirectoryError(f"Cannot write {str(path)!r}: it is a directory; give a file name inside it.")
    if not parent.exists():
        raise FileNotFoundError(
            f"Cannot write {str(path)!r}: directory {str(parent)!r} does not exist. "
            "Create it first or choose another output path."
        )
    if not parent.is_dir():
        raise NotADirectoryError(f"Cannot write {str(path)!r}: {str(parent)!r} is not a directory.")
    sweep_stale_parts(parent, path.name)  # what killed writes of this file left behind
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".part")
    except OSError as exc:
        raise PermissionError(
            f"Cannot write {str(path)!r}: directory {str(parent)!r} is not writable ({exc.strerror}). "
            "Choose another location."
        ) from exc
    tmp = Path(tmp)
    try:
        _lock(fd)  # held until the end: a sweep never takes a live writer's file
        yield tmp
        with open(tmp, "rb+") as fh:  # make the content durable before the rename
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    finally:
        os.close(fd)


def atomic_write(path, write: Callable[[str], None]) -> Path:
    """Write a file atomically: ``write(tmp_path)`` creates the content, then it replaces ``path``.

    Parameters
    ----------
    path : str or Path
        Target file. Its directory must exist.
    write : callable
        Called with the path (str) of a temporary file in the same directory; it must write
        that file completely. If it raises, the temporary file is removed and ``path`` is
        untouched.

    Returns
    -------
    Path
        The target path.
    """
    with atomic_target(path) as tmp:
        write(str(tmp))
    return Path(path).expanduser()


def atomic_write_text(path, text: str) -> Path:
    """Write ``text`` (UTF-8, ``\\n`` line ends) to ``path`` atomically."""

    def write(tmp):
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)

    return atomic_write(path, write)


def atomic_write_bytes(path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically."""
    return atomic_write(path, lambda tmp: Path(tmp).write_bytes(data))
