"""Seed 004 Table 1 (Zhu, Kandola, Ghahramani, Lafferty 2004) on MNIST: spectral kernels by alignment.

The seed's digit tasks, with MNIST test images standing in for its digits: one-two (all 2,167
ones and twos of the test set; the seed had 2,200), odd-even and ten digits (the same 4,000
images drawn at random, as the seed's 4,000). Each task: a 10NN unweighted graph
(:func:`core.kernels.knn_graph`), the 200 smallest eigenpairs of its normalised Laplacian
(:func:`core.kernels.laplacian_eigenpairs`), then for each labelled-set size ``repeats``
random labelled sets holding every class (seed 004 §5). Per set and kernel:

* the five semi-supervised kernels of :mod:`core.graph.spectral`: improved order, order,
  maximal alignment (:func:`~core.graph.aligned_spectrum`, NNLS on the alignment cone),
  Gaussian field and diffusion (:func:`~core.graph.fit_parametric_spectrum`: the parameter
  that maximises alignment, the seed's ``fminbnd``); ``K = V diag(mu) V^T`` rescaled to
  trace n;
* the standard kernels on raw pixels: RBF (width and C by 5-fold CV), linear ``x.y`` and
  quadratic ``(x.y + 1)^2`` (:class:`core.kernels.Kernel`'s formulas);
* an SVM on the kernel (``sklearn.svm.SVC(kernel="precomputed")``; C from
  :data:`C_GRID` by stratified 5-fold CV, one-against-all for ten digits, the class with
  the largest margin), and one-vs-all RLS with lambda by exact LOO (:func:`core.rls.loo.loo_path`);
* the training-set alignment (eq. 5) and the seconds of the alignment solve.
"""

from __future__ import annotations

import numpy as np
from sklearn.model_selection import StratifiedKFold
from sklearn.svm import SVC

from core.graph import (
    aligned_spectrum,
    fit_parametric_spectrum,
    kernel_target_alignment,
    target_matrix,
)
from core.kernels import knn_graph, laplacian_eigenpairs
from core.kernels.kernel import median_distance
from core.rls.loo import loo_path, select_index

from ._common import (
    check_repeats,
    draw_labelled,
    md_table,
    mnist,
    pm,
    section_command,
    timed,
)

__all__ = ["run", "TASKS", "KERNELS", "SEED_TABLE", "evaluate_task", "svm_accuracy", "rls_accuracy"]

TITLE = "Seed 004: spectral graph kernels by kernel-target alignment (Table 1)"
SEMI = ("improved_order", "order", "gaussian_field", "diffusion", "max_alignment")
STANDARD = ("rbf", "linear", "quadratic")
KERNELS = SEMI + STANDARD
NAMES = {"improved_order": "Improved order", "order": "Order", "gaussian_field": "Gaussian field",
         "diffusion": "Diffusion", "max_alignment": "Max-align", "rbf": "RBF", "linear": "Linear",
         "quadratic": "Quadratic"}
C_GRID = (0.1, 1.0, 10.0, 100.0)
RBF_WIDTHS = (0.25, 0.5, 1.0, 2.0)  # times the median pairwise distance
K_NN = 10
RANK = 200

# task -> (digits, pool size, labelled-set sizes, target)
TASKS = {
    "one-two": ((1, 2), None, (10, 20, 30, 40, 50), "digit"),
    "odd-even": (None, 4000, (10, 20, 30, 40, 50), "parity"),
    "ten digits": (None, 4000, (50, 100, 150, 200, 250), "digit"),
}
QUICK_TASKS = {
    "one-two": ((1, 2), 400, (10, 30), "digit"),
    "odd-even": (None, 600, (10, 30), "parity"),
    "ten digits": (None, 600, (50, 100), "digit"),
}

