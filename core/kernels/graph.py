"""kNN graphs, their Laplacians and spectral graph kernels as low-rank factors.

docs/algorithms.md §5, §9; seeds 001 (kNN weight matrices), 004 (spectral transforms). The graph is
the symmetrised kNN graph: ``w_ij > 0`` if ``i`` is among the k nearest neighbours of ``j`` or
``j`` among those of ``i``, with weight 1 or ``exp(-||x_i - x_j||^2 / sigma^2)``. A spectral
graph kernel keeps the r smallest eigenpairs ``(lambda_i, phi_i)`` of the (normalised)
Laplacian and a transform ``r(lambda)``::

    K = sum_i r(lambda_i) phi_i phi_i^T = Phi Phi^T,     Phi = [phi_i sqrt(r(lambda_i))]

so the learner runs on it through :class:`core.posteriors.FactorPosterior`. Transforms:
``"diffusion"`` ``r = exp(-s^2 lambda / 2)`` and ``"gaussian_field"`` ``r = 1 / (lambda + eps)``
(seed 004; with the Gaussian field, ARLS is Zhu et al.'s harmonic active learning, docs/algorithms.md §9).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import eigsh

from ..validation import check_features
from .knn_search import EXACT_KNN_MAX, KNN_METHODS, nearest_neighbours
from .laplacian_eigen import GUARD, SUBSPACE_GUARD

__all__ = ["knn_graph", "knn_neighbours", "neighbour_graph", "self_tuned_graph", "laplacian", "laplacian_eigenpairs", "spectral_factor", "TRANSFORMS",
           "EIGEN_METHODS", "LOBPCG_ABOVE", "CHEBYSHEV_ABOVE", "EXACT_KNN_MAX"]

TRANSFORMS = ("diffusion", "gaussian_field")
EIGEN_METHODS = ("auto", "eigsh", "lobpcg", "chebyshev", "subspace")
#: "auto" finds Laplacian eigenpairs by LOBPCG with a multigrid preconditioner beyond this many
#: points, by Lanczos (eigsh) up to it; None: always eigsh. Measured on the crowded spectrum of a
#: 10-NN graph of a 32-dimensional mixture (rank 100), LOBPCG to residual 1e-5 took 4x eigsh's CPU
#: time at 10^4 points and more than 2x at 10^5 (benchmarks/knn_scale.py --part eig;
#: docs/benchmarks.md §15), so eigsh stays the default.
LOBPCG_ABOVE: int | None = None
#: "auto" runs Lanczos on a Chebyshev filter of L (``"chebyshev"``) beyond this many points, plain
#: Lanczos up to it. Rank 100 on the 10-NN graph of benchmarks/knn_scale.py's mixture, the same
#: eigenvalues to 2e-14: 4.7 CPU s against eigsh's 22.5 at 5,000 points, 40 against 66 at 10^5
#: (docs/benchmarks.md §15).
CHEBYSHEV_ABOVE = 2_000
#: The progress of eigsh, which reports none, counts its matrix-vector products against this many
#: per eigenpair (rank 100 on a 10-NN graph of 10^4 points of the benchmark's mixture took about
#: 850; the bar stops at 95 % until the solver returns).
EIGSH_PRODUCTS_PER_PAIR = 10


def _neighbours(X: np.ndarray, k: int, seed, method: str = "auto", progress=None,
                report=None) -> tuple[np.ndarray, np.ndarray]:
    """Indices and distances of the k nearest other points, each of shape (n, k)
    (:func:`core.kernels.knn_search.nearest_neighbours`)."""
    return nearest_neighbours(X, k, method=method, seed=seed, progress=progress, report=report)


def knn_neighbours(X, n_neighbors: int = 10, *, seed=0, method: str = "auto",
                   progress=None, report=None) -> tuple[np.ndarray, np.ndarray]:
    """The k nearest other points of each point and their distances (what :func:`knn_graph`
    builds on; kept by callers that store a graph compactly and rebuild it with
    :func:`neighbour_graph`).

    ``method``, ``progress(fraction)`` and ``report`` (a
    :class:`core.kernels.knn_search.SearchReport` to fill with the search's sampled recall):
    :func:`core.kernels.knn_search.nearest_neighbours` (exact up to ``EXACT_KNN_MAX`` points,
    hnswlib beyond).

    Returns
    -------
    ind : ndarray of int64, shape (n, k)
    dist : ndarray of float64, shape (n, k)
    """
    X = check_features(X, min_samples=2)
    n = X.shape[0]
    if isinstance(n_neighbors, bool) or int(n_neighbors) != n_neighbors or not 1 <= n_neighbors < n:
        raise ValueError(f"n_neighbors must be an integer in [1, {n - 1}]; got {n_neighbors!r}.")
    if method not in KNN_METHODS:
        raise ValueError(f"method must be one of {', '.join(KNN_METHODS)}; got {method!r}.")
    ind, dist = _neighbours(X, int(n_neighbors), seed, method, progress, report)
    return np.asarray(ind, dtype=np.int64), np.asarray(dist, dtype=np.float64)


def knn_graph(X, n_neighbors: int = 10, *, weights: str = "connectivity", sigma: float | None = None,
              seed=0, method: str = "auto", progress=None) -> sp.csr_matrix:
    """Symmetrised kNN weight matrix ``W`` (seed 001 §2; docs/algorithms.md §5).

    Parameters
    ----------
    X : array-like of shape (n, d)
    n_neighbors : int
        k, at least 1 and below n.
    weights : {"connectivity", "heat"}
        1 on every edge, or ``exp(-||x_i - x_j||^2 / sigma^2)``.
    sigma : float, optional
        Heat-kernel scale; default the mean distance to the k-th neighbour.
    seed : int
        Seeds the approximate search used beyond ``EXACT_KNN_MAX`` points.
    method : {"auto", "exact", "cells", "hnsw", "nndescent"}
        The neighbour search (:func:`core.kernels.knn_search.nearest_neighbours`).
    progress : callable(fraction), optional
        Hears the search's progress.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n, n)
        Symmetric, non-negative, zero diagonal.
    """
    X = check_features(X, min_samples=2)
    n = X.shape[0]
    if isinstance(n_neighbors, bool) or int(n_neighbors) != n_neighbors or not 1 <= n_neighbors < n:
        raise ValueError(f"n_neighbors must be an integer in [1, {n - 1}]; got {n_neighbors!r}.")
    if weights not in ("connectivity", "heat"):
        raise ValueError(f"weights must be 'connectivity' or 'heat'; got {weights!r}.")
    if method not in KNN_METHODS:
        raise ValueError(f"method must be one of {', '.join(KNN_METHODS)}; got {method!r}.")
    ind, dist = _neighbours(X, int(n_neighbors), seed, method, progress)
    return neighbour_graph(ind, dist, weights=weights, sigma=sigma)


def neighbour_graph(ind, dist, *, weights: str = "connectivity", sigma: float | None = None) -> sp.csr_matrix:
    """The symmetrised kNN weight matrix of given neighbours (as :func:`knn_graph`).

    Parameters
    ----------
    ind : ndarray of shape (n, k) of int
        The k nearest other points of each point (e.g. found block by block elsewhere).
    dist : ndarray of shape (n, k)
        Their distances.
    weights, sigma
        As :func:`knn_graph`.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n, n)
    """
    ind = np.asarray(ind, dtype=np.int64)
    dist = np.asarray(dist, dtype=np.float64)
    n = ind.shape[0]
    if ind.ndim != 2 or dist.shape != ind.shape or (ind.size and (ind.min() < 0 or ind.max() >= n)):
        raise ValueError(f"ind and dist must be (n, k) arrays of the same shape with indices in [0, {n}).")
    if weights not in ("connectivity", "heat"):
        raise ValueError(f"weights must be 'connectivity' or 'heat'; got {weights!r}.")
    if weights == "heat":
        scale = float(np.mean(dist[:, -1])) if sigma is None else float(sigma)
        if not scale > 0:
            raise ValueError("the heat-kernel scale is 0 (duplicated points); pass sigma=... > 0.")
        vals = np.exp(-(dist.ravel() ** 2) / scale**2)
    else:
        vals = np.ones(ind.size)
    A = sp.csr_matrix((vals, (np.repeat(np.arange(n), ind.shape[1]), ind.ravel())), shape=(n, n))
    W = A.maximum(A.T).tocsr()
    W.setdiag(0.0)
    W.eliminate_zeros()
    return W


def self_tuned_graph(ind, dist) -> sp.csr_matrix:
    """The kNN weights of Calder et al. (Poisson learning, 2020; GraphLearning's ``knn`` default):
    ``w_ij = exp(-4 ||x_i - x_j||^2 / d_k(x_i)^2)`` with ``d_k(x_i)`` the distance to the k-th
    neighbour of ``x_i``, symmetrised as ``(A + A^T) / 2``.

    Parameters
    ----------
    ind, dist : ndarray of shape (n, k)
        The k nearest other points of each point and their distances (:func:`knn_neighbours`).

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n, n)
    """
    ind = np.asarray(ind, dtype=np.int64)
    dist = np.asarray(dist, dtype=np.float64)
    n = ind.shape[0]
    if ind.ndim != 2 or dist.shape != ind.shape or (ind.size and (ind.min() < 0 or ind.max() >= n)):
        raise ValueError(f"ind and dist must be (n, k) arrays of the same shape with indices in [0, {n}).")
    scale = dist[:, -1] ** 2
    if not (scale > 0).all():
        raise ValueError("a point has its k nearest neighbours at distance 0 (duplicated points); remove the "
                         "duplicates or use a larger k.")
    vals = np.exp(-4.0 * dist**2 / scale[:, None])
    A = sp.csr_matrix((vals.ravel(), (np.repeat(np.arange(n), ind.shape[1]), ind.ravel())), shape=(n, n))
    W = ((A + A.T) / 2.0).tocsr()
    W.setdiag(0.0)
    W.eliminate_zeros()
    return W


def laplacian(W, normalized: bool = True) -> sp.csr_matrix:
    """``D - W`` or the normalised ``I - D^-1/2 W D^-1/2`` (isolated points get degree 1)."""
    W = sp.csr_matrix(W, dtype=np.float64)
    d = np.asarray(W.sum(axis=1)).ravel()
    if not normalized:
        return (sp.diags(d) - W).tocsr()
    inv = 1.0 / np.sqrt(np.where(d > 0, d, 1.0))
    return (sp.identity(W.shape[0], format="csr") - sp.diags(inv) @ W @ sp.diags(inv)).tocsr()


def spectral_factor(W, rank: int, *, transform: str = "gaussian_field", eps: float = 1e-2,
                    s: float = 1.0, normalized: bool = True, seed=0, method: str = "auto",
                    progress=None) -> tuple[np.ndarray, np.ndarray]:
    """Spectral graph kernel of the r smallest Laplacian eigenpairs as a factor ``Phi``.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric graph weights (:func:`knn_graph`).
    rank : int
        r, the number of eigenpairs (seed 004 uses 200).
    transform : {"diffusion", "gaussian_field"}
    eps : float
        Gaussian field ``1 / (lambda + eps)``.
    s : float
        Diffusion ``exp(-s^2 lambda / 2)``.
    normalized : bool
        Normalised Laplacian (eigenvalues in [0, 2]) or ``D - W``.
    seed : int
        Start vector(s) of the eigensolver (deterministic results).
    method, progress
        The eigensolver and its progress (:func:`laplacian_eigenpairs`).

    Returns
    -------
    Phi : ndarray of shape (n, r)
    eigenvalues : ndarray of shape (r,)
        Increasing.
    """
    if transform not in TRANSFORMS:
        raise ValueError(f"transform must be one of {TRANSFORMS}; got {transform!r}.")
    lam, vecs = laplacian_eigenpairs(W, rank, normalized=normalized, seed=seed, method=method, progress=progress)
    r = np.exp(-(s**2) * lam / 2.0) if transform == "diffusion" else 1.0 / (lam + eps)
    return np.ascontiguousarray(vecs * np.sqrt(r)), lam


def laplacian_eigenpairs(W, rank: int, *, normalized: bool = True, seed=0, method: str = "auto",
                         progress=None) -> tuple[np.ndarray, np.ndarray]:
    """The ``rank`` smallest eigenpairs of the (normalised) Laplacian of ``W``.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
    rank : int
        r, in [1, n - 1].
    normalized : bool
    seed : int
        Start vector(s) of the iteration (deterministic results).
    method : {"auto", "eigsh", "lobpcg", "chebyshev", "subspace"}
        ``"eigsh"``: Lanczos on ``c I - L`` (ARPACK, residuals ~1e-10);
        ``"lobpcg"``: LOBPCG with an algebraic multigrid preconditioner
        (:func:`core.kernels.laplacian_eigen.lobpcg_eigenpairs`, residuals ~1e-5);
        ``"chebyshev"``: Lanczos on a Chebyshev filter of ``L``
        (:func:`core.kernels.laplacian_eigen.chebyshev_eigenpairs`);
        ``"subspace"``: Chebyshev-filtered subspace iteration
        (:func:`core.kernels.laplacian_eigen.filtered_subspace_eigenpairs`, residuals ~1e-6);
        ``"auto"``: chebyshev beyond :data:`CHEBYSHEV_ABOVE` points, eigsh up to it (lobpcg
        beyond :data:`LOBPCG_ABOVE` points when that is set).
    progress : callable(fraction), optional
        Hears the solver's progress (eigsh: its products so far against a typical count).

    Returns
    -------
    eigenvalues : ndarray of shape (r,)
        Increasing, clipped at 0.
    eigenvectors : ndarray of shape (n, r)
        Orthonormal columns.
    """
    if method not in EIGEN_METHODS:
        raise ValueError(f"method must be one of {', '.join(EIGEN_METHODS)}; got {method!r}.")
    L = laplacian(W, normalized)
    n = L.shape[0]
    if isinstance(rank, bool) or int(rank) != rank or not 1 <= rank < n:
        raise ValueError(f"rank must be an integer in [1, {n - 1}]; got {rank!r}.")
    if method == "auto":
        method = ("lobpcg" if LOBPCG_ABOVE is not None and n > LOBPCG_ABOVE
                  else "chebyshev" if n > CHEBYSHEV_ABOVE else "eigsh")
    if method == "lobpcg" and n - int(rank) > 2 * GUARD:
        from .laplacian_eigen import lobpcg_eigenpairs

        d = np.asarray(sp.csr_matrix(W).sum(axis=1)).ravel()
        near_null = np.sqrt(np.where(d > 0, d, 1.0)) if normalized else np.ones(n)
        return lobpcg_eigenpairs(L, int(rank), near_null / np.linalg.norm(near_null), seed=int(seed),
                                 progress=progress)
    if method == "chebyshev" and n - int(rank) >= 2:
        from .laplacian_eigen import chebyshev_eigenpairs

        upper = 2.0 if normalized else 2.0 * float(L.diagonal().max())  # Gershgorin
        return chebyshev_eigenpairs(L, int(rank), upper=upper, seed=int(seed), progress=progress)
    if method == "subspace" and n - int(rank) > SUBSPACE_GUARD:
        from .laplacian_eigen import filtered_subspace_eigenpairs

        upper = 2.0 if normalized else 2.0 * float(L.diagonal().max())
        return filtered_subspace_eigenpairs(L, int(rank), upper=upper, seed=int(seed), progress=progress)
    v0 = np.random.default_rng(seed).standard_normal(n)
    # the smallest eigenvalues of L are the largest of (c I - L), c above the spectrum
    c = 2.0 if normalized else 2.0 * float(L.diagonal().max())
    shifted = (c * sp.identity(n, format="csr") - L).tocsr()
    operator = shifted
    if progress is not None:  # ARPACK reports nothing: count its products, against a typical total
        from scipy.sparse.linalg import LinearOperator

        expected = EIGSH_PRODUCTS_PER_PAIR * int(rank)
        count = [0]

        def product(v):
            count[0] += 1
            if count[0] % 50 == 0:
                progress(min(0.95, count[0] / expected))
            return shifted @ v

        operator = LinearOperator(shifted.shape, matvec=product, dtype=np.float64)
    vals, vecs = eigsh(operator, k=int(rank), which="LA", v0=v0, tol=1e-10)
    if progress is not None:
        progress(1.0)
    lam = np.clip(c - vals, 0.0, None)
    order = np.argsort(lam, kind="stable")
    return lam[order], np.ascontiguousarray(vecs[:, order])
