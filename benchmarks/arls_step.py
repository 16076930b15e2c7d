"""Benchmark of one exact Active RLS step; prints one table, everything measured in this run.

A step = score every unlabelled point by its expected risk (seed 002 eq. 3.50, one fused
pass over the covariance C), pick the minimum, and apply the exact update (rank one; under
"balanced" weights one pass of rank |L| + 1: the new label and the reweight of the others).

Rows:
* binary step at several n, median ms, and its ratio to ONE streaming read of an n x n
  float64 array (a numba parallel sum over the learner's own C, timed in the same run);
* one-vs-all T = 10 step and its ratio to the binary step at the same n;
* the same expected-risk criterion computed the usual way (refit a kernel RLS model per
  candidate and label with scikit-learn's KernelRidge, as modAL / libact / ALiPy do): its pick
  compared with ours, and the speed-up;
* peak memory at the largest n, in units of n^2 * 8 bytes (one n x n float64 matrix).

* with ``--labels``: a second table, the T = 10 "balanced" step at n = 10,000 with more labels
  and the share of the update of C (the new label and the reweight of every other label, one
  pass of O(n^2 |L|)) in it.

Usage::

    python benchmarks/arls_step.py            # n = 2,000 / 10,000 / 20,000 (needs ~7 GB RAM)
    python benchmarks/arls_step.py --quick    # small sizes, a few seconds
    python benchmarks/arls_step.py --labels 50 100 200 500   # also the balanced step by |L|
"""

from __future__ import annotations

import argparse
import gc
import os
import resource
import sys
import time
import tracemalloc

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from labeler.runtime import configure_threads  # noqa: E402

configure_threads()  # as labeler.cli.main does, before numpy and numba load (labeler/runtime.py)

import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from core.learner import ActiveRLS  # noqa: E402
from core.kernels import Kernel  # noqa: E402
from core.criteria.risk import class_probabilities, estimated_risk  # noqa: E402
from core.strategies import query_one  # noqa: E402

WIDTH = 1.5
LAM = 0.1


@njit(parallel=True, fastmath=False, cache=True)
def stream_sum(C):
    """One streaming read of C (parallel over rows, 32 partial sums per row)."""
    n = C.shape[0]
    part = np.zeros(n)
    nb = n - n % 32
    for r in prange(n):
        row = C[r]
        acc = np.zeros(32)
        for z0 in range(0, nb, 32):
            blk = row[z0:z0 + 32]
            for u in range(32):
                acc[u] += blk[u]
        t = 0.0
        for z in range(nb, n):
            t += row[z]
        for u in range(32):
            t += acc[u]
        part[r] = t
    return part.sum()


