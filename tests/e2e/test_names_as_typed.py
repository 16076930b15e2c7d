"""Names from the data with Markdown's marks in them (``feature_request``, ``a*b``) read on the
page exactly as typed: in the header's class counts, the file-labels note, the point panel's
heading and text. The escapes that keep Markdown from reading them must not show as
backslashes in an HTML block (``<div>...</div>``), where Markdown is not read at all."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from harness import AppServer, open_app, wait_idle

pytestmark = pytest.mark.e2e


def test_underscores_and_stars_in_names_show_without_backslashes(tmp_path, page):
    rng = np.random.default_rng(0)
    n = 60
    frame = pd.DataFrame(rng.normal(size=(n, 2)), columns=["u", "v"])
    frame["ticket_id"] = [f"T_{i}" for i in range(n)]
    frame["body"] = [f"see my_file number {i} *now*" for i in range(n)]
    frame["ticket_category"] = ["feature_request" if i % 2 else "a*b" for i in range(n)]
    frame.loc[::3, "ticket_category"] = ""  # partly filled: the header's file-labels note
    data = tmp_path / "tickets.csv"
    frame.to_csv(data, index=False)
    options = {"id_col": "ticket_id", "label_col": "ticket_category", "text_col": "body"}
    with AppServer(tmp_path / "store.sqlite", data=str(data), data_options=options,
                   timeout=300) as server:
        open_app(page, server.url)
        wait_idle(page)
        counts = page.locator(".counts").first.inner_text()
        assert "feature_request:" in counts and "a*b:" in counts, counts
        note = page.locator(".file-labels").first.inner_text()
        assert "'ticket_category'" in note, note
        heading = page.locator(".point-tag").first.inner_text()
        assert "(T_" in heading, heading
        text = page.locator(".point-text").first.inner_text()
        assert "my_file" in text and "*now*" in text, text
        body = page.inner_text("body")
        assert "\\_" not in body and "\\*" not in body, body[:2000]
