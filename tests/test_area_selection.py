"""A box or lasso on the map selects every pool point inside it (labeler/ui/selection.py), drawn
or not: the shapes of Streamlit's selection event applied to the layout of the whole pool, the
selection panel's counts (area_summary) against a plain loop, and "Label N as <class>" as one
stored transaction that one Undo removes (session and page)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from labeler.session import LabelingSession, SessionConfig
from labeler.ui.registry import REGISTRY
from labeler.ui.selection import area_selection, area_shapes, area_summary, selection_spread

APP = str(Path(__file__).resolve().parents[1] / "labeler" / "app.py")


def lasso_event(*polygons, boxes=(), points=()):
    """A selection event as Streamlit's front end writes it (PlotlyChart: ``box`` entries
    ``{xref, yref, x: [x0, x1], y: [y0, y1]}``, ``lasso`` entries with the outline's vertices)."""
    return {"selection": {
        "points": list(points), "point_indices": [],
        "box": [{"xref": "x", "yref": "y", "x": list(x), "y": list(y)} for x, y in boxes],
        "lasso": [{"xref": "x", "yref": "y", "x": [float(v) for v in p[:, 0]],
                   "y": [float(v) for v in p[:, 1]]} for p in polygons]}}


def circle(cx, cy, r, k=40):
    t = np.linspace(0, 2 * np.pi, k, endpoint=False)
    return np.column_stack([cx + r * np.cos(t), cy + r * np.sin(t)])


def test_shapes_are_read_as_streamlit_writes_them_and_bad_ones_left_out():
    event = lasso_event(circle(0, 0, 1, 5), boxes=[((0, 1), (2, 3))])
    boxes, lassos = area_shapes(event)
    assert boxes == [((0.0, 1.0), (2.0, 3.0))] and lassos[0].shape == (5, 2)
    bad = {"selection": {"points": [], "box": [{"x": [0, None], "y": [0, 1]}, {"x": [0, 1]}, "junk"],
                         "lasso": [{"x": [0, 1, "a"], "y": [0, 1, 2]}, {"x": [0, 1], "y": [0]},
                                   {"x": [0, float("nan"), 1], "y": [0, 1, 1]}]}}
    assert area_shapes(bad) == ([], [])
    # a selection whose shapes carry no coordinates falls back to the drawn pool points
    bad["selection"]["points"] = [{"curve_number": 0, "point_index": 2},
                                  {"curve_number": 1, "point_index": 0}, {"curve_number": 0, "point_index": 9}]
    got = area_selection(bad, np.zeros((5, 2)))
    assert got.how == "lasso" and got.indices.tolist() == [2]


def test_shapes_drawn_together_select_their_union_and_only_the_pool():
    rng = np.random.default_rng(0)
    layout = rng.uniform(-3, 3, size=(5000, 2))
    event = lasso_event(circle(-1, -1, 1), circle(1, 1, 0.8), boxes=[((2, 3), (-3, -2))])
    got = area_selection(event, layout)
    from core.polygon import points_in_box, points_in_polygon

    expected = (points_in_polygon(layout, circle(-1, -1, 1)) | points_in_polygon(layout, circle(1, 1, 0.8))
                | points_in_box(layout, (2, 3), (-3, -2)))
    assert got.how == "lasso"
    np.testing.assert_array_equal(got.indices, np.flatnonzero(expected))
    assert got.indices.size > 100 and np.all(np.diff(got.indices) > 0)


def test_the_drawn_points_and_the_shapes_give_the_same_set_on_a_small_map():
    """On a map that draws every point, plotly lists the pool trace's points inside the lasso
    (its tester: points on the outline are inside, the rest by parity); the server's set from
    the shape alone is the same. Here plotly's list is made by a plain loop over the points."""
    rng = np.random.default_rng(1)
    layout = rng.normal(size=(3000, 2))
    polygon = circle(0.2, -0.1, 1.3, 60) * rng.uniform(0.7, 1.0, size=(60, 1))  # a wobbly lasso

    def plotly_contains(p):  # polygon.js "contains": ray casting, the outline inside
        x, y = p
        inside = False
        for (ax, ay), (bx, by) in zip(polygon, np.roll(polygon, -1, axis=0)):
            if (ay > y) != (by > y) and x < ax + (y - ay) * (bx - ax) / (by - ay):
                inside = not inside
        return inside

    drawn = [{"curve_number": 0, "point_index": int(i)} for i in range(len(layout))
             if plotly_contains(layout[i])]
    from_points = sorted(d["point_index"] for d in drawn)
    got = area_selection(lasso_event(polygon, points=drawn), layout)
    assert got.indices.tolist() == from_points and len(from_points) > 500


