"""Latency of the labelling screen in a real browser: label key press -> next query shown.

Starts the app with the README's ``labeler`` command on two-moons of size n (a temporary
store), opens it in Debian's headless Chromium (Playwright), and presses a class key 40 times
(after one warm-up press), cycling through the classes. The time is measured inside the page: from the ``keydown`` event (capture phase) to the
moment the point panel's ``data-query`` attribute shows the new query (MutationObserver), and
to the moment the pool map's "next query" ring has moved there too.

Targets: 300 ms at n = 2,000, 1 s at n = 20,000 and at n = 100,000 (median; the max is printed
beside it). The machine's load average is printed with the table: the times are wall-clock
times of a server and a browser sharing the machine's cores with everything else running.

Large pools: ``--posterior`` sets the learner's posterior of the app's session
(``LABELER_MODEL``, as ``labeler app --posterior``; "auto" picks a low-rank factor where the
dense n x n matrix would not fit), and ``--density-above`` the pool size above which the map is
a density image (``LABELER_MAP_DENSITY_ABOVE``; default the app's 50,000), so that both maps
can be timed on one pool in one run. The table says which map was drawn.

The map: ``--map component`` (default, the map changed in place by deltas,
``labeler/ui/map_component.py``) or ``--map chart`` (``st.plotly_chart``, the whole figure on
every rerun; ``LABELER_MAP_COMPONENT=0``); the table gives the median bytes the page received
over its websocket per press (every message of the rerun, not only the map's).

A real file: ``--data PATH`` (CSV or Parquet, as ``labeler app PATH`` reads it; its label
column, if any, gives the classes) replaces the built-in two-moons and ``--sizes``. A 10^6-row
file is made by ``benchmarks/make_large_file.py``. The table also gives the server's peak
resident memory: the high-water mark (``VmHWM`` of ``/proc/PID/status``) of the ``labeler app``
process, summed with those of any child processes it started (sampled every 0.5 s), and
``--screenshots DIR`` saves the page after start-up, after the presses and then coloured by
the predicted class (PNG) to look at.

Usage::

    python benchmarks/ui_latency.py [--sizes 2000 20000] [--presses 40] [--weightings balanced none]
    python benchmarks/make_large_file.py /tmp/million.parquet
    python benchmarks/ui_latency.py --data /tmp/million.parquet --presses 10 --weightings balanced --posterior auto
    python benchmarks/ui_latency.py --sizes 20000 --weightings balanced --density-above 50000 10000
    python benchmarks/ui_latency.py --sizes 100000 --weightings balanced --posterior auto
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "e2e"))

from harness import (POINT_TAG, AppServer, browser_page, chromium_path, class_keys,  # noqa: E402
                     focus_page, open_app, press, wait_idle)

TARGETS_MS = {2000: 300.0, 20000: 1000.0, 100000: 1000.0}
#: Key -> map updated (issue 23 item 5: the map changes in place).
MAP_TARGETS_MS = {100000: 500.0}

_INSTALL = """() => {
    window.__lat = {t0: null, tQuery: null, tMap: null, q0: null};
    document.addEventListener('keydown', () => {
        const t = document.querySelector('.point-tag');
        window.__lat = {t0: performance.now(), tQuery: null, tMap: null, q0: t ? t.dataset.query : null};
    }, true);
    const mapQuery = () => {
        const gd = [...document.querySelectorAll('.js-plotly-plot')]
                   .find(g => g._fullData && g._fullData[0] && g._fullData[0].name === 'pool');
        if (!gd || !gd._fullData[2] || !gd._fullData[2].customdata) return null;
        const c = gd._fullData[2].customdata;
        return c.length ? String(c[0]) : null;
    };
    const check = () => {
        const L = window.__lat;
        if (L.t0 === null) return;
        const t = document.querySelector('.point-tag');
        if (L.tQuery === null && t && t.dataset.query !== L.q0 && t.dataset.query !== '') {
            L.tQuery = performance.now(); L.q1 = t.dataset.query;
        }
        if (L.tQuery !== null && L.tMap === null && mapQuery() === L.q1) L.tMap = performance.now();
    };
    new MutationObserver(check).observe(document.body,
        {subtree: true, childList: true, attributes: true, characterData: true});
    const poll = () => { check(); requestAnimationFrame(poll); };
    requestAnimationFrame(poll);
}"""


_MAP_KIND = """() => {
    const gd = [...document.querySelectorAll('.js-plotly-plot')]
               .find(g => g._fullData && g._fullData[0] && g._fullData[0].name === 'pool');
    return gd && (gd.layout.images || []).length ? 'density' : 'scattergl';
}"""


def _hwm_bytes(pid: int) -> int | None:
    """Peak resident memory of process ``pid`` (``VmHWM``), or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024  # kB
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return None


