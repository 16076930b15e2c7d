"""An order of a sparse graph's nodes that keeps each row's neighbours close in memory.

A sparse product ``L v`` on a kNN graph of 10^6 points reads ``v`` at the columns of every row:
in the pool's own order (points in file order, neighbours anywhere) each of those reads is a
cache miss, and the product is bound by memory latency, not bandwidth. Renumbered by the reverse
Cuthill-McKee order (Cuthill and McKee 1969; George's reversal), the neighbours of a row lie in a
narrow band of nearby rows, and most reads hit a cache line that a nearby row loaded already.
On the 10^6-point image-like kNN graph the fused Chebyshev step
(:func:`core.kernels.laplacian_eigen.chebyshev_eigenpairs`) took 1.15 x less time renumbered while
its vector stayed in the processor's shared cache, and 2-3 x less when other work used that cache
(docs/benchmarks.md §15, seventh pass); the renumbering itself is one breadth-first sweep (scipy's
:func:`~scipy.sparse.csgraph.reverse_cuthill_mckee`) and one copy of the matrix.

A solver renumbers its matrix, works on it, and maps its answer back: eigenpairs, solutions
and products do not depend on the numbering beyond rounding (docs/algorithms.md §15).

Points before any graph exists (the kNN search itself) are renumbered by k-means cell
(:func:`cell_order`): the points of a cell, about a thousand, are near each other in space and
then in memory, so an index built and queried in that order reads mostly what it read a moment
before (docs/benchmarks.md §15, seventh pass).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._threads import available_threads
from .knn_cells import kmeans_centroids, nearest_centroids

__all__ = ["locality_order", "symmetric_permutation", "inverse_permutation", "bandwidth", "cell_order",
           "CELL_ORDER"]

#: :func:`cell_order`'s k-means: points per cell on average, sample points per cell, Lloyd steps.
CELL_ORDER = {"cell_size": 1000, "train": 20, "iterations": 5}


def locality_order(A) -> np.ndarray:
    """The reverse Cuthill-McKee order of a symmetric sparse matrix's graph.

    Parameters
    ----------
    A : sparse matrix of shape (n, n)
        Symmetric pattern (a graph's adjacency or Laplacian).

    Returns
    -------
    order : ndarray of shape (n,), int64
        A permutation of ``range(n)``: node ``order[i]`` becomes node ``i``. Deterministic
        (it depends on the pattern only).
    """
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    A = sp.csr_matrix(A)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"A must be square; got shape {A.shape}.")
    return np.asarray(reverse_cuthill_mckee(A, symmetric_mode=True), dtype=np.int64)


def symmetric_permutation(A, order: np.ndarray) -> sp.csr_matrix:
    """``P A P^T`` for the permutation ``order``: entry ``(i, j)`` is ``A[order[i], order[j]]``.

    Parameters
    ----------
    A : sparse matrix of shape (n, n)
    order : ndarray of shape (n,)
        A permutation of ``range(n)``.

    Returns
    -------
    csr_matrix of shape (n, n)
        Float64, sorted column indices within each row.
    """
    A = sp.csr_matrix(A, dtype=np.float64)
    order = np.asarray(order, dtype=np.int64)
    if order.shape != (A.shape[0],):
        raise ValueError(f"order must have shape ({A.shape[0]},); got {order.shape}.")
    inverse = inverse_permutation(order)
    C = A.tocoo()  # one relabelling of the entries, one CSR build (not two fancy-indexed copies)
    out = sp.csr_matrix((C.data, (inverse[C.row], inverse[C.col])), shape=A.shape)
    del C
    out.sort_indices()
    return out


def inverse_permutation(order: np.ndarray) -> np.ndarray:
    """The permutation that undoes ``order``: ``x[order][inverse] == x``.

    Parameters
    ----------
    order : ndarray of shape (n,)

    Returns
    -------
    inverse : ndarray of shape (n,), int64
    """
    order = np.asarray(order, dtype=np.int64)
    inverse = np.empty_like(order)
    inverse[order] = np.arange(order.size, dtype=np.int64)
    return inverse


def bandwidth(A) -> int:
    """``max |i - j|`` over the stored entries of ``A`` (0 for a diagonal or empty matrix).

    Parameters
    ----------
    A : sparse matrix of shape (n, n)

    Returns
    -------
    int
    """
    A = sp.coo_matrix(A)
    return int(np.abs(A.row.astype(np.int64) - A.col).max()) if A.nnz else 0


def cell_order(X: np.ndarray, seed: int = 0, blocks: int = 1) -> np.ndarray:
    """A renumbering of points that keeps each block of the given numbering together and, inside
    it, the points of each k-means cell together.

    The blocks are ``np.array_split(np.arange(n), blocks)`` (a search that splits the points into
    contiguous blocks sees the same points in each block after the renumbering); the cells are
    those of :data:`CELL_ORDER` (``n / cell_size`` centroids by k-means on a seeded sample, every
    point in the cell of its nearest centroid). Ties keep the given order.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    seed : int
        Seeds the k-means (the same data and seed give the same order).
    blocks : int
        >= 1.

    Returns
    -------
    order : ndarray of shape (n,), int64
        Point ``order[i]`` becomes point ``i``.
    """
    from concurrent.futures import ThreadPoolExecutor

    n = X.shape[0]
    Xf = np.ascontiguousarray(X, dtype=np.float32)
    cells = max(1, min(n, n // int(CELL_ORDER["cell_size"])))
    with ThreadPoolExecutor(max_workers=available_threads()) as pool:
        centroids = kmeans_centroids(Xf, cells, int(CELL_ORDER["train"]), int(CELL_ORDER["iterations"]), int(seed), pool)
        cell = nearest_centroids(Xf, centroids, 1, pool)[:, 0]
    block = np.repeat(np.arange(int(blocks)), [part.size for part in np.array_split(np.arange(n), int(blocks))])
    return np.lexsort((np.arange(n), cell, block)).astype(np.int64)  # by block, then cell, then given index
