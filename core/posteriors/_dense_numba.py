"""Numba kernel of the dense posterior (private): the in-place rank-one update of ``C``."""

from __future__ import annotations

from numba import njit, prange


@njit(parallel=True, fastmath=False, cache=True)
def rank_one_update(C, c, alpha):
    """``C += alpha * c c^T`` in place (docs/algorithms.md §3 add / remove), parallel over rows.

    Written as ``alpha * (c_r * c_z)`` so that a symmetric ``C`` stays exactly symmetric.

    Parameters
    ----------
    C : ndarray of shape (n, n), C-contiguous
    c : ndarray of shape (n,)
        Must not share memory with ``C`` (pass a copy of the column).
    alpha : float
    """
    n = C.shape[0]
    for r in prange(n):
        row = C[r]
        cr = c[r]
        for z in range(n):
            row[z] += alpha * (cr * c[z])