# Seed 004 Table 1, read from the paper: per task and kernel, per size (accuracy %, sd, alignment,
# SeDuMi seconds or None). The paper omits odd-even ("similar and omitted for space", footnote 3).
_S = None
SEED_TABLE = {
    "one-two": {
        "improved_order": [(96.2, 2.7, .87, 2), (96.4, 2.8, .87, 3), (98.2, 2.1, .84, 8), (98.3, 1.9, .84, 13),
                           (98.4, 1.9, .83, 31)],
        "order": [(90.6, 14.0, .66, 1), (93.9, 8.7, .64, 4), (97.2, 2.5, .61, 7), (96.5, 2.4, .61, 15),
                  (95.6, 9.0, .60, 37)],
        "gaussian_field": [(58.2, 17.6, .43, _S), (87.0, 16.0, .38, _S), (98.1, 2.2, .35, _S), (98.9, 1.8, .36, _S),
                           (99.4, 0.5, .35, _S)],
        "diffusion": [(59.4, 18.9, .53, _S), (83.2, 19.8, .50, _S), (98.1, 2.7, .47, _S), (99.1, 1.4, .48, _S),
                      (99.6, 0.3, .46, _S)],
        "max_alignment": [(85.4, 11.5, .95, 1), (94.5, 1.6, .90, 3), (96.4, 2.1, .86, 6), (96.3, 2.3, .86, 11),
                          (96.6, 2.3, .84, 25)],
        "rbf": [(78.7, 14.3, .38, _S), (90.4, 4.6, .33, _S), (93.6, 3.1, .30, _S), (94.0, 2.7, .29, _S),
                (96.1, 2.4, .28, _S)],
        "linear": [(85.1, 5.7, .26, _S), (86.0, 9.4, .22, _S), (89.6, 5.9, .17, _S), (91.6, 6.3, .18, _S),
                   (93.0, 3.6, .17, _S)],
        "quadratic": [(85.7, 4.8, .30, _S), (90.9, 3.7, .25, _S), (92.9, 2.8, .24, _S), (94.9, 2.0, .21, _S),
                      (95.8, 2.3, .20, _S)],
    },
    "ten digits": {
        "improved_order": [(76.6, 4.3, .47, 26), (84.8, 2.6, .47, 124), (86.5, 1.7, .48, 310), (88.1, 1.3, .47, 708),
                           (89.1, 1.1, .47, 942)],
        "order": [(71.5, 5.0, .21, 26), (83.4, 2.6, .17, 98), (86.4, 1.3, .18, 255), (88.0, 1.3, .16, 477),
                  (89.3, 1.0, .16, 873)],
        "gaussian_field": [(41.4, 6.8, .15, _S), (63.7, 3.5, .12, _S), (75.1, 3.0, .11, _S), (80.4, 2.5, .10, _S),
                           (84.6, 1.4, .10, _S)],
        "diffusion": [(49.8, 6.3, .16, _S), (72.5, 3.3, .13, _S), (80.4, 2.1, .13, _S), (84.4, 1.6, .11, _S),
                      (87.2, 1.3, .11, _S)],
        "max_alignment": [(70.3, 5.2, .51, 25), (80.7, 2.6, .49, 100), (84.5, 1.9, .50, 244), (86.0, 1.5, .49, 523),
                          (87.2, 1.3, .49, 706)],
        "rbf": [(57.0, 4.0, -.62, _S), (69.4, 1.9, -.64, _S), (75.2, 1.4, -.66, _S), (78.3, 1.3, -.65, _S),
                (80.4, 1.4, -.65, _S)],
        "linear": [(50.2, 9.0, -.50, _S), (56.0, 7.8, -.52, _S), (56.2, 7.2, -.53, _S), (60.8, 7.3, -.54, _S),
                   (61.3, 7.6, -.54, _S)],
        "quadratic": [(66.3, 3.7, -.25, _S), (77.2, 2.3, -.29, _S), (81.4, 2.2, -.31, _S), (84.3, 1.7, -.33, _S),
                      (85.7, 1.3, -.33, _S)],
    },
}


# --------------------------------------------------------------------------- learners
def _choose_C(K_LL: np.ndarray, y: np.ndarray, seed: int, C_grid=C_GRID) -> float:
    """C with the best stratified k-fold accuracy (k = min(5, smallest class)); 1 if k < 2."""
    if len(C_grid) == 1:
        return float(C_grid[0])
    k = min(5, int(np.bincount(np.unique(y, return_inverse=True)[1]).min()))
    if k < 2:
        return 1.0
    folds = list(StratifiedKFold(k, shuffle=True, random_state=seed).split(K_LL, y))
    scores = []
    for C in C_grid:
        acc = [np.mean(_svm_predict(K_LL[np.ix_(tr, tr)], y[tr], K_LL[np.ix_(te, tr)], C) == y[te])
               for tr, te in folds]
        scores.append(np.mean(acc))
    return float(C_grid[int(np.argmax(scores))])  # ties: the smallest C


