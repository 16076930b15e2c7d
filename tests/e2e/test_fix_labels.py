"""Fixing an old label and renaming a class in a real browser, then a reload that shows both.

Runs the README's ``labeler`` command with a temporary store and drives Debian's Chromium
(Playwright). A screenshot of the panel of the fixed point, after the reload, is written to
the test's temporary folder (``fix-labels.png``; ``LABELER_SCREENSHOTS=DIR`` copies it there).
"""

from __future__ import annotations

import os
import shutil
from urllib.parse import parse_qs, urlparse

import pytest
from harness import (
    class_keys,
    click_point,
    open_app,
    press,
    shown,
    wait_labeled,
    wait_query_changed,
)

pytestmark = pytest.mark.e2e


def header_counts(page) -> str:
    return page.locator(".counts").first.inner_text()


def wait_text(page, selector: str, text: str, timeout=60_000):
    page.wait_for_function(
        """([sel, text]) => { const el = document.querySelector(sel);
                              return !!el && el.innerText.includes(text); }""",
        arg=[selector, text], timeout=timeout)


def test_relabel_an_old_point_rename_a_class_and_reload(app_server, page, tmp_path):
    from labeler.session import LabelingSession

    open_app(page, app_server.url)
    keys = class_keys(page)
    names = list(keys)
    given = {}
    for k in range(6):
        point, query = shown(page)
        press(page, keys[names[k % 2]])
        wait_labeled(page, k + 1)
        wait_query_changed(page, query)
        given[query] = names[k % 2]
    session_id = parse_qs(urlparse(page.url).query)["session"][0]

    # ---- relabel the first (oldest) label: click it in the map, "Change to ..." ------------
    old = next(iter(given))
    was, new_label = given[old], next(c for c in names if c != given[old])
    click_point(page, old)
    panel = page.locator(".point-tag").first
    assert "Chosen point" in panel.inner_text()
    page.get_by_text(f"Already labelled {was}").wait_for()
    change = page.get_by_role("button", name=f"Change to {new_label}")
    change.wait_for()
    assert page.get_by_role("button", name="Unlabel").count() == 1
    change.click()
    wait_text(page, '[data-testid="stAlert"]', "is now labelled")
    wait_labeled(page, 6)  # a relabel, not a new label
    with LabelingSession.open(app_server.store, session_id) as s:
        assert s.labels[old] == new_label and len(s.labels) == 6

    # ---- rename a class in the sidebar's "Classes" expander --------------------------------
    renamed = "corrected class"
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.locator("summary", has_text="Classes").click()
    box = sidebar.locator(f".st-key-rename_to_{session_id} input")
    box.wait_for()
    # the class picker starts on the first class
    box.fill(renamed)
    box.press("Enter")
    page.wait_for_timeout(500)
    sidebar.locator(".st-key-rename_class button").click()
    wait_text(page, ".counts", renamed)
    expect = {i: (renamed if lab == names[0] else lab) for i, lab in {**given, old: new_label}.items()}

    # ---- reload: both are there, on the page and in the store ----------------------------------
    page.reload()
    open_app(page, page.url)
    counts = header_counts(page)
    n0 = sum(lab == renamed for lab in expect.values())
    assert f"· {renamed}: {n0}" in counts and counts.count(":") == 2, counts  # two classes
    click_point(page, old)
    page.get_by_text(f"Already labelled {expect[old]}").wait_for()
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.locator("summary", has_text="Classes").click()
    sidebar.locator(f".st-key-rename_to_{session_id} input").wait_for()
    page.wait_for_timeout(800)
    shot = tmp_path / "fix-labels.png"
    page.screenshot(path=str(shot), full_page=False)
    if os.environ.get("LABELER_SCREENSHOTS"):
        shutil.copy(shot, os.environ["LABELER_SCREENSHOTS"])
    with LabelingSession.open(app_server.store, session_id) as s:
        assert s.classes[0] == renamed and s.labels == expect
        assert s.history.set_index("index").loc[old, "source"] == "chosen"
