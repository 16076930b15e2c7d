"""Per-feature graph widths learned by leave-one-out (LOOHL, seed 003) or entropy (MinEnt).

The graph (docs/algorithms.md §5; seed 003 eq. 3.6; seed 001 eq. 2.4) is dense, one width per feature::

    w_ij = exp(-sum_d (x_id - x_jd)^2 / sigma_d^2),   P = D^-1 W,   P~ = eps U + (1 - eps) P

with ``U_ij = 1/n`` (seed 003 eq. 3.4, seed 001 §2.1): the smoothing keeps every node connected
so ``I - P~_UU`` stays invertible however small the widths (the role the ``1/sigma^2`` diagonal
term plays for :class:`core.graph.HarmonicFunction`, docs/algorithms.md §5), and it removes MinEnt's
trivial minimum at ``sigma_d -> 0``. The harmonic function is ``f_U = (I - P~_UU)^-1 P~_UL f_L``
(seed 003 eq. 2.4; 0/1 labels, class 1 = ``classes[1]``). ``P`` is unchanged when a row of
``W`` is scaled, so each row is computed as ``exp(-(D_ij - min_k D_ik))``: no underflow to an
all-zero row at small widths. Final predictions use ``eps = 0`` by default (seed 003 §3.1.2:
``P`` classified better than ``P~``).

LOOHL (seed 003 §3.2-3.4). Holding out labelled ``t``, the unlabelled set is ``U + {t}``; by
the block inverse with ``S = I - P~_UU``, ``Hm = S^-1 P~_UL`` (u x l), ``f0`` the harmonic
function with every label and ``R = P~_LU Hm``, every LOO prediction at once is::

    f^_t = ((P~ f0)_t - (p~_tt + R_tt) y_t) / (1 - p~_tt - R_tt)

(one LU of ``S`` and two solves with l right-hand sides, instead of the seed's rank-one
updates). The objective (seed eq. 3.5, Fig. 3.2, eq. 5.1 and §4.1 "Sqr") is::

    Q = sum_t c_t loss(f^_t) + C sum_d (sigma_d - sigma^_d)^2 / m,   loss = |1 - f|^p (y = 1), |f|^p (y = 0)

with balanced ``c_t = 1 / (2 r_+)`` or ``1 / (2 r_-)``, ``p = 3`` and ``C = C2 / C1 = 1/100`` in
the seed. Gradient: ``d f^_t / d p~_ij = beta^t_i phi^t_j`` with ``phi^t`` the LOO solution (labels
on ``L - {t}``) and ``beta^t = (I - P~_VV)^-T e_t = [1; S^-T p~_Ut^T] / (1 - p~_tt - R_tt)``, so
``dQ/dP~ = B diag(q) Phi^T`` (n x l times l x n); then (seed eq. 3.17-3.18)::

    dQ/dlog sigma_d = 2 sum_ij alpha_ij w_ij (x_id - x_jd)^2 / sigma_d^2,
    alpha_ij = (1 - eps) (Xi_ij - sum_k Xi_ik p_ik) / d_i,   Xi = dQ/dP~

MinEnt (seed 003 §3.1.2 eq. 3.3, seed 001 eq. 2.4): ``H = -(1/u) sum_U f log f + (1-f) log(1-f)``
on ``P~``; ``dH/dP~_ij = r_i f_j`` for ``i`` in U with ``r = S^-T (1/u) log((1 - f_U) / f_U)``.

One evaluation costs O(n^2 m + u^3 + n^2 l) (seed eq. 3.16) and about 3 n^2 doubles of memory.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..kernels.ard import check_widths, scaled_sq_distances, width_contraction
from ..validation import check_features
from ._checks import check_labels

__all__ = ["transition_matrix", "harmonic_soft_labels", "harmonic_loo", "loohl_objective",
           "minent_objective", "learn_graph_widths", "GraphWidths", "WIDTH_METHODS"]

WIDTH_METHODS = ("loohl", "minent")
_F_CLIP = 1e-12  # soft labels are clipped into [clip, 1 - clip] inside the logarithms of MinEnt


# --------------------------------------------------------------------------- inputs
def _check_eps(eps) -> float:
    eps = float(eps)
    if not (np.isfinite(eps) and 0.0 <= eps < 1.0):
        raise ValueError(f"eps (the uniform smoothing of P, seed 003 eq. 3.4) must be in [0, 1); got {eps!r}. "
                         "The seed uses 0.01 for LOOHL and 0.01-0.3 for MinEnt.")
    return eps


def _binary_problem(X, labeled, labels, classes, min_per_class: int, what: str):
    """Features, labelled indices, 0/1 labels, unlabelled indices and the two classes."""
    X = check_features(X, min_samples=3)
    n = X.shape[0]
    if labeled is None or np.asarray(labeled).size == 0:
        raise ValueError(f"{what} has no labelled points: it needs labels of both classes. Label at least "
                         f"{min_per_class} point(s) of each class first.")
    L, y, classes = check_labels(n, labeled, labels, classes)
    if len(classes) != 2:
        raise ValueError(f"{what} is for two classes (seed 003); got {len(classes)}: {classes!r}. "
                         "For more, learn one class against the rest (relabel the others as one class).")
    counts = np.bincount(y, minlength=2)
    if counts.min() < min_per_class:
        lone = classes[int(np.argmin(counts))]
        raise ValueError(f"{what} needs at least {min_per_class} label(s) of each class; class {lone!r} has "
                         f"{int(counts.min())}. Label more points of that class first.")
    U = np.setdiff1d(np.arange(n), L)
    return X, L, y.astype(np.float64), U, classes


# --------------------------------------------------------------------------- graph
def transition_matrix(X, sigmas, eps: float = 0.0):
    """Row-scaled weights, degrees, ``P = D^-1 W`` and the smoothed ``P~`` (all dense).

    Parameters
    ----------
    X : array-like of shape (n, m)
    sigmas : array-like of shape (m,) or float
        Graph widths ``sigma_d`` (``w_ij = exp(-sum_d (x_id - x_jd)^2 / sigma_d^2)``).
    eps : float
        Uniform smoothing in [0, 1).

    Returns
    -------
    Wr : ndarray of shape (n, n)
        ``W`` with row i scaled by ``exp(min_k D_ik)`` (zero diagonal; same ``P``).
    deg : ndarray of shape (n,)
        Row sums of ``Wr`` (>= 1).
    P, Pt : ndarray of shape (n, n)
        ``D^-1 W`` and ``eps / n + (1 - eps) P``.
    """
    X = check_features(X, min_samples=2)
    sigmas = check_widths(sigmas, X.shape[1], name="sigmas")
    eps = _check_eps(eps)
    n = X.shape[0]
    D = scaled_sq_distances(X, sigmas)
    np.fill_diagonal(D, np.inf)
    D -= D.min(axis=1)[:, None]
    np.negative(D, out=D)
    Wr = np.exp(D, out=D)  # exp(-inf) = 0 on the diagonal
    deg = Wr.sum(axis=1)
    P = Wr / deg[:, None]
    Pt = P * (1.0 - eps) + eps / n if eps > 0 else P
    return Wr, deg, P, Pt


def _factor(Pt: np.ndarray, U: np.ndarray, what: str):
    S = -Pt[np.ix_(U, U)]
    S[np.diag_indices_from(S)] += 1.0
    with warnings.catch_warnings():  # a singular S is reported below with the fix
        warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
        lu = scipy.linalg.lu_factor(S, check_finite=False)
    piv = np.abs(np.diag(lu[0]))
    if not np.all(np.isfinite(piv)) or piv.min() <= 1e-13 * max(piv.max(), 1.0):
        raise ValueError(f"{what}: I - P_UU is singular: some unlabelled points are cut off from every label at "
                         "these widths. Use eps > 0 (e.g. 0.01) or larger widths.")
    return lu


def _solution(Pt, lu, L, U, y):
    """Hm = S^-1 P~_UL and the full harmonic vector f0 (labels on L)."""
    Hm = scipy.linalg.lu_solve(lu, Pt[np.ix_(U, L)], check_finite=False)
    f0 = np.empty(Pt.shape[0])
    f0[L] = y
    f0[U] = Hm @ y
    return Hm, f0


def harmonic_soft_labels(X, labeled, labels, sigmas, *, eps: float = 0.0, classes=None) -> np.ndarray:
    """Harmonic function ``f`` on the dense ARD graph, shape (n,): P(class ``classes[1]``).

    Labelled rows hold their 0/1 label. Threshold at 0.5, or use
    :func:`core.graph.class_mass_normalize` on ``[1 - f_U, f_U]``.
    """
    X, L, y, U, _ = _binary_problem(X, labeled, labels, classes, 1, "the harmonic function")
    _, _, _, Pt = transition_matrix(X, sigmas, eps)
    lu = _factor(Pt, U, "the harmonic function")
    return _solution(Pt, lu, L, U, y)[1]


# --------------------------------------------------------------------------- LOOHL
def harmonic_loo(Pt, L, U, y):
    """Every leave-one-out prediction of the harmonic function, shape (l,), and the pieces the
    gradient re-uses: ``(fhat, lu, Hm, f0, denom)``."""
    lu = _factor(Pt, U, "LOOHL")
    Hm, f0 = _solution(Pt, lu, L, U, y)
    R_diag = np.einsum("tu,ut->t", Pt[np.ix_(L, U)], Hm)
    p_tt = Pt[L, L]
    denom = 1.0 - p_tt - R_diag
    if np.any(denom <= 1e-14):
        raise ValueError("LOOHL: a held-out label is cut off from every other label at these widths. Use "
                         "eps > 0 (e.g. 0.01) or larger widths.")
    fhat = ((Pt[L] @ f0) - (p_tt + R_diag) * y) / denom
    return fhat, lu, Hm, f0, denom


def _loss(fhat, y, power):
    err = np.where(y > 0.5, 1.0 - fhat, fhat)
    sign = np.where(y > 0.5, -1.0, 1.0)  # d err / d f
    mag = np.abs(err)
    return mag ** power, power * mag ** (power - 1.0) * np.sign(err) * sign


def _grad_from_xi(X, sigmas, Wr, deg, P, Xi, eps):
    """``dQ/dlog sigma`` from ``Xi = dQ/dP~`` (seed eq. 3.17-3.18)."""
    C = Xi - np.einsum("ij,ij->i", Xi, P)[:, None]
    C *= (1.0 - eps) / deg[:, None]
    C *= Wr
    return 2.0 * width_contraction(X, C, sigmas)


def loohl_objective(X, labeled, labels, sigmas, *, eps: float = 0.01, power: float = 3.0, prior=None,
                    prior_weight: float = 0.0, classes=None, gradient: bool = True):
    """LOOHL objective (balanced LOO loss plus the Sqr prior) and its gradient in ``log sigma``.

    Parameters
    ----------
    X : array-like of shape (n, m)
        Every point, labelled and unlabelled.
    labeled : array-like of int, shape (l,)
    labels : array-like of shape (l,)
        Two classes, at least 2 labels of each.
    sigmas : array-like of shape (m,) or float
        Graph widths.
    eps : float
        Uniform smoothing (seed: 0.01).
    power : float
        LOO loss exponent ``p >= 1`` (seed: 3; 1 is the linear loss of eq. 3.5).
    prior : array-like of shape (m,) or float, optional
        ``sigma^`` of the Sqr regulariser (seed: the cross-validated common width).
    prior_weight : float
        ``C = C2 / C1`` (seed: 1/100); 0 switches the regulariser off.
    classes : sequence of two labels, optional
        ``classes[1]`` is the class with soft label 1.

    Returns
    -------
    Q : float
    grad : ndarray of shape (m,)
        ``dQ / dlog sigma_d`` (only with ``gradient=True``).
    """
    X, L, y, U, _ = _binary_problem(X, labeled, labels, classes, 2, "LOOHL")
    m = X.shape[1]
    sigmas = check_widths(sigmas, m, name="sigmas")
    power = float(power)
    if not (np.isfinite(power) and power >= 1.0):
        raise ValueError(f"power must be a number >= 1 (the seed uses 3); got {power!r}.")
    prior_weight = float(prior_weight)
    if not (np.isfinite(prior_weight) and prior_weight >= 0):
        raise ValueError(f"prior_weight must be a finite number >= 0; got {prior_weight!r}.")
    prior = sigmas if prior is None else check_widths(prior, m, name="prior")
    eps = _check_eps(eps)
    Wr, deg, P, Pt = transition_matrix(X, sigmas, eps)
    fhat, lu, Hm, f0, denom = harmonic_loo(Pt, L, U, y)
    r_pos = float(np.sum(y > 0.5))
    c = np.where(y > 0.5, 1.0 / (2.0 * r_pos), 1.0 / (2.0 * (y.size - r_pos)))  # seed eq. 5.1
    loss, dloss = _loss(fhat, y, power)
    gap = sigmas - prior
    Q = float(c @ loss) + prior_weight * float(gap @ gap) / m
    if not gradient:
        return Q
    q = c * dloss
    n, l = X.shape[0], L.size
    Z = scipy.linalg.lu_solve(lu, Pt[np.ix_(L, U)].T, trans=1, check_finite=False)  # S^-T p~_Ut^T
    B = np.zeros((n, l))
    B[L, np.arange(l)] = 1.0
    B[U] = Z
    B *= q / denom
    Phi = np.repeat(f0[:, None], l, axis=1)
    Phi[L, np.arange(l)] = fhat  # phi^t_t = f^_t; elsewhere on L the labels
    Phi[U] += Hm * (fhat - y)
    grad = _grad_from_xi(X, sigmas, Wr, deg, P, B @ Phi.T, eps)
    grad += prior_weight * 2.0 * gap * sigmas / m
    return Q, grad


# --------------------------------------------------------------------------- MinEnt
def minent_objective(X, labeled, labels, sigmas, *, eps: float = 0.1, classes=None, gradient: bool = True):
    """Mean label entropy of the unlabelled points on ``P~`` and its gradient in ``log sigma``.

    Parameters as :func:`loohl_objective`; at least one label of each class. ``eps`` must be
    > 0 in practice: at ``eps = 0`` the entropy is minimised by ``sigma -> 0`` (seed 003
    §3.1.2). Seed 001 §5.3 uses 0.1; seed 003 searched 0.01-0.3.

    Returns
    -------
    H : float
    grad : ndarray of shape (m,) (only with ``gradient=True``)
    """
    X, L, y, U, _ = _binary_problem(X, labeled, labels, classes, 1, "MinEnt")
    sigmas = check_widths(sigmas, X.shape[1], name="sigmas")
    eps = _check_eps(eps)
    Wr, deg, P, Pt = transition_matrix(X, sigmas, eps)
    lu = _factor(Pt, U, "MinEnt")
    _, f0 = _solution(Pt, lu, L, U, y)
    f = np.clip(f0[U], _F_CLIP, 1.0 - _F_CLIP)
    u = U.size
    H = float(-np.sum(f * np.log(f) + (1.0 - f) * np.log1p(-f)) / u)
    if not gradient:
        return H
    s = np.log1p(-f) - np.log(f)
    s /= u
    r = scipy.linalg.lu_solve(lu, s, trans=1, check_finite=False)
    Xi = np.zeros_like(P)
    Xi[U] = np.outer(r, f0)
    return H, _grad_from_xi(X, sigmas, Wr, deg, P, Xi, eps)


# --------------------------------------------------------------------------- learning
@dataclass(frozen=True)
class GraphWidths:
    """The result of :func:`learn_graph_widths`.

    Attributes
    ----------
    widths : ndarray of shape (m,)
        Learned ``sigma_d`` (the best point evaluated).
    method : str
    eps : float
    objective_start, objective : float
        At the start and at ``widths`` (``objective <= objective_start``).
    n_evals : int
    message : str
        The optimiser's stopping message.
    """

    widths: np.ndarray
    method: str
    eps: float
    objective_start: float
    objective: float
    n_evals: int
    message: str


def learn_graph_widths(X, labeled, labels, sigma0, *, method: str = "loohl", eps: float | None = None,
                       power: float = 3.0, prior_weight: float = 0.01, classes=None, max_evals: int = 35,
                       max_factor: float = 100.0) -> GraphWidths:
    """Learn per-feature graph widths by LOOHL or MinEnt with L-BFGS-B over ``log sigma``.

    Parameters
    ----------
    X, labeled, labels, classes
        As :func:`loohl_objective`.
    sigma0 : array-like of shape (m,) or float
        Start (and, for LOOHL, the Sqr prior mean ``sigma^``; seed 003 B.4: the width chosen
        for the plain harmonic function).
    method : {"loohl", "minent"}
    eps : float, optional
        Smoothing; default 0.01 (LOOHL, seed 003 B.4) or 0.1 (MinEnt, seed 001 §5.3).
    power, prior_weight
        LOOHL loss exponent and Sqr weight ``C2 / C1`` (seed: 3 and 1/100).
    max_evals : int
        Cap on objective evaluations (seed 003 B.4: 35).
    max_factor : float
        Each ``sigma_d`` stays within ``[sigma0_d / max_factor, sigma0_d * max_factor]``.
    """
    from scipy.optimize import minimize

    if method not in WIDTH_METHODS:
        raise ValueError(f"method must be one of {WIDTH_METHODS}; got {method!r}.")
    X = check_features(X, min_samples=3)
    m = X.shape[1]
    s0 = check_widths(sigma0, m, name="sigma0")
    eps = (0.01 if method == "loohl" else 0.1) if eps is None else _check_eps(eps)
    if int(max_evals) < 1:
        raise ValueError(f"max_evals must be >= 1; got {max_evals!r}.")
    if not (np.isfinite(max_factor) and max_factor > 1):
        raise ValueError(f"max_factor must be > 1; got {max_factor!r}.")
    if method == "loohl":
        def objective(sig):
            return loohl_objective(X, labeled, labels, sig, eps=eps, power=power, prior=s0,
                                   prior_weight=prior_weight, classes=classes)
    else:
        def objective(sig):
            return minent_objective(X, labeled, labels, sig, eps=eps, classes=classes)

    best = {"f": np.inf, "x": np.log(s0)}
    count = [0]

    def fun(theta):
        count[0] += 1
        try:
            f, g = objective(np.exp(theta))
        except ValueError:
            if count[0] == 1:
                raise
            return np.inf, np.zeros_like(theta)  # a step into a singular graph: the line search backs off
        if f < best["f"]:
            best.update(f=f, x=theta.copy())
        return f, g

    x0 = np.log(s0)
    f0, _ = fun(x0)
    span = np.log(float(max_factor))
    res = minimize(fun, x0, jac=True, method="L-BFGS-B", bounds=[(v - span, v + span) for v in x0],
                   options={"maxfun": int(max_evals), "maxiter": int(max_evals)})
    return GraphWidths(widths=np.exp(best["x"]), method=method, eps=eps, objective_start=float(f0),
                       objective=float(best["f"]), n_evals=count[0], message=str(res.message))
