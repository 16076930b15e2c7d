"""The one LOO tuner (core/loo_tuning.py) against brute-force refits."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from core.learner import ActiveRLS
from core.kernels import Kernel
from core.rls.tuning import (
    DEFAULT_LAM,
    MIN_LOO_LABELS,
    LooTuningWarning,
    loo_readiness,
    tune_lam_width,
)
from core.criteria.risk import target_codes


def blobs(n, n_classes, seed):
    rng = np.random.default_rng(seed)
    centres = 1.5 * rng.standard_normal((n_classes, 2))
    y = np.arange(n) % n_classes
    return centres[y] + rng.standard_normal((n, 2)), y


def brute_force(X, y, classes, weights, kernel, lams):
    """Weighted LOO classification and squared errors by n refits per lambda (direct solves):
    f_-i(x_i) = K_i,rest (K_rest,rest + lam diag(1/w_rest))^-1 Y_rest (docs/algorithms.md §1 last line)."""
    T = 1 if len(classes) == 2 else len(classes)
    cls = np.array([classes.index(v) for v in y])
    Y = target_codes(T, len(classes))[cls]
    a = np.asarray(weights, dtype=float)[cls]
    K = kernel(X)
    n = len(y)
    cl, sq = [], []
    for lam in lams:
        wrong = err2 = 0.0
        for i in range(n):
            rest = np.delete(np.arange(n), i)
            c = np.linalg.solve(K[np.ix_(rest, rest)] + np.diag(lam / a[rest]), Y[rest])
            f = K[i, rest] @ c
            pred = int(f[0] > 0) if T == 1 else int(np.argmax(f))
            wrong += a[i] * (pred != cls[i])
            err2 += a[i] * np.sum((Y[i] - f) ** 2)
        cl.append(wrong / a.sum())
        sq.append(err2 / (a.sum() * T))
    return np.array(cl), np.array(sq)


@pytest.mark.parametrize(
    "n_classes,classes,weights",
    [
        (2, [0, 1], [1.0, 1.0]),
        (2, [0, 1], [0.6, 2.5]),
        (3, [0, 1, 2], [1.0, 0.5, 3.0]),
        (2, [0, 1, 2], [1.0, 2.0, 1.0]),  # an unlabelled class keeps its one-vs-all column
    ],
)
def test_loo_errors_match_brute_force_refits(n_classes, classes, weights):
    X, y = blobs(14, n_classes, seed=n_classes)
    kernel = Kernel("rbf", width=1.3)
    lams = np.geomspace(1e-3, 10.0, 7)
    got = tune_lam_width(X, y, classes, dict(zip(classes, weights)), kernel=kernel, lams=lams)
    cl, sq = brute_force(X, y.tolist(), classes, weights, kernel, lams)
    assert got.tuned and got.reason == ""
    assert_allclose(got.curve["classification"], cl, rtol=0, atol=1e-12)
    assert_allclose(got.curve["squared"], sq, rtol=1e-9, atol=1e-12)
    best = np.flatnonzero(cl <= cl.min() + 1e-12)[-1]  # ties: the largest lambda
    assert got.lam == lams[best] and got.error == pytest.approx(cl[best], abs=1e-12)
    assert got.width == 1.3


def test_auto_grid_and_ties_go_to_the_largest_lam():
    X, y = blobs(12, 2, seed=4)
    X[y == 1] += 8.0  # separable: every lambda of a wide range classifies all right
    got = tune_lam_width(X, y, [0, 1], {0: 1.0, 1: 1.0}, kernel=Kernel("rbf", width=1.0))
    errors = got.curve["classification"]
    assert errors.size == 50 and np.all(np.diff(got.curve["lam"]) > 0)
    assert got.lam == got.curve["lam"][np.flatnonzero(errors == errors.min())[-1]]


def test_width_grid_picks_the_least_error_each_at_its_lam():
    X, y = blobs(16, 2, seed=2)
    widths = np.array([0.6, 1.0, 2.0, 6.0])  # narrower: f_-i(x_i) ~ 0, a sign of rounding
    lams = np.geomspace(1e-2, 1.0, 5)
    got = tune_lam_width(X, y, [0, 1], [1.0, 1.0], kernel=Kernel("rbf", width=1.0), lams=lams,
                         widths=widths)
    per_width = []
    for s in widths:
        cl, sq = brute_force(X, y.tolist(), [0, 1], [1.0, 1.0], Kernel("rbf", width=s), lams)
        j = np.flatnonzero(cl <= cl.min() + 1e-12)[-1]
        per_width.append((cl[j], sq[j], -s, lams[j]))
    best = min(per_width)
    assert got.width == -best[2] and got.lam == best[3]
    assert_allclose(got.curve["width_classification"], [p[0] for p in per_width], atol=1e-12)


def test_precomputed_kernel_matches_features():
    X, y = blobs(12, 3, seed=1)
    kernel = Kernel("rbf", width=0.9)
    a = tune_lam_width(X, y, [0, 1, 2], [1, 1, 1], kernel=kernel)
    b = tune_lam_width(kernel(X), y, [0, 1, 2], [1, 1, 1], kernel="precomputed")
    assert a.lam == b.lam and b.width is None
    assert_allclose(a.curve["classification"], b.curve["classification"], atol=1e-12)


@pytest.mark.parametrize(
    "labels,match",
    [
        ([], "at least 4 labelled points"),
        (["a", "a", "a", "a", "a"], "of at least 2 classes"),
        (["a", "a", "a", "b"], "at least 2 labels of every labelled class; b has only one"),
    ],
)
def test_too_few_labels_warn_and_return_the_default(labels, match):
    assert MIN_LOO_LABELS == 4
    assert match.split(";")[0] in loo_readiness(labels)
    X = np.arange(2.0 * len(labels)).reshape(-1, 2)
    with pytest.warns(LooTuningWarning, match=match):
        got = tune_lam_width(X, labels, ["a", "b"], {"a": 1.0, "b": 1.0},
                             kernel=Kernel("rbf", width=0.5), default_lam=0.3)
    assert (got.lam, got.width, got.tuned, got.curve) == (0.3, 0.5, False, {})
    assert "Label more points first." in got.reason
    assert loo_readiness(["a", "a", "b", "b"]) == ""
    assert DEFAULT_LAM == 0.1


def test_bad_input_is_named():
    X, y = blobs(8, 2, seed=0)
    k = Kernel("rbf", width=1.0)
    with pytest.raises(ValueError, match="not among the classes"):
        tune_lam_width(X, y + 5, [0, 1], [1, 1], kernel=k)
    with pytest.raises(ValueError, match="lacks class"):
        tune_lam_width(X, y, [0, 1], {0: 1.0}, kernel=k)
    with pytest.raises(ValueError, match="width grid needs an RBF"):
        tune_lam_width(X, y, [0, 1], [1, 1], kernel=Kernel("linear"), widths=[1.0])
    with pytest.raises(ValueError, match="lam"):
        tune_lam_width(X, y, [0, 1], [1, 1], kernel=k, lams=[-1.0])


def test_the_learner_weights_are_the_weights_tuned():
    """'balanced' means the learner's weights: read from ActiveRLS, they tune its own model."""
    X, y = blobs(15, 3, seed=5)
    y[:9] = 0  # imbalanced
    learner = ActiveRLS.from_features(X, classes=[0, 1, 2], kernel=Kernel("rbf", width=1.0), weighting="balanced")
    learner.add_many(list(range(15)), y.tolist())
    w = learner.class_weights
    lams = np.geomspace(1e-2, 1.0, 4)
    got = tune_lam_width(X, y, [0, 1, 2], w, kernel=Kernel("rbf", width=1.0), lams=lams)
    cl, _ = brute_force(X, y.tolist(), [0, 1, 2], [w[c] for c in (0, 1, 2)], Kernel("rbf", width=1.0), lams)
    assert_allclose(got.curve["classification"], cl, atol=1e-12)
