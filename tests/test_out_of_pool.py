"""core.learner.out_of_pool against the learner's own outputs on the pool and direct solves off it."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from arls_oracle import expected_class_weights
from core.criteria.risk import target_codes
from core.kernels import Kernel
from core.learner import ActiveRLS
from core.learner.out_of_pool import OutOfPoolPredictor, dual_coefficients

KERNEL = Kernel("rbf", width=0.8)


def blobs(n: int, n_new: int, n_classes: int = 2, seed: int = 0, labels=None):
    """Gaussian blobs, one per class: pool X, y of shape (n, 2), (n,); new points of shape (n_new, 2)."""
    rng = np.random.default_rng(seed)
    centres = 2.0 * rng.standard_normal((n_classes, 2))
    y = rng.integers(n_classes, size=n + n_new)
    X = centres[y] + 0.9 * rng.standard_normal((n + n_new, 2))
    classes = list(range(n_classes)) if labels is None else list(labels)
    y_labels = np.asarray(classes)[y]
    return X[:n], y_labels[:n], X[n:], classes


def direct_solve(X, X_new, labels: dict, classes: list, lam: float, weights: np.ndarray, kernel):
    """Dual coefficients c = (K_LL + Lambda)^-1 Y_L (n_labeled, T) and f(X_new) = k(X_new, X_L) c."""
    T = 1 if len(classes) == 2 else len(classes)
    L = np.array(list(labels), dtype=int)
    cls = np.array([classes.index(labels[j]) for j in L])
    Y = target_codes(T, len(classes))[cls]
    c = np.linalg.solve(kernel(X[L]) + np.diag(lam / weights[cls]), Y)
    return L, c, kernel(X_new, X[L]) @ c


@pytest.mark.parametrize("n_classes,weighting,labels", [
    (2, "none", None), (2, "balanced", None), (3, "balanced", None), (3, {0: 2.0}, None),
    (3, "balanced", ["cat", "dog", "emu"]),
])
def test_out_of_pool_prediction_equals_learner_outputs_on_the_pool(n_classes, weighting, labels):
    X, y, _, classes = blobs(40, 0, n_classes=n_classes, seed=3, labels=labels)
    learner = ActiveRLS.from_features(X, classes=classes, kernel=KERNEL, lam=0.05, weighting=weighting)
    predictor = OutOfPoolPredictor(X, X, KERNEL)
    for i in [3, 17, 8, 30, 21, 5]:
        learner.add(i, y[i].item())
        assert_allclose(predictor.decision_values(learner), learner.decision_values, atol=1e-10)
        assert predictor.predict(learner).tolist() == learner.predict().tolist()
    assert predictor.predict(learner).dtype == np.asarray(classes).dtype  # labels keep their dtype
    learner.remove(17)  # a removed point keeps its cached row but gets no coefficient
    assert_allclose(predictor.decision_values(learner), learner.decision_values, atol=1e-10)
    learner.relabel(8, classes[0] if y[8] != classes[0] else classes[1])
    assert_allclose(predictor.decision_values(learner), learner.decision_values, atol=1e-10)


def test_out_of_pool_prediction_and_dual_coefficients_match_a_direct_solve():
    X, y, X_new, classes = blobs(50, 60, seed=6)
    learner = ActiveRLS.from_features(X, classes=classes, kernel=KERNEL, lam=0.1, weighting="balanced")
    for i in range(0, 50, 4):
        learner.add(i, y[i].item())
    w = expected_class_weights(learner.labels, classes, "balanced")
    L_expected, c_expected, f_expected = direct_solve(X, X_new, learner.labels, classes, 0.1, w, KERNEL)
    L, c = dual_coefficients(learner)
    assert L.tolist() == L_expected.tolist()
    assert_allclose(c, c_expected, rtol=1e-8, atol=1e-10)
    assert_allclose(OutOfPoolPredictor(X, X_new, KERNEL).decision_values(learner), f_expected, atol=1e-10)


def test_dual_coefficients_of_an_empty_learner():
    X, _, X_new, classes = blobs(10, 5, seed=0)
    learner = ActiveRLS.from_features(X, classes=classes, kernel=KERNEL)
    L, c = dual_coefficients(learner)
    assert L.shape == (0,) and c.shape == (0, 1)
    assert_allclose(OutOfPoolPredictor(X, X_new, KERNEL).decision_values(learner), 0.0)


def test_out_of_pool_predictor_grows_its_buffer():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 2))
    y = (X[:, 0] > 0).astype(int)
    learner = ActiveRLS.from_features(X, classes=[0, 1], kernel=KERNEL, lam=0.1)
    predictor = OutOfPoolPredictor(X, X[:7], KERNEL)
    learner.add_many(list(range(40)), y[:40].tolist())  # more than the initial capacity at once
    assert_allclose(predictor.decision_values(learner), learner.decision_values[:7], atol=1e-10)


def test_out_of_pool_predictor_rejects_other_feature_counts():
    with pytest.raises(ValueError, match="feature"):
        OutOfPoolPredictor(np.zeros((3, 2)), np.zeros((2, 3)), KERNEL)
