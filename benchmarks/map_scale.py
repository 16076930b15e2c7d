"""Where the pool map gets slow: every point as a Scattergl vs the density map, n = 10^4..10^6.

For each pool size and each kind of map, prints
- the Python side: building the figure and serialising it (``fig.to_json()``), median of 3;
- the figure's JSON bytes (what Streamlit sends to the browser on every rerun, i.e. every label);
- the browser side, in Debian's headless Chromium (Playwright, ``executable_path``; software
  WebGL since the machine has no GPU): ``JSON.parse`` + ``Plotly.newPlot`` until the next
  animation frame, median of 3 (the app mounts a new plot after every label).

The density map draws the pool as one image plus real points for the labelled set (here 200),
the query and a zoomed viewport (here a box holding about 2,000 points).

Usage::

    python benchmarks/map_scale.py [--sizes 10000 50000 100000 300000 1000000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))

from harness import browser_page, chromium_path  # noqa: E402

from labeler.ui.figures import scatter_figure  # noqa: E402

_RENDER = """async (text) => {
    const t0 = performance.now();
    const fig = JSON.parse(text);
    const div = document.getElementById('plot');
    await Plotly.newPlot(div, fig.data, fig.layout);
    await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
    const t = performance.now() - t0;
    Plotly.purge(div);
    return t;
}"""


def pool(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(scale=6.0, size=(3, 2))
    cls = rng.integers(0, 3, n)
    xy = centers[cls] + rng.normal(size=(n, 2))
    labels = np.full(n, -1)
    chosen = rng.choice(n, 200, replace=False)
    labels[chosen] = cls[chosen]
    return xy, labels, cls, rng.random(n)


def viewport_of(xy: np.ndarray, count: int = 2000):
    """A square box around the first centre holding about ``count`` points."""
    c = xy[0]
    r = np.sort(np.abs(xy - c).max(axis=1))[min(count, len(xy)) - 1]
    return (c[0] - r, c[0] + r, c[1] - r, c[1] + r)


def build(n: int, density: bool):
    xy, labels, pred, conf = pool(n)
    times, text = [], None
    for _ in range(3):
        t = time.perf_counter()
        fig = scatter_figure(xy, ["a", "b", "c"], color_mode="predicted", label_codes=labels,
                             predicted_codes=pred, confidence=conf, query=1, density=density,
                             viewport=viewport_of(xy) if density else None)
        text = fig.to_json()
        times.append(time.perf_counter() - t)
    return statistics.median(times), text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000, 100_000, 300_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    if chromium_path() is None:
        print("Chromium is missing (apt-get install chromium): cannot measure.", file=sys.stderr)
        return 2
    import plotly

    plotly_js = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    rows = []
    with browser_page(viewport=(900, 700)) as page:
        page.set_content("<html><body><div id='plot' style='width:800px;height:560px'></div></body></html>")
        page.add_script_tag(path=str(plotly_js))
        for n in args.sizes:
            for density in (False, True):
                py_s, text = build(n, density)
                page.evaluate(_RENDER, text)  # warm-up (shader compilation, JIT)
                browser = [page.evaluate(_RENDER, text) for _ in range(args.repeats)]
                rows.append(dict(n=n, kind="density" if density else "scattergl", py_s=py_s,
                                 mb=len(text.encode()) / 1e6, browser_ms=statistics.median(browser)))
                print(rows[-1], file=sys.stderr, flush=True)
    print()
    print("| n | map | figure build + JSON (s) | JSON (MB) | browser parse + draw (ms) | "
          "scattergl / density, browser |")
    print("|---:|---|---:|---:|---:|---:|")
    by = {(r["n"], r["kind"]): r for r in rows}
    for r in rows:
        ratio = ""
        if r["kind"] == "density":
            ratio = f"{by[(r['n'], 'scattergl')]['browser_ms'] / r['browser_ms']:.1f} x"
        print(f"| {r['n']:,} | {r['kind']} | {r['py_s']:.2f} | {r['mb']:.2f} | {r['browser_ms']:.0f} | {ratio} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
