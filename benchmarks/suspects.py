"""Suspect labels: precision among the top k with 5 % of a table's labels flipped (issue 21).

For each task, 5 % of the pool's labels (k of them) are flipped at random to another class
and the table is written as a CSV. ``labeler suspects`` ranks its rows
(:mod:`labeler.experiments.suspects`: the app's kernel model fitted on every label, width and
lam tuned by leave-one-out, the calibrated exact LOO probability that each label is wrong);
precision@k is the share of flipped rows among the k most suspect. ``standardized`` ranks the
same model's labels with the LOO values divided by their LOO predictive spread first
(:func:`core.calibration.standardized_suspicion`, a z-score), an alternative measured here.

The comparison: cleanlab's ``find_label_issues`` (ranked by self-confidence) on 5-fold
out-of-fold probabilities of the same model -- kernel RLS with the same kernel, lam and class
weights, trained on the other four folds, its decision values turned into probabilities by the
same temperature calibration fitted on the out-of-fold values. Its precision@k counts the
flipped rows among the first k it returns (fewer returned count as misses).

Usage::

    python benchmarks/suspects.py                     # all tasks, 2 seeds
    python benchmarks/suspects.py --tasks moons --seeds 1
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from core.calibration import fit_temperature, standardized_suspicion  # noqa: E402
from core.criteria.risk import target_codes  # noqa: E402
from labeler.data import load_dataset  # noqa: E402
from labeler.experiments.simulate import app_settings  # noqa: E402
from labeler.experiments.suspects import fit_all_labels, suspect_table  # noqa: E402

TASKS = {"breast-cancer": None, "moons": ("moons", {}), "magic": ("magic", {}),
         "digits": ("digits", {}), "mnist-2000": ("mnist", {"n": 2000})}
FLIP_SHARE = 0.05


def task_frame(name: str, seed: int) -> pd.DataFrame:
    """The task's pool as a table: id, feature columns, label (true)."""
    if TASKS[name] is None:
        from sklearn.datasets import load_breast_cancer

        frame = load_breast_cancer(as_frame=True).frame.rename(columns={"target": "label"})
        frame["label"] = np.where(frame["label"] == 1, "benign", "malignant")
    else:
        source, options = TASKS[name]
        ds = load_dataset(source, seed=seed, **options)
        frame = pd.DataFrame(np.asarray(ds.X), columns=[f"f{j}" for j in range(ds.X.shape[1])])
        frame["label"] = [f"c{v}" for v in np.asarray(ds.y).tolist()]
    frame.insert(0, "id", [f"r{i}" for i in range(len(frame))])
    return frame


def flip(frame: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Flip ``FLIP_SHARE`` of the labels to another class drawn at random; return the rows."""
    rng = np.random.default_rng(1000 + seed)
    y = frame["label"].to_numpy().astype(object)
    classes = sorted(set(y))
    k = int(round(FLIP_SHARE * len(y)))
    rows = np.sort(rng.choice(len(y), k, replace=False))
    for i in rows:
        y[i] = rng.choice([c for c in classes if c != y[i]])
    out = frame.copy()
    out["label"] = y
    return out, rows


def cleanlab_ranking(ds, learner, folds: int = 5, seed: int = 0) -> np.ndarray:
    """Rows in cleanlab's order on 5-fold out-of-fold probabilities of the same kernel RLS."""
    from cleanlab.filter import find_label_issues

    X = app_settings(ds, seed)["X"]
    names = list(learner.classes)
    y = np.array([names.index(v) for v in np.asarray(ds.y).astype(str)])
    kernel, lam = learner.kernel, float(learner.lam)
    w = np.array([learner.class_weights[c] for c in names])
    T = learner.n_outputs
    codes = target_codes(T, len(names))[y]  # (n, T) +-1
    rng = np.random.default_rng(seed)
    fold = rng.permutation(len(y)) % folds
    F = np.zeros((len(y), T))
    for f in range(folds):
        tr, te = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        K = kernel(X[tr], X[tr])
        K[np.diag_indices_from(K)] += lam / w[y[tr]]
        alpha = np.linalg.solve(K, codes[tr])
        F[te] = kernel(X[te], X[tr]) @ alpha
    probs, _ = fit_temperature(F, y).confidence(F)
    issues = find_label_issues(labels=y, pred_probs=probs, return_indices_ranked_by="self_confidence")
    return np.asarray(issues)


def run(name: str, seed: int, tmp: str) -> dict:
    frame, flipped = flip(task_frame(name, seed), seed)
    path = os.path.join(tmp, f"{name}_{seed}.csv")
    frame.to_csv(path, index=False)
    ds = load_dataset(path, seed=seed)
    t0 = time.perf_counter()
    learner, classes = fit_all_labels(ds, "rls", seed)
    table = suspect_table(learner, classes, ds.ids)
    seconds = time.perf_counter() - t0
    k = flipped.size
    truth = {f"r{i}" for i in flipped}
    ours = float(np.mean([i in truth for i in table["id"][:k]]))
    names = list(learner.classes)
    order = np.fromiter(learner.labels, dtype=np.intp, count=learner.n_labeled)
    codes = np.array([names.index(v) for v in learner.labels.values()], dtype=np.int64)
    F = learner.loo_decision_values()
    z_score, _ = standardized_suspicion(F, codes, learner.loo_predictive_sd())
    z_ids = np.asarray(ds.ids)[order][np.argsort(-z_score, kind="stable")]
    z_precision = float(np.mean([i in truth for i in z_ids[:k]]))
    ranked = cleanlab_ranking(ds, learner, seed=seed)
    ids = np.asarray(ds.ids)
    theirs = float(sum(ids[i] in truth for i in ranked[:k]) / k)
    return {"task": name, "seed": seed, "rows": len(frame), "classes": len(classes), "flipped": k,
            "precision_at_k": ours, "standardized_precision_at_k": z_precision, "cleanlab_precision_at_k": theirs, "cleanlab_flagged": len(ranked),
            "seconds": seconds}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--seeds", type=int, default=2)
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in args.tasks:
            for seed in range(args.seeds):
                rows.append(run(name, seed, tmp))
                print(f"# {rows[-1]}", file=sys.stderr, flush=True)
    table = pd.DataFrame(rows).groupby("task", sort=False).agg(
        rows=("rows", "first"), classes=("classes", "first"), flipped=("flipped", "first"),
        precision_at_k=("precision_at_k", "mean"), standardized=("standardized_precision_at_k", "mean"),
        cleanlab=("cleanlab_precision_at_k", "mean"),
        cleanlab_flagged=("cleanlab_flagged", "mean"), seconds=("seconds", "mean"))
    print(f"Precision among the k most suspect labels, {FLIP_SHARE:.0%} flipped, mean of {args.seeds} seed(s)")
    print(table.round(3).to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
