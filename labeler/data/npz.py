"""NPZ archives: named NumPy arrays, read without pickle.

An archive holds ``X`` (features, n x d) or ``images`` (n x h x w [x 3]) and optionally ``y``
(labels), ``layout`` (n x 2) and ``ids``; any other name, an object (pickled) array or a
non-zip file is refused with a message that says how to save the arrays instead.
"""

from __future__ import annotations

import zipfile
import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from labeler.data.dataset import Dataset, DatasetError, FileOptions, finish, subset
from labeler.data.images import pixel_features, to_uint8

__all__ = ["load_npz"]


def load_npz(path: Path, *, seed, n, opts: FileOptions) -> Dataset:
    """Arrays ``X`` (or ``images``), optional ``y``, ``images``, ``layout``, ``ids`` (no pickle)."""
    allowed = {"X", "y", "images", "layout", "ids"}
    if not zipfile.is_zipfile(path):
        # np.load would take any non-zip file for a pickle and report that instead
        raise DatasetError(
            f"Could not read {path.name} as .npz: it is not a NumPy archive (not a zip file). "
            "Save the arrays with np.savez(path, X=..., y=...)."
        )
    try:
        with np.load(path, allow_pickle=False) as archive:
            unknown = sorted(set(archive.files) - allowed)
            if unknown:
                raise DatasetError(
                    f"{path.name} holds unexpected array(s) {', '.join(unknown)}; allowed names: "
                    f"{', '.join(sorted(allowed))}."
                )
            arrays = {k: archive[k] for k in archive.files}
    except DatasetError:
        raise
    except ValueError as exc:
        if "pickle" in str(exc):
            raise DatasetError(
                f"{path.name} holds object (pickled) arrays, which are refused for safety. Save plain "
                "numeric or string arrays (np.savez with numbers / fixed-width strings)."
            ) from None
        raise DatasetError(f"Could not read {path.name} as .npz: {exc}.") from None
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise DatasetError(f"Could not read {path.name} as .npz (corrupt or not a NumPy archive): {exc}.") from None
    if "X" not in arrays and "images" not in arrays:
        raise DatasetError(f"{path.name} has no array named 'X' (features) or 'images'; save one with np.savez(X=...).")
    n_rows = len(arrays["X"] if "X" in arrays else arrays["images"])
    for key, arr in arrays.items():
        if arr.ndim == 0 or len(arr) != n_rows:
            raise DatasetError(f"{path.name}: array {key!r} has shape {arr.shape}; every array needs {n_rows} rows.")
    if n_rows < 2:
        raise DatasetError(f"{path.name} has {n_rows} row(s); at least two points are needed to label anything.")
    rows = subset(n_rows, n, np.random.default_rng(seed), path.name)
    if n is not None:  # a subset (all rows: the arrays as read, not copied once more)
        arrays = {k: v[rows] for k, v in arrays.items()}
    images = None
    if "images" in arrays:
        images = _npz_images(arrays["images"], path.name)
    if "X" in arrays:
        X = arrays["X"]
        if X.ndim == 1:
            X = X[:, None]
        if X.ndim != 2 or X.dtype.kind not in "biuf":
            raise DatasetError(f"{path.name}: X must be a numeric 2-D array (n, d); got {X.dtype} {X.shape}.")
        X = X.astype(np.float64, copy=False)  # (read from the file: already this process's own)
        bad = ~np.isfinite(X)
        if bad.any():
            r, c = (int(v[0]) for v in np.nonzero(bad))
            raise DatasetError(
                f"{path.name}: X has a missing (NaN) or infinite value at row {int(rows[r])}, column {c} "
                f"({int(bad.sum())} in all). Drop those rows or impute the values before saving."
            )
        feature_names = [f"x{j}" for j in range(X.shape[1])]
    else:
        X, feature_names = pixel_features(images)
    layout = arrays.get("layout")
    if layout is not None and (layout.shape[1:] != (2,) or layout.dtype.kind not in "biuf" or not np.isfinite(layout).all()):
        raise DatasetError(f"{path.name}: layout must be finite numbers of shape (n, 2); got {layout.dtype} {layout.shape}.")
    y = arrays.get("y")
    if y is not None and y.ndim != 1:
        raise DatasetError(f"{path.name}: y must be 1-D (one label per row); got shape {y.shape}.")
    if y is not None and y.dtype.kind == "f" and np.isnan(y).any():
        raise DatasetError(f"{path.name}: y has missing (NaN) labels; drop those rows or save without y.")
    ids = arrays.get("ids", rows)
    frame = pd.DataFrame({"id": ids})
    if y is not None:
        frame["label"] = y
    return finish(path.stem, X, y, feature_names, ids=ids, layout=layout, images=images, frame=frame)


def _npz_images(images: np.ndarray, name: str) -> np.ndarray:
    """The ``images`` array as uint8 (n, h, w) or (n, h, w, 3)."""
    if images.ndim == 4 and images.shape[3] == 1:
        images = images[..., 0]
    if not (images.ndim == 3 or (images.ndim == 4 and images.shape[3] == 3)) or images.dtype.kind not in "biuf":
        raise DatasetError(f"{name}: images must be numeric (n, h, w) or (n, h, w, 3); got {images.dtype} {images.shape}.")
    return to_uint8(images, name)
