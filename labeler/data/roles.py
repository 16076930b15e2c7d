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
6. features: every numeric (or boolean) column not taken above, except integer columns with
   few values that are dates or codes (``year``, ``*_code``, values in 1800..2200:
   :func:`labeler.data.columns.looks_like_code`), left out with a note. Without any: the text
   (``features_from="text"``), else the image's pixels, else the layout columns (a plain
   ``x, y, label`` table is its own map);
7. every other column is ignored (listed, so the user sees it).

Columns no role can take -- nested records (structs), maps, ragged lists, numbers with a few
stray strings -- are left out with a note naming what they hold (the rows of the strays), and
refused with that reason when a caller gives them a role. A column named like a label is never
guessed as the id; a ``label`` column with a different value on every row stays the label, with
a note. A table with a header and no rows is refused as such.

A numeric id column is never a feature, also when the caller gives ``feature_cols``
(:func:`check_roles` refuses it with the fix).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import pandas as pd

import numpy as np

from labeler.data.columns import (
    IMAGE_NAMES,
    TEXT_NAMES,
    UNNAMED_INDEX,
    ColumnInfo,
    label_rank,
    looks_like_code,
    named_like_id,
    norm_name,
    summarize_columns,
)
from labeler.data.dataset import GUESS, DatasetError

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
    missing_at: dict = field(default_factory=dict, compare=False)

    def missing_rows(self, columns) -> int:
        """How many rows have a missing value in at least one of ``columns``."""
        where = [self.missing_at[c] for c in columns if c in self.missing_at]
        if not where:
            return 0
        return int(np.unique(np.concatenate(where)).size)

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


