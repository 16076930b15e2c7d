"""The app in a real browser: keyboard labels, a click in the map, undo, reload, export.

Runs the README's ``labeler`` command on a free port with a temporary store
(``LABELER_STORE``) and drives Debian's Chromium through Playwright.
"""

from __future__ import annotations

import sqlite3
from urllib.parse import parse_qs, urlparse

import pandas as pd
import pytest
from harness import (
    class_keys,
    download_export_csv,
    labeled_count,
    open_app,
    plot_point_position,
    press,
    shown,
    wait_idle,
    wait_labeled,
    wait_query_changed,
)

pytestmark = pytest.mark.e2e


def _net_labels_in_sqlite(store, session_id) -> int:
    """Net labels of a session straight from the SQLite file: label/accept events whose
    action was not undone."""
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as con:
        undone = {json_action for (json_action,) in con.execute(
            "SELECT json_extract(value, '$.undoes') FROM events WHERE session_id = ? AND kind = 'undo'",
            (session_id,))}
        rows = con.execute(
            "SELECT action FROM events WHERE session_id = ? AND kind IN ('label', 'accept')",
            (session_id,)).fetchall()
    return sum(1 for (action,) in rows if action not in undone)


def _axis_ranges(page) -> dict:
    return page.evaluate("""() => {
        const gd = [...document.querySelectorAll('.js-plotly-plot')]
                   .find(g => g.data && g.data[0] && g.data[0].name === 'pool');
        return {x: [...gd._fullLayout.xaxis.range], y: [...gd._fullLayout.yaxis.range]}; }""")


