"""Tests of the SQLite store (labeler/store.py) on real files in tmp_path."""

from __future__ import annotations

import hashlib
import sqlite3
import threading

import numpy as np
import pytest

from labeler.store import (
    Accept,
    Label,
    Setting,
    Skip,
    Undo,
    SCHEMA_VERSION,
    ConcurrentUpdateError,
    Event,
    LogState,
    Store,
    StoreCorruptError,
    StoreVersionError,
    UnknownSessionError,
    default_store_path,
    group_actions,
)


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def dump(path):
    """Logical content of a database file (independent of WAL checkpoints)."""
    con = sqlite3.connect(path)
    try:
        return "\n".join(con.iterdump())
    finally:
        con.close()


def make(tmp_path, name="s.sqlite"):
    return Store(tmp_path / name)


def test_new_file_has_schema_wal_and_foreign_keys(tmp_path):
    path = tmp_path / "sub" / "dir" / "labels.sqlite"
    with Store(path) as st:
        assert st.schema_version == SCHEMA_VERSION
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"sessions", "events", "arrays"} <= tables
    fks = con.execute("PRAGMA foreign_key_list(events)").fetchall()
    assert any(r[2] == "sessions" and r[6] == "CASCADE" for r in fks)
    con.close()


def test_session_round_trip_exact_floats(tmp_path):
    cfg = {"width": 0.1 + 0.2, "lam": 1 / 3, "tiny": 5e-324, "classes": ["a", "b"], "nested": {"x": [1, 2]}}
    with make(tmp_path) as st:
        sid = st.create_session(name="first", dataset="moons", config=cfg)
    with make(tmp_path) as st:
        rec = st.session(sid)
        assert rec.config == cfg
        assert rec.config["width"] == 0.1 + 0.2 and rec.config["tiny"] == 5e-324
        assert (rec.id, rec.name, rec.dataset) == (sid, "first", "moons")
        assert rec.created.endswith("+00:00")


def test_events_round_trip_and_grouping(tmp_path):
    st = make(tmp_path)
    sid = st.create_session(name="n", dataset="d", config={})
    a = st.append(sid, [Label(3, "x", "queried")], after=0)
    b = st.append(
        sid,
        [Accept(i, "y") for i in (5, 6, 7)],
        after=1,
    )
    c = st.append(sid, [Setting("lam", 0.25)], after=4)
    st.close()
    st = make(tmp_path)
    evs = st.events(sid)
    assert evs == a + b + c
    assert [e.seq for e in evs] == [1, 2, 3, 4, 5]
    assert [e.action for e in evs] == [1, 2, 2, 2, 5]
    assert evs[1].timestamp == evs[3].timestamp
    assert evs[4].value == {"name": "lam", "value": 0.25}
    assert [[e.seq for e in g] for g in group_actions(evs)] == [[1], [2, 3, 4], [5]]
    assert st.events(sid, after=4) == c
    assert st.n_events(sid) == 5


def test_append_refuses_stale_writer_and_writes_nothing(tmp_path):
    st = make(tmp_path)
    sid = st.create_session(name="n", dataset="d", config={})
    st.append(sid, [Skip(1)], after=0)
    with pytest.raises(ConcurrentUpdateError, match="another tab"):
        st.append(sid, [Skip(2)], after=0)
    assert [e.index for e in st.events(sid)] == [1]


def test_append_is_one_transaction(tmp_path):
    st = make(tmp_path)
    sid = st.create_session(name="n", dataset="d", config={})

    class BogusSource(Accept):  # gets past the constructor's check: the table's CHECK refuses it
        def __post_init__(self):
            pass

    rows = [Accept(1, "a"), BogusSource(2, "a", "bogus")]
    with pytest.raises(sqlite3.IntegrityError):
        st.append(sid, rows, after=0)
    assert st.events(sid) == []
    with pytest.raises(ValueError, match="build events with the constructors"):
        st.append(sid, [{"kind": "skip", "index": 1}], after=0)
    with pytest.raises(ValueError, match="source must be one of queried, chosen"):
        Label(1, "a", "bogus")
    with pytest.raises(ValueError, match="source must be one of accepted, initial"):
        Accept(1, "a", "queried")
    assert st.events(sid) == []


