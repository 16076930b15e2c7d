"""LOO re-tunes bounded at any label count (docs/algorithms.md §17).

Oracles: the factor LOO equals the dense LOO of ``Phi Phi^T`` and brute-force refits; the
stratified subsample is deterministic and keeps every class; a bulk label of thousands of one
class never runs a LOO over every label (counted through the shapes the LOO sees).
"""

from __future__ import annotations

import numpy as np
import pytest

import core.rls.tuning as tuning
from core.kernels import Kernel
from core.kernels.factors import NystromKernel
from core.rls.loo import loo_path
from core.rls.tuning import auto_tune, tune_label_cap, tuning_subsample
from loo_spy import count_loo_shapes


def _brute_loo(K, Y, a, lam):
    """LOO residuals by refitting weighted RLS without each point (no offset)."""
    n = K.shape[0]
    res = np.empty_like(Y)
    for i in range(n):
        keep = np.arange(n) != i
        Kk, Ak = K[np.ix_(keep, keep)], a[keep]
        c = np.linalg.solve(Kk * Ak[:, None] + lam * np.eye(n - 1), Ak[:, None] * Y[keep])
        res[i] = Y[i] - K[i, keep] @ c
    return res


@pytest.mark.parametrize("weighted", [False, True])
def test_factor_loo_equals_dense_and_refits(weighted):
    rng = np.random.default_rng(0)
    n, r = 40, 6
    Phi = rng.normal(size=(n, r))
    Y = np.where(rng.random((n, 3)) < 0.5, 1.0, -1.0)
    a = rng.uniform(0.5, 2.0, n) if weighted else np.ones(n)
    lams = np.array([0.01, 0.3, 5.0])
    low = loo_path(None, Y, a, lams, fit_offset=False, features=Phi)
    dense = loo_path(Phi @ Phi.T, Y, a, lams, fit_offset=False)
    np.testing.assert_allclose(low.residuals, dense.residuals, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(low.dual_coef, dense.dual_coef, rtol=1e-8, atol=1e-9)
    np.testing.assert_allclose(low.classification, dense.classification)
    for j, lam in enumerate(lams):
        np.testing.assert_allclose(low.residuals[j], _brute_loo(Phi @ Phi.T, Y, a, lam), rtol=1e-7, atol=1e-8)


def test_factor_loo_with_offset_zero_weights_and_default_grid():
    rng = np.random.default_rng(1)
    n, r = 30, 5
    Phi = rng.normal(size=(n, r))
    Y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    a = rng.uniform(0.5, 2.0, n)
    a[[3, 7]] = 0.0
    low = loo_path(None, Y, a, None, fit_offset=True, n_lams=7, features=Phi)
    dense = loo_path(Phi @ Phi.T, Y, a, None, fit_offset=True, n_lams=7)
    np.testing.assert_allclose(low.lams, dense.lams, rtol=1e-8)
    np.testing.assert_allclose(low.residuals, dense.residuals, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(low.intercept, dense.intercept, rtol=1e-7, atol=1e-8)


def test_loo_path_refuses_both_kernel_and_features():
    Phi = np.eye(4)
    with pytest.raises(ValueError, match="not both"):
        loo_path(Phi, np.ones(4), features=Phi)


def test_subsample_deterministic_stratified_and_ready():
    labels = ["c0"] * 9547 + ["c1"] * 5 + ["c2"] * 3
    a = tuning_subsample(labels, 500, seed=3)
    b = tuning_subsample(labels, 500, seed=3)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, tuning_subsample(labels, 500, seed=4))
    kept = np.asarray(labels, dtype=object)[a]
    assert (kept == "c1").sum() == 5 and (kept == "c2").sum() == 3  # small classes whole
    assert a.size <= 500 + 2 * tuning.MIN_SUBSAMPLE_PER_CLASS
    assert np.all(np.diff(a) > 0)
    assert tuning.loo_readiness(list(kept)) == ""
    np.testing.assert_array_equal(tuning_subsample(labels[:300], 500), np.arange(300))


def test_label_cap_bounds_work():
    assert tune_label_cap(None) == tuning.MAX_TUNE_LABELS
    r = 300
    assert tune_label_cap(r) * r * r <= tuning.MAX_LOWRANK_TUNE_WORK
    assert tune_label_cap(10_000) == tuning.MAX_TUNE_LABELS


def _blobs(m, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 4))
    labels = ["c0"] * m
    for i, c in zip(range(8), ["c1"] * 5 + ["c2"] * 3):
        labels[i] = c
        X[i] += 3.0
    return X, labels


def test_dense_auto_tune_on_one_class_bulk_stays_capped(monkeypatch):
    """The reported case: thousands of one class plus a few of others. Before, the uniform
    subsample lost the small classes and the tuner fell back to every label (O(m^3))."""
    X, labels = _blobs(4000)
    seen = count_loo_shapes(monkeypatch)
    fit = auto_tune(X, labels, ["c0", "c1", "c2"], {"c0": 1.0, "c1": 1.0, "c2": 1.0},
                    kernel=Kernel("rbf", width=1.0), lam=0.1, tune_width=True, tune_lam=True,
                    widths=[0.5, 1.0, 2.0])
    cap = tuning.MAX_TUNE_LABELS + 3 * tuning.MIN_SUBSAMPLE_PER_CLASS
    assert seen and all(kind == "K" and shape[0] <= cap for kind, shape in seen)
    assert fit.n_points <= cap


