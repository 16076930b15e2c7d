"""The "Columns" box of the data picker: a table's column roles, guessed, shown and editable
before a session starts.

When the path typed in the picker names a CSV or Parquet file, the table is read (once per
file version: cached by path, modification time and size), its roles are guessed
(:func:`labeler.data.load.read_roles`) and shown as widgets set to the guess: id, label, text
and image columns (select boxes), where the features come from (numeric columns, the text's
TF-IDF or the image's pixels) and which numeric columns (multiselect), and the 2-D map's x and
y. "Open path" loads the table with the roles shown (:func:`picked_options`); a choice that
cannot work (the id among the features, one column in two roles) is named in the box before
anything is opened. Rows with missing values in the chosen columns are counted in the box,
which offers to drop them or fill them (column mean, or most frequent value for integer
columns); the choice is stored with the session. Columns no role can take (structs, maps,
ragged lists, numbers with stray strings) and integer codes left out of the features are
named in the box's notes, with the reason.

Plain helpers (:func:`initial_state`, :func:`options_from_state`) turn a guess into widget
values and widget values into ``load_dataset`` options; the tests drive them directly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import streamlit as st

from labeler.data.roles import FEATURE_SOURCES, ColumnRoles, TableGuess, check_roles
from labeler.ui.text import md_text

__all__ = ["NONE", "KEYS", "initial_state", "options_from_state", "check_state", "missing_rows",
           "visible_notes", "render_columns_box", "picked_options"]

#: The "no such column" choice of the select boxes.
NONE = "(none)"
#: Widget keys of the roles.
KEYS = {
    "id_col": "pick_role_id", "label_col": "pick_role_label", "text_col": "pick_role_text",
    "image_col": "pick_role_image", "features_from": "pick_role_source",
    "feature_cols": "pick_role_features", "layout_x": "pick_role_x", "layout_y": "pick_role_y",
}
#: Widget key of the missing-values choice (drawn only when rows have missing values).
MISSING_KEY = "pick_missing"
#: The choices for rows with missing values in the chosen columns (``load_dataset(missing=...)``).
MISSING_LABELS = {"drop": "drop those rows", "mean": "fill with the column mean / most frequent value"}
_SIGNATURE = "pick_roles_for"  # the file version the widgets were set for
_SOURCE_NAMES = {"columns": "numeric columns", "text": "text (TF-IDF)", "image": "image pixels"}
_NUMERIC = ("integer", "float", "bool")


def _short(value: str) -> str:
    return "none" if value == NONE else value


def _choices(guess: TableGuess) -> dict[str, list[str]]:
    """The options of each widget."""
    all_kinds = ("integer", "float", "bool", "string")
    return {
        "id_col": [NONE, *guess.names(("integer", "string"))],
        "label_col": [NONE, *guess.names(all_kinds)],
        "text_col": [NONE, *guess.names(("string",))],
        "image_col": [NONE, *guess.names(("string", "nested"))],
        "features_from": list(FEATURE_SOURCES),
        "feature_cols": guess.names(_NUMERIC),
        "layout_x": [NONE, *guess.names(_NUMERIC)],
        "layout_y": [NONE, *guess.names(_NUMERIC)],
    }


def initial_state(guess: TableGuess) -> dict:
    """Widget values (by key of :data:`KEYS`) showing the guessed roles."""
    r = guess.roles
    x, y = r.layout_cols or (NONE, NONE)
    return {
        KEYS["id_col"]: r.id_col or NONE,
        KEYS["label_col"]: r.label_col or NONE,
        KEYS["text_col"]: r.text_col or NONE,
        KEYS["image_col"]: r.image_col or NONE,
        KEYS["features_from"]: r.features_from or "columns",
        KEYS["feature_cols"]: list(r.feature_cols),
        KEYS["layout_x"]: x,
        KEYS["layout_y"]: y,
    }


def options_from_state(state: Mapping) -> dict:
    """``load_dataset`` role options from the widget values (every role explicit).

    Raises
    ------
    ValueError
        Only one of the map's x and y chosen.
    """
    def one(key):
        value = state.get(KEYS[key])
        return None if value in (None, NONE) else str(value)

    x, y = one("layout_x"), one("layout_y")
    if (x is None) != (y is None):
        raise ValueError("Choose both columns of the 2-D map (x and y), or neither.")
    source = state.get(KEYS["features_from"]) or "columns"
    return {
        "id_col": one("id_col"), "label_col": one("label_col"), "text_col": one("text_col"),
        "image_col": one("image_col"), "layout_cols": None if x is None else [x, y],
        "feature_cols": [str(c) for c in state.get(KEYS["feature_cols"]) or []] if source == "columns" else [],
        "features_from": source,
    }


def missing_rows(state: Mapping, guess: TableGuess) -> int:
    """Rows with a missing value in the chosen feature, map or label columns (0 if the roles
    cannot be read)."""
    try:
        opts = options_from_state(state)
    except ValueError:
        return 0
    used = [*opts["feature_cols"], *(opts["layout_cols"] or ()),
            *([opts["label_col"]] if opts["label_col"] else [])]
    return guess.missing_rows(used)


def visible_notes(notes, state: Mapping) -> list[str]:
    """The guess's notes that still hold for the roles chosen in the box.

    The "none was chosen" note of an ambiguous label goes once a label is chosen; a note on
    a column left out of the features goes once the user adds it; the note on a label with
    one value per row goes when another label is chosen.
    """
    label = state.get(KEYS["label_col"])
    features = set(map(str, state.get(KEYS["feature_cols"]) or []))
    out = []
    for note in notes:
        if note.startswith("Several columns could be the label") and label not in (None, NONE):
            continue
        head = note.split("'")
        column = head[1] if note.startswith("Column '") and len(head) > 2 else None
        if column is not None and "left out of the features" in note and column in features:
            continue
        if column is not None and "is taken as the label" in note and label != column:
            continue
        out.append(note)
    return out


def check_state(state: Mapping, guess: TableGuess) -> str | None:
    """The problem with the chosen roles (a message naming it and the fix), or None."""
    try:
        opts = options_from_state(state)
        roles = ColumnRoles(
            id_col=opts["id_col"], label_col=opts["label_col"], text_col=opts["text_col"],
            image_col=opts["image_col"],
            layout_cols=None if opts["layout_cols"] is None else tuple(opts["layout_cols"]),
            feature_cols=tuple(opts["feature_cols"]), features_from=opts["features_from"],
        )
        check_roles(roles, guess.columns)
        numeric = set(guess.names(_NUMERIC))
        for col in opts["layout_cols"] or ():
            if col in (opts["id_col"], opts["label_col"]):
                return f"Column {col!r} cannot be both on the 2-D map and the id or label column."
        bad = [c for c in opts["feature_cols"] if c not in numeric]
        if bad:
            return f"Feature column(s) {', '.join(map(repr, bad))} are not numeric; leave them out."
    except ValueError as exc:  # DatasetError too
        return str(exc)
    return None


# ---------------------------------------------------------------------------------------------
def _signature(path: Path) -> tuple[str, int, int]:
    stat = path.stat()
    return (str(path), int(stat.st_mtime_ns), int(stat.st_size))


@st.cache_data(max_entries=8, show_spinner="Reading the columns…")
def _read_guess(path: str, mtime_ns: int, size: int, max_bytes: int) -> TableGuess:
    from labeler.data.load import read_roles

    del mtime_ns, size  # (cache key: a changed file is read again)
    return read_roles(path, max_bytes=max_bytes)


def _widgets_show(signature) -> bool:
    """Whether the role widgets hold values for this file version (all of them: Streamlit
    forgets the values of widgets a run did not draw)."""
    state = st.session_state
    return state.get(_SIGNATURE) == signature and all(k in state for k in KEYS.values())


def _guess(path: Path, max_bytes: int) -> TableGuess:
    return _read_guess(*_signature(path), int(max_bytes))


def render_columns_box(path: Path, max_bytes: int) -> None:
    """Draw the roles of the table at ``path`` (set to the guess when the file is new)."""
    try:
        guess = _guess(path, max_bytes)
    except (ValueError, OSError) as exc:
        st.error(md_text(f"Cannot read the columns of {path.name}: {exc}"))
        return
    signature = _signature(path)
    if not _widgets_show(signature):
        st.session_state.update(initial_state(guess))
        st.session_state[_SIGNATURE] = signature
    choices = _choices(guess)
    with st.container(border=True, key="columns_box"):
        st.markdown(f"**Columns of {md_text(path.name)}** ({guess.n_rows:,} rows)")
        st.caption("Guessed from the names and values: check them, change them, then open.")
        st.selectbox("Id", choices["id_col"], key=KEYS["id_col"],
                     format_func=lambda v: "(row numbers)" if v == NONE else v,
                     help="Unique point ids, shown and exported; never a feature.")
        st.selectbox("Label", choices["label_col"], key=KEYS["label_col"],
                     help="True labels: the classes, and what 'Start with N true labels' uses.")
        st.selectbox("Text", choices["text_col"], key=KEYS["text_col"],
                     help="Free text, shown with each point and in the map's tooltips; can be "
                          "the features (TF-IDF).")
        st.selectbox("Image", choices["image_col"], key=KEYS["image_col"],
                     help="Image file paths (relative to the table's folder) or arrays.")
        st.radio("Features from", choices["features_from"], key=KEYS["features_from"],
                 format_func=_SOURCE_NAMES.get,
                 help="What the model sees: numeric columns, the TF-IDF of the text (cosine "
                      "geometry, reduced to at most 100 SVD components), or the image pixels.")
        # always drawn (disabled when unused), so that its value stays in the session state
        st.multiselect("Feature columns", choices["feature_cols"], key=KEYS["feature_cols"],
                       placeholder="numeric columns",
                       disabled=st.session_state.get(KEYS["features_from"]) != "columns")
        cols = st.columns(2)
        cols[0].selectbox("Map x", choices["layout_x"], key=KEYS["layout_x"], format_func=_short,
                          help="A given 2-D map (both x and y), else one is computed.")
        cols[1].selectbox("Map y", choices["layout_y"], key=KEYS["layout_y"], format_func=_short)
        n_missing = missing_rows(st.session_state, guess)
        if n_missing:
            with st.container(key="missing_box"):
                st.markdown(f"**{n_missing:,} of {guess.n_rows:,} rows** have missing values in the "
                            "chosen columns.")
                st.radio("Missing values", list(MISSING_LABELS), key=MISSING_KEY, index=None,
                         format_func=MISSING_LABELS.get, horizontal=True,
                         help="Stored with the session, so it reopens with the same rows and values.")
        problem = check_state(st.session_state, guess)
        if problem:
            st.warning(md_text(problem))
        roles = guess.roles
        why = [f"{role}: {md_text(reason)}" for role, _, reason in roles.lines() if reason]
        if why:
            st.caption("Guessed · " + " · ".join(why))
        for note in visible_notes(roles.notes, st.session_state):
            st.caption(":warning: " + md_text(note))
        if roles.ignored:
            st.caption("Not used: " + md_text(", ".join(roles.ignored[:20])))


def picked_options(path: Path, max_bytes: int) -> dict:
    """The role options to open the table at ``path`` with: the widgets' values when they show
    this file, else the guess.

    Raises
    ------
    ValueError
        The roles chosen cannot work, or the table cannot be read.
    """
    state = st.session_state
    guess = _guess(path, max_bytes)
    if not _widgets_show(_signature(path)):
        state = initial_state(guess)
    else:
        problem = check_state(state, guess)
        if problem:
            raise ValueError(problem)
    options = options_from_state(state)
    n_missing = missing_rows(state, guess)
    if n_missing:
        choice = state.get(MISSING_KEY)
        if choice not in MISSING_LABELS:
            raise ValueError(
                f"{n_missing:,} row(s) of {path.name} have missing values (NaN) in the chosen columns: "
                f"choose in the Columns box whether to {MISSING_LABELS['drop']} or "
                f"{MISSING_LABELS['mean']}, then open.")
        options["missing"] = choice
    return options


def is_table_path(path: Path) -> bool:
    """Whether ``path`` is a CSV or Parquet file (the data with column roles)."""
    from labeler.data.load import is_table

    return path.is_file() and is_table(path) and os.access(path, os.R_OK)