def _svm_predict(K_tr: np.ndarray, y_tr: np.ndarray, K_te: np.ndarray, C: float) -> np.ndarray:
    """SVM on a precomputed kernel; more than two classes: one-against-all, largest margin."""
    classes = np.unique(y_tr)
    if classes.size == 2:
        return SVC(C=C, kernel="precomputed").fit(K_tr, y_tr).predict(K_te)
    scores = np.column_stack([SVC(C=C, kernel="precomputed").fit(K_tr, (y_tr == c).astype(int))
                              .decision_function(K_te) for c in classes])
    return classes[np.argmax(scores, axis=1)]


def svm_accuracy(K_nL: np.ndarray, L: np.ndarray, y: np.ndarray, seed: int = 0, C_grid=C_GRID) -> tuple[float, float]:
    """Accuracy on the unlabelled nodes of an SVM on ``K[:, L]`` (n, l), C by CV; and the C."""
    U = np.setdiff1d(np.arange(y.size), L)
    K_LL = K_nL[L]
    C = _choose_C(K_LL, y[L], seed, C_grid)
    return float(np.mean(_svm_predict(K_LL, y[L], K_nL[U], C) == y[U])), C


def rls_accuracy(K_nL: np.ndarray, L: np.ndarray, y: np.ndarray) -> float:
    """Accuracy on the unlabelled nodes of one-vs-all RLS with offset, lambda by exact LOO error."""
    U = np.setdiff1d(np.arange(y.size), L)
    classes = np.unique(y[L])
    Y = np.where(y[L][:, None] == classes[None, :], 1.0, -1.0)
    K_LL = K_nL[L]
    path = loo_path(0.5 * (K_LL + K_LL.T), Y, fit_offset=True)
    i = select_index(path.classification)
    F = K_nL[U] @ path.dual_coef[i] + path.intercept[i]
    return float(np.mean(classes[np.argmax(F, axis=1)] == y[U]))


# --------------------------------------------------------------------------- one task
def evaluate_task(X, y, sizes, repeats: int, *, rank: int = RANK, n_neighbors: int = K_NN, seed: int = 0,
                  C_grid=C_GRID, log=None) -> dict:
    """Every kernel on ``repeats`` labelled sets per size.

    Returns
    -------
    dict
        ``{"graph_seconds", "eigen_seconds", "n", "results"}`` with ``results[kernel][size]`` a
        dict of lists ``svm``, ``rls``, ``align``, ``seconds`` (one entry per labelled set).
    """
    y = np.asarray(y)
    n = y.size
    W, t_graph = timed(lambda: knn_graph(X, n_neighbors))
    (lam, V), t_eig = timed(lambda: laplacian_eigenpairs(W, rank, seed=seed))
    sq = np.einsum("ij,ij->i", X, X)
    width0 = median_distance(X, max_points=1000, seed=seed)
    results = {k: {s: {"svm": [], "rls": [], "align": [], "seconds": []} for s in sizes} for k in KERNELS}
    for s_i, size in enumerate(sizes):
        for r in range(repeats):
            rng = np.random.default_rng([seed, s_i, r])
            L = draw_labelled(y, size, rng)
            T = target_matrix(y[L])
            cv_seed = int(rng.integers(2**31 - 1))
            for kern in SEMI:
                if kern in ("gaussian_field", "diffusion"):
                    (mu, _p, align), sec = timed(lambda: fit_parametric_spectrum(lam, V, L, y[L], kern))
                else:
                    (mu, align), sec = timed(lambda: aligned_spectrum(lam, V, L, y[L], kern))
                K_nL = (V * (mu * (n / mu.sum()))) @ V[L].T  # trace n
                _record(results[kern][size], K_nL, L, y, align, sec, cv_seed, C_grid)
            G = X @ X[L].T  # (n, l) inner products, shared by the standard kernels
            D2 = np.maximum(sq[:, None] + sq[L][None, :] - 2.0 * G, 0.0)
            _record(results["linear"][size], G, L, y, kernel_target_alignment(G[L], T), np.nan, cv_seed, C_grid)
            Q = (G + 1.0) ** 2
            _record(results["quadratic"][size], Q, L, y, kernel_target_alignment(Q[L], T), np.nan, cv_seed, C_grid)
            K_rbf = _rbf_by_cv(D2, L, y, width0, cv_seed, C_grid)
            _record(results["rbf"][size], K_rbf, L, y, kernel_target_alignment(K_rbf[L], T), np.nan, cv_seed, C_grid)
        if log is not None:
            log(f"  size {size}: " + ", ".join(f"{k} {100 * np.mean(results[k][size]['svm']):.1f}" for k in KERNELS))
    return {"graph_seconds": t_graph, "eigen_seconds": t_eig, "n": n, "results": results,
            "width": width0}


