"""Learning with local and global consistency (LGC) and LGC ranking.

Seed 000 §3.2, Algorithm 4 (Zhou et al. 2004); docs/algorithms.md §5. With ``S = D^-1 W``
(row-stochastic, the seed's form: ``F_ij`` is a probability) or ``S = D^-1/2 W D^-1/2``
(Zhou et al.'s symmetric form)::

    F* = (1 - alpha) (I - alpha S)^-1 Y          (the limit of F <- alpha S F + (1 - alpha) Y)

``Y`` is one-hot on labelled rows and ``1/c`` on unlabelled rows (seed 000 §3.2.2; Zhou et al.
use 0 there: ``unlabeled_prior="zero"``). Classification: argmax of a row of ``F*``;
ranking: sort column k (:meth:`LocalGlobalConsistency.rank`).

Both forms are solved as symmetric positive definite systems by CG: the row-stochastic one
as ``(D - alpha W) F = (1 - alpha) D Y`` (multiply by ``D``), the symmetric one as it stands.
``solver="iterate"`` runs the propagation itself and ``"direct"`` a sparse LU (oracles).
Isolated nodes (degree 0) keep their row of ``(1 - alpha) Y``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import splu

from ._checks import check_graph, check_labels
from .harmonic import solve_spd

__all__ = ["LocalGlobalConsistency", "LGC_FORMS", "LGC_SOLVERS"]

LGC_FORMS = ("row_stochastic", "symmetric")
LGC_SOLVERS = ("cg", "direct", "iterate")


class LocalGlobalConsistency:
    """LGC classification and ranking on a graph (transductive).

    Parameters
    ----------
    alpha : float, default 0.99
        Propagation weight in (0, 1) (seed 000 evaluates 0.01 ... 0.99).
    form : {"row_stochastic", "symmetric"}
    unlabeled_prior : {"uniform", "zero"}
        Rows of ``Y`` for unlabelled nodes: ``1/c`` (seed 000) or 0 (Zhou et al.).
    solver : {"cg", "direct", "iterate"}
    tol : float, default 1e-10
        CG relative residual, or the max-norm change at which the iteration stops.
    max_iter : int, default 10000

    Attributes (after :meth:`fit`)
    ----------
    classes_ : list
    decision_values_ : ndarray of shape (n, c)
        ``F*``.
    n_iter_ : int
        Iterations (largest over the class columns; 0 for the direct solver).
    """

    def __init__(self, alpha: float = 0.99, form: str = "row_stochastic", unlabeled_prior: str = "uniform",
                 solver: str = "cg", tol: float = 1e-10, max_iter: int = 10_000):
        self.alpha = alpha
        self.form = form
        self.unlabeled_prior = unlabeled_prior
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter

    def _check_params(self) -> None:
        if not (isinstance(self.alpha, (int, float, np.floating)) and 0 < self.alpha < 1):
            raise ValueError(f"alpha must be in (0, 1); got {self.alpha!r} (seed 000 uses 0.01 to 0.99).")
        if self.form not in LGC_FORMS:
            raise ValueError(f"form must be one of {LGC_FORMS}; got {self.form!r}.")
        if self.unlabeled_prior not in ("uniform", "zero"):
            raise ValueError(f"unlabeled_prior must be 'uniform' or 'zero'; got {self.unlabeled_prior!r}.")
        if self.solver not in LGC_SOLVERS:
            raise ValueError(f"solver must be one of {LGC_SOLVERS}; got {self.solver!r}.")
        if not (0 < self.tol < 1):
            raise ValueError(f"tol must be in (0, 1); got {self.tol!r}.")

    def initial_labels(self, n: int, L: np.ndarray, y: np.ndarray, c: int) -> np.ndarray:
        """``Y`` (n, c): one-hot on labelled rows, ``1/c`` or 0 elsewhere."""
        Y = np.full((n, c), 1.0 / c if self.unlabeled_prior == "uniform" else 0.0)
        Y[L] = 0.0
        Y[L, y] = 1.0
        return Y

    def propagation_matrix(self, W) -> sp.csr_matrix:
        """``S`` (n, n): ``D^-1 W`` or ``D^-1/2 W D^-1/2`` (isolated nodes: zero rows)."""
        W = check_graph(W)
        d = np.asarray(W.sum(axis=1)).ravel()
        d = np.where(d > 0, d, 1.0)
        if self.form == "row_stochastic":
            return (sp.diags(1.0 / d) @ W).tocsr()
        s = 1.0 / np.sqrt(d)
        return (sp.diags(s) @ W @ sp.diags(s)).tocsr()

    def fit(self, W, labeled, labels, classes=None) -> "LocalGlobalConsistency":
        """Compute ``F*``.

        Parameters
        ----------
        W : sparse matrix of shape (n, n)
        labeled : array-like of int, shape (l,)
        labels : array-like, shape (l,)
        classes : sequence, optional

        Raises
        ------
        ValueError
            Bad parameters, graph or labels.
        RuntimeError
            The iteration (``solver="iterate"``) did not settle in ``max_iter`` steps.

        Warns
        -----
        core.graph.harmonic.HarmonicSolverWarning
            CG stopped before ``tol`` (then a sparse LU solved the system).
        """
        self._check_params()
        W = check_graph(W)
        n = W.shape[0]
        L, y, classes = check_labels(n, labeled, labels, classes)
        c = len(classes)
        Y = self.initial_labels(n, L, y, c)
        a = float(self.alpha)
        self.n_iter_ = 0
        if self.solver == "iterate":
            S = self.propagation_matrix(W)
            F = Y.copy()
            for it in range(1, int(self.max_iter) + 1):
                F_new = a * (S @ F) + (1 - a) * Y
                change = float(np.abs(F_new - F).max())
                F = F_new
                if change <= self.tol:
                    break
            else:
                raise RuntimeError(f"LGC propagation did not settle to {self.tol:g} in {self.max_iter} "
                                   "iterations; use solver='cg' (alpha near 1 converges slowly).")
            self.n_iter_ = it
        else:
            d = np.asarray(W.sum(axis=1)).ravel()
            d = np.where(d > 0, d, 1.0)
            if self.form == "row_stochastic":
                A = (sp.diags(d) - a * W).tocsc()
                B = (1 - a) * d[:, None] * Y
            else:
                s = 1.0 / np.sqrt(d)
                A = (sp.identity(n) - a * (sp.diags(s) @ W @ sp.diags(s))).tocsc()
                B = (1 - a) * Y
            if self.solver == "direct":
                F = splu(A).solve(B)
            else:
                F, n_iter = solve_spd(A, B, tol=self.tol, max_iter=int(self.max_iter))
                self.n_iter_ = max(self.n_iter_, int(n_iter.max(initial=0)))
        self.classes_ = classes
        self.labeled_ = L
        self.decision_values_ = F
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "decision_values_"):
            raise RuntimeError("this LocalGlobalConsistency is not fitted yet; call fit(W, labeled, labels) first.")

    def predict_indices(self) -> np.ndarray:
        """Class index of each node (argmax of its row of ``F*``), shape (n,)."""
        self._check_fitted()
        return self.decision_values_.argmax(axis=1)

    def predict(self) -> np.ndarray:
        """Class label of each node, shape (n,)."""
        return np.asarray(self.classes_)[self.predict_indices()]

    def rank(self, label) -> np.ndarray:
        """LGC ranking (seed 000 Algorithm 4, step 4): node indices by decreasing ``F*[:, k]``.

        Parameters
        ----------
        label
            The class ``k`` to rank by (one of ``classes_``).

        Returns
        -------
        ndarray of int64, shape (n,)
            Most relevant first; ties keep index order.
        """
        self._check_fitted()
        if label not in self.classes_:
            raise ValueError(f"{label!r} is not a class; rank by one of {self.classes_!r}.")
        k = self.classes_.index(label)
        return np.argsort(-self.decision_values_[:, k], kind="stable").astype(np.int64)
