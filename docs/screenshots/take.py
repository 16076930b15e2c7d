"""Regenerate the screenshots in this folder from the real app (Chromium via Playwright).

Each shot starts the app with the ``labeler`` command on a temporary store, answers the
queries with the data set's true labels by keyboard, and captures the page.

Usage::

    python docs/screenshots/take.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "tests" / "e2e"))
sys.path.insert(0, str(HERE.parents[1]))

from harness import (AppServer, browser_page, class_keys, open_app, press, shown,  # noqa: E402
                     wait_labeled, wait_query_changed)


def answer_queries(page, server, n_labels: int) -> None:
    """Label ``n_labels`` queries with their true class, by keyboard."""
    from urllib.parse import parse_qs, urlparse

    from labeler.session import LabelingSession

    sid = parse_qs(urlparse(page.url).query)["session"][0]
    truth = LabelingSession.open(server.store, sid).dataset
    keys = class_keys(page)
    for k in range(n_labels):
        _, query = shown(page)
        name = str(truth.y[query])
        press(page, keys[name])
        wait_labeled(page, k + 1)
        wait_query_changed(page, query)


def shot(name: str, data: str | None, options: dict, n_labels: int, *, colour: str | None = None,
         tab: str | None = None, height: int = 1000, bin_index: int | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp, \
            AppServer(Path(tmp) / "store.sqlite", data_options=options, data=data) as server, \
            browser_page(viewport=(1440, height)) as page:
        open_app(page, server.url)
        answer_queries(page, server, n_labels)
        if colour:
            page.locator(".st-key-color_mode button", has_text=colour).first.click()
        if tab:
            page.get_by_role("tab", name=tab).click()
        if bin_index is not None:
            slider = page.get_by_role("slider")
            slider.focus()
            for _ in range(10):
                slider.press("ArrowLeft")
            for _ in range(bin_index):
                slider.press("ArrowRight")
        time.sleep(4)
        page.mouse.move(5, height - 5)
        page.screenshot(path=str(HERE / name))
        print("wrote", HERE / name)


def main() -> int:
    shot("main-moons.png", "moons-imbalanced", {}, 25, colour="predicted class")
    shot("main-digits.png", "digits", {}, 40)
    shot("confidence-digits.png", "digits", {}, 40, tab="Confidence", height=1900, bin_index=5)
    return 0


if __name__ == "__main__":
    sys.exit(main())
