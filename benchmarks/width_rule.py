"""How often the automatic width re-tune moves the width, and what it does to learning.

A session is made as the app makes it (``SessionConfig(dataset, seed=s)``, the app's defaults:
width and lam "auto", re-tuned after every label up to 50 labels) and the queried points get
their true labels. For each rule of :func:`core.rls.tuning.auto_tune` -- ``width_alpha`` None
(the width moves on any strictly lower LOO error) or a significance of the sign test -- it
prints the mean number of width moves and the accuracy on the whole pool at a few label counts.
Each move is an O(n^2 |L|) rebuild of the learner (seconds at n = 20,000).

Usage::

    python benchmarks/width_rule.py                       # moons 10 seeds, magic and digits 4
    python benchmarks/width_rule.py --data moons --seeds 3 --labels 45 --n 20000 --alphas none 0.3
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings
from pathlib import Path

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from core.rls import tuning  # noqa: E402
from labeler.session import LabelingSession, SessionConfig  # noqa: E402

CHECKPOINTS = (15, 25, 40, 60)


def run(dataset: str, alpha, seeds: int, labels: int, n: int | None) -> dict:
    """Mean width moves and accuracy at :data:`CHECKPOINTS` (those <= ``labels``)."""
    tuning.auto_tune.__kwdefaults__["width_alpha"] = alpha  # the session's tuner, this rule
    moves, acc = [], {k: [] for k in CHECKPOINTS if k <= labels}
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(seeds):
            options = {} if n is None else {"n": n}
            s = LabelingSession.create(Path(tmp) / f"{seed}.sqlite",
                                       SessionConfig(dataset=dataset, dataset_options=options, seed=seed))
            y = np.asarray(s.dataset.y).astype(str)
            count = 0
            for k in range(labels):
                q = s.next_query()
                before = s.config.width
                s.label(q, y[q], expected_query=q)
                count += s.config.width != before
                if k + 1 in acc:
                    acc[k + 1].append(float(np.mean(np.asarray(s.learner.predict()).astype(str) == y)))
            moves.append(count)
            s.close()
    return {"moves": float(np.mean(moves)), "accuracy": {k: 100 * float(np.mean(v)) for k, v in acc.items()}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=["moons", "magic", "digits"])
    parser.add_argument("--seeds", type=int, nargs="+", default=None,
                        help="seeds per data set (default 10 for moons, 4 otherwise)")
    parser.add_argument("--labels", type=int, default=None, help="default 40 for moons, 60 otherwise")
    parser.add_argument("--n", type=int, default=None, help="pool size of a built-in (default its own)")
    parser.add_argument("--alphas", nargs="+", default=["none", "0.3"])
    args = parser.parse_args(argv)
    default = tuning.auto_tune.__kwdefaults__["width_alpha"]
    print(f"load average (1 min) {os.getloadavg()[0]:.1f}; 2 rules per data set, same seeds")
    print("| data | seeds | rule (width_alpha) | width moves | accuracy % at " +
          " / ".join(str(k) for k in CHECKPOINTS) + " labels |")
    print("|---|---:|---|---:|---|")
    try:
        for i, data in enumerate(args.data):
            seeds = (args.seeds[i] if args.seeds and i < len(args.seeds) else
                     (args.seeds[-1] if args.seeds else (10 if data == "moons" else 4)))
            labels = args.labels or (40 if data == "moons" else 60)
            for a in args.alphas:
                alpha = None if a == "none" else float(a)
                r = run(data, alpha, seeds, labels, args.n)
                accs = " / ".join(f"{r['accuracy'][k]:.2f}" if k in r["accuracy"] else "-" for k in CHECKPOINTS)
                print(f"| {data}{'' if args.n is None else f' ({args.n:,})'} | {seeds} | {a} | "
                      f"{r['moves']:.1f} | {accs} |", flush=True)
    finally:
        tuning.auto_tune.__kwdefaults__["width_alpha"] = default
    return 0


if __name__ == "__main__":
    sys.exit(main())
