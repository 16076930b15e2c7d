"""PoissonLearner: the Learner laws of tests/test_learner_conformance.py run on it, its outputs
against a direct PoissonLearning fit, exact LOO against refits, and the variance criterion."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

pytest.importorskip("core.learner.base", reason="the Learner protocol (core/learner/base.py) is not in this checkout")

from core.graph.poisson import PoissonLearning  # noqa: E402
from core.graph.poisson_learner import PoissonLearner, VarianceCriterion  # noqa: E402
from core.graph.variance import variance_reduction  # noqa: E402
from core.kernels import knn_graph  # noqa: E402
from core.strategies import scores  # noqa: E402

conformance = pytest.importorskip("test_learner_conformance")
# every law of the conformance suite, collected here with this module's ``build`` fixture
globals().update({name: law for name, law in vars(conformance).items() if name.startswith("test_")})
_pool, _labels = conformance._pool, conformance._labels


@pytest.fixture
def build():
    return lambda X, classes, seed: PoissonLearner(knn_graph(X, 6, seed=seed), classes, random_state=seed)


def _fitted(class_mass=False):
    X, _ = _pool()
    classes = ["a", "b", "c"]
    idx, labs = _labels(classes)
    W = knn_graph(X, 6)
    return W, idx, labs, PoissonLearner(W, classes, class_mass=class_mass).add_many(idx, labs)


@pytest.mark.parametrize("class_mass", [False, True])
def test_outputs_are_the_poisson_solution_shown_as_probabilities(class_mass):
    W, idx, labs, learner = _fitted(class_mass)
    direct = PoissonLearning(solver="direct", class_sizes="uniform" if class_mass else None)
    direct.fit(W, idx, [["a", "b", "c"].index(v) for v in labs], classes=[0, 1, 2])
    assert_allclose(learner.raw_values, direct.decision_values_, atol=1e-8)
    assert_array_equal(learner.predict(), np.array(["a", "b", "c"], dtype=object)[direct.predict_indices()])
    P = learner.proba()
    assert_allclose(P.sum(1), 1.0) and (P >= 0).all()


def test_loo_predictions_equal_refits_without_each_label():
    W, idx, labs, learner = _fitted()
    loo = learner.loo_decision_values()
    assert loo.shape == (len(idx), 3)
    for k, i in enumerate(idx):
        rest = [j for j in idx if j != i]
        refit = PoissonLearner(W, ["a", "b", "c"]).add_many(rest, [labs[idx.index(j)] for j in rest])
        assert np.argmax(loo[k]) == np.argmax(refit.decision_values[i])


def test_arls_is_refused_and_the_variance_criterion_scores_vopt():
    W, idx, labs, learner = _fitted()
    with pytest.raises(ValueError, match="does not apply to the poisson model.*margin"):
        scores(learner, "arls")
    cand = learner.unlabeled_indices[:10]
    got = learner.score(learner.variance_criterion(), cand)
    field = learner.spectral_field()
    assert_allclose(got, -variance_reduction(field.eigenvalues, field.eigenvectors, idx, cand))
    with pytest.raises(ValueError, match="criterion must be"):
        VarianceCriterion("entropy")
