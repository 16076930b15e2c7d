"""The density map of large pools (labeler/ui/map_density.py) and its switch in scatter_figure."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

from labeler.ui import map_density as md
from labeler.ui.figures import point_index_from_selection, scatter_figure
from labeler.ui.map_colors import CLASS_COLORS, DENSITY_GREY
from labeler.ui.viewport import parse_viewport


def _pool(n, seed=0):
    rng = np.random.default_rng(seed)
    xy = rng.normal(size=(n, 2))
    xy[: n // 2] += 4.0
    labels = np.full(n, -1)
    chosen = rng.choice(n, min(n, 40), replace=False)
    labels[chosen] = rng.integers(0, 3, chosen.size)
    return xy, labels, (xy[:, 0] > 2).astype(int), rng.random(n)


def _rgb(hex_color):
    return tuple(int(hex_color[i:i + 2], 16) for i in (1, 3, 5))


def _decode_png(uri):
    assert uri.startswith("data:image/png;base64,")
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))))


# ---- the histogram ------------------------------------------------------------------------------
def test_counts_sum_to_n_and_match_histogram2d():
    xy, *_ = _pool(5000)
    image = md.density_image(xy, grid=64)
    assert image.counts.sum() == 5000
    # oracle: numpy's own 2-D histogram over the same box, rows flipped (row 0 on top)
    h, _, _ = np.histogram2d(xy[:, 0], xy[:, 1], bins=64,
                             range=[[image.x0, image.x1], [image.y0, image.y1]])
    np.testing.assert_array_equal(image.counts, h.T[::-1].astype(np.int64))


def test_bin_index_edges_and_outside():
    bounds = (0.0, 1.0, 0.0, 1.0)
    xy = np.array([[0.0, 0.0], [1.0, 1.0], [0.99, 0.01], [1.5, 0.5], [np.nan, 0.5]])
    b = md.bin_index(xy, bounds, grid=4)
    # (0,0) bottom-left -> row 3 col 0; (1,1) top-right edge -> row 0 col 3; (0.99,0.01) -> row 3 col 3
    assert b.tolist() == [12, 3, 15, -1, -1]


def test_class_mix_colours_on_a_tiny_known_pool():
    palette = [CLASS_COLORS[0], CLASS_COLORS[1]]
    # bins of a 2 x 2 grid over [0, 2]^2: bottom-left holds two class-0 points, top-right a
    # class-0 and a class-1 point (their mean colour), bottom-right one unlabelled (grey)
    xy = np.array([[0.2, 0.2], [0.4, 0.3], [1.5, 1.5], [1.6, 1.7], [1.5, 0.5]])
    codes = np.array([0, 0, 0, 1, -1])
    image = md.density_image(xy, codes=codes, palette=palette, bounds=(0, 2, 0, 2), grid=2)
    assert image.counts.tolist() == [[0, 2], [2, 1]]
    c0, c1 = np.array(_rgb(palette[0])), np.array(_rgb(palette[1]))
    np.testing.assert_array_equal(image.rgba[1, 0, :3], c0)
    np.testing.assert_array_equal(image.rgba[0, 1, :3], np.round((c0 + c1) / 2))
    np.testing.assert_array_equal(image.rgba[1, 1, :3], DENSITY_GREY)
    assert image.rgba[0, 0, 3] == 0  # empty bin: transparent
    assert image.rgba[1, 0, 3] == 255 and image.rgba[0, 1, 3] == 255  # densest bins: opaque
    assert 0 < image.rgba[1, 1, 3] < 255


def test_value_colours_are_the_colour_scale_at_the_bin_mean():
    xy = np.array([[0.2, 0.2], [0.3, 0.3], [1.5, 1.5], [1.5, 0.5]])
    values = np.array([0.0, 1.0, 1.0, np.nan])  # bin means 0.5 and 1.0; the NaN bin: low end
    image = md.density_image(xy, values=values, value_range=(0.0, 1.0), colorscale="Viridis",
                             bounds=(0, 2, 0, 2), grid=2)
    lut = md._colorscale_lut("Viridis")
    np.testing.assert_array_equal(image.rgba[1, 0, :3], lut[128])  # round(0.5 * 255) = 128
    np.testing.assert_array_equal(image.rgba[0, 1, :3], lut[255])
    np.testing.assert_array_equal(image.rgba[1, 1, :3], lut[0])
    np.testing.assert_array_equal(lut[-1], _rgb("#fde725"))  # Viridis' top colour


def test_png_round_trip():
    xy, *_ = _pool(2000)
    image = md.density_image(xy, grid=32)
    np.testing.assert_array_equal(_decode_png(md.png_data_uri(image.rgba)), image.rgba)


# ---- the viewport ---------------------------------------------------------------------------------
def test_viewport_points_against_a_loop():
    xy, *_ = _pool(3000, seed=3)
    box = (0.5, -0.5, -1.0, 1.0)  # either order of each pair
    got = md.viewport_points(xy, box, max_points=10_000)
    want = [i for i, (x, y) in enumerate(xy) if -0.5 <= x <= 0.5 and -1.0 <= y <= 1.0]
    assert got.tolist() == want and len(want) > 0
    assert md.viewport_points(xy, box, max_points=len(want) - 1).size == 0  # too many: none
    assert md.viewport_points(xy, None).size == 0


def test_parse_viewport():
    state = {"x0": 0, "x1": 1.5, "y0": -1, "y1": 2, "key": "s1"}
    assert parse_viewport(state, "s1") == (0.0, 1.5, -1.0, 2.0)
    assert parse_viewport(state, "other session") is None
    assert parse_viewport(None, "s1") is None
    assert parse_viewport({"x0": "a", "x1": 1, "y0": 0, "y1": 1}) is None
    assert parse_viewport({"x0": float("nan"), "x1": 1, "y0": 0, "y1": 1}) is None


# ---- the figure -----------------------------------------------------------------------------------
def test_threshold_switch(monkeypatch):
    xy, labels, pred, conf = _pool(400)
    monkeypatch.setenv("LABELER_MAP_DENSITY_ABOVE", "400")
    small = scatter_figure(xy, ["a", "b", "c"], label_codes=labels)
    assert not small.layout.images and len(small.data[0].x) == 400
    monkeypatch.setenv("LABELER_MAP_DENSITY_ABOVE", "399")
    big = scatter_figure(xy, ["a", "b", "c"], label_codes=labels)
    assert len(big.layout.images) == 1 and len(big.data[0].x) == 0
    # forced either way whatever the size
    assert len(scatter_figure(xy, ["a", "b", "c"], label_codes=labels, density=False).data[0].x) == 400
    monkeypatch.setenv("LABELER_MAP_DENSITY_ABOVE", "100000")
    assert len(scatter_figure(xy, ["a", "b", "c"], label_codes=labels, density=True).layout.images) == 1


def test_bad_threshold_setting_names_the_fix(monkeypatch):
    monkeypatch.setenv("LABELER_MAP_DENSITY_ABOVE", "many")
    with pytest.raises(ValueError, match="LABELER_MAP_DENSITY_ABOVE.*whole number"):
        md.density_above()


@pytest.mark.parametrize("mode", ["label", "predicted", "confidence", "expected_risk"])
def test_density_figure_real_points_carry_pool_indices(mode):
    xy, labels, pred, conf = _pool(3000, seed=1)
    risk = np.where(labels >= 0, np.nan, conf)
    query, selected, skipped = 17, 23, [31, 5]
    labels[[5]] = -1
    box = (-0.3, 0.3, -0.3, 0.3)
    fig = scatter_figure(xy, ["a", "b", "c"], color_mode=mode, label_codes=labels,
                         predicted_codes=pred, confidence=conf, expected_risk=risk, query=query,
                         selected=selected, skipped=skipped, viewport=box, density=True)
    names = [t.name for t in fig.data]
    assert names[:4] == ["pool", "labelled", "next query", "selected"]
    in_view = md.viewport_points(xy, box)
    assert in_view.size > 0
    np.testing.assert_array_equal(np.asarray(fig.data[0].customdata), in_view)
    np.testing.assert_allclose(np.asarray(fig.data[0].x), xy[in_view, 0], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(fig.data[1].customdata), np.flatnonzero(labels >= 0))
    np.testing.assert_allclose(np.asarray(fig.data[1].x), xy[labels >= 0, 0], rtol=1e-6)
    assert list(fig.data[2].customdata) == [query]  # the query: always drawn, outside the view too
    np.testing.assert_allclose([fig.data[2].x[0], fig.data[2].y[0]], xy[query], rtol=1e-6)
    assert list(fig.data[3].customdata) == [selected]
    assert sorted(fig.data[-1].customdata) == [5, 31] and fig.data[-1].name.startswith("skipped")
    # a click on a viewport point, a labelled point, the query -> its pool index
    j = 3
    event = {"selection": {"points": [{"curve_number": 0, "point_index": j,
                                       "customdata": int(fig.data[0].customdata[j])}]}}
    assert point_index_from_selection(event) == in_view[j]
    event = {"selection": {"points": [{"curve_number": 2, "point_index": 0, "customdata": [query]}]}}
    assert point_index_from_selection(event) == query
    if mode in ("predicted", "label"):
        want = (pred if mode == "predicted" else labels)[in_view] + 1.0
        np.testing.assert_array_equal(np.asarray(fig.data[0].marker.color), want)
    if mode in ("confidence", "expected_risk"):  # one colour bar, with the viewport's points
        assert [bool(t.marker.showscale) for t in fig.data if hasattr(t, "marker")].count(True) == 1
        zoomed_out = scatter_figure(xy, ["a", "b", "c"], color_mode=mode, label_codes=labels,
                                    confidence=conf, expected_risk=risk, density=True)
        bars = [t for t in zoomed_out.data if t.marker.showscale]
        assert len(bars) == 1 and bars[0].name == "colour scale" and zoomed_out.data[-1] is bars[0]
    assert fig.layout.xaxis.range[0] < xy[:, 0].min() and fig.layout.xaxis.range[1] > xy[:, 0].max()
    assert fig.layout.meta == "pool"


def test_density_figure_zoomed_out_draws_no_pool_points(monkeypatch):
    monkeypatch.setenv("LABELER_MAP_VIEWPORT_MAX", "1000")
    xy, labels, *_ = _pool(3000)
    fig = scatter_figure(xy, ["a", "b", "c"], label_codes=labels, query=4, density=True,
                         viewport=(-100, 100, -100, 100))  # everything in view: too many
    assert len(fig.data[0].x) == 0 and list(fig.data[2].customdata) == [4]


@pytest.mark.parametrize("n", [100_000, 1_000_000])
def test_payload_is_bounded(n):
    xy, labels, pred, conf = _pool(n, seed=2)
    for mode in ("predicted", "confidence"):
        fig = scatter_figure(xy, ["a", "b", "c"], color_mode=mode, label_codes=labels,
                             predicted_codes=pred, confidence=conf, query=0,
                             viewport=(0.0, 0.1, 0.0, 0.1))
        assert len(fig.layout.images) == 1
        size = len(fig.to_json().encode())
        assert size < 2_000_000, f"{size:,} bytes of figure JSON at n={n:,} ({mode})"


def test_payload_is_bounded_with_a_full_viewport_and_texts():
    n = 100_000
    xy, labels, pred, conf = _pool(n, seed=2)
    texts = np.array([f"point {i}: " + "a short document of words " * 3 for i in range(n)], dtype=object)
    # the largest box (around the origin) holding at most VIEWPORT_MAX_POINTS points
    r = np.sort(np.abs(xy).max(axis=1))[md.VIEWPORT_MAX_POINTS - 1]
    box = (-r, r, -r, r)
    assert md.viewport_points(xy, box).size == md.VIEWPORT_MAX_POINTS
    fig = scatter_figure(xy, ["a", "b", "c"], color_mode="predicted", label_codes=labels,
                         predicted_codes=pred, query=0, viewport=box, hover_text=texts)
    assert len(fig.data[0].x) == md.VIEWPORT_MAX_POINTS
    assert list(fig.data[0].text[:1]) == [texts[fig.data[0].customdata[0]]]
    size = len(fig.to_json().encode())
    assert size < 2_000_000, f"{size:,} bytes"


def test_density_figure_real_points_hover_with_prediction_and_confidence():
    """The real points of the density map (the viewport's, the labelled) carry the same hover
    as the scatter map: label, predicted class and confidence of each POOL point."""
    xy, labels, pred, conf = _pool(3000, seed=2)
    box = (-0.3, 0.3, -0.3, 0.3)
    fig = scatter_figure(xy, ["a", "b", "c"], label_codes=labels, predicted_codes=pred, confidence=conf,
                         viewport=box, density=True, hover_predictions=True)
    pool, labelled = fig.data[0], fig.data[1]
    in_view = md.viewport_points(xy, box)
    assert "predicted (confidence): %{text}" in pool.hovertemplate and "%{customdata}" in pool.hovertemplate
    names = ["a", "b", "c"]
    assert list(pool.text) == [f"{names[pred[i]]} ({conf[i]:.2f})" for i in in_view]
    lab = np.flatnonzero(labels >= 0)
    assert list(labelled.text) == [f"{names[labels[i]]}<br>predicted (confidence): {names[pred[i]]} ({conf[i]:.2f})"
                                   for i in lab]


def test_layout_bins_kept_per_layout_equal_a_fresh_computation():
    from labeler.ui import map_density as md

    rng = np.random.default_rng(11)
    for n in (700, 1500):
        xy = rng.normal(size=(n, 2)).astype(np.float32)
        for _ in range(2):  # the second call is the kept one
            bounds, bins, grey = md.layout_bins(xy)
            fresh = md.bounds_of(np.asarray(xy, dtype=np.float64))
            assert bounds == fresh
            np.testing.assert_array_equal(bins, md.bin_index(np.asarray(xy, dtype=np.float64), fresh))
            assert grey == md.png_data_uri(md.density_image(xy, bounds=fresh).rgba)
    moved = xy.copy()
    moved[-1] += 5.0  # another layout (here: only its last point differs) is not taken for it
    assert md.layout_bins(moved)[0] == md.bounds_of(np.asarray(moved, dtype=np.float64))
