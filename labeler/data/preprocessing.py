"""Feature preprocessing before a kernel: standardisation and PCA of image pixels.

Widths quoted by the thesis for MAGIC (docs/algorithms.md §4) apply to standardised features: fit
:func:`standardize` on the pool and apply the same ``(mean, scale)`` to the validation set.
"""

from __future__ import annotations

import warnings

import numpy as np

from core.validation import check_features, check_magnitude, overflow_message

__all__ = ["standardize", "pca_reduce", "shared_scale", "ColumnMoments", "STANDARDIZE_CHOICES", "parse_standardize"]

#: What ``--standardize`` and the new-session form accept: "auto" decides from the data.
STANDARDIZE_CHOICES = ("auto", "on", "off")

#: :func:`shared_scale`: fewest columns of a pixel-like table, and the share of the largest
#: value that the median column's maximum must reach.
PIXEL_MIN_COLUMNS, PIXEL_SHARED_MAX = 8, 0.5
#: :func:`shared_scale`: components are centred (|mean| <= this times the column's sd),
#: uncorrelated (|correlation| <= this) and in decreasing order of variance (each sd at most
#: this factor above the one before).
COMPONENT_MEAN, COMPONENT_CORRELATION, COMPONENT_ORDER = 0.05, 0.05, 1.05


class ColumnMoments:
    """The column means and standard deviations of one array, each computed once when first
    asked for, exactly as :func:`standardize` computes them (``X.mean(axis=0)``,
    ``X.std(axis=0)``): :func:`shared_scale` and :func:`standardize` of a new session's
    features share them (passes over 256 MB saved at 10^6 x 32).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features), float64
        Kept by reference; the moments are used only for this same array.
    """

    def __init__(self, X: np.ndarray):
        self.X = X
        self._mean = self._std = None

    def of(self, X) -> bool:
        """Whether these are the moments of ``X`` (the same array object)."""
        return X is self.X

    @property
    def mean(self) -> np.ndarray:
        if self._mean is None:
            with np.errstate(over="ignore"):
                self._mean = self.X.mean(axis=0)
        return self._mean

    @property
    def std(self) -> np.ndarray:
        if self._std is None:
            with np.errstate(over="ignore"):
                self._std = self.X.std(axis=0)
        return self._std


