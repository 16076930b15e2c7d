"""Our graph models against GraphLearning (J. Calder's ``graphlearning``) on the same kNN graph.

Issue 10 §4. Every table uses ONE weight matrix per pool: GraphLearning's own
``weightmatrix.knn(X, k)`` (self-tuning Gaussian weights ``exp(-4 |x_i - x_j|^2 / d_k(x_i)^2)``,
symmetrised ``(W + W^T) / 2``), with its exact ``knnsearch(method="brute")`` neighbours: the
library's default search for more than 5 features is ``annoy``, which it does not declare as a
dependency. MNIST digit pairs from the bundled test set (pixels / 255).

1. **Laplace learning.** GraphLearning's ``ssl.laplace`` (Jacobi-preconditioned CG to its
   tolerance 1e-5) and our :class:`core.graph.HarmonicFunction` (CG, Jacobi, relative residual
   1e-6; docs/algorithms.md §5) on the same random labelled sets: accuracy of each on the unlabelled
   nodes, agreement of their predictions, the largest difference of the class values, time per fit.
2. **Time per query** at a fixed state (``--labels`` random labels): *pick* = score every
   unlabelled node and take the best, *update* = absorb the answer. GraphLearning's ``var_opt``,
   ``sigma_opt``, ``model_change`` (covariance from 50 eigenpairs of the normalised Laplacian, as
   in its documentation; model change and uncertainty also refit Laplace learning, which their
   pick needs) and ``unc_sampling``; ours: Zhu et al.'s exact expected risk
   (:class:`core.graph.ZhuActiveLearning`, a dense u x u inverse with a rank-one downdate,
   seed 003 §2.8.1) and its approximation at scale, ARLS expected risk on the Gaussian-field
   spectral factor (docs/algorithms.md §9, ``ActiveRLS.from_factor``, rank ``--rank``), plus margin on the
   harmonic function. ``setup`` is the one-off cost (eigenpairs, factor or dense inverse).
3. **Labels to accuracy**: active labelling of MNIST pairs from one random label per class;
   after every label the SAME model, our harmonic function (= Laplace learning, table 1), is
   fitted on the chosen labels and scored on the unlabelled rest. Mean accuracy over the seeds at
   a few label counts, and the labels the mean curve needs to reach 90 / 95 / 98 %.

Usage::

    python benchmarks/graphlearning_compare.py            # n = 1,000 per pair, 5 seeds (minutes)
    python benchmarks/graphlearning_compare.py --quick    # small, seconds (the CI smoke test)
    python benchmarks/graphlearning_compare.py --n 1500 --timing-n 1000,1800

Skips with a note (exit 0) when ``graphlearning`` is not installed (``pip install -e .[peers]``).
Times are wall-clock on this machine (2 shared cores): compare ratios within one run.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from labeler.runtime import configure_threads  # noqa: E402

configure_threads()  # before numpy and numba load (labeler/runtime.py)

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from core.graph import HarmonicFunction, ZhuActiveLearning, parametric_spectrum, spectrum_factor  # noqa: E402
from core.kernels import laplacian_eigenpairs  # noqa: E402
from core.learner import ActiveRLS  # noqa: E402
from core.strategies import query_one  # noqa: E402

K_NEIGHBOURS = 10
GL_EIGENPAIRS = 50  # GraphLearning's documented spectral truncation for var_opt / sigma_opt / model_change
GF_EPS = 1e-2  # Gaussian field 1 / (lambda + eps) (docs/algorithms.md §9)
ARLS_LAM = 1e-3
CHECKPOINTS = (4, 10, 20, 50, 100)
TARGETS = (0.90, 0.95, 0.98)
GL_STRATEGIES = ("gl-vopt", "gl-sigmaopt", "gl-mc", "gl-unc")
OUR_STRATEGIES = ("zhu", "arls-gf", "margin", "random")


def available() -> bool:
    """Whether ``graphlearning`` imports."""
    try:
        import graphlearning  # noqa: F401
    except Exception:  # noqa: BLE001 - any import failure means "not usable here"
        return False
    return True


# --------------------------------------------------------------------------- data and graph
def mnist_pair(pair: tuple[int, int], n: int, seed: int):
    """``n`` MNIST test images of the two digits (pixels / 255) and their codes 0 / 1."""
    from labeler.data.bundled import load_mnist
    ds = load_mnist(seed=seed, n=n, digits=pair)
    y = np.asarray(ds.y, dtype=np.int64)
    return np.asarray(ds.X, dtype=np.float64), np.searchsorted(np.unique(y), y)


def gl_graph(X, k: int = K_NEIGHBOURS) -> sp.csr_matrix:
    """GraphLearning's kNN weight matrix with exact neighbours (symmetric; its diagonal holds 1s)."""
    import graphlearning as gl
    return sp.csr_matrix(gl.weightmatrix.knn(X, k, knn_data=gl.weightmatrix.knnsearch(X, k, method="brute")))


