"""Fixtures of the browser tests: the app server (``labeler`` command) and a Chromium page."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from harness import AppServer, browser_page, chromium_path  # noqa: E402


def pytest_collection_modifyitems(config, items):
    if chromium_path() is not None:
        return
    reason = ("CHROMIUM IS MISSING: the browser tests did NOT run. Install Debian's chromium "
              "(apt-get install chromium, as scripts/test.sh does) or set LABELER_CHROMIUM.")
    warnings.warn(reason)
    sys.stderr.write(f"\n*** {reason} ***\n")
    for item in items:
        if "e2e" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture
def app_server(tmp_path):
    server = AppServer(tmp_path / "store.sqlite", data_options={"n": 300})
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def page():
    with browser_page() as p:
        yield p
