"""Expected-risk kernels for one-vs-all with distinct class weights; prints one table.

All kernels score the same candidates on the same posterior covariance ``C`` of a learner
built as in ``benchmarks/arls_step.py`` (blobs, RBF kernel, weighting="balanced"), timed in
the same run, interleaved, median of several repeats:

* ``equal``: :func:`core._risk_numba.expected_risk_multiclass_equal` (what an unweighted
  learner pays: the reference cost, O(n T) per candidate);
* ``weighted``: :func:`core._risk_numba_weighted.expected_risk_multiclass_weighted`, the
  real weights (O(n T) per candidate whatever the weights);
* ``grouped``: the previous general kernel (O(n T G) per candidate for G distinct weights),
  kept below as :func:`grouped_kernel`.

Also printed: the largest relative difference between ``weighted`` and ``grouped`` and the
fraction of (candidate, z) pairs that the weighted kernel scored on its exact O(T) path.

Usage::

    python benchmarks/weighted_kernel.py                 # n = 10,000, T = 10, 30 labels
    python benchmarks/weighted_kernel.py --n 2000 --quick
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # as core._risk_numba does

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from arls_step import make_learner  # noqa: E402
from core.criteria import _expected_risk_numba as _risk_numba  # noqa: E402
from core.criteria import _expected_risk_weighted as _risk_numba_weighted  # noqa: E402
def time_row(C, MT, cand, lam_y, iw, repeat):
    """Median ms of the three kernels (interleaved), their largest relative difference and
    the slow-path fraction of the weighted kernel."""
    group_lam, inverse = np.unique(lam_y, return_inverse=True)
    members = np.argsort(inverse, kind="stable").astype(np.int64)
    start = np.searchsorted(inverse[members], np.arange(group_lam.size + 1)).astype(np.int64)
    out_e = np.empty(cand.size)
    out_w = np.empty(cand.size)
    out_g = np.empty(cand.size)
    # the equal-weights kernel on the same C and outputs, one weight for every class
    lam_eq = float(np.median(lam_y))
    iw_eq = float(np.median(iw))

    def run_equal():
        _risk_numba.expected_risk_multiclass_equal(C, cand, MT, cand, lam_eq, iw_eq, out_e)

    def run_weighted():
        _risk_numba_weighted.expected_risk_multiclass_weighted(C, cand, cand, MT, lam_y, iw, out_w)

    def run_grouped():
        _risk_numba.expected_risk_multiclass(C, cand, MT, cand, group_lam, start, members, iw, out_g)

    fns = {"equal": run_equal, "weighted": run_weighted, "grouped": run_grouped}
    for f in fns.values():  # compile / warm up
        f()
    ts = {k: [] for k in fns}
    for _ in range(repeat):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            ts[k].append(time.perf_counter() - t0)
    med = {k: 1e3 * float(np.median(v)) for k, v in ts.items()}
    rel = float(np.max(np.abs(out_w - out_g) / np.abs(out_g)))
    frac = _risk_numba_weighted.weighted_slow_fraction(C, cand, cand, MT, lam_y, iw, out_w)
    return group_lam.size, med, rel, frac


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--labels", type=int, nargs="+", default=[20, 40])
    ap.add_argument("--candidates", type=int, default=2000, help="candidates scored per call")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--quick", action="store_true", help="3 repeats, 500 candidates")
    args = ap.parse_args(argv)
    if args.quick:
        args.repeat, args.candidates = 3, 500

    print(f"n = {args.n:,}, T = {args.classes}, {args.candidates} candidates per call, "
          f"{os.cpu_count()} CPUs; median ms per call over {args.repeat} interleaved repeats")
    print("weights: the learner's 'balanced' weights (G distinct), then the same weights made "
          "all distinct (x (1 + 0.05 t), G = T)")
    print(f"{'labels':>6} {'weights':>9} {'G':>3} {'equal':>9} {'weighted':>9} {'w/eq':>6} "
          f"{'grouped':>9} {'g/eq':>6} {'max rel diff':>12} {'slow z':>8}")
    for n_labels in args.labels:
        learner, _ = make_learner(args.n, args.classes, n_labels, weighting="balanced")
        C = learner.posterior_covariance()
        MT = np.ascontiguousarray(learner.decision_values.T)
        w_bal = np.array(list(learner.class_weights.values()), dtype=np.float64)
        lam = learner.lam
        unl = learner.unlabeled_indices
        rng = np.random.default_rng(1)
        cand = np.sort(rng.choice(unl, size=min(args.candidates, unl.size), replace=False))
        cand = cand.astype(np.int64)
        del learner
        for name, w in (("balanced", w_bal), ("distinct", w_bal * (1.0 + 0.05 * np.arange(w_bal.size)))):
            G, med, rel, frac = time_row(C, MT, cand, lam / w, 1.0 / w, args.repeat)
            print(f"{n_labels:>6} {name:>9} {G:>3} {med['equal']:>9.1f} "
                  f"{med['weighted']:>9.1f} {med['weighted'] / med['equal']:>6.2f} "
                  f"{med['grouped']:>9.1f} {med['grouped'] / med['equal']:>6.2f} {rel:>12.1e} "
                  f"{100 * frac:>7.3f}%", flush=True)
        del C


if __name__ == "__main__":
    main()
