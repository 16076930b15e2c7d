"""Refine approximate k nearest neighbours by exact distances to neighbours of neighbours.

One round of nearest-neighbour descent's local join (Dong, Moses & Li 2011), applied to a
finished start (hnswlib's graph, :mod:`core.kernels.knn_search`): every point ``i`` takes as
candidates its current neighbours ``N(i)``, its reverse neighbours ``R(i)`` (the points that
list ``i``; the :data:`REVERSE_CAP` nearest of them), and the neighbours and reverse neighbours
of all of those; computes the exact distance to each, and keeps the k nearest by (distance,
index). docs/algorithms.md §15.

Properties the tests check (``tests/test_knn_refine.py``):

* never worse than its start: each point's current neighbours are among its candidates, so
  the j-th distance of every row can only decrease, round after round;
* deterministic whatever the number of threads: a round reads the previous round's lists only
  and writes each point's row on its own (a Jacobi sweep), so the points can be done in any
  order, in parallel;
* exact where the start is: an exact start is a fixed point.

The kernels are compiled by numba once per installation (``cache=True``: the compiled code is
kept beside this file, or in ``NUMBA_CACHE_DIR``, and loaded by the next process).
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np

__all__ = ["refine_neighbours", "REVERSE_CAP"]

#: Reverse neighbours used per point (the nearest ones): bounds a round's work on hubs.
REVERSE_CAP = 10


@numba.njit(cache=True, nogil=True)
def _move_forward(ind_row, d2_row, a):
    """Move entry ``a`` of a row forward to its place among the sorted ``[0, a)``, by (distance,
    index); the entries it passes shift back by one."""
    di, ii = d2_row[a], ind_row[a]
    b = a
    while b > 0 and (d2_row[b - 1] > di or (d2_row[b - 1] == di and ind_row[b - 1] > ii)):
        d2_row[b] = d2_row[b - 1]
        ind_row[b] = ind_row[b - 1]
        b -= 1
    d2_row[b] = di
    ind_row[b] = ii


@numba.njit(cache=True, nogil=True)
def _consider(X, i, c, best_d, best_i):
    """Put candidate ``c`` into point ``i``'s sorted lists if it is nearer (distance, index)."""
    k = best_i.shape[0]
    if c == i or c < 0:
        return
    s = 0.0
    for t in range(X.shape[1]):
        diff = X[i, t] - X[c, t]
        s += diff * diff
    worst_d, worst_i = best_d[k - 1], best_i[k - 1]
    if s > worst_d or (s == worst_d and c >= worst_i):
        return
    for j in range(k):
        if best_i[j] == c:
            return
    best_d[k - 1] = s
    best_i[k - 1] = c
    _move_forward(best_i, best_d, k - 1)


@numba.njit(cache=True, nogil=True)
def _consider_each(X, i, candidates, start, stop, best_d, best_i):
    """:func:`_consider` each of ``candidates[start:stop]`` for point ``i``, in order."""
    for p in range(start, stop):
        _consider(X, i, candidates[p], best_d, best_i)


@numba.njit(parallel=True, cache=True)
def _refine_round(X, ind, d2, rev_ptr, rev_idx, out_ind, out_d2):
    """One Jacobi round of the local join; ``d2`` are squared distances (rows sorted)."""
    n, k = ind.shape
    ind_flat = ind.reshape(n * k)  # row b's neighbours are ind_flat[b * k:(b + 1) * k]
    for i in numba.prange(n):
        best_i = out_ind[i]
        best_d = out_d2[i]
        for j in range(k):
            best_i[j] = ind[i, j]
            best_d[j] = d2[i, j]
        n_rev = rev_ptr[i + 1] - rev_ptr[i]
        for a in range(k + n_rev):  # b in N(i), then R(i)
            b = ind[i, a] if a < k else rev_idx[rev_ptr[i] + a - k]
            if b < 0:
                continue
            _consider(X, i, b, best_d, best_i)
            _consider_each(X, i, ind_flat, b * k, (b + 1) * k, best_d, best_i)  # N(b)
            _consider_each(X, i, rev_idx, rev_ptr[b], rev_ptr[b + 1], best_d, best_i)  # R(b)


