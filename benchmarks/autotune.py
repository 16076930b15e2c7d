"""What the automatic re-tune costs against one query step (issue 7, section 4).

On two-moons (standardised, the app's defaults) with n pool points and |L| labels, in one
process and one BLAS thread (``labeler.runtime`` sets it for the app):

* ``query``: one ARLS step as the app runs it: ``strategies.query`` (expected risk of every
  unlabelled point, eq. 3.50) plus ``learner.add`` of the answer;
* ``tune``: ``core.rls.tuning.auto_tune`` of width (11 widths at the lam in use) and lam (9
  values at the width), O(W |L|^3), what the session runs after each label up to 50 labels;
* ``set_kernel``: applying a new width (the learner rebuilds C: kernel O(n^2 d) + a direct
  solve O(n^2 |L|));
* ``set_lam``: applying a new lam (a block reweight of every label, O(n^2 |L|)).

Ratios are to the query step of the same n and |L|, taken in the same run. Usage:
``python benchmarks/autotune.py [--n 5000 10000] [--labels 25 100 400] [--repeats 3]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402

from core import strategies  # noqa: E402
from core.kernels import Kernel  # noqa: E402
from core.learner import ActiveRLS  # noqa: E402
from core.rls import default_widths  # noqa: E402
from core.rls.tuning import auto_tune  # noqa: E402
from labeler.data import load_dataset  # noqa: E402
from labeler.data.preprocessing import standardize  # noqa: E402


def _best(fn, repeats):
    """Least wall time of ``repeats`` calls (a call may return its own timing)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        took = fn()
        times.append(time.perf_counter() - t0 if took is None else took)
    return min(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[5000, 10000])
    parser.add_argument("--labels", type=int, nargs="+", default=[25, 100, 400])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    print(f"{'n':>6} {'|L|':>5} {'query s':>9} {'tune s':>8} {'set_kernel s':>12} {'set_lam s':>10} "
          f"{'tune/query':>10} {'kernel/query':>12} {'lam/query':>10}")
    for n in args.n:
        ds = load_dataset("moons", seed=0, n=n)
        X = standardize(np.asarray(ds.X, dtype=np.float64))[0]
        y = np.asarray(ds.y).astype(str)
        widths = default_widths(X)
        rng = np.random.default_rng(0)
        for n_labels in args.labels:
            learner = ActiveRLS.from_features(X, classes=["0", "1"], kernel=Kernel("rbf", width=widths[6]),
                                              lam=0.1, weighting="balanced", random_state=0)
            idx = rng.choice(n, n_labels, replace=False)
            learner.add_many(idx.tolist(), y[idx].tolist())
            strategies.query_one(learner, "arls", np.random.default_rng(1))  # numba compiled, cache warm

            def query_step():
                learner._risk_cache = None  # a new state: the scores are recomputed
                t0 = time.perf_counter()
                q = strategies.query_one(learner, "arls", np.random.default_rng(1))
                learner.add(int(q), y[q])
                took = time.perf_counter() - t0
                learner.remove(int(q))  # back to the same state (not timed)
                return took

            labels = list(learner.labels.values())
            L = np.fromiter(learner.labels, dtype=np.intp)

            def tune():
                auto_tune(X[L], labels, learner.classes, learner.class_weights,
                          kernel=Kernel("rbf", width=widths[6]), lam=0.1, widths=widths)

            def new_width():
                learner.set_kernel(Kernel("rbf", width=widths[5]))
                learner.set_kernel(Kernel("rbf", width=widths[6]))

            def new_lam():
                learner.set_lam(0.3)
                learner.set_lam(0.1)

            t_query = _best(query_step, args.repeats)
            t_tune = _best(tune, args.repeats)
            t_kernel = _best(new_width, args.repeats) / 2
            t_lam = _best(new_lam, args.repeats) / 2
            print(f"{n:>6} {n_labels:>5} {t_query:>9.3f} {t_tune:>8.3f} {t_kernel:>12.3f} {t_lam:>10.3f} "
                  f"{t_tune / t_query:>10.2f} {t_kernel / t_query:>12.2f} {t_lam / t_query:>10.2f}", flush=True)
            del learner
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
