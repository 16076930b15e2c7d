"""Model choice by exact LOO (issue 20 §2) against the app's default, paired per seed.

Runs ``benchmarks/defaults.py``'s methods ``default``, ``auto-model`` (LOO weighted by the pool
mass of each label) and ``auto-model-plain`` (unweighted LOO) on the benchmark's FIRST half and
prints, per task, the AUBC (10 -> 100 labels) of each and the paired differences (mean over the
seeds both ran, with the seeds' spread), then the mean over tasks and the adoption rule's
verdict: adopted when ahead on the mean AND no task loses more than 1 point.

Usage::

    python benchmarks/auto_model.py --seeds 3            # run (resumable), then the table
    python benchmarks/auto_model.py --seeds 3 --report   # the table only
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import defaults as bench  # noqa: E402  (configures threads before numpy)

import numpy as np  # noqa: E402

OUT = bench.ROOT / "benchmarks" / "results" / "auto_model"
METHODS = ("default", "auto-model", "auto-model-plain")


def aubcs(task, method, out=OUT) -> dict:
    """{seed: AUBC} of one method on one task."""
    return {seed: bench.aubc(*curve) for seed, curve in bench.curves(task, out).get(method, {}).items()
            if len(curve[0]) and max(curve[0]) >= bench.BUDGET}


def paired(task, method, base="default", out=OUT):
    """Differences (points) ``method - base`` over the seeds both ran."""
    a, b = aubcs(task, method, out), aubcs(task, base, out)
    seeds = sorted(set(a) & set(b))
    return np.array([100 * (a[s] - b[s]) for s in seeds])


def table(tasks, out=OUT) -> str:
    lines = ["| task | seeds | default | auto-model | Δ auto-model | auto-model-plain | Δ plain |",
             "|---|---|---|---|---|---|---|"]
    means = {m: [] for m in METHODS[1:]}
    for task in tasks:
        cells = [task]
        base = aubcs(task, "default", out)
        d_auto, d_plain = paired(task, "auto-model", out=out), paired(task, "auto-model-plain", out=out)
        cells.append(str(min(len(d_auto), len(base)) if len(d_auto) else 0))
        cells.append(f"{100 * np.mean(list(base.values())):.1f}" if base else "-")
        for m, d in (("auto-model", d_auto), ("auto-model-plain", d_plain)):
            vals = aubcs(task, m, out)
            cells.append(f"{100 * np.mean(list(vals.values())):.1f}" if vals else "-")
            if len(d):
                cells.append(f"{d.mean():+.1f} ± {d.std(ddof=1) if len(d) > 1 else 0:.1f}")
                means[m].append(d.mean())
            else:
                cells.append("-")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for m, ds in means.items():
        if ds:
            worst = min(ds)
            verdict = "adopt" if np.mean(ds) > 0 and worst >= -1.0 else "do not adopt"
            lines.append(f"- {m}: mean {np.mean(ds):+.2f} points over {len(ds)} tasks, worst task {worst:+.1f}: "
                         f"{verdict} (rule: ahead on the mean and no task below -1 point).")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--tasks", help="comma-separated (default: the first half)")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--report", action="store_true", help="print the table only")
    args = ap.parse_args(argv)
    tasks = args.tasks.split(",") if args.tasks else list(bench.FIRST_HALF)
    if not args.report:
        bench.run_grid(tasks, list(range(args.seeds)), list(METHODS), bench.BUDGET, args.out)
    print(table(tasks, args.out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
