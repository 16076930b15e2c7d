"""The local-join refinement of core/kernels/knn_refine.py against brute-force neighbours."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest

from core.kernels.knn_refine import refine_neighbours
from knn_oracle import brute_force


def clusters(n, d, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((5, d)) * 3
    return centres[rng.integers(5, size=n)] + rng.standard_normal((n, d))


def random_start(n, k, seed):
    """k random other points per row (a poor start)."""
    rng = np.random.default_rng(seed)
    ind = np.argsort(rng.random((n, n - 1)), axis=1)[:, :k]  # distinct in each row
    return ind + (ind >= np.arange(n)[:, None])  # skip the point itself


def recall(ind, exact):
    return np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(ind, exact)])


def test_exact_start_is_a_fixed_point():
    X = clusters(500, 6)
    ref_ind, ref_dist = brute_force(X, 8)
    ind, dist = refine_neighbours(X, ref_ind, rounds=3)
    np.testing.assert_array_equal(ind, ref_ind)
    np.testing.assert_allclose(dist, ref_dist, rtol=1e-12)


def test_never_worse_than_its_start_and_converges_to_exact():
    X = clusters(800, 5, seed=1)
    ref_ind, ref_dist = brute_force(X, 10)
    start = random_start(800, 10, seed=2)
    start_dist = np.sort(np.linalg.norm(X[start] - X[:, None, :], axis=2), axis=1)
    previous, previous_dist = start, start_dist
    recalls = []
    for rounds in (1, 2, 3, 6, 20):
        ind, dist = refine_neighbours(X, start, rounds=rounds)
        assert (dist <= previous_dist + 1e-12).all()  # row by row, rank by rank: never worse
        np.testing.assert_allclose(dist, np.linalg.norm(X[ind] - X[:, None, :], axis=2), rtol=1e-12)
        assert (np.diff(dist, axis=1) >= 0).all() and not (ind == np.arange(800)[:, None]).any()
        recalls.append(recall(ind, ref_ind))
        previous_dist = dist
    assert recalls == sorted(recalls) and recalls[0] > recall(previous, ref_ind)
    assert recalls[-1] >= 0.99  # the local join from a random start all but reaches the exact lists


def test_the_same_answer_on_one_thread_and_on_all():
    X = clusters(1500, 8, seed=3)
    start = random_start(1500, 10, seed=4)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = refine_neighbours(X, start, rounds=2)
    finally:
        numba.set_num_threads(threads)
    every = refine_neighbours(X, start, rounds=2)
    np.testing.assert_array_equal(one[0], every[0])
    np.testing.assert_array_equal(one[1], every[1])


def test_self_repeats_and_missing_entries():
    X = clusters(300, 4, seed=5)
    start = random_start(300, 6, seed=6)
    start[:, 1] = np.arange(300)  # the point itself
    start[:, 2] = start[:, 0]  # a repeat
    start[:50, 3] = -1  # none found
    ind, dist = refine_neighbours(X, start, rounds=0)  # only cleaned and sorted
    assert not (ind == np.arange(300)[:, None]).any()
    assert ((ind[:, -2:] == -1) & np.isinf(dist[:, -2:])).all()  # self and repeat sort last as missing
    for row in ind:
        kept = row[row >= 0]
        assert len(set(kept)) == kept.size
    ind, dist = refine_neighbours(X, start, rounds=4)
    assert (ind >= 0).all() and np.isfinite(dist).all()  # the join fills the gaps


def test_ties_break_by_index():
    X = np.repeat(clusters(200, 3, seed=7), 3, axis=0)  # every point three times
    ref_ind, _ = brute_force(X, 4)
    ind, dist = refine_neighbours(X, ref_ind[:, ::-1], rounds=2)  # the exact sets, in reverse order
    np.testing.assert_array_equal(ind, ref_ind)
    assert (dist[:, :2] == 0).all() and (ind[:, 0] < ind[:, 1]).all()


def test_bad_start_is_named():
    X = clusters(50, 3)
    with pytest.raises(ValueError, match="shape"):
        refine_neighbours(X, np.zeros((49, 3), dtype=int))
    with pytest.raises(ValueError, match="outside"):
        refine_neighbours(X, np.full((50, 3), 50))


def test_compiled_once_per_installation():
    """numba's on-disk cache: a second process loads the kernels instead of compiling them."""
    code = textwrap.dedent("""
        import numpy as np
        from core.kernels import knn_refine as m
        X = np.random.default_rng(0).standard_normal((200, 3))
        m.refine_neighbours(X, np.tile(np.arange(1, 5), (200, 1)) % 200, rounds=1)
        print(sum(m._refine_round.stats.cache_hits.values()), sum(m._refine_round.stats.cache_misses.values()))
    """)
    root = Path(__file__).resolve().parents[1]
    runs = [subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True,
                           env={**os.environ, "PYTHONPATH": str(root)}) for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    hits, misses = map(int, runs[1].stdout.split())
    assert hits >= 1 and misses == 0
