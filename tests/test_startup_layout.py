"""The map's slow layout computed in the background (labeler/ui/startup.py): the first query
with the fast layout, the job kept across reruns, its progress, the swap, its errors."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import labeler.ui.startup as startup
from labeler.session import LabelingSession, SessionConfig
from labeler.session.cache import SessionCache
from labeler.ui.registry import REGISTRY
from labeler.ui.startup import layout_job, layout_seconds_estimate, start_layout_job

APP = str(Path(__file__).resolve().parents[1] / "labeler" / "app.py")


@pytest.fixture
def pool(tmp_path):
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(size=(60, 5)), rng.normal(size=(60, 5)) + 3.0])
    path = tmp_path / "pool.npz"
    np.savez(path, X=X, y=np.array(["a"] * 60 + ["b"] * 60))
    return path


@pytest.fixture
def gated_layout():
    """A stand-in for UMAP that waits until the test opens the gate (no timing assumption)."""
    gate = threading.Event()
    calls = []

    def compute(X, method, seed):
        calls.append(method)
        assert gate.wait(60), "the test never opened the gate"
        return np.asarray(X)[:, :2] * 10.0 + seed

    compute.gate, compute.calls = gate, calls
    return compute


def _session(store, pool):
    return LabelingSession.create(store, SessionConfig(dataset=str(pool), layout="umap", seed=3))


def _finish(job, gate):
    gate.set()
    job.thread.join(60)
    assert not job.thread.is_alive()


def test_job_swaps_the_layout_in_and_is_started_once(tmp_path, pool, gated_layout):
    s = _session(tmp_path / "s.sqlite", pool)
    fast = s.layout
    assert s.layout_pending and s.layout_method == "pca"
    job = start_layout_job(s, compute=gated_layout)
    assert start_layout_job(s, compute=gated_layout) is job is layout_job(s)  # survives reruns
    assert job.running and 0.0 <= job.fraction() <= 0.95 and "UMAP map of 120 points" in job.text()
    q = s.next_query()  # the session answers while the layout is computed
    s.label(q, "a" if q < 60 else "b")
    assert s.layout is fast
    _finish(job, gated_layout.gate)
    assert gated_layout.calls == ["umap"] and job.error is None and job.fraction() == 1.0
    assert not s.layout_pending and s.layout_method == "umap"
    np.testing.assert_array_equal(s.layout, np.asarray(s.X)[:, :2] * 10.0 + 3)
    assert start_layout_job(s, compute=gated_layout) is None  # nothing pending
    s.close()


def test_a_failed_job_is_shown_not_restarted(tmp_path, pool):
    def broken(X, method, seed):
        raise ImportError("needs umap-learn")

    s = _session(tmp_path / "s.sqlite", pool)
    job = start_layout_job(s, compute=broken)
    job.thread.join(30)
    assert isinstance(job.error, ImportError) and s.layout_pending
    assert start_layout_job(s, compute=broken) is job  # not started again
    assert s.layout.shape == (120, 2)  # the PCA map stays
    s.close()


def test_reopened_object_reads_what_the_job_kept(tmp_path, pool, gated_layout):
    store = tmp_path / "s.sqlite"
    s = _session(store, pool)
    job = start_layout_job(s, compute=gated_layout)
    _finish(job, gated_layout.gate)
    Z = s.layout.copy()
    sid = s.id
    s.close()
    again = LabelingSession.open(store, sid)  # e.g. evicted from the registry, then reopened
    assert not again.layout_pending and np.array_equal(again.layout, Z) and gated_layout.calls == ["umap"]
    again.close()


def test_layout_in_a_separate_process_reads_the_cached_features(tmp_path):
    X = np.random.default_rng(0).standard_normal((40, 4))
    cache = SessionCache(tmp_path / "c")
    cache.save("features", "k", X)
    mapped = cache.load("features", "k")
    from labeler.data.layout import compute_layout

    want = compute_layout(X, "pca", 2)
    assert isinstance(mapped, np.memmap) and str(mapped.filename).endswith(".npy")
    sent = []
    real_submit = startup.ProcessPoolExecutor.submit

    def submit(self, fn, *args):
        sent.append(args)
        return real_submit(self, fn, *args)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(startup.ProcessPoolExecutor, "submit", submit)
        np.testing.assert_array_equal(startup._layout_in_process(mapped, "pca", 2), want)  # by file name
    assert sent[0][0] == mapped.filename and sent[0][2] is None  # the path went over, not the array
    np.testing.assert_array_equal(startup._layout_in_process(X, "pca", 2), want)  # copied over


def test_estimates():
    assert layout_seconds_estimate("umap", 100_000) > layout_seconds_estimate("umap", 10_000) > 10
    assert layout_seconds_estimate("pca", 10**6) == 1.0


# ---- the app -------------------------------------------------------------------------------------
def test_app_shows_the_first_query_at_once_then_swaps_the_map(tmp_path, pool, gated_layout, monkeypatch):
    store = tmp_path / "store.sqlite"
    monkeypatch.setenv("LABELER_STORE", str(store))
    monkeypatch.setenv("LABELER_DATA", str(pool))
    monkeypatch.delenv("LABELER_DATA_OPTIONS", raising=False)
    monkeypatch.delenv("LABELER_SESSION", raising=False)
    monkeypatch.setattr(startup, "_layout_in_process", gated_layout)  # the app's default runner
    REGISTRY.clear()
    s = _session(store, pool)
    sid = s.id
    s.close()
    try:
        at = AppTest.from_file(APP, default_timeout=120)
        at.query_params["session"] = sid
        at.run()
        assert not at.exception, at.exception
        session, _ = REGISTRY.get(str(store), sid)
        job = layout_job(session)
        assert job is not None and job.running and session.layout_pending
        bars = at.get("progress")
        assert bars and "Computing the UMAP map of 120 points in the background" in bars[0].proto.text
        assert any('class="point-tag"' in md.value for md in at.markdown)  # the first query is there
        at.run()  # a rerun (a key press, a click): the same job, not a second one
        assert layout_job(session) is job and gated_layout.calls == ["umap"]
        _finish(job, gated_layout.gate)
        at.run()
        assert not at.exception, at.exception
        assert not at.get("progress") and session.layout_method == "umap"
        np.testing.assert_array_equal(session.layout, np.asarray(session.X)[:, :2] * 10.0 + 3)
    finally:
        REGISTRY.clear()
