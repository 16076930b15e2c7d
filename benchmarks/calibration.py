"""Calibration of the shown confidence, and the pool error rate against the truth (issue 21).

For each task a learner starts as a new session would (:func:`labeler.experiments.simulate.
app_settings`: features, kernel, width and lam; fixed here, not re-tuned) and labels the points
the app's default strategy ("auto") asks for, with their true labels. At each label count of
``--labels`` it measures, on the task's held-out validation set:

* ECE (expected calibration error, 10 equal-width bins) of the soft confidence of docs/algorithms.md §2 and of
  the calibrated ones (:mod:`core.calibration`: temperature fitted on the labels' exact LOO
  decision values): ``plain`` (every label weight 1, prior ``N(log 2, 1)``: the first
  version), ``calibrated`` (:func:`core.calibration.fit_calibration`: class-count weights and
  prior; what the app uses with two classes) and ``pool-weighted`` (the same with the
  pool-margin weights; what the app uses with more than two classes), and the validation
  accuracy;
* the estimated error rate of the unlabelled pool (mean of ``1 - calibrated confidence``, with
  its 95 % interval) against the true error rate of the pool's predictions: over all label
  counts and seeds, their correlation, mean absolute gap and how often the interval holds it.

Usage::

    python benchmarks/calibration.py                        # all tasks, 2 seeds
    python benchmarks/calibration.py --tasks moons digits --seeds 1 --labels 20 50
    python benchmarks/calibration.py --tasks moons magic breast-cancer --labels 20 50 --variants
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from core.calibration import (CalibrationPrior, class_count_prior, class_count_weights,  # noqa: E402
                              estimated_error_rate, expected_calibration_error, fit_calibration, fit_temperature,
                              loo_margin_scale, pool_margin_weights, relative_prior)
from core.selection import nearest_labelled_mass  # noqa: E402
from core.confidence import soft_confidence  # noqa: E402
from core.criteria.risk import predicted_class_indices  # noqa: E402
from core.learner import ActiveRLS  # noqa: E402
from core.learner.out_of_pool import OutOfPoolPredictor  # noqa: E402
from core.strategies import query_one  # noqa: E402
from labeler.data import load_dataset  # noqa: E402
from labeler.experiments.simulate import app_settings  # noqa: E402

TASKS = {  # name: (load_dataset source, options)
    "moons": ("moons", {}),
    "digits": ("digits", {}),
    "magic": ("magic", {}),
    "mnist-2000": ("mnist", {"n": 2000}),
    "breast-cancer": (None, {}),
}


def _split(X, y, seed, n_val):
    """A random pool / validation split of a data set that has no validation set."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(y))
    return order[n_val:], order[:n_val]


