"""From a box or lasso drawn on the map to the selection panel's data, at 10^5 and 10^6 points.

What is timed is what the server does when Streamlit's selection event arrives
(:mod:`labeler.ui.selection`): read the shapes from the event, apply them to the 2-D layout of
the whole pool (:func:`core.polygon.points_in_polygon` / ``points_in_box``), and compute what
the panel shows (:func:`labeler.ui.selection.area_summary`: counts by current label, the
unlabelled points, their predicted classes and how many are confident). Not timed: Streamlit
drawing the panel (a few elements, whatever the selection's size) and the browser.

The pool: 60 Gaussian clusters on a 10 x 6 grid (like the "spheres" data), 200 points
labelled, random predictions and confidences. The shapes, as the front end sends them:

* ``lasso 1 cluster``: a wobbly loop of 200 vertices around one cluster (plotly keeps a vertex
  every ~1.5 px of a hand-drawn lasso);
* ``lasso half``: a loop of 400 vertices around half the map;
* ``box quarter``: a box over a quarter of the map.

Each is timed ``--repeats`` times: wall-clock median and max, and the median CPU time of the
process (``cpu ms``: what the work costs when the machine's other jobs take turns on the
cores; the wall time is what the user waits). The first call of the process (numba loads
the compiled polygon test from its disk cache, or compiles it once per installation) is
printed apart. Target (issue 23): <= 500 ms at 10^6 points.

Usage::

    python benchmarks/lasso_select.py [--sizes 100000 1000000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

from labeler.ui.selection import area_selection, area_summary

TARGET_MS = 500.0
N_CLASSES = 3


def pool(n: int, seed: int = 0):
    """Layout (n, 2), label codes, predicted codes, confidence of a clustered pool."""
    rng = np.random.default_rng(seed)
    gx, gy = np.meshgrid(6.0 * np.arange(10), 6.0 * np.arange(6), indexing="xy")
    centres = np.column_stack([gx.ravel(), gy.ravel()])
    cluster = rng.integers(0, len(centres), n)
    layout = centres[cluster] + rng.normal(scale=0.6, size=(n, 2))
    labels = np.full(n, -1, dtype=np.int32)
    chosen = rng.choice(n, 200, replace=False)
    labels[chosen] = rng.integers(0, N_CLASSES, chosen.size)
    predicted = rng.integers(0, N_CLASSES, n).astype(np.int32)
    return layout, labels, predicted, rng.random(n)


def loop(cx, cy, radius, k, seed=0):
    """A hand-drawn-looking closed loop of ``k`` vertices."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 2.0 * np.pi, k, endpoint=False)
    r = radius * (1.0 + 0.08 * np.sin(5 * t) + 0.02 * rng.standard_normal(k))
    return np.column_stack([cx + r * np.cos(t), cy + r * np.sin(t)])


def event(lassos=(), boxes=()):
    """A selection event as Streamlit's PlotlyChart front end writes it."""
    return {"selection": {
        "points": [], "point_indices": [],
        "box": [{"xref": "x", "yref": "y", "x": [x0, x1], "y": [y0, y1]} for (x0, x1), (y0, y1) in boxes],
        "lasso": [{"xref": "x", "yref": "y", "x": p[:, 0].tolist(), "y": p[:, 1].tolist()} for p in lassos]}}


SHAPES = {
    "lasso 1 cluster": event(lassos=[loop(24.0, 12.0, 2.6, 200)]),
    "lasso half": event(lassos=[loop(13.5, 15.0, 16.0, 400)]),
    "box quarter": event(boxes=[((-3.0, 24.0), (-3.0, 14.0))]),
}


def event_to_panel(ev, layout, labels, predicted, confidence):
    area = area_selection(ev, layout)
    return area, area_summary(area.indices, labels, predicted, confidence, N_CLASSES)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    print(f"load average before: {' / '.join(f'{v:.2f}' for v in load_before)} "
          f"({os.cpu_count()} cores)")
    layout, labels, predicted, confidence = pool(1000)
    t = time.perf_counter()
    event_to_panel(SHAPES["lasso 1 cluster"], layout, labels, predicted, confidence)
    print(f"first call of the process (compiled code loaded or compiled): "
          f"{1e3 * (time.perf_counter() - t):.0f} ms\n")
    print(f"{'points':>10} {'shape':<16} {'selected':>9} {'unlabelled':>10} "
          f"{'median ms':>9} {'max ms':>7} {'cpu ms':>7} {'target ms':>9}")
    worst = {}
    for n in args.sizes:
        layout, labels, predicted, confidence = pool(n)
        for name, ev in SHAPES.items():
            times, cpu = [], []
            for _ in range(args.repeats):
                t, c = time.perf_counter(), time.process_time()
                area, summary = event_to_panel(ev, layout, labels, predicted, confidence)
                times.append(1e3 * (time.perf_counter() - t))
                cpu.append(1e3 * (time.process_time() - c))
            worst[n] = max(worst.get(n, 0.0), statistics.median(times))
            print(f"{n:>10,} {name:<16} {area.indices.size:>9,} {summary.unlabelled.size:>10,} "
                  f"{statistics.median(times):>9.1f} {max(times):>7.1f} {statistics.median(cpu):>7.1f} "
                  f"{TARGET_MS:>9.0f}")
    print(f"\nload average after: {' / '.join(f'{v:.2f}' for v in os.getloadavg())}")
    for n, ms in worst.items():
        verdict = "meets" if ms <= TARGET_MS else "MISSES"
        print(f"{n:>10,} points: slowest median {ms:.1f} ms, {verdict} the {TARGET_MS:.0f} ms target")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
