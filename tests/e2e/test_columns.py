"""A table of texts opened through the app's data picker in a real browser: the guessed column
roles are shown before the session starts, and the point panel shows each point's text (data
never becomes markup)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from harness import (
    REPO,
    AppServer,
    class_keys,
    labeled_count,
    open_app,
    plot_point_position,
    press,
    shown,
    wait_labeled,
)

pytestmark = pytest.mark.e2e

HOSTILE = '<img src=x onerror="window.__pwned=1"> **loud** <script>window.__pwned=2</script>'
SHOTS = Path(__file__).resolve().parent / "screenshots"


def test_a_csv_of_texts_opens_through_the_picker_with_its_roles_shown(tmp_path, page):
    data = tmp_path / "data"
    data.mkdir()
    frame = pd.read_csv(REPO / "sample_data" / "sentences.csv")
    frame.loc[frame["id"] == 1, "text"] = HOSTILE
    frame.to_csv(data / "notes.csv", index=False)
    texts = dict(zip(frame.index, frame["text"]))

    with AppServer(tmp_path / "store.sqlite", data_options={"n": 300},
                   env={"LABELER_DATA_DIR": str(data)}) as server:
        open_app(page, server.url)  # the two-moons demo first
        sidebar = page.locator('[data-testid="stSidebar"]')
        sidebar.get_by_text("Open data").click()
        field = sidebar.get_by_role("textbox", name="File or image folder")
        field.fill("notes.csv")
        field.press("Enter")

        # ---- the guessed roles, before any session starts ----------------------------------
        box = page.locator(".st-key-columns_box")
        box.wait_for(timeout=60_000)
        assert "Columns of notes.csv" in box.inner_text() and "300 rows" in box.inner_text()

        def shown_value(key):
            return page.locator(f".st-key-{key} input[role=combobox]").input_value()

        assert shown_value("pick_role_id") == "id"
        assert shown_value("pick_role_label") == "label"
        assert shown_value("pick_role_text") == "text"
        source = page.locator(".st-key-pick_role_source input[type=radio]:checked")
        assert source.evaluate("e => e.closest('label').innerText").strip() == "text (TF-IDF)"
        assert "named like an id" in box.inner_text()
        SHOTS.mkdir(exist_ok=True)
        box.scroll_into_view_if_needed()
        box.screenshot(path=str(SHOTS / "columns_box.png"))

        # ---- open it: the session shows the texts --------------------------------------------
        sidebar.get_by_role("button", name="Open path").click()
        page.wait_for_function(
            "() => [...document.querySelectorAll('h3')].some(h => h.innerText.trim() === 'notes')",
            timeout=180_000)
        page.wait_for_selector(".point-text", timeout=60_000)
        point, query = shown(page)
        assert point == query is not None
        panel = page.locator(".point-text").first
        assert panel.get_attribute("data-point") == str(point)
        assert panel.inner_text().strip() == texts[point]
        assert f"point #{point} ({frame['id'][point]})" in page.inner_text("body")

        keys = class_keys(page)
        assert set(keys) == {"cooking", "football", "weather"}
        press(page, keys[frame["label"][point]])
        wait_labeled(page, 1)

        # the hostile text: in the map's tooltip and the panel as typed, nothing injected
        row = int(frame.index[frame["id"] == 1][0])
        x, y = plot_point_position(page, row)
        page.mouse.move(x, y)
        tip = page.locator(".hoverlayer .hovertext").first
        tip.wait_for(timeout=30_000)
        assert "<img src=x" in tip.text_content() and f"point {row}" in tip.text_content()
        page.mouse.click(x, y)
        page.wait_for_selector(f'.point-text[data-point="{row}"]', timeout=60_000)
        assert page.locator(".point-text").first.inner_text().strip() == HOSTILE
        page.wait_for_timeout(1000)  # let an injected element (there is none) run
        assert page.evaluate("() => window.__pwned === undefined")
        assert page.locator(".point-text img, .point-text script").count() == 0
        assert labeled_count(page) == 1
        page.screenshot(path=str(SHOTS / "text_session.png"), full_page=True)
