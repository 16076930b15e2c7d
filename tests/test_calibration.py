"""core.calibration: the temperature fit against a brute-force grid, ECE, error rate, suspicion."""

import numpy as np
import pytest

from core.calibration import (
    CalibrationPrior,
    calibration_objective,
    estimated_error_rate,
    expected_calibration_error,
    fit_temperature,
    label_suspicion,
)
from core.confidence import soft_confidence
from core.learner import ActiveRLS
from core.kernels import Kernel


def _grid_minimum(F, y, prior, weights=None):
    grid = np.linspace(prior.log_slope - 8, prior.log_slope + 8, 16001)
    values = np.array([calibration_objective(s, F, y, weights, prior) for s in grid])
    return grid[int(np.argmin(values))], float(values.min())


@pytest.mark.parametrize("T", [1, 2, 4])
@pytest.mark.parametrize("n", [0, 3, 40])
def test_fit_matches_brute_force_grid(T, n):
    rng = np.random.default_rng(T * 100 + n)
    K = 2 if T == 1 else T
    y = rng.integers(0, K, n)
    F = rng.normal(0, 0.6, (n, T))
    if T == 1:
        F[:, 0] += np.where(y == 1, 0.4, -0.4)
    else:
        F[np.arange(n), y] += 0.8
    prior = CalibrationPrior()
    fit = fit_temperature(F, y, prior=prior)
    s_grid, v_grid = _grid_minimum(F, y, prior)
    assert abs(np.log(fit.slope) - s_grid) < 2e-3
    assert calibration_objective(np.log(fit.slope), F, y, prior=prior) <= v_grid + 1e-9
    assert fit.n_fitted == n


def test_fit_stays_finite_when_every_loo_prediction_is_right():
    F = np.array([[0.9], [0.8], [-0.7], [-0.95], [0.6]])
    y = np.array([1, 1, 0, 0, 1])
    fit = fit_temperature(F, y)
    s_grid, _ = _grid_minimum(F, y, CalibrationPrior())
    assert np.isfinite(fit.slope) and abs(np.log(fit.slope) - s_grid) < 2e-3


def test_weights_zero_drop_a_row():
    rng = np.random.default_rng(3)
    F = rng.normal(size=(30, 3))
    y = rng.integers(0, 3, 30)
    w = np.ones(30)
    w[:10] = 0
    a = fit_temperature(F, y, weights=w)
    b = fit_temperature(F[10:], y[10:])
    assert a.slope == pytest.approx(b.slope, rel=1e-8)
    assert a.n_fitted == 20


def test_binary_is_platt_without_offset_and_keeps_the_prediction():
    fit = fit_temperature(np.array([[0.5], [-0.2]]), np.array([1, 0]))
    P, conf = fit.confidence(np.array([0.3, -0.1, 0.0]))
    a = fit.slope
    assert P[0, 1] == pytest.approx(1 / (1 + np.exp(-2 * a * 0.3)))
    assert np.allclose(P.sum(axis=1), 1)
    assert conf[2] == pytest.approx(0.5)  # f = 0 predicts classes[0], probability 1/2


def test_ece_by_hand():
    conf = np.array([0.95, 0.95, 0.55, 0.55])
    correct = np.array([1, 1, 1, 0], dtype=bool)
    # bin 9: acc 1, conf .95 -> .05 * 2/4 ; bin 5: acc .5, conf .55 -> .05 * 2/4
    assert expected_calibration_error(conf, correct) == pytest.approx(0.05)


def _moons_learner(seed=0, n=600, n_labels=40):
    from sklearn.datasets import make_moons

    X, y = make_moons(n, noise=0.2, random_state=seed)
    learner = ActiveRLS.from_features(X, classes=[0, 1], kernel=Kernel("rbf", width=0.5), lam=0.1)
    rng = np.random.default_rng(seed)
    idx = rng.choice(n, n_labels, replace=False)
    learner.add_many(idx.tolist(), y[idx].tolist())
    return learner, X, y, idx


def test_calibration_improves_ece_on_a_seeded_task():
    learner, X, y, idx = _moons_learner()
    F_loo = learner.loo_decision_values()
    y_loo = np.array([learner.classes.index(v) for v in learner.labels.values()])
    fit = fit_temperature(F_loo, y_loo)
    rest = np.setdiff1d(np.arange(len(y)), idx)
    F = learner.decision_values[rest]
    correct = learner.predict()[rest] == y[rest]
    _, soft = soft_confidence(F)
    _, cal = fit.confidence(F)
    before = expected_calibration_error(soft, correct)
    after = expected_calibration_error(cal, correct)
    assert after < before
    assert after < 0.06


def test_error_rate_interval_holds_the_rate_and_tracks_truth():
    learner, X, y, idx = _moons_learner()
    F_loo = learner.loo_decision_values()
    y_loo = np.array([learner.classes.index(v) for v in learner.labels.values()])
    fit = fit_temperature(F_loo, y_loo)
    rest = np.setdiff1d(np.arange(len(y)), idx)
    est = estimated_error_rate(fit, learner.decision_values[rest])
    true = float(np.mean(learner.predict()[rest] != y[rest]))
    assert est.lower <= est.rate <= est.upper
    assert est.lower <= true <= est.upper
    # monotone in the slope: a larger slope means more confident, a smaller rate
    steeper = type(fit)(slope=fit.slope * 2, log_slope_sd=fit.log_slope_sd, n_fitted=fit.n_fitted)
    assert estimated_error_rate(steeper, learner.decision_values[rest]).rate < est.rate


def test_suspicion_scores_equal_refits_without_the_point():
    """Oracle: the exact LOO values behind the scores equal a refit with the point removed."""
    learner, X, y, idx = _moons_learner(n=200, n_labels=25)
    order = list(learner.labels)
    labels = list(learner.labels.values())
    y_loo = np.array([learner.classes.index(v) for v in labels])
    fit = fit_temperature(learner.loo_decision_values(), y_loo)
    score, suggested = label_suspicion(fit, learner.loo_decision_values(), y_loo)
    refit_rows = []
    for j in order:
        other = ActiveRLS.from_features(X, classes=[0, 1], kernel=Kernel("rbf", width=0.5), lam=0.1)
        keep = [i for i in order if i != j]
        other.add_many(keep, [learner.labels[i] for i in keep])
        refit_rows.append(other.decision_values[j])
    ref_score, ref_suggested = label_suspicion(fit, np.array(refit_rows), y_loo)
    assert np.allclose(score, ref_score, atol=1e-8)
    assert np.array_equal(suggested, ref_suggested)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="class indices"):
        fit_temperature(np.zeros((2, 3)), np.array([0, 3]))
    with pytest.raises(ValueError, match="NaN"):
        fit_temperature(np.array([np.nan, 1.0]), np.array([0, 1]))
    with pytest.raises(ValueError, match="scale"):
        CalibrationPrior(scale=0)
