"""What every experiment of the reproduction shares: run settings, findings, formatting, files.

A :class:`Finding` is one row of the summary table of ``reproduction.md`` plus the detailed
section of its experiment; :class:`Settings` says how big a run is. The helpers format numbers
(every number of the report is computed by the run), look up summary curves, run
:func:`~labeler.experiments.simulate.simulate` over seeds and write figures and mean curves
into ``reproduction/`` atomically.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from labeler.atomic import atomic_write, atomic_write_text
from labeler.experiments.report import summarize_runs, write_png
from labeler.experiments.simulate import prepare_features, simulate

__all__ = ["Settings", "Finding", "PLOT_DIR", "PLOTLY_JS"]

PLOT_DIR = "reproduction"
PLOTLY_JS = "plotly.min.js"


@dataclass(frozen=True)
class Settings:
    """How big a run is: ``quick`` shrinks everything; ``seeds`` repetitions where averaged."""

    quick: bool
    seeds: int
    png: bool
    out: Path
    log: Callable[[str], None]

    def pick(self, full, quick):
        """``quick`` in a quick run, else ``full``."""
        return quick if self.quick else full


@dataclass
class Finding:
    """One row of the summary table plus the detailed section of one experiment."""

    key: str
    title: str
    thesis: str
    ours: str
    note: str
    details: list[str] = field(default_factory=list)
    seconds: float = 0.0


# --------------------------------------------------------------------------- helpers
def fmt_pct(x: float, digits: int = 1) -> str:
    """A fraction as a percentage (``"n/a"`` for None or NaN)."""
    return "n/a" if x is None or not np.isfinite(x) else f"{100 * x:.{digits}f}%"


def mean_sd(values, digits: int = 1, pct: bool = True) -> str:
    """``"mean ± sd"`` of ``values`` (population sd), or the value alone for one value."""
    v = np.asarray(values, dtype=float)
    scale = 100.0 if pct else 1.0
    unit = "%" if pct else ""
    if v.size == 1:
        return f"{scale * v[0]:.{digits}f}{unit}"
    return f"{scale * v.mean():.{digits}f}{unit} ± {scale * v.std():.{digits}f}"


def md_table(header: list[str], rows: list[list]) -> str:
    """A markdown table; ``|`` inside a cell is escaped."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        lines.append("| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |")
    return "\n".join(lines)


def pool_ratio_weights(y: np.ndarray) -> dict:
    """Equilibrating weights from the pool's class counts: ``w_y = n / (2 n_y)`` (docs/algorithms.md §1)."""
    classes, counts = np.unique(y, return_counts=True)
    n = len(y)
    return {c.item(): n / (len(classes) * k) for c, k in zip(classes, counts)}


def value_at(summary: pd.DataFrame, n_labeled: int) -> float:
    """Mean of a :func:`~labeler.experiments.report.summarize_runs` table at ``n_labeled`` (NaN if absent)."""
    row = summary.loc[summary["n_labeled"] == n_labeled, "mean"]
    return float(row.iloc[0]) if len(row) else float("nan")


def first_at_least(summary: pd.DataFrame, threshold: float) -> int | None:
    """First number of labels whose mean reaches ``threshold`` (None: never)."""
    hit = summary.loc[summary["mean"] >= threshold - 1e-12, "n_labeled"]
    return int(hit.iloc[0]) if len(hit) else None


def first_at_most(summary: pd.DataFrame, threshold: float) -> int | None:
    """First number of labels whose mean falls to ``threshold`` or below (None: never)."""
    hit = summary.loc[summary["mean"] <= threshold + 1e-12, "n_labeled"]
    return int(hit.iloc[0]) if len(hit) else None


def run_first_at_least(run: pd.DataFrame, metric: str, threshold: float) -> int | None:
    """First number of labels at which one run's ``metric`` reaches ``threshold`` (None: never)."""
    hit = run.loc[run[metric] >= threshold - 1e-12, "n_labeled"]
    return int(hit.iloc[0]) if len(hit) else None


def checkpoints(budget: int, marks) -> list[int]:
    """The ``marks`` (numbers of labels) a run of ``budget`` queries reaches."""
    return [m for m in marks if m <= budget]


def save_figure(settings: Settings, fig: go.Figure, name: str, title: str) -> str:
    """Write ``name.html`` (plotly.js shared in the folder, no CDN) and ``name.png``.

    Returns the markdown that shows (PNG) and links (HTML) the figure.
    """
    folder = settings.out / PLOT_DIR
    folder.mkdir(exist_ok=True)
    body = fig.to_html(full_html=False, include_plotlyjs="directory", config={"displaylogo": False})
    page = (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{title}</title>\n</head>\n<body>\n{body}\n</body>\n</html>\n"
    )
    atomic_write_text(folder / f"{name}.html", page)
    lines = []
    if settings.png:
        try:
            write_png(folder / f"{name}.png", fig)
            lines.append(f"![{title}]({PLOT_DIR}/{name}.png)")
        except (RuntimeError, OSError) as exc:  # no Chromium / Playwright, or it failed: keep the HTML
            settings.log(f"  PNG of {name} skipped: {exc}")
    lines.append(f"Interactive: [{PLOT_DIR}/{name}.html]({PLOT_DIR}/{name}.html)")
    return "\n\n".join(lines)


def write_plotly_js(folder: Path) -> None:
    """Write plotly.js once into ``folder`` for the HTML figures (rewritten only when it changed)."""
    from plotly.offline import get_plotlyjs

    target = folder / PLOTLY_JS
    js = get_plotlyjs()
    if not target.exists() or target.read_text(encoding="utf-8") != js:
        atomic_write_text(target, js)


def save_curves(settings: Settings, groups: dict, name: str, metrics) -> None:
    """Mean / sd / count per number of labels of every group and metric, as CSV."""
    frames = []
    for label, runs in groups.items():
        for metric in metrics:
            s = summarize_runs(runs, metric)
            s.insert(0, "metric", metric)
            s.insert(0, "strategy", label)
            frames.append(s)
    table = pd.concat(frames, ignore_index=True)
    path = settings.out / PLOT_DIR / f"{name}.csv"
    atomic_write(path, lambda tmp: table.to_csv(tmp, index=False, float_format="%.6g", lineterminator="\n"))


def simulate_runs(settings: Settings, label: str, loader, seeds, weighting="none", **kwargs) -> list[pd.DataFrame]:
    """``simulate`` once per seed on ``loader(seed)`` (a fresh data set of the same construction).

    ``weighting`` may be a callable ``dataset -> weighting`` (e.g. weights from the pool's
    class counts).
    """
    runs = []
    t0 = time.perf_counter()
    for seed in seeds:
        ds = loader(seed)
        X, X_val = prepare_features(ds, ds.X_val)
        w = weighting(ds) if callable(weighting) else weighting
        runs.append(simulate(ds, seed=seed, X=X, X_val=X_val, y_val=ds.y_val, weighting=w, **kwargs))
    settings.log(f"  {label}: {len(runs)} run(s) in {time.perf_counter() - t0:.1f} s")
    return runs
