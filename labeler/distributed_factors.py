"""Building kernel factors and kNN graphs block by block, on any executor (e.g. Dask).

The expensive part of a factor is a pass over every row of the pool:

* Nystrom (seed 000 §4.2, :func:`core.kernels.nystrom_factor`): ``Phi_b = k(X_b, Z) T``
  for each block of rows ``X_b``, with the landmarks ``Z`` and the map ``T`` computed once
  (:func:`core.kernels.factors.nystrom_landmarks`, :func:`~core.kernels.factors.nystrom_transform`): O(n m d + n m r), split into tasks of ``block_rows``
  rows; each task receives only its rows (``X`` is never shipped whole);
* the kNN graph (seed 001 §2): the exact k nearest neighbours of each block of query points
  among all points (``X`` shipped to every worker once): O(n^2 d) in total, O(n d) memory per
  task row. :func:`core.kernels.neighbour_graph` then assembles the sparse graph here.

With :class:`~core.criteria.blocks.SerialExecutor` these are the single-machine results
(the tests compare them), so a cluster changes where the work runs, not what it computes.
A pool too large for this machine's memory can come as a ``dask.array`` (e.g. from
``dask.array.from_zarr``/``from_npy_stack`` or a Parquet read): :func:`nystrom_factor_blocks`
then maps the blocks of that array and returns ``Phi`` as a ``dask.array`` that stays on the
cluster.
"""

from __future__ import annotations

import numpy as np

from core.criteria.blocks import SerialExecutor
from core.kernels import neighbour_graph
from core.kernels.factors import nystrom_landmarks, nystrom_transform

__all__ = ["nystrom_factor_blocks", "nystrom_rows", "knn_blocks", "knn_graph_blocks", "DEFAULT_FACTOR_ROWS"]

#: Rows per task: 20,000 rows of 64 features against 300 landmarks is ~50 MB of work memory.
DEFAULT_FACTOR_ROWS = 20_000


def _nystrom_rows(X_b, *, kernel, Z, T):
    return kernel(np.asarray(X_b, dtype=np.float64), Z) @ T


def nystrom_factor_blocks(X, kernel, n_landmarks: int, *, executor=None, method: str = "uniform",
                          rtol: float = 1e-10, seed=0, block_rows: int = DEFAULT_FACTOR_ROWS,
                          landmarks_from=None):
    """The Nystrom factor of :func:`core.kernels.nystrom_factor`, its rows built in tasks.

    Parameters
    ----------
    X : ndarray of shape (n, d), or dask.array.Array
        The pool. A dask array is mapped block by block (its own chunks) on its scheduler and
        ``Phi`` is returned as a dask array; its landmarks are drawn uniformly.
    kernel : core.kernels.Kernel
    n_landmarks, method, rtol, seed
        As :func:`core.kernels.nystrom_factor`.
    executor : BlockExecutor, optional
        Runs the row blocks of a numpy ``X`` (default: serial).
    block_rows : int
        Rows per task (numpy ``X``).
    landmarks_from : ndarray, optional
        Rows to choose landmarks from instead of ``X`` (a dask ``X``: default a uniform
        sample of ``20 n_landmarks`` rows).

    Returns
    -------
    Phi : ndarray of shape (n, r), or dask.array.Array of that shape
    """
    if isinstance(block_rows, bool) or int(block_rows) != block_rows or block_rows < 1:
        raise ValueError(f"block_rows must be a positive integer; got {block_rows!r}.")
    if _is_dask_array(X):
        return _nystrom_dask(X, kernel, n_landmarks, rtol=rtol, seed=seed, landmarks_from=landmarks_from)
    X = np.asarray(X, dtype=np.float64)
    source = X if landmarks_from is None else landmarks_from
    Z = nystrom_landmarks(source, n_landmarks, method=method, seed=seed)
    T = nystrom_transform(kernel, Z, rtol)
    executor = SerialExecutor() if executor is None else executor
    blocks = [X[a:a + int(block_rows)] for a in range(0, X.shape[0], int(block_rows))]
    parts = executor.map(_nystrom_rows, blocks, dict(kernel=kernel, Z=Z, T=T))
    return np.concatenate(parts, axis=0) if parts else np.empty((0, T.shape[1]))


