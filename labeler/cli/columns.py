"""Column roles on the command line: the ``--id-col`` ... options of ``labeler app`` and
``labeler simulate``, the guessed roles printed at start, and loading the data before anything
else runs (a file that cannot be loaded stops the command with the reason, before a server
starts or a simulation begins).

A role option names a column; ``''`` or ``none`` means "no such column". Roles not given are guessed (:mod:`labeler.data.roles`) and printed, so the
user sees what the model will get and which option changes it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from labeler.cli.common import CLIError

__all__ = ["ROLE_FLAGS", "add_role_arguments", "role_arguments_given", "given_roles",
           "format_roles", "open_data"]

#: option -> (load_dataset keyword, help)
ROLE_FLAGS = {
    "--id-col": ("id_col", "column of unique point ids, never a feature (default: guessed, e.g. id, "
                 "*_id, key; '' for the row numbers)"),
    "--label-col": ("label_col", "column of true labels (default: guessed, e.g. label, class, "
                    "target; '' for none)"),
    "--text-col": ("text_col", "column of free text, shown with each point; TF-IDF features when "
                   "there are no numeric ones (default: guessed, e.g. text, sentence; '' for none)"),
    "--image-col": ("image_col", "column of image file paths relative to the table's folder "
                    "(default: guessed from .png/.jpg values; '' for none)"),
    "--feature-cols": ("feature_cols", "comma-separated numeric feature columns (default: the "
                       "numeric columns without another role)"),
    "--features-from": ("features_from", "where the features come from: columns (numeric), text "
                        "(TF-IDF of the text column) or image (pixels); default: columns if any, "
                        "else text, else image"),
    "--layout-cols": ("layout_cols", "two columns X,Y of a given 2-D map (default: numeric x and "
                      "y; '' for none)"),
}
_NONE_WORDS = ("", "none")


def add_role_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the role options (:data:`ROLE_FLAGS`) to ``parser``, in a group of their own."""
    group = parser.add_argument_group(
        "column roles (CSV / Parquet)",
        "Roles not given are guessed from the column names and values and printed at start.")
    for flag, (dest, text) in ROLE_FLAGS.items():
        if dest == "features_from":
            group.add_argument(flag, dest=dest, choices=("columns", "text", "image"), help=text)
        else:
            metavar = "A,B,..." if dest == "feature_cols" else ("X,Y" if dest == "layout_cols" else "NAME")
            group.add_argument(flag, dest=dest, metavar=metavar, help=text)
    group.add_argument("--missing", choices=("error", "drop", "mean"), default=None,
                       help="rows with missing values in the features: refuse the table (error, the "
                            "default), drop those rows, or fill with the column mean (few integer values: "
                            "the most frequent value); stored with the session")


def role_arguments_given(args) -> list[str]:
    """The role options the user gave (their flags)."""
    return [flag for flag, (dest, _) in ROLE_FLAGS.items() if getattr(args, dest, None) is not None]


