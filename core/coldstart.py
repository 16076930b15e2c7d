"""Cold start: the first labels by typicality and coverage, before any model can guide the picks
(issue 20 §5; docs/algorithms.md §13).

TypiClust (Hacohen, Dekel, Weinshall 2022, "Active learning on a budget"): with ``|L|`` labels,
cluster the pool by k-means into ``k = |L| + 1`` clusters; among the clusters holding no label
("uncovered"), take the largest (at least :data:`MIN_CLUSTER` points; if none is left, the
largest of all); in it, pick the most *typical* point, the one with the highest typicality

    typicality(x) = 1 / mean distance from x to its K nearest neighbours in its cluster,

``K = min(`` :data:`NEIGHBOURS` ``, cluster size - 1)``. The picks spread over the dense regions
of the pool, one per region, which is what a model with few labels needs; expected risk with
ten labels or fewer reads a model that does not know the classes yet.

Deterministic given the pool, the labelled set and the seed (k-means seeded, ``n_init=1``),
so a reopened session recomputes the same pick. Pools larger than :data:`MAX_POINTS` are
clustered on a seeded subsample and the pick is made among its points. Numerics only (numpy,
scikit-learn).
"""

from __future__ import annotations

import numpy as np

__all__ = ["CLUSTER_COVER", "COLD_START_KIND", "COLD_START_LABELS", "COLD_START_MIN_CLASSES", "MAX_POINTS",
           "MIN_CLUSTER", "NEIGHBOURS", "ClusterCover", "ColdStart", "CriterionStart", "Starters", "cold_start_labels", "cover_pick", "typicality", "typiclust_pick"]

#: Labels the cold start answers in the "auto" strategy (0: off), on pools of at least
#: :data:`COLD_START_MIN_CLASSES` classes. Chosen on the defaults benchmark's first half
#: (docs/defaults.md, round 5: +1.0 AUBC points on the mean, digits-10 +4, no task below 0).
COLD_START_LABELS = 10

#: The cold start answers only on pools of at least this many classes (0: every pool). With
#: two classes both show up within the first few labels; ten typical points (far from the
#: boundary) then mislead the leave-one-out width re-tune (on mnist-4v9 the width jumped
#: 8.3 -> 2.9 -> 16.6 -> 1.5 between 15 and 20 labels, accuracy stuck near 72 %), and TypiClust
#: for 10 labels cost 1.3 AUBC points there. With three classes or more, finding every class
#: is what the first labels are for (docs/defaults.md, round 5).
COLD_START_MIN_CLASSES = 3


#: What answers the cold start of ``--model auto``: "typiclust" (:class:`ColdStart`, on pools of
#: :data:`COLD_START_MIN_CLASSES` classes or more: the default) or "vopt" (the drop of the kNN
#: graph's posterior variance, :mod:`core.graph.variance`, the peers' VOpt, for the first
#: :data:`COLD_START_LABELS` labels on every pool: :class:`CriterionStart`; measured as
#: ``auto-vopt-cold`` in docs/defaults.md).
COLD_START_KIND = "typiclust"


def cold_start_labels(n_classes: int) -> int:
    """Labels the cold start answers on a pool of ``n_classes`` classes: :data:`COLD_START_LABELS`
    when ``n_classes >= COLD_START_MIN_CLASSES``, else 0 (both read at call time)."""
    n_classes = int(n_classes)
    if n_classes < 0:
        raise ValueError(f"n_classes must be >= 0; got {n_classes}.")
    return COLD_START_LABELS if n_classes >= COLD_START_MIN_CLASSES else 0

#: Nearest neighbours of the typicality.
NEIGHBOURS = 20

#: Clusters smaller than this are not picked from while a larger uncovered one exists.
MIN_CLUSTER = 5

#: Points k-means runs on (a seeded subsample beyond).
MAX_POINTS = 20000


def typicality(X) -> np.ndarray:
    """``1 / mean distance to the K nearest other points``, K = min(NEIGHBOURS, n - 1), shape (n,).

    Parameters
    ----------
    X : ndarray of shape (n, n_features)
        The points of one cluster.
    """
    from sklearn.neighbors import NearestNeighbors
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    if n < 2:
        return np.ones(n)
    k = min(NEIGHBOURS, n - 1)
    dist, _ = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
    mean = dist[:, 1:].mean(axis=1)
    return 1.0 / np.maximum(mean, 1e-12)


