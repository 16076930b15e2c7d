"""The locality renumbering of sparse graphs (core/kernels/locality.py), and the Chebyshev
eigensolver on a renumbered graph against the same solve in the given numbering."""

import numpy as np
import pytest
import scipy.sparse as sp

from core.kernels.graph import knn_graph, laplacian
from core.kernels.locality import bandwidth, inverse_permutation, locality_order, symmetric_permutation


def shuffled_path(n=500, seed=0):
    """A path graph whose nodes are numbered at random: bandwidth about n, 1 at best."""
    rng = np.random.default_rng(seed)
    label = rng.permutation(n)
    i = label[:-1]
    j = label[1:]
    A = sp.coo_matrix((np.ones(n - 1), (i, j)), shape=(n, n))
    return (A + A.T).tocsr()


def clusters_graph(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((5, 4)) * 4
    X = centres[rng.integers(5, size=n)] + rng.standard_normal((n, 4))
    return knn_graph(X, 8)


def test_order_is_a_permutation_that_narrows_the_band():
    A = shuffled_path()
    order = locality_order(A)
    assert order.dtype == np.int64 and np.array_equal(np.sort(order), np.arange(A.shape[0]))
    assert bandwidth(A) > 100
    assert bandwidth(symmetric_permutation(A, order)) == 1  # a path renumbered along itself
    W = clusters_graph()
    assert bandwidth(symmetric_permutation(W, locality_order(W))) < bandwidth(W) / 3


def test_symmetric_permutation_and_inverse_against_dense():
    rng = np.random.default_rng(1)
    A = sp.random(60, 60, density=0.1, random_state=2, format="csr")
    A = A + A.T
    order = rng.permutation(60)
    P = symmetric_permutation(A, order)
    dense = A.toarray()
    np.testing.assert_array_equal(P.toarray(), dense[np.ix_(order, order)])
    assert P.has_sorted_indices
    x = rng.standard_normal(60)
    np.testing.assert_array_equal(x[order][inverse_permutation(order)], x)
    np.testing.assert_array_equal(inverse_permutation(order)[order], np.arange(60))
    with pytest.raises(ValueError, match="shape"):
        symmetric_permutation(A, order[:-1])
    with pytest.raises(ValueError, match="square"):
        locality_order(sp.csr_matrix((3, 4)))


def test_estimated_cut_does_not_depend_on_the_numbering():
    """Probes drawn in the given numbering and renumbered with the matrix: the same Lanczos
    quadrature, so the same cut up to rounding."""
    from core.kernels.laplacian_eigen import estimated_cut

    L = laplacian(clusters_graph(seed=2))
    order = locality_order(L)
    given = estimated_cut(L, 30, seed=4)
    renumbered = estimated_cut(symmetric_permutation(L, order), 30, seed=4, order=order)
    assert given is not None and abs(given - renumbered) < 1e-10


def test_chebyshev_renumbered_gives_the_given_graphs_eigenpairs(monkeypatch):
    """The same solve with and without the renumbering (forced on a small graph): the same
    eigenvalues and eigenvectors, in the given numbering, and the renumbering did run."""
    from core.kernels import laplacian_eigen

    L = laplacian(clusters_graph(seed=3))
    monkeypatch.setattr(laplacian_eigen, "LOCALITY_ORDER_ABOVE", None)
    lam0, V0 = laplacian_eigen.chebyshev_eigenpairs(L, 25, seed=6)
    calls = []
    plain = laplacian_eigen.locality_order
    monkeypatch.setattr(laplacian_eigen, "locality_order", lambda A: calls.append(A.shape) or plain(A))
    monkeypatch.setattr(laplacian_eigen, "LOCALITY_ORDER_ABOVE", 1)
    lam1, V1 = laplacian_eigen.chebyshev_eigenpairs(L, 25, seed=6)
    assert calls == [L.shape]
    np.testing.assert_allclose(lam1, lam0, atol=1e-11)
    assert np.linalg.norm(L @ V1 - V1 * lam1, axis=0).max() < 1e-8  # eigenvectors of the GIVEN L
    gaps = np.diff(lam0)
    simple = [i for i in range(25) if (i == 0 or gaps[i - 1] > 1e-6) and (i == 24 or gaps[i] > 1e-6)]
    assert len(simple) > 10
    np.testing.assert_allclose(np.abs(np.sum(V0[:, simple] * V1[:, simple], axis=0)), 1.0, atol=1e-8)


def test_cell_order_keeps_blocks_and_brings_near_points_together(monkeypatch):
    from core.kernels import locality
    from core.kernels.locality import cell_order

    monkeypatch.setitem(locality.CELL_ORDER, "cell_size", 50)  # 80 cells for 20 clusters

    rng = np.random.default_rng(4)
    centres = rng.standard_normal((20, 6)) * 5
    X = centres[rng.integers(20, size=4000)] + rng.standard_normal((4000, 6)) * 0.3
    order = cell_order(X, seed=1, blocks=3)
    assert np.array_equal(np.sort(order), np.arange(4000))
    for part in np.array_split(np.arange(4000), 3):  # each block holds the same points after it
        assert set(order[part].tolist()) == set(part.tolist())
    step = np.linalg.norm(np.diff(X[order], axis=0), axis=1).mean()
    given = np.linalg.norm(np.diff(X, axis=0), axis=1).mean()
    assert step < given / 3  # consecutive points near each other
    assert np.array_equal(cell_order(X, seed=1, blocks=3), order)  # deterministic


def test_hnsw_search_renumbered_is_the_search_of_the_renumbered_points_mapped_back(monkeypatch):
    """With the renumbering forced on a small pool: the answer is exactly the search of X[P]
    (renumbering off) mapped back to the given numbering, ties by the given index; and it is a
    good kNN answer in the given numbering (distances of the named points, recall)."""
    pytest.importorskip("hnswlib")
    from core.kernels import knn_search

    rng = np.random.default_rng(5)
    X = rng.standard_normal((3000, 8))
    X[7] = X[11]  # a duplicate: a tie the mapping must order by the given index
    P = rng.permutation(3000)
    monkeypatch.setattr(knn_search, "cell_order", lambda X_, seed, blocks: P)
    monkeypatch.setattr(knn_search, "HNSW_ORDER_ABOVE", 1)
    report = knn_search.SearchReport()
    ind, dist = knn_search.nearest_neighbours(X, 10, method="hnsw", seed=2, report=report)
    # the recall check's points were drawn in the given numbering: the same estimate as checking
    # the returned lists afterwards
    assert report.recall == knn_search.sampled_recall(X, ind, 10, seed=2)[0]
    monkeypatch.setattr(knn_search, "HNSW_ORDER_ABOVE", None)
    ind_p, dist_p = knn_search.nearest_neighbours(X[P], 10, method="hnsw", seed=2)
    inverse = inverse_permutation(P)
    expected_ind, expected_dist = P[ind_p][inverse], dist_p[inverse]
    for i in range(3000):  # per row: by distance, then by index
        o = np.lexsort((expected_ind[i], expected_dist[i]))
        np.testing.assert_array_equal(ind[i], expected_ind[i][o])
        np.testing.assert_array_equal(dist[i], expected_dist[i][o])
    np.testing.assert_allclose(dist, np.linalg.norm(X[ind] - X[:, None, :], axis=2), rtol=1e-12, atol=1e-12)
    assert not (ind == np.arange(3000)[:, None]).any()
    exact = np.argsort(((X[:200, None, :] - X[None]) ** 2).sum(-1), axis=1)[:, 1:11]
    assert np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ind[:200], exact)]) > 0.9
