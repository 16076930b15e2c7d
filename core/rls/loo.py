"""Exact leave-one-out (LOO) of weighted regularized least squares for a whole lambda grid.

The maths (docs/algorithms.md §1; seed 002 §2.4-2.6, §3.1.1, App. A.2-A.3). Weighted RLS with an
unpenalised offset minimises over ``f = sum_i c_i k(x_i, .)`` and ``b``::

    J(f, b) = sum_i a_i (y_i - f(x_i) - b)^2 + lam ||f||^2                  (eq. 3.28, A.40)

With ``W = diag(sqrt(a))``, ``w = diag(W)``, ``z = W y``, ``M = W K W``, ``G = M + lam I`` and
``r = G^-1 w``::

    b = (z.r) / (w.r)            d = G^-1 (z - b w)           c = W d    (A.44, A.46, eq. 3.31)
    LOO residual  y_i - f_{-i}(x_i) = c_i / (a_i (G^-1_ii - r_i^2 / (w.r)))             (A.60)

Without the offset: ``c = W G^-1 z`` (A.20) and the LOO residual is ``c_i / (a_i G^-1_ii)``
(A.33). The LOO model keeps the other points' weights fixed. Points of weight 0 play no part in
the fit (``c_i = 0``); their LOO residual is the plain residual ``y_i - f(x_i)``.

Choosing ``lam`` (seed 002 §2.5): one eigendecomposition ``M = Q diag(e) Q^T`` gives
``G^-1 = Q diag(1 / (e + lam)) Q^T``, so ``diag(G^-1)``, ``G^-1 z`` and ``r`` cost O(n^2) per
``lam``; the grid is geometric between the smallest positive and the largest eigenvalue and
the chosen ``lam`` minimises the LOO classification or squared error (ties: the largest
``lam``, as in the seed, §4.1).

Multiclass (seed 002 §2.6): one-vs-all codes +1 / -1, predict the argmax. One ``lam`` (and one
width) serves all columns; it is chosen on the multiclass LOO error (argmax of the LOO outputs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg

from ..criteria.risk import predicted_class_indices
from ..kernels import median_distance

__all__ = ["loo_path", "LooPath", "loo_errors", "lambda_grid", "select_index", "default_widths"]

_EPS = np.finfo(np.float64).eps
_NOT_PSD_RTOL = 1e-6  # eigenvalues below -_NOT_PSD_RTOL * e_max: the kernel is not PSD
_CHUNK_BYTES = 64 * 2**20  # temporaries of the batched lambda path


# ---------------------------------------------------------------------------------------------
# Factorisations of M + lam I: both return diag(G^-1) and G^-1 rhs for a batch of lambdas.
# ---------------------------------------------------------------------------------------------


class _EigenFactor:
    """``M = Q diag(e) Q^T``, shared by every lambda (seed 002 §2.5)."""

    def __init__(self, M: np.ndarray):
        self.e, self.Q = scipy.linalg.eigh(M, driver="evd")
        e_max = max(float(self.e[-1]), 0.0)
        e_min = float(self.e[0])
        if e_min < -_NOT_PSD_RTOL * max(e_max, np.finfo(float).tiny):
            raise ValueError(
                f"The (weighted) kernel matrix is not positive semi-definite: its smallest "
                f"eigenvalue is {e_min:.3g} (largest {e_max:.3g}). Use a valid kernel (rbf, "
                "linear, poly with coef0 >= 0) or a precomputed Gram matrix of a valid kernel."
            )
        # eigenvalues below this are rounding noise (rank tolerance, as numpy.linalg.matrix_rank)
        self.noise = max(M.shape[0] * _EPS * e_max, 2.0 * max(-e_min, 0.0))
        self.Q2 = None

    def positive_range(self) -> tuple[float, float]:
        """(smallest positive, largest) eigenvalue; positive means above the rounding noise."""
        pos = self.e[self.e > self.noise]
        if pos.size == 0:
            raise ValueError(
                "The (weighted) kernel matrix is numerically zero, so no regularisation grid can "
                "be built from its eigenvalues. Check the kernel width and the weights."
            )
        return float(pos[0]), float(pos[-1])

    def solve(self, lams: np.ndarray, rhs: np.ndarray):
        """diag(G^-1) of shape (L, m) and G^-1 rhs of shape (L, m, k) for G = M + lam I."""
        shift = self.e[None, :] + lams[:, None]
        if np.any(shift <= 0):
            bad = float(lams[np.any(shift <= 0, axis=1)][0])
            raise ValueError(
                f"lam={bad:.3g} is too small: M + lam I is not positive definite (smallest "
                f"eigenvalue of M {self.e[0]:.3g}). Use a larger lam."
            )
        s = 1.0 / shift  # (L, m)
        if self.Q2 is None:
            self.Q2 = self.Q * self.Q
        diag = s @ self.Q2.T  # diag(G^-1)_i = sum_k Q_ik^2 / (e_k + lam)
        proj = self.Q.T @ rhs  # (m, k)
        L, (m, k) = lams.size, rhs.shape
        scaled = (s[:, :, None] * proj[None, :, :]).transpose(1, 0, 2).reshape(m, L * k)
        sol = (self.Q @ scaled).reshape(m, L, k).transpose(1, 0, 2)
        return diag, sol


class _LowRankFactor(_EigenFactor):
    """``M = B B^T`` for ``B = W Phi`` of shape (m, r), through the r x r Gram matrix
    ``B^T B = V diag(e) V^T`` and Woodbury: with ``P = B V``,
    ``G^-1 = (I - P diag(1 / (e + lam)) P^T) / lam`` (docs/algorithms.md §17). O(m r^2) once
    (two matrix products and an r x r eigendecomposition, no m x m matrix and no
    decomposition of an m-row matrix), then O(m r k) per lambda. Its positive range is
    :class:`_EigenFactor`'s, over the eigenvalues of ``B^T B`` (those of ``M`` but zeros)."""

    def __init__(self, B: np.ndarray):
        e, V = scipy.linalg.eigh(B.T @ B)
        e_max = max(float(e[-1]), 0.0) if e.size else 0.0
        self.noise = max(B.shape) * _EPS * e_max
        self.e = np.maximum(e, 0.0)  # B^T B is PSD: a negative eigenvalue is rounding
        self.P = B @ V
        self.P2 = self.P * self.P

    def solve(self, lams: np.ndarray, rhs: np.ndarray):
        """diag(G^-1) of shape (L, m) and G^-1 rhs of shape (L, m, k) for G = M + lam I."""
        if np.any(lams <= 0):
            raise ValueError(f"lam must be > 0 with a low-rank kernel; got {float(lams.min()):.3g}.")
        s = 1.0 / (self.e[None, :] + lams[:, None])  # (L, r)
        inv = 1.0 / lams[:, None]  # (L, 1)
        diag = inv * (1.0 - s @ self.P2.T)
        proj = self.P.T @ rhs  # (r, k)
        L, (m, k) = lams.size, rhs.shape
        r = proj.shape[0]
        scaled = (s[:, :, None] * proj[None, :, :]).transpose(1, 0, 2).reshape(r, L * k)
        sol = (rhs[None] - (self.P @ scaled).reshape(m, L, k).transpose(1, 0, 2)) * inv[:, :, None]
        return diag, sol


