"""One query scored on this machine and on a local Dask cluster of 1 and 2 workers; prints a table.

The query is the scale criterion on a low-rank factor (``BlockScoredExpectedRisk`` with a
``SubsampledExpectedRisk`` plan: ``--candidates`` candidates, the risk sum over ``--points``
pool points), so its cost is ``candidates x points x (2 r + scoring)``; the factor is a
random n x r matrix (the cost does not depend on its values). Rows:

* serial: the blocks one after the other in this process (numba on every core);
* dask, 1 and 2 workers (``LocalCluster``, one process each, ``cores / workers`` numba threads
  per task): the first query (ships ``Phi`` to the workers) and the median of the next ones
  (ship only the per-query state), and the ratio 1 worker / 2 workers;
* the cost per candidate x point pair and per task, which ``docs/distributed.md`` turns into an
  estimate of a query at 10^7 points on N workers.

Every number is measured in this run; the picks of all rows are checked to be the same.

    python benchmarks/dask_scoring.py            # n = 100,000, r = 200, 10,000 x 10,000
    python benchmarks/dask_scoring.py --quick    # a smoke run
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from labeler.runtime import configure_threads  # noqa: E402

configure_threads()

import numpy as np  # noqa: E402

from core.criteria.blocks import BlockScoredExpectedRisk, SerialExecutor  # noqa: E402
from core.criteria.subsampled import SubsampledExpectedRisk  # noqa: E402
from core.learner import ActiveRLS  # noqa: E402


def build(n, r, n_classes, seed=0):
    rng = np.random.default_rng(seed)
    Phi = rng.standard_normal((n, r)) / np.sqrt(r)
    classes = list(range(n_classes))
    learner = ActiveRLS.from_factor(Phi, classes=classes, lam=0.1, weighting="balanced", random_state=seed)
    idx = rng.choice(n, 40, replace=False)
    learner.add_many(idx, [classes[i % n_classes] for i in range(40)])
    return learner


def time_queries(learner, crit, repeats):
    times, picks = [], []
    for _ in range(repeats):
        t0 = time.perf_counter()
        s = learner.score(crit)
        times.append(time.perf_counter() - t0)
        picks.append(int(learner.unlabeled_indices[np.argmin(s)]))
    return times, picks


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--rank", type=int, default=200)
    ap.add_argument("--classes", type=int, default=2)
    ap.add_argument("--candidates", type=int, default=10_000)
    ap.add_argument("--points", type=int, default=10_000)
    ap.add_argument("--block-rows", type=int, default=1_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args(argv)
    if a.quick:
        a.n, a.rank, a.candidates, a.points, a.block_rows, a.repeats = 20_000, 50, 1_000, 2_000, 250, 2
    from labeler.distributed import DaskExecutor

    learner = build(a.n, a.rank, a.classes)
    half = a.candidates // 2
    plan = SubsampledExpectedRisk(n_uncertain=half, n_random=a.candidates - half, n_points=a.points, seed=1)
    n_blocks = -(-a.candidates // a.block_rows)
    print(f"# one query: n = {a.n:,}, rank {a.rank}, T = {a.classes if a.classes > 2 else 1}, "
          f"{a.candidates:,} candidates x {a.points:,} points, {n_blocks} tasks of {a.block_rows:,} rows; "
          f"{os.cpu_count()} cores")
    rows = []
    serial_t, serial_p = time_queries(learner, BlockScoredExpectedRisk(SerialExecutor(), a.block_rows, plan),
                                      a.repeats)
    rows.append(("serial (this process)", serial_t[0], float(np.median(serial_t)), serial_p))
    med = {}
    for workers in (1, 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ex = DaskExecutor(local_workers=workers)
        try:
            t, p = time_queries(learner, BlockScoredExpectedRisk(ex, a.block_rows, plan), a.repeats + 1)
        finally:
            ex.close()
        med[workers] = float(np.median(t[1:]))
        rows.append((f"dask LocalCluster, {workers} worker{'s' if workers > 1 else ''}", t[0], med[workers], p))
    pairs = a.candidates * (a.points + a.candidates)  # each candidate's own column joins the points
    print("| executor | first query (ships Phi) | later queries (median) | pick |")
    print("|---|---|---|---|")
    for name, first, later, picks in rows:
        print(f"| {name} | {first:.2f} s | {later:.2f} s | {picks[-1]} |")
    same = len({p[-1] for *_, p in rows}) == 1
    print(f"\nsame pick on every row: {same}")
    print(f"1 worker / 2 workers: {med[1] / med[2]:.2f} x")
    s = float(np.median(serial_t))
    print(f"serial cost per candidate x point pair: {s / pairs * 1e9:.2f} ns "
          f"(rank {a.rank}); per task of {a.block_rows:,} rows: {s / n_blocks * 1e3:.1f} ms")
    print(f"per-query overhead on the cluster (2 workers minus serial / 2): {med[2] - s / 2:+.2f} s")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
