"""Several tabs at once: stale presses are reported, the registry opens sessions in parallel,
sizes itself by memory and closes what it evicts. Driven with threads (and two AppTest tabs).
"""

from __future__ import annotations

import threading
import time
import types
from pathlib import Path

import pytest

import labeler.ui.registry as R
from labeler.session import LabelingSession, MemoryBudgetError, SessionConfig
from labeler.ui.registry import REGISTRY, SessionRegistry
from ui_stubs import StubSession

APP = str(Path(__file__).resolve().parents[1] / "labeler" / "app.py")


# ---- stale presses ---------------------------------------------------------------------------
def test_two_threads_press_on_the_same_query_one_applies_the_other_is_told_why(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 80}))
    q = s.next_query()
    start = threading.Barrier(2)
    results = {}

    def press(name):
        start.wait()
        done = s.label(q, name, expected_query=q)
        results[name] = (done, None if done else s.why_not_applied(q, q))

    threads = [threading.Thread(target=press, args=(c,)) for c in s.classes]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    applied = [c for c, (done, _) in results.items() if done]
    assert len(applied) == 1 and s.n_labeled == 1
    (refused,) = [why for done, why in results.values() if not done]
    assert f"#{q} is already labelled {applied[0]!r}" in refused and "not applied" in refused
    # a press on the old query for another point: the query moved on
    other = next(i for i in range(80) if i not in s.labels and i != s.next_query())
    assert not s.label(other, s.classes[0], expected_query=q)
    assert "query moved on" in s.why_not_applied(other, q)
    s.close()


@pytest.fixture
def app_env(tmp_path, monkeypatch):
    monkeypatch.setenv("LABELER_STORE", str(tmp_path / "store.sqlite"))
    monkeypatch.setenv("LABELER_DATA", "moons")
    monkeypatch.setenv("LABELER_DATA_OPTIONS", '{"n": 100}')
    monkeypatch.delenv("LABELER_SESSION", raising=False)
    REGISTRY.clear()
    yield tmp_path
    REGISTRY.clear()


def _tab(**query):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def _class_key(at, j=0):
    return next(b.key for b in at.button if b.key and b.key.startswith(f"class_{j}_"))


def _warnings(at):
    return [w.value.replace("\\", "") for w in at.warning]


def test_a_stale_key_press_from_another_tab_is_reported(app_env):
    one = _tab()
    sid = one.session_state["session_id"]
    two = _tab(session=sid)
    session, _ = REGISTRY.get(one.session_state["app_config"].store, sid)
    stale = one.button(key=_class_key(one))  # tab one still shows the old query
    two.button(key=_class_key(two, 1)).click().run()  # tab two labels it first
    assert session.n_labeled == 1
    stale.click().run()
    assert not one.exception
    assert session.n_labeled == 1  # not applied ...
    assert any("not applied" in w and "already labelled" in w for w in _warnings(one)), _warnings(one)
    # ... and the page moved on to the current query, where a press works
    one.button(key=_class_key(one)).click().run()
    assert session.n_labeled == 2 and not _warnings(one)


def test_a_stale_undo_from_another_tab_is_reported(app_env):
    one = _tab()
    sid = one.session_state["session_id"]
    one.button(key=_class_key(one)).click().run()
    one.button(key=_class_key(one)).click().run()
    two = _tab(session=sid)
    session, _ = REGISTRY.get(one.session_state["app_config"].store, sid)
    stale_undo = one.button(key=f"undo_{session.last_action}")
    two.button(key=f"undo_{session.last_action}").click().run()
    assert session.n_labeled == 1
    stale_undo.click().run()
    assert session.n_labeled == 1
    assert any("Undo was not applied" in w for w in _warnings(one)), _warnings(one)


def test_a_session_closed_by_the_registry_is_reopened_by_the_next_press(app_env):
    at = _tab()
    sid = at.session_state["session_id"]
    store = at.session_state["app_config"].store
    old, _ = REGISTRY.get(store, sid)
    REGISTRY.clear()  # e.g. evicted for memory: closed, learner freed
    assert old.closed and old.learner is None
    at.button(key=_class_key(at)).click().run()
    assert not at.exception, at.exception
    new, _ = REGISTRY.get(store, sid)
    assert new is not old and new.n_labeled == 1


