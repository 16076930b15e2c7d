"""lam="auto" (one eigendecomposition, exact LOO for every lambda) against leave-one-out grid search.

Two moons, RBF kernel. Our side: ``WeightedRLSClassifier(lam="auto", fit_offset=False,
loo_criterion="squared")``, unweighted. Reference: ``GridSearchCV(KernelRidge(kernel="rbf",
gamma=1/(2 width^2)), {"alpha": the same grid}, cv=LeaveOneOut(),
scoring="neg_mean_squared_error")`` on the +1/-1 codes.

Why they are comparable: KernelRidge minimises ||y - K c||^2 + alpha c^T K c, which is our
objective sum_i a_i (y_i - f(x_i))^2 + lam ||f||^2 with a_i = 1 and no offset (docs/algorithms.md §1),
so alpha = lam; the mean over LOO folds of the negative squared error is minus our unweighted
LOO squared error. Both sides run with BLAS limited to one thread (the same conditions).

Usage: python benchmarks/lam_auto.py [--n 500] [--n-lams 50] [--width 0.5] [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from sklearn.datasets import make_moons  # noqa: E402
from sklearn.kernel_ridge import KernelRidge  # noqa: E402
from sklearn.model_selection import GridSearchCV, LeaveOneOut  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from core.kernels import Kernel  # noqa: E402
from core.rls import WeightedRLSClassifier, loo_path  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--n-lams", type=int, default=50)
    parser.add_argument("--width", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    X, y = make_moons(args.n, noise=0.2, random_state=args.seed)
    Y = np.where(y == 1, 1.0, -1.0)

    with threadpool_limits(limits=1):
        t0 = time.perf_counter()
        ours = WeightedRLSClassifier(
            width=args.width, lam="auto", n_lams=args.n_lams, fit_offset=False, loo_criterion="squared"
        ).fit(X, y)
        t_ours = time.perf_counter() - t0

        K = Kernel("rbf", width=args.width)(X)
        t0 = time.perf_counter()
        path = loo_path(K, Y, None, None, False, n_lams=args.n_lams)
        t_path = time.perf_counter() - t0
        grid = ours.loo_curve_["lam"]

        search = GridSearchCV(
            KernelRidge(kernel="rbf", gamma=1.0 / (2.0 * args.width**2)),
            {"alpha": list(grid)},
            cv=LeaveOneOut(),
            scoring="neg_mean_squared_error",
            n_jobs=1,
        )
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ill-conditioned solves at the smallest alphas
            search.fit(X, Y)
        t_grid = time.perf_counter() - t0

    krr_mse = -search.cv_results_["mean_test_score"]
    ours_mse = ours.loo_curve_["squared"]
    rel = np.abs(krr_mse - ours_mse) / np.abs(krr_mse)
    i_ours = int(np.flatnonzero(grid == ours.lam_)[0])
    i_krr = int(np.flatnonzero(grid == search.best_params_["alpha"])[0])

    print(f"two moons n={args.n}, noise 0.2, rbf width {args.width} (gamma {1 / (2 * args.width**2):g}), "
          f"{grid.size} lambdas {grid[0]:.3g} .. {grid[-1]:.3g}, BLAS 1 thread")
    print()
    print(f"| method | chosen lambda | grid index | LOO MSE at choice | time (s) | fits |")
    print(f"|---|---|---|---|---|---|")
    print(f"| WeightedRLSClassifier(lam='auto') fit | {ours.lam_:.6g} | {i_ours} | {ours_mse[i_ours]:.6f} | {t_ours:.4f} | 1 eigh |")
    print(f"| loo_path alone (kernel given) | {path.lams[int(np.argmin(path.squared))]:.6g} | {int(np.argmin(path.squared))} | {path.squared.min():.6f} | {t_path:.4f} | 1 eigh |")
    print(f"| GridSearchCV(KernelRidge, LeaveOneOut) | {search.best_params_['alpha']:.6g} | {i_krr} | {krr_mse[i_krr]:.6f} | {t_grid:.2f} | {args.n * grid.size} |")
    print()
    print(f"same lambda chosen: {i_ours == i_krr}")
    print(f"speed-up (GridSearchCV / our fit): {t_grid / t_ours:.0f}x;  (GridSearchCV / loo_path): {t_grid / t_path:.0f}x")
    well = grid >= 1e-8 * grid[-1]
    print(f"LOO MSE curves, max relative difference: {rel[well].max():.2e} over the {well.sum()} lambdas "
          f">= 1e-8 * largest; {rel.max():.2e} over all (smallest lambdas are ill-conditioned for both)")
    return 0 if i_ours == i_krr else 1


if __name__ == "__main__":
    raise SystemExit(main())
