"""The k nearest other points of every point by exact distances inside cells of a partition.

Where the data have a high intrinsic dimension (isotropic clusters in 32 dimensions, the
benchmarks' mixtures) graph searches need long candidate lists and many distance evaluations at
random places in memory to reach a recall of 0.95 at 10^6 points. This search instead spends its
work in dense matrix products, which run near the processor's peak (docs/algorithms.md §15):

1. k-means (:data:`CELL_PARAMS` ``"iterations"`` Lloyd steps on a seeded sample of
   ``"train"`` points per cell) places ``C = n / "cell_size"`` centroids;
2. every point is assigned to its nearest centroid (its cell) and names its ``"point_probes"``
   nearest centroids;
3. each cell is compared with the ``"probes"`` cells named most often by its points (its own
   first; the cells of the nearest centroids fill the list when fewer were named);
4. for each cell, the squared distances of its points to every point of its probed cells come
   from one float32 matrix product (``|y|^2 - 2 x.y``), and the ``k + 1 + KEEP_EXTRA`` smallest
   per point are kept; the caller recomputes their distances in float64 and keeps the k nearest
   by (distance, index), so float32 rounding only decides which candidates are looked at.

A point's neighbours are missed only when they lie in a cell its own cell does not probe. With
every cell probed the answer is the exact one (the tests check that against brute force). Each
cell is done on its own (one thread per cell, ``available_threads()`` cells at once), so the answer does
not depend on the number of threads; the k-means sample and its first centroids are drawn from
``seed``.
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np

from ._threads import available_threads

__all__ = ["CELL_PARAMS", "KEEP_EXTRA", "cell_candidates", "smallest_per_row", "kmeans_centroids", "nearest_centroids"]

#: Settings of the cell search: points per cell on average (``cell_size``), cells each cell is
#: compared with, its own included (``probes``), nearest centroids each point names
#: (``point_probes``), k-means sample points per cell (``train``) and Lloyd steps
#: (``iterations``). Chosen by ``python benchmarks/knn_scale.py --part cells`` (docs/benchmarks.md §15).
CELL_PARAMS = {"cell_size": 1000, "probes": 24, "point_probes": 6, "train": 40, "iterations": 8}
#: Candidates kept per point beyond k + 1 (the float32 screening's rounding is undone by the
#: caller's float64 re-ranking of these).
KEEP_EXTRA = 5
_ROWS = 512  # query rows per matrix product (a 512 x m float32 block) ...
_BLOCK = 2**25  # ... fewer when m is large: at most this many entries (128 MB)


@numba.njit(cache=True, nogil=True)
def _insert(vals, idx, v, c):
    """Put value ``v`` of column ``c`` into the sorted ``vals`` (its last entry falls out); equal
    values keep their order (earlier columns first)."""
    b = vals.shape[0] - 1
    while b > 0 and vals[b - 1] > v:
        vals[b] = vals[b - 1]
        idx[b] = idx[b - 1]
        b -= 1
    vals[b] = v
    idx[b] = c


@numba.njit(cache=True, nogil=True)
def _smallest_rows(G, shift, scale, m, out_idx, out_val):
    """Per row ``r``, the columns of the ``m`` smallest values of ``shift[c] + scale G[r, c]``,
    increasing (ties: smaller column), without forming them: with ``scale = -2`` and the
    columns' squared norms as ``shift``, squared distances less the row's own squared norm
    from the products ``G``; with ``scale = 1`` and ``shift = 0``, the values of ``G`` itself."""
    rows, cols = G.shape
    for r in range(rows):
        vals = out_val[r]
        idx = out_idx[r]
        vals[:] = np.inf
        idx[:] = -1
        worst = vals[m - 1]
        for c in range(cols):
            v = shift[c] + scale * G[r, c]
            if v < worst:
                _insert(vals, idx, v, c)
                worst = vals[m - 1]


def smallest_per_row(D: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """The columns of the ``m`` smallest entries of each row, smallest first (ties by column).

    Parameters
    ----------
    D : ndarray of shape (r, c)
        Finite values (float32 or float64).
    m : int
        In [1, c].

    Returns
    -------
    idx : ndarray of int64, shape (r, m)
    val : ndarray of D's dtype, shape (r, m)
    """
    D = np.ascontiguousarray(D)
    idx = np.empty((D.shape[0], m), dtype=np.int64)
    val = np.empty((D.shape[0], m), dtype=D.dtype)
    _smallest_rows(D, np.zeros(D.shape[1], dtype=D.dtype), 1.0, int(m), idx, val)
    return idx, val


def nearest_centroids(Xf: np.ndarray, centroids: np.ndarray, m: int, pool) -> np.ndarray:
    """Each point's ``m`` nearest centroids, nearest first (float32 products, blocks of 20,000 points).

    Parameters
    ----------
    Xf : ndarray of float32, shape (n, d)
    centroids : ndarray of float32, shape (c, d)
    m : int
        In [1, c].
    pool : concurrent.futures.Executor
        Runs the blocks (each block's answer is its own: the same on any number of threads).

    Returns
    -------
    ndarray of int64, shape (n, m)
    """
    cn = np.einsum("ij,ij->i", centroids, centroids)
    n = Xf.shape[0]
    out = np.empty((n, m), dtype=np.int64)
    step = 20_000

    def block(a):
        D = cn[None, :] - 2.0 * (Xf[a:a + step] @ centroids.T)
        out[a:a + step] = smallest_per_row(D, m)[0]

    list(pool.map(block, range(0, n, step)))
    return out


def kmeans_centroids(Xf: np.ndarray, cells: int, train: int, iterations: int, seed: int, pool) -> np.ndarray:
    """k-means centroids: ``iterations`` Lloyd steps on a seeded sample of ``cells * train`` points,
    started from ``cells`` of them; an empty cell keeps its centroid.

    Parameters
    ----------
    Xf : ndarray of float32, shape (n, d)
    cells, train, iterations : int
    seed : int
        Seeds the sample and the first centroids.
    pool : concurrent.futures.Executor
        Runs :func:`nearest_centroids`.

    Returns
    -------
    ndarray of float32, shape (cells, d)
    """
    n = Xf.shape[0]
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(n, size=min(n, cells * train), replace=False))
    S = Xf[sample]
    centroids = S[np.sort(rng.choice(S.shape[0], size=cells, replace=False))].copy()
    for _ in range(int(iterations)):
        label = nearest_centroids(S, centroids, 1, pool)[:, 0]
        order = np.argsort(label, kind="stable")
        count = np.bincount(label, minlength=cells)
        sums = np.add.reduceat(S[order].astype(np.float64), np.r_[0, np.cumsum(count)[:-1]], axis=0)
        filled = count > 0
        centroids[filled] = (sums[filled] / count[filled, None]).astype(np.float32)
    return centroids


def _probe_lists(first: np.ndarray, named: np.ndarray, centroids: np.ndarray, probes: int) -> np.ndarray:
    """(cells, probes) cells each cell is compared with: its own, then the cells its points name
    most often, then by the distance of their centroid to its own (ties: the smaller cell).
    Worked out for 256 cells at a time (256 x cells temporaries)."""
    cells = centroids.shape[0]
    own = np.repeat(first, named.shape[1])
    by_own = np.argsort(own, kind="stable")
    own, other = own[by_own], named.ravel()[by_own]
    bounds = np.searchsorted(own, np.arange(0, cells + 256, 256))
    C64 = centroids.astype(np.float64)
    cn = np.einsum("ij,ij->i", C64, C64)
    out = np.empty((cells, probes), dtype=np.int64)
    for j, a in enumerate(range(0, cells, 256)):
        b = min(a + 256, cells)
        lo, hi = bounds[j], bounds[j + 1]
        votes = np.bincount((own[lo:hi] - a) * cells + other[lo:hi], minlength=(b - a) * cells)
        votes = votes.reshape(b - a, cells).astype(np.float64)
        votes[np.arange(b - a), np.arange(a, b)] = np.inf  # its own cell first
        near = cn[None, :] - 2.0 * (C64[a:b] @ C64.T)
        rank = np.argsort(np.argsort(near, axis=1, kind="stable"), axis=1, kind="stable")
        score = votes - rank / (cells + 1.0)  # fewer votes never beat more; among equal votes, nearer first
        out[a:b] = np.argsort(-score, axis=1, kind="stable")[:, :probes]
    return out


def cell_candidates(X: np.ndarray, k: int, seed: int = 0, progress: Callable[[float], None] | None = None,
                    params: dict | None = None) -> np.ndarray:
    """Candidate neighbours of every point from exact float32 distances inside probed cells.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Finite features.
    k : int
        Neighbours wanted (in [1, n - 1]).
    seed : int
        Seeds the k-means sample and its first centroids.
    progress : callable(fraction), optional
        Hears the fraction of cells done.
    params : dict, optional
        Overrides of :data:`CELL_PARAMS`.

    Returns
    -------
    ndarray of int64, shape (n, min(n, k + 1 + KEEP_EXTRA))
        Per point, its candidates by increasing float32 distance; the point itself is usually
        among them (the caller drops it and re-ranks in float64).
    """
    from concurrent.futures import ThreadPoolExecutor

    p = {**CELL_PARAMS, **(params or {})}
    say = progress or (lambda fraction: None)
    Xf = np.ascontiguousarray(X, dtype=np.float32)
    n = Xf.shape[0]
    keep = min(n, int(k) + 1 + KEEP_EXTRA)
    cells = int(max(1, min(round(n / max(1, int(p["cell_size"]))), n // max(1, keep))))
    probes = int(max(1, min(int(p["probes"]), cells)))
    with ThreadPoolExecutor(max_workers=available_threads()) as pool:
        if cells == 1:
            centroids = Xf[:1].copy()
            first = np.zeros(n, dtype=np.int64)
            named = first[:, None]
        else:
            centroids = kmeans_centroids(Xf, cells, int(p["train"]), int(p["iterations"]), int(seed), pool)
            named = nearest_centroids(Xf, centroids, min(cells, int(p["point_probes"])), pool)
            first = named[:, 0].copy()
        say(0.1)
        probe = _probe_lists(first, named, centroids, probes)
        del named
        order = np.argsort(first, kind="stable")  # the points cell by cell, in index order
        start = np.r_[0, np.cumsum(np.bincount(first, minlength=cells))]
        Xs = Xf[order]
        norms = np.einsum("ij,ij->i", Xs, Xs)
        out = np.empty((n, keep), dtype=np.int64)
        done = [0]

        def one_cell(c):
            rows = slice(start[c], start[c + 1])
            if start[c + 1] == start[c]:
                return
            cand = np.concatenate([np.arange(start[b], start[b + 1]) for b in probe[c]])
            if cand.size < keep:  # too few points probed: every point
                cand = np.arange(n)
            Y = Xs[cand]
            ny = norms[cand]
            m = min(keep, cand.size)
            step = int(max(16, min(_ROWS, _BLOCK // cand.size)))
            for a in range(start[c], start[c + 1], step):
                b = min(a + step, start[c + 1])
                idx = np.empty((b - a, m), dtype=np.int64)
                _smallest_rows(Xs[a:b] @ Y.T, ny, -2.0, m, idx, np.empty((b - a, m), dtype=np.float32))
                got = order[cand[idx]]
                if m < keep:
                    got = np.hstack([got, np.full((b - a, keep - m), -1, dtype=np.int64)])
                out[order[a:b]] = got
            done[0] += 1
            del rows

        for j, _ in enumerate(pool.map(one_cell, range(cells))):
            if j % 20 == 0:
                say(0.1 + 0.9 * done[0] / cells)
    say(1.0)
    return out
