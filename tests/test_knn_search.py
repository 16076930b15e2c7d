"""The neighbour searches of core/kernels/knn_search.py against exact (brute-force) neighbours."""

import numpy as np
import pytest

from core.kernels import knn_graph, knn_neighbours
from core.kernels.knn_search import CELLS_MAX, EXACT_KNN_MAX, default_knn_method, nearest_neighbours
from knn_oracle import brute_force


def clusters(n, d, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((6, d)) * 3
    return centres[rng.integers(6, size=n)] + rng.standard_normal((n, d))


def recall(ind, exact):
    return np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(ind, exact)])


def test_exact_method_is_brute_force():
    X = clusters(400, 5)
    ind, dist = knn_neighbours(X, 7, method="exact")
    ref_ind, ref_dist = brute_force(X, 7)
    np.testing.assert_allclose(dist, ref_dist, atol=1e-12)
    assert recall(ind, ref_ind) == 1.0  # (ties could reorder; none in continuous data)


def test_hnsw_recall_distances_and_order():
    X = clusters(3000, 16, seed=1)
    ind, dist = knn_neighbours(X, 10, method="hnsw", seed=2)
    ref_ind, _ = brute_force(X, 10)
    assert ind.shape == dist.shape == (3000, 10) and ind.dtype == np.int64
    assert recall(ind, ref_ind) >= 0.95
    assert not (ind == np.arange(3000)[:, None]).any()  # never the point itself
    # float64 distances of the pairs returned, increasing along rows
    np.testing.assert_allclose(dist, np.linalg.norm(X[ind] - X[:, None, :], axis=2), rtol=1e-12)
    assert (np.diff(dist, axis=1) >= 0).all()


def test_hnsw_is_reproducible_and_seeded():
    """One-thread insertion: the same data and seed give the same neighbours, run after run."""
    X = clusters(4000, 12, seed=3)
    runs = [knn_neighbours(X, 10, method="hnsw", seed=5) for _ in range(3)]
    for ind, dist in runs[1:]:
        np.testing.assert_array_equal(ind, runs[0][0])
        np.testing.assert_array_equal(dist, runs[0][1])
    W1 = knn_graph(X, 10, method="hnsw", seed=5)
    W2 = knn_graph(X, 10, method="hnsw", seed=5)
    assert (W1 != W2).nnz == 0 and (W1 != W1.T).nnz == 0 and W1.diagonal().max() == 0


def test_duplicates_and_ties_break_by_index():
    """Equal distances come out by increasing index (the search's own order does not leak)."""
    X = np.repeat(clusters(300, 4, seed=4), 3, axis=0)  # every point three times
    for method in ("exact", "hnsw"):
        ind, dist = nearest_neighbours(X, 4, method=method, seed=0)
        assert (dist[:, :2] == 0).all()  # the two copies of each point, at distance 0
        copies = np.sort(np.stack([ind[:, 0], ind[:, 1]], 1), 1)
        own = np.arange(900)
        expect = np.stack([np.where(own % 3 == 0, own + 1, own - own % 3),
                           np.where(own % 3 == 2, own - 1, own - own % 3 + 2)], 1)
        np.testing.assert_array_equal(copies, expect)
        if method == "hnsw":
            assert (ind[:, 0] < ind[:, 1]).all()  # ties ordered by index


def test_progress_and_choices():
    X = clusters(600, 3)
    heard = []
    nearest_neighbours(X, 5, method="hnsw", progress=heard.append)
    assert heard and heard[-1] == 1.0 and heard == sorted(heard)
    assert default_knn_method(EXACT_KNN_MAX) == "exact" and default_knn_method(EXACT_KNN_MAX + 1) == "cells"
    assert default_knn_method(CELLS_MAX) == "cells" and default_knn_method(CELLS_MAX + 1) == "hnsw"
    with pytest.raises(ValueError, match="method must be one of"):
        knn_neighbours(X, 5, method="annoy")
    with pytest.raises(ValueError, match="method must be one of"):
        knn_graph(X, 5, method="ball")


def test_refinement_never_worse_than_the_hnsw_search(monkeypatch):
    """The local join after hnswlib's search: each row's j-th distance at most the search's own."""
    from core.kernels import knn_search

    X = clusters(3000, 24, seed=6)
    monkeypatch.setattr(knn_search, "HNSW_FIRST", None)
    monkeypatch.setitem(knn_search.HNSW_PARAMS, "ef", 11)  # a poor search, so the join has work
    refined = nearest_neighbours(X, 10, method="hnsw", seed=1)
    monkeypatch.setattr(knn_search, "REFINE_ROUNDS", 0)
    start = nearest_neighbours(X, 10, method="hnsw", seed=1)
    ref_ind, _ = brute_force(X, 10)
    assert (refined[1] <= start[1] + 1e-12).all()
    assert recall(refined[0], ref_ind) > recall(start[0], ref_ind)


def test_hnsw_the_same_on_one_numba_thread():
    import numba

    X = clusters(3000, 12, seed=7)
    every = nearest_neighbours(X, 10, method="hnsw", seed=3)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = nearest_neighbours(X, 10, method="hnsw", seed=3)
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_array_equal(one[0], every[0])
    np.testing.assert_array_equal(one[1], every[1])


@pytest.mark.large
def test_hnsw_recall_at_100000_points():
    """Recall@10 >= 0.95 against brute force on 500 points of a 10^5-point, 32-dimensional mixture."""
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((6, 32)) * 1.5
    X = centres[rng.integers(6, size=100_000)] + rng.standard_normal((100_000, 32))
    ind, dist = nearest_neighbours(X, 10, method="hnsw", seed=0)
    sample = rng.choice(100_000, size=500, replace=False)
    d2 = np.stack([((X - X[i]) ** 2).sum(1) for i in sample])  # (500, n), one query at a time
    d2[np.arange(500), sample] = np.inf
    exact = np.argsort(d2, axis=1)[:, :10]
    assert recall(ind[sample], exact) >= 0.95
    np.testing.assert_allclose(dist, np.linalg.norm(X[ind] - X[:, None, :], axis=2), rtol=1e-12)
