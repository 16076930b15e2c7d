"""Tables: CSV and Parquet files, and the column roles that turn them into a data set.

Columns play roles (:mod:`labeler.data.roles`): identifiers (``id_col``), true labels
(``label_col``), free text (``text_col``), images (``image_col``), a given 2-D layout
(``layout_cols``) and features (``feature_cols``, or the text's TF-IDF, or the pixels:
``features_from``). A role not given is guessed from the names and values of the columns;
the roles used are kept in ``Dataset.load_options`` so that a session reloads exactly them.
Missing values in the features are refused with the column and row named, or (option
``missing``) their rows dropped or the values filled with the column mean (integer and boolean
columns: the most frequent value); see :func:`labeler.data.load_dataset`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from labeler.data.dataset import GUESS, Dataset, DatasetError, FileLabels, finish, subset
from labeler.data.images import images_from_column, pixel_features
from labeler.data.roles import guess_roles, legacy_roles
from labeler.data.text import default_components, text_features
from labeler.data.table_files import check_fits, estimate_parquet, read_csv_bounded

__all__ = ["read_table", "from_frame", "filled_value"]


def read_table(path: Path, suffix: str) -> pd.DataFrame:
    """Read a CSV or Parquet file (by ``suffix``) into a DataFrame, after checking that it fits
    in memory (CSV files are read in chunks: :mod:`labeler.data.table_files`).

    Raises
    ------
    DatasetError
        An empty, truncated or otherwise unreadable file, with the file's name and the fix; a
        file too large for the available memory, with its size and how many rows fit.
    """
    try:
        if suffix == ".csv":
            return read_csv_bounded(path)
        import pyarrow

        try:
            check_fits(path, estimate_parquet(path))
            return pd.read_parquet(path, engine="pyarrow")
        except pyarrow.ArrowException as exc:
            raise ValueError(str(exc)) from None
    except DatasetError:
        raise
    except pd.errors.EmptyDataError:
        raise DatasetError(f"{path.name} is empty: it has no header and no rows.") from None
    except (OSError, ValueError, UnicodeDecodeError, pd.errors.ParserError) as exc:
        kind = "CSV" if suffix == ".csv" else "Parquet"
        raise DatasetError(
            f"Could not read {path.name} as {kind}: {exc}. Check that the file is a complete, valid "
            f"{kind} file (re-export it if needed)."
        ) from None


def _not_numeric_message(frame: pd.DataFrame, bad: list, what: str) -> str:
    """Why ``bad`` columns cannot be features; a column of numbers with stray strings names its rows."""
    from labeler.data.columns import summarize_columns

    details = []
    for c in bad:
        info = summarize_columns(frame[[c]])[0]
        if info.kind == "mixed":
            details.append(f"column {c!r} {info.why_unusable()}")
    if details:
        return f"{what}: " + "; ".join(details) + "."
    return (
        f"{what}: column(s) {', '.join(map(repr, bad))} are not numeric, so they cannot be "
        "features. Leave them out of the feature columns (the app's Columns box, or "
        "--feature-cols a,b,c), give them another role (--id-col, --label-col, --text-col), "
        "or encode them as numbers."
    )


#: Integer-valued columns with at most this many distinct values are filled with the most frequent one.
FEW_VALUES = 12


def _fill_value(column: np.ndarray, series: pd.Series) -> float:
    """The column mean; for boolean columns and integer values with at most :data:`FEW_VALUES`
    distinct values, the most frequent value (ties: the smallest)."""
    values = column[np.isfinite(column)]
    if not values.size:
        raise DatasetError(f"column {series.name!r} has no value at all, so it cannot be filled; leave it out.")
    uniq, counts = np.unique(values, return_counts=True)
    # integer-valued with few values (a CSV reads an integer column with gaps as floats): a count or a code
    integral = pd.api.types.is_bool_dtype(series) or (np.all(uniq == np.round(uniq)) and uniq.size <= FEW_VALUES)
    if integral:
        return float(uniq[np.argmax(counts)])
    return float(values.mean())


def filled_value(series: pd.Series) -> tuple[float, str]:
    """The value ``missing="mean"`` puts in the gaps of the table column ``series``, and how it
    was chosen ("mean" or "most frequent"), for display: the same rule as :func:`_fill_value`."""
    column = series.to_numpy(dtype=np.float64, na_value=np.nan)
    value = _fill_value(column, series)
    values = column[np.isfinite(column)]
    integral = pd.api.types.is_bool_dtype(series) or (
        np.all(values == np.round(values)) and np.unique(values).size <= FEW_VALUES)
    return value, "most frequent" if integral else "mean"


def _numeric_block(frame: pd.DataFrame, columns: list, what: str, missing: str = "error") -> np.ndarray:
    """Columns as float64, refusing non-numeric columns and NaN / infinite values by name and row.

    ``missing="mean"`` fills missing values (NaN) with :func:`_fill_value`; infinite values are
    refused whatever ``missing`` says.
    """
    bad = [c for c in columns if not (pd.api.types.is_numeric_dtype(frame[c]) or pd.api.types.is_bool_dtype(frame[c]))]
    if bad:
        raise DatasetError(_not_numeric_message(frame, bad, what))
    sources = []
    for c in columns:
        series = frame[c]
        # a numpy float64 column is read as it is (a view); any other kind is converted a step of
        # rows at a time in _rows_of: converting every column first held a second copy of the
        # whole block at the peak
        own = series.to_numpy() if series.dtype == np.float64 else None
        fill = None
        if missing == "mean":
            whole = own if own is not None else series.to_numpy(dtype=np.float64, na_value=np.nan)
            if np.isnan(whole).any():  # one column's copy at a time
                fill = _fill_value(whole, series)
            del whole
        sources.append((series, own, fill))
    block = _rows_of(sources, len(frame))
    finite = np.isfinite(block)
    if not finite.all():
        rows, cols = np.nonzero(~finite)
        col = columns[int(cols[0])]
        n_rows = int((~finite).any(axis=1).sum())
        if np.isinf(block[rows[0], cols[0]]):
            raise DatasetError(
                f"{what}: column {col!r} has an infinite value at row {int(rows[0])}; correct it, "
                "or leave the column out."
            )
        raise DatasetError(
            f"{what}: {'1 row has' if n_rows == 1 else f'{n_rows:,} rows have'} a missing value in the "
            f"features (first: column {col!r}, "
            f"row {int(rows[0])}). Choose what to do with them: drop those rows, or fill them with "
            "the column mean / most frequent value (the Columns box's 'Missing values', or "
            "--missing drop|mean)."
        )
    return block


#: Rows per step of :func:`_rows_of` (its buffer, columns x rows, stays in the CPU's cache).
_ROWS_STEP = 1 << 14


def _rows_of(sources: list, n: int) -> np.ndarray:
    """The C-ordered (n, len(sources)) float64 block of the columns ``sources``, copied through a
    small column-major buffer, step by step of :data:`_ROWS_STEP` rows, and that buffer
    transposed into the block (writing one column at a time straight into a C-ordered block
    touches all of its memory once per column: 3x slower at 10^6 x 32).

    ``sources`` holds ``(series, values, fill)`` per column: ``values`` the column's float64
    array when it has one (else the step's rows of ``series`` are converted, missing values as
    NaN), ``fill`` the value for its missing values (None: left as NaN)."""
    block = np.empty((n, len(sources)), dtype=np.float64)
    buffer = np.empty((len(sources), min(n, _ROWS_STEP)), dtype=np.float64)
    for a in range(0, n, _ROWS_STEP):
        b = min(n, a + _ROWS_STEP)
        for j, (series, values, fill) in enumerate(sources):
            row = buffer[j, :b - a]
            row[:] = values[a:b] if values is not None else series.iloc[a:b].to_numpy(
                dtype=np.float64, na_value=np.nan)
            if fill is not None:
                row[np.isnan(row)] = fill
        block[a:b] = buffer[:, :b - a].T
    return block


def _rows_without_missing(frame: pd.DataFrame, columns: list) -> np.ndarray:
    """Boolean mask of the rows with a value in every one of ``columns``."""
    keep = np.ones(len(frame), dtype=bool)
    for c in columns:
        keep &= ~frame[c].isna().to_numpy()
    return keep


def from_frame(frame, *, name, folder, label_col=GUESS, id_col=GUESS, image_col=GUESS,
               text_col=GUESS, layout_cols=GUESS, seed=0, n=None, opts) -> Dataset:
    """Build a Dataset from a table (CSV / Parquet): see :func:`load_dataset` for the rules.

    The roles not given are guessed on the whole table (:func:`labeler.data.roles.guess_roles`,
    or the fixed roles of older sessions with ``opts.legacy_roles``), then the seeded subset of
    ``n`` rows is taken, then the features are built from it.
    """
    frame.columns = [str(c) for c in frame.columns]
    if len(frame) == 0:
        raise DatasetError(f"{name} has a header but no rows: there is nothing to label. Give a file with data rows.")
    if len(frame) < 2:
        raise DatasetError(f"{name} has {len(frame)} row(s); at least two points are needed to label anything.")
    given = dict(id_col=id_col, label_col=label_col, image_col=image_col, layout_cols=layout_cols,
                 feature_cols=opts.feature_cols)
    if opts.legacy_roles:
        roles = legacy_roles(frame, **given)
    else:
        roles = guess_roles(frame, text_col=text_col, features_from=opts.features_from, **given)
    rng = np.random.default_rng(seed)
    rows = subset(len(frame), n, rng, name)
    if n is not None:
        frame = frame.iloc[rows].reset_index(drop=True)
    if opts.missing == "drop":
        # not the label column: its empty rows are the unlabelled pool (:func:`_label_column`)
        used = [*((roles.feature_cols if roles.features_from == "columns" else ())), *(roles.layout_cols or ())]
        keep = _rows_without_missing(frame, list(dict.fromkeys(used)))
        if keep.sum() < 2:
            raise DatasetError(f"{name}: only {int(keep.sum())} row(s) have every chosen column filled; "
                               "fill the missing values instead of dropping them (--missing mean).")
        if not keep.all():
            frame = frame.loc[keep].reset_index(drop=True)
            rows = np.asarray(rows)[keep]

    y = file_labels = None
    if roles.label_col is not None:
        y, file_labels = _label_column(frame[roles.label_col], roles.label_col)
    ids = rows.copy() if roles.id_col is None else frame[roles.id_col].to_numpy()
    images = image_paths = None
    if roles.image_col is not None:
        images, image_paths = images_from_column(frame[roles.image_col], folder, name, opts)
    layout = None
    if roles.layout_cols is not None:
        layout = _numeric_block(frame, list(roles.layout_cols), f"{name} layout", opts.missing)
    texts = None
    if roles.text_col is not None:
        texts = frame[roles.text_col].astype(object).where(frame[roles.text_col].notna(), "")
        texts = np.asarray([str(t) for t in texts], dtype=object)

    params = {}
    options = roles.options()
    if opts.missing != "error":
        options["missing"] = opts.missing  # stored with the session: it reopens identically
    if roles.features_from == "columns":
        feature_names = list(roles.feature_cols)
        X = _numeric_block(frame, feature_names, name, opts.missing)
    elif roles.features_from == "text":
        feats = text_features(texts, n_components=opts.text_components, min_df=opts.text_min_df,
                              seed=seed, name=roles.text_col, recipe=opts.text_recipe, exact=opts.text_exact)
        X, feature_names = feats.X, feats.names
        params.update(standardize=False, text_features={
            "column": roles.text_col, "terms": feats.n_terms, "components": feats.n_components,
            "min_df": feats.min_df, "empty": feats.n_empty, "summary": feats.summary(),
            "source_sha256": feats.source_sha256})
        options.update(text_components=default_components(opts.text_recipe) if opts.text_components is None
                       else opts.text_components, text_min_df=opts.text_min_df, text_recipe=opts.text_recipe)
        if opts.text_exact:
            options.update(text_exact=True)
    elif roles.features_from == "image":
        X, feature_names = pixel_features(images)
    else:
        raise DatasetError(
            f"{name} has no numeric feature column, no text column and no image column (columns: "
            f"{', '.join(frame.columns)}). Add numeric feature columns, or name a column of free "
            "text (--text-col NAME) or of image files (--image-col NAME)."
        )
    return finish(name, X, y, feature_names, ids=ids, layout=layout, images=images,
                  image_paths=image_paths, frame=frame, params=params, texts=texts,
                  load_options=options, file_labels=file_labels)


def empty_labels(labels: pd.Series) -> np.ndarray:
    """Boolean mask of the rows of a label column without a label: NaN, None, or a string that
    is empty or only whitespace."""
    empty = labels.isna().to_numpy()
    if not (pd.api.types.is_numeric_dtype(labels) or pd.api.types.is_bool_dtype(labels)):
        # each distinct value looked at once (a label column has a few): 10^6 string strips saved
        codes, uniques = pd.factorize(labels.to_numpy(dtype=object), use_na_sentinel=True)
        blank = np.array([str(u).strip() == "" for u in uniques], dtype=bool)
        if blank.any():
            empty = empty | ((codes >= 0) & blank[np.maximum(codes, 0)])
    return empty


def _label_column(labels: pd.Series, column: str) -> tuple[np.ndarray | None, FileLabels | None]:
    """``(y, None)`` for a label column filled in every row; ``(None, FileLabels)`` for one
    filled in some rows (they start a session, the others are the pool); ``(None, None)`` for
    a column with no label at all. Whole numbers read as floats (a CSV integer column with
    gaps) become integers again, as in a full column."""
    empty = empty_labels(labels)
    if not empty.any():
        return labels.to_numpy(), None
    if empty.all():
        return None, None
    rows = np.flatnonzero(~empty)
    values = labels.to_numpy()[rows]
    if values.dtype.kind == "f" and np.all(values == np.round(values)):
        values = values.astype(np.int64)
    return None, FileLabels(rows=rows, labels=values, column=str(column), n_rows=len(labels))
