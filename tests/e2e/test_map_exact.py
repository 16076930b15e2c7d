"""The map changed in place equals the map drawn whole (labeler/ui/map_component.py).

After several labels by keyboard, each of which reached the page as a delta, the browser's map
(every trace's points, colours, tooltips, symbols; the density image) is read and compared with
the map a fresh page of the same session draws from the whole figure (a reload: a new page
session, which gets the whole figure first). Any part of the map a delta forgot, or put wrong,
differs (a page that skipped the colours of its deltas fails here). How the page turns the
compact tooltips into strings is the same on both paths: tests/test_map_spec.py checks those
strings (``expand_hover``, which ``map.js`` mirrors) against plotly's own figure.

* ``test_map_after_labels_equals_whole_map``: 600 points, every one drawn, coloured by the
  predicted class (every label changes the pool's colours and tooltips) - quick;
* ``test_density_map_after_labels_equals_whole_map``: the density map (threshold lowered to
  300 points) in the colour modes whose image changes with each label - slow.
"""

from __future__ import annotations

import pytest
from harness import AppServer, class_keys, open_app, press, shown, wait_idle, wait_labeled

pytestmark = pytest.mark.e2e

_MAP = "document.querySelector('.labeler-map')"

#: The map as the page draws it: plotly's own trace and layout values (``_fullData``,
#: ``_fullLayout``: what the plot shows, whatever the page passed in), typed arrays as lists.
_DRAWN = f"""() => {{
    const gd = {_MAP};
    if (!gd || !gd._fullData) return null;
    const plain = (v) => (v === null || v === undefined) ? null
        : (ArrayBuffer.isView(v) || Array.isArray(v)) ? Array.from(v, plain)
        : (typeof v === 'object') ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, plain(v[k])]))
        : v;
    const pick = (o, keys) => Object.fromEntries(keys.map((k) => [k, plain(o ? o[k] : null)]));
    return {{
        rev: Number(gd.dataset.drawnRev), full: gd.dataset.full,
        traces: gd._fullData.map((t) => Object.assign(
            pick(t, ['type', 'name', 'visible', 'mode', 'x', 'y', 'customdata', 'text', 'hovertemplate',
                     'hoverinfo', 'showlegend']),
            {{marker: pick(t.marker, ['color', 'size', 'symbol', 'opacity', 'cmin', 'cmax', 'colorscale',
                                      'showscale', 'reversescale']),
              line: pick(t.marker && t.marker.line, ['color', 'width'])}})),
        images: (gd._fullLayout.images || []).map((im) => pick(im, ['source', 'x', 'y', 'sizex', 'sizey',
                                                                    'opacity', 'layer', 'visible'])),
        axes: [gd._fullLayout.xaxis.range.slice(), gd._fullLayout.yaxis.range.slice()],
        meta: gd._fullLayout.meta,
    }};
}}"""


def _drawn_map(page) -> dict:
    """The map once its last message is drawn."""
    page.wait_for_function(f"() => {{ const gd = {_MAP}; return gd && gd._fullData"
                           " && gd.dataset.drawnRev === gd.dataset.rev; }", timeout=60_000)
    return page.evaluate(_DRAWN)


def _choose_colour(page, mode_text: str) -> None:
    page.locator(f'.st-key-color_mode button:has-text("{mode_text}")').first.click()
    wait_idle(page)


def _labels_then_compare(page, server, mode_text: str | None, labels: int, expect_images: int):
    open_app(page, server.url)
    wait_idle(page)
    if mode_text is not None:
        _choose_colour(page, mode_text)
    keys = class_keys(page)
    names = sorted(keys)
    count = int(page.locator(".labeled-count").first.get_attribute("data-labeled"))
    deltas = 0
    for k in range(labels):
        _, query = shown(page)
        press(page, keys[names[k % len(names)]])
        count += 1
        wait_labeled(page, count)
        wait_idle(page)
        page.wait_for_function("(q) => { const t = document.querySelector('.point-tag');"
                               " return t && t.dataset.query !== String(q); }", arg=query)
        deltas += _drawn_map(page)["full"] == "0"
    after_deltas = _drawn_map(page)
    assert deltas >= labels - 1, "the labels did not reach the page as deltas: nothing was tested"
    assert len(after_deltas["images"]) == expect_images
    page.reload()  # a new page session: the whole figure of the same state
    page.wait_for_selector(".point-tag", timeout=120_000)
    wait_idle(page)
    whole = _drawn_map(page)
    assert whole["full"] == "1"
    assert int(page.locator(".labeled-count").first.get_attribute("data-labeled")) == count
    for key in ("traces", "images", "axes", "meta"):
        if key == "traces":
            assert len(after_deltas[key]) == len(whole[key])
            for i, (a, b) in enumerate(zip(after_deltas[key], whole[key])):
                assert a == b, f"trace {i} ({b['name']}) differs from the whole map's"
        else:
            assert after_deltas[key] == whole[key], f"the map's {key} differ from the whole map's"


def test_map_after_labels_equals_whole_map(tmp_path, page):
    with AppServer(tmp_path / "store.sqlite", data_options={"n": 600}) as server:
        _labels_then_compare(page, server, "predicted class", labels=5, expect_images=0)


@pytest.mark.slow
@pytest.mark.parametrize("mode_text", [None, "predicted class", "confidence"])
def test_density_map_after_labels_equals_whole_map(tmp_path, page, mode_text):
    env = {"LABELER_MAP_DENSITY_ABOVE": "300"}
    with AppServer(tmp_path / "store.sqlite", data_options={"n": 600}, env=env) as server:
        _labels_then_compare(page, server, mode_text, labels=4, expect_images=1)
