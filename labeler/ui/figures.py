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
) -> go.Figure:
    """Map of the whole pool, coloured by label, prediction, confidence or expected risk.

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
            hovertemplate=hover, showlegend=False, text=hover_text,
            unselected=dict(marker=dict(opacity=0.85)), selected=dict(marker=dict(opacity=1.0)),
        )
    ]

    # --- trace 1: labelled points, class colour with a dark outline ------------------------
    labeled = np.flatnonzero(label_codes >= 0)
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
            hovertemplate="point %{customdata} (labelled)" + text_line + "<extra></extra>",
            text=None if hover_text is None else hover_text[labeled],
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
        Estimated risk R(f_L) after that event (ALGORITHMS §3); NaN entries are skipped.
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


def loo_curve_figure(lams: np.ndarray, errors: np.ndarray, chosen: float | None,
                     *, current: float | None = None, height: int = 260) -> go.Figure:
    """Leave-one-out error over the lambda grid, the chosen lambda marked (ALGORITHMS §1).

    Parameters
    ----------
    lams : ndarray of shape (n_grid,)
        Regularisation values (positive), drawn on a log axis.
    errors : ndarray of shape (n_grid,)
        LOO error at each lambda.
    chosen : float or None
        The lambda chosen by LOO, drawn as a vertical dashed line.
    current : float or None
        The lambda the learner uses now, drawn as a solid line when it differs from ``chosen``.
    """
    lams = np.asarray(lams, dtype=np.float64)
    errors = np.asarray(errors, dtype=np.float64)
    if lams.shape != errors.shape:
        raise ValueError(f"lams {lams.shape} and errors {errors.shape} must have the same shape.")
    fig = go.Figure(
        go.Scatter(x=lams, y=errors, mode="lines+markers", line=dict(color=CLASS_COLORS[2], width=2),
                   marker=dict(size=4), hovertemplate="λ=%{x:.3g}: LOO error %{y:.4g}<extra></extra>")
    )
    if chosen is not None and np.isfinite(chosen) and chosen > 0:
        fig.add_vline(x=float(chosen), line=dict(color=QUERY_COLOR, dash="dash", width=2),
                      annotation_text=f"LOO best λ = {chosen:.3g}", annotation_position="top")
    if (current is not None and np.isfinite(current) and current > 0
            and (chosen is None or not np.isclose(current, chosen))):
        fig.add_vline(x=float(current), line=dict(color="#444", width=1.5),
                      annotation_text=f"in use λ = {current:.3g}", annotation_position="bottom")
    _small_layout(fig, "λ", "LOO error", height)
    fig.update_xaxes(type="log")
    return fig


def confidence_histogram_figure(confidence: np.ndarray, *, n_bins: int = 20,
                                height: int = 260) -> go.Figure:
    """Histogram of the confidence of the unlabelled pool on [0, 1] (ALGORITHMS §2).

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
                            counts: np.ndarray, *, height: int = 260) -> go.Figure:
    """Accuracy of the LOO predictions of labelled points per confidence bin (seed Fig. 4-4).

    Parameters
    ----------
    lo, hi : ndarray of shape (n_bins,)
        Bin edges on the confidence axis.
    accuracy : ndarray of shape (n_bins,)
        Fraction of correct LOO predictions in each bin (NaN for an empty bin).
    counts : ndarray of shape (n_bins,)
        Number of labelled points in each bin, shown on hover and as bar labels.
    """
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    accuracy, counts = np.asarray(accuracy, float), np.asarray(counts)
    centers = 0.5 * (lo + hi)
    shown = np.where(counts > 0, accuracy, np.nan)  # empty bins: no bar (not a bar at 0)
    fig = go.Figure(
        go.Bar(x=centers, y=shown, width=(hi - lo) * 0.95, marker_color=CLASS_COLORS[2],
               text=[f"n={int(c)}" if c else "" for c in counts], textposition="outside",
               customdata=np.stack([lo, hi, counts], axis=1),
               hovertemplate="confidence %{customdata[0]:.2f}-%{customdata[1]:.2f}: accuracy "
                             "%{y:.2f} over %{customdata[2]} labels<extra></extra>")
    )
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", line=dict(color="#888", dash="dot"),
                             hoverinfo="skip", showlegend=False))
    _small_layout(fig, "confidence (LOO)", "accuracy", height)
    fig.update_xaxes(range=[0, 1])
    fig.update_yaxes(range=[0, 1.12])
    return fig


def _small_layout(fig: go.Figure, xtitle: str, ytitle: str, height: int) -> None:
    fig.update_layout(height=height, margin=dict(l=8, r=8, t=24, b=8), showlegend=False,
                      plot_bgcolor="#ffffff", bargap=0.05)
    fig.update_xaxes(title_text=xtitle, showgrid=True, gridcolor="#eef0f4", zeroline=False)
    fig.update_yaxes(title_text=ytitle, showgrid=True, gridcolor="#eef0f4", zeroline=False)
