"""Calibrated class probabilities from leave-one-out decision values (temperature scaling).

The soft confidence of docs/algorithms.md §2, ``clip((f + 1) / 2, 0, 1)``, ranks points well but is not a
probability: on an easy pool most points read 0.5-0.8 although nearly all are right. This
module maps decision values to probabilities with one fitted number, a temperature.

Model (the same for every learner that gives decision values in the RLS coding):

* binary, ``F`` of shape (n,) or (n, 1) with ``+1`` = ``classes[1]``: the columns ``(-f, f)``;
  multiclass one-vs-all, ``F`` of shape (n, T): its T columns; call them ``G`` (n, K);
* ``p(k | x) = softmax_k(a * G[x])`` with slope ``a = exp(s) > 0`` (``1 / a`` is the
  temperature). Binary this is ``p(classes[1]) = sigmoid(2 a f)``, Platt scaling without an
  offset. One parameter, and the predicted class (argmax) is the learner's own, so the
  calibrated confidence only relabels the soft one's scale.

Fit: the slope maximises the posterior of ``s`` given the labelled points' exact
leave-one-out decision values ``F_loo`` (each point predicted by the model fitted without it:
honest, and free for ARLS and the graph models) and their labels::

    J(s) = - sum_j w_j log softmax(a G_loo[j])[y_j]  +  (s - s0)^2 / (2 sigma^2)

a Gaussian prior on the log-slope (default ``s0 = log 2``, ``sigma = 1``) that keeps the fit
finite when every LOO prediction is right (the likelihood alone would send ``a`` to
infinity) and decides while there are few labels. ``J`` is minimised by Newton's method on
the one parameter with the exact first and second derivatives (a bracketing fallback), so a
refit after each label costs O(n_labeled K).

Which labels, with which weight, and which prior (:func:`fit_calibration`, what the app uses):

* a label whose class has ``n_c`` labels gets the weight ``(n_c - 1) / n_c``
  (:func:`class_count_weights`): its LOO prediction is made from ``n_c - 1`` labels of its class
  while the pool's predictions see ``n_c``, and the only label of a class can never be predicted
  right without it (weight 0). With 20 labels on 10 classes the unweighted fit read the LOO
  errors of the singletons as a pool accuracy of 30 %;
* the prior's mean depends on the number of classes ``K``: ``s0 = log(2 + log(K - 1))``
  (:func:`class_count_prior`). Binary this is the old ``log 2``. With ``K`` classes the top
  class's probability at a margin ``m`` over the ``K - 1`` others is about
  ``1 / (1 + (K - 1) exp(-a m))``; the slope ``a = 2 + log(K - 1)`` gives it the binary value
  ``1 / (1 + exp(-2 m))`` at the unit margin ``m = 1`` (one-vs-all targets ``+1`` / ``-1``
  differ by 2; a typical confident point has half of that).
* when the labels' LOO margins are small, the prior speaks of the slope relative to them: its
  mean is moved up by ``max(0, log(0.1 / c))``, ``c`` the geometric mean of the LOO margins
  (top minus second value, binary ``2 |f|``) of the labels that count
  (:func:`loo_margin_scale`, :func:`relative_prior`). Below ``c = 0.1`` the fitted
  probabilities then do not depend on the scale of the decision values. A small RBF width makes the LOO values of
  labels far from the others tiny (two moons at width 0.11: ~1e-7, right in sign): in absolute
  units the prior held the slope near 2, every pool confidence near 0.5 and the estimated pool
  error at 37 % when the true one was 0.6 %.
* optionally (``pool_decision_values``) each label is weighted by how typical its LOO margin is
  of the unlabelled pool's margins (:func:`pool_margin_weights`): the active strategy asks for
  the hard points, so the labels' margins are smaller than the pool's.

The error rate of the pool, ``mean(1 - confidence)``, decreases in ``a`` (every top-class
probability ``1 / sum_k exp(a (G_k - G_top))`` grows with ``a``), so its interval is the rate
at the two ends of the Laplace interval of ``s``, widened by the binomial spread
``sqrt(sum q (1 - q)) / n`` of the number of errors.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import log_softmax, ndtri

__all__ = [
    "top_probabilities",
    "CalibrationPrior",
    "class_count_prior",
    "class_count_weights",
    "loo_margin_scale",
    "relative_prior",
    "pool_margin_weights",
    "fit_calibration",
    "TemperatureCalibration",
    "fit_temperature",
    "calibration_objective",
    "expected_calibration_error",
    "estimated_error_rate",
    "ErrorRate",
    "label_suspicion",
    "standardized_suspicion",
]


@dataclass(frozen=True)
class CalibrationPrior:
    """Gaussian prior on the log-slope ``s = log a``.

    Attributes
    ----------
    log_slope : float
        Prior mean ``s0`` (default ``log 2``: binary ``f = 0.5`` reads 0.88, ``f = 1`` 0.98).
    scale : float
        Prior standard deviation ``sigma > 0`` of ``s`` (default 1: a factor e either way).
    """

    log_slope: float = float(np.log(2.0))
    scale: float = 1.0

    def __post_init__(self):
        if not np.isfinite(self.log_slope):
            raise ValueError(f"log_slope must be finite; got {self.log_slope!r}.")
        if not (np.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"scale must be finite and > 0; got {self.scale!r}.")


def _columns(F, name: str = "F") -> np.ndarray:
    """Decision values as the softmax inputs ``G`` (n, K): binary ``(-f, f)``, else ``F``
    (checked by :func:`_outputs`)."""
    arr = _outputs(F, name)
    if arr.shape[1] == 1:
        return np.column_stack([-arr[:, 0], arr[:, 0]])
    return arr


def _outputs(F, name: str = "F") -> np.ndarray:
    """Decision values as a float64 array of shape (n, T), checked as :func:`_columns` checks
    them (no ``(-f, f)`` copy: :func:`top_probabilities` reads the binary columns from ``f``)."""
    arr = np.asarray(F)
    if arr.dtype == object or arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must hold numeric decision values; got dtype {arr.dtype}.")
    arr = np.ascontiguousarray(arr, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[1] == 0:
        raise ValueError(f"{name} must have shape (n,), (n, 1) or (n, T); got {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite decision values; pass a fitted model's outputs.")
    return arr


def top_probabilities(F, slopes) -> np.ndarray:
    """The predicted class's probability ``softmax(a G)[predicted]`` of every row of ``F`` at each
    slope ``a`` in ``slopes``, ndarray of shape (len(slopes), n): one parallel pass
    (:mod:`core._calibration_numba`), the values of ``exp(log_softmax(a G))`` to rounding.

    Parameters
    ----------
    F : array-like of shape (n,), (n, 1) or (n, T)
    slopes : sequence of float > 0
    """
    from ._calibration_numba import top_probabilities as kernel

    arr = _outputs(F)
    a = np.ascontiguousarray(slopes, dtype=np.float64).reshape(-1)
    out = np.empty((a.size, arr.shape[0]))
    if arr.shape[0] and arr.shape[1] == 1:
        # binary, G = (-f, f): the predicted class holds the row's maximum, so its log-softmax is
        # -log(1 + exp(-2 |a f|)) (the other column's shifted value is exactly -2 |a f|); numpy's
        # vectorised exp and log, about 3 ms a pass at 10^6 points against 45 ns a point scalar
        f = arr[:, 0]
        for k in range(a.size):
            np.exp(-np.log(1.0 + np.exp(-2.0 * np.abs(a[k] * f))), out=out[k])
    elif arr.shape[0]:
        kernel(arr, a, out)
    return out


def _predicted(G: np.ndarray) -> np.ndarray:
    """The learner's predicted class from ``G``: binary ``f > 0`` (ties to class 0), else argmax."""
    return np.argmax(G, axis=1) if G.shape[1] > 2 else (G[:, 1] > G[:, 0]).astype(np.int64)


