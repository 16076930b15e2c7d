"""The loaded data set kept in the session cache, so that reopening a file does not read it.

``labeler app FILE`` loads the file before the server starts (a file that cannot be loaded
stops there). At 10^6 rows that read is 2-5 s for an NPZ file and 15-20 s for a Parquet one
(its columns' roles guessed, its label column normalised), on every start. After the first
load the data set is kept here as ``.npy`` files (:class:`~labeler.session.cache.SessionCache`:
memory-mapped, checksummed, no pickle): its features, labels, ids, layout and table columns,
with a small manifest (names, classes, options, the lines the command line printed, the
features' fingerprint). A later start on the same, unchanged file maps them instead of reading
the file (:func:`load_snapshot`), and the session skips hashing the features again (the
fingerprint is in the manifest).

Whether the file is unchanged: :func:`file_identity`, its resolved path, size, modification
time (ns) and a SHA-256 of sampled blocks (the whole file up to :data:`WHOLE_FILE_BYTES`, else
:data:`N_BLOCKS` blocks of :data:`BLOCK_BYTES` spread evenly from the first byte to the last:
4 MiB read, milliseconds). Why not the full SHA-256: it reads the whole file (0.5-1.3 s quiet
for these files, 3-6 s on a loaded machine) on a path whose target is 5 s. Why not size and
time alone: a file replaced by another of the same size with its time kept (``cp -p``,
``rsync -t``, an archive extracted) would be served from the old snapshot; the sampled blocks
catch that (another data set differs in nearly every block). What it does not catch: an edit
of a few bytes outside the sampled blocks whose size and modification time are restored by
hand. Any other change is a miss: the file is read as before, and a session made on the old
contents refuses it (its stored fingerprint of the features differs).

Only data sets made of numbers and short strings are kept: images, image paths, texts and
validation sets are read from the file as before (:func:`snapshot_arrays` returns None). A
table's feature columns are not kept twice: a column with the same bits as a column of the
features is given back as that column of the mapped features (a view, no copy), so a Parquet
file's snapshot maps and checks as many bytes as an NPZ file's.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import numpy as np

from labeler.session.cache import SessionCache, package_version

__all__ = ["file_identity", "snapshot_key", "snapshot_arrays", "save_snapshot", "load_snapshot",
           "WHOLE_FILE_BYTES", "N_BLOCKS", "BLOCK_BYTES"]

#: Files up to this size are hashed whole.
WHOLE_FILE_BYTES = 1 << 24
#: Larger files: this many blocks of this many bytes, evenly spread, the last ending at the end.
N_BLOCKS, BLOCK_BYTES = 64, 1 << 16
#: Part of every key: a change of what a snapshot holds makes every old one a miss.
SNAPSHOT_VERSION = 2  # 2: a table's feature columns are X's columns, not copies
_META = "dataset-meta"
#: pandas dtypes of string columns kept (as codes and distinct values; a missing value as code -1).
_STRING_DTYPES = ("object", "str", "string")


def file_identity(path) -> dict:
    """What identifies a file's contents cheaply (module docstring): ``{"path", "size",
    "mtime_ns", "sample_sha256"}``.

    Parameters
    ----------
    path : str or Path
        An existing file.

    Returns
    -------
    dict
    """
    path = Path(path).expanduser().resolve()
    st = path.stat()
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        if st.st_size <= WHOLE_FILE_BYTES:
            while chunk := fh.read(1 << 22):
                h.update(chunk)
        else:
            last = st.st_size - BLOCK_BYTES
            for b in range(N_BLOCKS):
                fh.seek(last * b // (N_BLOCKS - 1))
                h.update(fh.read(BLOCK_BYTES))
    return {"path": str(path), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "sample_sha256": h.hexdigest()}


def snapshot_key(identity: dict, **load) -> str:
    """The cache key of a file's snapshot: its :func:`file_identity` and how it is loaded
    (options, role flags), the package's version and :data:`SNAPSHOT_VERSION`."""
    return SessionCache.key(what="dataset", identity=identity, load=load, package=package_version(),
                            snapshot=SNAPSHOT_VERSION)


def _strings(values: np.ndarray, missing: bool = False) -> tuple[np.ndarray, np.ndarray, str | None] | None:
    """``(codes, uniques, gap)`` of an array of str (object or unicode), uniques as a unicode
    array; None when a value is not a str (bytes, numbers...).

    ``missing=True`` also takes missing values (code -1), all of one kind, said by ``gap``:
    "none" (None) or "nan" (float NaN, pandas' missing string); without them ``gap`` is None.
    Missing values of mixed or other kinds (``pd.NA`` beside None...) give None."""
    import pandas as pd

    values = np.asarray(values, dtype=object)
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    if not all(type(u) is str for u in uniques):
        return None
    gap = None
    absent = codes < 0
    if absent.any():
        if not missing:
            return None
        gaps = values[absent]
        if all(v is None for v in gaps):
            gap = "none"
        elif all(type(v) is float and v != v for v in gaps):
            gap = "nan"
        else:
            return None
    return codes.astype(np.int32 if len(uniques) < 2**31 else np.int64), np.asarray(list(uniques), dtype=str), gap


