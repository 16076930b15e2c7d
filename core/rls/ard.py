"""Per-feature RBF widths (and lambda) of weighted RLS learned by exact leave-one-out.

The cheap version of seed 003's LOOHL (issue 10 §1): the exact LOO residuals of weighted RLS
with an unpenalised offset (docs/algorithms.md §1, seed 002 eq. A.60, as :func:`core.rls.loo_path`)
on the labelled points, with an ARD kernel ``k(x, x') = exp(-sum_d (x_d - x'_d)^2 /
(2 s_d^2))``, and their analytic gradient with respect to ``log s_d`` and ``log lam``, minimised
by L-BFGS-B (:func:`learn_rls_widths`).

With ``w = sqrt(a)``, ``z = w y``, ``G = W K W + lam I``, ``H = G^-1``, ``r = H w``::

    P = H - r r^T / (w.r)                   (the top-left block of the inverse of [[G, w], [w^T, 0]];
                                             P = H without offset)
    d = P z,   LOO residual e_i = d_i / (w_i P_ii)          (= c_i / (a_i (H_ii - r_i^2 / w.r)))
    J = sum_it a_i e_it^2 / (T sum_i a_i)                   (the LOO squared error of loo_path)

Gradient: ``dP = -P dG P`` (derivative of a bordered inverse), so with ``g_it = 2 v_i e_it /
(w_i P_ii)``, ``h_i = sum_t 2 v_i e_it^2 / P_ii`` and ``v_i = a_i / (T sum a)``::

    dJ = sum_jk A_jk dG_jk,      A = P diag(h) P - P g d^T
    dJ / dlog s_d = sum_jk (A * w w^T * K)_jk (x_jd - x_kd)^2 / s_d^2     (width_contraction)
    dJ / dlog lam = lam tr(A)

One evaluation costs O(l^3 + l^2 m) for l labelled points and m features.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..kernels.ard import check_widths, scaled_sq_distances, width_contraction
from ..validation import check_features, check_positive

__all__ = ["rls_loo_objective", "learn_rls_widths", "RLSWidths"]


def _targets(labels, n: int):
    y = np.asarray(labels)
    if y.ndim != 1 or y.shape[0] != n:
        raise ValueError(f"labels must be one class label per row of X ({n}); got shape {y.shape}.")
    classes, idx, counts = np.unique(y, return_inverse=True, return_counts=True)
    if classes.size < 2:
        raise ValueError(f"LOO width learning needs labels of at least two classes; all {n} labels are "
                         f"{classes[0]!r} if any. Label points of another class first.")
    if counts.min() < 2:
        lone = classes[int(np.argmin(counts))]
        raise ValueError(f"LOO width learning needs at least 2 labels of every class; class {lone!r} has 1 "
                         "(leaving it out always misclassifies it). Label more points of that class first.")
    if classes.size == 2:
        return np.where(idx == 1, 1.0, -1.0)[:, None], list(classes)
    return 2.0 * np.eye(classes.size)[idx] - 1.0, list(classes)


def _check_weights(sample_weight, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n)
    a = np.asarray(sample_weight, dtype=np.float64)
    if a.shape != (n,) or not np.all(np.isfinite(a)) or np.any(a <= 0):
        raise ValueError(f"sample_weight must be {n} finite numbers > 0 (one per labelled point); "
                         f"got {np.asarray(sample_weight)!r:.80}.")
    return a


def rls_loo_objective(X, labels, widths, lam: float, sample_weight=None, fit_offset: bool = True,
                      gradient: bool = True):
    """Weighted mean LOO squared error of ARD-RBF weighted RLS and its gradient.

    Parameters
    ----------
    X : array-like of shape (l, m)
        The labelled points.
    labels : array-like of shape (l,)
        Their classes (two: one +1/-1 column; more: one-vs-all codes); at least 2 per class.
    widths : array-like of shape (m,) or float
        RBF widths ``s_d`` (kernel ``exp(-sum_d (x_d - x'_d)^2 / (2 s_d^2))``).
    lam : float
        Regularisation > 0.
    sample_weight : array-like of shape (l,), optional
        Loss weights ``a_i > 0`` (default 1).
    fit_offset : bool
        With the unpenalised offset (docs/algorithms.md §1) or without.
    gradient : bool
        Also return the gradient.

    Returns
    -------
    J : float
        ``sum_it a_i e_it^2 / (T sum a)``: equals ``loo_path(K, Y, a, [lam]).squared[0]``.
    grad_log_widths : ndarray of shape (m,)
        ``dJ / dlog s_d`` (only with ``gradient=True``).
    grad_log_lam : float
        ``dJ / dlog lam`` (only with ``gradient=True``).
    """
    X = check_features(X, min_samples=2)
    n, m = X.shape
    s = check_widths(widths, m)
    lam = check_positive("lam", lam)
    Y, _ = _targets(labels, n)
    a = _check_weights(sample_weight, n)
    T = Y.shape[1]
    w = np.sqrt(a)
    K = np.exp(-0.5 * scaled_sq_distances(X, s))
    G = (w[:, None] * K) * w[None, :]
    G[np.diag_indices(n)] += lam
    try:
        cho = scipy.linalg.cho_factor(G, lower=True, check_finite=False)
    except scipy.linalg.LinAlgError:
        raise ValueError(f"W K W + lam I is not positive definite at lam={lam:.3g}: increase lam.") from None
    H = scipy.linalg.cho_solve(cho, np.eye(n), check_finite=False)
    if fit_offset:
        r = H @ w
        P = H - np.outer(r, r) / (w @ r)
    else:
        P = H
    Pd = np.diag(P).copy()
    d = P @ (w[:, None] * Y)
    e = d / (w * Pd)[:, None]
    v = a / (T * a.sum())
    J = float(np.sum(v[:, None] * e * e))
    if not gradient:
        return J
    g = 2.0 * v[:, None] * e / (w * Pd)[:, None]  # (n, T)
    h = 2.0 * v * np.sum(e * e, axis=1) / Pd  # (n,)
    A = (P * h[None, :]) @ P - (P @ g) @ d.T
    A = 0.5 * (A + A.T)  # dG is symmetric
    grad_w = width_contraction(X, A * (w[:, None] * w[None, :]) * K, s)
    grad_lam = lam * float(np.trace(A))
    return J, grad_w, grad_lam


@dataclass(frozen=True)
class RLSWidths:
    """The result of :func:`learn_rls_widths`.

    Attributes
    ----------
    widths : ndarray of shape (m,)
        Learned ``s_d`` (kernel ``exp(-sum (x_d - x'_d)^2 / (2 s_d^2))``; graph ``sigma_d =
        sqrt(2) s_d``).
    lam : float
    objective_start, objective : float
        Penalised objective at the start and at the returned point (never above the start).
    loo_start, loo : float
        The LOO squared error alone at the start and at the returned point.
    n_evals : int
        Objective evaluations.
    message : str
        The optimiser's stopping message.
    """

    widths: np.ndarray
    lam: float
    objective_start: float
    objective: float
    loo_start: float
    loo: float
    n_evals: int
    message: str


def learn_rls_widths(X, labels, widths0, lam0: float, *, sample_weight=None, fit_offset: bool = True,
                     learn_lam: bool = True, penalty: float = 0.0, max_evals: int = 100,
                     max_factor: float = 1e3) -> RLSWidths:
    """Minimise the LOO squared error over ``log s_d`` (and ``log lam``) with L-BFGS-B.

    Parameters
    ----------
    X, labels, sample_weight, fit_offset
        As :func:`rls_loo_objective`.
    widths0 : array-like of shape (m,) or float
        Starting widths (e.g. the LOO-tuned common width, :mod:`core.rls.tuning`).
    lam0 : float
        Starting lambda.
    learn_lam : bool
        Also learn ``log lam``.
    penalty : float
        ``penalty * mean_d (log s_d - log s0_d)^2`` is added (seed 003's square-loss prior,
        §4.1, in log space): with many features and few labels LOO alone overfits.
    max_evals : int
        Cap on objective evaluations (L-BFGS-B ``maxfun``).
    max_factor : float
        Each parameter stays within ``[x0 / max_factor, x0 * max_factor]``.
    """
    from scipy.optimize import minimize

    X = check_features(X, min_samples=2)
    m = X.shape[1]
    s0 = check_widths(widths0, m, name="widths0")
    lam0 = check_positive("lam0", lam0)
    penalty = float(penalty)
    if not (np.isfinite(penalty) and penalty >= 0):
        raise ValueError(f"penalty must be a finite number >= 0; got {penalty!r}.")
    if int(max_evals) < 1:
        raise ValueError(f"max_evals must be >= 1; got {max_evals!r}.")
    theta0 = np.log(s0)
    x0 = np.append(theta0, np.log(lam0)) if learn_lam else theta0
    best = {"f": np.inf, "x": x0, "loo": np.nan}
    count = [0]

    def fun(x):
        count[0] += 1
        theta = x[:m]
        lam = float(np.exp(x[m])) if learn_lam else lam0
        J, gw, gl = rls_loo_objective(X, labels, np.exp(theta), lam, sample_weight, fit_offset)
        diff = theta - theta0
        f = J + penalty * float(np.mean(diff * diff))
        grad = gw + penalty * 2.0 * diff / m
        if learn_lam:
            grad = np.append(grad, gl)
        if f < best["f"]:
            best.update(f=f, x=x.copy(), loo=J)
        return f, grad

    f0, _ = fun(x0)
    span = np.log(float(max_factor))
    bounds = [(v - span, v + span) for v in x0]
    res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=bounds,
                   options={"maxfun": int(max_evals), "maxiter": int(max_evals)})
    x = best["x"]
    return RLSWidths(widths=np.exp(x[:m]), lam=float(np.exp(x[m])) if learn_lam else lam0,
                     objective_start=float(f0), objective=float(best["f"]),
                     loo_start=float(rls_loo_objective(X, labels, s0, lam0, sample_weight, fit_offset,
                                                       gradient=False)),
                     loo=float(best["loo"]), n_evals=count[0], message=str(res.message))
