"""What a table's columns hold, as the guess of their roles sees it (:mod:`labeler.data.roles`):
each column's kind, distinct and missing values, words per value, share of image file names,
and the name patterns of ids, labels, texts and images.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from labeler.data.dataset import IMAGE_SUFFIXES

__all__ = ["ColumnInfo", "summarize_columns", "norm_name", "named_like_id", "label_rank",
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
    kind : {"integer", "float", "bool", "string", "nested", "other"}
        ``nested``: lists or arrays (Parquet), e.g. images; ``other``: dates and the like.
    n_unique : int
        Distinct non-missing values.
    n_missing : int
    mean_words, mean_chars : float
        Of the string values (0 for other kinds).
    image_share : float
        Share of the string values that name an image file.
    row_counter : bool
        The values are ``0..n-1`` or ``1..n`` in order.
    """

    name: str
    kind: str
    n_unique: int
    n_missing: int
    mean_words: float = 0.0
    mean_chars: float = 0.0
    image_share: float = 0.0
    row_counter: bool = False

    @property
    def numeric(self) -> bool:
        return self.kind in ("integer", "float", "bool")


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
        if len(values) and all(isinstance(v, (list, tuple, np.ndarray)) for v in values.iloc[:1000]):
            return "nested"
    return "other"


def summarize_columns(frame: pd.DataFrame) -> list[ColumnInfo]:
    """One :class:`ColumnInfo` per column of ``frame`` (names as strings, in order)."""
    out = []
    n = len(frame)
    for j, name in enumerate(frame.columns):
        series = frame.iloc[:, j]
        kind = _kind(series)
        missing = int(series.isna().sum())
        if kind == "nested":
            unique = n - missing  # arrays are not hashable; their count is never used as such
        else:
            unique = int(series.nunique(dropna=True))
        words = chars = share = 0.0
        counter = False
        if kind == "string":
            text = series.dropna().astype(str)
            if len(text):
                chars = float(text.str.len().mean())
                words = float(text.str.split().str.len().mean())
                share = float(text.str.lower().str.strip().str.endswith(IMAGE_SUFFIXES).mean())
        elif kind == "integer" and missing == 0 and n:
            values = series.to_numpy()
            counter = bool(values[0] in (0, 1) and (np.diff(values) == 1).all())
        out.append(ColumnInfo(str(name), kind, unique, missing, words, chars, share, counter))
    return out
