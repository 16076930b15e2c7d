"""Input checks shared by the graph models (weights, labelled sets, class labels)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["check_graph", "check_labels"]


def check_graph(W) -> sp.csr_matrix:
    """``W`` as a symmetric, non-negative CSR matrix of float64 with a zero diagonal.

    Raises
    ------
    ValueError
        Naming the problem (not square, negative, non-finite or asymmetric weights) and the fix.
    """
    W = sp.csr_matrix(W, dtype=np.float64)
    n, m = W.shape
    if n != m or n < 2:
        raise ValueError(f"W must be a square (n, n) weight matrix with n >= 2; got shape {W.shape}. "
                         "Build one with core.kernels.knn_graph(X, k).")
    if W.nnz and not np.isfinite(W.data).all():
        raise ValueError("W has NaN or infinite weights; rebuild the graph from finite features.")
    if W.nnz and W.data.min() < 0:
        raise ValueError("W has negative weights; graph weights must be >= 0 (e.g. 1 or exp(-d^2/s^2)).")
    asym = abs(W - W.T)
    if asym.nnz and asym.max() > 1e-12 * max(W.max(), 1e-300):
        raise ValueError("W is not symmetric; symmetrise it, e.g. W.maximum(W.T) (knn_graph does).")
    if W.diagonal().any():
        W = W.tolil()
        W.setdiag(0.0)
        W = W.tocsr()
        W.eliminate_zeros()
    return W


def check_labels(n: int, labeled, labels, classes=None, allow_all: bool = False):
    """Labelled indices, their class indices and the class list.

    Parameters
    ----------
    n : int
        Number of graph nodes.
    labeled : array-like of int, shape (l,)
        Distinct node indices in ``[0, n)``.
    labels : array-like, shape (l,)
        Class label of each labelled node.
    classes : sequence, optional
        All class labels (default: the sorted distinct ``labels``; at least two).
    allow_all : bool, optional
        Accept every node labelled (a model whose equation needs no unlabelled node, fitted
        for its leave-one-out values: Poisson learning); default False.

    Returns
    -------
    L : ndarray of int64, shape (l,)
    y : ndarray of int64, shape (l,)
        Index into ``classes``.
    classes : list
    """
    L = np.asarray(labeled)
    if L.ndim != 1 or L.size == 0 or not np.issubdtype(L.dtype, np.integer):
        raise ValueError("labeled must be a non-empty 1-d array of integer node indices; "
                         f"got {np.asarray(labeled)!r:.80}.")
    L = L.astype(np.int64)
    if L.min() < 0 or L.max() >= n:
        raise ValueError(f"labeled indices must lie in [0, {n - 1}] (the graph has {n} nodes); "
                         f"got min {L.min()}, max {L.max()}.")
    if np.unique(L).size != L.size:
        raise ValueError("labeled has repeated indices; give each labelled node once.")
    if L.size == n and not allow_all:
        raise ValueError("every node is labelled: nothing to predict; leave some nodes unlabelled.")
    labels = np.asarray(labels)
    if labels.shape != L.shape:
        raise ValueError(f"labels must have one entry per labelled node ({L.size}); got shape {labels.shape}.")
    classes = sorted(set(labels.tolist())) if classes is None else list(classes)
    if len(classes) < 2:
        raise ValueError(f"need at least two classes; got {classes!r}. Pass classes=[...] with every class.")
    pos = {c: t for t, c in enumerate(classes)}
    unknown = [c for c in labels.tolist() if c not in pos]
    if unknown:
        raise ValueError(f"label {unknown[0]!r} is not one of classes={classes!r}; add it to classes.")
    y = np.array([pos[c] for c in labels.tolist()], dtype=np.int64)
    return L, y, classes
