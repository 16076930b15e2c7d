"""Cost of one LOO re-tune after a bulk label (one class dominant), labels m vs seconds.

"before": what a re-tune did when a uniform subsample of MAX_TUNE_LABELS lost a small class:
the LOO over every label, an m x m eigendecomposition per width (O(W m^3)).
"dense": :func:`core.rls.tuning.auto_tune` now with an RBF kernel (a class-stratified
subsample of at most about MAX_TUNE_LABELS labels). "nystrom": the same with a Nystrom kernel
of rank r (exact factor LOO on every label up to :func:`core.rls.tuning.tune_label_cap`,
docs/algorithms.md §17).

    OPENBLAS_NUM_THREADS=1 python benchmarks/bulk_tune.py --m 500 1000 2000 4000 10000 30000

``--session N M``: a moons session of N points (Nystrom, rank 100), 3 labels of each class, then
ONE box label of M points of one class (``label_points``, the re-tune due in the request), then
the page's other reads at that label count (calibration, suspects, stopping signal, tuning view).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from core.kernels import Kernel
from core.kernels.factors import NystromKernel
from core.rls.tuning import auto_tune

try:
    from core.rls.tuning import tune_label_cap
except ImportError:  # an older commit (the "before" of --session): the session run needs only auto_tune
    tune_label_cap = None
from core.rls.loo import loo_path


def problem(m: int, d: int = 32, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    labels = ["c0"] * m
    for i, c in enumerate(["c1"] * 5 + ["c2"] * 3):
        labels[i] = c
        X[i] += 2.0
    return X, labels


def session_run(n: int, m: int) -> None:
    import os
    import tempfile

    from labeler.session import LabelingSession, SessionConfig

    cfg = SessionConfig(dataset="moons", dataset_options={"n": n}, seed=1, posterior="nystrom", rank=100)
    s = LabelingSession.create(os.path.join(tempfile.mkdtemp(), "s.sqlite"), cfg)
    y = np.asarray(s.dataset.y).astype(str)
    for c in np.unique(y):
        for i in np.flatnonzero(y == c)[:3]:
            s.label_points([int(i)], str(c))
    first = str(np.unique(y)[0])
    box = [int(i) for i in np.flatnonzero(y == first)[3:3 + m]]
    print(f"moons n = {n:,}, Nystrom rank 100; one box label of {len(box):,} points")
    print("| step | labels | seconds |")
    print("|---|---|---|")
    t = time.perf_counter()
    s.label_points(box, first)
    print(f"| label_points (store, update, re-tune) | {s.learner.n_labeled:,} | {time.perf_counter() - t:.2f} |")
    for name, call in [("calibration", s.calibration), ("suspects", s.suspects),
                       ("stopping_signal", s.stopping_signal), ("settings.tuning", s.settings.tuning)]:
        t = time.perf_counter()
        call()
        print(f"| {name} | {s.learner.n_labeled:,} | {time.perf_counter() - t:.2f} |", flush=True)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m", type=int, nargs="+", default=[500, 1000, 2000, 4000])
    ap.add_argument("--rank", type=int, default=300)
    ap.add_argument("--widths", type=float, nargs="+", default=[3.0, 6.0, 12.0])
    ap.add_argument("--before-max", type=int, default=4000, help="largest m timed for 'before'")
    ap.add_argument("--session", type=int, nargs=2, metavar=("N", "M"), help="the session run instead")
    args = ap.parse_args(argv)
    if args.session:
        session_run(*args.session)
        return
    classes, weights = ["c0", "c1", "c2"], {"c0": 1.0, "c1": 1.0, "c2": 1.0}
    print(f"widths {args.widths}, lam grid of 9 at the chosen width; Nystrom rank {args.rank} "
          f"(cap {tune_label_cap(args.rank):,} labels); dense cap {tune_label_cap(None):,}")
    X, labels = problem(200)  # warm-up: one-time imports (scipy.stats for the sign tests) are not timed
    auto_tune(X, labels, classes, weights, kernel=Kernel("rbf", width=6.0), lam=0.1, tune_width=True,
              tune_lam=True, widths=args.widths)
    print("| labels m | before s (all labels, dense) | dense now s (points) | nystrom now s (points) |")
    print("|---|---|---|---|")
    for m in args.m:
        X, labels = problem(m)
        Y = np.where(np.array(labels)[:, None] == np.array(classes)[None], 1.0, -1.0)
        if m <= args.before_max:
            t = time.perf_counter()
            for w in args.widths:
                loo_path(Kernel("rbf", width=w)(X), Y, None, [0.1], fit_offset=False)
            loo_path(Kernel("rbf", width=args.widths[0])(X), Y, None, np.geomspace(1e-3, 10, 9), fit_offset=False)
            before = f"{time.perf_counter() - t:.2f}"
        else:
            before = "not run"
        kw = dict(lam=0.1, tune_width=True, tune_lam=True, widths=args.widths)
        t = time.perf_counter()
        fit = auto_tune(X, labels, classes, weights, kernel=Kernel("rbf", width=args.widths[1]), **kw)
        dense = f"{time.perf_counter() - t:.2f} ({fit.n_points:,})"
        Z = X[np.random.default_rng(1).choice(m, min(args.rank, m - 1), replace=False)]
        t = time.perf_counter()
        fit = auto_tune(X, labels, classes, weights, kernel=NystromKernel("rbf", args.widths[1], landmarks=Z), **kw)
        nys = f"{time.perf_counter() - t:.2f} ({fit.n_points:,})"
        print(f"| {m:,} | {before} | {dense} | {nys} |", flush=True)


if __name__ == "__main__":
    main()
