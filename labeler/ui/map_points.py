"""The pool map with every point drawn: one plotly ``Scattergl`` per role of a point.

:func:`points_figure` draws the pool (coloured by label, prediction, confidence or expected
risk: :mod:`labeler.ui.map_colors`), the labelled points, the next query, the selected point, a
legend and the skipped points, in a fixed trace order (curve numbers of selection events).
:func:`labeler.ui.figures.scatter_figure` calls it for pools up to
:func:`labeler.ui.map_density.density_above` points, and the density map
(:func:`labeler.ui.map_density.density_figure`) calls it on the few points it draws for real.

Speed rule: every per-point attribute is a NUMERIC numpy array (float32 coordinates, class
codes or scores as colours). Plotly serialises those as base64 typed arrays in one go; a list
of colour strings would be validated one element at a time, which costs seconds at 20k points.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from labeler.ui.map_colors import (CLASS_COLORS, COLOR_MODES, QUERY_COLOR, SELECTED_COLOR, SKIPPED_COLOR,
                                   UNLABELED_COLOR, VALUE_COLORSCALES, class_color, class_palette, discrete_colorscale,
                                   value_range)
from labeler.ui.map_delta import HOVER_KEY, hover_arrays
from labeler.ui.text import plot_text

__all__ = ["POOL_TRACE", "LABELED_TRACE", "QUERY_TRACE", "SELECTED_TRACE", "LEGEND_MAX_CLASSES",
           "points_figure", "points_spec"]

#: Class legend entries are drawn up to this many classes: one per distinct class colour
#: (digits' and MNIST's ten fit); beyond, colours repeat and only the page header, which lists
#: every class, tells them apart.
LEGEND_MAX_CLASSES = len(CLASS_COLORS)

#: Trace order of :func:`points_figure` (curve numbers in selection events).
POOL_TRACE, LABELED_TRACE, QUERY_TRACE, SELECTED_TRACE = 0, 1, 2, 3


def _marker_size(n: int) -> float:
    """Marker size of the pool trace: big for small pools, small for dense ones."""
    if n <= 500:
        return 8.0
    if n <= 3000:
        return 6.0
    if n <= 12000:
        return 4.5
    return 3.5


@lru_cache(maxsize=None)
def _named_colorscale(name: str) -> tuple:
    """A named plotly colour scale as its list of ``(position, colour)`` pairs, as plotly's
    validation turns the name into (a plain figure dict holds what the validated one would)."""
    from _plotly_utils.basevalidators import ColorscaleValidator

    return tuple(tuple(pair) for pair in ColorscaleValidator("colorscale", "marker").validate_coerce(name))


def _codes_or_unlabeled(codes: np.ndarray) -> np.ndarray:
    """Shift codes by one so that -1 (unlabelled / unknown) becomes band 0."""
    return np.asarray(codes, dtype=np.float32) + 1.0


def points_figure(layout: np.ndarray, classes: Sequence[str], **options) -> go.Figure:
    """:func:`points_spec` as a ``plotly.graph_objects.Figure`` (validated by plotly): the map
    ``st.plotly_chart`` draws, and what the tests read. Same parameters."""
    return go.Figure(points_spec(layout, classes, **options))


def points_spec(
    layout: np.ndarray,
    classes: Sequence[str],
    *,
    color_mode: str = "label",
    label_codes: np.ndarray,
    predicted_codes: np.ndarray | None = None,
    confidence: np.ndarray | None = None,
    expected_risk: np.ndarray | None = None,
    query: int | None = None,
    selected: int | None = None,
    skipped=None,
    view_key: str = "pool",
    height: int = 560,
    hover_text: np.ndarray | None = None,
    hover_predictions: bool = False,
    compact_hover: bool = False,
) -> dict:
    """Map of the pool with every point drawn, coloured by label, prediction, confidence or
    expected risk, as a plain figure dict (plotly's own keys; numpy arrays as they are).

    Plain data, not plotly objects: plotly's validation of a figure's objects cost 50-200 ms
    per map (a few hundred properties, whatever the pool size), on every label; the in-place
    map (:mod:`labeler.ui.map_component`) turns this dict into the page's figure state directly
    (:func:`labeler.ui.map_delta.spec_state`, equal to plotly's JSON of the same figure:
    tests/test_map_spec.py), and :func:`points_figure` validates it for ``st.plotly_chart``.

    Parameters
    ----------
    layout : ndarray of shape (n_samples, 2)
        2-D coordinates of every point.
    classes : sequence of str of length n_classes
        Class names; class code ``j`` is ``classes[j]``.
    color_mode : {"label", "predicted", "confidence", "expected_risk"}
        What colours the pool trace (see :data:`COLOR_MODES`).
    label_codes : ndarray of shape (n_samples,) of int
        Code of each point's current label, -1 where unlabelled.
    predicted_codes : ndarray of shape (n_samples,) of int, optional
        Code of the predicted class (needed for ``color_mode="predicted"``).
    confidence : ndarray of shape (n_samples,), optional
        Confidence in [0, 1] (needed for ``color_mode="confidence"``).
    expected_risk : ndarray of shape (n_samples,), optional
        Expected risk of querying each point (needed for ``color_mode="expected_risk"``);
        non-finite entries (labelled points) are drawn at the lowest colour.
    query : int or None
        Index of the next query, drawn as a big ring.
    selected : int or None
        Index of a point the user clicked, drawn as a big diamond.
    skipped : array-like of int, optional
        Points marked "not sure / skip for good"; the unlabelled ones are drawn with an x.
    view_key : str
        Names the view (e.g. the session id): ``layout.uirevision`` and ``layout.meta``.
        Zoom is kept while it stays the same (:mod:`labeler.ui.zoom`).
    height : int
        Figure height in pixels.
    hover_text : ndarray of shape (n_samples,) of str, optional
        Each point's text for its tooltip, already made safe
        (:func:`labeler.ui.figures.hover_texts`).
    hover_predictions : bool
        Tooltips name the predicted class and its confidence (needs ``predicted_codes`` and
        ``confidence``), and on labelled points the label too. Costs a short string per point
        in the figure (sent as a list: plotly validates a list of strings in one pass, a numpy
        object array one element at a time).
    compact_hover : bool
        With ``hover_predictions``: the pool trace's tooltips as compact arrays under
        :data:`~labeler.ui.map_delta.HOVER_KEY` (:func:`~labeler.ui.map_delta.hover_arrays`),
        not one string per point: the in-place map's form (the page builds the strings); not
        a plotly property, so not for :func:`points_figure`.

    Returns
    -------
    dict
        ``{"data": [trace, ...], "layout": {...}}``; traces in this order (curve numbers of selection events): 0 pool (all points; the
        point number is the pool index), 1 labelled points, 2 next query, 3 selected point,
        then one legend-only entry per class (at most :data:`LEGEND_MAX_CLASSES`), then, when
        there are unlabelled skipped points, their trace (named "skipped (not sure)"). Traces
        1-3 and the skipped trace carry the pool index in ``customdata``.
        ``layout.uirevision`` and ``layout.meta`` are ``view_key``.
    """
    xy = np.asarray(layout, dtype=np.float32)
    if xy.ndim != 2 or xy.shape[1] != 2:
        raise ValueError(f"layout must have shape (n_samples, 2); got {xy.shape}.")
    n = xy.shape[0]
    if color_mode not in COLOR_MODES:
        raise ValueError(f"color_mode {color_mode!r} is unknown; use one of {list(COLOR_MODES)}.")
    label_codes = np.asarray(label_codes)
    if label_codes.shape != (n,):
        raise ValueError(f"label_codes must have shape ({n},); got {label_codes.shape}.")
    k = max(len(classes), 1)
    palette = class_palette(k)
    size = _marker_size(n)
    if hover_text is not None:
        hover_text = np.asarray(hover_text, dtype=object)
        if hover_text.shape != (n,):
            raise ValueError(f"hover_text must have shape ({n},); got {hover_text.shape}.")
    text_line = "" if hover_text is None else "<br>%{text}"
    pool_text = hover_text
    labeled = np.flatnonzero(label_codes >= 0)
    labeled_text = None if hover_text is None else hover_text[labeled]
    labeled_hover = "point %{customdata} (labelled)" + text_line + "<extra></extra>"
    compact = None  # the pool's tooltips as arrays (compact_hover)
    if hover_predictions and predicted_codes is not None and confidence is not None:
        names = [plot_text(c) for c in classes] + ["?"]

        def predicted_texts(rows) -> list:
            """"<class> (<confidence>)" then the point's own text, of the points ``rows``."""
            pcodes = np.asarray(predicted_codes)[rows].tolist()
            conf = np.asarray(confidence, dtype=np.float64)[rows].tolist()
            pred = [f"{names[p]} ({c:.2f})" for p, c in zip(pcodes, conf)]
            if hover_text is None:
                return pred
            return [a + "<br>" + str(t) for a, t in zip(pred, hover_text[rows].tolist())]

        if compact_hover:
            compact = hover_arrays(names, predicted_codes, confidence,
                                   None if hover_text is None else [str(t) for t in hover_text.tolist()])
        pool_text = None if compact is not None else predicted_texts(slice(None))
        text_line = "<br>predicted (confidence): %{text}"
        labeled_text = [f"{names[label_codes[i]]}<br>predicted (confidence): {t}"
                        for i, t in zip(labeled.tolist(), predicted_texts(labeled))]
        labeled_hover = "point %{customdata} · label %{text}<extra></extra>"

    # --- trace 0: the pool, numeric colours only ------------------------------------------
    marker: dict = dict(size=size, opacity=0.85, line=dict(width=0))
    hover = "point %{pointNumber}" + text_line + "<extra></extra>"
    if color_mode in ("label", "predicted"):
        if color_mode == "label":
            codes = label_codes
        else:
            if predicted_codes is None:
                raise ValueError("color_mode='predicted' needs predicted_codes.")
            codes = np.asarray(predicted_codes)
        marker.update(
            color=_codes_or_unlabeled(codes),
            colorscale=discrete_colorscale([UNLABELED_COLOR, *palette]),
            cmin=-0.5,
            cmax=k + 0.5,
            showscale=False,
        )
    else:
        values = confidence if color_mode == "confidence" else expected_risk
        if values is None:
            raise ValueError(f"color_mode={color_mode!r} needs the {color_mode} array.")
        values = np.asarray(values, dtype=np.float64)
        lo, hi = value_range(values, color_mode)
        shown = np.where(np.isfinite(values), values, lo).astype(np.float32)
        colorscale, reverse = VALUE_COLORSCALES[color_mode]
        marker.update(
            color=shown,
            colorscale=_named_colorscale(colorscale),
            reversescale=reverse,
            cmin=lo,
            cmax=hi,
            showscale=True,
            colorbar=dict(title=dict(text=COLOR_MODES[color_mode], side="right"), thickness=12,
                          len=0.75, x=1.0, xpad=4),
        )
        hover = ("point %{pointNumber}<br>" + COLOR_MODES[color_mode] + " %{marker.color:.3g}"
                 + text_line + "<extra></extra>")
    traces = [
        dict(
            type="scattergl", x=xy[:, 0], y=xy[:, 1], mode="markers", marker=marker, name="pool",
            hovertemplate=hover, showlegend=False, text=pool_text,
            unselected=dict(marker=dict(opacity=0.85)), selected=dict(marker=dict(opacity=1.0)),
        )
    ]
    if compact is not None:
        traces[0][HOVER_KEY] = compact

    # --- trace 1: labelled points, class colour with a dark outline ------------------------
    traces.append(
        dict(
            type="scattergl", x=xy[labeled, 0], y=xy[labeled, 1], mode="markers", name="labelled",
            customdata=labeled.astype(np.int32),
            marker=dict(
                size=size + 4,
                color=label_codes[labeled].astype(np.float32),
                colorscale=discrete_colorscale(palette),
                cmin=-0.5, cmax=k - 0.5,
                line=dict(width=1.2, color="#1f2430"),
            ),
            hovertemplate=labeled_hover,
            text=labeled_text,
            showlegend=False,
            unselected=dict(marker=dict(opacity=1.0)),
        )
    )

    # --- traces 2, 3: next query and selected point ----------------------------------------
    def single(index, name, symbol, color, big):
        idx = np.array([] if index is None else [int(index)], dtype=np.int32)
        return dict(
            type="scattergl", x=xy[idx, 0], y=xy[idx, 1], mode="markers", name=name, customdata=idx,
            marker=dict(size=big, symbol=symbol, color=color, line=dict(width=3, color=color)),
            hovertemplate=f"{name}: point %{{customdata}}" + ("" if hover_text is None else "<br>%{text}")
            + "<extra></extra>",
            text=None if hover_text is None else hover_text[idx].tolist(),
            showlegend=index is not None,
            unselected=dict(marker=dict(opacity=1.0)),
        )

    traces.append(single(query, "next query", "circle-open", QUERY_COLOR, 22))
    shown_selected = None if selected is None or selected == query else selected
    traces.append(single(shown_selected, "selected", "diamond-open", SELECTED_COLOR, 20))

    # --- legend: one entry per class (no data, no effect on curve numbers 0-3) -------------
    if (color_mode in ("label", "predicted") or labeled.size) and len(classes) <= LEGEND_MAX_CLASSES:
        for j, name in enumerate(classes):
            traces.append(
                dict(type="scattergl", x=[None], y=[None], mode="markers", name=plot_text(name),
                     marker=dict(size=10, color=class_color(j)), hoverinfo="skip")
            )

    # --- last: skipped points that are not labelled, an x over their pool marker -------------
    shown_skipped = np.array(sorted(int(i) for i in (skipped if skipped is not None else ())
                                    if 0 <= int(i) < n and label_codes[int(i)] < 0), dtype=np.int32)
    if shown_skipped.size:
        traces.append(
            dict(
                type="scattergl", x=xy[shown_skipped, 0], y=xy[shown_skipped, 1], mode="markers",
                name="skipped (not sure)", customdata=shown_skipped,
                marker=dict(size=size + 5, symbol="x-thin-open", color=SKIPPED_COLOR,
                            line=dict(width=2, color=SKIPPED_COLOR)),
                hovertemplate="point %{customdata} (skipped: not sure)"
                              + ("" if hover_text is None else "<br>%{text}") + "<extra></extra>",
                text=None if hover_text is None else hover_text[shown_skipped].tolist(),
                unselected=dict(marker=dict(opacity=1.0)),
            )
        )

    layout_spec = dict(
        height=height,
        margin=dict(l=8, r=8, t=8, b=8),
        uirevision=str(view_key),  # constant per session: zoom kept within one mounted plot
        meta=str(view_key),  # read by the zoom keeper script (labeler/ui/zoom.py)
        plot_bgcolor="#ffffff",
        # under the plot: above it, the toolbar (shown while the mouse is on the map, and needed
        # for the lasso) covered the entries at the top right once there were ten classes
        legend=dict(orientation="h", yanchor="top", y=-0.02, xanchor="left", x=0.0,
                    bgcolor="rgba(255,255,255,0.7)"),
        clickmode="event+select",
        dragmode="zoom",
        hovermode="closest",
        xaxis=dict(showgrid=False, zeroline=False, showticklabels=False),
        yaxis=dict(showgrid=False, zeroline=False, showticklabels=False),
    )
    return {"data": traces, "layout": layout_spec}

