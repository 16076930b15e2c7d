"""Numba kernels of the dense posterior (private): the in-place low-rank update of ``C``.

The held updates of a dense ``C`` are one low-rank correction ``C += U M U^T`` (``U`` n x k,
``M`` symmetric; :mod:`core.posteriors.pending`), written by :func:`apply_update`, or row block
by row block by a kernel that reads ``C`` in the same pass
(:func:`core.criteria._expected_risk_numba.update_and_score_binary`, the next query's scoring):
one pass over ``C`` instead of two. Every row is updated by :func:`update_segment`:

* rank one (``k = 1``, ``M = [[alpha]]``): ``C_rz += alpha * (c_r * c_z)``, which keeps a
  symmetric ``C`` exactly symmetric;
* rank k: ``C_rz += V_r0 c0_z + V_r1 c1_z + ...`` (added one term at a time, in order).
"""

from __future__ import annotations

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
