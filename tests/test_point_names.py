"""Messages about a point name it as the point panel does: "#58 (T00058)" with the data's own
id, never with the label column's value (an image's class folder is left out of its id)."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from labeler.data.point_names import point_name, shown_id
from labeler.session import LabelingSession, SessionConfig
from labeler.ui import actions, state


@pytest.fixture
def session(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"id": [f"T{i:05d}" for i in range(40)], "f1": rng.normal(size=40),
                          "f2": rng.normal(size=40), "label": ["a", "b"] * 20})
    frame.to_csv(tmp_path / "pool.csv", index=False)
    return LabelingSession.create(tmp_path / "store.sqlite",
                                  SessionConfig(dataset=str(tmp_path / "pool.csv"), seed=1, strategy="random"))


def test_refusals_name_the_point_by_its_own_id(session):
    s = session
    q = s.next_query()
    assert s.label(q, "a", expected_query=q)
    assert s.point_name(q) == f"#{q} (T{q:05d})"
    message = s.why_not_applied(q, expected_query=q)
    assert f"Point #{q} (T{q:05d}) is already labelled" in message
    moved = s.next_query()
    free = next(i for i in range(40) if i not in s.labels and i != moved)
    message = s.why_not_applied(free, expected_query=free)
    assert f"press on point #{free} (T{free:05d})" in message
    assert f"the query is now point #{moved} (T{moved:05d})" in message
    assert f"Point #{q} (T{q:05d}) is already labelled 'a'" in s.why_not_changed(q, "relabel", "a")
    assert f"Point #{free} (T{free:05d}) is not labelled any more" in s.why_not_changed(free, "unlabel")


def test_the_page_messages_name_the_point_by_its_id(session, monkeypatch):
    flashes = []
    monkeypatch.setattr(state, "current", lambda: (session, None))
    monkeypatch.setattr(state, "flash", lambda kind, text: flashes.append(text))
    monkeypatch.setattr(actions, "_stale_panel", lambda rev: True)
    actions.unskip(7, panel_rev=1)
    actions.unlabel(8, "a", panel_rev=1)
    assert flashes == [actions._OLD_PAGE.format(point="#7 (T00007)"),
                       actions._OLD_PAGE.format(point="#8 (T00008)")]
    assert "point #7 (T00007) was not applied" in flashes[0]


def test_an_id_never_shows_the_label_column():
    images = SimpleNamespace(ids=np.array(["cat/001.png", "dog/002.png", "003.png"]),
                             y=np.array(["cat", "dog", "cat"]))
    assert [point_name(images, i) for i in range(3)] == ["#0 (001.png)", "#1 (002.png)", "#2 (003.png)"]
    assert shown_id(images, 0) == "001.png"
    assert point_name(SimpleNamespace(ids=None, y=None), 4) == "#4"
    assert point_name(SimpleNamespace(ids=np.arange(10), y=None), 4) == "#4"  # ids that are the indices


def test_the_query_explanation_names_the_next_best_points_by_their_ids(tmp_path):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"id": [f"T{i:05d}" for i in range(40)], "f1": rng.normal(size=40),
                          "f2": rng.normal(size=40), "label": ["a", "b"] * 20})
    frame.to_csv(tmp_path / "pool.csv", index=False)
    s = LabelingSession.create(tmp_path / "store.sqlite",
                               SessionConfig(dataset=str(tmp_path / "pool.csv"), seed=1, strategy="arls"))
    for j in range(4):
        q = s.next_query()
        s.label(q, "ab"[j % 2], expected_query=q)
    why = s.explain_query()
    text = " ".join(why.reasons)
    i = why.alternatives[0][0]
    assert f"Next best: point #{i} (T{i:05d})" in text
