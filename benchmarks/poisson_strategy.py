"""Which query strategy a Poisson-learning session takes by default (issue 20 §3): VOpt, Sigma-opt,
margin and "auto" (VOpt for the first 10 labels, then margin: :func:`core.strategies.cold_strategy`)
on Poisson learning, against the harmonic function with Zhu et al.'s expected risk
(its session default) and with VOpt, and LGC.

Every run is ``labeler simulate FILE --model M --strategy S`` (the graph simulation,
:func:`labeler.experiments.graph_simulate.simulate_graph`, on the app's features from
:func:`labeler.experiments.simulate.app_settings`, a 10-NN graph, no initial labels, 100
queries; accuracy on the unlabelled rest of the pool). AUBC: the area under the accuracy curve
from 10 to 100 labels (trapezoids, divided by the 90 labels: a mean accuracy), as
``benchmarks/defaults.py``. Tasks: 1,500 of scikit-learn's 1,797 digits (10 classes) and a
2,000-image subset of the shipped MNIST test set (10 classes), drawn by the seed.

Usage::

    python benchmarks/poisson_strategy.py                      # digits and mnist, seeds 0 1 2
    python benchmarks/poisson_strategy.py --tasks digits --seeds 0 --methods poisson-vopt
    python benchmarks/poisson_strategy.py --eigenpairs 20000 100000   # the variance criteria's set-up

``--eigenpairs N ...`` times what the first VOpt query of a pool of N points costs: its 50
smallest Laplacian eigenpairs (:func:`core.kernels.laplacian_eigenpairs`, normalised) on a 10-NN
graph of N Gaussian points in 10 dimensions (behind ``core.graph.variance.VARIANCE_MAX_POINTS``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

#: method -> (model, strategy) of ``labeler simulate --model --strategy``
METHODS = {
    "poisson-vopt": ("poisson", "vopt"),
    "poisson-sigmaopt": ("poisson", "sigmaopt"),
    "poisson-margin": ("poisson", "margin"),
    "poisson-auto": ("poisson", "auto"),
    "harmonic-auto": ("harmonic", "auto"),
    "harmonic-vopt": ("harmonic", "vopt"),
    "lgc-margin": ("lgc", "margin"),
    "lgc-vopt": ("lgc", "vopt"),
    "lgc-auto": ("lgc", "auto"),
}
#: task -> (built-in name, options)
TASKS = {"digits": ("digits", {"n": 1500}), "mnist": ("mnist", {"n": 2000})}
BUDGET = 100


def aubc(n_labeled: np.ndarray, accuracy: np.ndarray, lo: int = 10, hi: int = BUDGET) -> float:
    """Mean accuracy over ``lo..hi`` labels (trapezoids over the curve, divided by ``hi - lo``)."""
    keep = (n_labeled >= lo) & (n_labeled <= hi)
    x, y = n_labeled[keep].astype(float), accuracy[keep]
    return float(np.sum((y[1:] + y[:-1]) / 2 * np.diff(x)) / (hi - lo))


def run(task: str, seed: int, method: str) -> dict:
    from labeler.data import load_dataset
    from labeler.experiments.graph_simulate import simulate_graph
    from labeler.experiments.simulate import app_settings

    name, options = TASKS[task]
    ds = load_dataset(name, seed=seed, **options)
    X = app_settings(ds, seed)["X"]
    model, strategy = METHODS[method]
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        curve = simulate_graph(ds, model, strategy, BUDGET, seed, X=X)
    n, acc = curve["n_labeled"].to_numpy(), curve["accuracy"].to_numpy()
    at = {k: float(acc[n == k][0]) for k in (10, 25, 50, 100)}
    return {"aubc": aubc(n, acc), **at, "seconds": time.perf_counter() - t}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    ap.add_argument("--eigenpairs", nargs="+", type=int, metavar="N",
                    help="time the variance criteria's eigenpairs on N points instead")
    args = ap.parse_args(argv)
    if args.eigenpairs:
        from core.graph.variance import VARIANCE_RANK
        from core.kernels import knn_graph, laplacian_eigenpairs

        print("| n | kNN graph | 50 eigenpairs |\n|---|---|---|")
        for n in args.eigenpairs:
            X = np.random.default_rng(0).normal(size=(n, 10))
            t = time.perf_counter()
            W = knn_graph(X, 10, seed=0)
            graph = time.perf_counter() - t
            t = time.perf_counter()
            laplacian_eigenpairs(W, VARIANCE_RANK, normalized=True, seed=0)
            print(f"| {n:,} | {graph:.1f} s | {time.perf_counter() - t:.1f} s |", flush=True)
        print("load average:", " ".join(f"{v:.2f}" for v in os.getloadavg()))
        return 0
    print("| task | method | AUBC 10-100 | acc@10 | acc@25 | acc@50 | acc@100 | s/run |")
    print("|---|---|---|---|---|---|---|---|")
    for task in args.tasks:
        for method in args.methods:
            rows = [run(task, s, method) for s in args.seeds]

            def cell(key):
                v = np.array([r[key] for r in rows]) * 100
                return f"{v.mean():.1f} ± {v.std():.1f}"

            secs = np.mean([r["seconds"] for r in rows])
            print(f"| {task} | {method} | {cell('aubc')} | {cell(10)} | {cell(25)} | {cell(50)} | {cell(100)} "
                  f"| {secs:.0f} |", flush=True)
    print(f"\n({len(args.seeds)} seeds: {' '.join(map(str, args.seeds))}; mean ± sd over seeds, percent; "
          "accuracy on the unlabelled rest of the pool)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
