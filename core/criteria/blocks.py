"""Expected risk on a low-rank posterior, scored block by block through an executor.

On a factor posterior ``C = Phi P Phi^T`` (docs/algorithms.md §8) the rows of ``C`` that a block of
candidates needs are ``(Phi_b P) Phi_Z^T`` for the pool points ``Z`` the risk sum runs over,
so a block is scored from ``Phi``, ``P``, the outputs and the class weights alone: the work
splits into independent tasks of a few thousand candidate rows each. An *executor* runs them:

* :class:`SerialExecutor` (the default): one block after the other in this process;
* :class:`ThreadExecutor`: a pool of threads (the numba kernels and BLAS release the GIL);
* any object with the same ``map`` method, e.g. ``labeler.distributed.DaskExecutor`` on a
  Dask cluster, which ships ``Phi`` to the workers once and the small per-query state once
  per query.

Every executor runs the same function on the same blocks, so the scores do not depend on
where they were computed (to rounding of the BLAS products: the tests hold them to 1e-12).
An executor that fails to reach its workers raises :class:`ExecutorUnavailable`; the
criterion then warns, falls back to :class:`SerialExecutor` and scores the query here.
"""

from __future__ import annotations

import warnings
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Protocol, Sequence, runtime_checkable

import numpy as np

from .base import ScoringState
from .expected_risk import score_block
from .subsampled import SubsampledExpectedRisk, positions

__all__ = ["BlockExecutor", "SerialExecutor", "ThreadExecutor", "ExecutorUnavailable",
           "ExecutorFallbackWarning", "BlockScoredExpectedRisk", "score_factor_block", "DEFAULT_BLOCK_ROWS"]

#: Candidate rows per task: 10^4 rows of a 10^5-point pool cost ~0.1 s and ~8 MB of output
#: rows, well above a scheduler's per-task overhead (about 200 microseconds for Dask).
DEFAULT_BLOCK_ROWS = 10_000


class ExecutorUnavailable(RuntimeError):
    """The executor cannot run tasks (its scheduler or every worker is gone)."""


class ExecutorFallbackWarning(UserWarning):
    """A query was scored on this machine because the executor could not run it."""


@runtime_checkable
class BlockExecutor(Protocol):
    """Runs one function over blocks with shared arguments.

    ``map(fn, blocks, shared)`` returns ``[fn(block, **shared) for block in blocks]`` in
    order. ``shared`` values are the same for every block (arrays to ship once).
    """

    name: str

    def map(self, fn: Callable, blocks: Sequence, shared: dict) -> list: ...


class SerialExecutor:
    """Blocks one after the other in this process."""

    name = "serial"

    def map(self, fn, blocks, shared) -> list:
        return [fn(block, **shared) for block in blocks]

    def __repr__(self) -> str:
        return "SerialExecutor()"


class ThreadExecutor:
    """Blocks on a pool of ``n_threads`` threads of this process.

    Parameters
    ----------
    n_threads : int
        At least 1.
    """

    name = "threads"

    def __init__(self, n_threads: int = 2):
        if isinstance(n_threads, bool) or int(n_threads) != n_threads or n_threads < 1:
            raise ValueError(f"n_threads must be a positive integer; got {n_threads!r}.")
        self.n_threads = int(n_threads)

    def map(self, fn, blocks, shared) -> list:
        with ThreadPoolExecutor(max_workers=self.n_threads) as pool:
            return list(pool.map(lambda block: fn(block, **shared), blocks))

    def __repr__(self) -> str:
        return f"ThreadExecutor({self.n_threads})"


