"""Key press -> next query in a ``model="auto"`` session, the model choice's evaluations in step or in the background.

One session per mode and pool size on two-moons with the app's defaults (model "auto": on
two-moons the harmonic function answers first, the pool's graph splitting into the two moons;
the candidates RLS, harmonic, LGC and Poisson are compared by exact
leave-one-out after every label up to 50), labelled by the truth; each key press is
``session.label(q, y[q])`` followed by ``session.next_query()`` (what the app's request does),
timed. In step a press that makes an evaluation due also runs every candidate's exact LOO (one
solve per label for each graph model); in the background (the app's mode,
``labeler.session.choice_job``) it only starts the evaluation, or takes a finished one (a
switch: the worker's learner given the labels added since). Printed per row: median, 95th
percentile and maximum of the presses, the evaluations taken, the switches written, the
model answering and the process's resident memory at the end, the 1-minute load average (the machine may be shared: compare the
modes within one run). ``--think`` waits between presses (a person reading the next point);
0 is the worst case for the background (the worker competes with every press). The column
"worker" is the median time of one background evaluation (``ChoiceJob.compute``: the RLS
candidate's re-tunes and every candidate's LOO). ``--rls-candidate full`` evaluates a dense RLS
candidate on a full learner of its own (an n x n matrix, rebuilt at each width re-tune) instead
of its labelled block (``core.selection.block_rls``, the default), to compare the two.

Usage::

    python benchmarks/model_choice_latency.py                   # n = 1,000 and 5,000, 40 presses
    python benchmarks/model_choice_latency.py --n 3000 --presses 20 --think 1
    python benchmarks/model_choice_latency.py --n 3000 --presses 30 --rls-candidate full
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from labeler.runtime import configure_threads  # noqa: E402

configure_threads()

import numpy as np  # noqa: E402

from labeler.session import LabelingSession, SessionConfig  # noqa: E402
from labeler.session import choice_job, model, model_selection, rls_candidate  # noqa: E402
from labeler.store import Store  # noqa: E402

_WORKER = []  # seconds of each background evaluation


def _resident_mb() -> float:
    """The process's resident memory now (Linux), in MB; NaN elsewhere."""
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024
    except (OSError, StopIteration, ValueError):
        return float("nan")


def _timed(compute):
    def run(self):
        t = time.perf_counter()
        try:
            return compute(self)
        finally:
            _WORKER.append(time.perf_counter() - t)
    return run


def _full_candidates() -> None:
    """A dense RLS candidate as a full learner of its own (the comparison of ``--rls-candidate full``)."""
    def build(spec, X, classes, parts=None):
        return model.build_learner(spec, X, list(classes), parts=parts)

    for module in (rls_candidate, choice_job, model_selection):
        module.build_candidate = build
        module.as_candidate = lambda base, learner, X: learner


def presses(n, k, background, folder, think=0.0):
    store = os.path.join(folder, f"{n}-{'bg' if background else 'sync'}.sqlite")
    s = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": n}, seed=0,
                                                    model="auto"))
    s.retune_in_background(background)
    y = s.dataset.y
    times, taken = [], 0
    _WORKER.clear()
    q = s.next_query()
    for _ in range(k):
        job = s.model_choice._job
        t = time.perf_counter()
        s.label(q, str(y[q]), expected_query=q)
        q = s.next_query()
        times.append(time.perf_counter() - t)
        taken += int(job is not None and s.model_choice._job is not job)
        if q is None:
            break
        if think:
            time.sleep(think)
    with Store(store) as st:
        switches = sum(1 for e in st.events(s.id) if e.kind == "setting" and e.value.get("name") == "model")
    s.model_choice.wait(600)
    model = s.config.model
    rss = _resident_mb()
    s.close()
    return np.array(times), taken, switches, model, list(_WORKER), rss


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1_000, 5_000])
    ap.add_argument("--presses", type=int, default=40)
    ap.add_argument("--think", type=float, default=0.0, help="seconds between presses")
    ap.add_argument("--rls-candidate", choices=("block", "full"), default="block",
                    help="a dense RLS candidate's learner: its labelled block (the default) or a full one")
    ap.add_argument("--background-only", action="store_true", help="skip the in-step sessions")
    args = ap.parse_args(argv)
    if args.rls_candidate == "full":
        _full_candidates()
    choice_job.ChoiceJob.compute = _timed(choice_job.ChoiceJob.compute)
    print(f"two-moons, model auto, {args.presses} key presses from the first label, {args.think:g} s between presses, "
          f"RLS candidate: {args.rls_candidate}")
    print("| n | evaluations | median | 95th percentile | max | background evaluations taken | worker "
          "| switches written | model at the end | memory at the end | load average |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for n in args.n:
            for background in (True,) if args.background_only else (False, True):
                t, taken, switches, model, worker, rss = presses(n, args.presses, background, folder, args.think)
                busy = f"{1e3 * np.median(worker):.0f} ms" if worker else "-"
                print(f"| {n:,} | {'background' if background else 'in step'} | {1e3 * np.median(t):.0f} ms | "
                      f"{1e3 * np.percentile(t, 95):.0f} ms | {1e3 * t.max():.0f} ms | "
                      f"{taken if background else '-'} | {busy} | {switches} | {model} | {rss:.0f} MB | "
                      f"{os.getloadavg()[0]:.1f} |",
                      flush=True)
    import resource
    print(f"peak resident memory of this run: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()
