"""What memory the process can get now (the machine's, its cgroups' and its own resource
limits): one reading shared by the session's n x n check
(:func:`labeler.session.costs.check_memory`) and the data loaders' estimates
(:mod:`labeler.data.table_files`).
"""

from __future__ import annotations

__all__ = ["available_memory", "cgroup_room", "rlimit_room", "format_bytes"]


def _read_int(path) -> int | None:
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _status_bytes(field: str, status="/proc/self/status") -> int | None:
    """A ``kB`` field of ``/proc/self/status`` (``VmSize``, ``VmData``) in bytes."""
    try:
        with open(status) as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def rlimit_room(status="/proc/self/status") -> int | None:
    """Bytes the process may still allocate under its own limits, or None when unlimited.

    ``RLIMIT_AS`` less the address space in use (``VmSize``) and ``RLIMIT_DATA`` less the data
    segment in use (``VmData``): past either, an allocation fails (``MemoryError``,
    ``std::bad_alloc``) whatever the machine has free.
    """
    try:
        import resource
    except ImportError:  # not a POSIX system
        return None
    room = None
    for name, field in (("RLIMIT_AS", "VmSize"), ("RLIMIT_DATA", "VmData")):
        limit = resource.getrlimit(getattr(resource, name))[0]
        if limit == resource.RLIM_INFINITY or limit < 0:
            continue
        used = _status_bytes(field, status) or 0
        left = max(int(limit) - used, 0)
        room = left if room is None else min(room, left)
    return room


def _cgroup_dirs(cgroup_root: str, proc_cgroup: str) -> list[str]:
    """The process's memory cgroup folders, innermost first (v2 unified, then v1 ``memory``),
    each followed by its parents (a parent's limit binds too)."""
    paths, cgroup_root = [], str(cgroup_root)
    try:
        with open(proc_cgroup) as fh:
            entries = [line.strip().split(":", 2) for line in fh if line.strip()]
    except OSError:
        entries = []
    for hierarchy, controllers, rel in (e for e in entries if len(e) == 3):
        if hierarchy == "0" and controllers == "":
            base = cgroup_root
        elif "memory" in controllers.split(","):
            base = f"{cgroup_root}/memory"
        else:
            continue
        parts = [p for p in rel.split("/") if p]
        for k in range(len(parts), -1, -1):
            paths.append("/".join([base, *parts[:k]]))
    paths += [cgroup_root, f"{cgroup_root}/memory"]  # the root as seen from a container
    return list(dict.fromkeys(paths))


def cgroup_room(cgroup="/sys/fs/cgroup", proc_cgroup="/proc/self/cgroup") -> int | None:
    """Bytes left under the tightest memory limit of the process's cgroups, or None (no limit).

    v2: ``memory.max - memory.current``; v1: ``memory.limit_in_bytes - memory.usage_in_bytes``.
    """
    room = None
    for folder in _cgroup_dirs(cgroup, proc_cgroup):
        for limit_file, usage_file in (("memory.max", "memory.current"),
                                       ("memory.limit_in_bytes", "memory.usage_in_bytes")):
            limit = _read_int(f"{folder}/{limit_file}")
            usage = _read_int(f"{folder}/{usage_file}")
            if limit is not None and usage is not None and limit < 1 << 60:
                left = max(limit - usage, 0)
                room = left if room is None else min(room, left)
    return room


def available_memory(meminfo="/proc/meminfo", cgroup="/sys/fs/cgroup", proc_cgroup="/proc/self/cgroup",
                     status="/proc/self/status") -> int | None:
    """Bytes of memory a new allocation can get now, or None when it cannot be told.

    ``MemAvailable`` of ``/proc/meminfo`` (Linux), lowered to what is left under the memory
    limits of the process's cgroups (:func:`cgroup_room`, v2 and v1, the process's own cgroup
    and its parents) and under its resource limits ``RLIMIT_AS`` / ``RLIMIT_DATA``
    (:func:`rlimit_room`).
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
    for room in (cgroup_room(cgroup, proc_cgroup), rlimit_room(status)):
        if room is not None:
            avail = room if avail is None else min(avail, room)
    return avail


def format_bytes(nbytes: float) -> str:
    """``nbytes`` as GiB (one decimal) from 0.1 GiB up, else as MiB."""
    return f"{nbytes / 2**30:.1f} GiB" if nbytes >= 2**30 / 10 else f"{nbytes / 2**20:.0f} MiB"
