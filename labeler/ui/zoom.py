"""Keep the user's zoom of the pool map across reruns (a small script in the page).

Why a script: Streamlit 1.67 derives a chart's element id from its figure, so after every
label (new colours, new query ring) the map is a NEW chart element, mounted afresh; plotly's
``layout.uirevision`` only keeps zoom within one mounted plot, so alone it cannot help. The
script below remembers the axis ranges the user set on the map (box zoom, scroll, pan; a
double-click resets) and re-applies them to each new map of the same session (the figure's
``layout.meta`` holds the session id, see :func:`labeler.ui.figures.scatter_figure`). It runs
in the browser only and carries no user input.
"""

from __future__ import annotations

import streamlit as st

__all__ = ["ZOOM_SCRIPT", "keep_zoom"]

ZOOM_SCRIPT = """
<script>
(function () {
  if (window.__labelerZoom) { return; }
  const Z = window.__labelerZoom = {ranges: {}};
  const isPool = (gd) => gd && gd.data && gd.data[0] && gd.data[0].name === "pool";
  const keyOf = (gd) => String((gd.layout && gd.layout.meta) || "");
  function remember(gd, ev) {
    const key = keyOf(gd);
    if (ev["xaxis.autorange"] || ev["yaxis.autorange"]) { delete Z.ranges[key]; return; }
    const r = Object.assign({}, Z.ranges[key] || {});
    for (const ax of ["xaxis", "yaxis"]) {
      if (ev[ax + ".range[0]"] !== undefined && ev[ax + ".range[1]"] !== undefined) {
        r[ax + ".range"] = [ev[ax + ".range[0]"], ev[ax + ".range[1]"]];
      } else if (Array.isArray(ev[ax + ".range"])) {
        r[ax + ".range"] = ev[ax + ".range"].slice();
      }
    }
    if (Object.keys(r).length) { Z.ranges[key] = r; }
  }
  function attach(gd) {
    if (gd.__labelerZoom || !gd._fullLayout || typeof gd.on !== "function") { return false; }
    gd.__labelerZoom = true;
    const saved = Z.ranges[keyOf(gd)];
    if (saved && window.Plotly) { window.Plotly.relayout(gd, saved); }
    gd.on("plotly_relayout", (ev) => remember(gd, ev || {}));
    return true;
  }
  function scan() {
    document.querySelectorAll(".js-plotly-plot").forEach((gd) => { if (isPool(gd)) { attach(gd); } });
  }
  new MutationObserver(() => requestAnimationFrame(scan))
    .observe(document.body, {childList: true, subtree: true});
  scan();
})();
</script>
"""


def keep_zoom() -> None:
    """Install the zoom keeper in the page (once per page load; later calls are no-ops)."""
    st.html(ZOOM_SCRIPT, unsafe_allow_javascript=True, width="content")
