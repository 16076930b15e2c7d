"""Weighted regularized least squares (RLS) classifier with exact leave-one-out (LOO).

The maths (ALGORITHMS §1; seed 002 §2.4-2.6, §3.1.1, App. A.2-A.3). Weighted RLS with an
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

import numbers
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.sparse
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, column_or_1d

from .kernels import Kernel, median_distance
from .risk import class_probabilities, predicted_class_indices
from .validation import check_features, check_positive
from .weights import sample_weights as class_sample_weights

__all__ = ["WeightedRLSClassifier", "loo_path", "LooPath", "default_widths"]

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
    truth = predicted_class_indices(Y)  # the decision rule of core.risk on the codes
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


def loo_path(K, Y, sample_weight=None, lams=None, fit_offset: bool = True, *, n_lams: int = 50) -> LooPath:
    """Exact LOO residuals and errors of weighted RLS for many lambdas from one factorisation.

    One eigendecomposition of ``M = W K W`` per distinct weight column (one in total when the
    weights are the same in every column) serves every lambda; each lambda then costs O(n^2 T)
    (ALGORITHMS §1, seed 002 §2.5, eq. A.33, A.60).

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

    Returns
    -------
    LooPath
        Residuals, dual coefficients, intercepts and errors for every lambda (sorted).
    """
    K = np.asarray(K, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != K.shape[1] or K.shape[0] < 2:
        raise ValueError(f"K must be a square (n, n) kernel matrix with n >= 2; got shape {K.shape}.")
    if not np.all(np.isfinite(K)):
        raise ValueError("K contains NaN or infinite values; check the kernel and the features.")
    n = K.shape[0]
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
            f_rest = np.einsum("rj,ljt->lrt", K[np.ix_(rest, idx)], dual[:, idx][:, :, cols])
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


# ---------------------------------------------------------------------------------------------
# The estimator
# ---------------------------------------------------------------------------------------------

_KERNELS = ("rbf", "linear", "poly", "precomputed")
_CRITERIA = ("classification", "squared")


def _check_X(X, name: str = "X") -> np.ndarray:
    """check_features, but a sparse matrix or un-convertible objects raise TypeError."""
    if scipy.sparse.issparse(X):
        raise TypeError(f"Sparse input is not supported; convert {name} with {name}.toarray().")
    arr = np.asarray(X)
    if arr.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} has dtype {arr.dtype}; pass real features.")
    if arr.ndim == 1:
        raise ValueError(
            f"{name} must be 2-D (n_samples, n_features); got shape {arr.shape}. Reshape your data: "
            "X.reshape(-1, 1) for a single feature or X.reshape(1, -1) for a single point."
        )
    if arr.ndim == 2 and arr.shape[0] > 0 and arr.shape[1] == 0:
        raise ValueError(
            f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required; "
            "give at least one feature column."
        )
    if arr.dtype == object:
        try:
            arr = arr.astype(np.float64)
        except TypeError as exc:
            raise TypeError(
                f"{name} holds values that are not numbers ({exc}). Encode them as numbers first."
            ) from None
        except ValueError:
            pass  # strings that are not numbers: check_features names the problem
    return arr


class WeightedRLSClassifier(ClassifierMixin, BaseEstimator):
    """Weighted RLS classifier with exact LOO model selection (ALGORITHMS §1, seed 002 §3.1.1).

    Parameters
    ----------
    kernel : {"rbf", "linear", "poly", "precomputed"}
        Kernel. RBF: ``exp(-||x - x'||^2 / (2 width^2))``; poly: ``(x.x' + coef0) ** degree``.
        "precomputed": ``X`` is the (n, n) kernel matrix in ``fit`` and (m, n) in ``predict``.
    width : float > 0 or "auto"
        RBF width. "auto": chosen by LOO error over ``widths`` (RBF only).
    degree : int
        Polynomial degree.
    coef0 : float
        Polynomial offset.
    lam : float > 0 or "auto"
        Regularisation. "auto": chosen by LOO error over ``n_lams`` geometric values between
        the smallest positive and the largest eigenvalue of ``M = W K W``.
    fit_offset : bool
        Fit an unpenalised offset ``b`` (eq. 3.28).
    class_weight : None, "balanced" or dict {class: weight}
        Loss weights per class (see :mod:`core.weights`; multiclass "balanced" means the
        one-vs-all equilibrating weights of eq. 3.14-3.15, different per column).
    n_lams : int
        Size of the lambda grid for ``lam="auto"``.
    widths : array-like of float, optional
        Width grid for ``width="auto"``; default :func:`default_widths` of the training points.
    loo_criterion : {"classification", "squared"}
        LOO error minimised when choosing ``lam`` / ``width``. For each width, ties between
        lambdas go to the largest lambda (the seed's rule, §4.1). Between widths (each at its
        chosen lambda), ties go to the smaller LOO squared error, then to the larger width.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    lam_ : float
    width_ : float or None
        Chosen RBF width (None for other kernels).
    dual_coef_ : ndarray of shape (n_train, T)
        ``c``; T = 1 for two classes (+1 = ``classes_[1]``), else T = n_classes.
    intercept_ : ndarray of shape (T,)
    X_fit_ : ndarray of shape (n_train, n_features)
        Training points (the training kernel matrix for "precomputed").
    loo_residuals_ : ndarray of shape (n_train, T)
        ``y_it - f_{-i}(x_i)_t`` on the codes.
    loo_decision_ : ndarray of shape (n_train, T)
        Leave-one-out outputs ``f_{-i}(x_i)``.
    loo_error_ : float
        Weighted LOO classification error at the chosen parameters.
    loo_squared_error_ : float
        Weighted mean LOO squared error at the chosen parameters.
    loo_curve_ : dict of ndarray
        "lam", "classification", "squared" of shape (L,); with ``width="auto"`` also "width"
        of shape (W,) and the three others of shape (W, L).
    sample_weight_ : ndarray of shape (n_train, T)
        The loss weights used (class weights times sample weights).
    n_features_in_ : int

    Notes
    -----
    Binary decisions: ``f(x) > 0`` gives ``classes_[1]``; multiclass: argmax of the T outputs.
    The LOO quantities keep every other point's weight as fitted (class weights are counted once,
    on all training points). Cost: one factorisation of the n x n matrix ``M`` per width, or T
    of them for multiclass ``class_weight="balanced"`` (its weights differ per column); each
    lambda of the grid then costs O(n^2 T).
    ``predict_proba`` is the soft confidence of ALGORITHMS §2: ``clip((f + 1) / 2, 0, 1)``,
    normalised over the classes (a row whose outputs are all <= -1 gets uniform probabilities).
    """

    def __init__(
        self,
        kernel="rbf",
        width=1.0,
        degree=3,
        coef0=1.0,
        lam=1.0,
        fit_offset=True,
        class_weight=None,
        n_lams=50,
        widths=None,
        loo_criterion="classification",
    ):
        self.kernel = kernel
        self.width = width
        self.degree = degree
        self.coef0 = coef0
        self.lam = lam
        self.fit_offset = fit_offset
        self.class_weight = class_weight
        self.n_lams = n_lams
        self.widths = widths
        self.loo_criterion = loo_criterion

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    # -- parameter and data checks -------------------------------------------------------------

    def _check_params(self):
        if not isinstance(self.kernel, str) or self.kernel not in _KERNELS:
            raise ValueError(f"Unknown kernel {self.kernel!r}; choose one of {', '.join(_KERNELS)}.")
        if not (isinstance(self.width, str) and self.width == "auto"):
            check_positive("width", self.width)
        elif self.kernel != "rbf":
            raise ValueError(f"width='auto' needs kernel='rbf'; got kernel={self.kernel!r}.")
        if not (isinstance(self.lam, str) and self.lam == "auto"):
            check_positive("lam", self.lam)
        if self.loo_criterion not in _CRITERIA:
            raise ValueError(f"loo_criterion must be one of {_CRITERIA}; got {self.loo_criterion!r}.")
        if isinstance(self.n_lams, bool) or not isinstance(self.n_lams, numbers.Integral) or self.n_lams < 1:
            raise ValueError(f"n_lams must be an integer >= 1; got {self.n_lams!r}.")
        if not isinstance(self.fit_offset, (bool, np.bool_)):
            raise ValueError(f"fit_offset must be True or False; got {self.fit_offset!r}.")
        if self.kernel == "poly":
            Kernel("poly", degree=self.degree, coef0=self.coef0)  # validates degree
        cw = self.class_weight
        if not (cw is None or isinstance(cw, dict) or (isinstance(cw, str) and cw == "balanced")):
            raise ValueError(f"class_weight must be None, 'balanced' or a dict; got {cw!r}.")

    def _kernel(self, width) -> Kernel:
        return Kernel(self.kernel, width=1.0 if width is None else width, degree=self.degree, coef0=self.coef0)

    def _width_grid(self, X: np.ndarray) -> np.ndarray:
        if self.widths is None:
            return default_widths(X)
        widths = np.atleast_1d(np.asarray(self.widths, dtype=np.float64))
        if widths.ndim != 1 or widths.size == 0 or not np.all(np.isfinite(widths)) or np.any(widths <= 0):
            raise ValueError(f"widths must be a non-empty list of numbers > 0; got {self.widths!r}.")
        return widths

    def _validate_fit_input(self, X, y, sample_weight):
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None."
            )
        X = _check_X(X)
        if X.ndim == 2 and X.shape[0] < 2:
            raise ValueError(
                f"Got n_samples = {X.shape[0]}: fitting a classifier needs at least 2 points "
                "(of at least 2 classes)."
            )
        X = check_features(X, min_samples=2)
        y = column_or_1d(y, warn=True)
        if y.shape[0] != X.shape[0]:
            raise ValueError(
                f"y has {y.shape[0]} labels but X has {X.shape[0]} points; give one label per point."
            )
        check_classification_targets(y)
        classes = np.unique(y)
        if classes.size < 2:
            raise ValueError(
                f"y holds 1 class ({classes[0]!r}); a classifier needs at least 2 classes."
            )
        if sample_weight is None:
            sw = np.ones(X.shape[0])
        else:
            sw = np.asarray(sample_weight)
            if sw.ndim == 0:
                sw = np.full(X.shape[0], sw, dtype=np.float64)
            if sw.dtype.kind not in "biuf" or sw.ndim != 1 or sw.shape[0] != X.shape[0]:
                raise ValueError(
                    f"sample_weight must be a 1-D array of {X.shape[0]} numbers; got {sw.dtype} {sw.shape}."
                )
            sw = sw.astype(np.float64)
            if not np.all(np.isfinite(sw)) or np.any(sw < 0):
                raise ValueError("sample_weight must be finite and >= 0 (0 leaves a point out).")
            if not np.any(sw > 0):
                raise ValueError(
                    "sample_weight is zero for every point; give a weight > 0 to points of at least 2 classes."
                )
            kept = np.unique(y[sw > 0])
            if kept.size < 2:
                raise ValueError(
                    f"sample_weight leaves only class {kept[0]!r} with positive weight; a classifier "
                    "needs points of at least 2 classes with weight > 0."
                )
        if self.kernel == "precomputed":
            if X.shape[0] != X.shape[1]:
                raise ValueError(
                    f"With kernel='precomputed', X must be the square (n, n) kernel matrix of the "
                    f"training points; got shape {X.shape}."
                )
            scale = max(np.abs(X).max(), np.finfo(float).tiny)
            if np.abs(X - X.T).max() > 1e-10 * scale:
                raise ValueError(
                    "With kernel='precomputed', X must be a symmetric kernel matrix; it is not. "
                    "Pass k(X_train, X_train), e.g. (K + K.T) / 2 if it is asymmetric by rounding."
                )
        return X, y, classes, sw

    # -- fitting -------------------------------------------------------------------------------

    def fit(self, X, y, sample_weight=None):
        """Fit weighted RLS; choose ``lam`` / ``width`` by exact LOO if they are "auto".

        Parameters
        ----------
        X : array-like of shape (n, n_features), or (n, n) with kernel="precomputed"
        y : array-like of shape (n,)
            Class labels (at least 2 classes).
        sample_weight : array-like of shape (n,), optional
            Non-negative weights, multiplied with the class weights.

        Returns
        -------
        self
        """
        self._check_params()
        X, y, classes, sw = self._validate_fit_input(X, y, sample_weight)
        codes = np.searchsorted(classes, y)
        T = 1 if classes.size == 2 else classes.size
        if T == 1:
            Y = np.where(codes == 1, 1.0, -1.0)[:, None]
        else:
            Y = -np.ones((y.size, T))
            Y[np.arange(y.size), codes] = 1.0  # one-vs-all codes (eq. 2.15)
        A = class_sample_weights(y, classes, self.class_weight, sample_weight=sw)
        A = A.reshape(y.size, -1).repeat(T if A.ndim == 1 else 1, axis=1)

        lams = None if self.lam == "auto" else [float(self.lam)]
        if self.kernel != "rbf" or self.width != "auto":
            width = float(self.width) if self.kernel == "rbf" else None
            K = X if self.kernel == "precomputed" else self._kernel(width)(X)
            path = loo_path(K, Y, A, lams, self.fit_offset, n_lams=self.n_lams)
            choice = select_index(self._criterion(path))
            curve = {"lam": path.lams, "classification": path.classification, "squared": path.squared}
        else:
            widths = self._width_grid(X)
            paths = [loo_path(self._kernel(s)(X), Y, A, lams, self.fit_offset, n_lams=self.n_lams) for s in widths]
            best = [select_index(self._criterion(p)) for p in paths]
            errors = np.array([self._criterion(p)[j] for p, j in zip(paths, best)])
            squared = np.array([p.squared[j] for p, j in zip(paths, best)])
            # across widths: least error; ties -> least LOO squared error, then the largest width
            order = np.lexsort((-widths, squared, errors))
            i = int(order[0])
            width, path, choice = float(widths[i]), paths[i], best[i]
            curve = {"width": widths}
            L = max(p.lams.size for p in paths)
            for key in ("lam", "classification", "squared"):
                table = np.full((widths.size, L), np.nan)
                for row, p in enumerate(paths):
                    vals = p.lams if key == "lam" else getattr(p, key)
                    table[row, : vals.size] = vals
                curve[key] = table

        self.classes_ = classes
        self.lam_ = float(path.lams[choice])
        self.width_ = width
        self.dual_coef_ = path.dual_coef[choice]
        self.intercept_ = path.intercept[choice]
        self.X_fit_ = X
        self.sample_weight_ = A
        self.loo_residuals_ = path.residuals[choice]
        self.loo_decision_ = Y - self.loo_residuals_
        self.loo_error_ = float(path.classification[choice])
        self.loo_squared_error_ = float(path.squared[choice])
        self.loo_curve_ = curve
        self.n_features_in_ = X.shape[1]
        return self

    def _criterion(self, path: LooPath) -> np.ndarray:
        return path.classification if self.loo_criterion == "classification" else path.squared

    # -- prediction ----------------------------------------------------------------------------

    def _outputs(self, X) -> np.ndarray:
        """Decision values of shape (m, T)."""
        check_is_fitted(self)
        X = check_features(_check_X(X))
        if X.shape[1] != self.n_features_in_:
            what = "training points (kernel='precomputed')" if self.kernel == "precomputed" else "features"
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                f"{self.n_features_in_} features as input ({what}); pass data shaped like the training data."
            )
        if self.kernel == "precomputed":
            K = X
        else:
            K = self._kernel(self.width_)(X, self.X_fit_)
        return K @ self.dual_coef_ + self.intercept_[None, :]

    def decision_function(self, X) -> np.ndarray:
        """RLS outputs ``f(x) = k(x, X_fit) c + b``.

        Returns
        -------
        ndarray of shape (m,) for two classes (> 0 means ``classes_[1]``), else (m, n_classes)
        """
        F = self._outputs(X)
        return F[:, 0] if F.shape[1] == 1 else F

    def predict(self, X) -> np.ndarray:
        """Class labels of shape (m,): ``f > 0`` (binary) or argmax of the one-vs-all outputs.

        The decision rule of :func:`core.risk.predicted_class_indices`: ``f = 0`` gives
        ``classes_[0]``, ties between columns go to the lowest index.
        """
        F = self._outputs(X)  # first: raises NotFittedError before classes_ is read
        return self.classes_[predicted_class_indices(F)]

    def predict_proba(self, X) -> np.ndarray:
        """Soft probabilities ``clip((f + 1) / 2, 0, 1)``, normalised (ALGORITHMS §2).

        :func:`core.risk.class_probabilities` of :meth:`decision_function`.

        Returns
        -------
        ndarray of shape (m, n_classes)
            Binary ``[1 - p, p]``; multiclass per class, normalised to sum 1 (uniform where
            every output is <= -1).
        """
        return class_probabilities(self._outputs(X))
