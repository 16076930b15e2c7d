"""Two-dimensional layouts of a pool for display: PCA, t-SNE, UMAP, with an on-disk cache.

The layout is only for showing points; the learner always works on the full features.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import tempfile
from pathlib import Path

import numpy as np

from .validation import check_features

__all__ = ["compute_layout", "available_layout_methods", "cached_layout", "LAYOUT_METHODS"]

LAYOUT_METHODS = ("pca", "tsne", "umap")
_CACHE_VERSION = 1  # bump when a method's output changes, so stale cache files are ignored


def available_layout_methods() -> list[str]:
    """Layout methods usable here: ``pca`` and ``tsne`` always, ``umap`` if umap-learn is installed."""
    methods = ["pca", "tsne"]
    if importlib.util.find_spec("umap") is not None:
        methods.append("umap")
    return methods


def _check_method(method: str) -> str:
    if method not in LAYOUT_METHODS:
        raise ValueError(f"Unknown layout method {method!r}; choose one of {', '.join(LAYOUT_METHODS)}.")
    if method == "umap" and importlib.util.find_spec("umap") is None:
        raise ImportError(
            "The 'umap' layout needs the umap-learn package, which is not installed. "
            "Run `pip install umap-learn`, or use method='pca' or 'tsne'."
        )
    return method


def compute_layout(X, method: str = "pca", seed: int = 0) -> np.ndarray:
    """Coordinates in the plane for every point.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Features (finite), at least 2 points.
    method : {"pca", "tsne", "umap"}
        ``pca``: the two leading principal components (data with 2 features is returned
        unchanged, with 1 feature padded by a zero column, so a 2-D data set keeps its shape);
        ``tsne``: :class:`sklearn.manifold.TSNE` (perplexity ``min(30, (n - 1) / 3)``, PCA
        initialisation); ``umap``: ``umap.UMAP`` (needs umap-learn).
    seed : int
        Random seed (t-SNE, UMAP, randomized PCA).

    Returns
    -------
    ndarray of shape (n_samples, 2), float64
    """
    method = _check_method(method)
    X = check_features(X, min_samples=2)
    n, d = X.shape
    if method == "pca" or d == 1:
        if d <= 2:
            return np.column_stack([X, np.zeros((n, 2 - d))]) if d == 1 else X.copy()
        from sklearn.decomposition import PCA

        Z = PCA(n_components=2, random_state=seed).fit_transform(X)
    elif method == "tsne":
        if n < 4:
            raise ValueError(f"t-SNE needs at least 4 points; got {n}. Use method='pca'.")
        from sklearn.manifold import TSNE

        perplexity = min(30.0, (n - 1) / 3.0)
        Z = TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed).fit_transform(X)
    else:
        import umap  # noqa: PLC0415 -- optional dependency, checked above

        Z = umap.UMAP(n_components=2, n_neighbors=min(15, n - 1), random_state=seed).fit_transform(X)
    return np.ascontiguousarray(Z, dtype=np.float64)


def _cache_key(X: np.ndarray, method: str, seed: int) -> str:
    digest = hashlib.sha256()
    digest.update(f"layout-v{_CACHE_VERSION}|{method}|{int(seed)}|{X.shape}|".encode())
    digest.update(X.tobytes())
    return digest.hexdigest()[:32]


def cached_layout(X, method: str, cache_dir, seed: int = 0) -> np.ndarray:
    """:func:`compute_layout` with the result kept in ``cache_dir`` as a ``.npy`` file.

    The file name holds a SHA-256 hash of ``X`` (values and shape), ``method`` and ``seed``, so
    a changed data set never reuses a stale layout. A cache file that cannot be read or has
    the wrong shape is recomputed and overwritten. Files are written atomically and read with
    ``allow_pickle=False``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    method : {"pca", "tsne", "umap"}
    cache_dir : str or Path
        Folder for the cache (created if missing).
    seed : int

    Returns
    -------
    ndarray of shape (n_samples, 2), float64
    """
    method = _check_method(method)
    X = check_features(X, min_samples=2)
    folder = Path(cache_dir)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"layout-{method}-{_cache_key(X, method, seed)}.npy"
    if path.exists():
        try:
            cached = np.load(path, allow_pickle=False)
            if cached.shape == (X.shape[0], 2) and cached.dtype == np.float64 and np.isfinite(cached).all():
                return cached
        except (OSError, ValueError):
            pass  # unreadable cache file: recompute below and overwrite it
    Z = compute_layout(X, method=method, seed=seed)
    fd, tmp = tempfile.mkstemp(dir=folder, suffix=".npy.tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.save(fh, Z, allow_pickle=False)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Z