@dataclass(frozen=True)
class TemperatureCalibration:
    """A fitted slope ``a`` for ``p = softmax(a G)`` (see the module docstring).

    Attributes
    ----------
    slope : float
        ``a > 0``.
    log_slope_sd : float
        Laplace standard deviation of ``s = log a`` (``1 / sqrt(J''(s))``).
    n_fitted : int
        Number of labelled points behind the fit (0: the prior alone).
    """

    slope: float
    log_slope_sd: float
    n_fitted: int

    def probabilities(self, F, slope: float | None = None) -> np.ndarray:
        """Calibrated class probabilities, ndarray of shape (n, n_classes), rows sum to one.

        Parameters
        ----------
        F : array-like of shape (n,), (n, 1) or (n, T)
            Decision values in the RLS coding.
        slope : float, optional
            Use this slope instead of the fitted one.
        """
        G = _columns(F)
        a = self.slope if slope is None else float(slope)
        return np.exp(log_softmax(a * G, axis=1))

    def confidence(self, F) -> tuple[np.ndarray, np.ndarray]:
        """Calibrated probabilities (n, n_classes) and the probability of the predicted class (n,).

        The predicted class is the learner's (binary ``f > 0``, else argmax), as in
        :func:`core.confidence.soft_confidence`.
        """
        G = _columns(F)
        P = np.exp(log_softmax(self.slope * G, axis=1))
        return P, P[np.arange(P.shape[0]), _predicted(G)]

    def top_confidence(self, F) -> np.ndarray:
        """The probability of the predicted class alone (the second result of
        :meth:`confidence`, to rounding), ndarray of shape (n,): one pass, no (n, K) array."""
        return top_probabilities(F, [self.slope])[0]


