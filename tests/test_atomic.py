"""labeler.atomic: a write either completes (durably) or leaves the target untouched."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import labeler.atomic as atomic
from labeler.atomic import atomic_target, atomic_write, atomic_write_bytes, atomic_write_text


def test_content_is_fsynced_before_the_rename(tmp_path, monkeypatch):
    target = tmp_path / "out.bin"
    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(atomic.os, "fsync", lambda fd: (events.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(atomic.os, "replace", lambda a, b: (events.append("replace"), real_replace(a, b))[1])
    assert atomic_write_bytes(target, b"\x00\x01data") == target
    assert events == ["fsync", "replace"]
    assert target.read_bytes() == b"\x00\x01data"
    assert stat.S_IMODE(target.stat().st_mode) == 0o644
    assert [p.name for p in tmp_path.iterdir()] == ["out.bin"]


def test_failure_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "f.txt"
    atomic_write_text(target, "first")
    with pytest.raises(RuntimeError, match="boom"):
        with atomic_target(target) as tmp:
            tmp.write_text("partial")
            raise RuntimeError("boom")
    with pytest.raises(ValueError):
        atomic_write(target, lambda tmp: (Path(tmp).write_text("partial"), int("x")))
    assert target.read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["f.txt"]


def test_text_is_utf8_with_unix_line_ends(tmp_path):
    target = tmp_path / "t.md"
    atomic_write_text(target, "é\nline\n")
    assert target.read_bytes() == "é\nline\n".encode("utf-8")


@pytest.mark.parametrize(
    "make, exc, match",
    [
        (lambda d: d / "missing" / "f.txt", FileNotFoundError, "does not exist"),
        (lambda d: d, IsADirectoryError, "directory"),
        (lambda d: (d / "file").write_text("x") and d / "file" / "f.txt", NotADirectoryError, "not a directory"),
    ],
)
def test_bad_targets_name_the_problem(tmp_path, make, exc, match):
    with pytest.raises(exc, match=match):
        atomic_write_text(make(tmp_path), "x")


def test_read_only_folder_is_a_permission_error(unwritable_folder):
    with pytest.raises(PermissionError, match="not writable"):
        atomic_write_text(unwritable_folder / "f.txt", "x")
    assert list(unwritable_folder.iterdir()) == []


# ---- leftovers of killed writers ---------------------------------------------------------------
import signal  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

REPO = Path(__file__).resolve().parents[1]

# Exports a labelled session to argv[2] and is SIGKILLed while writing: at the first write of
# the content ("start") or at the fsync just before the rename ("end"); "hold" blocks there
# instead (a live writer) until killed by the parent.
KILLED_EXPORT = r"""
import os, signal, sys, time
store, target, where = sys.argv[1], sys.argv[2], sys.argv[3]
import labeler.atomic as atomic
from labeler.session import LabelingSession
s = LabelingSession.open(store, sys.argv[4])
def stop():
    print("in the write", flush=True)
    if where == "hold":
        time.sleep(600)
    os.kill(os.getpid(), signal.SIGKILL)
if where == "end":
    atomic.os.fsync = lambda fd: stop()
else:
    import pandas as pd
    real = pd.DataFrame.to_csv
    def to_csv(self, path, *a, **k):
        with open(path, "w") as fh:
            fh.write("id,label\n")
        stop()
    pd.DataFrame.to_csv = to_csv
s.export(target)
"""


def _labelled_session(tmp_path):
    from labeler.session import LabelingSession, SessionConfig

    store = tmp_path / "s.sqlite"
    with LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": 40})) as s:
        for k in range(3):
            s.label(s.next_query(), s.classes[k % 2])
        return store, s.id


def _export_child(store, target, where, sid):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    return subprocess.Popen([sys.executable, "-c", KILLED_EXPORT, str(store), str(target), where, sid],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _parts(folder, name):
    return sorted(folder.glob(f".{name}.*.part"))


def _age(paths, seconds):
    for p in paths:
        t = time.time() - seconds
        os.utime(p, (t, t))


@pytest.mark.parametrize("where", ["start", "end"])
def test_killed_export_leaves_a_part_file_that_the_next_write_sweeps(tmp_path, where):
    from labeler.session import LabelingSession

    store, sid = _labelled_session(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    target = out / "labels.csv"
    proc = _export_child(store, target, where, sid)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == -signal.SIGKILL, err[-2000:]
    left = _parts(out, target.name)
    assert len(left) == 1 and not target.exists()  # the kill left its temporary file
    atomic.sweep_stale_parts(out, target.name)
    assert _parts(out, target.name) == left  # a few seconds old: maybe a writer starting
    _age(left, 60)
    with LabelingSession.open(store, sid) as s:
        s.export(target)  # the next write of the same file sweeps the leftover
    assert _parts(out, target.name) == [] and sorted(p.name for p in out.iterdir()) == ["labels.csv"]


def test_a_live_writers_part_file_is_never_swept(tmp_path):
    store, sid = _labelled_session(tmp_path)
    target = tmp_path / "labels.csv"
    proc = _export_child(store, target, "hold", sid)
    try:
        assert proc.stdout.readline().strip() == "in the write"
        live = _parts(tmp_path, target.name)
        assert len(live) == 1
        _age(live, 3600)  # however old it looks, its writer holds it
        assert atomic.sweep_stale_parts(tmp_path, target.name) == []
        assert live[0].exists()
    finally:
        proc.kill()
        proc.communicate(timeout=60)
    assert atomic.sweep_stale_parts(tmp_path, target.name) == live  # its writer is gone
    assert not live[0].exists()


def test_sweep_leaves_other_files_alone(tmp_path):
    keep = [tmp_path / ".other.abcdefgh.parts", tmp_path / "x.part", tmp_path / ".x.abc.part",
            tmp_path / "labels.csv"]
    for p in keep:
        p.write_text("keep")
    stale = tmp_path / ".labels.csv.abcd_123.part"
    stale.write_text("left by a killed writer")
    _age([*keep, stale], 3600)
    assert atomic.sweep_stale_parts(tmp_path) == [stale]
    assert all(p.exists() for p in keep)


def test_sweep_stale_download_folders(tmp_path):
    old, new = tmp_path / "labeler-export-old", tmp_path / "labeler-export-new"
    for d in (old, new):
        d.mkdir()
        (d / "labels.csv").write_text("x")
    _age([old], 7200)
    assert atomic.sweep_stale_dirs("labeler-export-", parent=tmp_path) == [old]
    assert new.exists() and not old.exists()