def random_labels(y, size: int, rng) -> np.ndarray:
    """``size`` random nodes holding every class (one per class first, then uniform)."""
    classes = np.unique(y)
    first = [int(rng.choice(np.flatnonzero(y == c))) for c in classes]
    rest = rng.choice(np.setdiff1d(np.arange(len(y)), first), size=max(size - len(first), 0), replace=False)
    return np.concatenate([first, rest]).astype(np.int64)


def gl_laplace(W, labeled, codes, tol: float = 1e-5) -> np.ndarray:
    """GraphLearning's Laplace learning: class values ``u`` of shape (n, T)."""
    import graphlearning as gl
    return gl.ssl.laplace(W, tol=tol).fit(np.asarray(labeled), np.asarray(codes))


def harmonic_values(W, labeled, codes, T: int, solver: str = "cg") -> np.ndarray:
    """Our harmonic function's class values ``F`` of shape (n, T)."""
    return HarmonicFunction(solver=solver).fit(W, labeled, codes, classes=list(range(T))).decision_values_


# --------------------------------------------------------------------------- table 1
def laplace_agreement(pairs, n: int, sizes, seeds: int) -> str:
    """Table: Laplace learning (GraphLearning) against our harmonic function on the same sets."""
    lines = [f"## 1. Laplace learning: GraphLearning against our HarmonicFunction (same graph, n = {n}, "
             f"{seeds} labelled set(s) per size)",
             f"{'pair':<6}{'labels':>7}{'acc GL':>9}{'acc ours':>9}{'agree %':>9}{'max|dF|':>10}"
             f"{'GL ms':>8}{'ours ms':>9}"]
    print("\n".join(lines), flush=True)
    for pair in pairs:
        for size in sizes:
            acc_g, acc_o, agree, diff, t_g, t_o = [], [], [], [], [], []
            for seed in range(seeds):
                X, y = mnist_pair(pair, n, seed)
                W = gl_graph(X)
                L = random_labels(y, size, np.random.default_rng([seed, size]))
                free = np.ones(len(y), dtype=bool)
                free[L] = False
                t0 = time.perf_counter()
                u = gl_laplace(W, L, y[L])
                t1 = time.perf_counter()
                F = harmonic_values(W, L, y[L], 2)
                t2 = time.perf_counter()
                pg, po = u.argmax(axis=1)[free], F.argmax(axis=1)[free]
                acc_g.append(np.mean(pg == y[free]))
                acc_o.append(np.mean(po == y[free]))
                agree.append(np.mean(pg == po))
                diff.append(np.abs(u[free] - F[free]).max())
                t_g.append(t1 - t0)
                t_o.append(t2 - t1)
            lines.append(f"{pair[0]}v{pair[1]:<4}{size:>7}{100 * np.mean(acc_g):9.2f}{100 * np.mean(acc_o):9.2f}"
                         f"{100 * np.mean(agree):9.3f}{max(diff):10.1e}{1e3 * np.median(t_g):8.1f}"
                         f"{1e3 * np.median(t_o):9.1f}")
            print(lines[-1], flush=True)
    return "\n".join(lines)


