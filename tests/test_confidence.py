"""Tests for core.confidence: soft, gap, Bayesian confidence and confidence bins (docs/algorithms.md §2)."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose, assert_array_equal
from scipy.integrate import quad
from scipy.special import ndtr
from scipy.stats import norm

from core.confidence import (
    ConfidenceBins,
    bayesian_confidence,
    confidence_bins,
    gap_confidence,
    soft_confidence,
)


# ---------------------------------------------------------------- soft
def test_soft_binary_matches_formula_with_corrected_sign():
    f = np.array([-2.0, -1.0, -0.5, 0.0, 0.3, 1.0, 3.0])
    p, conf = soft_confidence(f)
    p_pos = np.clip((f + 1) / 2, 0, 1)  # eq. 3.36 with + (seed prints -)
    assert_allclose(p[:, 1], p_pos)
    assert_allclose(p[:, 0], 1 - p_pos)
    expected = np.where(f > 0, p_pos, 1 - p_pos)
    assert_allclose(conf, expected)
    # f = 0.3 -> p(+1) = 0.65, the seed's misprint would give -0.35
    assert p[4, 1] == pytest.approx(0.65)


def test_soft_binary_column_vector_equals_flat():
    f = np.random.default_rng(0).normal(size=20)
    p1, c1 = soft_confidence(f)
    p2, c2 = soft_confidence(f[:, None])
    assert_array_equal(p1, p2)
    assert_array_equal(c1, c2)


def test_soft_multiclass_normalised_and_loops_agree():
    rng = np.random.default_rng(1)
    F = rng.normal(scale=1.2, size=(50, 4))
    F[0] = [-1.5, -2.0, -1.1, -3.0]  # all clipped to zero -> uniform
    p, conf = soft_confidence(F)
    for i in range(F.shape[0]):
        raw = [min(max((f + 1) / 2, 0.0), 1.0) for f in F[i]]
        total = sum(raw)
        expected = [r / total for r in raw] if total > 0 else [0.25] * 4
        assert_allclose(p[i], expected, rtol=1e-15)
        assert conf[i] == pytest.approx(expected[int(np.argmax(F[i]))], rel=1e-15)
    assert_allclose(p.sum(axis=1), 1.0, rtol=1e-15)
    assert_allclose(p[0], 0.25)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 8), st.integers(1, 5)),
              elements=st.floats(-5, 5, allow_nan=False)))
def test_soft_probabilities_are_a_distribution(F):
    p, conf = soft_confidence(F)
    assert np.all(p >= 0) and np.all(p <= 1)
    assert_allclose(p.sum(axis=1), 1.0, rtol=1e-12)
    assert np.all((conf >= 0) & (conf <= 1))


# ---------------------------------------------------------------- gap
def test_gap_binary_is_clipped_absolute_value():
    f = np.array([-3.0, -0.4, 0.0, 0.25, 0.9, 2.0])
    assert_allclose(gap_confidence(f), np.minimum(np.abs(f), 1.0))


def test_gap_multiclass_matches_sorted_loop():
    rng = np.random.default_rng(2)
    F = rng.normal(size=(40, 5))
    gap = gap_confidence(F)
    for i in range(F.shape[0]):
        p = sorted((min(max((f + 1) / 2, 0.0), 1.0) for f in F[i]), reverse=True)
        assert gap[i] == pytest.approx(p[0] - p[1], abs=1e-15)
    assert np.all((gap >= 0) & (gap <= 1))


# ---------------------------------------------------------------- Bayesian
def _win_probability_quad(f, s, i):
    """P(Y_i is the largest) by adaptive quadrature (the slow oracle)."""
    T = len(f)

    def integrand(u):
        prod = np.exp(-0.5 * ((u - f[i]) / s[i]) ** 2) / (s[i] * np.sqrt(2 * np.pi))
        for j in range(T):
            if j != i:
                prod *= ndtr((u - f[j]) / s[j])
        return prod

    return quad(integrand, -np.inf, np.inf, epsabs=1e-14, epsrel=1e-13, limit=200)[0]


def test_bayesian_binary_is_phi_of_standardised_mean():
    f = np.array([-1.0, 0.0, 0.4, 2.0])
    var = np.array([0.25, 1.0, 0.04, 4.0])
    p, conf = bayesian_confidence(f, var)
    assert_allclose(p[:, 1], norm.cdf(f / np.sqrt(var)), rtol=1e-15)
    assert_allclose(p.sum(axis=1), 1.0)
    assert_allclose(conf, np.where(f > 0, p[:, 1], p[:, 0]))


@pytest.mark.parametrize("ratio, tol", [(1.0, 1e-14), (2.0, 1e-13), (4.0, 1e-6)])
def test_bayesian_multiclass_matches_scipy_quad(ratio, tol):
    rng = np.random.default_rng(3)
    n, T = 8, 4
    F = rng.normal(size=(n, T))
    s = 0.5 * np.exp(rng.uniform(-np.log(ratio) / 2, np.log(ratio) / 2, size=(n, T)))
    p, conf = bayesian_confidence(F, s**2)
    for i in range(n):
        expected = [_win_probability_quad(F[i], s[i], t) for t in range(T)]
        assert_allclose(p[i], expected, atol=tol, rtol=0)
        assert conf[i] == p[i, np.argmax(F[i])]


def test_bayesian_multiclass_matches_monte_carlo():
    rng = np.random.default_rng(4)
    F = np.array([[0.3, 0.1, -0.4], [1.0, -1.0, 0.9]])
    var = np.array([[0.5, 0.3, 0.8], [0.2, 0.2, 0.6]])
    p, _ = bayesian_confidence(F, var)
    draws = 400_000
    for i in range(F.shape[0]):
        Y = F[i] + np.sqrt(var[i]) * rng.standard_normal((draws, 3))
        freq = np.bincount(np.argmax(Y, axis=1), minlength=3) / draws
        # 5 binomial standard errors
        assert_allclose(p[i], freq, atol=5 * np.sqrt(0.25 / draws))


def test_bayesian_shared_variance_equals_per_class_repeat():
    rng = np.random.default_rng(5)
    F = rng.normal(size=(30, 3))
    v = rng.uniform(0.1, 2.0, size=30)
    p1, c1 = bayesian_confidence(F, v)
    p2, c2 = bayesian_confidence(F, np.repeat(v[:, None], 3, axis=1))
    assert_array_equal(p1, p2)
    assert_array_equal(c1, c2)


def test_bayesian_two_columns_agree_with_closed_form():
    # Two independent Gaussians: P(Y0 > Y1) = Phi((f0 - f1) / sqrt(s0^2 + s1^2)).
    rng = np.random.default_rng(6)
    F = rng.normal(size=(25, 2))
    var = rng.uniform(0.2, 0.6, size=(25, 2))
    p, _ = bayesian_confidence(F, var)
    expected = norm.cdf((F[:, 0] - F[:, 1]) / np.sqrt(var.sum(axis=1)))
    assert_allclose(p[:, 0], expected, atol=1e-12)


def test_bayesian_blocks_give_same_result_as_one_block(monkeypatch):
    import core.confidence as mod

    rng = np.random.default_rng(7)
    F = rng.normal(size=(37, 3))
    var = rng.uniform(0.3, 0.6, size=(37, 3))
    p_one, _ = bayesian_confidence(F, var)
    monkeypatch.setattr(mod, "_BLOCK_BYTES", 8 * 9 * 100 * 5)  # 5 rows per block
    p_blocks, _ = bayesian_confidence(F, var)
    assert_array_equal(p_one, p_blocks)


def test_bayesian_warns_when_quadrature_is_inaccurate():
    F = np.array([[0.0, 0.05, -0.05]])
    var = np.array([[1.0, 1e-6, 1e-6]])  # ratio 1000: steps far narrower than the nodes
    with pytest.warns(RuntimeWarning, match="n_nodes"):
        p, _ = bayesian_confidence(F, var, n_nodes=20)
    assert_allclose(p.sum(), 1.0)


def test_bayesian_no_warning_in_normal_use():
    rng = np.random.default_rng(8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        bayesian_confidence(rng.normal(size=(20, 5)), rng.uniform(0.5, 1.0, size=(20, 5)))


@pytest.mark.parametrize(
    "variance, match",
    [
        (np.ones(3), "shape"),
        (np.ones((4, 2)), "shape"),
        (np.array([1.0, 0.0, 1.0, 1.0]), "> 0"),
        (np.array([1.0, np.nan, 1.0, 1.0]), "> 0"),
        (np.array([1.0, -1.0, 1.0, 1.0]), "row 1"),
    ],
)
def test_bayesian_rejects_bad_variance(variance, match):
    with pytest.raises(ValueError, match=match):
        bayesian_confidence(np.zeros((4, 3)), variance)


def test_bayesian_rejects_bad_n_nodes():
    with pytest.raises(ValueError, match="n_nodes"):
        bayesian_confidence(np.zeros((2, 3)), np.ones(2), n_nodes=1)


# ---------------------------------------------------------------- errors on F
@pytest.mark.parametrize("func", [soft_confidence, gap_confidence,
                                  lambda F: bayesian_confidence(F, np.ones(len(F)))])
def test_nan_in_decision_values_is_refused(func):
    F = np.zeros((3, 2))
    F[2, 1] = np.nan
    with pytest.raises(ValueError, match="row 2, column 1"):
        func(F)


@pytest.mark.parametrize("F", [np.zeros((2, 2, 2)), np.zeros((0, 3)), np.array(["a", "b"])])
def test_bad_decision_value_shapes_are_refused(F):
    with pytest.raises(ValueError):
        soft_confidence(F)


# ---------------------------------------------------------------- bins
def test_bins_match_histogram_and_loop():
    rng = np.random.default_rng(9)
    conf = rng.uniform(size=300)
    conf[:3] = [0.0, 1.0, 0.5]  # edges
    correct = rng.uniform(size=300) < conf
    bins = confidence_bins(conf, correct, n_bins=10)
    assert isinstance(bins, ConfidenceBins)
    counts, edges = np.histogram(conf, bins=10, range=(0, 1))
    assert_array_equal(bins.counts, counts)
    assert_allclose(bins.edges, edges)
    for b in range(10):
        inside = (conf >= edges[b]) & ((conf < edges[b + 1]) if b < 9 else (conf <= 1.0))
        assert bins.accuracy[b] == pytest.approx(correct[inside].mean())
        assert bins.mean_confidence[b] == pytest.approx(conf[inside].mean())


def test_bins_empty_bins_are_nan():
    bins = confidence_bins([0.91, 0.95, 0.99], [1, 0, 1], n_bins=5)
    assert_array_equal(bins.counts, [0, 0, 0, 0, 3])
    assert np.isnan(bins.accuracy[:4]).all()
    assert np.isnan(bins.mean_confidence[:4]).all()
    assert bins.accuracy[4] == pytest.approx(2 / 3)


def test_bins_custom_range():
    bins = confidence_bins([0.5, 0.6, 0.75, 1.0], [True, False, True, True], n_bins=2, range=(0.5, 1.0))
    assert_allclose(bins.edges, [0.5, 0.75, 1.0])
    assert_array_equal(bins.counts, [2, 2])
    assert_allclose(bins.accuracy, [0.5, 1.0])


@pytest.mark.parametrize(
    "conf, correct, kwargs, match",
    [
        ([0.1, 0.2], [1], {}, "same length"),
        ([0.1, np.nan], [1, 0], {}, "NaN"),
        ([0.1, 1.2], [1, 0], {}, "outside range"),
        ([0.1, 0.2], [1, 2], {}, "0/1"),
        ([0.1, 0.2], [1, 0], {"n_bins": 0}, "n_bins"),
        ([0.1, 0.2], [1, 0], {"range": (1, 0)}, "range"),
    ],
)
def test_bins_errors(conf, correct, kwargs, match):
    with pytest.raises(ValueError, match=match):
        confidence_bins(np.asarray(conf), np.asarray(correct), **kwargs)
