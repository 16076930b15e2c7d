"""Seed 003 reproduction: per-feature graph widths by LOOHL and MinEnt on MNIST 4 vs 9, 30 labels.

The seed (Zhang, graph hyper-parameter learning; §5.4.1, Fig. 5.1, Table 5.1, App. A.1, B.3,
B.4) runs the harmonic function (HEM) with a cross-validated common width, MinEnt and
LOOHL+Sqr on 1000 fours and 1000 nines from MNIST, 475 pixel features, with one width per
feature. Here (issue 10 §3):

* data: every 4 and 9 of the MNIST test set shipped with the package (982 + 1009 = 1991
  images), pre-processed as the seed's App. A.1 (drop constant pixels, scale each to [0, 1],
  zero values below 0.5, drop pixels non-zero in fewer than 3 images, unit-length rows); no
  PCA: one width per remaining pixel, as the seed;
* per repeat, 30 random labels (at least 2 of each class), accuracy on every other image, with
  thresholding at 0.5 (Thrd) and class mass normalisation (CMN, seed eq. 2.7);
* HEM: common width from the seed's grid 0.05 ... 0.25 chosen by the harmonic function's
  balanced LOO error, ties by the LOOHL loss (the seed used 5-fold CV); LOOHL+Sqr and MinEnt start from it (:func:`core.graph.learn_graph_widths`,
  seed settings: eps 0.01, cubic loss, C2/C1 = 1/100, at most 35 evaluations; MinEnt eps 0.1 as
  seed 001); the cheap version: per-pixel RBF widths of RLS learned by its exact LOO on the
  30 labels alone (:func:`core.rls.learn_rls_widths`), used as graph widths ``sigma = sqrt(2) s``.

Run: ``python -m labeler.experiments.graph_repro.seed003 [--quick] [--repeats K]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from dataclasses import dataclass, field

import numpy as np

from core.graph import class_mass_normalize
from core.graph.hyper import harmonic_loo, harmonic_soft_labels, learn_graph_widths, loohl_objective, transition_matrix
from core.kernels.ard import scaled_sq_distances
from core.rls import default_widths
from core.rls.ard import learn_rls_widths, rls_loo_objective

__all__ = ["run", "experiment", "render", "seed_preprocess", "SIGMA_GRID"]

#: The seed's candidate common widths for HEM (App. B.4 point 3), on unit-length rows.
SIGMA_GRID = (0.05, 0.1, 0.15, 0.2, 0.25)
#: Smoothing of the final classification: the seed classifies on P (eps 0); at small widths some
#: images are then cut off from every label, so a vanishing eps gives them the eps -> 0 limit.
FINAL_EPS = 1e-6
#: lambda of the RLS rows (start value when learned with the widths).
RLS_LAM = 0.1
METHODS = ("HEM (fixed width)", "LOOHL+Sqr", "MinEnt", "RLS, common width by LOO", "RLS, per-pixel widths by LOO (cheap)")


def seed_preprocess(X: np.ndarray) -> np.ndarray:
    """Seed 003 App. A.1 steps 1-5 on raw pixels (rows = images)."""
    X = np.asarray(X, dtype=np.float64)
    X = X[:, X.max(axis=0) > X.min(axis=0)]
    lo, hi = X.min(axis=0), X.max(axis=0)
    X = (X - lo) / (hi - lo)
    X[X < 0.5] = 0.0
    X = X[:, (X > 0).sum(axis=0) >= 3]
    norm = np.linalg.norm(X, axis=1, keepdims=True)
    return X / np.where(norm > 0, norm, 1.0)  # an image with no pixel above 0.5 stays all zero


def _load(n: int | None, seed: int):
    from labeler.data.bundled import load_mnist

    ds = load_mnist(seed=seed, n=n, digits=(4, 9))
    return seed_preprocess(ds.X), np.asarray(ds.y)


def _labelled_set(y, size, rng):
    while True:
        L = np.sort(rng.choice(y.size, size=size, replace=False))
        if np.bincount((y[L] == 9).astype(int), minlength=2).min() >= 2:
            return L


def _accuracy(f, L, y, classes=(4, 9)):
    U = np.setdiff1d(np.arange(y.size), L)
    truth = y[U] == classes[1]
    thrd = float(np.mean((f[U] > 0.5) == truth))
    q = np.bincount((y[L] == classes[1]).astype(int), minlength=2) / L.size
    F = class_mass_normalize(np.column_stack([1.0 - f[U], f[U]]), q)
    cmn = float(np.mean((F[:, 1] > F[:, 0]) == truth))
    return thrd, cmn


def _loo_score(X, L, yl, sigma):
    """(balanced LOO error of the harmonic function thresholded at 0.5, LOOHL loss) at one width."""
    y01 = (yl == 9).astype(float)
    _, _, _, Pt = transition_matrix(X, sigma, 0.01)
    fhat = harmonic_loo(Pt, L, np.setdiff1d(np.arange(X.shape[0]), L), y01)[0]
    wrong = (fhat > 0.5) != (y01 > 0.5)
    error = 0.5 * (wrong[y01 > 0.5].mean() + wrong[y01 < 0.5].mean())
    return float(error), loohl_objective(X, L, yl, sigma, gradient=False)


def _rls_accuracy(X, L, y, widths, lam):
    """(accuracy, nan): weighted RLS with offset on the labels, ARD kernel, sign on the rest."""
    yl = np.where(y[L] == 9, 1.0, -1.0)
    l = L.size
    K = np.exp(-0.5 * scaled_sq_distances(X[L], widths))
    A = np.block([[K + lam * np.eye(l), np.ones((l, 1))], [np.ones((1, l)), np.zeros((1, 1))]])
    sol = np.linalg.solve(A, np.append(yl, 0.0))
    U = np.setdiff1d(np.arange(y.size), L)
    f = np.exp(-0.5 * scaled_sq_distances(X[U], widths, X[L])) @ sol[:l] + sol[l]
    return float(np.mean((f > 0) == (y[U] == 9))), float("nan")


@dataclass
class Result:
    """Per method lists over repeats: accuracies, seconds, LOO loss before and after."""

    n: int
    m: int
    labels: int
    repeats: int
    max_evals: int
    acc: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)
    evals: dict = field(default_factory=dict)
    loo_fixed: list = field(default_factory=list)
    loo_learned: list = field(default_factory=list)
    sigma0: list = field(default_factory=list)
    rls_loo: list = field(default_factory=list)
    grid_acc: list = field(default_factory=list)
    load: str = ""


def experiment(quick: bool = False, repeats: int | None = None, n_labels: int = 30) -> Result:
    """Run every method on ``repeats`` random labelled sets; see the module docstring."""
    n = 300 if quick else None
    repeats = (2 if quick else 5) if repeats is None else int(repeats)
    max_evals = 8 if quick else 35
    X, y = _load(n, seed=0)
    res = Result(n=X.shape[0], m=X.shape[1], labels=n_labels, repeats=repeats, max_evals=max_evals)
    for name in METHODS:
        res.acc[name], res.seconds[name], res.evals[name] = [], [], []
    rng = np.random.default_rng(2026)
    for _ in range(repeats):
        L = _labelled_set(y, n_labels, rng)
        yl = y[L]
        t0 = time.perf_counter()
        scores = [_loo_score(X, L, yl, s) for s in SIGMA_GRID]
        best = min(range(len(SIGMA_GRID)), key=lambda i: scores[i])
        s0, losses = SIGMA_GRID[best], [scores[best][1]]
        f = harmonic_soft_labels(X, L, yl, s0, eps=FINAL_EPS)
        res.seconds[METHODS[0]].append(time.perf_counter() - t0)
        res.acc[METHODS[0]].append(_accuracy(f, L, y))
        res.evals[METHODS[0]].append(len(SIGMA_GRID))
        res.sigma0.append(s0)
        res.loo_fixed.append(float(np.min(losses)))
        for name, method in ((METHODS[1], "loohl"), (METHODS[2], "minent")):
            t0 = time.perf_counter()
            out = learn_graph_widths(X, L, yl, s0, method=method, max_evals=max_evals)
            f = harmonic_soft_labels(X, L, yl, out.widths, eps=FINAL_EPS)
            res.seconds[name].append(time.perf_counter() - t0)
            res.acc[name].append(_accuracy(f, L, y))
            res.evals[name].append(out.n_evals)
            if method == "loohl":
                res.loo_learned.append(loohl_objective(X, L, yl, out.widths, gradient=False))
        t0 = time.perf_counter()
        grid = default_widths(X[L])
        sq = [rls_loo_objective(X[L], yl, w, RLS_LAM, gradient=False) for w in grid]
        w0 = float(grid[int(np.argmin(sq))])
        res.seconds[METHODS[3]].append(time.perf_counter() - t0)
        res.acc[METHODS[3]].append(_rls_accuracy(X, L, y, w0, RLS_LAM))
        res.evals[METHODS[3]].append(len(grid))
        t0 = time.perf_counter()
        rls = learn_rls_widths(X[L], yl, w0, RLS_LAM, penalty=0.01, max_evals=max_evals)
        res.seconds[METHODS[4]].append(time.perf_counter() - t0)
        res.acc[METHODS[4]].append(_rls_accuracy(X, L, y, rls.widths, rls.lam))
        res.evals[METHODS[4]].append(rls.n_evals)
        res.rls_loo.append((rls.loo_start, rls.loo))
        if not res.grid_acc:
            res.grid_acc = [_accuracy(harmonic_soft_labels(X, L, yl, s, eps=FINAL_EPS), L, y) for s in SIGMA_GRID]
    res.load = " / ".join(f"{v:.2f}" for v in os.getloadavg())
    return res


_SEED_SAYS = {
    METHODS[0]: "below LOOHL+Sqr; CMN helps it a lot (Fig. 5.1 text)",
    METHODS[1]: "best of the three, Thrd and CMN close (Fig. 5.1 text); ~60 min per run at n = 2000 (B.3)",
    METHODS[2]: "inferior to HEM and LOOHL (§5.4.1 point 3), even with its best grid point",
    METHODS[3]: "not in the seed (baseline of the cheap version)",
    METHODS[4]: "not in the seed (issue 10's cheap version: exact RLS LOO with gradients)",
}


def _ms(values):
    a = 100.0 * np.asarray(values)
    if np.all(np.isnan(a)):
        return "n/a"
    return f"{a.mean():.1f} ± {a.std():.1f}" if a.size > 1 else f"{a.mean():.1f}"


#: Learning runs whose objective evaluations the cap bounds (the grid rows count grid points).
_CAPPED = (METHODS[1], METHODS[2], METHODS[4])
#: A CMN gain (points of accuracy) below this is "no large gain" against the seed's "significant".
_LARGE_GAIN = 5.0


def _most_evals(res: Result) -> int:
    return int(max(max(res.evals[name]) for name in _CAPPED))


def _cap_sentence(res: Result) -> str:
    """The cap as run, against the seed's 35 (App. B.4 point 6)."""
    most = _most_evals(res)
    if most <= res.max_evals:
        return (f"at most {res.max_evals} objective evaluations per learning run (seed: 35; "
                f"largest count here {most}).")
    return (f"a cap of {res.max_evals} objective evaluations per learning run (seed: a strict 35), "
            f"which L-BFGS-B checks only between iterations: runs here took up to {most} "
            "(a departure, listed below).")


