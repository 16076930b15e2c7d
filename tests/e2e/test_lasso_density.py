"""A lasso or box drawn on the map selects every pool point inside it, also on the density map
of a large pool where those points are not drawn: drag around one cluster in Chromium, press
"Label N as <class>", find every point of the cluster labelled in the store (and nothing else).

The data: "spheres", 60 unit discs 6 apart (the layout is the data itself), so a lasso of
radius 2 around a disc's centre holds exactly that disc's points.

* ``test_lasso_and_box_on_a_density_map``: 6,000 points with the density threshold lowered to
  500 and the viewport limit to 400 (``LABELER_MAP_DENSITY_ABOVE``, ``LABELER_MAP_VIEWPORT_MAX``):
  the code path of 10^5 points at a size that starts in seconds (default suite);
* ``test_lasso_on_a_small_map_selects_what_plotly_selects``: 1,200 points, every one drawn:
  the server's set from the lasso's shape equals the points plotly itself reports as selected;
* ``test_lasso_a_cluster_of_100_000_points``: 100,020 points, the density map of the default
  threshold (marked slow: the session starts in tens of seconds).
"""

from __future__ import annotations

import numpy as np
import pytest
from harness import (AppServer, drag_through, map_to_page, map_tool, open_app, session_of_page, wait_idle,
                     wait_labeled)

pytestmark = pytest.mark.e2e

DISCS = 60


def _disc(session, j: int):
    """(centre, indices) of disc ``j``: the data draws each disc's points together."""
    per = session.n_samples // DISCS
    indices = np.arange(j * per, (j + 1) * per)
    return np.asarray(session.layout)[indices].mean(axis=0), indices


def _outline(centre, radius: float, how: str, k: int = 16):
    if how == "box":
        return [(centre[0] - radius, centre[1] - radius), (centre[0] + radius, centre[1] + radius)]
    t = np.linspace(0.0, 2.0 * np.pi, k + 1)  # closed: back to the start
    return [(centre[0] + radius * np.cos(a), centre[1] + radius * np.sin(a)) for a in t]


def _area_tag(page, timeout=120_000) -> tuple[int, int]:
    page.wait_for_selector(".area-tag", timeout=timeout)
    tag = page.locator(".area-tag").first
    return int(tag.get_attribute("data-count")), int(tag.get_attribute("data-unlabelled"))


def _select_and_label(page, server, j: int, how: str, expect_density: bool, labelled_before: int,
                      plotly_points: bool = False):
    """Draw around disc ``j``, check the panel's count, label it, check the store."""
    from labeler.session import LabelingSession

    sid = session_of_page(page)
    with LabelingSession.open(server.store, sid) as s:
        centre, disc = _disc(s, j)
        before = dict(s.labels)
        session_n = s.n_samples
    wait_idle(page)
    images, drawn_pool = page.evaluate("""() => { const gd = [...document.querySelectorAll('.js-plotly-plot')]
        .find(g => g.data && g.data[0] && g.data[0].name === 'pool');
        return [(gd.layout.images || []).length, (gd._fullData[0].x || []).length]; }""")
    assert images == (1 if expect_density else 0), "the map is not the kind this test is about"
    assert drawn_pool == (0 if expect_density else session_n), "pool points drawn unexpectedly"
    if plotly_points:  # what plotly itself reports as selected on the pool trace
        page.evaluate("""() => { const gd = [...document.querySelectorAll('.js-plotly-plot')]
                .find(g => g.data && g.data[0] && g.data[0].name === 'pool');
            window.__selected = null;
            gd.on('plotly_selected', (e) => { window.__selected = e ? e.points
                .filter(p => p.curveNumber === 0).map(p => p.pointIndex) : []; }); }""")
    map_tool(page, "Lasso Select" if how == "lasso" else "Box Select")
    drag_through(page, map_to_page(page, _outline(centre, 2.0, how)))
    count, free = _area_tag(page)
    expected_free = [int(i) for i in disc if int(i) not in before]
    assert (count, free) == (disc.size, len(expected_free))
    if plotly_points:
        drawn = page.evaluate("() => window.__selected")
        assert drawn is not None and sorted(drawn) == disc.tolist()
    page.locator(".st-key-area_0 button").first.click()
    wait_labeled(page, labelled_before + free, timeout=180_000)
    with LabelingSession.open(server.store, sid) as s:
        new = {i: lab for i, lab in s.labels.items() if i not in before}
        sources = dict(zip(s.history["index"], s.history["source"]))
    assert sorted(new) == expected_free, "not every point inside the lasso was labelled"
    assert len(set(new.values())) == 1 and {sources[i] for i in new} == {"selection"}
    return labelled_before + free


def test_lasso_and_box_on_a_density_map(tmp_path, page):
    env = {"LABELER_MAP_DENSITY_ABOVE": "500", "LABELER_MAP_VIEWPORT_MAX": "400"}
    with AppServer(tmp_path / "store.sqlite", data="spheres", data_options={"n": 6000}, env=env) as server:
        open_app(page, server.url)
        n = _select_and_label(page, server, 13, "lasso", expect_density=True, labelled_before=0)
        assert n == 100
        _select_and_label(page, server, 40, "box", expect_density=True, labelled_before=n)


def test_lasso_on_a_small_map_selects_what_plotly_selects(tmp_path, page):
    with AppServer(tmp_path / "store.sqlite", data="spheres", data_options={"n": 1200}) as server:
        open_app(page, server.url)
        _select_and_label(page, server, 13, "lasso", expect_density=False, labelled_before=0,
                          plotly_points=True)


@pytest.mark.slow
@pytest.mark.large
def test_lasso_a_cluster_of_100_000_points(tmp_path, page):
    with AppServer(tmp_path / "store.sqlite", data="spheres", data_options={"n": 100_020},
                   timeout=300) as server:
        open_app(page, server.url)
        n = _select_and_label(page, server, 13, "lasso", expect_density=True, labelled_before=0)
        assert n == 100_020 // DISCS
