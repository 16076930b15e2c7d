"""Which part of the pool the labels cover: the clusters of the pool's nearest-neighbour graph.

The clusters are the connected components of the pool's symmetric ``NEIGHBOURS``-NN graph
(:func:`core.rls.width_scale.neighbour_components`), components smaller than
``NEIGHBOURS + 1`` points marked -1 (never counted as uncovered). While a cluster holds no
label, its predictions come from other clusters and do not change from one label to the next,
so agreement of successive predictions says nothing about it (the stopping rule of
``labeler/session/stopping.py``).

* Up to :data:`~core.rls.width_scale.MAX_CLUSTER_POINTS` points the session already has the
  pool's components (the width tuner's, :func:`core.rls.width_scale.width_scale`):
  :func:`uncovered_share` counts the pool points in components without a label exactly.
* Above, computing the whole graph costs a kNN search of the pool. :func:`sampled_clusters`
  takes a seeded sample of ``MAX_CLUSTER_POINTS`` points instead and the components of the
  sample's own ``NEIGHBOURS``-NN graph; a label covers the component of its nearest sample
  point (exact search over the sample, ``O(m d)`` once per labelled point, remembered). The
  share of the pool in uncovered clusters is then estimated by the share of the sample in
  them: a binomial estimate with standard error ``sqrt(p (1 - p) / m)``, 0.0014 at ``p`` =
  1 % and ``m`` = 5,000. A cluster shows in the sample as a component when it holds at least
  ``NEIGHBOURS + 1`` sample points, i.e. about ``(NEIGHBOURS + 1) n / m`` pool points (0.22 %
  of the pool): clusters below that are not counted, like the small components of the exact
  rule. On a sample the neighbour distances are larger than on the pool, so two clusters the
  pool's graph keeps apart can join in the sample's graph when the gap between them is below
  the sample's neighbour distance: the sampled rule tends to see fewer, larger clusters (it
  errs towards "κ alone", the rule before clusters), as the sample's neighbours reach further.

Numerics only (numpy, scikit-learn's exact neighbour search through
:mod:`core.rls.width_scale`).
"""

from __future__ import annotations

import numpy as np

from .rls.width_scale import MAX_CLUSTER_POINTS, NEIGHBOURS, large_components, neighbour_components

__all__ = ["SampledClusters", "sampled_clusters", "uncovered_share"]


def _share_outside(components: np.ndarray, hit: np.ndarray) -> float:
    """Share of the points of ``components`` (-1 never counted) in components not in ``hit``."""
    sizes = np.bincount(components[components >= 0], minlength=1)
    covered = np.zeros(sizes.size, dtype=bool)
    covered[hit[hit >= 0]] = True
    return float(sizes[~covered].sum() / components.size)


