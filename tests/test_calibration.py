"""core.calibration: the temperature fit against a brute-force grid, ECE, error rate, suspicion."""

import numpy as np
import pytest

from core.calibration import (
    CalibrationPrior,
    class_count_prior,
    class_count_weights,
    fit_calibration,
    pool_margin_weights,
    calibration_objective,
    estimated_error_rate,
    expected_calibration_error,
    fit_temperature,
    label_suspicion,
    loo_margin_scale,
    relative_prior,
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



# ---- the app's fit: class-count weights and prior, optional pool-margin weights ----------------


def test_class_count_weights_against_a_loop():
    y = np.array([0, 0, 1, 2, 2, 2, 0, 3])
    want = [(list(y).count(c) - 1) / list(y).count(c) for c in y]
    assert np.allclose(class_count_weights(y, 5), want)
    assert class_count_weights(y, 5)[2] == 0.0  # the only label of class 1
    with pytest.raises(ValueError, match="class indices"):
        class_count_weights(np.array([0, 5]), 5)


def test_class_count_prior_is_log2_for_two_classes_and_grows_with_k():
    assert class_count_prior(2).log_slope == pytest.approx(np.log(2.0))
    assert class_count_prior(10).log_slope == pytest.approx(np.log(2.0 + np.log(9.0)))
    assert class_count_prior(3).log_slope < class_count_prior(10).log_slope
    with pytest.raises(ValueError, match="at least 2"):
        class_count_prior(1)


@pytest.mark.parametrize("T", [1, 4])
def test_fit_calibration_is_fit_temperature_with_its_weights_and_prior(T):
    rng = np.random.default_rng(T)
    K = 2 if T == 1 else T
    y = rng.integers(0, K, 30)
    y[0] = K - 1
    F = rng.normal(size=(30, T)) * 0.4
    user = (rng.random(30) > 0.2).astype(float)
    fit = fit_calibration(F, y, weights=user)
    w = user * class_count_weights(y, K)
    want = fit_temperature(F, y, weights=w, prior=relative_prior(K, loo_margin_scale(F, w)))
    assert fit.slope == pytest.approx(want.slope, rel=1e-12)
    pool = rng.normal(size=(200, T))
    fit = fit_calibration(F, y, weights=user, F_pool=pool)
    keep = user * class_count_weights(y, K) > 0
    pw = np.zeros(30)
    pw[keep] = pool_margin_weights(F[keep], pool)
    w = user * class_count_weights(y, K) * pw
    want = fit_temperature(F, y, weights=w, prior=relative_prior(K, loo_margin_scale(F, w)))
    assert fit.slope == pytest.approx(want.slope, rel=1e-12)
    assert fit_calibration(np.zeros((0, T)), np.zeros(0, dtype=int), n_classes=10).slope == pytest.approx(
        2.0 + np.log(9.0))


def _margin_loop(row):
    s = sorted(row)
    return s[-1] - s[-2]


def test_pool_margin_weights_against_a_loop():
    rng = np.random.default_rng(7)
    F_l, F_p = rng.normal(size=(25, 3)) * 0.3, rng.normal(size=(400, 3))
    w = pool_margin_weights(F_l, F_p, n_bins=4, max_weight=10.0)
    m_l = np.array([_margin_loop(r) for r in F_l])
    m_p = np.sort([_margin_loop(r) for r in F_p])
    cuts = [m_p[int(q * (len(m_p) - 1))] if False else np.quantile(m_p, q) for q in (0.25, 0.5, 0.75)]
    b = np.array([sum(m >= c for c in cuts) for m in m_l])
    share = np.array([np.mean(b == k) for k in range(4)])
    raw = np.minimum(0.25 / share[b], 10.0)
    assert np.allclose(w, raw * 25 / raw.sum())
    # labels spread like the pool get equal weights; binary margins are 2 |f|
    same = pool_margin_weights(F_p, F_p)
    assert np.allclose(same, 1.0, atol=0.02)
    f = rng.normal(size=50)
    assert np.allclose(pool_margin_weights(f, f), pool_margin_weights(f[:, None], f[:, None]))
    assert np.all(pool_margin_weights(f[:3], f[:2]) == 1.0)


def test_loo_predictive_sd_equals_the_refit_without_the_point():
    """Oracle: ``lambda_j / sqrt(lambda_j - C_jj)`` is the predictive sd of point j's target by
    the model refitted without j (its posterior variance plus its own noise ``lambda_j``)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 2))
    y = (X[:, 0] + 0.3 * rng.normal(size=60) > 0.4).astype(int)
    learner = ActiveRLS.from_features(X, classes=[0, 1], kernel=Kernel("rbf", width=0.8), lam=0.2,
                                      weighting="balanced")
    labelled = [int(i) for i in rng.choice(60, 18, replace=False)]
    learner.add_many(labelled, [int(y[i]) for i in labelled])
    sd = learner.loo_predictive_sd()
    lam_pt = learner.point_lambdas
    order = list(learner.labels)
    assert len({float(lam_pt[i]) for i in order}) == 2  # class weights: two noise levels
    for k, j in enumerate(order):
        other = ActiveRLS.from_features(X, classes=[0, 1], kernel=Kernel("rbf", width=0.8), lam=0.2,
                                        weighting=learner.class_weights)
        rest = [i for i in order if i != j]
        other.add_many(rest, [learner.labels[i] for i in rest])
        latent = other.posterior_variance()[j] - other.lam  # C_-j(x_j, x_j)
        assert sd[k] == pytest.approx(np.sqrt(latent + lam_pt[j]), rel=1e-8)


def test_standardized_suspicion_scales_by_the_spread_then_calibrates():
    from core.calibration import standardized_suspicion

    rng = np.random.default_rng(5)
    F = rng.normal(size=(40, 3)) * 0.5
    y = rng.integers(0, 3, 40)
    sd = rng.uniform(0.5, 2.0, 40)
    score, suggested = standardized_suspicion(F, y, sd)
    scaled = F * (np.median(sd) / sd)[:, None]
    want, want_suggested = label_suspicion(fit_calibration(scaled, y), scaled, y)
    assert np.allclose(score, want) and np.array_equal(suggested, want_suggested)
    # binary: the ranking of the z-score y f / sd
    f = rng.normal(size=40)
    yb = (rng.random(40) > 0.5).astype(int)
    score, _ = standardized_suspicion(f, yb, sd)
    z = np.where(yb == 1, f, -f) / sd
    assert np.array_equal(np.argsort(-score, kind="stable"), np.argsort(z, kind="stable"))
    with pytest.raises(ValueError, match="loo_sd must hold 40 finite numbers > 0"):
        standardized_suspicion(f, yb, np.zeros(40))


@pytest.mark.parametrize("T", [1, 3])
def test_loo_margin_scale_against_a_loop_and_the_prior_it_moves(T):
    rng = np.random.default_rng(11 + T)
    F = rng.normal(size=(25, T)) * 0.3
    w = (rng.random(25) > 0.3).astype(float)
    rows = [([-r[0], r[0]] if T == 1 else list(r)) for r in F]
    margins = [_margin_loop(r) for r, wj in zip(rows, w) if wj > 0]
    want = float(np.exp(np.mean(np.log(margins))))
    assert loo_margin_scale(F, w) == pytest.approx(want, rel=1e-12)
    K = 2 if T == 1 else T
    base = class_count_prior(K).log_slope
    assert relative_prior(K, want).log_slope == base  # margins of the usual size: the prior unchanged
    assert relative_prior(K, 1e-5).log_slope == pytest.approx(base + np.log(1e4))  # 0.1 / 1e-5
    assert loo_margin_scale(np.zeros((4, T))) == 1.0  # every margin 0: the reference


@pytest.mark.parametrize("T", [1, 3])
def test_fit_calibration_does_not_depend_on_the_scale_of_small_decision_values(T):
    rng = np.random.default_rng(21 + T)
    K = 2 if T == 1 else T
    y = rng.integers(0, K, 30)
    F = (rng.normal(size=(30, T)) * 0.4 + np.eye(K)[y][:, -T:] * 0.5) * 1e-3  # margin scale < 0.1
    pool = rng.normal(size=(100, T)) * 1e-3
    base = fit_calibration(F, y)
    for c in (1e-6, 1e-3, 10.0):
        fit = fit_calibration(F * c, y)
        assert fit.slope * c == pytest.approx(base.slope, rel=1e-6)
        assert np.allclose(fit.confidence(pool * c)[1], base.confidence(pool)[1], atol=1e-9)


def test_moons_with_a_small_retuned_width_reads_its_pool_error_right():
    """Issue 21: two moons, the app's defaults (the width re-tuned to ~0.11), 25 labels asked by
    "auto". The LOO decision values of the isolated labels are ~1e-7 yet right in sign; the
    prior on the slope in absolute units left the pool's confidences at 0.50-0.55 and the
    estimated pool error near 37 % when the true one is under 1 %."""
    import warnings

    from labeler.data import load_dataset
    from labeler.experiments.simulate import app_settings, simulate
    from core.criteria.risk import predicted_class_indices

    ds = load_dataset("moons")
    chosen = app_settings(ds, seed=0)
    final = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        frame = simulate(ds, strategy="auto", budget=25, seed=0, kernel=chosen["kernel"], lam=chosen["lam"],
                         weighting=chosen["weighting"], X=chosen["X"], auto_tune=chosen["auto_tune"], final=final)
    assert frame["width"].iloc[-1] < 0.3  # the case of the issue: a re-tuned small width
    learner = final["learner"]
    classes = list(learner.classes)
    codes = np.array([classes.index(v) for v in learner.labels.values()])
    fit = fit_calibration(learner.loo_decision_values(), codes, n_classes=2)
    pool = np.asarray(learner.unlabeled_indices)
    F = np.asarray(learner.decision_values, dtype=np.float64)[pool]
    truth = np.array([classes.index(v) for v in np.asarray(ds.y)[pool].tolist()])
    true_error = float(np.mean(predicted_class_indices(F) != truth))
    estimate = estimated_error_rate(fit, F)
    assert abs(estimate.rate - true_error) < 0.03
    _, confidence = fit.confidence(F)
    assert np.mean(confidence > 0.9) > 0.8


def test_top_probabilities_are_those_of_the_softmax_table():
    """The one-pass kernel against exp(log_softmax(a G)) at the predicted class (binary and
    one-vs-all, ties included), and the confidence and error rate built on it against the
    obvious formulas."""
    from scipy.special import log_softmax, ndtri

    from core.calibration import TemperatureCalibration, estimated_error_rate, top_probabilities

    rng = np.random.default_rng(7)
    for T in (1, 3, 12):
        F = rng.standard_normal((2000, T)) * 3
        F[:50] = np.round(F[:50])  # ties between outputs (and f = 0 binary)
        G = np.column_stack([-F[:, 0], F[:, 0]]) if T == 1 else F
        top = (G[:, 1] > G[:, 0]).astype(int) if T == 1 else np.argmax(G, axis=1)
        slopes = [0.3, 1.0, 4.5]
        want = np.array([np.exp(log_softmax(a * G, axis=1))[np.arange(len(G)), top] for a in slopes])
        np.testing.assert_allclose(top_probabilities(F, slopes), want, rtol=0, atol=1e-13)
        cal = TemperatureCalibration(slope=1.7, log_slope_sd=0.4, n_fitted=9)
        np.testing.assert_allclose(cal.top_confidence(F), cal.confidence(F)[1], rtol=0, atol=1e-13)
        # the interval of the pool error rate, written out as it was computed before
        z = float(ndtri(0.975))
        s = np.log(cal.slope)

        def rate(a):
            q = 1.0 - np.exp(log_softmax(a * G, axis=1)[np.arange(len(G)), top])
            return q.mean(), q

        mid, q = rate(cal.slope)
        high, low = rate(np.exp(s - z * 0.4))[0], rate(np.exp(s + z * 0.4))[0]
        spread = z * np.sqrt((q * (1 - q)).sum()) / len(G)
        got = estimated_error_rate(cal, F, 0.95)
        np.testing.assert_allclose([got.rate, got.lower, got.upper],
                                   [mid, max(0, low - spread), min(1, high + spread)], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="NaN or infinite"):
        top_probabilities(np.array([1.0, np.nan]), [1.0])
    assert top_probabilities(np.zeros((0, 2)), [1.0, 2.0]).shape == (2, 0)