# --------------------------------------------------------------------------- pickers
class Picker:
    """One acquisition driving labelling on a pool: ``pick()`` a node, ``update(node, code)``."""

    def __init__(self, kind: str, W, y, labeled, *, rank: int, seed: int, eig=None):
        self.kind, self.W, self.n = kind, W, W.shape[0]
        self.labeled = [int(i) for i in labeled]
        self.codes = [int(y[i]) for i in labeled]
        self.T = int(y.max()) + 1
        self.rng = np.random.default_rng([seed, 23])
        t0 = time.perf_counter()
        if kind in ("gl-vopt", "gl-sigmaopt", "gl-mc", "gl-unc"):
            import graphlearning as gl
            al = gl.active_learning
            if kind == "gl-unc":
                self.acq = al.unc_sampling()
            else:
                evals, evecs = eig if eig is not None else \
                    gl.graph(W).eigen_decomp(normalization="normalized", k=GL_EIGENPAIRS)
                C = np.diag(1.0 / (evals + 1e-11))
                make = {"gl-vopt": al.var_opt, "gl-sigmaopt": al.sigma_opt, "gl-mc": al.model_change}[kind]
                self.acq = make(C=C, V=evecs)
                self.acq.update(np.asarray(self.labeled), np.asarray(self.codes))
        elif kind == "zhu":
            self.zhu = ZhuActiveLearning(eps=1e-8).fit(W, self.labeled, self.codes, classes=list(range(self.T)))
        elif kind == "arls-gf":
            lam, V = laplacian_eigenpairs(W, rank, seed=seed)
            Phi = spectrum_factor(V, parametric_spectrum(lam, "gaussian_field", eps=GF_EPS))
            self.learner = ActiveRLS.from_factor(Phi, classes=list(range(self.T)), lam=ARLS_LAM, random_state=seed)
            self.learner.add_many(self.labeled, self.codes)
        self.setup_seconds = time.perf_counter() - t0

    def unlabeled(self) -> np.ndarray:
        return np.setdiff1d(np.arange(self.n), self.labeled)

    def pick(self) -> int:
        unl = self.unlabeled()
        if self.kind == "random":
            return int(self.rng.choice(unl))
        if self.kind == "zhu":
            return int(self.zhu.unlabeled_[int(np.argmin(self.zhu.expected_risks()))])
        if self.kind == "arls-gf":
            return int(query_one(self.learner, "arls", self.rng))
        if self.kind == "margin":
            top2 = np.sort(harmonic_values(self.W, self.labeled, self.codes, self.T)[unl], axis=1)[:, -2:]
            return int(unl[int(np.argmin(top2[:, 1] - top2[:, 0]))])
        u = None
        if self.kind in ("gl-mc", "gl-unc"):  # their acquisition reads Laplace learning's output
            u = gl_laplace(self.W, self.labeled, self.codes)
        return int(unl[int(np.argmax(self.acq.compute(u, unl)))])

    def update(self, node: int, code: int) -> None:
        self.labeled.append(int(node))
        self.codes.append(int(code))
        if self.kind == "zhu":
            self.zhu.add(int(node), int(code))
        elif self.kind == "arls-gf":
            self.learner.add(int(node), int(code))
        elif self.kind.startswith("gl-"):
            self.acq.update(np.array([node]), np.array([code]))