def _check_labels(G: np.ndarray, y, weights) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y)
    if y.shape != (G.shape[0],) or (y.size and y.dtype.kind not in "iu"):
        raise ValueError(
            f"y must hold one class index per row of F, shape ({G.shape[0]},) integers; got "
            f"shape {y.shape} dtype {y.dtype}."
        )
    if y.size and (y.min() < 0 or y.max() >= G.shape[1]):
        raise ValueError(f"class indices in y must lie in [0, {G.shape[1]}); got {y.min()}..{y.max()}.")
    w = np.ones(G.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    if w.shape != (G.shape[0],) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"weights must be {G.shape[0]} finite numbers >= 0; got shape {w.shape}.")
    return y.astype(np.int64), w


def _derivatives(s: float, G: np.ndarray, y: np.ndarray, w: np.ndarray,
                 prior: CalibrationPrior) -> tuple[float, float, float]:
    """``J(s)``, ``J'(s)`` and ``J''(s)`` (exact; module docstring)."""
    a = float(np.exp(s))
    rows = np.arange(G.shape[0])
    Z = a * G
    logp = log_softmax(Z, axis=1)
    P = np.exp(logp)
    g_y = G[rows, y]
    mean_g = (P * G).sum(axis=1)
    var_g = (P * G * G).sum(axis=1) - mean_g ** 2
    # d/da of -log p_y = -(g_y - E g); d2/da2 = Var g. Chain rule with a = e^s.
    d1a = -(g_y - mean_g)
    d2a = np.maximum(var_g, 0.0)
    value = float(-(w * logp[rows, y]).sum()) + (s - prior.log_slope) ** 2 / (2 * prior.scale ** 2)
    grad = float(a * (w * d1a).sum()) + (s - prior.log_slope) / prior.scale ** 2
    hess = float(a * (w * d1a).sum() + a * a * (w * d2a).sum()) + 1.0 / prior.scale ** 2
    return value, grad, hess


def calibration_objective(log_slope, F, y, weights=None, prior: CalibrationPrior = CalibrationPrior()) -> float:
    """``J(s)`` of the module docstring at ``s = log_slope`` (the fit's objective; for tests).

    Parameters
    ----------
    log_slope : float
    F : array-like of shape (n,), (n, 1) or (n, T)
        Leave-one-out decision values.
    y : array-like of int, shape (n,)
        Class index of each row's label.
    weights : array-like of shape (n,), optional
        Weight of each row (default 1).
    prior : CalibrationPrior
    """
    G = _columns(F)
    y, w = _check_labels(G, y, weights)
    return _derivatives(float(log_slope), G, y, w, prior)[0]


