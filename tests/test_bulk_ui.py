"""The page's bulk labelling: box / lasso events read from the chart, the selection panel, the
"More like this" and "Batch" grids (AppTest), stale and empty presses, and the map's hover."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from labeler.ui import figures as F
from labeler.ui.registry import REGISTRY
from labeler.ui.selection import area_selection

APP = str(Path(__file__).resolve().parents[1] / "labeler" / "app.py")
N = 120


# ---- reading the chart's selection --------------------------------------------------------------


def test_a_box_or_lasso_selects_the_pool_points_inside_it_drawn_or_not():
    layout = np.array([[0.5, 0.5], [2.0, 2.0], [0.1, 0.2], [0.9, 0.05], [1.0, 1.0], [np.nan, 0.5]])
    drawn = [{"curve_number": 0, "point_index": 4}]  # the density map drew one point only
    box = {"selection": {"points": drawn, "box": [{"x": [1, 0], "y": [0, 1]}], "lasso": []}}
    got = area_selection(box, layout)
    assert got.how == "box" and got.indices.tolist() == [0, 2, 3, 4]
    lasso = {"selection": {"points": drawn, "box": [],
                           "lasso": [{"xref": "x", "yref": "y", "x": [0, 1, 1], "y": [0, 0, 1]}]}}
    got = area_selection(lasso, layout)
    assert got.how == "lasso" and got.indices.tolist() == [0, 3, 4]  # on the diagonal: inside
    empty = {"selection": {"points": [], "box": [{"x": [5, 6], "y": [5, 6]}]}}
    assert area_selection(empty, layout).indices.tolist() == []


@pytest.mark.parametrize("event", [
    None, {}, "junk", {"selection": None},
    {"selection": {"points": [{"curve_number": 0, "point_index": 4}]}},  # a click
    {"selection": {"points": [{"curve_number": 0, "point_index": 4}], "box": [], "lasso": []}},
])
def test_a_click_or_nothing_is_not_an_area(event):
    assert area_selection(event, np.zeros((10, 2))) is None


def test_hover_names_prediction_confidence_and_label():
    n = 6
    fig = F.scatter_figure(np.zeros((n, 2)), ["cat", "<b>dog</b>"],
                           label_codes=np.array([-1, 1, -1, -1, 0, -1]),
                           predicted_codes=np.array([0, 1, 1, 0, 0, 1]),
                           confidence=np.array([0.5, 0.91, 0.777, 1, 0.6, 0.55]),
                           hover_predictions=True)
    pool, labelled = fig.data[0], fig.data[1]
    assert "predicted (confidence): %{text}" in pool.hovertemplate
    assert pool.text[2] == "&lt;b&gt;dog&lt;/b&gt; (0.78)"  # class names escaped for plotly
    assert list(labelled.customdata) == [1, 4]
    assert labelled.text[1] == "cat<br>predicted (confidence): cat (0.60)"
    assert "label %{text}" in labelled.hovertemplate
    plain = F.scatter_figure(np.zeros((n, 2)), ["a", "b"], label_codes=np.full(n, -1))
    assert plain.data[0].text is None


# ---- the page ----------------------------------------------------------------------------------


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    monkeypatch.setenv("LABELER_STORE", str(tmp_path / "store.sqlite"))
    monkeypatch.setenv("LABELER_DATA", "moons")
    monkeypatch.setenv("LABELER_DATA_OPTIONS", json.dumps({"n": N}))
    monkeypatch.delenv("LABELER_SESSION", raising=False)
    REGISTRY.clear()
    yield
    REGISTRY.clear()


def start() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def session_of(at):
    session, _ = REGISTRY.get(at.session_state["app_config"].store, at.session_state["session_id"])
    return session


def tag(at, cls, attrs):
    for md in at.markdown:
        if f'class="{cls}"' in md.value:
            return {a: re.search(rf'data-{a}="([^"]*)"', md.value).group(1) for a in attrs}
    return None


def test_an_area_selection_is_labelled_as_one_undoable_action():
    at = start()
    s = session_of(at)
    chosen = [3, 5, 8, 13]
    at.session_state["area"] = {"how": "lasso", "indices": chosen, "version": s.n_events}
    at.run()
    assert tag(at, "area-tag", ["count", "unlabelled"]) == {"count": "4", "unlabelled": "4"}
    at.button(key="area_1").click().run()
    assert not at.exception
    assert {i: s.labels[i] for i in chosen} == {i: s.classes[1] for i in chosen}
    assert at.session_state["area"] is None  # the point panel is back
    assert any("Labelled 4 selected points" in m.value for m in at.success)
    undo = next(b for b in at.button if b.key and b.key.startswith("undo_"))
    undo.click().run()
    assert not set(chosen) & set(s.labels)


def test_a_stale_or_empty_area_writes_nothing_and_says_why():
    at = start()
    s = session_of(at)
    at.session_state["area"] = {"how": "box", "indices": [], "version": s.n_events}
    at.run()
    assert any("holds no points" in m.value for m in at.info)
    at.session_state["area"] = {"how": "box", "indices": [3, 5], "version": s.n_events}
    at.run()
    s.label(7, s.classes[0], source="chosen")  # another tab labels meanwhile
    before = s.n_events
    at.button(key="area_0").click().run()
    assert s.n_events == before
    assert any("changed since this selection was drawn" in m.value for m in at.warning)


def choose_unsure(at, s):
    """Pick the true class in every grid picker that starts on "not sure"."""
    truth = np.asarray(s.dataset.y).astype(str)
    for sb in list(at.selectbox):
        if str(sb.key).startswith("grid_") and sb.value is None:
            sb.set_value(truth[int(str(sb.key).rsplit("_", 1)[1])])
    at.run()


def test_an_unsure_guess_starts_on_not_sure_and_must_be_chosen():
    from labeler.ui.bulk_panels import GUESS_MIN_CONFIDENCE

    at = start()
    s = session_of(at)
    at.session_state["lower_tab"] = "Batch"
    at.query_params["lower_tab"] = "Batch"
    at.run()
    batch = [int(i) for i in tag(at, "grid-tag", ["via", "points"])["points"].split(",")]
    conf = s.predictions()["confidence"].to_numpy(float)
    unsure = [i for i in batch if conf[i] < GUESS_MIN_CONFIDENCE]
    assert unsure, "a batch of queries holds points the model is unsure of"
    picks = {int(str(sb.key).rsplit("_", 1)[1]): sb.value for sb in at.selectbox if str(sb.key).startswith("grid_batch")}
    assert all(picks[i] is None for i in unsure)
    assert all(picks[i] is not None for i in batch if i not in unsure)
    before = s.n_events
    at.button(key="grid_label_batch").click().run()
    assert s.n_events == before
    assert any("Pick a class for every point" in m.value for m in at.warning)
    choose_unsure(at, s)
    label = at.button(key="grid_label_batch").label
    assert label.startswith(f"Label these {len(batch)}")
    at.button(key="grid_label_batch").click().run()
    assert set(batch) <= set(s.labels)


def test_selection_spread_and_grid_summary_by_hand():
    from labeler.ui.bulk_panels import grid_summary, selection_spread

    spread = selection_spread(np.array([0, 0, 1, 1, 1, -1]), np.array([0.95, 0.5, 0.99, 0.92, 0.3, 0.9]), 3)
    assert spread == {"predicted": [2, 3, 0], "confident": [1, 2, 0], "against": [2, 1, 3]}
    summary = grid_summary(["a", "b", None, "a"], ["a", "a", "b", "a"], np.array([0.9, 0.6, 0.5, 0.8]))
    assert summary["guesses"] == 2 and summary["unsure"] == 1
    assert summary["expected_wrong"] == pytest.approx(0.1 + 0.2)


def test_more_like_this_and_batch_grids_label_in_one_go():
    at = start()
    s = session_of(at)
    q = tag(at, "point-tag", ["point"])["point"]
    at.button(key=f"similar_{q}").click().run()
    assert at.session_state["lower_tab"] == "More like this"
    grid = tag(at, "grid-tag", ["via", "points", "unsure"])
    assert grid["via"] == "similar"
    similar = [int(i) for i in grid["points"].split(",")]
    unsure = {int(i) for i in grid["unsure"].split(",") if i}
    assert len(similar) == 10 and int(q) not in similar
    choose_unsure(at, s)
    at.button(key="grid_label_similar").click().run()
    assert not at.exception
    assert set(similar) <= set(s.labels)
    sources = dict(zip(s.history["index"], s.history["source"]))
    # a picker left on the model's guess is stored as a guess, a chosen one as the user's
    assert {i: sources[i] for i in similar} == {i: "similar" if i in unsure else "similar_guess" for i in similar}
    at.session_state["lower_tab"] = "Batch"  # (the tab is bound to the URL too)
    at.query_params["lower_tab"] = "Batch"
    at.run()
    grid = tag(at, "grid-tag", ["via", "points", "unsure"])
    batch = [int(i) for i in grid["points"].split(",")]
    unsure = {int(i) for i in grid["unsure"].split(",") if i}
    assert grid["via"] == "batch" and len(batch) == 5 and batch[0] == s.next_query()
    # change one class in the grid before labelling
    choose_unsure(at, s)
    pick = next(sb for sb in at.selectbox if sb.key == f"grid_batch_{s.n_events}_{batch[1]}")
    other = next(c for c in s.classes if c != pick.value)
    pick.set_value(other).run()
    at.button(key="grid_label_batch").click().run()
    assert s.labels[batch[1]] == other
    sources = dict(zip(s.history["index"], s.history["source"]))
    assert {i: sources[i] for i in batch} == {
        i: "batch" if i in unsure or i == batch[1] else "batch_guess" for i in batch}
    exported = s.export_table().set_index("id")["origin"]
    ids = np.asarray(s.dataset.ids)
    assert {exported[ids[i]] for i in batch} <= {"batch-confirmed", "batch-guess"}
