"""Two-dimensional layouts of a pool for display: PCA, t-SNE, UMAP.

The layout is only for showing points; the learner always works on the full features. Layouts
are cached by the session (in its SQLite store), not here.
"""

from __future__ import annotations

import importlib.util

import numpy as np

from core.validation import check_features

__all__ = ["compute_layout", "available_layout_methods", "auto_layout_method", "LAYOUT_METHODS",
           "UMAP_AUTO_MIN_FEATURES", "UMAP_AUTO_MIN_SAMPLES", "UMAP_AUTO_MAX_SAMPLES", "UMAP_TEXT_MIN_SAMPLES",
           "umap_seconds_estimate"]

LAYOUT_METHODS = ("pca", "tsne", "umap")

#: "auto" picks UMAP only for features of more than this many dimensions (text, images,
#: embeddings): with 2 or 3 features the PCA map already shows (nearly) all there is.
UMAP_AUTO_MIN_FEATURES = 3
#: ... and at least this many points: UMAP's first run in a process spends 20-50 s compiling
#: its numba code on this 2-core machine (measured: 500 points took 47 s in a fresh process,
#: 2,000 points 16 s after that), more than a small pool's map is worth; PCA is instant.
UMAP_AUTO_MIN_SAMPLES = 5_000
#: Text features get UMAP from this many texts (see :func:`auto_layout_method`).
UMAP_TEXT_MIN_SAMPLES = 50
#: ... and at most this many: seeded UMAP runs on one core (umap-learn turns parallelism off
#: when ``random_state`` is set). Measured here (64 features, ``low_memory=True``): 10^5 points
#: in 72 s, 3 x 10^5 points in about 10.5 CPU minutes, i.e.
#: about 2 ms per point at that size; 10^6 points would take over half an hour, too long to
#: wait for a first map. Beyond this limit "auto" is PCA, with a notice; layout="umap" still
#: asks for it (once: the layout is kept in the store).
UMAP_AUTO_MAX_SAMPLES = 200_000
#: Seconds per point of seeded UMAP measured on this machine (see above) and its fixed cost
#: (numba compilation in a fresh process).
_UMAP_SECONDS_PER_POINT, _UMAP_SECONDS_FIXED = 2.0e-3, 20.0


def available_layout_methods() -> list[str]:
    """Layout methods usable here: ``pca`` and ``tsne`` always, ``umap`` if umap-learn is installed."""
    methods = ["pca", "tsne"]
    if importlib.util.find_spec("umap") is not None:
        methods.append("umap")
    return methods


def umap_seconds_estimate(n_samples: int) -> float:
    """Rough wall time of a seeded UMAP layout of ``n_samples`` points on this 2-core machine
    (fixed numba start-up plus a linear term, both measured; see :data:`UMAP_AUTO_MAX_SAMPLES`)."""
    return _UMAP_SECONDS_FIXED + _UMAP_SECONDS_PER_POINT * int(n_samples)


