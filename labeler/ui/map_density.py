"""The pool map of a large pool: a density image of every point plus the few real points that
matter (labelled, next query, selected, skipped, and those in the current viewport).

Why: a plotly ``Scattergl`` of the whole pool sends 3 numbers per point to the browser and
re-sends them on every rerun (each label): about 1.8 MB of figure JSON at 10^5 points and 18 MB
at 10^6, which the browser must parse and upload to WebGL each time (measured:
``benchmarks/map_scale.py``). Above :data:`DENSITY_ABOVE` points the map is instead

- one PNG image (:data:`GRID` x :data:`GRID` bins of the layout's bounding box, a 2-D
  histogram computed with numpy in O(n)) drawn as a ``layout.images`` entry in data
  coordinates under the traces, each bin coloured like the points it holds (the mix of their
  class colours, or their mean confidence / expected risk) and as opaque as it is dense
  (log scale);
- real, clickable points for the labelled set, the next query (always drawn, ringed), the
  selected and skipped points, and every point of the current viewport when it holds at most
  :data:`VIEWPORT_MAX_POINTS` (zoom in -> real points to click).

The payload is bounded whatever n: one image (tens of kB) plus at most
:data:`VIEWPORT_MAX_POINTS` viewport points plus the points the user labelled or skipped.

The real points are drawn by :func:`labeler.ui.map_points.points_figure` on the subset (same
colours (:mod:`labeler.ui.map_colors`), legend, traces 0-3 in the same order as the small map), with ``customdata`` holding the POOL index
on every trace, so a click is read by :func:`~labeler.ui.figures.point_index_from_selection`
exactly as on the small map. Plain functions of arrays: no Streamlit here (the viewport comes
from the page through :mod:`labeler.ui.viewport`).
"""

from __future__ import annotations

import base64
import io
import os
from dataclasses import dataclass

import numpy as np

from labeler.ui.map_colors import COLOR_MODES, DENSITY_GREY, VALUE_COLORSCALES, class_palette, hex_rgb, value_range
from labeler.ui.map_points import points_spec

__all__ = [
    "DENSITY_ABOVE",
    "VIEWPORT_MAX_POINTS",
    "GRID",
    "DensityImage",
    "density_above",
    "viewport_max_points",
    "uses_density",
    "bounds_of",
    "bin_index",
    "layout_bins",
    "density_image",
    "viewport_points",
    "png_data_uri",
    "density_figure",
    "density_spec",
]

#: Pools of more points than this are drawn as a density image (env LABELER_MAP_DENSITY_ABOVE).
DENSITY_ABOVE = 50_000
#: The viewport's own points are drawn when it holds at most this many
#: (env LABELER_MAP_VIEWPORT_MAX).
VIEWPORT_MAX_POINTS = 10_000
#: Bins of the density image along each axis.
GRID = 256


def _env_int(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(float(raw))
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number; set it to a whole number of points "
                         f"(e.g. {default}) or unset it.") from None
    if value < 0:
        raise ValueError(f"{name}={value} is negative; set it to 0 or more points, or unset it.")
    return value


def density_above() -> int:
    """Pool size above which the map is a density image (:data:`DENSITY_ABOVE`, or the
    environment variable ``LABELER_MAP_DENSITY_ABOVE``)."""
    return _env_int("LABELER_MAP_DENSITY_ABOVE", DENSITY_ABOVE)


def viewport_max_points() -> int:
    """Most viewport points drawn as real points (:data:`VIEWPORT_MAX_POINTS`, or the
    environment variable ``LABELER_MAP_VIEWPORT_MAX``)."""
    return _env_int("LABELER_MAP_VIEWPORT_MAX", VIEWPORT_MAX_POINTS)


def uses_density(n_samples: int) -> bool:
    """Whether a pool of ``n_samples`` points is drawn as a density image."""
    return int(n_samples) > density_above()


@dataclass
class DensityImage:
    """A 2-D histogram of the layout and its colours.

    Attributes
    ----------
    counts : ndarray of shape (GRID, GRID) of int64
        Points per bin; row 0 is the TOP row (largest y), column 0 the left (smallest x), as
        in the image.
    rgba : ndarray of shape (GRID, GRID, 4) of uint8
        The image; empty bins are fully transparent.
    x0, x1, y0, y1 : float
        The image's extent in layout coordinates (left, right, bottom, top).
    """

    counts: np.ndarray
    rgba: np.ndarray
    x0: float
    x1: float
    y0: float
    y1: float


