"""core.selection.prior.cluster_separation: lambda_c of the normalised Laplacian against a dense
eigendecomposition, 0 on a graph of c components, clear refusals."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from core.selection.prior import cluster_separation


def _random_graph(n, seed):
    rng = np.random.default_rng(seed)
    A = np.triu((rng.random((n, n)) < 0.05).astype(float), 1)
    A[np.arange(n - 1), np.arange(1, n)] = 1.0  # a path: connected, no node of degree 0
    return A + A.T


@pytest.mark.parametrize("n", [50, 300])
def test_matches_the_dense_spectrum(n):
    A = _random_graph(n, n)
    d = A.sum(axis=1)
    lam = np.linalg.eigvalsh(np.eye(n) - A / np.sqrt(np.outer(d, d)))
    for c in (1, 2, 5):
        assert cluster_separation(sp.csr_matrix(A), c) == pytest.approx(lam[c - 1], abs=1e-8)


def test_zero_on_as_many_components_and_refusals():
    blocks = sp.block_diag([sp.csr_matrix(_random_graph(80, s)) for s in range(3)]).tocsr()
    assert cluster_separation(blocks, 3) == pytest.approx(0.0, abs=1e-8)
    assert cluster_separation(blocks, 4) > 0.01
    with pytest.raises(ValueError, match="n_clusters"):
        cluster_separation(blocks, 0)
    lonely = sp.csr_matrix(np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]], dtype=float))
    with pytest.raises(ValueError, match="degree 0"):
        cluster_separation(lonely, 2)


def test_first_model_reads_the_separation_against_the_threshold():
    from core.selection.prior import first_model
    blocks = sp.block_diag([sp.csr_matrix(_random_graph(80, s)) for s in range(2)]).tocsr()
    assert first_model(blocks, 2, threshold=1e-6) == "harmonic"  # two components: lambda_2 = 0
    assert first_model(blocks, 3, threshold=1e-6) == "rls"
    assert first_model(blocks, 1, threshold=1e-6) == "harmonic"  # at least two parts are asked for


def test_first_model_keeps_rls_on_more_components_than_classes():
    from core.selection.prior import first_model
    four = sp.block_diag([sp.csr_matrix(_random_graph(60, s)) for s in range(4)]).tocsr()
    assert first_model(four, 2, threshold=1.0) == "rls"  # 4 components, 2 classes
    assert first_model(four, 4, threshold=1e-6) == "harmonic"
