"""The k nearest other points of every point: exact, or by an approximate index at scale.

The kNN graph (:func:`core.kernels.graph.knn_graph`) starts from these neighbours. Methods:

=============  ==========================================================================
``"exact"``    scikit-learn's :class:`~sklearn.neighbors.NearestNeighbors` (tree or brute
               force): O(n^2 d) at 32 dimensions, the default up to :data:`EXACT_KNN_MAX`.
``"cells"``    exact float32 distances from each point to every point of its k-means cell and of
               the cells its cell probes (:mod:`core.kernels.knn_cells`, docs/algorithms.md §15),
               in matrix products on all threads, re-ranked in float64; then
               :data:`REFINE_ROUNDS` rounds of the local join. Deterministic on any number of
               threads, nothing to compile but one numba selection kernel (cached on disk).
               The default from :data:`EXACT_KNN_MAX` to :data:`CELLS_MAX` points.
``"hnsw"``     hnswlib's hierarchical navigable small-world graph (Malkov & Yashunin 2018),
               C++ compiled once when pip installs it: nothing to compile at run time.
               ``HNSW_PARAMS["parts"]`` indices, one per contiguous block of points, are built
               at the same time, each by ONE thread (hnswlib's multi-threaded insertion links
               points in an order that changes from run to run; one thread inserts them in
               index order, so each index is a function of the data and the seed); every point
               is queried in each index on all threads (a query reads a finished index only),
               the candidates merged, and :data:`REFINE_ROUNDS` rounds of the local join
               (:mod:`core.kernels.knn_refine`, docs/algorithms.md §15; numba, compiled once
               per installation, the same answer on any number of threads) improve the lists.
               From :data:`HNSW_ORDER_ABOVE` points on all of it runs on the points renumbered
               by k-means cell (:func:`core.kernels.locality.cell_order`: an index built and
               queried in that order reads memory it read a moment before) and the answer is
               mapped back. The default beyond :data:`CELLS_MAX`.
``"nndescent"``  pynndescent's nearest-neighbour descent (numba). Its kernels that take the
               distance as an argument cannot be kept in numba's on-disk cache, so every new
               process compiles them again (tens of seconds); this module turns the cache on for
               the others (:func:`_cache_pynndescent`).
=============  ==========================================================================

The cell and hnsw searches then estimate their own recall@k on :data:`RECALL_SAMPLE` seeded
points against brute force and, while it is not surely above :data:`RECALL_TARGET` (:data:`RECALL_CONFIDENCE` standard errors), widen the lists
(:data:`WIDEN_WIDTHS`; ``report=`` receives the estimate). The approximate methods search a wider list than ``k`` (``ef`` / a larger ``n_neighbors``)
and return the k nearest of it, with distances recomputed in float64 and ties broken by the
smaller index, so results do not depend on float32 rounding inside the libraries. Recall@10
against exact neighbours, time and memory of each method at 10^5 and 10^6 points:
``python benchmarks/knn_scale.py`` (docs/benchmarks.md §15).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numba
import numpy as np

from ._threads import available_threads
from .locality import cell_order, inverse_permutation

__all__ = ["KNN_METHODS", "EXACT_KNN_MAX", "CELLS_MAX", "HNSW_PARAMS", "HNSW_ORDER_ABOVE", "REFINE_ROUNDS", "NNDESCENT_SEARCH",
           "RECALL_SAMPLE", "RECALL_TARGET", "RECALL_CONFIDENCE", "WIDEN_WIDTHS", "SearchReport", "default_knn_method",
           "nearest_neighbours", "sampled_recall", "exact_neighbours_of"]

KNN_METHODS = ("auto", "exact", "cells", "hnsw", "nndescent")
#: Up to this many points the neighbours are exact (scikit-learn); beyond, "cells" up to
#: :data:`CELLS_MAX`, "hnsw" above.
EXACT_KNN_MAX = 50_000
#: The cell search is the default up to this many points: its 24 probed cells of 1,000 points are
#: then at least 16 % of the pool, the share that reached recall@10 0.988 at 10^5 (0.994 after one
#: round, a quarter of hnsw's CPU time). At 10^6 the same 24 cells (2.4 %) gave 0.41 and 48 gave
#: 0.61 for 189 CPU s: on data of intrinsic dimension 32 the share needed hardly falls with n, so
#: the cost grows as n^2 (docs/benchmarks.md §15).
CELLS_MAX = 150_000
#: hnswlib's settings: links per node ``M``, the build's candidate list ``ef_construction``, the
#: query's ``ef`` (at least k + 1) and the number of indices built at once, one per block of
#: points (``parts``). benchmarks/knn_scale.py --part sweep on a 32-dimensional Gaussian mixture
#: (docs/benchmarks.md §15): recall@10 0.992 at 10^5 points with one refinement round; at 10^6
#: the 0.95 target was not reached within the issue's time budget by any setting measured.
HNSW_PARAMS = {"M": 16, "ef_construction": 100, "ef": 60, "parts": 2}
#: A cheaper first index, tried before :data:`HNSW_PARAMS` (None: that one only). After its build
#: the search's candidates of the :data:`RECALL_SAMPLE` seeded points are checked against their
#: exact neighbours; it is kept when their recall@k is at least :data:`FIRST_MIN_SEARCH_RECALL`,
#: else dropped and :data:`HNSW_PARAMS`' index built. At 10^6 points of image-like data (the
#: mnist-like pool of benchmarks/knn_scale.py) it gave recall@10 0.963 after one round for about
#: 310 CPU s against 0.9945 for about 490 with the full index; on the isotropic 32-dimensional
#: mixture 0.70 from the search (0.79 after a round), where only the full index with widening
#: reaches 0.95 (docs/benchmarks.md §15, "A cheaper first index").
HNSW_FIRST = {"M": 12, "ef_construction": 60, "ef": 30}
#: The first index is kept when the sampled recall@k of its search (before any local join) is
#: at least this: the full index's search at 0.891 on the mixture at 10^6 reached 0.953 after its
#: join and widening (docs/benchmarks.md §15, fifth pass).
FIRST_MIN_SEARCH_RECALL = 0.89
#: From this many points on, the hnsw search runs on the points renumbered by k-means cell
#: (:func:`core.kernels.locality.cell_order`; None: never) and maps its answer back: at 10^6
#: image-like points an index built in that order took 0.58 x the CPU time of the given order,
#: its queries 0.59 x (docs/benchmarks.md §15, seventh pass).
HNSW_ORDER_ABOVE: int | None = 50_000
#: Rounds of the local join (core/kernels/knn_refine.py) after the hnsw search: at 10^5 points a
#: second and third round leave recall@10 at the first round's 0.9922 (``benchmarks/knn_scale.py
#: --part sweep --refine 3``, docs/benchmarks.md §15).
REFINE_ROUNDS = 1
#: The approximate searches check their recall@k on this many seeded points (their exact
#: neighbours by brute force: a few seconds at 10^6 points of 32 dimensions) ...
RECALL_SAMPLE = 500
#: ... and, while the estimate's lower confidence bound (the estimate less
#: :data:`RECALL_CONFIDENCE` standard errors over the sampled points) is below this, widen the
#: lists (:data:`WIDEN_WIDTHS`). On 200 points the estimate alone once stopped the widening at
#: 0.959 where the recall on 1,000 other points was 0.943 (docs/benchmarks.md §15, seventh pass).
RECALL_TARGET = 0.95
RECALL_CONFIDENCE = 1.64
#: The list widths of the extra local-join rounds run while the estimated recall@k is below
#: :data:`RECALL_TARGET`, each from the union of the lists so far and the search's own nearest
#: candidates (as many as the search holds: hnsw ``width + 1`` per index, the cells
#: ``k + 1 + KEEP_EXTRA``). On the 10^6-point 32-dimensional mixture one round from the hnsw
#: search's candidates gave recall@10 0.929 at width 10, 0.942 at 15 and 0.953 at 20
#: (docs/benchmarks.md §15).
WIDEN_WIDTHS = (15, 20)
#: pynndescent searches this many neighbours (at least k + 1) for recall@10 >= 0.95 (its default,
#: k + 1, gave 0.68 on the same data).
NNDESCENT_SEARCH = 30
_CHUNK = 50_000  # points per progress report


def default_knn_method(n_samples: int) -> str:
    """``"exact"`` up to :data:`EXACT_KNN_MAX` points, ``"cells"`` up to :data:`CELLS_MAX`, ``"hnsw"`` beyond."""
    n = int(n_samples)
    return "exact" if n <= EXACT_KNN_MAX else "cells" if n <= CELLS_MAX else "hnsw"


@dataclass
class SearchReport:
    """What an approximate search measured of itself (:func:`nearest_neighbours` ``report=``).

    Attributes
    ----------
    method : str
        The method that ran.
    recall : float or None
        Recall@k on :data:`RECALL_SAMPLE` seeded points against their exact neighbours
        (:func:`sampled_recall`); None where no estimate is made ("exact": 1 by construction;
        "nndescent").
    error : float or None
        The standard error of ``recall`` over the sampled points (None where no estimate is made).
    recalls : list of float
        The estimate after the first refinement and after each widening, in order.
    widths : list of int
        The list widths of the widening rounds that ran.
    sample : int
        Points in the estimate.
    first_search_recall : float or None
        "hnsw": the sampled recall@k of the first (cheaper) index's search, :data:`HNSW_FIRST`
        (None when no first index was tried).
    index : dict
        "hnsw": the settings of the index whose candidates were used.
    """

    method: str = ""
    recall: float | None = None
    error: float | None = None
    recalls: list = field(default_factory=list)
    widths: list = field(default_factory=list)
    sample: int = 0
    first_search_recall: float | None = None
    index: dict = field(default_factory=dict)


@numba.njit(parallel=True, cache=True)
def _nearest_of_rows(X, rows, k):
    """Squared distances (by differences, summed in order) from each of ``rows`` to every other
    point, the k smallest kept by (distance, index): one row per thread, the same answer on
    any number of threads."""
    n, d = X.shape
    s = rows.shape[0]
    best_d = np.full((s, k), np.inf)
    best_i = np.full((s, k), -1, dtype=np.int64)
    for r in numba.prange(s):
        i = rows[r]
        for j in range(n):
            if j == i:
                continue
            acc = 0.0
            for t in range(d):
                diff = X[i, t] - X[j, t]
                acc += diff * diff
            if acc < best_d[r, k - 1]:  # j increases: an equal distance keeps the smaller index
                b = k - 1
                while b > 0 and best_d[r, b - 1] > acc:
                    best_d[r, b] = best_d[r, b - 1]
                    best_i[r, b] = best_i[r, b - 1]
                    b -= 1
                best_d[r, b] = acc
                best_i[r, b] = j
    return best_i, best_d


@numba.njit(parallel=True, cache=True)
def _hits_within(X, rows, lists, kth):
    """Per sampled row, how many distinct listed points lie within its exact k-th squared distance
    (``kth``, with a relative margin of 1e-9 for rounding)."""
    s, k = lists.shape
    d = X.shape[1]
    out = np.zeros(s, dtype=np.int64)
    for r in numba.prange(s):
        i = rows[r]
        for a in range(k):
            j = lists[r, a]
            if j < 0 or j == i:
                continue
            repeated = False
            for b in range(a):
                if lists[r, b] == j:
                    repeated = True
            if repeated:  # a point listed twice is found once
                continue
            acc = 0.0
            for t in range(d):
                diff = X[i, t] - X[j, t]
                acc += diff * diff
            if acc <= kth[r] * (1.0 + 1e-9):
                out[r] += 1
    return out


def exact_neighbours_of(X: np.ndarray, rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k exact nearest other points of ``X[rows]`` by brute force.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    rows : ndarray of int, shape (s,)
    k : int
        In [1, n - 1].

    Returns
    -------
    ind : ndarray of int64, shape (s, k)
        Nearest first, ties by the smaller index.
    d2 : ndarray of float64, shape (s, k)
        Their squared Euclidean distances, each a sum of squared differences in feature order
        (the same bits on any number of threads).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    return _nearest_of_rows(X, np.asarray(rows, dtype=np.int64), int(k))


def sampled_recall(X: np.ndarray, ind: np.ndarray, k: int, seed: int, sample: int | None = None) -> tuple[float, int]:
    """Recall@k of the lists ``ind[:, :k]`` on seeded points against their exact neighbours.

    A listed point counts as found when it lies within the point's exact k-th nearest
    distance (relative margin 1e-9): duplicates and equal distances, where an exact search's
    choice among them is arbitrary, count whichever of them a list holds.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    ind : ndarray of int, shape (n, >= k)
        The lists (-1 for an empty slot).
    k : int
    seed : int
        Seeds the choice of points.
    sample : int, optional
        Points to check (default :data:`RECALL_SAMPLE`, read at the call; at most n).

    Returns
    -------
    recall : float
        The mean share of each sampled point's k listed points found, in [0, 1].
    used : int
        Points checked.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    rows, kth = _recall_sample(X, k, seed, sample)
    return _lists_recall(X, rows, kth, ind, k), int(rows.size)


