"""Numba kernels of the dense posterior (private): the in-place low-rank update of ``C``.

The held updates of a dense ``C`` are one low-rank correction ``C += U M U^T`` (``U`` n x k,
``M`` symmetric; :mod:`core.posteriors.pending`), written by :func:`apply_update`, or row block
by row block by a kernel that reads ``C`` in the same pass
(:func:`core.criteria._expected_risk_numba.update_and_score_binary`, the next query's scoring):
one pass over ``C`` instead of two. Every row is updated by :func:`update_segment`:

* rank one (``k = 1``, ``M = [[alpha]]``): ``C_rz += alpha * (c_r * c_z)``, which keeps a
  symmetric ``C`` exactly symmetric;
* rank k: ``C_rz += V_r0 c0_z + V_r1 c1_z + ...`` (``V = U M``; four terms at a time).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

#: Columns of one tile: the k x TILE block of ``U^T`` a block of rows shares stays in cache
#: (the four rows of ``U^T`` one sweep reads, 4 x 8 kB, in a core's L1).
TILE = 1024
#: Rows updated together (they share each tile of ``U^T``; 8 rows of 2x10^4 points fill a
#: fraction of a core's 2 MB L2, where a fused scoring reads them next).
ROW_BLOCK = 8


# Inlined into core/criteria/_expected_risk_numba.py too: numba's on-disk cache of a function
# follows its own file only, so after a change here delete that module's cached kernels
# (core/criteria/__pycache__/_expected_risk_numba*.nb*) or the fused scoring keeps the old body.
@njit(inline="always")
def update_segment(row, r, UT, V, alpha, z0, z1):
    """``row[z0:z1] += (U M U^T)[r, z0:z1]`` in place (the module docstring's arithmetic).

    Rank k > 1: the terms are added four at a time, ``row_z += (V_r0 c0_z + V_r1 c1_z) +
    (V_r2 c2_z + V_r3 c3_z)``, then one at a time: one load and one store of ``row`` per four
    products (the loop is bound by memory operations, not arithmetic).

    Parameters
    ----------
    row : ndarray of shape (n,)
        Row ``r`` of ``C`` before the update (changed in place).
    r : int
    UT : ndarray of shape (k, n)
        ``U^T``: row ``b`` is the b-th column of ``U`` (``C[S, :]`` before the update).
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
    b = 0
    while b + 4 <= k:
        v0, v1, v2, v3 = V[r, b], V[r, b + 1], V[r, b + 2], V[r, b + 3]
        u0, u1, u2, u3 = UT[b], UT[b + 1], UT[b + 2], UT[b + 3]
        for z in range(z0, z1):
            row[z] += (v0 * u0[z] + v1 * u1[z]) + (v2 * u2[z] + v3 * u3[z])
        b += 4
    while b < k:
        vb = V[r, b]
        ut = UT[b]
        for z in range(z0, z1):
            row[z] += vb * ut[z]
        b += 1


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


@njit(parallel=True, fastmath=False, cache=True)
def weighted_columns(UT, M):
    """``V = U M`` (n x k) for ``U^T`` (k, n) and ``M`` (k, k), in a fixed order of summation
    (a BLAS product may round differently with the alignment of its arguments), parallel over
    the n rows."""
    k, n = UT.shape
    V = np.zeros((n, k))
    for r in prange(n):
        for a in range(k):
            u = UT[a, r]
            for b in range(k):
                V[r, b] += u * M[a, b]
    return V
