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
