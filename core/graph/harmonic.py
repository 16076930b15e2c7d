"""Harmonic function (Laplace learning) on a sparse graph, solved by preconditioned CG.

docs/algorithms.md §5; Zhu, Ghahramani and Lafferty (2003); seed 001 §2.1 and §4 (iterative solvers and
Jacobi preconditioning), seed 003 §2.2 and eq. 2.7 (class mass normalisation). With the graph
Laplacian ``Delta = D - W`` and one-hot targets ``Y_L`` (one column per class, one-vs-all)::

    (Delta_UU + eps I) F_U = W_UL Y_L

``eps = 0`` is the harmonic function (each ``F_U`` row sums to 1); ``eps > 0`` is the seed's
``1/sigma^2`` regulariser, the Gaussian field ``(Delta + eps I)^-1`` of seed 004 (docs/algorithms.md §9). The
system is symmetric positive definite whenever every connected component holds a label or
``eps > 0``. A component without any label is singular at ``eps = 0``; its solution for any
``eps > 0`` is exactly 0 (its right-hand side is 0), so those nodes get 0 in every column and
``reached_`` marks them False: the ``eps -> 0`` limit of the regularised fix, without a solve.

Solvers: ``"cg"`` (default) and ``"minres"`` with a Jacobi preconditioner
``M = diag(A)^-1`` (seed 001: a relative residual 1e-6 gives the direct solver's labels), and
``"direct"`` (sparse LU, the oracle). Seed 001 preconditions ``I - P_UU``; Jacobi on the
symmetric ``Delta_UU`` is the same preconditioned system written symmetrically
(``D_UU^-1/2 Delta_UU D_UU^-1/2``), so plain CG applies.

:func:`solve_spd` is the one iterative solve of the graph models (this class and
:class:`core.graph.active.GraphLearner`), with one failure policy: an iterative solve that
stops before its tolerance warns with :class:`HarmonicSolverWarning` and falls back to a
sparse LU of the same system.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import cg, minres, splu

from ._checks import check_graph, check_labels

__all__ = ["HarmonicFunction", "HarmonicSolverWarning", "class_mass_normalize", "solve_spd", "SOLVERS",
           "PRECONDITIONERS"]

SOLVERS = ("cg", "minres", "direct")
PRECONDITIONERS = ("jacobi", "none")


class HarmonicSolverWarning(RuntimeWarning):
    """An iterative graph solve stopped before its tolerance; a sparse LU solved the system instead."""


def solve_spd(A, B, *, x0=None, tol: float = 1e-6, max_iter: int | None = None, method: str = "cg",
              preconditioner: str = "jacobi", lu=None):
    """Solve ``A X = B`` for a sparse symmetric positive definite ``A``, column by column.

    Parameters
    ----------
    A : scipy.sparse matrix of shape (u, u)
    B : ndarray of shape (u, T)
    x0 : ndarray of shape (u, T), optional
        Warm start (the previous solution of a refit).
    tol : float
        Relative residual at which the iterative method stops.
    max_iter : int, optional
        Iteration cap per column (default ``10 u``).
    method : {"cg", "minres"}
    preconditioner : {"jacobi", "none"} or scipy.sparse.linalg.LinearOperator
        Or a symmetric positive definite operator approximating ``A^-1`` (the multigrid
        V-cycle of :class:`core.graph.amg_precondition.GroundedLaplacianAMG`).
    lu : scipy.sparse.linalg.SuperLU, optional
        A factorisation of ``A`` to solve with instead (no iteration).

    Returns
    -------
    X : ndarray of shape (u, T)
    n_iter : ndarray of int64, shape (T,)
        Iterations per column (0 for a direct solve and for a zero right-hand side).

    Warns
    -----
    HarmonicSolverWarning
        A column did not reach ``tol`` in ``max_iter`` iterations: every column is then solved
        by a sparse LU of ``A`` (the warning names the column and how to avoid it).
    """
    u, T = B.shape
    n_iter = np.zeros(T, dtype=np.int64)
    if lu is not None:
        return lu.solve(B), n_iter
    if not isinstance(preconditioner, str):  # an operator (core.graph.amg_precondition)
        M = preconditioner
    else:
        M = sp.diags(1.0 / A.diagonal()) if preconditioner == "jacobi" else None
    maxiter = int(max_iter) if max_iter is not None else 10 * u
    solve = cg if method == "cg" else minres
    X = np.zeros((u, T))
    for t in range(T):
        if not B[:, t].any():
            continue
        count = [0]

        def tick(_xk, count=count):
            count[0] += 1

        x, info = solve(A, B[:, t], x0=None if x0 is None else x0[:, t], rtol=tol, maxiter=maxiter, M=M,
                        callback=tick)
        if info != 0:
            warnings.warn(
                f"{method} did not reach the relative residual {tol:g} in {maxiter} iterations (class "
                f"column {t}); the system was solved by a sparse LU instead (raise max_iter or tol, or "
                "use the direct solver, to avoid this).",
                HarmonicSolverWarning, stacklevel=3)
            return splu(A, permc_spec="MMD_AT_PLUS_A").solve(B), np.zeros(T, dtype=np.int64)
        X[:, t] = x
        n_iter[t] = count[0]
    return X, n_iter


def class_mass_normalize(F, q) -> np.ndarray:
    """Class mass normalisation (seed 003 eq. 2.7): ``F_it q_t / sum_j F_jt``.

    Parameters
    ----------
    F : array-like of shape (u, T)
        Soft labels of the unlabelled nodes (non-negative).
    q : array-like of shape (T,)
        Desired class proportions (positive, summing to 1).

    Returns
    -------
    ndarray of shape (u, T)
        Compare rows by argmax; a column with zero mass stays zero.
    """
    F = np.asarray(F, dtype=np.float64)
    q = np.asarray(q, dtype=np.float64)
    if F.ndim != 2 or q.shape != (F.shape[1],):
        raise ValueError(f"F must be (u, T) and q (T,); got {F.shape} and {q.shape}.")
    if (q < 0).any() or not np.isclose(q.sum(), 1.0):
        raise ValueError(f"q must be class proportions (>= 0, sum 1); got {q!r}.")
    mass = F.sum(axis=0)
    return F * np.where(mass > 0, q / np.where(mass > 0, mass, 1.0), 0.0)


class HarmonicFunction:
    """Harmonic function / Laplace learning on a graph (transductive, one-vs-all).

    Parameters
    ----------
    eps : float, default 0
        Diagonal regulariser ``1/sigma^2`` added to ``Delta_UU`` (>= 0).
    solver : {"cg", "minres", "direct"}
    preconditioner : {"jacobi", "none"} or scipy.sparse.linalg.LinearOperator
        Or a symmetric positive definite operator approximating ``A^-1`` (the multigrid
        V-cycle of :class:`core.graph.amg_precondition.GroundedLaplacianAMG`).
        For the iterative solvers.
    tol : float, default 1e-6
        Relative residual ``||b - A x|| / ||b||`` at which CG/MINRES stop (seed 001: 1e-6).
    max_iter : int, optional
        Iteration cap (default ``10 u``); reaching it warns (:class:`HarmonicSolverWarning`)
        and solves by a sparse LU.
    class_mass : bool, default False
        Predict with class mass normalisation (seed 003 eq. 2.7) instead of argmax.
    class_proportions : array-like of shape (T,), optional
        ``q`` for class mass normalisation; default the labelled set's class proportions.

    Attributes (after :meth:`fit`)
    ----------
    classes_ : list
    labeled_ : ndarray of shape (l,)
    decision_values_ : ndarray of shape (n, T)
        ``F``: one-hot rows on labelled nodes, the solution on the others.
    reached_ : ndarray of bool, shape (n,)
        False on nodes in a component without labels.
    n_iter_ : ndarray of int, shape (T,)
        Iterations per class column (0 for the direct solver).
    residual_ : ndarray of shape (T,)
        Final relative residuals.
    """

    def __init__(self, eps: float = 0.0, solver: str = "cg", preconditioner: str = "jacobi",
                 tol: float = 1e-6, max_iter: int | None = None, class_mass: bool = False,
                 class_proportions=None):
        self.eps = eps
        self.solver = solver
        self.preconditioner = preconditioner
        self.tol = tol
        self.max_iter = max_iter
        self.class_mass = class_mass
        self.class_proportions = class_proportions

    # ------------------------------------------------------------------ checks
    def _check_params(self) -> None:
        if self.solver not in SOLVERS:
            raise ValueError(f"solver must be one of {SOLVERS}; got {self.solver!r}.")
        if self.preconditioner not in PRECONDITIONERS:
            raise ValueError(f"preconditioner must be one of {PRECONDITIONERS}; got {self.preconditioner!r}.")
        if not (np.isfinite(self.eps) and self.eps >= 0):
            raise ValueError(f"eps must be a finite number >= 0; got {self.eps!r}.")
        if not (np.isfinite(self.tol) and 0 < self.tol < 1):
            raise ValueError(f"tol must be in (0, 1); got {self.tol!r}.")

    # ------------------------------------------------------------------ fit
    def fit(self, W, labeled, labels, classes=None) -> "HarmonicFunction":
        """Solve for the unlabelled nodes.

        Parameters
        ----------
        W : sparse matrix of shape (n, n)
            Symmetric non-negative graph weights (:func:`core.kernels.knn_graph`).
        labeled : array-like of int, shape (l,)
        labels : array-like, shape (l,)
        classes : sequence, optional
            All classes (default: the distinct labels).

        Raises
        ------
        ValueError
            Bad graph or labels (message names the fix).

        Warns
        -----
        HarmonicSolverWarning
            The iterative solver did not reach ``tol`` in ``max_iter`` iterations (then a
            sparse LU solved the system).
        """
        self._check_params()
        W = check_graph(W)
        n = W.shape[0]
        L, y, classes = check_labels(n, labeled, labels, classes)
        T = len(classes)
        is_lab = np.zeros(n, dtype=bool)
        is_lab[L] = True
        # components without any label: 0 there (the eps -> 0 limit of the regularised fix)
        _, comp = connected_components(W, directed=False)
        reached = np.isin(comp, np.unique(comp[L])) | (self.eps > 0)
        U = np.flatnonzero(~is_lab & reached)
        Y = np.zeros((n, T))
        Y[L, y] = 1.0
        F = Y.copy()
        self.n_iter_ = np.zeros(T, dtype=np.int64)
        self.residual_ = np.zeros(T)
        if U.size:
            d = np.asarray(W.sum(axis=1)).ravel()
            W_U = W[U]
            A = (sp.diags(d[U] + self.eps) - W_U[:, U]).tocsc()
            B = np.asarray(W_U[:, L] @ Y[L])  # (u, T)
            F[U] = self._solve(A, B)
        self.classes_ = classes
        self.labeled_ = L
        self.label_indices_ = y
        self.decision_values_ = F
        self.reached_ = np.asarray(reached, dtype=bool)
        return self

    def _solve(self, A: sp.csc_matrix, B: np.ndarray) -> np.ndarray:
        if self.solver == "direct":
            X = splu(A).solve(B)
        else:
            X, self.n_iter_ = solve_spd(A, B, tol=self.tol, max_iter=self.max_iter, method=self.solver,
                                        preconditioner=self.preconditioner)
        self.residual_ = _relres(A, X, B)
        return X

    # ------------------------------------------------------------------ outputs
    def _check_fitted(self) -> None:
        if not hasattr(self, "decision_values_"):
            raise RuntimeError("this HarmonicFunction is not fitted yet; call fit(W, labeled, labels) first.")

    def predict_indices(self) -> np.ndarray:
        """Class index per node, shape (n,): argmax of ``F`` or of its class-mass normalisation.

        Unreached nodes (all zeros) get the class with the largest proportion ``q``.
        """
        self._check_fitted()
        F = self.decision_values_
        T = F.shape[1]
        counts = np.bincount(self.label_indices_, minlength=T)
        q = counts / counts.sum() if self.class_proportions is None else np.asarray(self.class_proportions, float)
        out = F.argmax(axis=1)
        if self.class_mass:
            free = np.ones(F.shape[0], dtype=bool)
            free[self.labeled_] = False
            out[free] = class_mass_normalize(F[free], q).argmax(axis=1)
        out[~self.reached_] = int(np.argmax(q))
        return out

    def predict(self) -> np.ndarray:
        """Class label per node, ndarray of shape (n,) (labelled nodes keep their label)."""
        idx = self.predict_indices()
        return np.asarray(self.classes_, dtype=object)[idx] if not _numeric(self.classes_) \
            else np.asarray(self.classes_)[idx]


def _numeric(classes) -> bool:
    return all(isinstance(c, (int, float, np.integer, np.floating)) and not isinstance(c, bool) for c in classes)


def _relres(A, X, B) -> np.ndarray:
    num = np.linalg.norm(B - A @ X, axis=0)
    den = np.linalg.norm(B, axis=0)
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
