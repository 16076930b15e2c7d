"""Column roles of a table: which column is the id, the label, the text, the image, the 2-D
layout, and which columns are the features -- guessed from the names and the values, shown to
the user (app and command line) and changed by them before anything is loaded.

Roles
-----
``id_col``         unique identifiers of the points (shown and exported; never a feature)
``label_col``      true labels (classes; the oracle of ``labeler simulate``)
``text_col``       free text (shown in the point panel and the map's tooltips; TF-IDF features)
``image_col``      image file paths or (Parquet) pixel arrays
``layout_cols``    a given 2-D map ``(x, y)``
``feature_cols``   numeric columns the kernel sees when ``features_from == "columns"``
``features_from``  ``"columns"`` (the numeric ``feature_cols``), ``"text"`` (TF-IDF of the text
                   column, :mod:`labeler.data.text`) or ``"image"`` (the pixels)

The guess (:func:`guess_roles`), in this order; a role given by the caller is kept and its
column is taken out of the other guesses:

1. image: a column of image file names (``.png``, ``.jpg``, ``.jpeg``: 90 % of its values) or
   of arrays (Parquet nested lists), preferring one named like ``image``, ``file``, ``path``;
2. id: a column of unique integers or strings named like an id (``id``, ``ID``, ``Id``,
   ``*_id``, ``*Id``, ``key``, ``uuid``, ``guid``, ...); else pandas' ``Unnamed: 0`` (a saved
   row index); else an unnamed row counter (integers ``0..n-1`` or ``1..n`` in order); else
   the only column of unique short strings without spaces (e.g. ``name``, ``p001``);
3. label: a column named ``label`` (always), else one named like a label (``class``,
   ``target``, ``category``, ``y``, ``*_label``, ...) with few distinct values (at most
   :data:`MAX_GUESSED_CLASSES`, and at most half the rows); else the only string column with few
   values. Two or more such string columns are ambiguous: none is guessed, and a note says so;
4. text: a string column named like text (``text``, ``sentence``, ``review``, ``comment``,
   ``body``, ...), else the string column of free text (3 words or 30 characters on average,
   at least half of its values distinct) with the longest values;
5. layout: numeric columns named ``x`` and ``y`` (any case), both free;
6. features: every numeric (or boolean) column not taken above. Without any: the text
   (``features_from="text"``), else the image's pixels, else the layout columns (a plain
   ``x, y, label`` table is its own map);
7. every other column is ignored (listed, so the user sees it).

A numeric id column is never a feature, also when the caller gives ``feature_cols``
(:func:`check_roles` refuses it with the fix).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from labeler.data.dataset import GUESS, IMAGE_SUFFIXES, DatasetError

__all__ = [
    "GUESS",
    "ROLE_OPTIONS",
    "FEATURE_SOURCES",
    "MAX_GUESSED_CLASSES",
    "ColumnInfo",
    "ColumnRoles",
    "TableGuess",
    "summarize_columns",
    "guess_roles",
    "legacy_roles",
    "check_roles",
]


#: The keyword arguments of :func:`labeler.data.load_dataset` that set column roles.
ROLE_OPTIONS = ("id_col", "label_col", "text_col", "image_col", "layout_cols", "feature_cols",
                "features_from")
#: Where the features come from.
FEATURE_SOURCES = ("columns", "text", "image")
#: A column named like a label (other than ``label``) is guessed only with this many values or fewer.
MAX_GUESSED_CLASSES = 50

_ID_NAMES = {"id", "ids", "key", "uuid", "guid", "uid", "identifier", "idx", "rowid", "row_id",
             "record_id", "recordid", "index"}
_LABEL_NAMES = ("label", "labels", "class", "classes", "class_label", "target", "category",
                "gold", "gold_label", "truth", "ground_truth", "annotation", "y")
_TEXT_NAMES = {"text", "texts", "sentence", "sentences", "review", "reviews", "comment", "comments",
               "body", "content", "message", "description", "title", "abstract", "tweet",
               "document", "doc", "note", "notes", "summary", "utterance", "question", "answer",
               "snippet", "caption", "headline", "excerpt", "passage", "paragraph", "post"}
_IMAGE_NAMES = {"image", "images", "img", "file", "filename", "file_name", "path", "filepath",
                "file_path", "picture", "photo", "image_path", "image_file"}
_UNNAMED_INDEX = re.compile(r"^Unnamed: 0$")


def _norm(name: str) -> str:
    """``"User ID"`` -> ``"user_id"``; ``"docId"`` -> ``"doc_id"``."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", str(name).strip())
    return re.sub(r"[\s\-.]+", "_", text).lower()