def _check_usable(name, unusable: dict, role: str):
    """Refuse a struct, map or ragged list column (or numbers with stray strings) in a role."""
    if name is not None and name in unusable:
        what = _ROLE_TITLES.get(role, role).lower()
        article = "an" if what[0] in "aeiou" else "a"
        raise DatasetError(f"Column {name!r} cannot be {article} {what} column: it {unusable[name].why_unusable()}.")
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
    if len(frame) == 0:
        raise DatasetError(
            f"The table has a header ({len(frame.columns)} column(s): {_names(map(str, frame.columns))}) "
            "but no rows: there is nothing to label. Give a file with data rows."
        )
    infos = summarize_columns(frame)
    g = _Guess(infos, len(frame))
    unusable = {c.name: c for c in infos if c.unusable}
    for role, value in (("id_col", id_col), ("label_col", label_col), ("text_col", text_col),
                        ("image_col", image_col)):
        if _given(value):
            g.take(role, _check_usable(_check_column(value, g.columns, role), unusable, role), "given")
    if _given(layout_cols):
        if layout_cols is not None:
            pair = [layout_cols] if isinstance(layout_cols, str) else list(layout_cols)
            if len(pair) != 2:
                raise DatasetError(f"layout_cols must name two columns (x, y); got {pair}.")
            layout_cols = tuple(_check_column(c, g.columns, "layout_cols") for c in pair)
            g.taken.update(layout_cols)
        g.reasons["layout_cols"] = "given"
    features_given = _given(feature_cols)
    if features_given:
        feature_cols = [feature_cols] if isinstance(feature_cols, str) else feature_cols
        feature_cols = tuple(_check_usable(_check_column(c, g.columns, "feature_cols"), unusable, "feature_cols")
                             for c in feature_cols)
        g.reasons["feature_cols"] = "given"
    for name, info in unusable.items():  # no guess takes them; the note says why
        if name not in g.taken and name not in (feature_cols if features_given else ()):
            g.taken.add(name)
            g.notes.append(f"Column {name!r} {info.why_unusable()}: it is left out.")

    # in this order: each guess takes its column out of the next ones
    never = {c.name for c in g.free() if named_like_id(c.name) or UNNAMED_INDEX.match(c.name)}
    for role, guess in (("image_col", _guess_image), ("id_col", _guess_id),
                        ("label_col", _guess_label), ("text_col", _guess_text)):
        if role not in g.single:
            g.take(role, *guess(g, never))
    never -= {g.single["id_col"]}
    for name in sorted(never - g.taken):  # id-like columns that are not the id: no features either
        g.notes.append(f"Column {name!r} looks like an identifier but is not the id (not unique, or "
                       "another column is): it is not used as a feature.")
    if not _given(layout_cols):
        layout_cols = _guess_layout(g)
    for col in layout_cols or ():
        role = next((r for r, v in g.single.items() if v == col), None)
        if role is not None:
            raise DatasetError(
                f"Column {col!r} cannot be both a layout column and the {_ROLE_WORDS[role]} column; "
                "give another layout (or none)."
            )

    # the features: the numeric columns left, else the text, the pixels, the map
    text, image = g.single["text_col"], g.single["image_col"]
    if not features_given:
        codes, position = {}, {str(c): j for j, c in enumerate(frame.columns)}
        for c in g.free():
            why = (looks_like_code(c, frame.iloc[:, position[c.name]])
                   if c.numeric and c.name not in never else None)
            if why:
                codes[c.name] = why
                g.notes.append(f"Column {c.name!r} is left out of the features: {why}. Add it to "
                               "the feature columns if it is a measurement (command line: --feature-cols).")
        feature_cols = tuple(c.name for c in g.free() if c.numeric and c.name not in never and c.name not in codes)
        if feature_cols:
            g.reasons["feature_cols"] = "the numeric columns without another role"
    if _given(features_from):
        if features_from not in FEATURE_SOURCES:
            raise DatasetError(
                f"features_from must be one of {', '.join(FEATURE_SOURCES)}; got {features_from!r}."
            )
        g.reasons["feature_cols"] = "given"
    elif feature_cols or (layout_cols is not None and text is None and image is None):
        features_from = "columns"
    elif text is not None:
        features_from = "text"
        g.reasons["feature_cols"] = "no numeric column: the text is the data"
    elif image is not None:
        features_from = "image"
        g.reasons["feature_cols"] = "no numeric column: the pixels are the data"
    else:
        features_from = None
    if features_from == "columns" and not feature_cols and not features_given and layout_cols is not None:
        feature_cols = tuple(layout_cols)  # a plain "x, y, label" table: the map is the data
        g.reasons["feature_cols"] = "no other numeric column: the map is the data"
    roles = ColumnRoles(
        id_col=g.single["id_col"], label_col=g.single["label_col"], text_col=text, image_col=image,
        layout_cols=None if layout_cols is None else tuple(layout_cols),
        feature_cols=tuple(feature_cols) if features_from == "columns" else (),
        features_from=features_from, reasons=g.reasons, notes=tuple(g.notes),
    )
    return check_roles(roles, infos)


