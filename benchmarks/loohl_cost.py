"""Cost of one LOOHL evaluation (seed 003) against the naive leave-one-out loop, same run.

Data: the MNIST 4s and 9s of the package's test set with seed 003's pre-processing
(:func:`labeler.experiments.graph_repro.seed003.seed_preprocess`), 30 seeded labels, common
width 0.15. Columns:

* ``loohl value+grad``: :func:`core.graph.loohl_objective` (every LOO prediction from one LU of
  ``I - P~_UU``, the gradient in every per-pixel width);
* ``naive LOO values``: the seed's §3.2 loop without its gradient: one dense solve of the
  ``(u + 1)`` system per held-out label (l factorisations), values only;
* ``minent value+grad``: :func:`core.graph.minent_objective`;
* ``rls value+grad``: :func:`core.rls.ard.rls_loo_objective` on the 30 labels (the cheap version).

Usage: ``python benchmarks/loohl_cost.py [--n 500 1000 1991]`` (seconds, best of 2; the machine
is shared: read the ratio, taken in the same run).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from core.graph.hyper import harmonic_loo, loohl_objective, minent_objective, transition_matrix
from core.rls.ard import rls_loo_objective
from labeler.experiments.graph_repro.seed003 import _load, _labelled_set


def _best(fn, repeat=2):
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def _naive(X, L, y01, sigma):
    _, _, _, Pt = transition_matrix(X, sigma, 0.01)
    U = np.setdiff1d(np.arange(X.shape[0]), L)
    vals = []
    for k, t in enumerate(L):
        Lt, V = np.delete(L, k), np.r_[t, U]
        f = np.linalg.solve(np.eye(V.size) - Pt[np.ix_(V, V)], Pt[np.ix_(V, Lt)] @ np.delete(y01, k))
        vals.append(f[0])
    return np.array(vals)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[500, 1000, 1991])
    args = parser.parse_args(argv)
    print("| n | pixels | loohl value+grad s | naive LOO values s | ratio | max abs diff | minent value+grad s | rls value+grad s |")
    print("|---|---|---|---|---|---|---|---|")
    for n in args.n:
        X, y = _load(None if n >= 1991 else n, seed=0)
        L = _labelled_set(y, 30, np.random.default_rng(0))
        y01 = (y[L] == 9).astype(float)
        t_loohl = _best(lambda: loohl_objective(X, L, y[L], 0.15))
        t_naive = _best(lambda: _naive(X, L, y01, 0.15), repeat=1)
        _, _, _, Pt = transition_matrix(X, 0.15, 0.01)
        diff = np.abs(harmonic_loo(Pt, L, np.setdiff1d(np.arange(X.shape[0]), L), y01)[0] - _naive(X, L, y01, 0.15)).max()
        t_min = _best(lambda: minent_objective(X, L, y[L], 0.15))
        t_rls = _best(lambda: rls_loo_objective(X[L], y[L], 0.15 / np.sqrt(2), 0.1))
        print(f"| {X.shape[0]} | {X.shape[1]} | {t_loohl:.2f} | {t_naive:.2f} | {t_naive / t_loohl:.1f} | {diff:.1e} | "
              f"{t_min:.2f} | {t_rls:.4f} |")
    print(f"\nload average {' / '.join(f'{v:.2f}' for v in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
