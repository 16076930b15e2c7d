"""Dense storage of the ARLS posterior covariance: one (n, n) float64 array, updated in place.

Implements :class:`core.posteriors.base.Posterior`. Memory: exactly one n x n array
(``8 n^2`` bytes) plus O(n k) temporaries for a k-column update. Built from a kernel it is
filled in place by ``kernel(X, out=C)``; built from a precomputed kernel matrix it keeps a
reference to that matrix (two n x n arrays) so that :meth:`DensePosterior.reset` can restore
the prior.

The updates ``C += C[:, S] M C[S, :]`` are held as one low-rank correction (:mod:`.pending`)
until ``C`` is read as a whole: the next query's binary scoring writes them in the same pass
over ``C`` (:meth:`DensePosterior.apply_pending`), any other whole read first
(:meth:`DensePosterior.settle`); the reads of a few rows or entries in between add the
correction.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, solve_triangular
from scipy.linalg.blas import dgemm

from .base import DEFAULT_BLOCK_BYTES, CandidateBlock
from .pending import PendingCorrection

__all__ = ["DensePosterior", "SETTLE_FLOOR", "MAX_PENDING"]

#: The pending correction is written into C before it would exceed this rank (memory: p n doubles)
MAX_PENDING = 256
#: ... or this rank, unless one update alone had half of it (then writing C gains nothing: under
#: "balanced" weights every label touches every other). Writing a rank-16 correction costs about
#: what one rank-one update costs (one pass over C, bound by memory), so a run of rank-one
#: updates (weights fixed, the margin strategy) writes C once every 16 labels.
SETTLE_FLOOR = 16

NOT_PD_MESSAGE = (
    "K_LL + Lambda_L is not positive definite: the kernel matrix is not positive "
    "semi-definite or lam is far too small. Use an RBF kernel or increase lam."
)


def _as_index(idx) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(idx, dtype=np.int64).reshape(-1))


class DensePosterior:
    """Dense posterior covariance ``C`` of an ARLS learner (docs/algorithms.md §3).

    Use :meth:`from_kernel` or :meth:`from_matrix`; do not call the constructor directly.

    Attributes
    ----------
    n_samples : int
    kernel : core.kernels.Kernel or None
        The kernel the prior is computed with (None when built from a matrix).
    """

    def __init__(self, array: np.ndarray, *, kernel=None, X=None, K=None):
        self._C = array
        self.kernel = kernel
        self._X = X
        self._K = K
        self.n_samples = array.shape[0]
        self._pending = PendingCorrection(array.shape[0])  # updates not yet written into C
        if K is not None:
            self._prior_diag = np.diagonal(K).astype(np.float64, copy=True)
        else:
            self._prior_diag = np.asarray(kernel.diag(X), dtype=np.float64)

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_kernel(cls, kernel, X) -> "DensePosterior":
        """Prior covariance ``C = k(X, X)``, computed in place in row blocks.

        Parameters
        ----------
        kernel : core.kernels.Kernel
        X : ndarray of shape (n, d), float64
        """
        return cls(kernel(X), kernel=kernel, X=X)

    @classmethod
    def from_matrix(cls, K) -> "DensePosterior":
        """Prior covariance ``C = K`` (copied); ``K`` is kept, unchanged, for :meth:`reset`.

        Parameters
        ----------
        K : ndarray of shape (n, n), float64, symmetric positive semi-definite
        """
        return cls(np.array(K, dtype=np.float64, order="C", copy=True), K=K)

    @property
    def features(self):
        """The pool features ``X`` (n, d) the kernel is evaluated on, or None."""
        return self._X

    def set_kernel(self, kernel) -> None:
        """Use ``kernel`` for the prior from now on (the next :meth:`reset` fills ``C`` with it).

        Raises
        ------
        ValueError
            If this posterior was built from a fixed matrix (:meth:`from_matrix`).
        """
        if self._X is None:
            raise ValueError(
                "This learner was built from a precomputed kernel matrix (from_kernel), so it "
                "cannot evaluate a new kernel; build a new learner with ActiveRLS.from_kernel(K_new)."
            )
        self._prior_diag = np.asarray(kernel.diag(self._X), dtype=np.float64)
        self.kernel = kernel

    # ------------------------------------------------------------------ read access
    @property
    def array(self) -> np.ndarray:
        """The covariance array itself as a read-only view (benchmarks read it directly);
        a pending update is applied first."""
        self.settle()
        view = self._C.view()
        view.flags.writeable = False
        return view

    @property
    def nbytes(self) -> int:
        """Bytes held by the covariance array."""
        return self._C.nbytes

    def diag(self, idx=None) -> np.ndarray:
        """``C_ii`` (posterior variances of f), ndarray of shape (n,) or (k,), a copy."""
        d = np.diagonal(self._C)
        idx = None if idx is None else _as_index(idx)
        d = d.copy() if idx is None else d[idx]
        if self._pending.size:
            d += self._pending.diagonal(idx)
        return d

    def prior_diag(self) -> np.ndarray:
        """``K_ii``, ndarray of shape (n,), a copy."""
        return self._prior_diag.copy()

    def block(self, idx) -> np.ndarray:
        """``C[idx][:, idx]``, ndarray of shape (k, k)."""
        idx = _as_index(idx)
        return self.cross(idx, idx)

    def cross(self, rows, cols) -> np.ndarray:
        """``C[rows][:, cols]``, ndarray of shape (k, m)."""
        rows, cols = _as_index(rows), _as_index(cols)
        out = self._C[np.ix_(rows, cols)]
        if self._pending.size:
            out += self._pending.cross(rows, cols)
        return out

    def prior_block(self, idx) -> np.ndarray:
        """``K[idx][:, idx]`` (k, k), from the kept matrix or the kernel; ``C`` untouched."""
        idx = _as_index(idx)
        if self._K is not None:
            return np.asarray(self._K, dtype=np.float64)[np.ix_(idx, idx)]
        return self.kernel(self._X[idx])

    def columns(self, idx) -> np.ndarray:
        """``C[idx, :]`` (= ``C[:, idx]^T``, ``C`` is symmetric), ndarray of shape (k, n), a copy."""
        idx = _as_index(idx)
        out = self._C[idx]
        if self._pending.size:
            out += self._pending.combined_rows(idx, np.eye(idx.size))
        return out

    def combine(self, idx, W) -> np.ndarray:
        """``W^T C[idx, :]``, ndarray of shape (t, n), for ``W`` of shape (k, t)."""
        idx = _as_index(idx)
        W = np.asarray(W, dtype=np.float64).reshape(idx.size, -1)
        out = np.outer(W[0], self._C[idx[0]]) if idx.size == 1 else W.T @ self._C[idx]
        if self._pending.size:
            out += self._pending.combined_rows(idx, W)
        return out

    def candidate_blocks(self, candidates, max_bytes: int = DEFAULT_BLOCK_BYTES) -> Iterator[CandidateBlock]:
        """One block: ``C`` itself with ``rows = candidates`` (zero copy; a pending update is
        applied first)."""
        cand = _as_index(candidates)
        self.settle()
        yield CandidateBlock(self._C, cand, cand)

    def rebuild_is_cheaper(self, n_changed: int) -> bool:
        """Never: a dense rebuild costs a kernel evaluation plus O(n^2 |L|); a block O(n^2 k)."""
        return False

    def to_array(self) -> np.ndarray:
        """A copy of ``C`` as an (n, n) array (tests and small pools only)."""
        self.settle()
        return self._C.copy()

    # ------------------------------------------------------------------ updates
    def update(self, idx, M) -> None:
        """``C += C[:, idx] M C[idx, :]``, held in the pending correction (:mod:`.pending`).

        O(p^2 k) and O(n) per point new to the correction (p its rank); the n x n array is
        written when it is read as a whole: :meth:`apply_pending` (a rank-one update, by the next
        query's scoring in the same pass over ``C``), :meth:`settle` (every other whole read), or here before
        the correction would exceed :data:`MAX_PENDING`, or :data:`SETTLE_FLOOR` while its
        updates are small. Every read returns the updated values (equal to those written, to
        rounding).

        Parameters
        ----------
        idx : array-like of int, shape (k,), distinct
        M : array-like of shape (k, k), symmetric
        """
        idx = _as_index(idx)
        if idx.size == 0:
            return
        M = np.asarray(M, dtype=np.float64).reshape(idx.size, idx.size)
        pend = self._pending
        if pend.size:
            rank = pend.size + int(np.count_nonzero(~np.isin(idx, pend.J)))
            step = max(pend.largest_step, idx.size)
            if rank > MAX_PENDING or (rank > SETTLE_FLOOR and 2 * step < rank):
                self.settle()
        pend.add(self._C, idx, 0.5 * (M + M.T))

    @property
    def has_pending(self) -> bool:
        """Whether updates are held and not yet written into the array (:meth:`update`)."""
        return self._pending.size > 0

    @property
    def pending_rank(self) -> int:
        """The rank of the held correction (0: the array is ``C``)."""
        return self._pending.size

    def settle(self) -> None:
        """Write the held updates into ``C`` (one parallel pass; nothing when none is held)."""
        self._pending.write(self._C)

    def apply_pending(self, apply) -> bool:
        """Hand a held rank-one update to ``apply``, which writes it into ``C`` while reading ``C``.

        For a kernel that reads every row of ``C`` anyway (the next query's scoring,
        :func:`core.criteria._expected_risk_numba.update_and_score_binary`): it updates each
        block of rows with :func:`core.posteriors._dense_numba.update_row` and reads it while it
        is in cache, so the update and the read are one pass over ``C``. A correction of rank
        > 1 is not handed over (its write is bound by arithmetic, which one BLAS call does
        best: :meth:`settle`).

        Parameters
        ----------
        apply : callable
            ``apply(C, c, alpha)`` for ``C += alpha c c^T``; it must update every row of ``C``
            with ``update_row``, or raise before writing any.

        Returns
        -------
        bool
            False (``apply`` not called) when no rank-one update is held.
        """
        held = self._pending.rank_one()
        if held is None:
            return False
        c, alpha = held
        apply(self._C, np.ascontiguousarray(c), alpha)
        self._pending.clear()
        return True

    def condition(self, idx, noise, residual) -> np.ndarray:
        """Condition on noisy observations at ``idx``: the direct solve behind ``rebuild``.

        ``C <- C - C[:, S] (C_SS + N)^-1 C[S, :]`` and returns the mean shift
        ``C[:, S] (C_SS + N)^-1 residual`` (docs/algorithms.md §3; from the prior ``C = K`` this gives
        ``V = K_XL (K_LL + Lambda_L)^-1 K_LX`` and ``m = K_XL (K_LL + Lambda_L)^-1 Y_L``).
        Uses a Cholesky factor ``C_SS + N = L L^T`` and ``B = C[:, S] L^-T``, so that the
        update is ``C -= B B^T`` (one BLAS call, in place).

        Parameters
        ----------
        idx : array-like of int, shape (s,)
        noise : ndarray of shape (s,)
            Per-point ``lambda_j > 0``.
        residual : ndarray of shape (s, T)
            Targets minus current outputs at ``idx``.

        Returns
        -------
        shift : ndarray of shape (T, n)

        Raises
        ------
        numpy.linalg.LinAlgError
            If ``C_SS + N`` is not positive definite (state unchanged).
        """
        idx = _as_index(idx)
        residual = np.asarray(residual, dtype=np.float64).reshape(idx.size, -1)
        if idx.size == 0:
            return np.zeros((residual.shape[1], self.n_samples))
        self.settle()
        R = self._C[idx]  # (s, n) = C[:, S]^T
        A = R[:, idx] + np.diag(np.asarray(noise, dtype=np.float64))
        try:
            Lc, _ = cho_factor(0.5 * (A + A.T), lower=True, check_finite=True)
        except (LinAlgError, ValueError):
            raise LinAlgError(NOT_PD_MESSAGE) from None
        BT = solve_triangular(Lc, R, lower=True, check_finite=False)  # (s, n) = L^-1 C_SX
        Z = solve_triangular(Lc, residual, lower=True, check_finite=False)  # (s, T)
        shift = Z.T @ BT
        B = np.asfortranarray(BT.T)
        dgemm(-1.0, B, B, beta=1.0, c=self._C.T, trans_b=1, overwrite_c=1)
        return shift

    def reset(self) -> None:
        """Overwrite ``C`` with the prior ``K`` in place (no new n x n array); a pending update
        is dropped."""
        self._pending.clear()
        if self._K is not None:
            np.copyto(self._C, self._K)
        else:
            self.kernel(self._X, out=self._C)
