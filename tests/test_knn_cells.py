"""The cell search of core/kernels/knn_cells.py against brute-force neighbours."""

import numpy as np
import pytest

from core.kernels import knn_cells
from core.kernels.knn_cells import cell_candidates, smallest_per_row
from core.kernels.knn_search import nearest_neighbours
from knn_oracle import brute_force


def clusters(n, d, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((6, d)) * 1.5
    return centres[rng.integers(6, size=n)] + rng.standard_normal((n, d))


def recall(ind, exact):
    return np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(ind, exact)])


def test_smallest_per_row_is_a_stable_sort():
    rng = np.random.default_rng(0)
    D = rng.integers(0, 6, size=(50, 40)).astype(np.float32)  # many ties
    idx, val = smallest_per_row(D, 7)
    ref = np.argsort(D, axis=1, kind="stable")[:, :7]
    np.testing.assert_array_equal(idx, ref)
    np.testing.assert_array_equal(val, np.take_along_axis(D, ref, 1))


def test_every_cell_probed_is_brute_force(monkeypatch):
    """With each cell compared with all cells, the neighbours are the exact ones."""
    X = clusters(1200, 8, seed=1)
    monkeypatch.setitem(knn_cells.CELL_PARAMS, "cell_size", 100)
    monkeypatch.setitem(knn_cells.CELL_PARAMS, "probes", 12)
    monkeypatch.setitem(knn_cells.CELL_PARAMS, "train", 20)
    ind, dist = nearest_neighbours(X, 7, method="cells", seed=0)
    ref_ind, ref_dist = brute_force(X, 7)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, rtol=1e-12)


def test_few_probes_recall_order_and_reproducible(monkeypatch):
    """A partial search: good recall, float64 distances increasing, never the point itself, the
    same answer run after run and on one numba thread."""
    import numba

    X = clusters(4000, 16, seed=2)
    monkeypatch.setitem(knn_cells.CELL_PARAMS, "cell_size", 100)
    monkeypatch.setitem(knn_cells.CELL_PARAMS, "probes", 8)
    ind, dist = nearest_neighbours(X, 10, method="cells", seed=3)
    ref_ind, _ = brute_force(X, 10)
    assert 0.9 <= recall(ind, ref_ind) < 1.0
    assert not (ind == np.arange(4000)[:, None]).any()
    np.testing.assert_allclose(dist, np.linalg.norm(X[ind] - X[:, None, :], axis=2), rtol=1e-12)
    assert (np.diff(dist, axis=1) >= 0).all()
    again = nearest_neighbours(X, 10, method="cells", seed=3)
    np.testing.assert_array_equal(again[0], ind)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        monkeypatch.setattr("core.kernels.knn_search._threads", lambda: 1)
        one = nearest_neighbours(X, 10, method="cells", seed=3)
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_array_equal(one[0], ind)
    np.testing.assert_array_equal(one[1], dist)


def test_candidates_hold_the_point_and_progress(monkeypatch):
    X = clusters(900, 5, seed=4)
    monkeypatch.setitem(knn_cells.CELL_PARAMS, "cell_size", 60)
    heard = []
    cand = cell_candidates(X, 5, seed=0, progress=heard.append)
    assert cand.shape == (900, 5 + 1 + knn_cells.KEEP_EXTRA)
    assert (cand[:, 0] == np.arange(900)).mean() > 0.99  # its own point is nearest (float32 ties aside)
    assert heard and heard[-1] == 1.0 and heard == sorted(heard)


@pytest.mark.parametrize("n", [12, 40])
def test_tiny_pools(n):
    X = clusters(n, 3, seed=5)
    ind, dist = nearest_neighbours(X, min(10, n - 1), method="cells")
    ref_ind, _ = brute_force(X, min(10, n - 1))
    np.testing.assert_array_equal(ind, ref_ind)
