"""What a graph-model session costs per action (issue 10 §2): create, label + next query, undo,
reopen, on the ``moons`` built-in (standardised, the app's defaults, a 10-NN graph).

Each label is the true label of the session's own next query (``LabelingSession.label`` then
``next_query``: the refit, the stopping checkpoint and the scores of the next pick). Harmonic
queries by "auto" (Zhu et al.'s exact expected risk for the first 10 labels, then margin) up to
5,000 points, by margin above; LGC by margin. Usage:
``python benchmarks/graph_session.py [--n 2000 10000] [--labels 20] [--models harmonic lgc poisson]``;
prints the load average.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from labeler.session import LabelingSession, SessionConfig  # noqa: E402


def run(n: int, model: str, labels: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "s.sqlite")
        t = time.perf_counter()
        s = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": n}, model=model,
                                                        layout="pca"))
        create = time.perf_counter() - t
        y = np.asarray(s.dataset.y)
        steps = []
        for _ in range(labels):
            t = time.perf_counter()
            q = s.next_query()
            s.label(q, str(y[q]))
            steps.append(time.perf_counter() - t)
        t = time.perf_counter()
        s.undo()
        s.next_query()
        undo = time.perf_counter() - t
        sid = s.id
        s.close()
        t = time.perf_counter()
        r = LabelingSession.open(store, sid)
        r.next_query()
        reopen = time.perf_counter() - t
        rest = np.setdiff1d(np.arange(n), list(r.learner.labels))
        acc = float(np.mean(r.learner.predict()[rest].astype(str) == y[rest].astype(str)))
        r.close()
    return {"create": create, "first10": float(np.mean(steps[:10])), "later": float(np.mean(steps[10:] or [np.nan])),
            "undo": undo, "reopen": reopen, "accuracy": acc}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, nargs="+", default=[2000, 10000])
    p.add_argument("--labels", type=int, default=20)
    p.add_argument("--models", nargs="+", default=["harmonic", "lgc"], choices=["harmonic", "lgc", "poisson"])
    args = p.parse_args(argv)
    print("| model | n | create | label + query (first 10) | (later) | undo | reopen | accuracy |")
    print("|---|---|---|---|---|---|---|---|")
    for n in args.n:
        for model in args.models:
            r = run(n, model, args.labels)
            print(f"| {model} | {n:,} | {r['create']:.2f} s | {r['first10']:.3f} s | {r['later']:.3f} s | "
                  f"{r['undo']:.3f} s | {r['reopen']:.2f} s | {100 * r['accuracy']:.1f} % |", flush=True)
    print("load average:", " ".join(f"{v:.2f}" for v in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
