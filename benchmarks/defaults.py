"""The app's defaults against alternatives and peers on public tasks nobody tuned for (issue 20 §1).

Every method labels a pool from nothing to ``--budget`` (100) labels, and after every label its
accuracy on the pool points still unlabelled is recorded. Tasks are built as a user would hand
them over: a table of numbers (or a text column) with labels, *without* the recommended width
/ lambda a built-in data set carries, so ``default`` is exactly what ``labeler simulate FILE``
does with no model, width, lambda, weighting or strategy options
(:func:`labeler.experiments.simulate.app_settings` then
:func:`labeler.experiments.simulate.simulate`).

Methods
-------
==========================  ==============================================================
``default``                 the app's defaults (strategy auto, width and lambda auto and
                            re-tuned by LOO, standardise auto, the default weighting)
``default-margin``          the same learner and settings, strategy margin
``before``, ``before-margin``  the same before issue 20 (every table standardised, "balanced",
                            width moves anywhere on the grid)
``shipped``                 the default when the first rules were chosen (standardise "auto",
                            "balanced", unbounded width moves, no pool width rules, no cold
                            start); on the first half its runs are the ``std-auto`` rows
``fixed-auto|arls|margin|random``  width = median distance of the raw features, lambda 0.1
                            fixed, no standardisation, weighting none; the strategy named
``harmonic``, ``lgc``       the graph models of ``labeler simulate --model`` (10-NN graph of
                            the app's features, strategy auto)
``poisson-vopt``            the app's Poisson learning (``--model poisson --strategy vopt``)
                            on that graph
``graph-rls``               ARLS on the diffusion spectral kernel of that graph
                            (``--model rls --transform diffusion``, 100 eigenpairs, lambda 0.1)
``gl-A/M``                  GraphLearning: acquisition A (``vopt``, ``sigmaopt``, ``unc``) on
                            its 10-NN graph (50 eigenpairs, as its documentation), model M
                            (``laplace`` or ``poisson`` learning) predicting; VOpt and
                            Sigma-opt picks do not depend on the model, so one run gives both
``sk-A/M``                  scikit-activeml's ``margin`` (on a logistic regression: its Parzen
                            window classifier picks far worse), ``typiclust``, ``probcover``; their picks are
                            scored by M = GraphLearning's Laplace learning and by ``rls``
                            (the fixed-settings RLS above)
``w-*``, ``std-*``, ...     candidate rules (:data:`CANDIDATES`), the default of their round
                            with one setting changed (:data:`CANDIDATE_BASE`); a rule switched
                            by a module constant is set per run through :data:`SWITCHES`
==========================  ==============================================================

The method registry is :data:`RUNS` (run key -> function and the method names it records);
add a method there (and to :data:`TIERS` for its place in the run order, else it runs last).

Peers start from one seeded random label (their acquisition functions need one); ours start
from none. Peers see the app's features (standardised tables, raw pixels / text vectors).

Halves
------
The tasks are split in two fixed halves balanced across kinds (:data:`FIRST_HALF`,
:data:`SECOND_HALF`). Every rule is chosen on the first half; the second half is reported as
it falls.

Results
-------
One CSV per task under ``benchmarks/results/defaults/``, one row per (task, seed, method,
labels) with the accuracy and the pool index labelled at that count. A run whose rows are
there is skipped, so the command resumes where it stopped; ``--forget M`` drops the rows of
method M first (after the code it measures changed). Where a candidate's rule does not fire
(:data:`SILENT`) its run is the base's run and is not repeated.

``--report`` prints per task the AUBC (area under the accuracy curve from 10 to 100 labels,
trapezoids, divided by the 90 labels: a mean accuracy) and the accuracy at 10 / 25 / 50 / 100
labels, mean and standard deviation over seeds, and writes ``docs/defaults.md``.

Usage::

    python benchmarks/defaults.py --half first            # run (resumable)
    python benchmarks/defaults.py --half first --report   # tables + docs/defaults.md
    python benchmarks/defaults.py --quick                 # two tiny tasks, 1 seed (seconds)
    python benchmarks/defaults.py --half second --methods default --forget default
                                                  # drop stale rows of a method, rerun it
"""

from __future__ import annotations

import argparse
import csv
import functools
import inspect
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from labeler.runtime import configure_threads  # noqa: E402

configure_threads()  # before numpy and numba load

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "defaults"
DOC = ROOT / "docs" / "defaults.md"
BUDGET = 100
AUBC_FROM = 10
CHECKPOINTS = (10, 25, 50, 100)
FIELDS = ("task", "seed", "method", "labels", "accuracy", "index")
POOL = 1000  # points per pool for the larger sources (<= 2,000: mnist-10 uses 2,000)


# --------------------------------------------------------------------------- tasks
def _table(name, X, y, feature_prefix="x"):
    """A Dataset as a user's numeric CSV gives it: no recommended settings."""
    from labeler.data.dataset import finish
    X = np.ascontiguousarray(X, dtype=np.float64)
    return finish(name, X, np.asarray(y), [f"{feature_prefix}{j}" for j in range(X.shape[1])])


def _subsample(X, y, n, seed):
    if n is None or n >= len(y):
        return X, y
    rows = np.sort(np.random.default_rng([seed, 7]).choice(len(y), size=n, replace=False))
    return X[rows], y[rows]


def _flip(y, fraction, seed):
    """Labels with ``fraction`` of them replaced by another class, seeded."""
    rng = np.random.default_rng([seed, 5])
    y = np.asarray(y).copy()
    classes = np.unique(y)
    flip = rng.choice(len(y), size=int(round(fraction * len(y))), replace=False)
    for i in flip:
        others = classes[classes != y[i]]
        y[i] = others[rng.integers(others.size)]
    return y


def task_digits10(seed):
    from sklearn.datasets import load_digits
    b = load_digits()
    return _table("digits-10", *_subsample(b.data, b.target, POOL, seed), "px")


def task_digits_pair(seed):
    from sklearn.datasets import load_digits
    b = load_digits()
    keep = np.isin(b.target, (3, 8))
    return _table("digits-3v8", b.data[keep], b.target[keep], "px")


def task_iris(seed):
    from sklearn.datasets import load_iris
    b = load_iris()
    return _table("iris", b.data, b.target)


def task_wine(seed):
    from sklearn.datasets import load_wine
    b = load_wine()
    return _table("wine", b.data, b.target)


def task_breast_cancer(seed):
    from sklearn.datasets import load_breast_cancer
    b = load_breast_cancer()
    return _table("breast-cancer", b.data, b.target)


def _mnist_pca(name, seed, digits, n):
    from sklearn.decomposition import PCA
    from labeler.data.bundled import load_mnist
    ds = load_mnist(seed=seed, n=n, digits=digits)
    X = np.asarray(ds.X, dtype=np.float64)
    Z = PCA(n_components=50, random_state=seed).fit_transform(X)
    return _table(name, Z, np.asarray(ds.y), "pc")


def task_mnist_pair(seed):
    return _mnist_pca("mnist-4v9", seed, (4, 9), POOL)


def task_mnist10(seed):
    return _mnist_pca("mnist-10", seed, None, 2000)


def _strip(ds, name):
    """A built-in as a file: its X and y only."""
    return _table(name, ds.X, ds.y)


def task_spheres(seed):
    from labeler.data.synthetic import load_spheres
    return _strip(load_spheres(seed=seed, n=1200, n_val=60), "spheres")


def task_blobs(seed):
    """24 tight Gaussian clusters in 5-D, each one class of 3: one query per cluster suffices."""
    from sklearn.datasets import make_blobs
    rng = np.random.default_rng([seed, 9])
    centres = rng.uniform(-20, 20, size=(24, 5))
    X, cluster = make_blobs(n_samples=960, centers=centres, cluster_std=1.0, random_state=seed)
    label = rng.permutation(np.arange(24) % 3)
    return _table("blobs-24", X, label[cluster])


def task_moons(seed):
    from labeler.data.synthetic import load_moons
    return _strip(load_moons(seed=seed, n=1000, n_val=2), "moons")


def task_circles(seed):
    from sklearn.datasets import make_circles
    X, y = make_circles(n_samples=1000, noise=0.08, factor=0.5, random_state=seed)
    return _table("circles", X, y)


def task_moons_imbalanced(seed):
    from labeler.data.synthetic import load_moons_imbalanced
    return _strip(load_moons_imbalanced(seed=seed, n=1100, n_val=2), "moons-imbalanced")


def task_magic_imbalanced(seed):
    from labeler.data.bundled import load_magic_imbalanced
    ds = load_magic_imbalanced(seed=seed, n=1100, n_val=2)
    return _table("magic-imbalanced", ds.X, ds.y)


def task_noisy_blobs(seed):
    """Four Gaussian blobs in 4-D, 800 points, 10 % of the labels flipped."""
    from sklearn.datasets import make_blobs
    X, y = make_blobs(n_samples=800, centers=4, n_features=4, cluster_std=2.0, random_state=seed)
    return _table("noisy-blobs", X, _flip(y, 0.1, seed))


def task_noisy_classification(seed):
    """Four classes, two clusters each, 8 features, 1000 points, 10 % of the labels flipped."""
    from sklearn.datasets import make_classification
    X, y = make_classification(n_samples=1000, n_features=8, n_informative=6, n_redundant=0, n_classes=4,
                               n_clusters_per_class=2, flip_y=0.0, class_sep=1.5, random_state=seed)
    return _table("noisy-4", X, _flip(y, 0.1, seed))


def _docstrings(groups: dict, min_chars: int = 80) -> tuple[list, list]:
    """(text, topic) of every public callable's docstring in each group of modules, sorted."""
    import importlib
    rows = {}
    for topic, modules in groups.items():
        for modname in modules:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                mod = importlib.import_module(modname)
            for attr in sorted(dir(mod)):
                if attr.startswith("_"):
                    continue
                try:
                    obj = getattr(mod, attr)
                except Exception:  # noqa: BLE001 - lazy attributes that fail to load
                    continue
                if not callable(obj):
                    continue
                doc = inspect.getdoc(obj) or ""
                if len(doc) < min_chars:
                    continue
                key = (getattr(obj, "__module__", modname) or modname, getattr(obj, "__qualname__", attr))
                rows.setdefault(key, (" ".join(doc[:1500].split()), topic))
    texts = [rows[k][0] for k in sorted(rows)]
    topics = [rows[k][1] for k in sorted(rows)]
    return texts, topics