def _column_arrays(prefix: str, values, missing: bool = False) -> tuple[dict, dict] | None:
    """Arrays that give back ``values`` exactly, and how (``{"kind", "dtype"}``, and
    ``"missing"`` for strings with missing values: :func:`_strings`); None if not kept (a
    dtype other than numbers, bools and strings)."""
    a = np.asarray(values)
    if a.dtype.kind in "biuf":
        return {prefix: a}, {"kind": "plain"}
    if a.dtype.kind == "U" or a.dtype == object:
        split = _strings(a, missing=missing)
        if split is None:
            return None
        how = {"kind": "strings", "dtype": "object" if a.dtype == object else str(a.dtype)}
        if split[2] is not None:
            how["missing"] = split[2]
        return {f"{prefix}-codes": split[0], f"{prefix}-uniques": split[1]}, how
    return None


def _column_back(prefix: str, how: dict, arrays: dict):
    if how["kind"] == "plain":
        return np.asarray(arrays[prefix])  # a plain ndarray view of the memory map
    if how["kind"] == "features":  # a table's feature column: the column of X it equals, not a copy
        return np.asarray(arrays["X"])[:, int(how["j"])]
    codes, uniques = np.asarray(arrays[f"{prefix}-codes"]), np.asarray(arrays[f"{prefix}-uniques"])
    gap = how.get("missing")
    if gap is None:
        out = uniques[codes]
    else:  # strings with missing values (code -1): None or NaN where they were
        out = uniques.astype(object)[codes] if len(uniques) else np.empty(codes.shape[0], dtype=object)
        out[codes < 0] = None if gap == "none" else np.nan
    if how["dtype"] == "object":
        return out.astype(object, copy=False)
    if how["dtype"] in _STRING_DTYPES:  # a table's pandas string column
        import pandas as pd

        return pd.array(out, dtype=how["dtype"])
    return out.astype(how["dtype"], copy=False)


def snapshot_arrays(dataset, printed: str, fingerprint: str, options: dict) -> tuple[dict, dict] | None:
    """The arrays and the manifest that give ``dataset`` back, or None when it is not kept
    (images, image paths, texts, a validation set, a table column or index of another kind).
    A partly filled label column is kept: its labelled rows and labels
    (:class:`labeler.data.dataset.FileLabels`), and in the table its missing values.

    Parameters
    ----------
    dataset : labeler.data.Dataset
    printed : str
        What the command line printed while loading it (a table's roles), printed again.
    fingerprint : str
        :func:`labeler.session.data.fingerprint_of` the data set's features.
    options : dict
        The load options the command line hands on (given back with the data set).

    Returns
    -------
    arrays : dict of name -> ndarray
    meta : dict (JSON)
    """
    import pandas as pd

    if any(getattr(dataset, f, None) is not None
           for f in ("images", "image_paths", "texts", "X_val", "y_val")):
        return None
    meta = {"name": dataset.name, "classes": list(dataset.classes), "feature_names": list(dataset.feature_names),
            "params": dataset.params, "load_options": dataset.load_options, "printed": printed,
            "fingerprint": fingerprint, "columns": {}}
    try:
        options = json.loads(json.dumps(options))
    except (TypeError, ValueError):
        return None
    try:
        if json.loads(json.dumps(meta)) != meta:  # e.g. a tuple among the params: read the file
            return None
    except (TypeError, ValueError):
        return None
    arrays = {"X": np.ascontiguousarray(dataset.X, dtype=np.float64)}
    for name in ("y", "ids"):
        value = getattr(dataset, name)
        if value is None:
            meta[name] = None
            continue
        kept = _column_arrays(name, value)
        if kept is None:
            return None
        arrays.update(kept[0])
        meta[name] = kept[1]
    if dataset.layout is not None:
        arrays["layout"] = dataset.layout
    known = getattr(dataset, "file_labels", None)
    meta["file_labels"] = None
    if known is not None:  # a partly filled label column: the rows that carry a label, and their labels
        kept = _column_arrays("file_labels-labels", known.labels)
        if kept is None:
            return None
        arrays.update(kept[0])
        arrays["file_labels-rows"] = np.asarray(known.rows, dtype=np.int64)
        meta["file_labels"] = {"column": str(known.column), "n_rows": int(known.n_rows), "labels": kept[1]}
    frame = dataset.frame
    if frame is not None:
        if not isinstance(frame.index, pd.RangeIndex) or frame.index.start != 0 or frame.index.step != 1 \
                or not all(isinstance(c, str) for c in frame.columns) or frame.columns.duplicated().any():
            return None
        order = []
        feature_of = {str(f): k for k, f in enumerate(dataset.feature_names)}
        X = arrays["X"]
        for j, column in enumerate(frame.columns):
            series = frame[column]
            name = str(series.dtype)
            numeric = isinstance(series.dtype, np.dtype) and series.dtype.kind in "biuf"
            if not (numeric or name in _STRING_DTYPES):
                return None
            k = feature_of.get(column)
            if k is not None and k < X.shape[1] and series.dtype == np.float64 \
                    and np.array_equal(series.to_numpy().view(np.uint64), X[:, k].view(np.uint64)):
                order.append([column, {"kind": "features", "j": k}])  # the same bits as X's column
                continue
            values = series.to_numpy()
            if not numeric and name != "object":  # a pandas string dtype: its missing values as None
                values = series.to_numpy(dtype=object, na_value=None)
            kept = _column_arrays(f"col{j}", values, missing=not numeric)
            if kept is None:
                return None
            if not numeric:
                kept[1]["dtype"] = name
            arrays.update(kept[0])
            order.append([column, kept[1]])
        meta["columns"] = {"order": order, "n": len(frame)}
    else:
        meta["columns"] = None
    meta["arrays"] = sorted(arrays)
    meta["options"] = options
    meta["has_layout"] = dataset.layout is not None
    return arrays, meta


