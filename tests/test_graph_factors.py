"""kNN graphs, Laplacians and spectral graph factors against dense constructions."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy.spatial.distance import cdist
from sklearn.datasets import make_moons

from core.kernels import knn_graph, laplacian, spectral_factor
from core.learner import ActiveRLS


@pytest.fixture
def moons():
    X, y = make_moons(200, noise=0.05, random_state=0)
    return X, y


def dense_knn(X, k):
    D = cdist(X, X)
    np.fill_diagonal(D, np.inf)
    A = np.zeros_like(D)
    nn = np.argsort(D, axis=1)[:, :k]
    A[np.repeat(np.arange(len(X)), k), nn.ravel()] = 1.0
    return np.maximum(A, A.T), D


def test_knn_graph_is_the_symmetrised_neighbour_relation(moons):
    X, _ = moons
    W = knn_graph(X, 6).toarray()
    A, _ = dense_knn(X, 6)
    assert_allclose(W, A)
    assert (np.diag(W) == 0).all() and (W == W.T).all()


def test_heat_weights(moons):
    X, _ = moons
    W = knn_graph(X, 6, weights="heat", sigma=0.3).toarray()
    A, D = dense_knn(X, 6)
    assert_allclose(W, np.where(A > 0, np.exp(-(np.where(A > 0, D, 0) ** 2) / 0.09), 0.0), atol=1e-12)


def test_laplacians(moons):
    X, _ = moons
    W = knn_graph(X, 5)
    Wd = W.toarray()
    d = Wd.sum(1)
    assert_allclose(laplacian(W, normalized=False).toarray(), np.diag(d) - Wd, atol=1e-12)
    assert_allclose(laplacian(W).toarray(), np.eye(200) - Wd / np.sqrt(np.outer(d, d)), atol=1e-12)


@pytest.mark.parametrize("transform", ["gaussian_field", "diffusion"])
def test_spectral_factor_matches_a_dense_eigendecomposition(moons, transform):
    X, _ = moons
    W = knn_graph(X, 8)
    Phi, lam = spectral_factor(W, 20, transform=transform, eps=0.05, s=2.0)
    e, V = np.linalg.eigh(laplacian(W).toarray())
    assert_allclose(lam, e[:20], atol=1e-8)
    r = 1.0 / (e[:20] + 0.05) if transform == "gaussian_field" else np.exp(-4.0 * e[:20] / 2.0)
    K = (V[:, :20] * r) @ V[:, :20].T
    assert_allclose(Phi @ Phi.T, K, atol=1e-7)


def test_arls_on_the_gaussian_field_factor_separates_the_moons(moons):
    """docs/algorithms.md §9: RLS on the Gaussian-field spectral kernel follows the graph (two labels suffice)."""
    X, y = moons
    Phi, _ = spectral_factor(knn_graph(X, 8), 20, eps=1e-3)
    learner = ActiveRLS.from_factor(Phi, classes=[0, 1], lam=1e-3)
    learner.add(int(np.flatnonzero(y == 0)[0]), 0).add(int(np.flatnonzero(y == 1)[0]), 1)
    assert (learner.predict() == y).mean() > 0.95


def test_bad_graph_arguments_are_named(moons):
    X, _ = moons
    with pytest.raises(ValueError, match="n_neighbors"):
        knn_graph(X, 0)
    with pytest.raises(ValueError, match="weights"):
        knn_graph(X, 3, weights="gauss")
    with pytest.raises(ValueError, match="transform"):
        spectral_factor(knn_graph(X, 3), 5, transform="order")
    with pytest.raises(ValueError, match="rank"):
        spectral_factor(knn_graph(X, 3), 200)


@pytest.mark.slow  # pynndescent compiles two numba kernels in each new process: 1-3 minutes here
def test_nndescent_neighbours_agree_with_exact_ones():
    """method="nndescent" (pynndescent): nearly the exact graph, seeded."""
    X, _ = make_moons(3000, noise=0.05, random_state=1)
    exact = knn_graph(X, 10)
    approx = knn_graph(X, 10, seed=3, method="nndescent")
    again = knn_graph(X, 10, seed=3, method="nndescent")
    assert (approx != again).nnz == 0  # seeded: the same graph twice
    shared = exact.multiply(approx).nnz
    assert shared / exact.nnz > 0.97  # recall of the exact edges
    assert (approx != approx.T).nnz == 0 and approx.diagonal().max() == 0
