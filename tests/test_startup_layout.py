"""The new session's layout built with a progress bar (labeler/ui/startup.py)."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from labeler.ui.startup import build_layout, layout_seconds_estimate


class SlowSession:
    def __init__(self, seconds, result=None, error=None):
        self.config = SimpleNamespace(layout="umap")
        self.n_samples = 1234
        self.seconds, self.result, self.error = seconds, result, error

    @property
    def layout(self):
        time.sleep(self.seconds)
        if self.error is not None:
            raise self.error
        return self.result


class BlockedSession(SlowSession):
    """Its layout is there once the bar was updated three times (no timing assumption)."""

    def __init__(self, result):
        super().__init__(0.0, result)
        self.release = threading.Event()

    @property
    def layout(self):
        assert self.release.wait(60)
        return self.result


def test_slow_layout_moves_the_bar_and_returns_the_layout():
    Z = np.zeros((1234, 2))
    seen = []
    session = BlockedSession(Z)

    def progress(f, text):
        seen.append((f, text))
        if len(seen) >= 3:
            session.release.set()

    out = build_layout(session, quiet_s=0.05, poll_s=0.05, progress=progress)
    assert out is Z
    fractions = [f for f, _ in seen]
    assert len(seen) >= 3 and fractions == sorted(fractions) and fractions[-1] == 1.0
    assert all(0.0 <= f <= 0.95 for f in fractions[:-1])
    assert "UMAP layout of 1,234 points" in seen[0][1] and "kept with the session" in seen[0][1]


def test_fast_layout_shows_no_bar():
    seen = []
    Z = np.ones((3, 2))
    assert build_layout(SlowSession(0.0, Z), quiet_s=1.0, progress=lambda *a: seen.append(a)) is Z
    assert seen == []


def test_layout_error_reaches_the_caller():
    with pytest.raises(ImportError, match="umap-learn"):
        build_layout(SlowSession(0.2, error=ImportError("needs umap-learn")), quiet_s=0.01,
                     poll_s=0.05, progress=lambda *a: None)


def test_estimates():
    assert layout_seconds_estimate("umap", 100_000) > layout_seconds_estimate("umap", 10_000) > 10
    assert layout_seconds_estimate("pca", 10**6) == 1.0
