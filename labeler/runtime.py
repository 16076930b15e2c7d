"""Process-wide thread settings, applied where a process starts (never on import of core/).

Two thread pools share the CPU in this app: numba's OpenMP pool runs the O(n^2) kernels
(expected risk, rank-one updates) on every core, and OpenBLAS runs the small dense algebra
of a step (block updates, the s x s solves of the guards, LOO eigendecompositions). Measured
on this project's 2-core machine:

* with the default OpenMP wait policy the pool's threads spin and then sleep at every barrier,
  which costs a whole scheduler time slice (~8 ms) per parallel call on a shared CPU; a
  passive pool wakes in microseconds;
* with OpenBLAS's own thread pool beside numba's, a 21 x 21 LU solve right after a numba
  kernel took 7-16 ms instead of 0.02 ms, and an n = 4,000 rank-21 update 62 ms instead of
  20 ms, because OpenBLAS's threads busy-wait for the cores numba's threads need. One
  OpenBLAS thread removes the contention; the parallel work is numba's.

:func:`configure_threads` sets both as defaults before numpy and numba are loaded; a value the
user put in the environment wins.

Memory of the app server: Streamlit runs every rerun of the page in a new thread, and glibc's
malloc gives threads their own arenas (up to 8 per core). The page allocates many arrays of
10^6 numbers below glibc's mmap threshold (which grows to 32 MB after the first large frees),
so each rerun's thread left freed memory in its own arena that the next thread could not reuse:
at 10^6 points the server's peak grew from 4.5 GB after start-up to 5.7-5.9 GB over 11 labels.
:func:`limit_malloc_arenas` (called by ``labeler app`` before anything starts a thread) caps
the arenas at 2: 4.6 GB after the same labels (``benchmarks/ui_latency.py --data``).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

__all__ = ["THREAD_DEFAULTS", "configure_threads", "limit_malloc_arenas", "MALLOC_ARENAS", "warm_numba",
           "warm_numba_in_background", "block_threads", "MAX_BLOCK_THREADS"]

#: Most threads working on the blocks of one large array (:func:`block_threads`).
MAX_BLOCK_THREADS = 4

THREAD_DEFAULTS = {"OMP_WAIT_POLICY": "PASSIVE", "OPENBLAS_NUM_THREADS": "1"}

#: glibc malloc arenas of the app server (``mallopt(M_ARENA_MAX, ...)``).
MALLOC_ARENAS = 2
_M_ARENA_MAX = -8  # glibc's malloc.h


def configure_threads() -> None:
    """Set :data:`THREAD_DEFAULTS` in ``os.environ`` unless the user set them.

    Call it before numpy or numba is imported (OpenBLAS and OpenMP read these at load).
    """
    for key, value in THREAD_DEFAULTS.items():
        os.environ.setdefault(key, value)


def limit_malloc_arenas(arenas: int = MALLOC_ARENAS) -> bool:
    """Cap glibc's malloc arenas of this process at ``arenas`` (``mallopt(M_ARENA_MAX)``).

    Call it before the process starts threads: arenas made before stay. Does nothing where
    the C library is not glibc (macOS, musl), or when the user set ``MALLOC_ARENA_MAX`` (glibc
    read it at start-up: theirs wins).

    Returns
    -------
    bool
        True when the cap was set.
    """
    if not sys.platform.startswith("linux") or os.environ.get("MALLOC_ARENA_MAX"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return bool(mallopt(_M_ARENA_MAX, int(arenas)))


def warm_numba() -> None:
    """Load numba's CPU target (its registries of lowerings: what every process pays on its first
    call of a compiled function, cached on disk or not: nearly all of the first call of a cached
    kernel, ``benchmarks/startup_parts.py``). Under numba's own compiler lock, so it may run
    beside other numba calls."""
    from numba.core.registry import cpu_target

    cpu_target.target_context.refresh()


def warm_numba_in_background():
    """:func:`warm_numba` in a daemon thread (``labeler app`` starts it while the data file
    loads, so the first query does not pay it); returns the thread."""
    import threading

    def run():
        try:
            warm_numba()
        except Exception:  # noqa: BLE001 -- an optimisation only: the first query pays it instead
            pass

    thread = threading.Thread(target=run, name="labeler-numba-warm-up", daemon=True)
    thread.start()
    return thread


def block_threads() -> int:
    """Threads that work on independent blocks of one large array at start-up: a new session's
    Nystrom factor, block by block of rows (:func:`core.kernels.factors.nystrom_map`), and the
    session cache's checksums (:func:`labeler.session.cache.checksum`); neither result depends
    on it. The cores this process may use, at most :data:`MAX_BLOCK_THREADS`;
    ``LABELER_BLOCK_THREADS`` sets it (1: one thread, as before). Each thread holds one block
    (64 MiB) at a time."""
    given = os.environ.get("LABELER_BLOCK_THREADS", "").strip()
    if given:
        try:
            return max(1, int(given))
        except ValueError:
            raise ValueError(f"LABELER_BLOCK_THREADS must be a whole number of threads such as 2; got {given!r}.") \
                from None
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(MAX_BLOCK_THREADS, cores))
