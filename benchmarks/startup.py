"""Start-up to the first query, cold and reopened, as ``labeler app FILE`` does it; prints one table.

For each file (``benchmarks/make_large_file.py`` writes them: ``--dim 32``, ``.npz`` or
``.parquet``) two fresh processes run what the app's server does before the first query is on
the page (the browser's own time is not in it: ``benchmarks/ui_latency.py`` measures that):

* **cold**: an empty store and an empty session cache (:mod:`labeler.session.cache`): the
  command line loads the file (``labeler app`` reads it before the server starts and hands it
  over), the session is created with the app's defaults (posterior "auto": Nystrom rank 300
  beyond what a dense one fits), its first map layout (the fast one: PCA or the file's own; a
  UMAP layout follows in the background, :mod:`labeler.ui.startup`) and the first query;
* **reopen**: a new process on the same store and cache: the command line finds the file
  unchanged and maps its snapshot instead of reading it (:mod:`labeler.session.source_snapshot`),
  the session reopened (prepared features, Nystrom factor and layout read from the cache,
  memory-mapped, checksummed), its layout and the first query (the one recorded in the store).

Each row is run ``--runs`` times (default 2). The phases are seconds each (:data:`PHASES`):
"imports" from the process's start to the command line parsed (Python's imports), "read" the
command line's load (or the snapshot mapped; the features' fingerprint computed), "features"
the kernel features (standardised, or mapped from the cache), "factor" the Nystrom landmarks,
factor rows (or their cached map) and the posterior on them, "session, other" the rest of the
session's creation / reopening (the store, the model's settings, the initial labels), "layout"
the map's first layout, "first query"; "total" from the process's start to the first query.
The machine's load average (1 minute) is printed before each run, since the machine is
shared. Peak RSS is the process's ``ru_maxrss``. The header says how many threads compute the
Nystrom factor's blocks of rows and sum the cache's checksums
(:func:`labeler.runtime.block_threads`; ``LABELER_BLOCK_THREADS=1`` for one).
Targets (issue 23): cold <= 20 s, reopen <= 5 s at 10^6 rows x 32 features.

Usage::

    python benchmarks/make_large_file.py /tmp/p100k.npz --n 100000 --dim 32
    python benchmarks/make_large_file.py /tmp/p1m.parquet --n 1000000 --dim 32
    nice -n 10 python benchmarks/startup.py /tmp/p100k.npz /tmp/p1m.parquet
    python benchmarks/startup.py FILE --no-cache      # the same without the session cache
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.abspath(__file__)
#: Targets at 10^6 rows (issue 23 item 2), seconds to the first query.
TARGETS = {"cold": 20.0, "reopen": 5.0}
#: The phases printed, seconds each (not cumulative); "total" is from the process's start.
PHASES = ("imports", "read", "features", "factor", "session, other", "layout", "first query")


def _phase_timers():
    """Wrap the session's steps to add their seconds to phases: the kernel features (computed
    or read from the cache), the factor (landmarks, Nystrom rows or their cached map, the
    posterior on them), and what else the session's creation / reopening does."""
    from collections import defaultdict

    import labeler.session.cache as cache
    import labeler.session.data as data
    import labeler.session.model as model

    spent = defaultdict(float)

    def timed(phase, function):
        def wrapper(*args, **kwargs):
            t = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[phase] += time.perf_counter() - t
        return wrapper

    data.kernel_features = timed("features", data.kernel_features)
    model.build_learner = timed("factor", model.build_learner)
    load = cache.SessionCache.load

    def cache_load(self, name, key, *args, **kwargs):
        phase = "features" if name == "features" else "factor" if "factor" in name or "nystrom" in name else None
        if phase is None:
            return load(self, name, key, *args, **kwargs)
        return timed(phase, load)(self, name, key, *args, **kwargs)

    cache.SessionCache.load = cache_load
    return spent


