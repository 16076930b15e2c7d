"""Exposure beyond this machine: a loud warning, and an access token the page asks for."""

from __future__ import annotations

import os
import re
import sys
import types
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from labeler.serve import exposure_warning, is_local, make_token, run_app
from labeler.session import LabelingSession
from labeler.ui.registry import REGISTRY

APP = str(Path(__file__).resolve().parents[1] / "labeler" / "app.py")
TOKEN = "s3cret-token-for-tests"


@pytest.mark.parametrize("host,local", [
    ("127.0.0.1", True), ("localhost", True), ("::1", True), ("[::1]", True), ("127.0.0.2", True),
    ("0.0.0.0", False), ("::", False), ("192.168.1.5", False), ("myhost.example", False),
])
def test_is_local(host, local):
    assert is_local(host) is local


def test_exposure_warning_says_what_is_open_and_how_to_protect_it():
    assert exposure_warning("127.0.0.1", 8501, None) is None
    loud = exposure_warning("0.0.0.0", 8502, None)
    assert "WARNING" in loud and "DELETE" in loud and "--token auto" in loud
    with_token = exposure_warning("0.0.0.0", 8502, "abc123456")
    assert "?token=abc123456" in with_token and "plain HTTP" in with_token
    assert len(make_token()) >= 20 and make_token() != make_token()


@pytest.fixture
def fake_streamlit(monkeypatch):
    """run_app without a server; the variables it sets in os.environ are put back after."""
    calls = []
    fake = types.SimpleNamespace(main=types.SimpleNamespace(main=lambda **kw: calls.append(kw)))
    monkeypatch.setitem(sys.modules, "streamlit.web.cli", fake)
    monkeypatch.setattr(sys.modules["streamlit.web"], "cli", fake, raising=False)
    names = ("LABELER_TOKEN", "LABELER_DATA", "LABELER_STORE", "LABELER_SESSION", "LABELER_DATA_DIR")
    saved = {k: os.environ.pop(k, None) for k in names}
    try:
        yield calls
    finally:
        for k, v in saved.items():
            os.environ.pop(k, None)
            if v is not None:
                os.environ[k] = v


def test_run_app_on_all_interfaces_warns_and_auto_token_is_passed_to_the_page(fake_streamlit, capsys, monkeypatch):
    run_app(host="0.0.0.0", port=8600)
    err = capsys.readouterr().err
    assert "WARNING" in err and "--token auto" in err
    run_app(host="0.0.0.0", port=8600, token="auto")
    err = capsys.readouterr().err
    token = re.search(r"\?token=(\S+)", err).group(1)
    assert os.environ["LABELER_TOKEN"] == token and len(fake_streamlit) == 2
    with pytest.raises(ValueError, match="at least 8"):
        run_app(host="0.0.0.0", token="short")
    run_app(host="127.0.0.1", port=8600)
    assert "WARNING" not in capsys.readouterr().err


@pytest.fixture
def tokened(tmp_path, monkeypatch):
    monkeypatch.setenv("LABELER_STORE", str(tmp_path / "store.sqlite"))
    monkeypatch.setenv("LABELER_DATA", "moons")
    monkeypatch.setenv("LABELER_DATA_OPTIONS", '{"n": 80}')
    monkeypatch.setenv("LABELER_TOKEN", TOKEN)
    monkeypatch.delenv("LABELER_SESSION", raising=False)
    REGISTRY.clear()
    yield tmp_path / "store.sqlite"
    REGISTRY.clear()


def _page(**query):
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def _shows_the_app(at) -> bool:
    return any('class="point-tag"' in md.value for md in at.markdown)


def test_without_the_token_the_page_shows_only_the_token_field(tokened):
    at = _page()
    assert not _shows_the_app(at) and len(at.button) == 0
    assert [t.key for t in at.text_input] == ["access_token_input"]
    assert not tokened.exists() or LabelingSession.list_sessions(tokened) == []  # nothing opened
    at.text_input(key="access_token_input").input("wrong-token-123").run()
    assert not _shows_the_app(at) and any("not right" in e.value for e in at.error)
    at.text_input(key="access_token_input").input(TOKEN).run()
    assert _shows_the_app(at)
    at.run()  # remembered by the tab
    assert _shows_the_app(at)


def test_the_token_in_the_link_opens_the_app_and_a_wrong_one_does_not(tokened):
    assert not _shows_the_app(_page(token="nope-nope-nope"))
    at = _page(token=TOKEN)
    assert _shows_the_app(at)
    assert any(b.key and b.key.startswith("class_0_") for b in at.button)
