"""Which model answers the first labels, chosen from the pool alone (before leave-one-out can tell).

Below :data:`~core.selection.rule.MIN_LABELS` labels the models' leave-one-out errors say
nothing (docs/algorithms.md §14), so the model that answers then is a prior choice. A choice
made from the unlabelled pool is allowed: how clearly the pool's kNN graph splits into as many
clusters as there are classes. By the higher-order Cheeger inequality (Lee, Oveis Gharan,
Trevisan 2014), the ``c``-th smallest eigenvalue ``lambda_c`` of the normalised Laplacian
``I - D^-1/2 W D^-1/2`` is small exactly when the graph has ``c`` disjoint parts of small
conductance (0 for ``c`` components); Laplace learning (the harmonic function) propagates a
label within its part, so with one label per part it is right where the parts are the classes.

Numerics only (numpy, scipy).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["cluster_separation", "first_model", "first_model_evidence", "GRAPH_FIRST_SEPARATION"]

#: With ``FIRST_MODEL = "prior"`` (core.selection.selector, the default): the harmonic function
#: answers first where the pool's ``lambda_c`` is below this and its graph has no more
#: components than classes, RLS elsewhere. Chosen on the defaults benchmark's first half
#: (docs/defaults.md, round 7: thresholds 0.005 / 0.01 / 0.02 gave +0.09 / +0.16 / +0.16 AUBC
#: points on the mean, no task below 0; without the rule, harmonic first everywhere, -1.1 on
#: breast-cancer and -0.9 on spheres).
GRAPH_FIRST_SEPARATION = 0.02


def cluster_separation(W, n_clusters: int, *, seed: int = 0) -> float:
    """``lambda_c``: the ``n_clusters``-th smallest eigenvalue of ``I - D^-1/2 W D^-1/2``.

    Parameters
    ----------
    W : scipy.sparse matrix of shape (n, n)
        Symmetric, non-negative graph weights (the kNN graph the graph models share); every
        node must have an edge.
    n_clusters : int
        ``c`` >= 1 (the classes of the pool), below ``n``.
    seed : int
        Seeds the Lanczos start vector.

    Returns
    -------
    float
        In [0, 2]; 0 when the graph has at least ``c`` connected components.
    """
    from scipy.sparse.linalg import eigsh
    W = sp.csr_matrix(W, dtype=np.float64)
    n = W.shape[0]
    c = int(n_clusters)
    if W.shape != (n, n) or not 1 <= c < n:
        raise ValueError(f"W must be square and n_clusters in [1, {n - 1}]; got shape {W.shape}, n_clusters {c}.")
    d = np.asarray(W.sum(axis=1)).ravel()
    if np.any(d <= 0):
        raise ValueError("every node of W needs an edge (a node of degree 0 has no normalised Laplacian row).")
    s = sp.diags(1.0 / np.sqrt(d))
    A = s @ W @ s
    if n <= 200:
        mu = np.linalg.eigvalsh(A.toarray())[::-1][:c]
    else:
        v0 = np.random.default_rng(seed).standard_normal(n)
        mu = np.sort(eigsh(A, k=c, which="LA", v0=v0, return_eigenvectors=False))[::-1]
    return float(np.clip(1.0 - mu[c - 1], 0.0, 2.0))


def first_model(W, n_classes: int, *, seed: int = 0, graph: str = "harmonic", threshold: float | None = None) -> str:
    """The model that answers the first labels by the prior rule: ``graph`` where the pool's
    :func:`cluster_separation` (``c = max(2, n_classes)``) is below ``threshold`` (default
    :data:`GRAPH_FIRST_SEPARATION`, read at call time) and ``W`` has at most ``c`` connected
    components, else "rls". (More components than classes: Laplace learning leaves a component
    without a label at the class proportions, where RLS's kernel still reaches it.)

    Parameters
    ----------
    W : scipy.sparse matrix of shape (n, n)
    n_classes : int
    seed : int
    graph : str
        The graph candidate's name.
    threshold : float, optional

    Returns
    -------
    str
    """
    return first_model_evidence(W, n_classes, seed=seed, graph=graph, threshold=threshold)[0]


def first_model_evidence(W, n_classes: int, *, seed: int = 0, graph: str = "harmonic",
                         threshold: float | None = None) -> tuple[str, str]:
    """:func:`first_model` and the evidence for it in words (what the app shows).

    Returns
    -------
    model : str
        ``graph`` or "rls".
    reason : str
        E.g. "the pool's kNN graph splits into 2 parts: λ₂ = 0.0006, below 0.02".
    """
    from scipy.sparse.csgraph import connected_components
    t = GRAPH_FIRST_SEPARATION if threshold is None else float(threshold)
    c = max(2, int(n_classes))
    parts = int(connected_components(sp.csr_matrix(W), directed=False)[0])
    if parts > c:
        return "rls", f"the pool's kNN graph has {parts:,} components, more than its {c} classes"
    lam = cluster_separation(W, c, seed=seed)
    name = "λ" + str(c).translate(_SUBSCRIPTS)
    if lam < t:
        return graph, f"the pool's kNN graph splits into {c} parts: {name} = {lam:.2g}, below {t:g}"
    return "rls", f"the pool's kNN graph does not split into {c} parts: {name} = {lam:.2g}, not below {t:g}"


_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")