def bounds_of(xy: np.ndarray) -> tuple[float, float, float, float]:
    """``(x0, x1, y0, y1)``: the bounding box of the finite points, padded by 2 % (never empty).

    Parameters
    ----------
    xy : ndarray of shape (n_samples, 2)
    """
    xy = np.asarray(xy, dtype=np.float64)
    finite = np.isfinite(xy).all(axis=1)
    if not finite.any():
        return -1.0, 1.0, -1.0, 1.0
    lo, hi = xy[finite].min(axis=0), xy[finite].max(axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    lo, hi = lo - 0.02 * span, hi + 0.02 * span
    return float(lo[0]), float(hi[0]), float(lo[1]), float(hi[1])


def bin_index(xy: np.ndarray, bounds, grid: int = GRID) -> np.ndarray:
    """Flat bin of each point in a ``grid`` x ``grid`` image (row 0 on top), -1 outside.

    Parameters
    ----------
    xy : ndarray of shape (n_samples, 2)
    bounds : (x0, x1, y0, y1)
    grid : int

    Returns
    -------
    ndarray of shape (n_samples,) of int64
        ``row * grid + col``; -1 for non-finite points or points outside ``bounds``.
    """
    x0, x1, y0, y1 = bounds
    xy = np.asarray(xy, dtype=np.float64)
    col = np.floor((xy[:, 0] - x0) / (x1 - x0) * grid)
    row_up = np.floor((xy[:, 1] - y0) / (y1 - y0) * grid)
    inside = (np.isfinite(col) & np.isfinite(row_up) & (col >= 0) & (col <= grid)
              & (row_up >= 0) & (row_up <= grid))
    col = np.clip(np.nan_to_num(col), 0, grid - 1).astype(np.int64)  # the right/top edge: last bin
    row = grid - 1 - np.clip(np.nan_to_num(row_up), 0, grid - 1).astype(np.int64)
    return np.where(inside, row * grid + col, -1)


def _colorscale_lut(name: str, reverse: bool = False, size: int = 256) -> np.ndarray:
    """``size`` x 3 uint8 table of a named plotly colour scale (low to high)."""
    from plotly.colors import get_colorscale, sample_colorscale, unlabel_rgb

    samples = sample_colorscale(get_colorscale(name), list(np.linspace(0.0, 1.0, size)))
    lut = np.array([unlabel_rgb(c) for c in samples], dtype=np.float64)
    if reverse:
        lut = lut[::-1]
    return np.clip(np.round(lut), 0, 255).astype(np.uint8)


def density_image(
    xy: np.ndarray,
    *,
    codes: np.ndarray | None = None,
    palette=None,
    values: np.ndarray | None = None,
    value_range: tuple[float, float] = (0.0, 1.0),
    colorscale: str = "Viridis",
    reverse: bool = False,
    bounds=None,
    grid: int = GRID,
    bins: np.ndarray | None = None,
) -> DensityImage:
    """The density image of a pool, in O(n) (``numpy.bincount``).

    Colour of a bin: with ``codes``, the mean of the class colours of its points (codes -1,
    e.g. no prediction, count as :data:`DENSITY_GREY`); with ``values``, the colour scale at
    the mean of its finite values (clipped to ``value_range``); with neither, grey. Opacity:
    ``0.35 + 0.65 * log(1 + count) / log(1 + max count)``, 0 for an empty bin.

    Parameters
    ----------
    xy : ndarray of shape (n_samples, 2)
    codes : ndarray of shape (n_samples,) of int, optional
        Class code of each point (``0 .. len(palette) - 1``, or -1).
    palette : sequence of str ("#rrggbb"), optional
        Colour of each class code (needed with ``codes``).
    values : ndarray of shape (n_samples,), optional
        A number per point (confidence, expected risk); non-finite ones are not averaged.
    value_range : (float, float)
        Values mapped to the low and high end of ``colorscale``.
    colorscale : str
        A plotly colour scale name.
    reverse : bool
        Reverse the colour scale.
    bounds : (x0, x1, y0, y1), optional
        Extent of the image (default :func:`bounds_of` ``(xy)``).
    grid : int
        Bins along each axis.
    bins : ndarray of shape (n_samples,) of int64, optional
        :func:`bin_index` ``(xy, bounds, grid)`` when already known (the map keeps it per
        layout: :func:`layout_bins`).

    Returns
    -------
    DensityImage
    """
    xy = np.asarray(xy, dtype=np.float64)
    if xy.ndim != 2 or xy.shape[1] != 2:
        raise ValueError(f"layout must have shape (n_samples, 2); got {xy.shape}.")
    n = xy.shape[0]
    bounds = bounds_of(xy) if bounds is None else tuple(float(b) for b in bounds)
    nbins = grid * grid
    flat = bin_index(xy, bounds, grid) if bins is None else np.asarray(bins)
    keep = flat >= 0
    b = flat[keep]
    counts = np.bincount(b, minlength=nbins).astype(np.int64)
    filled = counts > 0
    rgb = np.zeros((nbins, 3), dtype=np.float64)
    if codes is not None:
        codes = np.asarray(codes).astype(np.int64)
        if codes.shape != (n,):
            raise ValueError(f"codes must have shape ({n},); got {codes.shape}.")
        colors = np.array([DENSITY_GREY, *(hex_rgb(c) for c in palette)], dtype=np.float64)
        k1 = colors.shape[0]
        shifted = np.clip(codes[keep] + 1, 0, k1 - 1)  # -1 -> 0 (grey); unknown codes -> last
        mix = np.bincount(b * k1 + shifted, minlength=nbins * k1).reshape(nbins, k1)
        rgb[filled] = (mix[filled] @ colors) / counts[filled, None]
    elif values is not None:
        values = np.asarray(values, dtype=np.float64)
        if values.shape != (n,):
            raise ValueError(f"values must have shape ({n},); got {values.shape}.")
        v = values[keep]
        finite = np.isfinite(v)
        sums = np.bincount(b[finite], weights=v[finite], minlength=nbins)
        hits = np.bincount(b[finite], minlength=nbins)
        lo, hi = value_range
        mean = np.where(hits > 0, sums / np.maximum(hits, 1), lo)
        t = np.clip((mean - lo) / ((hi - lo) or 1.0), 0.0, 1.0)
        lut = _colorscale_lut(colorscale, reverse)
        rgb = lut[np.round(t * (len(lut) - 1)).astype(np.int64)].astype(np.float64)
    else:
        rgb[:] = DENSITY_GREY
    alpha = np.zeros(nbins, dtype=np.float64)
    top = counts.max() if counts.size else 0
    if top > 0:
        alpha[filled] = 0.35 + 0.65 * np.log1p(counts[filled]) / np.log1p(top)
    rgba = np.empty((nbins, 4), dtype=np.uint8)
    rgba[:, :3] = np.clip(np.round(rgb), 0, 255).astype(np.uint8)
    rgba[:, 3] = np.round(alpha * 255).astype(np.uint8)
    return DensityImage(counts=counts.reshape(grid, grid), rgba=rgba.reshape(grid, grid, 4),
                        x0=bounds[0], x1=bounds[1], y0=bounds[2], y1=bounds[3])


_LAYOUT_CACHE: dict = {}


def _layout_key(xy: np.ndarray) -> tuple:
    """Names a layout array: shape, dtype and a hash of every point's bytes in a sample of
    about 4,096 points plus the first and last (a layout is replaced, never changed in place,
    when the session gets a new one)."""
    import hashlib

    xy = np.asarray(xy)
    step = max(1, xy.shape[0] // 4096)
    digest = hashlib.sha1(np.ascontiguousarray(xy[::step]).tobytes())
    digest.update(np.ascontiguousarray(xy[-1:]).tobytes())
    return xy.shape, xy.dtype.str, digest.hexdigest()


def layout_bins(layout: np.ndarray, grid: int = GRID) -> tuple[tuple, np.ndarray, str]:
    """``(bounds, bins, grey_png)`` of a layout: :func:`bounds_of`, :func:`bin_index` and the
    uncoloured density image as a PNG data URI, computed once per layout (O(n): a second at
    10^6 points on a busy machine, on every rerun before) and kept for the last layout used.

    Parameters
    ----------
    layout : ndarray of shape (n_samples, 2)
    grid : int
    """
    key = (_layout_key(layout), grid)
    hit = _LAYOUT_CACHE.get(key)
    if hit is None:
        xy = np.asarray(layout, dtype=np.float64)
        bounds = bounds_of(xy)
        bins = bin_index(xy, bounds, grid)
        grey = png_data_uri(density_image(xy, bounds=bounds, grid=grid, bins=bins).rgba)
        hit = (bounds, bins, grey)
        _LAYOUT_CACHE.clear()  # one layout at a time: bins are 8 bytes a point
        _LAYOUT_CACHE[key] = hit
    return hit


def viewport_points(xy: np.ndarray, viewport, max_points: int | None = None) -> np.ndarray:
    """Pool indices of the points inside ``viewport``, or none if it holds too many.

    Parameters
    ----------
    xy : ndarray of shape (n_samples, 2)
    viewport : (x0, x1, y0, y1) or None
        Axis ranges shown (either order of each pair). None (the whole map) gives none.
    max_points : int, optional
        Default :func:`viewport_max_points`.

    Returns
    -------
    ndarray of shape (m,) of int64
        Sorted indices, ``m <= max_points`` (empty when more points are in view).
    """
    if viewport is None:
        return np.empty(0, dtype=np.int64)
    limit = viewport_max_points() if max_points is None else int(max_points)
    x0, x1, y0, y1 = (float(v) for v in viewport)
    x0, x1 = min(x0, x1), max(x0, x1)
    y0, y1 = min(y0, y1), max(y0, y1)
    xy = np.asarray(xy)
    inside = (xy[:, 0] >= x0) & (xy[:, 0] <= x1) & (xy[:, 1] >= y0) & (xy[:, 1] <= y1)
    if np.count_nonzero(inside) > limit:
        return np.empty(0, dtype=np.int64)
    return np.flatnonzero(inside).astype(np.int64)


def png_data_uri(rgba: np.ndarray) -> str:
    """``data:image/png;base64,...`` of an RGBA uint8 image (PIL; zlib level 6: PIL's
    ``optimize`` costs a second at 256 x 256 for a few kB)."""
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(rgba, dtype=np.uint8), mode="RGBA").save(
        buf, format="PNG", compress_level=6)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def density_figure(layout: np.ndarray, classes, **options):
    """:func:`density_spec` as a ``plotly.graph_objects.Figure`` (validated by plotly). Same
    parameters."""
    import plotly.graph_objects as go

    return go.Figure(density_spec(layout, classes, **options))


def density_spec(
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
) -> dict:
    """The map of a large pool: density image plus real points (see the module docstring), as
    a plain figure dict (:func:`labeler.ui.map_points.points_spec` says why).

    Parameters are those of :func:`labeler.ui.map_points.points_spec`, plus

    viewport : (x0, x1, y0, y1) or None
        The axis ranges the user zoomed to (:mod:`labeler.ui.viewport`); its points are drawn
        when it holds at most :func:`viewport_max_points`.

    Returns
    -------
    dict
        :func:`~labeler.ui.map_points.points_spec` of the shown subset (traces 0 "pool" (the
        viewport's points), 1 labelled, 2 next query, 3 selected, legend, skipped), every trace's
        ``customdata`` the POOL index, one ``layout.images`` entry (the density image, under
        the traces) and the axes set to the whole pool's extent.
    """
    xy = np.asarray(layout, dtype=np.float64)
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
    bounds, bins, grey_png = layout_bins(layout)  # computed once per layout

    # --- the image -----------------------------------------------------------------------
    values = None
    if color_mode == "predicted":
        if predicted_codes is None:
            raise ValueError("color_mode='predicted' needs predicted_codes.")
        image = density_image(xy, codes=np.asarray(predicted_codes), palette=palette, bounds=bounds,
                              bins=bins)
    elif color_mode in ("confidence", "expected_risk"):
        values = confidence if color_mode == "confidence" else expected_risk
        if values is None:
            raise ValueError(f"color_mode={color_mode!r} needs the {color_mode} array.")
        values = np.asarray(values, dtype=np.float64)
        colorscale, reverse = VALUE_COLORSCALES[color_mode]
        image = density_image(xy, values=values, value_range=value_range(values, color_mode),
                              colorscale=colorscale, reverse=reverse, bounds=bounds, bins=bins)
    else:  # "label": the pool is grey, the labelled points are real points
        image = None

    # --- the real points: the point map of the subset --------------------------------------
    extra = [i for i in (query, selected) if i is not None and 0 <= int(i) < n]
    skipped_idx = [int(i) for i in (skipped if skipped is not None else ()) if 0 <= int(i) < n]
    in_view = viewport_points(xy, viewport)
    subset = np.unique(np.concatenate([
        in_view, np.flatnonzero(label_codes >= 0),
        np.asarray(extra, dtype=np.int64), np.asarray(skipped_idx, dtype=np.int64)]).astype(np.int64))
    local = {int(i): j for j, i in enumerate(subset.tolist())}

    def sub(a):
        return None if a is None else np.asarray(a)[subset]

    fig = points_spec(
        xy[subset], classes, color_mode=color_mode, label_codes=label_codes[subset],
        predicted_codes=sub(predicted_codes), confidence=sub(confidence),
        expected_risk=sub(expected_risk),
        query=None if query is None else local.get(int(query)),
        selected=None if selected is None else local.get(int(selected)),
        skipped=[local[i] for i in skipped_idx], view_key=view_key, height=height,
        hover_text=None if hover_text is None else np.asarray(hover_text, dtype=object)[subset],
        hover_predictions=hover_predictions,
    )
    # trace 0 holds only the viewport's points (the others have their own traces)
    pool = fig["data"][0]
    marker = pool["marker"]
    shown = np.isin(subset, in_view)
    keep = np.flatnonzero(shown)
    marker_color = marker.get("color")
    pool.update(x=np.asarray(pool["x"])[keep], y=np.asarray(pool["y"])[keep],
                customdata=subset[keep].astype(np.int32),
                hovertemplate=str(pool["hovertemplate"]).replace("%{pointNumber}", "%{customdata}"))
    if keep.size:  # zoomed in: the real points stand out over a faint image
        marker["size"] = max(float(marker.get("size") or 0), 6.0)
        marker["line"] = dict(width=1, color="#4a5060")
    if pool.get("text") is not None:
        pool["text"] = np.asarray(pool["text"], dtype=object)[keep]
    if marker_color is not None and np.ndim(marker_color) == 1:
        marker["color"] = np.asarray(marker_color)[keep]
    if values is not None:  # the whole pool's colour range, as in the image
        lo, hi = value_range(values, color_mode)
        marker["cmin"], marker["cmax"] = lo, hi
        if not keep.size:  # an empty trace draws no colour bar: a data-less one does (last)
            fig["data"].append(dict(
                type="scatter", x=[None], y=[None], mode="markers", name="colour scale",
                showlegend=False, hoverinfo="skip",
                marker=dict(color=[lo], colorscale=marker.get("colorscale"), cmin=lo, cmax=hi,
                            reversescale=marker.get("reversescale"), showscale=True,
                            colorbar=marker.get("colorbar"))))
            marker["showscale"] = False
    for trace in fig["data"][1:]:  # local -> pool indices
        custom = trace.get("customdata")
        if custom is not None and len(custom):
            trace["customdata"] = subset[np.asarray(custom, dtype=np.int64)].astype(np.int32)

    x0, x1, y0, y1 = bounds
    layout_spec = fig["layout"]
    layout_spec["images"] = [dict(
        source=grey_png if image is None else png_data_uri(image.rgba),  # "label": the grey one
        xref="x", yref="y", x=x0, y=y1, sizex=x1 - x0,
        sizey=y1 - y0, xanchor="left", yanchor="top", sizing="stretch", layer="below",
        opacity=0.35 if keep.size else 1.0, name="density",
    )]
    layout_spec["xaxis"] = dict(layout_spec.get("xaxis", {}), range=[x0, x1])
    layout_spec["yaxis"] = dict(layout_spec.get("yaxis", {}), range=[y0, y1])
    layout_spec["meta"] = str(view_key)
    return fig
