"""Labelling many points at once in a real browser: a lasso selection labelled as one action,
undone and drawn again as a box, a "More like this" grid, a batch of 5 queries, then a reload
(colour mode and open tab kept) and a CSV export with every label and its source.

Runs the README's ``labeler`` command with a temporary store and drives Debian's Chromium
(Playwright). Screenshots go to the test's temporary folder (``LABELER_SCREENSHOTS=DIR``
copies them there).
"""

from __future__ import annotations

import os
import shutil
from urllib.parse import parse_qs, urlparse

import pandas as pd
import pytest
from harness import (class_keys, download_export_csv, labeled_count, open_app, plot_point_position, press,
                     wait_labeled)

pytestmark = pytest.mark.e2e


def choose_unsure(page, via: str):
    """Pick the first class in every grid picker that starts on "not sure" (a guess below the
    confidence threshold is never preset): the grid tag lists them in ``data-unsure``."""
    tag = page.locator(f'.grid-tag[data-via="{via}"]').last
    version = tag.get_attribute("data-version")
    unsure = [int(i) for i in (tag.get_attribute("data-unsure") or "").split(",") if i]
    for i in unsure:
        box = page.locator(f".st-key-grid_{via}_{version}_{i}").last
        box.scroll_into_view_if_needed()
        box.click()
        page.get_by_role("option").first.click()
        page.wait_for_timeout(800)  # the grid is a fragment: it reruns with the pick
    return unsure


def shot(page, tmp_path, name):
    path = tmp_path / name
    page.screenshot(path=str(path), full_page=True)
    target = os.environ.get("LABELER_SCREENSHOTS")
    if target:
        os.makedirs(target, exist_ok=True)
        shutil.copy(path, target)
    return path


def plot_box(page):
    return page.evaluate(
        """() => { const gd = [...document.querySelectorAll('.js-plotly-plot')]
                     .find(g => g.data && g.data[0] && g.data[0].name === 'pool');
                   const r = gd.querySelector('.nsewdrag').getBoundingClientRect();
                   return [r.left, r.top, r.width, r.height]; }""")


def tool(page, title):
    """Press a button of the map's plotly toolbar (shown on hover)."""
    left, top, width, height = plot_box(page)
    page.mouse.move(left + width / 2, top + height / 2)
    button = page.locator(f'.modebar-btn[data-title="{title}"]').first
    button.wait_for(state="attached")
    button.click(force=True)


def drag(page, points):
    page.mouse.move(*points[0])
    page.mouse.down()
    for p in points[1:]:
        page.mouse.move(*p, steps=4)
    page.mouse.up()


def area_counts(page, timeout=60_000):
    page.wait_for_selector(".area-tag", timeout=timeout)
    tag = page.locator(".area-tag").first
    return int(tag.get_attribute("data-count")), int(tag.get_attribute("data-unlabelled"))


def unlabelled_point(page):
    """An unlabelled point near the middle of the map (from the figure itself)."""
    return page.evaluate(
        """() => { const gd = [...document.querySelectorAll('.js-plotly-plot')]
                     .find(g => g.data && g.data[0] && g.data[0].name === 'pool');
                   const labelled = new Set(Array.from(gd._fullData[1].customdata || []));
                   const x = gd._fullData[0].x, y = gd._fullData[0].y;
                   let mx = 0, my = 0; for (let i = 0; i < x.length; i++) { mx += x[i]; my += y[i]; }
                   mx /= x.length; my /= y.length;
                   let best = -1, bd = Infinity;
                   for (let i = 0; i < x.length; i++) {
                     if (labelled.has(i)) continue;
                     const d = (x[i] - mx) ** 2 + (y[i] - my) ** 2;
                     if (d < bd) { bd = d; best = i; } }
                   return best; }""")


def grid_points(page, via):
    sel = f'.grid-tag[data-via="{via}"]'
    page.wait_for_selector(sel, state="attached", timeout=120_000)
    return [int(i) for i in page.locator(sel).first.get_attribute("data-points").split(",")]


