"""What the page receives per label with the map changed in place: the whole figure against the
delta (labeler/ui/map_delta.py), and the server's time to build them.

Two-moons-like pools (two Gaussian blobs, seeded); 30 labelled points, then one more label and
a new query, the predictions and confidences changed everywhere (as after a real label). For
each pool size and colour mode: the map's figure (``scatter_figure``: every point up to
50,000, else the density map) as JSON (what ``st.plotly_chart`` sent on every label), the
component's whole figure (pool tooltips as compact arrays) and its delta from it, with the time
of ``scatter_figure`` (a validated plotly figure), of the page's figure state made through plotly
(figure, JSON, compacted tooltips: the way before) and from the plain figure dict
(``scatter_spec`` + ``spec_state``: the app's way; the two states are checked equal), and of the
delta (median of 3).

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

from labeler.ui.figures import scatter_figure, scatter_spec  # noqa: E402
from labeler.ui.map_delta import (compact_pool_hover, figure_delta, figure_state, message_size,  # noqa: E402
                                  spec_state)


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

    def inputs(step: int, query: int) -> dict:
        r = np.random.default_rng(100 + step)
        return dict(color_mode=mode, label_codes=labels.copy(), predicted_codes=r.integers(0, 2, n),
                    confidence=r.random(n), expected_risk=r.random(n), query=query, view_key="s",
                    hover_predictions=True)

    def plotly_state(args: dict) -> dict:  # before: a plotly figure, its JSON, compacted
        fig = scatter_figure(xy, classes, **args)
        return compact_pool_hover(figure_state(fig), classes, args["predicted_codes"], args["confidence"])

    def plain_state(args: dict) -> dict:  # now: a plain figure dict, compact from the start
        return spec_state(scatter_spec(xy, classes, compact_hover=True, **args))

    args0 = inputs(0, 5)
    fig0, t_build = _timed(lambda: scatter_figure(xy, classes, **args0))
    chart_bytes = len(fig0.to_json())
    _, t_plotly = _timed(lambda: plotly_state(args0))
    state0, t_plain = _timed(lambda: plain_state(args0))
    assert state0 == plotly_state(args0)  # the same figure state either way
    labels[5] = 1
    state1 = plain_state(inputs(1, 7))
    delta, t_delta = _timed(lambda: figure_delta(state0, state1))
    return dict(n=n, mode=mode, chart_kb=chart_bytes / 1024, full_kb=message_size(state0) / 1024,
                delta_kb=message_size(delta) / 1024, build_ms=1e3 * t_build, plotly_ms=1e3 * t_plotly,
                plain_ms=1e3 * t_plain, delta_ms=1e3 * t_delta)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20000, 100000, 1000000])
    parser.add_argument("--modes", nargs="+", default=["label", "predicted", "confidence"])
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    rows = [measure(n, m) for n in args.sizes for m in args.modes]
    print(f"load average (1 min) {load:.1f} before, {os.getloadavg()[0]:.1f} after; {os.cpu_count()} cores")
    print("| n | colour | figure sent by st.plotly_chart per label (kB) | component: whole figure, once (kB) "
          "| component: delta per label (kB) | plotly figure (ms) | figure state through plotly (ms) "
          "| figure state from a plain dict (ms) | delta (ms) |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['n']:,} | {r['mode']} | {r['chart_kb']:.0f} | {r['full_kb']:.0f} | {r['delta_kb']:.1f} "
              f"| {r['build_ms']:.0f} | {r['plotly_ms']:.0f} | {r['plain_ms']:.0f} | {r['delta_ms']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
