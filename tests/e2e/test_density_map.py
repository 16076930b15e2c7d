"""The density map of a large pool in a real browser: zoom in -> real points, click one, label
it by keyboard, the zoom and the query ring survive.

A pool above the density threshold: 2,000 moons with the threshold lowered to 500 points and
the viewport limit to 400 (``LABELER_MAP_DENSITY_ABOVE``, ``LABELER_MAP_VIEWPORT_MAX``): the
same code path as 10^5 points, at a size whose dense posterior starts in seconds.
"""

from __future__ import annotations

import os
import time

import pytest
from harness import AppServer, class_keys, labeled_count, open_app, press, shown, wait_labeled

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

SCREENSHOT_DIR = os.environ.get("LABELER_SCREENSHOTS")

_MAP = """() => [...document.querySelectorAll('.js-plotly-plot')]
                .find(g => g._fullData && g._fullData[0] && g._fullData[0].name === 'pool')"""


def _state(page) -> dict:
    return page.evaluate(f"""() => {{
        const gd = ({_MAP})();
        if (!gd) return null;
        const d = gd._fullData;
        const ids = (t) => t && t.customdata ? Array.from(t.customdata).map(Number) : [];
        return {{images: (gd.layout.images || []).length, pool: ids(d[0]), labelled: ids(d[1]),
                 query: ids(d[2]), x: [...gd._fullLayout.xaxis.range], y: [...gd._fullLayout.yaxis.range]}};
    }}""")


def _wait_state(page, check, what, timeout_s=90.0) -> dict:
    deadline = time.monotonic() + timeout_s
    state = None
    while time.monotonic() < deadline:
        state = _state(page)
        if state is not None and check(state):
            return state
        page.wait_for_timeout(250)
    raise AssertionError(f"the map never showed {what}; last state: "
                         f"{ {k: (v[:10] if isinstance(v, list) else v) for k, v in (state or {}).items()} }")


def _trace_point_position(page, trace: int, j: int) -> tuple[float, float]:
    """Page coordinates of point ``j`` of trace ``trace`` (plotly's own axis maps)."""
    return tuple(page.evaluate(f"""([t, j]) => {{
        const gd = ({_MAP})();
        const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis, d = gd._fullData[t];
        const r = (gd.querySelector('.nsewdrag') || gd).getBoundingClientRect();
        return [r.left + xa.l2p(d.x[j]), r.top + ya.l2p(d.y[j])];
    }}""", [trace, j]))


def test_density_map_zoom_click_label(tmp_path, page):
    env = {"LABELER_MAP_DENSITY_ABOVE": "500", "LABELER_MAP_VIEWPORT_MAX": "400"}
    with AppServer(tmp_path / "store.sqlite", data_options={"n": 2000}, env=env) as server:
        open_app(page, server.url)
        _, query = shown(page)
        state = _wait_state(page, lambda s: s["images"] == 1 and s["query"] == [query],
                            "the density image and the query ring")
        assert state["pool"] == [], "zoomed out, no pool point should be drawn one by one"
        full = state

        # ---- box-zoom around the query: its neighbourhood becomes real points ---------------
        qx, qy = _trace_point_position(page, 2, 0)
        page.mouse.move(qx - 70, qy - 70)
        page.mouse.down()
        page.mouse.move(qx, qy, steps=6)
        page.mouse.move(qx + 70, qy + 70, steps=6)
        page.mouse.up()
        state = _wait_state(page, lambda s: 0 < len(s["pool"]) <= 400, "the viewport's points")
        assert state["x"][1] - state["x"][0] < 0.5 * (full["x"][1] - full["x"][0]), "not zoomed"
        zoomed = state
        assert state["query"] == [query]
        if SCREENSHOT_DIR:
            page.screenshot(path=os.path.join(SCREENSHOT_DIR, "density_zoomed.png"))

        # ---- click a real point (not the query): the panel shows it ----------------------------
        pool = state["pool"]
        j = next(k for k, i in enumerate(pool) if i != query)
        clicked = pool[j]
        x, y = _trace_point_position(page, 0, j)
        page.mouse.click(x, y)
        page.wait_for_function("(p) => { const t = document.querySelector('.point-tag');"
                               " return t && t.dataset.point === String(p); }", arg=clicked,
                               timeout=60_000)

        # ---- label it by keyboard: it joins the labelled points, the zoom stays ---------------
        keys = class_keys(page)
        assert labeled_count(page) == 0
        press(page, keys[list(keys)[0]])
        wait_labeled(page, 1)
        state = _wait_state(page, lambda s: clicked in s["labelled"] and len(s["query"]) == 1,
                            "the labelled point")
        assert state["x"] == pytest.approx(zoomed["x"]) and state["y"] == pytest.approx(zoomed["y"])
        assert 0 < len(state["pool"]) <= 400  # still the viewport's points
        _, query_now = shown(page)
        assert state["query"] == [query_now]  # the query ring: wherever the query is

        # ---- reset the zoom (double-click): back to the density image alone ---------------------
        box = page.locator(".js-plotly-plot .nsewdrag").first.bounding_box()
        page.mouse.dblclick(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)
        state = _wait_state(page, lambda s: s["pool"] == [] and s["x"][1] - s["x"][0] > 0.9 * (
            full["x"][1] - full["x"][0]), "the whole map again")
        assert state["images"] == 1 and clicked in state["labelled"]
        if SCREENSHOT_DIR:
            page.screenshot(path=os.path.join(SCREENSHOT_DIR, "density_full.png"))
