"""The app with ``labeler app --model auto`` (LABELER_MODEL): the header says which model answers
and why, next to the strategy, and the learner panel's "why" opens with the LOO comparison."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from labeler.ui.model_choice import picked_model_settings, same_model_settings
from labeler.ui.registry import REGISTRY
from labeler.session import SessionConfig

APP = str(Path(__file__).resolve().parents[1] / "labeler" / "app.py")


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    monkeypatch.setenv("LABELER_STORE", str(tmp_path / "store.sqlite"))
    monkeypatch.setenv("LABELER_DATA", "moons")
    monkeypatch.setenv("LABELER_DATA_OPTIONS", '{"n": 120}')
    monkeypatch.setenv("LABELER_MODEL", '{"model": "auto"}')
    monkeypatch.delenv("LABELER_SESSION", raising=False)
    REGISTRY.clear()
    yield
    REGISTRY.clear()


def test_header_names_the_model_chosen_by_loo():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    session, _ = REGISTRY.get(at.session_state["app_config"].store, at.session_state["session_id"])
    assert session.config.model_choice == "auto"
    for _ in range(4):
        session.label(session.next_query(), session.classes[0] if _ % 2 else session.classes[1])
        assert session.model_choice.wait(60)  # the app compares the models in the background
    at.run()
    assert not at.exception, at.exception
    header = [md.value for md in at.markdown if 'class="model-choice"' in md.value]
    # the demo's two moons: the pool's graph splits into the two classes, so harmonic answers first
    assert header and "Model: harmonic — kept by leave-one-out:" in header[0] and "on 4 labels" in header[0]
    assert any(c.value.startswith("Why: kept by leave-one-out:") for c in at.caption)
    assert not any("Why: Model:" in c.value for c in at.caption)  # the name is said above it once
    # RLS is a candidate: its settings are not offered as another session's
    assert any("if the model choice moves to it" in c.value for c in at.caption)
    assert not any("Create an RLS session" in c.value for c in at.caption)


def test_new_session_form_keeps_auto():
    assert picked_model_settings({"pick_model": "auto"}) == {"model": "auto"}
    cfg = SessionConfig(model="rls", model_choice="auto")
    assert same_model_settings(cfg, {"knn": 10})["model"] == "auto"


def test_header_and_sidebar_show_the_same_comparison_when_it_changes_during_the_run():
    """A background comparison finishing between the header and the sidebar must not make them
    disagree: the page computes the summary once and shows that one in both places."""
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    session, _ = REGISTRY.get(at.session_state["app_config"].store, at.session_state["session_id"])
    calls = []

    def changing_summary():  # every call a newer comparison, as if a job finished meanwhile
        calls.append(1)
        n = len(calls)
        return {"model": "rls", "errors": {"rls": 0.1}, "n_labels": n, "reason": "",
                "text": f"Model: RLS — kept by leave-one-out: comparison {n}"}

    session.model_choice.summary = changing_summary
    at.run()
    assert not at.exception, at.exception
    header = [md.value for md in at.markdown if 'class="model-choice"' in md.value]
    why = [c.value for c in at.caption if c.value.startswith("Why: ")]
    assert header and why
    shown = header[0].split("comparison ")[1].split("<")[0]
    assert why[0].startswith(f"Why: kept by leave-one-out: comparison {shown}"), (header, why)
    assert len(calls) == 1  # once per page run
