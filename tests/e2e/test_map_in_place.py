"""The pool map changes in place (labeler/ui/map_component.py): label points by keyboard in
Chromium and find the SAME plot element updated by deltas (not a new chart), the labelled
point recoloured, the query ring on the new query, the zoom kept; a page that lost its copy of
the map asks for the whole figure and draws the right map.

* ``test_keyboard_labels_change_the_map_in_place``: 600 points, every one drawn;
* ``test_density_map_changes_in_place``: the density map (threshold lowered to 300 points).
"""

from __future__ import annotations

import pytest
from harness import AppServer, class_keys, open_app, press, shown, wait_idle, wait_labeled

pytestmark = pytest.mark.e2e

_MAP = "document.querySelector('.labeler-map')"

_STATE = f"""() => {{
    const gd = {_MAP};
    if (!gd || !gd._fullData) return null;
    const pool = gd._fullData[0], lab = gd._fullData[1], ring = gd._fullData[2];
    return {{
        same: window.__mapNode === gd, rev: Number(gd.dataset.drawnRev), full: gd.dataset.full,
        query: ring.customdata && ring.customdata.length ? Number(ring.customdata[0]) : null,
        labelled: Array.from(lab.customdata || []).map(Number),
        labelledColors: Array.from(lab.marker.color || []).map(Number),
        poolColors: pool.marker && pool.marker.color && pool.marker.color.length
                    ? Array.from(pool.marker.color).map(Number) : [],
        images: (gd.layout.images || []).length,
        xrange: gd._fullLayout.xaxis.range.slice(),
    }};
}}"""


def _map_state(page) -> dict:
    return page.evaluate(_STATE)


def _wait_map_query(page, query: int, timeout=60_000):
    """Wait until the map's query ring is on ``query`` and the map's last message drawn."""
    page.wait_for_function(
        f"""(q) => {{ const gd = {_MAP};
            return gd && gd._fullData && gd._fullData[2].customdata
                   && Number(gd._fullData[2].customdata[0]) === q
                   && gd.dataset.drawnRev === gd.dataset.rev; }}""",
        arg=query, timeout=timeout)


def _label_by_key(page, key: str, count: int) -> tuple[int, int]:
    """Press ``key`` on the query, wait for ``count`` labels and the map; (labelled point, new query)."""
    _, query = shown(page)
    press(page, key)
    wait_labeled(page, count)
    wait_idle(page)
    _, new_query = shown(page)
    _wait_map_query(page, new_query)
    return query, new_query


def _run(page, server, expect_images: int):
    open_app(page, server.url)
    wait_idle(page)
    keys = class_keys(page)
    names = sorted(keys)
    # the first label: afterwards the page keeps the same elements (the first run after opening
    # a session has a progress bar above the map that later runs do not)
    _label_by_key(page, keys[names[0]], 1)
    page.evaluate(f"() => {{ window.__mapNode = {_MAP}; }}")
    first = _map_state(page)
    assert first["images"] == expect_images
    # zoom in a little: the zoom must survive the labels (same plot, layout.uirevision)
    page.evaluate(f"""() => {{ const gd = {_MAP}; const r = gd._fullLayout.xaxis.range;
        const w = r[1] - r[0]; return window.Plotly.relayout(gd, {{'xaxis.range': [r[0] + 0.1 * w, r[1] - 0.1 * w]}}); }}""")
    zoomed = _map_state(page)["xrange"]
    count = 1
    for k in range(3):
        j = (k + 1) % len(names)
        count += 1
        point, query = _label_by_key(page, keys[names[j]], count)
        state = _map_state(page)
        assert state["same"], "the map is a new element: it was redrawn, not changed in place"
        assert state["full"] == "0", "the whole figure was sent again"
        assert state["query"] == query
        assert point in state["labelled"]
        assert state["labelledColors"][state["labelled"].index(point)] == j  # its class colour
        if expect_images == 0:  # every point drawn: the pool trace recoloured at that point
            assert state["poolColors"][point] == j + 1
        assert state["xrange"] == pytest.approx(zoomed)
    # the page loses its copy of the map (as a remounted element in a new tab would): the next
    # delta cannot be applied, the page asks for the whole figure and draws the right map
    page.evaluate("() => { window.__labelerMap.cache = {}; }")
    before = _map_state(page)["rev"]
    count += 1
    point, query = _label_by_key(page, keys[names[0]], count)
    page.wait_for_function(f"(r) => {{ const gd = {_MAP}; return Number(gd.dataset.drawnRev) > r + 1; }}",
                           arg=before, timeout=60_000)
    _wait_map_query(page, query)
    state = _map_state(page)
    assert state["full"] == "1" and state["same"]
    assert point in state["labelled"] and len(state["labelled"]) == count
    # a double-click on a drawn point resets the zoom and does not choose that point
    x, y, index = page.evaluate(f"""() => {{ const gd = {_MAP}, d = gd._fullData[0];
        const q = Number(document.querySelector('.point-tag').dataset.query);
        const xa = gd._fullLayout.xaxis, ya = gd._fullLayout.yaxis;
        const r = gd.querySelector('.nsewdrag').getBoundingClientRect();
        const ids = d.customdata ? Array.from(d.customdata).map(Number) : [...Array(d.x.length).keys()];
        const j = ids.findIndex((i, k) => i !== q && xa.l2p(d.x[k]) > 20 && xa.l2p(d.x[k]) < r.width - 20
                                         && ya.l2p(d.y[k]) > 20 && ya.l2p(d.y[k]) < r.height - 20);
        return [r.left + xa.l2p(d.x[j]), r.top + ya.l2p(d.y[j]), ids[j]]; }}""")
    page.mouse.dblclick(x, y)
    page.wait_for_timeout(1500)
    wait_idle(page)
    point_shown, query_shown = shown(page)
    assert point_shown == query_shown != index, "the double-click chose a point"
    # a single click does
    x, y = page.evaluate(f"""(i) => {{ const gd = {_MAP}, d = gd._fullData[0];
        const ids = d.customdata ? Array.from(d.customdata).map(Number) : [...Array(d.x.length).keys()];
        const k = ids.indexOf(i), r = gd.querySelector('.nsewdrag').getBoundingClientRect();
        return [r.left + gd._fullLayout.xaxis.l2p(d.x[k]), r.top + gd._fullLayout.yaxis.l2p(d.y[k])]; }}""",
                         index)
    page.mouse.click(x, y)
    page.wait_for_function("(p) => { const t = document.querySelector('.point-tag');"
                           " return t && t.dataset.point === String(p); }", arg=index, timeout=60_000)
    return state


def test_keyboard_labels_change_the_map_in_place(tmp_path, page):
    with AppServer(tmp_path / "store.sqlite", data_options={"n": 600}) as server:
        _run(page, server, expect_images=0)
        page.screenshot(path=str(tmp_path / "map-in-place.png"))


def test_density_map_changes_in_place(tmp_path, page):
    env = {"LABELER_MAP_DENSITY_ABOVE": "300"}
    with AppServer(tmp_path / "store.sqlite", data_options={"n": 600}, env=env) as server:
        _run(page, server, expect_images=1)
