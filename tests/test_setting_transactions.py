"""Every setting change is one transaction.

Setting lam or the width to a number stores the value and turns its "auto" flag off; setting it
to "auto" turns the flag on and stores the re-tuned value. Each is ONE action of ``setting``
events written in one transaction, so a process killed at any SQL statement of the change
leaves the session as it was or with the whole change: never a typed value still marked
"auto" (which the next re-tune would override).

The child process opens a session, then kills itself with SIGKILL just before SQL statement
number KILL_AT of the change (counted by SQLite's trace callback, as in
``tests/test_store_migration.py`` and ``tests/test_creation.py``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from labeler.session import LabelingSession, SessionConfig

REPO = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, os, signal, sqlite3, sys
store, sid, change, kill_at = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), int(sys.argv[4])
statements = []
counting = False
_connect = sqlite3.connect
def connect(*args, **kwargs):
    con = _connect(*args, **kwargs)
    def trace(sql):
        if not counting:
            return
        statements.append(sql.strip()[:40])
        if len(statements) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
    con.set_trace_callback(trace)
    return con
sqlite3.connect = connect
from labeler.session import LabelingSession
s = LabelingSession.open(store, sid)
counting = True
getattr(s, "set_" + change[0])(change[1])
counting = False
print(json.dumps(statements), flush=True)
"""


def _run_child(store: Path, sid: str, change, kill_at: int) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, "-c", CHILD, str(store), sid, json.dumps(change), str(kill_at)],
                          env=env, capture_output=True, text=True, timeout=300)


def _state(store: Path, sid: str) -> dict:
    with LabelingSession.open(store, sid) as s:
        return {"lam": s.config.lam, "width": s.config.width, "auto": dict(s.auto_tune),
                "strategy": s.config.strategy, "weighting": s.config.weighting}


@pytest.fixture(scope="module")
def labelled_session(tmp_path_factory):
    store = tmp_path_factory.mktemp("settings") / "s.sqlite"
    cfg = SessionConfig(dataset="moons", dataset_options={"n": 60}, seed=3, width="auto", lam="auto")
    with LabelingSession.create(store, cfg) as s:
        for _ in range(10):
            q = s.next_query()
            s.label(q, str(s.dataset.y[q]), expected_query=q)
        assert s.auto_tune == {"width": True, "lam": True}
        return store, s.id


CHANGES = [("lam", 0.37), ("width", 0.61), ("strategy", "random"), ("weighting", "none")]


@pytest.mark.parametrize("change", CHANGES, ids=[c[0] for c in CHANGES])
def test_a_setting_is_one_action_that_turns_auto_off_with_its_value(labelled_session, tmp_path, change):
    store, sid = labelled_session
    copy = tmp_path / "s.sqlite"
    copy.write_bytes(store.read_bytes())
    with LabelingSession.open(copy, sid) as s:
        n = s.n_events
        getattr(s, f"set_{change[0]}")(change[1])
        new = s._store.events(sid, after=n)
    assert len({ev.action for ev in new}) == 1  # one action: one transaction
    names = [ev.value["name"] for ev in new]
    if change[0] in ("lam", "width"):
        assert names == [change[0], "auto_tune"] and new[1].value["value"][change[0]] is False
    after = _state(copy, sid)
    assert after[change[0]] == change[1]


def _kill_points(statements: list[str]) -> list[int]:
    """Every statement of the change (1-based) and one past the last."""
    return list(range(1, len(statements) + 2))


@pytest.mark.slow
@pytest.mark.parametrize("change", [("lam", 0.37), ("lam", "auto")],
                         ids=["lam", "lam-auto"])
def test_a_setting_killed_at_any_statement_is_all_or_nothing(labelled_session, tmp_path, change):
    store, sid = labelled_session
    name, value = change
    base = tmp_path / "base.sqlite"
    base.write_bytes(store.read_bytes())
    if value == "auto":  # start from a typed value, auto off
        with LabelingSession.open(base, sid) as s:
            s.set_lam(0.05)
    before = _state(base, sid)
    dry = tmp_path / "dry.sqlite"
    dry.write_bytes(base.read_bytes())
    done = _run_child(dry, sid, change, 0)
    assert done.returncode == 0, done.stderr
    statements = json.loads(done.stdout.strip().splitlines()[-1])
    assert sum(sql.startswith("COMMIT") for sql in statements) >= 1, statements
    complete = _state(dry, sid)
    assert complete["auto"][name] is (value == "auto") and complete != before
    outcomes = set()
    for kill_at in _kill_points(statements):
        path = tmp_path / f"kill{kill_at}.sqlite"
        path.write_bytes(base.read_bytes())
        killed = _run_child(path, sid, change, kill_at)
        if kill_at > len(statements):
            assert killed.returncode == 0, killed.stderr
        else:
            assert killed.returncode == -signal.SIGKILL, (kill_at, killed.stderr)
        got = _state(path, sid)
        assert got in (before, complete), (kill_at, statements[kill_at - 1:kill_at], got)
        outcomes.add("after" if got == complete else "before")
        for p in tmp_path.glob(f"kill{kill_at}.sqlite*"):  # the store's files and its cache folder
            shutil.rmtree(p) if p.is_dir() else p.unlink()
    assert outcomes == {"before", "after"}
