"""ActiveRLS state against a direct solve after every operation (docs/algorithms.md §3)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from arls_oracle import build_learner, direct_solve, expected_class_weights
from core.learner import arls as arls_module
from core.learner import updates as updates_module
from core.learner import ActiveRLS
from core.kernels import Kernel

ATOL = 1e-8


def make_pool(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    kernel = Kernel("rbf", width=1.0)
    return X, kernel, kernel(X)


def assert_matches_direct(learner, K, atol=ATOL):
    w = expected_class_weights(learner.labels, learner.classes, learner.weighting)
    assert_allclose(np.array(list(learner.class_weights.values())), w, rtol=1e-14)
    m, C = direct_solve(K, learner.labels, learner.classes, learner.lam, w)
    assert learner.decision_values.shape == m.shape
    assert_allclose(learner.decision_values, m, rtol=0, atol=atol)
    assert_allclose(learner.posterior_covariance(), C, rtol=0, atol=atol)


def random_weighting(rng, classes):
    r = rng.integers(3)
    if r == 0:
        return "none"
    if r == 1:
        return "balanced"
    chosen = rng.choice(len(classes), size=rng.integers(1, len(classes) + 1), replace=False)
    return {classes[t]: float(rng.uniform(0.2, 5.0)) for t in chosen}


@pytest.mark.parametrize("seed, start_weighting", [(1, "none"), (2, "balanced"), (3, {"neg": 3.0})])
def test_random_operation_sequence_matches_direct_solve(posterior, seed, start_weighting):
    rng = np.random.default_rng(seed)
    X, kernel, K = make_pool(n=40, seed=seed)
    learner = build_learner(posterior, X, classes=["neg", "pos"], kernel=kernel, lam=0.2, weighting=start_weighting)
    counts = dict.fromkeys(["add", "remove", "relabel", "weighting", "add_class", "rebuild"], 0)
    n_ops = 320
    for step in range(n_ops):
        labels = learner.labels
        unl = learner.unlabeled_indices
        r = rng.random()
        if (r < 0.45 and unl.size) or not labels:
            learner.add(int(rng.choice(unl)), learner.classes[rng.integers(learner.n_classes)])
            op = "add"
        elif r < 0.65:
            learner.remove(int(rng.choice(list(labels))))
            op = "remove"
        elif r < 0.82:
            j = int(rng.choice(list(labels)))
            others = [c for c in learner.classes if c != labels[j]]
            learner.relabel(j, others[rng.integers(len(others))])
            op = "relabel"
        elif r < 0.95:
            learner.set_weighting(random_weighting(rng, learner.classes))
            op = "weighting"
        elif r < 0.985 and learner.n_classes < 5:
            learner.add_class(f"c{learner.n_classes}")
            op = "add_class"
        else:
            learner.rebuild()
            op = "rebuild"
        counts[op] += 1
        assert_matches_direct(learner, K)
    assert sum(counts.values()) == n_ops
    assert all(v > 0 for k, v in counts.items() if k != "rebuild"), counts
    assert learner.n_classes > 2  # went from binary to one-vs-all along the way


@pytest.mark.parametrize("weighting", ["none", "balanced", {"a": 0.5, "c": 4.0}])
@pytest.mark.parametrize("classes", [["a", "b"], ["a", "b", "c"]])
def test_remove_is_exact_undo(posterior, classes, weighting):
    rng = np.random.default_rng(7)
    X, kernel, K = make_pool(n=35, seed=7)
    if isinstance(weighting, dict):
        weighting = {k: v for k, v in weighting.items() if k in classes}
    order = rng.permutation(35)[:15]
    labels = {int(i): classes[rng.integers(len(classes))] for i in order}
    learner = build_learner(posterior, X, classes=classes, kernel=kernel, lam=0.1, weighting=weighting)
    for i, lab in labels.items():
        learner.add(i, lab)
    for j in list(labels)[::3]:
        learner.remove(j)
        del labels[j]
        fresh = build_learner(posterior, X, classes=classes, kernel=kernel, lam=0.1, weighting=weighting)
        for i, lab in labels.items():
            fresh.add(i, lab)
        assert learner.labels == fresh.labels
        assert_allclose(learner.decision_values, fresh.decision_values, rtol=0, atol=1e-10)
        assert_allclose(learner.posterior_covariance(), fresh.posterior_covariance(), rtol=0, atol=1e-10)
        assert_allclose(learner.expected_risk(), fresh.expected_risk(), rtol=1e-9)
    assert learner.n_rebuilds == 0


def test_add_then_remove_returns_to_prior(posterior):
    X, kernel, K = make_pool(n=25)
    learner = build_learner(posterior, X, kernel=kernel, lam=0.05, weighting="balanced")
    learner.add(3, 1).add(10, 0).add(4, 1)
    learner.remove(10).remove(3).remove(4)
    assert learner.n_labeled == 0
    assert_allclose(learner.decision_values, 0.0, atol=1e-12)
    assert_allclose(learner.posterior_covariance(), K, atol=1e-12)


def test_rebuild_matches_incremental_state(posterior):
    rng = np.random.default_rng(4)
    X, kernel, K = make_pool(n=40, seed=4)
    learner = build_learner(posterior, X, classes=[0, 1, 2], kernel=kernel, lam=0.1, weighting="balanced")
    for i in rng.permutation(40)[:20]:
        learner.add(int(i), int(rng.integers(3)))
    m, C = learner.decision_values, learner.posterior_covariance()
    learner.rebuild()
    assert learner.n_rebuilds == 1
    assert_allclose(learner.decision_values, m, rtol=0, atol=1e-10)
    assert_allclose(learner.posterior_covariance(), C, rtol=0, atol=1e-10)
    assert_matches_direct(learner, K)


def test_from_kernel_matches_from_features():
    X, kernel, K = make_pool(n=30)
    a = ActiveRLS.from_features(X, classes=["x", "y"], kernel=kernel, lam=0.3)
    b = ActiveRLS.from_kernel(K, classes=["x", "y"], lam=0.3)
    for learner in (a, b):
        learner.add(0, "x").add(5, "y").add(9, "y").remove(5)
        learner.rebuild()
    assert_allclose(a.decision_values, b.decision_values, atol=1e-12)
    assert_allclose(a.posterior_covariance(), b.posterior_covariance(), atol=1e-12)
    assert_allclose(K, ActiveRLS.from_kernel(K).posterior_covariance())  # K itself untouched


@pytest.mark.parametrize("weighting", ["none", "balanced"])
def test_add_many_equals_sequential_adds(posterior, weighting):
    rng = np.random.default_rng(5)
    X, kernel, K = make_pool(n=40, seed=5)
    idx = [int(i) for i in rng.permutation(40)[:12]]
    labs = [["a", "b", "c"][rng.integers(3)] for _ in idx]
    seq = build_learner(posterior, X, classes=["a", "b", "c"], kernel=kernel, lam=0.1, weighting=weighting)
    seq.add(idx[0], labs[0])
    for i, lab in zip(idx[1:], labs[1:]):
        seq.add(i, lab)
    batch = build_learner(posterior, X, classes=["a", "b", "c"], kernel=kernel, lam=0.1, weighting=weighting)
    batch.add(idx[0], labs[0]).add_many(idx[1:], labs[1:])
    assert batch.labels == seq.labels
    assert_allclose(batch.decision_values, seq.decision_values, atol=1e-10)
    assert_allclose(batch.posterior_covariance(), seq.posterior_covariance(), atol=1e-10)
    assert_matches_direct(batch, K)


def test_add_class_from_binary_keeps_outputs_consistent(posterior):
    X, kernel, K = make_pool(n=30)
    learner = build_learner(posterior, X, classes=["cat", "dog"], kernel=kernel, lam=0.1)
    learner.add(0, "cat").add(1, "dog").add(2, "dog")
    f = learner.decision_values[:, 0].copy()
    learner.add_class("bird")
    F = learner.decision_values
    assert F.shape == (30, 3) and learner.n_outputs == 3
    assert_allclose(F[:, 1], f, atol=1e-14)  # column of classes[1] is the binary f
    assert_allclose(F[:, 0], -f, atol=1e-14)  # column of classes[0] is -f
    assert_matches_direct(learner, K)
    learner.add(7, "bird")
    assert_matches_direct(learner, K)
    assert learner.predict()[7] == "bird"


def test_loo_decision_values_match_refits(posterior):
    rng = np.random.default_rng(6)
    X, kernel, K = make_pool(n=30, seed=6)
    learner = build_learner(posterior, X, classes=["a", "b", "c"], kernel=kernel, lam=0.15, weighting="balanced")
    for i in rng.permutation(30)[:14]:
        learner.add(int(i), ["a", "b", "c"][rng.integers(3)])
    loo = learner.loo_decision_values()
    w = np.array(list(learner.class_weights.values()))
    labels = learner.labels
    for row, j in enumerate(labels):
        rest = {k: v for k, v in labels.items() if k != j}
        m, _ = direct_solve(K, rest, learner.classes, learner.lam, w)  # same weights, j left out
        assert_allclose(loo[row], m[j], atol=1e-10)


def test_predict_and_proba_follow_outputs(posterior):
    X, kernel, K = make_pool(n=30)
    learner = build_learner(posterior, X, classes=[10, 20], kernel=kernel, lam=0.1)
    assert (learner.predict() == 10).all()  # f = 0 everywhere and sign(0) = -1 -> classes[0]
    assert_allclose(learner.proba(), 0.5)
    learner.add(0, 20).add(1, 10)
    f = learner.decision_values[:, 0]
    assert_allclose(learner.predict(), np.where(f > 0, 20, 10))
    P = learner.proba()
    assert_allclose(P[:, 1], np.clip((f + 1) / 2, 0, 1))
    assert_allclose(P.sum(axis=1), 1.0)
    # GP variance k(x,x) + lam - k_xL (K_LL + Lambda)^-1 k_Lx by a direct solve (docs/algorithms.md §2)
    L = np.array(list(learner.labels))
    w = expected_class_weights(learner.labels, learner.classes, learner.weighting)
    lam_L = 0.1 / w[[learner.classes.index(learner.labels[j]) for j in L]]
    K_XL = K[:, L]
    reduction = np.einsum("il,li->i", K_XL, np.linalg.solve(K[np.ix_(L, L)] + np.diag(lam_L), K_XL.T))
    assert_allclose(learner.posterior_variance(), np.diag(K) + 0.1 - reduction, rtol=0, atol=1e-12)


class TestGuards:
    """A tripped denominator guard makes the learner rebuild, and the state stays exact."""

    def test_add_guard_forces_rebuild(self, posterior, monkeypatch):
        X, kernel, K = make_pool(n=30)
        learner = build_learner(posterior, X, kernel=kernel, lam=0.1, weighting="balanced")
        learner.add(0, 0).add(1, 1)
        assert learner.n_rebuilds == 0
        monkeypatch.setattr(updates_module, "DENOM_RTOL", np.inf)
        learner.add(2, 1)
        assert learner.n_rebuilds == 1
        assert_matches_direct(learner, K)

    def test_drifted_covariance_is_repaired_by_the_guard(self):
        X, kernel, K = make_pool(n=30)
        learner = ActiveRLS.from_features(X, kernel=kernel, lam=0.1)
        learner.add(0, 0).add(1, 1)
        learner.posterior._C[5, 5] = -1.0  # simulate numerical drift: a negative variance
        learner.add(5, 1)  # den = C_55 + lam < 0 trips the guard
        assert learner.n_rebuilds == 1
        assert_matches_direct(learner, K)

    def test_remove_guard_forces_rebuild(self, posterior, monkeypatch):
        X, kernel, K = make_pool(n=30)
        learner = build_learner(posterior, X, classes=["a", "b", "c"], kernel=kernel, lam=0.1)
        learner.add(0, "a").add(1, "b").add(2, "c")
        monkeypatch.setattr(updates_module, "DENOM_RTOL", np.inf)
        learner.remove(1)
        assert learner.n_rebuilds == 1
        assert_matches_direct(learner, K)

    def test_reweight_guard_forces_rebuild(self, posterior, monkeypatch):
        X, kernel, K = make_pool(n=30)
        learner = build_learner(posterior, X, kernel=kernel, lam=0.1)
        learner.add(0, 0).add(1, 1).add(2, 1)
        monkeypatch.setattr(arls_module, "_STEP_ERROR_MAX", 0.0)
        learner.set_weighting("balanced")
        assert learner.n_rebuilds == 1
        assert_matches_direct(learner, K)

    def test_near_duplicate_points_stay_exact(self, posterior):
        # Nearly identical points with a tiny lam: denominators close to lam, large updates.
        rng = np.random.default_rng(8)
        X = np.repeat(rng.standard_normal((6, 2)), 4, axis=0) + 1e-7 * rng.standard_normal((24, 2))
        kernel = Kernel("rbf", width=1.0)
        K = kernel(X)
        learner = build_learner(posterior, X, kernel=kernel, lam=1e-3)
        for i in range(0, 24, 2):
            learner.add(i, int(i % 3 == 0))
        for i in range(0, 24, 4):
            learner.remove(i)
        assert_matches_direct(learner, K, atol=1e-7)


@pytest.mark.parametrize("classes", [["neg", "pos"], ["a", "b", "c"]])
@pytest.mark.parametrize("weighting", ["none", "balanced", {"neg": 3.0, "a": 0.5}])
def test_set_lam_matches_direct_solve_and_a_fresh_learner(posterior, classes, weighting):
    X, kernel, K = make_pool(n=40, seed=7)
    weighting = {c: w for c, w in weighting.items() if c in classes} if isinstance(weighting, dict) else weighting
    rng = np.random.default_rng(7)
    idx = rng.choice(40, size=12, replace=False)
    labels = [classes[t] for t in rng.integers(len(classes), size=12)]
    learner = build_learner(posterior, X, classes=classes, kernel=kernel, lam=0.2, weighting=weighting)
    learner.add_many(idx, labels)
    for lam in (0.03, 1.7, 0.2):
        learner.set_lam(lam)
        assert learner.lam == lam
        assert_matches_direct(learner, K)
        fresh = build_learner(posterior, X, classes=classes, kernel=kernel, lam=lam, weighting=weighting).add_many(idx, labels)
        assert_allclose(learner.decision_values, fresh.decision_values, rtol=0, atol=ATOL)
        assert_allclose(learner.posterior_variance(), fresh.posterior_variance(), rtol=0, atol=ATOL)
        assert_allclose(learner.point_lambdas, fresh.point_lambdas, rtol=1e-14)
        assert_allclose(learner.expected_risk(), fresh.expected_risk(), rtol=1e-7, atol=1e-10)
    assert learner.n_rebuilds == 0  # the block reweight, not a rebuild


def test_set_lam_without_labels_and_when_the_guard_trips(posterior, monkeypatch):
    X, kernel, K = make_pool(n=30, seed=3)
    learner = build_learner(posterior, X, kernel=kernel, lam=0.5).set_lam(0.01)
    assert learner.lam == 0.01 and learner.n_rebuilds == 0
    learner.add(0, 1).add(5, 0).add(9, 1)
    monkeypatch.setattr(arls_module, "_STEP_ERROR_MAX", 0.0)  # every block reweight "unsafe"
    learner.set_lam(2.0)
    assert learner.n_rebuilds == 1
    assert_matches_direct(learner, K)


@pytest.mark.parametrize("weighting", ["none", "balanced"])
def test_set_kernel_matches_a_fresh_learner_in_place(weighting):
    X, kernel, _ = make_pool(n=40, seed=4)
    idx, labels = [3, 17, 8, 30, 21], ["neg", "pos", "pos", "neg", "pos"]
    learner = ActiveRLS.from_features(X, classes=["neg", "pos"], kernel=kernel, lam=0.1, weighting=weighting)
    learner.add_many(idx, labels)
    C_before = learner.posterior._C
    for new in (Kernel("rbf", width=0.4), Kernel("linear"), Kernel("rbf", width=2.5)):
        learner.set_kernel(new)
        assert learner.kernel == new
        assert learner.posterior._C is C_before  # refilled in place: no second n x n array
        assert_matches_direct(learner, new(X))
        fresh = ActiveRLS.from_features(X, classes=["neg", "pos"], kernel=new, lam=0.1, weighting=weighting)
        fresh.add_many(idx, labels)
        assert_allclose(learner.decision_values, fresh.decision_values, rtol=0, atol=1e-10)
        assert_allclose(learner.posterior_covariance(), fresh.posterior_covariance(), rtol=0, atol=1e-10)
        # later updates use the new prior too (the add guard compares with k(x, x))
        learner.add(0, "neg").remove(0)
        assert_matches_direct(learner, new(X))


def test_public_rebuild_that_cannot_factor_leaves_the_state_unchanged():
    """rebuild() checks K_LL + Lambda_L before touching C: on failure nothing changes."""
    from numpy.linalg import LinAlgError

    from core.learner import ActiveRLS
    from core.kernels import Kernel

    X = np.random.default_rng(11).normal(size=(30, 2))
    K = Kernel("rbf", width=1.0)(X)
    learner = ActiveRLS.from_kernel(K, classes=[0, 1], lam=0.1)
    for i, y in [(0, 0), (1, 1), (2, 1), (3, 0)]:
        learner.add(i, y)
    C0, m0, n0 = learner.posterior_covariance(), learner.decision_values.copy(), learner.n_rebuilds
    learner.posterior._K[0, 1] = learner.posterior._K[1, 0] = 50.0  # make the labelled block indefinite
    with pytest.raises(LinAlgError, match="not positive definite"):
        learner.rebuild()
    np.testing.assert_array_equal(learner.posterior_covariance(), C0)
    np.testing.assert_array_equal(learner.decision_values, m0)
    assert learner.n_rebuilds == n0


@pytest.mark.parametrize("weighting", ["none", "balanced", {"a": 0.5, "c": 4.0}])
@pytest.mark.parametrize("classes", [["a", "b"], ["a", "b", "c"]])
@pytest.mark.parametrize("n_removed", [3, 12])  # block downdate path / rebuild path
def test_remove_many_is_exact_undo(posterior, classes, weighting, n_removed):
    """Removing a batch equals a fresh learner given the other labels (both code paths)."""
    rng = np.random.default_rng(17)
    X, kernel, K = make_pool(n=35, seed=17)
    if isinstance(weighting, dict):
        weighting = {k: v for k, v in weighting.items() if k in classes}
    order = rng.permutation(35)[:20]
    labels = {int(i): classes[rng.integers(len(classes))] for i in order}
    learner = build_learner(posterior, X, classes=classes, kernel=kernel, lam=0.1, weighting=weighting)
    for i, lab in labels.items():
        learner.add(i, lab)
    gone = [int(j) for j in rng.permutation(list(labels))[:n_removed]]
    before = learner.n_rebuilds
    learner.remove_many(gone)
    assert learner.n_rebuilds == before + (1 if n_removed >= 20 - n_removed else 0)
    for j in gone:
        del labels[j]
    fresh = build_learner(posterior, X, classes=classes, kernel=kernel, lam=0.1, weighting=weighting)
    for i, lab in labels.items():
        fresh.add(i, lab)
    assert learner.labels == fresh.labels
    assert_allclose(learner.decision_values, fresh.decision_values, rtol=0, atol=1e-10)
    assert_allclose(learner.posterior_covariance(), fresh.posterior_covariance(), rtol=0, atol=1e-10)
    assert_matches_direct(learner, K)


def test_remove_many_bad_input_changes_nothing(posterior):
    X, kernel, K = make_pool(n=20)
    learner = build_learner(posterior, X, kernel=kernel, lam=0.1).add(0, 0).add(1, 1).add(2, 1)
    m0, C0 = learner.decision_values.copy(), learner.posterior_covariance()
    for bad, err in [([0, 0], ValueError), ([0, 5], ValueError), ([0, 99], IndexError)]:
        with pytest.raises(err):
            learner.remove_many(bad)
        assert learner.labels == {0: 0, 1: 1, 2: 1}
        np.testing.assert_array_equal(learner.decision_values, m0)
        np.testing.assert_array_equal(learner.posterior_covariance(), C0)
