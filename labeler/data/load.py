"""``load_dataset``: one entry point for the built-in data sets and for user files.

``load_dataset(source, ...)`` returns a :class:`~labeler.data.dataset.Dataset` from either

* a built-in name (see :data:`BUILTIN_DATASETS`): the synthetic sets of the ARLS thesis
  (:mod:`labeler.data.synthetic`), MAGIC, MNIST and scikit-learn's digits
  (:mod:`labeler.data.bundled`, files shipped with the package) -- nothing is downloaded; or
* a path: a table (``.csv``, ``.parquet`` / ``.pq``: :mod:`labeler.data.tables`), a NumPy
  archive (``.npz``: :mod:`labeler.data.npz`) or a folder of PNG/JPEG images, optionally one
  subfolder per class (:mod:`labeler.data.images`).
"""

from __future__ import annotations

import functools
import inspect
import json
import os
from pathlib import Path

import numpy as np

from labeler.data.bundled import load_digits, load_magic, load_magic_imbalanced, load_mnist
from labeler.data.dataset import (
    DEFAULT_MAX_BYTES,
    FILE_SUFFIXES,
    GUESS,
    PARQUET_SUFFIXES,
    Dataset,
    DatasetError,
    FileOptions,
    check_count,
    check_size,
    reject_unknown,
)
from labeler.data.images import load_image_folder
from labeler.data.npz import load_npz
from labeler.data.columns import count_distinct
from labeler.data.roles import TableGuess, guess_roles, summarize_columns
from labeler.data.synthetic import load_circles, load_moons, load_moons_imbalanced, load_spheres
from labeler.data.tables import from_frame, read_table

__all__ = ["load_dataset", "hand_over", "load_key", "read_roles", "is_table", "BUILTIN_DATASETS"]

BUILTIN_DATASETS = {
    "moons": "Two moons (scikit-learn make_moons, noise 0.1), 1000 points, balanced; validation 1000.",
    "moons-imbalanced": "Two moons with 10x fewer positives (seed 002 Fig. 4-1): 500 + 50 points; "
    "balanced validation 1000; width 2, lambda by LOO.",
    "spheres": "60 discs x 20 points = 1200 on a 10 x 6 grid, half the discs positive (seed 002 "
    "Fig. 4-6); validation 1200 from the same discs; width 1.7, lambda 0.5.",
    "circles": "Imbalanced circles: 20 positives in a disc, 2000 negatives in a ring (100:1, seed 002 "
    "Fig. 4-9); balanced validation 1000; width 1, lambda 0.1, balanced weights.",
    "magic": "MAGIC gamma telescope (UCI), 10 features, pool of 1900 + validation 2000; width 3, "
    "lambda 0.2 on standardised features.",
    "magic-imbalanced": "MAGIC with 10 hadrons per gamma, 1300 pool points; balanced validation 2000; "
    "width 1.5, lambda 0.1, balanced weights.",
    "digits": "scikit-learn's bundled 8x8 handwritten digits, 1797 images, 10 classes.",
    "mnist": "MNIST test set (10,000 28x28 digits), shipped with the package; options n and digits=(4, 9).",
}


_HANDED_OVER: tuple | None = None  # (key, dataset): see hand_over


