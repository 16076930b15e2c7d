"""The smallest eigenpairs of a large graph Laplacian: LOBPCG with an algebraic multigrid
preconditioner.

Lanczos (``scipy.sparse.linalg.eigsh`` on ``c I - L``, :func:`core.kernels.graph.laplacian_eigenpairs`
with ``method="eigsh"``) converges slowly where the bottom of the spectrum is crowded, as on a kNN
graph of 10^6 points, and keeps ``2 r + 1`` Lanczos vectors of length n. LOBPCG (Knyazev 2001;
:func:`scipy.sparse.linalg.lobpcg`) iterates on a block of vectors with a preconditioner ``T``
approximating ``(L + s I)^-1``; with a multigrid ``T`` its number of iterations hardly grows with n.

The preconditioner: pyamg's smoothed-aggregation hierarchy (Vanek, Mandel, Brezina 1996) of
``L + s I`` (``s`` = :data:`SHIFT`: ``L`` is singular), with the near-null space
``D^1/2 1`` (the null vector of the normalised Laplacian; ``1`` for ``D - W``), applied as one
symmetric V-cycle with damped Jacobi smoothing on the whole block at once (sparse times dense
block products; pyamg's own ``aspreconditioner`` cycles one column at a time with Gauss-Seidel,
slower by the block width in Python calls). Jacobi before and after is the same symmetric
smoother, so the cycle is symmetric positive definite, as LOBPCG needs.

Memory: LOBPCG holds about eight n x b blocks, so the ``r`` eigenpairs are found in chunks of
:data:`CHUNK` (plus :data:`GUARD` vectors that speed up the last ones of a chunk and are dropped),
each chunk orthogonal to the ones found before (LOBPCG's constraints ``Y``): at 10^6 points and
rank 100 that is about 2 GB where one block of 100 would take 7 GB.

Measured against Lanczos in ``python benchmarks/knn_scale.py --part eig`` (docs/benchmarks.md §15):
on the crowded spectrum of a 10-NN graph of a 32-dimensional mixture (rank 100) it took 4x
Lanczos's CPU time at 10^4 points, so it is an option (``method="lobpcg"``), not the default.
"""

from __future__ import annotations

from collections.abc import Callable

import numba
import numpy as np
import scipy.sparse as sp

from .locality import inverse_permutation, locality_order, symmetric_permutation

__all__ = ["lobpcg_eigenpairs", "block_vcycle", "chebyshev_eigenpairs", "chebyshev_filter", "CHEBYSHEV_DEGREE",
           "CHEBYSHEV_CUT", "CHEBYSHEV_TOL", "CHEBYSHEV_ESTIMATE", "LOCALITY_ORDER_ABOVE", "CHEBYSHEV_NCV_EXTRA", "estimated_cut", "filtered_subspace_eigenpairs", "SHIFT", "CHUNK", "GUARD", "LOBPCG_TOL", "LOBPCG_MAXITER"]

#: ``L + SHIFT I`` is the matrix the multigrid hierarchy approximates (L itself is singular).
SHIFT = 1e-3
#: Eigenpairs per LOBPCG run, and extra vectors carried along and dropped.
CHUNK, GUARD = 25, 8
#: Residual ``||L v - lambda v||`` (unit v) at which LOBPCG stops, and its iteration limit.
LOBPCG_TOL = 1e-5
LOBPCG_MAXITER = 300


