"""The pool map's legend in Chromium: on digits (ten classes) every class has an entry, and the
map's toolbar, shown while the mouse is on the map (its lasso and box are how many points are
labelled at once), covers none of them (it covered "2" and "3" when the legend sat above the
plot)."""

from __future__ import annotations

import pytest
from harness import _POOL_MAP, AppServer, open_app, wait_idle

pytestmark = pytest.mark.e2e


def _overlap(a, b) -> bool:
    return a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"] and \
        a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"]


def test_ten_classes_in_the_legend_and_the_toolbar_covers_none(tmp_path, page):
    with AppServer(tmp_path / "store.sqlite", data="digits", data_options={"n": 400}) as server:
        open_app(page, server.url)
        wait_idle(page)
        box = page.evaluate(f"""() => {{ const r = ({_POOL_MAP}).querySelector('.nsewdrag')
                                                     .getBoundingClientRect();
                                        return [r.left, r.top, r.width, r.height]; }}""")
        page.mouse.move(box[0] + 5, box[1] + box[3] - 5)  # on the map: its toolbar shows
        page.wait_for_function("() => { const m = document.querySelector('.modebar');"
                               " return m && getComputedStyle(m.parentElement).opacity !== '0'"
                               " && m.getBoundingClientRect().width > 0; }", timeout=10_000)
        toolbar = page.locator(".modebar").first.bounding_box()
        entries = page.evaluate(f"""() => [...({_POOL_MAP}).querySelectorAll('.legend .traces')]
            .map(t => {{ const r = t.getBoundingClientRect();
                        return {{name: t.textContent.trim(), x: r.left, y: r.top, width: r.width,
                                height: r.height}}; }})""")
        assert [e["name"] for e in entries] == ["next query"] + [str(d) for d in range(10)]
        covered = [e["name"] for e in entries if _overlap(e, toolbar)]
        assert not covered, f"the map's toolbar covers the legend entries {covered}"
