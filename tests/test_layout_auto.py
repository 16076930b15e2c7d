"""The "auto" layout (UMAP where it pays, else PCA), its store cache, and old sessions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import labeler.data.layout as layout_mod
from labeler.data.layout import (UMAP_AUTO_MAX_SAMPLES, UMAP_AUTO_MIN_SAMPLES, auto_layout_method,
                                 available_layout_methods)
from labeler.session import LabelingSession, SessionConfig

needs_umap = pytest.mark.skipif("umap" not in available_layout_methods(), reason="umap-learn missing")


@pytest.fixture
def table(tmp_path):
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(40, 6)), rng.normal(size=(40, 6)) + 5.0])
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(6)])
    frame["label"] = ["a"] * 40 + ["b"] * 40
    path = tmp_path / "pool.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture
def fake_umap(monkeypatch):
    """compute_layout with a cheap stand-in for UMAP (counts its calls): the real one is tested
    in test_umap_layout_is_seeded_and_keeps_clusters_apart."""
    calls = []
    real = layout_mod.compute_layout

    def fake(X, method="pca", seed=0):
        calls.append(method)
        if method == "umap":
            return np.ascontiguousarray(np.asarray(X)[:, :2] * 2.0 + seed, dtype=np.float64)
        return real(X, method, seed)

    monkeypatch.setattr(layout_mod, "compute_layout", fake)
    return calls


@needs_umap
def test_auto_rule():
    assert auto_layout_method(100_000, 2)[0] == "pca"
    assert auto_layout_method(100_000, 3)[0] == "pca"
    assert auto_layout_method(100_000, 64)[0] == "umap"
    assert auto_layout_method(UMAP_AUTO_MIN_SAMPLES - 1, 64)[0] == "pca"
    assert auto_layout_method(UMAP_AUTO_MAX_SAMPLES, 64)[0] == "umap"
    method, why = auto_layout_method(1_000_000, 64)
    assert method == "pca"
    assert "minutes" in why and f"{UMAP_AUTO_MAX_SAMPLES:,}" in why and "layout 'umap'" in why


def test_auto_without_umap_says_how_to_get_it(monkeypatch):
    monkeypatch.setattr(layout_mod, "available_layout_methods", lambda: ["pca", "tsne"])
    method, why = auto_layout_method(100_000, 64)
    assert method == "pca" and "pip install umap-learn" in why


@needs_umap
def test_auto_layout_is_umap_computed_once_and_kept_in_the_store(table, tmp_path, monkeypatch, fake_umap):
    monkeypatch.setattr(layout_mod, "UMAP_AUTO_MIN_SAMPLES", 50)  # the 80-point table qualifies
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset=str(table), seed=2))
    assert s.config.layout == "umap"
    assert s.auto_settings["layout"].startswith("UMAP")
    first = s.layout  # the first query does not wait for UMAP: the PCA map meanwhile
    assert s.layout_pending and s.layout_method == "pca" and "umap" not in fake_umap
    np.testing.assert_array_equal(first, s.fast_layout())
    Z = s.compute_layout().copy()  # what the app runs in the background
    assert fake_umap.count("umap") == 1 and Z.shape == (80, 2)
    assert not s.layout_pending and s.layout_method == "umap"
    np.testing.assert_array_equal(s.layout, Z)
    sid = s.id
    s.close()
    fake_umap.clear()
    with LabelingSession.open(store, sid) as again:  # reopened: read from the store
        np.testing.assert_array_equal(again.layout, Z)
    assert fake_umap == []


def test_layout_choice_stays_settable(table, tmp_path, fake_umap):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset=str(table), layout="pca"))
    assert s.config.layout == "pca" and s.layout.shape == (80, 2)
    assert "umap" not in fake_umap
    s.close()


@needs_umap
def test_old_sessions_keep_their_layout(table, tmp_path, monkeypatch, fake_umap):
    # made before "auto" could mean UMAP: it stored the resolved "pca" and its PCA map
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset=str(table), layout="pca"))
    Z, sid = s.layout.copy(), s.id
    s.close()
    monkeypatch.setattr(layout_mod, "UMAP_AUTO_MIN_SAMPLES", 50)  # now "auto" would be UMAP
    fake_umap.clear()
    with LabelingSession.open(store, sid) as again:
        assert again.config.layout == "pca"
        np.testing.assert_array_equal(again.layout, Z)
    assert fake_umap == []  # not even PCA recomputed: the stored array


def test_small_pools_and_low_dimensions_get_pca(table, tmp_path, fake_umap):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset=str(table)))
    assert s.config.layout == "pca"  # 80 points < UMAP_AUTO_MIN_SAMPLES
    assert "PCA" in s.auto_settings["layout"]
    s.close()
    m = LabelingSession.create(tmp_path / "m.sqlite", SessionConfig(dataset="moons",
                                                                     dataset_options={"n": 60}))
    assert m.config.layout == "given" and "layout" not in m.auto_settings
    m.close()


@needs_umap
@pytest.mark.slow
def test_umap_layout_is_seeded_and_keeps_clusters_apart():
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(size=(150, 10)), rng.normal(size=(150, 10)) + 8])
    Z1 = layout_mod.compute_layout(X, "umap", seed=4)
    Z2 = layout_mod.compute_layout(X, "umap", seed=4)
    assert Z1.shape == (300, 2) and Z1.dtype == np.float64 and np.isfinite(Z1).all()
    np.testing.assert_array_equal(Z1, Z2)
    a, b = Z1[:150], Z1[150:]
    assert np.linalg.norm(a.mean(0) - b.mean(0)) > 3 * max(a.std(0).max(), b.std(0).max())
    # tiny pools: the PCA layout
    np.testing.assert_array_equal(layout_mod.compute_layout(X[:3], "umap"),
                                  layout_mod.compute_layout(X[:3], "pca"))
