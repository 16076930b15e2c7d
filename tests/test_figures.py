"""Figure builders of the app (labeler/ui/figures.py), tested directly on arrays."""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go
import pytest

from labeler.ui import figures as F
from labeler.ui import map_colors as C


def _rng(seed=0):
    return np.random.default_rng(seed)


def _pool(n=300, k=2, seed=0):
    rng = _rng(seed)
    layout = rng.normal(size=(n, 2))
    label_codes = np.full(n, -1, dtype=np.int32)
    labeled = rng.choice(n, size=min(12, n // 2), replace=False)
    label_codes[labeled] = rng.integers(0, k, size=labeled.size)
    return dict(
        layout=layout,
        classes=[f"c{j}" for j in range(k)],
        label_codes=label_codes,
        predicted_codes=rng.integers(0, k, size=n).astype(np.int32),
        confidence=rng.random(n),
        expected_risk=np.where(label_codes >= 0, np.inf, rng.random(n)),
    )


def _band_color(scale, value, cmin, cmax):
    """Colour a plotly step colour scale gives to ``value`` (slow obvious lookup)."""
    pos = (value - cmin) / (cmax - cmin)
    # find the last stop <= pos; at a hard edge two stops share a position: take the later band
    inside = [color for (p, color) in scale if p <= pos + 1e-12]
    stops_at_pos = [color for (p, color) in scale if abs(p - pos) < 1e-12]
    return stops_at_pos[-1] if stops_at_pos else inside[-1]


# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("k", [1, 2, 3, 7, 16])
def test_discrete_colorscale_maps_each_code_to_its_colour(k):
    colors = [C.class_color(j) for j in range(k)]
    scale = C.discrete_colorscale(colors)
    cmin, cmax = -0.5, k - 0.5
    for j in range(k):
        assert _band_color(scale, j, cmin, cmax) == colors[j]
    positions = [p for p, _ in scale]
    assert positions == sorted(positions) and positions[0] == 0 and positions[-1] == 1


def test_discrete_colorscale_refuses_empty():
    with pytest.raises(ValueError, match="at least one colour"):
        C.discrete_colorscale([])


@pytest.mark.parametrize("mode", list(C.COLOR_MODES))
def test_scatter_traces_and_numeric_colours(mode):
    p = _pool()
    fig = F.scatter_figure(color_mode=mode, query=5, selected=7, **p)
    pool, labeled, query, selected = fig.data[:4]
    n = p["layout"].shape[0]
    # every per-point attribute is a numeric array, never a list of strings
    assert isinstance(pool.marker.color, np.ndarray) and pool.marker.color.dtype.kind == "f"
    assert pool.marker.color.shape == (n,)
    assert np.isfinite(pool.marker.color).all()
    assert isinstance(pool.x, np.ndarray) and pool.x.shape == (n,)
    np.testing.assert_allclose(pool.x, p["layout"][:, 0].astype(np.float32))
    # labelled overlay: its points, in pool order, with their label codes
    lab = np.flatnonzero(p["label_codes"] >= 0)
    np.testing.assert_array_equal(labeled.customdata, lab)
    np.testing.assert_array_equal(labeled.marker.color, p["label_codes"][lab])
    assert list(query.customdata) == [5] and list(selected.customdata) == [7]
    np.testing.assert_allclose([query.x[0], query.y[0]], p["layout"][5], rtol=1e-6)
    assert query.marker.size > pool.marker.size
    # legend entries come after the four data traces
    assert [t.name for t in fig.data[4:]] == p["classes"]
    assert fig.layout.uirevision == "pool" and fig.layout.meta == "pool"


def test_scatter_label_mode_colours_match_classes():
    p = _pool(k=3)
    fig = F.scatter_figure(color_mode="label", **p)
    pool = fig.data[0]
    scale = [tuple(s) for s in pool.marker.colorscale]
    for i in range(len(p["label_codes"])):
        code = p["label_codes"][i]
        want = C.UNLABELED_COLOR if code < 0 else C.class_color(code)
        got = _band_color(scale, pool.marker.color[i], pool.marker.cmin, pool.marker.cmax)
        assert got.lower() == want.lower()


def test_scatter_predicted_mode_colours_match_classes():
    p = _pool(k=4)
    fig = F.scatter_figure(color_mode="predicted", **p)
    pool = fig.data[0]
    scale = [tuple(s) for s in pool.marker.colorscale]
    for i in range(0, len(p["label_codes"]), 7):
        got = _band_color(scale, pool.marker.color[i], pool.marker.cmin, pool.marker.cmax)
        assert got.lower() == C.class_color(p["predicted_codes"][i]).lower()


def test_scatter_expected_risk_replaces_inf():
    p = _pool()
    fig = F.scatter_figure(color_mode="expected_risk", **p)
    color = fig.data[0].marker.color
    finite = np.isfinite(p["expected_risk"])
    assert np.isfinite(color).all()
    np.testing.assert_allclose(color[finite], p["expected_risk"][finite].astype(np.float32))
    assert fig.data[0].marker.cmin == pytest.approx(p["expected_risk"][finite].min())
    assert fig.data[0].marker.cmax == pytest.approx(p["expected_risk"][finite].max())


def test_class_legend_for_every_distinct_colour_and_none_when_colours_repeat():
    """Ten classes (digits, MNIST) get their legend entries, each in its class colour (the map
    showed only "next query"); beyond the palette's distinct colours no entry."""
    fig = F.scatter_figure(query=3, **_pool(k=10))
    legend = [t for t in fig.data if t.showlegend is not False]
    assert [t.name for t in legend] == ["next query"] + [f"c{j}" for j in range(10)]
    assert [t.marker.color for t in fig.data[4:]] == [C.class_color(j) for j in range(10)]
    assert len(set(C.CLASS_COLORS)) == len(C.CLASS_COLORS)
    fig = F.scatter_figure(**_pool(k=len(C.CLASS_COLORS)))
    assert [t.name for t in fig.data[4:]] == [f"c{j}" for j in range(len(C.CLASS_COLORS))]
    fig = F.scatter_figure(**_pool(k=len(C.CLASS_COLORS) + 1))
    assert len(fig.data) == 4


def test_scatter_selected_equal_to_query_is_drawn_once():
    p = _pool()
    fig = F.scatter_figure(query=3, selected=3, **p)
    assert list(fig.data[2].customdata) == [3]
    assert len(fig.data[3].customdata) == 0


def test_scatter_no_query():
    p = _pool()
    fig = F.scatter_figure(query=None, selected=None, **p)
    assert len(fig.data[2].x) == 0 and len(fig.data[3].x) == 0


def test_uirevision_constant_across_data_changes():
    a = F.scatter_figure(query=1, view_key="s1", **_pool(seed=1))
    b = F.scatter_figure(query=2, color_mode="confidence", view_key="s1", **_pool(seed=2))
    assert a.layout.uirevision == b.layout.uirevision == "s1"
    assert a.layout.meta == b.layout.meta == "s1"


@pytest.mark.parametrize("bad", [
    dict(layout=np.zeros((10, 3))),
    dict(label_codes=np.zeros(9, dtype=int)),
    dict(color_mode="rainbow"),
])
def test_scatter_bad_input(bad):
    p = _pool(n=10)
    p.update(bad)
    with pytest.raises(ValueError):
        F.scatter_figure(**p)


@pytest.mark.parametrize("mode,missing", [("predicted", "predicted_codes"),
                                          ("confidence", "confidence"),
                                          ("expected_risk", "expected_risk")])
def test_scatter_mode_needs_its_array(mode, missing):
    p = _pool(n=10)
    p[missing] = None
    with pytest.raises(ValueError, match=mode):
        F.scatter_figure(color_mode=mode, **p)


def test_large_pool_serialises_as_typed_arrays():
    # 20k points: coordinates and colours must go out as base64 typed arrays, not JSON lists
    p = _pool(n=20_000)
    fig = F.scatter_figure(color_mode="confidence", query=0, **p)
    spec = json.loads(fig.to_json())
    pool = spec["data"][0]
    assert set(pool["x"]) == {"dtype", "bdata"} and pool["x"]["dtype"] == "f4"
    assert set(pool["marker"]["color"]) == {"dtype", "bdata"}
    assert "text" not in pool and "hovertext" not in pool and "customdata" not in pool


# --------------------------------------------------------------------------------------------
def test_selection_of_pool_trace_uses_point_index():
    ev = {"selection": {"points": [{"curve_number": 0, "point_index": 42, "point_number": 42}]}}
    assert F.point_index_from_selection(ev) == 42
    assert F.point_index_from_selection(ev["selection"]) == 42


def test_selection_round_trip_through_every_trace():
    p = _pool()
    fig = F.scatter_figure(query=5, selected=9, **p)
    lab = np.flatnonzero(p["label_codes"] >= 0)
    for curve in (1, 2, 3):
        trace = fig.data[curve]
        for k in range(len(trace.customdata)):
            point = {"curve_number": curve, "point_index": k,
                     "customdata": trace.customdata[k].item()}
            want = {1: lab[k], 2: 5, 3: 9}[curve]
            assert F.point_index_from_selection({"selection": {"points": [point]}}) == want


@pytest.mark.parametrize("event", [
    None, {}, {"selection": {"points": []}},
    {"selection": {"points": [{"curve_number": 5, "point_index": 0}]}},  # legend entry
    {"selection": {"points": ["junk"]}},
    {"selection": {"points": [{"customdata": "abc"}]}},
])
def test_selection_without_a_usable_point(event):
    assert F.point_index_from_selection(event) is None


def test_selection_takes_last_point_and_list_customdata():
    ev = {"selection": {"points": [{"curve_number": 0, "point_index": 1},
                                   {"curve_number": 1, "point_index": 0, "customdata": [17]}]}}
    assert F.point_index_from_selection(ev) == 17


# --------------------------------------------------------------------------------------------
def test_risk_curve_skips_nan():
    fig = F.risk_curve_figure(np.arange(1, 6), np.array([0.5, np.nan, 0.3, 0.2, 0.1]))
    np.testing.assert_array_equal(fig.data[0].x, [1, 3, 4, 5])
    np.testing.assert_allclose(fig.data[0].y, [0.5, 0.3, 0.2, 0.1])


def test_loo_curve_marks_the_value_in_use_on_a_log_axis_over_the_grid():
    lams = np.geomspace(1e-3, 10, 9)
    errors = np.linspace(0.3, 0.1, 9)
    fig = F.loo_curve_figure(lams, errors, 0.1, auto=True)
    assert fig.layout.xaxis.type == "log"
    lo, hi = fig.layout.xaxis.range  # log10 units: the grid with a small margin, not 1e12
    assert np.log10(1e-3) - 0.5 < lo < np.log10(1e-3) and np.log10(10) < hi < np.log10(10) + 0.5
    y0, y1 = fig.layout.yaxis.range
    assert y0 == 0.0 and 0.3 <= y1 <= 1.0  # never below 0 (the old axis went to -1)
    marker = fig.data[1]
    assert marker.x == (0.1,) and marker.y[0] == pytest.approx(errors[4])  # on the curve
    assert "in use (auto)" in marker.text[0] and "0.1" in marker.text[0]
    assert len(fig.layout.shapes) == 0  # the tuner's choice is the value in use: no second line
    np.testing.assert_allclose(fig.data[0].x, lams)


def test_loo_curve_flat_at_zero_is_readable_and_marks_a_different_choice():
    lams = np.geomspace(1e-3, 10, 9)
    fig = F.loo_curve_figure(lams, np.zeros(9), 0.1, chosen=1.0, name="width")
    assert fig.layout.yaxis.range == (0.0, 0.1)
    assert len(fig.layout.shapes) == 1 and fig.layout.shapes[0].x0 == pytest.approx(1.0)
    assert "width" in fig.layout.xaxis.title.text


def test_loo_curve_without_value_in_use_and_bad_shapes():
    fig = F.loo_curve_figure(np.array([0.1, 1.0]), np.array([0.2, 0.3]), None)
    assert len(fig.layout.shapes) == 0 and len(fig.data) == 1
    with pytest.raises(ValueError, match="same shape"):
        F.loo_curve_figure(np.array([0.1, 1.0]), np.array([0.2]), 0.1)


def test_confidence_histogram_counts_against_loop():
    conf = np.concatenate([_rng(3).random(997), [0.0, 1.0, np.nan]])
    fig = F.confidence_histogram_figure(conf, n_bins=20)
    counts = np.asarray(fig.data[0].y)
    want = np.zeros(20, dtype=int)
    for c in conf:
        if np.isfinite(c):
            want[min(int(c * 20), 19)] += 1   # right edge 1.0 falls in the last bin
    np.testing.assert_array_equal(counts, want)
    assert counts.sum() == 999


def test_accuracy_per_bin_figure():
    lo = np.linspace(0, 0.9, 10)
    hi = lo + 0.1
    acc = np.array([np.nan, 0.5, 0.6, 0.7, 0.8, np.nan, 0.9, 1.0, 1.0, 1.0])
    counts = np.array([0, 2, 5, 3, 4, 0, 9, 10, 11, 40])
    fig = F.accuracy_per_bin_figure(lo, hi, acc, counts)
    bars = fig.data[0]
    np.testing.assert_allclose(bars.y, acc)  # NaN (no bar) exactly where the bin is empty
    assert list(bars.text) == [f"n={c}" if c else "" for c in counts]
    np.testing.assert_allclose(bars.x, (lo + hi) / 2)
    assert bars.error_y.array is None  # no interval given, no whiskers


def test_accuracy_per_bin_figure_draws_the_interval_as_whiskers():
    from core.confidence import wilson_interval

    lo = np.linspace(0, 0.9, 10)
    hi = lo + 0.1
    counts = np.array([0, 0, 0, 0, 0, 0, 0, 0, 6, 40])
    correct = np.array([0, 0, 0, 0, 0, 0, 0, 0, 6, 38])
    acc = np.where(counts > 0, correct / np.maximum(counts, 1), np.nan)
    lower, upper = wilson_interval(correct, counts)
    fig = F.accuracy_per_bin_figure(lo, hi, acc, counts, lower, upper)
    bars = fig.data[0]
    # 6 of 6 right: the bar reaches 100 % but the whisker goes down to 61 %
    assert bars.y[8] == 1.0 and bars.error_y.arrayminus[8] == pytest.approx(1.0 - 0.6097, abs=1e-3)
    assert bars.error_y.array[8] == pytest.approx(0.0)
    assert np.isnan(bars.error_y.array[0])  # empty bin: no whisker
    assert fig.layout.yaxis.range == (0, 1.05)


def test_figures_are_plotly_figures():
    for fig in (F.risk_curve_figure([1], [0.1]), F.confidence_histogram_figure([0.5]),
                F.loo_curve_figure([1.0], [0.1], 1.0), F.accuracy_per_bin_figure([0.0], [1.0], [1.0], [3],
                                                                             [0.4], [1.0])):
        assert isinstance(fig, go.Figure)
