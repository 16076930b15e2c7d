"""ActiveRLS.rename_class: names change, nothing else (oracle: the same learner built with the
new names from the start, and a direct solve)."""

from __future__ import annotations

import numpy as np
import pytest

from arls_oracle import build_learner, direct_solve, expected_class_weights
from core.kernels import Kernel


def pool(n=40, seed=0):
    return np.random.default_rng(seed).normal(size=(n, 2))


def labelled(posterior, classes, weighting, steps):
    lr = build_learner(posterior, pool(), classes=list(classes), lam=0.2, weighting=weighting)
    for i, c in steps:
        lr.add(i, c)
    return lr


@pytest.mark.parametrize("classes, renamed", [
    (["a", "b"], ["a", "B2"]),
    (["a", "b", "c"], ["A", "b", "c"]),
])
@pytest.mark.parametrize("weighting", ["none", "balanced", "dict"])
def test_rename_equals_a_learner_built_with_the_new_names(posterior, classes, renamed, weighting):
    steps = [(3, classes[0]), (7, classes[1]), (11, classes[-1]), (2, classes[0]), (20, classes[1])]
    old, new = next((o, n) for o, n in zip(classes, renamed) if o != n)
    w_old = {c: 1.0 + k for k, c in enumerate(classes)} if weighting == "dict" else weighting
    w_new = {c: 1.0 + k for k, c in enumerate(renamed)} if weighting == "dict" else weighting
    lr = labelled(posterior, classes, w_old, steps)
    lr.rename_class(old, new)
    fresh = labelled(posterior, renamed, w_new, [(i, renamed[classes.index(c)]) for i, c in steps])
    assert lr.classes == renamed and lr.labels == fresh.labels
    assert list(lr.labels) == [i for i, _ in steps]  # labelling order kept
    assert lr.class_weights == fresh.class_weights and lr.weighting == fresh.weighting
    np.testing.assert_array_equal(lr.decision_values, fresh.decision_values)
    assert lr.predict().tolist() == fresh.predict().tolist()
    # and it keeps learning under the new name: relabel, add, remove agree with a direct solve
    lr.relabel(3, new)
    lr.add(30, new)
    lr.remove(7)
    labels = lr.labels
    K = Kernel("rbf", width=1.0)(pool())
    weights = expected_class_weights(labels, renamed, w_new)
    m, _ = direct_solve(K, labels, renamed, 0.2, weights)
    np.testing.assert_allclose(lr.decision_values, m, rtol=0, atol=1e-10)


@pytest.mark.parametrize("old, new, match", [
    ("zz", "x", "not one of the classes"),
    ("a", "b", "already exists"),
    ("a", ["x"], "not hashable"),
])
def test_bad_rename_leaves_the_learner_unchanged(old, new, match):
    lr = labelled("dense", ["a", "b", "c"], {"a": 2.0, "b": 1.0, "c": 1.0}, [(1, "a"), (2, "b")])
    before = (lr.classes, lr.labels, lr.weighting, lr.decision_values)
    with pytest.raises(ValueError, match=match):
        lr.rename_class(old, new)
    assert (lr.classes, lr.labels, lr.weighting) == before[:3]
    np.testing.assert_array_equal(lr.decision_values, before[3])
    lr.add(3, "c")  # still a working learner