def _text_task(name, groups, seed, n):
    import pandas as pd
    from labeler.data import load_dataset
    texts, topics = _docstrings(groups)
    # one docstring per text (the same function reached from two modules is kept once)
    frame = pd.DataFrame({"id": np.arange(len(texts)), "text": texts, "label": topics})
    frame = frame.drop_duplicates("text", keep=False).reset_index(drop=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"{name}.csv"
        frame.to_csv(path, index=False)
        ds = load_dataset(path, seed=seed, n=min(n, len(frame)), label_col="label", text_col="text",
                          id_col="id")
    ds.name = name
    return ds


SCIENTIFIC_TOPICS = {
    "linear algebra": ["numpy.linalg", "scipy.linalg"],
    "statistics": ["scipy.stats"],
    "signal": ["scipy.signal"],
    "optimisation": ["scipy.optimize"],
    "metrics": ["sklearn.metrics"],
}
STDLIB_TOPICS = {
    "email": ["email.utils", "email.message", "email.parser", "email.header", "email.mime.text"],
    "asyncio": ["asyncio"],
    "web": ["http.client", "http.server", "http.cookies", "urllib.request", "urllib.parse"],
    "files": ["os", "os.path", "shutil", "pathlib", "tempfile", "glob"],
    "text": ["string", "textwrap", "re", "difflib", "unicodedata"],
}


def task_text_scientific(seed):
    return _text_task("text-scientific", SCIENTIFIC_TOPICS, seed, POOL)


def task_text_stdlib(seed):
    return _text_task("text-stdlib", STDLIB_TOPICS, seed, POOL)


def task_tiny_blobs(seed):
    from sklearn.datasets import make_blobs
    X, y = make_blobs(n_samples=60, centers=3, cluster_std=1.0, random_state=seed)
    return _table("tiny-blobs", X, y)


def task_tiny_moons(seed):
    from sklearn.datasets import make_moons
    X, y = make_moons(n_samples=60, noise=0.1, random_state=seed)
    return _table("tiny-moons", X, y)


#: name -> (kind, builder(seed) -> Dataset)
TASKS = {
    "digits-10": ("builtin", task_digits10),
    "iris": ("builtin", task_iris),
    "breast-cancer": ("builtin", task_breast_cancer),
    "mnist-4v9": ("mnist", task_mnist_pair),
    "spheres": ("clusters", task_spheres),
    "moons": ("manifold", task_moons),
    "moons-imbalanced": ("imbalanced", task_moons_imbalanced),
    "noisy-blobs": ("noisy", task_noisy_blobs),
    "text-scientific": ("text", task_text_scientific),
    "digits-3v8": ("builtin", task_digits_pair),
    "wine": ("builtin", task_wine),
    "mnist-10": ("mnist", task_mnist10),
    "blobs-24": ("clusters", task_blobs),
    "circles": ("manifold", task_circles),
    "magic-imbalanced": ("imbalanced", task_magic_imbalanced),
    "noisy-4": ("noisy", task_noisy_classification),
    "text-stdlib": ("text", task_text_stdlib),
}
#: Rules are chosen on these ...
FIRST_HALF = ("digits-10", "iris", "breast-cancer", "mnist-4v9", "spheres", "moons", "moons-imbalanced",
              "noisy-blobs", "text-scientific")
#: ... and these are reported as they fall.
SECOND_HALF = ("digits-3v8", "wine", "mnist-10", "blobs-24", "circles", "magic-imbalanced", "noisy-4",
               "text-stdlib")
QUICK_TASKS = {"tiny-blobs": ("quick", task_tiny_blobs), "tiny-moons": ("quick", task_tiny_moons)}


# --------------------------------------------------------------------------- our methods
def _app(ds, seed, **overrides):
    from labeler.experiments.simulate import app_settings
    return app_settings(ds, seed, **overrides)


def _curve_rows(curve):
    return list(zip(curve["n_labeled"].astype(int), curve["accuracy"].astype(float), curve["index"].astype(int)))


def _legacy_standardize(ds):
    """The rule of "auto" before issue 20: off for images and text features, on for every table."""
    from labeler.session import data
    return not (data.is_image_data(ds) or data.is_text_features(ds))


#: Module switches a run may set (:func:`run_app` keyword -> (module, attribute)); "default"
#: leaves the code's value. A rule added to the defaults gets its switch here, so the rows of
#: the default before it stay reproducible.
SWITCHES = {
    "max_width_step": ("core.rls.tuning", "WIDTH_MAX_STEP"),
    "pool_width": ("core.rls.width_scale", "POOL_WIDTH_RULES"),
    "cold_start": ("core.coldstart", "COLD_START_LABELS"),
    "cold_min_classes": ("core.coldstart", "COLD_START_MIN_CLASSES"),
    "graph_strategy": ("core.selection.selector", "GRAPH_STRATEGY"),
    "cluster_cover": ("core.coldstart", "CLUSTER_COVER"),
    "auto_candidates": ("labeler.session.model_selection", "AUTO_CANDIDATES"),
    "first_model": ("core.selection.selector", "FIRST_MODEL"),
    "cold_kind": ("core.coldstart", "COLD_START_KIND"),
}


def run_app(ds, seed, budget, strategy="auto", weighting=None, standardize="auto", **switches):
    """``labeler simulate FILE`` with the app's defaults (or the settings given).

    ``standardize="legacy"`` is the rule before issue 20; ``switches`` (:data:`SWITCHES`) set a
    module's rule for this run: ``max_width_step`` :data:`core.rls.tuning.WIDTH_MAX_STEP`,
    ``pool_width`` :data:`core.rls.width_scale.POOL_WIDTH_RULES` ("default": as the code has it).
    """
    from labeler.experiments.simulate import simulate
    from labeler.session.config import DEFAULTS
    if standardize == "legacy":
        standardize = _legacy_standardize(ds)
    chosen = _app(ds, seed, weighting=weighting, standardize=standardize)
    with _switched(switches), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        curve = simulate(ds, strategy=DEFAULTS["strategy"] if strategy == "auto" else strategy, budget=budget,
                         seed=seed, kernel=chosen["kernel"], lam=chosen["lam"], weighting=chosen["weighting"],
                         X=chosen["X"], auto_tune=chosen["auto_tune"], posterior=chosen["posterior"],
                         rank=chosen["rank"], landmarks=chosen["landmarks"], knn=chosen["knn"])
    return _curve_rows(curve)


class _switched:
    """Set the module rules named in ``switches`` (:data:`SWITCHES`; "default" leaves one) for
    the ``with`` block, then put them back."""

    def __init__(self, switches):
        unknown = sorted(set(switches) - set(SWITCHES))
        if unknown:
            raise ValueError(f"unknown switch(es) {unknown}; switches: {', '.join(SWITCHES)}")
        self.switches = {k: v for k, v in switches.items() if v != "default"}
        self.saved = []

    def __enter__(self):
        import importlib
        for name, value in self.switches.items():
            module_name, attribute = SWITCHES[name]
            module = importlib.import_module(module_name)
            self.saved.append((module, attribute, getattr(module, attribute)))
            setattr(module, attribute, value)
        return self

    def __exit__(self, *exc):
        for module, attribute, value in reversed(self.saved):
            setattr(module, attribute, value)
        self.saved = []
        return False


#: The app's defaults before issue 20 (standardise every table, "balanced", unbounded width moves).
BEFORE = {"weighting": "balanced", "standardize": "legacy", "max_width_step": None, "pool_width": False,
          "cold_start": 0, "cluster_cover": False}
#: The defaults shipped when the first rules of issue 20 were chosen (standardise "auto"; the
#: rest as BEFORE): the base every later candidate is paired with.
SHIPPED = dict(BEFORE, standardize="auto")
#: SHIPPED with the pool width rules (chosen on the first half after it): the base of the
#: candidates chosen after them.
POOL_RULES = dict(SHIPPED, pool_width=True)


def fixed_kernel(X, seed):
    from core.kernels import Kernel, median_distance
    return Kernel("rbf", width=median_distance(X, seed=seed))


def run_fixed(ds, seed, budget, strategy):
    """Median-distance width, lambda 0.1, raw features, no class weights."""
    from labeler.experiments.simulate import simulate
    X = np.asarray(ds.X, dtype=np.float64)
    with _switched({"cluster_cover": False}), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        curve = simulate(ds, strategy=strategy, budget=budget, seed=seed, kernel=fixed_kernel(X, seed), lam=0.1,
                         weighting="none", X=X, cold_start=0)
    return _curve_rows(curve)


def run_graph(ds, seed, budget, model, strategy="auto"):
    from labeler.experiments.graph_simulate import simulate_graph
    X = _app(ds, seed)["X"]
    kw = {"transform": "diffusion"} if model == "rls" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        curve = simulate_graph(ds, model, strategy, budget, seed, X=X, **kw)
    return _curve_rows(curve)


def run_default(ds, seed, budget, weighting=None, **rls_switches):
    """``labeler simulate FILE`` with no options: the model chosen by exact LOO (``--model auto``)
    where :func:`labeler.cli.auto_model.default_simulate_model` applies it (a dense posterior and at
    most :data:`labeler.session.model_selection.AUTO_MAX_POINTS` points: every task here), else
    kernel RLS alone; ``weighting`` replaces the default class weighting (None: the default's);
    ``rls_switches`` (:data:`SWITCHES`) set a module's rule for the run."""
    from labeler.session.model_selection import AUTO_MAX_POINTS, DEFAULT_MODEL
    chosen = _app(ds, seed, weighting=weighting)
    if DEFAULT_MODEL != "auto" or chosen["posterior"] != "dense" or len(chosen["X"]) > AUTO_MAX_POINTS:
        return run_app(ds, seed, budget, weighting=weighting, **rls_switches)
    return run_auto_model(ds, seed, budget, chosen=chosen, **rls_switches)


def run_auto_model(ds, seed, budget, correction="mass", spend=True, chosen=None, **switches):
    """``labeler simulate FILE --model auto``: the app's defaults, the model chosen by exact LOO
    among RLS, harmonic, LGC and Poisson learning (labeler/experiments/model_select_simulate.py);
    ``spend=False``: one sign-test threshold for every switch (core.selection.SwitchRule)."""
    from core.selection import SwitchRule
    from labeler.experiments.model_select_simulate import simulate_auto_model
    with _switched(switches), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        curve = simulate_auto_model(ds, budget=budget, seed=seed, correction=correction,
                                    chosen=_app(ds, seed) if chosen is None else chosen, rule=SwitchRule(spend=spend))
    return _curve_rows(curve)


# --------------------------------------------------------------------------- peers
def _codes(y):
    classes = np.unique(y)
    return np.searchsorted(classes, y), classes


class _GLModels:
    """GraphLearning's 10-NN graph of a pool, its eigenpairs and its two predicting models."""

    def __init__(self, X):
        import graphlearning as gl
        self.gl = gl
        self.W = gl.weightmatrix.knn(X, 10, knn_data=gl.weightmatrix.knnsearch(X, 10, method="brute"))
        self._eig = None

    def eig(self):
        """50 eigenpairs of the normalised Laplacian (GraphLearning's ``eigen_decomp``).

        On a graph of several components the leading singular value is repeated and the exact
        solver (``svds``) does not finish (spheres: 60 components); there its own randomised
        ``lowrank`` method (c = 100, q = 20) is used.
        """
        if self._eig is None:
            from scipy.sparse.csgraph import connected_components
            kw = {} if connected_components(self.W)[0] == 1 else {"method": "lowrank", "c": 100, "q": 20}
            self._eig = self.gl.graph(self.W).eigen_decomp(normalization="normalized", k=50, **kw)
        return self._eig

    def predict(self, model, labeled, y_labeled):
        """Predicted class (original labels) of every node, shape (n,)."""
        seen = np.unique(y_labeled)
        if seen.size == 1:
            return np.full(self.W.shape[0], seen[0])
        codes = np.searchsorted(seen, y_labeled)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if model == "laplace":
                u = self.gl.ssl.laplace(self.W).fit(np.asarray(labeled), codes)
            else:
                u = self.gl.ssl.poisson(self.W).fit(np.asarray(labeled), codes)
        return seen[np.argmax(u, axis=1)]

    def scores(self, model, labeled, y_labeled):
        seen = np.unique(y_labeled)
        codes = np.searchsorted(seen, y_labeled)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if model == "laplace":
                return self.gl.ssl.laplace(self.W).fit(np.asarray(labeled), codes)
            return self.gl.ssl.poisson(self.W).fit(np.asarray(labeled), codes)


def _first_label(n, seed):
    return int(np.random.default_rng([seed, 3]).integers(n))


def _pool_accuracy(pred, y, labeled):
    mask = np.ones(len(y), dtype=bool)
    mask[labeled] = False
    return float(np.mean(pred[mask] == y[mask])) if mask.any() else float("nan")


def _rls_predict(X, y, labeled, kernel, lam=0.1):
    """Fixed-settings RLS (one-vs-all, no offset) fitted on the labels: predicted class per point."""
    labeled = np.asarray(labeled)
    classes = np.unique(y[labeled])
    if classes.size == 1:
        return np.full(len(y), classes[0])
    K_LL = kernel(X[labeled], X[labeled])
    Y = np.where(y[labeled][:, None] == classes[None, :], 1.0, -1.0)
    alpha = np.linalg.solve(K_LL + lam * np.eye(labeled.size), Y)
    return classes[np.argmax(kernel(X, X[labeled]) @ alpha, axis=1)]


def run_gl(ds, seed, budget, acquisition, models):
    """GraphLearning acquisition on its 10-NN graph; accuracy of each model in ``models``."""
    X = _app(ds, seed)["X"]
    y = np.asarray(ds.y)
    n = len(y)
    g = _GLModels(X)
    al = g.gl.active_learning
    if acquisition in ("vopt", "sigmaopt"):
        evals, evecs = g.eig()
        C0 = np.diag(1.0 / (evals + 1e-11))
        acq = (al.var_opt if acquisition == "vopt" else al.sigma_opt)(C=C0, V=evecs)
    else:
        acq = al.unc_sampling()
    labeled = [_first_label(n, seed)]
    acq.update(np.asarray(labeled), y[labeled])
    rows = {m: [] for m in models}
    rng = np.random.default_rng([seed, 17])
    while True:
        for m in models:
            rows[m].append((len(labeled), _pool_accuracy(g.predict(m, labeled, y[labeled]), y, labeled), labeled[-1]))
        if len(labeled) >= budget:
            break
        unl = np.setdiff1d(np.arange(n), labeled)
        if acquisition == "unc":
            if np.unique(y[labeled]).size < 2:
                i = int(unl[rng.integers(unl.size)])
            else:
                u = g.scores(models[0], labeled, y[labeled])
                i = int(unl[int(np.argmax(acq.compute(u, unl)))])
        else:
            i = int(unl[int(np.argmax(acq.compute(np.zeros((n, 2)), unl)))])
        labeled.append(i)
        acq.update(np.asarray([i]), y[[i]])
    return rows


def run_sk(ds, seed, budget, kind):
    """scikit-activeml picks, scored by Laplace learning (GraphLearning) and by fixed RLS."""
    from skactiveml.pool import ProbCover, TypiClust, UncertaintySampling
    X = _app(ds, seed)["X"]
    y_true = np.asarray(ds.y)
    codes, classes = _codes(y_true)
    n = len(y_true)
    kernel = fixed_kernel(X, seed)
    g = _GLModels(X)
    if kind == "margin":
        from sklearn.linear_model import LogisticRegression
        from skactiveml.classifier import SklearnClassifier
        qs = UncertaintySampling(method="margin_sampling", missing_label=-1, random_state=seed)
        clf = SklearnClassifier(LogisticRegression(max_iter=500), classes=np.arange(classes.size),
                                missing_label=-1, random_state=seed)
    elif kind == "typiclust":
        qs = TypiClust(missing_label=-1, random_state=seed, cluster_algo_dict={"n_init": 1})
    else:
        qs = ProbCover(n_classes=classes.size, missing_label=-1, random_state=seed,
                       cluster_algo_dict={"n_init": 1})
    labeled = [_first_label(n, seed)]
    rows = {"laplace": [], "rls": []}
    while True:
        rows["laplace"].append((len(labeled), _pool_accuracy(g.predict("laplace", labeled, y_true[labeled]),
                                                             y_true, labeled), labeled[-1]))
        rows["rls"].append((len(labeled), _pool_accuracy(_rls_predict(X, y_true, labeled, kernel), y_true, labeled),
                            labeled[-1]))
        if len(labeled) >= budget:
            break
        yy = np.full(n, -1, dtype=np.int64)
        yy[labeled] = codes[labeled]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            i = int(qs.query(X, yy, clf)[0]) if kind == "margin" else int(qs.query(X, yy)[0])
        labeled.append(i)
    return rows


# --------------------------------------------------------------------------- the method table
def _single(fn):
    return lambda ds, seed, budget: {None: fn(ds, seed, budget)}


#: run key -> (function(ds, seed, budget) -> {suffix: rows}, recorded method names)
RUNS = {
    "default": (_single(lambda d, s, b: run_default(d, s, b)), ["default"]),
    # the default of round 6 (RLS answers first on every pool): the base of round 7's candidates
    "default-r6": (_single(lambda d, s, b: run_default(d, s, b, first_model="rls")), ["default-r6"]),
    "rls-default": (_single(lambda d, s, b: run_app(d, s, b, cold_start=0, cluster_cover=False)), ["rls-default"]),
    "default-margin": (_single(lambda d, s, b: run_app(d, s, b, strategy="margin")), ["default-margin"]),
    "before": (_single(lambda d, s, b: run_app(d, s, b, **BEFORE)), ["before"]),
    "before-margin": (_single(lambda d, s, b: run_app(d, s, b, strategy="margin", **BEFORE)), ["before-margin"]),
    "shipped": (_single(lambda d, s, b: run_app(d, s, b, **SHIPPED)), ["shipped"]),
    "fixed-auto": (_single(lambda d, s, b: run_fixed(d, s, b, "auto")), ["fixed-auto"]),
    "fixed-arls": (_single(lambda d, s, b: run_fixed(d, s, b, "arls")), ["fixed-arls"]),
    "fixed-margin": (_single(lambda d, s, b: run_fixed(d, s, b, "margin")), ["fixed-margin"]),
    "fixed-random": (_single(lambda d, s, b: run_fixed(d, s, b, "random")), ["fixed-random"]),
    "harmonic": (_single(lambda d, s, b: run_graph(d, s, b, "harmonic")), ["harmonic"]),
    "lgc": (_single(lambda d, s, b: run_graph(d, s, b, "lgc")), ["lgc"]),
    "graph-rls": (_single(lambda d, s, b: run_graph(d, s, b, "rls")), ["graph-rls"]),
    "poisson-vopt": (_single(lambda d, s, b: run_graph(d, s, b, "poisson", "vopt")), ["poisson-vopt"]),
    "gl-vopt": (lambda d, s, b: run_gl(d, s, b, "vopt", ["laplace", "poisson"]),
                ["gl-vopt/laplace", "gl-vopt/poisson"]),
    # the same VOpt picks scored by Laplace learning alone: on a graph of many components
    # (spheres, blobs-24) GraphLearning's Poisson learning does not converge (150 s a solve)
    "gl-vopt-laplace": (lambda d, s, b: run_gl(d, s, b, "vopt", ["laplace"]), ["gl-vopt/laplace"]),
    "gl-sigmaopt": (lambda d, s, b: run_gl(d, s, b, "sigmaopt", ["laplace", "poisson"]),
                    ["gl-sigmaopt/laplace", "gl-sigmaopt/poisson"]),
    "gl-unc-laplace": (lambda d, s, b: run_gl(d, s, b, "unc", ["laplace"]), ["gl-unc/laplace"]),
    "gl-unc-poisson": (lambda d, s, b: run_gl(d, s, b, "unc", ["poisson"]), ["gl-unc/poisson"]),
    "sk-margin": (lambda d, s, b: run_sk(d, s, b, "margin"), ["sk-margin/laplace", "sk-margin/rls"]),
    "sk-typiclust": (lambda d, s, b: run_sk(d, s, b, "typiclust"), ["sk-typiclust/laplace", "sk-typiclust/rls"]),
    "sk-probcover": (lambda d, s, b: run_sk(d, s, b, "probcover"), ["sk-probcover/laplace", "sk-probcover/rls"]),
}
#: Candidate rules for the defaults (issue 20 §4, §6): the default with one setting changed.
CANDIDATES = {
    "w-evident": (_single(lambda d, s, b: run_app(d, s, b, **dict(BEFORE, weighting="evident"))), ["w-evident"]),
    "w-none": (_single(lambda d, s, b: run_app(d, s, b, **dict(BEFORE, weighting="none"))), ["w-none"]),
    # issue 20 §2: the model chosen by exact LOO (pool-mass label weights, threshold halved per switch);
    # "-fixed-p": one threshold; "-plain": one threshold and unweighted LOO
    "auto-model": (_single(lambda d, s, b: run_auto_model(d, s, b, cold_start=0, cluster_cover=False)),
                   ["auto-model"]),
    "auto-model-fixed-p": (_single(lambda d, s, b: run_auto_model(d, s, b, spend=False, cold_start=0,
                                                                   cluster_cover=False)), ["auto-model-fixed-p"]),
    "auto-model-plain": (_single(lambda d, s, b: run_auto_model(d, s, b, correction="none", spend=False,
                                                                 cold_start=0, cluster_cover=False)),
                         ["auto-model-plain"]),
    "std-auto": (_single(lambda d, s, b: run_app(d, s, b, **dict(BEFORE, standardize="auto"))), ["std-auto"]),
    "width-step2": (_single(lambda d, s, b: run_app(d, s, b, **dict(BEFORE, max_width_step=2.0))), ["width-step2"]),
    # later candidates: SHIPPED (= the std-auto rows) with one rule changed
    "width-pool": (_single(lambda d, s, b: run_app(d, s, b, **dict(SHIPPED, pool_width=True))), ["width-pool"]),
    "cold-typiclust": (_single(lambda d, s, b: run_app(d, s, b, **dict(SHIPPED, cold_start=10))), ["cold-typiclust"]),
    "pool-cold5": (_single(lambda d, s, b: run_app(d, s, b, **dict(POOL_RULES, cold_start=5))), ["pool-cold5"]),
    "pool-cold10": (_single(lambda d, s, b: run_app(d, s, b, **dict(POOL_RULES, cold_start=10))), ["pool-cold10"]),
    "pool-evident": (_single(lambda d, s, b: run_app(d, s, b, **dict(SHIPPED, pool_width=True, weighting="evident"))),
                     ["pool-evident"]),
    # round 5: the default (model chosen by LOO) with one rule changed
    "auto-cold-multi": (_single(lambda d, s, b: run_default(d, s, b, cold_start=10, cold_min_classes=3,
                                                            cluster_cover=False)), ["auto-cold-multi"]),
    "auto-graph-vopt": (_single(lambda d, s, b: run_auto_model(d, s, b, cold_start=0, graph_strategy="vopt",
                                                                cluster_cover=False)),
                        ["auto-graph-vopt"]),
    # class weights (issue 20 §4): the default with the weighting of the RLS model changed
    "auto-evident": (_single(lambda d, s, b: run_default(d, s, b, weighting="evident",
                                                         cluster_cover=False)), ["auto-evident"]),
    # round 6 (cluster target): the default asking one label per pool cluster first while the labels
    # agree with the clusters (core.coldstart.ClusterCover)
    "auto-cover": (_single(lambda d, s, b: run_default(d, s, b, cluster_cover="typical")), ["auto-cover"]),
    # the same, the pick in the uncovered clusters by the model's own criterion (expected risk, margin)
    "auto-cover-model": (_single(lambda d, s, b: run_default(d, s, b, cluster_cover="model")), ["auto-cover-model"]),
    # graph-kernel RLS (kernel RLS on the kNN graph's spectral kernel) as a fifth candidate of the default
    "auto-graph-rls": (_single(lambda d, s, b: run_default(d, s, b, auto_candidates=(
        "rls", "harmonic", "lgc", "poisson", "graph-rls"),
        cluster_cover=False)), ["auto-graph-rls"]),
    # round 7 (the misses at 10 labels): Laplace learning on the kNN graph (harmonic) answers the first
    # labels, until leave-one-out gives the evidence to switch (core.selection.selector.FIRST_MODEL)
    "auto-graph-first": (_single(lambda d, s, b: run_default(d, s, b, first_model="harmonic")), ["auto-graph-first"]),
    # the same with Poisson learning answering first
    "auto-poisson-first": (_single(lambda d, s, b: run_default(d, s, b, first_model="poisson")),
                           ["auto-poisson-first"]),
    # the graph's VOpt picks the first 10 labels on every pool (core.coldstart.COLD_START_KIND), RLS answering
    "auto-vopt-cold": (_single(lambda d, s, b: run_default(d, s, b, cold_kind="vopt")), ["auto-vopt-cold"]),
    # both: the peers' recipe (VOpt picks, Laplace learning answering) for the first labels
    "auto-graph-vopt-first": (_single(lambda d, s, b: run_default(d, s, b, first_model="harmonic", cold_kind="vopt")),
                              ["auto-graph-vopt-first"]),
}
#: Order of the runs: a stopped run leaves every task with the first tiers.
TIERS = (("default", "before", "fixed-auto", "gl-vopt"),
         ("w-evident", "std-auto", "width-step2", "w-none"),
         ("sk-typiclust", "sk-probcover", "default-margin", "harmonic"),
         ("before-margin", "fixed-margin", "lgc", "poisson-vopt", "graph-rls", "fixed-random", "gl-unc-laplace", "gl-sigmaopt", "sk-margin", "gl-unc-poisson",
          "fixed-arls"))
PEER_RUNS = tuple(k for k in RUNS if k.startswith(("gl-", "sk-")))
QUICK_RUNS = ("default", "fixed-margin")


def _methods_of(run_key):
    return RUNS[run_key][1] if run_key in RUNS else CANDIDATES[run_key][1]


def _function_of(run_key):
    return RUNS[run_key][0] if run_key in RUNS else CANDIDATES[run_key][0]


def _names(run_key, result):
    methods = _methods_of(run_key)
    if list(result) == [None]:
        return {methods[0]: result[None]}
    return {m: result[m.split("/")[-1]] for m in methods}


# --------------------------------------------------------------------------- storage
def result_path(task, out=RESULTS):
    return Path(out) / f"{task}.csv"


def read_rows(task, out=RESULTS) -> list[dict]:
    path = result_path(task, out)
    if not path.exists():
        return []
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(f) if r["task"] != "task"]  # a header written twice


