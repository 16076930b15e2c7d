"""The Suspects tab in a real browser: a wrong label is listed first and fixed with one press.

Runs the README's ``labeler`` command with a temporary store (two moons, 300 points), gives
twelve right labels with the keyboard, then changes the label the model is surest of to the
wrong class (a click on the map, "Change to ..."), opens the "Suspects" tab, checks that label
is among the first two with the true class suggested, presses its "Change to ..." and checks
the store holds the corrected label.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from harness import class_keys, click_point, open_app, press, shown, wait_labeled, wait_query_changed

pytestmark = pytest.mark.e2e


def test_suspects_tab_fixes_a_wrong_label(app_server, page):
    from labeler.session import LabelingSession

    open_app(page, app_server.url)
    keys = class_keys(page)
    names = list(keys)
    session_id = parse_qs(urlparse(page.url).query)["session"][0]
    with LabelingSession.open(app_server.store, session_id) as s:
        truth = np.asarray(s.dataset.y).astype(str)
    for k in range(12):
        _, query = shown(page)
        press(page, keys[truth[query]])
        wait_labeled(page, k + 1)
        wait_query_changed(page, query)
    with LabelingSession.open(app_server.store, session_id) as s:
        j = int(s.suspects().iloc[-1]["index"])  # the label the model is surest of
    wrong = next(c for c in names if c != truth[j])
    click_point(page, j)
    page.get_by_role("button", name=f"Change to {wrong}").click()
    page.get_by_text("is now labelled").first.wait_for(timeout=60_000)

    page.get_by_role("tab", name="Suspects").click()
    page.locator(".suspect-tag").first.wait_for(timeout=60_000)
    tags = page.locator(".suspect-tag")
    top = [int(tags.nth(k).get_attribute("data-point")) for k in range(2)]
    assert j in top
    row = page.locator(f'.suspect-tag[data-point="{j}"]')
    assert row.get_attribute("data-suggested") == truth[j] and row.get_attribute("data-label") == wrong
    page.locator(f'[class*="st-key-suspect_change_{j}_"] button').first.click()
    for _ in range(120):  # the press reaches the store within a rerun
        with LabelingSession.open(app_server.store, session_id) as s:
            if s.labels[j] == truth[j]:
                break
        page.wait_for_timeout(500)
    with LabelingSession.open(app_server.store, session_id) as s:
        assert s.labels[j] == truth[j] and len(s.labels) == 12
