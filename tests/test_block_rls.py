"""The labelled-block RLS candidate (core/selection/block_rls.py) against the full learner: the
same leave-one-out outputs as a dense ActiveRLS given the same labels and settings (to rounding),
so the same 0/1 LOO losses, through adds, removals, relabels, new classes and changes of width,
lam and class weights."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_blobs

from core.kernels import Kernel
from core.learner import ActiveRLS
from core.selection.block_rls import LabelledBlockRLS
from core.selection.loo import loo_losses


def _pool(n_classes, seed=0):
    X, y = make_blobs(240, centers=n_classes, cluster_std=2.5, random_state=seed)
    return X.astype(np.float64), [f"c{v}" for v in y]


def _same(block, full, atol=1e-11):
    assert block.labels == full.labels and block.classes == full.classes
    assert block.class_weights == pytest.approx(full.class_weights, rel=1e-15)
    F, G = block.loo_decision_values(), full.loo_decision_values()
    assert F.shape == G.shape
    np.testing.assert_allclose(F, G, rtol=0, atol=atol * max(1.0, np.abs(G).max()))
    np.testing.assert_array_equal(loo_losses(block), loo_losses(full))
    np.testing.assert_allclose(block.decision_values, full.decision_values, rtol=0, atol=1e-9)


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("weighting", ["none", "balanced", "evident", "dict"])
def test_loo_of_the_labelled_block_is_the_full_learner_s(n_classes, weighting):
    X, y = _pool(n_classes)
    classes = sorted(set(y))
    if weighting == "dict":
        weighting = {c: 1.0 + k for k, c in enumerate(classes)}
    kernel = Kernel("rbf", width=2.0)
    full = ActiveRLS.from_features(X, classes, kernel=kernel, lam=0.05, weighting=weighting)
    block = LabelledBlockRLS(X, classes, kernel, lam=0.05, weighting=weighting)
    rng = np.random.default_rng(n_classes)
    order = rng.permutation(len(y))
    first = [int(i) for i in order[:12]]
    for learner in (full, block):
        learner.add_many(first, [y[i] for i in first])
    _same(block, full)
    for i in order[12:40]:
        full.add(int(i), y[i])
        block.add(int(i), y[i])
    _same(block, full)
    gone = [int(i) for i in order[5:9]]
    full.remove_many(gone)
    block.remove_many(gone)
    full.remove(int(order[20]))
    block.remove(int(order[20]))
    j = int(order[30])
    other = next(c for c in classes if c != y[j])
    full.relabel(j, other)
    block.relabel(j, other)
    _same(block, full)
    for params in ({"kernel": Kernel("rbf", width=0.7)}, {"lam": 0.3}, {"kernel": Kernel("rbf", width=5.0), "lam": 0.01}):
        full.set_params(**params)
        block.set_params(**params)
        assert block.get_params()["lam"] == full.get_params()["lam"]
        assert block.get_params()["kernel"] == full.get_params()["kernel"]
        _same(block, full)


def test_a_new_class_and_no_labels():
    X, y = _pool(2, seed=1)
    kernel = Kernel("rbf", width=1.5)
    full = ActiveRLS.from_features(X, ["c0", "c1"], kernel=kernel, lam=0.1, weighting="balanced")
    block = LabelledBlockRLS(X, ["c0", "c1"], kernel, lam=0.1, weighting="balanced")
    assert block.loo_decision_values().shape == (0, 1) and block.n_labeled == 0
    idx = list(range(0, 60, 3))
    for learner in (full, block):
        learner.add_many(idx, [y[i] for i in idx])
        learner.add_class("c2")
        learner.add_many([1, 2], ["c2", "c2"])
    _same(block, full)


def test_bad_input_is_refused_with_the_learner_unchanged():
    X, y = _pool(2)
    block = LabelledBlockRLS(X, ["c0", "c1"], Kernel("rbf", width=1.0), lam=0.1)
    block.add_many([0, 1], [y[0], y[1]])
    with pytest.raises(ValueError, match="lam"):
        block.set_params(kernel=Kernel("rbf", width=2.0), lam=-1.0)
    assert block.get_params()["kernel"].width == 1.0 and block.lam == 0.1
    with pytest.raises(ValueError, match="already labelled"):
        block.add(0, "c0")
    with pytest.raises(ValueError, match="not one of the classes"):
        block.add(5, "c9")
    assert block.labels == {0: y[0], 1: y[1]}
    with pytest.raises(ValueError, match="labelled-block"):
        block.require("expected_risk", "the arls strategy")


def test_one_label_gets_the_prior_and_a_lone_label_the_small_output_of_a_refit():
    """One label alone: the model without it is the prior, 0 exactly. A label whose kernel values
    to the others are about 1e-20: its LOO output is the refit's on the other labels to relative
    precision, not the rounding error of y_j minus almost y_j."""
    X = np.array([[0.0], [9.6], [9.7], [9.9], [30.0]])
    kernel = Kernel("rbf", width=1.0)
    block = LabelledBlockRLS(X, ["a", "b"], kernel, lam=0.1)
    block.add(0, "b")
    assert block.loo_decision_values()[0, 0] == 0.0
    block.add_many([1, 2, 3], ["a", "b", "b"])
    F = block.loo_decision_values()[:, 0]
    rest = X[1:4]
    y = np.array([-1.0, 1.0, 1.0])
    refit = kernel(X[:1], rest) @ np.linalg.solve(kernel(rest, rest) + 0.1 * np.eye(3), y)
    assert 1e-25 < abs(refit[0]) < 1e-15
    assert F[0] == pytest.approx(refit[0], rel=1e-6)


def test_an_output_within_rounding_of_a_tie_is_the_tie():
    """Rounding never decides a LOO loss: outputs within TIE_TOLERANCE of a tie are the tie,
    broken as an exact one (binary: classes[0]; one-vs-all: the lowest index); beyond it, the
    predicted class is the plain one."""
    from core.criteria.risk import predicted_class_indices
    from core.selection.loo import TIE_TOLERANCE, loo_predicted_classes

    tiny = TIE_TOLERANCE / 10
    binary = np.array([[tiny], [-tiny], [0.0], [3 * TIE_TOLERANCE], [-0.2]])
    assert loo_predicted_classes(binary).tolist() == [0, 0, 0, 1, 0]
    multi = np.array([[0.2, 0.2 + tiny, -1.0], [-1.0, 0.5, 0.5 - tiny], [0.1, 0.1 + 3 * TIE_TOLERANCE, 0.0]])
    assert loo_predicted_classes(multi).tolist() == [0, 1, 1]
    rng = np.random.default_rng(0)
    for F in (rng.normal(size=(50, 1)), rng.normal(size=(50, 4))):  # no tie: the plain prediction
        np.testing.assert_array_equal(loo_predicted_classes(F), predicted_class_indices(F))
