"""The weighted one-vs-all kernel before and after its per-group points were gathered; prints one table.

The weighted O(T) kernel (``core.criteria._expected_risk_weighted``) scores the points where a
clip region or the top two lines change within the hypothesis interval at each group's own
step. They were scored one at a time where they occurred (scalar code); they are now gathered
and scored 32 at a time with the lanes in step. This script loads the former kernel from git
(``--former``, a commit of this repository, into a temporary module) and times, on the same
covariance, interleaved, median of ``--repeats``: the former kernel, the current one, the
equal-weights kernel and the binary kernel, on data where few points are calm (MNIST test
images, 50 principal components; 10 overlapping Gaussian classes), with the largest relative
difference between the former and current scores.

Usage::

    python benchmarks/weighted_gather.py                   # n = 4,000, 600 candidates
    python benchmarks/weighted_gather.py --n 2000 --candidates 200
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from labeler.runtime import configure_threads  # noqa: E402

configure_threads()

import numpy as np  # noqa: E402

import core.criteria  # noqa: E402,F401
from core.criteria import _expected_risk_numba as _nb  # noqa: E402
from core.criteria import _expected_risk_weighted as _now  # noqa: E402
from core.kernels import Kernel  # noqa: E402
from core.kernels.kernel import median_distance  # noqa: E402
from core.learner import ActiveRLS  # noqa: E402
from multiclass_step import T, labelled, mnist, overlap  # noqa: E402

FORMER = "3b753e7"  # the last commit with the one-by-one per-group points


def former_kernel(rev, folder):
    """The weighted kernel module of commit ``rev``, as ``core.criteria._former_weighted``."""
    src = subprocess.run(["git", "show", f"{rev}:core/criteria/_expected_risk_weighted.py"], cwd=HERE,
                         check=True, capture_output=True, text=True).stdout
    path = os.path.join(folder, "_former_weighted.py")
    with open(path, "w") as fh:
        fh.write(src)
    spec = importlib.util.spec_from_file_location("core.criteria._former_weighted", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4000)
    ap.add_argument("--candidates", type=int, default=600)
    ap.add_argument("--repeats", type=int, default=4)
    ap.add_argument("--former", default=FORMER)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as folder:
        old = former_kernel(args.former, folder)
        print(f"n = {args.n:,}, {args.candidates} candidates, T = {T}, 'balanced', 30 labels, median of "
              f"{args.repeats - 1} (first call left out)")
        print("| data | former weighted kernel | weighted kernel | equal-weights kernel | binary | former / now | "
              "largest relative difference | load average |")
        print("|---|---|---|---|---|---|---|---|")
        for name, make in (("mnist", mnist), ("overlap", overlap)):
            X, y = make(args.n)
            learner = ActiveRLS.from_features(X, classes=list(range(T)), kernel=Kernel("rbf", width=median_distance(X)),
                                              lam=0.1, weighting="balanced", random_state=0)
            idx = labelled(y, 30)
            learner.add_many(idx, [int(y[i]) for i in idx])
            st = learner.scoring_state()
            C = learner.posterior.array
            MT = np.ascontiguousarray(st.outputs_T)
            lam_y = np.asarray(st.hypothetical_lam, dtype=np.float64)
            iw = 1.0 / np.asarray(st.class_weights, dtype=np.float64)
            cand = np.ascontiguousarray(learner.unlabeled_indices[:args.candidates], dtype=np.int64)
            o_old, o_now, o = np.empty(cand.size), np.empty(cand.size), np.empty(cand.size)
            runs = {
                "former": lambda: old.expected_risk_multiclass_weighted(C, cand, cand, MT, lam_y, iw, o_old),
                "now": lambda: _now.expected_risk_multiclass_weighted(C, cand, cand, MT, lam_y, iw, o_now),
                "equal": lambda: _nb.expected_risk_multiclass_equal(C, cand, MT, cand, lam_y[0], iw[0], o),
                "binary": lambda: _nb.expected_risk_binary(C, cand, MT[0], cand, 0.1, 0.1, 1.0, 1.0, o),
            }
            times = {k: [] for k in runs}
            for _ in range(args.repeats):
                for k, run in runs.items():
                    t = time.perf_counter()
                    run()
                    times[k].append(time.perf_counter() - t)
            ms = {k: 1e3 * float(np.median(v[1:])) for k, v in times.items()}
            diff = float(np.max(np.abs(o_old - o_now) / np.abs(o_old)))
            print(f"| {name} | {ms['former']:.0f} ms ({ms['former'] / ms['equal']:.1f} x equal) | {ms['now']:.0f} ms "
                  f"({ms['now'] / ms['equal']:.1f} x equal) | {ms['equal']:.0f} ms | {ms['binary']:.0f} ms | "
                  f"{ms['former'] / ms['now']:.1f} x | {diff:.1e} | {os.getloadavg()[0]:.1f} |", flush=True)
            del learner, C


if __name__ == "__main__":
    main()
