"""What a table's columns hold, as the guess of their roles sees it (:mod:`labeler.data.roles`):
each column's kind, distinct and missing values, words per value, share of image file names,
and the name patterns of ids, labels, texts and images.
"""

from __future__ import annotations

import weakref

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from labeler.data.dataset import IMAGE_SUFFIXES

__all__ = ["ColumnInfo", "summarize_columns", "norm_name", "named_like_id", "label_rank", "UNUSABLE_KINDS",
           "looks_like_code",
           "TEXT_NAMES", "IMAGE_NAMES", "UNNAMED_INDEX"]

#: Names (after :func:`norm_name`) of id, label (strongest first), text and image columns.
ID_NAMES = {"id", "ids", "key", "uuid", "guid", "uid", "identifier", "idx", "rowid", "row_id",
            "record_id", "recordid", "index"}
LABEL_NAMES = ("label", "labels", "class", "classes", "class_label", "target", "category",
               "gold", "gold_label", "truth", "ground_truth", "annotation", "y")
TEXT_NAMES = {"text", "texts", "sentence", "sentences", "review", "reviews", "comment", "comments",
              "body", "content", "message", "description", "title", "abstract", "tweet",
              "document", "doc", "note", "notes", "summary", "utterance", "question", "answer",
              "snippet", "caption", "headline", "excerpt", "passage", "paragraph", "post"}
IMAGE_NAMES = {"image", "images", "img", "file", "filename", "file_name", "path", "filepath",
               "file_path", "picture", "photo", "image_path", "image_file"}
#: pandas' name of a nameless first column (a row index saved with ``to_csv``).
UNNAMED_INDEX = re.compile(r"^Unnamed: 0$")


