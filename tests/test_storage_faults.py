"""Faults of the disk and damaged files are named, never shown as tracebacks or as corruption.

* disk full: a small tmpfs (``mount -t tmpfs -o size=...``);
* read-only store and folder: a read-only bind mount of a folder;
* damaged stores: seeded byte flips, truncations and a 0-byte file;
* the write-ahead log: the ``.sqlite`` file alone holds all but the last few actions, and
  ``backup`` writes one self-contained file.

The mounts need root; without it those tests are skipped with the reason.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import subprocess
import uuid
from pathlib import Path

import numpy as np
import pytest

from labeler.session import LabelingSession, SessionConfig
from labeler.store import (
    Store,
    StoreCorruptError,
    StoreError,
    StoreFullError,
    StoreReadOnlyError,
    StoreWriteError,
    UnknownSessionError,
)

N = 60


def _config(**kw):
    return SessionConfig(dataset="moons", dataset_options={"n": N}, **kw)


def _label(session, k=0) -> int:
    q = session.next_query()
    assert session.label(q, session.classes[k % 2], expected_query=q)
    return q


def _can_mount() -> str | None:
    if os.geteuid() != 0:
        return "needs root to mount a tmpfs or a read-only bind mount"
    if shutil.which("mount") is None:
        return "the mount command is missing"
    return None


def _run(*cmd):
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        pytest.skip(f"{' '.join(cmd)} failed ({done.stderr.strip()}): mounts not allowed here")


def _umount(path):
    if subprocess.run(["umount", str(path)], capture_output=True).returncode:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


@pytest.fixture
def small_disk(tmp_path):
    """A 2 MB tmpfs: a disk that fills up."""
    reason = _can_mount()
    if reason:
        pytest.skip(reason)
    where = tmp_path / "disk"
    where.mkdir()
    _run("mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where))
    try:
        yield where
    finally:
        _umount(where)


def _fill(folder: Path) -> Path:
    """Fill the file system of ``folder`` to the last byte; returns the filler file."""
    filler = folder / f"filler-{uuid.uuid4().hex}"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT)
    try:
        for size in (1 << 16, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while True:
                    os.write(fd, b"x" * size)
    finally:
        os.close(fd)
    return filler


@contextlib.contextmanager
def read_only_view(folder: Path):
    """``folder`` seen through a read-only bind mount."""
    reason = _can_mount()
    if reason:
        pytest.skip(reason)
    view = folder.parent / f"{folder.name}-ro"
    view.mkdir()
    _run("mount", "--bind", str(folder), str(view))
    try:
        _run("mount", "-o", "remount,bind,ro", str(view))
        yield view
    finally:
        _umount(view)


# ---- disk full ---------------------------------------------------------------------------------
def test_disk_full_while_labelling_is_named_and_nothing_is_lost(small_disk):
    store = small_disk / "s.sqlite"
    s = LabelingSession.create(store, _config())
    done = [_label(s, k) for k in range(3)]
    filler = _fill(small_disk)
    for k in range(500):  # SQLite may reuse space its log already has: label until refused
        query, labels, n_events = s.next_query(), s.labels, s.n_events
        try:
            s.label(query, s.classes[k % 2], expected_query=query)
        except StoreFullError as exc:
            assert "full" in str(exc) and "NOT saved" in str(exc) and "Free some disk space" in str(exc)
            break
        done.append(query)
    else:
        pytest.fail("500 labels on a full disk were all saved")
    # the refused press changed nothing, in memory or in the store
    assert s.labels == labels and s.next_query() == query and s.n_events == n_events
    with pytest.raises(StoreFullError):
        s.skip(query)
    filler.unlink()  # space freed: labelling resumes
    _label(s)
    s.close()
    with LabelingSession.open(store, s.id) as t:
        assert list(t.labels) == [*done, list(s.labels)[-1]]


def test_opening_a_store_on_a_full_disk_is_not_called_damaged(small_disk):
    store = small_disk / "s.sqlite"
    with LabelingSession.create(store, _config()) as s:
        _label(s)
    filler = _fill(small_disk)
    try:
        with LabelingSession.open(store, s.id) as t:  # may work: SQLite found its space
            assert t.n_labeled == 1
    except StoreError as exc:
        assert isinstance(exc, StoreFullError), exc
        assert "full" in str(exc) and "Free some disk space" in str(exc)
    filler.unlink()
    with LabelingSession.open(store, s.id) as t:
        assert t.n_labeled == 1


def test_disk_full_key_press_in_the_app_shows_a_message(small_disk, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from labeler.ui.registry import REGISTRY

    app = str(Path(__file__).resolve().parents[1] / "labeler" / "app.py")
    monkeypatch.setenv("LABELER_STORE", str(small_disk / "s.sqlite"))
    monkeypatch.setenv("LABELER_DATA", "moons")
    monkeypatch.setenv("LABELER_DATA_OPTIONS", f'{{"n": {N}}}')
    monkeypatch.delenv("LABELER_SESSION", raising=False)
    REGISTRY.clear()
    try:
        at = AppTest.from_file(app, default_timeout=120)
        at.run()
        session, _ = REGISTRY.get(small_disk / "s.sqlite", at.session_state["session_id"])
        filler = _fill(small_disk)
        for _ in range(500):  # until a press finds no space (SQLite may reuse its log's space)
            before = session.n_labeled
            key = next(b.key for b in at.button if b.key and b.key.startswith("class_0_"))
            at.button(key=key).click().run()
            assert not at.exception, at.exception
            if at.error:
                break
        assert any("is full" in e.value for e in at.error), [e.value for e in at.error]
        assert session.n_labeled == before  # the refused press is not counted
        filler.unlink()
        key = next(b.key for b in at.button if b.key and b.key.startswith("class_0_"))
        at.button(key=key).click().run()
        assert not at.exception and not at.error and session.n_labeled == before + 1
    finally:
        REGISTRY.clear()


# ---- read-only -------------------------------------------------------------------------------
@pytest.mark.parametrize("closed", [True, False], ids=["closed", "open-elsewhere"])
def test_read_only_store_can_be_viewed_but_not_changed(tmp_path, closed):
    folder = tmp_path / "stores"
    folder.mkdir()
    s = LabelingSession.create(folder / "s.sqlite", _config(pca_components=2, layout="pca"))
    for k in range(4):
        _label(s, k)
    labels, query = s.labels, s.next_query()
    if closed:
        s.close()
    try:
        with read_only_view(folder) as view:
            assert [i.id for i in LabelingSession.list_sessions(view / "s.sqlite")] == [s.id]
            t = LabelingSession.open(view / "s.sqlite", s.id)
            try:
                assert t.read_only and t.labels == labels and t.next_query() == query
                assert t.layout.shape == (N, 2) and len(t.predictions()) == N
                with pytest.raises(StoreReadOnlyError, match="read-only.*copy the store"):
                    t.label(query, t.classes[0])
                with pytest.raises(StoreReadOnlyError):
                    t.set_lam(0.5)
                assert t.labels == labels and t.config.lam == s.config.lam
                with pytest.raises(StoreReadOnlyError, match="read-only"):
                    LabelingSession.create(view / "new.sqlite", _config())
                assert not (view / "new.sqlite").exists()
            finally:
                t.close()
                s.close()  # SQLite keeps the file open while any connection to it is
    finally:
        s.close()


# ---- damaged files -----------------------------------------------------------------------------
def _damage_trial(path: Path, session_id: str):
    """Everything a user does with a store; returns None or the StoreError raised."""
    try:
        with Store(path) as st:
            infos = st.list_sessions()
        for info in infos:
            with LabelingSession.open(path, info.id) as s:
                s.predictions()
                q = s.next_query()
                if q is not None:
                    s.label(q, s.classes[0])
                s.undo()
                s.history
        return None
    except StoreError as exc:
        return exc


@pytest.fixture(scope="module")
def clean_store(tmp_path_factory):
    """A closed store (no -wal) with a session of labels, an undo, a setting, PCA features."""
    path = tmp_path_factory.mktemp("clean") / "s.sqlite"
    with LabelingSession.create(path, _config(pca_components=2, initial_labels=5)) as s:
        for k in range(8):
            _label(s, k)
        s.undo()
        s.set_lam(0.25)
        s.add_class("noise")
        s.skip(s.next_query())
        sid = s.id
    assert not Path(str(path) + "-wal").exists()
    return path, sid


def test_byte_flips_raise_the_store_error_or_nothing(clean_store, tmp_path):
    path, sid = clean_store
    raw = path.read_bytes()
    rng = np.random.default_rng(300)
    outcomes = {"fine": 0, "named": 0}
    for trial in range(300):
        damaged = bytearray(raw)
        for off in rng.choice(len(raw), size=1 + trial % 3, replace=False):
            damaged[off] ^= 1 << int(rng.integers(8))
        copy = tmp_path / f"flip{trial}.sqlite"
        copy.write_bytes(bytes(damaged))
        exc = _damage_trial(copy, sid)  # any other exception fails the test
        if exc is None:
            outcomes["fine"] += 1
        else:
            outcomes["named"] += 1
            assert isinstance(exc, UnknownSessionError) or any(
                w in str(exc) for w in ("backup", "Restore", "another store", "Upgrade")), exc
        for p in tmp_path.glob(f"flip{trial}.sqlite*"):
            shutil.rmtree(p) if p.is_dir() else p.unlink()  # (the session cache is a folder)
    assert outcomes["named"] > 0, outcomes


def test_truncated_and_empty_stores_raise_the_store_error(clean_store, tmp_path):
    path, sid = clean_store
    raw = path.read_bytes()
    rng = np.random.default_rng(7)
    cuts = sorted({0, 10, 99, 100, 4096, len(raw) - 1, *rng.integers(1, len(raw), size=20).tolist()})
    for cut in cuts:
        copy = tmp_path / f"cut{cut}.sqlite"
        copy.write_bytes(raw[:cut])
        exc = _damage_trial(copy, sid)
        assert isinstance(exc, StoreCorruptError), (cut, exc)
        assert copy.read_bytes() == raw[:cut]  # left unchanged
    with pytest.raises(StoreCorruptError, match="empty \\(0 bytes\\)"):
        Store(tmp_path / "cut0.sqlite")


def test_damaged_text_and_config_are_named(clean_store, tmp_path):
    path, sid = clean_store
    cases = {
        "bad utf-8 label": "UPDATE events SET label = CAST(x'ff00fe' AS TEXT) WHERE seq = 2",
        "bad json value": "UPDATE events SET value = '{not json' WHERE seq = 1",
        "config edited": "UPDATE sessions SET config = replace(config, '\"seed\": 0', '\"seed\": 1')",
        "bad json config": "UPDATE sessions SET config = '{oops'",
        "dataset edited": "UPDATE sessions SET dataset = 'circles'",
        "setting edited": "UPDATE events SET value = replace(value, '\"lam\"', '\"lbm\"') WHERE kind = 'setting'",
        "array bytes": "UPDATE arrays SET npy = substr(npy, 1, 200) || "
                       "CASE WHEN substr(npy, 201, 1) = x'5a' THEN x'5b' ELSE x'5a' END || substr(npy, 202)",
    }
    for name, sql in cases.items():
        copy = tmp_path / "edited.sqlite"
        shutil.copy(path, copy)
        con = sqlite3.connect(copy)
        con.execute(sql)
        con.commit()
        con.close()
        exc = _damage_trial(copy, sid)
        assert isinstance(exc, StoreCorruptError), (name, exc)
        for p in tmp_path.glob("edited.sqlite*"):
            p.unlink()


# ---- the write-ahead log ----------------------------------------------------------------------
def test_copying_only_the_sqlite_file_loses_at_most_the_last_few_actions(tmp_path):
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, _config())
    copies = []
    for k in range(25):
        _label(s, k)
        copy = tmp_path / f"copy{k}.sqlite"
        shutil.copy(store, copy)  # the main file only, while the app is running
        copies.append(copy)
    assert Path(str(store) + "-wal").exists()
    every = Store.checkpoint_every
    for k, copy in enumerate(copies):
        with Store(copy) as st:
            infos = st.list_sessions()
        assert [i.id for i in infos] == [s.id], k  # the session is there from the start
        assert infos[0].n_labeled >= k + 1 - (every - 1), (k, infos[0].n_labeled)
    s.close()  # a clean point: everything in the main file
    shutil.copy(store, tmp_path / "after-close.sqlite")
    with LabelingSession.open(tmp_path / "after-close.sqlite", s.id) as t:
        assert t.n_labeled == 25


def test_backup_is_one_self_contained_file(tmp_path):
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, _config(pca_components=2, initial_labels=4))
    other = LabelingSession.create(store, _config())
    for k in range(6):
        _label(s, k)
    labels, query = s.labels, s.next_query()
    whole = Store(store).backup(tmp_path / "all.sqlite")
    one = s.backup(tmp_path / "one.sqlite")
    _label(s)  # the live session goes on
    for path, ids in ((whole, {s.id, other.id}), (one, {s.id})):
        assert sorted(p.name for p in tmp_path.glob(path.name + "*")) == [path.name]
        head = path.read_bytes()[:20]
        assert head[:16] == b"SQLite format 3\x00" and head[18:20] == b"\x01\x01"  # not WAL
        copy = tmp_path / "moved" / path.name  # the file alone, somewhere else
        copy.parent.mkdir(exist_ok=True)
        shutil.copy(path, copy)
        assert {i.id for i in LabelingSession.list_sessions(copy)} == ids
        with LabelingSession.open(copy, s.id) as t:
            assert t.labels == labels and t.next_query() == query
    with pytest.raises(FileExistsError):
        s.backup(one)
    s.close()
    other.close()


def test_backup_command(tmp_path, capsys):
    from labeler.cli import main

    store = tmp_path / "s.sqlite"
    with LabelingSession.create(store, _config()) as s:
        _label(s)
    assert main(["backup", str(tmp_path / "b.sqlite"), "--store", str(store)]) == 0
    assert "b.sqlite" in capsys.readouterr().out
    assert main(["backup", str(tmp_path / "c.sqlite"), "--store", str(store), "--session", s.id]) == 0
    with LabelingSession.open(tmp_path / "c.sqlite", s.id) as t:
        assert t.n_labeled == 1
    assert main(["backup", str(tmp_path / "c.sqlite"), "--store", str(store)]) == 2
    assert "exists" in capsys.readouterr().err
    assert main(["backup", str(tmp_path / "d.sqlite"), "--store", str(store), "--session", "nope"]) == 2
    assert "No session" in capsys.readouterr().err


def test_write_faults_are_store_errors():
    assert issubclass(StoreFullError, StoreWriteError) and issubclass(StoreReadOnlyError, StoreWriteError)
    assert issubclass(StoreWriteError, StoreError)


def test_read_only_store_in_the_app_shows_the_session_and_refuses_labels(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from labeler.ui.registry import REGISTRY

    folder = tmp_path / "stores"
    folder.mkdir()
    with LabelingSession.create(folder / "s.sqlite", _config()) as s:
        _label(s)
    app = str(Path(__file__).resolve().parents[1] / "labeler" / "app.py")
    with read_only_view(folder) as view:
        monkeypatch.setenv("LABELER_STORE", str(view / "s.sqlite"))
        monkeypatch.setenv("LABELER_DATA", "moons")
        monkeypatch.setenv("LABELER_DATA_OPTIONS", f'{{"n": {N}}}')
        monkeypatch.setenv("LABELER_SESSION", s.id)
        REGISTRY.clear()
        try:
            at = AppTest.from_file(app, default_timeout=120)
            at.run()
            assert not at.exception, at.exception
            assert at.session_state["session_id"] == s.id
            assert any("read-only" in w.value for w in at.warning)
            key = next(b.key for b in at.button if b.key and b.key.startswith("class_0_"))
            at.button(key=key).click().run()
            assert not at.exception
            assert any("read-only" in e.value for e in at.error), [e.value for e in at.error]
        finally:
            REGISTRY.clear()
