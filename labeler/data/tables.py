"""Tables: CSV and Parquet files, and the rules that turn their columns into a data set.

Columns play roles: labels (``label_col``, default ``"label"`` when present), identifiers
(``id_col``), images (``image_col``), a given 2-D layout (``layout_cols``, default ``x, y``)
and features (``feature_cols``, default every other column, which must then be numeric).
Missing values are refused with the column and row named; see :func:`labeler.data.load_dataset`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from labeler.data.dataset import Dataset, DatasetError, finish, subset
from labeler.data.images import images_from_column, pixel_features
from labeler.data.table_files import check_fits, estimate_parquet, read_csv_bounded

__all__ = ["LABEL_DEFAULT", "ID_DEFAULT", "read_table", "from_frame"]


class DefaultLabel(str):
    """Marks the default ``label_col`` so an explicitly passed name can be told apart."""


#: The default ``label_col``: used when the table has a ``label`` column, ignored otherwise.
LABEL_DEFAULT = DefaultLabel("label")
#: The default ``id_col``: a column named ``id`` holds identifiers (never a feature) when present.
ID_DEFAULT = DefaultLabel("id")


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


def _require_column(frame: pd.DataFrame, column: str, role: str) -> None:
    if column not in frame.columns:
        raise DatasetError(
            f"{role} column {column!r} not found; the columns are: {', '.join(map(str, frame.columns))}."
        )


def _numeric_block(frame: pd.DataFrame, columns: list, what: str) -> np.ndarray:
    """Columns as float64, refusing non-numeric columns and NaN / infinite values by name and row."""
    bad = [c for c in columns if not (pd.api.types.is_numeric_dtype(frame[c]) or pd.api.types.is_bool_dtype(frame[c]))]
    if bad:
        raise DatasetError(
            f"{what}: column(s) {', '.join(map(repr, bad))} are not numeric. Encode them as numbers, "
            "drop them from the file, or name them 'id' (identifiers) / 'label' (true labels); "
            "from Python: id_col / label_col / image_col or feature_cols=[...]."
        )
    block = np.empty((len(frame), len(columns)), dtype=np.float64)
    for j, c in enumerate(columns):  # column by column: no copy of the whole selection first
        block[:, j] = frame[c].to_numpy(dtype=np.float64, na_value=np.nan)
    finite = np.isfinite(block)
    if not finite.all():
        rows, cols = np.nonzero(~finite)
        col = columns[int(cols[0])]
        raise DatasetError(
            f"{what}: column {col!r} has a missing (NaN) or infinite value at row {int(rows[0])} "
            f"({int((~finite).sum())} such value(s) in all). Drop those rows or impute the values "
            "(e.g. with the column mean) before loading."
        )
    return block


def from_frame(frame, *, name, folder, label_col, id_col, image_col, layout_cols, seed, n, opts) -> Dataset:
    """Build a Dataset from a table (CSV / Parquet): see :func:`load_dataset` for the rules."""
    frame.columns = [str(c) for c in frame.columns]
    if len(frame) < 2:
        raise DatasetError(f"{name} has {len(frame)} row(s); at least two points are needed to label anything.")
    rng = np.random.default_rng(seed)
    rows = subset(len(frame), n, rng, name)
    if n is not None:
        frame = frame.iloc[rows].reset_index(drop=True)

    used = set()
    y = None
    if label_col is not None:
        if isinstance(label_col, DefaultLabel) and label_col not in frame.columns:
            label_col = None
        else:
            _require_column(frame, label_col, "Label")
    if label_col is not None:
        used.add(label_col)
        labels = frame[label_col]
        if labels.isna().any():
            first = int(np.flatnonzero(labels.isna().to_numpy())[0])
            raise DatasetError(
                f"{name}: label column {label_col!r} is empty at row {first} ({int(labels.isna().sum())} "
                "missing label(s)). Fill or drop those rows, or load without labels (label_col=None)."
            )
        y = labels.to_numpy()
    ids = rows.copy()
    if isinstance(id_col, DefaultLabel) and id_col not in frame.columns:
        id_col = None
    if id_col is not None:
        _require_column(frame, id_col, "Id")
        used.add(id_col)
        ids = frame[id_col].to_numpy()
    images = image_paths = None
    if image_col is not None:
        _require_column(frame, image_col, "Image")
        used.add(image_col)
        images, image_paths = images_from_column(frame[image_col], folder, name, opts)
    layout = None
    layout_names = []
    if layout_cols is not None and all(c in frame.columns for c in layout_cols):
        layout_names = list(layout_cols)
        layout = _numeric_block(frame, layout_names, f"{name} layout")

    if opts.feature_cols is not None:
        feature_names = [str(c) for c in opts.feature_cols]
        for c in feature_names:
            _require_column(frame, c, "Feature")
    else:
        feature_names = [c for c in frame.columns if c not in used and c not in layout_names]
        if not feature_names and layout_names:
            feature_names = layout_names  # a plain "x, y, label" table: the layout is the data
    if feature_names:
        X = _numeric_block(frame, feature_names, name)
    elif images is not None:
        X, feature_names = pixel_features(images)
    else:
        raise DatasetError(
            f"{name} has no numeric feature column (columns: {', '.join(frame.columns)}). Add feature "
            "columns, or give image_col so that pixels become the features."
        )
    return finish(name, X, y, feature_names, ids=ids, layout=layout, images=images,
                  image_paths=image_paths, frame=frame)