def fit_temperature(F_loo, y, weights=None, prior: CalibrationPrior = CalibrationPrior(),
                    tol: float = 1e-10, max_iter: int = 100) -> TemperatureCalibration:
    """Fit the slope of ``softmax(a G)`` to leave-one-out decision values (MAP, module docstring).

    Parameters
    ----------
    F_loo : array-like of shape (n,), (n, 1) or (n, T)
        Exact leave-one-out decision values of the labelled points (e.g. the learner's
        ``loo_decision_values()``). ``n = 0`` returns the prior's slope.
    y : array-like of int, shape (n,)
        Class index of each labelled point (position in the learner's ``classes``).
    weights : array-like of shape (n,), optional
        Weight per point (e.g. 0 for labels that only repeat the model's guess).
    prior : CalibrationPrior
    tol : float
        Stop when the Newton step on ``s`` is below this.
    max_iter : int

    Returns
    -------
    TemperatureCalibration
    """
    G = _columns(F_loo, "F_loo") if np.asarray(F_loo).size else np.zeros((0, 2))
    y, w = _check_labels(G, y, weights)
    s = prior.log_slope
    lo, hi = s - 40.0 * prior.scale, s + 40.0 * prior.scale  # J is far from its minimum out here
    value, grad, hess = _derivatives(s, G, y, w, prior)
    for _ in range(max_iter):
        if grad > 0:
            hi = min(hi, s)
        else:
            lo = max(lo, s)
        step = -grad / hess if hess > 0 else -np.sign(grad)
        candidate = s + step
        if not lo < candidate < hi:  # Newton left the bracket: bisect instead
            candidate = 0.5 * (lo + hi)
        new_value, new_grad, new_hess = _derivatives(candidate, G, y, w, prior)
        if new_value > value + 1e-12 * max(1.0, abs(value)) and abs(candidate - s) > tol:
            # no descent: shrink towards s inside the bracket
            if candidate > s:
                hi = candidate
            else:
                lo = candidate
            candidate = 0.5 * (lo + hi)
            new_value, new_grad, new_hess = _derivatives(candidate, G, y, w, prior)
        moved = abs(candidate - s)
        s, value, grad, hess = candidate, new_value, new_grad, new_hess
        if moved < tol or abs(grad) < 1e-12:
            break
    sd = 1.0 / np.sqrt(hess) if hess > 0 else prior.scale
    return TemperatureCalibration(slope=float(np.exp(s)), log_slope_sd=float(sd), n_fitted=int((w > 0).sum()))


def class_count_prior(n_classes: int, scale: float = 1.0) -> CalibrationPrior:
    """The prior of the log-slope for ``n_classes`` classes: mean ``log(2 + log(K - 1))``
    (``log 2`` for two classes; module docstring), standard deviation ``scale``."""
    K = int(n_classes)
    if K < 2:
        raise ValueError(f"n_classes must be at least 2; got {n_classes!r}.")
    return CalibrationPrior(log_slope=float(np.log(2.0 + np.log(K - 1.0))), scale=float(scale))


def class_count_weights(y, n_classes: int) -> np.ndarray:
    """Weight ``(n_c - 1) / n_c`` of each label, ``n_c`` the number of labels of its class.

    Parameters
    ----------
    y : array-like of int, shape (n,)
        Class index of each label, in ``[0, n_classes)``.
    n_classes : int

    Returns
    -------
    ndarray of shape (n,)
        In [0, 1): 0 for the only label of a class (its LOO prediction cannot be right).
    """
    y = np.asarray(y, dtype=np.int64)
    if y.ndim != 1 or (y.size and (y.min() < 0 or y.max() >= int(n_classes))):
        raise ValueError(f"y must be 1-D class indices in [0, {n_classes}); got shape {y.shape}.")
    counts = np.bincount(y, minlength=int(n_classes)).astype(np.float64)
    n_c = counts[y]
    return (n_c - 1.0) / np.maximum(n_c, 1.0)


def _margins(G: np.ndarray) -> np.ndarray:
    """Top minus second column of ``G`` (n, K), shape (n,)."""
    part = np.partition(G, G.shape[1] - 2, axis=1)
    return part[:, -1] - part[:, -2]