def _named_like_id(name: str) -> bool:
    n = _norm(name)
    return n in _ID_NAMES or n.endswith(("_id", "_key", "_uuid", "_guid"))


def _label_rank(name: str) -> int | None:
    """Rank of a label-like name (0 = ``label`` itself, higher = weaker), None otherwise."""
    n = _norm(name)
    if n in ("label", "labels"):
        return 0
    if n in _LABEL_NAMES:
        return 1 + _LABEL_NAMES.index(n)
    if n.endswith(("_label", "_class")):
        return len(_LABEL_NAMES)
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


# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ColumnRoles:
    """The role of each column of a table (see the module docstring).

    Attributes
    ----------
    id_col, label_col, text_col, image_col : str or None
    layout_cols : tuple (x, y) of str, or None
    feature_cols : tuple of str
        The numeric feature columns (used when ``features_from == "columns"``).
    features_from : {"columns", "text", "image"} or None
        None: the table has nothing to use as features (loading it fails with the reason).
    ignored : tuple of str
        Columns that play no role.
    reasons : dict {role: str}
        Why each guessed role was chosen ("given" for the caller's), for display.
    notes : tuple of str
        Ambiguities the user should look at (e.g. two possible label columns).
    """

    id_col: str | None = None
    label_col: str | None = None
    text_col: str | None = None
    image_col: str | None = None
    layout_cols: tuple[str, str] | None = None
    feature_cols: tuple[str, ...] = ()
    features_from: str | None = "columns"
    ignored: tuple[str, ...] = ()
    reasons: dict = field(default_factory=dict, compare=False)
    notes: tuple[str, ...] = field(default=(), compare=False)

    def options(self) -> dict:
        """The keyword arguments of :func:`labeler.data.load_dataset` that load exactly these
        roles (JSON-serialisable: stored with a session so that it reopens the same way)."""
        return {
            "id_col": self.id_col,
            "label_col": self.label_col,
            "text_col": self.text_col,
            "image_col": self.image_col,
            "layout_cols": None if self.layout_cols is None else list(self.layout_cols),
            "feature_cols": list(self.feature_cols),
            "features_from": self.features_from,
        }

    def features_description(self) -> str:
        """What the kernel sees, in words: ``"columns a, b"``, ``"TF-IDF of 'text'"``, ..."""
        if self.features_from == "text":
            return f"TF-IDF of the text column {self.text_col!r} (cosine geometry)"
        if self.features_from == "image":
            return f"the pixels of the image column {self.image_col!r}"
        if self.features_from == "columns" and self.feature_cols:
            return _names(self.feature_cols)
        return "none"

    def lines(self) -> list[tuple[str, str, str]]:
        """``(role, column(s), reason)`` rows for display (app and command line)."""
        def one(value):
            return "-" if value is None else str(value)

        rows = [
            ("id", one(self.id_col) if self.id_col is not None else "- (row numbers)",
             self.reasons.get("id_col", "")),
            ("label", one(self.label_col), self.reasons.get("label_col", "")),
            ("text", one(self.text_col), self.reasons.get("text_col", "")),
            ("image", one(self.image_col), self.reasons.get("image_col", "")),
            ("layout (x, y)", "-" if self.layout_cols is None else ", ".join(self.layout_cols),
             self.reasons.get("layout_cols", "")),
            ("features", self.features_description(), self.reasons.get("feature_cols", "")),
            ("ignored", _names(self.ignored) if self.ignored else "-", ""),
        ]
        return rows


@dataclass(frozen=True)
class TableGuess:
    """A table's guessed roles with what the guess saw (:func:`labeler.data.load.read_roles`).

    Attributes
    ----------
    roles : ColumnRoles
    columns : list of ColumnInfo
        Every column, in order (the choices a user has for each role).
    n_rows : int
    """

    roles: ColumnRoles
    columns: list
    n_rows: int

    def names(self, kinds=None) -> list[str]:
        """Column names, only those of the given kinds (e.g. ``("integer", "float", "bool")``)."""
        return [c.name for c in self.columns if kinds is None or c.kind in kinds]


def _names(cols, limit: int = 12) -> str:
    cols = list(cols)
    shown = ", ".join(cols[:limit])
    return shown + (f" and {len(cols) - limit} more" if len(cols) > limit else "")


