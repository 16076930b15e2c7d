"""Creating a session is all or nothing.

A session with initial labels is created in a child process that is SIGKILLed at chosen SQL
statements (every COMMIT, the statement after it, and a seeded sample of the others) and at
seeded moments after its imports; afterwards the store must list no session, or one that
opens with all its initial labels. A failure in the process (``MemoryError`` building the
learner or giving it the initial labels) must leave no session at all.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from labeler.session import LabelingSession, SessionConfig
from labeler.store import Store

REPO = Path(__file__).resolve().parents[1]
N_INITIAL = 30

# The child: counts the SQL statements SQLite runs (sqlite3 trace callback) and kills itself
# with SIGKILL just before statement number KILL_AT (0: never; it then prints the statements).
CHILD = r"""
import json, os, signal, sqlite3, sys
store, kill_at = sys.argv[1], int(sys.argv[2])
from labeler.session import LabelingSession, SessionConfig
statements = []
_connect = sqlite3.connect
def connect(*args, **kwargs):
    con = _connect(*args, **kwargs)
    def trace(sql):
        statements.append(sql.strip().split(None, 1)[0].upper() if sql.strip() else "")
        if len(statements) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
    con.set_trace_callback(trace)
    return con
sqlite3.connect = connect
config = SessionConfig(dataset="moons", dataset_options={"n": 80}, initial_labels=%d,
                       pca_components=2)
print("ready", flush=True)
LabelingSession.create(store, config).close()
print(json.dumps(statements), flush=True)
""" % N_INITIAL


def _child(store: Path, kill_at: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    return subprocess.Popen([sys.executable, "-c", CHILD, str(store), str(kill_at)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _check_whole(store: Path) -> int:
    """Every listed session opens with all its initial labels; returns how many there are."""
    if not store.exists():
        return 0
    with Store(store) as st:
        infos = st.list_sessions()
    assert len(infos) <= 1
    for info in infos:
        assert info.n_labeled == N_INITIAL, info
        with LabelingSession.open(store, info.id) as s:
            assert s.n_labeled == N_INITIAL
            assert set(s.export_table()["source"]) == {"initial"}
            assert s.next_query() is not None
    return len(infos)


@pytest.mark.slow
def test_create_killed_at_any_statement_leaves_nothing_or_a_whole_session(tmp_path):
    proc = _child(tmp_path / "dry.sqlite", 0)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    statements = json.loads(out.strip().splitlines()[-1])
    assert _check_whole(tmp_path / "dry.sqlite") == 1
    commits = [k + 1 for k, sql in enumerate(statements) if sql == "COMMIT"]
    rng = np.random.default_rng(6)
    points = set(commits) | {k + 1 for k in commits if k < len(statements)}
    points |= {int(k) for k in rng.choice(np.arange(1, len(statements) + 1), size=4, replace=False)}
    outcomes = {}
    for k in sorted(points):
        store = tmp_path / f"kill-{k}.sqlite"
        proc = _child(store, k)
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == -signal.SIGKILL, (k, statements[k - 1], err[-2000:])
        outcomes[k] = _check_whole(store)
    # nothing until the creation's COMMIT, a whole session from the statement after it on
    # (later commits: the first automatic re-tune and stopping checkpoint on the initial labels)
    assert set(outcomes.values()) <= {0, 1}
    ordered = [outcomes[k] for k in sorted(outcomes)]
    assert ordered == sorted(ordered)
    assert any(outcomes[k] == 0 and outcomes.get(k + 1) == 1 for k in commits)


@pytest.mark.slow
def test_create_killed_at_seeded_moments_leaves_nothing_or_a_whole_session(tmp_path):
    proc = _child(tmp_path / "dry.sqlite", 0)
    assert proc.stdout.readline().strip() == "ready"
    t0 = time.monotonic()
    proc.communicate(timeout=300)
    duration = time.monotonic() - t0
    rng = np.random.default_rng(61)
    for k, delay in enumerate(rng.uniform(0.0, duration, size=4)):
        store = tmp_path / f"kill-t{k}.sqlite"
        proc = _child(store, 0)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        _check_whole(store)


def test_memory_error_building_the_learner_stores_nothing(tmp_path, monkeypatch):
    from labeler.session import model

    def no_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate 18.6 GiB for an array")

    monkeypatch.setattr(model, "build_learner", no_memory)
    store = tmp_path / "s.sqlite"
    with pytest.raises(MemoryError):
        LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": 60},
                                                    initial_labels=10))
    assert LabelingSession.list_sessions(store) == []


def test_failure_giving_the_initial_labels_stores_nothing(tmp_path, monkeypatch):
    from core.learner import ActiveRLS

    def no_memory(self, *args, **kwargs):
        raise MemoryError("Unable to allocate the block update")

    monkeypatch.setattr(ActiveRLS, "add_many", no_memory)
    store = tmp_path / "s.sqlite"
    with pytest.raises(MemoryError):
        LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": 60},
                                                    initial_labels=10))
    assert LabelingSession.list_sessions(store) == []


def test_created_session_equals_its_reopened_self(tmp_path):
    store = tmp_path / "s.sqlite"
    cfg = SessionConfig(dataset="moons", dataset_options={"n": 60}, initial_labels=12, pca_components=2)
    with LabelingSession.create(store, cfg) as s:
        labels, query, risk = s.labels, s.next_query(), s.history["estimated_risk"].tolist()
        dv = s.learner.decision_values.copy()
    with LabelingSession.open(store, s.id) as t:
        assert t.labels == labels and t.next_query() == query
        assert t.history["estimated_risk"].tolist() == risk
        np.testing.assert_allclose(t.learner.decision_values, dv, rtol=1e-10, atol=1e-12)
        assert t.can_undo and t.undo() is not None and t.n_labeled == 0
