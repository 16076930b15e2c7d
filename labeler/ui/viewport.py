"""Tell the server which part of the pool map the user zoomed to (a tiny page component).

Why: ``st.plotly_chart`` reports selections, never zoom, yet the density map of a large pool
(:mod:`labeler.ui.map_density`) must draw the real points of the region the user looks at.
This ``st.components.v2`` component (inline JavaScript, no build step) listens to plotly's
``plotly_relayout`` on the pool map (the plot whose trace 0 is named "pool") and sends its
axis ranges as the component's ``viewport`` state, which reruns the page. Only relayouts that
touch the axes count (choosing the lasso or box tool is a relayout of ``dragmode`` alone: a
rerun then would redraw the map in zoom mode before the user drew). Ranges already sent
are not sent again (the zoom keeper of :mod:`labeler.ui.zoom` re-applies the same ranges to
each new map), so there is no rerun loop. It carries no user input into the page.
"""

from __future__ import annotations

import math

import streamlit as st

__all__ = ["VIEWPORT_JS", "map_viewport", "parse_viewport"]

VIEWPORT_JS = """
export default function (component) {
  const { setStateValue } = component;
  const V = window.__labelerViewport = window.__labelerViewport || {last: null};
  const isPool = (gd) => gd && gd.data && gd.data[0] && gd.data[0].name === "pool";
  const round = (v) => Number(Number(v).toPrecision(7));
  function send(gd) {
    const fl = gd._fullLayout;
    if (!fl || !fl.xaxis || !fl.yaxis) { return; }
    const [x0, x1] = fl.xaxis.range, [y0, y1] = fl.yaxis.range;
    const v = {x0: round(x0), x1: round(x1), y0: round(y0), y1: round(y1),
               key: String((gd.layout && gd.layout.meta) || "")};
    const text = JSON.stringify(v);
    if (text === V.last) { return; }
    V.last = text;
    setStateValue("viewport", v);
  }
  function attach(gd) {
    if (gd.__labelerViewport || typeof gd.on !== "function") { return; }
    gd.__labelerViewport = true;
    // only a change of the axes (zoom, pan, reset): picking the lasso or box tool is a
    // relayout too ({dragmode}), and a rerun for it would draw a new map in zoom mode again
    const axes = (ev) => Object.keys(ev || {}).some((k) => /^[xy]axis/.test(k));
    gd.on("plotly_relayout", (ev) => { if (axes(ev)) { requestAnimationFrame(() => send(gd)); } });
  }
  const scan = () => document.querySelectorAll(".js-plotly-plot").forEach(
    (gd) => { if (isPool(gd)) { attach(gd); } });
  const observer = new MutationObserver(() => requestAnimationFrame(scan));
  observer.observe(document.body, {childList: true, subtree: true});
  scan();
  return () => observer.disconnect();
}
"""

_component = None


def parse_viewport(value, view_key: str | None = None):
    """``(x0, x1, y0, y1)`` from the component's state, or None.

    None when there is no state yet, it is malformed or not finite, or it belongs to another
    map (``key`` differs from ``view_key``, e.g. after switching sessions).
    """
    if not isinstance(value, dict):
        return None
    if view_key is not None and str(value.get("key", "")) != str(view_key):
        return None
    try:
        box = tuple(float(value[k]) for k in ("x0", "x1", "y0", "y1"))
    except (KeyError, TypeError, ValueError):
        return None
    return box if all(math.isfinite(v) for v in box) else None


def map_viewport(view_key: str):
    """Mount the viewport reporter (once per page) and return the map's last reported axis
    ranges ``(x0, x1, y0, y1)``, or None before the user zoomed."""
    global _component
    if _component is None:
        _component = st.components.v2.component("labeler_map_viewport", js=VIEWPORT_JS)
    result = _component(key="map_viewport", on_viewport_change=lambda: None)
    return parse_viewport(getattr(result, "viewport", None), view_key)
