"""Schema versions 2 and 3: the migration of version-1 and version-2 stores (to version 3, in one
transaction, under kill), and the fold of the event kinds of version 2 (relabel, unlabel,
unskip, rename_class, delete_class) with their undo."""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from labeler.session import LabelingSession
from labeler.store import (
    Accept,
    Label,
    Relabel,
    Skip,
    Undo,
    Unlabel,
    Unskip,
    EVENT_KINDS,
    EVENT_KINDS_V1,
    SCHEMA_VERSION,
    Event,
    LogState,
    Store,
    StoreCorruptError,
    StoreVersionError,
    group_actions,
)
from labeler.store.schema import _SCHEMA_V1, _SCHEMA_V2, source_of_v2_event

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def all_events(path) -> list[list]:
    con = sqlite3.connect(path)
    try:
        return [list(r) for r in con.execute(
            "SELECT session_id, seq, action, kind, idx, label, source, value, timestamp FROM events "
            "ORDER BY session_id, seq")]
    finally:
        con.close()


def as_v3(events: list[list]) -> list[list]:
    """Events of a version-1 or -2 store as version 3 keeps them: the marked sources moved
    into the source column."""
    out = []
    for sid, seq, action, kind, idx, label, source, value, stamp in events:
        source, value = source_of_v2_event(kind, source, value)
        out.append([sid, seq, action, kind, idx, label, source, value, stamp])
    return out


def user_version(path) -> int:
    con = sqlite3.connect(path)
    try:
        return con.execute("PRAGMA user_version").fetchone()[0]
    finally:
        con.close()


def v1_fixture(tmp_path) -> tuple[Path, dict]:
    path = tmp_path / "store_v1.sqlite"
    shutil.copyfile(FIXTURES / "store_v1.sqlite", path)
    return path, json.loads((FIXTURES / "store_v1.json").read_text())


# ---- migration ----------------------------------------------------------------------------------


def test_the_fixture_is_a_version_1_store():
    path = FIXTURES / "store_v1.sqlite"
    assert user_version(path) == 1
    con = sqlite3.connect(path)
    ddl = con.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    con.close()
    assert "'relabel'" not in ddl and "'accept'" in ddl
    kinds = {row[3] for row in all_events(path)}
    assert kinds == set(EVENT_KINDS_V1)  # every kind version 1 has


def test_a_version_1_store_made_by_version_1_is_upgraded_keeping_every_event(tmp_path):
    path, expected = v1_fixture(tmp_path)
    with Store(path) as st:
        assert st.schema_version == SCHEMA_VERSION == 4
        assert {i.id: i.n_labeled for i in st.list_sessions()} == {
            expected["session"]: len(expected["labels"]), expected["empty_session"]: 0}
        for sid in (expected["session"], expected["empty_session"]):
            st.events(sid)  # the chain computed by the upgrade verifies
            st.session(sid)  # the record got its checksum
            st.check_arrays(sid)
    assert all_events(path) == as_v3(expected["events"])
    assert {r[6] for r in all_events(path) if r[3] == "accept"} == {"initial", "accepted"}
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("PRAGMA foreign_key_check").fetchall() == []
    ddl = con.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    assert all(f"'{k}'" in ddl for k in EVENT_KINDS)
    assert {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")} == {
        "sessions", "events", "arrays", "queries", "risks", "heads"}
    con.close()


def test_the_upgraded_session_reopens_as_version_1_left_it_and_takes_new_actions(tmp_path):
    path, expected = v1_fixture(tmp_path)
    s = LabelingSession.open(path, expected["session"])
    assert s.labels == {int(k): v for k, v in expected["labels"].items()}
    assert list(s.labels) == expected["label_order"]
    assert list(s.history["source"]) == expected["sources"]
    assert s.skipped == expected["skipped"] and s.classes == expected["classes"]
    assert (s.config.lam, s.config.weighting) == (expected["lam"], expected["weighting"])
    assert s.n_events == expected["n_events"] and s.next_query() == expected["next_query"]
    np.testing.assert_allclose(s.learner.decision_values, np.array(expected["decision_values"]),
                               rtol=0, atol=1e-10)
    # the version-2 actions work on it, are stored and reopen
    first = expected["label_order"][4]
    other = next(c for c in s.classes if c != s.labels[first])
    assert s.relabel(first, other, expected_label=s.labels[first])
    s.rename_class("noise", "clutter")
    s.unskip(expected["skipped"][0])
    labels, classes = s.labels, s.classes
    s.close()
    with LabelingSession.open(path, expected["session"]) as r:
        assert r.labels == labels and r.classes == classes and "clutter" in classes