def save_snapshot(cache: SessionCache, key: str, arrays: dict, meta: dict) -> bool:
    """Write the snapshot (the arrays, then the manifest last: a partial snapshot is a miss).
    Returns whether all of it was written."""
    for name, array in arrays.items():
        if cache.save(f"dataset-{name}", key, array) is None:
            return False
    raw = np.frombuffer(json.dumps(meta, sort_keys=True).encode("utf-8"), dtype=np.uint8)
    return cache.save(_META, key, raw) is not None


def load_snapshot(cache: SessionCache, key: str):
    """The data set kept under ``key``, its arrays memory-mapped read-only, or None.

    Returns
    -------
    dataset : labeler.data.Dataset or None
        With ``_fingerprint`` set (the manifest's) so the session does not hash it again.
    printed : str
        What the first load printed.
    options : dict
        The load options the command line handed on then.
    """
    import pandas as pd

    from labeler.data.dataset import Dataset, FileLabels

    raw = cache.load(_META, key, dtype=np.uint8)
    if raw is None:
        return None, "", {}
    try:
        meta = json.loads(bytes(np.asarray(raw)).decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        return None, "", {}
    arrays = {}
    for name in meta["arrays"]:
        a = cache.load(f"dataset-{name}", key)
        if a is None:
            return None, "", {}
        arrays[name] = a
    X = arrays["X"]
    y = None if meta["y"] is None else _column_back("y", meta["y"], arrays)
    ids = np.arange(X.shape[0]) if meta["ids"] is None else _column_back("ids", meta["ids"], arrays)
    frame = None
    if meta["columns"] is not None:
        columns = {}
        for j, (column, how) in enumerate(meta["columns"]["order"]):
            values = _column_back(f"col{j}", how, arrays)
            if how.get("dtype") == "object":  # kept as object (pandas would make it a string column)
                values = pd.Series(values, dtype=object, copy=False)
            columns[column] = values
        frame = pd.DataFrame(columns, copy=False)
    known = meta.get("file_labels")
    file_labels = None
    if known is not None:
        file_labels = FileLabels(rows=np.asarray(arrays["file_labels-rows"]),
                                 labels=_column_back("file_labels-labels", known["labels"], arrays),
                                 column=str(known["column"]), n_rows=int(known["n_rows"]))
    dataset = Dataset(name=meta["name"], X=X, y=y, classes=list(meta["classes"]),
                      feature_names=list(meta["feature_names"]), ids=ids,
                      layout=arrays.get("layout") if meta["has_layout"] else None, images=None,
                      image_paths=None, frame=frame, params=meta["params"], load_options=meta["load_options"],
                      file_labels=file_labels)
    dataset._fingerprint = (meta["fingerprint"], X.shape)
    return dataset, str(meta.get("printed") or ""), dict(meta["options"])


def snapshot_enabled() -> bool:
    """Off with ``LABELER_CACHE=off`` like the rest of the session cache."""
    return os.environ.get("LABELER_CACHE", "on").strip().lower() not in ("off", "0", "no", "false")
