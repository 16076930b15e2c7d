"""Where one key press goes on the server: the page's rerun after a label, split by function.

Runs the app's page (``labeler/app.py``) in this process with Streamlit's ``AppTest`` (no
browser, no websocket) on a data file or two-moons, then labels ``--presses`` queries one after
the other the way a key press does (the class button of the shown query is clicked and the page
reruns), after one warm-up press that is not counted. Every function named in :data:`TARGETS`
is timed inclusively (a wrapper around it, in every module that holds it), and the table gives
the median and maximum milliseconds per press of each, with the whole rerun and the part of it
up to the point panel's title on top (the browser shows the next query when that element
arrives, while the rest of the page still runs): the label's update, the stopping checkpoint, the risk estimate written with the label,
the next query, the predictions table, the page's map and panels. Times are wall-clock times
on a shared machine: compare the rows of one run, or two runs back to back (the load average is
printed with each).

``--py-spy FILE`` also samples the process with py-spy during the presses (raw collapsed
stacks in FILE) and prints the functions of this repository with the most samples (inclusive),
to find what :data:`TARGETS` does not name.

The browser's share (websocket, rendering) is not here: ``benchmarks/ui_latency.py`` measures
key -> next query shown in Chromium.

Usage::

    python benchmarks/press_split.py --n 2000 --presses 5
    python benchmarks/press_split.py --data /tmp/million.parquet --posterior auto --presses 8
    python benchmarks/press_split.py --data /tmp/million.parquet --posterior auto --presses 8 --py-spy /tmp/press.txt
"""

from __future__ import annotations

import argparse
import collections
import functools
import importlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
APP = str(REPO / "labeler" / "app.py")

#: ``module:attribute path`` of the functions timed (inclusive: nested ones count in both).
TARGETS = [
    "labeler.session.session:LabelingSession.refresh",
    "labeler.session.session:LabelingSession.label",
    "core.learner.arls:ActiveRLS.add",
    "core.learner.arls:ActiveRLS._save",
    "core.learner.arls:ActiveRLS._refresh_lambdas",
    "core.learner.updates:add_reweight_step",
    "core.posteriors.factor:FactorPosterior.combine",
    "core.posteriors.factor:FactorPosterior.block",
    "labeler.store.store:Store.append",
    "labeler.session.settings:Settings.after_labels_change",
    "labeler.session.settings:Settings._record_stopping",
    "labeler.session.model_selection:ModelChoice.after_labels_change",
    "core.learner.state:LearnerState.estimated_risk",
    "labeler.store.store:Store.put_risks",
    "labeler.session.session:LabelingSession.next_query",
    "core.strategies:query_one",
    "core.criteria.subsampled:SubsampledExpectedRisk.choose",
    "core.criteria.subsampled:SubsampledExpectedRisk.score",
    "labeler.store.store:Store.put_query",
    "labeler.ui.view:build_view",
    "labeler.session.views:Views.predictions",
    "labeler.session.views:Views._soft",
    "labeler.session.views:Views.calibration",
    "labeler.session.views:Views.pool_error_rate",
    "labeler.ui.view:class_codes",
    "labeler.session.views:Views.point_codes",
    "labeler.session.session:LabelingSession.class_counts",
    "labeler.session.session:LabelingSession.model_summary",
    "labeler.ui.state:sync_selection",
    "labeler.ui.point_panel:render_point_panel",
    "labeler.ui.figures:scatter_figure",
    "labeler.ui.map_component:render_map",
    "labeler.ui.sidebar:render_sidebar",
    "labeler.ui.charts:render_progress",
    "labeler.ui.charts:render_query_explanation",
    "labeler.session.views:Views.explain_query",
    "labeler.session.views:Views.stopping_signal",
    "labeler.ui.view:map_hover_texts",
]


class Timers:
    """Inclusive wall-clock time of each target per press (calls of one press summed)."""

    def __init__(self):
        self.now = collections.defaultdict(float)  # this press
        self.calls = collections.defaultdict(int)
        self.per_press: list[dict] = []
        self._undo = []

    def wrap(self, spec: str) -> None:
        module_name, path = spec.split(":")
        owner = importlib.import_module(module_name)
        *parents, name = path.split(".")
        for part in parents:
            owner = getattr(owner, part)
        original = getattr(owner, name, None)
        if original is None:  # not in this version of the code: its row stays empty
            return
        func = original.fget if isinstance(original, property) else original
        timers = self

        @functools.wraps(func)
        def timed(*args, **kwargs):
            t = time.perf_counter()
            try:
                return func(*args, **kwargs)
            finally:
                timers.now[path] += time.perf_counter() - t
                timers.calls[path] += 1

        replacement = property(timed, original.fset) if isinstance(original, property) else timed
        setattr(owner, name, replacement)
        self._undo.append((owner, name, original))
        if not parents:  # a plain function: also where other modules imported it by name
            for mod in list(sys.modules.values()):
                if mod is not None and mod is not owner and getattr(mod, name, None) is original:
                    setattr(mod, name, replacement)
                    self._undo.append((mod, name, original))

    def mark_title(self, start: float) -> None:
        """Time the page's point title (the new query) from ``start``: the browser shows the
        next query when this element arrives, before the rest of the rerun runs."""
        import labeler.ui.point_panel as panel

        original = panel._number_panel
        timers = self

        def numbered(index):
            timers.now.setdefault("(to the point's title)", time.perf_counter() - timers.start)
            return original(index)

        panel._number_panel = numbered
        self._undo.append((panel, "_number_panel", original))
        self.start = start

    def end_press(self, total: float) -> None:
        row = dict(self.now)
        row["(whole rerun)"] = total
        self.per_press.append(row)
        self.now.clear()

    def restore(self) -> None:
        for owner, name, original in reversed(self._undo):
            setattr(owner, name, original)