def test_list_and_delete_sessions_cascade(tmp_path):
    st = make(tmp_path)
    s1 = st.create_session(name="one", dataset="moons", config={})
    s2 = st.create_session(name="two", dataset="circles", config={})
    st.append(s1, [Label(0, "a", "queried")], after=0)
    st.append(s1, [Accept(i, "a") for i in (1, 2)], after=1)
    st.append(s1, [Skip(9)], after=3)
    st.append(s1, [Undo(4)], after=4)  # undoes the skip
    st.append(s1, [Undo(2)], after=5)  # undoes the batch
    st.put_array(s1, "layout", np.ones((3, 2)))
    infos = {i.id: i for i in st.list_sessions()}
    assert infos[s1].n_labeled == 1 and infos[s2].n_labeled == 0
    assert (infos[s1].name, infos[s1].dataset) == ("one", "moons")
    st.delete_session(s1)
    assert [i.id for i in st.list_sessions()] == [s2]
    con = sqlite3.connect(tmp_path / "s.sqlite")
    assert con.execute("SELECT count(*) FROM events").fetchone()[0] == 0
    assert con.execute("SELECT count(*) FROM arrays").fetchone()[0] == 0
    con.close()


@pytest.mark.parametrize("op", ["session", "events", "delete_session", "n_events"])
def test_unknown_session_is_a_clear_error(tmp_path, op):
    st = make(tmp_path)
    st.create_session(name="n", dataset="d", config={})
    before = dump(tmp_path / "s.sqlite")
    with pytest.raises(UnknownSessionError, match="No session 'nope'.*list_sessions"):
        getattr(st, op)("nope")
    with pytest.raises(UnknownSessionError):
        st.append("nope", [Skip(0)], after=0)
    assert len(st.list_sessions()) == 1
    st.close()
    assert dump(tmp_path / "s.sqlite") == before


def test_arrays_round_trip_without_pickle(tmp_path):
    st = make(tmp_path)
    sid = st.create_session(name="n", dataset="d", config={})
    arr = np.random.default_rng(0).normal(size=(7, 2))
    assert st.get_array(sid, "layout") is None
    st.put_array(sid, "layout", arr)
    st.close()
    got = make(tmp_path).get_array(sid, "layout")
    assert got.dtype == arr.dtype and np.array_equal(got, arr)
    with pytest.raises(TypeError, match="numeric"):
        make(tmp_path).put_array(sid, "bad", np.array([object()], dtype=object))


def test_newer_schema_version_is_refused_and_file_untouched(tmp_path):
    path = tmp_path / "new.sqlite"
    with Store(path) as st:
        st.create_session(name="n", dataset="d", config={})
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.execute("PRAGMA journal_mode = DELETE")
    con.close()
    before = digest(path)
    with pytest.raises(StoreVersionError, match="newer version.*Upgrade"):
        Store(path)
    assert digest(path) == before
    assert not (tmp_path / "new.sqlite-wal").exists()


def test_garbage_file_is_refused_and_untouched(tmp_path):
    path = tmp_path / "junk.sqlite"
    path.write_bytes(b"this is not a database at all" * 100)
    before = digest(path)
    with pytest.raises(StoreCorruptError, match="not an SQLite database"):
        Store(path)
    assert digest(path) == before


def test_damaged_database_is_refused_and_untouched(tmp_path):
    path = tmp_path / "damaged.sqlite"
    with Store(path) as st:
        sid = st.create_session(name="n", dataset="d", config={"pad": "x" * 5000})
        for k in range(200):
            st.append(sid, [Skip(k)], after=k)
    con = sqlite3.connect(path)  # fold the WAL into the main file, switch WAL off
    con.execute("PRAGMA journal_mode = DELETE")
    con.close()
    raw = bytearray(path.read_bytes())
    page = 4096
    assert len(raw) > 3 * page
    raw[page + 8: 3 * page] = b"\xa5" * (2 * page - 8)  # smash pages 2-3 (b-tree pages)
    path.write_bytes(bytes(raw))
    before = digest(path)
    with pytest.raises(StoreCorruptError):
        Store(path)
    assert digest(path) == before


def test_foreign_sqlite_database_is_refused(tmp_path):
    path = tmp_path / "other.sqlite"
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    before = digest(path)
    with pytest.raises(StoreCorruptError, match="another application"):
        Store(path)
    assert digest(path) == before


