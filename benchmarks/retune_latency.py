"""Key press -> next query in a labelling session, with the automatic re-tunes in step or in the background.

One dense session per mode on two-moons with the app's defaults (width and lam "auto"),
labelled by the truth; each key press is ``session.label(q, y[q])`` followed by
``session.next_query()`` (what the app's request does), timed. With the re-tunes in step a
press that makes a re-tune due also runs the tuner and, when the width or lam moves, rebuilds
the n x n model; in the background (the app's mode, ``labeler.session.retune``) it only
applies a finished result (the labels added since, as incremental updates). Printed per mode:
median, 95th percentile and maximum of the presses, the re-tunes that moved a value, and the
load average (the machine is shared: compare the modes within one run).

Usage::

    python benchmarks/retune_latency.py                 # n = 10,000, 40 presses
    python benchmarks/retune_latency.py --n 3000 --presses 20
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


def presses(n, k, background, folder):
    store = os.path.join(folder, f"{'bg' if background else 'sync'}.sqlite")
    s = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": n}, seed=0,
                                                    posterior="dense"))
    s.retune_in_background(background)
    y = s.dataset.y
    times = []
    q = s.next_query()
    for _ in range(k):
        t = time.perf_counter()
        s.label(q, str(y[q]), expected_query=q)
        q = s.next_query()
        times.append(time.perf_counter() - t)
        if q is None:
            break
    with Store(store) as st:
        moved = sum(1 for e in st.events(s.id) if e.kind == "setting" and e.value.get("auto"))
    s.close()
    return np.array(times), moved


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--presses", type=int, default=40)
    args = ap.parse_args(argv)
    print(f"two-moons, n = {args.n:,}, {args.presses} key presses from the first label; dense posterior")
    print("| re-tunes | median | 95th percentile | max | re-tunes written | load average |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for background in (False, True):
            t, moved = presses(args.n, args.presses, background, folder)
            print(f"| {'background' if background else 'in step'} | {1e3 * np.median(t):.0f} ms | "
                  f"{1e3 * np.percentile(t, 95):.0f} ms | {1e3 * t.max():.0f} ms | {moved} | "
                  f"{os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