def done_runs(task, out=RESULTS) -> set:
    """(seed, method) pairs already stored."""
    return {(int(r["seed"]), r["method"]) for r in read_rows(task, out)}


#: The columns that name a row: one accuracy per (task, seed, method, label count).
KEY = ("task", "seed", "method", "labels")


def _key(row) -> tuple:
    """A row's key (:data:`KEY`) as strings, from a dict (read back) or a tuple in :data:`FIELDS` order."""
    if isinstance(row, dict):
        return tuple(str(row[k]) for k in KEY)
    return tuple(str(row[FIELDS.index(k)]) for k in KEY)


def append_rows(task, rows, out=RESULTS) -> int:
    """Append one run's rows in one locked write (two runners may share a task's file).

    A row whose key (:data:`KEY`) the file already holds is not written again (two runners that
    computed the same run, or a run resumed after its rows were written): the first stays.
    Returns the rows written.
    """
    import fcntl
    import io
    path = result_path(task, out)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a+", newline="") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            f.seek(0)
            have = {_key(r) for r in csv.DictReader(f) if r["task"] != "task"}
            fresh, seen = [], set()
            for r in rows:
                k = _key(r)
                if k not in have and k not in seen:
                    fresh.append(r)
                    seen.add(k)
            f.seek(0, io.SEEK_END)
            if f.tell() == 0:
                f.write(",".join(FIELDS) + "\n")
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerows(fresh)
            f.write(buf.getvalue())
            f.flush()
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
    return len(fresh)


def _rewrite_rows(task, transform, out=RESULTS):
    """Read the stored rows of ``task`` (header lines written twice left out) under the file's
    lock and write back ``transform(rows)`` in one rewrite. Returns (rows read, rows written),
    or None when the task has no file."""
    import fcntl
    path = result_path(task, out)
    if not path.exists():
        return None
    with open(path, "r+", newline="") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            rows = [r for r in csv.DictReader(f) if r["task"] != "task"]
            keep = transform(rows)
            f.seek(0)
            f.truncate()
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(FIELDS)
            writer.writerows([r[k] for k in FIELDS] for r in keep)
            f.flush()
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)
    return rows, keep


def dedupe_rows(task, out=RESULTS) -> int:
    """Drop repeated rows of ``task`` (the same :data:`KEY`; the first is kept) and header lines
    written twice, in one locked rewrite. Returns the rows dropped."""
    def first_of_each_key(rows):
        keep, seen = [], set()
        for r in rows:
            k = _key(r)
            if k not in seen:
                keep.append(r)
                seen.add(k)
        return keep

    done = _rewrite_rows(task, first_of_each_key, out)
    return 0 if done is None else len(done[0]) - len(done[1])


def forget_rows(task, methods, out=RESULTS) -> int:
    """Drop the stored rows of ``methods`` for ``task`` (stale after the code they measure
    changed), in one locked rewrite; the next run recomputes them. Returns the rows dropped."""
    done = _rewrite_rows(task, lambda rows: [r for r in rows if r["method"] not in methods], out)
    return 0 if done is None else len(done[0]) - len(done[1])


def relabel_default(task, fires, source, old, out=RESULTS) -> tuple:
    """When a rule joins the default: keep the default's rows as method ``old`` (every seed), and
    where the rule fires (``fires(task, seed)``) make ``source``'s rows (the candidate that is the
    rule: same settings, so the same run) the ``default`` rows; in one locked rewrite.
    Returns (seeds relabelled, seeds kept)."""
    seeds, moved = [], []

    def relabelled(rows):
        if any(r["method"] == old for r in rows):
            raise ValueError(f"{task}: rows of {old!r} exist already; the default was relabelled before.")
        seeds[:] = sorted({int(r["seed"]) for r in rows if r["method"] == "default"})
        have = {int(r["seed"]) for r in rows if r["method"] == source}
        moved[:] = [s for s in seeds if fires(task, s) and s in have]
        missing = [s for s in seeds if fires(task, s) and s not in have]
        if missing:
            raise ValueError(f"{task}: the rule fires on seeds {missing} without rows of {source!r}: run it first.")
        keep = [dict(r, method=old) if r["method"] == "default" else r for r in rows]
        keep += [dict(r, method="default") for r in rows if r["method"] == source and int(r["seed"]) in moved]
        keep += [dict(r) for r in rows if r["method"] == "default" and int(r["seed"]) not in moved]
        return keep

    if _rewrite_rows(task, relabelled, out) is None:
        return [], []
    return moved, [s for s in seeds if s not in moved]


