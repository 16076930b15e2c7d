"""What the pool itself says about the RBF width: the grid the tuner chooses from and the
pool's clusters (docs/algorithms.md §12).

Leave-one-out on the labels alone cannot inform the width when the labels sit one per
cluster: a left-out label is then predicted from the OTHER clusters, so its LOO error
measures whether neighbouring clusters share a class, at every width alike, and the re-tune
follows noise (seed 002's spheres: the width wandered 1.8 -> 3.6 -> 1.8 -> 0.32 -> 1.8 ->
0.45 in 40 labels and never reached a width that separates the spheres). Two facts of the
unlabelled pool fix that:

* The grid's lower end comes from the neighbour distances: ``median * 2**(j/2)`` for ``j``
  from the first value at or below ``min(median / 8, q)`` up to ``+4``, with ``q`` the
  :data:`LOW_QUANTILE` quantile of the distance of each point to its :data:`NEIGHBOURS`-th
  nearest neighbour (a width below the distance between neighbours only interpolates). On
  spheres (unit discs 6 apart, standardised) the old lower end ``median / 8`` = 0.225 did not
  reach the ~0.1 they need; the neighbour distance gives 0.056.
* The clusters: the connected components of the pool's symmetric :data:`NEIGHBOURS`-NN graph.
  When it splits into at least two components of at least ``NEIGHBOURS + 1`` points covering
  :data:`MIN_COVER` of the pool, ``cluster_width`` is half the median, over those components,
  of the distance from a component to the nearest point outside it: at that width the kernel
  across a typical gap is ``exp(-2)``. :func:`clusters_agree` says whether the labels are
  consistent with the clusters (no component holds two classes, at least two components
  labelled); while they are, :func:`core.rls.tuning.auto_tune` keeps the width at or below
  ``cluster_width`` (a width above it merges clusters the labels have not shown to be
  merged). A component holding two classes refutes the hypothesis and the rule switches off.

Cost: the grid's neighbour distances on a seeded subsample of at most
:data:`MAX_GRID_POINTS` points (on a subsample they are larger than the pool's: the lower end
is then conservative); the components on pools of at most :data:`MAX_CLUSTER_POINTS` points
(above, no cluster rule). Numerics only (numpy, scipy, scikit-learn).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..kernels import median_distance

__all__ = ["LOW_QUANTILE", "MAX_CLUSTER_POINTS", "MAX_GRID_POINTS", "MIN_COVER", "NEIGHBOURS", "POOL_WIDTH_RULES",
           "WidthScale",
           "clusters_agree", "component_gaps", "large_components", "neighbour_components", "width_scale"]

#: Neighbours of the graph whose distances set the grid's lower end and whose components are
#: the clusters.
NEIGHBOURS = 10

#: Quantile of the NEIGHBOURS-th neighbour distance at or below which the grid starts.
LOW_QUANTILE = 0.25

#: Points the grid's neighbour distances are measured on (a seeded subsample beyond).
MAX_GRID_POINTS = 2000

#: Largest pool whose components are computed (above: no cluster rule).
MAX_CLUSTER_POINTS = 5000

#: Fraction of the pool the large components must cover for the cluster rule.
MIN_COVER = 0.95

#: Whether :func:`width_scale` takes the grid's lower end from the neighbour distances (False:
#: ``median / 8``, the grid before issue 20 §6) and finds the pool's clusters (False: no
#: cluster rule). On by default: chosen on the first half of ``benchmarks/defaults.py``
#: (candidate ``width-pool`` against the shipped default, 9 tasks x 5 seeds: +1.37 AUBC points
#: on the mean, spheres +11.3, text-scientific +1.3, no task below -0.2; docs/defaults.md).
POOL_WIDTH_RULES = True


@dataclass(frozen=True)
class WidthScale:
    """The pool's width grid and clusters (:func:`width_scale`).

    Attributes
    ----------
    widths : ndarray of shape (W,)
        Increasing RBF widths ``median * 2**(j/2)``.
    median : float
        Median pairwise distance (the session's starting width).
    components : ndarray of shape (n_samples,) or None
        Component of every pool point in the NEIGHBOURS-NN graph, -1 for points of components
        smaller than ``NEIGHBOURS + 1``; None when the cluster rule does not apply.
    cluster_width : float or None
        Half the median gap between components; None when the cluster rule does not apply.
    """

    widths: np.ndarray
    median: float
    components: np.ndarray | None = None
    cluster_width: float | None = None


def _neighbour_distances(X: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Distances (n, k) and indices (n, k) of every point's k nearest other points."""
    from sklearn.neighbors import NearestNeighbors
    k = min(k, X.shape[0] - 1)
    dist, idx = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    return dist[:, 1:], idx[:, 1:]


def neighbour_components(X, k: int = NEIGHBOURS) -> np.ndarray:
    """Connected components of the symmetric k-NN graph of ``X``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    k : int

    Returns
    -------
    ndarray of int of shape (n_samples,)
        Component labels 0 .. C-1, numbered by their first point.
    """
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n < 2:
        return np.zeros(n, dtype=np.intp)
    _, idx = _neighbour_distances(X, k)
    rows = np.repeat(np.arange(n), idx.shape[1])
    graph = coo_matrix((np.ones(rows.size), (rows, idx.ravel())), shape=(n, n)).tocsr()
    _, labels = connected_components(graph, directed=False)
    _, first = np.unique(labels, return_index=True)
    renumber = np.empty(first.size, dtype=np.intp)
    renumber[np.argsort(np.argsort(first))] = np.arange(first.size)
    return renumber[labels].astype(np.intp)


def large_components(components) -> np.ndarray | None:
    """The clusters from the components of a neighbour graph: components smaller than
    ``NEIGHBOURS + 1`` points become -1, and there are clusters only when at least two large
    components cover :data:`MIN_COVER` of the points.

    Parameters
    ----------
    components : array-like of int, shape (n,)
        Component of every point, ids >= 0 (:func:`neighbour_components`).

    Returns
    -------
    ndarray of int of shape (n,) or None
        None when the graph is one mass.
    """
    comp = np.asarray(components)
    if comp.ndim != 1 or comp.size == 0 or comp.dtype.kind not in "iu" or comp.min() < 0:
        raise ValueError(f"components must be a non-empty 1-D array of ids >= 0; got shape {comp.shape}.")
    sizes = np.bincount(comp)
    big = sizes >= NEIGHBOURS + 1
    if big.sum() < 2 or sizes[big].sum() < MIN_COVER * comp.size:
        return None
    return np.where(big[comp], comp, -1).astype(np.intp)


def component_gaps(X, components) -> np.ndarray:
    """Per component (ids >= 0, in order): the least distance from its points to a point of
    another component (ids >= 0), shape (C,). O(n^2 d) in blocks of rows."""
    X = np.asarray(X, dtype=np.float64)
    comp = np.asarray(components)
    ids = np.unique(comp[comp >= 0])
    keep = comp >= 0
    Xk, ck = X[keep], comp[keep]
    sq = np.einsum("ij,ij->i", Xk, Xk)
    gaps = np.full(ids.size, np.inf)
    pos = np.searchsorted(ids, ck)
    for start in range(0, Xk.shape[0], 512):
        block = slice(start, start + 512)
        d2 = sq[block, None] + sq[None, :] - 2.0 * Xk[block] @ Xk.T
        d2[ck[block, None] == ck[None, :]] = np.inf
        np.minimum.at(gaps, pos[block], np.sqrt(np.maximum(d2.min(axis=1), 0.0)))
    return gaps


def width_scale(X, *, max_points: int = 1000, seed: int = 0) -> WidthScale:
    """The width grid and clusters of a pool (the module's rules).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The pool's kernel features.
    max_points : int
        Points the median distance is measured on (as :func:`core.rls.default_widths`).
    seed : int
        Seeds the subsamples.

    Returns
    -------
    WidthScale

    Raises
    ------
    ValueError
        The median distance is 0 (from :func:`core.kernels.median_distance`).
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    median = float(median_distance(X, max_points=max_points, seed=seed))
    sub = X
    if n > MAX_GRID_POINTS:
        sub = X[np.sort(np.random.default_rng([seed, 11]).choice(n, MAX_GRID_POINTS, replace=False))]
    low = median / 8.0
    if POOL_WIDTH_RULES and sub.shape[0] > NEIGHBOURS:
        dist, _ = _neighbour_distances(sub, NEIGHBOURS)
        q = float(np.quantile(dist[:, -1], LOW_QUANTILE))
        if q > 0:
            low = min(low, q)
    j_low = int(np.floor(2.0 * np.log2(low / median) + 1e-9))
    widths = median * 2.0 ** (np.arange(j_low, 5) / 2.0)
    components = cluster_width = None
    if POOL_WIDTH_RULES and NEIGHBOURS < n <= MAX_CLUSTER_POINTS:
        comp = large_components(neighbour_components(X, NEIGHBOURS))
        if comp is not None:
            cluster_width = 0.5 * float(np.median(component_gaps(X, comp)))
            components = comp
    return WidthScale(widths=widths, median=median, components=components, cluster_width=cluster_width)


def clusters_agree(components, labels) -> bool:
    """Whether the labels are consistent with the clusters: at least two components hold
    labels and none holds two classes (points of component -1 do not count).

    Parameters
    ----------
    components : array-like of int of shape (n_labeled,)
        Component of every labelled point.
    labels : sequence of length n_labeled
    """
    comp = np.asarray(components)
    seen: dict = {}
    for c, v in zip(comp.tolist(), labels):
        if c < 0:
            continue
        if seen.setdefault(c, v) != v:
            return False
    return len(seen) >= 2
