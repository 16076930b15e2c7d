"""Box and lasso selections on the pool map: which pool points they hold, and what the
selection panel shows about them (plain code, no Streamlit).

``st.plotly_chart(..., on_select="rerun", selection_mode=("points", "box", "lasso"))`` puts
the chart's selection in ``st.session_state["scatter"]`` as ``{"selection": {"points": [...],
"point_indices": [...], "box": [...], "lasso": [...]}}``. Streamlit's front end (its
``PlotlyChart`` element, reading plotly's ``plotly_selected`` event) writes one entry per shape
drawn (plotly keeps several when the user holds Shift):

* box: ``{"xref": "x", "yref": "y", "x": [x0, x1], "y": [y0, y1]}``;
* lasso: ``{"xref": "x", "yref": "y", "x": [x_1, ..., x_k], "y": [y_1, ..., y_k]}`` (the
  vertices of the outline plotly tested, in data coordinates, read back from its SVG path).

The points listed in ``points`` are only those DRAWN: every point on the small map, but on the
density map of a large pool (:mod:`labeler.ui.map_density`) only the labelled, query, skipped
and viewport points. So a box or lasso is applied to the 2-D layout of the WHOLE pool on the
server (:func:`core.polygon.points_in_polygon`, the rule plotly's own lasso follows: points on
the outline are inside); shapes drawn together select their union. Where every point is drawn
this is the same set as plotly's (``tests/test_area_selection.py``). Only an event whose
shapes carry no usable coordinates falls back to the drawn points of the pool trace (curve 0
of :func:`~labeler.ui.figures.scatter_figure`, whose point indices are pool indices).

A plain click has no box or lasso: it selects one point (the point panel shows it).
:func:`area_summary` is what the selection panel (:func:`labeler.ui.bulk_panels.render_area_panel`)
shows: counts by current label, the unlabelled points, their predicted classes and how many of
those predictions are confident.
"""

from __future__ import annotations

import numbers
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from core.polygon import points_in_box, points_in_polygon
from labeler.ui.map_points import POOL_TRACE

__all__ = ["AreaSelection", "AreaSummary", "CONFIDENT", "area_selection", "area_shapes",
           "area_summary", "selection_spread", "warm_up", "warm_up_in_background"]

#: A prediction at this calibrated confidence or above counts as confident in a selection.
CONFIDENT = 0.9


@dataclass(frozen=True, eq=False)
class AreaSelection:
    """Pool points inside the boxes and lassos drawn on the map.

    Attributes
    ----------
    how : {"box", "lasso"}
        "lasso" when any shape is a lasso.
    indices : ndarray of shape (k,) of int64
        Pool indices, ascending, each once (empty when the area holds no point).
    """

    how: str
    indices: np.ndarray


def _numbers(values) -> list[float] | None:
    if not isinstance(values, Sequence) or isinstance(values, (str, bytes)):
        return None
    if not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in values):
        return None
    out = [float(v) for v in values]
    return out if all(np.isfinite(out)) else None


def area_shapes(event) -> tuple[list, list] | None:
    """The boxes and lassos of a chart event, or None for a click or no selection.

    Parameters
    ----------
    event : mapping or None
        ``st.session_state["scatter"]`` (or its ``selection`` part).

    Returns
    -------
    (boxes, lassos) or None
        ``boxes``: list of ``((x0, x1), (y0, y1))``; ``lassos``: list of ndarray of shape
        (k, 2) (vertices). Shapes without usable coordinates are left out (both lists may
        then be empty: the event is still a box or lasso selection).
    """
    if not isinstance(event, Mapping):
        return None
    sel = event.get("selection", event)
    if not isinstance(sel, Mapping):
        return None
    raw_boxes, raw_lassos = sel.get("box") or [], sel.get("lasso") or []
    if not raw_boxes and not raw_lassos:
        return None
    boxes, lassos = [], []
    for shape in raw_boxes if isinstance(raw_boxes, Sequence) else ():
        if isinstance(shape, Mapping):
            x, y = _numbers(shape.get("x")), _numbers(shape.get("y"))
            if x is not None and y is not None and len(x) == len(y) == 2:
                boxes.append(((x[0], x[1]), (y[0], y[1])))
    for shape in raw_lassos if isinstance(raw_lassos, Sequence) else ():
        if isinstance(shape, Mapping):
            x, y = _numbers(shape.get("x")), _numbers(shape.get("y"))
            if x is not None and y is not None and len(x) == len(y) and len(x) > 0:
                lassos.append(np.column_stack([x, y]))
    return boxes, lassos


def _drawn_pool_points(sel, n_samples: int) -> np.ndarray:
    out = set()
    for point in sel.get("points") or ():
        if not isinstance(point, Mapping):
            continue
        curve = point.get("curve_number", point.get("curveNumber"))
        index = point.get("point_index", point.get("point_number", point.get("pointIndex")))
        if curve == POOL_TRACE and isinstance(index, int) and 0 <= index < n_samples:
            out.add(int(index))
    return np.array(sorted(out), dtype=np.int64)