def test_a_read_only_version_1_store_is_read_as_it_is(tmp_path):
    from test_storage_faults import read_only_view

    folder = tmp_path / "stores"
    folder.mkdir()
    path, expected = v1_fixture(folder)
    before = path.read_bytes()
    with read_only_view(folder) as view:
        with LabelingSession.open(view / path.name, expected["session"]) as s:
            assert s.read_only and s.labels == {int(k): v for k, v in expected["labels"].items()}
            assert s._store.schema_version == 1
    assert path.read_bytes() == before


def test_a_store_of_a_newer_version_is_refused_untouched(tmp_path):
    path, _ = v1_fixture(tmp_path)
    Store(path).close()
    con = sqlite3.connect(path)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.close()
    before = path.read_bytes()
    with pytest.raises(StoreVersionError, match=r"schema version 5.*newer version.*up to 4.*Upgrade"):
        Store(path)
    assert path.read_bytes() == before


def make_v1_store(path: Path, n_sessions=3, n_events=400) -> list[list]:
    """A version-1 store written with the version-1 DDL (as version 1 wrote it)."""
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("BEGIN")
    for stmt in _SCHEMA_V1.split(";"):
        if stmt.strip():
            con.execute(stmt)
    con.execute("PRAGMA user_version = 1")
    rng = np.random.default_rng(0)
    for k in range(n_sessions):
        sid = f"{k:016x}"
        con.execute("INSERT INTO sessions VALUES (?, ?, ?, ?, ?)",
                    (sid, f"s{k}", "moons", "{}", "2024-01-01T00:00:00+00:00"))
        for seq in range(1, n_events + 1):
            kind = ("label", "skip")[int(rng.integers(2))]
            con.execute(
                "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (sid, seq, seq, kind, seq, "a" if kind == "label" else None,
                 "queried" if kind == "label" else None, None, "2024-01-01T00:00:00+00:00"))
    con.execute("COMMIT")
    con.close()
    return all_events(path)


# The child opens the store (which migrates it) and kills itself with SIGKILL just before
# SQL statement number KILL_AT (0: never; it then prints the statements it ran).
CHILD = r"""
import json, os, signal, sqlite3, sys
path, kill_at = sys.argv[1], int(sys.argv[2])
statements = []
_connect = sqlite3.connect
def connect(*args, **kwargs):
    con = _connect(*args, **kwargs)
    def trace(sql):
        statements.append(sql.strip()[:40])
        if len(statements) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
    con.set_trace_callback(trace)
    return con
sqlite3.connect = connect
from labeler.store import Store
with Store(path) as st:
    st.list_sessions()  # statements after the migration's commit
print(json.dumps(statements), flush=True)
"""


def _open_in_child(path: Path, kill_at: int) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-c", CHILD, str(path), str(kill_at)], env=env,
                          capture_output=True, text=True, timeout=300)


def make_v2_store(path: Path, n_sessions=2, n_events=300) -> list[list]:
    """A version-2 store written with the version-2 DDL: labels, skips, initial labels and
    labels given many at once marked in ``value`` as version 2 wrote them, a recorded query,
    risks and a cached array without checksum (as the first version-2 releases wrote it)."""
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("BEGIN")
    for stmt in _SCHEMA_V2.split(";"):
        if stmt.strip():
            con.execute(stmt)
    con.execute("PRAGMA user_version = 2")
    rng = np.random.default_rng(1)
    stamp = "2025-01-01T00:00:00+00:00"
    for k in range(n_sessions):
        sid = f"{k:016x}"
        con.execute("INSERT INTO sessions VALUES (?, ?, ?, ?, ?)", (sid, f"s{k}", "moons", "{}", stamp))
        marks = [("accepted", '{"initial": true}')] * 3 + [("chosen", '{"via": "selection"}')] * 2 \
            + [("queried", '{"via": "batch"}')] * 2 + [("chosen", '{"via": "similar"}')]
        for seq, (source, value) in enumerate(marks, start=1):
            action = 1 if seq <= 3 else (4 if seq <= 5 else (6 if seq <= 7 else 8))
            con.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (sid, seq, action, "accept", 1000 + seq, "a", source, value, stamp))
        for seq in range(len(marks) + 1, n_events + 1):
            kind = ("label", "skip")[int(rng.integers(2))]
            con.execute("INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        (sid, seq, seq, kind, seq, "a" if kind == "label" else None,
                         "queried" if kind == "label" else None, None, stamp))
        con.execute("INSERT INTO queries VALUES (?, ?, ?)", (sid, n_events, 7))
        con.executemany("INSERT INTO risks VALUES (?, ?, ?)", [(sid, q, 0.5 / q) for q in range(1, 20)])
        buf = io.BytesIO()
        np.save(buf, np.arange(6.0).reshape(3, 2), allow_pickle=False)
        con.execute("INSERT INTO arrays VALUES (?, ?, ?)", (sid, "layout-pca", buf.getvalue()))
    con.execute("COMMIT")
    con.close()
    return all_events(path)


