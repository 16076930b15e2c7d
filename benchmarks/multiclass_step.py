"""The exact one-vs-all ARLS step with distinct class weights against the binary step, on several data sets.

For each data set: a binary learner and a T = 10 one-vs-all learner with "balanced" weights
(distinct class weights) on the same pool, the same RBF kernel (median-distance width) and
lam, the same labelled points (every class, then random ones); a step is "score every
unlabelled point by its expected risk, pick, apply the exact update", timed in the same run,
median of a few steps. The binary labels are "class < T / 2".

Data sets:

* ``blobs``: the 10 Gaussian blobs of ``benchmarks/arls_step.py`` (most (candidate, point)
  pairs "calm": the O(G) path of :mod:`core.criteria._expected_risk_calm`);
* ``overlap``: 10 heavily overlapping Gaussian classes in 10 dimensions (few calm pairs);
* ``mnist``: the MNIST test images (50 principal components), 10 digits (few calm pairs);
* ``digits``: scikit-learn's 8x8 digits (all 1,797).

Printed per data set: n, the binary step, the multiclass step, their ratio (target <= 12),
the pick alone of both (``query_one``: the multiclass one bounds every candidate and scores
exactly only those that can be the minimum, ``ExpectedRisk.score_to_pick``), the fraction
of candidates it scored exactly, the fraction of calm pairs and of points the weighted O(T)
kernel scored on its per-group path (on 200 candidates), and the load average (the machine
is shared: only ratios within one run count).

Usage::

    python benchmarks/multiclass_step.py                   # n = 10,000, 30 labels, 3 steps
    python benchmarks/multiclass_step.py --n 2000 --steps 2 --data blobs digits
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from labeler.runtime import configure_threads  # noqa: E402

configure_threads()  # as labeler.cli.main does, before numpy and numba load

import numpy as np  # noqa: E402

from core.criteria import _expected_risk_calm as _risk_calm  # noqa: E402
from core.criteria import _expected_risk_weighted as _risk_weighted  # noqa: E402
from core.kernels import Kernel  # noqa: E402
from core.kernels.kernel import median_distance  # noqa: E402
from core.learner import ActiveRLS  # noqa: E402
from core.strategies import TIE_RTOL, query_one  # noqa: E402

T = 10
LAM = 0.1
TARGET = 12.0


def blobs(n, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.uniform(-4, 4, (T, 5))
    y = rng.integers(T, size=n)
    return centres[y] + rng.standard_normal((n, 5)), y


def overlap(n, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((T, 10))
    y = rng.integers(T, size=n)
    return centres[y] + 1.5 * rng.standard_normal((n, 10)), y


def mnist(n, seed=0):
    from sklearn.decomposition import PCA

    from labeler.data.bundled import load_mnist

    data = load_mnist(seed=seed, n=min(n, 10_000))
    X = PCA(50, random_state=seed).fit_transform(np.asarray(data.X, dtype=np.float64))
    return X, np.asarray(data.y, dtype=np.int64)


def digits(n, seed=0):
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.permutation(y.size)[:min(n, y.size)])
    return X[rows].astype(np.float64), y[rows]


DATA = {"blobs": blobs, "overlap": overlap, "mnist": mnist, "digits": digits}


def labelled(y, n_labels, seed=0):
    rng = np.random.default_rng(seed)
    first = [int(rng.choice(np.flatnonzero(y == c))) for c in range(T)]
    rest = [int(i) for i in rng.permutation(y.size) if int(i) not in first]
    return first + rest[:max(0, n_labels - T)]


def step_ms(learner, y, steps):
    """Median ms of a whole step (the pick of ``query_one``, as the app's next query, then
    the update) and of its pick; and the fraction of candidates the pick scored exactly."""
    rng = np.random.default_rng(0)
    learner.expected_risk(candidates=learner.unlabeled_indices[:4])  # load the kernels
    crit = learner.risk_criterion
    if hasattr(crit, "score_to_pick"):  # load the bound kernels
        crit.score_to_pick(learner.scoring_state(), learner.posterior, learner.unlabeled_indices[:100])
    total, score = [], []
    for _ in range(steps):
        t0 = time.perf_counter()
        i = query_one(learner, "arls", rng)
        t1 = time.perf_counter()
        learner.add(i, int(y[i]))
        total.append(time.perf_counter() - t0)
        score.append(t1 - t0)
    return 1e3 * float(np.median(total)), 1e3 * float(np.median(score))


def exact_fraction(learner):
    """Fraction of the candidates that the pick scored exactly (the others were bounded)."""
    st = learner.scoring_state()
    unl = learner.unlabeled_indices
    picked = learner.risk_criterion.score_to_pick(st, learner.posterior, unl, TIE_RTOL)
    exact = learner.expected_risk()[unl]
    return float(np.mean(picked == exact))


def pair_fractions(learner, k=200):
    """Calm pairs and per-group-path points of the weighted kernel, on k candidates."""
    st = learner.scoring_state()
    C = learner.posterior.array
    MT = np.ascontiguousarray(st.outputs_T)
    lam_y = np.asarray(st.hypothetical_lam, dtype=np.float64)
    iw = 1.0 / np.asarray(st.class_weights, dtype=np.float64)
    cand = np.ascontiguousarray(learner.unlabeled_indices[:k], dtype=np.int64)
    calm = _risk_calm.calm_fraction(C, cand, cand, MT, lam_y, iw)
    slow = _risk_weighted.weighted_slow_fraction(C, cand, cand, MT, lam_y, iw, np.empty(cand.size))
    return calm, slow


def run(name, n, n_labels, steps):
    X, y = DATA[name](n)
    n = y.size
    kernel = Kernel("rbf", width=median_distance(X))
    idx = labelled(y, n_labels)
    out = {"data": name, "n": n}
    yb = (y >= T // 2).astype(np.int64)
    learner = ActiveRLS.from_features(X, classes=[0, 1], kernel=kernel, lam=LAM, weighting="balanced", random_state=0)
    learner.add_many(idx, [int(yb[i]) for i in idx])
    out["binary"], out["binary_score"] = step_ms(learner, yb, steps)
    del learner
    gc.collect()
    learner = ActiveRLS.from_features(X, classes=list(range(T)), kernel=kernel, lam=LAM, weighting="balanced",
                                      random_state=0)
    learner.add_many(idx, [int(y[i]) for i in idx])
    out["G"] = int(np.unique(learner.scoring_state().hypothetical_lam).size)
    out["multi"], out["multi_score"] = step_ms(learner, y, steps)
    out["calm"], out["slow"] = pair_fractions(learner)
    out["exact"] = exact_fraction(learner)
    del learner
    gc.collect()
    out["load"] = os.getloadavg()[0]
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--labels", type=int, default=30)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--data", nargs="+", default=list(DATA), choices=list(DATA))
    args = ap.parse_args(argv)
    print(f"T = {T} one-vs-all, 'balanced' weights, against binary; {args.labels} labels, median of "
          f"{args.steps} steps; target multiclass / binary <= {TARGET:g}")
    print("| data | n | G | binary step | multiclass step | ratio (target <= 12) | binary pick | multiclass pick | "
          "candidates scored exactly | calm pairs | per-group points | load average |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name in args.data:
        r = run(name, args.n, args.labels, args.steps)
        ratio = r["multi"] / r["binary"]
        print(f"| {r['data']} | {r['n']:,} | {r['G']} | {r['binary']:.0f} ms | {r['multi']:.0f} ms | "
              f"{ratio:.1f} x{'' if ratio <= TARGET else ' (over)'} | {r['binary_score']:.0f} ms | "
              f"{r['multi_score']:.0f} ms | {100 * r['exact']:.1f} % | {100 * r['calm']:.1f} % | {100 * r['slow']:.1f} % | "
              f"{r['load']:.1f} |", flush=True)


if __name__ == "__main__":
    main()
