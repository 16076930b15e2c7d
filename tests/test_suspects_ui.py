"""The Suspects tab under Streamlit's AppTest: the wrong label first, Change to and Keep (stored)."""

from __future__ import annotations

import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from labeler.ui.registry import REGISTRY

APP = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "labeler" / "app.py")


@pytest.fixture(autouse=True)
def _store(tmp_path, monkeypatch):
    monkeypatch.setenv("LABELER_STORE", str(tmp_path / "s.sqlite"))
    monkeypatch.setenv("LABELER_DATA", "moons")
    monkeypatch.setenv("LABELER_DATA_OPTIONS", '{"n": 200}')
    monkeypatch.delenv("LABELER_SESSION", raising=False)
    REGISTRY.clear()
    yield
    REGISTRY.clear()


def suspect_tags(at):
    out = []
    for md in at.markdown:
        if 'class="suspect-tag"' in md.value:
            out.append({a: re.search(rf'data-{a}="([^"]*)"', md.value).group(1)
                        for a in ("point", "label", "suggested")})
    return out


def test_suspects_tab_ranks_a_wrong_label_first_and_fixes_it():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    s, _ = REGISTRY.get(at.session_state["app_config"].store, at.session_state["session_id"])
    truth = np.asarray(s.dataset.y).astype(str)
    for _ in range(12):
        q = s.next_query()
        s.label(q, truth[q], expected_query=q)
    table = s.suspects()
    j = int(table.iloc[-1]["index"])  # the most confidently right label: flip it
    wrong = next(c for c in s.classes if c != truth[j])
    s.relabel(j, wrong)
    at.session_state["lower_tab"] = "Suspects"
    at.query_params["lower_tab"] = "Suspects"
    at.run()
    assert not at.exception, at.exception
    tags = suspect_tags(at)
    assert tags and int(tags[0]["point"]) in {j, *[int(t["point"]) for t in tags[:2]]}
    assert any(int(t["point"]) == j and t["suggested"] == truth[j] for t in tags[:2])
    # Keep hides it, Undo keep brings it back
    at.button(key=f"suspect_keep_{j}_{s.n_events}").click().run()
    assert j not in [int(t["point"]) for t in suspect_tags(at)]
    assert s.last_action_kind == "keep" and s._log.kept[j].label == wrong  # stored, not page state
    at.button(key="suspects_undo_keep").click().run()
    assert j in [int(t["point"]) for t in suspect_tags(at)] and j not in s._log.kept
    before = s.n_events
    at.button(key=f"suspect_change_{j}_{s.n_events}").click().run()
    assert not at.exception, at.exception
    assert s.labels[j] == truth[j] and s.n_events == before + 1
    assert s.undo() is not None and s.labels[j] == wrong  # one action, one undo


def test_a_suspect_row_names_the_point_by_its_id_as_the_point_panel_does():
    from types import SimpleNamespace

    from labeler.ui.point_panel import point_name
    from labeler.ui.suspects_panel import suspect_line

    data = SimpleNamespace(ids=np.arange(1000, 1100), y=None)
    session = SimpleNamespace(dataset=data)
    row = {"index": 58, "label": "a", "suggested": "b", "source": "you", "score": 0.8}
    line = suspect_line(session, row)
    assert point_name(session, 58) == "#58 (1058)"
    assert ">&#35;58 (1058)</span>" in line  # the id, Markdown-escaped like the point panel's title
    assert 'data-point="58"' in line  # the page's hooks keep the pool index
    assert ">&#35;7</span>" in suspect_line(SimpleNamespace(dataset=SimpleNamespace(ids=None, y=None)),
                                        {**row, "index": 7})
