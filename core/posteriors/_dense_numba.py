"""Numba kernels of the dense posterior (private): the in-place rank-one update of ``C``.

``C += alpha c c^T`` (docs/algorithms.md §3 add / remove), written as ``alpha * (c_r * c_z)`` so
that a symmetric ``C`` stays exactly symmetric, by :func:`rank_one_update` (parallel over rows)
or row block by row block by a kernel that reads ``C`` in the same pass
(:func:`core.criteria._expected_risk_numba.update_and_score_binary`, the next query's scoring:
one pass over ``C`` instead of two). Both update a row with :func:`update_row`, so they store
the same bits. A held correction of rank > 1 is written by one BLAS call
(:meth:`core.posteriors.DensePosterior.settle`): that write is bound by arithmetic, and one
BLAS thread did it 2-6 times faster than a numba loop on both cores.
"""

from __future__ import annotations

from numba import njit, prange

#: Rows updated, then read, together by a fused kernel (8 rows of 2x10^4 points: 1.3 MB, in a
#: core's L2 cache when they are read).
ROW_BLOCK = 8


# Inlined into core/criteria/_expected_risk_numba.py too: numba's on-disk cache of a function
# follows its own file only, so after a change here delete that module's cached kernels
# (core/criteria/__pycache__/_expected_risk_numba*.nb*) or the fused scoring keeps the old body.
@njit(inline="always")
def update_row(row, r, c, alpha):
    """``row += alpha * c[r] * c`` in place, as ``alpha * (c[r] * c[z])``.

    Parameters
    ----------
    row : ndarray of shape (n,)
        Row ``r`` of ``C`` (changed in place).
    r : int
    c : ndarray of shape (n,)
        ``C[S, :]`` before the update, ``S = {j}`` (must not share memory with ``C``).
    alpha : float
    """
    cr = c[r]
    for z in range(row.shape[0]):
        row[z] += alpha * (cr * c[z])


@njit(parallel=True, fastmath=False, cache=True)
def rank_one_update(C, c, alpha):
    """``C += alpha * c c^T`` in place (docs/algorithms.md §3 add / remove), parallel over rows.

    Parameters
    ----------
    C : ndarray of shape (n, n), C-contiguous
    c : ndarray of shape (n,)
        Must not share memory with ``C`` (pass a copy of the column).
    alpha : float
    """
    n = C.shape[0]
    for r in prange(n):
        update_row(C[r], r, c, alpha)