def load_task(name: str, seed: int, tmp: str):
    """(dataset of the pool, X_val raw, y_val) for ``name``."""
    source, options = TASKS[name]
    if source is None:  # scikit-learn's bundled breast cancer table, read as a user's CSV
        from sklearn.datasets import load_breast_cancer

        data = load_breast_cancer(as_frame=True)
        frame = data.frame.rename(columns={"target": "label"})
        frame["label"] = np.where(frame["label"] == 1, "benign", "malignant")
        pool, val = _split(frame.to_numpy(), frame["label"].to_numpy(), seed, 200)
        path = os.path.join(tmp, f"breast_{seed}.csv")
        frame.iloc[pool].to_csv(path, index=False)
        ds = load_dataset(path, seed=seed)
        Xv = frame.iloc[val][list(ds.feature_names)].to_numpy(dtype=float)
        return ds, Xv, frame.iloc[val]["label"].to_numpy()
    ds = load_dataset(source, seed=seed, **options)
    if ds.X_val is not None:
        return ds, ds.X_val, np.asarray(ds.y_val)
    pool, val = _split(ds.X, ds.y, seed, len(ds.y) // 3)
    return ds.subset(pool) if hasattr(ds, "subset") else _Sub(ds, pool), np.asarray(ds.X)[val], np.asarray(ds.y)[val]


class _Sub:
    """The pool rows of a data set without a validation set (only what app_settings reads)."""

    def __init__(self, ds, rows):
        self.name, self.classes = ds.name, ds.classes
        self.X, self.y = np.asarray(ds.X)[rows], np.asarray(ds.y)[rows]
        self.X_val = self.y_val = None
        self.params = getattr(ds, "params", {})
        self.feature_names = getattr(ds, "feature_names", None)

    def __getattr__(self, key):
        raise AttributeError(key)


def _lapse_fit(F_loo, codes, weights, prior, beta: float = 20.0):
    """MAP fit of ``p = (1 - eps) softmax(a G) + eps / K`` (a lapse rate: a ceiling on the
    confidence) to the LOO values, ``eps ~ Beta(1, beta)`` on a grid of 51 values in [0, 0.5]
    and the slope's prior as the app's. Returns (slope, eps)."""
    from scipy.optimize import minimize_scalar
    from scipy.special import log_softmax

    G = np.asarray(F_loo, dtype=np.float64)
    G = np.column_stack([-G.reshape(-1), G.reshape(-1)]) if G.ndim == 1 or G.shape[1] == 1 else G  # binary: (-f, f)
    rows = np.arange(G.shape[0])
    best = None
    for eps in np.linspace(0.0, 0.5, 51):
        def objective(s):
            p = (1 - eps) * np.exp(log_softmax(np.exp(s) * G, axis=1))[rows, codes] + eps / G.shape[1]
            return (-(weights * np.log(p)).sum() + (s - prior.log_slope) ** 2 / (2 * prior.scale ** 2)
                    - (beta - 1.0) * np.log1p(-eps))
        r = minimize_scalar(objective, bounds=(prior.log_slope - 20, prior.log_slope + 20), method="bounded")
        if best is None or r.fun < best[0]:
            best = (r.fun, float(np.exp(r.x)), float(eps))
    return best[1], best[2]


def few_label_variants(app_fit, F_loo, codes, F_pool, X, labelled, F_val, correct) -> dict:
    """ECE of the alternatives tried for few labels:

    * ``prior_slope_1``: the prior centred on the slope 1 (the soft confidence's slope at 0);
    * ``slope_averaged``: the probabilities averaged over the slope's Laplace posterior
      (9-point Gauss-Hermite);
    * ``mass_weighted``: labels weighted by the pool mass each stands for
      (:func:`core.selection.nearest_labelled_mass`);
    * ``prior_mixture``: a mixture with the class prior, ``(1 - e) p + e pi`` with
      ``e = 2 / (n + 2)`` (``n`` labels in the fit, ``pi`` the labels' class shares plus one
      each): a confidence ceiling that fades as labels arrive;
    * ``lapse``: a lapse rate fitted with the slope (:func:`_lapse_fit`, prior Beta(1, 20));
    * ``pool_scale_prior``: the prior's mean moved to the unlabelled pool's margin scale
      (``log(2 + log(K - 1)) - log c_pool``, ``c_pool`` the geometric mean of the pool's
      margins) instead of the labels' LOO margin scale;
    * ``best_slope``: the least ECE any one slope reaches on the validation set (an oracle:
      what a temperature could do if its slope were known)."""
    K = 2 if np.asarray(F_loo).ndim == 1 or np.asarray(F_loo).shape[1] == 1 else np.asarray(F_loo).shape[1]
    weights = class_count_weights(codes, K)
    if F_pool is not None and K > 2:
        weights = weights * np.where(weights > 0, pool_margin_weights(F_loo, F_pool), 0.0)
    prior = class_count_prior(K)
    app_prior = relative_prior(K, loo_margin_scale(F_loo, weights))
    low = fit_temperature(F_loo, codes, weights=weights,
                          prior=CalibrationPrior(log_slope=prior.log_slope - np.log(2.0), scale=prior.scale))
    mass = nearest_labelled_mass(X, labelled)
    massed = fit_temperature(F_loo, codes, weights=weights * mass / mass.mean(), prior=prior)
    nodes, node_weights = np.polynomial.hermite_e.hermegauss(9)
    node_weights = node_weights / node_weights.sum()
    s, sd = np.log(app_fit.slope), app_fit.log_slope_sd
    P = sum(w * app_fit.probabilities(F_val, slope=float(np.exp(s + sd * x))) for x, w in zip(nodes, node_weights))
    top = predicted_class_indices(F_val)
    rows = np.arange(top.size)
    share = (np.bincount(codes, minlength=K) + 1.0) / (len(codes) + K)
    e = 2.0 / (float((weights > 0).sum()) + 2.0)
    mixed = (1 - e) * app_fit.probabilities(F_val) + e * share
    slope, eps = _lapse_fit(F_loo, codes, weights, app_prior)
    lapsed = (1 - eps) * app_fit.probabilities(F_val, slope=slope) + eps / K
    c_pool = loo_margin_scale(F_val if F_pool is None else F_pool)  # the same geometric mean, of the pool
    pool_prior = CalibrationPrior(log_slope=prior.log_slope - np.log(c_pool), scale=prior.scale)
    pooled = fit_temperature(F_loo, codes, weights=weights, prior=pool_prior)
    best = min(expected_calibration_error(app_fit.probabilities(F_val, slope=a)[rows, top], correct)
               for a in np.exp(np.linspace(-4.0, 8.0, 241)))
    return {"ece_prior_slope_1": expected_calibration_error(low.confidence(F_val)[1], correct),
            "ece_slope_averaged": expected_calibration_error(P[rows, top], correct),
            "ece_mass_weighted": expected_calibration_error(massed.confidence(F_val)[1], correct),
            "ece_prior_mixture": expected_calibration_error(mixed[rows, top], correct),
            "ece_lapse": expected_calibration_error(lapsed[rows, top], correct), "lapse_rate": eps,
            "ece_pool_scale_prior": expected_calibration_error(pooled.confidence(F_val)[1], correct),
            "ece_best_slope": best}


def run_task(name: str, seed: int, checkpoints, tmp: str, variants: bool = False) -> tuple[list, list]:
    ds, X_val_raw, y_val = load_task(name, seed, tmp)
    chosen = app_settings(ds, seed, X_val=X_val_raw)
    X, X_val, kernel, lam = chosen["X"], chosen["X_val"], chosen["kernel"], chosen["lam"]
    classes = list(ds.classes)
    y = np.asarray(ds.y)
    learner = ActiveRLS.from_features(X, classes=classes, kernel=kernel, lam=lam,
                                      weighting=chosen["weighting"], random_state=seed)
    predictor = OutOfPoolPredictor(X, X_val, kernel)
    rng = np.random.default_rng(seed)
    code = {c: k for k, c in enumerate(classes)}
    y_val_codes = np.array([code[v] for v in y_val.tolist()])
    rows, tracking = [], []
    for step in range(1, max(checkpoints) + 1):
        i = query_one(learner, "auto", rng)
        learner.add(i, y[i].item() if hasattr(y[i], "item") else y[i])
        if step not in checkpoints:
            continue
        labels = learner.labels
        F_loo = learner.loo_decision_values()
        codes = np.array([code[v] for v in labels.values()])
        pool = learner.unlabeled_indices
        F_pool = learner.decision_values[pool]
        fits = {"plain": fit_temperature(F_loo, codes), "calibrated": fit_calibration(F_loo, codes),
                "pool_weighted": fit_calibration(F_loo, codes, F_pool=F_pool)}
        app_fit = fits["pool_weighted" if len(classes) > 2 else "calibrated"]
        F_val = predictor.decision_values(learner)
        correct = predicted_class_indices(F_val) == y_val_codes
        _, soft = soft_confidence(F_val)
        true_err = float(np.mean(learner.predict()[pool] != y[pool]))
        row = {"task": name, "seed": seed, "labels": step, "accuracy": correct.mean(),
               "ece_soft": expected_calibration_error(soft, correct)}
        for key, fit in fits.items():
            row[f"ece_{key}"] = expected_calibration_error(fit.confidence(F_val)[1], correct)
            est = estimated_error_rate(fit, F_pool)
            tracking.append({"task": name, "seed": seed, "labels": step, "fit": key, "estimated": est.rate,
                             "lower": est.lower, "upper": est.upper, "true": true_err})
        row["slope"] = fits["calibrated"].slope
        row["margin_scale"] = loo_margin_scale(F_loo, class_count_weights(codes, len(classes)))
        if variants:  # alternatives tried for few labels (docs/trust.md), not used by the app
            row.update(few_label_variants(app_fit, F_loo, codes, F_pool, X, np.fromiter(labels, dtype=np.int64),
                                          F_val, correct))
        rows.append(row)
    return rows, tracking


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="+", default=list(TASKS), choices=list(TASKS))
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--labels", type=int, nargs="+", default=[20, 50, 100, 200])
    parser.add_argument("--variants", action="store_true",
                        help="also the alternatives tried for few labels (few_label_variants: ece_prior_slope_1, "
                             "ece_slope_averaged, ece_mass_weighted, ece_prior_mixture, ece_lapse, "
                             "ece_pool_scale_prior, ece_best_slope)")
    args = parser.parse_args(argv)
    rows, tracking = [], []
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in args.tasks:
            for seed in range(args.seeds):
                r, t = run_task(name, seed, set(args.labels), tmp, args.variants)
                rows += r
                tracking += t
                print(f"# {name} seed {seed} done", file=sys.stderr, flush=True)
    columns = ["accuracy", "ece_soft", "ece_plain", "ece_calibrated", "ece_pool_weighted", "slope", "margin_scale"]
    if args.variants:
        columns += ["ece_prior_slope_1", "ece_slope_averaged", "ece_mass_weighted", "ece_prior_mixture", "ece_lapse",
                    "lapse_rate", "ece_pool_scale_prior", "ece_best_slope"]
    table = pd.DataFrame(rows).groupby(["task", "labels"], sort=False)[columns].mean()
    pd.set_option("display.width", 200)
    print(f"ECE on the validation set (10 equal-width bins), mean of {args.seeds} seed(s), strategy auto")
    print(table.round(3).to_string())
    track = pd.DataFrame(tracking)
    print("\nEstimated error rate of the unlabelled pool against its true error rate "
          "(all label counts and seeds)")
    out = []
    for (name, fit), g in track.groupby(["task", "fit"], sort=False):
        corr = float(np.corrcoef(g["estimated"], g["true"])[0, 1]) if len(g) > 2 else float("nan")
        out.append({"task": name, "fit": fit, "points": len(g), "correlation": corr,
                    "mean_abs_gap_pct": 100 * float(np.mean(np.abs(g["estimated"] - g["true"]))),
                    "interval_holds": float(np.mean((g["lower"] <= g["true"]) & (g["true"] <= g["upper"]))),
                    "mean_true_pct": 100 * float(g["true"].mean()),
                    "mean_estimated_pct": 100 * float(g["estimated"].mean())})
    print(pd.DataFrame(out).round(3).to_string(index=False))
    for fit, g in track.groupby("fit", sort=False):
        allc = float(np.corrcoef(g["estimated"], g["true"])[0, 1])
        print(f"all tasks, {fit}: correlation {allc:.3f}, mean absolute gap "
              f"{100 * float(np.mean(np.abs(g['estimated'] - g['true']))):.2f} points")
    print(pd.DataFrame(rows).round(4).to_csv(index=False), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
