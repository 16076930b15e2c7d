"""A penguins-like table with missing measurements opened through the picker in a real browser:
the Columns box counts the rows with missing values before "Open", offers to drop or fill
them, flags the year column with its reason, and drops the "none was chosen" note once the
label is chosen; the session opens with the choice stored."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from harness import AppServer, open_app
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from penguins_table import MISSING_ROWS, write_penguins_csv  # noqa: E402

pytestmark = pytest.mark.e2e


def test_penguins_with_missing_values_open_through_the_picker(tmp_path, page):
    data = tmp_path / "data"
    data.mkdir()
    frame = write_penguins_csv(data / "penguins.csv")

    with AppServer(tmp_path / "store.sqlite", data_options={"n": 300},
                   env={"LABELER_DATA_DIR": str(data)}) as server:
        open_app(page, server.url)
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Open data").click()
        field = sidebar.get_by_role("textbox", name="File or image folder")
        field.fill("penguins.csv")
        field.press("Enter")

        box = page.locator(".st-key-columns_box")
        box.wait_for(timeout=60_000)
        text = box.inner_text()
        assert f"{len(frame)} rows" in text
        # missing values counted before "Open", with the two choices
        missing = page.locator(".st-key-missing_box")
        missing.wait_for(timeout=30_000)
        assert f"{len(MISSING_ROWS)} of {len(frame)} rows" in missing.inner_text()
        assert "drop those rows" in missing.inner_text() and "fill with the column mean" in missing.inner_text()
        # the year column is flagged with its reason, not used; the label is not chosen yet
        for words in ("'year' is left out of the features", "Several columns could be the label"):
            page.wait_for_function(
                "w => document.querySelector('.st-key-columns_box').innerText.includes(w)", arg=words,
                timeout=30_000)

        # choose the label: the "none was chosen" note goes
        label = page.locator(".st-key-pick_role_label input[role=combobox]")
        for attempt in range(3):  # a rerun that redraws the sidebar closes the open list: open it again
            label.click()
            try:
                page.get_by_role("option", name="species", exact=True).click(timeout=15_000)
                break
            except PlaywrightTimeoutError:
                page.keyboard.press("Escape")
                if attempt == 2:
                    raise
        page.wait_for_function(
            "() => !document.querySelector('.st-key-columns_box').innerText.includes('Several columns could be the label')",
            timeout=30_000)
        assert label.input_value() == "species"

        # fill rather than drop
        missing.get_by_text("fill with the column mean").click()
        page.wait_for_timeout(500)

        sidebar.get_by_role("button", name="Open path").click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('h3')].some(h => h.innerText.trim() === 'penguins')",
            timeout=180_000)
        body = page.inner_text("body")
        assert "have a missing value in the features" not in body  # not refused after "Open"

    from labeler.session import LabelingSession

    store = tmp_path / "store.sqlite"
    infos = [i for i in LabelingSession.list_sessions(store) if "penguins" in str(i)]
    assert len(infos) == 1, infos
    session = LabelingSession.open(store, infos[0].id)
    try:
        options = session.config.dataset_options
        assert options["missing"] == "mean" and options["label_col"] == "species"
        assert "year" not in options["feature_cols"]
        assert session.dataset.X.shape[0] == len(frame)  # filled, not dropped
    finally:
        session.close()
