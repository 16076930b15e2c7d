"""What the page receives per label with the map changed in place: the whole figure against the
delta (labeler/ui/map_delta.py), and the server's time to build them.

Two-moons-like pools (two Gaussian blobs, seeded); 30 labelled points, then one more label and
a new query, the predictions and confidences changed everywhere (as after a real label). For
each pool size and colour mode: the map's figure (``scatter_figure``: every point up to
50,000, else the density map) as JSON (what ``st.plotly_chart`` sent on every label), the
component's whole figure (pool tooltips as compact arrays) and its delta from it, with the time
of ``scatter_figure``, of the figure state and of the delta (median of 3).

Usage::

    python benchmarks/map_delta.py [--sizes 20000 100000 1000000]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from labeler.ui.figures import scatter_figure  # noqa: E402
from labeler.ui.map_delta import compact_pool_hover, figure_delta, figure_state, message_size  # noqa: E402


def _pool(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = np.array([[-1.0, 0.0], [1.0, 0.3]])
    return (centres[rng.integers(0, 2, n)] + 0.45 * rng.normal(size=(n, 2))).astype(np.float32)


def _timed(fn, repeat: int = 3):
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return out, statistics.median(times)


def measure(n: int, mode: str) -> dict:
    xy = _pool(n)
    rng = np.random.default_rng(1)
    labels = -np.ones(n, dtype=np.int64)
    labels[rng.choice(n, 30, replace=False)] = rng.integers(0, 2, 30)
    classes = ["0", "1"]

    def state_of(step: int, query: int):
        r = np.random.default_rng(100 + step)
        pred, conf = r.integers(0, 2, n), r.random(n)
        fig = scatter_figure(xy, classes, color_mode=mode, label_codes=labels, predicted_codes=pred,
                             confidence=conf, expected_risk=r.random(n), query=query, view_key="s",
                             hover_predictions=True)
        return fig, pred, conf

    (fig0, pred0, conf0), t_build = _timed(lambda: state_of(0, 5))
    chart_bytes = len(fig0.to_json())
    state0, t_state = _timed(lambda: compact_pool_hover(figure_state(fig0), classes, pred0, conf0))
    labels[5] = 1
    fig1, pred1, conf1 = state_of(1, 7)
    state1 = compact_pool_hover(figure_state(fig1), classes, pred1, conf1)
    delta, t_delta = _timed(lambda: figure_delta(state0, state1))
    return dict(n=n, mode=mode, chart_kb=chart_bytes / 1024, full_kb=message_size(state0) / 1024,
                delta_kb=message_size(delta) / 1024, build_ms=1e3 * t_build, state_ms=1e3 * t_state,
                delta_ms=1e3 * t_delta)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20000, 100000, 1000000])
    parser.add_argument("--modes", nargs="+", default=["label", "predicted", "confidence"])
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    rows = [measure(n, m) for n in args.sizes for m in args.modes]
    print(f"load average (1 min) {load:.1f} before, {os.getloadavg()[0]:.1f} after; {os.cpu_count()} cores")
    print("| n | colour | figure sent by st.plotly_chart per label (kB) | component: whole figure, once (kB) "
          "| component: delta per label (kB) | build figure (ms) | figure state (ms) | delta (ms) |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['n']:,} | {r['mode']} | {r['chart_kb']:.0f} | {r['full_kb']:.0f} | {r['delta_kb']:.1f} "
              f"| {r['build_ms']:.0f} | {r['state_ms']:.0f} | {r['delta_ms']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