def _map_box(page, timeout_s=30.0) -> dict:
    """The map's drag area on the page, once it is drawn (the map is re-mounted after each
    label, so it may be absent for a moment)."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        drag = page.locator(".js-plotly-plot .nsewdrag").first
        box = drag.bounding_box() if drag.count() else None
        if box is not None or time.monotonic() > deadline:
            assert box is not None, "the map's drag area did not appear"
            return box
        page.wait_for_timeout(200)


def test_keyboard_labels_click_undo_reload_export(app_server, page, tmp_path):
    from labeler.session import LabelingSession

    open_app(page, app_server.url)
    keys = class_keys(page)
    names = list(keys)
    assert len(names) == 2, f"expected the two moons classes with keys, got {keys}"
    assert labeled_count(page) == 0

    # ---- ten labels with the keyboard, each on the query shown ----------------------------
    given = {}
    for k in range(10):
        point, query = shown(page)
        assert point == query is not None
        name = names[k % 2]
        press(page, keys[name])
        wait_labeled(page, k + 1)
        wait_query_changed(page, query)
        given[query] = name
    assert labeled_count(page) == 10

    # ---- zoom survives a label (constant uirevision) ------------------------------------------
    box = _map_box(page)
    before = _axis_ranges(page)
    page.mouse.move(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.3)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5, steps=8)
    page.mouse.move(box["x"] + box["width"] * 0.7, box["y"] + box["height"] * 0.7, steps=8)
    page.mouse.up()
    page.wait_for_timeout(500)
    zoomed = _axis_ranges(page)
    assert zoomed != before, "the box drag did not zoom"
    point, query = shown(page)
    press(page, keys[names[0]])
    wait_labeled(page, 11)
    wait_query_changed(page, query)
    given[query] = names[0]
    page.wait_for_timeout(1500)  # the map re-renders after the panel
    after = _axis_ranges(page)
    assert after["x"] == pytest.approx(zoomed["x"]) and after["y"] == pytest.approx(zoomed["y"])
    page.mouse.dblclick(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.5)  # reset
    for _ in range(60):  # the reset has taken effect
        if _axis_ranges(page) != zoomed:
            break
        page.wait_for_timeout(500)
    wait_idle(page)
    page.wait_for_timeout(1000)  # a click right after a double-click is its trailing click, ignored
    n_given = len(given)

    # ---- click a point in the scatter: it is shown, then labelled out of turn -------------
    point, query = shown(page)
    target = next(i for i in range(0, 300, 7) if i not in given and i != query)
    x, y = plot_point_position(page, target)
    page.mouse.click(x, y)
    page.wait_for_function(
        "() => { const t = document.querySelector('.point-tag');"
        " return t && t.dataset.point !== t.dataset.query; }")
    chosen, query_now = shown(page)
    assert query_now == query and chosen not in given
    assert "Chosen point" in page.locator(".point-tag").first.inner_text()
    press(page, keys[names[0]])
    wait_labeled(page, n_given + 1)

    # ---- undo (key U) removes that label ----------------------------------------------------
    press(page, "u")
    wait_labeled(page, n_given)

    # ---- reload: nothing lost, on the page and in the SQLite file ---------------------------
    session_id = parse_qs(urlparse(page.url).query)["session"][0]
    page.reload()
    open_app(page, app_server.url if "session=" not in page.url else page.url)
    assert labeled_count(page) == n_given
    reopened = LabelingSession.open(app_server.store, session_id)
    assert reopened.labels == given
    assert set(reopened.history["source"]) == {"queried"}
    assert _net_labels_in_sqlite(app_server.store, session_id) == n_given

    # ---- export: download the CSV and check it ------------------------------------------------
    table = pd.read_csv(download_export_csv(page, tmp_path / "labels.csv"))
    assert len(table) == n_given
    ids = reopened.dataset.ids
    want = {str(ids[i]): name for i, name in given.items()}
    assert dict(zip(table["id"].astype(str), table["label"].astype(str))) == want
    assert set(table["source"]) == {"queried"}
    assert list(table["order"]) == list(range(1, n_given + 1))


HOSTILE = (
    '<div style="position:fixed;top:0;left:0;width:100%;height:100%;z-index:9999">owned</div>',
    '<img src=x onerror="window.__pwned=1">',
    "</script><script>window.__pwned=2</script>",
    "![t](http://127.0.0.1:9/t.png) [link](javascript:window.__pwned=3)",
)

_INJECTED = """() => {
    const found = [];
    if (window.__pwned !== undefined) found.push('script ran: ' + window.__pwned);
    for (const el of document.querySelectorAll('[style*="9999"]')) found.push('div ' + el.outerHTML.slice(0, 80));
    for (const el of document.querySelectorAll('img[src="x"], img[src*="127.0.0.1:9"]')) found.push('img ' + el.outerHTML);
    for (const el of document.querySelectorAll('a[href^="javascript"]')) found.push('link ' + el.outerHTML);
    for (const el of document.querySelectorAll('script')) {
        if ((el.textContent || '').includes('__pwned')) found.push('script element');
    }
    return found;
}"""


def test_hostile_class_names_and_ids_stay_text(tmp_path, page):
    import numpy as np

    from harness import AppServer

    rng = np.random.default_rng(0)
    n = 40
    frame = pd.DataFrame(rng.normal(size=(n, 2)), columns=["u", "v"])
    frame["label"] = [HOSTILE[i % 4] for i in range(n)]
    frame["name"] = [f"{HOSTILE[(i + 1) % 4]}#{i}" for i in range(n)]
    data = tmp_path / "<img src=x onerror=alert(1)>.csv"
    frame.to_csv(data, index=False)
    with AppServer(tmp_path / "store.sqlite", data=str(data), data_options={"id_col": "name"}) as server:
        open_app(page, server.url)
        page.wait_for_timeout(1000)  # let every element (and an onerror) settle
        assert page.evaluate(_INJECTED) == []
        text = page.inner_text("body")
        assert HOSTILE[1] in text and "Next query · point" in text  # shown as typed
        keys = class_keys(page)
        assert set(keys) == set(HOSTILE), keys  # the buttons read the names as written
        point, query = shown(page)
        press(page, keys[HOSTILE[0]])
        wait_labeled(page, 1)
        page.get_by_role("tab", name="Shortcuts").click()
        page.wait_for_timeout(1000)
        assert page.evaluate(_INJECTED) == []
        assert HOSTILE[0] in page.inner_text("body")