def graph_first_fires(task, seed) -> bool:
    """Whether the default's prior rule (core.selection.prior.first_model) lets the harmonic
    function answer first on this task and seed."""
    from core.selection.prior import first_model
    W, c = _pool_graph(task, seed)
    return first_model(W, c, seed=seed) == "harmonic"


#: A run taking longer is stopped and marked failed (``failed.csv``: not retried, named in the
#: report): GraphLearning's eigensolver on a graph of many components (spheres) does not finish.
RUN_SECONDS = 600
#: Longer limits for tasks whose runs of our own methods take minutes on a loaded machine (a
#: default run on mnist-10, 2,000 points and 10 classes, passed 600 s at load 40): there the
#: limit is a guard against a solver that never finishes, not a measurement, so load must not
#: cut a seed. ``--time-limit`` replaces both.
RUN_SECONDS_BY_TASK = {"mnist-10": 3600}


def run_seconds(task, limit=None) -> int:
    """The time limit of one run of ``task``: ``limit`` if given, else :data:`RUN_SECONDS_BY_TASK` /
    :data:`RUN_SECONDS`."""
    return int(limit) if limit is not None else RUN_SECONDS_BY_TASK.get(task, RUN_SECONDS)


class RunTimeout(Exception):
    pass


class _time_limit:
    def __init__(self, seconds):
        self.seconds = int(seconds)

    def __enter__(self):
        import signal

        def stop(signum, frame):
            raise RunTimeout(f"longer than {self.seconds} s")
        self.old = signal.signal(signal.SIGALRM, stop)
        signal.alarm(self.seconds)

    def __exit__(self, *exc):
        import signal
        signal.alarm(0)
        signal.signal(signal.SIGALRM, self.old)
        return False


def failed_runs(out=RESULTS) -> set:
    path = Path(out) / "failed.csv"
    if not path.exists():
        return set()
    with open(path, newline="") as f:
        return {(r[0], int(r[1]), r[2]) for r in csv.reader(f)}


def mark_failed(task, seed, key, why, out=RESULTS):
    with open(Path(out) / "failed.csv", "a", newline="") as f:
        csv.writer(f, lineterminator="\n").writerow([task, seed, key, why])


def run_grid(tasks, seeds, run_keys, budget=BUDGET, out=RESULTS, log=sys.stderr, time_limit=None):
    """Run every (tier, seed, task, run) not stored yet.

    The run keys are taken in :data:`TIERS` order (the default, the fixed settings and the
    strongest peer first), and within a tier seeds are outermost, so a stopped run leaves every
    task with the most important columns.
    """
    table = dict(TASKS, **QUICK_TASKS)
    cache = {}
    tiers = [[k for k in tier if k in run_keys] for tier in TIERS]
    tiers.append([k for k in run_keys if not any(k in t for t in TIERS)])
    for tier in tiers:
        for seed in seeds:
            for task in tasks:
                have = done_runs(task, out)
                todo = [k for k in tier if any((seed, m) not in have for m in _methods_of(k))]
                if not todo:
                    continue
                if (task, seed) not in cache:
                    cache.clear()
                    cache[(task, seed)] = table[task][1](seed)
                ds = cache[(task, seed)]
                b = min(budget, len(ds.y) - 1)
                for key in todo:
                    if (task, seed, key) in failed_runs(out) or silent_seeds(task, key, [seed]):
                        continue
                    t0 = time.perf_counter()
                    try:
                        with _time_limit(run_seconds(task, time_limit)):
                            result = _names(key, _function_of(key)(ds, seed, b))
                    except Exception as exc:  # noqa: BLE001 - one failing method must not stop the grid
                        print(f"{task} seed {seed} {key}: FAILED {type(exc).__name__}: {exc}", file=log, flush=True)
                        mark_failed(task, seed, key, f"{type(exc).__name__}: {exc}", out)
                        continue
                    rows = [(task, seed, m, int(lab), f"{acc:.6f}", int(idx))
                            for m, r in result.items() for lab, acc, idx in r]
                    written = append_rows(task, rows, out)
                    note = "" if written == len(rows) else f" ({len(rows) - written} rows already stored, not repeated)"
                    print(f"{task} seed {seed} {key}: {time.perf_counter() - t0:.1f} s{note}", file=log, flush=True)


# --------------------------------------------------------------------------- report
def aubc(labels, accuracy, lo=AUBC_FROM, hi=BUDGET) -> float:
    """Area under the accuracy curve from ``lo`` to ``hi`` labels (trapezoids) / (hi - lo)."""
    labels = np.asarray(labels, dtype=float)
    accuracy = np.asarray(accuracy, dtype=float)
    keep = (labels >= lo) & (labels <= hi)
    x, a = labels[keep], accuracy[keep]
    order = np.argsort(x)
    x, a = x[order], a[order]
    if x.size < 2 or x[0] != lo or x[-1] != hi:
        return float("nan")
    return float(np.sum((a[1:] + a[:-1]) / 2 * np.diff(x)) / (hi - lo))


def curves(task, out=RESULTS) -> dict:
    """{method: {seed: (labels, accuracy)}} of one task."""
    got: dict = {}
    for r in read_rows(task, out):
        got.setdefault(r["method"], {}).setdefault(int(r["seed"]), []).append((int(r["labels"]), float(r["accuracy"])))
    return {m: {s: tuple(np.array(v) for v in zip(*sorted(rows))) for s, rows in by_seed.items()}
            for m, by_seed in got.items()}


def summarise(task, out=RESULTS, budget=BUDGET, checkpoints=CHECKPOINTS) -> list[dict]:
    """Per method: AUBC and accuracy at the checkpoints, mean and sd over seeds."""
    res = []
    for method, by_seed in curves(task, out).items():
        per_seed = {"aubc": []}
        for c in checkpoints:
            per_seed[c] = []
        for labels, acc in by_seed.values():
            per_seed["aubc"].append(aubc(labels, acc, AUBC_FROM, budget))
            for c in checkpoints:
                hit = acc[labels == c]
                per_seed[c].append(float(hit[0]) if hit.size else float("nan"))
        row = {"method": method, "seeds": len(by_seed)}
        for key, vals in per_seed.items():
            v = np.asarray(vals, dtype=float)
            row[key] = (float(np.nanmean(v)) if np.isfinite(v).any() else float("nan"),
                        float(np.nanstd(v)) if np.isfinite(v).sum() > 1 else 0.0)
        res.append(row)
    res.sort(key=lambda r: -np.nan_to_num(r["aubc"][0], nan=-1))
    return res


def _pm(v) -> str:
    m, s = v
    return "-" if not np.isfinite(m) else f"{100 * m:.1f} ± {100 * s:.1f}"


def format_task(task, rows, checkpoints=CHECKPOINTS) -> str:
    head = "| method | seeds | AUBC | " + " | ".join(f"@{c}" for c in checkpoints) + " |"
    sep = "|---|---|---|" + "---|" * len(checkpoints)
    lines = [f"### {task}", "", head, sep]
    for r in rows:
        lines.append(f"| {r['method']} | {r['seeds']} | {_pm(r['aubc'])} | "
                     + " | ".join(_pm(r[c]) for c in checkpoints) + " |")
    return "\n".join(lines)


def verdict(task, rows) -> str:
    """Where the default stands: against the best peer and against margin on its own learner."""
    by = {r["method"]: r for r in rows}
    name = "default" if "default" in by else "before"
    if name not in by:
        return ""
    d = by[name]["aubc"][0]
    peers = [r for r in rows if r["method"].startswith(("gl-", "sk-"))]
    parts = []
    if peers:
        best = max(peers, key=lambda r: np.nan_to_num(r["aubc"][0], nan=-1))
        parts.append(f"{name} {100 * d:.1f} vs best peer {best['method']} {100 * best['aubc'][0]:.1f} "
                     f"({100 * (d - best['aubc'][0]):+.1f})")
    ours = [r for r in rows if not r["method"].startswith(("gl-", "sk-", "default", "before"))]
    if ours:
        best = max(ours, key=lambda r: np.nan_to_num(r["aubc"][0], nan=-1))
        parts.append(f"best alternative {best['method']} {100 * best['aubc'][0]:.1f} ({100 * (d - best['aubc'][0]):+.1f})")
    return f"{task}: " + "; ".join(parts)


def paired(task, candidate, base="before", out=RESULTS, budget=BUDGET):
    """AUBC of ``candidate`` minus ``base`` over the seeds both have: (mean, [per seed])."""
    c = curves(task, out)
    if base == "before" and "std-auto" in c and _std_rule_silent(task):
        # where the standardisation rule does not fire, std-auto IS the default before (same
        # settings, same seeds: identical runs), so its seeds complete the baseline
        c["before"] = {**c["std-auto"], **c.get("before", {})}
    for name, (source, _) in SILENT.items():  # in order: a source may be filled before
        if name in (candidate, base) and source in c:
            quiet = silent_seeds(task, name, sorted(c[source]))
            c[name] = {**{s: c[source][s] for s in quiet}, **c.get(name, {})}
    if candidate not in c or base not in c:
        return float("nan"), []
    seeds = sorted(set(c[candidate]) & set(c[base]))
    d = [aubc(*c[candidate][s], AUBC_FROM, budget) - aubc(*c[base][s], AUBC_FROM, budget) for s in seeds]
    return (float(np.mean(d)) if d else float("nan")), d


@functools.lru_cache(maxsize=None)  # a pure function of the task (and seed): built once
def _pool_width_silent(task, seed) -> bool:
    """Whether the pool width rules (core.rls.width_scale) change nothing on this task and seed:
    the same grid as without them and no clusters, so ``width-pool`` IS ``shipped`` there."""
    from core.rls import width_scale as ws
    kind, build = dict(TASKS, **QUICK_TASKS)[task]
    X = _app(build(seed), seed)["X"]
    saved = ws.POOL_WIDTH_RULES
    try:
        ws.POOL_WIDTH_RULES = False
        off = ws.width_scale(X)
        ws.POOL_WIDTH_RULES = True
        on = ws.width_scale(X)
    finally:
        ws.POOL_WIDTH_RULES = saved
    return on.components is None and np.array_equal(on.widths, off.widths)


@functools.lru_cache(maxsize=None)  # a pure function of the task (and seed): built once
def _no_pool_clusters(task, seed) -> bool:
    """Whether the pool has no clusters (core.rls.width_scale components), so that the cluster
    cover (``auto-cover``) never answers and its run IS the default's."""
    from core.rls.width_scale import width_scale
    kind, build = dict(TASKS, **QUICK_TASKS)[task]
    return width_scale(_app(build(seed), seed)["X"]).components is None


@functools.lru_cache(maxsize=None)  # a pure function of the task (and seed): built once
def _n_classes(task) -> int:
    """Classes of a task's pool (seed 0; every seed has the same)."""
    return len(dict(TASKS, **QUICK_TASKS)[task][1](0).classes)


def _std_and_pool_silent(task, seed) -> bool:
    return _std_rule_silent(task) and _pool_width_silent(task, seed)


#: method -> (source, predicate(task, seed)): where the predicate holds the method's run IS the
#: source's run (same settings once the silent rules are taken out), so it is not repeated and
#: :func:`paired` reads the source's rows for it. In order: a source may itself be filled.
SILENT = {"width-pool": ("std-auto", _pool_width_silent),
          "pool-evident": ("w-evident", _std_and_pool_silent),
          "pool-cold10": ("cold-typiclust", _pool_width_silent),
          "auto-cold-multi": ("auto-model", lambda task, seed: _n_classes(task) < 3),
          "auto-cover": ("auto-cold-multi", lambda task, seed: _no_pool_clusters(task, seed)),
          "auto-cover-model": ("auto-cold-multi", lambda task, seed: _no_pool_clusters(task, seed))}


def silent_seeds(task, candidate, seeds) -> list:
    """The seeds of ``seeds`` where ``candidate``'s rule does not fire on ``task``."""
    if candidate not in SILENT:
        return []
    return [s for s in seeds if SILENT[candidate][1](task, s)]


@functools.lru_cache(maxsize=None)  # a pure function of the task (and seed): built once
def _std_rule_silent(task) -> bool:
    """Whether standardize="auto" (issue 20) chooses as the rule before on this task (seed 0)."""
    from labeler.data.preprocessing import shared_scale
    kind, build = dict(TASKS, **QUICK_TASKS)[task]
    return kind == "text" or shared_scale(build(0).X) is None


def labels_to_perfect(task, method, out=RESULTS) -> list:
    """Per seed: the fewest labels from which accuracy stays at 100 % (None when never)."""
    res = []
    for labels, acc in curves(task, out).get(method, {}).values():
        ok = acc >= 1.0 - 1e-12
        bad = np.flatnonzero(~ok)
        first = 1 if bad.size == 0 else (int(labels[bad[-1]]) + 1 if bad[-1] + 1 < labels.size else None)
        res.append(first)
    return res


#: The base each candidate was chosen against (the default of its round; :data:`CANDIDATES`).
#: A candidate not named here is paired with "before".
CANDIDATE_BASE = {"width-pool": "std-auto", "cold-typiclust": "std-auto", "pool-evident": "width-pool",
                  "pool-cold5": "width-pool", "pool-cold10": "width-pool", "auto-cold-multi": "auto-model", "auto-graph-vopt": "auto-model",
                  "auto-evident": "default-r6", "auto-cover": "auto-cold-multi", "auto-cover-model": "auto-cold-multi",
                  "auto-graph-rls": "default-r6", "auto-graph-first": "default-r6", "auto-poisson-first": "default-r6",
                  "auto-vopt-cold": "default-r6", "auto-graph-vopt-first": "default-r6"}


