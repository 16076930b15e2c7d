"""The pool map as a page component that changes in place: after a label the browser gets
what changed, not the whole figure.

Why: ``st.plotly_chart`` derives its element from the figure, so every label (new colours, a
new query ring) mounted a NEW chart: the whole figure sent, parsed and drawn again in new
WebGL contexts, 1.4-2.8 s from key to map. Here the figure is still built by
:func:`labeler.ui.figures.scatter_figure` (every feature of the map unchanged: colour modes,
labelled markers, query ring, legend, skipped points, the density image above 50,000 points
and its viewport points), but the page receives it once per map (:class:`MapSync` ``base``:
session, layout, pool size, colour mode) and then only the leaves of the figure that changed
(:mod:`labeler.ui.map_delta`: colours as typed arrays, the labelled trace, the query's point,
the density image when its colours changed), applied with ``Plotly.react`` on the same plot.

How: an ``st.components.v2`` component (inline script ``map_component/map.js``, no build step)
with a fixed key, so its element and plot div stay the same across reruns; it draws in the
page itself (``isolate_styles=False``, no iframe), where the keyboard shortcuts, the zoom
reporter (:mod:`labeler.ui.viewport`) and the browser tests find the plot as before.
plotly.js is the copy the plotly package installs (``plotly/package_data/plotly.min.js``, MIT,
its licence in plotly's dist-info), loaded once per page from a URL Streamlit serves for a
``components.v1`` folder declared on that package directory: nothing is downloaded at run time.
Clicks, boxes and lassos come back as the component's ``selection`` state, copied to
``st.session_state["scatter"]`` in the shape ``st.plotly_chart`` gives (:func:`take_selection`),
so :func:`labeler.ui.state.sync_selection` reads them as before.

Why not a ``components.v1`` iframe: keys pressed while the map has the focus (after a click on
a point) would go to the iframe's document, not to the page whose buttons hold the labelling
shortcuts; the zoom reporter, the browser tests and the lasso helpers would not find the plot;
and the frame's height would need messages of its own. The v2 component draws in the page.

Where the time after a label went (docs/benchmarks.md §16): not to the browser's drawing
(``Plotly.react`` of a few small traces on the same plot, the density image unchanged in
"label" mode) but to the server between the point panel and the map: the query's explanation
drawn before the map, an O(n) look for tooltip texts, plotly's validation of the figure. So the
mechanism stays (deltas, ``Plotly.react``) and the map's message now leaves the server a few ms
after the point panel's: the figure is a plain dict (:func:`labeler.ui.figures.scatter_spec`)
turned into the page's state directly (:func:`~labeler.ui.map_delta.spec_state`), and the slow
parts of the page run after the map.

``LABELER_MAP_COMPONENT=0`` draws the map with ``st.plotly_chart`` as before (a switch kept
for comparison and as a fallback).
"""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st

from labeler.ui.map_delta import NEED_FULL, MapSync, next_message, spec_state

__all__ = ["COMPONENT_KEY", "SYNC_KEY", "uses_component", "preload_plotly", "plotly_js_folder", "take_selection",
           "drop_selection", "render_map"]

#: Key of the component (its state: "selection", "need_full").
COMPONENT_KEY = "pool_map"
#: Session-state key of the :class:`~labeler.ui.map_delta.MapSync` of this page.
SYNC_KEY = "pool_map_sync"
_SEQ_KEY = "pool_map_seq"
_JS = (Path(__file__).with_name("map_component") / "map.js").read_text(encoding="utf-8")
_ASSETS_NAME = "labeler_plotly_js"
_component = None
_assets = None


def uses_component() -> bool:
    """Whether the map is the in-place component (default) or ``st.plotly_chart``
    (``LABELER_MAP_COMPONENT=0``)."""
    raw = os.environ.get("LABELER_MAP_COMPONENT", "1").strip().lower()
    if raw in ("", "1", "true", "yes", "on"):
        return True
    if raw in ("0", "false", "no", "off"):
        return False
    raise ValueError(f"LABELER_MAP_COMPONENT={raw!r} is not understood; set it to 1 (the map "
                     "changes in place) or 0 (st.plotly_chart), or unset it.")


def plotly_js_folder() -> Path:
    """The folder of the installed plotly package that holds ``plotly.min.js``."""
    import plotly

    folder = Path(plotly.__file__).resolve().parent / "package_data"
    if not (folder / "plotly.min.js").is_file():
        raise FileNotFoundError(f"{folder / 'plotly.min.js'} is missing: reinstall plotly "
                                "(pip install --force-reinstall plotly), or set "
                                "LABELER_MAP_COMPONENT=0 to draw the map with st.plotly_chart.")
    return folder


def _plotly_url() -> str:
    """URL of plotly.min.js, relative to the page: Streamlit's route for a v1 component folder."""
    global _assets
    if _assets is None:
        import streamlit.components.v1 as v1

        _assets = v1.declare_component(_ASSETS_NAME, path=str(plotly_js_folder()))
    return f"./component/{_assets.name}/plotly.min.js"