def test_area_summary_matches_a_plain_loop():
    rng = np.random.default_rng(2)
    n, k = 2000, 3
    labels = np.where(rng.random(n) < 0.3, rng.integers(0, k, n), -1)
    predicted = np.where(rng.random(n) < 0.95, rng.integers(0, k, n), -1)
    confidence = rng.random(n)
    chosen = np.unique(rng.integers(0, n, 700))
    summary = area_summary(np.r_[chosen, n + 5, -1], labels, predicted, confidence, k)
    assert summary.indices.tolist() == chosen.tolist()  # out-of-range indices dropped
    assert summary.by_label == [sum(labels[i] == j for i in chosen) for j in range(k)]
    assert summary.unlabelled.tolist() == [i for i in chosen if labels[i] < 0]
    free = summary.unlabelled
    predicted_counts = [sum(predicted[i] == j for i in free) for j in range(k)]
    confident = [sum(predicted[i] == j and confidence[i] >= 0.9 for i in free) for j in range(k)]
    assert summary.spread == {"predicted": predicted_counts, "confident": confident,
                              "against": [sum(confident) - c for c in confident]}
    assert summary.spread == selection_spread(predicted[free], confidence[free], k)


# ---- the label action: one transaction, one undo ---------------------------------------------


def test_a_lasso_labelled_is_one_store_transaction_and_one_undo(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(
        dataset="spheres", dataset_options={"n": 6000}, seed=0))
    layout = np.asarray(s.layout)
    s.label(0, s.classes[1], source="chosen")  # one label in the disc: it keeps its label
    centre = np.array([0.0, 0.0])  # disc 0 of 60 (points 0..99): the layout is the data itself
    area = area_selection(lasso_event(circle(*centre, 2.0)), layout)
    disc = np.flatnonzero(((layout - centre) ** 2).sum(axis=1) <= 4.0)
    assert area.indices.tolist() == disc.tolist() == list(range(100))
    free = area_summary(area.indices, *_codes(s), len(s.classes)).unlabelled
    assert free.size == 99

    calls = []
    real_append = s._store.append

    def counting_append(session_id, rows, *, after):
        calls.append(len(rows))
        return real_append(session_id, rows, after=after)

    s._store.append = counting_append
    before = s.n_events
    assert s.label_points(free, s.classes[0], expected_version=s.n_events) == 99
    assert calls[0] == 99  # one action, one transaction holding every label
    assert all(s.labels[int(i)] == s.classes[0] for i in free) and s.labels[0] == s.classes[1]
    s.undo(expected_action=s.last_action)
    assert not set(map(int, free)) & set(s.labels) and s.labels == {0: s.classes[1]}
    with LabelingSession.open(tmp_path / "s.sqlite", s.id) as again:  # the replay agrees
        assert again.labels == {0: s.classes[1]} and again.n_events >= before


def _codes(s):
    from labeler.ui.view import build_view

    view = build_view(s, color_mode="label")
    return view.label_codes, view.predicted_codes, view.predictions["confidence"].to_numpy(float)


@pytest.fixture
def density_app(tmp_path, monkeypatch):
    monkeypatch.setenv("LABELER_STORE", str(tmp_path / "store.sqlite"))
    monkeypatch.setenv("LABELER_DATA", "spheres")
    monkeypatch.setenv("LABELER_DATA_OPTIONS", json.dumps({"n": 1200}))
    monkeypatch.setenv("LABELER_MAP_DENSITY_ABOVE", "500")  # the density map at 1,200 points
    monkeypatch.delenv("LABELER_SESSION", raising=False)
    REGISTRY.clear()
    yield
    REGISTRY.clear()


def test_the_panel_labels_an_area_of_the_density_map_as_one_undoable_action(density_app):
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    s, _ = REGISTRY.get(at.session_state["app_config"].store, at.session_state["session_id"])
    layout = np.asarray(s.layout)
    area = area_selection(lasso_event(circle(12.0, 6.0, 2.0)), layout)  # one disc: 20 points
    assert area.indices.size == 20
    at.session_state["area"] = {"how": area.how, "indices": area.indices, "version": s.n_events}
    at.run()
    tag = next(m.value for m in at.markdown if 'class="area-tag"' in m.value)
    assert 'data-count="20"' in tag and 'data-unlabelled="20"' in tag
    at.button(key="area_0").click().run()
    assert not at.exception, at.exception
    assert sorted(s.labels) == area.indices.tolist()
    assert any("Labelled 20 selected points" in m.value for m in at.success)
    next(b for b in at.button if b.key and b.key.startswith("undo_")).click().run()
    assert not s.labels


def test_the_warm_up_runs_once_per_process(monkeypatch):
    import labeler.ui.selection as selection

    calls = []
    monkeypatch.setattr(selection, "_warm_started", False)
    monkeypatch.setattr(selection, "warm_up", lambda: calls.append(1))
    for _ in range(3):
        selection.warm_up_in_background()
    for thread in __import__("threading").enumerate():
        if thread.name == "lasso-warm-up":
            thread.join(10)
    assert calls == [1]


def test_two_shapes_without_drawn_points_are_two_events():
    """On the density map two boxes may hold the same drawn points (none): each new shape must
    still be applied (the page remembers the last event by its shapes)."""
    from labeler.ui.state import _signature

    first = lasso_event(boxes=[((0, 1), (0, 1))])
    second = lasso_event(boxes=[((2, 3), (0, 1))])
    assert _signature(first) != _signature(second) != ""
    assert _signature(first) == _signature(lasso_event(boxes=[((0, 1), (0, 1))]))
    click = {"selection": {"points": [{"curve_number": 0, "point_index": 3}], "box": [], "lasso": []}}
    assert _signature(click) != _signature({"selection": {"points": [], "box": [], "lasso": []}})
