"""Atomic file writes: a file is either completely written or left as it was.

The content goes to a temporary file in the target's directory, is flushed to disk
(``os.fsync``) and then renamed over the target with one ``os.replace``. An interrupted or
failed write therefore never leaves a partial file behind, and after a crash the target holds
either the old or the new content. The temporary file gets mode 0644 (``mkstemp`` creates
0600) so the result is readable like any other written file.

One helper for every writer of the ``labeler`` package (reports, curves, exports).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["atomic_target", "atomic_write", "atomic_write_text", "atomic_write_bytes"]


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
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".part")
    except OSError as exc:
        raise PermissionError(
            f"Cannot write {str(path)!r}: directory {str(parent)!r} is not writable ({exc.strerror}). "
            "Choose another location."
        ) from exc
    os.close(fd)
    tmp = Path(tmp)
    try:
        yield tmp
        with open(tmp, "rb+") as fh:  # make the content durable before the rename
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


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
