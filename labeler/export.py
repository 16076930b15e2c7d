"""Export of labels: CSV, JSONL, Parquet, and a zip with one folder of PNG images per class.

The exported table has the columns

    id, label, source, origin, order, timestamp[, predicted, confidence], <original columns>

``source`` is how the label was given (:data:`labeler.store.LABEL_SOURCES`: ``queried``: the
point the learner asked for, ``chosen``: a point the user picked, ``accepted``: a prediction
accepted in bulk, ``initial``: the file's own label, ``selection``, ``similar``, ``batch``:
labelled many at once, ``batch_guess``, ``similar_guess``: a grid's pick left on the model's
guess). ``origin`` groups it for finding labels that only repeat the model (:data:`ORIGINS`):
``user``, ``file``, ``batch-confirmed`` (a grid pick the user chose), ``batch-guess`` (a grid
pick left on the model's guess), ``bulk`` (a lasso or box), ``bulk-guess`` (predictions
accepted); the labels the model guessed are those whose origin ends in ``guess``. ``order``
the 1-based position in the labelling sequence and ``timestamp`` the ISO 8601 UTC time it was
stored. The original columns are the data set's own table (``Dataset.frame``) or, without one,
its features named by ``feature_names``; an original column whose name clashes with one of
ours gets the suffix ``_original``.

Without predictions only the labelled points are written, in labelling order. With
predictions every point is written in data set order, unlabelled points with an empty label,
source, order and timestamp.

Formats: CSV (floats written with repr, so they read back exactly), JSON
Lines (one object per row, ``null`` for empty cells, floats exact), Parquet (typed columns;
``timestamp`` as a UTC timestamp), and zip (images only: ``<class>/<id>.png`` written with
Pillow plus a ``labels.csv`` manifest with a ``file`` column; unlabelled points are not in it).

Every file is written to a temporary file in the target directory, flushed to disk and then
renamed over the target (``os.replace``), so a failure never leaves a half-written file.
"""

from __future__ import annotations

import io
import json
import math
import re
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from labeler.atomic import atomic_target

__all__ = [
    "EXPORT_FORMATS",
    "ORIGINS",
    "ExportError",
    "infer_format",
    "label_table",
    "write_table",
    "write_image_zip",
]

EXPORT_FORMATS = ("csv", "jsonl", "parquet", "zip")
_SUFFIXES = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet", ".zip": "zip"}
_OWN_COLUMNS = ("id", "label", "source", "origin", "order", "timestamp", "predicted", "confidence")
#: The export's ``origin`` of each label source (module docstring).
ORIGINS = {"queried": "user", "chosen": "user", "initial": "file", "batch": "batch-confirmed",
           "similar": "batch-confirmed", "batch_guess": "batch-guess", "similar_guess": "batch-guess",
           "selection": "bulk", "accepted": "bulk-guess"}


class ExportError(ValueError):
    """The export cannot be made as asked (unknown format, zip without images, ...)."""


def infer_format(path, format: str | None = None) -> str:
    """Return the export format: ``format`` if given, else from the file suffix.

    Raises
    ------
    ExportError
        Unknown format, or no format and an unknown suffix.
    """
    if format is not None:
        fmt = str(format).lower().lstrip(".")
        if fmt not in EXPORT_FORMATS:
            raise ExportError(
                f"Unknown export format {format!r}; choose one of {', '.join(EXPORT_FORMATS)}."
            )
        return fmt
    suffix = Path(path).suffix.lower()
    if suffix not in _SUFFIXES:
        raise ExportError(
            f"Cannot tell the export format from the file name {str(path)!r}; pass "
            f"format= one of {', '.join(EXPORT_FORMATS)} or use a suffix "
            f"{', '.join(_SUFFIXES)}."
        )
    return _SUFFIXES[suffix]