def typiclust_pick(X, labeled, *, seed: int = 0, exclude=None) -> int:
    """The TypiClust pick (the module's rule) among the points of ``X`` not labelled or excluded.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    labeled : array-like of int
        Indices of the labelled points.
    seed : int
        Seeds k-means.
    exclude : array-like of int, optional
        Points never to pick (skipped by the user).

    Returns
    -------
    int
        Index into ``X``.

    Raises
    ------
    ValueError
        Nothing left to pick.
    """
    from sklearn.cluster import KMeans
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    labeled = np.unique(np.asarray(labeled, dtype=np.intp).ravel())
    blocked = np.zeros(n, dtype=bool)
    blocked[labeled] = True
    if exclude is not None and len(exclude):
        blocked[np.asarray(exclude, dtype=np.intp)] = True
    if blocked.all():
        raise ValueError("every point is labelled or excluded: nothing left to pick.")
    k = min(labeled.size + 1, n)
    with np.errstate(all="ignore"):
        cluster = KMeans(n_clusters=k, n_init=1, random_state=int(seed)).fit_predict(X)
    sizes = np.bincount(cluster, minlength=k)
    covered = np.zeros(k, dtype=bool)
    covered[cluster[labeled]] = True
    open_ = np.bincount(cluster[~blocked], minlength=k) > 0
    order = np.lexsort((np.arange(k), -sizes))  # largest first, ties to the lower id
    pick_from = [c for c in order if not covered[c] and open_[c] and sizes[c] >= MIN_CLUSTER]
    if not pick_from:
        pick_from = [c for c in order if open_[c]]
    c = pick_from[0]
    members = np.flatnonzero(cluster == c)
    typ = typicality(X[members])
    typ[blocked[members]] = -np.inf
    return int(members[int(np.argmax(typ))])


class ColdStart:
    """TypiClust picks for the first ``n_labels`` labels of a pool.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The pool's kernel features.
    n_labels : int >= 0
        Labels the cold start answers (with fewer labelled points it picks; 0: never).
    seed : int
        Seeds k-means and the subsample.
    """

    def __init__(self, X, n_labels: int = 10, seed: int = 0):
        if isinstance(n_labels, bool) or int(n_labels) != n_labels or n_labels < 0:
            raise ValueError(f"n_labels must be an integer >= 0; got {n_labels!r}.")
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[0] < 2:
            raise ValueError(f"X must be a 2-D array of at least 2 points; got shape {X.shape}.")
        self.n_labels = int(n_labels)
        self.seed = int(seed)
        n = X.shape[0]
        self._rows = (np.arange(n) if n <= MAX_POINTS else
                      np.sort(np.random.default_rng([self.seed, 13]).choice(n, MAX_POINTS, replace=False)))
        self._X = X[self._rows]
        self._n = n

    def active(self, n_labeled: int) -> bool:
        """Whether the cold start answers with ``n_labeled`` labels stored."""
        return n_labeled < self.n_labels

    def pick(self, labeled, exclude=None) -> int:
        """The next point (pool index) to label: :func:`typiclust_pick` on the (subsampled) pool."""
        where = np.full(self._n, -1, dtype=np.intp)
        where[self._rows] = np.arange(self._rows.size)
        lab = where[np.asarray(labeled, dtype=np.intp)] if len(labeled) else np.zeros(0, dtype=np.intp)
        exc = [] if exclude is None or not len(exclude) else where[np.asarray(exclude, dtype=np.intp)]
        j = typiclust_pick(self._X, lab[lab >= 0], seed=self.seed, exclude=np.asarray(exc)[np.asarray(exc) >= 0]
                           if len(exc) else None)
        return int(self._rows[j])


#: Whether "auto" first asks for one label in every pool cluster while the labels agree with
#: the clusters (:class:`ClusterCover`): False (off), "typical" (the most typical point of the
#: largest cluster with no label, :func:`cover_pick`) or "model" (the point the model's own
#: criterion ranks first among the clusters with no label). "model" is the default: chosen on
#: the defaults benchmark's first half (docs/defaults.md, round 6, candidate ``auto-cover-model``:
#: spheres reach 100 % from 57-60 labels on every seed, 60 spheres, against 62-63 without it;
#: +0.8 AUBC points there, the other tasks silent or identical). "typical" lost 1.0 on spheres.
CLUSTER_COVER = "model"


def cover_pick(X, components, labeled, exclude=None) -> int | None:
    """The most typical point (:func:`typicality` within its cluster) of the largest cluster
    holding no label, or None when every cluster (ids >= 0) holds one.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
    components : ndarray of int of shape (n_samples,)
        Cluster of every point, -1 for points of no cluster
        (:attr:`core.rls.width_scale.WidthScale.components`).
    labeled : array-like of int
    exclude : array-like of int, optional
        Points never to pick.

    Returns
    -------
    int or None
    """
    comp = np.asarray(components)
    labeled = np.asarray(labeled, dtype=np.intp).ravel()
    blocked = np.zeros(comp.size, dtype=bool)
    blocked[labeled] = True
    if exclude is not None and len(exclude):
        blocked[np.asarray(exclude, dtype=np.intp)] = True
    ids = np.unique(comp[comp >= 0])
    covered = set(comp[labeled].tolist())
    sizes = [(int(np.sum(comp == c)), -int(c)) for c in ids if c not in covered and np.any(~blocked[comp == c])]
    if not sizes:
        return None
    c = -max(sizes)[1]  # largest, ties to the lower id
    members = np.flatnonzero(comp == c)
    typ = typicality(np.asarray(X, dtype=np.float64)[members])
    typ[blocked[members]] = -np.inf
    return int(members[int(np.argmax(typ))])