class _CholeskyFactor:
    """``G = M + lam I = R R^T`` for one fixed lambda."""

    def __init__(self, M: np.ndarray, lam: float):
        self.lam = lam
        G = M.copy()
        G[np.diag_indices_from(G)] += lam
        try:
            self.R = scipy.linalg.cholesky(G, lower=True, check_finite=False)
        except scipy.linalg.LinAlgError:
            raise ValueError(
                f"M + lam I is not positive definite for lam={lam:.3g}: the kernel matrix is not "
                "positive semi-definite, or lam is too small against rounding. Increase lam "
                "gradually, or check the kernel (a precomputed matrix must be a valid Gram matrix)."
            ) from None

    def solve(self, lams: np.ndarray, rhs: np.ndarray):
        """diag(G^-1) of shape (1, m) and G^-1 rhs of shape (1, m, k)."""
        m = self.R.shape[0]
        # diag(G^-1) = column sums of squares of R^-1 (needs the triangular inverse)
        R_inv = scipy.linalg.solve_triangular(self.R, np.eye(m), lower=True, check_finite=False)
        diag = np.einsum("ij,ij->j", R_inv, R_inv)
        sol = scipy.linalg.cho_solve((self.R, True), rhs, check_finite=False)
        return diag[None, :], sol[None, :, :]