# --------------------------------------------------------------------------- table 2
def query_times(pair, sizes, labels: int, rank: int, repeats: int) -> str:
    """Table: setup, pick and update time of every acquisition at ``labels`` random labels."""
    lines = [f"## 2. Time per query, MNIST {pair[0]} vs {pair[1]}, {labels} random labels (median of "
             f"{repeats} consecutive queries; ms)",
             f"{'n':>6}  {'acquisition':<26}{'setup ms':>10}{'pick ms':>10}{'update ms':>11}{'x zhu':>8}"]
    print("\n".join(lines), flush=True)
    names = {"gl-vopt": "GL var_opt (50 eig)", "gl-sigmaopt": "GL sigma_opt (50 eig)",
             "gl-mc": "GL model_change (50 eig)", "gl-unc": "GL unc_sampling",
             "zhu": "ours Zhu exact (dense)", "arls-gf": f"ours ARLS GF factor r={rank}",
             "margin": "ours margin (harmonic)"}
    import graphlearning as gl
    for n in sizes:
        X, y = mnist_pair(pair, n, 0)
        W = gl_graph(X)
        L = random_labels(y, labels, np.random.default_rng(0))
        t0 = time.perf_counter()
        eig = gl.graph(W).eigen_decomp(normalization="normalized", k=GL_EIGENPAIRS)
        eig_seconds = time.perf_counter() - t0
        rows = {}
        for kind in names:
            p = Picker(kind, W, y, L, rank=min(rank, n - 2), seed=0, eig=eig)
            picks, updates = [], []
            i = p.pick()  # one untimed query first: compiles (numba) and warms caches for every method
            p.update(i, int(y[i]))
            for _ in range(repeats):
                t0 = time.perf_counter()
                i = p.pick()
                t1 = time.perf_counter()
                p.update(i, int(y[i]))
                updates.append(time.perf_counter() - t1)
                picks.append(t1 - t0)
            setup = p.setup_seconds + (eig_seconds if kind in ("gl-vopt", "gl-sigmaopt", "gl-mc") else 0.0)
            rows[kind] = (setup, np.median(picks), np.median(updates))
        ref = rows["zhu"][1] + rows["zhu"][2]
        for kind, (setup, pick, upd) in rows.items():
            lines.append(f"{n:>6}  {names[kind]:<26}{1e3 * setup:10.1f}{1e3 * pick:10.2f}{1e3 * upd:11.2f}"
                         f"{(pick + upd) / ref:8.2f}")
            print(lines[-1], flush=True)
    lines.append("(setup of GL var_opt / sigma_opt / model_change includes its 50 eigenpairs; a warm-up query precedes the timed ones; x zhu = "
                 "(pick + update) / Zhu's)")
    return "\n".join(lines)


# --------------------------------------------------------------------------- table 3
def run_curve(kind, W, y, seed: int, budget: int, rank: int, eig=None) -> np.ndarray:
    """Accuracy of the harmonic function on the unlabelled nodes after 2 .. budget labels."""
    T = int(y.max()) + 1
    init = random_labels(y, T, np.random.default_rng([seed, 5]))
    p = Picker(kind, W, y, init, rank=rank, seed=seed, eig=eig)
    acc = []
    while True:
        L = np.asarray(p.labeled)
        pred = harmonic_values(W, L, y[L], T).argmax(axis=1)
        free = np.ones(len(y), dtype=bool)
        free[L] = False
        acc.append(np.mean(pred[free] == y[free]))
        if len(p.labeled) >= budget:
            return np.asarray(acc)
        i = p.pick()
        if i in p.labeled:
            raise RuntimeError(f"{kind} picked the labelled node {i}")
        p.update(i, int(y[i]))