def candidates_table(tasks, out=RESULTS, budget=BUDGET, base="before", cands=None) -> str:
    """Each candidate rule against ``base``: paired AUBC difference per task (points), mean."""
    if cands is None:
        cands = [m for k in CANDIDATES for m in CANDIDATES[k][1] if CANDIDATE_BASE.get(m, "before") == base]
    head = "| task | " + " | ".join(cands) + " |"
    lines = [f"Paired AUBC difference against `{base}` (points, mean over the seeds both have; "
             "n = seeds):", "", head, "|---|" + "---|" * len(cands)]
    sums = {m: [] for m in cands}
    for task in tasks:
        cells = []
        for m in cands:
            mean, d = paired(task, m, base, out, budget)
            if d:
                sums[m].append(mean)
            cells.append("-" if not d else f"{100 * mean:+.1f} (n={len(d)})")
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    lines.append("| **mean over tasks** | " + " | ".join(
        f"**{100 * np.mean(v):+.2f}** ({len(v)} tasks)" if v else "-" for v in sums.values()) + " |")
    return "\n".join(lines)


def paired_at(task, candidate, base="default", labels=10, out=RESULTS):
    """Accuracy at ``labels`` labels of ``candidate`` minus ``base`` over the seeds both have: (mean, {seed: d})."""
    c = curves(task, out)
    if candidate not in c or base not in c:
        return float("nan"), {}
    d = {}
    for s in sorted(set(c[candidate]) & set(c[base])):
        (lc, ac), (lb, ab) = c[candidate][s], c[base][s]
        if (lc == labels).any() and (lb == labels).any():
            d[s] = float(ac[lc == labels][0] - ab[lb == labels][0])
    return (float(np.mean(list(d.values()))) if d else float("nan")), d


@functools.lru_cache(maxsize=None)  # a pure function of the task and seed: built once
def _pool_graph(task, seed):
    """The 10-NN graph the graph models use on a task's pool, and its class count."""
    from core.kernels import knn_graph
    ds = dict(TASKS, **QUICK_TASKS)[task][1](seed)
    X = np.asarray(_app(ds, seed)["X"], dtype=np.float64)
    return knn_graph(X, 10, seed=seed), len(ds.classes)


@functools.lru_cache(maxsize=None)
def pool_separation(task, seed) -> float:
    """:func:`core.selection.prior.cluster_separation` of a task's pool: lambda_c (c its classes) of
    the normalised Laplacian of the 10-NN graph the graph models use (no labels read)."""
    from core.selection.prior import cluster_separation
    W, c = _pool_graph(task, seed)
    return cluster_separation(W, max(2, c), seed=seed)


@functools.lru_cache(maxsize=None)
def pool_graph_components(task, seed) -> int:
    """Connected components of that graph."""
    from scipy.sparse.csgraph import connected_components
    return int(connected_components(_pool_graph(task, seed)[0])[0])


#: Round 7's candidates (the first model, the first picks), shown against the default with the prior rules.
ROUND7 = ("auto-graph-first", "auto-vopt-cold", "auto-graph-vopt-first", "auto-poisson-first")

#: Prior rules (from the pool alone) that decide where a candidate's rule fires: name -> predicate(task, seed).
GATES = {"always": lambda task, seed: True,
         "two classes": lambda task, seed: _n_classes(task) == 2,
         "3+ classes": lambda task, seed: _n_classes(task) >= 3,
         **{f"lambda_c < {t:g}": (lambda t: lambda task, seed: pool_separation(task, seed) < t)(t)
            for t in (0.002, 0.005, 0.01, 0.02, 0.05)},
         # ... and no more components than classes (else unlabelled components are left to the class
         # proportions by Laplace learning, which has nothing to propagate there)
         **{f"lambda_c < {t:g}, comps <= c": (lambda t: lambda task, seed: pool_separation(task, seed) < t and
                                               pool_graph_components(task, seed) <= max(2, _n_classes(task)))(t)
            for t in (0.005, 0.01, 0.02)}}


def gate_table(tasks, candidate, base="default-r6", out=RESULTS, budget=BUDGET, gates=None) -> str:
    """``candidate`` where a prior rule fires, ``base`` elsewhere (both stored runs: the rule from
    the pool alone picks one of the two per task and seed): paired AUBC and 10-label accuracy
    differences against ``base`` per task (points, mean over the seeds both have)."""
    gates = list(GATES) if gates is None else list(gates)
    lines = [f"`{candidate}` where a prior rule fires, `{base}` elsewhere: paired difference against `{base}` "
             "(points, AUBC / accuracy at 10 labels; lambda_c of the pool per seed):", "",
             "| task | seeds | lambda_c | " + " | ".join(gates) + " |", "|---|---|---|" + "---|" * len(gates)]
    sums = {g: ([], []) for g in gates}
    for task in tasks:
        _, d = paired(task, candidate, base, out, budget)
        _, d10 = paired_at(task, candidate, base, 10, out)
        seeds = sorted(d10)
        if not seeds:
            continue
        by_seed = dict(zip(seeds, d))
        lam = ", ".join(f"{pool_separation(task, s):.3f}" for s in seeds)
        cells = []
        for g in gates:
            fire = [GATES[g](task, s) for s in seeds]
            a = float(np.mean([by_seed[s] if f else 0.0 for s, f in zip(seeds, fire)]))
            b = float(np.mean([d10[s] if f else 0.0 for s, f in zip(seeds, fire)]))
            sums[g][0].append(a)
            sums[g][1].append(b)
            cells.append(f"{100 * a:+.2f} / {100 * b:+.1f}" + ("" if all(fire) else f" ({sum(fire)}/{len(fire)})"))
        lines.append(f"| {task} | {len(seeds)} | {lam} | " + " | ".join(cells) + " |")
    lines.append("| **mean** | | | " + " | ".join(
        f"**{100 * np.mean(a):+.2f} / {100 * np.mean(b):+.1f}**, worst {100 * min(a):+.2f}" if a else "-"
        for a, b in sums.values()) + " |")
    return "\n".join(lines)


def accuracy_at_table(tasks, methods, out=RESULTS, labels=10) -> str:
    """Accuracy at ``labels`` labels per task and method, mean over seeds (with n)."""
    lines = [f"Accuracy (%) at {labels} labels, mean over seeds (n):", "",
             "| task | " + " | ".join(methods) + " |", "|---|" + "---|" * len(methods)]
    for task in tasks:
        c = curves(task, out)
        cells = []
        for m in methods:
            v = [acc[lab == labels][0] for lab, acc in c.get(m, {}).values() if (lab == labels).any()]
            cells.append(f"{100 * np.mean(v):.1f} ({len(v)})" if v else "-")
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def score_picks(task, methods=("default",), ks=(5, 10, 15, 20, 25, 30, 40), out=RESULTS) -> str:
    """The first k picks of each method (stored column ``index``) scored by other models:
    its own accuracy, GraphLearning's Poisson and Laplace learning, fixed RLS; mean over the
    seeds every method has (%). Tells the picks from the model that answers."""
    import collections
    rows = collections.defaultdict(dict)
    for r in read_rows(task, out):
        rows[(r["method"], int(r["seed"]))][int(r["labels"])] = (float(r["accuracy"]), int(r["index"]))
    res = collections.defaultdict(list)
    seeds = sorted({s for _, s in rows})
    for seed in seeds:
        if not all((m, seed) in rows for m in methods):
            continue
        ds = dict(TASKS, **QUICK_TASKS)[task][1](seed)
        X, y = _app(ds, seed)["X"], np.asarray(ds.y)
        g, kernel = _GLModels(X), fixed_kernel(X, seed)
        for m in methods:
            got = rows[(m, seed)]
            picks = [got[k][1] for k in sorted(got)]
            for k in ks:
                L = picks[:k]
                res[(m, "own", k)].append(got[k][0])
                res[(m, "poisson", k)].append(_pool_accuracy(g.predict("poisson", L, y[L]), y, L))
                res[(m, "laplace", k)].append(_pool_accuracy(g.predict("laplace", L, y[L]), y, L))
                res[(m, "rls", k)].append(_pool_accuracy(_rls_predict(X, y, L, kernel), y, L))
    n = len(res[(methods[0], "own", ks[0])])
    lines = [f"{task}: the first k picks scored by each model (%, mean of {n} seeds)", "",
             "| picks / model | " + " | ".join(f"@{k}" for k in ks) + " |", "|---|" + "---|" * len(ks)]
    for m in methods:
        for model in ("own", "poisson", "laplace", "rls"):
            lines.append(f"| {m} / {model} | " + " | ".join(f"{100 * np.mean(res[(m, model, k)]):.1f}" for k in ks)
                         + " |")
    return "\n".join(lines)


#: First-10-label pickers compared by :func:`cold_start` (issue 20 §5).
COLD_START = ("before", "rls-default", "default", "cold-typiclust", "fixed-auto", "gl-vopt/laplace", "sk-typiclust/laplace",
              "sk-probcover/laplace")


def cold_start(tasks, out=RESULTS, n_first=10) -> str:
    """The first ``n_first`` picks of each method, scored by two common models.

    Common models: fixed RLS (app features, median width, lambda 0.1, no class weights) and
    GraphLearning's Laplace learning on the 10-NN graph; accuracy on the rest of the pool,
    mean over seeds. The picks are read from the stored rows (column ``index``).
    """
    table = dict(TASKS, **QUICK_TASKS)
    lines = [f"Accuracy (%) of the first {n_first} picks, scored by a common model "
             "(RLS: fixed settings / Laplace: GraphLearning), mean over seeds:", "",
             "| task | " + " | ".join(COLD_START) + " |", "|---|" + "---|" * len(COLD_START)]
    for task in tasks:
        rows = read_rows(task, out)
        picks = {}
        for r in rows:
            if r["method"] in COLD_START and int(r["labels"]) <= n_first:
                picks.setdefault((r["method"], int(r["seed"])), {})[int(r["labels"])] = int(r["index"])
        if not picks:
            continue
        scores = {m: [] for m in COLD_START}
        for seed in sorted({s for _, s in picks}):
            ds = table[task][1](seed)
            X = _app(ds, seed, standardize=_legacy_standardize(ds))["X"]
            y = np.asarray(ds.y)
            kernel = fixed_kernel(X, seed)
            g = _GLModels(X)
            for m in COLD_START:
                got = picks.get((m, seed), {})
                if len(got) < n_first:
                    continue
                L = [got[k] for k in range(1, n_first + 1)]
                scores[m].append((_pool_accuracy(_rls_predict(X, y, L, kernel), y, L),
                                  _pool_accuracy(g.predict("laplace", L, y[L]), y, L)))
        cells = []
        for m in COLD_START:
            v = np.array(scores[m])
            cells.append("-" if v.size == 0 else f"{100 * v[:, 0].mean():.1f} / {100 * v[:, 1].mean():.1f}")
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


