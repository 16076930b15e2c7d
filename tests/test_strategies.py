"""Query strategies: the pick, seeded tie-breaking, and errors."""

from __future__ import annotations

import numpy as np
import pytest

from core.learner import ActiveRLS
from core.kernels import Kernel
from core.strategies import STRATEGIES, query_batch, query_one, scores


def blobs(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal((0, 0), 0.5, (n // 2, 2)), rng.normal((3, 0), 0.5, (n - n // 2, 2))])


@pytest.fixture
def binary():
    lrn = ActiveRLS.from_features(blobs(), kernel=Kernel("rbf", width=1.0), lam=0.1, random_state=0)
    lrn.add(0, 0).add(39, 1)
    return lrn


def test_arls_picks_the_minimum_expected_risk(binary):
    E = binary.expected_risk()
    i = query_one(binary, "arls", np.random.default_rng(0))
    assert E[i] == E.min()
    assert i not in binary.labels


def test_margin_binary_and_multiclass():
    lrn = ActiveRLS.from_features(blobs(), classes=["a", "b"], kernel=Kernel("rbf", width=1.0), lam=0.1)
    lrn.add(0, "a").add(39, "b")
    f = lrn.decision_values[:, 0]
    i = query_one(lrn, "margin", 0)
    unl = lrn.unlabeled_indices
    assert abs(f[i]) == np.abs(f[unl]).min()
    lrn.add_class("c")
    lrn.add(20, "c")
    F = lrn.decision_values
    srt = np.sort(F, axis=1)
    gap = srt[:, -1] - srt[:, -2]
    i = query_one(lrn, "margin", 0)
    unl = lrn.unlabeled_indices
    assert gap[i] == gap[unl].min()
    assert_scores = scores(lrn, "margin")
    assert np.isinf(assert_scores[list(lrn.labels)]).all()


def test_random_is_uniform_over_unlabelled_and_reproducible(binary):
    picks = [query_one(binary, "random", np.random.default_rng(s)) for s in range(400)]
    assert set(picks) == set(binary.unlabeled_indices.tolist())
    again = [query_one(binary, "random", np.random.default_rng(s)) for s in range(400)]
    assert picks == again


def test_ties_are_broken_uniformly_with_the_seed():
    # No labels: f = 0 everywhere, so every point ties under "margin".
    lrn = ActiveRLS.from_features(blobs(), kernel=Kernel("rbf", width=1.0), lam=0.1)
    rng = np.random.default_rng(42)
    picks = np.array([query_one(lrn, "margin", rng) for _ in range(2000)])
    counts = np.bincount(picks, minlength=40)
    assert (counts > 0).all()  # every tied point can be chosen
    assert counts.max() < 3 * counts.mean()
    rng1, rng2 = np.random.default_rng(7), np.random.default_rng(7)
    assert [query_one(lrn, "margin", rng1) for _ in range(20)] == [query_one(lrn, "margin", rng2) for _ in range(20)]


def test_arls_ties_on_a_symmetric_pool():
    # Four identical well-separated pairs: by symmetry the expected risk ties across them.
    base = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0], [10.0, 10.0]])
    X = np.vstack([base, base + 0.1])
    lrn = ActiveRLS.from_features(X, kernel=Kernel("rbf", width=1.0), lam=0.1)
    picks = {query_one(lrn, "arls", np.random.default_rng(s)) for s in range(200)}
    assert len(picks) == 8


def test_learner_rng_is_used_when_none_given():
    a = ActiveRLS.from_features(blobs(), random_state=3)
    b = ActiveRLS.from_features(blobs(), random_state=3)
    assert [query_one(a, "random") for _ in range(10)] == [query_one(b, "random") for _ in range(10)]


def test_no_unlabelled_point_left():
    X = blobs(4)
    lrn = ActiveRLS.from_features(X, kernel=Kernel("rbf", width=1.0))
    for i in range(4):
        lrn.add(i, i % 2)
    for strategy in STRATEGIES:
        with pytest.raises(ValueError, match="nothing left to query"):
            query_one(lrn, strategy, 0)


def test_unknown_strategy(binary):
    with pytest.raises(ValueError, match="unknown strategy"):
        query_one(binary, "entropy", 0)
    with pytest.raises(ValueError, match="unknown strategy"):
        scores(binary, "entropy")


def test_arls_first_query_is_a_cluster_centre():
    """Seed 002 §3.3.1: with no labels ARLS prefers points that inform many others."""
    rng = np.random.default_rng(1)
    centre = rng.normal((0, 0), 0.3, (30, 2))
    outliers = rng.uniform(5, 9, (5, 2))
    X = np.vstack([centre, outliers])
    lrn = ActiveRLS.from_features(X, kernel=Kernel("rbf", width=1.0), lam=0.1)
    i = query_one(lrn, "arls", 0)
    assert i < 30


def test_query_exclude_never_returns_excluded_points():
    """Excluding the best point yields the best of the others; excluding all raises."""
    import numpy as np

    from core.learner import ActiveRLS
    from core.kernels import Kernel

    X = np.random.default_rng(3).normal(size=(40, 2))
    learner = ActiveRLS.from_features(X, classes=[0, 1], kernel=Kernel("rbf", width=1.0), lam=0.1)
    learner.add(0, 1)
    learner.add(1, 0)
    s = scores(learner, "arls")
    order = np.argsort(s)
    first = query_one(learner, "arls", np.random.default_rng(0))
    assert first == order[0]
    second = query_one(learner, "arls", np.random.default_rng(0), exclude=[first])
    assert second == order[1]
    with pytest.raises(ValueError, match="excluded"):
        query_one(learner, "arls", np.random.default_rng(0), exclude=learner.unlabeled_indices)


def test_query_batch_is_always_an_array_of_the_lowest_scores(binary):
    E = binary.expected_risk()
    picks = query_batch(binary, "arls", 5, np.random.default_rng(0))
    assert isinstance(picks, np.ndarray) and picks.dtype == np.int64 and picks.shape == (5,)
    assert np.all(np.diff(E[picks]) >= 0)
    assert set(picks.tolist()) == set(np.argsort(E, kind="stable")[:5].tolist())
    one = query_batch(binary, "arls", 1, np.random.default_rng(0))
    assert one.shape == (1,) and one[0] == query_one(binary, "arls", np.random.default_rng(0))
    with pytest.raises(ValueError, match="positive integer"):
        query_batch(binary, "arls", 0)