class SampledClusters:
    """The pool's clusters on a seeded sample (:func:`sampled_clusters`), for pools above
    ``MAX_CLUSTER_POINTS`` points.

    Parameters
    ----------
    X : ndarray of shape (n_points, n_features)
        The pool's kernel features (kept by reference: the nearest sample point of a labelled
        point is found when it is first asked for).
    sample : ndarray of int of shape (m,)
        Pool indices of the sample, increasing.
    components : ndarray of int of shape (m,)
        Cluster of every sample point (>= 0), -1 for small components.

    Attributes
    ----------
    n_points : int
        Size of the pool.
    """

    def __init__(self, X, sample, components):
        self._X = X
        self.sample = np.asarray(sample, dtype=np.int64)
        self.components = np.asarray(components, dtype=np.intp)
        if self.sample.shape != self.components.shape or self.sample.ndim != 1:
            raise ValueError(f"sample and components must be 1-D of one length; got {self.sample.shape}, "
                             f"{self.components.shape}.")
        self.n_points = int(X.shape[0])
        self._X_sample = np.asarray(X[self.sample], dtype=np.float64)
        self._sq = np.einsum("ij,ij->i", self._X_sample, self._X_sample)
        self._nearest: dict[int, int] = {int(i): k for k, i in enumerate(self.sample.tolist())}

    def nearest_sample(self, points) -> np.ndarray:
        """Position in the sample of the sample point nearest to each pool point (a sample
        point is its own nearest), shape (p,). Remembered per point."""
        idx = np.asarray(points, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= self.n_points):
            raise ValueError(f"labelled indices must lie in [0, {self.n_points}); got {idx.min()}..{idx.max()}.")
        todo = np.array(sorted({int(i) for i in idx.tolist()} - self._nearest.keys()), dtype=np.int64)
        for start in range(0, todo.size, 256):
            block = todo[start:start + 256]
            Xb = np.asarray(self._X[block], dtype=np.float64)
            d2 = self._sq[None, :] - 2.0 * Xb @ self._X_sample.T  # + |x|^2, the same along a row
            for i, k in zip(block.tolist(), np.argmin(d2, axis=1).tolist()):
                self._nearest[i] = int(k)
        return np.array([self._nearest[int(i)] for i in idx.tolist()], dtype=np.int64)

    def uncovered_share(self, labelled) -> float:
        """Estimated share of the pool in clusters holding no label: the share of the sample
        in components that hold no labelled point's nearest sample point."""
        return _share_outside(self.components, self.components[self.nearest_sample(labelled)])


def sampled_clusters(X, max_points: int = MAX_CLUSTER_POINTS, seed: int = 0) -> SampledClusters | None:
    """The pool's clusters on a seeded sample of ``max_points`` points (module docstring).

    Parameters
    ----------
    X : array-like of shape (n_points, n_features)
        The pool's kernel features.
    max_points : int
        Sample size (the whole pool when it is not larger).
    seed : int

    Returns
    -------
    SampledClusters or None
        None when the sample's graph is one mass (:func:`core.rls.width_scale.large_components`).
    """
    n = X.shape[0]
    if int(max_points) <= NEIGHBOURS + 1:
        raise ValueError(f"max_points must exceed {NEIGHBOURS + 1}; got {max_points!r}.")
    if n <= NEIGHBOURS:
        return None
    sample = np.arange(n)
    if n > int(max_points):
        sample = np.sort(np.random.default_rng([int(seed), 23]).choice(n, int(max_points), replace=False))
    from sklearn import config_context

    with config_context(working_memory=64):  # the brute-force search in blocks of 64 MB, not m x m at once
        comp = large_components(neighbour_components(np.asarray(X[sample], dtype=np.float64), NEIGHBOURS))
    return None if comp is None else SampledClusters(X, sample, comp)


def uncovered_share(clusters, labelled) -> float:
    """Share of the pool lying in clusters that hold no label.

    Parameters
    ----------
    clusters : array-like of int of shape (n_points,), or SampledClusters
        The cluster of every pool point (>= 0, or -1 for points of small components, which
        are never counted as uncovered), or the clusters of a sample of the pool
        (:func:`sampled_clusters`: the share is then the sample's estimate).
    labelled : array-like of int
        Pool indices of the labelled points.

    Returns
    -------
    float in [0, 1]
    """
    if isinstance(clusters, SampledClusters):
        return clusters.uncovered_share(labelled)
    comp = np.asarray(clusters)
    if comp.ndim != 1 or comp.size == 0 or comp.dtype.kind not in "iu":
        raise ValueError(f"components must be a non-empty 1-D integer array; got shape {comp.shape}, "
                         f"dtype {comp.dtype}.")
    idx = np.asarray(labelled, dtype=np.int64).reshape(-1)
    if idx.size and (idx.min() < 0 or idx.max() >= comp.size):
        raise ValueError(f"labelled indices must lie in [0, {comp.size}); got {idx.min()}..{idx.max()}.")
    return _share_outside(comp, comp[idx])
