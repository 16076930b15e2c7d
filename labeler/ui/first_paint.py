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
computed yet), starts no background work (the lasso's warm-up, a slow layout), and asks the
map to report when it is drawn (:func:`drawn_token`, ``render_map(report_drawn=...)``). That
report reruns the page, which then draws the panels as every later run does: the same values,
computed later, not differently. Small pools (and ``LABELER_MAP_COMPONENT=0``) draw everything
in the first run, as before.
"""

from __future__ import annotations

from labeler.ui.map_component import map_drawn
from labeler.ui.map_density import uses_density

__all__ = ["PENDING", "drawn_token", "defers_slow_panels"]

#: What a panel left for after the map says meanwhile.
PENDING = "Computed once the map is on the page (a large pool): shown in a moment."


def drawn_token(session) -> str:
    """The token the map reports once drawn for ``session`` (its id)."""
    return f"first-map-{session.id}"


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