def pool_margin_weights(F_loo, F_pool, n_bins: int = 4, max_weight: float = 10.0) -> np.ndarray:
    """Importance weights that make the labels' LOO margins look like the pool's margins.

    The margin of a point is its top decision value minus the second (binary ``2 |f|``); a
    pool point's value, like a label's LOO value, is a prediction made without its label.
    The pool's margins are cut into ``n_bins`` bins of equal count; a label in bin ``b``
    gets ``(1 / n_bins) / (share of the labels in b)``, at most ``max_weight``; the weights
    are then scaled to sum to the number of labels.

    Parameters
    ----------
    F_loo : array-like of shape (n,), (n, 1) or (n, T)
        LOO decision values of the labels.
    F_pool : array-like of shape (m,), (m, 1) or (m, T)
        Decision values of the unlabelled points (``m >= n_bins``).
    n_bins : int
    max_weight : float

    Returns
    -------
    ndarray of shape (n,)
        All ones when the pool has fewer than ``n_bins`` points or there is no label.
    """
    G_l, G_p = _columns(F_loo, "F_loo"), _columns(F_pool, "F_pool")
    if G_l.shape[1] != G_p.shape[1]:
        raise ValueError(f"F_loo and F_pool must have the same columns; got {G_l.shape[1]} and {G_p.shape[1]}.")
    n = G_l.shape[0]
    if n == 0 or G_p.shape[0] < int(n_bins):
        return np.ones(n)
    m_l, m_p = _margins(G_l), _margins(G_p)
    edges = np.quantile(m_p, np.linspace(0.0, 1.0, int(n_bins) + 1))
    b = np.clip(np.searchsorted(edges[1:-1], m_l, side="right"), 0, int(n_bins) - 1)
    share = np.bincount(b, minlength=int(n_bins)) / n
    w = np.minimum((1.0 / int(n_bins)) / share[b], float(max_weight))
    return w * (n / w.sum())


REFERENCE_MARGIN = 1.0
"""The LOO margin (top decision value minus the second; binary ``2 |f|``) at which the
class-count prior's slope is meant: one-vs-all targets ``+1`` / ``-1`` differ by 2, and a
typical confident point has half of that."""

MIN_RELATIVE_MARGIN = 1e-12
"""Margins below this share of the largest LOO margin count as this share (a tie has margin 0)."""


def loo_margin_scale(F_loo, weights=None) -> float:
    """Geometric mean of the labels' LOO margins (top minus second decision value), the scale
    the prior of the log-slope is relative to (:func:`fit_calibration`).

    Parameters
    ----------
    F_loo : array-like of shape (n,), (n, 1) or (n, T)
        LOO decision values of the labels.
    weights : array-like of shape (n,), optional
        Labels with weight 0 are left out (default: all count).

    Returns
    -------
    float
        :data:`REFERENCE_MARGIN` when no label counts or every margin is 0.
    """
    G = _columns(F_loo, "F_loo")
    m = _margins(G)
    if weights is not None:
        m = m[np.asarray(weights, dtype=np.float64) > 0]
    if m.size == 0 or not np.max(m) > 0:
        return REFERENCE_MARGIN
    m = np.maximum(m, MIN_RELATIVE_MARGIN * np.max(m))
    return float(np.exp(np.mean(np.log(m))))


SMALL_MARGIN_SCALE = 0.1
"""LOO margin scale below which the prior of the log-slope moves with it (:func:`relative_prior`)."""


def relative_prior(n_classes: int, margin_scale: float) -> CalibrationPrior:
    """The class-count prior (:func:`class_count_prior`), moved when the labels' LOO margins are
    small: mean ``log(2 + log(K - 1)) + max(0, log(SMALL_MARGIN_SCALE / margin_scale))``.

    At a margin scale ``c >= SMALL_MARGIN_SCALE`` (the benchmark tasks at their starting
    widths) this is the class-count prior unchanged. Below it the prior speaks of ``a * c``:
    multiplying every decision value by a factor that keeps ``c`` below the threshold divides
    the fitted slope by that factor and leaves the probabilities as they were."""
    base = class_count_prior(n_classes)
    shift = max(0.0, float(np.log(SMALL_MARGIN_SCALE / float(margin_scale))))
    return CalibrationPrior(log_slope=base.log_slope + shift, scale=base.scale)