DECISIONS = """## Rules chosen on the first half

Each candidate is the default of its round with ONE setting changed, paired per seed with it
(tables "Candidate rules"; `CANDIDATE_BASE` in the script names each one's base). The
criterion, fixed before reading the second half: adopted when ahead on the mean over the first
half's tasks AND no task loses more than 1 AUBC point. A check outside the benchmark can still
overrule a rule: `tests/test_stopping.py` (slow: MAGIC, 800 points, seed 1, 150 ARLS labels;
imbalanced moons) and the two-moons target (`tests/test_autotune.py`, slow: 99 % by 25 labels,
5 seeds).

Round 1 (base `before`: every table standardised, "balanced", width moves anywhere):

- `std-auto` (standardize "auto", `labeler.data.preprocessing.shared_scale`: pixel-like tables
  and PCA components are not standardised): **adopted** (+1.09 on the mean; it fires on
  digits-10 and mnist-4v9 only). The default so made is `shipped`.
- `width-step2` (a re-tune moves the width at most a factor 2): ahead on the first half (+0.47)
  but **taken back**: on MAGIC the balanced error at 150 labels was 33.1 % against 26.0 %
  unbounded and the stopping signal said "likely enough" above 15 % error. The option stays
  (`max_width_step`).
- `w-evident` ("balanced" only once a chi-square test on the label counts shows imbalance):
  **not adopted** then (-2.1 on spheres, where "balanced" happened to pull the automatic width
  down towards where spheres separate).

Round 2 (base `std-auto` = `shipped`):

- `width-pool` (core/rls/width_scale.py, docs/algorithms.md §12: the width grid reaches down to
  the 10th-neighbour distances; while the labels agree with the pool's clusters, the
  components of its 10-NN graph, the width stays at or below half their median gap):
  **adopted**: +1.37 on the mean, spheres +11.3, text-scientific +1.3, no task below -0.13
  (noisy-blobs). Silent (same grid, no clusters, so identical runs) on digits-10, iris,
  breast-cancer, mnist-4v9 and 3 seeds of noisy-blobs, and on MAGIC: its stopping test passes,
  as do the imbalanced-moons stopping test and the two-moons target (slow tests, run with it).
  Spheres now reach 100 % and stay from 61-64 labels (60 spheres; the target, 62, on 2 of 5
  seeds), never before. At 10 labels it costs text-scientific (80.0 -> 62.8 %: the
  docstrings' graph splits into 3 components and the first labels agree with them) and gains
  noisy-blobs; from 25 labels on text-scientific is ahead.
- `cold-typiclust` (TypiClust for the first 10 labels, core/coldstart.py, docs/algorithms.md
  §13): +1.72 on the mean and far better at 10 labels (digits-10 50.7 -> 73.1 %, iris 84.3 ->
  92.6, noisy-blobs 64.7 -> 85.9, text-scientific 80.0 -> 89.3) but mnist-4v9 **-1.26** (seeds
  -4.4 and -3.9): **not adopted**.

Round 3 (base `width-pool` = the default now):

- `pool-evident` (the weighting "evident"): +1.29 on the mean, no task below -0.20
  (moons-imbalanced), spheres at 100 % from 57-61 labels (all 5 seeds within 62); ahead on
  the benchmark but **not adopted**: MAGIC's stopping test fails with it (the signal says
  "likely enough" at 31-35 labels while the balanced error is 36.0 %, the run's least being
  23.8 %): the unweighted model's predictions settle early while the minority class is still
  missed. It stays a choice ("evident" in the app and `--weighting`).
- `pool-cold10` (TypiClust for the first 10 labels, with the pool rules): +1.13 on the mean,
  spheres at 100 % from 59-60 labels, but mnist-4v9 -1.26 (the same runs as `cold-typiclust`
  there: the pool rules are silent): **not adopted**. `pool-cold5` (5 labels, 3 seeds): +0.39,
  mnist-4v9 -2.0: not adopted. The cold start stays an option
  (`core.coldstart.COLD_START_LABELS`, used by `simulate` and the session's "auto").

Round 4 (base `width-pool`, now the row `rls-default`):

- `auto-model` (the model chosen by exact leave-one-out among RLS, harmonic, LGC and Poisson
  learning, labels weighted by the pool mass they stand for, a switch on a sign test at
  p < 0.1 / 2^s; docs/algorithms.md §14; `python benchmarks/auto_model.py --seeds 3`):
  **adopted**: +0.53 on the first half's mean (digits-10 +3.4, noisy-blobs +1.0,
  breast-cancer +0.7), no task below -0.2 (mnist-4v9). It is the default model of `labeler
  app` and `labeler simulate` (`--model auto`). The app compares the models in a background
  job, so a switch can come a few labels later than in these runs (docs/benchmarks.md §14).
  Second half, as it fell (5 seeds), against RLS alone: mnist-10 70.3 -> 81.6 (+11.3),
  noisy-4 62.1 -> 66.3 (+4.2), circles +0.2, blobs-24 -0.2, text-stdlib 89.1 -> 88.1
  (**-1.1**), the other three 0.0: mean +1.81.

Why noisy-4 and circles still lost after round 4 (analysis on the stored rows and on the first
half's analogues noisy-blobs and moons; nothing here was tuned on the second half):

- noisy-4: the peer ahead is GraphLearning's VOpt picks predicted by Poisson learning (71.7,
  5 seeds; with Laplace learning 69.1). The gap is in the first labels, not at the end: at 10
  labels `auto-model` 42.8 % against 64.9 %, at 25 54.9 against 67.1, at 100 76.7 against
  75.4. Both the picks and the model: the first 10 expected-risk picks score 42.5 % (fixed RLS)
  / 34.1 % (Laplace learning) against VOpt's 55.4 / 56.6 (table "Cold start"), and RLS answers
  until the first switch (30-40 labels). The label noise is not what loses: once a graph model
  answers, the curve is level with the peers'. (Those figures are the 3 seeds of the peer then;
  the table "Cold start" below has the current ones, VOpt's on 5 seeds and TypiClust's, the
  default's first picks since round 5.) The first half's noisy-blobs shows the same
  (first 10 picks 68.7 / 71.2 % against TypiClust's 82.6 / 81.7) and one more failure: on seed
  1 harmonic takes over at 13 labels (p = 0.064) and margin's picks then leave it at 68 % for
  27 labels (the strategy after the switch).
- circles: the loss is between 10 and 20 labels only (73.4 % at 10 labels against 97.8 for
  VOpt / Poisson; 99.9 at 25). RLS answers there; the graph models would be right, but
  leave-one-out on 10-20 labels gives no evidence to switch (moons, seed 3: no switch in 40
  labels while RLS is at 81 % at 10 labels). A cold start does not apply (two classes, below).
- Graph-kernel RLS (diffusion / spectral on the kNN graph) was not added as a fifth candidate:
  the graph candidates already there are the models that win on these tasks, and the losses
  come before leave-one-out can tell any two candidates apart; not measured then (since:
  "Graph-kernel RLS" below, not adopted).

Round 5 (base `auto-model`, the default of round 4; candidates run with its settings):

- `auto-cold-multi` (TypiClust, docs/algorithms.md §13, for the first 10 labels of "auto" on
  pools of at least 3 classes; `core.coldstart.COLD_START_MIN_CLASSES`): **adopted**, the
  default now (`default` rows: its runs, and `auto-model`'s on two-class tasks where it is
  silent). First half, 5 seeds: +0.84 on the mean over the 9 tasks, digits-10 +3.7 (every seed
  ahead, +1.5 to +6.2), noisy-blobs +2.2 (-0.7 to +11.0), text-scientific +1.1, iris +0.6; no
  task below 0 (the five two-class tasks are silent: identical runs). Why two classes are left
  out, measured on the first half before this round: TypiClust for 10 labels lost on
  mnist-4v9 (-1.3, rounds 2-3), breast-cancer (-0.3) and moons-imbalanced (-0.1) only, all
  two-class; on mnist-4v9 (seed 0) ten typical points, far from the boundary, send the
  leave-one-out width re-tune 8.3 -> 2.9 -> 16.6 -> 1.5 between 15 and 20 labels and accuracy
  stays near 72 % to 30 labels (89-90 % without the cold start). With two classes both are
  found within the first few labels anyway. MAGIC (the stopping test), two-moons (the 25-label
  target) and spheres are two-class: the rule is silent there, so those checks are unchanged.
- `auto-graph-vopt` (after a switch to a graph model, "auto" asks VOpt instead of margin;
  `core.selection.GRAPH_STRATEGY`): **not adopted**. It mends noisy-blobs seed 1 (+10.0) but
  loses breast-cancer -3.9 and spheres -7.8 (seed 0; noisy-blobs -0.7 and -2.7 on seeds 0 and
  2); the run was stopped there (3 seeds of noisy-blobs, 1 of the others). The option stays.
- Class weights (issue 20 §4): not changed this round. "evident" (+1.29 in round 3) still
  fails MAGIC's stopping test; a rule that turns "balanced" on from the predicted pool
  proportions (with hysteresis) needs the predictions inside the weighting, which is a
  function of the label counts today (shared by every learner and the LOO tuner), and was not
  built. "balanced" stays the default.

  Second half, as it fell (where it fires; 3 seeds, noisy-4 5: `python benchmarks/defaults.py
  --tasks noisy-4,wine,blobs-24,text-stdlib,mnist-10 --methods auto-cold-multi --seeds 3`, then
  `--tasks noisy-4 --seeds 5`), paired with `auto-model` on the same seeds: noisy-4 66.3 ->
  68.1 (+1.8; seeds -1.3, +0.9, +10.2, +1.4, -2.3),
  blobs-24 95.1 -> 97.2 (+2.1; 100 % from 24, 23 and 66 labels against 26, 27, 73: the target,
  26, on 2 of 3 seeds against 1 of 5), text-stdlib +1.3, wine 0.0, mnist-10 -0.7 (seeds -2.0,
  -0.3, +0.1); the three two-class tasks are silent. Where the default still loses to the best
  peer on the second half: noisy-4 by 3.6 points (68.1 against VOpt / Poisson's 71.7, both 5
  seeds; 5.4 before this round), circles by 1.1 (98.7 against Laplace learning on VOpt picks,
  99.8: the 10-20 label phase above, untouched), digits-3v8 by 0.3, mnist-10 by 0.2 (81.3 on
  3 seeds against 81.4 on 4); on the first half mnist-4v9 by 3.5 (91.5 against VOpt / Poisson's 94.9),
  spheres by 0.9 (100 % from 62-63 labels: the cluster target, 62, on 2 of 5 seeds) and
  digits-10 by 0.5 (95.2 against TypiClust picks predicted by Laplace learning, 95.7; 9.0
  before rounds 4-5).

Round 6 (base `auto-cold-multi`, the default of round 5; the cluster target):

- Why the cluster target failed on spheres (default 100 % from 62-63 labels, 60 spheres, the
  target 62 met on 2 of 5 seeds): no sphere is skipped and the width does not drift (the
  re-tune holds 0.06-0.11 from label 4 on, at or below the cluster width 0.12 of the
  standardised pool). Three of the first ten expected-risk picks (four on seed 4), at labels
  6, 8 and 10 on every seed, go to spheres already labelled, of the class with fewer labels:
  the "balanced" class weights (seed 0 with weighting "none": no repeat in the first 12). So
  every sphere holds a label only at 63 labels (64), and 100 % comes with the last one (one
  label earlier where the last sphere happens to be predicted right: the 2 seeds that met it).
- Why blobs-24 seed 2 fails (100 % from 66 labels against 23-26 on the others): all 24
  clusters hold a label at 24 labels; two clusters of different classes overlap there
  (centres 3.6 apart at unit spread; 2 points lie nearer the other class's centre), so one
  query per cluster cannot give 100 %: the curve stays at 99.2-99.9 % until margin finds those
  points. GraphLearning's VOpt never reaches 100 % on that seed either. (Re-run on 27 November
  with the model choice's tie rule, docs/algorithms.md §14: that seed stays at 99.x % through
  the 100 labels, spheres reach 100 % from 60, 59, 60, 59, 58 labels; every other task's default
  rows are unchanged.)
- `auto-cover-model` (core/coldstart.py `ClusterCover`: while the labels agree with the pool's
  clusters, the components of its 10-NN graph (docs/algorithms.md §12), and a cluster holds no
  label, "auto" asks the point its model's criterion ranks first among the clusters with no
  label; a cluster holding two classes stops the rule for good): **adopted**
  (`core.coldstart.CLUSTER_COVER = "model"`, in `labeler simulate` and the app's sessions).
  First half: the pools with clusters are spheres, text-scientific and seeds 0 and 4 of
  noisy-blobs; spheres (5 seeds) +0.8 AUBC (seeds -0.2, +3.6, +1.3, -0.6, 0.0) and 100 % from
  60, 58, 57, 60, 60 labels (every seed within 62); text-scientific (seeds 0-2) and
  noisy-blobs (seed 0) identical runs (TypiClust's first 10 labels already cover their few
  clusters; seeds 3-4 and noisy-blobs seed 4 were stopped by the machine's load); the other
  six tasks have no clusters: identical runs. Mean over the 9 tasks +0.09, no task below 0. Silent on MAGIC (the stopping test) and two-moons (no clusters), so
  those checks are unchanged. `auto-cover` (the most typical point of the largest cluster with
  no label, model-free) also reaches 100 % at 60 labels on spheres seed 0 but loses 1.0 AUBC
  there (it sweeps equal-sized spheres in index order): not adopted.
- noisy-4 (second half, analysis only): the default's first 10-30 picks scored by
  GraphLearning's Poisson learning give 62.4 / 64.4 / 65.9 / 66.3 % at 10 / 15 / 25 / 30 labels
  against the default's own 56.8 / 61.3 / 63.4 / 64.8 and VOpt's picks with Poisson learning
  64.9 / 67.5 / 67.1 / 70.2: about half the gap is the model answering (RLS until the first
  switch), half the picks. Poisson learning answering the first labels is not a rule the
  first half supports: the default's picks scored by it lose 9.5 points at 10 labels on iris
  (83.1 against 92.6) and 21 on noisy-blobs (62.8 against 83.7), gaining 7.6 on digits-10;
  Laplace learning (harmonic) on the same picks: digits-10 +7.8, iris +0.4, noisy-blobs -2.0 at
  10 labels, and it loses on noisy-4 itself (56.3 / 56.3 / 62.2 against 56.8 / 61.3 / 63.4).
  No change proposed. Figures: `python benchmarks/defaults.py --tasks noisy-4 --score-picks
  default,gl-vopt/poisson` (and `--tasks iris,noisy-blobs,digits-10 --score-picks default`).
- Second half, as it fell: the cover fires on blobs-24 only; seeds 0-2 with it (the rest
  stopped by load): seeds 0 and 1 identical, seed 2 -0.03 (TypiClust's first 10 labels and the
  expected risk already reach every cluster by 23-24 labels). The `default` rows of blobs-24
  are the round-5 default's (5 seeds); those of spheres are `auto-cover-model`'s runs.

Round 7 (base `default-r6`, the default of round 6; the misses at 10 labels):

- Why the second half missed at 10 labels (digits-3v8 -5.8, mnist-10 -8.4, circles -24.5,
  noisy-4 -8.1 points against the best peer there, usually GraphLearning's VOpt picks predicted
  by Laplace or Poisson learning): below 10 labels the sign test of §14 cannot switch, so the
  model that answers then is RLS on every pool, and on a manifold it is the wrong one. The first
  half shows the same on moons (89.6 % at 10 labels against 99.4 for VOpt / Laplace) and
  moons-imbalanced (93.6 against 98.2): Laplace learning on the default's own first 10 picks
  scores 96.7 and 97.7 there (table "Cold start"). The picks matter less: VOpt's first 10 picks
  scored by a common model beat the default's only on the two moons tasks and noisy-blobs.
- `auto-graph-first` (the harmonic function, Laplace learning on the 10-NN graph, answers
  from the first label until leave-one-out gives the evidence to switch;
  `core.selection.selector.FIRST_MODEL = "harmonic"`): first half, 5 seeds: +0.08 AUBC on the
  mean, +2.3 points at 10 labels, but breast-cancer **-1.09** and spheres **-0.86** (spheres: 60
  components, a component with no label is left at the class proportions): **not adopted**.
- A prior choice from the pool alone (docs/algorithms.md §20, `core.selection.prior`): the
  harmonic function answers first where the 10-NN graph splits into as many parts as there are
  classes c (`lambda_c`, the c-th smallest eigenvalue of the normalised Laplacian, below a
  threshold) and has no more components than classes; RLS elsewhere. Its runs are
  `auto-graph-first`'s where it fires and `default-r6`'s elsewhere (same settings, same runs:
  checked by rerunning `default` on moons, circles and iris seed 0, identical rows). First
  half (table "`--gates auto-graph-first`" below; AUBC / 10-label points): thresholds 0.005,
  0.01, 0.02 give +0.09 / +1.9, +0.16 / +2.1, +0.16 / +2.1 on the mean, no task below 0; without
  the components condition spheres loses (-0.86). **Adopted with 0.02** (the best first-half
  mean, +0.164 against +0.160 for 0.01: one more noisy-blobs seed; `FIRST_MODEL = "prior"`,
  `core.selection.prior.GRAPH_FIRST_SEPARATION`): it fires on moons, moons-imbalanced and
  text-scientific (every seed) and noisy-blobs (4 of 5): moons +0.36 / +10.3, moons-imbalanced
  +0.30 / +5.4, text-scientific +0.63 / +1.8, noisy-blobs +0.19 / +1.7. The components
  condition was added after seed 0 of spheres (first half) showed the loss; the thresholds
  were read on the first half only. Checks: moons at 25 labels 100.0 % on every seed (was
  99.5-100); spheres and blobs-24 are silent (60 and 23-24 components), so the cluster target
  stands as before; the two-moons app target now runs with the app's model "auto" too
  (harmonic first: 100.0 % at 25 labels on each of 5 seeds, tests/test_autotune.py); MAGIC's
  stopping test runs kernel RLS alone, which this rule does not reach.
- Where it applies: `labeler simulate` (`--model auto`, the default) and, since round 8, an app
  session made with `model="auto"` (the default of `labeler app`): at creation the session builds
  the graph candidates' 10-NN graph, reads the same rule on it and, where it fires, writes the
  switch to the harmonic model as one `setting` event before any label
  (`labeler/session/model_selection.py`, `first_switch`; tests/test_first_model_session.py
  checks that the app and `labeler simulate` make the same choice, for the same reason, on
  moons, spheres, circles and digits). The demo's two moons start on the harmonic model.
- Second half, as it fell: the rule fires on circles (every seed, lambda_2 0.0009-0.0024) and
  magic-imbalanced (seeds 0, 2, 3: lambda_2 0.018-0.0196; 0.0200-0.0206 on seeds 1, 4):
  circles 98.7 -> 100.0 AUBC, 73.4 -> 99.9 % at 10 labels (target now met); magic-imbalanced
  -0.12 AUBC on the mean (-0.2 on the seeds where it fires), +0.1 at 10 labels. Silent on the
  other six (lambda_c 0.025-0.10, or 24 components). Harmonic first everywhere
  (`auto-graph-first`, not adopted) on the second half, for the record: digits-3v8 +0.22 /
  +5.2, mnist-10 +2.14 / -6.4, noisy-4 -1.10 / -9.8, wine +0.19, text-stdlib +0.08, blobs-24
  -0.11 (`--half second --gates auto-graph-first`).
- `auto-vopt-cold` (the picks instead of the model: the graph's VOpt, docs/algorithms.md §20,
  picks the first 10 labels on every pool, RLS answering; `core.coldstart.COLD_START_KIND =
  "vopt"`), first half, 5 seeds, against `default-r6`: -0.38 AUBC on the mean, +0.9 at 10
  labels; breast-cancer **-2.99**, digits-10 -1.65 (-9.8 at 10 labels: VOpt's picks miss
  classes TypiClust finds), spheres -0.47, text-scientific -0.26; ahead on mnist-4v9 +1.09,
  moons +0.35, moons-imbalanced +0.28, noisy-blobs +0.21 (`--half first --gates
  auto-vopt-cold`): **not adopted**. The sign test's threshold (the evidence to switch) was not
  varied this round: the misses are at 10 labels, where no switch is allowed.
- Still short of the targets after it: digits-3v8 at 10 labels (93.9 against 99.8: its
  lambda_2, 0.025, is above the threshold), mnist-10 (AUBC -2.5, -8.8 at 10 labels, 5 seeds
  now), noisy-4 (-3.6, -8.1), blobs-24 at 10 labels (-2.5 against ProbCover's picks with
  Laplace learning, a cell filled this round).

`default` below is what `labeler simulate FILE` does with no options (`run_default`: the model
chosen by leave-one-out, answered first by the harmonic function where the pool's graph splits
into its classes (round 7) and by RLS elsewhere, TypiClust for the first 10 labels on pools of
3 classes or more, one label per pool cluster first while the labels agree with the clusters);
`default-r6` is round 6's default (RLS answers first everywhere);
`rls-default` is RLS alone with the settings of rounds 1-3 (standardise "auto", "balanced",
width moves anywhere on the pool's grid, at or below the cluster width while the labels agree
with the clusters, expected risk for 10 labels then margin); `auto-model` is round 4's default.
Where a rule is silent its runs are the base's (same settings: identical rows, checked on wine
and spheres by rerunning, and on digits-10, iris, breast-cancer and mnist-4v9 seed 0 for the
`auto-model` rows taken over from `benchmarks/results/auto_model`).

## Graph-kernel RLS

The fifth candidate issue 20 §2 names: kernel RLS whose kernel is the spectral graph kernel of
the kNN graph the graph models use (the Gaussian field `1 / (lambda_i + 0.01)` on the 100
smallest eigenpairs of the normalised Laplacian, the kernel of `--posterior spectral`;
docs/algorithms.md §18). ARLS and its leave-one-out stay exact on it (a factor of rank 100,
§8); its lam is re-tuned by leave-one-out on the factor (§17), its class weights are the
default's. Method `auto-graph-rls`: the default (`default`) with it added to the candidates
(`labeler/experiments/model_select_simulate.py`, `graph_rls_candidate`), paired per seed with
`default`. Reproduce:

```
python benchmarks/defaults.py --half first --methods auto-graph-rls --seeds 5
python benchmarks/defaults.py --half second --methods auto-graph-rls --seeds 3
python -c "import benchmarks.defaults as b; print(b.candidates_table(list(b.FIRST_HALF), base='default-r6', cands=['auto-graph-rls'])); print(b.candidates_table(list(b.SECOND_HALF), base='default-r6', cands=['auto-graph-rls']))"
```

First half (5 seeds), paired AUBC difference against `default` (points):

| task | auto-graph-rls | seeds |
|---|---|---|
| digits-10 | -0.1 | +0.2, -0.3, -0.6, +0.3, +0.1 |
| iris | -0.2 | -0.8, 0, 0, 0, 0 |
| breast-cancer | 0.0 | identical runs |
| mnist-4v9 | -0.2 | 0.0, +0.1, +0.1, -0.7, -0.6 |
| spheres | -0.2 | 0, -1.0, 0, 0, 0 |
| moons | 0.0 | identical runs |
| moons-imbalanced | 0.0 | identical runs |
| noisy-blobs | -0.2 | 0, 0, -1.1, 0, 0 |
| text-scientific | 0.0 | identical runs |
| **mean over tasks** | **-0.10** | |

**Not adopted**: behind on the mean (-0.10), no task ahead, none more than 1 point behind
(mnist-4v9 -0.24). `AUTO_CANDIDATES` (labeler/session/model_selection.py) stays RLS, harmonic,
LGC and Poisson learning; graph-kernel RLS stays an optional candidate of the simulation
(`simulate_auto_model(..., candidates=(..., "graph-rls"))`). Where it took part it did harm
(the switches with and without it: `python benchmarks/graph_rls_cost.py --switches iris:0
spheres:1 digits-10:1`):

- on four of the nine tasks it never wins the sign test: the runs are identical; where it does,
  it takes over from the model that would have answered anyway and answers no better:
  digits-10 seed 1, Poisson learning -> graph-kernel RLS at 32 labels (without it: Poisson ->
  harmonic at 60); iris seed 0, RLS -> graph-kernel RLS at 60 labels (p = 0.088; without it no
  switch);
- spheres seed 1: RLS -> graph-kernel RLS at 13 labels (p = 0.050) and back to RLS at 17
  (p = 0.042): a flip-flop on 13-17 labels, exactly the noise the sign test is there to keep
  out, and without it harmonic takes over at 50. A fifth candidate is one more challenger per
  evaluation, so one more chance of a switch on noise; it brings no model the four others
  lack: with lam -> 0 on every eigenvector it is the harmonic function (§9), and the truncation
  to 100 eigenvectors and the noise term were not worth a switch on any of these tasks.

Second half, as it fell (3 seeds, paired with `default` on the same seeds; mnist-10 not
measured: its seed-0 run was stopped at the grid's 600 s limit on a machine at load 40, and the
other seeds were not run): digits-3v8, wine, circles, magic-imbalanced, noisy-4 and
text-stdlib 0.0 (identical or within 0.01), blobs-24 **-0.6** (seeds -1.1, -0.6, 0.0): mean
-0.08 over 7 tasks. The second half agrees: nothing gained, blobs-24 lost.

Cost (`python benchmarks/graph_rls_cost.py`, two-moons, 10-NN graph; one run per row at load
39-49 on the 2-core machine, so only the ratios mean anything): the candidate's eigenpairs are
computed once per run (2.6 s at n = 1,000, 44 s at 5,000, 382 s at 20,000 under that load),
then one evaluation of it (the labels in one block and its exact LOO) takes 0.015-0.3 s,
against 0.5-541 s for the harmonic function's refit and LOO solves at the same n and labels
(50 and 200). Its per-label cost is negligible beside the graph models'; the eigenpairs are the
price, which is why a session would have to build them once in the background (as the spectral
posterior's factor, kept in the session cache), never on a key press. Not built, as it is not
adopted: the session's candidates come from `labeler.session.graphs.MODELS`, which has no
graph-kernel RLS model.
"""