# --------------------------------------------------------------------------------------------
def _given(value) -> bool:
    return value is not GUESS


_ROLE_TITLES = {"id_col": "Id", "label_col": "Label", "text_col": "Text", "image_col": "Image",
                "layout_cols": "Layout", "feature_cols": "Feature"}


def _check_column(value, columns, role: str):
    if value is None:
        return None
    name = str(value)
    if name not in columns:
        flag = "--" + role.replace("_", "-")
        raise DatasetError(
            f"{_ROLE_TITLES.get(role, role)} column {name!r} not found; the columns are: "
            f"{_names(columns, 40)}. Give one of them (command line: {flag} NAME), or leave it "
            "out to have it guessed."
        )
    return name


def guess_roles(
    frame: pd.DataFrame,
    *,
    id_col=GUESS,
    label_col=GUESS,
    text_col=GUESS,
    image_col=GUESS,
    layout_cols=GUESS,
    feature_cols=GUESS,
    features_from=GUESS,
) -> ColumnRoles:
    """Guess the roles of a table's columns; the roles given are kept.

    Parameters
    ----------
    frame : pandas.DataFrame
        The table (column names are read as strings).
    id_col, label_col, text_col, image_col : str, None or GUESS
        A column name, None (no such column) or :data:`GUESS`.
    layout_cols : pair of str, None or GUESS
    feature_cols : list of str or GUESS
        Explicit numeric feature columns.
    features_from : {"columns", "text", "image"} or GUESS

    Returns
    -------
    ColumnRoles
        With ``reasons`` saying why each role was chosen and ``notes`` naming ambiguities.

    Raises
    ------
    DatasetError
        A given column that does not exist, a column given two roles, ``features_from``
        naming a source the table lacks, the id (or label, text, image) among the features.
    """
    infos = summarize_columns(frame)
    n_rows = len(frame)
    columns = [c.name for c in infos]
    reasons: dict[str, str] = {}
    notes: list[str] = []
    taken: set[str] = set()
    single: dict[str, str | None] = {}

    def free(c: ColumnInfo) -> bool:
        return c.name not in taken

    for role, value in (("id_col", id_col), ("label_col", label_col), ("text_col", text_col),
                        ("image_col", image_col)):
        if _given(value):
            single[role] = _check_column(value, columns, role)
            reasons[role] = "given"
            if single[role] is not None:
                taken.add(single[role])
    if _given(layout_cols):
        if layout_cols is not None:
            pair = [layout_cols] if isinstance(layout_cols, str) else list(layout_cols)
            if len(pair) != 2:
                raise DatasetError(f"layout_cols must name two columns (x, y); got {pair}.")
            layout_cols = tuple(_check_column(c, columns, "layout_cols") for c in pair)
            taken.update(layout_cols)
        reasons["layout_cols"] = "given"
    features_given = _given(feature_cols)
    if features_given:
        if isinstance(feature_cols, str):
            feature_cols = [feature_cols]
        feature_cols = tuple(_check_column(c, columns, "feature_cols") for c in feature_cols)
        reasons["feature_cols"] = "given"

    # 1. image
    if "image_col" not in single:
        cands = [c for c in infos if free(c) and (c.kind == "nested" or (c.kind == "string" and c.image_share >= 0.9))]
        cands.sort(key=lambda c: _norm(c.name) not in _IMAGE_NAMES)
        single["image_col"] = cands[0].name if cands else None
        if cands:
            taken.add(cands[0].name)
            reasons["image_col"] = ("arrays (pixels)" if cands[0].kind == "nested"
                                    else f"{cands[0].image_share:.0%} of its values are image files")

    # 2. id
    never_features = set()  # id-like columns that are not the id: not features either
    def unique_id(c):
        return c.kind in ("integer", "string") and c.n_missing == 0 and c.n_unique == n_rows > 0

    for c in infos:
        if free(c) and (_named_like_id(c.name) or _UNNAMED_INDEX.match(c.name)):
            never_features.add(c.name)
    if "id_col" not in single:
        pick = why = None
        kind_word = {"integer": "integers", "string": "strings"}
        for c in infos:
            if free(c) and unique_id(c) and _named_like_id(c.name):
                pick, why = c, f"named like an id, {n_rows} unique {kind_word[c.kind]}"
                break
        if pick is None:
            for c in infos:
                if free(c) and unique_id(c) and _UNNAMED_INDEX.match(c.name):
                    pick, why = c, "an unnamed column of unique values (a saved row index)"
                    break
        if pick is None:
            for c in infos:
                if free(c) and unique_id(c) and c.row_counter and _label_rank(c.name) is None:
                    pick, why = c, "counts the rows (0, 1, 2, ... in order)"
                    break
        if pick is None:
            cands = [c for c in infos if free(c) and unique_id(c) and c.kind == "string"
                     and c.mean_words <= 1.0 and c.mean_chars <= 40 and _norm(c.name) not in _TEXT_NAMES]
            if len(cands) == 1:
                pick, why = cands[0], f"the only column of unique short strings ({n_rows} values)"
        single["id_col"] = None if pick is None else pick.name
        if pick is not None:
            taken.add(pick.name)
            reasons["id_col"] = why
        never_features.discard(single["id_col"])
    for name in sorted(never_features - taken):
        notes.append(f"Column {name!r} looks like an identifier but is not the id (not unique, or "
                     "another column is): it is not used as a feature.")

    # 3. label
    if "label_col" not in single:
        def few(c):
            return 2 <= c.n_unique <= min(MAX_GUESSED_CLASSES, max(2, n_rows // 2))

        named = sorted((c for c in infos if free(c) and c.kind in ("integer", "float", "bool", "string")
                        and _label_rank(c.name) is not None), key=lambda c: _label_rank(c.name))
        pick = why = None
        for c in named:
            if _label_rank(c.name) == 0 or few(c):
                pick, why = c, f"named {c.name!r}, {c.n_unique} distinct values"
                break
        if pick is None:
            cands = [c for c in infos if free(c) and c.kind in ("string", "bool") and few(c)
                     and c.name not in never_features and _norm(c.name) not in _TEXT_NAMES]
            if len(cands) == 1:
                pick, why = cands[0], f"the only string column with few values ({cands[0].n_unique})"
            elif len(cands) > 1:
                notes.append(
                    f"Several columns could be the label ({_names([c.name for c in cands])}); none "
                    "was chosen. Choose one (command line: --label-col NAME)."
                )
        single["label_col"] = None if pick is None else pick.name
        if pick is not None:
            taken.add(pick.name)
            reasons["label_col"] = why

    # 4. text
    if "text_col" not in single:
        strings = [c for c in infos if free(c) and c.kind == "string" and c.name not in never_features]
        named = [c for c in strings if _norm(c.name) in _TEXT_NAMES]
        free_text = [c for c in strings if (c.mean_words >= 3 or c.mean_chars >= 30)
                     and c.n_unique >= 0.5 * max(n_rows - c.n_missing, 1)]
        pick = why = None
        if named:
            pick = named[0]
            why = f"named {pick.name!r}, {pick.mean_words:.1f} words on average"
        elif free_text:
            pick = max(free_text, key=lambda c: c.mean_chars)
            why = f"free text, {pick.mean_words:.1f} words on average, {pick.n_unique} distinct values"
        single["text_col"] = None if pick is None else pick.name
        if pick is not None:
            taken.add(pick.name)
            reasons["text_col"] = why

    # 5. layout
    if not _given(layout_cols):
        lower = {_norm(c.name): c for c in infos}
        x, y = lower.get("x"), lower.get("y")
        if x is not None and y is not None and free(x) and free(y) and x.numeric and y.numeric:
            layout_cols = (x.name, y.name)
            taken.update(layout_cols)
            reasons["layout_cols"] = "numeric columns named x and y"
        else:
            layout_cols = None
    for col in layout_cols or ():
        role = next((r for r, v in single.items() if v == col), None)
        if role is not None:
            raise DatasetError(
                f"Column {col!r} cannot be both a layout column and the {_ROLE_WORDS[role]} column; "
                "give another layout (or none)."
            )

    # 6. features
    text, image = single["text_col"], single["image_col"]
    if not features_given:
        feature_cols = tuple(c.name for c in infos if free(c) and c.numeric and c.name not in never_features)
        if feature_cols:
            reasons["feature_cols"] = "the numeric columns without another role"
    if _given(features_from):
        if features_from not in FEATURE_SOURCES:
            raise DatasetError(
                f"features_from must be one of {', '.join(FEATURE_SOURCES)}; got {features_from!r}."
            )
        reasons["feature_cols"] = "given"
    elif feature_cols:
        features_from = "columns"
    elif text is not None:
        features_from = "text"
        reasons["feature_cols"] = "no numeric column: the text is the data"
    elif image is not None:
        features_from = "image"
        reasons["feature_cols"] = "no numeric column: the pixels are the data"
    elif layout_cols is not None:
        features_from = "columns"
    else:
        features_from = None
    if features_from == "columns" and not feature_cols and not features_given and layout_cols is not None:
        feature_cols = tuple(layout_cols)  # a plain "x, y, label" table: the map is the data
        reasons["feature_cols"] = "no other numeric column: the map is the data"
    roles = ColumnRoles(
        id_col=single["id_col"], label_col=single["label_col"], text_col=text, image_col=image,
        layout_cols=None if layout_cols is None else tuple(layout_cols),
        feature_cols=tuple(feature_cols) if features_from == "columns" else (),
        features_from=features_from, reasons=reasons, notes=tuple(notes),
    )
    return check_roles(roles, infos)


_ROLE_WORDS = {"id_col": "id", "label_col": "label", "text_col": "text", "image_col": "image"}


def check_roles(roles: ColumnRoles, infos: list[ColumnInfo]) -> ColumnRoles:
    """Check that ``roles`` fit the table described by ``infos``; fill in ``ignored``.

    Raises
    ------
    DatasetError
        One column in two roles (the layout may double as features), a feature column that
        is the id, label, text or image, ``features_from`` naming a missing column.
    """
    singles = {"id": roles.id_col, "label": roles.label_col, "text": roles.text_col,
               "image": roles.image_col}
    seen: dict[str, str] = {}
    for role, col in singles.items():
        if col is None:
            continue
        if col in seen:
            raise DatasetError(
                f"Column {col!r} cannot be both the {seen[col]} and the {role} column; give each "
                "role its own column (or none)."
            )
        seen[col] = role
    for col in roles.feature_cols:
        if col in seen:
            what = "numeric id" if seen[col] == "id" else seen[col]
            raise DatasetError(
                f"Column {col!r} is the {what} column, so it cannot also be a feature (an id or a "
                f"label as a feature would teach the model nothing true). Remove it from the "
                f"feature columns (command line: --feature-cols), or give the {seen[col]} role to "
                "another column."
            )
    if roles.features_from == "text" and roles.text_col is None:
        raise DatasetError("Features from text need a text column; choose one (command line: --text-col NAME).")
    if roles.features_from == "image" and roles.image_col is None:
        raise DatasetError("Features from images need an image column; choose one (command line: --image-col NAME).")
    if roles.features_from == "columns" and not roles.feature_cols:
        raise DatasetError(
            "No feature column chosen: choose numeric feature columns, or take the features from "
            "the text or the image column (command line: --feature-cols a,b,c or --features-from "
            "text|image)."
        )
    used = set(seen) | set(roles.feature_cols) | set(roles.layout_cols or ())
    ignored = tuple(c.name for c in infos if c.name not in used)
    return replace(roles, ignored=ignored)


def legacy_roles(frame: pd.DataFrame, *, id_col=GUESS, label_col=GUESS, image_col=GUESS,
                 layout_cols=GUESS, feature_cols=GUESS, **ignored_roles) -> ColumnRoles:
    """The fixed roles of sessions created before roles were guessed and stored.

    ``label`` and ``id`` by name when present, ``x, y`` as the layout when both are present,
    every other column a feature (the numeric check comes at loading), else the layout, else
    the image's pixels. Used only to reopen such sessions exactly as they were made.
    """
    columns = [str(c) for c in frame.columns]

    def by_name(value, default):
        if _given(value):
            return _check_column(value, columns, "label_col" if default == "label" else "id_col")
        return default if default in columns else None

    label = by_name(label_col, "label")
    ident = by_name(id_col, "id")
    image = None if not _given(image_col) else _check_column(image_col, columns, "image_col")
    if not _given(layout_cols):
        layout_cols = ("x", "y")
    layout = tuple(layout_cols) if layout_cols is not None and all(c in columns for c in layout_cols) else None
    used = {c for c in (label, ident, image) if c is not None}
    if _given(feature_cols):
        features = tuple(str(c) for c in feature_cols)
    else:
        features = tuple(c for c in columns if c not in used and c not in (layout or ()))
        if not features and layout is not None:
            features = layout
    source = "columns" if features else ("image" if image is not None else None)
    return ColumnRoles(id_col=ident, label_col=label, text_col=None, image_col=image,
                       layout_cols=layout, feature_cols=features if source == "columns" else (),
                       features_from=source, reasons={"legacy": "fixed roles of an older session"})
