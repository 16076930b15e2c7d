"""Lower bounds of the one-vs-all expected risk and the pick they prune (core.criteria._expected_risk_bound).

The bound must never exceed the oracle (:func:`core.criteria.risk.expected_risk_reference`,
one explicit refit per candidate and label), whatever the outputs: real ARLS states, outputs
crowded around the clip bound -1 (few calm points), outputs far outside [-1, 1] with uniform
fallbacks and exact ties, any class weights and several T. ``ExpectedRisk.score_to_pick``
must then give the same minimum and the same tied set as the exact scores, with exact values
wherever a candidate is not pruned, and ``query_one`` the same point as from the whole-pool
exact scores.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from core.criteria import ExpectedRisk
from core.criteria import expected_risk as er
from core.criteria._expected_risk_bound import risk_lower_bounds
from core.criteria.base import ScoringState
from core.criteria.risk import expected_risk_reference
from core.kernels import Kernel
from core.learner import ActiveRLS
from core.strategies import TIE_RTOL, query_one
from test_risk_weighted_kernel import arls_state, rescaled_outputs


def bounds(C, M, lam_y, w, cand):
    out = np.full(len(cand), np.nan)
    cand = np.asarray(cand, dtype=np.int64)
    risk_lower_bounds(np.ascontiguousarray(C), cand, cand, np.ascontiguousarray(np.asarray(M).T),
                      np.asarray(lam_y, dtype=np.float64), 1.0 / np.asarray(w, dtype=np.float64), out)
    return out


def crowded(M, seed):
    """Every line near the clip bound -1, one informative column, a few exact ties."""
    rng = np.random.default_rng(seed)
    F = -1.0 + 0.3 * rng.standard_normal(M.shape)
    F[:, 0] += 0.4 * M[:, 0]
    F[::9, 1] = F[::9, 2]
    return F


def weight_sets(learner, lam_y, T, seed):
    rng = np.random.default_rng(seed)
    yield lam_y, learner.lam / lam_y  # "balanced"
    w = 10.0 ** rng.uniform(-1.0, 1.0, T)
    yield learner.lam / w, w  # all distinct
    w = np.where(np.arange(T) % 2 == 0, 1e-3, 1e3)
    yield learner.lam / w, w  # extreme


def assert_bounded(C, F, lam_y, w):
    cand = np.arange(C.shape[0])
    ref = expected_risk_reference(C, F, cand, lam_y, w)
    lb = bounds(C, F, lam_y, w, cand)
    assert np.all(np.isfinite(lb))
    assert np.all(lb <= ref * (1 + 1e-12) + 1e-12), f"bound above the exact score by {np.max(lb - ref):.3g}"
    return lb, ref


@pytest.mark.parametrize("T", [3, 4, 10])
@pytest.mark.parametrize("width", [0.5, 6.0])
def test_bound_never_exceeds_the_oracle(T, width):
    C, M, lam_y, _, learner = arls_state(T, seed=70 + T, n=120, n_labels=3 * T, width=width)
    for k, (lam_w, w) in enumerate(weight_sets(learner, lam_y, T, T)):
        for F in (M, crowded(M, T + k), rescaled_outputs(M, T + k)):
            assert_bounded(C, F, lam_w, w)


def test_bound_is_informative_on_real_states():
    """Not a trivial bound (such as 0): within a factor of the exact score on a real state."""
    C, M, lam_y, w, _ = arls_state(10, seed=3, n=150, n_labels=30, width=1.0)
    lb, ref = assert_bounded(C, M, lam_y, w)
    assert np.median(lb / ref) > 0.5


def pick_problem(T, seed, outputs):
    C, M, lam_y, w, learner = arls_state(T, seed=seed, n=260, n_labels=3 * T, width=1.0)
    F = {"real": M, "crowded": crowded(M, seed), "rescaled": rescaled_outputs(M, seed)}[outputs]
    return C, F, lam_y, w, learner


@pytest.mark.parametrize("T", [4, 10])
@pytest.mark.parametrize("outputs", ["real", "crowded", "rescaled"])
@pytest.mark.parametrize("weights", ["balanced", "distinct"])
def test_score_to_pick_keeps_the_minimum_and_its_ties(T, outputs, weights):
    C, F, lam_y, w, learner = pick_problem(T, 80 + T, outputs)
    if weights == "distinct":
        w = 10.0 ** np.random.default_rng(T).uniform(-1.0, 1.0, T)
        lam_y = learner.lam / w
    state = ScoringState(np.ascontiguousarray(F.T), lam_y, w)
    cand = np.arange(C.shape[0] - 20, dtype=np.int64)[::-1].copy()  # a subset, in any order
    exact = ExpectedRisk().score(state, learner.posterior, cand)
    ref = expected_risk_reference(C, F, cand, lam_y, w)
    assert_allclose(exact, ref, rtol=1e-9)
    picked = ExpectedRisk().score_to_pick(state, learner.posterior, cand, TIE_RTOL)
    best = exact.min()
    assert picked.min() == best
    thr = best + TIE_RTOL * abs(best)
    assert_array_equal(np.flatnonzero(picked <= thr), np.flatnonzero(exact <= thr))
    scored = picked == exact
    assert np.all(picked[~scored] <= exact[~scored] * (1 + 1e-12))  # bounds below the exact value
    assert np.all(picked[~scored] > thr)
    if outputs == "real":
        assert (~scored).mean() > 0.3, "the bound pruned too few candidates: the test misses the path"


def test_ties_within_the_tolerance_are_all_scored():
    """Duplicated points give candidates with the same exact score: all of them stay exact."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((200, 2))
    X[100:110] = X[5]  # ten copies of one point
    y = (X[:, 0] > 0).astype(int) + 2 * (X[:, 1] > 0).astype(int)
    learner = ActiveRLS.from_features(X, classes=list(range(4)), kernel=Kernel("rbf", width=1.0), lam=0.1,
                                      weighting="balanced")
    idx = [int(np.flatnonzero(y == c)[0]) for c in range(4)] + [30, 31, 32, 40, 41]
    learner.add_many(idx, [int(y[i]) for i in idx])
    state = learner.scoring_state()
    cand = learner.unlabeled_indices
    exact = ExpectedRisk().score(state, learner.posterior, cand)
    picked = ExpectedRisk().score_to_pick(state, learner.posterior, cand, 1e-6)
    thr = exact.min() + 1e-6 * abs(exact.min())
    assert_array_equal(np.flatnonzero(picked <= thr), np.flatnonzero(exact <= thr))