def block_vcycle(A: sp.csr_matrix, near_null: np.ndarray, omega: float = 2.0 / 3.0,
                 max_coarse: int = 500) -> Callable[[np.ndarray], np.ndarray]:
    """One symmetric V-cycle of pyamg's smoothed-aggregation hierarchy of ``A``, on blocks.

    Parameters
    ----------
    A : sparse matrix of shape (n, n)
        Symmetric positive definite.
    near_null : ndarray of shape (n,)
        A vector ``A`` maps to nearly 0 (aggregation keeps it exactly representable).
    omega : float
        Jacobi damping.
    max_coarse : int
        Coarsest level size (solved exactly, dense Cholesky).

    Returns
    -------
    apply : callable
        ``apply(B)`` for B of shape (n,) or (n, b): about ``A^-1 B``, linear, symmetric and
        positive definite in ``B``.
    """
    import pyamg
    from scipy.linalg import cho_factor, cho_solve

    ml = pyamg.smoothed_aggregation_solver(sp.csr_matrix(A), B=np.asarray(near_null, dtype=np.float64)[:, None],
                                           max_coarse=max_coarse, keep=False)
    levels = ml.levels
    As = [lv.A.tocsr() for lv in levels]
    Ps = [lv.P.tocsr() for lv in levels[:-1]]
    Rs = [lv.R.tocsr() for lv in levels[:-1]]
    dinv = [omega / A_l.diagonal() for A_l in As]
    coarse = cho_factor(As[-1].toarray())

    def cycle(level: int, b: np.ndarray) -> np.ndarray:
        if level == len(As) - 1:
            return cho_solve(coarse, b)
        A_l, d = As[level], dinv[level][:, None]
        x = d * b  # pre-smoothing from 0
        x += Ps[level] @ cycle(level + 1, Rs[level] @ (b - A_l @ x))
        x += d * (b - A_l @ x)  # post-smoothing (the same Jacobi step: symmetric)
        return x

    def apply(B: np.ndarray) -> np.ndarray:
        B = np.asarray(B, dtype=np.float64)
        return cycle(0, B if B.ndim == 2 else B[:, None]).reshape(B.shape)

    return apply


