"""The posterior protocol: what the ARLS learner needs from its covariance store.

The learner keeps the outputs ``m`` (n x T) itself and delegates the posterior covariance
``C = K - K_XL (K_LL + Lambda_L)^-1 K_LX`` (docs/algorithms.md §3) to a posterior object. Every ARLS
step has the form ``C <- C + C[:, S] M C[S, :]`` for a small index set ``S`` and a small
symmetric matrix ``M`` (add: ``M = -1/den``; remove: ``+1/D``; reweight and block remove: an
s x s matrix), and every mean update is ``m <- m + C[:, S] W`` for a small ``W``. The protocol
is therefore phrased in indices and small matrices, never in n-vectors handed back and forth,
so that a factored store (``C = Phi P Phi^T``, docs/algorithms.md §8) does each step in O(r^2 |S|)
without touching n, and a dense store does it in place with one BLAS call.

Implementations: :class:`core.posteriors.DensePosterior` (one n x n array) and
:class:`core.posteriors.FactorPosterior` (``Phi`` n x r and ``P`` r x r). Both pass the same
conformance suite (``tests/test_posterior_conformance.py``).
"""

from __future__ import annotations

from typing import Iterator, NamedTuple, Protocol, runtime_checkable

import numpy as np

__all__ = ["Posterior", "CandidateBlock", "DEFAULT_BLOCK_BYTES"]

DEFAULT_BLOCK_BYTES = 64 * 2**20  # rows of C handed to a criterion at once (factor posterior)


class CandidateBlock(NamedTuple):
    """Rows of ``C`` for a block of candidates, as the scoring kernels read them.

    Row ``k`` of the block is ``rows_array[rows[k]]`` (shape (n,)) and belongs to pool index
    ``candidates[k]``, so ``C_ii = rows_array[rows[k], candidates[k]]``. A dense posterior
    hands its own array (``rows = candidates``, no copy); a factor posterior a computed
    (k, n) block (``rows = arange(k)``).
    """

    rows_array: np.ndarray  # (*, n) float64, C-contiguous
    rows: np.ndarray  # (k,) int64
    candidates: np.ndarray  # (k,) int64


@runtime_checkable
class Posterior(Protocol):
    """Storage of the posterior covariance ``C`` (symmetric n x n, never exposed whole)."""

    n_samples: int

    @property
    def nbytes(self) -> int:
        """Bytes held by the store."""

    def diag(self, idx=None) -> np.ndarray:
        """``C_ii`` for ``idx`` (default: all points), ndarray of shape (k,) or (n,)."""

    def prior_diag(self) -> np.ndarray:
        """Prior variances ``K_ii``, ndarray of shape (n,)."""

    def block(self, idx) -> np.ndarray:
        """``C[idx][:, idx]``, ndarray of shape (k, k)."""

    def cross(self, rows, cols) -> np.ndarray:
        """``C[rows][:, cols]``, ndarray of shape (k, m)."""

    def prior_block(self, idx) -> np.ndarray:
        """``K[idx][:, idx]``, ndarray of shape (k, k) (the state is not touched)."""

    def columns(self, idx) -> np.ndarray:
        """``C[idx, :]`` (= ``C[:, idx]^T``), ndarray of shape (k, n)."""

    def combine(self, idx, W) -> np.ndarray:
        """``W^T C[idx, :]``, ndarray of shape (t, n), for ``W`` of shape (k, t)."""

    def update(self, idx, M) -> None:
        """``C <- C + C[:, idx] M C[idx, :]`` in place, ``M`` symmetric of shape (k, k)."""

    @property
    def has_pending(self) -> bool:
        """Whether an :meth:`update` is recorded and not yet applied to the stored ``C``
        (a dense store keeps it until ``C`` is read as a whole; every read returns the
        updated values either way)."""

    def settle(self) -> None:
        """Apply a pending update (nothing when none is pending)."""

    def apply_pending(self, apply) -> bool:
        """Hand a pending update to ``apply``, a kernel that applies it while it reads the
        whole store (the next query's scoring: one pass instead of two); False, ``apply`` not
        called, when none is pending. Dense: a held rank-one update, ``apply(C, c, alpha)``
        (:meth:`core.posteriors.DensePosterior.apply_pending`)."""

    def condition(self, idx, noise, residual) -> np.ndarray:
        """Condition on noisy observations at ``idx`` by a direct (Cholesky) solve.

        ``C <- C - C[:, S] (C_SS + N)^-1 C[S, :]``; returns the mean shift
        ``((C_SS + N)^-1 residual)^T C[S, :]`` of shape (T, n) (before the update).
        Raises ``numpy.linalg.LinAlgError`` with the state unchanged if ``C_SS + N`` is not
        positive definite.
        """

    def reset(self) -> None:
        """Back to the prior ``C = K``."""

    def candidate_blocks(self, candidates, max_bytes: int = DEFAULT_BLOCK_BYTES) -> Iterator[CandidateBlock]:
        """The rows of ``C`` for ``candidates``, in blocks of at most ``max_bytes``."""

    def rebuild_is_cheaper(self, n_changed: int) -> bool:
        """Whether recomputing from the prior beats a block update of ``n_changed`` points."""

    def to_array(self) -> np.ndarray:
        """``C`` as a dense (n, n) array (tests and small pools only)."""
