"""Plotly figures of the labelling app, as plain functions of arrays.

Nothing here touches Streamlit or the session: every function takes numpy arrays (or a
pandas DataFrame) and returns a ``plotly.graph_objects.Figure``, so the tests build and
inspect the figures directly. The pool map is :func:`scatter_figure`: every point drawn
(:mod:`labeler.ui.map_points`), or above :func:`~labeler.ui.map_density.density_above` points
a density image plus the points that matter (:mod:`labeler.ui.map_density`); both colour the
map with :mod:`labeler.ui.map_colors`. The rest are the learner panel's small charts.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from labeler.ui.map_colors import CLASS_COLORS, QUERY_COLOR
from labeler.ui.map_density import density_spec, uses_density
from labeler.ui.map_points import POOL_TRACE, points_spec
from labeler.ui.text import plot_text

__all__ = [
    "scatter_figure",
    "scatter_spec",
    "hover_texts",
    "point_index_from_selection",
    "risk_curve_figure",
    "loo_curve_figure",
    "confidence_histogram_figure",
    "accuracy_per_bin_figure",
]

#: Longest text (characters) shown in a map tooltip, and its line length.
HOVER_TEXT_CHARS, HOVER_LINE_CHARS = 90, 45


def hover_texts(texts, max_chars: int = HOVER_TEXT_CHARS, line: int = HOVER_LINE_CHARS) -> np.ndarray | None:
    """The points' texts for map tooltips: shortened, escaped, broken into short lines.

    Parameters
    ----------
    texts : array-like of shape (n_samples,) of str, or None
    max_chars : int
        Longer texts are cut there (at a word boundary when one is near) and end with "…".
    line : int
        Approximate line length (lines break at spaces).

    Returns
    -------
    ndarray of shape (n_samples,) of str (object), or None when ``texts`` is None
        Each a plotly-safe string (:func:`~labeler.ui.text.plot_text`: tags from the data are
        shown, never applied) whose only markup is the ``<br>`` this function puts in.
    """
    if texts is None:
        return None
    out = np.empty(len(texts), dtype=object)
    for i, raw in enumerate(texts):
        text = " ".join(str(raw).split())
        if len(text) > max_chars:
            cut = text.rfind(" ", max_chars - 20, max_chars)
            text = text[: cut if cut > 0 else max_chars] + "…"
        lines, current = [], ""
        for word in text.split(" "):
            if current and len(current) + 1 + len(word) > line:
                lines.append(current)
                current = word
            else:
                current = f"{current} {word}" if current else word
        lines.append(current)
        out[i] = "<br>".join(plot_text(part) for part in lines)
    return out


def scatter_figure(layout: np.ndarray, classes, **options) -> go.Figure:
    """:func:`scatter_spec` as a ``plotly.graph_objects.Figure`` (validated by plotly): what
    ``st.plotly_chart`` draws (``LABELER_MAP_COMPONENT=0``) and the tests read. Same
    parameters."""
    return go.Figure(scatter_spec(layout, classes, **options))


def scatter_spec(
    layout: np.ndarray,
    classes,
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
    viewport=None,
    density: bool | None = None,
    compact_hover: bool = False,
) -> dict:
    """Map of the whole pool, coloured by label, prediction, confidence or expected risk, as a
    plain figure dict (the in-place map turns it into the page's figure state without plotly's
    validation: :func:`labeler.ui.map_points.points_spec` says why).

    Up to :func:`labeler.ui.map_density.density_above` points (``density=None``) every point
    is drawn (:func:`labeler.ui.map_points.points_spec`); above, the map is
    :func:`labeler.ui.map_density.density_spec`: a density image of the pool plus the
    labelled, query, selected, skipped and viewport points, in the same trace order.

    Parameters
    ----------
    layout : ndarray of shape (n_samples, 2)
        2-D coordinates of every point.
    classes : sequence of str of length n_classes
        Class names; class code ``j`` is ``classes[j]``.
    color_mode : {"label", "predicted", "confidence", "expected_risk"}
        What colours the pool trace (see :data:`labeler.ui.map_colors.COLOR_MODES`).
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
        Each point's text for its tooltip, already made safe (:func:`hover_texts`).
    hover_predictions : bool
        Tooltips name the predicted class and its confidence (needs ``predicted_codes`` and
        ``confidence``), and on labelled points the label too. Costs a short string per point
        in the figure (sent as a list: plotly validates a list of strings in one pass, a numpy
        object array one element at a time).
    viewport : (x0, x1, y0, y1) or None
        Axis ranges the user zoomed to; only the density map uses it (draws the points there).
    density : bool or None
        Draw the density map (True), every point (False), or decide by pool size (None).
    compact_hover : bool
        With ``hover_predictions``, the map of every point gives its pool trace's tooltips as
        compact arrays (:func:`labeler.ui.map_points.points_spec`): the in-place map's form.

    Returns
    -------
    dict
        ``{"data": [trace, ...], "layout": {...}}``; traces in this order (curve numbers of selection events): 0 pool (all points; the
        point number is the pool index), 1 labelled points, 2 next query, 3 selected point,
        then one legend-only entry per class (at most
        :data:`~labeler.ui.map_points.LEGEND_MAX_CLASSES`), then, when there are unlabelled
        skipped points, their trace (named "skipped (not sure)"). Traces 1-3 and the skipped
        trace carry the pool index in ``customdata``. ``layout.uirevision`` and ``layout.meta``
        are ``view_key``. The density map's traces carry the pool index in ``customdata``
        on every trace.
    """
    xy = np.asarray(layout, dtype=np.float32)
    if xy.ndim != 2 or xy.shape[1] != 2:
        raise ValueError(f"layout must have shape (n_samples, 2); got {xy.shape}.")
    if density or (density is None and uses_density(xy.shape[0])):  # large pool: map_density.py
        return density_spec(
            layout, classes, color_mode=color_mode, label_codes=label_codes,
            predicted_codes=predicted_codes, confidence=confidence, expected_risk=expected_risk,
            query=query, selected=selected, skipped=skipped, view_key=view_key, height=height,
            hover_text=hover_text, hover_predictions=hover_predictions, viewport=viewport)
    return points_spec(
        layout, classes, color_mode=color_mode, label_codes=label_codes,
        predicted_codes=predicted_codes, confidence=confidence, expected_risk=expected_risk,
        query=query, selected=selected, skipped=skipped, view_key=view_key, height=height,
        hover_text=hover_text, hover_predictions=hover_predictions, compact_hover=compact_hover)


def point_index_from_selection(selection: Mapping | None) -> int | None:
    """Pool index of the clicked point in a ``st.plotly_chart`` selection event.

    Parameters
    ----------
    selection : mapping or None
        The chart's event state (``{"selection": {"points": [...]}}``) or its ``selection``
        part. Points of :func:`scatter_figure`'s pool trace (curve 0) are identified by their
        point index; the other traces carry the pool index in ``customdata``.

    Returns
    -------
    int or None
        The pool index of the last selected point, or None when nothing usable is selected
        (no points, a legend entry, a malformed event).
    """
    if not selection:
        return None
    if "selection" in selection:
        selection = selection["selection"]
    points = selection.get("points") if isinstance(selection, Mapping) else None
    if not points:
        return None
    point = points[-1]
    if not isinstance(point, Mapping):
        return None
    custom = point.get("customdata")
    if isinstance(custom, (list, tuple)):
        custom = custom[0] if custom else None
    if custom is not None:
        try:
            return int(custom)
        except (TypeError, ValueError):
            return None
    curve = point.get("curve_number", point.get("curveNumber"))
    index = point.get("point_index", point.get("point_number", point.get("pointIndex")))
    if curve == POOL_TRACE and index is not None:
        return int(index)
    return None


def risk_curve_figure(n_labeled: np.ndarray, risk: np.ndarray, *, height: int = 260) -> go.Figure:
    """Estimated risk of the current classifier after each label (eq. 3.49).

    Parameters
    ----------
    n_labeled : ndarray of shape (n_events,)
        Number of labelled points after each event.
    risk : ndarray of shape (n_events,)
        Estimated risk R(f_L) after that event (docs/algorithms.md §3); NaN entries are skipped.
    """
    n_labeled = np.asarray(n_labeled, dtype=np.float64)
    risk = np.asarray(risk, dtype=np.float64)
    keep = np.isfinite(risk) & np.isfinite(n_labeled)
    fig = go.Figure(
        go.Scatter(x=n_labeled[keep], y=risk[keep], mode="lines+markers",
                   line=dict(color=CLASS_COLORS[0], width=2), marker=dict(size=5),
                   hovertemplate="%{x} labels: risk %{y:.4g}<extra></extra>")
    )
    _small_layout(fig, "labels", "estimated risk", height)
    return fig


def loo_curve_figure(grid: np.ndarray, errors: np.ndarray, in_use: float | None, *,
                     chosen: float | None = None, name: str = "λ", auto: bool = False,
                     height: int = 240) -> go.Figure:
    """Leave-one-out classification error over the grid the tuner searches (docs/algorithms.md §1).

    The x axis is logarithmic over the grid itself (a little margin each side), the y axis
    the error rate on [0, max error] (never below 0, at most 1), and the value in use is a
    marked point on the curve, labelled "in use" (and "auto" when the tuner sets it). When
    the tuner would now choose another value (it re-tunes on a schedule), that value is a
    dashed line labelled "tuner's choice".

    Parameters
    ----------
    grid : ndarray of shape (k,)
        Values searched (positive), e.g. lams or RBF widths.
    errors : ndarray of shape (k,)
        Weighted LOO classification error at each value, in [0, 1].
    in_use : float or None
        The value the learner uses (on the grid: the tuner adds it).
    chosen : float, optional
        The tuner's choice now, drawn when it differs from ``in_use``.
    name : str
        Axis title ("λ", "width").
    auto : bool
        Whether the value is re-tuned automatically (said in the label).
    """
    grid = np.asarray(grid, dtype=np.float64)
    errors = np.asarray(errors, dtype=np.float64)
    if grid.shape != errors.shape:
        raise ValueError(f"grid {grid.shape} and errors {errors.shape} must have the same shape.")
    keep = np.isfinite(grid) & (grid > 0) & np.isfinite(errors)
    grid, errors = grid[keep], np.clip(errors[keep], 0.0, 1.0)
    fig = go.Figure(
        go.Scatter(x=grid, y=errors, mode="lines+markers", line=dict(color=CLASS_COLORS[2], width=2),
                   marker=dict(size=5), name="LOO error",
                   hovertemplate=f"{name}=%{{x:.3g}}: LOO error %{{y:.3f}}<extra></extra>")
    )
    label = "in use" + (" (auto)" if auto else "")
    if in_use is not None and np.isfinite(in_use) and in_use > 0 and grid.size:
        at = int(np.argmin(np.abs(np.log(grid) - np.log(in_use))))
        fig.add_trace(go.Scatter(
            x=[float(in_use)], y=[float(errors[at])], mode="markers+text", name=label,
            marker=dict(size=13, color=QUERY_COLOR, symbol="diamond", line=dict(color="#fff", width=1)),
            text=[f"{label}: {name} = {in_use:.3g}"], textposition="top center",
            hovertemplate=f"{label}: {name}=%{{x:.3g}}, LOO error %{{y:.3f}}<extra></extra>"))
    if (chosen is not None and np.isfinite(chosen) and chosen > 0
            and (in_use is None or not np.isclose(chosen, in_use, rtol=1e-9))):
        fig.add_vline(x=float(chosen), line=dict(color="#444", dash="dash", width=1.5),
                      annotation_text=f"tuner's choice {name} = {chosen:.3g}", annotation_position="bottom")
    _small_layout(fig, f"{name} (log scale)", "LOO error", height)
    if grid.size:
        lo, hi = float(grid.min()), float(grid.max())
        ticks = grid[:: max(1, int(np.ceil(grid.size / 6)))]  # at most 6 labelled grid values
        fig.update_xaxes(type="log", range=[np.log10(lo) - 0.15, np.log10(hi) + 0.15],
                         tickvals=ticks, ticktext=[f"{v:.2g}" for v in ticks])
    else:
        fig.update_xaxes(type="log")
    top = float(errors.max()) if errors.size else 0.0
    fig.update_yaxes(range=[0.0, min(1.0, max(0.1, 1.25 * top))], tickformat=".0%")
    return fig


def confidence_histogram_figure(confidence: np.ndarray, *, n_bins: int = 20,
                                height: int = 260) -> go.Figure:
    """Histogram of the confidence of the unlabelled pool on [0, 1] (docs/algorithms.md §2).

    Counts are computed here with ``numpy.histogram`` (equal bins on [0, 1]) and drawn as
    bars, so the figure carries ``n_bins`` numbers whatever the pool size.
    """
    confidence = np.asarray(confidence, dtype=np.float64)
    confidence = confidence[np.isfinite(confidence)]
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    counts, _ = np.histogram(np.clip(confidence, 0.0, 1.0), bins=edges)
    centers = 0.5 * (edges[:-1] + edges[1:])
    fig = go.Figure(
        go.Bar(x=centers, y=counts, width=np.diff(edges) * 0.95, marker_color=CLASS_COLORS[4],
               customdata=np.stack([edges[:-1], edges[1:]], axis=1),
               hovertemplate="confidence %{customdata[0]:.2f}-%{customdata[1]:.2f}: "
                             "%{y} points<extra></extra>")
    )
    _small_layout(fig, "confidence", "unlabelled points", height)
    fig.update_xaxes(range=[0, 1])
    return fig


def accuracy_per_bin_figure(lo: np.ndarray, hi: np.ndarray, accuracy: np.ndarray,
                            counts: np.ndarray, lower: np.ndarray | None = None,
                            upper: np.ndarray | None = None, *, height: int = 260) -> go.Figure:
    """Accuracy of the LOO predictions of labelled points per confidence bin (seed Fig. 4-4),
    with each bin's count and its confidence interval.

    Parameters
    ----------
    lo, hi : ndarray of shape (n_bins,)
        Bin edges on the confidence axis.
    accuracy : ndarray of shape (n_bins,)
        Fraction of correct LOO predictions in each bin (NaN for an empty bin).
    counts : ndarray of shape (n_bins,)
        Number of labelled points in each bin, written on each bar ("n=6") and on hover.
    lower, upper : ndarray of shape (n_bins,), optional
        Interval of each bin's accuracy (Wilson 95 %, :func:`core.confidence.wilson_interval`),
        drawn as error bars: 6 of 6 right reads "100 %, 61-100 %", not a sure 100 %.
    """
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    accuracy, counts = np.asarray(accuracy, float), np.asarray(counts)
    centers = 0.5 * (lo + hi)
    shown = np.where(counts > 0, accuracy, np.nan)  # empty bins: no bar (not a bar at 0)
    has_ci = lower is not None and upper is not None
    lower = np.asarray(lower, float) if has_ci else np.full(lo.shape, np.nan)
    upper = np.asarray(upper, float) if has_ci else np.full(lo.shape, np.nan)
    error_y = None
    if has_ci:
        error_y = dict(type="data", symmetric=False, array=np.where(counts > 0, upper - shown, np.nan),
                       arrayminus=np.where(counts > 0, shown - lower, np.nan), color="#333",
                       thickness=1.5, width=4)
    fig = go.Figure(
        go.Bar(x=centers, y=shown, width=(hi - lo) * 0.95, marker_color=CLASS_COLORS[2],
               text=[f"n={int(c)}" if c else "" for c in counts], textposition="inside",
               insidetextanchor="start", error_y=error_y,
               customdata=np.stack([lo, hi, counts, lower, upper], axis=1),
               hovertemplate="confidence %{customdata[0]:.2f}-%{customdata[1]:.2f}: accuracy "
                             "%{y:.0%} over %{customdata[2]} labels (95 % interval "
                             "%{customdata[3]:.0%}-%{customdata[4]:.0%})<extra></extra>")
    )
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(color="#888", dash="dot"),
                             hoverinfo="skip", showlegend=False))
    _small_layout(fig, "confidence (LOO)", "accuracy", height)
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(range=[0, 1.05], tickformat=".0%")
    return fig


def _small_layout(fig: go.Figure, xtitle: str, ytitle: str, height: int) -> None:
    fig.update_layout(height=height, margin=dict(l=8, r=8, t=24, b=8), showlegend=False,
                      plot_bgcolor="#ffffff", bargap=0.05)
    fig.update_xaxes(title_text=xtitle, showgrid=True, gridcolor="#eef0f4", zeroline=False)
    fig.update_yaxes(title_text=ytitle, showgrid=True, gridcolor="#eef0f4", zeroline=False)
