"""The updates of a dense posterior not yet applied to its array, as one low-rank correction.

:class:`core.posteriors.DensePosterior` stores ``C_base`` (its n x n array) and keeps the updates
since it last wrote that array as

    C = C_base + B N B^T,    B = C_base[:, J]   (n x p),   N symmetric (p x p)

for the set ``J`` of the points the updates touched (docs/algorithms.md §19). Every ARLS update
``C += C[:, S] M C[S, :]`` stays in that form: after the points of ``S`` not in ``J`` join it
(their base columns appended to ``B``), ``C[:, S] = B (E_S + N B[S]^T) = B P`` (``E_S`` picks
``S`` out of ``J``), so ``N <- N + P M P^T``: O(p^2 |S|) and O(n) per new point, where
writing the update into ``C_base`` costs O(n^2 |S|). Under "balanced" weights every label
changes the weight of every other label, ``|S| = |L| + 1``, and the n x n array is written only
when it is read as a whole (the correction is its rank-p update ``C_base += B (N B^T)``: one
BLAS call, or for rank one the next expected-risk scoring in the same pass), not on every key
press.

``B`` is held transposed, ``B^T = C_base[J, :]`` (rows of the symmetric base), in a buffer that
grows by doubling.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg.blas import dgemm

from . import _dense_numba

__all__ = ["PendingCorrection"]


class PendingCorrection:
    """``B N B^T`` for ``B = C_base[:, J]``: the updates of a dense ``C`` not yet written.

    Parameters
    ----------
    n_samples : int

    Attributes
    ----------
    size : int
        ``p = |J|``, the rank of the correction (0: nothing pending).
    largest_step : int
        The largest ``|S|`` of the updates it holds.
    """

    def __init__(self, n_samples: int):
        self.n_samples = int(n_samples)
        self._buf = np.empty((0, self.n_samples))  # rows 0..p-1: B^T = C_base[J, :]
        self._where = np.full(self.n_samples, -1, dtype=np.int64)  # position in J, -1 outside
        self.J = np.empty(0, dtype=np.int64)
        self.N = np.zeros((0, 0))
        self.largest_step = 0

    @property
    def size(self) -> int:
        return int(self.J.size)

    @property
    def BT(self) -> np.ndarray:
        """``B^T = C_base[J, :]``, ndarray of shape (p, n), C-contiguous (a view)."""
        return self._buf[: self.size]

    def clear(self) -> None:
        """Nothing pending (after the correction was written into ``C_base``, or ``C_base`` reset)."""
        self._where[self.J] = -1
        self.J = np.empty(0, dtype=np.int64)
        self.N = np.zeros((0, 0))
        self.largest_step = 0

    def rows(self, idx: np.ndarray) -> np.ndarray:
        """``B[idx] = C_base[idx, J]``, ndarray of shape (len(idx), p) (read from ``B^T``)."""
        return self.BT[:, idx].T

    def add(self, base: np.ndarray, idx: np.ndarray, M: np.ndarray) -> None:
        """Hold ``C += C[:, idx] M C[idx, :]`` too (``C`` the base plus this correction).

        Parameters
        ----------
        base : ndarray of shape (n, n)
            ``C_base`` (its rows of the points new to ``J`` are copied).
        idx : ndarray of shape (k,), int64, distinct
        M : ndarray of shape (k, k), symmetric
        """
        new = idx[self._where[idx] < 0]
        p0, p = self.size, self.size + new.size
        if p > self._buf.shape[0]:
            buf = np.empty((max(p, 2 * self._buf.shape[0], 8), self.n_samples))
            buf[:p0] = self._buf[:p0]
            self._buf = buf
        self._buf[p0:p] = base[new]
        self._where[new] = np.arange(p0, p, dtype=np.int64)
        self.J = np.concatenate([self.J, new])
        N = np.zeros((p, p))
        N[:p0, :p0] = self.N
        P = N @ self.BT[:, idx]  # (p, k): C[:, idx] = B (E_idx + N B[idx]^T)
        P[self._where[idx], np.arange(idx.size)] += 1.0
        N += P @ M @ P.T
        self.N = 0.5 * (N + N.T)
        self.largest_step = max(self.largest_step, int(idx.size))

    def write(self, C: np.ndarray) -> None:
        """``C += B N B^T`` in place (``C`` the base), then nothing is held.

        Rank one: the numba kernel (:func:`core.posteriors._dense_numba.rank_one_update`, which
        keeps a symmetric ``C`` exactly symmetric); rank p: one BLAS call (``dgemm`` on ``C^T``,
        no n x n temporary).
        """
        p = self.size
        if p == 1:
            _dense_numba.rank_one_update(C, np.ascontiguousarray(self.BT[0]), float(self.N[0, 0]))
        elif p > 1:
            BT = self.BT
            WT = self.N @ BT  # (p, n); W = B N
            # C^T (Fortran view of the C-ordered array) += B W^T == B N B^T, in place
            dgemm(1.0, BT.T, WT.T, beta=1.0, c=C.T, trans_b=1, overwrite_c=1)
        self.clear()

    def rank_one(self) -> tuple[np.ndarray, float] | None:
        """``(c, alpha)`` with ``B N B^T = alpha c c^T`` when one point is held, else None."""
        if self.size != 1:
            return None
        return self.BT[0], float(self.N[0, 0])

    def diagonal(self, idx: np.ndarray | None) -> np.ndarray:
        """``diag(B N B^T)`` at ``idx`` (all points when None), O(len(idx) p^2)."""
        Bi = self.BT.T if idx is None else self.rows(idx)
        return np.einsum("ij,ij->i", Bi @ self.N, Bi)

    def cross(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """``(B N B^T)[rows][:, cols]``, shape (len(rows), len(cols))."""
        return (self.rows(rows) @ self.N) @ self.rows(cols).T

    def combined_rows(self, idx: np.ndarray, W: np.ndarray) -> np.ndarray:
        """``W^T (B N B^T)[idx, :]``, shape (t, n), for ``W`` of shape (len(idx), t): O(p (t n + p |idx|))."""
        return ((W.T @ self.rows(idx)) @ self.N) @ self.BT
