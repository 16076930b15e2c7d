"""The model a user can trust, in a real browser: the width and lambda in use (auto), the
stopping panel, why a point is asked for, and the confirmation a bulk accept of an uncertain
confidence bin asks for (with the wrong labels to expect)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from harness import class_keys, labeled_count, open_app, press, shown, wait_labeled, wait_query_changed

pytestmark = pytest.mark.e2e

SHOTS = Path(os.environ.get("LABELER_SCREENSHOTS", "/tmp"))


@pytest.fixture
def app_server(tmp_path):
    """The demo's moons with kernel RLS (``labeler app --model rls``): the panels of its width
    and lambda (the default model "auto" starts the two moons on the harmonic function)."""
    from harness import AppServer

    server = AppServer(tmp_path / "store.sqlite", data_options={"n": 300}, env={"LABELER_MODEL": '{"model": "rls"}'})
    try:
        yield server
    finally:
        server.stop()


def test_values_in_use_stopping_panel_and_bulk_accept_confirmation(app_server, page):
    from labeler.data import load_dataset

    truth = np.asarray(load_dataset("moons", seed=0, n=300).y).astype(str)  # the app's data set
    open_app(page, app_server.url)
    status = page.locator(".st-key-tuning_status")
    status.wait_for()
    text = status.inner_text()
    assert "In use: width" in text and "(auto)" in text and "λ 0.1 (auto)" in text, text

    # ---- twelve true labels with the keyboard ----------------------------------------------------
    keys = class_keys(page)
    for k in range(12):
        _, query = shown(page)
        press(page, keys[truth[query]])
        wait_labeled(page, k + 1)
        wait_query_changed(page, query)
    page.wait_for_timeout(500)
    text = page.locator(".st-key-tuning_status").inner_text()
    assert "(auto)" in text, text

    # ---- why this point ------------------------------------------------------------------------
    page.get_by_text("Why this point?").first.click()
    why = page.get_by_text("Auto strategy:").first  # the default strategy says which answered and why
    why.wait_for()

    # ---- the stopping panel (Progress tab, open first) --------------------------------------------
    panel = page.locator(".st-key-stopping_panel")
    panel.wait_for()
    words = panel.inner_text()
    assert "Keep going" in words and "LOO error of your 12 labels" in words, words
    page.locator(".js-plotly-plot").nth(2).wait_for()  # the LOO curves drew
    page.screenshot(path=str(SHOTS / "labeler-model-top.png"))
    panel.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    page.screenshot(path=str(SHOTS / "labeler-model-progress.png"))

    # ---- Confidence tab: the top bin asks before its points are accepted --------------------------
    page.get_by_role("tab", name="Confidence").click()
    slider = page.get_by_role("slider").first
    slider.wait_for()
    slider.focus()
    page.keyboard.press("End")  # the bin 0.9 - 1.0
    page.get_by_text("with confidence in [0.9, 1.0]").first.wait_for()
    page.wait_for_timeout(1000)  # the rerun that draws the bin's button
    ask = page.get_by_role("button", name="Accept the predicted class of all")
    ask.wait_for()
    label = ask.inner_text()
    n = int(label.split("all ")[1].split(" points")[0].replace(",", ""))
    assert n > 0 and "in this bin…" in label and "expand_more" in label, label  # a popover: asks first
    ask.click()
    warning = page.get_by_text("labels to be wrong").first
    warning.wait_for()
    said = warning.inner_text()
    assert f"of these {n:,} labels" in said and "95 % interval" in said, said
    page.screenshot(path=str(SHOTS / "labeler-model-confirm.png"))
    before = labeled_count(page)
    page.get_by_role("button", name=f"Accept all {n:,} anyway").click()
    wait_labeled(page, before + n)