def lobpcg_eigenpairs(L, rank: int, near_null: np.ndarray, *, seed: int = 0, tol: float = LOBPCG_TOL,
                      maxiter: int = LOBPCG_MAXITER, chunk: int = CHUNK, guard: int = GUARD,
                      progress: Callable[[float], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``rank`` smallest eigenpairs of a graph Laplacian by chunked, AMG-preconditioned LOBPCG.

    Parameters
    ----------
    L : sparse matrix of shape (n, n)
        Symmetric positive semi-definite (normalised or combinatorial Laplacian).
    rank : int
        r, in [1, n - 1].
    near_null : ndarray of shape (n,)
        The Laplacian's null vector (``D^1/2 1`` normalised, ``1`` combinatorial).
    seed : int
        Seeds the start block (deterministic results).
    tol, maxiter : float, int
        LOBPCG's residual tolerance and iteration limit per chunk.
    chunk, guard : int
        Eigenpairs per run and the extra vectors carried along.
    progress : callable(fraction), optional

    Returns
    -------
    eigenvalues : ndarray of shape (r,)
        Increasing.
    eigenvectors : ndarray of shape (n, r)
        Orthonormal columns.
    """
    import warnings

    from scipy.sparse.linalg import LinearOperator, lobpcg

    L = sp.csr_matrix(L, dtype=np.float64)
    n = L.shape[0]
    say = progress or (lambda fraction: None)
    precondition = block_vcycle((L + SHIFT * sp.identity(n, format="csr")).tocsr(), near_null)
    rng = np.random.default_rng(seed)
    lam = np.empty(rank)
    vectors = np.empty((n, rank))
    done = 0
    while done < rank:
        m = min(chunk, rank - done)
        b = min(m + guard, n - done - 1)
        X = rng.standard_normal((n, b))
        calls = [0]

        def apply(B, _done=done, _m=m):
            calls[0] += 1
            say((_done + _m * min(0.95, calls[0] / 60.0)) / rank)
            return precondition(B)

        T = LinearOperator((n, n), matvec=apply, matmat=apply, dtype=np.float64)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "did not reach tol": checked below by the residuals
            vals, vecs = lobpcg(L, X, M=T, Y=vectors[:, :done] if done else None, tol=tol, maxiter=maxiter,
                                largest=False)
        del X
        order = np.argsort(vals, kind="stable")[:m]
        lam[done:done + m] = vals[order]
        vectors[:, done:done + m] = vecs[:, order]
        del vecs
        done += m
        say(done / rank)
    order = np.argsort(lam, kind="stable")
    return np.clip(lam[order], 0.0, None), np.ascontiguousarray(vectors[:, order])


#: Chebyshev filter of :func:`chebyshev_eigenpairs`: the polynomial degree and the fallback first
#: cut ``a`` (the wanted eigenvalues lie below it; raised and the solve repeated when they do
#: not), as a fraction of the spectrum's upper bound.
CHEBYSHEV_DEGREE = 12
CHEBYSHEV_CUT = 0.25
#: Whether :func:`chebyshev_eigenpairs` places its first cut by :func:`estimated_cut` (never below
#: ``CUT_FLOOR * upper``; ``CHEBYSHEV_CUT * upper`` when the estimate finds none), and the Lanczos
#: vectors ARPACK keeps beyond the rank (None: ARPACK's ``2 rank + 1`` in all). Measured in
#: docs/benchmarks.md §15 (sixth pass): at 10^6 points 176 filtered products instead of 253.
CHEBYSHEV_ESTIMATE = True
CUT_FLOOR = 0.005
CHEBYSHEV_NCV_EXTRA: int | None = 50
#: ARPACK's tolerance on the filtered operator in :func:`chebyshev_eigenpairs`.
CHEBYSHEV_TOL = 1e-8
#: From this many nodes on, :func:`chebyshev_eigenpairs` renumbers the graph by
#: :func:`core.kernels.locality.locality_order` before its sparse products (None: never). Below it
#: the vector of a product fits in a core's cache and the order hardly matters.
LOCALITY_ORDER_ABOVE: int | None = 50_000


def chebyshev_filter(L, upper: float, cut: float, degree: int) -> Callable[[np.ndarray], np.ndarray]:
    """``p(L) = T_m(t(L))``, ``t(x) = (upper + cut - 2 x) / (upper - cut)``: the Chebyshev polynomial
    of the first kind of degree ``m`` on the affine map of ``[cut, upper]`` onto ``[-1, 1]``.

    ``|p| <= 1`` on ``[cut, upper]``; on ``[0, cut)`` ``p > 1`` and decreasing in ``x`` (docs/algorithms.md §15).

    Parameters
    ----------
    L : sparse matrix of shape (n, n)
        Symmetric, spectrum in ``[0, upper]``.
    upper, cut : float
        ``0 < cut < upper``.
    degree : int
        m >= 1 (m products with ``L`` per application).

    Returns
    -------
    apply : callable
        ``apply(v)`` for v of shape (n,) or (n, b).
    """
    scale = 2.0 / (upper - cut)
    centre = (upper + cut) / (upper - cut)
    L = sp.csr_matrix(L, dtype=np.float64)
    indptr, indices, data = L.indptr, L.indices, L.data

    def apply(v: np.ndarray) -> np.ndarray:
        v = np.asarray(v, dtype=np.float64)
        if v.ndim == 1:  # one vector: the three-term step fused with the product, on all threads
            v = np.ascontiguousarray(v)
            previous, current = v, np.empty_like(v)
            _chebyshev_step(indptr, indices, data, v, v, current, centre, scale, 1.0, 0.0)
            for _ in range(degree - 1):
                following = np.empty_like(v)
                _chebyshev_step(indptr, indices, data, current, previous, following, centre, scale, 2.0, 1.0)
                previous, current = current, following
            return current
        previous, current = v, centre * v - scale * (L @ v)  # T_0 = 1, T_1 = t
        for _ in range(degree - 1):
            previous, current = current, 2.0 * (centre * current - scale * (L @ current)) - previous
        return current

    return apply


@numba.njit(parallel=True, cache=True)
def _block_product(indptr, indices, data, X, out):
    """``out = L X`` for CSR ``L`` and a C-ordered block ``X`` of shape (n, s): each row's entries
    read once per pair of columns, each sum in order by one thread (the same answer on any number)."""
    n, s = X.shape
    for i in numba.prange(n):
        for c in range(0, s - 1, 2):  # two columns at a time, in registers
            first, second = 0.0, 0.0
            for p in range(indptr[i], indptr[i + 1]):
                j, w = indices[p], data[p]
                first += w * X[j, c]
                second += w * X[j, c + 1]
            out[i, c], out[i, c + 1] = first, second
        if s % 2:
            last = 0.0
            for p in range(indptr[i], indptr[i + 1]):
                last += data[p] * X[indices[p], s - 1]
            out[i, s - 1] = last


#: The cut estimate of :func:`estimated_cut`: Lanczos steps per probe vector, probe vectors, and
#: the count of eigenvalues (as a multiple of the rank) the cut must lie above.
CUT_STEPS = 80
CUT_PROBES = 2
CUT_MARGIN = 1.5


def estimated_cut(L, rank: int, *, steps: int = CUT_STEPS, probes: int = CUT_PROBES, margin: float = CUT_MARGIN,
                  seed: int = 0, order: np.ndarray | None = None,
                  progress: Callable[[float], None] | None = None) -> float | None:
    """A point ``a`` with about ``margin * rank`` eigenvalues of ``L`` below it, by Lanczos quadrature.

    ``steps`` Lanczos steps on ``L`` (no reorthogonalisation: three vectors of length n per probe)
    from each of ``probes`` random unit vectors ``q`` give Gauss quadrature nodes ``theta_i`` and
    weights ``tau_i`` of the measure ``mu_q(x) = sum_{lambda_j <= x} (q . u_j)^2``, whose mean
    over random ``q`` is ``N(x) / n`` (``N`` the count of eigenvalues up to ``x``). The nodes'
    cumulative weights interlace with it (Chebyshev-Markov-Stieltjes): ``mu_q(theta_k) >=
    sum_{i < k} tau_i``. The answer is the smallest node where ``n`` times the mean over probes of
    that lower bound reaches ``max(margin r, r + 4 sqrt(2 r / probes))``: with r eigenvalues below
    a point, the mean of ``n mu_q`` over s Gaussian probes has mean r and standard deviation about
    ``sqrt(2 r / s)``, so small ranks get four of those as their margin (docs/algorithms.md §15).

    Parameters
    ----------
    L : sparse matrix of shape (n, n)
        Symmetric.
    rank : int
        r.
    steps, probes : int
        Lanczos steps per probe and probe vectors (``steps * probes`` sparse products, all probes
        in one pass over the matrix per step).
    margin : float
        The estimated count below the answer, as a multiple of ``rank``.
    seed : int
        Seeds the probes.
    order : ndarray of shape (n,), optional
        ``L`` is a graph's Laplacian renumbered by this permutation (:func:`core.kernels.locality.symmetric_permutation`):
        the probes are drawn in the graph's own numbering and renumbered alike, so the estimate
        is the one of the graph as given (up to rounding).
    progress : callable(fraction), optional
        Hears the fraction of the steps done (every 10 steps).

    Returns
    -------
    cut : float or None
        None when no node reaches the count (too few steps for this rank).
    """
    from scipy.linalg import eigh_tridiagonal

    L = sp.csr_matrix(L, dtype=np.float64)
    n = L.shape[0]
    steps = int(min(steps, n))
    Q = np.random.default_rng(seed).standard_normal((n, int(probes)))
    if order is not None:
        Q = np.ascontiguousarray(Q[np.asarray(order)])
    Q /= np.linalg.norm(Q, axis=0)
    previous = np.zeros_like(Q)
    W = np.empty_like(Q)
    alpha = np.zeros((steps, Q.shape[1]))
    beta = np.zeros((steps, Q.shape[1]))
    for j in range(steps):
        if progress is not None and j % 10 == 0:
            progress(j / steps)
        _block_product(L.indptr, L.indices, L.data, Q, W)
        alpha[j] = np.einsum("ij,ij->j", Q, W)
        W -= Q * alpha[j]
        if j:
            W -= previous * beta[j - 1]
        beta[j] = np.linalg.norm(W, axis=0)
        if j == steps - 1 or beta[j].min() <= 1e-12 * max(1.0, np.abs(alpha[: j + 1]).max()):
            steps = j + 1  # an invariant subspace: its quadrature is exact
            break
        previous, Q = Q, W / beta[j]
    nodes, lower = [], []
    for c in range(Q.shape[1]):
        theta, Y = eigh_tridiagonal(alpha[:steps, c], beta[: steps - 1, c])
        tau = Y[0] ** 2
        below = np.concatenate(([0.0], np.cumsum(tau)[:-1]))  # weight of the nodes strictly below each node
        nodes.append(theta)
        lower.append(below)
    candidates = np.unique(np.concatenate(nodes))
    bound = np.zeros(candidates.size)
    for theta, below in zip(nodes, lower):
        # at x: the bound of this probe's last node <= x (its cumulative weight strictly below that node)
        k = np.searchsorted(theta, candidates, side="right") - 1
        bound += np.where(k >= 0, below[np.maximum(k, 0)], 0.0)
    count = n * bound / len(nodes)
    reached = np.flatnonzero(count >= max(margin * rank, rank + 4.0 * np.sqrt(rank * 2.0 / len(nodes))))
    return float(candidates[reached[0]]) if reached.size else None


@numba.njit(parallel=True, cache=True)
def _chebyshev_step(indptr, indices, data, current, previous, out, centre, scale, double, minus):
    """``out = double (centre current - scale L current) - minus previous`` for CSR ``L``: one
    Chebyshev step, each row summed in order by one thread (the same answer on any number)."""
    n = current.shape[0]
    for i in numba.prange(n):
        s = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            s += data[p] * current[indices[p]]
        out[i] = double * (centre * current[i] - scale * s) - minus * previous[i]


def chebyshev_eigenpairs(L, rank: int, *, upper: float = 2.0, cut: float | None = None,
                         degree: int | None = None, seed: int = 0, tol: float = CHEBYSHEV_TOL,
                         ncv: int | None = None, progress: Callable[[float], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``rank`` smallest eigenpairs of a graph Laplacian by Lanczos on a Chebyshev filter of it.

    ARPACK's Lanczos (``eigsh``, ``which="LA"``) runs on ``p(L)`` (:func:`chebyshev_filter`): the
    eigenvectors are those of ``L``, the eigenvalues below ``cut`` are mapped above 1 in reverse
    order and spread far apart, all others into ``[-1, 1]``. A crowded bottom of the spectrum
    becomes a well-separated top, so Lanczos needs far fewer steps (each one orthogonalised
    against up to 2 r + 1 vectors of length n, the cost that dominates plain Lanczos at 10^6
    points), at ``degree`` sparse products per step. The eigenvalues of ``L`` are the Rayleigh
    quotients ``v^T L v``. The first cut is estimated (:func:`estimated_cut`, about 1.5 r
    eigenvalues below it), ARPACK keeps ``rank + CHEBYSHEV_NCV_EXTRA`` Lanczos vectors. The answer
    is the r smallest only if all r filtered eigenvalues exceed 1 (every eigenvalue at or above
    ``cut`` maps to at most 1 in absolute value): when they do not, ``cut`` is doubled (at most
    halfway to ``upper``) and the solve repeated (docs/algorithms.md §15). From
    :data:`LOCALITY_ORDER_ABOVE` nodes on the products run on the graph renumbered by
    :func:`core.kernels.locality.locality_order` (neighbours near in memory), and the
    eigenvectors are returned in the given numbering.

    Parameters
    ----------
    L : sparse matrix of shape (n, n)
        Symmetric positive semi-definite, spectrum in ``[0, upper]`` (2 for the normalised Laplacian).
    rank : int
        r, in [1, n - 2].
    upper : float
        An upper bound of the spectrum.
    cut : float, optional
        First guess of a bound above the r-th eigenvalue (default: :func:`estimated_cut` when
        :data:`CHEBYSHEV_ESTIMATE`, else ``CHEBYSHEV_CUT * upper``).
    degree : int, optional
        The filter's degree (default :data:`CHEBYSHEV_DEGREE`, read at the call).
    seed : int
        Seeds ARPACK's start vector (deterministic results).
    tol : float
        ARPACK's relative tolerance on the filtered eigenvalues.
    ncv : int, optional
        Lanczos vectors ARPACK keeps (default ``rank + CHEBYSHEV_NCV_EXTRA``; ARPACK's ``2 rank + 1``
        when that is None), within ``[rank + 2, n]``.
    progress : callable(fraction), optional
        Hears the products so far against a typical count (stops at 95 % until the answer).

    Returns
    -------
    eigenvalues : ndarray of shape (r,)
        Increasing, clipped at 0.
    eigenvectors : ndarray of shape (n, r)
        Orthonormal columns.
    """
    from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

    L = sp.csr_matrix(L, dtype=np.float64)
    n = L.shape[0]
    shown = [0.0]

    def say(fraction: float) -> None:  # the bar never moves back (a repair starts its count again)
        shown[0] = max(shown[0], float(fraction))
        if progress is not None:
            progress(shown[0])

    if cut is not None and not 0.0 < float(cut) < float(upper):
        raise ValueError(f"cut must lie in (0, upper = {upper}); got {cut!r}.")
    v0 = np.random.default_rng(seed).standard_normal(n)
    order = None
    if LOCALITY_ORDER_ABOVE is not None and n >= LOCALITY_ORDER_ABOVE:
        # renumbered for the products' memory reads; v0 and the probes drawn in the given
        # numbering and renumbered alike, so the answer is the given graph's up to rounding
        order = locality_order(L)
        L = symmetric_permutation(L, order)
        v0 = v0[order]
    if cut is None and CHEBYSHEV_ESTIMATE:
        cut = estimated_cut(L, int(rank), seed=seed, order=order, progress=lambda fraction: say(0.03 * fraction))
        if cut is not None:
            cut = min(max(cut, CUT_FLOOR * upper), upper * (1 - 1e-9))
    cut = float(CHEBYSHEV_CUT * upper if cut is None else cut)
    degree = CHEBYSHEV_DEGREE if degree is None else int(degree)
    if ncv is None and CHEBYSHEV_NCV_EXTRA is not None:
        ncv = int(rank) + CHEBYSHEV_NCV_EXTRA
    if ncv is not None:
        ncv = min(max(int(ncv), int(rank) + 2), n)
    expected = 2 * int(rank) + 20  # typical ARPACK steps on the filtered operator (176-226 at rank 100)
    while True:
        apply = chebyshev_filter(L, upper, cut, int(degree))
        count = [0]

        def product(v, _apply=apply):
            count[0] += 1
            if count[0] % 10 == 0:
                say(min(0.95, count[0] / expected))
            return _apply(v)

        operator = LinearOperator((n, n), matvec=product, dtype=np.float64)
        try:
            vals, vecs = eigsh(operator, k=int(rank), which="LA", v0=v0, tol=tol, ncv=ncv)
        except ArpackNoConvergence:  # wanted eigenvalues mixed with the damped ones: the cut is too low
            if cut >= upper * (1 - 1e-9):
                raise
            vals = None
        if vals is not None and (vals.min() > 1.0 or cut >= upper * (1 - 1e-9)):
            break
        cut = min(max(2.0 * cut, CUT_FLOOR * upper), 0.5 * (cut + upper))  # a wanted eigenvalue lies above the cut: widen it
    lam = np.einsum("ij,ij->j", vecs, L @ vecs)
    columns = np.lexsort((-vals, lam))  # increasing eigenvalue of L (ties: decreasing filter value)
    say(1.0)
    if order is not None:  # back to the given numbering (one copy, as the columns' sort makes anyway)
        return np.clip(lam[columns], 0.0, None), vecs[np.ix_(inverse_permutation(order), columns)]
    return np.clip(lam[columns], 0.0, None), np.ascontiguousarray(vecs[:, columns])


#: Chebyshev-filtered subspace iteration (:func:`filtered_subspace_eigenpairs`): extra vectors
#: carried beyond the rank, the filter's degree per iteration, the iteration limit and the
#: residual ``||L v - lambda v||`` (unit v) at which it stops.
SUBSPACE_GUARD = 30
SUBSPACE_DEGREE = 16
SUBSPACE_MAXITER = 60
SUBSPACE_TOL = 1e-6
_FILTER_COLUMNS = 32  # columns filtered at once (three n x 32 temporaries)


def filtered_subspace_eigenpairs(L, rank: int, *, upper: float = 2.0, cut: float | None = None,
                                 guard: int = SUBSPACE_GUARD, degree: int = SUBSPACE_DEGREE, seed: int = 0,
                                 tol: float = SUBSPACE_TOL, maxiter: int = SUBSPACE_MAXITER,
                                 progress: Callable[[float], None] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The ``rank`` smallest eigenpairs of a graph Laplacian by Chebyshev-filtered subspace iteration.

    A block of ``b = rank + guard`` orthonormal vectors is filtered by ``p(L)``
    (:func:`chebyshev_filter`, the cut at the block's largest Ritz value, so everything above the
    block's span is damped), orthonormalised, and replaced by the Ritz vectors of ``L`` on its
    span (Zhou & Saad 2007; docs/algorithms.md §15), until the r smallest Ritz pairs have
    residuals below ``tol``. Its work is sparse products with ``b`` columns at once (the matrix
    is read once for all of them) and dense n x b products, no single-vector steps.

    Parameters
    ----------
    L : sparse matrix of shape (n, n)
        Symmetric positive semi-definite, spectrum in ``[0, upper]``.
    rank : int
        r, in [1, n - guard - 1].
    upper : float
        An upper bound of the spectrum.
    cut : float, optional
        The first iteration's cut (default ``CHEBYSHEV_CUT * upper``).
    guard, degree, seed, tol, maxiter : int, int, int, float, int
        Extra vectors, the filter's degree, the start block's seed, the residual to reach and the
        iteration limit (the answer of the last iteration is returned when it is reached).
    progress : callable(fraction), optional
        Hears the fraction of the r pairs converged.

    Returns
    -------
    eigenvalues : ndarray of shape (r,)
        Increasing, clipped at 0.
    eigenvectors : ndarray of shape (n, r)
        Orthonormal columns.
    """
    L = sp.csr_matrix(L, dtype=np.float64)
    n = L.shape[0]
    say = progress or (lambda fraction: None)
    b = min(int(rank) + int(guard), n)
    cut = float(CHEBYSHEV_CUT * upper if cut is None else cut)
    V = np.random.default_rng(seed).standard_normal((n, b))
    theta, shown = None, 0.0
    for _ in range(int(maxiter)):
        apply = chebyshev_filter(L, upper, cut, int(degree))
        for a in range(0, b, _FILTER_COLUMNS):  # in place, a few columns at a time
            cols = slice(a, a + _FILTER_COLUMNS)
            block = apply(V[:, cols])
            V[:, cols] = block / np.linalg.norm(block, axis=0)
            del block
        V, _ = np.linalg.qr(V)
        LV = L @ V
        theta, S = np.linalg.eigh(V.T @ LV)
        V = V @ S
        LV = LV @ S
        LV -= V * theta
        residual = np.linalg.norm(LV[:, :rank], axis=0)
        del LV
        done = int(np.sum(residual < tol))
        shown = max(shown, min(0.99, done / rank))  # the bar never moves back
        say(shown)
        if done == rank:
            break
        cut = float(min(theta[-1], upper * (1 - 1e-9)))
        if not cut > theta[rank - 1]:  # a block too small to separate: widen
            cut = 0.5 * (theta[rank - 1] + upper)
    say(1.0)
    return np.clip(theta[:rank], 0.0, None), np.ascontiguousarray(V[:, :rank])
