"""The one-vs-all kernel with the calm-point path (core.criteria._expected_risk_calm) against the oracle.

Every test compares with :func:`core.criteria.risk.expected_risk_reference` (plain numpy,
one explicit refit per candidate and label). Each problem is scored three ways: the calm path
forced for every candidate (``min_calm=0``), never (``min_calm=2``: the O(T) kernels over all
points) and with the default switch; the tests check that both paths really run (the fraction
of calm pairs is strictly between 0 and 1) so that a wrong calm formula cannot hide behind the
O(T) kernels. Tolerances as in tests/test_risk_weighted_kernel.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from numpy.testing import assert_array_equal

from core.criteria import _expected_risk_calm as calm_mod
from core.criteria._expected_risk_calm import calm_fraction, expected_risk_multiclass, prepare
from core.criteria.risk import expected_risk_reference
from core.learner import ActiveRLS
from core.kernels import Kernel
from test_risk_weighted_kernel import _GRID, arls_state, assert_close, rescaled_outputs


def run(R, rows, cand, M, lam_y, w, min_calm, min_run=1):
    """The kernel with every pattern eligible (``min_run=1``: the test problems are small)."""
    out = np.full(len(cand), np.nan)
    n_calm = np.full(len(cand), -1, dtype=np.int64)
    MT = np.ascontiguousarray(np.asarray(M).T, dtype=np.float64)
    lam_y = np.asarray(lam_y, dtype=np.float64)
    iw = 1.0 / np.asarray(w, dtype=np.float64)
    expected_risk_multiclass(
        np.ascontiguousarray(R, dtype=np.float64), np.asarray(rows, dtype=np.int64),
        np.asarray(cand, dtype=np.int64), MT, lam_y, iw, out, calm=prepare(MT, lam_y, iw, min_run=min_run),
        min_calm=min_calm, n_calm=n_calm,
    )
    return out, n_calm


def check(C, M, lam_y, w, cand=None, calm_between=None):
    """Forced calm path, O(T) path and default switch (every pattern eligible, and only those
    of 16 points or more as in the learner) all equal the oracle; the full-array and the
    extracted-block layouts agree bit for bit. Returns the fraction of calm pairs."""
    n = C.shape[0]
    cand = np.arange(n) if cand is None else np.asarray(cand, dtype=np.int64)
    ref = expected_risk_reference(C, M, cand, lam_y, w)
    fracs = []
    for min_calm, min_run in ((0.0, 1), (2.0, 1), (None, 1), (None, 16)):
        full, n_calm = run(C, cand, cand, M, lam_y, w, min_calm, min_run)
        block, _ = run(C[cand], np.arange(cand.size), cand, M, lam_y, w, min_calm, min_run)
        assert_close(full, ref, C, M, cand, lam_y, w)
        assert_array_equal(block, full)
        fracs.append(n_calm.sum() / (cand.size * n))
    frac = fracs[0]
    if calm_between is not None:
        lo, hi = calm_between
        assert lo < frac < hi, f"calm fraction {frac:.3f} not in ({lo}, {hi}): the test misses a path"
    return frac


@pytest.mark.parametrize("T", [3, 4, 10])
@pytest.mark.parametrize("width", [0.3, 1.0])
@pytest.mark.parametrize("seed", [0, 1])
def test_real_arls_states_balanced_and_equal_weights(T, width, seed):
    C, M, lam_y, w, learner = arls_state(T, seed, width=width)
    assert np.unique(lam_y).size > 1
    check(C, M, lam_y, w, calm_between=(0.2, 0.99))
    w_eq = np.full(T, 1.3)
    check(C, M, learner.lam / w_eq, w_eq, calm_between=(0.2, 0.99))


@pytest.mark.parametrize("T", [3, 10])
def test_many_groups_and_extreme_weights(T):
    """G = T distinct weights (every class its own group), weights 1e-3 .. 1e3."""
    C, M, _, _, learner = arls_state(T, seed=5 + T, width=0.4)
    rng = np.random.default_rng(T)
    for w in (rng.uniform(0.2, 5.0, T), 10.0 ** rng.uniform(-3.0, 3.0, T),
              np.where(np.arange(T) % 2 == 0, 1e-3, 1e3)):
        check(C, M, learner.lam / w, w, calm_between=(0.05, 0.999))


@pytest.mark.parametrize("T", [3, 4, 10])
def test_clipped_outputs_lines_above_one_and_uniform_rows(T):
    """Outputs far outside [-1, 1]: calm points with lines clipped at 0 and at 1 (the masked
    sums skip them), rows with every column below -1 (never calm: uniform fallback), outputs
    exactly on +1 and on 0."""
    C, M, lam_y, w, _ = arls_state(T, seed=10 + T, width=0.4)
    F = rescaled_outputs(M, seed=T)
    frac = check(C, F, lam_y, w, calm_between=(0.05, 0.999))
    data = prepare(np.ascontiguousarray(F.T), lam_y, 1.0 / w, min_run=1)
    lin = data.run_lin
    assert np.any(lin == 0.0) and np.any(lin == 1.0)  # calm patterns with clipped lines
    assert frac > 0


@pytest.mark.parametrize("T", [3, 10])
def test_ties_and_outputs_on_a_clip_bound_are_never_calm(T):
    """Exact ties at the top, near-ties within rounding, outputs exactly on or within rounding
    of -1 and +1: such points take the O(T) kernel (whose conventions are the reference's).

    Ties are made by duplicating a whole column (as in tests/test_risk_weighted_kernel.py): a
    tie or near-tie at some points only is broken by the candidate's step in the oracle's own
    rounding (two lines that cross within rounding of a point), so near-ties are only checked
    to be excluded from the calm path. (Width 1: with a narrower kernel many steps are within
    rounding of the outputs, where even the duplicated columns' order after the step ``+2 s``
    is decided by the oracle's rounding, for the O(T) kernel as for this one.)"""
    C, M, lam_y, w, _ = arls_state(T, seed=20 + T, width=1.0)
    n = M.shape[0]
    F = M.copy()
    F[:, 1] = F[:, 0]  # duplicated column: a tie at the top wherever column 0 is the top
    tie = np.flatnonzero(F.argmax(axis=1) == 0)
    on_one = np.setdiff1d(np.arange(2, n, 5), tie)
    below = np.setdiff1d(np.arange(4, n, 9), np.r_[tie, on_one])
    F[on_one, 2 % T] = 1.0
    F[below, 2 % T] = -1.0 - 1e-15
    data = prepare(np.ascontiguousarray(F.T), lam_y, 1.0 / w, min_run=1)
    assert tie.size and on_one.size and below.size
    assert set(np.r_[tie, on_one, below].tolist()) <= set(data.never.tolist())
    check(C, F, lam_y, w, calm_between=(0.05, 0.99))
    cand = np.setdiff1d(np.arange(n), np.r_[on_one, below])
    check(C, F, lam_y, w, cand=cand)
    # top two within rounding of each other: never calm
    near = np.arange(1, n, 7)
    G = M.copy()
    G[near, 0] = G[near].max(axis=1) + 1e-15
    G[near, 1] = G[near, 0] - 2e-15
    assert set(near.tolist()) <= set(prepare(np.ascontiguousarray(G.T), lam_y, 1.0 / w, min_run=1).never.tolist())


def test_candidates_with_zero_covariance_rows():
    """c = 0 for every z != i: every point with a margin is calm, whatever the candidate."""
    T = 4
    C, M, lam_y, w, _ = arls_state(T, seed=40, width=1.0)
    C = C.copy()
    for i in (2, 17):
        diag = C[i, i]
        C[i, :] = 0.0
        C[:, i] = 0.0
        C[i, i] = diag if i == 2 else 0.0
    check(C, M, lam_y, w)
    n_e = prepare(np.ascontiguousarray(M.T), lam_y, 1.0 / w, min_run=1).perm.size
    _, n_calm = run(C, [2, 17], [2, 17], M, lam_y, w, 0.0)
    assert n_calm[1] == n_e  # C_ii = 0 too: no step anywhere
    assert n_calm[0] >= n_e - 1  # only the candidate itself may move


def test_a_subset_of_candidates_in_any_order():
    C, M, lam_y, w, _ = arls_state(4, seed=50, width=0.4)
    check(C, M, lam_y, w, cand=np.array([17, 3, 88, 3, 0, 45]))


def test_switch_uses_the_calm_path_only_above_the_threshold():
    """A candidate whose calm fraction is below min_calm is scored by the O(T) kernels over all
    points: the numbers are the same either way, only n_calm tells them apart."""
    C, M, lam_y, w, _ = arls_state(4, seed=60, width=1.0)
    cand = np.arange(C.shape[0])
    _, n_calm = run(C, cand, cand, M, lam_y, w, 0.0)
    frac = n_calm / C.shape[0]
    assert frac.min() < 0.7 < frac.max()
    a, _ = run(C, cand, cand, M, lam_y, w, 0.7)
    b, _ = run(C, cand, cand, M, lam_y, w, 2.0)
    c, _ = run(C, cand, cand, M, lam_y, w, 0.0)
    np.testing.assert_allclose(a, b, rtol=1e-13)
    np.testing.assert_allclose(a, c, rtol=1e-13)
    assert 0.0 < calm_fraction(C, cand, cand, np.ascontiguousarray(M.T), lam_y, 1.0 / w, min_run=1) < 1.0


def test_the_learner_shares_one_prepare_between_blocks(monkeypatch):
    """A factor posterior hands the criterion several blocks of rows; the per-point data is
    computed once per scoring call and the scores equal the oracle."""
    rng = np.random.default_rng(3)
    T = 5
    X = rng.uniform(-3, 3, (80, 2))
    Phi = np.exp(-((X[:, None, :] - rng.uniform(-3, 3, (30, 2))[None]) ** 2).sum(-1))
    learner = ActiveRLS.from_factor(Phi, classes=list(range(T)), lam=0.1, weighting="balanced")
    learner.add_many(list(range(0, 40, 4)), [t % T for t in range(10)])
    calls = []
    real = calm_mod.prepare

    def spy(*args):
        calls.append(True)
        return real(*args)

    monkeypatch.setattr(calm_mod, "prepare", spy)
    post = learner.posterior
    orig = post.candidate_blocks
    monkeypatch.setattr(post, "candidate_blocks", lambda cand, max_bytes=0: orig(cand, max_bytes=8 * 80 * 7))
    E = learner.expected_risk()
    assert len(calls) == 1
    unl = learner.unlabeled_indices
    C = learner.posterior_covariance()
    M = learner.decision_values
    w = np.array(list(learner.class_weights.values()))
    assert_close(E[unl], expected_risk_reference(C, M, unl, learner.hypothetical_lambdas(), w), C, M, unl,
                 learner.hypothetical_lambdas(), w)


def test_localised_kernel_on_a_learner_matches_refits():
    """End to end on a learner with a narrow RBF (most pairs calm), "balanced" weights."""
    rng = np.random.default_rng(7)
    T = 6
    centres = rng.uniform(-4, 4, (T, 2))
    y = rng.integers(T, size=150)
    X = centres[y] + 0.7 * rng.standard_normal((150, 2))
    learner = ActiveRLS.from_features(X, classes=list(range(T)), kernel=Kernel("rbf", width=0.5), lam=0.1,
                                      weighting="balanced")
    idx = [int(np.flatnonzero(y == t)[0]) for t in range(T)] + list(range(100, 130))
    learner.add_many(idx, [int(y[i]) for i in idx])
    C = learner.posterior_covariance()
    M = learner.decision_values
    w = np.array(list(learner.class_weights.values()))
    lam_y = learner.hypothetical_lambdas()
    unl = learner.unlabeled_indices
    assert calm_fraction(C, unl, unl, np.ascontiguousarray(M.T), lam_y, 1.0 / w) > 0.5
    assert_close(learner.expected_risk()[unl], expected_risk_reference(C, M, unl, lam_y, w), C, M, unl, lam_y, w)


# ---------------------------------------------------------------------------------------
# property test: random PSD C of any scale, outputs on a grid and off it, weights in groups


@st.composite
def problems(draw):
    T = draw(st.integers(2, 7))
    n = draw(st.integers(3, 45))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, draw(st.integers(1, 6))))
    C = A @ A.T * draw(st.sampled_from([1e-4, 0.01, 0.5, 3.0]))  # small scales: many calm pairs
    if draw(st.booleans()):
        zero = rng.choice(n, size=max(1, n // 4), replace=False)
        C[zero, :] = 0.0
        C[:, zero] = 0.0
        C[zero, zero] = rng.uniform(0.0, 1.0, zero.size)
    if draw(st.booleans()):
        M = _GRID[rng.integers(_GRID.size, size=(n, T))]
    else:
        M = rng.uniform(-2.0, 2.0, size=(n, T))
    top = M.max(axis=1)
    M[top == -1.0, 0] = -0.75  # as in tests/test_risk_weighted_kernel.py
    M_cand = rng.choice([-0.75, -0.5, 0.0, 0.25, 0.5], size=(n, T))
    w = rng.choice(draw(st.sampled_from([[1.0], [0.5, 2.0], [1e-3, 1.0, 1e3], [0.3, 0.7, 1.1, 4.0]])), size=T)
    lam = draw(st.sampled_from([1e-2, 0.1, 1.0]))
    return C, M, M_cand, w, lam


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems())
def test_property_calm_path_matches_reference(problem):
    C, M, M_cand, w, lam = problem
    n, T = M.shape
    lam_y = lam / w
    for i in range(n):
        F = M.copy()
        F[i] = M_cand[i]
        cand = np.array([i])
        ref = expected_risk_reference(C, F, cand, lam_y, w)
        got, _ = run(C, cand, cand, F, lam_y, w, 0.0)
        assert_close(got, ref, C, F, cand, lam_y, w)