def _children(pid: int) -> list[int]:
    """Descendants of ``pid`` (``/proc/PID/task/*/children``, Linux)."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").glob("*"):
            try:
                kids = [int(c) for c in (task / "children").read_text().split()]
            except OSError:
                continue
            out += kids
            todo += kids
    return out


class PeakMemory:
    """High-water marks of a process and its descendants, sampled every ``every`` seconds.

    ``peak_bytes`` is the sum over every process seen of its own peak (``VmHWM``): the server's
    own peak when it starts no children, an upper bound of the tree's joint peak otherwise.
    """

    def __init__(self, pid: int, every: float = 0.5):
        self.pid, self.every = pid, every
        self.peaks: dict[int, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def sample(self) -> None:
        for p in [self.pid, *_children(self.pid)]:
            hwm = _hwm_bytes(p)
            if hwm is not None:
                self.peaks[p] = max(self.peaks.get(p, 0), hwm)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def stop(self) -> tuple[float, int]:
        """(peak in GB, number of processes seen), after a last sample."""
        self._stop.set()
        self._thread.join()
        self.sample()
        return sum(self.peaks.values()) / 2**30, len(self.peaks)


def measure(n: int, presses: int, weighting: str = "balanced", posterior: str | None = None,
            density_above: int | None = None, data: str | None = None,
            screenshots: Path | None = None, map_mode: str = "component") -> dict:
    """Start the app on moons of size ``n`` (or the file ``data``) and time ``presses`` labels.

    ``weighting`` is chosen in the sidebar before the first press ("balanced" is the default);
    ``posterior`` and ``density_above`` go to the app as ``LABELER_MODEL`` and
    ``LABELER_MAP_DENSITY_ABOVE``. With ``screenshots`` (a folder), the page is saved there
    after start-up and after the presses.
    """
    env = {}
    if posterior is not None:
        env["LABELER_MODEL"] = json.dumps({"posterior": posterior})
    if density_above is not None:
        env["LABELER_MAP_DENSITY_ABOVE"] = str(density_above)
    env["LABELER_MAP_COMPONENT"] = "1" if map_mode == "component" else "0"
    with tempfile.TemporaryDirectory(prefix="labeler-bench-") as tmp:
        t_start = time.perf_counter()
        with AppServer(Path(tmp) / "store.sqlite", data_options=None if data else {"n": n},
                       data=data, timeout=1800, env=env) as server, browser_page() as page:
            t_server = time.perf_counter() - t_start
            received = [0]  # bytes the page received over its websocket (Streamlit's messages)

            def on_socket(ws):
                ws.on("framereceived", lambda frame: received.__setitem__(
                    0, received[0] + len(frame if isinstance(frame, (bytes, str)) else b"")))

            page.on("websocket", on_socket)
            memory = PeakMemory(server.proc.pid)
            try:
                page.goto(server.url)  # start-up of a large pool (factor, layout): minutes
                page.wait_for_selector(POINT_TAG, timeout=3_600_000)
                open_app(page, server.url)
            except Exception:
                print(server.log(), file=sys.stderr)
                raise
            t_ready = time.perf_counter() - t_start
            memory.sample()
            peak_startup_gb = sum(memory.peaks.values()) / 2**30
            map_kind = page.evaluate(_MAP_KIND)
            tag = Path(data).stem if data else f"moons{n}"
            if screenshots is not None:
                screenshots.mkdir(parents=True, exist_ok=True)
                page.wait_for_timeout(2000)
                page.screenshot(path=str(screenshots / f"{tag}-startup.png"), full_page=True)
            if weighting != "balanced":
                label = {"none": "None"}[weighting]
                # exact text: other sidebar labels contain "none" too, e.g. "(0 = none)"
                page.locator('[data-testid="stSidebar"] label').filter(
                    has_text=re.compile(rf"^\s*{label}\s*$")).first.click()
                page.wait_for_timeout(3000)
                focus_page(page)
            keys = class_keys(page)
            names = list(keys)
            page.evaluate(_INSTALL)
            to_query, to_map, sizes = [], [], []
            for k in range(presses + 1):  # the first press warms up (JIT, caches): not counted
                bytes_before = received[0]
                press(page, keys[names[k % len(names)]])
                page.wait_for_function("() => window.__lat.tQuery !== null && window.__lat.tMap !== null",
                                       timeout=120_000, polling="raf")
                lat = page.evaluate("() => window.__lat")
                if k > 0:
                    to_query.append(lat["tQuery"] - lat["t0"])
                    to_map.append(lat["tMap"] - lat["t0"])
                page.wait_for_timeout(300)  # let the rest of the page settle before the next press
                wait_idle(page)
                if k > 0:
                    sizes.append(received[0] - bytes_before)
            if screenshots is not None:
                page.wait_for_timeout(2000)
                page.screenshot(path=str(screenshots / f"{tag}-after-{presses + 1}-labels.png"),
                                full_page=True)
                # the map coloured by the predictions (after the timing: it reruns the page)
                page.locator('.st-key-color_mode button:has-text("predicted class")').first.click()
                wait_idle(page, timeout=600_000)
                page.wait_for_timeout(2000)
                page.screenshot(path=str(screenshots / f"{tag}-predicted.png"), full_page=True)
            peak_gb, n_proc = memory.stop()
            return dict(n=n, presses=presses, weighting=weighting, ready_s=t_ready, map=map_kind,
                        server_s=t_server, peak_gb=peak_gb, peak_startup_gb=peak_startup_gb,
                        processes=n_proc,
                        data=Path(data).name if data else "moons",
                        posterior=posterior or "(default)",
                        query_median=statistics.median(to_query), query_max=max(to_query),
                        map_median=statistics.median(to_map), map_max=max(to_map),
                        map_mode=map_mode, kb_per_press=statistics.median(sizes) / 1024)


def rows_of(path: str) -> int:
    """Rows of a Parquet (its metadata) or CSV file (its lines, less the header)."""
    if path.lower().endswith(".parquet"):
        import pyarrow.parquet as pq

        return pq.ParquetFile(path).metadata.num_rows
    with open(path, "rb") as fh:
        return sum(1 for _ in fh) - 1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 20000])
    parser.add_argument("--presses", type=int, default=40)
    parser.add_argument("--weightings", nargs="+", default=["balanced", "none"],
                        choices=["balanced", "none"])
    parser.add_argument("--posterior", default=None,
                        help="the app's posterior (LABELER_MODEL), e.g. auto, dense, nystrom")
    parser.add_argument("--density-above", type=int, nargs="+", default=[None],
                        help="pool sizes above which the map is a density image (one run each)")
    parser.add_argument("--data", default=None,
                        help="a CSV or Parquet file to open instead of two-moons (--sizes is then ignored)")
    parser.add_argument("--map", choices=["component", "chart"], nargs="+", default=["component"],
                        help="the map changed in place (component) or st.plotly_chart (chart); one run each")
    parser.add_argument("--screenshots", type=Path, default=None,
                        help="folder for PNGs of the page after start-up and after the presses")
    args = parser.parse_args(argv)
    if args.data is not None and not Path(args.data).is_file():
        parser.error(f"--data {args.data}: no such file (make one: python benchmarks/make_large_file.py PATH)")
    if chromium_path() is None:
        print("Chromium is missing (apt-get install chromium): cannot measure.", file=sys.stderr)
        return 2
    load_before = os.getloadavg()[0]
    sizes = [rows_of(args.data)] if args.data else args.sizes
    rows = [measure(n, args.presses, w, args.posterior, d, args.data, args.screenshots, m)
            for n in sizes for w in args.weightings for d in args.density_above for m in args.map]
    print()
    print(f"load average (1 min) {load_before:.1f} before, {os.getloadavg()[0]:.1f} after; "
          f"{os.cpu_count()} cores")
    print("| data | n | weighting | posterior | map | presses | server up (s) | start-up to first query (s) "
          "| key -> next query shown, median (max) ms | key -> map updated, median (max) ms "
          "| received per press, median (kB) "
          "| server peak RSS after start-up, at the end (GB) | target (query shown) | met "
          "| target (map updated) | met |")
    print("|---|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|:---:|---:|:---:|")
    for r in rows:
        target = TARGETS_MS.get(r["n"])
        met = "" if target is None else ("yes" if r["query_median"] <= target else "NO")
        procs = "" if r["processes"] == 1 else f" ({r['processes']} processes)"
        map_target = MAP_TARGETS_MS.get(r["n"])
        map_met = "" if map_target is None else ("yes" if r["map_median"] <= map_target else "NO")
        print(f"| {r['data']} | {r['n']:,} | {r['weighting']} | {r['posterior']} | {r['map']} ({r['map_mode']}) "
              f"| {r['presses']} "
              f"| {r['server_s']:.1f} | {r['ready_s']:.1f} | {r['query_median']:.0f} "
              f"({r['query_max']:.0f}) | {r['map_median']:.0f} ({r['map_max']:.0f}) | {r['kb_per_press']:.1f} | "
              f"{r['peak_startup_gb']:.2f}, {r['peak_gb']:.2f}{procs} | "
              f"{'' if target is None else f'{target:.0f} ms'} | {met} "
              f"| {'' if map_target is None else f'{map_target:.0f} ms'} | {map_met} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
