"""The spectral factor and a graph model's kNN graph on large pools (issue 23 §3).

CI runs the 10^4 version with the large-pool kNN search forced (the cell search; by default it starts at
50,000 points); the 10^6 version is marked large
(``bash scripts/test.sh -m large tests/test_graph_scale.py``: minutes and ~4 GB). Times are measured by
benchmarks/knn_scale.py, never here.
"""

import numpy as np
import pytest

import core.kernels.knn_search as knn_search
from core.kernels.graph import laplacian, neighbour_graph
from labeler.session import model


def mixture(n, d=32, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((6, d)) * 1.5
    X = np.empty((n, d))
    comp = rng.integers(6, size=n)
    for a in range(0, n, 100_000):
        c = comp[a:a + 100_000]
        X[a:a + 100_000] = centres[c] + rng.standard_normal((c.size, d))
    return X


def large_pool_methods(monkeypatch):
    from core.kernels import knn_cells

    monkeypatch.setattr(knn_search, "EXACT_KNN_MAX", 1000)
    monkeypatch.setitem(knn_cells.CELL_PARAMS, "cell_size", 200)  # 50 cells, not all probed


def check_spectral_build(X, rank):
    heard = []
    spec = model.RlsSpec(posterior="spectral", rank=rank, knn=10)
    post, parts = model.build_factor(spec, X, progress=lambda message, fraction: heard.append((message, fraction)))
    n = X.shape[0]
    Phi, lam = parts["factor"], parts["eigenvalues"]
    assert Phi.shape == (n, rank) and lam.shape == (rank,) and np.isfinite(Phi).all()
    assert (np.diff(lam) >= 0).all() and lam[0] >= 0
    fractions = [f for _, f in heard]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0
    assert any("kNN graph" in m for m, _ in heard) and any("eigenpairs" in m for m, _ in heard)
    assert len(heard) > 4  # the bar moves during both steps, not only between them
    eig = [f for m, f in heard if "eigenpairs" in m]
    assert len(eig) > 2 and eig[-1] == 1.0
    return Phi, lam


def test_spectral_factor_with_the_large_pool_search_at_10_4(monkeypatch):
    """The large-pool search through the session's factor build: the eigenpairs are those of the Laplacian of
    the seeded graph the search gives (residuals)."""
    large_pool_methods(monkeypatch)
    X = mixture(10_000)
    Phi, lam = check_spectral_build(X, 20)
    ind, dist = knn_search.nearest_neighbours(X, 10, seed=0)  # the graph the build used (seeded)
    W = neighbour_graph(ind, dist)
    V = Phi / np.linalg.norm(Phi, axis=0)  # the factor's columns are the eigenvectors, scaled
    L = laplacian(W)
    assert np.linalg.norm(L @ V - V * lam, axis=0).max() < 1e-6


def test_graph_model_graph_at_10_4_uses_the_large_pool_search_and_reports(monkeypatch):
    large_pool_methods(monkeypatch)
    X = mixture(10_000, seed=1)
    heard = []
    spec = model.GraphSpec(model="harmonic", knn=10, strategy="margin")
    W, parts = model.build_graph(spec, X, progress=lambda m, f: heard.append(f))
    assert W.shape == (10_000, 10_000) and parts["neighbours"].shape == (10_000, 10)
    assert heard == sorted(heard) and len(heard) > 2
    again, _ = model.build_graph(spec, X)
    assert (W != again).nnz == 0  # seeded and one-thread build: the same graph


@pytest.mark.slow
@pytest.mark.large
def test_spectral_factor_at_10_6():
    """The default methods at 10^6 x 32 (hnsw on the points renumbered by k-means cell, Lanczos on a
    Chebyshev filter of the renumbered graph): minutes on 2 cores."""
    check_spectral_build(mixture(1_000_000), 100)
