"""Exactness at the edges: tiny lambdas, long random sequences, widths without a kernel.

Each case was a reproduced failure of the incremental updates (a block reweight or an undo
that silently lost all accuracy); the learner must now notice, rebuild by a direct solve and
say so with a NumericalRebuildWarning.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

from arls_oracle import build_learner, direct_solve, expected_class_weights
from core.kernels import Kernel
from core.learner import ActiveRLS, NumericalRebuildWarning


def pool(n, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, 2)), Kernel("rbf", width=1.0)


def direct(learner, K):
    w = expected_class_weights(learner.labels, learner.classes, learner.weighting)
    return direct_solve(K, learner.labels, learner.classes, learner.lam, w)


def test_set_lam_from_a_tiny_lambda_is_exact(posterior):
    """n = 200, lambda 1e-12 -> set_lam(0.1): the block reweight used to leave |m err| = 34."""
    X, kernel = pool(200, 0)
    K = kernel(X)
    rng = np.random.default_rng(0)
    learner = build_learner(posterior, X, kernel=kernel, lam=1e-12)
    idx = rng.choice(200, 40, replace=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalRebuildWarning)
        learner.add_many(idx, [int(X[i, 0] > 0) for i in idx])
    learner.set_lam(0.1)
    m, _ = direct(learner, K)
    assert_allclose(learner.decision_values, m, rtol=0, atol=1e-8)
    assert (learner.predict() == np.where(m[:, 0] > 0, 1, 0)).all()


def test_undo_at_a_tiny_lambda_is_exact_or_rebuilt(posterior):
    """lambda 1e-12, undo one of 20 labels: used to leave |m err| = 14.5."""
    X, kernel = pool(200, 1)
    K = kernel(X)
    rng = np.random.default_rng(1)
    learner = build_learner(posterior, X, kernel=kernel, lam=1e-12)
    idx = [int(i) for i in rng.choice(200, 20, replace=False)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalRebuildWarning)
        for i in idx:
            learner.add(i, int(X[i, 0] > 0))
        learner.remove(idx[7])
    fresh = build_learner(posterior, X, kernel=kernel, lam=1e-12)
    rest = [i for i in idx if i != idx[7]]
    fresh.add_many(rest, [int(X[i, 0] > 0) for i in rest])
    # both are direct solves of an ill-conditioned system (cond ~ 1 / lam): compare them at
    # the accuracy such a solve has, and exactly in their decisions
    m, _ = direct(learner, K)
    scale = np.abs(m).max()
    assert_allclose(learner.decision_values, fresh.decision_values, rtol=0, atol=1e-5 * scale)
    assert_allclose(learner.decision_values, m, rtol=0, atol=1e-5 * scale)
    assert (learner.predict() == fresh.predict()).all()


@pytest.mark.slow
@pytest.mark.parametrize("seed", [11, 12])
def test_a_thousand_balanced_operations_stay_within_1e8(posterior, seed):
    """A 1,000-operation random sequence under "balanced" reached 6.5e-8 before."""
    rng = np.random.default_rng(seed)
    X, kernel = pool(40, seed)
    K = kernel(X)
    classes = ["a", "b", "c"]
    learner = build_learner(posterior, X, kernel=kernel, classes=classes, lam=0.05, weighting="balanced")
    worst = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NumericalRebuildWarning)
        for _ in range(1000):
            labels = learner.labels
            unl = learner.unlabeled_indices
            r = rng.random()
            if (r < 0.5 and unl.size) or len(labels) < 3:
                learner.add(int(rng.choice(unl)), classes[rng.integers(3)])
            elif r < 0.8:
                learner.remove(int(rng.choice(list(labels))))
            else:
                j = int(rng.choice(list(labels)))
                learner.relabel(j, classes[rng.integers(3)])
            m, C = direct(learner, K)
            worst = max(worst, float(np.abs(learner.decision_values - m).max()),
                        float(np.abs(learner.posterior_covariance() - C).max()))
    assert worst < 1e-8, worst


def test_a_guard_tripped_rebuild_warns(posterior):
    X, kernel = pool(30, 2)
    X[1] = X[0]  # a duplicated point: C_11 = 0 after labelling point 0 with a tiny lambda
    learner = build_learner(posterior, X, kernel=kernel, lam=1e-13)
    learner.add(0, 1)
    with pytest.warns(NumericalRebuildWarning, match="direct solve"):
        learner.add(1, 1)
    assert learner.n_rebuilds == 1


@pytest.mark.parametrize("width", [1e300, 1e-300, 1e200, 1e-170])
def test_widths_without_a_finite_kernel_are_refused_up_front(width):
    with pytest.raises(ValueError, match="no usable kernel"):
        Kernel("rbf", width=width)


def test_set_kernel_refuses_a_width_without_a_kernel_before_touching_the_state():
    X, kernel = pool(20, 3)
    learner = ActiveRLS.from_features(X, kernel=kernel, lam=0.1)
    learner.add(0, 1).add(1, 0)
    m = learner.decision_values
    with pytest.raises(ValueError, match="no usable kernel"):
        learner.set_params(kernel=Kernel("rbf", width=1e300))
    assert_allclose(learner.decision_values, m)


def test_a_low_rank_factor_rebuilds_instead_of_large_blocks():
    """With more changed labels than the rank, "balanced" steps recompute in weight space
    (O(|L| r^2 + r^3)), silently, and stay exact."""
    rng = np.random.default_rng(5)
    Phi = rng.standard_normal((120, 6))
    K = Phi @ Phi.T
    learner = ActiveRLS.from_factor(Phi, classes=["a", "b", "c"], lam=0.3, weighting="balanced")
    idx = rng.choice(120, 30, replace=False)
    learner.add_many(idx[:20], [["a", "b", "c"][i % 3] for i in range(20)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", NumericalRebuildWarning)
        before = learner.n_rebuilds
        for i in idx[20:]:
            learner.add(int(i), "a")
        learner.remove(int(idx[3]))
    assert learner.n_rebuilds > before
    m, C = direct(learner, K)
    assert_allclose(learner.decision_values, m, rtol=0, atol=1e-9)
    assert_allclose(learner.posterior_covariance(), C, rtol=0, atol=1e-9)


def test_the_kept_unlabelled_indices_follow_every_change_of_the_labels():
    """LabelBook.unlabeled_indices (kept between changes) against flatnonzero(codes < 0) through
    adds, removes, relabels, a copy and a failed change's restore."""
    from core.learner.base import LabelBook

    rng = np.random.default_rng(31)
    book = LabelBook(300, ["a", "b", "c"])
    for step in range(200):
        i = int(rng.integers(300))
        if book.codes[i] < 0:
            book.add(i, ["a", "b", "c"][step % 3])
        elif step % 3:
            book.remove(i)
        else:
            book.relabel(i, "c")
        got = book.unlabeled_indices()
        assert np.array_equal(got, np.flatnonzero(book.codes < 0)) and got.dtype == np.int64
        got[:] = -5  # a copy: the kept array is not the caller's
        if step % 50 == 0:
            twin = book.copy()
            twin.add(int(np.flatnonzero(twin.codes < 0)[0]), "a")
            assert np.array_equal(twin.unlabeled_indices(), np.flatnonzero(twin.codes < 0))
    assert np.array_equal(book.unlabeled_indices(), np.flatnonzero(book.codes < 0))