def test_nystrom_auto_tune_uses_the_factor_on_every_label(monkeypatch):
    X, labels = _blobs(3000, seed=1)
    Z = X[np.random.default_rng(2).choice(X.shape[0], 40, replace=False)]
    kernel = NystromKernel("rbf", 1.0, landmarks=Z)
    seen = count_loo_shapes(monkeypatch)
    fit = auto_tune(X, labels, ["c0", "c1", "c2"], {"c0": 1.0, "c1": 1.0, "c2": 1.0},
                    kernel=kernel, lam=0.1, tune_width=True, tune_lam=True, widths=[0.5, 1.0, 2.0])
    assert fit.n_points == 3000  # exact LOO of the model in use: no subsample below the cap
    assert seen and all(kind == "features" and shape[1] <= 40 for kind, shape in seen)


def test_nystrom_auto_tune_equals_dense_gram_of_the_factor(monkeypatch):
    """The factor path gives the dense path's decisions on the same Gram matrix."""
    X, labels = _blobs(300, seed=3)
    Z = X[:25]
    kernel = NystromKernel("rbf", 1.0, landmarks=Z)
    args = (X, labels, ["c0", "c1", "c2"], {"c0": 1.0, "c1": 1.0, "c2": 1.0})
    low = auto_tune(*args, kernel=kernel, lam=0.1, tune_width=False, tune_lam=True)
    Phi = kernel.features(X)
    monkeypatch.setattr(tuning, "_low_rank_features", lambda kernel, X: None)  # the m x m path
    dense = auto_tune(Phi, labels, ["c0", "c1", "c2"], {"c0": 1.0, "c1": 1.0, "c2": 1.0},
                      kernel=Kernel("linear"), lam=0.1, tune_width=False, tune_lam=True)
    np.testing.assert_allclose(low.lam_errors, dense.lam_errors)
    np.testing.assert_allclose(low.lams, dense.lams, rtol=1e-9)


def test_explicit_tune_is_capped_and_says_it_estimates(monkeypatch):
    X, labels = _blobs(2000, seed=4)
    seen = count_loo_shapes(monkeypatch)
    args = (X, labels, ["c0", "c1", "c2"], {"c0": 1.0, "c1": 1.0, "c2": 1.0})
    fit = tuning.tune_lam_width(*args, kernel=Kernel("rbf", width=1.0), lams=[0.01, 0.1, 1.0], seed=5)
    assert fit.tuned and "subsample" in fit.reason and "2,000" in fit.reason
    assert all(kind == "K" and shape[0] <= tuning.MAX_TUNE_LABELS + 60 for kind, shape in seen)
    again = tuning.tune_lam_width(*args, kernel=Kernel("rbf", width=1.0), lams=[0.01, 0.1, 1.0], seed=5)
    assert again.lam == fit.lam and again.error == fit.error  # deterministic
    few = tuning.tune_lam_width(X[:300], labels[:300], *args[2:], kernel=Kernel("rbf", width=1.0), lams=[0.1])
    assert few.reason == ""


def test_auto_tune_note_says_when_it_estimates():
    X, labels = _blobs(1200, seed=6)
    fit = auto_tune(X, labels, ["c0", "c1", "c2"], {"c0": 1.0, "c1": 1.0, "c2": 1.0},
                    kernel=Kernel("rbf", width=1.0), lam=0.1, tune_width=False, tune_lam=True)
    assert fit.reason.startswith("LOO estimated on a class-stratified subsample")


def test_linear_kernel_on_few_features_uses_the_factor_and_matches(monkeypatch):
    """The spectral posterior's kernel: linear on the factor rows (r columns < m labels)."""
    X, labels = _blobs(400, seed=7)
    args = (X, labels, ["c0", "c1", "c2"], {"c0": 1.0, "c1": 2.0, "c2": 1.0})
    seen = count_loo_shapes(monkeypatch)
    low = tuning.tune_lam_width(*args, kernel=Kernel("linear"), lams=[0.01, 0.1, 1.0, 10.0])
    assert seen and all(kind == "features" and shape == (400, 4) for kind, shape in seen)
    monkeypatch.setattr(tuning, "_low_rank_features", lambda kernel, X: None)
    dense = tuning.tune_lam_width(*args, kernel=Kernel("linear"), lams=[0.01, 0.1, 1.0, 10.0])
    assert seen[-1] == ("K", (400, 400))
    assert low.lam == dense.lam
    np.testing.assert_allclose(low.curve["classification"], dense.curve["classification"])
    np.testing.assert_allclose(low.curve["squared"], dense.curve["squared"], rtol=1e-8)
