"""The box / lasso selection panel under Streamlit's AppTest: its counts read like the rest of
the page (thousands separated), in the heading, the "Label N as" buttons and the message after."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from labeler.ui.registry import REGISTRY

APP = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "labeler" / "app.py")


@pytest.fixture(autouse=True)
def _store(tmp_path, monkeypatch):
    monkeypatch.setenv("LABELER_STORE", str(tmp_path / "s.sqlite"))
    monkeypatch.setenv("LABELER_DATA", "moons")
    monkeypatch.setenv("LABELER_DATA_OPTIONS", '{"n": 1200}')
    monkeypatch.delenv("LABELER_SESSION", raising=False)
    REGISTRY.clear()
    yield
    REGISTRY.clear()


def test_label_n_as_buttons_and_message_separate_thousands():
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    assert not at.exception, at.exception
    s, _ = REGISTRY.get(at.session_state["app_config"].store, at.session_state["session_id"])
    at.session_state["area"] = {"how": "box", "indices": np.arange(1100), "version": s.n_events}
    at.run()
    assert not at.exception, at.exception
    labels = [b.label for b in at.button if b.key and b.key.startswith("area_") and b.key[5:].isdigit()]
    assert labels and all(label.startswith("Label 1,100 as ") for label in labels), labels
    at.button(key="area_0").click().run()
    assert not at.exception, at.exception
    assert s.n_labeled == 1100
    said = " ".join(str(m.value) for m in at.success)
    assert "Labelled 1,100 " in said, said
