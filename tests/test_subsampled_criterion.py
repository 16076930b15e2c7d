"""Expected risk on a candidate subset and a pool subsample (the scale criterion)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from arls_oracle import build_learner
from core.criteria.subsampled import SubsampledExpectedRisk
from core.kernels import Kernel


def learner_with_labels(posterior, classes, weighting, n=150, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2)) * 2
    learner = build_learner(posterior, X, kernel=Kernel("rbf", width=1.0), classes=classes, lam=0.1,
                            weighting=weighting)
    idx = rng.choice(n, 12, replace=False)
    learner.add_many(idx, [classes[i % len(classes)] for i in range(12)])
    return learner


@pytest.mark.parametrize("classes, weighting", [([0, 1], "balanced"), (["a", "b", "c"], "balanced")])
def test_with_every_point_and_candidate_it_is_the_exact_expected_risk(posterior, classes, weighting):
    learner = learner_with_labels(posterior, classes, weighting)
    crit = SubsampledExpectedRisk(n_uncertain=10_000, n_random=0, n_points=10_000)
    unl = learner.unlabeled_indices
    assert_allclose(learner.score(crit, unl), learner.expected_risk(candidates=unl), rtol=1e-12)


def test_subsample_scores_the_chosen_candidates_and_ranks_like_the_exact_score(posterior):
    learner = learner_with_labels(posterior, [0, 1], "balanced", n=400, seed=2)
    unl = learner.unlabeled_indices
    crit = SubsampledExpectedRisk(n_uncertain=40, n_random=40, n_points=200, seed=1)
    est = learner.score(crit, unl)
    scored = np.isfinite(est)
    assert scored.sum() == 80
    exact = learner.expected_risk(candidates=unl)
    # an unbiased-scale estimate of the same sum: close in value, and strongly rank-correlated
    assert np.median(np.abs(est[scored] / exact[scored] - 1)) < 0.2
    rank = lambda v: np.argsort(np.argsort(v))  # noqa: E731
    assert np.corrcoef(rank(est[scored]), rank(exact[scored]))[0, 1] > 0.8
    # the same query twice draws the same subsets (reproducible)
    assert_allclose(learner.score(crit, unl), est)


def test_bad_sizes_are_named():
    with pytest.raises(ValueError, match="n_points"):
        SubsampledExpectedRisk(n_points=-1)
    with pytest.raises(ValueError, match="at least one candidate"):
        SubsampledExpectedRisk(n_uncertain=0, n_random=0)


def test_the_public_setter_changes_what_expected_risk_and_the_arls_strategy_score(posterior):
    from core.criteria import ExpectedRisk
    from core.strategies import scores

    learner = learner_with_labels(posterior, [0, 1], "balanced", n=300, seed=3)
    exact = learner.expected_risk()  # cached now: the setter must drop the cache
    assert isinstance(learner.risk_criterion, ExpectedRisk)
    crit = SubsampledExpectedRisk(n_uncertain=20, n_random=20, n_points=100, seed=4)
    assert learner.set_risk_criterion(crit) is learner and learner.risk_criterion is crit
    approx = learner.expected_risk()
    assert np.isfinite(approx).sum() == 40 and not np.allclose(approx, exact)
    unl = learner.unlabeled_indices
    assert_allclose(approx[unl], learner.score(crit, unl))
    assert_allclose(scores(learner, "arls"), approx)
    learner.set_risk_criterion(None)  # back to the exact default
    assert_allclose(learner.expected_risk(), exact, rtol=1e-12)


def test_the_setter_refuses_what_is_not_a_criterion(posterior):
    learner = learner_with_labels(posterior, [0, 1], "balanced")
    before = learner.risk_criterion
    with pytest.raises(TypeError, match="core.criteria.Criterion.*Pass None"):
        learner.set_risk_criterion("arls")
    assert learner.risk_criterion is before


def test_smallest_stable_is_the_head_of_the_stable_argsort():
    from core.criteria.subsampled import smallest_stable

    rng = np.random.default_rng(5)
    for values in (rng.standard_normal(5000), rng.integers(0, 7, 5000).astype(float),  # many ties
                   np.r_[rng.standard_normal(50), np.full(20, np.nan)]):
        for k in (0, 1, 3, 40, 60, values.size - 1, values.size, values.size + 3):
            assert np.array_equal(smallest_stable(values, k), np.argsort(values, kind="stable")[:max(k, 0)])


def test_the_candidates_are_those_of_the_slow_obvious_choice():
    """choose() against a full stable argsort of the margins (the rest drawn from in pool order)."""
    from core.criteria.base import ScoringState
    from core.criteria.simple import margins

    rng = np.random.default_rng(6)
    n = 3000
    for T in (1, 3):
        outputs = np.round(rng.standard_normal((T, n)), 2)  # rounded: ties among the margins
        state = ScoringState(outputs, np.ones(max(T, 2)), np.ones(max(T, 2)))
        cand = np.sort(rng.choice(n, 2500, replace=False))
        crit = SubsampledExpectedRisk(n_uncertain=70, n_random=90, n_points=500, seed=2)
        fast = crit.choose(state, cand, np.random.default_rng(11))
        order = np.argsort(margins(outputs[:, cand]), kind="stable")
        rest = np.sort(order[70:])
        extra = np.random.default_rng(11).choice(rest, size=90, replace=False)
        assert np.array_equal(fast, np.sort(cand[np.concatenate([order[:70], extra])]))
