"""The app with the in-place map (labeler/ui/map_component.py) under AppTest: the page gets the
whole figure once, then per label a delta that turns the figure it holds into the new map;
another colour mode is another map (the whole figure again)."""

from __future__ import annotations

import pytest

from labeler.ui.map_component import SYNC_KEY
from labeler.ui.map_delta import apply_delta, figure_delta
from test_app import class_button, point_tag, start


@pytest.fixture(autouse=True)
def _component(monkeypatch):
    monkeypatch.setenv("LABELER_MAP_COMPONENT", "1")


def test_labels_send_deltas_that_rebuild_the_map():
    at = start()
    sync = at.session_state[SYNC_KEY]
    assert sync.rev == 1 and sync.full_rev == 1 and sync.full_state is sync.state
    whole = sync.full_state
    for k in range(3):
        _, query = point_tag(at)
        class_button(at, k % 2).click().run()
        assert not at.exception
        sync = at.session_state[SYNC_KEY]
        assert sync.full_rev == 1 and sync.rev >= 2 + k  # no whole figure sent again
        state = sync.state
        assert apply_delta(whole, figure_delta(whole, state)) == state
        labelled = state["data"][1]
        assert labelled["name"] == "labelled" and query in _ints(labelled["customdata"])
    before = at.session_state[SYNC_KEY].rev
    at.button_group(key="color_mode").set_value("predicted").run()
    sync = at.session_state[SYNC_KEY]
    assert sync.full_rev == sync.rev > before  # another map: the whole figure


def _ints(spec) -> list[int]:
    import base64

    import numpy as np

    if isinstance(spec, dict):
        return np.frombuffer(base64.b64decode(spec["bdata"]), dtype=spec["dtype"]).tolist()
    return [int(v) for v in spec]
