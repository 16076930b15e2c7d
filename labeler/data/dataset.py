"""The :class:`Dataset` every loader returns, and the checks the loaders share.

Conventions. Labels of the binary built-ins are chosen so that the rare class of an imbalanced
set is ``classes[1]``, the ``+1`` of the learner (``moons*``, ``circles``: 1 is the rare
class). MAGIC keeps its UCI names ``"gamma"`` / ``"hadron"``; ``classes`` are sorted, so there
``+1`` codes ``"hadron"`` and the rare class of ``magic-imbalanced`` is ``"gamma"``
(``params["rare_class"]`` names it). ``Dataset.X`` is never standardised here; when the thesis'
width refers to standardised features ``params["standardize"]`` is True and the consumer applies
:func:`labeler.data.preprocessing.standardize` fitted on ``X`` to ``X`` and ``X_val``.

:data:`FILE_SUFFIXES` is the one list of file types the loaders read; the app's path picker
checks typed paths against it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from core import validation
from labeler.data.classnames import normalise_labels

__all__ = [
    "Dataset",
    "DatasetError",
    "FileLabels",
    "FILE_SUFFIXES",
    "PARQUET_SUFFIXES",
    "IMAGE_SUFFIXES",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_IMAGE_SIDE",
    "DEFAULT_TEXT_COMPONENTS",
    "DEFAULT_MIN_DF",
    "GUESS",
]

#: Suffixes of Parquet files (``.pq`` is the short form some tools write).
PARQUET_SUFFIXES = (".parquet", ".pq")
#: File types :func:`labeler.data.load_dataset` reads (an image folder is a directory).
FILE_SUFFIXES = (".csv", *PARQUET_SUFFIXES, ".npz")
#: Image files read from a folder or an image column.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
DEFAULT_MAX_BYTES = 2 * 2**30
DEFAULT_MAX_IMAGE_SIDE = 64
#: Components of the truncated SVD of text features (scikit-learn's recommendation for LSA).
DEFAULT_TEXT_COMPONENTS = 100
#: A word must appear in this many texts to be a text feature.
DEFAULT_MIN_DF = 2


class _Guess:
    """The default of a table's column role: guess it (:data:`GUESS`); None means "no such
    column" (see :mod:`labeler.data.roles`)."""

    def __repr__(self) -> str:
        return "GUESS"

    def __reduce__(self):  # one object, also after pickling
        return "GUESS"


#: Default of every column role: let :func:`labeler.data.roles.guess_roles` choose.
GUESS = _Guess()


class DatasetError(ValueError):
    """A data set cannot be built or loaded; the message names the problem and the fix."""


@dataclass(frozen=True)
class FileLabels:
    """The labels a table's partly filled label column already holds: they start a session.

    A label column with a label in some rows and nothing in the others (NaN, None, an empty or
    blank string) is the labels a user has so far: the labelled rows become a new session's
    initial labels (source "initial", exported with origin "file"), the empty rows are the
    unlabelled pool. ``Dataset.y`` stays None (there is no answer for every row).

    Attributes
    ----------
    rows : ndarray of shape (n_labelled,), int64
        Increasing row numbers (in the data set's order) that carry a label.
    labels : ndarray of shape (n_labelled,)
        Their labels (strings without surrounding whitespace, or integers).
    column : str
        The label column's name.
    n_rows : int
        Rows of the data set (labelled or not).
    """

    rows: np.ndarray
    labels: np.ndarray
    column: str
    n_rows: int

    def summary(self) -> str:
        """The one line the command line and the app say about them."""
        return (f"{len(self.rows):,} of {self.n_rows:,} rows carry a label in column {self.column!r}; "
                "they start the session")


@dataclass
class Dataset:
    """A pool of points to label, with optional truth, pictures, layout and validation set.

    Attributes
    ----------
    name : str
        Built-in name or file / folder stem.
    X : ndarray of shape (n, d), float64
        Features for the kernel (not standardised; see ``params["standardize"]``).
    y : ndarray of shape (n,) or None
        True labels, None if unknown (or known for some rows only: ``file_labels``).
    classes : list
        Sorted class labels (of ``y``, or of ``file_labels``; else empty).
    feature_names : list of str
        Name of each column of ``X``.
    ids : ndarray of shape (n,)
        Identifiers shown and exported (row numbers of the source unless an id column is given).
    layout : ndarray of shape (n, 2) or None
        Given 2-D coordinates.
    images : ndarray of shape (n, h, w) or (n, h, w, 3), uint8, or None
    image_paths : list of str or None
        Absolute paths of the image files, if the images came from files.
    frame : pandas.DataFrame or None
        Original columns (for export), one row per point.
    X_val, y_val : ndarray or None
        Validation set of the same construction (built-ins).
    params : dict
        Recommended ``width`` / ``lam`` and notes (thesis values where the thesis gives them);
        ``params["text_features"]`` describes TF-IDF features (:mod:`labeler.data.text`).
    texts : ndarray of shape (n,) of str, or None
        The text column (a table's ``text_col``), shown with each point.
    load_options : dict
        The options of :func:`~labeler.data.load_dataset` that load exactly this data set again
        (a table's column roles and text settings, resolved; empty for the others).
    file_labels : FileLabels or None
        A table's partly filled label column (``y`` is then None): the labels a new session
        starts from.
    """

    name: str
    X: np.ndarray
    y: np.ndarray | None
    classes: list
    feature_names: list[str]
    ids: np.ndarray
    layout: np.ndarray | None
    images: np.ndarray | None
    image_paths: list[str] | None
    frame: pd.DataFrame | None
    X_val: np.ndarray | None = None
    y_val: np.ndarray | None = None
    params: dict = field(default_factory=dict)
    texts: np.ndarray | None = None
    load_options: dict = field(default_factory=dict)
    file_labels: FileLabels | None = None