#: Loads plotly.js into the page at once (see :func:`preload_plotly`), into the promise the
#: map's script (``map_component/map.js``) waits on: its loader, the same.
_PRELOAD_SCRIPT = """
<script>
(function () {
  const doc = window.parent && window.parent.document ? window.parent.document : document;
  const win = doc.defaultView || window;
  const G = win.__labelerMap = win.__labelerMap || { cache: {}, chain: Promise.resolve(), seq: 0, log: [] };
  if (G.plotly || G.preloading) { return; }
  G.preloading = true;
  const url = %s;
  function load() {
    if (G.plotly) { return; }  // the map's script started it already
    G.plotly = new Promise((resolve, reject) => {
      if (win.Plotly && win.Plotly.react) { resolve(win.Plotly); return; }
      const s = doc.createElement("script");
      s.src = url;
      s.onload = () => resolve(win.Plotly);
      s.onerror = () => { G.plotly = null; reject(new Error("could not load " + url)); };
      doc.head.appendChild(s);
    });
  }
  // running plotly.js holds the page's thread for a second or more: not before the query is
  // on the page, unless the page has waited that long for it already (a session being opened)
  const since = performance.now();
  const timer = setInterval(() => {
    if (doc.querySelector(".point-tag") || performance.now() - since > %d) { clearInterval(timer); load(); }
  }, 100);
})();
</script>
"""


#: The preload waits this long (ms) for the query on the page before loading plotly.js anyway.
PRELOAD_IDLE_MS = 1500


def preload_plotly() -> None:
    """Load plotly.js (3.5 MB: fetched, parsed, run) in the page before the map's message
    arrives: once the query is on the page (running plotly.js holds the page's thread for a
    second or more under load: the query is shown first), or after :data:`PRELOAD_IDLE_MS`
    without it (the server is opening the session: the page would idle). The map is then drawn
    as soon as its message is there (later calls are no-ops in the browser). Only for the
    in-place map (:func:`uses_component`)."""
    import json

    if uses_component():
        st.html(_PRELOAD_SCRIPT % (json.dumps(_plotly_url()), PRELOAD_IDLE_MS), unsafe_allow_javascript=True,
                width="content")


def take_selection() -> None:
    """Copy a NEW click, box or lasso of the component to ``st.session_state["scatter"]``
    (``{"selection": {"points", "box", "lasso"}, "seq"}``, the shape ``st.plotly_chart``
    gives), before :func:`labeler.ui.state.sync_selection` reads it. An event is copied once
    (its ``seq``, counted by the page); :func:`drop_selection` removes it after it was read, so
    "scatter" holds an event for one run only, as the chart's did."""
    value = st.session_state.get(COMPONENT_KEY)
    selection = value.get("selection") if hasattr(value, "get") else None
    if not isinstance(selection, dict):
        return
    seq = selection.get("seq")
    if seq is None or seq == st.session_state.get(_SEQ_KEY):
        return
    st.session_state[_SEQ_KEY] = seq
    st.session_state["scatter"] = {
        "selection": {k: selection.get(k) or [] for k in ("points", "box", "lasso")}, "seq": seq}


def drop_selection() -> None:
    """Forget the event :func:`take_selection` copied, once it was applied."""
    st.session_state.pop("scatter", None)
    st.session_state.pop("scatter_seen", None)


def render_map(spec: dict, base: str, height: int) -> dict:
    """Draw the map ``spec`` in the component: the whole figure the first time (or when
    asked), else the delta from what this page was sent last.

    Parameters
    ----------
    spec : dict
        The map as a plain figure dict (:func:`labeler.ui.figures.scatter_spec`, with
        ``compact_hover=True``: the pool's tooltips as compact arrays), turned into the page's
        figure state without plotly's validation (:func:`~labeler.ui.map_delta.spec_state`).
    base : str
        Key of the map: a change (another session, layout, pool size, colour mode) sends the
        whole figure.
    height : int
        Height of the map in pixels.

    Returns
    -------
    dict
        The message sent (``full``, ``rev``, and ``figure`` or ``delta``).
    """
    global _component
    if _component is None:
        _component = st.components.v2.component("labeler_pool_map", js=_JS, isolate_styles=False)
    sync = st.session_state.get(SYNC_KEY)
    if not isinstance(sync, MapSync):
        sync = st.session_state[SYNC_KEY] = MapSync()
    value = st.session_state.get(COMPONENT_KEY)
    need_full = value.get(NEED_FULL) if hasattr(value, "get") else None
    message = next_message(sync, base, spec_state(spec), need_full)
    _component(
        key=COMPONENT_KEY,
        data={"name": COMPONENT_KEY, "message": message, "plotly_url": _plotly_url(),
              "config": {"displaylogo": False, "scrollZoom": True, "responsive": True}},
        height=height,
        on_selection_change=lambda: None,
        on_need_full_change=lambda: None,
    )
    return message