def query_of(at) -> int | None:
    import re

    for md in at.markdown:
        m = re.search(r'class="point-tag" data-point="(\d*)" data-query="(\d*)"', md.value)
        if m:
            return int(m.group(2)) if m.group(2) else None
    return None


def press_label(at, k: int, timers=None) -> float:
    """Click the ``k``-th class button (cycling) of the shown query; the rerun's seconds."""
    q = query_of(at)
    keys = sorted(b.key for b in at.button if b.key and b.key.startswith("class_") and b.key.endswith(f"_{q}"))
    if not keys:
        raise SystemExit(f"no class button for the query {q}: {[b.key for b in at.button]}")
    button = at.button(key=keys[k % len(keys)])
    t = time.perf_counter()
    if timers is not None:
        timers.start = t
    button.click().run()
    took = time.perf_counter() - t
    if at.exception:
        raise SystemExit(f"the page raised: {at.exception}")
    if query_of(at) == q:
        raise SystemExit(f"the press on {q} was not applied")
    return took


def spy_top(path: Path, top: int = 40) -> list[tuple[str, float]]:
    """Share of samples (inclusive) per function of this repository in py-spy's raw output."""
    counts, total = collections.Counter(), 0
    repo = str(REPO)
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        if not n.isdigit():
            continue
        n = int(n)
        frames = stack.split(";")
        if not any("press_label" in f for f in frames):
            if not any("_run_script" in f for f in frames):
                continue  # only the script thread's samples (the page's rerun)
        total += n
        seen = set()
        for f in frames:
            if repo in f or "labeler/" in f or "core/" in f:
                name = f.split(" (")[0] + " (" + f.split(" (")[-1].replace(repo + "/", "").split(":")[0] + ")"
                if name not in seen:
                    seen.add(name)
                    counts[name] += n
    return [(name, c / max(total, 1)) for name, c in counts.most_common(top)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", help="CSV/Parquet/NPZ file (as `labeler app PATH`); default two-moons")
    ap.add_argument("--n", type=int, default=2000, help="two-moons size without --data")
    ap.add_argument("--posterior", default=None, help="dense, nystrom, spectral or auto (LABELER_MODEL)")
    ap.add_argument("--presses", type=int, default=8)
    ap.add_argument("--py-spy", dest="py_spy", type=Path, default=None, metavar="FILE")
    args = ap.parse_args(argv)

    load0 = os.getloadavg()
    tmp = tempfile.mkdtemp(prefix="press-split-")
    os.environ["LABELER_STORE"] = str(Path(tmp) / "store.sqlite")
    os.environ["LABELER_DATA_DIR"] = tmp
    os.environ.pop("LABELER_SESSION", None)
    if args.data:
        os.environ["LABELER_DATA"] = str(Path(args.data).resolve())
        os.environ.pop("LABELER_DATA_OPTIONS", None)
    else:
        os.environ["LABELER_DATA"] = "moons"
        os.environ["LABELER_DATA_OPTIONS"] = json.dumps({"n": args.n})
    if args.posterior:
        os.environ["LABELER_MODEL"] = json.dumps({"posterior": args.posterior})

    from labeler.runtime import configure_threads

    configure_threads()
    from streamlit.testing.v1 import AppTest

    t = time.perf_counter()
    at = AppTest.from_file(APP, default_timeout=3600)
    at.run()
    if at.exception:
        raise SystemExit(f"the page raised: {at.exception}")
    startup = time.perf_counter() - t
    print(f"start-up to the first query: {startup:.1f} s; load {load0[0]:.2f}", flush=True)

    timers = Timers()
    for spec in TARGETS:
        timers.wrap(spec)
    timers.mark_title(time.perf_counter())
    press_label(at, 0)  # warm-up: not counted
    timers.now.clear()
    timers.calls.clear()
    spy = None
    if args.py_spy is not None:
        exe = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
        spy = subprocess.Popen([exe, "record", "--pid", str(os.getpid()), "--rate", "50", "--format", "raw",
                                "--output", str(args.py_spy), "--nonblocking"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2.0)
    load1 = os.getloadavg()
    for k in range(1, args.presses + 1):
        timers.end_press(press_label(at, k, timers))
    load2 = os.getloadavg()
    if spy is not None:
        spy.send_signal(signal.SIGINT)
        spy.wait(timeout=60)
    timers.restore()

    names = ["(whole rerun)", "(to the point's title)"] + [s.split(":")[1] for s in TARGETS]
    n_label = REPO.name
    print(f"\n{args.data or f'moons {args.n}'}, posterior {args.posterior or '(default)'}, "
          f"{args.presses} presses; load {load1[0]:.2f} -> {load2[0]:.2f} ({n_label})")
    print(f"{'function (inclusive)':<58}{'median ms':>10}{'max ms':>9}{'calls':>7}")
    for name in names:
        xs = [row.get(name, 0.0) * 1e3 for row in timers.per_press]
        calls = timers.calls.get(name, len(xs) if name.startswith("(") else 0)
        print(f"{name:<58}{statistics.median(xs):>10.1f}{max(xs):>9.1f}{calls / len(xs):>7.1f}")
    if args.py_spy is not None and args.py_spy.exists():
        print(f"\npy-spy, the page's thread: share of samples per function (inclusive), {args.py_spy}")
        for name, share in spy_top(args.py_spy):
            print(f"{share:>6.1%}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
