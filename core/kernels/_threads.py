"""The number of CPU threads this process may run on (its affinity mask, else the CPU count),
shared by the kNN searches of :mod:`core.kernels.knn_search` and :mod:`core.kernels.knn_cells`."""
from __future__ import annotations

import os


def available_threads() -> int:
    """CPUs in this process's affinity mask (``os.sched_getaffinity``), else ``os.cpu_count()``;
    at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1