def _sample_rows(n: int, seed: int, sample: int | None = None) -> np.ndarray:
    """The seeded, sorted points of :func:`sampled_recall` among ``n`` (:data:`RECALL_SAMPLE` by default)."""
    sample = RECALL_SAMPLE if sample is None else sample
    return np.sort(np.random.default_rng([int(seed), 23]).choice(n, size=min(int(sample), n), replace=False))


def _recall_sample(X: np.ndarray, k: int, seed: int, sample: int | None = None,
                   rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The seeded sample rows of :func:`sampled_recall` (or the given ``rows``) and their exact
    k-th nearest squared distances, shape (s,) each."""
    rows = _sample_rows(X.shape[0], seed, sample) if rows is None else np.asarray(rows, dtype=np.int64)
    _, d2 = exact_neighbours_of(X, rows, k)
    return rows, d2[:, k - 1].copy()


def _lists_recall(X: np.ndarray, rows: np.ndarray, kth: np.ndarray, ind: np.ndarray, k: int) -> float:
    """Recall@k of the lists ``ind[rows, :k]`` against the sample's exact k-th distances."""
    return _recall_and_error(X, rows, kth, ind, k)[0]


def _recall_and_error(X: np.ndarray, rows: np.ndarray, kth: np.ndarray, ind: np.ndarray,
                      k: int) -> tuple[float, float]:
    """:func:`_lists_recall` and its standard error over the sampled points (the standard
    deviation of their shares found, over the square root of their number; 0 for one point)."""
    hits = _hits_within(X, rows, np.ascontiguousarray(np.asarray(ind)[rows, :k], dtype=np.int64), kth)
    share = hits / float(k)
    error = float(share.std(ddof=1) / np.sqrt(share.size)) if share.size > 1 else 0.0
    return float(hits.sum()) / (rows.size * k), error


def candidates_recall(X: np.ndarray, rows: np.ndarray, kth: np.ndarray, lists: np.ndarray, k: int) -> float:
    """Recall@k of the k nearest distinct candidates of each sampled row (exact distances), as
    :func:`sampled_recall` counts it.

    Parameters
    ----------
    X : ndarray of float64, shape (n, d)
    rows : ndarray of int, shape (s,)
    kth : ndarray of float64, shape (s,)
        Each row's exact k-th nearest squared distance (:func:`exact_neighbours_of`).
    lists : ndarray of int, shape (s, c)
        Candidates of each row (any order; repeats, the row itself and -1 allowed).
    k : int

    Returns
    -------
    float
    """
    lists = np.asarray(lists, dtype=np.int64)
    d = np.full(lists.shape, np.inf)
    for r, i in enumerate(rows):
        ok = (lists[r] >= 0) & (lists[r] != i)
        diff = X[lists[r][ok]] - X[i]
        d[r, ok] = np.einsum("ij,ij->i", diff, diff)
    nearest = np.empty((rows.size, k), dtype=np.int64)
    for r in range(rows.size):  # the k nearest distinct candidates
        order = np.lexsort((lists[r], d[r]))
        seen: list = []
        for j in order:
            if not np.isfinite(d[r, j]):
                break
            if lists[r, j] not in seen:
                seen.append(int(lists[r, j]))
                if len(seen) == k:
                    break
        nearest[r] = seen + [-1] * (k - len(seen))
    return float(_hits_within(X, rows, nearest, kth).sum()) / (rows.size * k)


def nearest_neighbours(X: np.ndarray, k: int, *, method: str = "auto", seed: int = 0,
                       progress: Callable[[float], None] | None = None,
                       report: SearchReport | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Indices and distances of the ``k`` nearest other points of each point.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Finite features (checked by the caller).
    k : int
        In [1, n - 1].
    method : {"auto", "exact", "cells", "hnsw", "nndescent"}
        "auto": :func:`default_knn_method`.
    seed : int
        Seeds the approximate methods (the same seed, data and method give the same answer).
    progress : callable(fraction), optional
        Hears the fraction done (approximate methods; every 50,000 points).
    report : SearchReport, optional
        Filled with the method and, for "cells" and "hnsw", the sampled recall@k and the
        widening rounds: after the first refinement these searches estimate their recall@k on
        :data:`RECALL_SAMPLE` seeded points and, while the estimate less :data:`RECALL_CONFIDENCE` standard errors is below :data:`RECALL_TARGET`, run one
        local-join round on lists widened to each of :data:`WIDEN_WIDTHS` in turn
        (docs/algorithms.md §15).

    Returns
    -------
    ind : ndarray of int64, shape (n, k)
        Nearest first; never the point itself (a duplicate of it may appear).
    dist : ndarray of float64, shape (n, k)
        Euclidean distances, increasing along each row.

    Raises
    ------
    ValueError
        An unknown method.
    ImportError
        The approximate method's library is missing (names the pip package).
    """
    if method not in KNN_METHODS:
        raise ValueError(f"method must be one of {', '.join(KNN_METHODS)}; got {method!r}.")
    n = X.shape[0]
    if method == "auto":
        method = default_knn_method(n)
    say = progress or (lambda fraction: None)
    if method == "exact":
        from sklearn.neighbors import NearestNeighbors

        dist, ind = NearestNeighbors(n_neighbors=k + 1).fit(X).kneighbors(X)
        if report is not None:
            report.method = "exact"
        return _without_self(ind, dist, k, X=None)
    if method == "hnsw" and HNSW_ORDER_ABOVE is not None and n >= HNSW_ORDER_ABOVE:
        # renumbered by k-means cell (each index's block the same points): an index built and
        # queried in that order reads mostly what it read a moment before; answers mapped back
        order = cell_order(X, seed, blocks=HNSW_PARAMS["parts"])
        inverse = inverse_permutation(order)
        rows = _sample_rows(n, seed)  # the recall check's points, drawn in the given numbering
        ind, dist = _approximate(np.ascontiguousarray(X[order], dtype=np.float64), k, method, seed, say, report,
                                 rows=np.sort(inverse[rows]))
        ind = np.where(ind >= 0, order[np.maximum(ind, 0)], -1)[inverse]  # an empty slot stays empty
        dist = dist[inverse]
        by = _row_order(dist, ind)  # ties by the smaller index of the given numbering
        return (np.ascontiguousarray(np.take_along_axis(ind, by, 1)),
                np.ascontiguousarray(np.take_along_axis(dist, by, 1)))
    if method in ("hnsw", "cells"):
        return _approximate(X, k, method, seed, say, report)
    cand = _nndescent_candidates(X, k, seed)
    if report is not None:
        report.method = "nndescent"  # not checked: no estimate
    say(1.0)
    return _without_self(cand, None, k, X=X)


def _approximate(X: np.ndarray, k: int, method: str, seed: int, say, report,
                 rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`nearest_neighbours` by "hnsw" or "cells" in the numbering of ``X``: the search, one
    exact re-ranking, :data:`REFINE_ROUNDS` rounds of the local join, the recall check (on
    ``rows``, default :func:`_sample_rows`) and its widening rounds."""
    n = X.shape[0]
    from .knn_refine import refine_neighbours

    wide = max((w for w in WIDEN_WIDTHS if w < n), default=k)
    X = np.ascontiguousarray(X, dtype=np.float64)
    sample = _recall_sample(X, k, seed, rows=rows)  # the recall checks' points and exact k-th distances
    if method == "hnsw":
        cand = _hnsw_candidates(X, k, max(k, wide), seed, say, sample, report)  # indices freed on return
    else:
        from .knn_cells import cell_candidates

        cand = cell_candidates(X, k, seed, lambda f: say(0.8 * f))
    cand, _ = refine_neighbours(X, cand, rounds=0)  # exact distances, sorted; self and repeats dropped
    cand = np.ascontiguousarray(cand[:, :max(k, wide)])  # the search's nearest: what a widening reads
    ind, dist = refine_neighbours(X, cand[:, :k], rounds=REFINE_ROUNDS,
                                  progress=lambda f: say(0.8 + 0.1 * f))
    holder = [cand]
    del cand
    ind, dist, found = _widened_until_recall(X, ind, dist, holder, k, sample, lambda f: say(0.9 + 0.1 * f))
    if report is not None:
        report.method, report.recall, report.sample = method, found["recalls"][-1], found["sample"]
        report.recalls, report.widths = list(found["recalls"]), list(found["widths"])
        report.error = found["errors"][-1]
    say(1.0)
    return ind, dist


def _widened_until_recall(X: np.ndarray, ind: np.ndarray, dist: np.ndarray, holder: list, k: int,
                          sample: tuple, say):
    """The lists after widening rounds run while the sampled recall@k is below the target:
    (ind, dist) of shape (n, k) and {"recalls", "widths", "sample"}.

    ``holder[0]``: the search's own candidates of each point, sorted by exact distance, wider
    than k (freed here as soon as no widening needs them). A round at width w starts every list
    from the union of its current entries and the search's w nearest candidates, keeps the w
    nearest and runs one local join on the w-wide lists
    (:func:`core.kernels.knn_refine.refine_neighbours`, reverse lists of w): the search's
    candidates beyond the k-th are what a wider join builds on (widening with empty slots
    instead added 0.003 at 10^6 points, docs/benchmarks.md §15), so widths beyond the search's
    table are not run. The next widening starts from the wide lists. Never worse than the start:
    a round keeps every list's own entries as candidates."""
    from .knn_refine import refine_neighbours

    rows, kth = sample  # (rows, exact k-th squared distances) of _recall_sample
    recall, error = _recall_and_error(X, rows, kth, ind, k)
    found = {"recalls": [recall], "errors": [error], "widths": [], "sample": int(rows.size)}

    def good_enough() -> bool:
        return found["recalls"][-1] - RECALL_CONFIDENCE * found["errors"][-1] >= RECALL_TARGET

    cand = holder.pop()
    widths = [w for w in WIDEN_WIDTHS if k < w < X.shape[0] and w <= cand.shape[1]]
    if good_enough() or not widths:
        return ind, dist, found
    wide, wide_dist = ind, dist
    for t, width in enumerate(widths):
        if good_enough():
            break
        start, _ = refine_neighbours(X, np.hstack([wide, cand[:, :width]]), rounds=0)  # union, sorted
        wide, wide_dist = refine_neighbours(X, start[:, :width], rounds=1, reverse_cap=width)
        del start
        recall, error = _recall_and_error(X, rows, kth, wide, k)
        found["recalls"].append(recall)
        found["errors"].append(error)
        found["widths"].append(width)
        say((t + 1) / len(widths))
    return np.ascontiguousarray(wide[:, :k]), np.ascontiguousarray(wide_dist[:, :k]), found


def _without_self(ind: np.ndarray, dist, k: int, X) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest of each row's candidates other than the row's own point.

    With ``X`` the distances are recomputed in float64 and each row sorted by (distance,
    index), so the answer does not depend on the library's float32 rounding or its order of
    equal distances. Candidates of -1 (none found) sort last.
    """
    n = ind.shape[0]
    ind = np.asarray(ind, dtype=np.int64)
    own = np.arange(n)[:, None]
    if X is not None:
        dist = np.empty(ind.shape)
        for a in range(0, n, _CHUNK):  # n x c x d temporaries in blocks
            rows = slice(a, a + _CHUNK)
            safe = np.where(ind[rows] >= 0, ind[rows], own[rows])
            diff = X[safe] - X[rows][:, None, :]
            dist[rows] = np.sqrt(np.einsum("ijk,ijk->ij", diff, diff))
        dist[(ind < 0) | (ind == own)] = np.inf
        order = _row_order(dist, ind)
        ind, dist = np.take_along_axis(ind, order, 1), np.take_along_axis(dist, order, 1)
    keep = ind != own
    rows = np.argsort(~keep, axis=1, kind="stable")[:, :k]
    return (np.ascontiguousarray(np.take_along_axis(ind, rows, 1)),
            np.ascontiguousarray(np.take_along_axis(np.asarray(dist, dtype=np.float64), rows, 1)))


def _row_order(dist: np.ndarray, ind: np.ndarray) -> np.ndarray:
    """Per row, the order by distance then index (a stable sort by index, then by distance)."""
    by_index = np.argsort(ind, axis=1, kind="stable")
    d = np.take_along_axis(dist, by_index, 1)
    return np.take_along_axis(by_index, np.argsort(d, axis=1, kind="stable"), 1)


def _hnsw_candidates(X: np.ndarray, k: int, width: int, seed: int, say, sample: tuple,
                     report: SearchReport | None = None) -> np.ndarray:
    """(n, parts * (width + 1)) candidate neighbours of every point from :data:`HNSW_PARAMS`
    ``["parts"]`` hnswlib indices, one per contiguous block of points (:func:`hnsw_build` for
    ``k`` neighbours, :func:`hnsw_query` for ``width`` >= k: the search's list of ``ef`` holds
    them at no extra cost).

    The indices are first built with :data:`HNSW_FIRST`; the sample of :func:`sampled_recall`
    is queried in them, and when the recall@k of those candidates is below
    :data:`FIRST_MIN_SEARCH_RECALL` they are dropped and built again with :data:`HNSW_PARAMS`
    (docs/algorithms.md §15). ``sample``: (rows, their exact k-th squared distances), of
    :func:`_recall_sample`."""
    Xf = np.ascontiguousarray(X, dtype=np.float32)
    params = dict(HNSW_PARAMS)
    if HNSW_FIRST is not None:
        first = dict(HNSW_PARAMS, **HNSW_FIRST)
        indices, blocks = hnsw_build(Xf, k, seed, lambda f: say(0.25 * f), params=first)
        rows, kth = sample
        probe = hnsw_query(indices, blocks, Xf[rows], width, first["ef"])
        found = candidates_recall(X, rows, kth, probe, k)
        if report is not None:
            report.first_search_recall = found
        if found >= FIRST_MIN_SEARCH_RECALL:
            params = first
        else:
            del indices, blocks
            indices, blocks = hnsw_build(Xf, k, seed, lambda f: say(0.25 + 0.25 * f))
    else:
        indices, blocks = hnsw_build(Xf, k, seed, lambda f: say(0.5 * f))
    if report is not None:
        report.index = {name: params[name] for name in ("M", "ef_construction", "ef", "parts")}
    return hnsw_query(indices, blocks, Xf, width, params["ef"], lambda f: say(0.5 + 0.3 * f))


def hnsw_build(Xf: np.ndarray, k: int, seed: int, say=None, params: dict | None = None) -> tuple[list, list]:
    """hnswlib indices over contiguous blocks of the points, built at the same time.

    Each index is built by one thread inserting its points in index order (a deterministic
    graph; every index seeded by ``seed``); the indices are built on separate threads (hnswlib
    releases the GIL). Progress is reported from the calling thread.

    Parameters
    ----------
    Xf : ndarray of float32, shape (n, d)
    k : int
        Neighbours wanted (a block holds at least 2 (k + 1) points).
    seed : int
    say : callable(fraction), optional
    params : dict, optional
        ``M``, ``ef_construction`` and ``parts`` (default :data:`HNSW_PARAMS`, read at the call).

    Returns
    -------
    indices : list of hnswlib.Index
    blocks : list of ndarray of int
        The points of each index.
    """
    try:
        import hnswlib
    except ImportError:  # pragma: no cover - depends on the installation
        raise ImportError(f"the kNN graph of {Xf.shape[0]:,} points uses the approximate nearest-neighbour "
                          "library hnswlib (pip install hnswlib); method='exact' needs only scikit-learn.") from None
    import threading
    from concurrent.futures import ThreadPoolExecutor, wait

    say = say or (lambda fraction: None)
    n, d = Xf.shape
    p = HNSW_PARAMS if params is None else params
    parts = max(1, min(int(p["parts"]), n // (2 * (k + 1))))
    blocks = np.array_split(np.arange(n), parts)
    added = [0] * parts
    lock = threading.Lock()

    def build(j: int):
        rows = blocks[j]
        index = hnswlib.Index(space="l2", dim=d)
        index.init_index(max_elements=rows.size, ef_construction=p["ef_construction"], M=p["M"],
                         random_seed=int(seed))
        index.set_num_threads(1)  # insertion in index order: a deterministic graph
        for a in range(0, rows.size, _CHUNK // 5):
            chunk = rows[a:a + _CHUNK // 5]
            index.add_items(Xf[chunk], chunk, num_threads=1)
            with lock:
                added[j] += chunk.size
        return index

    with ThreadPoolExecutor(max_workers=min(parts, _threads())) as pool:
        futures = [pool.submit(build, j) for j in range(parts)]
        while wait(futures, timeout=0.5).not_done:
            say(sum(added) / n)
        indices = [f.result() for f in futures]
    say(1.0)
    return indices, blocks


def hnsw_query(indices: list, blocks: list, Xf: np.ndarray, k: int, ef: int, say=None) -> np.ndarray:
    """The ``k + 1`` nearest points of every point in each index (:func:`hnsw_build`), side by side,
    shape (n, sum of min(k + 1, block size)); queries on all threads (deterministic: a query
    reads a finished index only)."""
    say = say or (lambda fraction: None)
    n = Xf.shape[0]
    threads = _threads()
    out = []
    done = 0
    for index, rows in zip(indices, blocks):
        width = min(rows.size, k + 1)  # the point itself is (almost always) its own nearest
        index.set_ef(max(int(ef), width))
        labels = np.empty((n, width), dtype=np.int64)
        for a in range(0, n, _CHUNK):
            labels[a:a + _CHUNK], _ = index.knn_query(Xf[a:a + _CHUNK], k=width, num_threads=threads)
            done += min(_CHUNK, n - a)
            say(done / (n * len(indices)))
        out.append(labels)
    return np.hstack(out)


def _threads() -> int:
    return available_threads()


_CACHED = False


def _cache_pynndescent() -> None:
    """Turn numba's on-disk cache on for pynndescent's kernels that can use it.

    pynndescent marks only some of its kernels ``cache=True``; the rest compile in every new
    process (about 2 minutes at 10^5 points on this project's 2-core machine). A numba
    dispatcher caches once ``enable_caching()`` is called before its first compilation; the
    cache lives beside the package (or in ``NUMBA_CACHE_DIR``). Kernels that take the distance
    function as an argument still compile per process (numba cannot reuse them from disk).
    """
    global _CACHED
    if _CACHED:
        return
    import importlib
    import warnings

    from numba.core.caching import NullCache
    from numba.core.dispatcher import Dispatcher

    for name in ("distances", "utils", "rp_trees", "pynndescent_", "graph_utils", "search", "search_graph",
                 "hybrid_forest", "hub_tree", "kernels"):
        try:
            module = importlib.import_module(f"pynndescent.{name}")
        except Exception:  # a module of another pynndescent version: nothing to cache there
            continue
        for obj in vars(module).values():
            if (isinstance(obj, Dispatcher) and isinstance(getattr(obj, "_cache", None), NullCache)
                    and str(getattr(obj.py_func, "__module__", "")).startswith("pynndescent")):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    obj.enable_caching()
    _CACHED = True


def _nndescent_candidates(X: np.ndarray, k: int, seed: int) -> np.ndarray:
    """(n, max(k + 1, NNDESCENT_SEARCH)) candidate neighbours from pynndescent."""
    try:
        import pynndescent  # noqa: F401
    except ImportError:  # pragma: no cover - depends on the installation
        raise ImportError(f"method 'nndescent' uses pynndescent (pip install pynndescent); the default "
                          "'hnsw' uses hnswlib.") from None
    import warnings

    _cache_pynndescent()
    from pynndescent import NNDescent

    width = min(X.shape[0], max(k + 1, NNDESCENT_SEARCH))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's "cannot cache" notes for the two per-process kernels
        ind, _ = NNDescent(np.ascontiguousarray(X, dtype=np.float32), n_neighbors=width, random_state=int(seed),
                           low_memory=True).neighbor_graph
    return ind