def blobs(n, n_classes, d=5, seed=0):
    """n points in n_classes Gaussian blobs (d dims); returns X (n, d) and labels (n,)."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-4, 4, (n_classes, d))
    y = rng.integers(n_classes, size=n)
    X = centres[y] + rng.standard_normal((n, d))
    return X, y


def median_ms(f, repeat, with_min=False):
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    med = 1e3 * float(np.median(ts))
    return (med, 1e3 * float(np.min(ts))) if with_min else med


def make_learner(n, n_classes, n_labels, weighting="none", seed=0):
    X, y = blobs(n, n_classes, seed=seed)
    classes = list(range(n_classes))
    learner = ActiveRLS.from_features(X, classes=classes, kernel=Kernel("rbf", width=WIDTH), lam=LAM,
                        weighting=weighting, random_state=seed)
    rng = np.random.default_rng(seed)
    first = [int(rng.choice(np.flatnonzero(y == c))) for c in classes]
    rest = [int(i) for i in rng.permutation(n) if int(i) not in first][: max(0, n_labels - len(first))]
    idx = first + rest
    learner.add_many(idx, [int(y[i]) for i in idx])
    return learner, y


def time_steps(learner, y, steps):
    """Median ms of: score all + pick + add; and of the scoring and the update alone."""
    rng = np.random.default_rng(0)
    total, score, update = [], [], []
    learner.expected_risk(candidates=learner.unlabeled_indices)  # load the kernels (uncached call)
    for _ in range(steps):
        t0 = time.perf_counter()
        learner.expected_risk()
        t1 = time.perf_counter()
        i = query_one(learner, "arls", rng)  # cached scores: only the argmin
        t2 = time.perf_counter()
        learner.add(i, int(y[i]))
        t3 = time.perf_counter()
        total.append(t3 - t0)
        score.append(t2 - t0)
        update.append(t3 - t2)
    time_steps.last_min = 1e3 * float(np.min(total))
    return tuple(1e3 * float(np.median(v)) for v in (total, score, update))


def steps_for(n, steps):
    """More steps for small n, where scheduler noise on a shared machine dominates."""
    return max(steps, min(41, int(2e9 / n**2)))


def stream_ms(learner, repeat=9):
    C = learner.posterior.array  # the learner's own array (read-only view), read once per call
    stream_sum(C)
    med, mn = median_ms(lambda: stream_sum(C), repeat, with_min=True)
    stream_ms.last_min = mn
    return med, median_ms(lambda: C.sum(), max(1, repeat // 2))


def refit_baseline(n, n_labels, budget_s):
    """Expected risk by refitting sklearn KernelRidge per (candidate, label) vs ours."""
    from sklearn.kernel_ridge import KernelRidge

    learner, y = make_learner(n, 2, n_labels, seed=1)
    X = learner.posterior.features
    labels = learner.labels
    L = np.array(list(labels))
    yL = np.where(np.array([labels[j] for j in L]) == 1, 1.0, -1.0)
    w = np.array(list(learner.class_weights.values()))
    cand = learner.unlabeled_indices
    t = time.perf_counter()
    E_ours = learner.expected_risk()
    ours_ms = 1e3 * (time.perf_counter() - t)
    ours_ms = min(ours_ms, median_ms(lambda: learner.expected_risk(candidates=cand), 5))
    prior = class_probabilities(learner.decision_values)
    gamma = 1.0 / (2.0 * WIDTH**2)

    def refit_risk(i):
        total = 0.0
        for cls, code in ((0, -1.0), (1, 1.0)):
            model = KernelRidge(alpha=LAM, kernel="rbf", gamma=gamma)
            Xt = np.vstack([X[L], X[i]])
            yt = np.append(yL, code)
            sw = np.append(w[(yL > 0).astype(int)], w[cls])
            model.fit(Xt, yt, sample_weight=sw)  # minimises sum sw (y - f)^2 + lam ||f||^2
            total += prior[i, cls] / w[cls] * estimated_risk(model.predict(X), w)
        return total

    E_refit = np.full(n, np.inf)
    t = time.perf_counter()
    done = 0
    for i in cand:
        E_refit[i] = refit_risk(i)
        done += 1
        if time.perf_counter() - t > budget_s:
            break
    refit_s = time.perf_counter() - t
    per_cand = refit_s / done
    full_s = per_cand * cand.size
    timed = cand[:done]
    pick_ours = int(timed[np.argmin(E_ours[timed])])
    pick_refit = int(timed[np.argmin(E_refit[timed])])
    max_rel = float(np.max(np.abs(E_refit[timed] - E_ours[timed]) / np.abs(E_ours[timed])))
    return {
        "n": n, "labels": n_labels, "cand": cand.size, "done": done, "refit_s": refit_s,
        "full_s": full_s, "ours_ms": ours_ms, "pick_ours": pick_ours, "pick_refit": pick_refit,
        "max_rel": max_rel,
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (seconds)")
    ap.add_argument("--labels", type=int, nargs="*", default=[],
                    help="also time the T = 10 balanced step with these numbers of labels")
    args = ap.parse_args(argv)
    if args.quick:
        sizes, n_multi, n_refit, refit_labels, steps, budget = (500, 1000, 2000), 1000, 300, 30, 5, 10.0
    else:
        sizes, n_multi, n_refit, refit_labels, steps, budget = (2000, 10000, 20000), 10000, 1000, 100, 5, 180.0
    n_labels = 20
    rows = []
    print(f"# ARLS step benchmark ({'quick' if args.quick else 'full'}); numba threads: "
          f"{os.environ.get('NUMBA_NUM_THREADS', os.cpu_count())}, RBF width {WIDTH}, lam {LAM}")

    # warm-up (compile or load the cached numba kernels) on a tiny pool
    w_learner, w_y = make_learner(200, 2, 5)
    time_steps(w_learner, w_y, 2)
    w_learner, w_y = make_learner(200, 10, 12)
    time_steps(w_learner, w_y, 2)
    stream_ms(w_learner, 1)
    del w_learner

    binary_ms = {}
    mem = None
    for n in sizes:
        gc.collect()
        is_last = n == sizes[-1]
        if is_last:
            tracemalloc.start()
            tracemalloc.reset_peak()
        t = time.perf_counter()
        learner, y = make_learner(n, 2, n_labels)
        build_s = time.perf_counter() - t
        total, score, update = time_steps(learner, y, steps_for(n, steps))
        step_min = time_steps.last_min
        if is_last:
            _, peak = tracemalloc.get_traced_memory()
            tracemalloc.stop()
            mem = (n, peak / (8.0 * n * n))
        read_ms, numpy_sum_ms = stream_ms(learner)
        binary_ms[n] = total
        rows.append((f"binary ARLS step, n={n:,}, |L|={n_labels}+",
                     f"{total:.1f} ms (score {score:.1f} + pick/update {update:.1f})",
                     f"{total / read_ms:.2f} x one read ({read_ms:.1f} ms; numpy C.sum {numpy_sum_ms:.1f} ms)"
                     f"; min/min {step_min / stream_ms.last_min:.2f}",
                     "<= 6"))
        rows.append((f"  build C = K in place, n={n:,}", f"{build_s * 1e3:.0f} ms", "", ""))
        del learner
        gc.collect()

    # one-vs-all T = 10 at n_multi, equal weights (one group: O(n T) per candidate)
    for weighting in ("none", "balanced"):
        learner, y = make_learner(n_multi, 10, n_labels, weighting=weighting)
        total, score, update = time_steps(learner, y, steps_for(n_multi, max(3, steps - 2)))
        if n_multi not in binary_ms:
            b, by = make_learner(n_multi, 2, n_labels)
            binary_ms[n_multi] = time_steps(b, by, steps_for(n_multi, steps))[0]
            del b
        note = "<= 10" if weighting == "none" else "<= 12 (distinct weights: O(n T) kernel + block reweight)"
        rows.append((f"T=10 one-vs-all step, n={n_multi:,}, weighting={weighting}",
                     f"{total:.1f} ms (score {score:.1f} + pick/update {update:.1f})",
                     f"{total / binary_ms[n_multi]:.2f} x binary step", note))
        del learner
        gc.collect()

    # the usual way: refit per candidate and label
    r = refit_baseline(n_refit, refit_labels, budget)
    extrap = "" if r["done"] == r["cand"] else f" (timed {r['done']} of {r['cand']} candidates, extrapolated linearly)"
    rows.append((f"refit EER (sklearn KernelRidge), n={r['n']:,}, |L|={r['labels']}",
                 f"{r['full_s']:.2f} s per query{extrap}",
                 f"speed-up {r['full_s'] * 1e3 / r['ours_ms']:.0f} x (ours {r['ours_ms']:.2f} ms scoring)",
                 ">= 1000"))
    rows.append(("  pick: refit vs ours", f"{r['pick_refit']} vs {r['pick_ours']}",
                 "agree" if r["pick_refit"] == r["pick_ours"] else "DISAGREE",
                 f"max rel. diff of E_i {r['max_rel']:.1e}"))

    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024.0
    n = mem[0]
    rows.append((f"peak memory, n={n:,} (tracemalloc, build + {steps} steps)",
                 f"{mem[1]:.3f} x n^2*8 bytes", f"ru_maxrss {rss / (8.0 * n * n):.3f} x n^2*8 bytes "
                 f"({rss / 2**30:.2f} GiB, whole process)", "<= 2"))

    print_table(("what", "time", "ratio / result", "target"), rows)
    if args.labels:
        print()
        print(f"T = 10 'balanced' step by number of labels, n = {n_multi:,} (median of "
              f"{max(3, steps - 2)} steps each; the update is the new label plus the reweight of all others)")
        print_table(("labels", "step", "score", "update of C", "update share"), labels_rows(n_multi, args.labels,
                                                                                          max(3, steps - 2)))


def labels_rows(n, label_counts, steps):
    """Rows of the balanced step by number of labels: step, score, update ms and share."""
    rows = []
    for n_labels in label_counts:
        gc.collect()
        learner, y = make_learner(n, 10, n_labels, weighting="balanced")
        total, score, update = time_steps(learner, y, steps)
        rows.append((f"{n_labels}+", f"{total:.0f} ms", f"{score:.0f} ms", f"{update:.0f} ms",
                     f"{100 * update / total:.0f} %"))
        del learner
    return rows


def print_table(header, rows):
    widths = [max(len(str(row[k])) for row in list(rows) + [header]) for k in range(len(header))]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(header, widths)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in rows:
        print("| " + " | ".join(str(c).ljust(w) for c, w in zip(row, widths)) + " |")


if __name__ == "__main__":
    main()