def _cap_departure(res: Result) -> str:
    most = _most_evals(res)
    if most <= res.max_evals:
        return f"every learning run stayed within {res.max_evals} objective evaluations (the seed's 35)."
    return (f"the seed stops lmvm after 35 function evaluations (App. B.4 point 6); L-BFGS-B is given "
            f"maxfun = {res.max_evals} but tests it only at the end of an iteration, whose line search "
            f"may evaluate more than once, so runs here took up to {most} evaluations "
            f"({most - res.max_evals} more than the cap). The evaluations column counts every call.")


def _gain(res: Result, name: str) -> float:
    acc = 100.0 * np.asarray(res.acc[name])
    return float(np.mean(acc[:, 1] - acc[:, 0]))


def _contradictions(res: Result) -> list[str]:
    """Where the run's numbers disagree with the seed's written conclusions (§5.4.1)."""
    hem, loohl = _gain(res, METHODS[0]), _gain(res, METHODS[1])
    grid = [100.0 * (c - a) for a, c in res.grid_acc]
    lines = []
    if hem < _LARGE_GAIN:
        lines.append(
            f"- Class mass normalisation adds {hem:+.1f} points to HEM (Thrd -> CMN, mean over repeats), where "
            "the seed reports on 4 vs 9 that HEM+CMN \"does yield significant improvement on top of HEM+Thrd\" "
            "(§5.4.1 point 2, the basis of its claim that the cross-validated graph is poor). Over the seed's "
            f"grid of common widths CMN's gain on the first labelled set ranges from {min(grid):+.0f} to "
            f"{max(grid):+.0f} points (line above).")
    else:
        lines.append(f"- None on CMN: it adds {hem:+.1f} points to HEM, a large gain as the seed reports "
                     "(§5.4.1 point 2).")
    if loohl >= hem and hem < _LARGE_GAIN:
        lines.append(f"- Hence the seed's indicator (CMN's gain for LOOHL+Sqr small beside HEM's) does not "
                     f"hold here: CMN adds {loohl:+.1f} points to LOOHL+Sqr, not less than to HEM.")
    return lines


