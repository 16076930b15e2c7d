"""Plotly figures of the labelling app, as plain functions of arrays.

Nothing here touches Streamlit or the session: every function takes numpy arrays (or a
pandas DataFrame) and returns a ``plotly.graph_objects.Figure``, so the tests build and
inspect the figures directly.

Speed rule: every per-point attribute is a NUMERIC numpy array (float32 coordinates, class
codes or scores as colours). Plotly serialises those as base64 typed arrays in one go; a list
of colour strings would be validated one element at a time, which costs seconds at 20k points.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from labeler.ui.map_density import density_figure, uses_density
from labeler.ui.text import plot_text

__all__ = [
    "CLASS_COLORS",
    "UNLABELED_COLOR",
    "COLOR_MODES",
    "class_color",
    "discrete_colorscale",
    "scatter_figure",
    "hover_texts",
    "point_index_from_selection",
    "risk_curve_figure",
    "loo_curve_figure",
    "confidence_histogram_figure",
    "accuracy_per_bin_figure",
]

# Okabe-Ito-like qualitative palette (colour-blind safe first eight), then Plotly's D3 tail.
CLASS_COLORS: tuple[str, ...] = (
    "#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000000",
    "#8c564b", "#7f7f7f", "#bcbd22", "#17becf", "#9467bd", "#ff9896", "#c5b0d5", "#98df8a",
)
UNLABELED_COLOR = "#c8ccd4"
QUERY_COLOR = "#e4002b"
SELECTED_COLOR = "#111111"
SKIPPED_COLOR = "#5b6170"

#: Colour modes of the pool map: key -> label shown in the app.
COLOR_MODES: dict[str, str] = {
    "label": "current label",
    "predicted": "predicted class",
    "confidence": "confidence",
    "expected_risk": "expected risk",
}

#: Class legend entries are drawn up to this many classes (the page header lists them all).
LEGEND_MAX_CLASSES = 6

# Trace order of :func:`scatter_figure` (curve numbers in selection events).
POOL_TRACE, LABELED_TRACE, QUERY_TRACE, SELECTED_TRACE = 0, 1, 2, 3


def class_color(code: int) -> str:
    """Colour of class number ``code`` (cycles through :data:`CLASS_COLORS`)."""
    return CLASS_COLORS[int(code) % len(CLASS_COLORS)]


def discrete_colorscale(colors: Sequence[str]) -> list[list]:
    """Step colour scale mapping integer codes ``0..k-1`` to ``colors``.

    Use with ``cmin=-0.5`` and ``cmax=k-0.5``: code ``j`` falls in the band
    ``[j/k, (j+1)/k]`` of the scale, which has the single colour ``colors[j]``.

    Parameters
    ----------
    colors : sequence of str of length k >= 1

    Returns
    -------
    list of [float, str]
        Plotly colour scale with two stops per band (hard edges).
    """
    k = len(colors)
    if k == 0:
        raise ValueError("discrete_colorscale needs at least one colour.")
    if k == 1:
        return [[0.0, colors[0]], [1.0, colors[0]]]
    scale = []
    for j, color in enumerate(colors):
        scale.append([j / k, color])
        scale.append([(j + 1) / k, color])
    return scale


def _marker_size(n: int) -> float:
    """Marker size of the pool trace: big for small pools, small for dense ones."""
    if n <= 500:
        return 8.0
    if n <= 3000:
        return 6.0
    if n <= 12000:
        return 4.5
    return 3.5


def _codes_or_unlabeled(codes: np.ndarray) -> np.ndarray:
    """Shift codes by one so that -1 (unlabelled / unknown) becomes band 0."""
    return np.asarray(codes, dtype=np.float32) + 1.0


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


def scatter_figure(
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
    viewport=None,
    density: bool | None = None,
) -> go.Figure:
    """Map of the whole pool, coloured by label, prediction, confidence or expected risk.

    Above :func:`labeler.ui.map_density.density_above` points (``density=None``) the map is
    :func:`labeler.ui.map_density.density_figure` instead: a density image of the pool plus
    the labelled, query, selected, skipped and viewport points, in the same trace order.

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

    Returns
    -------
    plotly.graph_objects.Figure
        Traces in this order (curve numbers of selection events): 0 pool (all points; the
        point number is the pool index), 1 labelled points, 2 next query, 3 selected point,
        then one legend-only entry per class (at most LEGEND_MAX_CLASSES), then, when there
        are unlabelled skipped points, their trace (named "skipped (not sure)"). Traces 1-3 and
        the skipped trace carry the pool index in ``customdata``. ``layout.uirevision`` and ``layout.meta`` are ``view_key``.
    """
    xy = np.asarray(layout, dtype=np.float32)
    if xy.ndim != 2 or xy.shape[1] != 2:
        raise ValueError(f"layout must have shape (n_samples, 2); got {xy.shape}.")
    n = xy.shape[0]
    if density or (density is None and uses_density(n)):  # large pool: labeler/ui/map_density.py
        return density_figure(
            layout, classes, color_mode=color_mode, label_codes=label_codes,
            predicted_codes=predicted_codes, confidence=confidence, expected_risk=expected_risk,
            query=query, selected=selected, skipped=skipped, view_key=view_key, height=height,
            hover_text=hover_text, hover_predictions=hover_predictions, viewport=viewport)
    if color_mode not in COLOR_MODES:
        raise ValueError(f"color_mode {color_mode!r} is unknown; use one of {list(COLOR_MODES)}.")
    label_codes = np.asarray(label_codes)
    if label_codes.shape != (n,):
        raise ValueError(f"label_codes must have shape ({n},); got {label_codes.shape}.")
    k = max(len(classes), 1)
    class_palette = [class_color(j) for j in range(k)]
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
    if hover_predictions and predicted_codes is not None and confidence is not None:
        names = [plot_text(c) for c in classes] + ["?"]
        pcodes = np.asarray(predicted_codes).tolist()
        conf = np.asarray(confidence, dtype=np.float64).tolist()
        pred = [f"{names[p]} ({c:.2f})" for p, c in zip(pcodes, conf)]
        extra = [""] * n if hover_text is None else ["<br>" + str(t) for t in hover_text.tolist()]
        pool_text = [a + b for a, b in zip(pred, extra)]
        text_line = "<br>predicted (confidence): %{text}"
        labeled_text = [f"{names[label_codes[i]]}<br>predicted (confidence): {pool_text[i]}"
                        for i in labeled.tolist()]
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
            colorscale=discrete_colorscale([UNLABELED_COLOR, *class_palette]),
            cmin=-0.5,
            cmax=k + 0.5,
            showscale=False,
        )
    else:
        values = confidence if color_mode == "confidence" else expected_risk
        if values is None:
            raise ValueError(f"color_mode={color_mode!r} needs the {color_mode} array.")
        values = np.asarray(values, dtype=np.float64)
        finite = np.isfinite(values)
        lo = float(values[finite].min()) if finite.any() else 0.0
        hi = float(values[finite].max()) if finite.any() else 1.0
        if color_mode == "confidence":
            lo, hi = 0.0, 1.0
        if hi <= lo:
            hi = lo + 1.0
        shown = np.where(finite, values, lo).astype(np.float32)
        marker.update(
            color=shown,
            colorscale="Viridis" if color_mode == "confidence" else "Magma",
            reversescale=color_mode == "expected_risk",
            cmin=lo,
            cmax=hi,
            showscale=True,
            colorbar=dict(title=dict(text=COLOR_MODES[color_mode], side="right"), thickness=12,
                          len=0.75, x=1.0, xpad=4),
        )
        hover = ("point %{pointNumber}<br>" + COLOR_MODES[color_mode] + " %{marker.color:.3g}"
                 + text_line + "<extra></extra>")
    traces = [
        go.Scattergl(
            x=xy[:, 0], y=xy[:, 1], mode="markers", marker=marker, name="pool",
            hovertemplate=hover, showlegend=False, text=pool_text,
            unselected=dict(marker=dict(opacity=0.85)), selected=dict(marker=dict(opacity=1.0)),
        )
    ]

    # --- trace 1: labelled points, class colour with a dark outline ------------------------
    traces.append(
        go.Scattergl(
            x=xy[labeled, 0], y=xy[labeled, 1], mode="markers", name="labelled",
            customdata=labeled.astype(np.int32),
            marker=dict(
                size=size + 4,
                color=label_codes[labeled].astype(np.float32),
                colorscale=discrete_colorscale(class_palette),
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
        return go.Scattergl(
            x=xy[idx, 0], y=xy[idx, 1], mode="markers", name=name, customdata=idx,
            marker=dict(size=big, symbol=symbol, color=color, line=dict(width=3, color=color)),
            hovertemplate=f"{name}: point %{{customdata}}<extra></extra>",
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
                go.Scattergl(x=[None], y=[None], mode="markers", name=plot_text(name),
                             marker=dict(size=10, color=class_color(j)), hoverinfo="skip")
            )

    # --- last: skipped points that are not labelled, an x over their pool marker -------------
    shown_skipped = np.array(sorted(int(i) for i in (skipped if skipped is not None else ())
                                    if 0 <= int(i) < n and label_codes[int(i)] < 0), dtype=np.int32)
    if shown_skipped.size:
        traces.append(
            go.Scattergl(
                x=xy[shown_skipped, 0], y=xy[shown_skipped, 1], mode="markers",
                name="skipped (not sure)", customdata=shown_skipped,
                marker=dict(size=size + 5, symbol="x-thin-open", color=SKIPPED_COLOR,
                            line=dict(width=2, color=SKIPPED_COLOR)),
                hovertemplate="point %{customdata} (skipped: not sure)<extra></extra>",
                unselected=dict(marker=dict(opacity=1.0)),
            )
        )

    fig = go.Figure(traces)
    fig.update_layout(
        height=height,
        margin=dict(l=8, r=8, t=8, b=8),
        uirevision=str(view_key),  # constant per session: zoom kept within one mounted plot
        meta=str(view_key),  # read by the zoom keeper script (labeler/ui/zoom.py)
        plot_bgcolor="#ffffff",
        legend=dict(orientation="h", yanchor="bottom", y=1.0, xanchor="left", x=0.0,
                    bgcolor="rgba(255,255,255,0.7)"),
        clickmode="event+select",
        dragmode="zoom",
        hovermode="closest",
    )
    fig.update_xaxes(showgrid=False, zeroline=False, showticklabels=False)
    fig.update_yaxes(showgrid=False, zeroline=False, showticklabels=False)
    return fig


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
