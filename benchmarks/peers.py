"""Query strategies on our learner against scikit-activeml and GraphLearning: learning curves.

Every strategy labels the same pool from the same two random initial labels (one seeded draw
per seed) until ``--budget`` labels; after every label the SAME evaluation model, our
:class:`core.learner.ActiveRLS` (RBF kernel, width = median pairwise distance of the
standardised features, lam 0.1, "balanced" class weights: the app's defaults), is fitted on
the labels chosen so far and scored on the pool points still unlabelled. So the columns
compare which points a strategy picks, not the peers' own classifiers. Strategies:

* ours (``core.strategies.query``): ``auto`` (the default, when the core has it), ``arls``
  (expected risk, docs/algorithms.md §3), ``margin``, ``random``;
* scikit-activeml (``skactiveml``, with its ``ParzenWindowClassifier`` on the same RBF
  kernel): ``sk-margin`` (``UncertaintySampling(method="margin_sampling")``), ``sk-eer``
  (``MonteCarloEER``, misclassification loss; on pools of at most 200 points and for the first
  60 labels only, scoring a seeded random subset of 10 candidates per query: it refits its
  classifier for every candidate and label, seconds per query), ``sk-typiclust``
  (``TypiClust``, a representativeness strategy);
* GraphLearning (``graphlearning``, Laplace learning on a 10-nearest-neighbour graph; the
  covariance for the Bayesian criteria from 50 eigenpairs of the normalised Laplacian, as in
  its documentation): ``gl-vopt``, ``gl-sigmaopt``, ``gl-mc`` (model change), ``gl-unc``
  (smallest margin).

A peer library that is not installed is skipped with a note (``pip install -e .[peers]``).

Printed per task: mean accuracy at 10/25/50/100/200 labels, the area under the curve (mean
accuracy over every label count from 2 to the budget) with its standard deviation over the
seeds, the labels needed to reach random's final accuracy (mean curve; ``>B`` when never),
and the median time per query in milliseconds (the pick only, not the evaluation model).

Usage: python benchmarks/peers.py [--seeds 5] [--budget 200] [--tasks a,b] [--strategies a,b]
       [--save curves.npz] [--compare auto --against arls,margin] [--threads 1] [--quick]
``--quick``: our strategies on one tiny task, 1 seed, 30 labels (the CI smoke test).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from core.kernels import Kernel, median_distance  # noqa: E402
from core.learner import ActiveRLS  # noqa: E402
from core.strategies import STRATEGIES, query_one  # noqa: E402

CHECKPOINTS = (10, 25, 50, 100, 200)
INITIAL = 2
LAM = 0.1
WEIGHTING = "balanced"
EER_MAX_POOL = 200  # MonteCarloEER refits its classifier per candidate and label: small pools only
EER_CANDIDATES = EER_CANDIDATES_DEFAULT = 10  # random candidates per sk-eer query (--eer-candidates)
EER_BUDGET = 60  # ... and the first labels only (the table shows "-" beyond, AUC over 2..60 marked *)
POOL = 500  # points per pool (subsampled per seed): sized for a full run of <= 40 min on 2 busy cores


# --------------------------------------------------------------------------- tasks
def _standardize(X):
    X = np.asarray(X, dtype=np.float64)
    sd = X.std(axis=0)
    sd[sd == 0] = 1.0
    return (X - X.mean(axis=0)) / sd


def _subsample(X, y, n, seed):
    if n is None or n >= len(y):
        return X, y
    rng = np.random.default_rng([seed, 7])
    rows = np.sort(rng.choice(len(y), size=n, replace=False))
    return X[rows], y[rows]


def task_wine(seed):
    from sklearn.datasets import load_wine
    b = load_wine()
    return _standardize(b.data), b.target.astype(np.int64)


def task_breast_cancer(seed):
    from sklearn.datasets import load_breast_cancer
    b = load_breast_cancer()
    return _subsample(_standardize(b.data), b.target.astype(np.int64), POOL, seed)


def task_digits10(seed):
    from sklearn.datasets import load_digits
    b = load_digits()
    return _subsample(b.data / 16.0, b.target.astype(np.int64), POOL, seed)


def _mnist(seed, digits, n):
    from labeler.data.bundled import load_mnist
    ds = load_mnist(seed=seed, n=n, digits=digits)
    y = np.asarray(ds.y, dtype=np.int64)
    codes = np.searchsorted(np.unique(y), y)
    return np.asarray(ds.X, dtype=np.float64), codes


def task_mnist_3v5(seed):
    return _mnist(seed, (3, 5), POOL)


def task_mnist10(seed):
    return _mnist(seed, None, POOL)


def task_imbalanced(seed):
    """Two classes, 2 % minority, 500 points, 10 features (5 informative)."""
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=POOL, n_features=10, n_informative=5, n_redundant=2,
                               weights=[0.98, 0.02], flip_y=0.0, class_sep=1.5, random_state=seed)
    return _standardize(X), y.astype(np.int64)


def task_noisy4(seed):
    """Four classes, 500 points, 8 features, 10 % of the labels flipped at random."""
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=POOL, n_features=8, n_informative=6, n_redundant=0,
                               n_classes=4, n_clusters_per_class=2, flip_y=0.1, class_sep=1.5,
                               random_state=seed)
    return _standardize(X), y.astype(np.int64)


def task_tiny(seed):
    """CI smoke task: three Gaussian blobs, 90 points."""
    from sklearn.datasets import make_blobs
    X, y = make_blobs(n_samples=90, centers=3, cluster_std=1.5, random_state=seed)
    return _standardize(X), y.astype(np.int64)


TASKS = {
    "wine": task_wine,
    "breast-cancer": task_breast_cancer,
    "digits-10": task_digits10,
    "mnist-3v5": task_mnist_3v5,
    "mnist-10": task_mnist10,
    "imbalanced-2%": task_imbalanced,
    "noisy-4": task_noisy4,
}
QUICK_TASKS = {"tiny-blobs": task_tiny}


# --------------------------------------------------------------------------- pickers
class OursPicker:
    """A strategy of :func:`core.strategies.query_one` driving the evaluation learner itself.

    A name of :data:`SWITCHES` is a candidate rule for the default: expected risk ("arls") while
    the rule says cold, margin once it says warm (a function of the class counts only).
    """

    drives_learner = True

    def __init__(self, strategy, X, y, classes, kernel, seed):
        self.strategy = strategy
        self.rng = np.random.default_rng([seed, 11])

    def pick(self, learner, labeled, y_known):
        plain = self.strategy
        if plain in SWITCHES:
            counts = np.asarray(learner.scoring_state().class_counts)
            plain = "margin" if SWITCHES[plain](counts) else "arls"
        return int(query_one(learner, plain, self.rng))


# Candidate switches from expected risk to margin (issue 13 part 3): warm(class_counts) -> bool.
# K = number of classes, n = labels so far; every rule reads the stored labels only.
SWITCHES = {
    "sw-min3": lambda c: c.min() >= 3,                      # the first default (before the cap of 10)
    "sw-min1": lambda c: c.min() >= 1,                      # every class found
    "sw-n10": lambda c: c.sum() >= 10,                      # the first 10 labels, whatever K
    "sw-nK": lambda c: c.sum() >= c.size,                   # the first K labels
    "sw-min3-n10": lambda c: c.min() >= 3 or c.sum() >= 10,  # today's rule, capped at 10 labels
    "sw-min1-n10": lambda c: c.min() >= 1 or c.sum() >= 10,
    "sw-min3-n2K": lambda c: c.min() >= 3 or c.sum() >= 2 * c.size,
}


class SkactivemlPicker:
    """One scikit-activeml pool strategy (its own classifier on the same RBF kernel)."""

    drives_learner = False

    def __init__(self, kind, X, y, classes, kernel, seed):
        from skactiveml.classifier import ParzenWindowClassifier
        from skactiveml.pool import MonteCarloEER, TypiClust, UncertaintySampling
        self.kind, self.X, self.seed = kind, X, seed
        self.rng = np.random.default_rng([seed, 13])
        self.clf = ParzenWindowClassifier(metric="rbf", metric_dict={"gamma": kernel.gamma}, classes=classes,
                                          missing_label=-1, random_state=seed)
        if kind == "sk-margin":
            self.qs = UncertaintySampling(method="margin_sampling", missing_label=-1, random_state=seed)
        elif kind == "sk-eer":
            self.qs = MonteCarloEER(method="misclassification_loss", missing_label=-1, random_state=seed)
        else:
            self.qs = TypiClust(missing_label=-1, random_state=seed, cluster_algo_dict={"n_init": 1})

    def pick(self, learner, labeled, y_known):
        y = np.full(self.X.shape[0], -1, dtype=np.int64)
        y[labeled] = y_known
        if self.kind == "sk-margin":
            return int(self.qs.query(self.X, y, self.clf)[0])
        if self.kind == "sk-eer":
            unl = np.setdiff1d(np.arange(self.X.shape[0]), labeled)
            cand = np.sort(self.rng.choice(unl, size=min(EER_CANDIDATES, unl.size), replace=False))
            return int(self.qs.query(self.X, y, self.clf, candidates=cand)[0])
        return int(self.qs.query(self.X, y)[0])


class GraphLearningPicker:
    """One GraphLearning acquisition function on Laplace learning over a kNN graph."""

    drives_learner = False
    _graphs: dict = {}

    def __init__(self, kind, X, y, classes, kernel, seed):
        import graphlearning as gl
        self.gl, self.kind, self.n = gl, kind, X.shape[0]
        # keyed by content: an id() can be reused by the next seed's pool of the same shape
        key = (X.shape, hashlib.sha1(np.ascontiguousarray(X).tobytes()).hexdigest())
        if key not in self._graphs:  # one graph and eigendecomposition per pool
            # exact search: the library's default for more than 5 features is `annoy`, which
            # it does not depend on (ModuleNotFoundError on pools of more than a few points)
            W = gl.weightmatrix.knn(X, 10, knn_data=gl.weightmatrix.knnsearch(X, 10, method="brute"))
            evals, evecs = gl.graph(W).eigen_decomp(normalization="normalized", k=50)
            self._graphs.clear()
            self._graphs[key] = (W, evals, evecs)
        self.W, evals, evecs = self._graphs[key]
        self.C0 = np.diag(1.0 / (evals + 1e-11))
        self.V = evecs
        self.acq = None
        self.rng = np.random.default_rng([seed, 17])
        self.seen = 0

    def _make(self):
        al = self.gl.active_learning
        if self.kind == "gl-vopt":
            return al.var_opt(C=self.C0.copy(), V=self.V)
        if self.kind == "gl-sigmaopt":
            return al.sigma_opt(C=self.C0.copy(), V=self.V)
        if self.kind == "gl-mc":
            return al.model_change(C=self.C0.copy(), V=self.V)
        return al.unc_sampling()

    def pick(self, learner, labeled, y_known):
        labeled = np.asarray(labeled, dtype=np.int64)
        if self.acq is None:
            self.acq = self._make()
            self.acq.update(labeled, y_known)
        else:
            new = labeled[self.seen:]
            self.acq.update(new, np.asarray(y_known)[self.seen:])
        self.seen = labeled.size
        seen_classes = np.unique(y_known)
        unl = np.setdiff1d(np.arange(self.n), labeled)
        needs_u = self.kind in ("gl-mc", "gl-unc")
        if needs_u and seen_classes.size < 2:
            return int(unl[self.rng.integers(unl.size)])  # Laplace learning needs two classes
        u = None
        if needs_u:
            codes = np.searchsorted(seen_classes, y_known)  # the library wants 0..k-1
            u = self.gl.ssl.laplace(self.W).fit(labeled, codes)
        else:
            u = np.zeros((self.n, 2))
        vals = self.acq.compute(u, unl)
        return int(unl[int(np.argmax(vals))])


PEERS = {
    "sk-margin": ("skactiveml", SkactivemlPicker),
    "sk-eer": ("skactiveml", SkactivemlPicker),
    "sk-typiclust": ("skactiveml", SkactivemlPicker),
    "gl-vopt": ("graphlearning", GraphLearningPicker),
    "gl-sigmaopt": ("graphlearning", GraphLearningPicker),
    "gl-mc": ("graphlearning", GraphLearningPicker),
    "gl-unc": ("graphlearning", GraphLearningPicker),
}
SUMMARY = []  # non-empty: --load prints the switch summary instead of the tables
MIN_EFFECT = 0.5  # points: smaller paired differences are never marked (a 0.04-point gap is no finding)
COMPARE = ["auto"]  # candidates printed against AGAINST, paired per seed (--compare)
AGAINST = ["arls", "margin"]  # what the candidates are paired with (--against)
OURS = tuple(s for s in ("auto", "arls", "margin", "random") if s in STRATEGIES)


def available(module: str) -> bool:
    """Whether ``module`` imports (a peer library is optional)."""
    try:
        __import__(module)
    except Exception:  # noqa: BLE001 - any import failure means "not usable here"
        return False
    return True


# --------------------------------------------------------------------------- one run
def run(X, y, strategy, seed, budget):
    """One learning curve.

    Returns
    -------
    acc : ndarray of shape (budget - INITIAL + 1,)
        Accuracy on the unlabelled pool after ``INITIAL, INITIAL + 1, ..., budget`` labels.
    seconds : ndarray of shape (budget - INITIAL,)
        Wall time of each pick.
    """
    classes = sorted(np.unique(y).tolist())
    kernel = Kernel("rbf", width=median_distance(X, seed=seed))
    learner = ActiveRLS.from_features(X, classes=classes, kernel=kernel, lam=LAM, weighting=WEIGHTING,
                                      random_state=seed)
    init = np.random.default_rng([seed, 3]).choice(len(y), size=INITIAL, replace=False)
    learner.add_many(init.tolist(), y[init].tolist())
    if strategy in OURS or strategy in SWITCHES:
        picker = OursPicker(strategy, X, y, classes, kernel, seed)
    else:
        picker = PEERS[strategy][1](strategy, X, y, classes, kernel, seed)
    labeled = list(init.tolist())
    acc, seconds = [], []

    def score():
        mask = np.ones(len(y), dtype=bool)
        mask[labeled] = False
        return float(np.mean(learner.predict()[mask] == y[mask]))

    acc.append(score())
    for _ in range(budget - INITIAL):
        t0 = time.perf_counter()
        i = picker.pick(learner, np.asarray(labeled), y[labeled])
        seconds.append(time.perf_counter() - t0)
        if i in learner.labels:
            raise RuntimeError(f"{strategy} picked the labelled point {i}")
        learner.add(i, int(y[i]))
        labeled.append(i)
        acc.append(score())
    return np.asarray(acc), np.asarray(seconds)


# --------------------------------------------------------------------------- diagnosis
def _auroc(score, positive) -> float:
    """Probability that a random positive scores above a random negative (ties count 1/2)."""
    from scipy.stats import rankdata
    pos = np.asarray(positive, dtype=bool)
    if pos.all() or not pos.any():
        return float("nan")
    r = rankdata(score)
    return float((r[pos].sum() - pos.sum() * (pos.sum() + 1) / 2) / (pos.sum() * (~pos).sum()))


def diagnose_state(learner, y) -> dict:
    """Why expected risk stops finding the errors: what its estimated risk sees of them.

    On the unlabelled points U: ``err`` error rate; ``sat`` share with zero estimated risk
    (clipped probabilities saturated); ``blind`` share of the errors among those; ``auc_r`` /
    ``auc_m`` how well the per-point risk / a small margin rank the errors (AUROC);
    ``far`` share of the estimated risk on points no class claims (largest output < 0);
    ``fallback`` share with every output <= -1 (uniform probabilities); ``pick`` percentile of
    expected risk's next pick in the margin order (0 = smallest margin).
    """
    from core.criteria.risk import pointwise_risk
    from core.criteria.simple import margins
    F = learner.decision_values
    unl = learner.unlabeled_indices
    w = np.asarray(list(learner.class_weights.values()))
    r = pointwise_risk(F, w)[unl]
    wrong = learner.predict()[unl] != y[unl]
    marg = margins(F.T)[unl]
    top = F[unl].max(axis=1) if F.shape[1] > 1 else np.abs(F[unl, 0]) - 1.0
    pick = int(query_one(learner, "arls", np.random.default_rng(0)))
    return {
        "err": wrong.mean(), "sat": np.mean(r <= 0), "blind": np.mean(r[wrong] <= 0) if wrong.any() else np.nan,
        "auc_r": _auroc(r, wrong), "auc_m": _auroc(-marg, wrong),
        "far": r[top < 0].sum() / max(r.sum(), 1e-300),
        "fallback": np.mean(np.all(F[unl] <= -1, axis=1)) if F.shape[1] > 1 else 0.0,
        "pick": np.mean(marg < marg[np.searchsorted(unl, pick)]),
    }


def diagnose(tasks: dict, seeds: int, budget: int, strategy: str = "arls") -> str:
    """Table of :func:`diagnose_state` at the checkpoints of ``strategy``-driven runs (mean over seeds)."""
    keys = ("err", "sat", "blind", "auc_r", "auc_m", "far", "fallback", "pick")
    lines = [f"# diagnosis of the estimated risk along {strategy}-driven runs ({seeds} seed(s))",
             f"{'task':<15}{'labels':>7}" + "".join(f"{k:>9}" for k in keys)]
    for task, load in tasks.items():
        stats = {}
        for seed in range(seeds):
            X, y = load(seed)
            classes = sorted(np.unique(y).tolist())
            kernel = Kernel("rbf", width=median_distance(X, seed=seed))
            lrn = ActiveRLS.from_features(X, classes=classes, kernel=kernel, lam=LAM, weighting=WEIGHTING,
                                          random_state=seed)
            init = np.random.default_rng([seed, 3]).choice(len(y), size=INITIAL, replace=False)
            lrn.add_many(init.tolist(), y[init].tolist())
            rng = np.random.default_rng([seed, 11])
            top = task_budget(budget, len(y))
            while lrn.n_labeled < top:
                i = query_one(lrn, strategy, rng)
                lrn.add(i, int(y[i]))
                if lrn.n_labeled in CHECKPOINTS:
                    stats.setdefault(lrn.n_labeled, []).append(diagnose_state(lrn, y))
        for n_lab in sorted(stats):
            mean = {k: np.nanmean([d[k] for d in stats[n_lab]]) for k in keys}
            lines.append(f"{task:<15}{n_lab:>7}" + "".join(f"{mean[k]:9.3f}" for k in keys))
        print(lines[-1], flush=True)
    return "\n".join(lines)


# --------------------------------------------------------------------------- table
def summarise(curves: dict, budget: int) -> list[dict]:
    """One row per strategy from ``{strategy: (acc (seeds, L), seconds (seeds, L - 1))}``."""
    rows = []
    ref = curves.get("random")
    target = None if ref is None else float(ref[0].mean(axis=0)[-1])
    for name, (acc, sec) in curves.items():
        mean = acc.mean(axis=0)
        top = INITIAL + mean.size - 1  # a curve may stop before the budget (sk-eer)
        row = {"strategy": name + ("*" if top < budget else "")}
        for c in CHECKPOINTS:
            row[f"@{c}"] = mean[c - INITIAL] if INITIAL <= c <= top else np.nan
        auc = acc.mean(axis=1)
        row["auc"], row["auc_sd"] = float(auc.mean()), float(auc.std(ddof=1)) if len(auc) > 1 else 0.0
        if target is None:
            row["reach"] = "-"
        else:
            hit = np.flatnonzero(mean >= target - 1e-12)
            row["reach"] = str(int(hit[0]) + INITIAL) if hit.size else f">{top}"
        row["ms"] = float(np.median(sec) * 1e3)
        rows.append(row)
    return rows


def task_budget(budget: int, n: int) -> int:
    """The budget on a pool of ``n`` points: at most ``n - 20`` (accuracy needs unlabelled points)."""
    return min(budget, n - 20)


def format_table(task: str, rows: list[dict], budget: int, n_seeds: int) -> str:
    cps = list(CHECKPOINTS)
    head = f"{'strategy':<13}" + "".join(f"{'@' + str(c):>7}" for c in cps) + \
        f"{'AUC':>8}{'+-sd':>6}{'reach':>7}{'ms/q':>9}"
    lines = [f"## {task} ({n_seeds} seed(s), accuracy in %; reach = labels to random's final accuracy)", head]
    for r in rows:
        lines.append(f"{r['strategy']:<13}" + "".join(_pct(r['@' + str(c)]) for c in cps)
                     + f"{100 * r['auc']:8.2f}{100 * r['auc_sd']:6.2f}{r['reach']:>7}{r['ms']:9.2f}")
    if any(r["strategy"].endswith("*") for r in rows):
        lines.append(f"* stops at {EER_BUDGET} labels: its AUC and reach are over 2..{EER_BUDGET} labels only")
    return "\n".join(lines)


def paired(curves: dict, candidate: str, against=("arls", "margin")) -> list[str]:
    """Paired differences ``candidate - other`` in points, mean +- standard error over the seeds.

    Every strategy starts from the same initial labels per seed, so the per-seed difference of
    two curves cancels the draw; ``*`` marks a difference below -2 standard errors and below
    -:data:`MIN_EFFECT` points (worse beyond the noise), ``+`` the same upwards. Columns: the checkpoints, the AUC, and the worst checkpoint.
    """
    if candidate not in curves:
        return []
    out = []
    cand = curves[candidate][0]
    for other in against:
        if other not in curves or other == candidate:
            continue
        ref = curves[other][0]
        s, m = min(cand.shape[0], ref.shape[0]), min(cand.shape[1], ref.shape[1])
        diff = 100 * (cand[:s, :m] - ref[:s, :m])
        cells = ""
        for c in CHECKPOINTS:
            j = c - INITIAL
            cells += _diff(diff[:, j]) if 0 <= j < m else f"{'-':>14}"
        cells += _diff(diff.mean(axis=1))
        out.append(f"  {candidate + ' - ' + other:<23}{cells}")
    return out


def worst_deficit(curves: dict, candidate: str, against=("arls", "margin")) -> tuple[float, str]:
    """The candidate's largest marked deficit (points) against ``against`` over the checkpoints
    and the AUC, and where (``""`` when nothing is worse beyond the noise)."""
    worst, where = 0.0, ""
    cand = curves[candidate][0]
    for other in against:
        if other not in curves:
            continue
        ref = curves[other][0]
        s, m = min(cand.shape[0], ref.shape[0]), min(cand.shape[1], ref.shape[1])
        diff = 100 * (cand[:s, :m] - ref[:s, :m])
        cols = [(f"@{c}", diff[:, c - INITIAL]) for c in CHECKPOINTS if 0 <= c - INITIAL < m]
        for label, d in cols + [("AUC", diff.mean(axis=1))]:
            se = d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else 0.0
            if d.mean() < -max(2 * se, MIN_EFFECT) and d.mean() < worst:
                worst, where = float(d.mean()), f"{label} vs {other}"
    return worst, where


def switch_summary(curves_by_task: dict) -> str:
    """Per switch candidate (``auto`` and :data:`SWITCHES`) and task: AUC, and the worst deficit
    against arls or margin beyond the noise (``ok`` when none)."""
    names = ["auto"] + list(SWITCHES)
    tasks = [t for t in curves_by_task if any(n in curves_by_task[t] for n in names)]
    lines = ["# switch candidates: AUC (%) / worst deficit beyond the noise against arls or margin",
             f"{'candidate':<13}" + "".join(f"{t:>24}" for t in tasks)]
    for name in names:
        cells = ""
        for t in tasks:
            per = curves_by_task[t]
            if name not in per:
                cells += f"{'-':>24}"
                continue
            auc = 100 * per[name][0].mean()
            worst, where = worst_deficit(per, name)
            note = "ok" if not where else f"{worst:+.1f} {where.split(' vs ')[0]}/{where.split(' vs ')[1][:3]}"
            cells += f"{auc:8.2f} {note:>15}"
        lines.append(f"{name:<13}{cells}")
    return "\n".join(lines)


def _diff(d) -> str:
    d = np.asarray(d, dtype=float)
    se = d.std(ddof=1) / np.sqrt(d.size) if d.size > 1 else 0.0
    mark = "*" if d.mean() < -max(2 * se, MIN_EFFECT) else ("+" if d.mean() > max(2 * se, MIN_EFFECT) else " ")
    return f"{d.mean():+7.1f}{'+-':>2}{se:4.1f}{mark}"


def paired_header() -> str:
    return f"  {'paired, points':<23}" + "".join(f"{'@' + str(c):>14}" for c in CHECKPOINTS) + f"{'AUC':>14}"


def _pct(v) -> str:
    return f"{'-':>7}" if not np.isfinite(v) else f"{100 * v:7.1f}"


def print_saved(paths: str, n_seeds: int) -> None:
    """Print the tables of curves saved by ``--save`` (several files: tasks in file order)."""
    curves: dict = {}
    for item in paths.split(","):
        # "file.npz:-x" renames its strategies "name-x"; "file.npz:a=b;c=d" renames a to b and c to d
        # (at once; a later file's curves replace an earlier file's of the same task and name)
        path, _, spec = item.partition(":")
        renames = dict(pair.split("=", 1) for pair in spec.split(";")) if "=" in spec else {}
        suffix = "" if renames else spec
        with np.load(path) as data:
            for key in data.files:
                if key.endswith("|sec"):
                    continue
                task, strategy = key.split("|")
                name = renames.get(strategy, strategy + suffix)
                curves.setdefault(task, {})[name] = (data[key], data[key + "|sec"])
    order = {name: i for i, name in enumerate(list(OURS) + list(PEERS) + list(SWITCHES))}
    if SUMMARY:
        print()
        print(switch_summary(curves))
        return
    for task, per in curves.items():
        per = dict(sorted(per.items(), key=lambda kv: order.get(kv[0], len(order))))
        budget = max(INITIAL + acc.shape[1] - 1 for acc, _ in per.values())
        seeds = max(acc.shape[0] for acc, _ in per.values())
        print()
        print(format_table(task, summarise(per, budget), budget, seeds))
        lines = [line for c in COMPARE for line in paired(per, c, AGAINST)]
        if lines:
            print(paired_header())
            print("\n".join(lines))


def main(argv=None) -> int:
    global WEIGHTING, EER_CANDIDATES
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--tasks", default=None, help="comma-separated subset of " + ", ".join(TASKS))
    parser.add_argument("--strategies", default=None, help="comma-separated subset")
    parser.add_argument("--save", default=None, help="write every curve to this .npz file")
    parser.add_argument("--quick", action="store_true", help="CI smoke test: ours only, tiny task")
    parser.add_argument("--weighting", default=WEIGHTING, choices=("none", "balanced"),
                        help="class weighting of the evaluation learner (and of our strategies)")
    parser.add_argument("--auto-min", type=int, default=None,
                        help="labels per class before auto switches to margin (core default if omitted)")
    parser.add_argument("--compare", default="auto",
                        help="comma-separated strategies paired per seed with the --against ones ('' for none)")
    parser.add_argument("--eer-candidates", type=int, default=EER_CANDIDATES_DEFAULT,
                        help=f"random candidates sk-eer scores per query (default {EER_CANDIDATES_DEFAULT}; 0: every "
                             "unlabelled point)")
    parser.add_argument("--against", default="arls,margin",
                        help="comma-separated strategies the --compare ones are paired with (default arls,margin)")
    parser.add_argument("--threads", type=int, default=1,
                        help="BLAS/OpenMP threads (default 1: on a busy machine more threads spin and "
                             "slow the picks, TypiClust's k-means up to 17x)")
    parser.add_argument("--switch-summary", action="store_true",
                        help="with --load: one table of the switch candidates against arls and margin")
    parser.add_argument("--load", default=None, metavar="NPZ", help="print the tables of --save files (comma-separated)")
    parser.add_argument("--diagnose", default=None, metavar="STRATEGY",
                        help="instead of the table: what the estimated risk sees along STRATEGY-driven runs")
    args = parser.parse_args(argv)
    WEIGHTING = args.weighting
    EER_CANDIDATES = args.eer_candidates if args.eer_candidates > 0 else sys.maxsize
    COMPARE[:] = [c for c in args.compare.split(",") if c]
    AGAINST[:] = [c for c in args.against.split(",") if c]
    SUMMARY[:] = [True] if args.switch_summary else []
    if args.auto_min is not None:
        import core.criteria.auto as auto_module
        auto_module.MIN_LABELS_PER_CLASS = args.auto_min
    tasks = dict(TASKS)
    strategies = list(OURS) + list(PEERS)
    if args.quick:
        tasks, strategies = dict(QUICK_TASKS), list(OURS)
        args.seeds, args.budget = 1, 30
    if args.tasks:
        wanted = args.tasks.split(",")
        unknown = [t for t in wanted if t not in TASKS and t not in QUICK_TASKS]
        if unknown:
            parser.error(f"unknown task(s) {unknown}; choose from {', '.join(TASKS)}")
        tasks = {t: {**TASKS, **QUICK_TASKS}[t] for t in wanted}
    if args.strategies:
        wanted = args.strategies.split(",")
        known = list(OURS) + list(PEERS) + list(SWITCHES)
        unknown = [s for s in wanted if s not in known]
        if unknown:
            parser.error(f"unknown strategy(ies) {unknown}; choose from {', '.join(known)}")
        strategies = wanted
    if args.budget <= INITIAL:
        parser.error(f"--budget must exceed the {INITIAL} initial labels")
    if args.load:
        print_saved(args.load, args.seeds)
        return 0
    if args.diagnose:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            print("\n" + diagnose(tasks, args.seeds, args.budget, args.diagnose))
        return 0
    missing = sorted({PEERS[s][0] for s in strategies if s in PEERS and not available(PEERS[s][0])})
    if missing:
        print(f"# skipped (not installed): {', '.join(missing)}; `pip install -e .[peers]` adds them")
        strategies = [s for s in strategies if s not in PEERS or PEERS[s][0] not in missing]
    with _thread_limit(args.threads):
        return _run_tables(args, tasks, strategies, argv)


def _load() -> str:
    """The 1-, 5- and 15-minute load averages ("-" where the OS has none)."""
    try:
        return "%.1f %.1f %.1f" % os.getloadavg()
    except (AttributeError, OSError):
        return "-"


def _thread_limit(n: int):
    """Cap the BLAS and OpenMP thread pools at ``n`` for the runs (no-op without threadpoolctl).

    scikit-learn's k-means (TypiClust re-clusters the pool at every query) and numpy's BLAS
    default to one thread per core; on a machine whose cores other processes keep busy, their
    threads wait for each other at every parallel region (measured: TypiClust's pick 0.85 s
    with 2 threads against 0.05 s with 1 at a load average of 7 on 2 cores).
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl comes with scikit-learn
        import contextlib
        return contextlib.nullcontext()
    return threadpool_limits(limits=n)


