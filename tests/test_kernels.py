"""core/kernels.py against sklearn.metrics.pairwise (the oracle)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

import core.kernels.kernel as kernels
from core.kernels import Kernel


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    return rng.normal(size=(37, 4)), rng.normal(size=(23, 4))


@pytest.mark.parametrize("width", [0.3, 1.0, 2.5])
def test_rbf_matches_sklearn(data, width):
    X, Y = data
    # k = exp(-||x-y||^2 / (2 s^2)) is sklearn's rbf with gamma = 1 / (2 s^2)
    assert_allclose(Kernel("rbf", width=width)(X, Y), rbf_kernel(X, Y, gamma=1 / (2 * width**2)), rtol=1e-12, atol=1e-14)
    assert_allclose(Kernel("rbf", width=width)(X), rbf_kernel(X, gamma=1 / (2 * width**2)), rtol=1e-12, atol=1e-14)


def test_linear_matches_sklearn(data):
    X, Y = data
    assert_allclose(Kernel("linear")(X, Y), linear_kernel(X, Y), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("degree, coef0", [(1, 0.0), (2, 1.0), (3, 0.5), (5, 2.0)])
def test_poly_matches_sklearn(data, degree, coef0):
    X, Y = data
    expected = polynomial_kernel(X, Y, degree=degree, gamma=1.0, coef0=coef0)
    assert_allclose(Kernel("poly", degree=degree, coef0=coef0)(X, Y), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind", ["rbf", "linear", "poly"])
def test_diag_matches_full_matrix(data, kind):
    X, _ = data
    k = Kernel(kind, width=0.7, degree=2, coef0=1.5)
    assert_allclose(k.diag(X), np.diag(k(X)), rtol=1e-12)


@pytest.mark.parametrize("kind", ["rbf", "linear", "poly"])
def test_row_blocks_and_out_give_the_same_matrix(data, kind, monkeypatch):
    X, Y = data
    k = Kernel(kind, width=1.3)
    full = k(X, Y)
    monkeypatch.setattr(kernels, "_BLOCK_BYTES", 8 * Y.shape[0] * 5)  # 5 rows per block
    out = np.empty((X.shape[0], Y.shape[0]))
    result = k(X, Y, out=out)
    assert result is out
    assert_allclose(out, full, rtol=1e-13, atol=1e-15)


def test_rbf_of_identical_points_is_one_and_symmetric(data):
    X, _ = data
    K = Kernel("rbf", width=1.0)(X)
    assert_allclose(np.diag(K), 1.0)
    assert np.all(K <= 1.0) and np.all(K >= 0.0)
    assert_allclose(K, K.T, atol=1e-15)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(kind="sigmoid"), "Unknown kernel"),
        (dict(kind="rbf", width=0.0), "width"),
        (dict(kind="rbf", width=-1.0), "width"),
        (dict(kind="rbf", width=float("nan")), "width"),
        (dict(kind="poly", degree=0), "degree"),
        (dict(kind="poly", degree=2.5), "degree"),
    ],
)
def test_bad_parameters_raise(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Kernel(**kwargs)


def test_wrong_out_array_raises(data):
    X, Y = data
    with pytest.raises(ValueError, match="out must be"):
        Kernel("rbf")(X, Y, out=np.empty((3, 3)))
    with pytest.raises(ValueError, match="out must be"):
        Kernel("rbf")(X, Y, out=np.empty((X.shape[0], Y.shape[0]), dtype=np.float32))


# --------------------------------------------------------------------------- median_distance
def test_median_distance_is_the_median_over_all_pairs():
    from scipy.spatial.distance import pdist

    X = np.random.default_rng(1).standard_normal((30, 3))
    brute = np.median([np.linalg.norm(X[i] - X[j]) for i in range(30) for j in range(i + 1, 30)])
    assert kernels.median_distance(X) == pytest.approx(brute, rel=1e-14)
    assert kernels.median_distance(X) == pytest.approx(np.median(pdist(X)), rel=1e-15)


def test_median_distance_subsamples_with_the_seed():
    from scipy.spatial.distance import pdist

    big = np.random.default_rng(2).standard_normal((50, 2))
    sub = big[np.random.default_rng(4).choice(50, 20, replace=False)]
    assert kernels.median_distance(big, max_points=20, seed=4) == np.median(pdist(sub))
    # a generator draws the same subset as the int that seeded it, and is advanced
    rng = np.random.default_rng(4)
    assert kernels.median_distance(big, max_points=20, seed=rng) == np.median(pdist(sub))
    assert kernels.median_distance(big, max_points=20, seed=5) != np.median(pdist(sub))
    # no subset below max_points: the seed does not matter
    assert kernels.median_distance(big, seed=1) == kernels.median_distance(big, seed=2) == np.median(pdist(big))


@pytest.mark.parametrize(
    "X, match",
    [
        (np.ones((6, 2)), "identical"),  # every point the same
        (np.r_[np.zeros((5, 2)), [[1.0, 0.0]]], "identical"),  # 10 of 15 pairs identical
        (np.zeros((1, 2)), "2"),  # one point: no pair
        (np.array([[0.0, np.nan], [1.0, 1.0]]), "NaN"),
    ],
)
def test_median_distance_refuses_unusable_data(X, match):
    with pytest.raises(ValueError, match=match):
        kernels.median_distance(X)


def test_median_distance_refuses_bad_max_points():
    with pytest.raises(ValueError, match="max_points"):
        kernels.median_distance(np.eye(3), max_points=1)