def label_table(
    ids,
    labels,
    *,
    original: pd.DataFrame | None = None,
    predicted=None,
    confidence=None,
) -> pd.DataFrame:
    """Build the export table.

    Parameters
    ----------
    ids : array-like of shape (n_samples,)
        Identifier of every point.
    labels : sequence of records
        The net labels in labelling order; each has ``index``, ``label``, ``source`` and
        ``timestamp`` attributes (e.g. :class:`labeler.store.LabelRecord`).
    original : DataFrame of shape (n_samples, n_columns), optional
        The data set's original columns, row ``i`` for point ``i``.
    predicted, confidence : array-like of shape (n_samples,), optional
        Predicted class and its confidence for every point. When given, every point is
        exported (data set order); otherwise only the labelled points (labelling order).

    Returns
    -------
    DataFrame
        Indexed by point index (the index is not written by :func:`write_table`).
    """
    ids = np.asarray(ids)
    n = ids.shape[0]
    if original is not None and len(original) != n:
        raise ExportError(f"The original table has {len(original)} rows but there are {n} points.")
    labels = list(labels)
    with_pred = predicted is not None
    if with_pred != (confidence is not None):
        raise ExportError("Give both predicted and confidence, or neither.")
    if with_pred:
        rows = np.arange(n)
        lab = np.full(n, None, dtype=object)
        src = np.full(n, None, dtype=object)
        stamp = np.full(n, None, dtype=object)
        order = pd.array([pd.NA] * n, dtype="Int64")
        for k, rec in enumerate(labels, start=1):
            lab[rec.index], src[rec.index], stamp[rec.index] = rec.label, rec.source, rec.timestamp
            order[rec.index] = k
    else:
        rows = np.array([rec.index for rec in labels], dtype=np.intp)
        lab = np.array([rec.label for rec in labels], dtype=object)
        src = np.array([rec.source for rec in labels], dtype=object)
        stamp = np.array([rec.timestamp for rec in labels], dtype=object)
        order = pd.array(np.arange(1, len(labels) + 1), dtype="Int64")

    def obj(values):  # object dtype keeps None as an empty cell (not the string "None")
        return pd.Series(values, dtype=object)

    table = pd.DataFrame(
        {"id": ids[rows], "label": obj(lab), "source": obj(src),
         "origin": obj([None if v is None else ORIGINS.get(v, v) for v in src]), "order": order,
         "timestamp": obj(stamp)}
    )
    if with_pred:
        predicted = np.asarray(predicted)
        confidence = np.asarray(confidence, dtype=np.float64)
        if predicted.shape != (n,) or confidence.shape != (n,):
            raise ExportError(f"predicted and confidence must have shape ({n},).")
        table["predicted"] = obj(predicted)
        table["confidence"] = confidence
    if original is not None:
        orig = original.iloc[rows].reset_index(drop=True)
        orig.columns = [f"{c}_original" if str(c) in _OWN_COLUMNS else str(c) for c in orig.columns]
        table = pd.concat([table, orig], axis=1)
    table.index = pd.Index(rows, name="index")
    return table


# --------------------------------------------------------------------------------------------
# Writing
# --------------------------------------------------------------------------------------------


def _json_value(v):
    if v is None or v is pd.NA or v is pd.NaT:
        return None
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (pd.Timestamp, np.datetime64)):
        return pd.Timestamp(v).isoformat()
    if hasattr(v, "isoformat"):
        return v.isoformat()
    if isinstance(v, bytes):
        raise ExportError("A column holds bytes, which JSON cannot represent; drop or decode it.")
    return v


def _write_jsonl(table: pd.DataFrame, fh):
    cols = list(table.columns)
    for values in zip(*(table[c].tolist() for c in cols)):
        obj = {c: _json_value(v) for c, v in zip(cols, values)}
        fh.write(json.dumps(obj, ensure_ascii=False, allow_nan=False))
        fh.write("\n")


def _parquet_frame(table: pd.DataFrame) -> pd.DataFrame:
    out = table.reset_index(drop=True).copy()
    out["timestamp"] = pd.to_datetime(out["timestamp"], utc=True, format="ISO8601")
    return out