def test_store_path_is_a_directory(tmp_path):
    with pytest.raises(IsADirectoryError, match="give a file name"):
        Store(tmp_path)


def test_default_store_path_env(monkeypatch, tmp_path):
    monkeypatch.setenv("LABELER_STORE", str(tmp_path / "x.sqlite"))
    assert default_store_path() == tmp_path / "x.sqlite"
    monkeypatch.delenv("LABELER_STORE")
    assert default_store_path().parts[-2:] == (".labeler", "labeler.sqlite")


def test_two_connections_and_threads_do_not_corrupt(tmp_path):
    """Two tabs (two Store objects on one file) writing concurrently: each append either
    commits whole or is refused; the log stays gapless and the file passes integrity_check."""
    a, b = make(tmp_path), make(tmp_path)
    sid = a.create_session(name="n", dataset="d", config={})
    errors = []

    def writer(st, base):
        done = 0
        while done < 30:
            seen = st.n_events(sid)
            try:
                st.append(sid, [Skip(base + done)], after=seen)
                done += 1
            except ConcurrentUpdateError:
                continue
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)
                return

    threads = [threading.Thread(target=writer, args=(a, 0)), threading.Thread(target=writer, args=(b, 100))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    evs = b.events(sid)
    assert [e.seq for e in evs] == list(range(1, 61))
    assert sorted(e.index for e in evs) == list(range(30)) + list(range(100, 130))
    con = sqlite3.connect(tmp_path / "s.sqlite")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()


# ---- LogState: the fold of the event log --------------------------------------------------


def ev(seq, kind, index=None, label=None, source=None, value=None, action=None):
    return Event(seq, action or seq, kind, index, label, source, value, "t")


def test_logstate_fold_label_accept_skip_undo():
    s = LogState(["a", "b"], n_samples=10)
    s.apply([ev(1, "label", 4, "a", "queried")])
    ch = s.apply([ev(2, "accept", i, "b", "accepted", action=2) for i in (1, 2, 3)][:1]
                 + [ev(3, "accept", 2, "b", "accepted", action=2), ev(4, "accept", 3, "b", "accepted", action=2)])
    assert [r.index for r in ch.added] == [1, 2, 3]
    s.apply([ev(5, "skip", 7)])
    assert list(s.labels) == [4, 1, 2, 3] and list(s.skipped) == [7]
    ch = s.apply([ev(6, "undo", value={"undoes": 5})])
    assert ch.unskipped == [7] and not s.skipped
    ch = s.apply([ev(7, "undo", value={"undoes": 2})])
    assert [r.index for r in ch.removed] == [3, 2, 1]  # exact reverse order
    assert list(s.labels) == [4]
    s.apply([ev(8, "add_class", label="c")])
    s.apply([ev(9, "setting", value={"name": "lam", "value": 0.5})])
    assert s.classes == ["a", "b", "c"] and s.settings == {"lam": 0.5}
    s.apply([ev(10, "label", 1, "c", "chosen")])
    assert s.n_events == 10 and s.last_undoable[0] == 10


@pytest.mark.parametrize(
    "events, match",
    [
        ([ev(1, "label", 4, "a", "queried"), ev(2, "label", 4, "b", "queried")], "already labelled"),
        ([ev(1, "label", 4, "zzz", "queried")], "not a class"),
        ([ev(1, "label", 99, "a", "queried")], "outside"),
        ([ev(1, "undo", value={"undoes": 1})], "last undoable"),
        ([ev(1, "skip", 3), ev(2, "undo", value={"undoes": 7})], "last undoable"),
        ([ev(2, "skip", 3)], "expected seq 1"),
        ([ev(1, "add_class", label="a")], "already exists"),
    ],
)
def test_logstate_rejects_inconsistent_logs(events, match):
    s = LogState(["a", "b"], n_samples=10)
    with pytest.raises(StoreCorruptError, match=match):
        for g in group_actions(events):
            s.apply(g)


_WRITER = r"""
import sys
sys.path.insert(0, {root!r})
from labeler.store import ConcurrentUpdateError, Skip, Store
st = Store({path!r})
done = 0
while done < {count}:
    seen = st.n_events({sid!r})
    try:
        st.append({sid!r}, [Skip({base} + done)], after=seen)
        done += 1
    except ConcurrentUpdateError:
        pass
"""


def test_two_processes_writing_one_session(tmp_path):
    """Two server processes on one file: WAL + busy_timeout serialise the writers."""
    import os
    import subprocess
    import sys

    path = tmp_path / "s.sqlite"
    with Store(path) as st:
        sid = st.create_session(name="n", dataset="d", config={})
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER.format(root=root, path=str(path), sid=sid, count=40, base=base)],
            stderr=subprocess.PIPE, text=True,
        )
        for base in (0, 1000)
    ]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    with Store(path) as st:
        evs = st.events(sid)
    assert [e.seq for e in evs] == list(range(1, 81))
    assert sorted(e.index for e in evs) == list(range(40)) + list(range(1000, 1040))
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()


