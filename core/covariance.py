"""Storage of the ARLS posterior covariance ``C = K - K_XL (K_LL + Lambda_L)^-1 K_LX`` (A§3).

:class:`DenseCovariance` keeps ``C`` as one dense (n, n) float64 array and offers exactly the
operations :class:`core.arls.ActiveRLS` needs: entries, rows, the diagonal, rank-one and
low-rank symmetric updates, conditioning on noisy observations (the direct solve used by
``rebuild``) and the fused expected-risk scores of every candidate.

A low-rank store (``K = Phi Phi^T`` from a Nystrom or spectral-graph kernel, A§5, so that
``C = Phi P Phi^T`` with an r x r matrix ``P``) can later replace it by implementing the same
methods: ``ActiveRLS`` never touches the array directly, so its callers do not change.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, solve_triangular
from scipy.linalg.blas import dgemm

from . import _risk_numba
from .risk import expected_risk_reference

__all__ = ["DenseCovariance"]

BACKENDS = ("numba", "numpy")


class DenseCovariance:
    """Dense posterior covariance of an ARLS learner, updated in place.

    Memory: exactly one (n, n) float64 array (``8 n^2`` bytes) plus O(n k) temporaries for a
    k-column update. Built from a kernel it is filled in place by ``kernel(X, out=C)``; built
    from a precomputed kernel matrix it keeps a reference to that matrix (two n x n arrays)
    so that :meth:`reset` can restore the prior.

    Use :meth:`from_kernel` or :meth:`from_matrix`; do not call the constructor directly.

    Notes
    -----
    This is the dense implementation. A low-rank factor ``C = Phi P Phi^T`` (Nystrom,
    spectral kernels; ALGORITHMS §5) can replace it behind the same methods (``diag``,
    ``row``/``rows``, ``block``, ``rank_one_update``, ``low_rank_update``, ``condition``,
    ``reset``, ``expected_risk``) without changing :class:`core.arls.ActiveRLS` or its callers.
    """

    def __init__(self, array: np.ndarray, *, kernel=None, X=None, K=None):
        self._C = array
        self._kernel = kernel
        self._X = X
        self._K = K

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_kernel(cls, kernel, X) -> "DenseCovariance":
        """Prior covariance ``C = k(X, X)``, computed in place in row blocks.

        Parameters
        ----------
        kernel : core.kernels.Kernel
        X : ndarray of shape (n, d), float64
        """
        return cls(kernel(X), kernel=kernel, X=X)

    @classmethod
    def from_matrix(cls, K) -> "DenseCovariance":
        """Prior covariance ``C = K`` (copied); ``K`` is kept, unchanged, for :meth:`reset`.

        Parameters
        ----------
        K : ndarray of shape (n, n), float64, symmetric positive semi-definite
        """
        return cls(np.array(K, dtype=np.float64, order="C", copy=True), K=K)

    def prior_block(self, idx) -> np.ndarray:
        """The prior ``K[idx][:, idx]`` (s x s), from the kept matrix or the kernel; C untouched."""
        idx = np.asarray(idx, dtype=np.int64)
        if self._K is not None:
            return np.asarray(self._K, dtype=np.float64)[np.ix_(idx, idx)]
        return self._kernel(self._X[idx])

    def set_kernel(self, kernel) -> None:
        """Use ``kernel`` for the prior from now on (the next :meth:`reset` fills ``C`` with it).

        Raises
        ------
        ValueError
            If this covariance was built from a fixed matrix (:meth:`from_matrix`).
        """
        if self._X is None:
            raise ValueError(
                "This covariance was built from a precomputed kernel matrix: it cannot evaluate "
                "another kernel. Build a new one with from_matrix(K_new)."
            )
        self._kernel = kernel

    def reset(self) -> None:
        """Overwrite ``C`` with the prior ``K`` in place (no new n x n array)."""
        if self._K is not None:
            np.copyto(self._C, self._K)
        else:
            self._kernel(self._X, out=self._C)

    # ------------------------------------------------------------------ read access
    @property
    def n_samples(self) -> int:
        """Pool size n."""
        return self._C.shape[0]

    @property
    def nbytes(self) -> int:
        """Bytes held by the covariance array."""
        return self._C.nbytes

    def entry(self, i: int, j: int) -> float:
        """``C[i, j]``."""
        return float(self._C[i, j])

    def diag(self) -> np.ndarray:
        """Diagonal of ``C`` (posterior variances of f), ndarray of shape (n,), a copy."""
        return np.diagonal(self._C).copy()

    def row(self, i: int) -> np.ndarray:
        """Row ``i`` (= column ``i``, ``C`` is symmetric), ndarray of shape (n,), a copy."""
        return self._C[i].copy()

    def rows(self, idx) -> np.ndarray:
        """Rows ``idx`` (= columns, transposed), ndarray of shape (k, n), a copy."""
        return self._C[np.asarray(idx, dtype=np.int64)]

    def block(self, idx) -> np.ndarray:
        """``C[idx][:, idx]``, ndarray of shape (k, k)."""
        idx = np.asarray(idx, dtype=np.int64)
        return self._C[np.ix_(idx, idx)]

    def to_array(self) -> np.ndarray:
        """A copy of ``C`` as an (n, n) array (tests and small pools only)."""
        return self._C.copy()

    # ------------------------------------------------------------------ updates
    def rank_one_update(self, c: np.ndarray, alpha: float) -> None:
        """``C += alpha c c^T`` in place (ALGORITHMS §3 add / remove); keeps exact symmetry.

        Parameters
        ----------
        c : ndarray of shape (n,)
            A vector not sharing memory with ``C`` (e.g. from :meth:`row`).
        alpha : float
        """
        _risk_numba.rank_one_update(self._C, np.ascontiguousarray(c, dtype=np.float64), float(alpha))

    def low_rank_update(self, U: np.ndarray, M: np.ndarray) -> None:
        """``C += U M U^T`` in place with one BLAS call (no n x n temporary).

        Parameters
        ----------
        U : ndarray of shape (n, k)
        M : ndarray of shape (k, k), symmetric
        """
        U = np.asarray(U, dtype=np.float64)
        if U.shape[1] == 0:
            return
        if U.shape[1] == 1:
            self.rank_one_update(U[:, 0], float(M[0, 0]))
            return
        W = np.asfortranarray(U @ M)
        U = np.asfortranarray(U)
        # C^T (Fortran view of the C-ordered array) += U W^T == U M U^T, in place
        dgemm(1.0, U, W, beta=1.0, c=self._C.T, trans_b=1, overwrite_c=1)

    def condition(self, idx, noise, residual) -> np.ndarray:
        """Condition on noisy observations at ``idx``: the direct solve behind ``rebuild``.

        ``C <- C - C[:, S] (C_SS + N)^-1 C[S, :]`` and returns the mean shift
        ``C[:, S] (C_SS + N)^-1 residual`` (ALGORITHMS §3; from the prior ``C = K`` this gives
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
            Transposed mean shift, to add to the stored outputs.

        Raises
        ------
        numpy.linalg.LinAlgError
            If ``C_SS + N`` is not positive definite (the kernel is not PSD).
        """
        idx = np.asarray(idx, dtype=np.int64)
        residual = np.asarray(residual, dtype=np.float64)
        if idx.size == 0:
            return np.zeros((residual.shape[1], self.n_samples))
        R = self.rows(idx)  # (s, n) = C[:, S]^T
        A = R[:, idx] + np.diag(np.asarray(noise, dtype=np.float64))
        A = 0.5 * (A + A.T)
        try:
            Lc, lower = cho_factor(A, lower=True, check_finite=True)
        except LinAlgError:
            raise LinAlgError(
                "K_LL + Lambda_L is not positive definite: the kernel matrix is not positive "
                "semi-definite or lam is far too small. Use an RBF kernel or increase lam."
            ) from None
        BT = solve_triangular(Lc, R, lower=True, check_finite=False)  # (s, n) = L^-1 C_SX
        Z = solve_triangular(Lc, residual, lower=True, check_finite=False)  # (s, T)
        shift = Z.T @ BT
        B = np.asfortranarray(BT.T)
        dgemm(-1.0, B, B, beta=1.0, c=self._C.T, trans_b=1, overwrite_c=1)
        return shift

    # ------------------------------------------------------------------ expected risk
    def expected_risk(self, MT, candidates, hypothetical_lam, class_weights, backend="numba"):
        """Expected risk ``E_i`` of each candidate (seed 002 eq. 3.50, ALGORITHMS §3).

        Parameters
        ----------
        MT : ndarray of shape (T, n)
            Current outputs, transposed (T = 1 binary, T = n_classes one-vs-all).
        candidates : ndarray of shape (k,), int64
        hypothetical_lam : ndarray of shape (n_classes,)
            ``lam / w_y`` the candidate would get with label ``y``.
        class_weights : ndarray of shape (n_classes,)
        backend : {"numba", "numpy"}
            Fused O(n^2)-per-step kernel, or the plain reference (:mod:`core.risk`).

        Returns
        -------
        E : ndarray of shape (k,)
        """
        if backend not in BACKENDS:
            raise ValueError(f"backend must be one of {BACKENDS}; got {backend!r}.")
        MT = np.ascontiguousarray(MT, dtype=np.float64)
        cand = np.ascontiguousarray(candidates, dtype=np.int64)
        lam_y = np.asarray(hypothetical_lam, dtype=np.float64)
        w = np.asarray(class_weights, dtype=np.float64)
        out = np.empty(cand.shape[0])
        if cand.size == 0:
            return out
        if backend == "numpy":
            return expected_risk_reference(self._C, MT.T, cand, lam_y, w)
        iw = 1.0 / w
        if MT.shape[0] == 1:
            _risk_numba.expected_risk_binary(
                self._C, MT[0], cand, lam_y[0], lam_y[1], iw[0], iw[1], out
            )
            return out
        if np.all(w == w[0]):
            # equal weights (e.g. "none"): value-only, branch-free fast path, O(n T)
            _risk_numba.expected_risk_multiclass_equal(self._C, MT, cand, lam_y[0], iw[0], out)
            return out
        # group the classes by their hypothetical lambda (one base vector per group)
        group_lam, inverse = np.unique(lam_y, return_inverse=True)
        members = np.argsort(inverse, kind="stable").astype(np.int64)
        start = np.searchsorted(inverse[members], np.arange(group_lam.size + 1)).astype(np.int64)
        _risk_numba.expected_risk_multiclass(
            self._C, MT, cand, group_lam, start, members, iw, out
        )
        return out
