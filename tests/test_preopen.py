"""The start-up session opened by the server before a browser asks (labeler/ui/preopen.py): the
first tab shows the very session the page would have chosen itself (created once, not twice;
reopened on the next start), and a tab whose URL names a session keeps it."""

from __future__ import annotations

import pytest

from labeler.session import LabelingSession
from labeler.ui import preopen
from labeler.ui.config import AppConfig
from labeler.ui.registry import REGISTRY
from labeler.ui.state import startup_candidates
from test_app import _env, point_tag, start  # noqa: F401 - _env: the app tests' own store and data set, per test


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(preopen, "_job", None)


def _store():
    return AppConfig.from_env().store


@pytest.mark.parametrize("density_above", ["100000", "50"])  # the small map; the density map
def test_first_tab_takes_the_session_created_at_start(monkeypatch, density_above):
    monkeypatch.setenv("LABELER_MAP_DENSITY_ABOVE", density_above)
    preopen.start()
    at = start()
    sessions = LabelingSession.list_sessions(_store())
    assert len(sessions) == 1 and at.session_state["session_id"] == sessions[0].id
    assert preopen.take() is None  # taken once


def test_next_start_reopens_the_same_session_as_the_page_would(monkeypatch):
    page = start()
    created = page.session_state["session_id"]  # the page's own choice, no pre-opening
    assert startup_candidates(AppConfig.from_env()) == [created]
    REGISTRY.clear()
    preopen.start()
    pre = preopen.take()
    assert pre is not None and pre.id == created and not pre.created
    monkeypatch.setattr(preopen, "_job", None)
    REGISTRY.clear()
    preopen.start()
    at = start()
    assert at.session_state["session_id"] == created and point_tag(at) == point_tag(page)  # the same query
    assert len(LabelingSession.list_sessions(_store())) == 1


def test_a_tab_naming_a_session_keeps_it(monkeypatch):
    first = start().session_state["session_id"]
    second = start(session=first)  # (the same one: a reload)
    assert second.session_state["session_id"] == first
    preopen.start()
    other = start(session=first)
    assert other.session_state["session_id"] == first
    assert preopen.take() is not None  # not taken by the tab that named its session


def test_opening_before_streamlit_needs_no_streamlit(tmp_path):
    """The server starts the opening before it imports Streamlit (labeler/serve.py): the opening
    and the first page's values it computes must not import Streamlit themselves (two threads
    importing it at once). A fresh process opens a session as the server does, then checks."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    code = (
        "import sys\n"
        "from labeler.ui import preopen\n"
        "preopen.start()\n"
        "found = preopen.take(timeout=300)\n"
        "assert found is not None and found.created, found\n"
        "assert 'streamlit' not in sys.modules, sorted(m for m in sys.modules if m.startswith('streamlit'))[:5]\n"
    )
    env = dict(os.environ, LABELER_STORE=str(tmp_path / "s.sqlite"), LABELER_DATA="moons",
               LABELER_DATA_OPTIONS='{"n": 300}', PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    env.pop("LABELER_SESSION", None)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