CLASS_WEIGHTS = """## Class weights (issue 20 §4)

The default weighting is "balanced" (`w_y = n_L / (T n_y)` from the label counts,
core/learner/weighting.py). The candidate measured this round is `auto-evident`: the default
(`run_default`: model chosen by LOO, TypiClust cold start on 3+ classes) with the weighting
"evident" (every weight 1 until a chi-square test of the label counts rejects equal classes at
p < 0.01, then "balanced"), paired per seed with `default`:

```
python benchmarks/defaults.py --half first --methods auto-evident --seeds 5
python benchmarks/evident_weights.py --seeds 3              # seed 002 §4.3.2, ARLS, fixed kernels
python benchmarks/evident_weights.py --stopping --seeds 3   # tests/test_stopping.py's MAGIC check
```

First half, 5 seeds, AUBC points against `default`: digits-10 -0.40
(seeds +0.4, +1.0, -2.2, -0.4, -0.9), iris +0.11, breast-cancer -0.20, mnist-4v9 **+2.09**
(every seed ahead, +0.3 to +3.1; 82.8 % against 70.0 % at 10 labels), spheres +0.37, moons
+0.17, moons-imbalanced -0.10, noisy-blobs -0.25, text-scientific +0.52: mean **+0.26**, no
task below -1. Spheres reach 100 % for good from 57, 60, 60, 59 and 61 labels (60 spheres:
the cluster target, 62, on 5 of 5 seeds) against 63, 62, 63, 62, 63 for `default`. So the rule
passes the benchmark's criterion, narrowly.

The checks outside the benchmark overrule it; **not adopted**, "balanced" stays the default:

- MAGIC's stopping check (ARLS, the app's settings, 150 labels; balanced error in %):

  | weighting | seed | "likely enough" at | error there | least error | @30 | @50 | @100 | @150 | check |
  |---|---|---|---|---|---|---|---|---|---|
  | balanced | 0 | never | - | 27.1 | 36.1 | 31.9 | 28.6 | 27.6 | pass |
  | balanced | 1 | never | - | 25.9 | 37.3 | 34.4 | 33.3 | 26.0 | pass |
  | balanced | 2 | never | - | 26.9 | 35.2 | 32.9 | 30.3 | 27.1 | pass |
  | evident | 0 | never | - | 21.2 | 29.8 | 28.4 | 26.3 | 21.6 | pass |
  | evident | 1 | 31-35 labels | 35.8-36.0 | 23.8 | 36.0 | 36.4 | 25.7 | 24.0 | FAIL |
  | evident | 2 | never | - | 25.8 | 29.6 | 29.6 | 27.3 | 26.0 | pass |

  "evident" learns MAGIC better (least error 21.2 / 23.8 / 25.8 against 27.1 / 25.9 / 26.9)
  but on seed 1, the test's seed, the signal says "likely enough" at 31-35 labels with 36 %
  error. The weights are not what misleads it there: expected risk keeps the label counts near
  1 : 1 under either weighting (14 : 17 at 31 labels, far from evident imbalance), so
  "balanced" would weigh the classes 1.11 and 0.91 only. The signal now asks, under "evident",
  that the predictions also hold with the weights "balanced" would give
  (`labeler.session.stopping.reweighted_codes`, kappa >= 0.99; the runs above have it): they
  do hold there, so it does not catch this. The error of that run is flat (36.0 % at 30
  labels, 35.8-36.0 where the signal speaks, 36.4 % at 50) and the predictions stop changing
  on the flat stretch; under "balanced" the same seed is as flat (37.3, 34.4 and 33.3 % at 30,
  50 and 100 labels) and its predictions happen to keep moving: a weakness of the stopping
  rule on a plateau, which this round leaves to the stopping work.
  Option (b) of the issue (weights from the predicted pool proportions) was not built: with the
  labels near 1 : 1, a rule that only turns "balanced" on changes nothing on this run either.
- Seed 002 §4.3.2 (ARLS, the thesis's kernels; balanced accuracy in %, 3 seeds): imbalanced
  circles (100 : 1) at 10 labels **50.0 with "evident" against 100.0 with "balanced"** (the
  first minority label, 9 : 1, is not yet evident at p < 0.01, so it carries weight 1 against
  nine), level from 25 labels on (99.6 / 99.2, then 100); MAGIC 10 : 1: "evident" ahead at
  every count (53.3 / 56.2 / 56.4 / 62.2 / 64.8 against 50.0 / 49.9 / 54.6 / 60.4 / 63.8 at
  10 / 25 / 50 / 100 / 150 labels; 44.0 against 39.7 minority labels).
- Second half, as it fell (`--tasks magic-imbalanced,circles,wine,digits-3v8,blobs-24,noisy-4
  --methods auto-evident`, stopped at the deadline; paired with `default`, seeds as run):
  magic-imbalanced **-1.15** (5 seeds: +2.2, -1.4, -2.4, -2.2, -1.9), circles +0.94 (3: +0.8,
  +2.3, -0.3), wine -0.22 (3), blobs-24 -0.38 (3; 100 % from 24, 24, 77 labels against 24,
  23, 66), digits-3v8 0.0 (3), noisy-4 +1.50 (2: +5.6, -2.6), text-stdlib -2.77 (1 seed).
  The benchmark's imbalanced task of the second half is worse with "evident", which the
  issue rules out.
"""