class ClusterCover:
    """One label in every pool cluster first, while the labels agree with the clusters.

    The pool's clusters (the components of its 10-NN graph, docs/algorithms.md §12) are a
    hypothesis: each holds one class. While no cluster holds two classes, a cluster with no
    label is where the model knows least, so the next pick is :func:`cover_pick`. A cluster
    holding two classes refutes the hypothesis: the rule stops for good.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    components : ndarray of int of shape (n_samples,)
        As :func:`cover_pick`.
    labels_of : callable() -> dict {index: label}
        The labels stored now (the learner's ``labels``).
    score : callable() -> ndarray of shape (n_samples,), optional
        The model's query scores now (lower first, ``core.strategies.scores``): the pick is then
        the best-scored free point of the clusters with no label (ties to the lower index)
        instead of :func:`cover_pick`'s most typical point.
    """

    def __init__(self, X, components, labels_of, score=None):
        self._X = np.asarray(X, dtype=np.float64)
        self._comp = np.asarray(components)
        if self._comp.shape != (self._X.shape[0],):
            raise ValueError(f"components must have one entry per point ({self._X.shape[0]}); "
                             f"got shape {self._comp.shape}.")
        self._labels_of = labels_of
        self._score = score
        self.refuted = False

    def _agree(self) -> bool:
        if not self.refuted:
            seen: dict = {}
            for i, v in self._labels_of().items():
                c = int(self._comp[i])
                if c >= 0 and seen.setdefault(c, v) != v:
                    self.refuted = True
                    break
        return not self.refuted

    def active(self, n_labeled: int) -> bool:
        """Whether a cluster holds no label and the labels agree with the clusters."""
        if not self._agree():
            return False
        return cover_pick(self._X, self._comp, list(self._labels_of())) is not None

    def pick(self, labeled, exclude=None) -> int:
        """:func:`cover_pick` (falls back to the first unlabelled point never: call when active)."""
        i = cover_pick(self._X, self._comp, labeled, exclude)
        if i is None:
            raise ValueError("every cluster holds a label: nothing to cover.")
        if self._score is None:
            return i
        comp = self._comp
        free = comp >= 0
        free[np.asarray(labeled, dtype=np.intp)] = False
        if exclude is not None and len(exclude):
            free[np.asarray(exclude, dtype=np.intp)] = False
        free &= ~np.isin(comp, comp[np.asarray(labeled, dtype=np.intp)])
        s = np.asarray(self._score(), dtype=np.float64)
        cand = np.flatnonzero(free)
        return int(cand[int(np.argmin(s[cand]))])


class CriterionStart:
    """A query criterion answers the first ``n_labels`` labels: the free point of lowest score.

    Parameters
    ----------
    n_labels : int >= 0
        Labels it answers (with fewer labelled points it picks).
    score : callable() -> ndarray of shape (n_samples,)
        The criterion's scores now, lower first (``core.strategies.scores`` of a model holding
        the labels, e.g. a graph model's "vopt").
    """

    def __init__(self, n_labels: int, score):
        if isinstance(n_labels, bool) or int(n_labels) != n_labels or n_labels < 0:
            raise ValueError(f"n_labels must be an integer >= 0; got {n_labels!r}.")
        self.n_labels = int(n_labels)
        self._score = score

    def active(self, n_labeled: int) -> bool:
        """Whether it answers with ``n_labeled`` labels stored."""
        return n_labeled < self.n_labels

    def pick(self, labeled, exclude=None) -> int:
        """The free point (not labelled, not excluded) of lowest score, ties to the lower index."""
        s = np.array(self._score(), dtype=np.float64)
        s[np.asarray(labeled, dtype=np.intp)] = np.inf
        if exclude is not None and len(exclude):
            s[np.asarray(exclude, dtype=np.intp)] = np.inf
        if np.isposinf(s).all():
            raise ValueError("every point is labelled or excluded: nothing left to pick.")
        return int(np.argmin(s))


class Starters:
    """The first of ``starters`` (ColdStart, ClusterCover) that is active answers."""

    def __init__(self, *starters):
        self.starters = [s for s in starters if s is not None]

    def _first(self, n_labeled):
        return next((s for s in self.starters if s.active(n_labeled)), None)

    def answering(self, n_labeled: int):
        """The starter that answers with ``n_labeled`` labels stored (the first active), or None."""
        return self._first(n_labeled)

    def active(self, n_labeled: int) -> bool:
        """Whether any of the starters answers with ``n_labeled`` labels stored."""
        self._last = self._first(n_labeled)
        return self._last is not None

    def pick(self, labeled, exclude=None) -> int:
        """The pick of the first active starter."""
        s = getattr(self, "_last", None) or self._first(len(labeled))
        return s.pick(labeled, exclude)