def reject_unknown(options: dict, what: str, valid) -> None:
    """Raise :class:`DatasetError` naming every unknown option and the valid ones."""
    if options:
        raise DatasetError(
            f"Unknown option(s) {', '.join(sorted(options))} for {what}; valid options: "
            f"{', '.join(sorted(valid)) or 'none'}."
        )


#: What to do with missing values in a table's features (:class:`FileOptions`).
MISSING_CHOICES = ("error", "drop", "mean")


@dataclass
class FileOptions:
    """Options of a file loader, popped from the keyword arguments of :func:`load_dataset`.

    Attributes
    ----------
    feature_cols : list of str or GUESS
        Explicit feature columns of a table (default: guessed, see :mod:`labeler.data.roles`).
    features_from : {"columns", "text", "image"} or GUESS
        Where a table's features come from (default: guessed).
    text_components : int or None
        SVD components of text features (:mod:`labeler.data.text`); None: the recipe's default.
    text_min_df : int
        Least number of texts a word must appear in to be a text feature.
    text_recipe : {"ngrams", "words-svd"}
        How text features are made (:mod:`labeler.data.text`); stored sessions without one
        reopen with "words-svd", the recipe they were made with.
    text_exact : bool
        "ngrams": exact cosine features instead of the truncated SVD.
    legacy_roles : bool
        Give a table the fixed roles of sessions made before roles were guessed (reopening
        such a session exactly; :func:`labeler.data.roles.legacy_roles`).
    max_bytes : int
        Size limit of a file (or of all the images of a data set), checked before reading.
    image_size : tuple (height, width) or None
        Common size images are resized to; None picks it (see :func:`labeler.data.images.common_size`).
    max_image_side : int
        Longest side of the picked common size when ``image_size`` is None.
    color : {"auto", "gray", "rgb"}
        ``"auto"``: grayscale when every image has R == G == B, else RGB.
    missing : {"error", "drop", "mean"}
        Missing values in a table's feature (or layout) columns: refused with the rows named,
        rows dropped, or filled with the column mean (integer and boolean columns: the most
        frequent value).
    """

    feature_cols: object = GUESS
    max_bytes: int = DEFAULT_MAX_BYTES
    image_size: tuple | None = None
    max_image_side: int = DEFAULT_MAX_IMAGE_SIDE
    color: str = "auto"
    features_from: object = GUESS
    text_components: int | None = None
    text_min_df: int = DEFAULT_MIN_DF
    legacy_roles: bool = False
    text_recipe: str = "ngrams"
    text_exact: bool = False
    missing: str = "error"

    NAMES = ("feature_cols", "max_bytes", "image_size", "max_image_side", "color",
             "features_from", "text_components", "text_min_df", "legacy_roles", "text_recipe", "text_exact",
             "missing")

    @classmethod
    def pop_from(cls, options: dict) -> FileOptions:
        """Remove the file options from ``options`` (in place) and check their values."""
        opts = cls(**{k: options.pop(k) for k in cls.NAMES if k in options})
        if opts.feature_cols is None:  # None: "not given" (as before roles were guessed)
            opts.feature_cols = GUESS
        if opts.features_from is None:
            opts.features_from = GUESS
        if opts.missing not in MISSING_CHOICES:
            raise DatasetError(f"missing must be one of {', '.join(MISSING_CHOICES)}; got {opts.missing!r}.")
        if opts.color not in ("auto", "gray", "rgb"):
            raise DatasetError(f"color must be 'auto', 'gray' or 'rgb'; got {opts.color!r}.")
        if isinstance(opts.max_bytes, bool) or not isinstance(opts.max_bytes, (int, np.integer)) or opts.max_bytes < 1:
            raise DatasetError(f"max_bytes must be a positive integer; got {opts.max_bytes!r}.")
        if opts.image_size is not None:
            size = tuple(opts.image_size)
            if len(size) != 2 or not all(isinstance(v, (int, np.integer)) and v >= 1 for v in size):
                raise DatasetError(f"image_size must be (height, width) in pixels; got {opts.image_size!r}.")
            opts.image_size = (int(size[0]), int(size[1]))
        if not isinstance(opts.max_image_side, (int, np.integer)) or opts.max_image_side < 1:
            raise DatasetError(f"max_image_side must be a positive integer; got {opts.max_image_side!r}.")
        return opts