def _rbf_by_cv(D2: np.ndarray, L: np.ndarray, y: np.ndarray, width0: float, seed: int, C_grid) -> np.ndarray:
    """The RBF kernel ``exp(-d^2 / (2 w^2))`` (n, l) whose width has the best CV accuracy (seed: 5-fold CV)."""
    best, best_K = -1.0, None
    yL = y[L]
    k = min(5, int(np.bincount(np.unique(yL, return_inverse=True)[1]).min()))
    for f in RBF_WIDTHS:
        K = np.exp(-D2 / (2.0 * (f * width0) ** 2))
        if k < 2:
            return np.exp(-D2 / (2.0 * width0**2))
        K_LL = K[L]
        folds = list(StratifiedKFold(k, shuffle=True, random_state=seed).split(K_LL, yL))
        score = max(np.mean([np.mean(_svm_predict(K_LL[np.ix_(tr, tr)], yL[tr], K_LL[np.ix_(te, tr)], C) == yL[te])
                             for tr, te in folds]) for C in C_grid)
        if score > best:
            best, best_K = score, K
    return best_K


def _record(cell: dict, K_nL, L, y, align, sec, cv_seed, C_grid) -> None:
    acc, _C = svm_accuracy(K_nL, L, y, cv_seed, C_grid)
    cell["svm"].append(acc)
    cell["rls"].append(rls_accuracy(K_nL, L, y))
    cell["align"].append(float(align))
    cell["seconds"].append(float(sec))


# --------------------------------------------------------------------------- the section
def run(quick: bool = False, repeats: int | None = None, log=None) -> str:
    """Run seed 004's digit tasks and return the markdown section (see the module docstring)."""
    reps = check_repeats(repeats, 2 if quick else 30)
    tasks = QUICK_TASKS if quick else TASKS
    rank = 40 if quick else RANK
    C_grid = (1.0, 10.0) if quick else C_GRID
    outcomes = {}
    for name, (digits, n, sizes, target) in tasks.items():
        X, y_digit = mnist(n, digits, seed=0)  # odd-even and ten digits: the same images
        y = y_digit % 2 if target == "parity" else y_digit
        if log is not None:
            log(f"[seed004] {name}: n = {y.size}, {reps} sets per size")
        outcomes[name] = (sizes, evaluate_task(X, y, sizes, reps, rank=rank, C_grid=C_grid, log=log))
    return render(outcomes, quick, reps, repeats, rank)


def _seed_rows(name: str, sizes) -> dict | None:
    """The seed's entries for these sizes (``None`` if it has no numbers for the task or a size)."""
    table = SEED_TABLE.get(name)
    full = TASKS[name][2]
    if table is None or any(s not in full for s in sizes):
        return None
    return {k: [table[k][full.index(s)] for s in sizes] for k in KERNELS}


def _cell(values, digits=1, scale=100.0):
    return pm(values, digits, scale)


