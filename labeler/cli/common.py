"""What the sub-commands of ``labeler`` share: the user error, the errors that mean "the
user's input cannot work", option types, output-path checks, progress lines, and
:class:`Command`, the record a sub-command module registers in :mod:`labeler.cli.entry`.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CLIError", "Command", "EXIT_USAGE", "EXIT_INTERRUPTED", "PROGRESS_INTERVAL", "user_errors",
           "int_at_least", "positive_int", "non_negative_int", "positive_float", "lam_value", "port",
           "builtin_names", "check_output_path", "output_folder", "Progress", "add_standardize_argument"]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
PROGRESS_INTERVAL = 2.0  # seconds between two progress lines on stderr


class CLIError(Exception):
    """A user error found after parsing: printed as ``labeler: error: <message>``, exit 2."""


def user_errors() -> tuple[type[BaseException], ...]:
    """The project's own error types: raised for input that cannot work, each with a message
    naming the fix. ``labeler`` prints one line for them and exits 2; any other exception (an
    internal ``ValueError`` included) is a bug and keeps its traceback.

    :class:`CLIError`; :class:`~labeler.data.DatasetError` (a data file that cannot be
    loaded); :class:`~labeler.errors.SettingsError` (a setting that cannot work on this data);
    :class:`~labeler.session.costs.MemoryBudgetError`; :class:`~labeler.store.StoreError` and
    its kinds; :class:`~core.criteria.blocks.ExecutorUnavailable` (an executor that cannot be
    reached). ``OSError`` (a path that cannot be read or written) is handled on its own.
    """
    from core.criteria.blocks import ExecutorUnavailable
    from labeler.data import DatasetError
    from labeler.errors import SettingsError
    from labeler.session.costs import MemoryBudgetError
    from labeler.store import StoreError

    return (CLIError, DatasetError, SettingsError, MemoryBudgetError, StoreError, ExecutorUnavailable)


@dataclass(frozen=True)
class Command:
    """One sub-command of ``labeler``.

    Attributes
    ----------
    name : str
        The word on the command line (``labeler NAME ...``).
    add_parser : callable
        ``add_parser(subparsers)`` adds the sub-command's parser (``subparsers.add_parser(name,
        ...)``) with its options.
    run : callable
        ``run(args) -> int``: the exit status. User errors raise one of :func:`user_errors`.
        ``args.extra`` holds the arguments after ``--`` (empty unless ``takes_extra``).
    takes_extra : bool
        Whether arguments after ``--`` are allowed (``labeler app`` passes them to Streamlit).
    warnings_as_lines : bool
        Show Python warnings as one ``labeler: warning:`` line each (False for the app:
        Streamlit shows its own).
    """

    name: str
    add_parser: Callable[[argparse._SubParsersAction], argparse.ArgumentParser]
    run: Callable[[argparse.Namespace], int]
    takes_extra: bool = False
    warnings_as_lines: bool = True


# --------------------------------------------------------------------------- option types
def int_at_least(low: int):
    """An argparse type: a whole number >= ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        return value

    return parse


positive_int = int_at_least(1)
non_negative_int = int_at_least(0)


def positive_float(text: str) -> float:
    """An argparse type: a finite number > 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def lam_value(text: str):
    """An argparse type: lambda > 0, or ``"auto"``."""
    if text == "auto":
        return "auto"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number > 0 or 'auto' (leave-one-out on the initial labels), got {text!r}"
        ) from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            f"lambda must be a finite number > 0, got {text}; try 0.1, or 'auto'"
        )
    return value


def port(text: str) -> int:
    """An argparse type: a TCP port 1-65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a TCP port number 1-65535, got {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a TCP port is 1-65535, got {value}")
    return value


def builtin_names() -> str:
    """The built-in data sets' names, comma-separated (for help texts and messages)."""
    from labeler.data import BUILTIN_DATASETS

    return ", ".join(BUILTIN_DATASETS)


# --------------------------------------------------------------------------- paths
def check_output_path(path: str | None, option: str) -> Path | None:
    """The output file ``option`` names, checked before any work: not a folder, in a folder
    that exists (:class:`CLIError` otherwise); None when not given."""
    if path is None:
        return None
    p = Path(path).expanduser()
    if p.is_dir():
        raise CLIError(f"{option} {path!r} is a folder; give a file name, e.g. {option} {p / 'curve'}.")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise CLIError(
            f"{option} {path!r}: folder {str(parent)!r} does not exist; create it first "
            f"(mkdir -p {parent}) or choose another path."
        )
    return p


def output_folder(value: str) -> Path:
    """The ``--out DIR`` folder of the reproductions: made when its parent exists; a file or a
    missing parent is a :class:`CLIError`."""
    out = Path(value).expanduser()
    if out.exists() and not out.is_dir():
        raise CLIError(f"--out {value!r} is a file; give a folder (e.g. docs).")
    if not out.exists():
        parent = out.parent if str(out.parent) else Path(".")
        if not parent.is_dir():
            raise CLIError(f"--out {value!r}: folder {str(parent)!r} does not exist; create it first.")
        out.mkdir()
    return out


# --------------------------------------------------------------------------- progress
class Progress:
    """Throttled progress lines on stderr: at most one every ``PROGRESS_INTERVAL`` seconds."""

    def __init__(self, stream, enabled: bool = True):
        self.stream = stream
        self.enabled = enabled
        self.start = time.perf_counter()
        self.last = self.start

    def __call__(self, step: int, budget: int) -> None:
        now = time.perf_counter()
        if not self.enabled or now - self.last < PROGRESS_INTERVAL or step == budget:
            return
        self.last = now
        rate = step / max(now - self.start, 1e-9)
        left = (budget - step) / rate
        print(f"labeler simulate: step {step}/{budget} ({rate:.1f} queries/s, ~{left:.0f} s left)",
              file=self.stream, flush=True)


def print_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Show a warning as one ``labeler: warning: ...`` line on stderr (no source line)."""
    print(f"labeler: warning: {message}", file=sys.stderr if file is None else file, flush=True)


def add_standardize_argument(parser: argparse.ArgumentParser) -> None:
    """``--standardize auto|on|off`` (``labeler app`` and ``labeler simulate``); the "auto" rule
    is :func:`labeler.data.preprocessing.shared_scale`'s."""
    parser.add_argument("--standardize", choices=("auto", "on", "off"), default=None,
                        help="scale every column to mean 0, sd 1; default auto: off for images, text, "
                        "pixel-like tables and PCA components")
