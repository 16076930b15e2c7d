"""Thesis experiments on weighted RLS itself (seed 002 §4.1, §4.2).

* :func:`exp_moons`: weighted vs unweighted RLS on two moons with 10x fewer positives, width 2,
  lambda by LOO classification error (§4.1, Fig. 4-1).
* :func:`exp_confidence`: accuracy per bin of the soft, gap and Bayesian confidence of
  weighted one-vs-all RLS, lambda 0.4 (§4.2, Figs. 4-4, 4-5); MNIST stands in for Caltech 101.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from core.confidence import bayesian_confidence, confidence_bins, gap_confidence, soft_confidence
from core.kernels import Kernel
from core.criteria.risk import predicted_class_indices
from core.rls import WeightedRLSClassifier
from labeler.data import load_dataset
from labeler.experiments.findings import Finding, Settings, fmt_pct, md_table, mean_sd, save_figure

__all__ = ["exp_moons", "exp_confidence"]


# --------------------------------------------------------------------------- 1. two moons
def exp_moons(settings: Settings) -> Finding:
    """Seed 002 §4.1, Fig. 4-1: weighting corrects RLS on imbalanced two moons."""
    seeds = range(settings.seeds)
    rows, errs = [], {"unweighted": [], "weighted": []}
    train_errs = {"unweighted": [], "weighted": []}
    models = {}
    for seed in seeds:
        ds = load_dataset("moons-imbalanced", seed=seed)
        row = [seed]
        for name, cw in (("unweighted", None), ("weighted", "balanced")):
            clf = WeightedRLSClassifier(kernel="rbf", width=2.0, lam="auto", class_weight=cw,
                                        loo_criterion="classification").fit(ds.X, ds.y)
            err = float(np.mean(clf.predict(ds.X_val) != ds.y_val))
            tr = float(np.mean(clf.predict(ds.X) != ds.y))
            errs[name].append(err)
            train_errs[name].append(tr)
            row += [fmt_pct(err), fmt_pct(tr), f"{clf.lam_:.3g}"]
            if seed == 0:
                models[name] = clf
        rows.append(row)
        if seed == 0:
            ds0 = ds
    fixed_rows = []
    fixed = {}
    for lam in (0.1, 0.01):
        e = {"unweighted": [], "weighted": []}
        for seed in seeds:
            ds = load_dataset("moons-imbalanced", seed=seed)
            for name, cw in (("unweighted", None), ("weighted", "balanced")):
                clf = WeightedRLSClassifier(kernel="rbf", width=2.0, lam=lam, class_weight=cw).fit(ds.X, ds.y)
                e[name].append(float(np.mean(clf.predict(ds.X_val) != ds.y_val)))
        fixed[lam] = e
        fixed_rows.append([lam, mean_sd(e["unweighted"]), mean_sd(e["weighted"])])
    fig = _moons_figure(ds0, models)
    plot_md = save_figure(settings, fig, "moons", "Two moons, 10x fewer positives: RLS boundaries")
    unw, wt = np.array(errs["unweighted"]), np.array(errs["weighted"])
    details = [
        f"Data: `moons-imbalanced` (scikit-learn two moons, noise 0.1): {len(ds0.y)} training points "
        f"({int((ds0.y == 1).sum())} positives), balanced test set of {len(ds0.y_val)}; RBF width 2; "
        "RLS with offset, lambda chosen by exact LOO classification error (ties to the largest "
        f"lambda, as the thesis does); weighted = balanced class weights. {len(rows)} seeds.",
        md_table(
            ["seed", "unweighted test error", "unweighted training error", "unweighted lambda",
             "weighted test error", "weighted training error", "weighted lambda"],
            rows,
        ),
        "The LOO choice of lambda is tiny for unweighted RLS here (it nearly interpolates; the "
        "thesis saw the same on Caltech, Fig. 4-3). With a fixed, moderate lambda the effect of "
        f"weighting is as large as in the thesis (test error, mean ± sd over {len(rows)} seeds):",
        md_table(["fixed lambda", "unweighted test error", "weighted test error"], fixed_rows),
        plot_md,
    ]
    ours = (f"test error {mean_sd(unw)} unweighted -> {mean_sd(wt)} weighted "
            f"(mean ± sd, {len(rows)} seeds); weighted better in {int(np.sum(wt < unw))}/{len(rows)}, "
            f"tied in {int(np.sum(wt == unw))}; at fixed lambda 0.01: "
            f"{mean_sd(fixed[0.01]['unweighted'])} -> {mean_sd(fixed[0.01]['weighted'])}")
    note = (
        "Same direction; with lambda by LOO the gap is smaller, with a fixed lambda of 0.01 it is "
        "close to the thesis'. The thesis does not give the moons' scale or noise; on "
        "scikit-learn's moons (radius 1, noise 0.1) width 2 is very smooth and the unweighted "
        f"error depends on the draw (training error of unweighted RLS with the LOO lambda: "
        f"{mean_sd(train_errs['unweighted'])}; the thesis' unweighted boundary misclassified training points)."
    )
    return Finding("moons", "Weighted RLS, imbalanced two moons (§4.1, Fig. 4-1)",
                   "test error 7.5% unweighted -> 0.5% weighted", ours, note, details)


def _moons_figure(ds, models: dict) -> go.Figure:
    X, Xv = ds.X, ds.X_val
    lo = np.minimum(X.min(0), Xv.min(0)) - 0.3
    hi = np.maximum(X.max(0), Xv.max(0)) + 0.3
    gx = np.linspace(lo[0], hi[0], 100)
    gy = np.linspace(lo[1], hi[1], 75)
    G = np.column_stack([np.repeat(gx[None, :], gy.size, 0).ravel(), np.repeat(gy[:, None], gx.size, 1).ravel()])
    fig = make_subplots(rows=1, cols=2, subplot_titles=["training set (10x fewer positives)", "balanced test set"],
                        horizontal_spacing=0.06)
    colours = {"unweighted": "#d62728", "weighted": "#2ca02c"}
    for col, (pts, labels) in enumerate(((X, ds.y), (Xv, ds.y_val)), start=1):
        for c, colour in ((0, "#1f77b4"), (1, "#ff7f0e")):
            sel = labels == c
            fig.add_trace(go.Scatter(x=pts[sel, 0], y=pts[sel, 1], mode="markers",
                                     marker={"size": 4, "color": colour}, name=f"class {c}",
                                     legendgroup=f"c{c}", showlegend=col == 1), row=1, col=col)
        for name, clf in models.items():
            Z = np.round(clf.decision_function(G).reshape(gy.size, gx.size), 4)
            fig.add_trace(go.Contour(x=gx, y=gy, z=Z, contours={"start": 0, "end": 0, "size": 1, "coloring": "none"},
                                     line={"color": colours[name], "width": 2.5}, showscale=False,
                                     name=f"{name} RLS boundary", legendgroup=name, showlegend=col == 1,
                                     hoverinfo="skip"), row=1, col=col)
    fig.update_layout(template="plotly_white", width=1000, height=460,
                      title="Two moons: unweighted vs weighted RLS (width 2, lambda by LOO classification error)",
                      legend={"orientation": "h", "y": -0.12})
    return fig


# --------------------------------------------------------------------------- 2. confidence
def _bayes_variance(K_train: np.ndarray, K_test: np.ndarray, lam: float, A: np.ndarray) -> np.ndarray:
    """GP predictive variance per test point and one-vs-all column (seed 002 eq. 3.40, 3.42).

    ``s_t^2(x) = k(x,x) + lam - k_x^T (K + lam diag(1 / a_t))^-1 k_x`` for column t with loss
    weights ``a_t`` (a weighted point has noise ``lam / a``, as in ARLS' ``lambda_j``); RBF so
    ``k(x, x) = 1``.
    """
    import scipy.linalg

    T = A.shape[1]
    out = np.empty((K_test.shape[0], T))
    done: dict[bytes, np.ndarray] = {}
    for t in range(T):
        key = A[:, t].tobytes()
        if key not in done:
            factor = scipy.linalg.cho_factor(K_train + np.diag(lam / A[:, t]), lower=True)
            V = scipy.linalg.cho_solve(factor, K_test.T)  # (n_train, n_test)
            done[key] = 1.0 + lam - np.einsum("ij,ji->i", K_test, V)
        out[:, t] = done[key]
    return out


def exp_confidence(settings: Settings) -> Finding:
    """Seed 002 §4.2, Figs. 4-4 / 4-5: is accuracy monotone in each confidence score?"""
    name = settings.pick("mnist", "digits")
    n_train, n_test = settings.pick((1500, 2000), (500, 700))
    trials = settings.pick(3, 1)
    lam = 0.4
    n_bins = 10
    per_trial = []
    for trial in range(trials):
        ds = load_dataset(name, seed=trial, n=n_train + n_test)
        X, y = ds.X, ds.y
        order = np.random.default_rng(trial).permutation(len(y))
        tr, te = order[:n_train], order[n_train:]
        width = float(ds.params["width"])
        clf = WeightedRLSClassifier(kernel="rbf", width=width, lam=lam, class_weight="balanced",
                                    fit_offset=False).fit(X[tr], y[tr])
        kernel = Kernel("rbf", width=width)
        K_test = kernel(X[te], X[tr])
        F = K_test @ clf.dual_coef_ + clf.intercept_[None, :]
        pred = clf.classes_[predicted_class_indices(F)]  # = clf.predict(X[te]), K_test reused
        correct = pred == y[te]
        variance = _bayes_variance(kernel(X[tr]), K_test, lam, clf.sample_weight_)
        scores = {
            "soft": soft_confidence(F)[1],
            "gap": gap_confidence(F),
            "Bayesian": bayesian_confidence(F, variance)[1],
        }
        bins = {k: confidence_bins(v, correct, n_bins=n_bins) for k, v in scores.items()}
        per_trial.append({"accuracy": float(correct.mean()), "bins": bins, "width": width})
    min_count = 10
    summary_rows, verdict = [], {}
    for method in ("soft", "gap", "Bayesian"):
        drops, rhos = [], []
        for t in per_trial:
            b = t["bins"][method]
            ok = b.counts >= min_count
            acc = b.accuracy[ok]
            drops.append(int(np.sum(np.diff(acc) < -0.02)))
            centres = 0.5 * (b.edges[:-1] + b.edges[1:])[ok]
            rhos.append(_spearman(centres, acc) if acc.size > 2 else float("nan"))
        verdict[method] = (drops, rhos)
        summary_rows.append([method, ", ".join(map(str, drops)), ", ".join(f"{r:.2f}" for r in rhos)])
    bin_rows = []
    for method in ("soft", "gap", "Bayesian"):
        b = per_trial[0]["bins"][method]
        for k in range(n_bins):
            if b.counts[k]:
                bin_rows.append([method, f"[{b.edges[k]:.1f}, {b.edges[k + 1]:.1f})", int(b.counts[k]),
                                 fmt_pct(b.accuracy[k])])
    fig = _confidence_figure(per_trial, n_bins)
    plot_md = save_figure(settings, fig, "confidence", "Accuracy per confidence bin")
    if name == "mnist":
        data_desc = f"MNIST test-set digits, {n_train} training and {n_test} test images per trial"
    else:
        data_desc = f"scikit-learn digits, {n_train} training and {n_test} test images"
    details = [
        f"Data: {data_desc}, pixels / 255, 10 classes; RBF width = median pairwise distance "
        f"({per_trial[0]['width']:.3g}); weighted (equilibrating, eq. 3.14-3.15) one-vs-all RLS without "
        f"offset, lambda {lam} (the thesis' value); {trials} trial(s) with different seeded samples. "
        f"Test accuracy: {', '.join(fmt_pct(t['accuracy']) for t in per_trial)}. Bayesian variance per "
        "class with the weighted noise lam / a (eq. 3.40, 3.42), probabilities by eq. 3.43.",
        "Monotonicity over bins holding at least 10 points: number of drops of more than 2 "
        "percentage points from one bin to the next, and Spearman correlation of bin centre "
        "with accuracy (1 = perfectly increasing), per trial:",
        md_table(["score", "drops > 2 pp", "Spearman rho"], summary_rows),
        "Trial 1, accuracy per bin:",
        md_table(["score", "bin", "points", "accuracy"], bin_rows),
        plot_md,
    ]
    n_trials = len(per_trial)
    drops = {k: sum(v[0]) for k, v in verdict.items()}
    rho = {k: float(np.nanmean(v[1])) for k, v in verdict.items()}
    judged = {k: _monotonicity(drops[k] / n_trials, rho[k]) for k in verdict}
    ours = "; ".join(
        f"{k}: {judged[k]} ({drops[k]} drop(s) in {n_trials} trial(s), mean rho {rho[k]:.2f})"
        for k in ("soft", "gap", "Bayesian")
    )
    agree = judged["soft"] != "erratic" and judged["gap"] != "erratic" and judged["Bayesian"] == "erratic"
    note = (
        "Caltech 101 with CBCL features (102 classes) is not available offline; "
        f"{'MNIST' if name == 'mnist' else 'digits'} with an RBF kernel stands in. "
        + ("As in the thesis, soft and gap rise with confidence and the Bayesian score does not."
           if agree else
           "Unlike the thesis, the Bayesian score is not erratic here: with 10 classes instead of "
           "102 the thesis' explanation (small probability errors magnified by the number of "
           "classes) has little room, and the kernel and lambda are reasonable for this data.")
    )
    return Finding("confidence", "Confidence bins: soft, gap, Bayesian (§4.2, Figs. 4-4, 4-5)",
                   "soft and gap accuracy increase with confidence; Bayesian fluctuates wildly",
                   ours, note, details)


def _monotonicity(drops_per_trial: float, rho: float) -> str:
    """Verdict on accuracy per confidence bin: monotone, nearly monotone or erratic."""
    if drops_per_trial == 0 and rho > 0.7:
        return "monotone"
    if drops_per_trial <= 1 and rho > 0.5:
        return "nearly monotone"
    return "erratic"


def _spearman(x, y) -> float:
    from scipy.stats import spearmanr

    return float(spearmanr(x, y).statistic)


def _confidence_figure(per_trial, n_bins: int) -> go.Figure:
    methods = ("soft", "gap", "Bayesian")
    fig = make_subplots(rows=1, cols=3, subplot_titles=[f"{m} confidence" for m in methods],
                        shared_yaxes=True, horizontal_spacing=0.04)
    colours = ["#1f77b4", "#d62728", "#2ca02c"]
    for col, m in enumerate(methods, start=1):
        for t, trial in enumerate(per_trial):
            b = trial["bins"][m]
            centres = 0.5 * (b.edges[:-1] + b.edges[1:])
            fig.add_trace(go.Bar(x=centres, y=b.accuracy, width=0.9 / n_bins / len(per_trial) * 1.0,
                                 offset=(t - len(per_trial) / 2) * 0.9 / n_bins / len(per_trial),
                                 marker_color=colours[t % 3], name=f"trial {t + 1}", legendgroup=f"t{t}",
                                 showlegend=col == 1,
                                 customdata=b.counts,
                                 hovertemplate="bin %{x:.2f}<br>accuracy %{y:.3f}<br>%{customdata} points<extra></extra>"),
                          row=1, col=col)
        fig.update_xaxes(title_text="confidence", range=[0, 1], row=1, col=col)
    fig.update_yaxes(title_text="accuracy in bin", range=[0, 1.02], row=1, col=1)
    fig.update_layout(template="plotly_white", width=1100, height=420, barmode="overlay",
                      title="Accuracy per confidence bin (seed 002 Figs. 4-4, 4-5)",
                      legend={"orientation": "h", "y": -0.2})
    return fig
