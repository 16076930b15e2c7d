"""Two-dimensional layouts of a pool for display: PCA, t-SNE, UMAP.

The layout is only for showing points; the learner always works on the full features. Layouts
are cached by the session (in its SQLite store), not here.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from core.validation import check_features

__all__ = ["compute_layout", "available_layout_methods", "LAYOUT_METHODS"]

LAYOUT_METHODS = ("pca", "tsne", "umap")


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