def test_a_version_2_store_is_upgraded_with_sources_in_their_column_and_its_chain(tmp_path):
    path = tmp_path / "v2.sqlite"
    events = make_v2_store(path)
    with Store(path) as st:
        assert st.schema_version == 4
        for info in st.list_sessions():
            got = st.events(info.id)  # verifies the chain the upgrade computed
            assert [e.source for e in got[:8]] == ["initial"] * 3 + ["selection"] * 2 + ["batch"] * 2 + ["similar"]
            assert all(e.value is None for e in got[:8])
            assert st.get_query(info.id, 300) == 7
            assert st.risks(info.id) == {q: 0.5 / q for q in range(1, 20)}
            assert st.session(info.id).config == {}  # the checksum added is not part of it
            np.testing.assert_array_equal(st.get_array(info.id, "layout-pca"), np.arange(6.0).reshape(3, 2))
    assert all_events(path) == as_v3(events)


# The child opens the store (which migrates it) and kills itself with SIGKILL just before
# SQL statement number KILL_AT (0: never; it then prints the statements it ran).
CHILD = r"""
import json, os, signal, sqlite3, sys
path, kill_at = sys.argv[1], int(sys.argv[2])
statements = []
_connect = sqlite3.connect
def connect(*args, **kwargs):
    con = _connect(*args, **kwargs)
    def trace(sql):
        statements.append(sql.strip()[:40])
        if len(statements) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
    con.set_trace_callback(trace)
    return con
sqlite3.connect = connect
from labeler.store import Store
with Store(path) as st:
    st.list_sessions()  # statements after the migration's commit
print(json.dumps(statements), flush=True)
"""


def _open_in_child(path: Path, kill_at: int) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-c", CHILD, str(path), str(kill_at)], env=env,
                          capture_output=True, text=True, timeout=300)


def migration_kill_points(statements: list[str]) -> list[int]:
    """1-based numbers of the statements of the migration's transaction (from its ``BEGIN
    IMMEDIATE`` to one past its ``COMMIT``), a run of one repeated statement (the rows of an
    ``executemany``) reduced to its first, second and last."""
    begin = statements.index("BEGIN IMMEDIATE")
    commit = statements.index("COMMIT", begin)
    points = []
    for k in range(begin, min(commit + 2, len(statements))):
        same_before = k > begin and statements[k - 1] == statements[k]
        same_after = k + 1 < len(statements) and statements[k + 1] == statements[k]
        twice_before = k > begin + 1 and statements[k - 2] == statements[k]
        if not (same_before and same_after and twice_before):
            points.append(k + 1)
    return points


@pytest.mark.slow
@pytest.mark.parametrize("version", [1, 2])
def test_migration_killed_at_any_statement_leaves_the_old_version_or_4_with_every_event(tmp_path, version):
    make = {1: make_v1_store, 2: make_v2_store}[version]
    dry = tmp_path / "dry.sqlite"
    events = as_v3(make(dry))
    done = _open_in_child(dry, 0)
    assert done.returncode == 0, done.stderr
    statements = json.loads(done.stdout.strip().splitlines()[-1])
    assert user_version(dry) == 4 and all_events(dry) == events
    points = migration_kill_points(statements)
    assert any(s.startswith("INSERT INTO events_v3") for s in statements) and len(points) >= 15, statements
    outcomes = set()
    for kill_at in points:
        path = tmp_path / f"kill{kill_at}.sqlite"
        make(path)
        killed = _open_in_child(path, kill_at)
        assert killed.returncode == -signal.SIGKILL, (kill_at, killed.stderr)
        found = user_version(path)  # may recover the write-ahead log of the killed process
        with Store(path) as st:  # opens, finishing the upgrade when it was not committed
            assert st.schema_version == 4
            for info in st.list_sessions():
                st.events(info.id)  # a whole chain
        assert all_events(path) == events, kill_at
        outcomes.add(found)
        for p in tmp_path.glob(f"kill{kill_at}.sqlite*"):
            p.unlink()
    assert outcomes == {version, 4}  # killed before and after the commit