def nystrom_rows(X, kernel, Z, *, executor=None, rtol: float = 1e-10, block_rows: int = DEFAULT_FACTOR_ROWS,
                 warn: bool = True) -> np.ndarray:
    """``Phi = k(X, Z) T`` of given landmarks ``Z`` (:func:`core.kernels.factors.nystrom_map`),
    its row blocks run by ``executor``.

    Returns
    -------
    Phi : ndarray of shape (n, r)
    """
    X = np.asarray(X, dtype=np.float64)
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    T = nystrom_transform(kernel, Z, rtol, warn)
    executor = SerialExecutor() if executor is None else executor
    blocks = [X[a:a + int(block_rows)] for a in range(0, X.shape[0], int(block_rows))]
    parts = executor.map(_nystrom_rows, blocks, dict(kernel=kernel, Z=Z, T=T))
    return np.concatenate(parts, axis=0) if parts else np.empty((0, T.shape[1]))


def _is_dask_array(X) -> bool:
    try:
        import dask.array as da
    except ImportError:  # pragma: no cover - dask is a dependency
        return False
    return isinstance(X, da.Array)


def _nystrom_dask(X, kernel, n_landmarks, *, rtol, seed, landmarks_from):
    n = int(X.shape[0])
    if landmarks_from is None:
        rng = np.random.default_rng(seed)
        size = min(n, 20 * int(n_landmarks))
        rows = np.sort(rng.choice(n, size=size, replace=False))
        landmarks_from = np.asarray(X[rows].compute(), dtype=np.float64)
    Z = nystrom_landmarks(landmarks_from, n_landmarks, method="uniform", seed=seed)
    T = nystrom_transform(kernel, Z, rtol)
    X = X.rechunk({1: -1})  # every block holds whole rows
    return X.map_blocks(_nystrom_rows, kernel=kernel, Z=Z, T=T, dtype=np.float64,
                        chunks=(X.chunks[0], (T.shape[1],)))


def _knn_rows(rows, *, X, sq, k):
    """The k nearest other points of ``X[rows]`` (exact; ties by index), (b, k) each."""
    a, b = rows
    Q = X[a:b]
    d2 = sq[a:b, None] - 2.0 * (Q @ X.T) + sq[None, :]
    d2[np.arange(b - a), np.arange(a, b)] = np.inf  # not itself
    part = np.argpartition(d2, k - 1, axis=1)[:, :k]
    pd2 = np.take_along_axis(d2, part, 1)
    order = np.lexsort((part, pd2), axis=1)
    ind = np.take_along_axis(part, order, 1)
    # the distances exactly (the expansion above loses digits for near points)
    dist = np.linalg.norm(Q[:, None, :] - X[ind], axis=2)
    return ind.astype(np.int64), dist


def knn_blocks(X, n_neighbors: int, *, executor=None, block_rows: int = 2_000):
    """Exact k nearest other points of every point, in tasks of ``block_rows`` query points.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    n_neighbors : int
        In [1, n - 1].
    executor : BlockExecutor, optional

    Returns
    -------
    ind : ndarray of shape (n, k) of int64
    dist : ndarray of shape (n, k)
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    n = X.shape[0]
    if isinstance(n_neighbors, bool) or int(n_neighbors) != n_neighbors or not 1 <= n_neighbors < n:
        raise ValueError(f"n_neighbors must be an integer in [1, {n - 1}]; got {n_neighbors!r}.")
    executor = SerialExecutor() if executor is None else executor
    blocks = [(a, min(n, a + int(block_rows))) for a in range(0, n, int(block_rows))]
    parts = executor.map(_knn_rows, blocks, dict(X=X, sq=np.einsum("ij,ij->i", X, X), k=int(n_neighbors)))
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def knn_graph_blocks(X, n_neighbors: int = 10, *, weights: str = "connectivity", sigma=None, executor=None,
                     block_rows: int = 2_000):
    """:func:`core.kernels.knn_graph` with the exact neighbours found in tasks (see module)."""
    ind, dist = knn_blocks(X, n_neighbors, executor=executor, block_rows=block_rows)
    return neighbour_graph(ind, dist, weights=weights, sigma=sigma)