class _Guess:
    """The state of one guess: the columns, those already taken, the roles and their reasons."""

    def __init__(self, infos: list[ColumnInfo], n_rows: int):
        self.infos, self.n_rows = infos, n_rows
        self.columns = [c.name for c in infos]
        self.taken: set[str] = set()
        self.single: dict[str, str | None] = {}
        self.reasons: dict[str, str] = {}
        self.notes: list[str] = []

    def free(self) -> list[ColumnInfo]:
        return [c for c in self.infos if c.name not in self.taken]

    def take(self, role: str, name: str | None, why: str = "") -> None:
        self.single[role] = name
        if name is not None:
            self.taken.add(name)
            self.reasons[role] = why

    def few_values(self, c: ColumnInfo) -> bool:
        """Few enough distinct values to be classes."""
        return 2 <= c.n_unique <= min(MAX_GUESSED_CLASSES, max(2, self.n_rows // 2))

    def unique(self, c: ColumnInfo) -> bool:
        """Unique integers or strings, none missing: could be ids."""
        return c.kind in ("integer", "string") and c.n_missing == 0 and c.n_unique == self.n_rows > 0


def _guess_image(g: _Guess, never) -> tuple[str | None, str]:
    cands = [c for c in g.free() if c.kind == "nested" or (c.kind == "string" and c.image_share >= 0.9)]
    if not cands:
        return None, ""
    pick = sorted(cands, key=lambda c: norm_name(c.name) not in IMAGE_NAMES)[0]
    return pick.name, ("arrays (pixels)" if pick.kind == "nested"
                       else f"{pick.image_share:.0%} of its values are image files")


def _guess_id(g: _Guess, never) -> tuple[str | None, str]:
    # a column named like a label is the label's, however many values it has
    unique = [c for c in g.free() if g.unique(c) and (named_like_id(c.name) or label_rank(c.name) is None)]
    for c in unique:
        if named_like_id(c.name):
            kind = "integers" if c.kind == "integer" else "strings"
            return c.name, f"named like an id, {g.n_rows} unique {kind}"
    for c in unique:
        if UNNAMED_INDEX.match(c.name):
            return c.name, "an unnamed column of unique values (a saved row index)"
    for c in unique:
        if c.row_counter and label_rank(c.name) is None:
            return c.name, "counts the rows (0, 1, 2, ... in order)"
    short = [c for c in unique if c.kind == "string" and c.mean_words <= 1.0 and c.mean_chars <= 40
             and norm_name(c.name) not in TEXT_NAMES]
    if len(short) == 1:
        return short[0].name, f"the only column of unique short strings ({g.n_rows} values)"
    return None, ""


def _guess_label(g: _Guess, never) -> tuple[str | None, str]:
    named = sorted((c for c in g.free() if c.kind in ("integer", "float", "bool", "string")
                    and label_rank(c.name) is not None), key=lambda c: label_rank(c.name))
    for c in named:
        if label_rank(c.name) == 0 or g.few_values(c):
            if c.n_unique >= g.n_rows and g.n_rows > 2:
                g.notes.append(f"Column {c.name!r} is taken as the label but has a different value on "
                               f"each of the {g.n_rows} rows: every point would be its own class. If it "
                               "is not the label, choose another label column or none (command line: "
                               "--label-col NAME or --label-col '').")
            return c.name, f"named {c.name!r}, {c.n_unique} distinct values"
    cands = [c for c in g.free() if c.kind in ("string", "bool") and g.few_values(c)
             and c.name not in never and norm_name(c.name) not in TEXT_NAMES]
    if len(cands) == 1:
        return cands[0].name, f"the only string column with few values ({cands[0].n_unique})"
    if len(cands) > 1:
        g.notes.append(f"Several columns could be the label ({_names([c.name for c in cands])}); "
                       "none was chosen. Choose one (command line: --label-col NAME).")
    return None, ""


def _guess_text(g: _Guess, never) -> tuple[str | None, str]:
    strings = [c for c in g.free() if c.kind == "string" and c.name not in never]
    named = [c for c in strings if norm_name(c.name) in TEXT_NAMES]
    if named:
        return named[0].name, f"named {named[0].name!r}, {named[0].mean_words:.1f} words on average"
    free_text = [c for c in strings if (c.mean_words >= 3 or c.mean_chars >= 30)
                 and c.n_unique >= 0.5 * max(g.n_rows - c.n_missing, 1)]
    if free_text:
        pick = max(free_text, key=lambda c: c.mean_chars)
        return pick.name, (f"free text, {pick.mean_words:.1f} words on average, {pick.n_unique} "
                           "distinct values")
    return None, ""


def _guess_layout(g: _Guess) -> tuple[str, str] | None:
    by_name = {norm_name(c.name): c for c in g.free()}
    x, y = by_name.get("x"), by_name.get("y")
    if x is None or y is None or not (x.numeric and y.numeric):
        return None
    g.taken.update((x.name, y.name))
    g.reasons["layout_cols"] = "numeric columns named x and y"
    return x.name, y.name


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