# ---- the fold of the new events -----------------------------------------------------------------


def ev(seq, kind, index=None, label=None, source=None, value=None, action=None):
    return Event(seq, action or seq, kind, index, label, source, value, "t")


def fold(events, classes=("a", "b", "c"), n=10) -> LogState:
    s = LogState(list(classes), n_samples=n)
    for g in group_actions(events):
        s.apply(g)
    return s


def test_fold_relabel_and_its_undo_restore_labels_and_order():
    s = fold([ev(1, "label", 4, "a", "queried"), ev(2, "label", 5, "b", "queried"),
              ev(3, "label", 6, "a", "chosen")])
    ch = s.apply([ev(4, "relabel", 4, "c", "chosen", {"from": "a"})])
    assert [(b.label, a.label) for b, a in ch.relabeled] == [("a", "c")]
    assert list(s.labels) == [5, 6, 4] and s.labels[4].seq == 4  # moved to the end
    ch = s.apply([ev(5, "undo", value={"undoes": 4})])
    assert ch.kind == "undo_relabel" and [(b.label, a.label) for b, a in ch.relabeled] == [("c", "a")]
    assert list(s.labels) == [4, 5, 6] and s.labels[4].seq == 1 and s.labels[4].source == "queried"


def test_fold_batch_relabel_and_unlabel_are_one_undo_step():
    s = fold([ev(1, "label", 1, "a", "queried"), ev(2, "label", 2, "a", "queried"),
              ev(3, "label", 3, "b", "queried")])
    s.apply([ev(4, "relabel", i, "c", "chosen", {"from": "a"}, action=4) for i in (1, 2)][:1]
            + [ev(5, "relabel", 2, "c", "chosen", {"from": "a"}, action=4)])
    assert {i: r.label for i, r in s.labels.items()} == {3: "b", 1: "c", 2: "c"}
    ch = s.apply([ev(6, "unlabel", 1, "c", action=6), ev(7, "unlabel", 3, "b", action=6)])
    assert [r.index for r in ch.removed] == [1, 3] and list(s.labels) == [2]
    ch = s.apply([ev(8, "undo", value={"undoes": 6})])
    assert [r.index for r in ch.added] == [1, 3] and list(s.labels) == [3, 1, 2]
    s.apply([ev(9, "undo", value={"undoes": 4})])
    assert {i: (r.label, r.seq) for i, r in s.labels.items()} == {1: ("a", 1), 2: ("a", 2), 3: ("b", 3)}
    assert list(s.labels) == [1, 2, 3] and s.can_undo  # the labels themselves


def test_fold_unskip_and_its_undo_keep_the_skip_order():
    s = fold([ev(1, "skip", 7), ev(2, "skip", 3), ev(3, "skip", 5)])
    ch = s.apply([ev(4, "unskip", 3)])
    assert ch.unskipped == [3] and list(s.skipped) == [7, 5]
    ch = s.apply([ev(5, "undo", value={"undoes": 4})])
    assert ch.skipped == [3] and list(s.skipped) == [7, 3, 5]


def test_fold_rename_and_delete_class_with_undo():
    s = fold([ev(1, "label", 1, "a", "queried"), ev(2, "label", 2, "b", "queried")])
    ch = s.apply([ev(3, "rename_class", label="alpha", value={"from": "a"})])
    assert ch.renamed == ("a", "alpha") and s.classes == ["alpha", "b", "c"]
    assert s.labels[1].label == "alpha" and list(s.labels) == [1, 2]
    assert s.reserved_names() == {"a": "renamed to 'alpha'"}
    ch = s.apply([ev(4, "delete_class", label="c", value={"weight": 2.5})])
    assert ch.deleted_class == "c" and ch.class_weight == 2.5 and s.classes == ["alpha", "b"]
    ch = s.apply([ev(5, "undo", value={"undoes": 4})])
    assert ch.restored_class == "c" and ch.class_weight == 2.5 and s.classes == ["alpha", "b", "c"]
    ch = s.apply([ev(6, "undo", value={"undoes": 3})])
    assert ch.renamed == ("alpha", "a") and s.classes == ["a", "b", "c"] and s.labels[1].label == "a"
    assert s.reserved_names() == {}
    s.apply([ev(7, "unlabel", 1, "a")])
    s.apply([ev(8, "delete_class", label="a")])
    assert s.classes == ["b", "c"]
    s.apply([ev(9, "undo", value={"undoes": 8})])
    assert s.classes == ["a", "b", "c"]  # back at its place


