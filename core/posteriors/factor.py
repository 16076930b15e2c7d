"""Low-rank posterior ``C = Phi P Phi^T`` for a factored kernel ``K = Phi Phi^T`` (docs/algorithms.md §8).

Implements :class:`core.posteriors.base.Posterior` with an n x r factor ``Phi`` (Nystrom,
spectral graph kernel, any feature map) and an r x r matrix ``P``, the posterior covariance
of the weights ``beta`` in ``f(x) = phi(x)^T beta`` (prior ``P = I``)::

    P^-1 = I_r + Phi_L^T Lambda_L^-1 Phi_L              C = Phi P Phi^T   (never formed)

Every ARLS step ``C <- C + C[:, S] M C[S, :]`` becomes ``P <- P + A M A^T`` with
``A = P Phi_S^T`` (r x |S|): O(r^2 |S|), no n anywhere. Reading a column of ``C`` costs
O(n r); the mean updates of the learner (``m += C[:, S] W``) cost O(n r T). Memory: ``Phi``
(8 n r bytes) + ``P``. With a full-rank factor (``r = n``, e.g. :func:`core.kernels.eigen_factor`)
every number equals the dense posterior's to rounding: the conformance suite checks it.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from ..validation import check_features
from .base import DEFAULT_BLOCK_BYTES, CandidateBlock
from .dense import NOT_PD_MESSAGE, _as_index

__all__ = ["FactorPosterior", "NystromPosterior", "ROW_BLOCK"]

#: Rows of the factor per block of a threaded product (:meth:`FactorPosterior.times_factor`):
#: a multiple of the row groups BLAS kernels work on, so that every row is computed as in one
#: call over all of them.
ROW_BLOCK = 4096


class FactorPosterior:
    """Posterior covariance ``C = Phi P Phi^T`` of an ARLS learner on a factored kernel.

    Parameters
    ----------
    Phi : array-like of shape (n, r)
        Kernel factor, ``K = Phi Phi^T``; finite. Copied (C-contiguous float64).
    copy : bool, default True
        False: a C-contiguous float64 ``Phi`` is taken over, not copied.
    row_norms : array-like of shape (n,), optional
        ``|phi_i|^2`` of these rows, computed before (``einsum("ij,ij->i", Phi, Phi)``) and
        kept with the factor; default computed here. Finiteness is checked on them.

    Attributes
    ----------
    n_samples, rank : int
    kernel : None
        A factor posterior has no kernel function (the factor is the kernel).
    """

    kernel = None
    features = None
    #: Threads sharing the O(n r) products with the factor (:meth:`combine`, :meth:`columns`,
    #: the mean shift of :meth:`condition`); set it on an instance (the session: its block
    #: threads). Each thread takes whole blocks of :data:`ROW_BLOCK` rows.
    threads = 1

    def __init__(self, Phi, copy: bool = True, row_norms=None):
        # finiteness is checked on the row norms below (one pass over Phi instead of two and no
        # n x r temporary: 2.4 GB at 10^6 points, rank 300)
        Phi = check_features(Phi, name="Phi", min_samples=1, finite=False)
        # copy=False takes a C-contiguous float64 Phi over (no second n x r array at 10^6 points)
        self._Phi = np.array(Phi, dtype=np.float64, order="C", copy=True if copy else None)
        self._set_factor_shape(row_norms)
        self._check_finite()

    def _check_finite(self) -> None:
        """ValueError when ``Phi`` holds NaN or infinity (as :func:`core.validation.check_features`
        says it) or when a row's squared norm overflows: any such row has a non-finite
        ``K_ii = |phi_i|^2``, so only those rows are looked at."""
        bad = np.flatnonzero(~np.isfinite(self._prior_diag))
        if bad.size == 0:
            return
        rows = self._Phi[bad]
        if not np.isfinite(rows).all():
            r, c = (int(v[0]) for v in np.nonzero(~np.isfinite(rows)))
            n_bad = int((~np.isfinite(rows)).sum())
            raise ValueError(
                f"Phi contains {n_bad} NaN or infinite value(s), first at row {int(bad[r])}, column {c}. "
                "Impute or drop those rows before fitting."
            )
        raise ValueError(
            f"Phi's row {int(bad[0])} has a squared norm beyond float64 ({bad.size} such rows): scale the "
            "factor down."
        )

    def _set_factor_shape(self, row_norms=None) -> None:
        """``n_samples``, ``rank``, ``P = I`` and the squared row norms ``K_ii = |phi_i|^2``:
        ``row_norms`` when given (of shape (n,): computed so from this ``Phi`` before and kept,
        e.g. with a cached factor; one pass over a 2.4 GB factor saved), else computed."""
        self.n_samples, self.rank = self._Phi.shape
        self._P = np.eye(self.rank)
        self._column_sums = None
        if row_norms is not None:
            row_norms = np.asarray(row_norms, dtype=np.float64)
            if row_norms.shape != (self.n_samples,):
                raise ValueError(f"row_norms must have shape ({self.n_samples},), one per row of Phi; "
                                 f"got {row_norms.shape}.")
            self._prior_diag = np.array(row_norms)
        else:
            self._prior_diag = np.einsum("ij,ij->i", self._Phi, self._Phi)

    @property
    def factor(self) -> np.ndarray:
        """``Phi`` (n, r), read only."""
        view = self._Phi.view()
        view.flags.writeable = False
        return view

    @property
    def weight_covariance(self) -> np.ndarray:
        """``P`` (r, r), a copy."""
        return self._P.copy()

    # ------------------------------------------------------------------ read access
    @property
    def nbytes(self) -> int:
        """Bytes held by ``Phi`` and ``P``."""
        return self._Phi.nbytes + self._P.nbytes

    def diag(self, idx=None) -> np.ndarray:
        """``C_ii = phi_i^T P phi_i``, ndarray of shape (n,) or (k,)."""
        if idx is not None:
            F = self._Phi[_as_index(idx)]
            return np.einsum("ij,ij->i", F @ self._P, F)
        out = np.empty(self.n_samples)
        step = max(1, DEFAULT_BLOCK_BYTES // (8 * max(self.rank, 1)))
        for a in range(0, self.n_samples, step):
            F = self._Phi[a:a + step]
            out[a:a + step] = np.einsum("ij,ij->i", F @ self._P, F)
        return out

    def prior_diag(self) -> np.ndarray:
        """``K_ii = |phi_i|^2``, ndarray of shape (n,), a copy."""
        return self._prior_diag.copy()

    def column_sums(self) -> np.ndarray:
        """``sum_i phi_i`` = ``Phi.sum(axis=0)``, ndarray of shape (r,), a copy: one pass over the
        n x r factor when first asked, then kept with the factor (the same bits every time; the
        mean kernel similarity to a set of points is this minus the few rows outside the set)."""
        if self._column_sums is None:
            self._column_sums = self._Phi.sum(axis=0)
        return self._column_sums.copy()

    def block(self, idx) -> np.ndarray:
        """``C[idx][:, idx] = Phi_S P Phi_S^T``, ndarray of shape (k, k)."""
        F = self._Phi[_as_index(idx)]
        B = F @ self._P @ F.T
        return 0.5 * (B + B.T)

    def cross(self, rows, cols) -> np.ndarray:
        """``C[rows][:, cols] = (Phi_rows P) Phi_cols^T``, ndarray of shape (k, m): O((k + m) r^2 + k m r)."""
        return (self._Phi[_as_index(rows)] @ self._P) @ self._Phi[_as_index(cols)].T

    def prior_block(self, idx) -> np.ndarray:
        """``K[idx][:, idx] = Phi_S Phi_S^T``, ndarray of shape (k, k)."""
        F = self._Phi[_as_index(idx)]
        return F @ F.T

    def columns(self, idx) -> np.ndarray:
        """``C[idx, :] = (Phi_S P) Phi^T``, ndarray of shape (k, n): O(n r k)."""
        F = self._Phi[_as_index(idx)]
        return self.times_factor(F @ self._P)

    def combine(self, idx, W) -> np.ndarray:
        """``W^T C[idx, :] = ((W^T Phi_S) P) Phi^T``, ndarray of shape (t, n): O(n r t)."""
        idx = _as_index(idx)
        W = np.asarray(W, dtype=np.float64).reshape(idx.size, -1)
        coef = (W.T @ self._Phi[idx]) @ self._P  # (t, r)
        return self.times_factor(coef)

    def times_factor(self, coef) -> np.ndarray:
        """``coef @ Phi^T``, ndarray of shape (t, n), for ``coef`` of shape (t, r): one pass over
        the factor (2.4 GB at 10^6 points, rank 300: the mean update of every key press).

        With :attr:`threads` > 1 the rows of ``Phi`` are split into blocks of whole
        :data:`ROW_BLOCK` rows, one product per thread (numpy releases the GIL in BLAS, which
        runs one thread each); each output is the same dot product of one row as in the
        single call.
        """
        coef = np.ascontiguousarray(coef, dtype=np.float64)
        n = self.n_samples
        parts = min(int(self.threads), n // ROW_BLOCK)
        if parts <= 1:
            return coef @ self._Phi.T
        from concurrent.futures import ThreadPoolExecutor

        out = np.empty((coef.shape[0], n))
        cuts = [ROW_BLOCK * ((n // ROW_BLOCK) * j // parts) for j in range(parts)] + [n]

        def product(j):
            a, b = cuts[j], cuts[j + 1]
            out[:, a:b] = coef @ self._Phi[a:b].T

        with ThreadPoolExecutor(max_workers=parts, thread_name_prefix="factor-rows") as pool:
            list(pool.map(product, range(parts)))
        return out

    def candidate_blocks(self, candidates, max_bytes: int = DEFAULT_BLOCK_BYTES) -> Iterator[CandidateBlock]:
        """Rows ``(Phi_b P) Phi^T`` for blocks of candidates, each at most ``max_bytes``."""
        cand = _as_index(candidates)
        step = max(1, int(max_bytes) // (8 * max(self.n_samples, 1)))
        for a in range(0, cand.size, step):
            cb = cand[a:a + step]
            R = np.ascontiguousarray((self._Phi[cb] @ self._P) @ self._Phi.T)
            yield CandidateBlock(R, np.arange(cb.size, dtype=np.int64), cb)

    def rebuild_is_cheaper(self, n_changed: int) -> bool:
        """True when a block of ``n_changed`` points (an O(k^3) solve) outweighs the rank.

        A rebuild costs O(|L| r^2 + r^3 + n r T) in weight space (:meth:`condition`), so a
        reweight of every labelled point under "balanced" never costs more than that.
        """
        return int(n_changed) > self.rank

    def to_array(self) -> np.ndarray:
        """``Phi P Phi^T`` as an (n, n) array (tests and small pools only)."""
        C = self._Phi @ self._P @ self._Phi.T
        return 0.5 * (C + C.T)

    # ------------------------------------------------------------------ updates
    def update(self, idx, M) -> None:
        """``C += C[:, S] M C[S, :]``, i.e. ``P += A M A^T`` with ``A = P Phi_S^T``: O(r^2 k)."""
        idx = _as_index(idx)
        if idx.size == 0:
            return
        M = np.asarray(M, dtype=np.float64).reshape(idx.size, idx.size)
        A = self._P @ self._Phi[idx].T  # (r, k)
        P = self._P + A @ (0.5 * (M + M.T)) @ A.T
        self._P = 0.5 * (P + P.T)

    @property
    def has_pending(self) -> bool:
        """Always False: an update of ``P`` is applied at once (O(r^2 |S|), no pass over n)."""
        return False

    def settle(self) -> None:
        """Nothing to apply (:attr:`has_pending` is always False)."""

    def apply_pending(self, apply) -> bool:
        """False: no update is ever pending; ``apply`` is not called."""
        return False

    def condition(self, idx, noise, residual) -> np.ndarray:
        """Condition on noisy observations at ``idx`` (direct solve; see the protocol).

        With ``A = P Phi_S^T``: ``P <- P - A (C_SS + N)^-1 A^T`` and the mean shift is
        ``(A (C_SS + N)^-1 residual)^T Phi^T``. When more points are conditioned on than the
        rank, the same result is computed in weight space,
        ``P' = (P^-1 + Phi_S^T N^-1 Phi_S)^-1`` and shift ``(P' Phi_S^T N^-1 residual)^T Phi^T``,
        with ``P = L L^T`` so that only ``I + L^T Phi_S^T N^-1 Phi_S L`` (r x r, >= I) is
        factored.

        Returns
        -------
        shift : ndarray of shape (T, n)

        Raises
        ------
        numpy.linalg.LinAlgError
            If the system is not positive definite (state unchanged).
        """
        idx = _as_index(idx)
        noise = np.asarray(noise, dtype=np.float64).reshape(-1)
        residual = np.asarray(residual, dtype=np.float64).reshape(idx.size, -1)
        if idx.size == 0:
            return np.zeros((residual.shape[1], self.n_samples))
        F = self._Phi[idx]  # (s, r)
        try:
            Lp = None
            if idx.size > self.rank:
                try:
                    Lp = np.linalg.cholesky(0.5 * (self._P + self._P.T))
                except LinAlgError:
                    Lp = None  # P numerically singular: use the |S| x |S| form
            if Lp is None:
                A = self._P @ F.T  # (r, s)
                S = F @ A + np.diag(noise)
                cf = cho_factor(0.5 * (S + S.T), lower=True, check_finite=True)
                coef = A @ cho_solve(cf, residual, check_finite=False)  # (r, T)
                P = self._P - A @ cho_solve(cf, A.T, check_finite=False)
            else:
                G = F @ Lp  # (s, r)
                H = np.eye(self.rank) + G.T @ (G / noise[:, None])
                cf = cho_factor(0.5 * (H + H.T), lower=True, check_finite=True)
                P = Lp @ cho_solve(cf, Lp.T, check_finite=False)
                coef = P @ (F.T @ (residual / noise[:, None]))
        except (LinAlgError, ValueError):
            raise LinAlgError(NOT_PD_MESSAGE) from None
        self._P = 0.5 * (P + P.T)
        return self.times_factor(coef.T)

    def reset(self) -> None:
        """Back to the prior: ``P = I`` (``C = K``)."""
        self._P = np.eye(self.rank)


class NystromPosterior(FactorPosterior):
    """A :class:`FactorPosterior` on the Nystrom factor ``Phi = k(X, Z) T`` of fixed landmarks
    ``Z`` (:func:`core.kernels.factors.nystrom_map`), which keeps ``X`` and ``Z`` so that the
    kernel (e.g. the RBF width) can change: :meth:`set_kernel` recomputes ``Phi`` from the
    same landmarks, and the learner's ``set_kernel`` then rebuilds exactly as with a dense
    posterior (``reset`` + a direct solve on the labels).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The pool (kept by reference, not copied).
    kernel : core.kernels.Kernel
    landmarks : ndarray of shape (m, d)
    Phi : ndarray of shape (n, r), optional
        The factor, if already computed with this kernel and these landmarks (taken over,
        not copied); default computed here.
    row_norms : ndarray of shape (n,), optional
        That factor's squared row norms, if kept with it (ignored when ``Phi`` is computed
        here).
    threads : int, default 1
        Threads computing ``Phi`` here and in :meth:`set_kernel`
        (:func:`core.kernels.factors.nystrom_map`) and sharing the O(n r) products with it
        (:meth:`FactorPosterior.times_factor`): the same bits whatever their number.
    progress : callable(message, fraction), optional
        Progress of the factor's rows.
    """

    def __init__(self, X, kernel, landmarks, Phi=None, progress=None, row_norms=None, threads: int = 1):
        from ..kernels.factors import nystrom_map

        self.features = X
        self.kernel = kernel
        self.landmarks = np.ascontiguousarray(landmarks, dtype=np.float64)
        self.threads = max(1, int(threads))
        if Phi is None:
            Phi = nystrom_map(X, kernel, self.landmarks, progress=progress, threads=threads)
            row_norms = None
        super().__init__(Phi, copy=False, row_norms=row_norms)

    def set_kernel(self, kernel, progress=None) -> None:
        """Recompute ``Phi = k(X, Z) T`` with ``kernel`` (same landmarks); ``P`` back to ``I``.

        The old factor is released first (one n x r array at a time). O(n m d + n m r).
        """
        from ..kernels.factors import nystrom_map

        self._Phi = None
        self._Phi = nystrom_map(self.features, kernel, self.landmarks, progress=progress, warn=False,
                                threads=self.threads)
        self.kernel = kernel
        self._set_factor_shape()