def fit_calibration(F_loo, y, weights=None, F_pool=None, n_classes: int | None = None) -> TemperatureCalibration:
    """The calibration the app uses: :func:`fit_temperature` with the class-count weights and
    prior (module docstring), times ``weights`` (e.g. 0 for labels that repeat the model's
    guess) and, when ``F_pool`` is given, the pool-margin weights (:func:`pool_margin_weights`).

    Parameters
    ----------
    F_loo : array-like of shape (n,), (n, 1) or (n, T)
        Exact LOO decision values of the labels.
    y : array-like of int, shape (n,)
        Class index of each label.
    weights : array-like of shape (n,), optional
    F_pool : array-like of shape (m,), (m, 1) or (m, T), optional
        Decision values of the unlabelled points.
    n_classes : int, optional
        For the prior when there is no label yet (default 2).

    Returns
    -------
    TemperatureCalibration
    """
    G = _columns(F_loo, "F_loo") if np.asarray(F_loo).size else None
    K = (int(n_classes) if n_classes else 2) if G is None else G.shape[1]
    y = np.asarray(y)
    w = np.ones(y.shape[0]) if weights is None else np.asarray(weights, dtype=np.float64)
    if G is not None:
        y_checked, w = _check_labels(G, y, w)
        w = w * class_count_weights(y_checked, K)
        if F_pool is not None and w.sum() > 0:
            keep = w > 0
            pw = np.zeros_like(w)
            pw[keep] = pool_margin_weights(np.asarray(F_loo)[keep], F_pool)
            w = w * pw
    if G is None:
        return fit_temperature(np.zeros((0, 2)), y, prior=class_count_prior(K))
    return fit_temperature(F_loo, y, weights=w, prior=relative_prior(K, loo_margin_scale(G, w)))


def expected_calibration_error(confidence, correct, n_bins: int = 10) -> float:
    """Expected calibration error over ``n_bins`` bins of equal width on [0, 1].

    ``ECE = sum_b (n_b / n) |accuracy_b - mean confidence_b|`` (Guo et al. 2017), bins as in
    :func:`core.confidence.confidence_bins` (the last holds 1.0).

    Parameters
    ----------
    confidence : array-like of shape (n,), in [0, 1]
        Probability of the predicted class.
    correct : array-like of bool, shape (n,)
        Whether each prediction was right.
    n_bins : int

    Returns
    -------
    float
        NaN for ``n = 0``.
    """
    conf = np.asarray(confidence, dtype=np.float64)
    corr = np.asarray(correct, dtype=np.float64)
    if conf.ndim != 1 or conf.shape != corr.shape:
        raise ValueError(f"confidence and correct must be 1-D of one length; got {conf.shape}, {corr.shape}.")
    if conf.size == 0:
        return float("nan")
    if np.any(~np.isfinite(conf)) or np.any((conf < 0) | (conf > 1)):
        raise ValueError("confidence must lie in [0, 1].")
    edges = np.linspace(0.0, 1.0, int(n_bins) + 1)
    index = np.clip(np.searchsorted(edges, conf, side="right") - 1, 0, int(n_bins) - 1)
    counts = np.bincount(index, minlength=n_bins)
    gap = np.bincount(index, weights=corr - conf, minlength=n_bins)
    return float(np.abs(gap).sum() / conf.size) if counts.sum() else float("nan")


@dataclass(frozen=True)
class ErrorRate:
    """Estimated error rate of a set of predictions with its interval.

    Attributes
    ----------
    rate : float
        ``mean(1 - confidence)`` at the fitted slope.
    lower, upper : float
        Interval at ``level`` (slope uncertainty and binomial spread, module docstring).
    n : int
        Number of points.
    level : float
    """

    rate: float
    lower: float
    upper: float
    n: int
    level: float


