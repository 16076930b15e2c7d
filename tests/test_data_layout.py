"""Tests for labeler.data.layout: PCA / t-SNE / UMAP layouts and the on-disk layout cache."""

import importlib.util

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from labeler.data.layout import available_layout_methods, compute_layout


@pytest.fixture
def X():
    rng = np.random.default_rng(0)
    return rng.normal(size=(80, 5)) * [5.0, 2.0, 1.0, 0.5, 0.1]


def test_pca_layout_matches_svd(X):
    Z = compute_layout(X, "pca")
    assert Z.shape == (80, 2) and Z.dtype == np.float64
    Xc = X - X.mean(axis=0)
    U, s, Vt = np.linalg.svd(Xc, full_matrices=False)
    expected = Xc @ Vt[:2].T
    signs = np.sign(np.sum(Z * expected, axis=0))  # components are defined up to sign
    assert_allclose(Z, expected * signs, atol=1e-10)


def test_pca_layout_of_2d_data_is_the_data():
    X2 = np.random.default_rng(1).normal(size=(10, 2))
    assert_array_equal(compute_layout(X2, "pca"), X2)
    X1 = np.arange(5.0)[:, None]
    assert_array_equal(compute_layout(X1, "tsne"), np.column_stack([X1[:, 0], np.zeros(5)]))


def test_tsne_layout_is_seeded(X):
    Z1 = compute_layout(X, "tsne", seed=3)
    Z2 = compute_layout(X, "tsne", seed=3)
    assert Z1.shape == (80, 2)
    assert np.isfinite(Z1).all()
    assert_array_equal(Z1, Z2)


def test_tsne_keeps_clusters_apart():
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(size=(30, 10)), rng.normal(size=(30, 10)) + 20])
    Z = compute_layout(X, "tsne", seed=0)
    a, b = Z[:30], Z[30:]
    gap = np.linalg.norm(a.mean(0) - b.mean(0))
    assert gap > 3 * max(a.std(0).max(), b.std(0).max())


def test_umap_missing_gives_install_hint(X, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "umap" else real(name, *a))
    assert "umap" not in available_layout_methods()
    with pytest.raises(ImportError, match="pip install umap-learn"):
        compute_layout(X, "umap")


def test_available_methods_always_has_pca_and_tsne():
    methods = available_layout_methods()
    assert methods[:2] == ["pca", "tsne"]
    assert ("umap" in methods) == (importlib.util.find_spec("umap") is not None)


@pytest.mark.parametrize("bad, exc, match", [
    ("isomap", ValueError, "Unknown layout method"),
])
def test_unknown_method(X, bad, exc, match):
    with pytest.raises(exc, match=match):
        compute_layout(X, bad)


def test_layout_rejects_nan_and_single_point():
    with pytest.raises(ValueError, match="NaN"):
        compute_layout(np.array([[0.0, np.nan], [1.0, 2.0]]))
    with pytest.raises(ValueError, match="at least 2"):
        compute_layout(np.zeros((1, 3)))
