"""Numba kernels of the dense posterior (private): the in-place low-rank update of ``C``.

Every update of ``C`` is ``C += U M U^T`` with ``U = C[:, S]`` (n x k, taken before the update)
and a small symmetric ``M`` (docs/algorithms.md §3). :class:`core.posteriors.DensePosterior`
keeps it pending (``U^T``, and ``V = U M`` for k > 1) until ``C`` is read, so that the next
query's scoring can apply it row by row while each row is in cache
(:func:`core.criteria._expected_risk_numba.update_and_score_binary`): one pass over ``C``
instead of two. Every entry of an updated ``C`` is computed by :func:`updated_entry`'s
arithmetic, in the same order whichever kernel computes it (whole rows, a block of
columns, one entry), so a value read before the update is applied equals, to the bit, the one
stored after.

* rank one (``k = 1``, ``M = [[alpha]]``): ``C_rz += alpha * (c_r * c_z)``, which keeps a
  symmetric ``C`` exactly symmetric;
* rank k: ``C_rz += V_r0 c0_z + V_r1 c1_z + ...`` (added one term at a time, in order).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

#: Columns of one tile: the k x TILE block of ``U^T`` a block of rows shares stays in cache.
TILE = 1024
#: Rows updated together (they share each tile of ``U^T``; 8 rows of 2x10^4 points fill a
#: fraction of a core's 2 MB L2, where a fused scoring reads them next).
ROW_BLOCK = 8


@njit(inline="always")
def update_segment(row, r, UT, V, alpha, z0, z1):
    """``row[z0:z1] += (U M U^T)[r, z0:z1]`` in place (the module docstring's arithmetic).

    Parameters
    ----------
    row : ndarray of shape (n,)
        Row ``r`` of ``C`` before the update (changed in place).
    r : int
    UT : ndarray of shape (k, n)
        ``U^T = C[S, :]`` before the update.
    V : ndarray of shape (n, k)
        ``U M`` (unused when k = 1).
    alpha : float
        ``M[0, 0]`` when k = 1.
    z0, z1 : int
        The columns to update.
    """
    k = UT.shape[0]
    if k == 1:
        ut = UT[0]
        cr = ut[r]
        for z in range(z0, z1):
            row[z] += alpha * (cr * ut[z])
        return
    for b in range(k):
        vb = V[r, b]
        ut = UT[b]
        for z in range(z0, z1):
            row[z] += vb * ut[z]


@njit(inline="always")
def update_row_block(C, UT, V, alpha, r0, r1):
    """Rows ``r0:r1`` of ``C`` updated in place, tile by tile of :data:`TILE` columns."""
    n = C.shape[1]
    for z0 in range(0, n, TILE):
        z1 = min(n, z0 + TILE)
        for r in range(r0, r1):
            update_segment(C[r], r, UT, V, alpha, z0, z1)


@njit(parallel=True, fastmath=False, cache=True)
def apply_update(C, UT, V, alpha):
    """``C += U M U^T`` in place, parallel over blocks of :data:`ROW_BLOCK` rows.

    Parameters
    ----------
    C : ndarray of shape (n, n), C-contiguous
    UT : ndarray of shape (k, n), C-contiguous
        ``C[S, :]`` before the update (must not share memory with ``C``).
    V : ndarray of shape (n, k), C-contiguous
        ``U M`` (k > 1; any 2-D array when k = 1).
    alpha : float
        ``M[0, 0]`` (k = 1).
    """
    n = C.shape[0]
    n_blocks = (n + ROW_BLOCK - 1) // ROW_BLOCK
    for blk in prange(n_blocks):
        r0 = blk * ROW_BLOCK
        update_row_block(C, UT, V, alpha, r0, min(n, r0 + ROW_BLOCK))


@njit(cache=True)
def updated_entries(C, UT, V, alpha, rows, cols):
    """``(C + U M U^T)[rows][:, cols]`` without changing ``C``, shape (len(rows), len(cols)).

    The same arithmetic as :func:`apply_update`, entry by entry (bit for bit what ``C`` holds
    once the update is applied).
    """
    k = UT.shape[0]
    out = np.empty((rows.shape[0], cols.shape[0]))
    for a in range(rows.shape[0]):
        r = rows[a]
        for c in range(cols.shape[0]):
            z = cols[c]
            x = C[r, z]
            if k == 1:
                x += alpha * (UT[0, r] * UT[0, z])
            else:
                for b in range(k):
                    x += V[r, b] * UT[b, z]
            out[a, c] = x
    return out


@njit(parallel=True, fastmath=False, cache=True)
def updated_diagonal(C, UT, V, alpha, idx):
    """``diag(C + U M U^T)[idx]`` without changing ``C``, shape (len(idx),) (O(len(idx) k))."""
    k = UT.shape[0]
    out = np.empty(idx.shape[0])
    for a in prange(idx.shape[0]):
        r = idx[a]
        x = C[r, r]
        if k == 1:
            x += alpha * (UT[0, r] * UT[0, r])
        else:
            for b in range(k):
                x += V[r, b] * UT[b, r]
        out[a] = x
    return out


@njit(parallel=True, fastmath=False, cache=True)
def updated_rows(C, UT, V, alpha, rows):
    """``(C + U M U^T)[rows, :]`` without changing ``C``, shape (len(rows), n)."""
    n = C.shape[1]
    out = np.empty((rows.shape[0], n))
    for a in prange(rows.shape[0]):
        out[a] = C[rows[a]]
        update_segment(out[a], rows[a], UT, V, alpha, 0, n)
    return out
