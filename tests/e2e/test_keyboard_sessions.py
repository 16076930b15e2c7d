"""Ten labels in a row by keyboard, pressed as a person presses: a reaction time after the next
point is on the page, without waiting for anything else the page may still draw (issue: on a harmonic
session every second press landed on the previous point's buttons and was refused as stale).

The first press comes at once after the page appeared, and must be stored too. One session per
model the app offers: RLS (dense), RLS on a Nystrom factor, the harmonic function, LGC and Poisson
learning.
"""

from __future__ import annotations

import json

import pytest
from harness import AppServer, class_keys, focus_page, labeled_count, open_app, shown

pytestmark = pytest.mark.e2e

#: a quick person's reaction time, seconds (above the app's 0.15 s floor)
REACTION = 0.3

#: the new point is on the page and not greyed out: what a person waits for before pressing
_POINT_SHOWN = """(old) => { const t = document.querySelector('.point-tag');
    return t && t.dataset.query !== '' && t.dataset.query !== String(old)
           && !t.closest('[data-stale="true"]'); }"""


@pytest.mark.parametrize("model", [
    {}, {"posterior": "nystrom", "rank": 60}, {"model": "harmonic"}, {"model": "lgc"}, {"model": "poisson"}],
    ids=["rls", "nystrom", "harmonic", "lgc", "poisson"])
def test_ten_presses_in_a_row_store_ten_labels(tmp_path, page, model):
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    from labeler.session import LabelingSession

    env = {"LABELER_MODEL": json.dumps(model)} if model else None
    with AppServer(tmp_path / "store.sqlite", data_options={"n": 300}, env=env) as server:
        open_app(page, server.url)
        keys = list(class_keys(page).values())
        pressed = []
        for k in range(10):
            if k:
                # a person sees the new point before pressing: a press read sooner than a reaction
                # time after the point was sent is an early press (labeler.ui.actions.REACTION_SECONDS)
                page.wait_for_timeout(1000 * REACTION)
            point, query = shown(page)
            assert point == query is not None
            focus_page(page)
            page.keyboard.press(keys[k % len(keys)])
            pressed.append(query)
            try:
                page.wait_for_function(_POINT_SHOWN, arg=query, timeout=60_000)
            except PlaywrightTimeout:
                raise AssertionError(
                    f"press {k + 1} (key {keys[k % len(keys)]!r} on point {query}) was not "
                    f"answered within 60 s: the page shows {labeled_count(page)} labels, point/"
                    f"query {shown(page)}; alerts {page.locator('[data-testid=stAlert]').all_inner_texts()}"
                ) from None
        page.wait_for_selector('.labeled-count[data-labeled="10"]', timeout=60_000)
        alerts = " ".join(page.locator('[data-testid="stAlert"]').all_inner_texts())
        assert "was not applied" not in alerts
        assert labeled_count(page) == 10

        from urllib.parse import parse_qs, urlparse
        session_id = parse_qs(urlparse(page.url).query)["session"][0]
        stored = LabelingSession.open(server.store, session_id)
        try:
            assert list(stored.labels) == pressed
        finally:
            stored.close()