def render(outcomes: dict, quick: bool, reps: int, repeats, rank: int) -> str:
    """The markdown section from :func:`evaluate_task` outcomes per task."""
    lines = [f"## {TITLE}", "", f"Command: `{section_command('seed004', quick, repeats)}`", ""]
    lines += [
        ("Quick run (small pools, few sets; not for comparison). " if quick else "")
        + f"{reps} random labelled set(s) per size (the seed: 30), every class present; {K_NN}NN unweighted "
        f"graph, {rank} smallest eigenpairs of the normalised Laplacian; SVM with C by stratified CV from "
        f"{C_GRID if not quick else (1.0, 10.0)}, one-against-all for ten digits; RLS one-vs-all with lambda by "
        "exact LOO. Accuracy on the unlabelled rest (%), mean ± sd over the sets; alignment on the labelled "
        "set (eq. 5); seconds of the alignment solve (ours: NNLS or a bounded scalar search on this "
        "machine; the seed's: SeDuMi/YALMIP on a 3 GHz machine).",
        "",
    ]
    summary = []
    for name, (sizes, out) in outcomes.items():
        res = out["results"]
        seed = _seed_rows(name, sizes)
        big = sizes[-1]
        best_ours = max(KERNELS, key=lambda k: np.mean(res[k][big]["svm"]))
        best_seed = None
        if seed is not None:
            best_seed = max(KERNELS, key=lambda k: seed[k][-1][0])
        summary.append([name, out["n"], big, NAMES[best_ours] + f" ({100 * np.mean(res[best_ours][big]['svm']):.1f})",
                        NAMES[best_seed] + f" ({seed[best_seed][-1][0]:.1f})" if best_seed else "not in the paper",
                        f"{100 * np.mean(res['improved_order'][big]['svm']):.1f} / "
                        f"{100 * np.mean(res['improved_order'][big]['rls']):.1f}",
                        f"{seed['improved_order'][-1][0]:.1f}" if best_seed else "-"])
    lines += ["### Summary (largest labelled set)", "",
              md_table(["task", "n", "labels", "best kernel, ours (SVM %)", "best kernel, seed (%)",
                        "improved order, ours SVM / RLS", "improved order, seed"], summary), ""]
    for name, (sizes, out) in outcomes.items():
        res = out["results"]
        seed = _seed_rows(name, sizes)
        has_seed = seed is not None
        lines += [f"### {name}", "",
                  f"n = {out['n']:,}; kNN graph {out['graph_seconds']:.1f} s, {rank} eigenpairs "
                  f"{out['eigen_seconds']:.1f} s; RBF widths {', '.join(str(f) for f in RBF_WIDTHS)} x "
                  f"{out['width']:.2f} (median distance)."
                  + ("" if has_seed else " The seed gives no numbers for this task (footnote 3: 'similar "
                     "and omitted for space')."), ""]
        rows = []
        for k in KERNELS:
            for j, size in enumerate(sizes):
                c = res[k][size]
                s = seed[k][j] if has_seed else None
                sec = np.nanmean(c["seconds"]) if np.isfinite(c["seconds"]).any() else np.nan
                rows.append([NAMES[k], size,
                             f"{s[0]:.1f} ± {s[1]:.1f}" if s else "-",
                             _cell(c["svm"]), _cell(c["rls"]),
                             f"{s[2]:.2f}" if s else "-", f"{np.mean(c['align']):.2f}",
                             (f"{s[3]}" if s and s[3] is not None else "-"),
                             f"{sec:.3f}" if np.isfinite(sec) else "-"])
        lines += [md_table(["kernel", "labels", "seed acc", "ours SVM acc", "ours RLS acc", "seed align",
                            "ours align", "seed s", "ours s"], rows), ""]
    lines += _discussion(outcomes)
    return "\n".join(lines).rstrip() + "\n"


def _discussion(outcomes: dict) -> list[str]:
    """Honest words, computed from the run: where we agree with the seed and where not."""
    notes = ["### Where we differ and why", ""]
    for name, (sizes, out) in outcomes.items():
        res = out["results"]
        big = sizes[-1]
        semi = np.mean([np.mean(res[k][big]["svm"]) for k in SEMI])
        std = np.mean([np.mean(res[k][big]["svm"]) for k in STANDARD])
        order_ok = all(np.mean(res["order"][s]["align"]) >= np.mean(res[p][s]["align"]) - 1e-9
                       for s in sizes for p in ("diffusion", "gaussian_field"))
        notes.append(f"- {name}: at {big} labels the semi-supervised kernels average "
                     f"{100 * semi:.1f}% with the SVM against {100 * std:.1f}% for the standard ones "
                     f"({'ahead, as in the seed' if semi > std else 'not ahead, unlike the seed'}). "
                     f"Order-constrained alignment >= diffusion's and Gaussian field's at every size: "
                     f"{'yes' if order_ok else 'no'} (it must be: both parametric spectra are decreasing, "
                     "so they lie in the order cone over which the order kernel maximises alignment).")
    notes += [
        "- Data: MNIST test images (28x28, pixels / 255) stand in for the seed's digits (the seed does not "
        "name their source or resolution); the graphs differ, so the numbers can agree in pattern only.",
        "- Laplacian: the normalised one (the seed allows either; its eigenpairs take about a second here, the "
        "combinatorial one's 30 s). The improved order kernel leaves the eigenvalue-0 eigenvector free "
        "(core/graph/spectral.py: the D^1/2-weighted constant vector of the normalised Laplacian).",
        "- Solver: the seed solved the QCQP with SeDuMi (up to 942 s per set); ours is an exact NNLS on the "
        "same cone (checked against Clarabel in tests/test_graph_spectral.py), milliseconds per set. "
        "The columns 'seconds' are therefore not comparable as software, only as orders of magnitude.",
        "- C: the seed chose C by cross validation without giving the grid; ours is the grid above, stratified "
        "k-fold with k = min(5, smallest class count), C = 1 when a class has a single label.",
        "- Alignment of the standard kernels: the seed's RBF alignments on ten digits are negative; ours are "
        "computed with the same eq. 5 on uncentred kernels.",
        "",
    ]
    return notes
