"""labeler.experiments.simulate against a slow loop written with the learner API and direct solves."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.spatial.distance import pdist
from sklearn.metrics import balanced_accuracy_score

from arls_oracle import brute_force_expected_risk, direct_solve
from core.learner import ActiveRLS
from labeler.data import Dataset
from core.kernels import Kernel
from core.criteria.risk import estimated_risk, target_codes
from core.rls.tuning import LooTuningWarning
from core.rls import WeightedRLSClassifier
from labeler.experiments.simulate import (
    CURVE_COLUMNS,
    DEFAULT_LAM,
    balanced_accuracy,
    prepare_features,
    resolve_lam,
    simulate,
)
from core.strategies import TIE_RTOL

KERNEL = Kernel("rbf", width=0.8)


def make_dataset(n=90, n_val=60, n_classes=2, seed=0, labels=None, imbalance=False) -> Dataset:
    """Gaussian blobs, one per class, with a validation set of the same construction."""
    rng = np.random.default_rng(seed)
    centres = 2.0 * rng.standard_normal((n_classes, 2))

    def draw(m):
        if imbalance:
            p = np.r_[0.85, np.full(n_classes - 1, 0.15 / (n_classes - 1))]
            y = rng.choice(n_classes, size=m, p=p)
        else:
            y = rng.integers(n_classes, size=m)
        return centres[y] + 0.9 * rng.standard_normal((m, 2)), y

    X, y = draw(n)
    X_val, y_val = draw(n_val)
    if labels is not None:
        y, y_val = np.asarray(labels)[y], np.asarray(labels)[y_val]
    classes = sorted(np.unique(y).tolist())
    return Dataset(name="blobs", X=X, y=y, classes=classes, feature_names=["a", "b"], ids=np.arange(n),
                   layout=X, images=None, image_paths=None, frame=None, X_val=X_val, y_val=y_val)


def direct_outputs(X, X_eval, labels: dict, classes: list, lam: float, weights: np.ndarray, kernel):
    """f(X_eval) = k(X_eval, X_L) (K_LL + Lambda)^-1 Y_L by a direct solve (docs/algorithms.md §3)."""
    T = 1 if len(classes) == 2 else len(classes)
    L = np.array(list(labels), dtype=int)
    if L.size == 0:
        return np.zeros((X_eval.shape[0], T))
    cls = np.array([classes.index(labels[j]) for j in L])
    Y = target_codes(T, len(classes))[cls]
    A = kernel(X[L]) + np.diag(lam / weights[cls])
    return kernel(X_eval, X[L]) @ np.linalg.solve(A, Y)


def oracle_weights(labels: dict, classes: list, weighting) -> np.ndarray:
    if isinstance(weighting, dict):
        return np.array([weighting.get(c, 1.0) for c in classes])
    if weighting == "none" or not labels:
        return np.ones(len(classes))
    n_l = len(labels)
    counts = np.array([sum(v == c for v in labels.values()) for c in classes])
    return n_l / (len(classes) * np.maximum(counts, 1))


def predict_from(F: np.ndarray, classes: list) -> np.ndarray:
    idx = (F[:, 0] > 0).astype(int) if F.shape[1] == 1 else np.argmax(F, axis=1)
    return np.asarray(classes)[idx]


def oracle_pick(strategy, K, labels: dict, classes: list, lam, weighting, rng) -> int:
    """The next query without the learner: scores from direct solves / brute-force refits.

    ``arls``: expected risk by refitting RLS per candidate and label
    (:func:`arls_oracle.brute_force_expected_risk`); ``margin``: ``|f|`` or the gap between
    the two largest outputs of the direct solve; ``random``: all tied. Ties are broken as
    :func:`core.strategies.query_one` documents it (uniformly, one draw of ``rng``).
    """
    n = K.shape[0]
    w = oracle_weights(labels, classes, weighting)
    if strategy == "arls":
        s = brute_force_expected_risk(K, labels, classes, lam, w)
    elif strategy == "margin":
        F, _ = direct_solve(K, labels, classes, lam, w)
        s = np.abs(F[:, 0]) if F.shape[1] == 1 else np.diff(np.sort(F, axis=1)[:, -2:], axis=1)[:, 0]
    else:
        s = np.zeros(n)
    unl = np.array([i for i in range(n) if i not in labels])
    s = s[unl]
    tied = unl[s <= s.min() + TIE_RTOL * abs(s.min())]
    return int(tied[rng.integers(tied.size)]) if tied.size > 1 else int(tied[0])


def slow_simulation(ds, strategy, budget, seed, kernel, lam, weighting, use_val, initial=0):
    """The loop written out with no learner: oracle picks, direct solves for every metric."""
    rng = np.random.default_rng(seed)
    n = len(ds.y)
    K = kernel(ds.X)
    init = rng.choice(n, size=initial, replace=False) if initial else np.zeros(0, dtype=int)
    labels = {int(i): ds.y[i].item() for i in init}
    rows = []
    for step in range(1, budget + 1):
        i = oracle_pick(strategy, K, labels, ds.classes, lam, weighting, rng)
        labels[i] = ds.y[i].item()
        w = oracle_weights(labels, ds.classes, weighting)
        F_pool = direct_outputs(ds.X, ds.X, labels, ds.classes, lam, w, kernel)
        if use_val:
            truth = ds.y_val
            pred = predict_from(direct_outputs(ds.X, ds.X_val, labels, ds.classes, lam, w, kernel), ds.classes)
        else:
            rest = np.ones(n, dtype=bool)
            rest[list(labels)] = False
            truth, pred = ds.y[rest], predict_from(F_pool, ds.classes)[rest]
        rows.append({
            "step": step, "index": i, "label": ds.y[i], "n_labeled": len(labels),
            "accuracy": np.mean(pred == truth) if truth.size else np.nan,
            "balanced_accuracy": balanced_accuracy_score(truth, pred) if truth.size else np.nan,
            "estimated_risk": estimated_risk(F_pool, w),
        })
    return pd.DataFrame(rows)


def assert_same_curve(fast: pd.DataFrame, slow: pd.DataFrame):
    assert fast["index"].tolist() == slow["index"].tolist()
    assert fast["label"].tolist() == slow["label"].tolist()
    assert fast["step"].tolist() == slow["step"].tolist()
    assert fast["n_labeled"].tolist() == slow["n_labeled"].tolist()
    assert_allclose(fast["accuracy"], slow["accuracy"], atol=1e-12)
    assert_allclose(fast["balanced_accuracy"], slow["balanced_accuracy"], atol=1e-12)
    assert_allclose(fast["estimated_risk"], slow["estimated_risk"], rtol=1e-7, atol=1e-9)


# --------------------------------------------------------------------------- oracle tests
@pytest.mark.parametrize("strategy", ["arls", "margin", "random"])
@pytest.mark.parametrize("use_val", [True, False])
def test_simulate_matches_slow_loop_binary(strategy, use_val):
    ds = make_dataset(n=70, seed=1)
    kwargs = dict(strategy=strategy, budget=25, seed=3, kernel=KERNEL, lam=0.3, weighting="none")
    fast = simulate(ds, X_val=ds.X_val if use_val else None, y_val=ds.y_val if use_val else None, **kwargs)
    slow = slow_simulation(ds, kwargs["strategy"], 25, 3, KERNEL, 0.3, "none", use_val)
    assert_same_curve(fast, slow)


@pytest.mark.parametrize("weighting", ["balanced", {0: 3.0, 1: 0.5}])
def test_simulate_matches_slow_loop_weighted_with_initial_labels(weighting):
    ds = make_dataset(n=60, seed=2, imbalance=True)
    fast = simulate(ds, "arls", budget=15, seed=5, kernel=KERNEL, lam=0.2, weighting=weighting,
                    X_val=ds.X_val, y_val=ds.y_val, initial=6)
    slow = slow_simulation(ds, "arls", 15, 5, KERNEL, 0.2, weighting, True, initial=6)
    assert_same_curve(fast, slow)
    assert fast.attrs["initial_indices"] == np.random.default_rng(5).choice(60, 6, replace=False).tolist()


@pytest.mark.parametrize("strategy", ["arls", "margin"])
def test_simulate_matches_slow_loop_multiclass_string_labels(strategy):
    ds = make_dataset(n=60, n_classes=3, seed=4, labels=["cat", "dog", "emu"])
    fast = simulate(ds, strategy, budget=12, seed=0, kernel=KERNEL, lam=0.2, weighting="balanced",
                    X_val=ds.X_val, y_val=ds.y_val)
    slow = slow_simulation(ds, strategy, 12, 0, KERNEL, 0.2, "balanced", True)
    assert_same_curve(fast, slow)
    assert set(fast["label"]) <= {"cat", "dog", "emu"}


def test_curve_columns_and_bookkeeping():
    ds = make_dataset(n=50, seed=0)
    curve = simulate(ds, "random", budget=20, seed=1, kernel=KERNEL, lam=0.1, initial=4)
    assert tuple(curve.columns) == CURVE_COLUMNS
    assert curve["step"].tolist() == list(range(1, 21))
    assert curve["n_labeled"].tolist() == list(range(5, 25))
    assert curve["index"].is_unique
    assert not set(curve["index"]) & set(curve.attrs["initial_indices"])
    assert (curve["step_seconds"] >= 0).all()
    assert curve["label"].tolist() == ds.y[curve["index"]].tolist()
    assert curve.attrs["evaluation"] == "unlabelled pool"


def test_simulate_is_deterministic_per_seed():
    ds = make_dataset(n=50, seed=0)
    a = simulate(ds, "random", budget=10, seed=7, kernel=KERNEL)
    b = simulate(ds, "random", budget=10, seed=7, kernel=KERNEL)
    c = simulate(ds, "random", budget=10, seed=8, kernel=KERNEL)
    cols = [c_ for c_ in CURVE_COLUMNS if c_ != "step_seconds"]
    pd.testing.assert_frame_equal(a[cols], b[cols])
    assert a["index"].tolist() != c["index"].tolist()


def test_pool_accuracy_is_nan_once_everything_is_labelled():
    ds = make_dataset(n=12, seed=0)
    curve = simulate(ds, "random", budget=12, seed=0, kernel=KERNEL)
    assert np.isnan(curve["accuracy"].iloc[-1]) and np.isnan(curve["balanced_accuracy"].iloc[-1])
    assert np.isfinite(curve["accuracy"].iloc[:-1]).all()


def test_progress_is_called_after_every_query():
    ds = make_dataset(n=30, seed=0)
    calls = []
    simulate(ds, "margin", budget=5, seed=0, kernel=KERNEL, progress=lambda s, b: calls.append((s, b)))
    assert calls == [(k, 5) for k in range(1, 6)]


def test_default_kernel_uses_median_distance():
    ds = make_dataset(n=40, seed=0)
    curve = simulate(ds, "random", budget=3, seed=0)
    assert curve.attrs["width"] == pytest.approx(float(np.median(pdist(ds.X))))


# --------------------------------------------------------------------------- helpers
@pytest.mark.filterwarnings("ignore:y_pred contains classes not in y_true")
def test_balanced_accuracy_matches_sklearn():
    rng = np.random.default_rng(0)
    y = rng.integers(3, size=50)
    p = rng.integers(4, size=50)  # a predicted class absent from y is fine
    assert balanced_accuracy(y, p) == pytest.approx(balanced_accuracy_score(y, p))
    assert np.isnan(balanced_accuracy([], []))


def test_resolve_lam():
    ds = make_dataset(n=60, seed=0)
    assert resolve_lam(0.25, ds.X, ds.y, [], KERNEL) == 0.25
    with pytest.warns(LooTuningWarning, match="Label more points"):  # too few labels
        assert resolve_lam("auto", ds.X, ds.y, [0, 1, 2], KERNEL) == DEFAULT_LAM
    one_class = np.flatnonzero(ds.y == 0)[:12]
    with pytest.warns(LooTuningWarning, match="of at least 2 classes"):
        assert resolve_lam("auto", ds.X, ds.y, one_class, KERNEL) == DEFAULT_LAM
    labeled = np.arange(30)
    expected = WeightedRLSClassifier(kernel="rbf", width=0.8, lam="auto", fit_offset=False).fit(
        ds.X[labeled], ds.y[labeled]).lam_
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # enough labels: no fallback, no warning
        assert resolve_lam("auto", ds.X, ds.y, labeled, KERNEL) == pytest.approx(expected)
    with pytest.raises(ValueError, match="lam"):
        resolve_lam(-1.0, ds.X, ds.y, [], KERNEL)


def brute_force_lam(X, y_l, classes, weights, kernel, n_lams=50):
    """lam="auto" written out: grid from eigenvalues, n refits per lambda by direct solves."""
    T = 1 if len(classes) == 2 else len(classes)
    cls = np.array([classes.index(v) for v in y_l.tolist()])
    Y = target_codes(T, len(classes))[cls]
    a = weights[cls]
    K = kernel(X)
    e = np.linalg.eigvalsh(np.sqrt(a)[:, None] * K * np.sqrt(a)[None, :])
    lams = np.geomspace(e[e > len(a) * np.finfo(float).eps * e[-1]][0], e[-1], n_lams)
    errors = []
    for lam in lams:
        wrong = 0.0
        for i in range(len(a)):
            rest = np.delete(np.arange(len(a)), i)
            c = np.linalg.solve(K[np.ix_(rest, rest)] + np.diag(lam / a[rest]), Y[rest])
            f = K[i, rest] @ c
            pred = int(f[0] > 0) if T == 1 else int(np.argmax(f))
            wrong += a[i] * (pred != cls[i])
        errors.append(wrong / a.sum())
    errors = np.array(errors)
    return float(lams[np.flatnonzero(errors == errors.min())[-1]])  # ties: the largest lambda


@pytest.mark.parametrize(
    "n_classes,classes,weighting",
    [
        (2, None, "balanced"),
        (3, None, "balanced"),
        (3, None, {0: 2.5, 2: 0.4}),
        (2, [0, 1, 2], "balanced"),  # a class without a label still gets its one-vs-all column
    ],
)
def test_auto_lam_is_loo_of_the_model_arls_runs(n_classes, classes, weighting):
    ds = make_dataset(n=80, n_classes=n_classes, seed=7, imbalance=True)
    labeled = np.arange(36)
    classes = ds.classes if classes is None else classes
    learner = ActiveRLS.from_features(ds.X, classes=classes, kernel=KERNEL, weighting=weighting)
    learner.add_many(labeled.tolist(), ds.y[labeled].tolist())
    w = np.array(list(learner.class_weights.values()))  # the weights ARLS runs with
    assert_allclose(w, oracle_weights(learner.labels, classes, weighting), rtol=1e-14)
    got = resolve_lam("auto", ds.X, ds.y, labeled, KERNEL, weighting, classes=classes)
    assert got == pytest.approx(brute_force_lam(ds.X[labeled], ds.y[labeled], classes, w, KERNEL), rel=1e-9)
    if len(classes) == len(ds.classes):  # every class labelled: the estimator tunes the same model
        clf = WeightedRLSClassifier(kernel="rbf", width=KERNEL.width, lam="auto", fit_offset=False,
                                    class_weight=dict(zip(classes, w))).fit(ds.X[labeled], ds.y[labeled])
        assert got == pytest.approx(clf.lam_, rel=1e-12)


def test_auto_lam_is_recorded():
    ds = make_dataset(n=60, seed=0)
    curve = simulate(ds, "random", budget=2, seed=0, kernel=KERNEL, lam="auto", initial=20)
    init = curve.attrs["initial_indices"]
    expected = resolve_lam("auto", ds.X, ds.y, init, KERNEL)
    assert curve.attrs["lam"] == pytest.approx(expected)


def test_prepare_features_standardises_when_asked():
    ds = make_dataset(n=30, seed=0)
    ds.X = ds.X * 100 + 7
    X, X_val = prepare_features(ds, ds.X_val)
    assert_allclose(X, ds.X)  # params has no "standardize": unchanged
    ds.params["standardize"] = True
    X, X_val2 = prepare_features(ds, ds.X_val)
    assert_allclose(X.mean(0), 0, atol=1e-12)
    assert_allclose(X.std(0), 1)
    assert_allclose(X_val2, (ds.X_val - ds.X.mean(0)) / ds.X.std(0))
    with pytest.raises(ValueError, match="feature"):
        prepare_features(ds, np.zeros((3, 5)))


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"budget": 0}, "budget"),
        ({"budget": 2.5}, "budget"),
        ({"budget": 100}, "budget"),
        ({"initial": -1}, "initial"),
        ({"initial": 25, "budget": 10}, "budget"),
        ({"strategy": "greedy"}, "strategy"),
        ({"lam": 0}, "lam"),
        ({"lam": "often"}, "lam"),
        ({"seed": 1.5}, "seed"),
        ({"X_val": np.zeros((3, 2))}, "y_val"),
        ({"X_val": np.zeros((3, 3)), "y_val": np.zeros(3)}, "feature"),
        ({"X_val": np.zeros((3, 2)), "y_val": np.zeros(2)}, "y_val"),
        ({"X_val": np.zeros((3, 2)), "y_val": np.array([0, 1, 7])}, "classes"),
        ({"weighting": "heavy"}, "weighting"),
    ],
)
def test_bad_input_raises_a_clear_error(kwargs, match):
    ds = make_dataset(n=30, seed=0)
    args = {"strategy": "random", "budget": 5, "seed": 0, "kernel": KERNEL, **kwargs}
    with pytest.raises(ValueError, match=match):
        simulate(ds, **args)


def test_unlabelled_data_has_no_oracle():
    ds = make_dataset(n=10, seed=0)
    ds.y = None
    with pytest.raises(ValueError, match="no true labels"):
        simulate(ds, "random", budget=2, kernel=KERNEL)


# --------------------------------------------------------------------------- one count check
@pytest.mark.parametrize("value", [True, 2.5, "3", np.float64(4.0)])
def test_counts_are_checked_by_one_validator_everywhere(value):
    # core.validation.check_count: the simulation's budget / initial and the loaders' n / n_val.
    from core.validation import check_count
    from labeler.data import DatasetError, load_dataset

    with pytest.raises(ValueError, match=r"^k must be an integer >= 1; got "):
        check_count("k", value, 1)
    ds = make_dataset(n=20, seed=0)
    with pytest.raises(ValueError, match=r"^budget must be an integer >= 1; got "):
        simulate(ds, "random", budget=value, kernel=KERNEL, lam=0.1)
    with pytest.raises(DatasetError, match=r"^n_val must be an integer >= 2; got "):
        load_dataset("moons", n_val=value)
    with pytest.raises(DatasetError, match=r"^n must be an integer >= 2; got "):
        load_dataset("moons", n=value)


def test_check_count_accepts_numpy_integers_and_returns_int():
    from core.validation import check_count

    got = check_count("k", np.int64(3), 1)
    assert got == 3 and type(got) is int
    with pytest.raises(ValueError, match="k must be an integer >= 4; got 3"):
        check_count("k", 3, 4)
