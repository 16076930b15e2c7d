"""Box and lasso selections on the pool map: which points they hold (plain code, no Streamlit).

``st.plotly_chart(..., on_select="rerun", selection_mode=("points", "box", "lasso"))`` puts
the chart's selection in ``st.session_state["scatter"]`` as ``{"selection": {"points": [...],
"box": [...], "lasso": [...]}}``. A box or lasso selection lists every point inside it, of
every trace; the pool trace (curve 0 of :func:`~labeler.ui.figures.scatter_figure`) holds
every point once, so its point indices ARE the selected pool indices. A plain click has no box
or lasso: it selects one point (the point panel shows it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from labeler.ui.map_points import POOL_TRACE

__all__ = ["AreaSelection", "area_selection"]


@dataclass(frozen=True)
class AreaSelection:
    """Points inside a box or lasso drawn on the map.

    Attributes
    ----------
    how : {"box", "lasso"}
    indices : tuple of int
        Pool indices, ascending, each once (empty when the area holds no point).
    """

    how: str
    indices: tuple


def area_selection(event, n_samples: int) -> AreaSelection | None:
    """The box or lasso selection of a chart event, or None for a click or no selection.

    Parameters
    ----------
    event : mapping or None
        ``st.session_state["scatter"]`` (or its ``selection`` part).
    n_samples : int
        Indices outside ``[0, n_samples)`` (a stale event of another data set) are dropped.
    """
    if not isinstance(event, Mapping):
        return None
    sel = event.get("selection", event)
    if not isinstance(sel, Mapping):
        return None
    how = "lasso" if sel.get("lasso") else "box" if sel.get("box") else None
    if how is None:
        return None
    out = set()
    for point in sel.get("points") or ():
        if not isinstance(point, Mapping):
            continue
        curve = point.get("curve_number", point.get("curveNumber"))
        index = point.get("point_index", point.get("point_number", point.get("pointIndex")))
        if curve == POOL_TRACE and isinstance(index, int) and 0 <= index < n_samples:
            out.add(int(index))
    return AreaSelection(how, tuple(sorted(out)))
