"""Zhu, Lafferty and Ghahramani (2003): active learning by expected risk on the harmonic function.

Seed 003 §2.8.1 (eq. 2.21); docs/algorithms.md §5, §9. The harmonic function ``f_U`` is the mean of a
Gaussian field with covariance ``G = (Delta_UU + eps I)^-1``; labelling node ``k`` with ``y``
conditions it on ``f_k = y``::

    f+(k, y) = f_U + (y - f_k) G[:, k] / G_kk                           (eq. 2.21)
    after labelling k:  G' = G_{-k,-k} - G_{-k,k} G_{k,-k} / G_kk        (rank-one downdate)

Risk ``R(f) = sum_i min(f_i, 1 - f_i)``; the query minimises the expected risk
``(1 - f_k) R(f+(k, 0)) + f_k R(f+(k, 1))``. Multiclass (one column per class, one-hot
targets, the one-vs-all harmonic function of :class:`core.graph.HarmonicFunction`) uses
``R(F) = sum_i (1 - max_t F_it)`` and weights ``F_kt``: with two classes, ``F = [1 - f, f]``,
this is exactly the binary rule.

Exact and dense: ``G`` is u x u (u unlabelled nodes), O(u^2) memory, O(u T) per scored
candidate (one fused pass, :mod:`core.graph._zhu_numba`). For large pools the same rule is ARLS on a spectral Gaussian-field factor
(docs/algorithms.md §9): the ARLS mean with ``lam -> 0`` on ``K = (Delta + eps I)^-1`` is this ``f`` (up to
the +-1 coding) and its posterior covariance on U is ``G``; ``tests/test_graph_zhu.py`` shows it.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.sparse.csgraph import connected_components

from ._checks import check_graph, check_labels
from ._zhu_numba import zhu_expected_risks

__all__ = ["ZhuActiveLearning", "harmonic_risk"]



def harmonic_risk(F) -> float:
    """``sum_i (1 - max_t F_it)``; for ``F = [1 - f, f]`` this is ``sum_i min(f_i, 1 - f_i)``."""
    F = np.asarray(F, dtype=np.float64)
    return float(np.sum(1.0 - F.max(axis=1)))


class ZhuActiveLearning:
    """Harmonic function with exact expected-risk queries (dense, small pools).

    Parameters
    ----------
    eps : float, default 0
        Regulariser added to ``Delta_UU`` (needed when a component has no label).

    Attributes (after :meth:`fit`)
    ----------
    classes_ : list
    unlabeled_ : ndarray of int64, shape (u,)
        Unlabelled nodes; ``G`` rows/columns follow this order.
    decision_values_ : ndarray of shape (n, T)
        ``F``: one-hot on labelled nodes, the harmonic solution elsewhere.
    inverse_ : ndarray of shape (u, u)
        ``G = (Delta_UU + eps I)^-1``.
    """

    def __init__(self, eps: float = 0.0):
        self.eps = eps

    def fit(self, W, labeled, labels, classes=None) -> "ZhuActiveLearning":
        """Invert ``Delta_UU + eps I`` (Cholesky) and solve for ``F_U``.

        Raises
        ------
        ValueError
            Bad input, or ``eps = 0`` with a connected component that holds no label.
        """
        if not (np.isfinite(self.eps) and self.eps >= 0):
            raise ValueError(f"eps must be a finite number >= 0; got {self.eps!r}.")
        W = check_graph(W)
        n = W.shape[0]
        L, y, classes = check_labels(n, labeled, labels, classes)
        if self.eps == 0:
            _, comp = connected_components(W, directed=False)
            missing = np.setdiff1d(np.unique(comp), comp[L])
            if missing.size:
                raise ValueError(
                    f"{missing.size} connected component(s) of the graph hold no label, so Delta_UU is "
                    "singular; pass eps > 0 (e.g. 1e-6, the 1/sigma^2 regulariser) or label a node there."
                )
        T = len(classes)
        lab = np.zeros(n, dtype=bool)
        lab[L] = True
        U = np.flatnonzero(~lab)
        Wd = W.toarray()
        A = np.diag(Wd[U].sum(axis=1) + self.eps) - Wd[np.ix_(U, U)]
        try:
            cf = cho_factor(A, lower=True)
        except LinAlgError:
            raise ValueError("Delta_UU + eps I is not positive definite; pass a larger eps.") from None
        G = cho_solve(cf, np.eye(U.size))
        F = np.zeros((n, T))
        F[L, y] = 1.0
        F[U] = G @ (Wd[np.ix_(U, L)] @ F[L])
        self.classes_ = classes
        self.unlabeled_ = U
        self.decision_values_ = F
        self.inverse_ = 0.5 * (G + G.T)
        return self

    def _check_fitted(self) -> None:
        if not hasattr(self, "inverse_"):
            raise RuntimeError("this ZhuActiveLearning is not fitted yet; call fit(W, labeled, labels) first.")

    def _positions(self, nodes) -> np.ndarray:
        nodes = np.atleast_1d(np.asarray(nodes, dtype=np.int64))
        pos = np.searchsorted(self.unlabeled_, nodes)
        ok = (pos < self.unlabeled_.size) & (self.unlabeled_[np.minimum(pos, self.unlabeled_.size - 1)] == nodes)
        if not ok.all():
            raise ValueError(f"node {int(nodes[~ok][0])} is labelled or not in the graph; "
                             "score or label only unlabelled nodes (see unlabeled_).")
        return pos

    def risk(self) -> float:
        """``R(F_U)`` of the current harmonic function."""
        self._check_fitted()
        return harmonic_risk(self.decision_values_[self.unlabeled_])

    def expected_risks(self, candidates=None) -> np.ndarray:
        """Expected risk after labelling each candidate (seed 003 §2.8.1).

        Parameters
        ----------
        candidates : array-like of int, optional
            Unlabelled node indices (default: all of ``unlabeled_``).

        Returns
        -------
        ndarray of shape (k,)
        """
        self._check_fitted()
        cand = self.unlabeled_ if candidates is None else np.asarray(candidates, dtype=np.int64)
        pos = self._positions(cand) if cand.size else cand
        FU = np.ascontiguousarray(self.decision_values_[self.unlabeled_])  # (u, T)
        Fk = FU[pos]  # (k, T)
        p = np.clip(Fk, 0.0, 1.0)
        total = p.sum(axis=1, keepdims=True)
        p = p / np.where(total > 0, total, 1.0)
        return zhu_expected_risks(FU, np.ascontiguousarray(self.inverse_),
                                  np.ascontiguousarray(pos, dtype=np.int64), p)

    def query(self) -> int:
        """The unlabelled node with the smallest expected risk (ties: lowest index)."""
        E = self.expected_risks()
        return int(self.unlabeled_[int(np.argmin(E))])

    def add(self, node, label) -> "ZhuActiveLearning":
        """Label ``node``: eq. 2.21 for ``F`` and the rank-one downdate of ``G``, O(u^2 + u T)."""
        self._check_fitted()
        if label not in self.classes_:
            raise ValueError(f"label {label!r} is not one of classes={self.classes_!r}.")
        if self.unlabeled_.size == 1:
            raise ValueError("this is the last unlabelled node; nothing would be left to predict.")
        p = int(self._positions([node])[0])
        t = self.classes_.index(label)
        U, G, F = self.unlabeled_, self.inverse_, self.decision_values_
        g = G[:, p].copy()
        target = np.zeros(F.shape[1])
        target[t] = 1.0
        F[U] += np.outer(g / g[p], target - F[U[p]])
        F[U[p]] = target
        G = G - np.outer(g, g) / g[p]
        keep = np.arange(U.size) != p
        G = G[np.ix_(keep, keep)]
        self.inverse_ = 0.5 * (G + G.T)
        self.unlabeled_ = U[keep]
        return self

    def predict(self) -> np.ndarray:
        """Class of each node (argmax of ``F``), shape (n,)."""
        self._check_fitted()
        return np.asarray(self.classes_)[self.decision_values_.argmax(axis=1)]
