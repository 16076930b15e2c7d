"""The server's side of a key press in the app, without a browser: where its time goes.

A session as ``labeler app`` makes it (two-moons of n points, the app's defaults: RLS,
"balanced" weights, re-tunes in the background; ``--posterior``, default dense: the exact learner), then ``--presses`` key presses after one
warm-up, as ``benchmarks/ui_latency.py`` presses them (the query labelled with the classes in
turn): ``LabelingSession.label(q, label, expected_query=q)`` then ``next_query()``, and what
the page reads on the rerun that follows (``predictions``, ``confidence_bins``,
``stopping_signal``, ``model_summary``). Each press is split into its parts by timing the
methods it calls: the learner's update (``learner.add``), the re-tune and stopping
bookkeeping, the store, the scoring of the next query, the page's reads.

``--trees A B ...`` runs the same measurement on other checkouts of the project (each in its
own process, alternating A, B, A, B for ``--rounds`` rounds), so that code before and after a
change are timed back to back on the same machine load; the load average is printed with
each run. Usage::

    python benchmarks/key_press_step.py --n 20000 --presses 20
    python benchmarks/key_press_step.py --n 20000 --presses 20 --trees /path/to/main . --rounds 2
    python benchmarks/key_press_step.py --n 20000 --presses 30 --posterior nystrom --classes 10
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _timed(obj, name: str, bucket: dict, key: str) -> None:
    """Wrap ``obj.name`` so that the seconds of each call are added to ``bucket[key]``."""
    inner = getattr(obj, name)

    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            bucket[key] = bucket.get(key, 0.0) + time.perf_counter() - t

    setattr(obj, name, wrapper)


PARTS = ("press", "label", "learner.add", "retune+stopping", "store", "estimated_risk", "next_query",
         "score", "page reads")


def _blobs_file(folder: Path, n: int, n_classes: int) -> str:
    """A CSV of ``n`` points in 8 dimensions around ``n_classes`` Gaussian centres (standard
    deviation 4, so the classes overlap; seed 0) with its label column."""
    import pandas as pd
    from sklearn.datasets import make_blobs

    X, y = make_blobs(n, n_features=8, centers=n_classes, cluster_std=4.0, random_state=0)
    path = folder / f"blobs-{n}-{n_classes}.csv"
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(8)])
    frame["label"] = [f"c{v}" for v in y]
    frame.to_csv(path, index=False)
    return str(path)


def measure(n: int, presses: int, posterior: str = "dense", verbose: bool = False, classes: int = 2) -> dict:
    """Time ``presses`` key presses on a new session of ``n`` moons (this process's code), or
    of ``classes`` > 2 overlapping blobs."""
    from labeler.runtime import configure_threads

    configure_threads()
    from labeler.session import LabelingSession, SessionConfig

    rows = []
    with tempfile.TemporaryDirectory(prefix="key-press-") as tmp:
        t = time.perf_counter()
        data, options = ("moons", {"n": n}) if classes <= 2 else (_blobs_file(Path(tmp), n, classes), {})
        s = LabelingSession.create(Path(tmp) / "s.sqlite", SessionConfig(dataset=data, dataset_options=options,
                                                                         layout="pca", posterior=posterior))
        s.retune_in_background(True)
        create_s = time.perf_counter() - t
        bucket: dict = {}
        learner = s.learner
        _timed(learner, "add", bucket, "learner.add")
        crit = learner.risk_criterion
        _timed(crit, "score", bucket, "score")
        _timed(s.settings, "after_labels_change", bucket, "retune+stopping")
        _timed(s.model_choice, "after_labels_change", bucket, "retune+stopping")
        _timed(s._store, "append", bucket, "store")
        _timed(s._store, "put_risks", bucket, "store")
        _timed(s._store, "put_query", bucket, "store")
        _timed(learner, "estimated_risk", bucket, "estimated_risk")
        classes = list(s.classes)
        s.next_query()
        for k in range(presses + 1):
            bucket.clear()
            q = s.next_query()
            t0 = time.perf_counter()
            s.label(q, classes[k % len(classes)], expected_query=q)
            t1 = time.perf_counter()
            s.next_query()
            t2 = time.perf_counter()
            s.predictions()
            s.confidence_bins()
            s.stopping_signal()
            s.model_summary()
            t3 = time.perf_counter()
            if s.learner is not learner:  # a re-tune swapped the learner in: time the new one too
                learner = s.learner
                _timed(learner, "add", bucket, "learner.add")
                _timed(learner, "estimated_risk", bucket, "estimated_risk")
                crit = learner.risk_criterion
                _timed(crit, "score", bucket, "score")
            if k == 0:
                continue  # warm-up
            row = {"press": t2 - t0, "label": t1 - t0, "next_query": t2 - t1, "page reads": t3 - t2}
            row.update({key: bucket.get(key, 0.0) for key in PARTS if key not in row})
            rows.append(row)
            if verbose:
                print(f"press {k}: labels {s.n_labeled}, " + ", ".join(f"{key} {1e3 * v:.0f}" for key, v in row.items()),
                      file=sys.stderr, flush=True)
        s.close()
    return {"n": n, "presses": presses, "create_s": create_s, "posterior": posterior,
            "median": {key: statistics.median(r[key] for r in rows) for key in PARTS},
            "p95": {key: sorted(r[key] for r in rows)[int(0.95 * (len(rows) - 1))] for key in PARTS},
            "load": os.getloadavg()[0]}


def run_tree(tree: Path, n: int, presses: int, posterior: str, classes: int = 2) -> dict:
    """:func:`measure` in a new process with ``tree`` first on the path."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    code = (f"import json, sys; sys.path.insert(0, {str(tree)!r}); "
            f"sys.path.insert(0, {str(Path(__file__).resolve().parent)!r}); "
            f"import key_press_step as k; print(json.dumps(k.measure({n}, {presses}, {posterior!r}, "
            f"classes={classes})))")
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=str(tree), capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=20000)
    p.add_argument("--presses", type=int, default=20)
    p.add_argument("--trees", nargs="*", default=None, help="checkouts to time in turn (default: this one, in process)")
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--verbose", action="store_true", help="each press's parts (this checkout only)")
    p.add_argument("--posterior", default="dense", help="the session's posterior (default dense: the exact learner; "
                   "the app's default 'auto' takes nystrom above 17,320 points; a dense posterior beyond that picks by the subsampled expected risk)")
    p.add_argument("--classes", type=int, default=2,
                   help="above 2: that many overlapping Gaussian blobs in 8 dimensions instead of two-moons")
    args = p.parse_args(argv)
    header = ["tree", "round", "load before", "load after"] + [f"{k} (ms)" for k in PARTS] + ["p95 press (ms)"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    trees = [None] if not args.trees else [Path(t).resolve() for t in args.trees]
    for rnd in range(1, args.rounds + 1):
        for tree in trees:
            before = os.getloadavg()[0]
            r = (measure(args.n, args.presses, args.posterior, args.verbose, args.classes) if tree is None
                 else run_tree(tree, args.n, args.presses, args.posterior, args.classes))
            cells = [str(tree or "."), str(rnd), f"{before:.2f}", f"{r['load']:.2f}"]
            cells += [f"{1e3 * r['median'][k]:.0f}" for k in PARTS] + [f"{1e3 * r['p95']['press']:.0f}"]
            print("| " + " | ".join(cells) + " |", flush=True)
    print(f"n = {args.n:,}, {args.classes} classes, posterior {args.posterior}, {args.presses} presses after one warm-up, medians per part "
          "(press = label + next query; the parts overlap: label holds learner.add, retune+stopping, store, "
          "estimated_risk; next_query holds score)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
