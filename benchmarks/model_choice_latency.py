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
percentile and maximum of the presses, the evaluations taken, the switches written and the
model answering at the end, the 1-minute load average (the machine may be shared: compare the
modes within one run). ``--think`` waits between presses (a person reading the next point);
0 is the worst case for the background (the worker competes with every press).

Usage::

    python benchmarks/model_choice_latency.py                   # n = 1,000 and 5,000, 40 presses
    python benchmarks/model_choice_latency.py --n 3000 --presses 20 --think 1
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
from labeler.store import Store  # noqa: E402


def presses(n, k, background, folder, think=0.0):
    store = os.path.join(folder, f"{n}-{'bg' if background else 'sync'}.sqlite")
    s = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": n}, seed=0,
                                                    model="auto"))
    s.retune_in_background(background)
    y = s.dataset.y
    times, taken = [], 0
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
    model = s.config.model
    s.close()
    return np.array(times), taken, switches, model


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1_000, 5_000])
    ap.add_argument("--presses", type=int, default=40)
    ap.add_argument("--think", type=float, default=0.0, help="seconds between presses")
    args = ap.parse_args(argv)
    print(f"two-moons, model auto, {args.presses} key presses from the first label, {args.think:g} s between presses")
    print("| n | evaluations | median | 95th percentile | max | background evaluations taken "
          "| switches written | model at the end | load average |")
    print("|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for n in args.n:
            for background in (False, True):
                t, taken, switches, model = presses(n, args.presses, background, folder, args.think)
                print(f"| {n:,} | {'background' if background else 'in step'} | {1e3 * np.median(t):.0f} ms | "
                      f"{1e3 * np.percentile(t, 95):.0f} ms | {1e3 * t.max():.0f} ms | "
                      f"{taken if background else '-'} | {switches} | {model} | {os.getloadavg()[0]:.1f} |",
                      flush=True)


if __name__ == "__main__":
    main()