# ---- the registry --------------------------------------------------------------------------
class _Slow(StubSession):
    """A stand-in session whose opening takes ``delay`` seconds."""

    delay = 0.4
    opened: list = []
    lock = threading.Lock()

    def __init__(self, sid, n=1000):
        super().__init__(sid, n)

    @classmethod
    def open(cls, store, sid, up_to_damage=False):
        with cls.lock:
            cls.opened.append(sid)
        time.sleep(cls.delay)
        return cls(sid)

    @classmethod
    def create(cls, store, config):
        return cls(f"new-{config}")



@pytest.fixture
def fake_sessions(monkeypatch):
    _Slow.opened = []
    monkeypatch.setattr(R, "_session_module", lambda: types.SimpleNamespace(LabelingSession=_Slow))
    return _Slow


def _in_threads(fn, args_list):
    out = [None] * len(args_list)

    def run(k, args):
        out[k] = fn(*args)

    threads = [threading.Thread(target=run, args=(k, a)) for k, a in enumerate(args_list)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out, time.perf_counter() - t0


def test_sessions_open_in_parallel_outside_the_registry_lock(fake_sessions, tmp_path):
    reg = SessionRegistry(available_memory=lambda: None)
    got, took = _in_threads(reg.get, [(tmp_path, f"s{k}") for k in range(4)])
    assert sorted(s.id for s, _ in got) == ["s0", "s1", "s2", "s3"]
    assert took < 3 * _Slow.delay, f"4 opens of {_Slow.delay} s took {took:.2f} s: serialised"


def test_one_session_asked_by_many_tabs_is_opened_once(fake_sessions, tmp_path):
    reg = SessionRegistry(available_memory=lambda: None)
    got, _ = _in_threads(reg.get, [(tmp_path, "same")] * 6)
    assert _Slow.opened == ["same"]
    assert len({id(s) for s, _ in got}) == 1 and len({id(lock) for _, lock in got}) == 1


def test_registry_keeps_sessions_while_memory_lasts_and_closes_what_it_evicts(fake_sessions, tmp_path):
    free = {"bytes": 64 << 30}
    reg = SessionRegistry(max_open=16, reserve_bytes=1 << 30, available_memory=lambda: free["bytes"])
    sessions = [reg.get(tmp_path, f"s{k}")[0] for k in range(6)]
    assert len(reg) == 6 and not any(s.closed for s in sessions)  # plenty of memory: all kept
    free["bytes"] = (1 << 30) - 8 * 1000 * 1000 * 2 - 1  # 1 byte short after two closings: three
    s6 = reg.get(tmp_path, "s6")[0]
    assert [s.closed for s in sessions] == [True, True, True, False, False, False]
    assert not s6.closed and len(reg) == 4
    free["bytes"] = 64 << 30
    small = SessionRegistry(max_open=2, available_memory=lambda: free["bytes"])
    a, b, c = (small.get(tmp_path, k)[0] for k in "abc")
    assert a.closed and not b.closed and not c.closed  # the count cap still holds


def test_a_session_that_does_not_fit_closes_older_ones_and_retries(fake_sessions, tmp_path, monkeypatch):
    reg = SessionRegistry(available_memory=lambda: None)
    old = [reg.get(tmp_path, f"s{k}")[0] for k in range(3)]
    budget = {"left": 2}  # fits once two sessions are closed

    def open_big(store, sid, up_to_damage=False):
        if sum(not s.closed for s in old) > 3 - budget["left"]:
            raise MemoryBudgetError("does not fit")
        return _Slow(sid)

    monkeypatch.setattr(_Slow, "open", staticmethod(open_big))
    big = reg.get(tmp_path, "big")[0]
    assert [s.closed for s in old] == [True, True, False] and not big.closed
    budget["left"] = 99
    monkeypatch.setattr(_Slow, "open", staticmethod(lambda store, sid, up_to_damage=False: (_ for _ in ()).throw(MemoryBudgetError("never"))))
    with pytest.raises(MemoryBudgetError):
        reg.get(tmp_path, "huge")  # closed everything else, still no room: the error
    assert len(reg) == 0


def test_eviction_waits_for_a_tab_using_the_session(fake_sessions, tmp_path):
    reg = SessionRegistry(max_open=1, available_memory=lambda: None)
    first, lock = reg.get(tmp_path, "first")
    lock.acquire()  # a tab is in the middle of a label
    done = threading.Event()
    threading.Thread(target=lambda: (reg.get(tmp_path, "second"), done.set())).start()
    time.sleep(_Slow.delay + 0.3)
    assert not first.closed and not done.is_set()  # waits for the tab
    lock.release()
    assert done.wait(10) and first.closed