def write_table(table: pd.DataFrame, path, format: str | None = None) -> Path:
    """Write :func:`label_table` output as CSV, JSONL or Parquet, atomically.

    Raises
    ------
    ExportError
        Unknown format, or ``"zip"`` (use :func:`write_image_zip`).
    FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError
        The target cannot be written; no file is left behind.
    """
    fmt = infer_format(path, format)
    if fmt == "zip":
        raise ExportError("The zip export needs images; use write_image_zip().")
    path = Path(path).expanduser()
    with atomic_target(path) as tmp:
        if fmt == "csv":
            table.to_csv(tmp, index=False)
        elif fmt == "jsonl":
            with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
                _write_jsonl(table, fh)
        else:
            try:
                _parquet_frame(table).to_parquet(tmp, index=False)
            except (TypeError, ValueError) as exc:  # pyarrow.ArrowInvalid is a ValueError
                raise ExportError(f"Cannot write Parquet: {exc}. Use CSV or JSONL instead.") from exc
    return path


_UNSAFE = re.compile(r'[\x00-\x1f/\\:*?"<>|]')


def _safe_name(name: str) -> str:
    """A file or folder name safe on every common file system (no separators, no dots-only)."""
    s = _UNSAFE.sub("_", str(name)).strip()
    if not s or set(s) == {"."}:
        s = "_" + s.replace(".", "_")
    return s


def _png_bytes(index: int, images, image_paths) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    if images is not None:
        img = np.asarray(images[index])
        if img.dtype != np.uint8:
            raise ExportError(f"Images must be uint8 arrays; got {img.dtype}. Convert them first.")
        if not (img.ndim == 2 or (img.ndim == 3 and img.shape[2] in (3, 4))):
            raise ExportError(f"Image {index} has shape {img.shape}; expected (h, w) or (h, w, 3|4).")
        Image.fromarray(img).save(buf, format="PNG")
    else:
        with Image.open(image_paths[index]) as im:
            if im.mode not in ("1", "L", "LA", "I", "I;16", "P", "RGB", "RGBA"):
                im = im.convert("RGB")
            im.save(buf, format="PNG")
    return buf.getvalue()


_IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")


def _file_stem(pid) -> str:
    """An id's last path component without an image extension (``a/b_09.png`` -> ``b_09``).

    Ids of image-folder data sets are relative paths; in the zip the class folder replaces the
    original folder, so only the file's own name is kept.
    """
    name = str(pid).replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    for suffix in _IMAGE_SUFFIXES:
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name or str(pid)


def write_image_zip(table: pd.DataFrame, path, *, images=None, image_paths=None) -> Path:
    """Write the labelled points' images as ``<class>/<id>.png`` in a zip, atomically.

    Parameters
    ----------
    table : DataFrame
        :func:`label_table` output (indexed by point index). Rows without a label are left
        out of the zip.
    path : path-like
        Target ``.zip`` file.
    images : ndarray of shape (n_samples, h, w) or (n_samples, h, w, 3), uint8, optional
    image_paths : list of str, optional
        Image files, used when ``images`` is None.

    Notes
    -----
    Class and id are made safe as file names (path separators and reserved characters become
    ``_``); two classes or ids that collide after that get the suffix ``~2``, ``~3``... The
    zip also holds ``labels.csv``: the table's labelled rows with a ``file`` column.
    """
    if images is None and image_paths is None:
        raise ExportError(
            "The zip export writes one folder of images per class, but this data set has no "
            "images. Export CSV, JSONL or Parquet instead."
        )
    labelled = table[table["label"].notna()]
    folders: dict[str, str] = {}
    used: set[str] = set()
    files = []
    for index, label, pid in zip(labelled.index, labelled["label"], labelled["id"]):
        if label not in folders:
            base = name = _safe_name(label)
            k = 2
            while name.lower() in {f.lower() for f in folders.values()}:
                name, k = f"{base}~{k}", k + 1
            folders[label] = name
        base = f"{folders[label]}/{_safe_name(_file_stem(pid))}"
        name, k = f"{base}.png", 2
        while name.lower() in used:
            name, k = f"{base}~{k}.png", k + 1
        used.add(name.lower())
        files.append((int(index), name))
    manifest = labelled.reset_index(drop=True).copy()
    manifest["file"] = [name for _, name in files]
    path = Path(path).expanduser()
    with atomic_target(path) as tmp:
        with zipfile.ZipFile(tmp, "w") as zf:
            zf.writestr("labels.csv", manifest.to_csv(index=False), compress_type=zipfile.ZIP_DEFLATED)
            for index, name in files:
                zf.writestr(name, _png_bytes(index, images, image_paths), compress_type=zipfile.ZIP_STORED)
    return path