def _file_key(signature: inspect.Signature, source, kwargs: dict) -> tuple | None:
    """What identifies one load of a FILE: its resolved path, size and modification time, and
    every argument with the defaults filled in (so ``seed=0`` given or not is one key). None
    for built-ins, folders and arguments that do not bind."""
    try:
        path = Path(os.fspath(source))
        if not path.is_file():
            return None
        st = path.stat()
        bound = signature.bind(source, **kwargs)
    except (OSError, TypeError, ValueError):
        return None
    bound.apply_defaults()
    args = dict(bound.arguments)
    args.pop("source", None)
    args.update(args.pop("options", {}) or {})
    try:
        canon = json.dumps(args, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        return None
    return str(path.resolve()), st.st_size, st.st_mtime_ns, canon


def hand_over(dataset) -> None:
    """Keep ``dataset`` for the next :func:`load_dataset` of the same, unchanged file with the
    same arguments, which then returns it instead of reading the file again (once).

    ``labeler app PATH`` loads the file before the server starts, to stop with the reason
    when it cannot be loaded; the app's first session then takes that data set: at 10^6 rows
    a second read cost 30-70 s and about 2 GB. A file changed in between (size or
    modification time), other arguments, or a built-in name or folder: read as usual, and the
    kept data set is let go (it waits for the next load only, so it never stays in memory).
    """
    global _HANDED_OVER
    key = getattr(dataset, "_load_key", None)
    _HANDED_OVER = None if key is None else (key, dataset)


def load_key(source, **kwargs) -> tuple | None:
    """The key :func:`hand_over` matches a later ``load_dataset(source, **kwargs)`` by (None
    for built-ins and folders): for a data set made without that call (a snapshot of an earlier
    load, :mod:`labeler.session.source_snapshot`), set as its ``_load_key``."""
    return _file_key(inspect.signature(load_dataset), source, kwargs)


def _taken_over(load):
    """``load_dataset`` with :func:`hand_over`'s one-slot hand-over of a file's data set."""
    signature = inspect.signature(load)

    @functools.wraps(load)
    def wrapper(source, **kwargs):
        global _HANDED_OVER
        key = _file_key(signature, source, kwargs)
        handed, _HANDED_OVER = _HANDED_OVER, None  # kept for the next load only, hit or miss
        if key is not None and handed is not None and handed[0] == key:
            return handed[1]
        del handed  # not this one: free it before reading
        dataset = load(source, **kwargs)
        if key is not None:
            try:
                dataset._load_key = key
            except AttributeError:  # a data set type without attributes: never handed over
                pass
        return dataset

    return wrapper


@_taken_over
def load_dataset(
    source,
    *,
    label_col=GUESS,
    id_col=GUESS,
    image_col=GUESS,
    text_col=GUESS,
    layout_cols=GUESS,
    seed: int = 0,
    n: int | None = None,
    **options,
) -> Dataset:
    """Load a built-in data set or a file / folder.

    Parameters
    ----------
    source : str or path-like
        A name from ``BUILTIN_DATASETS`` or the path of a ``.csv``, ``.parquet`` (``.pq``) or
        ``.npz`` file (:data:`~labeler.data.dataset.FILE_SUFFIXES`) or of a folder of PNG/JPEG
        images.
    label_col, id_col, image_col, text_col : str, None or GUESS
        Column roles of a CSV / Parquet table (:mod:`labeler.data.roles`): a column name, None
        for none, or (the default) :data:`~labeler.data.dataset.GUESS`: guessed from the
        columns' names and values. The id column (default: the row numbers) is never a
        feature; the text column is shown with each point and, without numeric features,
        gives TF-IDF features (:mod:`labeler.data.text`); the image column holds image file
        paths (relative to the file's folder, never outside it) or image arrays (Parquet
        nested lists). A label column filled in every row is the data's truth (``y``); one
        filled in some rows only (the others NaN, None, empty or blank) holds the labels a
        session starts from (``file_labels``, :class:`~labeler.data.dataset.FileLabels`), and
        one with no label at all gives no labels.
    layout_cols : pair of str, None or GUESS
        Columns with given 2-D coordinates (guessed: numeric ``x`` and ``y``). They are not
        features unless no other numeric column exists (a plain ``x, y, label`` file is its
        own layout).
    seed : int
        Seed of every random choice (synthetic data, subsets, validation splits, the SVD of
        text features).
    n : int or None
        Pool size: a seeded subset of a file or of MNIST / digits, or the size of a built-in
        construction (None: its default size, or all rows of a file).
    **options
        Built-in options (``n_val``, ``noise``, ``digits``, ``validation``, ``data_dir``) and
        file options: ``feature_cols`` (explicit numeric feature columns), ``features_from``
        (``"columns"``, ``"text"`` or ``"image"``), ``text_components`` (SVD components of
        text features, default 100), ``text_min_df`` (default 2), ``max_bytes`` (size limit,
        default 2 GB, checked before reading), ``image_size`` ((h, w) of resized images),
        ``max_image_side`` (default 64: longer side of the common size when ``image_size`` is
        not given), ``color`` (``"auto"``, ``"gray"`` or ``"rgb"``), ``legacy_roles`` (the
        fixed roles of sessions made before roles were guessed).

    The returned data set's ``load_options`` hold the roles used, resolved: passing them back
    loads the same data set whatever the guess would say.

    Returns
    -------
    Dataset

    Raises
    ------
    DatasetError
        Unknown built-in name, unsupported extension, unreadable file, unusable columns or
        roles, NaN features, a text column without words, a single class (also among the
        labelled rows of a partly filled label column), fewer than two rows,
        an image path outside the data folder, or a file above ``max_bytes``.
    FileNotFoundError
        A path or an image file that does not exist.
    """
    if n is not None:
        n = check_count("n", n, 2)
    if isinstance(source, str) and source in BUILTIN_DATASETS:
        return _BUILTIN_LOADERS[source](seed=seed, n=n, **options)
    path = Path(os.fspath(source))
    if not path.exists():
        text = str(source)
        if isinstance(source, str) and not path.suffix and os.sep not in text and "/" not in text:
            raise DatasetError(
                f"Unknown built-in data set {text!r}; choose one of {', '.join(BUILTIN_DATASETS)} "
                f"or give the path of a {', '.join(FILE_SUFFIXES)} file or an image folder."
            )
        raise FileNotFoundError(f"No such file or folder: {text!r}.")
    file_opts = FileOptions.pop_from(options)
    reject_unknown(options, f"loading {path.name}", FileOptions.NAMES)
    if path.is_dir():
        return load_image_folder(path, seed=seed, n=n, opts=file_opts)
    suffix = path.suffix.lower()
    if suffix not in FILE_SUFFIXES:
        raise DatasetError(
            f"Unsupported file type {path.suffix or '(no extension)'!r} of {path.name}; supported: "
            f"{', '.join(FILE_SUFFIXES)} files or a folder of PNG/JPEG images."
        )
    check_size(path, file_opts.max_bytes)
    if suffix == ".npz":
        return load_npz(path, seed=seed, n=n, opts=file_opts)
    frame = _kept_frame(path)  # read_roles(keep_frame=True) just read it: not read twice
    if frame is None:
        frame = read_table(path, suffix)
    return from_frame(
        frame, name=path.stem, folder=path.parent, label_col=label_col, id_col=id_col,
        image_col=image_col, text_col=text_col, layout_cols=layout_cols, seed=seed, n=n,
        opts=file_opts,
    )


def is_table(source) -> bool:
    """Whether ``source`` names a CSV or Parquet file (the data whose columns have roles)."""
    if isinstance(source, str) and source in BUILTIN_DATASETS:
        return False
    return Path(os.fspath(source)).suffix.lower() in (".csv", *PARQUET_SUFFIXES)


#: ``(file key, frame)`` read by :func:`read_roles` for the load that follows it, or None.
_KEPT_FRAME = None


def _table_key(path: Path) -> tuple:
    st = path.stat()
    return str(path.resolve()), st.st_size, st.st_mtime_ns


def _kept_frame(path: Path):
    """The frame :func:`read_roles` kept for this unchanged file (taken: once), else None."""
    global _KEPT_FRAME
    kept, _KEPT_FRAME = _KEPT_FRAME, None
    if kept is not None and kept[0] == _table_key(path):
        return kept[1]
    return None


def read_roles(path, *, max_bytes: int = DEFAULT_MAX_BYTES, keep_frame: bool = False, **given) -> TableGuess:
    """Read a CSV / Parquet table and guess the roles of its columns, before loading it.

    What the app and the command line show (and let the user change) before a session starts.

    Parameters
    ----------
    path : path-like
    max_bytes : int
        Size limit, checked before reading.
    keep_frame : bool
        Keep the table read here for the next :func:`load_dataset` of the same unchanged file
        (the command line's guess-then-load: the file is read once; 10^6 rows of Parquet took
        seconds per read). Taken by that load, hit or miss.
    **given
        Roles already chosen (``id_col``, ``label_col``, ``text_col``, ``image_col``,
        ``layout_cols``, ``feature_cols``, ``features_from``): kept, and their columns left
        out of the other guesses.

    Returns
    -------
    TableGuess
        The roles, the columns' descriptions and the number of rows.

    Raises
    ------
    DatasetError
        Not a table, an unreadable file, a role naming a missing column or two roles for one
        column.
    FileNotFoundError
        No such file.
    """
    path = Path(os.fspath(path))
    if not path.is_file():
        raise FileNotFoundError(f"No such file: {str(path)!r}.")
    if not is_table(path):
        raise DatasetError(f"{path.name} is not a CSV or Parquet table; only tables have column roles.")
    check_size(path, max_bytes)
    frame = read_table(path, path.suffix.lower())
    frame.columns = [str(c) for c in frame.columns]
    roles = guess_roles(frame, **given)
    missing_at = {}
    for name in frame.columns:
        try:
            where = np.flatnonzero(frame[name].isna().to_numpy())
        except TypeError:  # nested values
            continue
        if where.size:
            missing_at[name] = where.astype(np.int64)
    columns = summarize_columns(frame)
    if keep_frame:
        global _KEPT_FRAME
        _KEPT_FRAME = (_table_key(path), frame)
    else:  # the guess outlives the table (the column picker keeps it): no count left for later
        count_distinct(columns)
    return TableGuess(roles=roles, columns=columns, n_rows=len(frame), missing_at=missing_at)


def _builtin_loader(name, loader):
    """Wrap a built-in's loader so that unknown or badly typed options give a clear error."""
    valid = [p for p in inspect.signature(loader).parameters if p not in ("seed", "n")]

    def load(*, seed, n, **options):
        reject_unknown({k: v for k, v in options.items() if k not in valid}, f"built-in {name!r}", valid)
        try:
            return loader(seed=seed, n=n, **options)
        except TypeError as exc:  # e.g. a string where a number is expected
            raise DatasetError(f"Bad option for built-in {name!r}: {exc}.") from None

    return load


_BUILTIN_LOADERS = {
    name: _builtin_loader(name, fn)
    for name, fn in {
        "moons": load_moons,
        "moons-imbalanced": load_moons_imbalanced,
        "spheres": load_spheres,
        "circles": load_circles,
        "magic": load_magic,
        "magic-imbalanced": load_magic_imbalanced,
        "digits": load_digits,
        "mnist": load_mnist,
    }.items()
}
