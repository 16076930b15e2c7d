"""What graph-kernel RLS costs as a candidate of the model choice (docs/defaults.md "Graph-kernel RLS").

On two-moons pools of n points with the 10-NN graph the graph models share, per n: the
one-time build of the candidate (its 100 smallest Laplacian eigenpairs, ``spectral_factor``:
once per session or simulation, never per label), then at l labels (binary, random labels)
one evaluation's work for it (the labels given in one ``add_many`` and its exact LOO, the
remove step of docs/algorithms.md §8, §18) beside the same for the harmonic function (one
refit and its LOO solves, §5). Seconds, the median of ``--repeat`` runs; the 1-minute load
average is printed (a shared machine: compare within one run, never as quiet-machine figures).

``--switches TASK:SEED ...`` prints instead the model choice's switches on tasks of
``benchmarks/defaults.py`` (the default's settings, 100 labels) without and with the candidate.

Usage::

    python benchmarks/graph_rls_cost.py                       # n = 1,000, 5,000, 20,000; l = 50, 200
    python benchmarks/graph_rls_cost.py --n 2000 --labels 100
    python benchmarks/graph_rls_cost.py --switches iris:0 spheres:1 digits-10:1
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from labeler.runtime import configure_threads  # noqa: E402

configure_threads()

import numpy as np  # noqa: E402
from sklearn.datasets import make_moons  # noqa: E402

from core.graph.active import GraphLearner  # noqa: E402
from core.kernels import knn_graph  # noqa: E402
from core.kernels.graph import spectral_factor  # noqa: E402
from core.learner import ActiveRLS  # noqa: E402
from labeler.session.lowrank import default_rank  # noqa: E402


def _median_seconds(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def measure(n, labels, repeat=3, seed=0):
    """One row per label count: (n, l, build s, graph-RLS evaluation s, harmonic evaluation s)."""
    X, y = make_moons(n, noise=0.1, random_state=seed)
    W = knn_graph(X, 10, seed=seed)
    rank = default_rank("spectral", n)
    t = time.perf_counter()
    Phi, _ = spectral_factor(W, rank, seed=seed)
    build = time.perf_counter() - t
    rng = np.random.default_rng(seed)
    rows = []
    for l in labels:
        idx = [int(i) for i in rng.choice(n, l, replace=False)]
        lab = [int(y[i]) for i in idx]

        def graph_rls():
            learner = ActiveRLS.from_factor(Phi, classes=[0, 1], lam=0.1, weighting="balanced")
            learner.add_many(idx, lab)
            learner.loo_decision_values()

        def harmonic():
            learner = GraphLearner(W, [0, 1], "harmonic")
            learner.add_many(idx, lab)
            learner.loo_decision_values()

        rows.append((n, l, build, _median_seconds(graph_rls, repeat), _median_seconds(harmonic, repeat)))
    return rows


def switches(task, seed):
    """The switches of the default's model choice on ``task`` / ``seed`` without and with graph-kernel RLS."""
    import warnings

    import defaults as bench
    from labeler.experiments.model_select_simulate import simulate_auto_model
    from labeler.session.model_selection import AUTO_CANDIDATES

    ds = bench.TASKS[task][1](seed)
    chosen = bench._app(ds, seed)
    out = []
    for candidates in (AUTO_CANDIDATES, tuple(AUTO_CANDIDATES) + ("graph-rls",)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            curve = simulate_auto_model(ds, budget=min(bench.BUDGET, len(ds.y) - 1), seed=seed, chosen=chosen,
                                        candidates=candidates)
        out.append("; ".join(f"{a} -> {b} at {n} labels ({r[r.index('p = '):].split(' <')[0]})"
                             for n, a, b, r in curve.attrs["switches"]) or "no switch")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1_000, 5_000, 20_000])
    ap.add_argument("--labels", type=int, nargs="+", default=[50, 200])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--switches", nargs="+", metavar="TASK:SEED", help="print the switches instead")
    args = ap.parse_args(argv)
    if args.switches:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        print("| task | seed | without graph-kernel RLS | with it |")
        print("|---|---:|---|---|")
        for item in args.switches:
            task, seed = item.rsplit(":", 1)
            print(f"| {task} | {seed} | " + " | ".join(switches(task, int(seed))) + " |", flush=True)
        return 0
    print(f"load average (1 min) at start: {os.getloadavg()[0]:.1f}")
    print("| n | labels | eigenpairs, once (s) | graph-RLS: labels + LOO (s) | harmonic: refit + LOO (s) |")
    print("|---:|---:|---:|---:|---:|")
    for n in args.n:
        for row in measure(n, args.labels, args.repeat):
            print("| {:,} | {} | {:.2f} | {:.4f} | {:.4f} |".format(*row), flush=True)
    print(f"load average (1 min) at end: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
