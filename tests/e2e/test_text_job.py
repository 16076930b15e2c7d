"""A whole labelling job on a CSV of texts in a real browser (issue: the workflow a real job needs).

A table with an ``id`` and a ``text`` column is opened through the app's data picker, whose
Columns box shows the guessed roles; six points are labelled, the oldest label is changed, a
class is renamed, the page is reloaded, and the CSV export (downloaded by the browser) holds
all of it: the file's ids, the changed label, the new class name and the texts.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pandas as pd
import pytest
from harness import (REPO, AppServer, class_keys, click_point, download_export_csv, open_app, press, shown,
                     wait_labeled, wait_query_changed)

pytestmark = pytest.mark.e2e

SHOTS = Path(__file__).resolve().parent / "screenshots"


def wait_text(page, selector: str, text: str, timeout=120_000):
    page.wait_for_function(
        """([sel, text]) => { const el = document.querySelector(sel);
                              return !!el && el.innerText.includes(text); }""",
        arg=[selector, text], timeout=timeout)


def test_open_a_text_csv_fix_a_label_rename_a_class_reload_and_export(tmp_path, page):
    from labeler.session import LabelingSession

    data = tmp_path / "data"
    data.mkdir()
    frame = pd.read_csv(REPO / "sample_data" / "sentences.csv")
    frame["id"] = [f"doc-{i:04d}" for i in range(len(frame))]  # string ids, not row numbers
    frame.to_csv(data / "notes.csv", index=False)
    store = tmp_path / "store.sqlite"

    with AppServer(store, data_options={"n": 300}, env={"LABELER_DATA_DIR": str(data)}) as server:
        open_app(page, server.url)
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Open data").click()
        field = sidebar.get_by_role("textbox", name="File or image folder")
        field.fill("notes.csv")
        field.press("Enter")

        # ---- the roles, shown before the session starts --------------------------------------
        box = page.locator(".st-key-columns_box")
        box.wait_for(timeout=120_000)
        for role, column in (("id", "id"), ("label", "label"), ("text", "text")):
            assert page.locator(f".st-key-pick_role_{role} input[role=combobox]").input_value() == column
        sidebar.get_by_role("button", name="Open path").click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('h3')].some(h => h.innerText.trim() === 'notes')",
            timeout=180_000)
        page.wait_for_selector(".point-text", timeout=120_000)
        session_id = parse_qs(urlparse(page.url).query)["session"][0]

        # ---- six labels from the keyboard (the file's true labels) ---------------------------
        keys = class_keys(page)
        given = {}
        for k in range(6):
            _, query = shown(page)
            true = str(frame["label"][query])
            press(page, keys[true])
            wait_labeled(page, k + 1)
            wait_query_changed(page, query)
            given[query] = true

        # ---- change the oldest label -----------------------------------------------------------
        old = next(iter(given))
        new_label = next(c for c in sorted(keys) if c != given[old])
        click_point(page, old, timeout=60_000)
        page.get_by_role("button", name=f"Change to {new_label}").click()
        wait_text(page, '[data-testid="stAlert"]', "is now labelled")
        given[old] = new_label

        # ---- rename the first class ------------------------------------------------------------
        first, renamed = sorted(keys)[0], "food & drink"
        sidebar.locator("summary", has_text="Classes").click()
        name_box = sidebar.locator(f".st-key-rename_to_{session_id} input")
        name_box.wait_for()
        name_box.fill(renamed)
        name_box.press("Enter")
        page.wait_for_timeout(500)
        sidebar.locator(".st-key-rename_class button").click()
        wait_text(page, ".counts", renamed)
        expect = {i: (renamed if lab == first else lab) for i, lab in given.items()}

        # ---- reload: the session, its texts and its labels are back ----------------------------
        page.reload()
        open_app(page, page.url)
        page.wait_for_selector(".point-text", timeout=120_000)
        wait_text(page, ".counts", renamed)
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "text_job.png"), full_page=True)

        # ---- export: the browser's download holds every change ---------------------------------
        path = download_export_csv(page, tmp_path / "labels.csv", timeout=120_000)

    table = pd.read_csv(path)
    want = {frame["id"][i]: lab for i, lab in expect.items()}
    assert dict(zip(table["id"], table["label"])) == want
    row = table.set_index("id").loc[frame["id"][old]]
    assert row["source"] == "chosen"
    assert row["text"] == frame["text"][old]
    with LabelingSession.open(store, session_id) as s:
        assert s.labels == expect and renamed in s.classes