def child(path: str, store: str, session_id: str | None, start: float, no_cache: bool) -> dict:
    """In a fresh process: what ``labeler app FILE`` does up to the first query."""
    marks = {}
    if no_cache:
        os.environ["LABELER_CACHE"] = "off"
    from labeler.runtime import configure_threads, limit_malloc_arenas

    configure_threads()
    limit_malloc_arenas()
    from labeler.cli.app import _app_data_options
    from labeler.cli.entry import build_parser

    args = build_parser().parse_args(["app", path, "--store", store])
    from labeler.session import LabelingSession, SessionConfig

    spent = _phase_timers()
    marks["imports"] = time.time() - start
    t = time.time()
    options = _app_data_options(args)  # the command line's load (or its snapshot), handed over
    marks["read"] = time.time() - t
    t = time.time()
    if session_id is None:
        session = LabelingSession.create(store, SessionConfig(dataset=path, dataset_options=options))
    else:
        session = LabelingSession.open(store, session_id)
    session_s = time.time() - t
    marks["features"], marks["factor"] = spent["features"], spent["factor"]
    marks["session, other"] = session_s - spent["features"] - spent["factor"]
    t = time.time()
    layout = session.layout  # the map's first layout
    assert layout.shape == (session.n_samples, 2)
    marks["layout"] = time.time() - t
    t = time.time()
    query = session.next_query()
    marks["first query"] = time.time() - t
    marks["total"] = time.time() - start
    out = {"id": session.id, "query": query, "n": session.n_samples, "d": int(session.X.shape[1]),
           "posterior": session.config.posterior, "marks": marks,
           "peak_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20}
    session.close()
    return out


def run_child(path, store, session_id, no_cache) -> dict:
    cmd = [sys.executable, HERE, "--child", path, "--store", store, "--start", repr(time.time())]
    if session_id:
        cmd += ["--session", session_id]
    if no_cache:
        cmd.append("--no-cache")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    res = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if res.returncode != 0:
        raise RuntimeError((res.stderr.strip().splitlines() or ["killed"])[-1][:200])
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="*", help=".npz / .parquet files (benchmarks/make_large_file.py)")
    p.add_argument("--runs", type=int, default=2)
    p.add_argument("--no-cache", action="store_true", help="without the session cache (LABELER_CACHE=off)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--store", help=argparse.SUPPRESS)
    p.add_argument("--session", help=argparse.SUPPRESS)
    p.add_argument("--start", type=float, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.store, args.session, args.start, args.no_cache)))
        return 0
    from labeler.runtime import block_threads

    print(f"# start-up to the first query (server side), {os.cpu_count()} cores; "
          f"cache {'off' if args.no_cache else 'on'}; {block_threads()} threads for the factor's rows and the "
          f"checksums; targets at 10^6 rows: cold <= {TARGETS['cold']:.0f} s, reopen <= {TARGETS['reopen']:.0f} s")
    head = ("| file | n x d | run | load avg | what | " + " | ".join(f"{p} s" for p in PHASES)
            + " | total s | target s | peak GB | same query |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for path in args.files:
        for run in range(1, args.runs + 1):
            work = tempfile.mkdtemp(prefix="labeler-startup-")
            store = os.path.join(work, "store.sqlite")
            try:
                first = None
                for what in ("cold", "reopen"):
                    load = os.getloadavg()[0]
                    r = run_child(path, store, None if first is None else first["id"], args.no_cache)
                    first = first or r
                    m = r["marks"]
                    big = r["n"] >= 1_000_000
                    target = f"{TARGETS[what]:.0f}" if big else "-"
                    print(f"| {os.path.basename(path)} | {r['n']:,} x {r['d']} | {run} | {load:.1f} | {what} | "
                          + " | ".join(f"{m[p]:.1f}" for p in PHASES)
                          + f" | **{m['total']:.1f}** | {target} | {r['peak_gb']:.2f} "
                          f"| {'yes' if r['query'] == first['query'] else 'NO'} |", flush=True)
            finally:
                shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
