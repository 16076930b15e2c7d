"""Low-rank kernel factors ``Phi`` with ``K ~ Phi Phi^T`` (docs/algorithms.md §8).

A factor turns kernel RLS on n points into ridge regression in r dimensions: the posterior
keeps an r x r matrix instead of an n x n one (:class:`core.posteriors.FactorPosterior`).
Nystrom and spectral-graph factors (seeds 000, 004) build ``Phi`` without ever forming ``K``;
:func:`eigen_factor` is the exact reference used by the conformance tests.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field as dataclass_field
from functools import cached_property

import numpy as np

from ..validation import check_features
from .kernel import Kernel

__all__ = ["eigen_factor", "nystrom_factor", "nystrom_landmarks", "nystrom_transform", "nystrom_map",
           "NystromKernel", "LANDMARK_METHODS"]

LANDMARK_METHODS = ("uniform", "kmeans")
_BLOCK_BYTES = 64 * 2**20  # temporaries per block of rows

_NOT_PSD_RTOL = 1e-8  # eigenvalues below -_NOT_PSD_RTOL * e_max: K is not PSD


def eigen_factor(K, rank: int | None = None, rtol: float = 0.0) -> np.ndarray:
    """Factor ``Phi = Q_r diag(sqrt(e_r))`` of a symmetric PSD matrix from its eigendecomposition.

    With ``rank=None`` and ``rtol=0`` every eigenpair is kept (negative rounding-level
    eigenvalues are set to 0), so ``Phi Phi^T`` equals ``K`` to rounding: the full-rank factor
    on which the low-rank posterior must agree with the dense one.

    Parameters
    ----------
    K : array-like of shape (n, n)
        Symmetric positive semi-definite kernel matrix.
    rank : int, optional
        Keep the ``rank`` largest eigenpairs (default: all).
    rtol : float, default 0
        Also drop eigenvalues below ``rtol * e_max``.

    Returns
    -------
    Phi : ndarray of shape (n, r), float64
        Columns ordered by decreasing eigenvalue.

    Raises
    ------
    ValueError
        If ``K`` is not square, not symmetric, or has an eigenvalue below ``-1e-8 e_max``
        (not PSD: no real factor exists).
    """
    K = check_features(K, name="K", min_samples=1)
    n = K.shape[0]
    if K.shape != (n, n):
        raise ValueError(f"K must be square (n, n); got shape {K.shape}.")
    scale = max(float(np.abs(K).max()), np.finfo(float).tiny)
    if float(np.abs(K - K.T).max()) > 1e-10 * scale:
        raise ValueError("K is not symmetric; pass a kernel matrix, e.g. 0.5 * (K + K.T).")
    e, Q = np.linalg.eigh(0.5 * (K + K.T))
    e, Q = e[::-1], Q[:, ::-1]
    e_max = max(float(e[0]), 0.0)
    if e[-1] < -_NOT_PSD_RTOL * max(e_max, np.finfo(float).tiny):
        raise ValueError(
            f"K has the eigenvalue {e[-1]:.3g} (largest {e_max:.3g}): it is not positive "
            "semi-definite, so no real factor K = Phi Phi^T exists. Use a PSD kernel (RBF, linear)."
        )
    keep = e > rtol * e_max if rtol > 0 else np.ones(n, dtype=bool)
    if rank is not None:
        if isinstance(rank, bool) or int(rank) != rank or rank < 1:
            raise ValueError(f"rank must be a positive integer; got {rank!r}.")
        keep &= np.arange(n) < int(rank)
    if not keep.any():
        raise ValueError("no eigenvalue of K is above the tolerance: K is (numerically) zero.")
    dropped = int(n - keep.sum())
    if rtol > 0 and dropped and rank is None:
        warnings.warn(
            f"eigen_factor dropped {dropped} eigenvalue(s) below {rtol:g} x the largest; the "
            f"factor has rank {int(keep.sum())}.",
            stacklevel=2,
        )
    return np.ascontiguousarray(Q[:, keep] * np.sqrt(np.maximum(e[keep], 0.0)))


def _report(progress, message: str, fraction: float) -> None:
    if progress is not None:
        progress(message, float(min(max(fraction, 0.0), 1.0)))


def nystrom_landmarks(X, n_landmarks: int, *, method: str = "uniform", seed=0) -> np.ndarray:
    """``m`` landmark points ``Z``: a uniform sample of rows, or k-means centres (seed 000 §4.2).

    The landmarks do not depend on the kernel, so a new RBF width re-uses them
    (:func:`nystrom_map` with the new kernel).

    Parameters
    ----------
    X : array-like of shape (n, d)
    n_landmarks : int
        ``m``, in ``[1, n]``.
    method : {"uniform", "kmeans"}
        Uniform sampling of rows without replacement (sorted), or the centres of a mini-batch
        k-means with ``m`` clusters (the k-means Nystrom of Zhang et al., seed 000 Table 4.3).
    seed : int or numpy.random.Generator

    Returns
    -------
    Z : ndarray of shape (m, d), float64
    """
    X = check_features(X, min_samples=1)
    if method not in LANDMARK_METHODS:
        raise ValueError(f"method must be one of {LANDMARK_METHODS}; got {method!r}.")
    n = X.shape[0]
    if isinstance(n_landmarks, bool) or int(n_landmarks) != n_landmarks or not 1 <= n_landmarks <= n:
        raise ValueError(f"n_landmarks must be an integer in [1, {n}] (the pool size); got {n_landmarks!r}.")
    m = int(n_landmarks)
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if method == "uniform":
        return np.ascontiguousarray(X[np.sort(rng.choice(n, m, replace=False))], dtype=np.float64)
    from sklearn.cluster import MiniBatchKMeans

    km = MiniBatchKMeans(n_clusters=m, random_state=int(rng.integers(2**31 - 1)), n_init=3,
                         batch_size=max(1024, 3 * m))
    km.fit(X)
    return np.ascontiguousarray(km.cluster_centers_, dtype=np.float64)


def nystrom_transform(kernel, Z, rtol: float = 1e-10, warn: bool = True) -> np.ndarray:
    """``T = U_k diag(s_k)^-1/2`` of ``k(Z, Z) = U diag(s) U^T``, eigenvalues ``<= rtol s_max``
    dropped (with a warning when ``warn``: the landmarks are nearly dependent).

    Returns
    -------
    T : ndarray of shape (m, r), r <= m, so that ``Phi = k(X, Z) T``.
    """
    s, U = np.linalg.eigh(kernel(np.asarray(Z, dtype=np.float64)))
    s, U = s[::-1], U[:, ::-1]
    if not s[0] > 0:
        raise ValueError("the kernel matrix of the landmarks is zero: no factor can be built from it.")
    keep = s > rtol * s[0]
    dropped = int((~keep).sum())
    if dropped and warn:
        warnings.warn(
            f"nystrom_factor dropped {dropped} of {s.size} landmark eigenvalues below {rtol:g} x the "
            f"largest (nearly dependent landmarks); the factor has rank {int(keep.sum())}.",
            stacklevel=3,
        )
    return np.ascontiguousarray(U[:, keep] / np.sqrt(s[keep]))


def nystrom_map(X, kernel, Z, *, rtol: float = 1e-10, progress=None, warn: bool = True,
                threads: int = 1) -> np.ndarray:
    """The Nystrom factor ``Phi = k(X, Z) T`` of given landmarks ``Z`` (:func:`nystrom_transform`).

    Built in blocks of rows (temporaries of at most 64 MiB each): memory ``8 n r`` + O(m^2),
    never n x n. Deterministic: the same ``X``, kernel and ``Z`` give the same bits, which is
    how a reopened session reproduces its factor from the stored landmarks. With ``threads``
    > 1 the blocks are shared among that many threads (numpy's products and ufuncs release
    the GIL), each block computed exactly as alone, so the bits do not depend on ``threads``
    (BLAS's own threads would split a product differently: those stay at one).

    Parameters
    ----------
    X : array-like of shape (n, d)
    kernel : core.kernels.Kernel
    Z : array-like of shape (m, d)
    rtol : float
    progress : callable(message, fraction), optional
        Called after each block of rows, in order, from the calling thread.
    threads : int, default 1
        Threads computing blocks at once (at most one block each in memory).

    Returns
    -------
    Phi : ndarray of shape (n, r), float64
    """
    X = check_features(X, min_samples=1)
    Z = np.ascontiguousarray(Z, dtype=np.float64)
    T = nystrom_transform(kernel, Z, rtol, warn)
    n = X.shape[0]
    Phi = np.empty((n, T.shape[1]))
    step = max(1, _BLOCK_BYTES // (8 * max(Z.shape[0], 1)))
    starts = range(0, n, step)

    def block(a: int) -> int:
        np.matmul(kernel(X[a:a + step], Z), T, out=Phi[a:a + step])  # no temporary, no copy
        return min(n, a + step)

    if int(threads) <= 1 or len(starts) < 2:
        done = map(block, starts)
        for end in done:
            _report(progress, f"Nystrom factor: {end:,} of {n:,} rows", end / n)
        return Phi
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(int(threads), len(starts)), thread_name_prefix="nystrom") as pool:
        for end in pool.map(block, starts):  # in order: the progress is told from this thread
            _report(progress, f"Nystrom factor: {end:,} of {n:,} rows", end / n)
    return Phi


_TRANSFORMS: dict = {}  # NystromKernel's recent transforms (insertion order: oldest first)


@dataclass(frozen=True)
class NystromKernel(Kernel):
    """The kernel a Nystrom factor stands for, ``k~(x, y) = k(x, Z) W_k^+ k(Z, y)``, as a
    :class:`Kernel` (same fields, plus the landmarks ``Z``).

    Exact leave-one-out tuning (:mod:`core.rls.tuning`) calls ``kernel(X_L)`` and
    ``dataclasses.replace(kernel, width=s)``: with this kernel it tunes the model the
    learner actually runs (``K~_LL = Phi_L Phi_L^T``, rebuilt at each candidate width from the
    same landmarks), not the exact RBF kernel it approximates. Cost per call
    O(|X| m d + m^3).
    """

    landmarks: np.ndarray = dataclass_field(default=None, compare=False, repr=False)
    rtol: float = 1e-10

    @cached_property
    def _base_and_transform(self):
        """The exact kernel and ``T`` of these landmarks at this width. The tuner makes a new
        kernel object for every call (``dataclasses.replace``), so the last few transforms are
        kept per (landmarks object, parameters): an m x m eigendecomposition each."""
        base = Kernel(self.kind, self.width, self.degree, self.coef0)
        key = (id(self.landmarks), self.kind, float(self.width), self.degree, self.coef0, self.rtol)
        hit = _TRANSFORMS.get(key)
        if hit is not None and hit[0] is self.landmarks:
            return base, hit[1]
        T = nystrom_transform(base, self.landmarks, self.rtol, warn=False)
        _TRANSFORMS[key] = (self.landmarks, T)
        while len(_TRANSFORMS) > 32:
            _TRANSFORMS.pop(next(iter(_TRANSFORMS)))
        return base, T

    def features(self, X) -> np.ndarray:
        """The factor rows ``k(X, Z) T`` of the points ``X``, shape (len(X), r)."""
        base, T = self._base_and_transform
        return base(np.asarray(X, dtype=np.float64), self.landmarks) @ T

    def __call__(self, X, Y=None, out=None) -> np.ndarray:
        EX = self.features(X)
        EY = EX if Y is None else self.features(Y)
        K = EX @ EY.T
        if out is not None:
            out[...] = K
            return out
        return K

    def diag(self, X) -> np.ndarray:
        E = self.features(X)
        return np.einsum("ij,ij->i", E, E)


def nystrom_factor(X, kernel, n_landmarks: int, *, method: str = "uniform", rtol: float = 1e-10,
                   seed=0, progress=None) -> np.ndarray:
    """Nystrom factor ``Phi = E U_k diag(s_k)^-1/2`` with ``K ~ E W_k^+ E^T = Phi Phi^T``.

    ``E = k(X, Z)`` (n x m) for landmarks ``Z``, ``W = k(Z, Z) = U diag(s) U^T`` (seed 000
    §4.2.1, eq. 4.2; docs/algorithms.md §5). Eigenvalues of ``W`` at or below ``rtol * s_max`` are
    dropped (with a warning: the landmarks are nearly dependent), which is ``W_k^+`` with ``k``
    the numerical rank. ``Phi`` is built in blocks of rows: memory O(n r + m^2), never n x n.
    With every point a landmark (``n_landmarks = n``, ``method="uniform"``) the factor
    reproduces ``K`` to rounding on its numerical range. This is :func:`nystrom_landmarks`
    followed by :func:`nystrom_map`.

    Parameters
    ----------
    X : array-like of shape (n, d)
    kernel : core.kernels.Kernel
    n_landmarks : int
        ``m``, at most n (uniform) or the number of distinct points (k-means).
    method : {"uniform", "kmeans"}
    rtol : float
        Relative eigenvalue cut-off.
    seed : int or numpy.random.Generator
    progress : callable(message, fraction), optional

    Returns
    -------
    Phi : ndarray of shape (n, r), float64, r <= m
    """
    Z = nystrom_landmarks(X, n_landmarks, method=method, seed=seed)
    return nystrom_map(X, kernel, Z, rtol=rtol, progress=progress)
