"""Learning-curve reports: self-contained plotly HTML pages, PNG snapshots, atomic file writes.

A *curve* is the table returned by :func:`labeler.experiments.simulate.simulate` (one row per query, columns
``n_labeled``, ``accuracy``, ``balanced_accuracy``, ``estimated_risk``, ``step_seconds``).
Several runs of one strategy (different seeds) are drawn as their mean with a band of one
standard deviation, as in seed 002 Figs. 4-7 to 4-11.

Every file is written atomically with :mod:`labeler.atomic` (temporary file in the target
directory, ``fsync``, one ``os.replace``): an interrupted or failed run never leaves a partial
file behind.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from labeler.atomic import atomic_write, atomic_write_text

__all__ = [
    "summarize_runs",
    "curve_figure",
    "figure_html",
    "write_report",
    "write_png",
    "METRIC_TITLES",
]

METRIC_TITLES = {
    "accuracy": "accuracy",
    "balanced_accuracy": "balanced accuracy",
    "error": "error rate",
    "balanced_error": "balanced error rate",
    "estimated_risk": "estimated risk R(f) (eq. 3.49)",
    "step_seconds": "seconds per query",
}

# Colour per strategy, the same in every figure (plotly's qualitative palette).
_COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#7f7f7f"]


def summarize_runs(runs: Sequence[pd.DataFrame], metric: str) -> pd.DataFrame:
    """Mean, standard deviation and count of ``metric`` over runs, per number of labels.

    Parameters
    ----------
    runs : sequence of DataFrame
        Curves with columns ``n_labeled`` and ``metric`` (``error`` and ``balanced_error``
        are derived from the accuracies when asked for).
    metric : str
        Column to summarise.

    Returns
    -------
    DataFrame
        Columns ``n_labeled``, ``mean``, ``std`` (population standard deviation, 0 for one
        run), ``count``; one row per number of labels reached by at least one run.
    """
    frames = []
    for run in runs:
        values = _metric_values(run, metric)
        frames.append(pd.DataFrame({"n_labeled": run["n_labeled"].to_numpy(), "value": values}))
    if not frames:
        return pd.DataFrame({"n_labeled": [], "mean": [], "std": [], "count": []})
    allruns = pd.concat(frames, ignore_index=True)
    grouped = allruns.groupby("n_labeled", sort=True)["value"]
    out = pd.DataFrame(
        {
            "mean": grouped.mean(),
            "std": grouped.std(ddof=0).fillna(0.0),
            "count": grouped.count(),
        }
    ).reset_index()
    return out


def _metric_values(run: pd.DataFrame, metric: str) -> np.ndarray:
    if metric == "error":
        return 1.0 - run["accuracy"].to_numpy(dtype=float)
    if metric == "balanced_error":
        return 1.0 - run["balanced_accuracy"].to_numpy(dtype=float)
    if metric not in run.columns:
        raise ValueError(
            f"The curve has no column {metric!r}; available: {', '.join(map(str, run.columns))}."
        )
    return run[metric].to_numpy(dtype=float)


def curve_figure(
    groups: Mapping[str, Sequence[pd.DataFrame] | pd.DataFrame],
    metrics: Sequence[str] = ("accuracy", "balanced_accuracy", "estimated_risk"),
    title: str = "Learning curves",
    log_y: Sequence[str] = (),
    markers: Mapping[str, float] | None = None,
) -> go.Figure:
    """Learning curves of several strategies, one panel per metric.

    Parameters
    ----------
    groups : mapping of str to DataFrame or sequence of DataFrame
        Strategy name -> its run(s). Several runs are drawn as the mean with a band of one
        standard deviation (seed 002 Figs. 4-7 to 4-11 draw error bars the same way).
    metrics : sequence of str
        Columns to draw, one panel each, against ``n_labeled``.
    title : str
        Figure title.
    log_y : sequence of str
        Metrics drawn on a logarithmic axis.
    markers : mapping of str to float, optional
        Vertical reference lines ``{label: n_labeled}`` drawn on every panel.

    Returns
    -------
    plotly.graph_objects.Figure
    """
    metrics = list(metrics)
    fig = make_subplots(
        rows=len(metrics),
        cols=1,
        shared_xaxes=True,
        vertical_spacing=0.08 if len(metrics) > 1 else 0.0,
        subplot_titles=[METRIC_TITLES.get(m, m) for m in metrics],
    )
    for g, (name, runs) in enumerate(groups.items()):
        if isinstance(runs, pd.DataFrame):
            runs = [runs]
        colour = _COLOURS[g % len(_COLOURS)]
        label = name if len(runs) == 1 else f"{name} (mean ± 1 sd, {len(runs)} runs)"
        for r, metric in enumerate(metrics, start=1):
            summary = summarize_runs(runs, metric)
            x = summary["n_labeled"].to_numpy()
            mean = summary["mean"].to_numpy()
            if len(runs) > 1:
                std = summary["std"].to_numpy()
                fig.add_trace(
                    go.Scatter(
                        x=np.concatenate([x, x[::-1]]),
                        y=np.concatenate([mean + std, (mean - std)[::-1]]),
                        fill="toself",
                        fillcolor=_rgba(colour, 0.18),
                        line={"width": 0},
                        hoverinfo="skip",
                        showlegend=False,
                        legendgroup=name,
                    ),
                    row=r,
                    col=1,
                )
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=mean,
                    mode="lines",
                    name=label,
                    legendgroup=name,
                    showlegend=r == 1,
                    line={"color": colour, "width": 2},
                    hovertemplate=f"{name}<br>labels %{{x}}<br>{metric} %{{y:.4g}}<extra></extra>",
                ),
                row=r,
                col=1,
            )
            if metric in log_y:
                fig.update_yaxes(type="log", row=r, col=1)
    for label, x in (markers or {}).items():
        fig.add_vline(x=x, line_dash="dot", line_color="grey", annotation_text=label)
    fig.update_xaxes(title_text="number of labelled points", row=len(metrics), col=1)
    fig.update_layout(
        title=title,
        template="plotly_white",
        height=280 * len(metrics) + 120,
        width=900,
        legend={"orientation": "h", "y": -0.12 if len(metrics) < 3 else -0.06},
        margin={"l": 70, "r": 30, "t": 80, "b": 60},
    )
    return fig


def _rgba(hex_colour: str, alpha: float) -> str:
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def figure_html(figures: Sequence[go.Figure] | go.Figure, title: str, intro: str = "") -> str:
    """A self-contained HTML page (plotly.js inlined, no CDN) holding the figures.

    Parameters
    ----------
    figures : Figure or sequence of Figure
        Figures, drawn one below the other.
    title : str
        Page title and heading.
    intro : str
        Plain text shown under the heading (HTML-escaped).

    Returns
    -------
    str
        The page. It loads nothing from the network, so it opens offline.
    """
    import html

    if isinstance(figures, go.Figure):
        figures = [figures]
    parts = []
    for k, fig in enumerate(figures):
        parts.append(
            fig.to_html(
                full_html=False,
                include_plotlyjs="inline" if k == 0 else False,
                config={"displaylogo": False},
            )
        )
    intro_html = f"<p>{html.escape(intro)}</p>" if intro else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{html.escape(title)}</title>\n"
        "<style>body{font-family:sans-serif;margin:2em;max-width:980px}"
        "p{color:#333}</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n{intro_html}\n" + "\n".join(parts) + "\n</body>\n</html>\n"
    )


def write_report(
    path,
    groups: Mapping[str, Sequence[pd.DataFrame] | pd.DataFrame],
    title: str = "Learning curves",
    intro: str = "",
    metrics: Sequence[str] = ("accuracy", "balanced_accuracy", "estimated_risk", "step_seconds"),
) -> Path:
    """Write a self-contained HTML learning-curve report atomically.

    Parameters
    ----------
    path : str or Path
        Target ``.html`` file (its directory must exist).
    groups : mapping of str to DataFrame or sequence of DataFrame
        Strategy name -> run(s), as for :func:`curve_figure`.
    title, intro : str
        Heading and the text under it (e.g. the command and parameters).
    metrics : sequence of str
        Panels to draw.

    Returns
    -------
    Path
    """
    fig = curve_figure(groups, metrics=metrics, title=title)
    return atomic_write_text(path, figure_html(fig, title, intro))


def chromium_path() -> str | None:
    """Path of a Chromium/Chrome executable for PNG snapshots, or None if there is none."""
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        found = shutil.which(name)
        if found:
            return found
    return None


def write_png(path, figure: go.Figure) -> Path:
    """Write a PNG snapshot of ``figure`` atomically, rendered by a headless Chromium.

    plotly's own static export needs the ``kaleido`` package, which this project does not
    depend on; the same picture is obtained by opening the self-contained HTML in the
    Chromium that the browser tests use (Playwright drives it).

    Raises
    ------
    RuntimeError
        If no Chromium executable or the ``playwright`` package is available, or Chromium
        fails to render the page.
    """
    exe = chromium_path()
    if exe is None:
        raise RuntimeError(
            "No Chromium found for PNG export. Install it (Debian: apt-get install chromium) "
            "or skip PNGs (labeler reproduce --no-png)."
        )
    try:
        from playwright.sync_api import Error as PlaywrightError
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - playwright is a test dependency
        raise RuntimeError(
            "PNG export needs the 'playwright' package: pip install playwright, or skip PNGs "
            "(labeler reproduce --no-png)."
        ) from None
    width = int(figure.layout.width or 900)
    height = int(figure.layout.height or 600)
    page_html = figure.to_html(
        full_html=True, include_plotlyjs="inline", config={"staticPlot": True}
    )

    def write(tmp):
        with tempfile.TemporaryDirectory() as workdir:
            src = Path(workdir) / "figure.html"
            src.write_text(page_html, encoding="utf-8")
            try:
                with sync_playwright() as pw:
                    browser = pw.chromium.launch(executable_path=exe, args=["--no-sandbox"])
                    try:
                        page = browser.new_page(viewport={"width": width + 20, "height": height + 20})
                        page.goto(src.as_uri())
                        page.wait_for_selector(".main-svg", timeout=30_000)
                        page.locator(".plotly-graph-div").first.screenshot(path=tmp, type="png")
                    finally:
                        browser.close()
            except PlaywrightError as exc:  # launch failure, timeout, crashed page
                raise RuntimeError(f"Chromium ({exe}) could not render the PNG: {exc}") from None

    return atomic_write(path, write)
