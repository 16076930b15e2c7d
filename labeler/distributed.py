"""Scoring and factor building on a Dask cluster (``dask.distributed``), and executor names.

:class:`DaskExecutor` runs the blocks of :mod:`core.criteria.blocks` (and the row blocks of
:mod:`labeler.distributed_factors`) as Dask tasks:

* the large shared arrays (the factor ``Phi``, n x r) are scattered to every worker ONCE and
  reused by later queries (:meth:`DaskExecutor.map` keeps the futures while the array lives);
  the small per-query state (``P``, the outputs, the weights) is scattered once per query,
  never per task;
* one task per block of candidates (``DEFAULT_BLOCK_ROWS`` rows: the scheduler's overhead of
  about 200 microseconds per task is negligible beside a block's ~0.1 s);
* a worker that dies during a query costs nothing but time: the scheduler runs its tasks
  again on the others (the broadcast arrays are on every worker), so the pick is the same;
  when it held the only copy of a shipped array (scattered while a restarted worker had not
  joined yet), the query's futures are cancelled: the arrays are shipped again and the query
  run once more;
* a scheduler that cannot be reached, or a cluster without workers, raises
  :class:`~core.criteria.blocks.ExecutorUnavailable` with what to do; the criterion then
  scores on this machine (same numbers) and says so.

Workers must run this package (same version): a Dask cluster runs the task functions by
reference. The transport pickles the arrays between processes; nothing is stored that way.

Executor names (``--executor`` of ``labeler simulate`` and ``labeler app``):
``serial`` (default), ``threads`` or ``threads:N``, ``dask://HOST:PORT`` (an existing
scheduler; ``tcp://HOST:PORT`` too), ``local-dask:N`` (a ``LocalCluster`` of N worker
processes started here and closed with the executor).
"""

from __future__ import annotations

import concurrent.futures as concurrent_futures
import functools
import os
import re

import numpy as np

from core.criteria.blocks import ExecutorUnavailable, SerialExecutor, ThreadExecutor

__all__ = ["DaskExecutor", "make_executor", "process_executor", "EXECUTOR_HELP", "SHIP_ONCE_BYTES"]

#: Shared arrays at least this large are scattered once and reused across queries.
SHIP_ONCE_BYTES = 1 << 20

EXECUTOR_HELP = ("where candidates are scored: serial (default), threads[:N], dask://HOST:PORT "
                 "(a running Dask scheduler), or local-dask:N (N local worker processes)")

_CONNECT_HELP = ("Start a scheduler and workers (`dask scheduler`, then `dask worker tcp://HOST:8786` "
                 "on each machine, with this package installed), check the address, or leave out "
                 "--executor to score on this machine.")


def _numba_threads(fn, n_threads, block, **shared):
    """Run ``fn`` with ``n_threads`` numba threads on this worker thread (numba's setting is
    per thread)."""
    import numba

    numba.set_num_threads(min(int(n_threads), numba.config.NUMBA_NUM_THREADS))
    return fn(block, **shared)


def _unavailable_errors() -> tuple:
    from distributed import KilledWorker, TimeoutError as DaskTimeout
    from distributed.comm.core import CommClosedError

    # (a future cancelled, or several at once: distributed's FutureCancelledError and
    # FuturesCancelledError, both a concurrent.futures.CancelledError)
    return (OSError, TimeoutError, DaskTimeout, CommClosedError, KilledWorker, concurrent_futures.CancelledError)


#: What a query raises when a worker died with data the query needed: its futures cancelled
#: (scattered data lost). The query is run once more.
_LOST_DATA = (concurrent_futures.CancelledError,)


