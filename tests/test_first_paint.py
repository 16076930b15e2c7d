"""A large pool's first page (labeler/ui/first_paint.py) under AppTest: the query and the map in
the first run, the query's explanation and the Progress tab saying they come once the map is
drawn; once the page reports the map drawn, the next run shows them as a page that never
deferred them does (the same stopping panel), and the map's query is the same throughout."""

from __future__ import annotations

import pytest

from labeler.ui.first_paint import PENDING, REPORTER_KEY, drawn_token
from test_app import point_tag, session_of, start


@pytest.fixture(autouse=True)
def _component(monkeypatch):
    monkeypatch.setenv("LABELER_MAP_COMPONENT", "1")


def _texts(at) -> str:
    return "\n".join([c.value for c in at.caption] + [m.value for m in at.markdown])


def test_small_pool_draws_every_panel_in_the_first_run():
    at = start()
    assert PENDING not in _texts(at)
    assert "Leave-one-out error" in _texts(at)


def test_large_pool_defers_the_slow_panels_until_the_map_is_drawn(monkeypatch):
    monkeypatch.setenv("LABELER_MAP_DENSITY_ABOVE", "50")  # the 120-point pool drawn as a large one
    at = start()
    texts = _texts(at)
    assert texts.count(PENDING) == 2  # the explanation and the Progress tab
    assert "Leave-one-out error" not in texts
    first = point_tag(at)
    session = session_of(at)
    # what the page's map component sends back once it has drawn the map
    at.session_state[REPORTER_KEY] = {"drawn": drawn_token(session)}
    at.run()
    assert not at.exception, at.exception
    texts = _texts(at)
    assert PENDING not in texts and "Leave-one-out error" in texts
    assert [i.value for i in at.info if "Keep going" in i.value]  # the stopping panel
    assert point_tag(at) == first  # the same query
    # a page that never deferred (small-pool threshold) shows the same panels
    monkeypatch.setenv("LABELER_MAP_DENSITY_ABOVE", "100000")
    again = start(session=session.id)
    assert point_tag(again) == first
    def panels(page):  # the stopping panel's verdict, the panels' notes, the charts' figures
        return ([c.value for c in page.caption if c.value.startswith(("Not available", "From the", "Width:"))]
                + [i.value for i in page.info] + [c.proto.spec for c in page.get("plotly_chart")])

    assert panels(again) == panels(at) and panels(at)
