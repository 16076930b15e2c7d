"""The Suspects tab in a real browser: a wrong label is listed first and fixed with one press.

Runs the README's ``labeler`` command with a temporary store (two moons, 300 points), gives
eight labels with the keyboard -- the first deliberately wrong -- then opens the "Suspects"
tab, checks the wrong label is ranked first with the true class suggested, presses "Change to
..." and checks the store holds the corrected label (one action: Undo would revert it).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import numpy as np
import pytest
from harness import class_keys, open_app, press, shown, wait_labeled, wait_query_changed

pytestmark = pytest.mark.e2e


def test_suspects_tab_fixes_a_wrong_label(app_server, page):
    from labeler.session import LabelingSession

    open_app(page, app_server.url)
    keys = class_keys(page)
    names = list(keys)
    session_id = parse_qs(urlparse(page.url).query)["session"][0]
    with LabelingSession.open(app_server.store, session_id) as s:
        truth = np.asarray(s.dataset.y).astype(str)
    wrong_point = None
    for k in range(12):
        point, query = shown(page)
        right = truth[query]
        give = right
        if k == 10:  # one wrong label once the model knows the two moons
            give = next(c for c in names if c != right)
            wrong_point = query
        press(page, keys[give])
        wait_labeled(page, k + 1)
        wait_query_changed(page, query)

    page.get_by_role("tab", name="Suspects").click()
    tag = page.locator(".suspect-tag").first
    tag.wait_for(timeout=60_000)
    assert int(tag.get_attribute("data-point")) == wrong_point
    assert tag.get_attribute("data-suggested") == truth[wrong_point]
    page.get_by_role("button", name=f"Change to {truth[wrong_point]}").first.click()
    page.wait_for_function(
        """(p) => { const el = document.querySelector('.suspect-tag');
                    return !el || el.getAttribute('data-point') !== String(p); }""",
        arg=wrong_point, timeout=60_000)
    with LabelingSession.open(app_server.store, session_id) as s:
        assert s.labels[wrong_point] == truth[wrong_point] and len(s.labels) == 12
