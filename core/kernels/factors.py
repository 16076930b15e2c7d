"""Low-rank kernel factors ``Phi`` with ``K ~ Phi Phi^T`` (ALGORITHMS §8).

A factor turns kernel RLS on n points into ridge regression in r dimensions: the posterior
keeps an r x r matrix instead of an n x n one (:class:`core.posteriors.FactorPosterior`).
Nystrom and spectral-graph factors (seeds 000, 004) build ``Phi`` without ever forming ``K``;
:func:`eigen_factor` is the exact reference used by the conformance tests.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..validation import check_features

__all__ = ["eigen_factor"]

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
