"""The colours of the pool map, shared by the point map and the density map.

One home for every colour decision of the map, so :mod:`labeler.ui.map_points` (every point
drawn) and :mod:`labeler.ui.map_density` (a density image plus the points that matter) colour a
class, a confidence or an expected risk the same way, and the panels (point, class, bulk)
show the class swatches the map uses. Plain data and functions: no plotly, no Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = [
    "CLASS_COLORS",
    "UNLABELED_COLOR",
    "QUERY_COLOR",
    "SELECTED_COLOR",
    "SKIPPED_COLOR",
    "DENSITY_GREY",
    "COLOR_MODES",
    "VALUE_COLORSCALES",
    "class_color",
    "class_palette",
    "discrete_colorscale",
    "hex_rgb",
    "value_range",
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
#: Colour (r, g, b) of the density image's bins in "label" mode (the pool is unlabelled there:
#: its density only), and of points without a class code in the other modes.
DENSITY_GREY = (120, 128, 140)

#: Colour modes of the pool map: key -> label shown in the app.
COLOR_MODES: dict[str, str] = {
    "label": "current label",
    "predicted": "predicted class",
    "confidence": "confidence",
    "expected_risk": "expected risk",
}

#: The colour modes drawn by a number per point: mode -> (plotly colour scale, reversed).
#: Expected risk is reversed so that high risk (worth a query) is dark, like low confidence.
VALUE_COLORSCALES: dict[str, tuple[str, bool]] = {
    "confidence": ("Viridis", False),
    "expected_risk": ("Magma", True),
}


def class_color(code: int) -> str:
    """Colour of class number ``code`` (cycles through :data:`CLASS_COLORS`)."""
    return CLASS_COLORS[int(code) % len(CLASS_COLORS)]


def class_palette(n_classes: int) -> list[str]:
    """The colours of class codes ``0 .. n_classes - 1`` (:func:`class_color` of each)."""
    return [class_color(j) for j in range(n_classes)]


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


def hex_rgb(color: str) -> tuple[int, int, int]:
    """``"#rrggbb"`` -> ``(r, g, b)`` in 0..255."""
    color = color.lstrip("#")
    return int(color[0:2], 16), int(color[2:4], 16), int(color[4:6], 16)


def value_range(values: np.ndarray | None, mode: str) -> tuple[float, float]:
    """The values mapped to the two ends of a value mode's colour scale.

    Parameters
    ----------
    values : ndarray of shape (n_samples,) or None
        Confidence or expected risk of every pool point; non-finite entries are ignored.
    mode : {"confidence", "expected_risk"}

    Returns
    -------
    (lo, hi) : (float, float)
        ``(0, 1)`` for confidence (or no values); else the finite values' minimum and maximum,
        ``hi = lo + 1`` when they are equal (never an empty range).
    """
    if mode == "confidence" or values is None:
        return 0.0, 1.0
    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    if not finite.size:
        return 0.0, 1.0
    lo, hi = float(finite.min()), float(finite.max())
    return (lo, hi) if hi > lo else (lo, lo + 1.0)