def score_factor_block(block, *, Phi, P, outputs_T, hypothetical_lam, class_weights, cols=None) -> np.ndarray:
    """Expected risk (eq. 3.50) of one block of candidates on ``C = Phi P Phi^T``.

    Parameters
    ----------
    block : tuple (cand, local)
        ``cand`` (k,) int64 pool indices of the candidates; ``local`` (k,) int64 their
        positions among ``cols`` (or ``cand`` itself when ``cols`` is None).
    Phi : ndarray of shape (n, r)
    P : ndarray of shape (r, r)
    outputs_T : ndarray of shape (T, c)
        The outputs at ``cols`` (at every pool point when ``cols`` is None).
    hypothetical_lam, class_weights : ndarray of shape (n_classes,)
    cols : ndarray of shape (c,) of int64, optional
        The pool points the risk sum runs over; None: all of them.

    Returns
    -------
    E : ndarray of shape (k,)
        The risk summed over ``cols`` (unscaled).
    """
    cand, local = block
    cand = np.ascontiguousarray(cand, dtype=np.int64)
    rows = Phi[cand] @ P  # (k, r)
    R = np.ascontiguousarray(rows @ (Phi.T if cols is None else Phi[cols].T))  # (k, c)
    state = ScoringState(outputs_T, hypothetical_lam, class_weights)
    return score_block((R, np.arange(cand.size, dtype=np.int64), np.ascontiguousarray(local, dtype=np.int64)),
                       state)


class BlockScoredExpectedRisk:
    """ARLS expected risk on a factor posterior, in blocks of candidates run by an executor.

    Parameters
    ----------
    executor : BlockExecutor, optional
        Default :class:`SerialExecutor`.
    block_rows : int
        Candidates per task.
    subsample : SubsampledExpectedRisk, optional
        Score only its candidates, over its pool subsample (same draws, same scores as
        ``subsample.score``); None: every candidate over the whole pool (exact, O(n^2 r)).

    Notes
    -----
    On a posterior that is not a factor (no ``factor`` attribute) the executor is not used:
    the scores are those of :class:`~core.criteria.ExpectedRisk` (or of ``subsample``).
    """

    name = "arls"
    needs_posterior = True

    def __init__(self, executor: BlockExecutor | None = None, block_rows: int = DEFAULT_BLOCK_ROWS,
                 subsample: SubsampledExpectedRisk | None = None):
        if isinstance(block_rows, bool) or int(block_rows) != block_rows or block_rows < 1:
            raise ValueError(f"block_rows must be a positive integer; got {block_rows!r}.")
        self.executor = SerialExecutor() if executor is None else executor
        self.block_rows = int(block_rows)
        self.subsample = subsample

    def score(self, state: ScoringState, posterior, candidates) -> np.ndarray:
        """Expected risk of each candidate (``+inf`` where a subsample leaves one out), (k,)."""
        cand = np.ascontiguousarray(candidates, dtype=np.int64)
        if not hasattr(posterior, "factor"):
            if self.subsample is not None:
                return self.subsample.score(state, posterior, cand)
            from .expected_risk import ExpectedRisk

            return ExpectedRisk().score(state, posterior, cand)
        n = posterior.n_samples
        if self.subsample is None:
            scored, cols, local_all, scale = cand, None, cand, 1.0
        else:
            scored, cols = self.subsample.plan(state, n, cand)
            local_all, scale = np.searchsorted(cols, scored), n / cols.size
        blocks = [(scored[a:a + self.block_rows], local_all[a:a + self.block_rows])
                  for a in range(0, scored.size, self.block_rows)]
        outputs = state.outputs_T if cols is None else state.outputs_T[:, cols]
        shared = dict(Phi=posterior.factor, P=np.array(posterior.weight_covariance),
                      outputs_T=np.ascontiguousarray(outputs, dtype=np.float64),
                      hypothetical_lam=np.asarray(state.hypothetical_lam, dtype=np.float64),
                      class_weights=np.asarray(state.class_weights, dtype=np.float64), cols=cols)
        parts = self._run(blocks, shared)
        est = (np.concatenate(parts) if parts else np.empty(0)) * scale
        if self.subsample is None:
            return est
        out = np.full(cand.size, np.inf)
        out[positions(cand, scored)] = est
        return out

    def _run(self, blocks, shared) -> list:
        try:
            return self.executor.map(score_factor_block, blocks, shared)
        except ExecutorUnavailable as exc:
            warnings.warn(f"{exc} This query, and the next ones, are scored on this machine.",
                          ExecutorFallbackWarning, stacklevel=3)
            self.executor = SerialExecutor()
            return self.executor.map(score_factor_block, blocks, shared)