def _is_peer(method) -> bool:
    return method.startswith(("gl-", "sk-"))


def targets_table(tasks, out=RESULTS, budget=BUDGET, name="default") -> str:
    """Issue 20's targets per task: the default against the best peer (AUBC within 0.5 points)
    and against the best peer at 10 labels (within 2 points); mean ± sd over seeds (n)."""
    head = ("| task | default: seeds | AUBC | @10 | @25 | @50 | @100 | best peer (seeds) | its AUBC | gap | "
            "best peer @10 | gap @10 | target |")
    lines = [head, "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    misses = []
    for task in tasks:
        rows = {r["method"]: r for r in summarise(task, out, budget)}
        if name not in rows:
            lines.append(f"| {task} | - | | | | | | | | | | | no default rows |")
            continue
        d = rows[name]
        peers = [r for m, r in rows.items() if _is_peer(m) and np.isfinite(r["aubc"][0])]
        best = max(peers, key=lambda r: r["aubc"][0]) if peers else None
        best10 = max(peers, key=lambda r: np.nan_to_num(r[10][0], nan=-1)) if peers else None
        gap = 100 * (d["aubc"][0] - best["aubc"][0]) if best else float("nan")
        gap10 = 100 * (d[10][0] - best10[10][0]) if best10 else float("nan")
        why = []
        if gap < -0.5:
            why.append(f"AUBC {gap:+.1f}")
        if gap10 < -2.0:
            why.append(f"@10 {gap10:+.1f}")
        verdict = "met" if best and not why else ("no peer" if not best else "**missed** (" + ", ".join(why) + ")")
        if why:
            misses.append(f"{task} ({', '.join(why)})")
        lines.append(
            f"| {task} | {d['seeds']} | {_pm(d['aubc'])} | " + " | ".join(_pm(d[c]) for c in CHECKPOINTS) + " | "
            + (f"{best['method']} ({best['seeds']}) | {_pm(best['aubc'])} | {gap:+.1f} | "
               f"{best10['method']} {_pm(best10[10])} | {gap10:+.1f} | " if best else "- | - | - | - | - | ")
            + verdict + " |")
    lines += ["", "Where the default misses a target: " + ("; ".join(misses) if misses else "nowhere") + "."]
    return "\n".join(lines)


def cluster_targets(out=RESULTS) -> str:
    """The cluster target (100 % from one query per cluster + 2 labels on, with the defaults) per
    seed, and two-moons at 25 labels (>= 99 %)."""
    lines = []
    for task, clusters in (("spheres", 60), ("blobs-24", 24)):
        for m in ("default", "auto-cover", "auto-cover-model", "gl-vopt/laplace", "sk-typiclust/laplace"):
            got = labels_to_perfect(task, m, out)
            if got:
                met = sum(1 for v in got if v is not None and v <= clusters + 2)
                lines.append(f"- {task} ({clusters} clusters, target {clusters + 2} labels), {m}: 100 % from "
                             f"{got} labels; target met on {met} of {len(got)} seeds")
    moons = [acc[lab == 25][0] for lab, acc in curves("moons", out).get("default", {}).values() if (lab == 25).any()]
    if moons:
        lines.append(f"- moons, default at 25 labels: {', '.join(f'{100 * v:.1f}' for v in moons)} % "
                     f"(least {100 * min(moons):.1f}; target >= 99 %)")
    return "\n".join(lines)


def report(tasks, out=RESULTS, doc=DOC, command="", budget=BUDGET, extras=True, keep_cold_start=False) -> str:
    parts = [f"AUBC = mean accuracy on the unlabelled pool over {AUBC_FROM} -> {budget} labels (trapezoids); "
             "accuracy at 10 / 25 / 50 / 100 labels; mean ± sd over seeds, in %.", ""]
    verdicts = []
    for task in tasks:
        rows = summarise(task, out, budget)
        if not rows:
            continue
        if task == (FIRST_HALF[0] if task in FIRST_HALF else SECOND_HALF[0]) or task == tasks[0]:
            half = "First half" if task in FIRST_HALF else "Second half" if task in SECOND_HALF else "Tasks"
            if f"## {half}" not in parts:
                parts += [f"## {half}", "", f"Tables: `{command}`; runs: `python benchmarks/defaults.py --half "
                          f"{'first' if half == 'First half' else 'second'} --methods METHOD` (resumable).", ""]
        parts += [format_task(task, rows), ""]
        v = verdict(task, rows)
        if v:
            verdicts.append("- " + v)
    fails = sorted(r for r in failed_runs(out) if r[0] in tasks)
    if fails:
        verdicts.append("")
        verdicts.append("Runs stopped (failed.csv): " + "; ".join(f"{t} seed {s} {k}" for t, s, k in fails))
    text = "\n".join(parts + ["### Where the default stands", ""] + verdicts) + "\n"
    second = [t for t in tasks if t in SECOND_HALF]
    if extras and second:
        text = ("## Second half against the targets (issue 20)\n\n"
                f"```\n{command}\n```\n\n"
                "Peers: GraphLearning's VOpt (Laplace / Poisson learning predicting), scikit-activeml's "
                "TypiClust and ProbCover (their picks scored by Laplace learning and by fixed RLS). Targets: "
                "default AUBC >= the best peer's - 0.5 points; at 10 labels within 2 points of the best peer "
                "there (mean of the seeds; a peer's seeds in brackets).\n\n"
                + targets_table(second, out, budget) + "\n\n" + cluster_targets(out) + "\n\n") + text
    if extras:
        first = [t for t in tasks if t in FIRST_HALF]
        text += f"\n### Candidate rules (first half)\n\nTables: `{command}`.\n"
        for base in dict.fromkeys(["before"] + list(CANDIDATE_BASE.values())):
            text += "\n" + candidates_table(first, out, budget, base) + "\n"
        text += "\n" + accuracy_at_table(first, ("std-auto", "cold-typiclust", "width-pool", "pool-cold5",
                                                  "pool-cold10", "rls-default", "default-r6", "default", "auto-cold-multi",
                                                  "auto-graph-vopt", "auto-graph-first", "auto-vopt-cold"), out) + "\n"
        for cand in ROUND7:
            if any(cand in curves(t, out) for t in first):
                text += (f"\n`python benchmarks/defaults.py --half first --gates {cand}`:\n\n"
                         + gate_table(first, cand, "default-r6", out, budget) + "\n")
        cluster = [t for t in tasks if TASKS.get(t, ("",))[0] == "clusters"]
        for t in cluster:
            text += f"\nLabels from which {t} stays at 100 % (per seed; 60 spheres / 24 blobs): " + "; ".join(
                f"{m} {labels_to_perfect(t, m, out)}" for m in ("before", "shipped", "std-auto", "width-pool",
                                                                "pool-evident", "rls-default", "default-r6", "default",
                                                                "auto-graph-first",
                                                                "auto-cold-multi", "auto-evident", "fixed-auto")
                if labels_to_perfect(t, m, out)) + "\n"
        if keep_cold_start and "### Cold start" in (old := (Path(doc).read_text(encoding="utf-8") if doc and
                                                         Path(doc).exists() else "")):
            kept = old.split("### Cold start", 1)[1].split("\n<!--", 1)[0].split("\n## ", 1)[0].strip()
            marker = "(kept from the previous report, `--keep-cold-start`)"
            while kept.startswith(marker):  # a report kept again says so once
                kept = kept.removeprefix(marker).strip()
            text += f"\n### Cold start\n\n{marker}\n\n" + kept + "\n"
        else:
            text += "\n### Cold start\n\n" + cold_start(tasks, out) + "\n"
    if doc is not None:
        Path(doc).parent.mkdir(parents=True, exist_ok=True)
        Path(doc).write_text(
            "# The defaults on tasks nobody tuned for\n\n"
            "Produced by `benchmarks/defaults.py` (issue 20 §1); reproduce with\n\n"
            f"```\n{command}\n```\n\n"
            f"First half (rules are chosen here): {', '.join(FIRST_HALF)}.\n"
            f"Second half (reported as it falls): {', '.join(SECOND_HALF)}.\n\n" + DECISIONS + "\n" + CLASS_WEIGHTS
            + "\n" + text
            + _kept_section(doc))
    return text


#: A section of docs/defaults.md written by benchmarks/auto_model.py, kept when this report rewrites the file.
KEPT_BEGIN, KEPT_END = "<!-- auto-model -->", "<!-- /auto-model -->"


def _kept_section(doc) -> str:
    try:
        old = Path(doc).read_text(encoding="utf-8")
    except OSError:
        return ""
    start, end = old.find(KEPT_BEGIN), old.find(KEPT_END)
    return "\n" + old[start:end + len(KEPT_END)] + "\n" if 0 <= start < end else ""


# --------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--half", choices=("first", "second", "all"), default="first")
    ap.add_argument("--tasks", help="comma-separated task names (overrides --half)")
    ap.add_argument("--methods", help="comma-separated run keys (default: every method and peer)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--budget", type=int, default=BUDGET)
    ap.add_argument("--out", default=str(RESULTS))
    ap.add_argument("--report", action="store_true", help="print the tables and write docs/defaults.md")
    ap.add_argument("--doc", default=str(DOC))
    ap.add_argument("--keep-cold-start", action="store_true", help="with --report: keep the doc's cold-start "
                    "table instead of recomputing it (it fits two models per task and seed)")
    ap.add_argument("--forget", help="comma-separated method names whose stored rows of the chosen tasks are "
                    "stale (the code they measured changed): drop them, then run")
    ap.add_argument("--quick", action="store_true", help="two tiny tasks, 1 seed, 20 labels, two methods")
    ap.add_argument("--time-limit", type=int, help="seconds one run may take before it is stopped and marked failed "
                    f"(default {RUN_SECONDS}; mnist-10 {RUN_SECONDS_BY_TASK['mnist-10']})")
    ap.add_argument("--gates", help="comma-separated candidates: print each against the default where a prior "
                    "rule from the pool fires (GATES), on --tasks / --half")
    ap.add_argument("--dedupe", action="store_true", help="drop repeated rows (same task, seed, method, labels; "
                    "the first kept) from the chosen tasks' result files, then stop")
    ap.add_argument("--score-picks", help="comma-separated stored methods: print their first picks on --tasks "
                    "scored by Poisson / Laplace learning and fixed RLS (picks against model)")
    args = ap.parse_args(argv)
    if args.quick:
        tasks, seeds, keys, budget = list(QUICK_TASKS), [0], list(QUICK_RUNS), 20
    else:
        tasks = (args.tasks.split(",") if args.tasks else
                 list(FIRST_HALF) if args.half == "first" else list(SECOND_HALF) if args.half == "second"
                 else list(FIRST_HALF) + list(SECOND_HALF))
        seeds, budget = list(range(args.seeds)), args.budget
        keys = args.methods.split(",") if args.methods else list(RUNS) + list(CANDIDATES)
    unknown = [t for t in tasks if t not in TASKS and t not in QUICK_TASKS]
    bad = [k for k in keys if k not in RUNS and k not in CANDIDATES]
    if unknown or bad:
        ap.error(f"unknown task(s) {unknown} / method(s) {bad}; tasks: {', '.join(TASKS)}; "
                 f"methods: {', '.join(list(RUNS) + list(CANDIDATES))}")
    if args.forget:
        for task in tasks:
            dropped = forget_rows(task, set(args.forget.split(",")), args.out)
            print(f"{task}: {dropped} stale rows of {args.forget} dropped", file=sys.stderr)
    if args.gates:
        for cand in args.gates.split(","):
            print(gate_table(tasks, cand, "default-r6", args.out, budget) + "\n")
        return 0
    if args.dedupe:
        for task in tasks:
            print(f"{task}: {dedupe_rows(task, args.out)} repeated rows dropped", file=sys.stderr)
        return 0
    if args.score_picks:
        for task in tasks:
            print(score_picks(task, tuple(args.score_picks.split(",")), out=args.out) + "\n")
        return 0
    if args.report:
        cmd = "python benchmarks/defaults.py " + " ".join(a for a in (argv if argv is not None else sys.argv[1:]))
        print(report(tasks, args.out, args.doc, cmd.strip(), budget, extras=not args.quick,
                     keep_cold_start=args.keep_cold_start))
        return 0
    run_grid(tasks, seeds, keys, budget, args.out, time_limit=args.time_limit)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
