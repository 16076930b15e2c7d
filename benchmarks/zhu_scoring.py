"""Zhu et al.'s expected risk on the harmonic function: the fused kernel against the numpy form.

The session's "arls" query on a harmonic model scores every unlabelled point by Zhu's rule
(seed 003 §2.8.1; docs/algorithms.md §5). Until issue 23 it formed the hypothetical harmonic
function ``F+`` for every candidate and class in numpy blocks, O(u T^2) per candidate; now one
fused numba pass (:mod:`core.graph._zhu_numba`) costs O(u T). Both are timed in the same run
on scikit-learn's digits (1,797 points, 10 classes, 10-NN graph, one label per class), and
their scores compared::

    python benchmarks/zhu_scoring.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from sklearn.datasets import load_digits

from core.graph import ZhuActiveLearning
from core.kernels import knn_graph

_BLOCK_BYTES = 64 * 2**20


def numpy_expected_risks(model: ZhuActiveLearning) -> np.ndarray:
    """The numpy form the session used before: ``F+`` formed per block of candidates and class."""
    FU = model.decision_values_[model.unlabeled_]
    G = model.inverse_
    u, T = FU.shape
    pos = np.arange(u)
    out = np.empty(u)
    step = max(1, _BLOCK_BYTES // (8 * max(u * T, 1)))
    eye = np.eye(T)
    for a in range(0, u, step):
        pb = pos[a:a + step]
        S = G[:, pb] / G[pb, pb]
        Fk = FU[pb]
        p = np.clip(Fk, 0.0, 1.0)
        total = p.sum(axis=1, keepdims=True)
        p = p / np.where(total > 0, total, 1.0)
        E = np.zeros(pb.size)
        for t in range(T):
            Fp = FU[:, None, :] + S[:, :, None] * (eye[t][None, :] - Fk)[None, :, :]
            E += p[:, t] * np.sum(1.0 - Fp.max(axis=2), axis=0)
        out[a:a + step] = E
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    X, y = load_digits(return_X_y=True)
    W = knn_graph(X, 10)
    L = np.array([np.flatnonzero(y == c)[0] for c in range(10)])
    model = ZhuActiveLearning(eps=1e-6).fit(W, L, y[L])
    fused = model.expected_risks()  # compiles once (numba's cache keeps it)
    reference = numpy_expected_risks(model)
    rows = []
    for name, run in (("numpy form (before)", lambda: numpy_expected_risks(model)),
                      ("fused kernel (now)", model.expected_risks)):
        times = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            run()
            times.append(time.perf_counter() - t)
        rows.append((name, float(np.median(times))))
    print(f"digits: {model.unlabeled_.size} candidates, {len(L)} labels, 10 classes; "
          f"max |difference| {np.max(np.abs(fused - reference)):.2e}")
    print("| scoring | seconds (median) |\n|---|---|")
    for name, sec in rows:
        print(f"| {name} | {sec:.3f} |")
    print(f"ratio: {rows[0][1] / rows[1][1]:.0f} x")


if __name__ == "__main__":
    main()
