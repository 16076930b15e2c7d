"""Kernel factors K ~ Phi Phi^T: the exact eigen factor and Nystrom (seed 000 §4.2)."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from core.kernels import Kernel, eigen_factor, nystrom_factor
from core.learner import ActiveRLS


@pytest.fixture
def pool():
    rng = np.random.default_rng(0)
    return rng.standard_normal((120, 3)), Kernel("rbf", width=1.5)


def test_eigen_factor_reproduces_K(pool):
    X, kernel = pool
    K = kernel(X)
    Phi = eigen_factor(K)
    assert Phi.shape == (120, 120)
    assert_allclose(Phi @ Phi.T, K, atol=1e-12)
    assert eigen_factor(K, rank=10).shape == (120, 10)


def test_eigen_factor_refuses_an_indefinite_matrix():
    with pytest.raises(ValueError, match="not positive semi-definite"):
        eigen_factor(np.array([[1.0, 2.0], [2.0, 1.0]]))


def test_nystrom_with_every_point_a_landmark_is_exact_on_its_range(pool):
    X, kernel = pool
    K = kernel(X)
    Phi = nystrom_factor(X, kernel, 120, rtol=1e-14)
    assert_allclose(Phi @ Phi.T, K, atol=1e-8)


def test_nystrom_warns_when_it_drops_dependent_landmarks(pool):
    X, kernel = pool
    X = np.vstack([X, X[:10]])  # ten landmarks can coincide
    with pytest.warns(UserWarning, match="dropped"):
        Phi = nystrom_factor(X, kernel, 130, rtol=1e-10)
    assert Phi.shape[1] < 130


def test_nystrom_equals_the_textbook_formula_in_row_blocks(pool, monkeypatch):
    """E W_k^+ E^T written out with a pseudo-inverse, built in blocks of 7 rows."""
    import core.kernels.factors as factors

    X, kernel = pool
    monkeypatch.setattr(factors, "_BLOCK_BYTES", 8 * 30 * 7)
    Phi = nystrom_factor(X, kernel, 30, seed=3)
    Z = X[np.sort(np.random.default_rng(3).choice(120, 30, replace=False))]
    E, W = kernel(X, Z), kernel(Z)
    assert_allclose(Phi @ Phi.T, E @ np.linalg.pinv(W, rcond=1e-10, hermitian=True) @ E.T, atol=1e-8)


@pytest.mark.parametrize("method", ["uniform", "kmeans"])
def test_nystrom_error_falls_with_the_number_of_landmarks(pool, method):
    X, kernel = pool
    K = kernel(X)
    err = [np.linalg.norm(K - (P := nystrom_factor(X, kernel, m, method=method, seed=1)) @ P.T) / np.linalg.norm(K)
           for m in (5, 20, 60)]
    assert err[0] > err[1] > err[2]
    assert err[2] < 0.05


def test_a_learner_on_a_nystrom_factor_matches_a_direct_solve_on_that_kernel(pool):
    X, kernel = pool
    Phi = nystrom_factor(X, kernel, 25, seed=0)
    K = Phi @ Phi.T
    learner = ActiveRLS.from_factor(Phi, classes=["a", "b"], lam=0.1, weighting="balanced")
    idx = [0, 5, 9, 40, 77]
    labs = ["a", "b", "a", "a", "b"]
    learner.add_many(idx[:3], labs[:3]).add(idx[3], labs[3]).add(idx[4], labs[4])
    w = np.array(list(learner.class_weights.values()))
    y = np.array([1.0 if v == "b" else -1.0 for v in labs])
    lam = 0.1 / w[[1 if v == "b" else 0 for v in labs]]
    m = K[:, idx] @ np.linalg.solve(K[np.ix_(idx, idx)] + np.diag(lam), y)
    assert_allclose(learner.decision_values[:, 0], m, atol=1e-9)


def test_bad_nystrom_arguments_are_named(pool):
    X, kernel = pool
    with pytest.raises(ValueError, match="n_landmarks"):
        nystrom_factor(X, kernel, 0)
    with pytest.raises(ValueError, match="method"):
        nystrom_factor(X, kernel, 5, method="boost")


@pytest.mark.parametrize("threads", [2, 3])
def test_nystrom_map_in_threads_gives_the_same_bits_and_progress_in_order(monkeypatch, threads):
    import threading

    import core.kernels.factors as factors
    from core.kernels import Kernel
    from core.kernels.factors import nystrom_map

    monkeypatch.setattr(factors, "_BLOCK_BYTES", 8 * 20 * 37)  # blocks of 37 rows: several, the last short
    rng = np.random.default_rng(11)
    X = rng.standard_normal((500, 5))
    Z = X[:20]
    alone = nystrom_map(X, Kernel("rbf", 1.3), Z)
    told = []
    shared = nystrom_map(X, Kernel("rbf", 1.3), Z, threads=threads,
                         progress=lambda message, f: told.append((f, threading.current_thread())))
    assert np.array_equal(alone, shared)
    assert [f for f, _ in told] == sorted(f for f, _ in told) and told[-1][0] == 1.0
    assert len(told) == -(-500 // 37) and {t for _, t in told} == {threading.current_thread()}
