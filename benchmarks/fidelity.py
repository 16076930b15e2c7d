"""Fidelity of approximate expected-risk scoring against the exact score; prints tables.

Exact Active RLS scores every unlabelled candidate by its expected risk over the whole pool
(seed 002 eq. 3.50, docs/algorithms.md §3): O(n^2) per query with a dense posterior, O(n^2 r) with a
factor (docs/algorithms.md §8). :class:`core.criteria.subsampled.SubsampledExpectedRisk` scores a subset
of candidates (smallest margin plus uniform draws) on a common subsample of the pool. This
script measures what that costs in learning, on each data set:

* pick agreement: over the queries of an exact run, how often the approximate pick (computed
  on the same learner state) is the exact pick;
* regret: the exact expected risk of the approximate pick relative to the best,
  ``E[approx] / E[best] - 1``, and the percentile rank of the approximate pick among the
  exact scores (0 = the exact best);
* learning curves: an exact run and an approximate run (each labelling its own picks with the
  true labels), pool accuracy after every label; the area under each curve (mean accuracy in
  per cent over the queries) and their difference in points;
* cost: median time of one exact and one approximate scoring, and their ratio, in this run.

Usage::

    python benchmarks/fidelity.py                 # n = 20,000 (moons, magic), mnist 10,000; 50 queries
    python benchmarks/fidelity.py --quick         # n = 2,000, 15 queries, a minute
    python benchmarks/fidelity.py --posterior nystrom --rank 300   # the same on a Nystrom factor

Every random choice is seeded (``--seed``).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from labeler.runtime import configure_threads  # noqa: E402

configure_threads()  # before numpy and numba load (labeler/runtime.py)

import numpy as np  # noqa: E402

from core.criteria.subsampled import SubsampledExpectedRisk  # noqa: E402
from core.kernels import Kernel  # noqa: E402
from core.kernels.factors import nystrom_factor  # noqa: E402
from core.learner import ActiveRLS  # noqa: E402
from core.rls import default_widths  # noqa: E402
from labeler.data import load_dataset  # noqa: E402
from labeler.data.preprocessing import pca_reduce, standardize  # noqa: E402

_MEDIAN_AT = 6  # default_widths(X) is median * 2**[-3, ..., 2]: index 6 is the median itself


def load(name: str, n: int, seed: int):
    """Standardised features, labels (as class indices), classes, width and lam of a data set."""
    if name == "moons":
        ds = load_dataset("moons", n=n, seed=seed, n_val=2)
    elif name == "magic":
        ds = load_dataset("magic", n=min(n, 17_000), seed=seed, n_val=2)
    elif name == "mnist":
        ds = load_dataset("mnist", n=min(n, 10_000), seed=seed)
    else:
        raise SystemExit(f"unknown data set {name!r}; choose moons, magic or mnist")
    X = np.asarray(ds.X, dtype=np.float64)
    if name == "mnist":
        X, _ = pca_reduce(X / 255.0, 50, seed=seed)
    else:
        X, _ = standardize(X)
    classes = list(ds.classes)
    y = np.searchsorted(np.asarray(classes), ds.y)
    width = ds.params.get("width") if isinstance(ds.params.get("width"), (int, float)) else None
    if width is None or name == "mnist":
        width = float(default_widths(X)[_MEDIAN_AT])
    lam = ds.params.get("lam") if isinstance(ds.params.get("lam"), (int, float)) else 0.1
    return X, y, list(range(len(classes))), float(width), float(lam)


def build(X, classes, width, lam, posterior, rank, seed):
    kernel = Kernel("rbf", width=width)
    if posterior == "dense":
        return ActiveRLS.from_features(X, classes=classes, kernel=kernel, lam=lam, random_state=seed)
    Phi = nystrom_factor(X, kernel, rank, method="kmeans", seed=seed)
    return ActiveRLS.from_factor(Phi, classes=classes, lam=lam, random_state=seed)


def seed_labels(learner, y, classes, seed):
    rng = np.random.default_rng(seed)
    first = [int(rng.choice(np.flatnonzero(y == c))) for c in classes]
    learner.add_many(first, [int(y[i]) for i in first])


def exact_pick(learner):
    unl = learner.unlabeled_indices
    s = learner.expected_risk()[unl]
    return int(unl[np.argmin(s)]), unl, s


def approx_pick(learner, criterion):
    unl = learner.unlabeled_indices
    s = learner.score(criterion, unl)
    return int(unl[np.argmin(s)])


def accuracy(learner, y):
    return 100.0 * float(np.mean(learner.predict() == y))


def run(name, args):
    X, y, classes, width, lam = load(name, args.n, args.seed)
    n = X.shape[0]
    criterion = SubsampledExpectedRisk(args.n_uncertain, args.n_random, min(args.n_points, n), seed=args.seed)
    # exact run: agreement and regret on its own states, its learning curve
    learner = build(X, classes, width, lam, args.posterior, args.rank, args.seed)
    seed_labels(learner, y, classes, args.seed)
    agree, excess, ranks, t_exact, t_approx = [], [], [], [], []
    curve_exact = [accuracy(learner, y)]
    for _ in range(args.queries):
        t0 = time.perf_counter()
        best, unl, s = exact_pick(learner)
        t1 = time.perf_counter()
        pick = approx_pick(learner, criterion)
        t2 = time.perf_counter()
        t_exact.append(t1 - t0)
        t_approx.append(t2 - t1)
        e_best, e_pick = float(s.min()), float(s[np.searchsorted(unl, pick)])
        agree.append(pick == best)
        excess.append(e_pick / e_best - 1.0 if e_best > 0 else 0.0)
        ranks.append(100.0 * float(np.mean(s < e_pick)))
        learner.add(best, int(y[best]))
        curve_exact.append(accuracy(learner, y))
    del learner
    # approximate run: its own picks, its own curve
    learner = build(X, classes, width, lam, args.posterior, args.rank, args.seed)
    seed_labels(learner, y, classes, args.seed)
    curve_approx = [accuracy(learner, y)]
    for _ in range(args.queries):
        pick = approx_pick(learner, criterion)
        learner.add(pick, int(y[pick]))
        curve_approx.append(accuracy(learner, y))
    del learner
    return {
        "data": name, "n": n, "T": len(classes),
        "agree": 100.0 * float(np.mean(agree)),
        "excess_med": 100.0 * float(np.median(excess)), "excess_max": 100.0 * float(np.max(excess)),
        "rank_med": float(np.median(ranks)), "rank_max": float(np.max(ranks)),
        "auc_exact": float(np.mean(curve_exact)), "auc_approx": float(np.mean(curve_approx)),
        "final_exact": curve_exact[-1], "final_approx": curve_approx[-1],
        "ms_exact": 1e3 * float(np.median(t_exact)), "ms_approx": 1e3 * float(np.median(t_approx)),
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="n = 2,000 and 15 queries")
    p.add_argument("--n", type=int, default=20_000, help="pool size (magic at most 17,000, mnist 10,000)")
    p.add_argument("--queries", type=int, default=50)
    p.add_argument("--datasets", default="moons,magic,mnist")
    p.add_argument("--posterior", choices=("dense", "nystrom"), default="dense")
    p.add_argument("--rank", type=int, default=300, help="landmarks of the Nystrom factor")
    p.add_argument("--n-uncertain", type=int, default=200)
    p.add_argument("--n-random", type=int, default=300)
    p.add_argument("--n-points", type=int, default=2_000, help="pool subsample of the risk sum")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.quick:
        args.n, args.queries = 2_000, 15
    print(f"# fidelity of SubsampledExpectedRisk(n_uncertain={args.n_uncertain}, n_random={args.n_random}, "
          f"n_points={args.n_points}) vs exact expected risk; posterior {args.posterior}"
          + (f" rank {args.rank}" if args.posterior != "dense" else "") + f"; {args.queries} queries, seed {args.seed}")
    head = (f"{'data':<7}{'n':>7}{'T':>3} {'same pick':>9} {'excess med/max %':>17} {'rank med/max %':>15} "
            f"{'AUC exact':>9} {'AUC approx':>10} {'diff':>6} {'final ex/ap':>12} {'ms exact':>9} {'ms approx':>9} {'ratio':>6}")
    print(head)
    print("-" * len(head))
    for name in args.datasets.split(","):
        r = run(name.strip(), args)
        print(f"{r['data']:<7}{r['n']:>7}{r['T']:>3} {r['agree']:>8.0f}% {r['excess_med']:>8.3f}/{r['excess_max']:<8.3f} "
              f"{r['rank_med']:>7.2f}/{r['rank_max']:<7.2f} {r['auc_exact']:>9.2f} {r['auc_approx']:>10.2f} "
              f"{r['auc_approx'] - r['auc_exact']:>+6.2f} {r['final_exact']:>5.1f}/{r['final_approx']:<6.1f} "
              f"{r['ms_exact']:>9.1f} {r['ms_approx']:>9.1f} {r['ms_exact'] / r['ms_approx']:>5.1f}x", flush=True)


if __name__ == "__main__":
    main()
