"""Tests for labeler.data.preprocessing: standardisation and PCA reduction."""

import numpy as np
import pytest
from numpy.testing import assert_allclose

from labeler.data.preprocessing import pca_reduce, standardize


def test_standardize_matches_definition():
    rng = np.random.default_rng(0)
    X = rng.normal(loc=[1.0, -5.0, 100.0], scale=[0.1, 2.0, 30.0], size=(200, 3))
    Z, (mean, scale) = standardize(X)
    assert_allclose(Z.mean(axis=0), 0.0, atol=1e-13)
    assert_allclose(Z.std(axis=0), 1.0, rtol=1e-13)
    for j in range(3):
        col = X[:, j]
        m = sum(col) / len(col)
        s = (sum((c - m) ** 2 for c in col) / len(col)) ** 0.5
        assert mean[j] == pytest.approx(m, rel=1e-12)
        assert scale[j] == pytest.approx(s, rel=1e-12)


def test_standardize_applies_given_stats():
    rng = np.random.default_rng(1)
    X, X_new = rng.normal(size=(50, 2)), rng.normal(size=(10, 2))
    _, stats = standardize(X)
    Z_new, stats_back = standardize(X_new, stats=stats)
    assert_allclose(Z_new, (X_new - stats[0]) / stats[1])
    assert stats_back[0] is stats[0] or np.array_equal(stats_back[0], stats[0])


def test_standardize_constant_column_warns_and_is_zero():
    X = np.column_stack([np.arange(5.0), np.full(5, 3.0)])
    with pytest.warns(UserWarning, match=r"\[1\] are constant"):
        Z, (mean, scale) = standardize(X)
    assert scale[1] == 1.0
    assert_allclose(Z[:, 1], 0.0)


@pytest.mark.parametrize("stats, match", [
    ((np.zeros(3), np.ones(3)), "columns"),
    ((np.zeros(2), np.array([1.0, 0.0])), "scale > 0"),
    ("nonsense", "mean, scale"),
])
def test_standardize_bad_stats(stats, match):
    with pytest.raises(ValueError, match=match):
        standardize(np.ones((4, 2)), stats=stats)


def test_standardize_rejects_nan():
    with pytest.raises(ValueError, match="row 1, column 0"):
        standardize(np.array([[1.0, 2.0], [np.nan, 1.0]]))


def test_pca_reduce_matches_svd():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(60, 8)) @ rng.normal(size=(8, 8))
    Z, (mean, comps) = pca_reduce(X, 3, seed=0)
    Xc = X - X.mean(axis=0)
    _, s, Vt = np.linalg.svd(Xc, full_matrices=False)
    signs = np.sign(np.sum(comps * Vt[:3], axis=1))
    assert_allclose(comps, Vt[:3] * signs[:, None], atol=1e-10)
    assert_allclose(Z, Xc @ comps.T, atol=1e-10)
    assert_allclose(comps @ comps.T, np.eye(3), atol=1e-12)
    assert_allclose(mean, X.mean(axis=0))


@pytest.mark.parametrize("k", [0, 9, 2.5, True])
def test_pca_reduce_bad_components(k):
    with pytest.raises(ValueError, match="n_components"):
        pca_reduce(np.random.default_rng(0).normal(size=(20, 8)), k)


# ---- shared_scale: the rule of standardize="auto" for tables (issue 20 §6) ----------------------
def test_shared_scale_finds_pixel_tables_and_components_only():
    from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
    from sklearn.decomposition import PCA

    from labeler.data.preprocessing import shared_scale

    digits = load_digits().data
    assert shared_scale(digits).startswith("pixel-like")
    assert shared_scale(digits / 16.0).startswith("pixel-like")
    pcs = PCA(n_components=20, random_state=0).fit_transform(digits)
    assert shared_scale(pcs).startswith("components")
    for loader in (load_iris, load_wine, load_breast_cancer):
        assert shared_scale(loader().data) is None, loader.__name__
    # components rotated are no longer components; shuffled order of variance neither
    rot = pcs @ np.linalg.qr(np.random.default_rng(0).standard_normal((20, 20)))[0]
    assert shared_scale(rot) is None
    assert shared_scale(pcs[:, ::-1]) is None
    # a measurement table with columns in different units, non-negative
    rng = np.random.default_rng(1)
    table = np.abs(rng.standard_normal((100, 10))) * np.geomspace(1, 1e4, 10)
    assert shared_scale(table) is None


def test_parse_standardize():
    from labeler.data.preprocessing import parse_standardize

    assert parse_standardize("auto") == "auto"
    assert parse_standardize("on") is True and parse_standardize("OFF") is False
    assert parse_standardize(True) is True
    with pytest.raises(ValueError, match="auto, on, off"):
        parse_standardize("yes")


def test_shared_column_moments_give_the_same_bits_as_computing_them_apart():
    from labeler.data.preprocessing import ColumnMoments, shared_scale, standardize

    rng = np.random.default_rng(6)
    X = np.ascontiguousarray(rng.standard_normal((400, 5)) * [1, 10, 0.1, 3, 7] + [0, 5, -2, 1, 0])
    X[:, 3] = 2.5  # a constant column: scaled by 1, with the warning
    moments = ColumnMoments(X)
    assert shared_scale(X, moments=moments) == shared_scale(X)
    with pytest.warns(UserWarning, match="constant"):
        alone, (mean_a, scale_a) = standardize(X)
    with pytest.warns(UserWarning, match="constant"):
        shared, (mean_s, scale_s) = standardize(X, moments=moments)
    assert np.array_equal(alone, shared) and np.array_equal(mean_a, mean_s) and np.array_equal(scale_a, scale_s)
    assert np.array_equal(moments.std, X.std(axis=0))  # the shared moments are not changed by the scaling
    other = X.copy()
    other[0, 0] += 1.0  # moments of another array are not used
    assert np.array_equal(standardize(other, moments=moments)[0], standardize(other)[0])
