"""Graph models on MNIST: kNN build, harmonic function by preconditioned CG against a direct solve.

Seed 001 (ch. 4-5): harmonic function on a kNN graph of MNIST digits, "3" against the rest,
CG with a relative residual of 1e-6, and a direct solver for comparison. Here: the 10,000
MNIST test images shipped with the package (``labeler/data/files``), pixels / 255; exact kNN
(scikit-learn) on the raw 784 pixels and on 50 PCA components (the seed compresses by PCA
first). For each graph (unweighted and heat-weighted): the harmonic function for "3 vs rest"
and for ten classes (one-vs-all), solved by CG with Jacobi preconditioning, CG without, MINRES
with Jacobi, and a sparse LU (``splu``), with iterations, seconds, the largest difference to the
direct solution, prediction agreement and accuracy on the unlabelled nodes. Then LGC (row-stochastic,
alpha 0.99) by CG on the same graph. All ratios are taken in the same run; times are wall-clock
seconds on this machine (2 shared cores: run twice and compare).

Usage::

    python benchmarks/graph_models.py                 # n = 10,000, l = 100 labels (a minute)
    python benchmarks/graph_models.py --n 2000 --labels 50   # quick
    python benchmarks/graph_models.py --curve        # also: accuracy against l (seed 001 Fig. 5.4)

``--curve`` adds seed 001's Fig. 5.4 setting: "3" against the rest, 3NN graphs unweighted and
exp-weighted (length scale 400 on 0-255 pixels = 400/255 here), l = 100 ... 900 random labels
(5 seeded draws each), Jacobi CG at 1e-6; accuracy on the unlabelled nodes by thresholding
and with class mass normalisation (the seed used 20,000 training images; here the 10,000 test
images).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from labeler.runtime import configure_threads  # noqa: E402

configure_threads()  # before numpy and numba load (labeler/runtime.py)

import numpy as np  # noqa: E402

from core.graph import HarmonicFunction, LocalGlobalConsistency  # noqa: E402
from core.kernels import knn_graph  # noqa: E402
from labeler.data.bundled import load_mnist  # noqa: E402


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=10_000, help="MNIST test images (at most 10,000)")
    ap.add_argument("--labels", type=int, default=100, help="labelled points, drawn at random (seeded)")
    ap.add_argument("--k", type=int, default=10, help="neighbours")
    ap.add_argument("--pca", type=int, default=50, help="PCA components for the second graph (0: skip)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--curve", action="store_true", help="also accuracy against l (seed 001 Fig. 5.4)")
    args = ap.parse_args(argv)

    data = load_mnist(seed=args.seed, n=args.n)
    X, y = data.X, np.asarray(data.y)
    rng = np.random.default_rng(args.seed)
    L = np.sort(rng.choice(len(y), args.labels, replace=False))
    U = np.setdiff1d(np.arange(len(y)), L)
    print(f"MNIST test set: n = {len(y):,}, d = {X.shape[1]}, {args.labels} random labels (seed {args.seed}), "
          f"k = {args.k}; CG/MINRES relative residual 1e-6 (seed 001)")

    spaces = [("raw 784", X)]
    if args.pca:
        from sklearn.decomposition import PCA

        Z, t_pca = timed(lambda: PCA(args.pca, random_state=args.seed).fit_transform(X))
        spaces.append((f"PCA {args.pca}", Z))
        print(f"PCA to {args.pca} components: {t_pca:.2f} s")

    print()
    print(f"{'features':<9} {'weights':<12} {'kNN s':>6} {'edges':>8} {'task':<8} {'solver':<15} "
          f"{'iters':>6} {'s':>7} {'x direct':>8} {'max|F-F*|':>9} {'agree':>6} {'acc U':>6} {'CMN':>6}")
    for name, F_in in spaces:
        for weights in ("connectivity", "heat"):
            W, t_knn = timed(lambda: knn_graph(F_in, args.k, weights=weights))
            for task in ("3 vs rest", "ten"):
                target = (y == 3).astype(int) if task == "3 vs rest" else y
                ref, t_ref = timed(lambda: HarmonicFunction(solver="direct").fit(W, L, target[L],
                                                                                 classes=np.unique(target)))
                pred_ref = ref.predict()
                rows = [("splu (direct)", ref, t_ref)]
                for solver, pre in (("cg", "jacobi"), ("cg", "none"), ("minres", "jacobi")):
                    model, t = timed(lambda: HarmonicFunction(solver=solver, preconditioner=pre, tol=1e-6)
                                     .fit(W, L, target[L], classes=np.unique(target)))
                    rows.append((f"{solver}+{pre}", model, t))
                for label, model, t in rows:
                    pred = model.predict()
                    model.class_mass = True  # seed 003 eq. 2.7, q from the labelled proportions
                    cmn = np.mean(model.predict()[U] == target[U])
                    print(f"{name:<9} {weights:<12} {t_knn:>6.2f} {W.nnz // 2:>8,} {task:<8} {label:<15} "
                          f"{int(model.n_iter_.max()):>6} {t:>7.3f} {t / t_ref:>8.2f} "
                          f"{np.abs(model.decision_values_ - ref.decision_values_).max():>9.1e} "
                          f"{np.mean(pred[U] == pred_ref[U]):>6.3f} {np.mean(pred[U] == target[U]):>6.3f} {cmn:>6.3f}")
            lgc, t = timed(lambda: LocalGlobalConsistency(0.99, tol=1e-6).fit(W, L, y[L], classes=list(range(10))))
            print(f"{name:<9} {weights:<12} {t_knn:>6.2f} {W.nnz // 2:>8,} {'ten':<8} {'LGC a=0.99 cg':<15} "
                  f"{lgc.n_iter_:>6} {t:>7.3f} {'':>8} {'':>9} {'':>6} {np.mean(lgc.predict()[U] == y[U]):>6.3f}")
    if args.curve:
        accuracy_curve(X, y, args.seed)
    print("\nx direct: time over the sparse LU time of the same row group; max|F-F*|: largest difference "
          "to the direct solution; agree: fraction of unlabelled predictions equal to the direct solver's; acc U: accuracy on "
          "the unlabelled nodes by argmax; CMN: the same with class mass normalisation.")


def accuracy_curve(X, y, seed: int, sizes=(100, 300, 500, 700, 900), draws: int = 5) -> None:
    """Seed 001 Fig. 5.4: "3" vs rest, 3NN, accuracy against l (mean over seeded draws)."""
    target = (y == 3).astype(int)
    print(f"\nseed 001 Fig. 5.4 setting: '3' vs rest, n = {len(y):,}, 3NN, CG+Jacobi 1e-6, {draws} draws per l")
    print(f"{'weights':<12} {'kNN s':>6} " + " ".join(f"{'l=' + str(m):>17}" for m in sizes))
    for weights, sigma in (("connectivity", None), ("heat", 400 / 255)):
        W, t_knn = timed(lambda: knn_graph(X, 3, weights=weights, sigma=sigma))
        cells = []
        for m in sizes:
            thr, cmn, its = [], [], []
            for d in range(draws):
                rng = np.random.default_rng(1000 * seed + 10 * m + d)
                L = np.sort(rng.choice(len(y), m, replace=False))
                U = np.setdiff1d(np.arange(len(y)), L)
                model = HarmonicFunction(tol=1e-6, eps=1e-8).fit(W, L, target[L], classes=[0, 1])
                thr.append(np.mean(model.predict()[U] == target[U]))
                model.class_mass = True
                cmn.append(np.mean(model.predict()[U] == target[U]))
                its.append(int(model.n_iter_.max()))
            cells.append(f"{np.mean(thr):.3f}/{np.mean(cmn):.3f} ({int(np.mean(its))})")
        print(f"{weights:<12} {t_knn:>6.2f} " + " ".join(f"{c:>17}" for c in cells))
    print("cells: accuracy by thresholding / with class mass normalisation (mean CG iterations); "
          "the base rate of 'not 3' is " f"{np.mean(target == 0):.3f}.")


if __name__ == "__main__":
    main()
