"""Class weights "evident" against "balanced" on the thesis' imbalanced ARLS experiments (issue 20 §4).

Seed 002 §4.3.2 with the thesis' kernels, strategy ARLS (expected risk), the app's per-label
weights: imbalanced circles (100:1; width 1, lambda 0.1, the row of ``labeler reproduce`` that
uses "balanced" weights from the labels) and MAGIC with 10 hadrons per gamma (width 1.5,
lambda 0.1, standardised features). Balanced validation sets, so accuracy = balanced accuracy.
Printed: mean balanced accuracy (%) over the seeds at a few label counts, per weighting, and
the number of labels of the rare class at the end.

Usage: python benchmarks/evident_weights.py [--seeds 3] [--budget 150]
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from labeler.runtime import configure_threads  # noqa: E402

configure_threads()

import numpy as np  # noqa: E402

from core.kernels import Kernel  # noqa: E402
from labeler.data import load_dataset  # noqa: E402
from labeler.experiments.simulate import prepare_features, simulate  # noqa: E402

EXPERIMENTS = {
    "circles": ({}, Kernel("rbf", width=1.0), 0.1),
    "magic-imbalanced": ({"n": 1300, "n_val": 2000}, Kernel("rbf", width=1.5), 0.1),
}
WEIGHTINGS = ("balanced", "evident")
MARKS = (10, 25, 50, 100, 150, 200)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--budget", type=int, default=150)
    args = ap.parse_args(argv)
    marks = [m for m in MARKS if m <= args.budget]
    for name, (opts, kernel, lam) in EXPERIMENTS.items():
        print(f"\n{name}: ARLS, {kernel.kind} width {kernel.width:g}, lambda {lam:g}, {args.seeds} seeds; "
              "balanced accuracy (%) on the balanced validation set")
        print("| weighting | " + " | ".join(f"@{m}" for m in marks) + " | rare-class labels at the end |")
        print("|---|" + "---|" * (len(marks) + 1))
        for weighting in WEIGHTINGS:
            acc = {m: [] for m in marks}
            rare = []
            for seed in range(args.seeds):
                ds = load_dataset(name, seed=seed, **opts)
                X, X_val = prepare_features(ds, ds.X_val)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    c = simulate(ds, strategy="arls", budget=args.budget, seed=seed, kernel=kernel, lam=lam,
                                 weighting=weighting, X=X, X_val=X_val, y_val=ds.y_val)
                for m in marks:
                    acc[m].append(float(c.loc[c.n_labeled == m, "balanced_accuracy"].iloc[0]))
                labels, counts = np.unique(c["label"], return_counts=True)
                rare.append(int(counts.min()) if labels.size == len(ds.classes) else 0)
            print(f"| {weighting} | " + " | ".join(f"{100 * np.mean(acc[m]):.1f}" for m in marks)
                  + f" | {np.mean(rare):.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