def test_lasso_box_more_like_this_batch_reload_and_export(app_server, page, tmp_path):
    from labeler.session import LabelingSession

    open_app(page, app_server.url)
    keys = class_keys(page)
    names = list(keys)
    for k in range(2):  # two labels by key first
        press(page, keys[names[k]])
        wait_labeled(page, k + 1)
    session_id = parse_qs(urlparse(page.url).query)["session"][0]

    # ---- lasso around a point in the middle of the map: one action ----------------------------
    centre = unlabelled_point(page)
    x, y = plot_point_position(page, centre)
    tool(page, "Lasso Select")
    r = 45
    drag(page, [(x - r, y - r), (x + r, y - r), (x + r, y + r), (x - r, y + r), (x - r, y - r + 2)])
    count, free = area_counts(page)
    assert count >= free >= 1
    shot(page, tmp_path, "bulk-lasso.png")
    page.get_by_role("button", name=f"Label {free} as {names[0]}").click()
    wait_labeled(page, 2 + free)
    page.get_by_text(f"Labelled {free} selected point").first.wait_for()
    with LabelingSession.open(app_server.store, session_id) as s:
        lassoed = [i for i, src in zip(s.history["index"], s.history["source"]) if src == "selection"]
    assert len(lassoed) == free and centre in lassoed

    # ---- undo it (one press undoes the whole selection), then draw it again as a box ------------
    press(page, "u")
    wait_labeled(page, 2)
    tool(page, "Box Select")
    drag(page, [(x - r, y - r), (x + r, y + r)])
    count2, free2 = area_counts(page)
    assert free2 >= 1
    page.get_by_role("button", name=f"Label {free2} as {names[0]}").click()
    wait_labeled(page, 2 + free2)
    n_now = 2 + free2

    # ---- "More like this" of the next query: a grid labelled in one go -------------------------
    tool(page, "Zoom")  # back to the map's usual drag mode
    page.locator('.st-key-step_buttons button:has-text("More like this")').first.click()
    similar = grid_points(page, "similar")
    assert len(similar) == 10
    page.locator(".grid-tag").first.scroll_into_view_if_needed()
    shot(page, tmp_path, "bulk-similar.png")
    similar_unsure = set(choose_unsure(page, "similar"))  # the others start on the model's guess
    page.get_by_role("button", name=f"Label these {len(similar)}").click()
    wait_labeled(page, n_now + len(similar))
    n_now += len(similar)

    # ---- a batch of 5 queries, labelled in one go --------------------------------------------
    page.get_by_role("tab", name="Batch").click()
    batch = grid_points(page, "batch")
    assert len(batch) == 5 and not set(batch) & set(similar)
    page.locator('.grid-tag[data-via="batch"]').first.scroll_into_view_if_needed()
    shot(page, tmp_path, "bulk-batch.png")
    choose_unsure(page, "batch")
    page.get_by_role("button", name="Label these 5").click()
    wait_labeled(page, n_now + 5)
    n_now += 5

    # ---- colour mode, then a reload: labels, colour mode and open tab are still there ------------
    # clicked at once, while the batch's rerun may still be going: the URL must follow anyway
    # (with the widget's own query-param binding the finishing run wrote the old URL back)
    page.locator('.st-key-color_mode button:has-text("predicted class")').first.click()
    page.wait_for_function("() => location.search.includes('color_mode=predicted')", timeout=120_000)
    page.reload()
    open_app(page, page.url)
    wait_labeled(page, n_now)
    assert labeled_count(page) == n_now
    assert page.get_by_role("tab", name="Batch").get_attribute("aria-selected") == "true"
    assert "color_mode=predicted" in page.url
    shot(page, tmp_path, "bulk-reload.png")

    # ---- export: every label, each with its source ---------------------------------------------
    table = pd.read_csv(download_export_csv(page, tmp_path / "labels.csv"))
    with LabelingSession.open(app_server.store, session_id) as s:
        ids = [str(i) for i in s.dataset.ids]
        assert len(table) == n_now == s.n_labeled
        source = dict(zip(table["id"].astype(str), table["source"]))
        boxed = [i for i, src in zip(s.history["index"], s.history["source"]) if src == "selection"]
    assert len(boxed) == free2
    assert {source[ids[i]] for i in boxed} == {"selection"}
    # a pick chosen by hand is "similar"; one left on the model's preset guess "similar_guess"
    assert all(source[ids[i]] == ("similar" if i in similar_unsure else "similar_guess") for i in similar)
    # a batch pick left on the model's preset guess is stored as "batch_guess" (the export finds
    # the labels the model guessed), one chosen by hand as "batch"
    assert {source[ids[i]] for i in batch} <= {"batch", "batch_guess"}
    expected = {"queried", "selection"} | {source[ids[i]] for i in similar} | {source[ids[i]] for i in batch}
    assert set(table["source"]) == expected
