"""The dense posterior's pending update and the fused step (update of C + next query's scores).

The updates of ``C`` are held by :class:`core.posteriors.DensePosterior` as one low-rank
correction (docs/algorithms.md §19); a held rank-one update is written by the next binary scoring
in the same pass over ``C`` (:func:`core.criteria._expected_risk_numba.update_and_score_binary`),
one of higher rank by a BLAS write before the scoring. Oracles:

* the update written out in numpy (``C + U M U^T``) for the stored array and every small read
  while the update is pending;
* the unfused path (the update applied first, then the same numba scoring) for the scores, to
  the bit, and the plain numpy expected risk (:func:`core.criteria.risk.expected_risk_reference`)
  to 1e-12;
* a twin learner whose posterior is settled before every scoring: the same picks, scores and
  ``C`` for binary and one-vs-all learners, equal and distinct class weights.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from core.criteria import ExpectedRisk
from core.criteria.base import ScoringState
from core.kernels import Kernel
from core.learner import ActiveRLS
from core.posteriors import DensePosterior, dense
from core.strategies import query_one

N = 203  # not a multiple of the row block, the tile or the kernels' lanes


def pool(n=N, n_classes=2, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-3, 3, (n_classes, 2))
    y = rng.integers(n_classes, size=n)
    return centres[y] + rng.standard_normal((n, 2)), y


@pytest.fixture(params=[1, 2, 5])
def pending(request):
    """A dense posterior with an update of rank k pending, and the same update in numpy."""
    X, _ = pool()
    post = DensePosterior.from_kernel(Kernel("rbf", width=1.2), X)
    rng = np.random.default_rng(request.param)
    first = rng.choice(N, 3, replace=False)
    post.update(first, -0.3 * np.eye(3))  # an earlier update, applied by the next one
    C0 = post.to_array()
    idx = rng.choice(N, request.param, replace=False)
    A = rng.standard_normal((idx.size, idx.size))
    M = -0.2 * (A @ A.T) / idx.size
    post.update(idx, M)
    U = C0[:, idx]
    return post, C0 + U @ (0.5 * (M + M.T)) @ U.T, idx


def test_small_reads_of_a_pending_update_are_the_updated_values(pending):
    post, C, idx = pending
    assert post.has_pending
    rows = np.array([5, 0, 202, 77], dtype=np.int64)
    W = np.random.default_rng(3).standard_normal((rows.size, 2))
    reads = {"diag": post.diag(), "diag_idx": post.diag(rows), "block": post.block(rows),
             "cross": post.cross(rows, idx), "columns": post.columns(rows), "combine": post.combine(rows, W)}
    assert post.has_pending  # none of them applied the update
    assert_allclose(reads["diag"], np.diag(C), rtol=0, atol=1e-13)
    assert_allclose(reads["block"], C[np.ix_(rows, rows)], rtol=0, atol=1e-13)
    assert_allclose(reads["cross"], C[np.ix_(rows, idx)], rtol=0, atol=1e-13)
    assert_allclose(reads["columns"], C[rows], rtol=0, atol=1e-13)
    assert_allclose(reads["combine"], W.T @ C[rows], rtol=0, atol=1e-12)
    stored = post.to_array()  # writes it
    assert not post.has_pending
    assert_allclose(stored, C, rtol=0, atol=1e-13)
    assert_allclose(reads["diag_idx"], np.diag(stored)[rows], rtol=0, atol=1e-13)


def test_held_updates_equal_the_updates_applied_one_by_one():
    """Any sequence of updates (overlapping index sets, new points, rank one and blocks,
    under and over the settling thresholds) against the same updates written into a plain
    array one at a time."""
    X, _ = pool()
    post = DensePosterior.from_kernel(Kernel("rbf", width=1.2), X)
    C = post.to_array()
    rng = np.random.default_rng(8)
    labelled = []
    for step in range(60):
        if step % 3 == 0 or not labelled:
            labelled.append(int(rng.choice(np.setdiff1d(np.arange(N), labelled))))
        k = 1 if step < 25 else int(rng.integers(1, len(labelled) + 1))  # rank one, then blocks
        S = rng.choice(labelled, k, replace=False) if step % 3 else np.array([labelled[-1]])
        A = rng.standard_normal((S.size, S.size))
        M = -0.1 * (A @ A.T) / S.size - 0.05 * np.eye(S.size)
        post.update(S, M)
        C = C + C[:, S] @ M @ C[S, :]
        assert post.pending_rank <= dense.MAX_PENDING
        rows = rng.choice(N, 4, replace=False)
        assert_allclose(post.diag(), np.diag(C), rtol=0, atol=1e-12)
        assert_allclose(post.block(rows), C[np.ix_(rows, rows)], rtol=0, atol=1e-12)
        assert_allclose(post.columns(S), C[S], rtol=0, atol=1e-12)
        W = rng.standard_normal((S.size, 3))
        assert_allclose(post.combine(S, W), W.T @ C[S], rtol=0, atol=1e-11)
        if step in (10, 40, 59):
            assert_allclose(post.to_array(), C, rtol=0, atol=1e-12)


def test_rank_one_updates_write_c_every_settle_floor_labels_and_blocks_are_held():
    X, _ = pool()
    post = DensePosterior.from_kernel(Kernel("rbf", width=1.2), X)
    ranks = []
    for i in range(2 * dense.SETTLE_FLOOR + 3):
        post.update([i], [[-0.1]])
        ranks.append(post.pending_rank)
    assert max(ranks) == dense.SETTLE_FLOOR  # written before the 17th point joined
    assert ranks[dense.SETTLE_FLOOR] == 1
    post.settle()
    S = np.arange(40)
    for extra in range(40, 60):  # "balanced": every update touches every label
        S = np.append(S, extra)
        post.update(S, -0.01 * np.eye(S.size))
    assert post.pending_rank == 60  # never written: each step holds half the rank or more


def test_a_rank_one_update_keeps_c_exactly_symmetric():
    X, _ = pool()
    K = Kernel("rbf", width=1.2)(X)
    post = DensePosterior.from_matrix(np.triu(K) + np.triu(K, 1).T)  # exactly symmetric
    for i, alpha in ((3, -0.4), (50, -0.7), (3, 0.2)):
        post.update([i], [[alpha]])
        C = post.to_array()  # written by the rank-one kernel
        assert_array_equal(C, C.T)


def _binary_state(seed):
    rng = np.random.default_rng(seed)
    m = np.tanh(rng.standard_normal(N))
    m[:7] = [-1.0, 1.0, 0.0, 3.0, -2.5, 0.999, -1.0]  # clip bounds, sign(0) = -1, outside [-1, 1]
    return ScoringState(m[None, :], np.array([0.1, 0.35]), np.array([1.0, 2.0 / 7.0]), np.array([3, 1]))


@pytest.mark.parametrize("which", ["all", "subset"])
def test_fused_binary_scores_equal_the_update_then_the_scoring(pending, which):
    post, C, _ = pending
    state = _binary_state(11)
    cand = np.arange(N) if which == "all" else np.random.default_rng(5).permutation(N)[:60]
    # the twin: the same pending update, applied before the scoring
    X, _ = pool()
    twin = DensePosterior.from_kernel(Kernel("rbf", width=1.2), X)
    twin._C[...] = post._C  # the same C before the update, the same pending update
    twin._pending = copy.deepcopy(post._pending)
    twin.settle()
    expected = ExpectedRisk().score(state, twin, cand)
    fused = ExpectedRisk().score(state, post, cand)
    assert not post.has_pending
    assert_array_equal(fused, expected)
    assert_array_equal(post._C, twin._C)  # the fused pass stored the same C
    assert_allclose(post._C, C, rtol=0, atol=1e-13)
    reference = ExpectedRisk("numpy").score(state, twin, cand)
    assert_allclose(fused, reference, rtol=1e-12, atol=0)


def test_a_candidate_given_twice_is_scored_at_each_place(pending):
    post, C, _ = pending
    state = _binary_state(2)
    cand = np.array([4, 9, 4, 100], dtype=np.int64)
    s = ExpectedRisk().score(state, post, cand)
    assert s[0] == s[2]
    assert_allclose(s, ExpectedRisk("numpy").score(state, post, cand), rtol=1e-12)


WEIGHTINGS = ["none", "balanced", {"a": 1.0, "b": 3.0, "c": 0.5}]


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("weighting", WEIGHTINGS, ids=["none", "balanced", "dict"])
def test_learner_steps_equal_the_unfused_steps(n_classes, weighting):
    classes = ["a", "b", "c"][:n_classes]
    if isinstance(weighting, dict):
        weighting = {c: weighting[c] for c in classes}
    X, y = pool(n_classes=n_classes, seed=4)
    make = lambda: ActiveRLS.from_features(X, classes=classes, kernel=Kernel("rbf", width=1.0), lam=0.1,  # noqa: E731
                                           weighting=weighting, random_state=0)
    fused, plain = make(), make()
    for c in range(n_classes):  # one label per class, then the queries
        i = int(np.flatnonzero(y == c)[0])
        fused.add(i, classes[c])
        plain.add(i, classes[c])
    for step in range(8):
        plain.posterior.settle()  # the unfused path: the update applied, then the scoring
        assert fused.posterior.has_pending
        s_fused = fused.score(fused.risk_criterion)
        s_plain = plain.score(plain.risk_criterion)
        assert not fused.posterior.has_pending
        assert_allclose(s_fused, s_plain, rtol=1e-12, atol=0)
        if n_classes == 2:
            assert_array_equal(s_fused, s_plain)
            assert_array_equal(fused.posterior._C, plain.posterior._C)
        q_fused = query_one(fused, "arls", np.random.default_rng(step))
        q_plain = query_one(plain, "arls", np.random.default_rng(step))
        assert q_fused == q_plain
        label = classes[(step + int(y[q_fused])) % n_classes]  # mixed counts: weights change
        fused.add(q_fused, label)
        plain.add(q_plain, label)
        assert_allclose(fused.decision_values, plain.decision_values, rtol=0, atol=1e-12)
    # and the state is the direct solve's
    direct = make()
    direct.add_many(list(fused.labels), list(fused.labels.values()))
    assert_allclose(fused.posterior_covariance(), direct.posterior_covariance(), rtol=0, atol=1e-9)
    assert_allclose(fused.decision_values, direct.decision_values, rtol=0, atol=1e-9)


def test_undo_and_rebuild_with_a_pending_update():
    X, y = pool(seed=6)
    lrn = ActiveRLS.from_features(X, kernel=Kernel("rbf", width=1.0), lam=0.1, weighting="balanced")
    lrn.add(0, int(y[0]))
    lrn.add(1, 1 - int(y[0]))
    before = lrn.posterior_covariance()
    lrn.add(2, 1)
    assert lrn.posterior.has_pending
    lrn.remove(2)  # settles the add, then keeps the removal pending
    assert_allclose(lrn.posterior_covariance(), before, rtol=0, atol=1e-12)
    lrn.add(3, 0)
    lrn.rebuild()  # drops the pending update: C is refilled from the prior
    assert not lrn.posterior.has_pending
    direct = ActiveRLS.from_features(X, kernel=Kernel("rbf", width=1.0), lam=0.1, weighting="balanced")
    direct.add_many(list(lrn.labels), list(lrn.labels.values()))
    assert_allclose(lrn.posterior_covariance(), direct.posterior_covariance(), rtol=0, atol=1e-12)
