"""The first page of a large pool: the query and the map first, the slow panels right after.

Why (``benchmarks/startup_browser.py``, docs/benchmarks.md): on a reopened session of 10^6
points the session is open in about two seconds, but the page's first run then spent about three
more after the map's message on two panels the first query does not need: the query's
explanation ("Why this point?", a pass over the posterior's factor) and the Progress tab, open
first (the stopping signal's pool clusters: scikit-learn's import and a neighbour pass). On two
cores that work competed with the browser, which was loading plotly.js and drawing the map
meanwhile: the map appeared only once the run was over.

How: on the first run of a session in a tab, when the pool is drawn as a density map
(:func:`labeler.ui.map_density.uses_density`) by the in-place component
(:func:`labeler.ui.map_component.uses_component`), :func:`defers_slow_panels` is True: the page
draws the query and the map, shows :data:`PENDING` where those panels go (never a number not
computed yet), starts no background work (the lasso's warm-up, a slow layout), and mounts
:func:`report_map_drawn`, a tiny page component that watches the map and, once the map of this
run is drawn, sets its state ``drawn`` to :func:`drawn_token`. That reruns the page, which then
draws the panels as every later run does: the same values, computed later, not differently.
(A component of its own, not the map's: a state change of the map's component remounts its
plot, which would cancel a zoom box the user is drawing; the map itself gets an unchanged
figure, which its script does not redraw.) Small pools (and ``LABELER_MAP_COMPONENT=0``)
draw everything in the first run, as before.
"""

from __future__ import annotations

import streamlit as st

from labeler.ui.map_density import uses_density

__all__ = ["PENDING", "REPORTER_KEY", "drawn_token", "map_drawn", "defers_slow_panels", "report_map_drawn"]

#: Key of the reporter component (its state: "drawn").
REPORTER_KEY = "first_map_report"

#: The reporter: once the map (``.labeler-map``, labeler/ui/map_component/map.js) shows the
#: message of ``data.base`` drawn, the state "drawn" becomes ``data.token`` (once per token).
_REPORTER_JS = """
export default function (component) {
  const { data, setStateValue } = component;
  if (!data || !data.token) { return; }
  const R = window.__labelerFirstMap = window.__labelerFirstMap || { sent: null };
  const drawn = () => [...document.querySelectorAll(".labeler-map")].some(
    (gd) => gd.__labelerBase === data.base && gd.dataset.drawnRev && gd.dataset.drawnRev === gd.dataset.rev);
  let timer = null;
  const check = () => {
    if (R.sent === data.token) { clearInterval(timer); return; }
    if (drawn()) { R.sent = data.token; clearInterval(timer); setStateValue("drawn", data.token); }
  };
  timer = setInterval(check, 100);
  check();
  return () => clearInterval(timer);
}
"""
_reporter = None

#: What a panel left for after the map says meanwhile.
PENDING = "Computed once the map is on the page (a large pool): shown in a moment."


def drawn_token(session) -> str:
    """The token the map reports once drawn for ``session`` (its id)."""
    return f"first-map-{session.id}"


def map_drawn() -> str | None:
    """The last token the reporter sent (:func:`report_map_drawn`), or None."""
    value = st.session_state.get(REPORTER_KEY)
    drawn = value.get("drawn") if hasattr(value, "get") else None
    return None if drawn is None else str(drawn)


def report_map_drawn(session, base: str) -> None:
    """Mount the reporter: the page reruns once the map of key ``base`` (``render_map``'s) is
    drawn, with :func:`map_drawn` then :func:`drawn_token` of ``session``."""
    global _reporter
    if _reporter is None:
        _reporter = st.components.v2.component("labeler_first_map_report", js=_REPORTER_JS)
    _reporter(key=REPORTER_KEY, data={"token": drawn_token(session), "base": base},
              on_drawn_change=lambda: None)


def defers_slow_panels(session, n_samples: int, in_place: bool) -> bool:
    """Whether this run draws the query and the map only, leaving the slow panels to the rerun
    that follows the map's drawing (see the module's doc).

    Parameters
    ----------
    session : LabelingSession
    n_samples : int
        The pool's size.
    in_place : bool
        Whether the map is the in-place component (which reports its drawing).
    """
    return bool(in_place) and uses_density(n_samples) and map_drawn() != drawn_token(session)
