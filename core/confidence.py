"""Confidence of RLS predictions: soft, gap and Bayesian scores (docs/algorithms.md §2; seed 002 §3.2).

All functions take the one-vs-all decision values ``F`` of a classifier:

* binary: shape (n,) or (n, 1), ``+1`` codes ``classes[1]`` (the learner's convention);
  probabilities are returned for the two classes in the order ``[classes[0], classes[1]]``;
* multiclass: shape (n, T), one column per class, ``T >= 2``.

Scores (seed 002 §3.2, results §4.2):

* soft ("asymptotic"): ``p_t = clip((f_t + 1) / 2, 0, 1)`` (seed eq. 3.36 misprints the sign as
  ``(f - 1) / 2``; docs/algorithms.md §7), normalised over the classes;
* gap: ``p_top - p_second`` of the unnormalised one-vs-all values (seed eq. 3.37);
* Bayesian (GP view, seed eq. 3.39-3.43): binary ``p(+1) = Phi(f / s)``; multiclass
  ``P(class i wins) = int N(u; f_i, s_i) prod_{j != i} Phi((u - f_j) / s_j) du``.

:func:`confidence_bins` gives the accuracy per confidence bin used to judge a score: a useful
score has accuracy increasing with confidence (seed Figs. 4-4 and 4-5).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from scipy.special import log_ndtr, ndtr, ndtri

from .criteria.risk import class_probabilities, one_vs_all_probabilities, predicted_class_indices

__all__ = [
    "soft_confidence",
    "gap_confidence",
    "bayesian_confidence",
    "confidence_bins",
    "ConfidenceBins",
    "wilson_interval",
]

_BLOCK_BYTES = 32 * 2**20  # temporaries per block of rows in the quadrature
_SUM_TOLERANCE = 1e-6  # quadrature check: exact win probabilities sum to one


def _decision_matrix(F, name: str = "F") -> tuple[np.ndarray, bool]:
    """Return ``F`` as float64 of shape (n, T) and whether it is a binary problem (T == 1)."""
    arr = np.asarray(F)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold numeric decision values; got dtype {arr.dtype}.")
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must have shape (n,) for a binary problem or (n, T) for T one-vs-all "
            f"columns; got shape {arr.shape}."
        )
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"{name} is empty (shape {arr.shape}): give at least one point and one class.")
    arr = np.asarray(arr, dtype=np.float64)
    bad = ~np.isfinite(arr)
    if bad.any():
        row, col = (int(v[0]) for v in np.nonzero(bad))
        raise ValueError(
            f"{name} contains {int(bad.sum())} NaN or infinite decision value(s), first at row "
            f"{row}, column {col}. Compute the decision values from a fitted model."
        )
    return arr, arr.shape[1] == 1


def soft_confidence(F) -> tuple[np.ndarray, np.ndarray]:
    """Soft ("asymptotic") class probabilities and the confidence of the predicted class.

    ``p_t(x) = clip((f_t(x) + 1) / 2, 0, 1)`` per one-vs-all output (seed 002 eq. 3.35-3.36
    with the sign corrected, docs/algorithms.md §2), normalised to sum to one over the classes; when
    every ``p_t`` of a point is zero (all outputs <= -1) the point gets the uniform
    distribution. Binary: ``p(+1) = clip((f + 1) / 2, 0, 1)``, ``p(-1) = 1 - p(+1)``.

    Parameters
    ----------
    F : array-like of shape (n,), (n, 1) or (n, T)
        Decision values; (n,) and (n, 1) are a binary problem with +1 = ``classes[1]``.

    Returns
    -------
    probabilities : ndarray of shape (n, n_classes)
        Rows sum to one; ``n_classes`` is 2 for a binary problem, else T.
    confidence : ndarray of shape (n,)
        Probability of the predicted class (``f > 0`` binary, ``argmax_t f_t`` multiclass).
    """
    F, _ = _decision_matrix(F)
    p = class_probabilities(F)
    return p, p[np.arange(p.shape[0]), predicted_class_indices(F)]


def gap_confidence(F) -> np.ndarray:
    """Gap confidence ``p_top - p_second`` (seed 002 eq. 3.37, docs/algorithms.md §2).

    Uses the unnormalised one-vs-all probabilities ``clip((f_t + 1) / 2, 0, 1)`` as the seed
    does. Binary: ``p(+1) - p(-1)`` in absolute value, i.e. ``min(|f|, 1)``.

    Parameters
    ----------
    F : array-like of shape (n,), (n, 1) or (n, T)
        Decision values; a multiclass ``F`` needs ``T >= 2`` columns.

    Returns
    -------
    ndarray of shape (n,)
        Gap in [0, 1].
    """
    F, _ = _decision_matrix(F)
    p = one_vs_all_probabilities(F)
    top_two = -np.partition(-p, 1, axis=1)[:, :2]
    return top_two[:, 0] - top_two[:, 1]


def _standard_deviations(variance, shape: tuple[int, int]) -> np.ndarray:
    """Check ``variance`` against decision values of ``shape`` and return s of that shape."""
    v = np.asarray(variance)
    if v.dtype == object or v.dtype.kind not in "biuf":
        raise ValueError(f"variance must be numeric; got dtype {v.dtype}.")
    v = np.asarray(v, dtype=np.float64)
    n, T = shape
    if v.ndim == 1 and v.shape[0] == n:
        v = np.repeat(v[:, None], T, axis=1)
    elif v.shape != (n, T):
        raise ValueError(
            f"variance must have shape ({n},) (one variance per point) or {(n, T)} (one per "
            f"point and class) to match F; got shape {v.shape}."
        )
    bad = ~(np.isfinite(v) & (v > 0))
    if bad.any():
        row, col = (int(i[0]) for i in np.nonzero(bad))
        raise ValueError(
            f"variance must be finite and > 0 (the GP variance k(x,x) + lambda - ... of "
            f"docs/algorithms.md §2 always is); {int(bad.sum())} value(s) are not, first at row {row}, "
            f"column {col}: {v[row, col]!r}."
        )
    return np.sqrt(v)


def _win_probabilities(F: np.ndarray, S: np.ndarray, n_nodes: int) -> np.ndarray:
    """``P(Y_i = max_j Y_j)`` for independent ``Y_j ~ N(F_j, S_j^2)`` by Gauss-Hermite quadrature.

    Seed 002 eq. 3.43: ``P_i = int N(u; f_i, s_i) prod_{j != i} Phi((u - f_j) / s_j) du``.
    With ``u = f_i + sqrt(2) s_i t`` this is ``pi^(-1/2) sum_k w_k prod_{j != i} Phi(...)``
    over the Hermite nodes ``t_k``. The ``j = i`` factor would be ``Phi(sqrt(2) t_k)`` for every
    point, so the product over ``j != i`` is the full product divided by it (done in logs).
    """
    nodes, weights = np.polynomial.hermite.hermgauss(n_nodes)
    weights = weights / np.sqrt(np.pi)
    log_self = log_ndtr(np.sqrt(2.0) * nodes)  # (K,)
    n, T = F.shape
    out = np.empty((n, T))
    step = max(1, _BLOCK_BYTES // (8 * T * T * n_nodes))
    for start in range(0, n, step):
        f = F[start:start + step]
        s = S[start:start + step]
        u = f[:, :, None] + np.sqrt(2.0) * s[:, :, None] * nodes  # (b, T_i, K)
        z = (u[:, :, :, None] - f[:, None, None, :]) / s[:, None, None, :]  # (b, T_i, K, T_j)
        log_prod = log_ndtr(z).sum(axis=3) - log_self  # (b, T_i, K)
        out[start:start + step] = np.exp(log_prod) @ weights
    return out


def bayesian_confidence(F, variance, *, n_nodes: int = 100) -> tuple[np.ndarray, np.ndarray]:
    """Bayesian (Gaussian-process) class probabilities and confidence (seed 002 §3.2.2).

    RLS is the posterior mean of a GP whose predictive variance at ``x`` is
    ``s^2 = k(x,x) + lambda - k(x,X_L)(K_LL + lambda I)^-1 k(X_L,x)`` (eq. 3.40, docs/algorithms.md §2).
    Binary: ``p(+1) = Phi(f / s)`` (eq. 3.41). Multiclass with independent outputs
    ``Y_t ~ N(f_t, s_t^2)`` (eq. 3.42): ``P(class i wins) = int N(u; f_i, s_i)
    prod_{j != i} Phi((u - f_j) / s_j) du`` (eq. 3.43), computed by a fixed ``n_nodes``-point
    Gauss-Hermite rule for all points at once.

    Accuracy of the quadrature (measured against ``scipy.integrate.quad``): to rounding when
    all ``s_t`` of a point are equal (the unweighted learner), about 1e-14 for ratios
    ``max s / min s`` up to 2, 1e-7 up to 5, 1e-3 at 10 and worse beyond: the integrand then
    has steps narrower than the node spacing. Rows are renormalised to sum to one; if a row
    sum was off by more than 1e-6 before that, a ``RuntimeWarning`` says so (raise
    ``n_nodes``).

    Parameters
    ----------
    F : array-like of shape (n,), (n, 1) or (n, T)
        Posterior means (decision values); (n,) and (n, 1) are binary.
    variance : array-like of shape (n,) or like ``F``
        Posterior variances ``s^2 > 0``: one per point, or one per point and class (they differ
        between classes when one-vs-all columns are weighted differently).
    n_nodes : int
        Number of Gauss-Hermite nodes (multiclass only).

    Returns
    -------
    probabilities : ndarray of shape (n, n_classes)
        Rows sum to one.
    confidence : ndarray of shape (n,)
        Probability of the predicted class (``f > 0`` binary, ``argmax_t f_t`` multiclass).
    """
    F, binary = _decision_matrix(F)
    S = _standard_deviations(variance, F.shape)
    if isinstance(n_nodes, bool) or int(n_nodes) != n_nodes or n_nodes < 2:
        raise ValueError(f"n_nodes must be an integer >= 2; got {n_nodes!r}.")
    if binary:
        p_pos = ndtr(F[:, 0] / S[:, 0])  # eq. 3.41: 1 - Phi(-mu / s) = Phi(mu / s)
        p = np.column_stack([1.0 - p_pos, p_pos])
    else:
        p = _win_probabilities(F, S, int(n_nodes))
        total = p.sum(axis=1, keepdims=True)
        worst = float(np.max(np.abs(total - 1.0)))
        if worst > _SUM_TOLERANCE:
            ratio = float(np.max(S.max(axis=1) / S.min(axis=1)))
            warnings.warn(
                f"Gauss-Hermite quadrature with {int(n_nodes)} nodes is inaccurate here: win "
                f"probabilities of a point sum to 1 +- {worst:.2g} (largest ratio of class "
                f"standard deviations {ratio:.3g}). Rows were renormalised; pass a larger "
                "n_nodes for more accuracy.",
                RuntimeWarning,
                stacklevel=2,
            )
        p = p / total
    return p, p[np.arange(p.shape[0]), predicted_class_indices(F)]


@dataclass(frozen=True)
class ConfidenceBins:
    """Accuracy per confidence bin (seed 002 Figs. 4-4, 4-5).

    Attributes
    ----------
    edges : ndarray of shape (n_bins + 1,)
        Bin edges; bin ``b`` is ``[edges[b], edges[b+1])``, the last bin also holds its right edge.
    counts : ndarray of shape (n_bins,)
        Number of points per bin.
    accuracy : ndarray of shape (n_bins,)
        Fraction of correct predictions per bin; NaN for an empty bin.
    mean_confidence : ndarray of shape (n_bins,)
        Mean confidence of the points in each bin; NaN for an empty bin.
    correct : ndarray of shape (n_bins,)
        Number of correct predictions per bin.
    lower, upper : ndarray of shape (n_bins,)
        Wilson score interval of the accuracy at ``level`` (:func:`wilson_interval`);
        ``[0, 1]`` for an empty bin (nothing is known).
    level : float
        Coverage of the interval (default 0.95).
    """

    edges: np.ndarray
    counts: np.ndarray
    accuracy: np.ndarray
    mean_confidence: np.ndarray
    correct: np.ndarray | None = None
    lower: np.ndarray | None = None
    upper: np.ndarray | None = None
    level: float = 0.95


def wilson_interval(successes, trials, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Wilson score interval of a binomial proportion (Wilson 1927; Brown, Cai & DasGupta 2001).

    With ``p = k / n`` and ``z`` the two-sided normal quantile of ``level``::

        centre = (p + z^2 / (2 n)) / (1 + z^2 / n)
        half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / (4 n^2))

    Unlike the plain ``p +- z sqrt(p (1 - p) / n)`` it stays inside [0, 1] and does not shrink
    to a point at ``p = 0`` or ``p = 1``: 6 of 6 right gives [0.61, 1], not [1, 1].

    Parameters
    ----------
    successes, trials : array-like of int, same shape
        ``0 <= successes <= trials``; ``trials = 0`` gives ``[0, 1]``.
    level : float in (0, 1)
        Coverage, e.g. 0.95.

    Returns
    -------
    lower, upper : ndarray of float, the shape of ``trials``
    """
    k = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    if k.shape != n.shape:
        raise ValueError(f"successes {k.shape} and trials {n.shape} must have the same shape.")
    if not (np.all(np.isfinite(k)) and np.all(np.isfinite(n))) or np.any(k < 0) or np.any(k > n):
        raise ValueError("need 0 <= successes <= trials (finite counts).")
    level = float(level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1; got {level!r}.")
    z = float(ndtri(0.5 + level / 2.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        p = np.where(n > 0, k / n, 0.5)
        z2n = np.where(n > 0, z * z / n, np.inf)
        denom = 1.0 + z2n
        centre = (p + z2n / 2.0) / denom
        half = z / denom * np.sqrt(p * (1.0 - p) / n + z2n / (4.0 * n))
        lower = np.where(n > 0, np.clip(centre - half, 0.0, 1.0), 0.0)
        upper = np.where(n > 0, np.clip(centre + half, 0.0, 1.0), 1.0)
    return lower, upper


def confidence_bins(confidence, correct, n_bins: int = 10, range=(0.0, 1.0),
                    level: float = 0.95) -> ConfidenceBins:
    """Accuracy, its Wilson interval and mean confidence per bin of equal width.

    Parameters
    ----------
    confidence : array-like of shape (n,)
        Confidence scores, all within ``range``.
    correct : array-like of shape (n,)
        Whether each prediction was right (bool or 0/1).
    n_bins : int
        Number of bins of equal width.
    range : tuple of two floats
        ``(low, high)`` covered by the bins.
    level : float
        Coverage of the accuracy interval (:func:`wilson_interval`).

    Returns
    -------
    ConfidenceBins
    """
    conf = np.asarray(confidence)
    corr = np.asarray(correct)
    if conf.ndim != 1 or corr.ndim != 1 or conf.shape != corr.shape:
        raise ValueError(
            "confidence and correct must be 1-D arrays of the same length; got shapes "
            f"{conf.shape} and {corr.shape}."
        )
    if conf.dtype == object or conf.dtype.kind not in "biuf":
        raise ValueError(f"confidence must be numeric; got dtype {conf.dtype}.")
    conf = conf.astype(np.float64)
    if np.isnan(conf).any():
        raise ValueError(
            f"confidence contains {int(np.isnan(conf).sum())} NaN value(s), first at index "
            f"{int(np.flatnonzero(np.isnan(conf))[0])}. Drop those points first."
        )
    if corr.dtype == object or corr.dtype.kind not in "biuf":
        raise ValueError(f"correct must hold booleans or 0/1; got dtype {corr.dtype}.")
    if corr.dtype.kind != "b":
        if not np.isin(corr, (0, 1)).all():
            raise ValueError("correct must hold booleans or 0/1 only (NaN and other values are refused).")
        corr = corr.astype(bool)
    if isinstance(n_bins, bool) or int(n_bins) != n_bins or n_bins < 1:
        raise ValueError(f"n_bins must be a positive integer; got {n_bins!r}.")
    low, high = (float(v) for v in range)
    if not (np.isfinite(low) and np.isfinite(high) and low < high):
        raise ValueError(f"range must be (low, high) with finite low < high; got {range!r}.")
    outside = (conf < low) | (conf > high)
    if outside.any():
        raise ValueError(
            f"{int(outside.sum())} confidence value(s) lie outside range {(low, high)} (from "
            f"{conf.min():.6g} to {conf.max():.6g}); pass a range that covers them."
        )
    n_bins = int(n_bins)
    edges = np.linspace(low, high, n_bins + 1)
    # Bin index as np.histogram assigns it: right edge of the last bin is included.
    index = np.clip(np.searchsorted(edges, conf, side="right") - 1, 0, n_bins - 1)
    counts = np.bincount(index, minlength=n_bins)
    hits = np.bincount(index, weights=corr.astype(np.float64), minlength=n_bins)
    sums = np.bincount(index, weights=conf, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        accuracy = np.where(counts > 0, hits / counts, np.nan)
        mean_conf = np.where(counts > 0, sums / counts, np.nan)
    hits = np.rint(hits).astype(np.int64)
    lower, upper = wilson_interval(hits, counts, level)
    return ConfidenceBins(edges=edges, counts=counts, accuracy=accuracy, mean_confidence=mean_conf,
                          correct=hits, lower=lower, upper=upper, level=float(level))
