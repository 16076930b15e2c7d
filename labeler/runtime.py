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
"""

from __future__ import annotations

import os

__all__ = ["THREAD_DEFAULTS", "configure_threads"]

THREAD_DEFAULTS = {"OMP_WAIT_POLICY": "PASSIVE", "OPENBLAS_NUM_THREADS": "1"}


def configure_threads() -> None:
    """Set :data:`THREAD_DEFAULTS` in ``os.environ`` unless the user set them.

    Call it before numpy or numba is imported (OpenBLAS and OpenMP read these at load).
    """
    for key, value in THREAD_DEFAULTS.items():
        os.environ.setdefault(key, value)
