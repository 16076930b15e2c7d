"""The app's stopping rule checked against the truth (issue 21 item 5).

For each task, ``labeler simulate``'s loop (:func:`labeler.experiments.simulate.simulate`, the
app's defaults through ``app_settings``) labels up to ``--budget`` points (or the pool's end)
and records after every label the verdict of the app's rule (:mod:`labeler.session.stopping`:
"likely enough" when successive predictions over the whole pool agree, kappa, and the LOO
error allows it). The table gives the label count of the first "likely enough", the accuracy
there (validation set, else the unlabelled pool), the final accuracy, their gap in points and
the labels the rule would have saved.

Usage::

    python benchmarks/stopping.py --seeds 3                 # 4 tasks, budget 500, 3 seeds
    python benchmarks/stopping.py --tasks moons --budget 200
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from labeler.data import load_dataset  # noqa: E402
from labeler.experiments.simulate import app_settings, simulate  # noqa: E402
from labeler.session.stopping import LIKELY_ENOUGH  # noqa: E402

TASKS = {"moons": ("moons", {}), "magic": ("magic", {}), "digits": ("digits", {}),
         "spheres": ("spheres", {})}


def run(name: str, seed: int, budget: int) -> dict:
    source, options = TASKS[name]
    ds = load_dataset(source, seed=seed, **options)
    chosen = app_settings(ds, seed, X_val=ds.X_val)
    budget = min(budget, len(ds.y) - 1)
    y_val = None if ds.y_val is None else np.asarray(ds.y_val)
    curve = simulate(ds, "auto", budget, seed, kernel=chosen["kernel"], lam=chosen["lam"],
                     weighting=chosen["weighting"], X=chosen["X"], X_val=chosen["X_val"], y_val=y_val,
                     auto_tune=chosen["auto_tune"])
    enough = np.flatnonzero(curve["stop"].to_numpy() == LIKELY_ENOUGH)
    final = float(curve["accuracy"].iloc[-1])
    row = {"task": name, "seed": seed, "labels_run": int(curve["n_labeled"].iloc[-1]), "final_accuracy": final}
    if enough.size:
        k = int(enough[0])
        at = float(curve["accuracy"].iloc[k])
        row.update(stop_at=int(curve["n_labeled"].iloc[k]), accuracy_at_stop=at,
                   gap_points=100 * (final - at), saved=int(curve["n_labeled"].iloc[-1] - curve["n_labeled"].iloc[k]))
    else:
        row.update(stop_at=np.nan, accuracy_at_stop=np.nan, gap_points=np.nan, saved=0)
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + seeds - 1")
    args = parser.parse_args(argv)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in args.tasks:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                rows.append(run(name, seed, args.budget))
                print(f"# {rows[-1]}", file=sys.stderr, flush=True)
    pd.set_option("display.width", 200)
    print(f"The app's stopping rule against the truth: strategy auto, up to {args.budget} labels")
    table = pd.DataFrame(rows)
    print(table.round(4).to_string(index=False))
    print(f"\nMean over {args.seeds} seed(s); within_1_point: share of runs whose accuracy at the stop "
          "is at most 1 point below the final one")
    table["within_1_point"] = table["gap_points"] <= 1.0
    print(table.groupby("task", sort=False)[["final_accuracy", "stop_at", "accuracy_at_stop", "gap_points",
                                             "saved", "within_1_point"]].mean().round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