@numba.njit(cache=True)
def _reverse_lists(ind, d2, cap):
    """CSR of each point's reverse neighbours, the ``cap`` nearest (ties: smaller index)."""
    n, k = ind.shape
    count = np.zeros(n + 1, dtype=np.int64)
    for i in range(n):
        for j in range(k):
            c = ind[i, j]
            if c >= 0:
                count[c + 1] += 1
    ptr = np.cumsum(count)
    fill = ptr[:-1].copy()
    src = np.empty(ptr[n], dtype=np.int64)
    dd = np.empty(ptr[n], dtype=np.float64)
    for i in range(n):  # i increasing: each list is in index order
        for j in range(k):
            c = ind[i, j]
            if c >= 0:
                src[fill[c]] = i
                dd[fill[c]] = d2[i, j]
                fill[c] += 1
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    for c in range(n):
        out_ptr[c + 1] = out_ptr[c] + min(cap, ptr[c + 1] - ptr[c])
    out = np.empty(out_ptr[n], dtype=np.int64)
    for c in range(n):
        a, b = ptr[c], ptr[c + 1]
        m = b - a
        if m > cap:  # stable order by distance: index order breaks ties
            order = np.argsort(dd[a:b], kind="mergesort")[:cap]
            for t in range(cap):
                out[out_ptr[c] + t] = src[a + order[t]]
        else:
            for t in range(m):
                out[out_ptr[c] + t] = src[a + t]
    return out_ptr, out


@numba.njit(parallel=True, cache=True)
def _squared_distances(X, ind):
    n, k = ind.shape
    out = np.empty((n, k))
    for i in numba.prange(n):
        for j in range(k):
            c = ind[i, j]
            if c < 0 or c == i:
                out[i, j] = np.inf
                continue
            s = 0.0
            for t in range(X.shape[1]):
                diff = X[i, t] - X[c, t]
                s += diff * diff
            out[i, j] = s
    return out


@numba.njit(cache=True, nogil=True)
def _sort_row(ind_row, d2_row):
    """Insertion sort of one row by (distance, index), in place: k is small."""
    for a in range(1, ind_row.shape[0]):
        _move_forward(ind_row, d2_row, a)


@numba.njit(parallel=True, cache=True)
def _sort_rows(ind, d2):
    """Each row by (distance, index), duplicates and self already inf."""
    n, k = ind.shape
    for i in numba.prange(n):
        _sort_row(ind[i], d2[i])
        for a in range(1, k):  # a repeated neighbour keeps its first place only
            for b in range(a):
                if ind[i, b] == ind[i, a] and ind[i, a] >= 0:
                    d2[i, a] = np.inf
        _sort_row(ind[i], d2[i])  # and sorts last


def refine_neighbours(X: np.ndarray, ind: np.ndarray, *, rounds: int = 1, reverse_cap: int = REVERSE_CAP,
                      progress: Callable[[float], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Improve approximate k-nearest-neighbour lists by rounds of the local join.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The points (float64 distances are computed from them).
    ind : ndarray of int, shape (n, k)
        A start: k other points per row (-1 for none; the point itself and repeats are dropped).
    rounds : int
        Local-join rounds (the kNN search runs ``core.kernels.knn_search.REFINE_ROUNDS``; each
        one is O(n (k + c)^2 d), c = ``reverse_cap``); stops early when a
        round changes nothing.
    reverse_cap : int
        Reverse neighbours used per point.
    progress : callable(fraction), optional
        Hears the fraction of rounds done.

    Returns
    -------
    ind : ndarray of int64, shape (n, k)
        Nearest first, ties by the smaller index; -1 (distance inf) where fewer than k points
        were found.
    dist : ndarray of float64, shape (n, k)
        Euclidean distances, non-decreasing along each row, each at most the start's
        corresponding distance (after the start is sorted).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    ind = np.array(ind, dtype=np.int64, order="C")  # a copy: sorted in place
    if ind.ndim != 2 or ind.shape[0] != X.shape[0]:
        raise ValueError(f"ind must have shape (n, k) with n = {X.shape[0]}; got {ind.shape}.")
    if ind.size and (ind.max() >= X.shape[0] or ind.min() < -1):
        raise ValueError("ind holds indices outside [-1, n - 1]: give neighbours of these points.")
    d2 = _squared_distances(X, ind)
    _sort_rows(ind, d2)
    ind[~np.isfinite(d2)] = -1
    say = progress or (lambda fraction: None)
    for r in range(int(rounds)):
        rev_ptr, rev_idx = _reverse_lists(ind, d2, int(reverse_cap))
        new_ind, new_d2 = np.empty_like(ind), np.empty_like(d2)
        _refine_round(X, ind, d2, rev_ptr, rev_idx, new_ind, new_d2)
        del rev_ptr, rev_idx
        same = np.array_equal(new_ind, ind)
        ind, d2 = new_ind, new_d2
        say((r + 1) / rounds)
        if same:
            break
    return ind, np.sqrt(d2)
