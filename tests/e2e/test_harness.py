"""The browser tests' harness itself (no browser needed)."""

from __future__ import annotations

import pytest
from harness import AppServer


def test_a_server_that_does_not_answer_in_time_is_reported_with_its_log(tmp_path):
    # no server answers within a millisecond: the error names the wait and quotes the log
    # (which stop() has closed by then), not a "flush of closed file" from the harness
    with pytest.raises(RuntimeError, match="did not answer"):
        AppServer(tmp_path / "store.sqlite", data_options={"n": 50}, timeout=0.001)