def standardize(X, *, stats=None, moments: ColumnMoments | None = None) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Scale every column to mean 0 and standard deviation 1.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Features (finite).
    stats : tuple (mean, scale) of ndarrays of shape (n_features,), optional
        Statistics from an earlier call (e.g. on the training pool) to apply to new data
        such as a validation set. Computed from ``X`` when omitted.
    moments : ColumnMoments, optional
        ``X``'s moments computed already (used only when they are of this very array).

    Returns
    -------
    X_scaled : ndarray of shape (n_samples, n_features)
        ``(X - mean) / scale``.
    stats : tuple (mean, scale)
        ``mean`` and ``scale`` of shape (n_features,). ``scale`` is the population standard
        deviation, or 1 for a constant column (which then becomes all zeros; a
        ``UserWarning`` names such columns).

    Raises
    ------
    ValueError
        NaN or infinite values, values whose squares overflow float64
        (:func:`core.validation.check_magnitude`), or a mean / standard deviation / result
        that is not finite (sums of many large squares): the column(s) are named.
    """
    given = X
    X = check_features(X)
    check_magnitude(X)
    if stats is None:
        if moments is None or not (moments.of(given) and X is given):
            moments = ColumnMoments(X)
        mean, scale = moments.mean, moments.std.copy()  # (overflow refused just below, by column)
        _refuse_overflow(X, ~(np.isfinite(mean) & np.isfinite(scale)))
        constant = np.flatnonzero(scale <= 1e-12 * np.maximum(1.0, np.abs(mean)))
        if constant.size:
            warnings.warn(
                f"Column(s) {constant.tolist()} are constant; they carry no information and were "
                "left unscaled (all zeros after centring). Drop them to silence this warning.",
                UserWarning,
                stacklevel=2,
            )
            scale[constant] = 1.0
    else:
        try:
            mean, scale = (np.asarray(v, dtype=np.float64) for v in stats)
        except (TypeError, ValueError):
            raise ValueError("stats must be the (mean, scale) pair returned by standardize.") from None
        d = X.shape[1]
        if mean.shape != (d,) or scale.shape != (d,):
            raise ValueError(
                f"stats hold {mean.shape} and {scale.shape} values but X has {d} columns: use the "
                "statistics of data with the same columns."
            )
        if not (np.isfinite(mean).all() and np.isfinite(scale).all() and (scale > 0).all()):
            raise ValueError("stats must be finite with every scale > 0 (as standardize returns them).")
    with np.errstate(over="ignore"):
        Z = (X - mean) / scale
    _refuse_overflow(X, ~np.isfinite(Z).all(axis=0))
    return Z, (mean, scale)


def _refuse_overflow(X: np.ndarray, bad_columns: np.ndarray) -> None:
    """ValueError naming the columns flagged in ``bad_columns`` (a boolean mask), if any."""
    if bad_columns.any():
        raise ValueError(overflow_message(X, np.flatnonzero(bad_columns)))


def pca_reduce(X, n_components: int, seed: int = 0) -> tuple[np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """Project ``X`` on its leading principal components (e.g. image pixels before an RBF kernel).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Features (finite).
    n_components : int
        Number of components, ``1 <= n_components <= min(n_samples, n_features)``.
    seed : int
        Seed of the randomized SVD used for large inputs (the result is deterministic).

    Returns
    -------
    Z : ndarray of shape (n_samples, n_components)
        Coordinates ``(X - mean) @ components.T``.
    projection : tuple (mean, components)
        ``mean`` of shape (n_features,) and orthonormal ``components`` of shape
        (n_components, n_features), to project other data the same way.
    """
    from sklearn.decomposition import PCA

    X = check_features(X)
    n, d = X.shape
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) or not (
        1 <= n_components <= min(n, d)
    ):
        raise ValueError(
            f"n_components must be an integer between 1 and min(n_samples, n_features) = "
            f"{min(n, d)}; got {n_components!r}."
        )
    pca = PCA(n_components=int(n_components), svd_solver="auto", random_state=seed)
    Z = pca.fit_transform(X)
    return np.ascontiguousarray(Z, dtype=np.float64), (pca.mean_.copy(), pca.components_.copy())


def parse_standardize(value):
    """``"auto"``, True or False from "auto" / "on" / "off" (or a bool).

    Raises
    ------
    ValueError
        Anything else, naming the choices.
    """
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in STANDARDIZE_CHOICES:
        return {"auto": "auto", "on": True, "off": False}[value.strip().lower()]
    raise ValueError(f"standardize must be one of {', '.join(STANDARDIZE_CHOICES)}; got {value!r}.")


def shared_scale(X, moments: ColumnMoments | None = None) -> str | None:
    """Why the columns of ``X`` share one geometry that standardising would distort, or None.

    Standardising scales every column to unit variance. That is right for a table of
    measurements in different units, and wrong for features whose scale *is* the geometry:

    * **pixel-like**: at least :data:`PIXEL_MIN_COLUMNS` columns, no negative value, and the
      median column's maximum at least :data:`PIXEL_SHARED_MAX` of the largest value (the
      columns share one range, such as 0-255 or 0-16; scaling each would blow up the
      near-constant border pixels);
    * **components** (PCA / SVD outputs, and embeddings built that way): at least three
      columns, centred (every ``|mean| <= COMPONENT_MEAN * sd``), uncorrelated (every
      ``|correlation| <= COMPONENT_CORRELATION``) and in decreasing order of variance (each
      ``sd`` at most ``COMPONENT_ORDER`` times the one before): standardising them is whitening,
      every low-variance component blown up to the variance of the first.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)

    moments : ColumnMoments, optional
        ``X``'s moments, shared with :func:`standardize` (used only when they are of this
        very array).

    Returns
    -------
    str or None
        The reason in words, or None when the columns should be standardised.
    """
    given = X
    X = np.asarray(X, dtype=np.float64)
    if moments is None or not (moments.of(given) and X is given):
        moments = ColumnMoments(X)
    n, d = X.shape
    if d >= PIXEL_MIN_COLUMNS and n >= 2 and X.min() >= 0:
        col_max = X.max(axis=0)
        top = float(col_max.max())
        if top > 0 and float(np.median(col_max)) >= PIXEL_SHARED_MAX * top:
            return f"pixel-like: {d} non-negative columns sharing one range (0 to {top:g})"
    if d >= 3 and n > d:
        sd = moments.std
        if np.all(sd > 0):
            mean_ok = bool(np.all(np.abs(moments.mean) <= COMPONENT_MEAN * sd))
            order_ok = bool(np.all(sd[1:] <= COMPONENT_ORDER * sd[:-1]))
            if mean_ok and order_ok:
                corr = np.corrcoef(X, rowvar=False)
                off = np.abs(corr[~np.eye(d, dtype=bool)])
                if float(off.max()) <= COMPONENT_CORRELATION:
                    return (f"components: {d} centred, uncorrelated columns in decreasing order of variance "
                            "(standardising them would be whitening)")
    return None