# ---------------------------------------------------------------------------------------------
# The LOO path
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LooPath:
    """Exact LOO results of weighted RLS for every lambda of a grid.

    Attributes
    ----------
    lams : ndarray of shape (L,)
        The regularisation values, increasing.
    residuals : ndarray of shape (L, n, T)
        LOO residuals ``y_i - f_{-i}(x_i)`` per lambda, point and output column.
    dual_coef : ndarray of shape (L, n, T)
        Dual coefficients ``c`` of the fit on all points.
    intercept : ndarray of shape (L, T)
        Offsets ``b`` (zeros without offset).
    classification : ndarray of shape (L,)
        Weighted LOO classification error (see :func:`loo_errors`).
    squared : ndarray of shape (L,)
        Weighted mean LOO squared error ``sum a_it res_it^2 / sum a_it`` (eq. A.34, normalised).
    """

    lams: np.ndarray
    residuals: np.ndarray
    dual_coef: np.ndarray
    intercept: np.ndarray
    classification: np.ndarray
    squared: np.ndarray


def loo_errors(Y: np.ndarray, residuals: np.ndarray, A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Weighted LOO classification and squared errors for a batch of residuals.

    Parameters
    ----------
    Y : ndarray of shape (n, T)
        Targets: binary T = 1 (class = sign, ``> 0`` positive), multiclass one-vs-all codes
        (class = argmax of the row).
    residuals : ndarray of shape (L, n, T)
        LOO residuals; the LOO outputs are ``Y - residuals``.
    A : ndarray of shape (n, T)
        Point weights per column.

    Returns
    -------
    classification : ndarray of shape (L,)
        ``sum_i a_i [LOO class_i != class_i] / sum_i a_i`` where ``a_i`` is the point's weight
        in its own class column (binary: its weight). Unweighted this is the error rate.
    squared : ndarray of shape (L,)
        ``sum_it a_it res_it^2 / sum_it a_it``.
    """
    L, n, T = residuals.shape
    loo_out = Y[None, :, :] - residuals
    truth = predicted_class_indices(Y)  # the decision rule of core.criteria.risk on the codes
    wrong = predicted_class_indices(loo_out.reshape(L * n, T)).reshape(L, n) != truth[None, :]
    a_point = A[np.arange(n), truth if T > 1 else 0]
    classification = (wrong * a_point[None, :]).sum(axis=1) / a_point.sum()
    squared = np.einsum("lit,it->l", residuals * residuals, A) / A.sum()
    return classification, squared


def _as_2d(name: str, arr, n: int) -> np.ndarray:
    arr = np.asarray(arr, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2 or arr.shape[0] != n:
        raise ValueError(f"{name} must have shape (n,) or (n, T) with n={n}; got {arr.shape}.")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} contains NaN or infinite values; pass finite numbers.")
    return arr


def _check_lams(lams) -> np.ndarray:
    lams = np.atleast_1d(np.asarray(lams, dtype=np.float64))
    if lams.ndim != 1 or lams.size == 0:
        raise ValueError(f"lams must be a non-empty 1-D sequence of numbers > 0; got shape {lams.shape}.")
    if not np.all(np.isfinite(lams)) or np.any(lams <= 0):
        raise ValueError(f"every lam must be a finite number > 0; got {lams.tolist()}.")
    return np.sort(lams)


def lambda_grid(lo: float, hi: float, n_lams: int) -> np.ndarray:
    """Geometric grid of ``n_lams`` values from ``lo`` to ``hi`` (one value if they coincide)."""
    if hi <= lo:
        return np.array([hi])
    return np.geomspace(lo, hi, n_lams)


def loo_path(K, Y, sample_weight=None, lams=None, fit_offset: bool = True, *, n_lams: int = 50,
             features=None) -> LooPath:
    """Exact LOO residuals and errors of weighted RLS for many lambdas from one factorisation.

    One eigendecomposition of ``M = W K W`` per distinct weight column (one in total when the
    weights are the same in every column) serves every lambda; each lambda then costs O(n^2 T)
    (docs/algorithms.md §1, seed 002 §2.5, eq. A.33, A.60).

    Parameters
    ----------
    K : array-like of shape (n, n)
        Symmetric positive semi-definite kernel matrix of the training points.
    Y : array-like of shape (n,) or (n, T)
        Targets, e.g. +1 / -1 codes (binary one column, multiclass one-vs-all columns).
    sample_weight : array-like of shape (n,) or (n, T), optional
        Loss weights ``a`` (>= 0, per point or per point and column). Default all ones.
    lams : array-like of shape (L,), optional
        Regularisation values > 0. Default: ``n_lams`` geometric values between the smallest
        positive and the largest eigenvalue of ``M`` (over all weight columns).
    fit_offset : bool
        Fit the unpenalised offset ``b`` (eq. A.40) or not (eq. A.10).
    n_lams : int
        Size of the default grid.
    features : array-like of shape (n, r), optional
        A feature map ``Phi`` with ``K = Phi Phi^T`` (pass ``K=None``): a low-rank kernel
        (Nystrom, spectral, linear). Same numbers as ``K = Phi Phi^T`` in O(n r^2 + L n r T)
        time and O(n r + L n T) memory: no n x n matrix (docs/algorithms.md §17).

    Returns
    -------
    LooPath
        Residuals, dual coefficients, intercepts and errors for every lambda (sorted).
    """
    if features is not None:
        if K is not None:
            raise ValueError("Give the kernel matrix K or its features, not both (pass K=None).")
        Phi = np.asarray(features, dtype=np.float64)
        if Phi.ndim != 2 or Phi.shape[0] < 2:
            raise ValueError(f"features must have shape (n, r) with n >= 2; got shape {Phi.shape}.")
        if not np.all(np.isfinite(Phi)):
            raise ValueError("features contain NaN or infinite values; check the kernel and the features.")
        n = Phi.shape[0]

        def block(rows, cols):
            return Phi[rows] @ Phi[cols].T
    else:
        K = np.asarray(K, dtype=np.float64)
        if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] < 2:
            raise ValueError(f"K must be a square (n, n) kernel matrix with n >= 2; got shape {K.shape}.")
        if not np.all(np.isfinite(K)):
            raise ValueError("K contains NaN or infinite values; check the kernel and the features.")
        n = K.shape[0]

        def block(rows, cols):
            return K[np.ix_(rows, cols)]
    Y = _as_2d("Y", Y, n)
    T = Y.shape[1]
    A = np.ones((n, T)) if sample_weight is None else _as_2d("sample_weight", sample_weight, n)
    if A.shape[1] == 1:
        A = np.repeat(A, T, axis=1)
    elif A.shape[1] != T:
        raise ValueError(f"sample_weight has {A.shape[1]} columns but Y has {T}; give (n,) or (n, T).")
    if np.any(A < 0):
        raise ValueError("sample_weight must be >= 0 (0 removes a point from the fit).")
    for t in range(T):
        if np.count_nonzero(A[:, t]) < 2:
            raise ValueError(
                f"Column {t} has {np.count_nonzero(A[:, t])} point(s) of positive weight; at least 2 are needed."
            )
    if lams is not None:
        lams = _check_lams(lams)

    # columns with identical weights share one factorisation of M = W K W
    groups: dict[bytes, list[int]] = {}
    for t in range(T):
        groups.setdefault(A[:, t].tobytes(), []).append(t)
    systems = []
    for cols in groups.values():
        a = A[:, cols[0]]
        idx = np.flatnonzero(a > 0)
        w = np.sqrt(a[idx])
        if features is not None:
            factor = _LowRankFactor(w[:, None] * Phi[idx])  # M = (W Phi)(W Phi)^T, never formed
        else:
            M = w[:, None] * K[np.ix_(idx, idx)] * w[None, :]  # eq. A.14
            factor = _EigenFactor(M) if lams is None or lams.size > 1 else _CholeskyFactor(M, float(lams[0]))
        systems.append((cols, idx, w, factor))
    if lams is None:
        ranges = np.array([s[3].positive_range() for s in systems])
        lams = lambda_grid(ranges[:, 0].min(), ranges[:, 1].max(), int(n_lams))

    L = lams.size
    residuals = np.empty((L, n, T))
    dual = np.zeros((L, n, T))
    intercept = np.zeros((L, T))
    for cols, idx, w, factor in systems:
        Z = w[:, None] * Y[np.ix_(idx, cols)]  # z = W y (eq. A.13)
        k = len(cols) + (1 if fit_offset else 0)
        step = max(1, _CHUNK_BYTES // (8 * idx.size * k * 3))
        for start in range(0, L, step):
            sl = slice(start, min(L, start + step))
            c, b, res = _solve_batch(factor, lams[sl], w, Z, fit_offset)
            dual[sl][:, idx[:, None], cols] = c
            intercept[sl][:, cols] = b
            residuals[sl][:, idx[:, None], cols] = res
        rest = np.setdiff1d(np.arange(n), idx)
        if rest.size:
            # weight-0 points do not influence the fit: LOO residual = plain residual
            f_rest = np.einsum("rj,ljt->lrt", block(rest, idx), dual[:, idx][:, :, cols])
            residuals[:, rest[:, None], cols] = Y[np.ix_(rest, cols)][None] - f_rest - intercept[:, None, cols]
    classification, squared = loo_errors(Y, residuals, A)
    return LooPath(lams, residuals, dual, intercept, classification, squared)


def _solve_batch(factor, lams: np.ndarray, w: np.ndarray, Z: np.ndarray, fit_offset: bool):
    """Dual coefficients (L, m, k), offsets (L, k) and LOO residuals (L, m, k) (eq. A.44-A.60)."""
    k = Z.shape[1]
    rhs = np.column_stack([Z, w]) if fit_offset else Z
    diag, sol = factor.solve(lams, rhs)
    Gz = sol[:, :, :k]
    if fit_offset:
        r = sol[:, :, k]  # r = G^-1 w
        wr = r @ w  # w.r, shape (L,)
        b = np.einsum("it,li->lt", Z, r) / wr[:, None]  # b = z.r / w.r (A.46)
        d = Gz - r[:, :, None] * b[:, None, :]  # d = G^-1 (z - b w) (A.44)
        denom = diag - r * r / wr[:, None]  # G^-1_ii - r_i^2 / w.r (A.60)
    else:
        b = np.zeros((lams.size, k))
        d = Gz  # d = G^-1 z (A.18)
        denom = diag
    c = w[None, :, None] * d  # c = W d (A.20, eq. 3.31)
    res = d / (w[None, :, None] * denom[:, :, None])  # c_i / (a_i denom_i) = d_i / (w_i denom_i)
    return c, b, res


def select_index(errors: np.ndarray) -> int:
    """Index of the minimal error; ties (within rounding) go to the LAST index (largest lambda)."""
    errors = np.asarray(errors, dtype=np.float64)
    finite = np.where(np.isfinite(errors), errors, np.inf)
    best = finite.min()
    tol = 1e-12 * max(1.0, abs(best)) if np.isfinite(best) else 0.0
    return int(np.flatnonzero(finite <= best + tol)[-1])


def default_widths(X: np.ndarray, *, max_points: int = 1000) -> np.ndarray:
    """Geometric grid of RBF widths around the median pairwise distance of ``X``.

    ``median * 2 ** [-3, -2.5, ..., 2]`` (11 widths), with the median of
    :func:`core.kernels.median_distance` (at most ``max_points`` points, a subset seeded with
    0 beyond that, so the grid is deterministic).
    """
    try:
        median = median_distance(X, max_points=max_points, seed=0)
    except ValueError as exc:
        raise ValueError(f"Cannot choose RBF widths automatically: {exc} Or pass widths=[...].") from None
    return median * 2.0 ** np.arange(-3.0, 2.25, 0.5)


