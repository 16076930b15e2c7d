"""Checks of what the user types in the app, before anything is loaded.

The server may be reachable from other machines (``--host``), so a path typed in the browser
is only opened when it lies inside the data folder and is not huge. Every check raises
``ValueError`` with a message that names the problem and the fix; the app shows it with
``st.error`` and changes nothing.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from labeler.data.dataset import FILE_SUFFIXES as DATA_SUFFIXES

__all__ = ["DATA_SUFFIXES", "check_data_path", "parse_positive_or_auto"]


def check_data_path(text: str, data_dir: str | os.PathLike, max_mb: float) -> Path:
    """Resolve a data path typed in the app and check it may be opened.

    Parameters
    ----------
    text : str
        Path typed by the user, absolute or relative to ``data_dir``.
    data_dir : str or path-like
        Folder the app may read from; the resolved path (symlinks followed) must lie inside.
    max_mb : float
        Largest accepted file size in megabytes (an image folder is not size-checked here).

    Returns
    -------
    pathlib.Path
        The resolved absolute path.

    Raises
    ------
    ValueError
        Empty text, a path outside ``data_dir``, a missing path, an unsupported file type, an
        unreadable file, or a file larger than ``max_mb``.
    """
    text = (text or "").strip()
    if not text:
        raise ValueError("No path given: type the path of a CSV, Parquet or NPZ file or of an "
                         "image folder.")
    root = Path(data_dir).expanduser().resolve()
    path = Path(text).expanduser()
    if not path.is_absolute():
        path = root / path
    path = path.resolve()
    if path != root and root not in path.parents:
        raise ValueError(f"{text!r} is outside the data folder {root}. Copy the file into that "
                         "folder, or restart the app with LABELER_DATA_DIR (or `labeler app PATH`).")
    if not path.exists():
        raise ValueError(f"{text!r} does not exist (looked for {path}). Check the spelling; "
                         f"relative paths start at {root}.")
    if path.is_dir():
        if not os.access(path, os.R_OK | os.X_OK):
            raise ValueError(f"The folder {path} is not readable; fix its permissions.")
        return path
    if path.suffix.lower() not in DATA_SUFFIXES:
        raise ValueError(f"{path.name} has the unsupported type {path.suffix or '(none)'!r}; "
                         f"give a {', '.join(DATA_SUFFIXES)} file or an image folder.")
    if not os.access(path, os.R_OK):
        raise ValueError(f"{path} is not readable; fix its permissions.")
    size_mb = path.stat().st_size / 1e6
    if size_mb > max_mb:
        raise ValueError(f"{path.name} is {size_mb:,.0f} MB, above the app's limit of {max_mb:,.0f} "
                         "MB. Subsample it, or raise LABELER_MAX_FILE_MB.")
    if path.stat().st_size == 0:
        raise ValueError(f"{path.name} is empty; give a file with data.")
    return path


def parse_positive_or_auto(text: str, name: str, bounds: tuple[float, float] | None = None) -> float | str:
    """``"auto"`` or a finite positive float (within ``bounds`` if given) from a text field.

    Raises
    ------
    ValueError
        If ``text`` is neither ``"auto"`` nor a number > 0.
    """
    t = (text or "").strip().lower()
    if t in ("", "auto"):
        return "auto"
    try:
        value = float(t)
    except ValueError:
        raise ValueError(f"{name} must be 'auto' or a positive number; got {text!r}.") from None
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be 'auto' or a finite number > 0; got {text!r}.")
    if bounds is not None and not bounds[0] <= value <= bounds[1]:
        raise ValueError(f"{name} must be 'auto' or a number between {bounds[0]:g} and {bounds[1]:g} "
                         f"(what float64 supports); got {text!r}.")
    return value