def _run_tables(args, tasks: dict, strategies: list, argv) -> int:
    """Run every strategy on every task and print the tables (the body of :func:`main`)."""
    print(f"# python benchmarks/peers.py {' '.join(argv if argv is not None else sys.argv[1:])}".rstrip())
    print(f"# evaluation model: ActiveRLS, RBF width = median distance, lam {LAM}, weighting {WEIGHTING}; "
          f"{INITIAL} random initial labels")
    saved = {}
    for task, load in tasks.items():
        curves = {}
        for strategy in strategies:
            accs, secs = [], []
            for seed in range(args.seeds):
                X, y = load(seed)
                if strategy == "sk-eer" and len(y) > EER_MAX_POOL:
                    break
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    budget = task_budget(args.budget, len(y))
                    a, s = run(X, y, strategy, seed, min(budget, EER_BUDGET) if strategy == "sk-eer" else budget)
                accs.append(a)
                secs.append(s)
            if accs:
                curves[strategy] = (np.vstack(accs), np.vstack(secs))
                saved[f"{task}|{strategy}"] = curves[strategy][0]
                saved[f"{task}|{strategy}|sec"] = curves[strategy][1]
                if args.save:  # after every strategy: a long run interrupted keeps what it did
                    np.savez_compressed(args.save, **saved)
                print(f"# {task}: {strategy} done ({len(accs)} seed(s))", flush=True)
        print()
        budget = task_budget(args.budget, len(load(0)[1]))
        print(format_table(task, summarise(curves, budget), budget, args.seeds), flush=True)
        print(f"  load average at the end: {_load()}; {args.threads} thread(s)")
        lines = [line for c in COMPARE for line in paired(curves, c, AGAINST)]
        if lines:
            print(paired_header())
            print("\n".join(lines), flush=True)
    if args.save:
        np.savez_compressed(args.save, **saved)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