class DaskExecutor:
    """Blocks as tasks on a Dask cluster.

    Parameters
    ----------
    address : str, optional
        Scheduler address (``tcp://HOST:PORT``); or
    client : distributed.Client, optional
        An existing client (not closed by :meth:`close`); or
    local_workers : int, optional
        Start a ``LocalCluster`` of this many worker processes (one thread each).
    n_threads : int, optional
        numba threads per task (default: all of the worker's; ``local_workers`` sets
        cores / workers so that the local workers do not oversubscribe the cores).
    connect_timeout : float
        Seconds to wait for the scheduler.
    task_timeout : float
        Seconds a query may take before the cluster is given up.
    retries : int
        Retries of a task that raised (a dead worker is handled by the scheduler).

    Raises
    ------
    ExecutorUnavailable
        The scheduler cannot be reached.
    """

    name = "dask"

    def __init__(self, address: str | None = None, *, client=None, local_workers: int | None = None,
                 n_threads: int | None = None, connect_timeout: float = 10.0, task_timeout: float = 3600.0,
                 retries: int = 1):
        from distributed import Client, LocalCluster

        given = sum(x is not None for x in (address, client, local_workers))
        if given != 1:
            raise ValueError("give exactly one of address, client and local_workers.")
        self._cluster = None
        self._own_client = client is None
        self.task_timeout, self.retries = float(task_timeout), int(retries)
        self._cache: dict = {}  # name -> (array kept alive, its key, the future)
        if local_workers is not None:
            if isinstance(local_workers, bool) or int(local_workers) != local_workers or local_workers < 1:
                raise ValueError(f"local_workers must be a positive integer; got {local_workers!r}.")
            self._cluster = LocalCluster(n_workers=int(local_workers), threads_per_worker=1, processes=True,
                                         dashboard_address=None)
            client = Client(self._cluster)
            if n_threads is None:
                n_threads = max(1, (os.cpu_count() or 1) // int(local_workers))
            self.address = self._cluster.scheduler_address
        elif address is not None:
            self.address = str(address)
            try:
                client = Client(self.address, timeout=connect_timeout)
            except _unavailable_errors() as exc:
                raise ExecutorUnavailable(
                    f"Could not reach the Dask scheduler at {self.address} ({type(exc).__name__}: {exc}). "
                    + _CONNECT_HELP) from exc
        else:
            self.address = client.scheduler.address
        self.client = client
        self.n_threads = None if n_threads is None else int(n_threads)

    # ------------------------------------------------------------------ running blocks
    def n_workers(self) -> int:
        """Workers the scheduler knows now."""
        return len(self.client.scheduler_info().get("workers", {}))

    def map(self, fn, blocks, shared) -> list:
        """``[fn(block, **shared) for block in blocks]`` as tasks; see the module docstring."""
        from distributed import wait

        errors = _unavailable_errors()
        for attempt in range(2):
            try:
                if self.client.status not in ("running", "connecting") or self.n_workers() == 0:
                    raise ExecutorUnavailable(
                        f"The Dask cluster at {self.address} has no workers (or the client is closed). " + _CONNECT_HELP)
                refs = {k: self._ship(k, v) for k, v in shared.items()}
                task = fn if self.n_threads is None else functools.partial(_numba_threads, fn, self.n_threads)
                futures = self.client.map(task, list(blocks), **refs, pure=False, retries=self.retries)
                wait(futures, timeout=self.task_timeout)
                return self.client.gather(futures)
            except ExecutorUnavailable:
                raise
            except errors as exc:
                self._cache.clear()
                if attempt == 0 and isinstance(exc, _LOST_DATA) and self._workers_back():
                    # a worker died holding the only copy of a shipped array (scattered while a
                    # restarted worker had not joined yet): ship the arrays again, run the query again
                    continue
                raise ExecutorUnavailable(
                    f"The Dask cluster at {self.address} could not finish the query "
                    f"({type(exc).__name__}: {exc}). " + _CONNECT_HELP) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _workers_back(self, timeout: float = 30.0) -> bool:
        """Whether the cluster has a worker again within ``timeout`` seconds (a nanny restarts
        a killed one)."""
        import time

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.client.status not in ("running", "connecting"):  # closed meanwhile: no retry
                return False
            if self.n_workers() > 0:
                return True
            time.sleep(0.1)
        return False

    def _ship(self, name, value):
        """A future of ``value`` on every worker: reused while the same large array is given."""
        if not isinstance(value, np.ndarray) or value.nbytes < SHIP_ONCE_BYTES:
            if isinstance(value, np.ndarray):
                return self.client.scatter(value, broadcast=True, hash=False)
            return value
        key = (value.__array_interface__["data"][0], value.shape, value.strides, value.dtype.str)
        hit = self._cache.get(name)
        if hit is not None and hit[1] == key:
            return hit[2]
        future = self.client.scatter(value, broadcast=True, hash=False)
        self._cache[name] = (value, key, future)  # the array is kept alive: its address stays its own
        return future

    def close(self) -> None:
        """Release the shipped arrays; close the client and the cluster this executor started."""
        self._cache.clear()
        if self._own_client:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self) -> str:
        return f"DaskExecutor({self.address!r})"


_THREADS = re.compile(r"^threads(?::(\d+))?$")
_LOCAL = re.compile(r"^local-dask:(\d+)$")


def make_executor(spec: str | None):
    """The executor a name stands for (see the module docstring).

    Raises
    ------
    ValueError
        An unknown name (the message lists the accepted ones).
    ExecutorUnavailable
        A Dask scheduler that cannot be reached.
    """
    text = "serial" if spec is None else str(spec).strip()
    if text == "serial":
        return SerialExecutor()
    if m := _THREADS.match(text):
        return ThreadExecutor(int(m.group(1)) if m.group(1) else (os.cpu_count() or 1))
    if m := _LOCAL.match(text):
        return DaskExecutor(local_workers=int(m.group(1)))
    if text.startswith(("dask://", "tcp://", "tls://")):
        address = "tcp://" + text[len("dask://"):] if text.startswith("dask://") else text
        if not re.match(r"^(tcp|tls)://[^:/]+:\d+$", address):
            raise ValueError(f"executor address {spec!r} needs a host and a port, e.g. dask://10.0.0.5:8786.")
        return DaskExecutor(address)
    raise ValueError(f"unknown executor {spec!r}: use {EXECUTOR_HELP}.")


_PROCESS: dict = {}


def process_executor(environ=None):
    """The executor of this process's sessions: ``LABELER_EXECUTOR`` (set by ``labeler app
    --executor``), made once; None (score here) when unset, ``serial``, or unreachable (with
    a warning: the sessions stay usable on this machine)."""
    import warnings

    env = os.environ if environ is None else environ
    spec = env.get("LABELER_EXECUTOR", "serial").strip() or "serial"
    if spec == "serial":
        return None
    if spec not in _PROCESS:
        try:
            _PROCESS[spec] = make_executor(spec)
        except (ValueError, ExecutorUnavailable) as exc:
            warnings.warn(f"LABELER_EXECUTOR={spec!r}: {exc} Candidates are scored on this machine.",
                          stacklevel=2)
            _PROCESS[spec] = None
    return _PROCESS[spec]