def render(res: Result, command: str) -> str:
    """The markdown section of a :class:`Result`."""
    lines = [
        "## Seed 003: learning per-pixel graph widths (LOOHL, MinEnt) on MNIST 4 vs 9",
        "",
        f"Command: `{command}`",
        "",
        f"{res.n} images (every 4 and 9 of the MNIST test set{' , seeded subsample' if res.n < 1991 else ''}), "
        f"{res.m} pixels after the seed's pre-processing (App. A.1; the seed kept 475 of its 2000 "
        f"images), one width per pixel, no PCA; {res.labels} random labels per repeat, {res.repeats} repeats; "
        f"accuracy (%) on every unlabelled image, mean ± sd over repeats; {_cap_sentence(res)} "
        f"Time: seconds per run, whole run (grid choice or "
        f"learning plus the final harmonic solve), on {platform.machine()} with 2 cores shared "
        f"(load average {res.load} at the end).",
        "",
        "| method | seed 003 says | ours Thrd | ours CMN | s per run | evaluations |",
        "|---|---|---|---|---|---|",
    ]
    for name in METHODS:
        acc = np.asarray(res.acc[name])
        lines.append(f"| {name} | {_SEED_SAYS[name]} | {_ms(acc[:, 0])} | {_ms(acc[:, 1])} | "
                     f"{np.mean(res.seconds[name]):.1f} | {np.mean(res.evals[name]):.0f} |")
    fixed, learned = np.asarray(res.loo_fixed), np.asarray(res.loo_learned)
    lines += [
        "",
        f"LOO loss LOOHL minimises (balanced cubic, seed eq. 3.5 / 5.1; the Sqr prior is 0 at the start and "
        f"left out here): fixed width {fixed.mean():.4f} -> learned {learned.mean():.4f} (mean over repeats; "
        f"common width chosen: {', '.join(f'{s:g}' for s in res.sigma0)}).",
        "",
        f"RLS LOO squared error on the 30 labels: common width {np.mean([a for a, _ in res.rls_loo]):.3f} -> "
        f"per-pixel widths {np.mean([b for _, b in res.rls_loo]):.3f} (mean over repeats).",
        "",
        "HEM's accuracy against the common width (first labelled set, Thrd / CMN %): " + ", ".join(
            f"{s:g}: {100 * a:.0f} / {100 * c:.0f}" for s, (a, c) in zip(SIGMA_GRID, res.grid_acc))
        + ". On the dense graph the harmonic function is very sensitive to the common width, and the "
        "LOO choice from 30 labels often misses the good one; most of the gap between the HEM row and "
        "the best grid width comes from that choice.",
        "",
        "Where the run contradicts the seed:",
        "",
        *_contradictions(res),
        "",
        "Where we differ from the seed, and why:",
        "",
        "- The seed's accuracies are in its Fig. 5.1, which the text we have does not carry: the column "
        "\"seed 003 says\" quotes its written conclusions, not numbers.",
        "- Data: the MNIST test set (1991 fours and nines) instead of 1000 + 1000 drawn from train and test; "
        f"{res.m} pixels survive the same pre-processing instead of 475.",
        "- HEM's common width is chosen on the seed's grid by the harmonic function's balanced LOO error (ties: the LOOHL loss), not 5-fold CV; LOOHL "
        "starts from it and uses it as the Sqr prior mean (the seed's rule, B.4), without the seed's "
        "+0.05 retries (the smoothing eps keeps every solve well posed).",
        "- The RLS rows are the cheap version of issue 10 (not in the seed): RLS with offset on the 30 labels, "
        "kernel exp(-sum (x_d - x'_d)^2 / (2 s_d^2)), lambda 0.1, common width by LOO squared error over "
        "core.rls.default_widths, then per-pixel widths (and lambda) by L-BFGS-B on the exact LOO with a log-space "
        "prior 0.01; predictions by sign (no CMN). Its widths do not transfer to the dense graph: RLS wants "
        "widths near the median distance, the graph near-neighbour widths.",
        "- Final classification on P~ with eps = 1e-6 instead of P (eps = 0): at the learned widths some images "
        "are cut off from every label and P alone is singular there.",
        "- Optimiser: L-BFGS-B over log widths (positivity by construction) instead of TAO's lmvm over "
        "widths; MinEnt runs once at eps 0.1 from the same start instead of reporting its best grid point.",
        f"- Cap on evaluations: {_cap_departure(res)}",
        "- Cost: one LOOHL evaluation is one LU of I - P~_UU plus O(n^2 (m + l)) products (all LOO "
        "predictions from one factorisation, the seed's eq. 3.17 contraction as a matrix product): "
        "the seed reports about 60 minutes per LOOHL run at n = 2000; the column above is ours.",
    ]
    return "\n".join(lines) + "\n"


def run(quick: bool = False, repeats: int | None = None) -> str:
    """The markdown section (see :func:`experiment`)."""
    command = "python -m labeler.experiments.graph_repro.seed003" + (" --quick" if quick else "") + \
        (f" --repeats {repeats}" if repeats is not None else "")
    return render(experiment(quick=quick, repeats=repeats), command)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 images, 2 repeats, 8 evaluations (CI)")
    parser.add_argument("--repeats", type=int, default=None, help="random labelled sets (default 5; quick 2)")
    args = parser.parse_args(argv)
    print(run(quick=args.quick, repeats=args.repeats))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