def auto_layout_method(n_samples: int, n_features: int, text: bool = False) -> tuple[str, str]:
    """The layout "auto" means for a pool without a layout of its own, and why.

    UMAP for features of more than :data:`UMAP_AUTO_MIN_FEATURES` dimensions and pools of
    :data:`UMAP_AUTO_MIN_SAMPLES` to :data:`UMAP_AUTO_MAX_SAMPLES` points when umap-learn is
    installed; PCA otherwise (instant). Text features (``text=True``) get UMAP from
    :data:`UMAP_TEXT_MIN_SAMPLES` points: each topic spreads over many directions, so the two
    leading principal components separate little, while UMAP's neighbours on the unit-length
    features are those of the cosine and draw the topics apart, worth its one-off start-up
    (``python benchmarks/text_topics.py --layout``, 1,318 docstrings of 5 topics: 10-NN accuracy
    in the plane 86.6 % on the UMAP map against 69.7 % on the PCA map; UMAP 60 s at load 15).

    Returns
    -------
    method : {"umap", "pca"}
    reason : str
        In words, for the session's record (shown in the app) and the user.
    """
    n, d = int(n_samples), int(n_features)
    if text and d > UMAP_AUTO_MIN_FEATURES and UMAP_TEXT_MIN_SAMPLES <= n <= UMAP_AUTO_MAX_SAMPLES:
        if "umap" not in available_layout_methods():
            return "pca", "PCA (UMAP would show the topics of these texts: `pip install umap-learn`)"
        return "umap", (f"UMAP (text features of {n:,} texts: it draws topics apart where PCA overlaps them; "
                        f"about {max(1.0, umap_seconds_estimate(n) / 60.0):.0f} min once, kept in the store)")
    if d <= UMAP_AUTO_MIN_FEATURES:
        return "pca", f"PCA ({d} features: the PCA map shows them)"
    if "umap" not in available_layout_methods():
        return "pca", "PCA (UMAP would map these features better: `pip install umap-learn`)"
    if n < UMAP_AUTO_MIN_SAMPLES:
        return "pca", (f"PCA ({n:,} points: instant; UMAP's one-off start-up of 20-50 s is worth it "
                       f"from {UMAP_AUTO_MIN_SAMPLES:,} points; choose layout 'umap' to have it)")
    if n > UMAP_AUTO_MAX_SAMPLES:
        minutes = umap_seconds_estimate(n) / 60.0
        return "pca", (f"PCA: UMAP of {n:,} points would take about {minutes:.0f} minutes on this "
                       f"machine (the automatic limit is {UMAP_AUTO_MAX_SAMPLES:,} points); choose "
                       "layout 'umap' to wait for it once (it is kept in the store)")
    return "umap", (f"UMAP ({d} features, {n:,} points: about "
                    f"{max(1.0, umap_seconds_estimate(n) / 60.0):.0f} min once, kept in the store)")


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
        initialisation); ``umap``: ``umap.UMAP`` (needs umap-learn; 15 neighbours, seeded,
        ``low_memory=True``; pools of fewer than 4 points get the PCA layout).
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
        Z = pca_2d(X)
    elif method == "tsne":
        if n < 4:
            raise ValueError(f"t-SNE needs at least 4 points; got {n}. Use method='pca'.")
        from sklearn.manifold import TSNE

        perplexity = min(30.0, (n - 1) / 3.0)
        Z = TSNE(n_components=2, perplexity=perplexity, init="pca", random_state=seed).fit_transform(X)
    elif n < 4:  # UMAP's spectral start needs a few points more than its 2 dimensions
        return compute_layout(X, "pca", seed)
    else:
        import warnings

        import umap  # noqa: PLC0415 -- optional dependency, checked above

        with warnings.catch_warnings():  # "n_jobs overridden to 1 by random_state": by design
            warnings.filterwarnings("ignore", message=".*n_jobs value.*", category=UserWarning)
            Z = umap.UMAP(n_components=2, n_neighbors=min(15, n - 1), random_state=seed,
                          low_memory=True).fit_transform(X)
    return np.ascontiguousarray(Z, dtype=np.float64)


#: :func:`pca_2d` solves the d x d covariance up to this many features (scikit-learn's PCA beyond).
PCA_COVARIANCE_MAX_FEATURES = 2000
_PCA_BLOCK_ROWS = 1 << 15


def pca_2d(X: np.ndarray) -> np.ndarray:
    """The first two principal components' scores of ``X``: what scikit-learn's
    ``PCA(n_components=2).fit_transform(X)`` gives (to rounding; the same signs: each
    component's largest loading in absolute value is positive), without importing
    scikit-learn (0.7-3 s of the first map at start-up) and in two passes over ``X``: the
    centred covariance ``(X - mean)^T (X - mean)`` accumulated in blocks of rows (no centred
    copy of ``X``), its two leading eigenvectors, the scores. Exact, not randomized; beyond
    :data:`PCA_COVARIANCE_MAX_FEATURES` features scikit-learn's PCA.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64, finite, n_features >= 2

    Returns
    -------
    ndarray of shape (n_samples, 2), float64
    """
    n, d = X.shape
    if d > PCA_COVARIANCE_MAX_FEATURES:
        from sklearn.decomposition import PCA

        return PCA(n_components=2, random_state=0).fit_transform(X)
    mean = X.mean(axis=0)
    C = np.zeros((d, d))
    for a in range(0, n, _PCA_BLOCK_ROWS):
        B = X[a:a + _PCA_BLOCK_ROWS] - mean
        C += B.T @ B
    _, vectors = np.linalg.eigh(C)
    V = np.ascontiguousarray(vectors[:, ::-1][:, :2])  # (d, 2): the two largest eigenvalues
    V *= np.sign(V[np.argmax(np.abs(V), axis=0), [0, 1]])  # largest loading positive (svd_flip)
    Z = np.empty((n, 2))
    for a in range(0, n, _PCA_BLOCK_ROWS):
        np.matmul(X[a:a + _PCA_BLOCK_ROWS] - mean, V, out=Z[a:a + _PCA_BLOCK_ROWS])
    return Z
