"""Expected-risk kernels for one-vs-all with distinct class weights; prints one table.

All kernels score the same candidates on the same posterior covariance ``C`` of a learner
built as in ``benchmarks/arls_step.py`` (blobs, RBF kernel, weighting="balanced"), timed in
the same run, interleaved, median of several repeats:

* ``equal``: ``core.criteria._expected_risk_numba.expected_risk_multiclass_equal`` (the O(n T)
  kernel of an unweighted learner: the reference cost);
* ``weighted``: ``core.criteria._expected_risk_weighted.expected_risk_multiclass_weighted``, the
  real weights (O(n T) per candidate whatever the weights);
* ``grouped``: the former general kernel (O(n T G) per candidate for G distinct weights),
  kept below as :func:`grouped_kernel`;
* ``calm eq`` / ``calm w``: ``core.criteria._expected_risk_calm.expected_risk_multiclass``
  (what the learner runs), with one weight for every class / with the real weights: O(G) per
  calm point, the O(T) kernels on the other points.

Also printed: the largest relative difference between ``calm w``, ``weighted`` and
``grouped``, the fraction of (candidate, z) pairs that the weighted kernel scored on its exact
O(T)-per-hypothesis path ("slow z") and the fraction of calm pairs.

Usage::

    python benchmarks/weighted_kernel.py                 # n = 10,000, T = 10, 30 labels
    python benchmarks/weighted_kernel.py --n 2000 --quick
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from labeler.runtime import configure_threads  # noqa: E402

configure_threads()  # as labeler.cli.main does, before numpy and numba load

import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from arls_step import make_learner  # noqa: E402
from core.criteria import _expected_risk_calm as _risk_calm  # noqa: E402
from core.criteria import _expected_risk_numba as _risk_numba  # noqa: E402
from core.criteria import _expected_risk_weighted as _risk_numba_weighted  # noqa: E402
from core.criteria._expected_risk_numba import _CANCEL, _LANES, _clip01  # noqa: E402


@njit(parallel=True, fastmath=False, cache=False)
def grouped_kernel(C, MT, candidates, group_lam, group_start, group_members, iw, out):
    """Expected risk of every one-vs-all candidate (docs/algorithms.md §3, last paragraph).

    A hypothetical label ``y`` for candidate ``i`` moves output column ``t`` to
    ``F_t = m_t - s (m_it + 1) + 2 s [t = y]`` with ``s = C[z, i] / (C_ii + lam_y)``. For all
    classes ``y`` that share one ``lam_y`` (one "group") the base vector
    ``b_t = m_t - s (m_it + 1)`` is common: its top two (for the argmax with column ``y``
    raised by ``2 s``) and its clipped sums (the normalisation of ``p``) are computed once per
    point ``z`` and group, and each hypothesis then costs O(1). Total O(n T G) per candidate for
    G distinct class weights: O(n T) unweighted or with equal weights.

    Parameters
    ----------
    C : ndarray of shape (n, n), C-contiguous
        Posterior covariance (symmetric).
    MT : ndarray of shape (T, n), C-contiguous
        Current one-vs-all outputs, transposed.
    candidates : ndarray of shape (k,), int64
    group_lam : ndarray of shape (G,)
        Distinct values of ``lam / w_y``.
    group_start : ndarray of shape (G + 1,), int64
        Group ``g`` holds classes ``group_members[group_start[g]:group_start[g + 1]]``.
    group_members : ndarray of shape (T,), int64
    iw : ndarray of shape (T,)
        ``1 / w_t``.
    out : ndarray of shape (k,)
    """
    n = C.shape[0]
    T = MT.shape[0]
    G = group_lam.shape[0]
    B = _LANES
    sum_iw = 0.0
    for t in range(T):
        sum_iw += iw[t]
    for k in prange(candidates.shape[0]):
        i = candidates[k]
        row = C[i]
        cii = row[i]
        a = np.empty(T)
        prior = np.empty(T)
        s_prior = 0.0
        for t in range(T):
            a[t] = MT[t, i] + 1.0
            prior[t] = _clip01(0.5 * (MT[t, i] + 1.0))
            s_prior += prior[t]
        for t in range(T):
            prior[t] = prior[t] / s_prior if s_prior > 0.0 else 1.0 / T
        inv_den = np.empty(G)
        for g in range(G):
            inv_den[g] = 1.0 / (cii + group_lam[g])
        acc = np.zeros((T, B))
        b = np.empty((T, B))
        q = np.empty((T, B))
        s = np.empty(B)
        S1 = np.empty(B)
        S2 = np.empty(B)
        v1 = np.empty(B)
        v2 = np.empty(B)
        i1 = np.empty(B, dtype=np.int64)
        i2 = np.empty(B, dtype=np.int64)
        rz = np.empty(B)
        fix = np.empty(B, dtype=np.bool_)
        for z0 in range(0, n, B):
            L = min(B, n - z0)
            crow = row[z0:z0 + L]
            for g in range(G):
                rg = inv_den[g]
                for u in range(L):
                    s[u] = crow[u] * rg
                    S1[u] = 0.0
                    S2[u] = 0.0
                    v1[u] = -np.inf
                    v2[u] = -np.inf
                    i1[u] = -1
                    i2[u] = -1
                for t in range(T):
                    mt = MT[t, z0:z0 + L]
                    at = a[t]
                    iwt = iw[t]
                    bt = b[t]
                    qt = q[t]
                    for u in range(L):
                        v = mt[u] - s[u] * at
                        bt[u] = v
                        qq = _clip01(0.5 * (v + 1.0))
                        qt[u] = qq
                        S1[u] += qq
                        S2[u] += qq * iwt
                        # running top two; strict ">" keeps the lowest index on ties
                        o1 = v1[u]
                        o2 = v2[u]
                        j1 = i1[u]
                        j2 = i2[u]
                        gt1 = v > o1
                        gt2 = v > o2
                        v2[u] = o1 if gt1 else (v if gt2 else o2)
                        i2[u] = j1 if gt1 else (t if gt2 else j2)
                        v1[u] = v if gt1 else o1
                        i1[u] = t if gt1 else j1
                for jj in range(group_start[g], group_start[g + 1]):
                    y = group_members[jj]
                    by = b[y]
                    qy_old = q[y]
                    iwy = iw[y]
                    any_fix = False
                    for u in range(L):
                        vy = by[u] + 2.0 * s[u]
                        qy = _clip01(0.5 * (vy + 1.0))
                        s1 = (S1[u] - qy_old[u]) + qy
                        s2 = S2[u] + (qy - qy_old[u]) * iwy
                        # best of the other columns: top1 unless top1 is y itself
                        other_is_1 = i1[u] != y
                        cv = v1[u] if other_is_1 else v2[u]
                        ci = i1[u] if other_is_1 else i2[u]
                        win = (vy > cv) or (vy == cv and y < ci)
                        ts = y if win else ci
                        qs = qy if win else _clip01(0.5 * (cv + 1.0))
                        iws = iw[ts]
                        r_norm = (s2 - qs * iws) / s1 if s1 > 0.0 else 0.0
                        r_unif = (sum_iw - iws) / T
                        rz[u] = r_norm if s1 > 0.0 else r_unif
                        bad = (s1 < _CANCEL * S1[u]) or (s2 < _CANCEL * S2[u])
                        fix[u] = bad
                        any_fix = any_fix or bad
                    if any_fix:
                        # cancellation in the O(1) update: recompute these lanes in O(T)
                        for u in range(L):
                            if fix[u]:
                                vy = by[u] + 2.0 * s[u]
                                qy = _clip01(0.5 * (vy + 1.0))
                                e1 = 0.0
                                e2 = 0.0
                                for t in range(T):
                                    qq = qy if t == y else q[t, u]
                                    e1 += qq
                                    e2 += qq * iw[t]
                                other_is_1 = i1[u] != y
                                cv = v1[u] if other_is_1 else v2[u]
                                ci = i1[u] if other_is_1 else i2[u]
                                win = (vy > cv) or (vy == cv and y < ci)
                                ts = y if win else ci
                                qs = qy if win else _clip01(0.5 * (cv + 1.0))
                                if e1 > 0.0:
                                    rz[u] = (e2 - qs * iw[ts]) / e1
                                else:
                                    rz[u] = (sum_iw - iw[ts]) / T
                    accy = acc[y]
                    for u in range(L):
                        accy[u] += rz[u]
        total = 0.0
        for y in range(T):
            risk_y = 0.0
            for u in range(B):
                risk_y += acc[y, u]
            total += prior[y] * iw[y] * risk_y
        out[k] = total


def time_row(C, MT, cand, lam_y, iw, repeat):
    """Median ms of the kernels (interleaved), their largest relative difference, the
    slow-path fraction of the weighted kernel and the calm fraction."""
    group_lam, inverse = np.unique(lam_y, return_inverse=True)
    members = np.argsort(inverse, kind="stable").astype(np.int64)
    start = np.searchsorted(inverse[members], np.arange(group_lam.size + 1)).astype(np.int64)
    outs = {k: np.empty(cand.size) for k in ("equal", "weighted", "grouped", "calm eq", "calm w")}
    # the equal-weights kernels on the same C and outputs, one weight for every class
    lam_eq = float(np.median(lam_y))
    iw_eq = float(np.median(iw))
    T = lam_y.size

    fns = {
        "equal": lambda: _risk_numba.expected_risk_multiclass_equal(C, cand, MT, cand, lam_eq, iw_eq, outs["equal"]),
        "weighted": lambda: _risk_numba_weighted.expected_risk_multiclass_weighted(C, cand, cand, MT, lam_y, iw,
                                                                                   outs["weighted"]),
        "grouped": lambda: grouped_kernel(C, MT, cand, group_lam, start, members, iw, outs["grouped"]),
        "calm eq": lambda: _risk_calm.expected_risk_multiclass(C, cand, cand, MT, np.full(T, lam_eq),
                                                               np.full(T, iw_eq), outs["calm eq"]),
        "calm w": lambda: _risk_calm.expected_risk_multiclass(C, cand, cand, MT, lam_y, iw, outs["calm w"]),
    }
    for f in fns.values():  # compile / warm up
        f()
    ts = {k: [] for k in fns}
    for _ in range(repeat):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            ts[k].append(time.perf_counter() - t0)
    med = {k: 1e3 * float(np.median(v)) for k, v in ts.items()}
    ref = outs["grouped"]
    rel = max(float(np.max(np.abs(outs[k] - ref) / np.abs(ref))) for k in ("weighted", "calm w"))
    rel = max(rel, float(np.max(np.abs(outs["calm eq"] - outs["equal"]) / np.abs(outs["equal"]))))
    frac = _risk_numba_weighted.weighted_slow_fraction(C, cand, cand, MT, lam_y, iw, outs["weighted"])
    calm = _risk_calm.calm_fraction(C, cand, cand, MT, lam_y, iw)
    return group_lam.size, med, rel, frac, calm


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
          f"{'grouped':>9} {'g/eq':>6} {'calm eq':>9} {'ceq/eq':>6} {'calm w':>9} {'cw/eq':>6} "
          f"{'max rel diff':>12} {'slow z':>8} {'calm z':>7}")
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
            G, med, rel, frac, calm = time_row(C, MT, cand, lam / w, 1.0 / w, args.repeat)
            eq = med["equal"]
            print(f"{n_labels:>6} {name:>9} {G:>3} {eq:>9.1f} "
                  f"{med['weighted']:>9.1f} {med['weighted'] / eq:>6.2f} "
                  f"{med['grouped']:>9.1f} {med['grouped'] / eq:>6.2f} "
                  f"{med['calm eq']:>9.1f} {med['calm eq'] / eq:>6.2f} {med['calm w']:>9.1f} {med['calm w'] / eq:>6.2f} "
                  f"{rel:>12.1e} {100 * frac:>7.3f}% {100 * calm:>6.1f}%", flush=True)
        del C


if __name__ == "__main__":
    main()