@pytest.mark.parametrize("T", [2, 5])
@pytest.mark.parametrize("weighting", [None, "balanced"])
def test_query_one_picks_as_the_exact_scores(T, weighting):
    rng = np.random.default_rng(T)
    X = rng.standard_normal((400, 3))
    y = rng.integers(T, size=400)
    X += 1.5 * np.eye(3)[y % 3] + 0.3 * y[:, None]
    kw = {} if weighting is None else {"weighting": weighting}
    learner = ActiveRLS.from_features(X, classes=list(range(T)), kernel=Kernel("rbf", width=1.5), lam=0.1,
                                      random_state=0, **kw)
    idx = [int(np.flatnonzero(y == c)[0]) for c in range(T)] + list(range(20, 20 + 3 * T))
    learner.add_many(idx, [int(y[i]) for i in idx])
    for _ in range(3):
        pick = query_one(learner, "arls", rng=7)
        E = learner.expected_risk()  # whole-pool exact scores
        unl = learner.unlabeled_indices
        tied = unl[E[unl] <= E[unl].min() + TIE_RTOL * abs(E[unl].min())]
        assert pick in tied
        if tied.size == 1:
            assert pick == tied[0]
        learner.add(pick, int(y[pick]))


def test_falls_back_to_exact_scores_where_it_cannot_prune(monkeypatch):
    """Equal weights, few candidates and the numpy backend: the exact scores themselves."""
    C, M, lam_y, w, learner = arls_state(4, seed=2, n=120, n_labels=12, width=1.0)
    cand = np.arange(100, dtype=np.int64)
    w_eq = np.full(4, 1.3)
    state = ScoringState(np.ascontiguousarray(M.T), learner.lam / w_eq, w_eq)
    crit = ExpectedRisk()
    assert_array_equal(crit.score_to_pick(state, learner.posterior, cand), crit.score(state, learner.posterior, cand))
    state = ScoringState(np.ascontiguousarray(M.T), lam_y, w)
    assert_array_equal(crit.score_to_pick(state, learner.posterior, cand[:er.PRUNE_MIN_CANDIDATES - 1]),
                       crit.score(state, learner.posterior, cand[:er.PRUNE_MIN_CANDIDATES - 1]))
    slow = ExpectedRisk("numpy")
    assert_array_equal(slow.score_to_pick(state, learner.posterior, cand), slow.score(state, learner.posterior, cand))
