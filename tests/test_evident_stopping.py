"""The stopping signal under the "evident" class weights: it says "likely enough" only when the
predictions also hold with the weights "balanced" would give (labeler.session.stopping)."""

from __future__ import annotations

import numpy as np
import pytest

from core.criteria.risk import predicted_class_indices
from core.kernels import Kernel
from core.learner import ActiveRLS
from labeler.session.stopping import KEEP_GOING, LIKELY_ENOUGH, StoppingMonitor, cohen_kappa, reweighted_codes


def _stable_monitor(codes):
    m = StoppingMonitor(codes.size, spacing=5, window=3, threshold=0.99)
    for n in (5, 10, 15, 20):
        m.record(n, codes)
    return m


def test_stable_predictions_are_not_enough_while_the_balanced_weights_change_them():
    codes = np.zeros(1000, dtype=np.int32)
    codes[:300] = 1
    m = _stable_monitor(codes)
    assert m.signal(20, codes).verdict == LIKELY_ENOUGH
    assert m.signal(20, codes, reweighted=codes.copy()).verdict == LIKELY_ENOUGH  # the same predictions
    other = codes.copy()
    other[300:350] = 1  # 5 % of the pool goes to the smaller class under balanced weights
    assert cohen_kappa(codes, other) < 0.99
    sig = m.signal(20, codes, reweighted=other)
    assert sig.verdict == KEEP_GOING and sig.mean_kappa == 1.0
    assert "5.0 % of them change" in sig.message
    one = codes.copy()
    one[300] = 1  # one point of 1,000: kappa >= 0.99, agreement
    assert cohen_kappa(codes, one) >= 0.99 and m.signal(20, codes, reweighted=one).verdict == LIKELY_ENOUGH


def _learner(weighting, labels, X):
    learner = ActiveRLS.from_features(X, classes=["a", "b"], kernel=Kernel("rbf", width=1.0), lam=0.3,
                                      weighting=weighting)
    for i, c in labels:
        learner.add(i, c)
    return learner


@pytest.mark.parametrize("n_b, fires", [(5, False), (1, True)])
def test_reweighted_codes_are_the_balanced_learners_predictions(n_b, fires):
    """Under "evident": the predictions of a learner built with "balanced" weights (the same
    as its own once imbalance is evident); None for any other weighting."""
    rng = np.random.default_rng(4)
    X = rng.standard_normal((80, 2))
    labels = [(i, "a") for i in range(10)] + [(10 + i, "b") for i in range(n_b)]
    evident = _learner("evident", labels, X)
    balanced = _learner("balanced", labels, X)
    want = predicted_class_indices(balanced.decision_values)
    np.testing.assert_array_equal(reweighted_codes(evident), want)
    if fires:  # 10 : 1 is evident: its own weights are balanced already
        np.testing.assert_array_equal(reweighted_codes(evident), predicted_class_indices(evident.decision_values))
    assert reweighted_codes(balanced) is None and reweighted_codes(_learner("none", labels, X)) is None
    assert reweighted_codes(object()) is None  # a graph model has no class weights
