"""Which batch rule labels better: greedy expected risk, diverse, or the k best scored alone?

Simulated labelling on built-in data sets (the true labels answer every query): from a few
stratified initial labels, rounds of k queries are chosen by a rule and labelled at once
(``session.label_many(..., via="batch")``), up to a budget; after each round the accuracy of the
model's predictions on the whole pool is recorded. Rules:

* ``greedy``  -- :func:`labeler.session.batch.batch_queries` rule "greedy" (hypothetical labels);
* ``diverse`` -- rule "diverse" (farthest first among the 10 k best-scored);
* ``top-k``   -- the k lowest expected risks scored alone (``core.strategies.query_batch``);
* ``one-by-one`` -- k = 1 (the sequential reference: what a batch gives up).

Prints, per data set and rule, the mean pool accuracy over seeds after each quarter of the
budget and the area under the accuracy curve (mean accuracy over the rounds), rules compared in
the same run.

Usage::

    python benchmarks/batch_queries.py [--data moons digits] [--seeds 3] [--budget 60] [--k 5]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core import strategies  # noqa: E402
from labeler.session import LabelingSession, SessionConfig  # noqa: E402
from labeler.session.batch import batch_queries  # noqa: E402

RULES = ("greedy", "diverse", "top-k", "one-by-one")
OPTIONS = {"moons": {"n": 600}, "circles": {"n": 600}, "moons-imbalanced": {"n": 600}}


def pick(s, rule: str, k: int) -> list[int]:
    if rule in ("greedy", "diverse"):
        return batch_queries(s, k, rule).tolist()
    if rule == "one-by-one":
        return [s.next_query()]
    exclude = np.asarray(s.skipped, dtype=np.intp)
    return strategies.query_batch(s.learner, s.config.strategy, k, np.random.default_rng(s.n_events),
                                  exclude=exclude).tolist()


def run(data: str, rule: str, seed: int, budget: int, k: int, initial: int) -> list[float]:
    with tempfile.TemporaryDirectory(prefix="labeler-batch-") as tmp:
        cfg = SessionConfig(dataset=data, dataset_options=dict(OPTIONS.get(data, {})), seed=seed,
                            strategy="arls", initial_labels=initial)
        s = LabelingSession.create(Path(tmp) / "s.sqlite", cfg)
        truth = np.asarray(s.dataset.y).astype(str)
        curve = []
        while s.n_labeled < initial + budget:
            picks = pick(s, rule, k)
            s.label_many({i: truth[i] for i in picks}, "batch")
            if (s.n_labeled - initial) % k == 0:
                pred = np.asarray(s.predictions()["predicted"]).astype(str)
                curve.append(float((pred == truth).mean()))
        s.close()
        return curve


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=["moons", "digits"])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--initial", type=int, default=4)
    args = parser.parse_args(argv)
    print(f"\nbatch size k = {args.k}, budget {args.budget} labels after {args.initial} initial ones, "
          f"{args.seeds} seeds; pool accuracy (mean over seeds)\n")
    q = [args.budget // 4 * j // args.k - 1 for j in (1, 2, 3, 4)]
    head = " | ".join(f"after {args.budget // 4 * j}" for j in (1, 2, 3, 4))
    print(f"| data | rule | {head} | mean over rounds | time (s) |")
    print("|---|---|" + "---:|" * 6)
    for data in args.data:
        for rule in RULES:
            t = time.perf_counter()
            curves = np.array([run(data, rule, seed, args.budget, args.k, args.initial)
                               for seed in range(args.seeds)])
            mean = curves.mean(axis=0)
            cells = " | ".join(f"{mean[j]:.3f}" for j in q)
            print(f"| {data} | {rule} | {cells} | {mean.mean():.3f} | {time.perf_counter() - t:.0f} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
