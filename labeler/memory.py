"""What memory the machine can give now: one reading shared by the session's n x n check
(:func:`labeler.session.model.check_memory`) and the data loaders' estimates
(:mod:`labeler.data.table_files`).
"""

from __future__ import annotations

__all__ = ["available_memory", "format_bytes"]


def _read_int(path) -> int | None:
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def available_memory(meminfo="/proc/meminfo", cgroup="/sys/fs/cgroup") -> int | None:
    """Bytes of memory a new allocation can get now, or None when it cannot be told.

    ``MemAvailable`` of ``/proc/meminfo`` (Linux), lowered to what is left under a cgroup
    memory limit (v2 ``memory.max - memory.current``, v1 ``limit_in_bytes - usage_in_bytes``)
    when the process runs in a container that has one.
    """
    avail = None
    try:
        with open(meminfo) as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        avail = None
    for limit_file, usage_file in (("memory.max", "memory.current"),
                                   ("memory/memory.limit_in_bytes", "memory/memory.usage_in_bytes")):
        limit = _read_int(f"{cgroup}/{limit_file}")
        usage = _read_int(f"{cgroup}/{usage_file}")
        if limit is not None and usage is not None and limit < 1 << 60:
            left = max(limit - usage, 0)
            avail = left if avail is None else min(avail, left)
            break
    return avail


def format_bytes(nbytes: float) -> str:
    """``nbytes`` as GiB (one decimal) from 0.1 GiB up, else as MiB."""
    return f"{nbytes / 2**30:.1f} GiB" if nbytes >= 2**30 / 10 else f"{nbytes / 2**20:.0f} MiB"
