"""The weighted one-vs-all expected-risk kernel (core.criteria._expected_risk_weighted) against the oracle.

Every test compares with :func:`core.risk.expected_risk_reference` (the plain numpy formula).
Covariances come from real ARLS states (RBF kernel, "balanced" weights) or from random PSD
matrices; outputs are the learner's own or pushed far outside [-1, 1] so that clipping, the
uniform fallback, exact ties between columns and the exact path of the kernel are all hit.

Outputs that sit exactly on -1 in every column are avoided on purpose (as in
tests/test_arls_risk.py): there the normalised probability jumps between "uniform" and "all
mass on one class", so the last bit of two correct summation orders decides the value.

Tolerance. The point risk ``sum_t p_t / w_t - p_t* / w_t*`` cancels when the predicted class
carries most of ``sum_t p_t / w_t`` (with weights 1e-3 .. 1e3 it can lose six digits), in
the oracle as in any other summation order. So the two are compared to ``RTOL`` relative
plus ``ETOL`` times the same sum without the subtraction (:func:`uncancelled`): with
moderate weights that is a relative tolerance of about 1e-13, with extreme weights it is
the rounding error of the formula itself.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_allclose, assert_array_equal

from core.criteria import _expected_risk_calm as _risk_calm
from core.criteria import _expected_risk_numba as _risk_numba
from core.criteria import _expected_risk_weighted as _risk_numba_weighted
from core.criteria._expected_risk_weighted import (
    expected_risk_multiclass_weighted,
    weighted_slow_fraction,
)
from core.learner import ActiveRLS
from core.kernels import Kernel
from core.criteria.risk import class_probabilities, expected_risk_reference, target_codes

RTOL = 1e-11
ETOL = 1e-13


def uncancelled(C, M, cand, lam_y, w):
    """``E_i`` with ``sum_t p_t / w_t`` in place of each point risk: the size of the terms
    that cancel in the risk (the scale of its rounding error)."""
    M = np.asarray(M, dtype=np.float64)
    T = M.shape[1]
    codes = target_codes(T, T)
    prior = class_probabilities(M)
    iw = 1.0 / np.asarray(w)
    out = np.empty(len(cand))
    for k, i in enumerate(cand):
        total = 0.0
        for y in range(T):
            F = M - np.outer(C[:, i], M[i] - codes[y]) / (C[i, i] + lam_y[y])
            total += prior[i, y] * iw[y] * float((class_probabilities(F) @ iw).sum())
        out[k] = total
    return out


def assert_close(got, ref, C, M, cand, lam_y, w):
    tol = RTOL * np.abs(ref) + ETOL * uncancelled(C, M, cand, lam_y, w)
    err = np.abs(got - ref)
    assert np.all(err <= tol), f"max error / tolerance {np.max(err / tol):.3g} at {np.argmax(err / tol)}"


def arls_state(T, seed, n=90, n_labels=24, width=1.0, lam=0.1):
    """C, M (n, T), lam_y and w of a real ARLS learner with "balanced" weights.

    Labels are drawn with unequal class frequencies (some classes tie in count, so some
    weights are equal and others differ).
    """
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-3.0, 3.0, (T, 2))
    y = rng.integers(T, size=n)
    X = centres[y] + 0.8 * rng.standard_normal((n, 2))
    learner = ActiveRLS.from_features(X, classes=list(range(T)), kernel=Kernel("rbf", width=width), lam=lam,
                        weighting="balanced")
    freq = np.linspace(3.0, 1.0, T)
    freq /= freq.sum()
    idx = rng.choice(n, size=n_labels, replace=False)
    labels = [int(rng.choice(T, p=freq)) for _ in idx]
    labels[:T] = list(range(T))  # every class labelled at least once
    learner.add_many([int(i) for i in idx], labels)
    C = learner.posterior_covariance()
    M = learner.decision_values
    lam_y = np.asarray(learner.hypothetical_lambdas(), dtype=np.float64)
    w = np.array([learner.class_weights[c] for c in range(T)], dtype=np.float64)
    return C, M, lam_y, w, learner


def run_weighted(R, rows, cand, M, lam_y, w):
    out = np.full(len(cand), np.nan)
    expected_risk_multiclass_weighted(
        np.ascontiguousarray(R, dtype=np.float64), np.asarray(rows, dtype=np.int64),
        np.asarray(cand, dtype=np.int64), np.ascontiguousarray(np.asarray(M).T, dtype=np.float64),
        np.asarray(lam_y, dtype=np.float64), 1.0 / np.asarray(w, dtype=np.float64), out,
    )
    return out


def check_both_layouts(C, M, lam_y, w, cand=None):
    """Full C (rows = candidates) and an extracted block (rows = arange): both equal the
    oracle, and each other bit for bit (same row, same arithmetic)."""
    n = C.shape[0]
    cand = np.arange(n) if cand is None else np.asarray(cand, dtype=np.int64)
    ref = expected_risk_reference(C, M, cand, lam_y, w)
    full = run_weighted(C, cand, cand, M, lam_y, w)
    block = run_weighted(C[cand], np.arange(cand.size), cand, M, lam_y, w)
    assert_close(full, ref, C, M, cand, lam_y, w)
    assert_array_equal(block, full)
    return full, ref


def rescaled_outputs(M, seed):
    """Outputs spread far outside [-1, 1]: many clipped values, rows of the uniform fallback
    (every column below -1), columns exactly on +1 and on 0."""
    rng = np.random.default_rng(seed)
    F = 3.0 * M + rng.uniform(-1.5, 1.5, size=M.shape)
    F[::7] = -2.0 - rng.uniform(0.0, 1.0, size=F[::7].shape)  # uniform fallback
    F[3::11, 0] = 1.0
    F[5::13, -1] = 0.0
    return F


@pytest.mark.parametrize("T", [3, 4, 10])
@pytest.mark.parametrize("seed", [0, 1])
def test_matches_reference_on_real_arls_states(T, seed):
    C, M, lam_y, w, _ = arls_state(T, seed)
    assert np.unique(lam_y).size > 1  # really distinct weights
    check_both_layouts(C, M, lam_y, w)


@pytest.mark.parametrize("T", [3, 4, 10])
def test_random_and_extreme_weights_with_clipped_outputs(T):
    C, M, _, _, learner = arls_state(T, seed=10 + T)
    rng = np.random.default_rng(T)
    F = rescaled_outputs(M, seed=T)
    for w in (
        rng.uniform(0.2, 5.0, T),
        10.0 ** rng.uniform(-3.0, 3.0, T),  # extreme weights
        np.where(np.arange(T) % 2 == 0, 1e-3, 1e3),  # two groups, extreme
        np.r_[np.full(T - 1, 0.7), 3.0],  # all equal but one
    ):
        lam_y = learner.lam / w
        check_both_layouts(C, F, lam_y, w)
        check_both_layouts(C, M, lam_y, w)


@pytest.mark.parametrize("T", [3, 4, 10])
def test_equal_weights_agree_with_the_equal_weights_kernel(T):
    """One group (G = 1): the interval of steps is a point, every lane is on the O(1) path."""
    C, M, _, _, learner = arls_state(T, seed=20 + T)
    w = np.full(T, 1.3)
    lam_y = learner.lam / w
    full, ref = check_both_layouts(C, M, lam_y, w)
    cand = np.arange(C.shape[0])
    eq = np.empty(cand.size)
    _risk_numba.expected_risk_multiclass_equal(C, cand, np.ascontiguousarray(M.T), cand, lam_y[0], 1 / 1.3, eq)
    assert_allclose(full, eq, rtol=1e-12)
    frac = weighted_slow_fraction(C, cand, cand, np.ascontiguousarray(M.T), lam_y, 1 / w, np.empty(cand.size))
    assert frac == 0.0


@pytest.mark.parametrize("T", [3, 4, 10])
def test_exact_ties_between_columns(T):
    """Duplicated output columns (as for classes without labels): every point has an exact
    tie, broken towards the lowest index, also when the tied classes have different weights."""
    C, M, _, _, learner = arls_state(T, seed=30 + T)
    F = M.copy()
    F[:, 1] = F[:, 0]  # identical lines: tie at every step
    F[:, T - 1] = F[:, T - 2]
    F[::5, 2 % T] = F[::5, 0]  # ties at some points only
    rng = np.random.default_rng(T)
    for w in (rng.uniform(0.5, 2.0, T), 10.0 ** rng.uniform(-3.0, 3.0, T)):
        lam_y = learner.lam / w
        check_both_layouts(C, F, lam_y, w)
        check_both_layouts(C, rescaled_outputs(F, seed=T), lam_y, w)
    # ... and a tie at the top of every row (the top two lines coincide)
    G = np.full_like(F, -0.5)
    G[:, 1] = G[:, 3 % T] = 0.25
    check_both_layouts(C, G, learner.lam / w, w)


@pytest.mark.parametrize("T", [3, 10])
def test_candidates_with_zero_covariance_columns(T):
    """c = C[z, i] = 0 for every z != i (and C_ii = 0 for one of them): all steps are 0."""
    C, M, lam_y, w, _ = arls_state(T, seed=40 + T)
    C = C.copy()
    for i in (2, 17):
        diag = C[i, i]
        C[i, :] = 0.0
        C[:, i] = 0.0
        C[i, i] = diag if i == 2 else 0.0
    check_both_layouts(C, M, lam_y, w)
    check_both_layouts(C, rescaled_outputs(M, seed=T), lam_y, w)
    # with duplicated columns a zero step ties column y with its duplicate at every point:
    # the lowest index wins, and the two classes have different weights
    F = M.copy()
    F[:, 1] = F[:, 0]
    F[:, 2] = F[:, 0]
    check_both_layouts(C, F, lam_y, w)
    check_both_layouts(C, F, lam_y[::-1].copy(), w[::-1].copy())


def test_a_subset_of_candidates_in_any_order():
    C, M, lam_y, w, _ = arls_state(4, seed=50)
    cand = np.array([17, 3, 88, 3, 0, 45])
    check_both_layouts(C, M, lam_y, w, cand)


def test_exact_path_is_exercised_and_correct():
    """Large steps (small lam) make lines cross clip boundaries and swap places between the
    ends of the interval: those points take the exact O(T) path."""
    C, M, _, _, learner = arls_state(4, seed=60, lam=1e-3, n_labels=8)
    w = np.array([0.05, 1.0, 3.0, 20.0])
    lam_y = 0.5 / w  # a wide interval of steps
    cand = np.arange(C.shape[0])
    MT = np.ascontiguousarray(M.T)
    out = np.empty(cand.size)
    frac = weighted_slow_fraction(C, cand, cand, MT, lam_y, 1 / w, out)
    assert 0.0 < frac < 1.0
    assert_close(out, expected_risk_reference(C, M, cand, lam_y, w), C, M, cand, lam_y, w)


@pytest.mark.parametrize("w", [[1.0, 0.5, 2.0], [1e-3, 1.0, 1e3]], ids=["distinct", "extreme"])
def test_cancellation_in_the_normaliser(w):
    """Point z where the hypothesised column carried all the mass and drops to 0 (the O(1)
    update of S1 and S2 would cancel): the kernel must recompute exactly."""
    n, T = 40, 3
    C = np.eye(n) * 0.5
    C[0, 1] = C[1, 0] = -0.49
    MT = np.full((T, n), -1.0)
    MT[0, 1] = 0.9
    MT[1, 1] = -1.0 + 1e-15
    MT[0, 0] = -0.99
    w = np.asarray(w)
    cand = np.array([0])
    lam_y = 0.01 / w
    assert_close(run_weighted(C, cand, cand, MT.T, lam_y, w),
                 expected_risk_reference(C, MT.T, cand, lam_y, w), C, MT.T, cand, lam_y, w)


@pytest.mark.parametrize("T", [3, 4, 10])
def test_the_criterion_dispatches_one_vs_all_to_the_calm_kernel(T, monkeypatch):
    """The learner scores one-vs-all through core.criteria._expected_risk_calm (whose O(T)
    path is this module's kernel), with the same numbers as the oracle."""
    C, M, lam_y, w, learner = arls_state(T, seed=70 + T)
    called = []
    real = _risk_calm.expected_risk_multiclass

    def spy(*args, **kwargs):
        called.append(True)
        return real(*args, **kwargs)

    monkeypatch.setattr(_risk_calm, "expected_risk_multiclass", spy)
    E = learner.expected_risk()
    assert called
    unl = learner.unlabeled_indices
    assert_close(E[unl], expected_risk_reference(C, M, unl, lam_y, w), C, M, unl, lam_y, w)


# ---------------------------------------------------------------------------------------
# property test: random PSD C, outputs on a grid (exact ties, exact clip boundaries), weights
# drawn from a few values (some classes share a lambda, some do not)

_GRID = np.array([-2.5, -1.5, -1.0, -0.75, -0.5, 0.0, 0.25, 0.5, 1.0, 1.25, 3.0])


@st.composite
def problems(draw):
    T = draw(st.integers(2, 6))
    n = draw(st.integers(3, 45))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, draw(st.integers(1, 6))))
    C = A @ A.T * draw(st.sampled_from([0.05, 0.5, 3.0]))
    if draw(st.booleans()):
        zero = rng.choice(n, size=max(1, n // 4), replace=False)  # candidates with c = 0
        C[zero, :] = 0.0
        C[:, zero] = 0.0
        C[zero, zero] = rng.uniform(0.0, 1.0, zero.size)
    M = _GRID[rng.integers(_GRID.size, size=(n, T))]
    # no row exactly on -1 in every column (see the module docstring)
    top = M.max(axis=1)
    M[top == -1.0, 0] = -0.75
    # candidate rows in (-1, 1) only: two classes whose candidate outputs differ by exactly 2
    # make a hypothetical column coincide with another one for every step, and that equality
    # holds bit for bit in the oracle's arithmetic but not in any O(1) update
    M_cand = rng.choice([-0.75, -0.5, 0.0, 0.25, 0.5], size=(n, T))
    if draw(st.booleans()):
        M[:, 1] = M[:, 0]  # duplicated column
        M_cand[:, 1] = M_cand[:, 0]
    w = rng.choice(draw(st.sampled_from([[1.0], [0.5, 2.0], [1e-3, 1.0, 1e3], [0.3, 0.7, 1.1, 4.0]])), size=T)
    lam = draw(st.sampled_from([1e-2, 0.1, 1.0]))
    return C, M, M_cand, w, lam


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_property_matches_reference(problem):
    C, M, M_cand, w, lam = problem
    n, T = M.shape
    lam_y = lam / w
    # score every point as a candidate with its outputs replaced by a row of M_cand (the
    # candidate's own outputs enter only through a_t = m_t(i) + 1 and the prior p(y | i))
    for i in range(n):
        F = M.copy()
        F[i] = M_cand[i]
        cand = np.array([i])
        ref = expected_risk_reference(C, F, cand, lam_y, w)
        got = run_weighted(C, cand, cand, F, lam_y, w)
        assert_close(got, ref, C, F, cand, lam_y, w)


@pytest.mark.parametrize("T", [4, 10])
def test_data_where_few_points_are_calm(T):
    """A broad kernel and one-vs-all outputs crowded just above and below -1 (hard, overlapping
    classes): most (candidate, point) pairs move a line across a clip bound, so most points take
    the per-group path (gathered 32 at a time, and a partial block at the end) and few are calm."""
    C, M, lam_y, w, learner = arls_state(T, seed=60 + T, n=150, n_labels=30, width=6.0)
    rng = np.random.default_rng(T)
    F = -1.0 + 0.3 * rng.standard_normal(M.shape)  # every line near the clip bound
    F[:, 0] += 0.4 * M[:, 0]  # and one informative column
    F[::9, 1] = F[::9, 2]  # a few exact ties among them
    cand = np.arange(C.shape[0])
    MT = np.ascontiguousarray(F.T)
    for lam_w in (lam_y, learner.lam / (10.0 ** rng.uniform(-1.0, 1.0, T))):
        wt = learner.lam / lam_w
        slow = weighted_slow_fraction(C, cand, cand, MT, lam_w, 1 / wt, np.empty(cand.size))
        assert slow > 0.1  # 15 to 40 of the 150 points per candidate: partial and full blocks of 32
        assert _risk_calm.calm_fraction(C, cand, cand, MT, lam_w, 1 / wt) < 0.1
        check_both_layouts(C, F, lam_w, wt)
        out = np.empty(cand.size)
        _risk_calm.expected_risk_multiclass(C, cand, cand, MT, lam_w, 1 / wt, out)
        assert_close(out, expected_risk_reference(C, F, cand, lam_w, wt), C, F, cand, lam_w, wt)