def test_recorded_query_first_writer_wins(tmp_path):
    a, b = make(tmp_path), make(tmp_path)
    sid = a.create_session(name="n", dataset="d", config={})
    assert a.get_query(sid, 0) is None
    assert a.put_query(sid, 0, 5) == 5
    assert b.put_query(sid, 0, 9) == 5  # the second tab adopts the first tab's query
    assert b.get_query(sid, 0) == 5
    a.append(sid, [Skip(5)], after=0)
    assert b.put_query(sid, 0, 7) == 7 and b.get_query(sid, 0) == 5  # stale version: not recorded
    assert b.put_query(sid, 1, 8) == 8 and a.get_query(sid, 1) == 8 and a.get_query(sid, 0) is None


def test_risks_round_trip(tmp_path):
    st = make(tmp_path)
    sid = st.create_session(name="n", dataset="d", config={})
    st.put_risks(sid, {1: 0.25, 2: 1 / 3, 3: float("nan")})
    st.put_risks(sid, {2: 0.5})
    assert st.risks(sid) == {1: 0.25, 2: 0.5}
    st.delete_session(sid)
    con = sqlite3.connect(tmp_path / "s.sqlite")
    assert con.execute("SELECT count(*) FROM risks").fetchone()[0] == 0
    con.close()


def test_a_new_store_file_appears_whole_or_not_at_all(tmp_path, monkeypatch):
    """Creating the store is interrupted before the file is complete: no empty or partial
    store is left (a later open would refuse a 0-byte file as damaged)."""
    path = tmp_path / "new.sqlite"

    def interrupted(self, con):
        con.execute("CREATE TABLE half (x)")
        raise KeyboardInterrupt  # e.g. the process is stopped here

    monkeypatch.setattr(Store, "_prepare", interrupted)
    with pytest.raises(KeyboardInterrupt):
        Store(path)
    assert not path.exists()
    assert list(tmp_path.iterdir()) == []  # the hidden work file is removed too
    monkeypatch.undo()
    with Store(path) as store:
        assert store.list_sessions() == []


def test_a_store_opened_twice_in_one_process_keeps_its_locks(tmp_path):
    """POSIX locks belong to the process: closing ANY descriptor of the file drops the locks of
    every SQLite connection of the process to it. Opening a second Store (list_sessions on each
    page, as the app does) must therefore not read the file with a descriptor of its own while
    a connection is open; otherwise another process that opens and closes the store believes it
    is the last one, deletes the write-ahead log, and the next action of the first is lost."""
    import os
    import subprocess
    import sys

    path = tmp_path / "s.sqlite"
    a = Store(path)
    sid = a.create_session(name="n", dataset="d", config={})
    a.append(sid, [Skip(1)], after=0)
    Store(path).close()  # e.g. the sidebar's list of sessions, in the server process
    assert [i.id for i in Store(path).list_sessions()] == [sid]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    other = f"import sys; sys.path.insert(0, {root!r}); from labeler.store import Store; Store({str(path)!r}).close()"
    subprocess.run([sys.executable, "-c", other], check=True, timeout=120)  # e.g. `labeler sessions`
    a.append(sid, [Skip(2)], after=1)
    con = sqlite3.connect(path)
    try:
        assert con.execute("SELECT count(*) FROM events").fetchone()[0] == 2
    finally:
        con.close()
    a.close()
    with Store(path) as st:
        assert [e.index for e in st.events(sid)] == [1, 2]