def norm_name(name: str) -> str:
    """``"User ID"`` -> ``"user_id"``; ``"docId"`` -> ``"doc_id"``."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(name).strip())
    return re.sub(r"[\s\-.]+", "_", text).lower()


def named_like_id(name: str) -> bool:
    """``id``, ``ID``, ``Id``, ``key``, ``uuid``, ``*_id``, ``*Id``, ``*_key`` and the like."""
    n = norm_name(name)
    return n in ID_NAMES or n.endswith(("_id", "_key", "_uuid", "_guid"))


#: Names (after :func:`norm_name`) of integer columns that are codes or dates, not measurements.
CODE_NAMES = {"year", "years", "yr", "month", "day", "week", "weekday", "quarter", "date", "code",
              "zip", "zipcode", "zip_code", "postcode", "postal_code", "fips", "season", "batch",
              "run", "site", "station", "plate", "well", "subject", "patient", "round", "wave"}


def looks_like_code(info, values: pd.Series | None = None) -> str | None:
    """Why an integer column with few values is a code or a date and not a measurement, or None.

    Few distinct integers (at most 12) named like a year, date part or code (``year``,
    ``*_year``, ``month``, ``code``, ``*_code``, ``zip``, ``site``, ...), or whose values all
    lie in 1800..2200 (years).
    """
    if info.kind != "integer" or not 2 <= info.n_unique <= 12:
        return None
    n = norm_name(info.name)
    if n in CODE_NAMES or n.endswith(("_year", "_code", "_month", "_day", "_site", "_batch")):
        return f"named {info.name!r}: a date or a code, not a measurement ({info.n_unique} distinct values)"
    if values is not None:
        v = values.dropna()
        if len(v) and v.min() >= 1800 and v.max() <= 2200:
            return (f"its {info.n_unique} distinct values ({int(v.min())}..{int(v.max())}) look like years, "
                    "not a measurement")
    return None


def label_rank(name: str) -> int | None:
    """Rank of a label-like name (0 = ``label`` itself, higher = weaker), None otherwise."""
    n = norm_name(name)
    if n in ("label", "labels"):
        return 0
    if n in LABEL_NAMES:
        return 1 + LABEL_NAMES.index(n)
    if n.endswith(("_label", "_class")):
        return len(LABEL_NAMES)
    return None


# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ColumnInfo:
    """What the guess knows about one column.

    Attributes
    ----------
    name : str
    kind : {"integer", "float", "bool", "string", "nested", "list", "struct", "map", "mixed", "other"}
        ``nested``: numeric arrays of one length (Parquet), e.g. images; ``list``: other lists
        (lengths or elements that vary); ``struct``: records (dicts); ``map``: key/value pairs;
        ``mixed``: numbers with a few stray strings (``stray`` says where); ``other``: dates and
        the like. Only the first five kinds can have a role.
    n_unique : int
        Distinct non-missing values. Of a float column not named like a label, counted when
        first asked for (:class:`_Distinct`): no guess reads it, and counting every feature
        column of a 10^6-row table took a third of its read.
    n_missing : int
    mean_words, mean_chars : float
        Of the string values (0 for other kinds).
    image_share : float
        Share of the string values that name an image file.
    row_counter : bool
        The values are ``0..n-1`` or ``1..n`` in order.
    stray : tuple of (row, value)
        A ``mixed`` column's first non-numeric values, with their rows (0-based data rows).
    n_stray : int
        How many values of a ``mixed`` column are not numbers.
    """

    name: str
    kind: str
    distinct: object = field(repr=False, compare=False)  # the count (int), or a _Distinct that counts it
    n_missing: int
    mean_words: float = 0.0
    mean_chars: float = 0.0
    image_share: float = 0.0
    row_counter: bool = False
    stray: tuple = ()
    n_stray: int = 0

    @property
    def n_unique(self) -> int:
        """Distinct non-missing values (see the class docstring)."""
        if isinstance(self.distinct, _Distinct):
            object.__setattr__(self, "distinct", self.distinct.count())
        return int(self.distinct)

    @property
    def numeric(self) -> bool:
        return self.kind in ("integer", "float", "bool")

    @property
    def unusable(self) -> bool:
        """Columns no role can take: nested records, maps, ragged lists, numbers with stray strings."""
        return self.kind in UNUSABLE_KINDS

    def why_unusable(self) -> str:
        """In words, what the column holds and how to make it usable (for notes and errors)."""
        if self.kind == "struct":
            return "holds nested records (structs); flatten it into one column per field to use it"
        if self.kind == "map":
            return "holds maps (key/value pairs); turn the keys you need into columns to use it"
        if self.kind == "list":
            return "holds lists of varying length or content; only numeric arrays of one length (pixels) can be used"
        if self.kind == "mixed":
            shown = ", ".join(f"row {r} ({v!r})" for r, v in self.stray)
            more = f" and {self.n_stray - len(self.stray)} more" if self.n_stray > len(self.stray) else ""
            return (f"is numeric except {self.n_stray} value(s) that are not numbers: {shown}{more}; "
                    "correct them, or empty them to make them missing values")
        return "cannot be used"


#: Column kinds no role can take (:attr:`ColumnInfo.unusable`).
UNUSABLE_KINDS = ("struct", "map", "list", "mixed")
#: Fewer numbers than this per row (a 4 x 4 image) make an array column a ``list``, not pixels.
MIN_PIXELS = 16
#: A string column is ``mixed`` (numbers with strays) when at least this share of its values are numbers.
MIXED_NUMERIC_SHARE = 0.9


def _kind(series: pd.Series) -> str:
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_integer_dtype(dtype):
        return "integer"
    if pd.api.types.is_float_dtype(dtype):
        return "float"
    if isinstance(dtype, pd.CategoricalDtype):
        cats = dtype.categories
        return "string" if isinstance(cats.dtype, pd.StringDtype) or all(isinstance(v, str) for v in cats) else "other"
    if isinstance(dtype, pd.StringDtype):
        return "string"
    if pd.api.types.is_object_dtype(dtype):  # (before is_string_dtype, which accepts objects)
        values = series.dropna()
        if len(values) and all(isinstance(v, str) for v in values.iloc[:1000]):
            return "string" if all(isinstance(v, str) for v in values) else "other"
        if len(values) and all(isinstance(v, dict) for v in values.iloc[:1000]):
            return "struct"
        if len(values) and all(isinstance(v, (list, tuple, np.ndarray)) for v in values.iloc[:1000]):
            return _array_kind(values)
    return "other"


def _array_kind(values: pd.Series) -> str:
    """``map`` (lists of (key, value) pairs, pyarrow's maps), ``nested`` (numeric arrays of one
    length) or ``list`` (anything else: ragged, strings, nested deeper)."""
    first = values.iloc[:1000]
    if all(len(v) and all(isinstance(e, tuple) and len(e) == 2 for e in v) for v in first if len(v)):
        if any(len(v) for v in first):
            return "map"
    lengths = {len(v) for v in values}
    if len(lengths) != 1 or 0 in lengths:
        return "list"
    try:
        sample = np.asarray(first.iloc[0])
    except (ValueError, TypeError):
        return "list"
    if sample.dtype.kind not in "biuf" and not (sample.dtype == object and sample.size
                                                and isinstance(sample.flat[0], np.ndarray)):
        return "list"
    if sample.dtype.kind in "biuf" and sample.size < MIN_PIXELS:
        return "list"  # a few numbers per row: a list, not an image
    return "nested"


def _strays(series: pd.Series) -> tuple[tuple, int] | None:
    """A string column that is numeric but for a few values: (first strays with rows, count)."""
    text = series.dropna().astype(str).str.strip()
    if not len(text):
        return None
    distinct = pd.Series(text.unique(), dtype=object)
    if 2 * len(distinct) <= len(text) and not (distinct == "").any() \
            and pd.to_numeric(distinct, errors="coerce").isna().all():
        return None  # (a label column: no value is a number, so none is a stray; 3 s at 10^6 rows)
    numbers = pd.to_numeric(text, errors="coerce")
    bad = numbers.isna() & text.ne("")
    share = 1.0 - bad.mean()
    if not bad.any() or share < MIXED_NUMERIC_SHARE or not numbers.notna().any():
        return None  # (no number at all: words among blanks, a partly filled label column)
    where = np.flatnonzero(bad.to_numpy())
    rows = [int(series.index.get_loc(text.index[i])) if series.index.is_unique else int(i) for i in where[:5]]
    return tuple(zip(rows, [str(v) for v in text.iloc[where[:5]]])), int(bad.sum())


class _Distinct:
    """The distinct count of column ``j`` of ``frame``, counted when first asked for; the frame
    is held weakly (a summary kept after its load must not keep a 10^6-row table alive)."""

    def __init__(self, frame: pd.DataFrame, j: int):
        self._frame, self._j = weakref.ref(frame), int(j)

    def count(self) -> int:
        frame = self._frame()
        if frame is None:
            raise RuntimeError("the table this column summary describes is gone: summarise the table again "
                               "(summarize_columns) to count its distinct values")
        return int(frame.iloc[:, self._j].nunique(dropna=True))

    def __reduce__(self):
        # pickled (Streamlit's cache_data keeps the picker's guess so) as the count itself: a
        # weak reference cannot be pickled, and the copy outlives the table
        return (int, (self.count(),))


def count_distinct(infos) -> None:
    """Count now every distinct count :class:`_Distinct` left for later, while the summarised
    table is alive (before a summary is kept beyond its table: the column picker's guess)."""
    for info in infos:
        info.n_unique  # noqa: B018 (the property stores the count)


#: The last table summarised and its summary: reading a table's roles summarises it two or three
#: times (the guess, the picker's descriptions, the load's own guess), 5 s a time at 10^6 rows.
_LAST_SUMMARY: tuple = (None, None, None)


def summarize_columns(frame: pd.DataFrame) -> list[ColumnInfo]:
    """One :class:`ColumnInfo` per column of ``frame`` (names as strings, in order).

    The same frame (the same object, columns and shape) summarised again gets the summary of
    the last call (frames are read, never edited, between the guesses of one load)."""
    global _LAST_SUMMARY
    ref, stamp, infos = _LAST_SUMMARY
    here = (tuple(str(c) for c in frame.columns), frame.shape)
    if ref is not None and ref() is frame and stamp == here:
        return list(infos)
    infos = _summarize_columns(frame)
    _LAST_SUMMARY = (weakref.ref(frame), here, tuple(infos))
    return infos


def _summarize_columns(frame: pd.DataFrame) -> list[ColumnInfo]:
    out = []
    n = len(frame)
    for j, name in enumerate(frame.columns):
        series = frame.iloc[:, j]
        kind = _kind(series)
        missing = int(series.isna().sum())
        stray, n_stray = (), 0
        if kind == "string":
            found = _strays(series)
            if found is not None:
                kind, (stray, n_stray) = "mixed", found
        if kind in ("nested", "list", "struct", "map"):
            unique = n - missing  # arrays and dicts are not hashable; their count is never used as such
        elif kind == "float" and label_rank(str(name)) is None:
            unique = _Distinct(frame, j)  # a feature: counted only if asked (no guess does)
        else:
            unique = int(series.nunique(dropna=True))
        words = chars = share = 0.0
        counter = False
        if kind == "string":
            text = series.dropna().astype(str)
            if len(text) and 2 * unique <= len(text):
                # few distinct values (a label column): each measured once, weighted by its count
                # (the same means; 8 s of string splitting saved at 10^6 rows)
                counts = text.value_counts(sort=False)
                distinct = pd.Series(counts.index.to_numpy(dtype=object), dtype=object)
                weight = counts.to_numpy(dtype=np.float64) / float(len(text))
                chars = float(distinct.str.len().to_numpy(dtype=np.float64) @ weight)
                words = float(distinct.str.split().str.len().to_numpy(dtype=np.float64) @ weight)
                share = float(distinct.str.lower().str.strip().str.endswith(IMAGE_SUFFIXES)
                              .to_numpy(dtype=np.float64) @ weight)
            elif len(text):
                chars = float(text.str.len().mean())
                words = float(text.str.split().str.len().mean())
                share = float(text.str.lower().str.strip().str.endswith(IMAGE_SUFFIXES).mean())
        elif kind == "integer" and missing == 0 and n:
            values = series.to_numpy()
            counter = bool(values[0] in (0, 1) and (np.diff(values) == 1).all())
        out.append(ColumnInfo(str(name), kind, unique, missing, words, chars, share, counter, stray, n_stray))
    return out