def labels_to_accuracy(pairs, n: int, seeds: int, budget: int, rank: int, strategies) -> str:
    """Table: mean accuracy at the checkpoints and labels to reach the targets, per pair."""
    import graphlearning as gl
    cps = [c for c in CHECKPOINTS if c <= budget]
    lines = [f"## 3. Labels to accuracy: harmonic function on the unlabelled rest (n = {n}, {seeds} seed(s), "
             "one initial label per class)"]
    print(lines[0], flush=True)
    for pair in pairs:
        curves = {k: [] for k in strategies}
        for seed in range(seeds):
            X, y = mnist_pair(pair, n, seed)
            W = gl_graph(X)
            eig = gl.graph(W).eigen_decomp(normalization="normalized", k=GL_EIGENPAIRS)
            for kind in strategies:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    curves[kind].append(run_curve(kind, W, y, seed, budget, rank, eig))
        lines.append(f"{pair[0]} vs {pair[1]}")
        lines.append(f"  {'strategy':<13}" + "".join(f"{'@' + str(c):>7}" for c in cps) + f"{'AUC':>7}"
                     + "".join(f"{'to ' + str(int(100 * t)) + '%':>8}" for t in TARGETS))
        print("\n".join(lines[-2:]), flush=True)
        for kind, runs in curves.items():
            mean = np.mean(runs, axis=0)  # index j = 2 + j labels
            cells = "".join(f"{100 * mean[c - 2]:7.1f}" for c in cps)
            reach = ""
            for t in TARGETS:
                hit = np.flatnonzero(mean >= t)
                reach += f"{int(hit[0]) + 2 if hit.size else '>' + str(budget):>8}"
            lines.append(f"  {kind:<13}{cells}{100 * mean.mean():7.2f}{reach}")
            print(lines[-1], flush=True)
    return "\n".join(lines)


# --------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", default="3-5,4-9", help="digit pairs, e.g. 3-5,4-9,1-7")
    ap.add_argument("--n", type=int, default=1000, help="points per pair pool (tables 1 and 3)")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--sizes", default="4,10,20,50,100", help="labelled-set sizes of table 1")
    ap.add_argument("--timing-n", default="500,1000,1800", help="pool sizes of table 2 (the 3-5 pair has 1,902 images)")
    ap.add_argument("--labels", type=int, default=20, help="labels in force while timing (table 2)")
    ap.add_argument("--repeats", type=int, default=5, help="queries timed per acquisition (table 2)")
    ap.add_argument("--budget", type=int, default=100, help="labels of table 3")
    ap.add_argument("--rank", type=int, default=100, help="eigenpairs of our Gaussian-field factor")
    ap.add_argument("--strategies", default=",".join(GL_STRATEGIES + OUR_STRATEGIES))
    ap.add_argument("--tables", default="1,2,3")
    ap.add_argument("--quick", action="store_true", help="small sizes, 1 seed (CI smoke test, seconds)")
    args = ap.parse_args(argv)
    if not available():
        print("# skipped: graphlearning is not installed (`pip install -e .[peers]` adds it)")
        return 0
    if args.quick:
        args.n, args.seeds, args.sizes, args.timing_n = 200, 1, "4,20", "200"
        args.repeats, args.budget, args.rank, args.pairs = 2, 12, 30, "3-5"
    pairs = [tuple(int(d) for d in p.split("-")) for p in args.pairs.split(",")]
    strategies = args.strategies.split(",")
    unknown = [s for s in strategies if s not in GL_STRATEGIES + OUR_STRATEGIES]
    if unknown:
        ap.error(f"unknown strategy(ies) {unknown}; choose from {', '.join(GL_STRATEGIES + OUR_STRATEGIES)}")
    from importlib.metadata import version
    print(f"# python benchmarks/graphlearning_compare.py {' '.join(argv if argv is not None else sys.argv[1:])}"
          .rstrip())
    print(f"# graphlearning {version('graphlearning')}; graph: its knn(X, {K_NEIGHBOURS}) with exact "
          "(brute) neighbours, shared by every method")
    tables = args.tables.split(",")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "1" in tables:
            print()
            laplace_agreement(pairs, args.n, [int(s) for s in args.sizes.split(",")], args.seeds)
        if "2" in tables:
            print()
            print(query_times(pairs[0], [int(s) for s in args.timing_n.split(",")], args.labels, args.rank,
                              args.repeats).splitlines()[-1])  # the rows printed as they came
        if "3" in tables:
            print()
            labels_to_accuracy(pairs, args.n, args.seeds, args.budget, args.rank, strategies)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
