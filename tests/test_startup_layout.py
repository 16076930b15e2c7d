"""The map's slow layout computed in the background (labeler/ui/startup.py): the first query
with the fast layout, the job kept across reruns, its progress, the swap, its errors."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
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


def test_layout_in_a_separate_process_reads_the_cached_features(tmp_path, monkeypatch):
    X = np.random.default_rng(0).standard_normal((40, 4))
    cache = SessionCache(tmp_path / "c")
    cache.save("features", "k", X)
    mapped = cache.load("features", "k")
    from labeler.data.layout import compute_layout

    want = compute_layout(X, "pca", 2)
    assert isinstance(mapped, np.memmap) and str(mapped.filename).endswith(".npy")
    commands, started = [], []
    real_popen = subprocess.Popen

    def popen(args, **kwargs):
        commands.append(list(args))
        started.append(real_popen(args, **kwargs))
        return started[-1]

    monkeypatch.setattr(startup.subprocess, "Popen", popen)
    np.testing.assert_array_equal(startup._layout_in_process(mapped, "pca", 2), want)  # by file name
    assert commands[0][1:4] == ["-m", "labeler.data.layout_job", str(mapped.filename)]
    assert commands[0][5:] == ["pca", "2", str(os.getpid())]  # watches the server
    np.testing.assert_array_equal(startup._layout_in_process(X, "pca", 2), want)  # copied over
    assert commands[1][3] != str(mapped.filename) and not Path(commands[1][3]).exists()  # temporary, removed
    assert not set(started) & startup._CHILDREN  # none of its own left running (other tests' jobs may be)


def test_leftover_folders_of_a_killed_server_are_swept():
    import tempfile

    old = Path(tempfile.mkdtemp(prefix=startup._TMP_PREFIX))
    young = Path(tempfile.mkdtemp(prefix=startup._TMP_PREFIX))
    (old / "features.npy").write_bytes(b"x")
    os.utime(old, (time.time() - startup._TMP_STALE_S - 60,) * 2)
    try:
        startup._layout_in_process(np.eye(5, 3), "pca", 0)
        assert not old.exists() and young.exists()  # a live job's folder stays
    finally:
        for folder in (old, young):
            if folder.exists():
                shutil.rmtree(folder)


def _run_child(args, *flags):
    """``python [flags] -m labeler.data.layout_job args``, this worktree's code first."""
    return subprocess.run([sys.executable, *flags, "-m", "labeler.data.layout_job", *map(str, args)],
                          capture_output=True, text=True, env=startup._child_env(), timeout=600)


@pytest.mark.parametrize("method", ["pca", "tsne"])
def test_child_imports_only_the_layout_and_equals_the_in_process_layout(tmp_path, method):
    from labeler.data.layout import compute_layout

    X = np.random.default_rng(4).standard_normal((50, 6))
    np.save(tmp_path / "X.npy", X)
    done = _run_child([tmp_path / "X.npy", tmp_path / "Z.npy", method, 7], "-X", "importtime")
    assert done.returncode == 0, done.stderr
    imported = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    assert "labeler.data.layout" in imported and "numpy" in imported  # the parse works
    unwanted = ["streamlit", "plotly", "labeler.app", "labeler.ui", "labeler.session", "labeler.data.load"]
    for unwanted in unwanted + (["pandas"] if method == "pca" else []):  # scikit-learn's t-SNE imports pandas
        assert unwanted not in imported, f"the layout process imported {unwanted}"
    np.testing.assert_array_equal(np.load(tmp_path / "Z.npy"), compute_layout(X, method, 7))  # seeded: the same
    assert sorted(p.name for p in tmp_path.iterdir()) == ["X.npy", "Z.npy"]  # no part file left


def test_child_reports_bad_input_and_writes_nothing(tmp_path):
    np.save(tmp_path / "X.npy", np.zeros((5, 3)))
    done = _run_child([tmp_path / "X.npy", tmp_path / "Z.npy", "bogus", 0])
    assert done.returncode == 1 and done.stderr.strip().splitlines()[-1].startswith("ValueError: Unknown layout method")
    assert not (tmp_path / "Z.npy").exists()
    assert _run_child([tmp_path / "X.npy"]).returncode == 2


def test_the_main_script_is_not_run_again(tmp_path):
    """The regression: a multiprocessing spawn ran the app's script again in the child."""
    marker = tmp_path / "imported-as.txt"
    script = tmp_path / "main_script.py"
    script.write_text(
        "import numpy as np\n"
        f"open({str(marker)!r}, 'a').write(__name__ + '\\n')\n"
        "if __name__ == '__main__':\n"
        "    from labeler.ui.startup import _layout_in_process\n"
        "    Z = _layout_in_process(np.random.default_rng(0).standard_normal((30, 4)), 'pca', 0)\n"
        "    print(Z.shape)\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=startup._child_env(), timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "(30, 2)" and marker.read_text() == "__main__\n"


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    try:  # a zombie nobody reaps (no init in a container) has exited too
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
    except OSError:
        return True


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
def test_a_layout_process_exits_when_its_parent_is_killed(tmp_path):
    child = ("import sys, time; from labeler.data.layout_job import watch_parent; "
             "watch_parent(int(sys.argv[1]), 0.05); time.sleep(300)")  # as layout_command passes it
    parent = ("import os, subprocess, sys, time; "
              f"p = subprocess.Popen([sys.executable, '-c', {child!r}, str(os.getpid())]); "
              "print(p.pid, flush=True); time.sleep(300)")
    server = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True,
                              env=startup._child_env())
    try:
        pid = int(server.stdout.readline())
        assert not _gone(pid)
        server.send_signal(signal.SIGKILL)  # the server killed outright: no atexit
        server.wait(60)
        for _ in range(600):
            if _gone(pid):
                break
            time.sleep(0.1)
        assert _gone(pid), "the layout process outlived its parent"
    finally:
        server.kill()
        server.stdout.close()


def test_a_killed_layout_process_is_a_clear_error_and_the_fast_map_stays(tmp_path, pool, monkeypatch):
    monkeypatch.setattr(startup, "layout_command", lambda *args: [
        sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"])
    s = _session(tmp_path / "s.sqlite", pool)
    fast = s.layout
    job = start_layout_job(s, compute=startup._layout_in_process)
    job.thread.join(120)
    assert isinstance(job.error, startup.LayoutProcessError) and "stopped by signal 9" in str(job.error)
    assert s.layout_pending and s.layout is fast
    monkeypatch.setattr(startup, "layout_command", lambda *args: [
        sys.executable, "-c", "import sys; print('ValueError: no good', file=sys.stderr); sys.exit(1)"])
    with pytest.raises(startup.LayoutProcessError, match="ended with status 1: ValueError: no good"):
        startup._layout_in_process(np.eye(5, 3), "umap", 0)
    s.close()


def test_estimates():
    assert layout_seconds_estimate("umap", 100_000) > layout_seconds_estimate("umap", 10_000) > 10
    assert layout_seconds_estimate("pca", 10**6) == 1.0


def test_the_bar_says_the_estimate_is_for_a_quiet_machine():
    job = startup.LayoutJob(session=None, method="umap", n_samples=100_000, estimate_s=220.0)
    assert "0 s of about 220 s on a quiet machine" in job.text()
    job.started -= 538.0
    assert "538 s, longer than the 220 s it takes on a quiet machine (this one is busy)" in job.text()


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
