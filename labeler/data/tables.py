"""Tables: CSV and Parquet files, and the column roles that turn them into a data set.

Columns play roles (:mod:`labeler.data.roles`): identifiers (``id_col``), true labels
(``label_col``), free text (``text_col``), images (``image_col``), a given 2-D layout
(``layout_cols``) and features (``feature_cols``, or the text's TF-IDF, or the pixels:
``features_from``). A role not given is guessed from the names and values of the columns;
the roles used are kept in ``Dataset.load_options`` so that a session reloads exactly them.
Missing values are refused with the column and row named; see :func:`labeler.data.load_dataset`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from labeler.data.dataset import GUESS, Dataset, DatasetError, finish, subset
from labeler.data.images import images_from_column, pixel_features
from labeler.data.roles import guess_roles, legacy_roles
from labeler.data.text import default_components, text_features
from labeler.data.table_files import check_fits, estimate_parquet, read_csv_bounded

__all__ = ["read_table", "from_frame"]


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


def _numeric_block(frame: pd.DataFrame, columns: list, what: str) -> np.ndarray:
    """Columns as float64, refusing non-numeric columns and NaN / infinite values by name and row."""
    bad = [c for c in columns if not (pd.api.types.is_numeric_dtype(frame[c]) or pd.api.types.is_bool_dtype(frame[c]))]
    if bad:
        raise DatasetError(
            f"{what}: column(s) {', '.join(map(repr, bad))} are not numeric, so they cannot be "
            "features. Leave them out of the feature columns (the app's Columns box, or "
            "--feature-cols a,b,c), give them another role (--id-col, --label-col, --text-col), "
            "or encode them as numbers."
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


def from_frame(frame, *, name, folder, label_col=GUESS, id_col=GUESS, image_col=GUESS,
               text_col=GUESS, layout_cols=GUESS, seed=0, n=None, opts) -> Dataset:
    """Build a Dataset from a table (CSV / Parquet): see :func:`load_dataset` for the rules.

    The roles not given are guessed on the whole table (:func:`labeler.data.roles.guess_roles`,
    or the fixed roles of older sessions with ``opts.legacy_roles``), then the seeded subset of
    ``n`` rows is taken, then the features are built from it.
    """
    frame.columns = [str(c) for c in frame.columns]
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

    y = None
    if roles.label_col is not None:
        labels = frame[roles.label_col]
        if labels.isna().any():
            first = int(np.flatnonzero(labels.isna().to_numpy())[0])
            raise DatasetError(
                f"{name}: label column {roles.label_col!r} is empty at row {first} "
                f"({int(labels.isna().sum())} missing label(s)). Fill or drop those rows, or load "
                "without labels (no label column: --label-col '' / label_col=None)."
            )
        y = labels.to_numpy()
    ids = rows.copy() if roles.id_col is None else frame[roles.id_col].to_numpy()
    images = image_paths = None
    if roles.image_col is not None:
        images, image_paths = images_from_column(frame[roles.image_col], folder, name, opts)
    layout = None
    if roles.layout_cols is not None:
        layout = _numeric_block(frame, list(roles.layout_cols), f"{name} layout")
    texts = None
    if roles.text_col is not None:
        texts = frame[roles.text_col].astype(object).where(frame[roles.text_col].notna(), "")
        texts = np.asarray([str(t) for t in texts], dtype=object)

    params = {}
    options = roles.options()
    if roles.features_from == "columns":
        feature_names = list(roles.feature_cols)
        X = _numeric_block(frame, feature_names, name)
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
                  load_options=options)