@pytest.mark.parametrize(
    "events, match",
    [
        ([ev(1, "relabel", 4, "b", "chosen", {"from": "a"})], "not labelled"),
        ([ev(1, "label", 4, "a", "queried"), ev(2, "relabel", 4, "b", "chosen", {"from": "b"})],
         "was 'b', but it is labelled 'a'"),
        ([ev(1, "label", 4, "a", "queried"), ev(2, "relabel", 4, "a", "chosen", {"from": "a"})],
         "its own class"),
        ([ev(1, "label", 4, "a", "queried"), ev(2, "relabel", 4, "zz", "chosen", {"from": "a"})],
         "not a class"),
        ([ev(1, "label", 4, "a", "queried"), ev(2, "relabel", 4, "b", "bogus", {"from": "a"})],
         "source"),
        ([ev(1, "label", 4, "a", "queried"), ev(2, "relabel", 4, "b", "chosen", {"from": "a"}),
          ev(3, "relabel", 4, "c", "chosen", {"from": "b"}, action=2)], "twice"),
        ([ev(1, "unlabel", 4, "a")], "not labelled"),
        ([ev(1, "label", 4, "a", "queried"), ev(2, "unlabel", 4, "b")], "removes label 'b'"),
        ([ev(1, "unskip", 4)], "not skipped"),
        ([ev(1, "label", 4, "a", "queried"), ev(2, "unskip", 4)], "not skipped"),
        ([ev(1, "rename_class", label="x", value={"from": "zz"})], "not a class"),
        ([ev(1, "rename_class", label="b", value={"from": "a"})], "already exists"),
        ([ev(1, "rename_class", label="  ", value={"from": "a"})], "empty"),
        ([ev(1, "rename_class", label="x", value=None)], "not a class"),
        ([ev(1, "rename_class", label="x", value={"from": "a"}),
          ev(2, "rename_class", label="y", value={"from": "b"}, action=1)], "mixes or repeats"),
        ([ev(1, "label", 4, "c", "queried"), ev(2, "delete_class", label="c")], "still has labelled"),
        ([ev(1, "delete_class", label="c"), ev(2, "delete_class", label="b")], "fewer than two"),
        ([ev(1, "delete_class", label="zz")], "not a class"),
        ([ev(1, "delete_class", label="c", value={"weight": -1})], "weight"),
        ([ev(1, "delete_class", label="c"), ev(2, "add_class", label="c")], "kept for an undo"),
        ([ev(1, "rename_class", label="x", value={"from": "a"}), ev(2, "add_class", label="a")],
         "kept for an undo"),
        ([ev(1, "label", 4, "a", "queried"), ev(2, "unlabel", 4, "a"), ev(3, "undo", value={"undoes": 1})],
         "last undoable is 2"),
    ],
)
def test_fold_rejects_contradicting_new_events(events, match):
    with pytest.raises(StoreCorruptError, match=match):
        fold(events)


def test_a_rejected_undo_changes_nothing():
    s = fold([ev(1, "label", 4, "a", "queried"), ev(2, "relabel", 4, "b", "chosen", {"from": "a"})])
    s.labels[4] = s.labels[4].__class__(4, "c", "chosen", 2, 2, "t")  # damage behind the fold's back
    stack = list(s._stack)
    with pytest.raises(StoreCorruptError, match="no longer labelled 'b'"):
        s.apply([ev(3, "undo", value={"undoes": 2})])
    assert s._stack == stack and s.labels[4].label == "c" and s.n_events == 2


def test_list_sessions_counts_unlabels_and_their_undo(tmp_path):
    st = Store(tmp_path / "s.sqlite")
    sid = st.create_session(name="n", dataset="d", config={})
    rows = [
        [Label(0, "a", "queried")],
        [Accept(i, "a") for i in (1, 2, 3)],
        [Unlabel(i, "a") for i in (1, 2)],
        [Relabel(0, "b", was="a")],
        [Skip(9)],
        [Unskip(9)],
    ]
    n = 0
    for r in rows:
        n = st.append(sid, r, after=n)[-1].seq
    assert st.list_sessions()[0].n_labeled == 2
    for k, undone in enumerate((9, 8, 7, 5)):  # unskip, skip, relabel, the unlabels
        st.append(sid, [Undo(undone)], after=n + k)
    assert st.list_sessions()[0].n_labeled == 4
    st.close()