def _split(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def given_roles(args) -> dict:
    """The roles the options give, as ``load_dataset`` keywords (absent options: not given).

    ``''`` or ``none`` (any case) is "no such column" (an empty list for ``--feature-cols``).

    Raises
    ------
    labeler.cli.common.CLIError
        ``--layout-cols`` that does not name two columns.
    """
    out = {}
    for _, (dest, _) in ROLE_FLAGS.items():
        value = getattr(args, dest, None)
        if value is None:
            continue
        text = str(value)
        if dest == "features_from":
            out[dest] = text
        elif text.strip().lower() in _NONE_WORDS:
            out[dest] = [] if dest == "feature_cols" else None
        elif dest == "feature_cols":
            out[dest] = _split(text)
        elif dest == "layout_cols":
            parts = _split(text)
            if len(parts) != 2:
                raise CLIError(f"--layout-cols needs two columns X,Y; got {text!r}.")
            out[dest] = parts
        else:
            out[dest] = text
    return out


#: What each ``--missing`` choice does to the rows with missing values, for the start-up note.
_MISSING_DOES = {"drop": "drops them", "mean": "fills them with the column mean / most frequent value"}


def _missing_note(n_missing: int, missing: str | None) -> str:
    """The start-up note on rows with missing feature values: what the chosen ``--missing``
    does, and the choice not made as the alternative (never the one already given)."""
    rows = "1 row has" if n_missing == 1 else f"{n_missing:,} rows have"
    if missing in _MISSING_DOES:
        other = next(k for k in _MISSING_DOES if k != missing)
        return (f"{rows} missing values in the features; --missing {missing} {_MISSING_DOES[missing]} "
                f"(--missing {other} {_MISSING_DOES[other].split(' with ')[0]} instead)")
    return f"{rows} missing values in the features; --missing drop drops them, --missing mean fills them"


def format_roles(guess, name: str, missing: str | None = None) -> str:
    """The roles of table ``name`` as printed at start: one line per role, with the reason;
    ``missing`` the ``--missing`` choice given (None: none yet)."""
    roles = guess.roles
    rows = roles.lines()
    width = max(len(r[0]) for r in rows)
    lines = [f"labeler: columns of {name} ({guess.n_rows:,} rows):"]
    for role, cols, why in rows:
        lines.append(f"  {role:<{width}}  {cols}" + (f"  ({why})" if why else ""))
    for note in roles.notes:
        lines.append(f"  note: {note}")
    used = [*(roles.feature_cols if roles.features_from == "columns" else ()), *(roles.layout_cols or ())]
    n_missing = guess.missing_rows(used)
    if n_missing:
        lines.append(f"  note: {_missing_note(n_missing, missing)}")
    lines.append("  (change them with --id-col, --label-col, --text-col, --image-col, --feature-cols, "
                 "--features-from, --layout-cols; '' for none)")
    return "\n".join(lines)


def open_data(source: str, args, *, seed: int, options: dict | None = None, stream=None,
              quiet: bool = False):
    """Load ``source`` for a command, after printing a table's column roles.

    Parameters
    ----------
    source : str
        Built-in name or path.
    args : argparse.Namespace
        With the role options (:func:`add_role_arguments`).
    seed : int
    options : dict, optional
        More ``load_dataset`` options (e.g. from ``LABELER_DATA_OPTIONS``); roles among them
        count as given, and the role options win over them.
    stream : file, optional
        Where the roles go (default standard error).
    quiet : bool
        Print nothing.

    Returns
    -------
    dataset : labeler.data.Dataset
    options : dict
        ``options`` with the data set's resolved load options: they load exactly this data
        set again (a table's roles, whatever a later guess would say).

    Raises
    ------
    labeler.cli.common.CLIError
        Role options for data without columns (a built-in, an NPZ file, an image folder).
    labeler.data.DatasetError
        A bad role, or data that cannot be loaded.
    FileNotFoundError
        No such file or folder.
    """
    from labeler.data import load_dataset
    from labeler.data.load import is_table, read_roles
    from labeler.data.roles import ROLE_OPTIONS

    stream = sys.stderr if stream is None else stream
    options = dict(options or {})
    flags = role_arguments_given(args)
    if not is_table(source):
        if flags:
            raise CLIError(
                f"{', '.join(flags)}: column roles apply to CSV and Parquet tables, and {source} is "
                "not one; leave these options out."
            )
        dataset = load_dataset(source, seed=seed, **options)
        return dataset, {**options, **dataset.load_options}
    given = {k: v for k, v in options.items() if k in ROLE_OPTIONS}
    given.update(given_roles(args))
    rest = {k: v for k, v in options.items() if k not in ROLE_OPTIONS}
    if getattr(args, "missing", None) is not None:
        rest["missing"] = args.missing
    limit = {"max_bytes": rest["max_bytes"]} if "max_bytes" in rest else {}
    guess = read_roles(source, **limit, keep_frame=True, **given)  # the load below takes its table
    if not quiet:
        print(format_roles(guess, Path(source).name, rest.get("missing")), file=stream, flush=True)
    dataset = load_dataset(source, **{"seed": seed, **rest}, **guess.roles.options())
    if not quiet and "text_features" in dataset.params:
        print(f"labeler: text features: {dataset.params['text_features']['summary']}", file=stream,
              flush=True)
    return dataset, {**rest, **dataset.load_options}
