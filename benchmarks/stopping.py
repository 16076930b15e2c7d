"""The app's stopping rule checked against the truth (issue 21 item 5), beside the rules it
was chosen from.

For each task, ``labeler simulate``'s loop (:func:`labeler.experiments.simulate.simulate`, the
app's defaults through ``app_settings``) labels up to ``--budget`` points (or the pool's end).
After every label the app's rule (:mod:`labeler.session.stopping`: successive predictions over
the whole pool agree, kappa; at most 0.5 % of the pool's predictions changed over the window;
every cluster of the pool's nearest-neighbour graph holds a label) gives its verdict; the same
run also feeds the other rules of :data:`RULES`, each a
:class:`~labeler.session.stopping.StoppingMonitor` of its own. Per rule, task and seed the
table gives the label count of the first "likely enough", the accuracy there (validation set,
else the unlabelled pool), the final accuracy, their gap in points and the labels the rule
would have saved.

Usage::

    python benchmarks/stopping.py --seeds 3                 # 4 tasks, budget 500, 3 seeds
    python benchmarks/stopping.py --tasks moons --budget 200
    python benchmarks/stopping.py --tasks digits --seeds 3 --budget 150 --trace runs/   # keep each run
    python benchmarks/stopping.py --tasks digits --seeds 3 --replay runs/               # the rules on them again
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from core.calibration import estimated_error_rate, fit_calibration  # noqa: E402
from core.criteria.risk import predicted_class_indices  # noqa: E402
from core.rls.tuning import loo_readiness  # noqa: E402
from labeler.data import load_dataset  # noqa: E402
from labeler.experiments.oracle import loo_correct  # noqa: E402
from labeler.experiments.simulate import app_settings, simulate  # noqa: E402
from labeler.session import model as _model  # noqa: E402
from labeler.session.stopping import LIKELY_ENOUGH, StoppingMonitor, uncovered_share  # noqa: E402

TASKS = {"moons": ("moons", {}), "magic": ("magic", {}), "digits": ("digits", {}),
         "spheres": ("spheres", {})}

#: name: (StoppingMonitor options, use the clusters, largest fall of the estimated pool error
#: over the window in points (None: not used)). "app" is the rule the app uses; the rules with
#: ``max_window_changed`` 1 leave out the window's net change (the app's rule before it).
BEFORE = {"max_window_changed": 1.0}
RULES = {
    "kappa": (BEFORE, False, None),
    "app": ({}, True, None),
    "app_before": (BEFORE, True, None),
    "window_1pct": ({"max_window_changed": 0.01}, True, None),
    "clusters_2pct": ({"max_uncovered": 0.02, **BEFORE}, True, None),
    "kappa_spacing10": ({"spacing": 10, **BEFORE}, True, None),
    "kappa_0.995": ({"threshold": 0.995, **BEFORE}, True, None),
    "error_settled": (BEFORE, True, 1.0),
}


class RuleBank:
    """Feeds every rule of :data:`RULES` after each label of one run; records their verdicts."""

    def __init__(self, n: int, clusters):
        self.clusters = clusters
        self.monitors = {name: StoppingMonitor(n, **opts) for name, (opts, _, _) in RULES.items()}
        self.verdicts = {name: [] for name in RULES}
        self.uncovered, self.estimate, self.n_labeled, self.codes = [], [], [], []

    def __call__(self, learner, labeled):
        n = learner.n_labeled
        F = np.asarray(learner.decision_values, dtype=np.float64)
        codes = predicted_class_indices(F).astype(np.int32)
        ready = not loo_readiness(list(learner.labels.values()))
        loo_ok = loo_correct(learner) if ready else None
        uncovered = None if self.clusters is None else uncovered_share(self.clusters, np.flatnonzero(labeled))
        estimate = float("nan")
        if ready:
            classes = list(learner.classes)
            y = np.array([classes.index(v) for v in learner.labels.values()])
            pool = F[~labeled]
            cal = fit_calibration(learner.loo_decision_values(), y, F_pool=pool if len(classes) > 2 else None,
                                  n_classes=len(classes))
            estimate = estimated_error_rate(cal, pool).rate
        self.feed(n, codes, uncovered, estimate, loo_ok)

    def feed(self, n: int, codes, uncovered, estimate: float, loo_ok=None) -> None:
        """One step: the label count, the pool's predicted codes, the uncovered share (None: no
        clusters) and the estimated pool error; every rule gives its verdict."""
        codes = np.asarray(codes).astype(np.int32)
        self.n_labeled.append(n)
        self.codes.append(codes.astype(np.int16))
        self.uncovered.append(np.nan if uncovered is None else uncovered)
        self.estimate.append(estimate)
        for name, (_, use_clusters, settled) in RULES.items():
            monitor = self.monitors[name]
            monitor.record(n, codes)
            sig = monitor.signal(n, codes, loo_ok, uncovered=uncovered if use_clusters else None)
            enough = sig.enough
            if enough and settled is not None:
                span = monitor.window * monitor.spacing
                past = [e for k, e in zip(self.n_labeled, self.estimate) if k <= n - span]
                enough = bool(past) and np.isfinite(past[-1]) and 100 * (past[-1] - estimate) <= settled
            self.verdicts[name].append(enough)


def run(name: str, seed: int, budget: int, trace: str | None = None) -> list[dict]:
    source, options = TASKS[name]
    ds = load_dataset(source, seed=seed, **options)
    chosen = app_settings(ds, seed, X_val=ds.X_val)
    budget = min(budget, len(ds.y) - 1)
    y_val = None if ds.y_val is None else np.asarray(ds.y_val)
    bank = RuleBank(len(ds.y), _model.width_scale(chosen["X"]).components)
    curve = simulate(ds, "auto", budget, seed, kernel=chosen["kernel"], lam=chosen["lam"],
                     weighting=chosen["weighting"], X=chosen["X"], X_val=chosen["X_val"], y_val=y_val,
                     auto_tune=chosen["auto_tune"], observe=bank)
    app = curve["stop"].to_numpy() == LIKELY_ENOUGH
    assert np.array_equal(app, np.asarray(bank.verdicts["app"])), "the 'app' rule must be the session's"
    labels = curve["n_labeled"].to_numpy()
    if trace:  # every step's predictions, for trying further rules on this run
        np.savez_compressed(os.path.join(trace, f"{name}_{seed}.npz"), codes=np.array(bank.codes), n_labeled=labels,
                            accuracy=curve["accuracy"].to_numpy(), uncovered=np.array(bank.uncovered),
                            estimate=np.array(bank.estimate), index=curve["index"].to_numpy())
    return rule_rows(name, seed, bank, labels, curve["accuracy"].to_numpy())


def rule_rows(name: str, seed: int, bank: RuleBank, labels, accuracy) -> list[dict]:
    """Per rule: where it first says "likely enough", the accuracy there against the last one."""
    final = float(accuracy[-1])
    rows = []
    for rule, verdicts in bank.verdicts.items():
        enough = np.flatnonzero(verdicts)
        row = {"rule": rule, "task": name, "seed": seed, "labels_run": int(labels[-1]), "final_accuracy": final}
        if enough.size:
            k = int(enough[0])
            at = float(accuracy[k])
            row.update(stop_at=int(labels[k]), accuracy_at_stop=at, gap_points=100 * (final - at),
                       saved=int(labels[-1] - labels[k]), uncovered_at_stop=bank.uncovered[k])
        else:
            row.update(stop_at=np.nan, accuracy_at_stop=np.nan, gap_points=np.nan, saved=0, uncovered_at_stop=np.nan)
        rows.append(row)
    return rows


def replay(name: str, seed: int, trace: str) -> list[dict]:
    """The rules of :data:`RULES` on a run written by ``--trace`` (its predictions per step,
    cluster shares and error estimates), without simulating again: the rules do not steer the
    queries, so a run's verdicts do not depend on the rule it was made with."""
    data = np.load(os.path.join(trace, f"{name}_{seed}.npz"))
    bank = RuleBank(data["codes"].shape[1], None)
    for n, codes, uncovered, estimate in zip(data["n_labeled"], data["codes"], data["uncovered"], data["estimate"]):
        bank.feed(int(n), codes, None if np.isnan(uncovered) else float(uncovered), float(estimate))
    return rule_rows(name, seed, bank, data["n_labeled"], data["accuracy"])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--trace", help="folder to write each run's predictions per step to (npz)")
    parser.add_argument("--replay", help="folder of runs written by --trace: apply the rules to them instead of "
                                         "simulating (TASK_SEED.npz)")
    parser.add_argument("--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + seeds - 1")
    args = parser.parse_args(argv)
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in args.tasks:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                rows += replay(name, seed, args.replay) if args.replay else run(name, seed, args.budget, args.trace)
                for r in rows[-len(RULES):]:
                    print(f"# {r}", file=sys.stderr, flush=True)
    pd.set_option("display.width", 200)
    table = pd.DataFrame(rows)
    print(f"Stopping rules against the truth: strategy auto, up to {args.budget} labels "
          f"(rule 'app' is the app's)")
    print(table.round(4).to_string(index=False))
    table["within_1_point"] = table["gap_points"] <= 1.0
    print(f"\nMean over {args.seeds} seed(s); within_1_point: share of runs whose accuracy at the stop "
          "is at most 1 point below the final one")
    print(table.groupby(["rule", "task"], sort=False)[["final_accuracy", "stop_at", "accuracy_at_stop", "gap_points",
                                                       "saved", "within_1_point"]].mean().round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