def check_size(path: Path, max_bytes: int) -> None:
    """Refuse a file above ``max_bytes`` before anything reads it."""
    size = path.stat().st_size
    if size > max_bytes:
        raise DatasetError(
            f"{path.name} is {size:,} bytes, above the limit of {max_bytes:,} bytes; pass a larger "
            "max_bytes if you trust the file and have the memory, or load a subset."
        )


def subset(n_total: int, n: int | None, rng: np.random.Generator, what: str) -> np.ndarray:
    """Sorted seeded choice of ``n`` of ``n_total`` rows (all rows if ``n`` is None)."""
    if n is None:
        return np.arange(n_total)
    if n > n_total:
        raise DatasetError(f"n={n} is more than the {n_total} rows of {what}; pass n <= {n_total}.")
    return np.sort(rng.choice(n_total, size=n, replace=False))


def finish(
    name, X, y, feature_names, *, ids=None, layout=None, images=None, image_paths=None, frame=None,
    X_val=None, y_val=None, params=None, texts=None, load_options=None, file_labels=None,
) -> Dataset:
    """Build the :class:`Dataset` after the checks every loader shares.

    At least two rows, at least two classes when labelled, ``len(ids)`` unique ids; ``X`` as
    C-contiguous float64 whose squares do not overflow; object labels as strings and string
    labels without surrounding whitespace (:mod:`labeler.data.classnames`).

    Raises
    ------
    DatasetError
        Fewer than two rows, a single class, a blank label or two labels that differ only in
        surrounding whitespace, duplicate / missing ids, or a feature column with values
        beyond :data:`core.validation.MAX_FEATURE_MAGNITUDE` (named, with the fix).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    if n < 2:
        raise DatasetError(f"{name} has {n} row(s); at least two points are needed to label anything.")
    _check_magnitude(X, name, feature_names)
    if X_val is not None:
        _check_magnitude(np.ascontiguousarray(X_val, dtype=np.float64), f"{name} validation set", feature_names)
    classes: list = []
    if y is not None:
        y, classes = _labels_and_classes(y, name)
        if len(classes) < 2:
            raise DatasetError(
                f"{name}: every point has the label {classes[0]!r}; a classifier needs at least two "
                "classes. Add points of another class, or load without labels (no label column: "
                "--label-col '' / label_col=None)."
            )
    if file_labels is not None:
        if y is not None:
            raise ValueError("give either y (every row labelled) or file_labels (some rows), not both")
        file_labels, classes = _check_file_labels(file_labels, name)
    ids = np.arange(n) if ids is None else np.asarray(ids)
    if len(ids) != n or not pd.Index(ids).is_unique:
        raise DatasetError(f"{name}: the ids must be {n} unique values; found duplicates or a wrong count.")
    return Dataset(
        name=name, X=X, y=y, classes=classes, feature_names=[str(f) for f in feature_names], ids=ids,
        layout=None if layout is None else np.ascontiguousarray(layout, dtype=np.float64),
        images=images, image_paths=image_paths, frame=frame, X_val=X_val, y_val=y_val,
        params=dict(params or {}), texts=texts, load_options=dict(load_options or {}),
        file_labels=file_labels,
    )


def _labels_and_classes(labels, name: str) -> tuple[np.ndarray, list]:
    """``labels`` normalised (:func:`normalise_labels`; objects as strings) and their sorted
    classes (found by hashing, not sorting: 10^6 labels, a few classes)."""
    labels = np.asarray(labels)
    if labels.dtype == object:
        labels = labels.astype(str)
    try:
        labels = normalise_labels(labels, f"{name} labels")
    except ValueError as exc:
        raise DatasetError(str(exc)) from None
    return labels, sorted(pd.unique(labels).tolist())


def _check_file_labels(given: FileLabels, name: str) -> tuple[FileLabels, list]:
    """``given`` with its labels normalised (as ``y``'s), and its sorted classes.

    A class with a single labelled row is allowed (it is a label like any other); a single
    class is refused, as for a full label column: a session needs two classes to start from.
    """
    labels, classes = _labels_and_classes(given.labels, name)
    if len(classes) < 2:
        raise DatasetError(
            f"{name}: the {len(labels):,} labelled row(s) of label column {given.column!r} all have the label "
            f"{classes[0]!r}; a session needs labels of at least two classes to start from them. Label "
            "at least one row of another class in that column (the other rows may stay empty)."
        )
    rows = np.asarray(given.rows, dtype=np.int64)
    return FileLabels(rows=rows, labels=labels, column=str(given.column), n_rows=int(given.n_rows)), classes


def _check_magnitude(X: np.ndarray, name: str, feature_names) -> None:
    """:func:`core.validation.check_magnitude` naming the columns, as a :class:`DatasetError`."""
    names = [str(f) for f in feature_names]
    try:
        validation.check_magnitude(X, name=name, columns=names if len(names) == X.shape[1] else None)
    except ValueError as exc:
        raise DatasetError(str(exc)) from None


def check_count(name: str, value, minimum: int) -> int:
    """:func:`core.validation.check_count` raising :class:`DatasetError` (a data set option)."""
    try:
        return validation.check_count(name, value, minimum)
    except ValueError as exc:
        raise DatasetError(str(exc)) from None