def area_selection(event, layout) -> AreaSelection | None:
    """The box or lasso selection of a chart event over the whole pool, or None for a click
    or no selection.

    Parameters
    ----------
    event : mapping or None
        ``st.session_state["scatter"]`` (or its ``selection`` part).
    layout : array-like of shape (n_samples, 2)
        The pool's 2-D layout, in the map's data coordinates.

    Returns
    -------
    AreaSelection or None
    """
    shapes = area_shapes(event)
    if shapes is None:
        return None
    boxes, lassos = shapes
    sel = event.get("selection", event)
    how = "lasso" if sel.get("lasso") else "box"
    xy = np.asarray(layout, dtype=np.float64)
    if not boxes and not lassos:  # shapes without coordinates: the points plotly drew
        return AreaSelection(how, _drawn_pool_points(sel, xy.shape[0]))
    inside = np.zeros(xy.shape[0], dtype=bool)
    for x_range, y_range in boxes:
        inside |= points_in_box(xy, x_range, y_range)
    for vertices in lassos:
        inside |= points_in_polygon(xy, vertices)
    return AreaSelection(how, np.flatnonzero(inside).astype(np.int64))


def selection_spread(predicted_codes, confidence, n_classes: int) -> dict:
    """What a selection of unlabelled points holds: per class, how many the model predicts,
    how many of those confidently (>= :data:`CONFIDENT`), and how many labels as that class
    would go against a confident prediction of another class.

    Parameters
    ----------
    predicted_codes : ndarray of shape (k,), int (-1: no prediction)
    confidence : ndarray of shape (k,), calibrated
    n_classes : int

    Returns
    -------
    dict
        ``predicted``, ``confident``, ``against``: lists of n_classes ints.
    """
    pred = np.asarray(predicted_codes, dtype=np.int64)
    sure = np.asarray(confidence, dtype=float) >= CONFIDENT
    ok = (pred >= 0) & (pred < n_classes)
    predicted = np.bincount(pred[ok], minlength=n_classes)
    confident = np.bincount(pred[ok & sure], minlength=n_classes)
    total_confident = int(confident.sum())
    return {"predicted": [int(v) for v in predicted], "confident": [int(v) for v in confident],
            "against": [total_confident - int(confident[j]) for j in range(n_classes)]}


@dataclass(frozen=True, eq=False)
class AreaSummary:
    """What the selection panel shows about a selection.

    Attributes
    ----------
    indices : ndarray of shape (k,) of int64
        The selected pool points (indices out of range dropped).
    by_label : list of int
        Selected points per current label (class code order).
    unlabelled : ndarray of shape (u,) of int64
        The selected points without a label: those "Label N as <class>" labels.
    spread : dict
        :func:`selection_spread` of the unlabelled points (predicted, confident, against).
    """

    indices: np.ndarray
    by_label: list
    unlabelled: np.ndarray
    spread: dict


def area_summary(indices, label_codes, predicted_codes, confidence, n_classes: int) -> AreaSummary:
    """The selection panel's data for the pool points ``indices``, in O(k) for k points.

    Parameters
    ----------
    indices : array-like of shape (k,) of int
    label_codes, predicted_codes : ndarray of shape (n_samples,) of int
        Current label and predicted class of every pool point (-1: none).
    confidence : ndarray of shape (n_samples,)
        Calibrated confidence of every prediction.
    n_classes : int

    Returns
    -------
    AreaSummary
    """
    n = len(label_codes)
    idx = np.asarray(indices, dtype=np.int64).reshape(-1)
    idx = idx[(idx >= 0) & (idx < n)]
    codes = np.asarray(label_codes)[idx].astype(np.int64)
    labelled = (codes >= 0) & (codes < n_classes)
    by_label = np.bincount(codes[labelled], minlength=n_classes)
    free = idx[codes < 0]
    spread = selection_spread(np.asarray(predicted_codes)[free], np.asarray(confidence)[free], n_classes)
    return AreaSummary(indices=idx, by_label=[int(v) for v in by_label], unlabelled=free, spread=spread)


_warm_lock = threading.Lock()
_warm_started = False


def warm_up() -> None:
    """Load the compiled polygon test (numba's disk cache; compiled once per installation)
    so that the first lasso of a process does not wait for it (about a second)."""
    points_in_polygon(np.zeros((2, 2)), [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)])


def warm_up_in_background() -> None:
    """:func:`warm_up` in a daemon thread, once per process (later calls return at once)."""
    global _warm_started
    with _warm_lock:
        if _warm_started:
            return
        _warm_started = True
    threading.Thread(target=warm_up, name="lasso-warm-up", daemon=True).start()