def estimated_error_rate(calibration: TemperatureCalibration, F, level: float = 0.95) -> ErrorRate:
    """Estimated share of wrong predictions among the points of ``F`` (e.g. the unlabelled pool).

    Parameters
    ----------
    calibration : TemperatureCalibration
    F : array-like of shape (n,), (n, 1) or (n, T)
        Decision values of the points.
    level : float in (0, 1)

    Returns
    -------
    ErrorRate
        NaN rate for ``n = 0``.
    """
    if not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must lie in (0, 1); got {level!r}.")
    if np.asarray(F).size == 0:
        return ErrorRate(float("nan"), float("nan"), float("nan"), 0, float(level))
    z = float(ndtri(0.5 + float(level) / 2.0))
    s = float(np.log(calibration.slope))
    # the top class's probability at the fitted slope and at the interval's two slopes, one pass
    Q = 1.0 - top_probabilities(F, [calibration.slope, float(np.exp(s - z * calibration.log_slope_sd)),
                                    float(np.exp(s + z * calibration.log_slope_sd))])
    q = Q[0]
    mid, high, low = (float(Q[k].mean()) for k in range(3))
    spread = z * float(np.sqrt((q * (1.0 - q)).sum())) / q.shape[0]
    return ErrorRate(rate=mid, lower=max(0.0, low - spread), upper=min(1.0, high + spread),
                     n=int(q.shape[0]), level=float(level))


def label_suspicion(calibration: TemperatureCalibration, F_loo, y) -> tuple[np.ndarray, np.ndarray]:
    """How likely each label is wrong: ``1 - p(y_j)`` under the calibrated LOO probabilities.

    Parameters
    ----------
    calibration : TemperatureCalibration
    F_loo : array-like of shape (n,), (n, 1) or (n, T)
        Leave-one-out decision values of the labelled points.
    y : array-like of int, shape (n,)
        Class index of each label.

    Returns
    -------
    score : ndarray of shape (n,)
        In [0, 1]; larger = more suspect.
    suggested : ndarray of shape (n,), int64
        The class the point's LOO prediction favours (its argmax; binary ``f > 0``).
    """
    G = _columns(F_loo, "F_loo")
    y, _ = _check_labels(G, y, None)
    P = np.exp(log_softmax(calibration.slope * G, axis=1))
    return 1.0 - P[np.arange(G.shape[0]), y], _predicted(G)


def standardized_suspicion(F_loo, y, loo_sd, weights=None) -> tuple[np.ndarray, np.ndarray]:
    """How likely each label is wrong, from LOO decision values scaled by their LOO spread.

    Each label's LOO values are multiplied by ``median(loo_sd) / loo_sd[j]`` (a z-score up to
    one common factor, so the scale of the decision values is kept), the temperature is fitted
    on the scaled values (:func:`fit_calibration`) and the score is ``1 - p(y_j)`` under it. A
    label whose LOO prediction is uncertain (far from the other labels) gets a milder score than
    one contradicted by a confident LOO prediction at the same value. Binary, the ranking is the
    one of the z-score ``y f_loo / sd``.

    Parameters
    ----------
    F_loo : array-like of shape (n,), (n, 1) or (n, T)
        Exact LOO decision values of the labels.
    y : array-like of int, shape (n,)
        Class index of each label.
    loo_sd : array-like of shape (n,), > 0
        LOO predictive standard deviation of each label (e.g.
        ``ActiveRLS.loo_predictive_sd()``).
    weights : array-like of shape (n,), optional
        Weights of the temperature fit (e.g. 0 for labels that repeat the model's guess).

    Returns
    -------
    score : ndarray of shape (n,)
        In [0, 1]; larger = more suspect.
    suggested : ndarray of shape (n,), int64
        The class the LOO prediction favours.
    """
    G = _columns(F_loo, "F_loo")
    sd = np.asarray(loo_sd, dtype=np.float64)
    if sd.shape != (G.shape[0],) or not np.all(np.isfinite(sd)) or np.any(sd <= 0):
        raise ValueError(f"loo_sd must hold {G.shape[0]} finite numbers > 0; got shape {sd.shape}.")
    if G.shape[0] == 0:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    F = np.asarray(F_loo, dtype=np.float64)
    F = F[:, None] if F.ndim == 1 else F
    scaled = F * (np.median(sd) / sd)[:, None]
    calibration = fit_calibration(scaled, y, weights=weights)
    return label_suspicion(calibration, scaled, y)
