"""Seed 000 (ch. 3 and 4) on MNIST: LGC ranking against alpha, and Nystrom against the exact kernel.

LGC ranking (seed 000 §3.4.5, Tables 3.2 and 3.4): for a pair of digits, the first is
"positive" and 20% of it is labelled; LGC (row-stochastic, ``1/c`` prior on unlabelled rows,
:class:`core.graph.LocalGlobalConsistency`) on a dense RBF similarity matrix (the seed's)
ranks the nodes by ``F*[:, positive]``; the R least relevant unlabelled nodes are retrieved,
R = the number of negatives, and the accuracy is ``A = N_R / R`` (eq. 3.41), the fraction of
true negatives among them. Nystrom (seed 000 ch. 4, eq. 4.19): percent error
``100 ||K - K~||_F / ||K||_F`` of the Nystrom factor (:func:`core.kernels.nystrom_factor`,
uniform and k-means landmarks) against the exact RBF kernel on the MNIST test images,
computed block by block without storing K. Beside them, the seed's own methods at the same
total number of landmarks: ensemble Nystrom (``GROUPS`` uniform groups, equal weights) and
BoostNystrom (Algorithms 7-9, :mod:`core.kernels.boost_nystrom`), and "base", one group's
Nystrom alone (the baseline the seed compares them with).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from core.graph import LocalGlobalConsistency
from core.kernels import Kernel, nystrom_factor
from core.kernels.boost_nystrom import boost_nystrom_groups, ensemble_nystrom_groups
from core.kernels.kernel import median_distance

from ._common import check_repeats, md_table, mnist, pm, section_command, timed

__all__ = ["run", "lgc_ranking_accuracy", "nystrom_percent_errors", "ALPHAS", "SEED_TABLE_3_2", "SEED_TABLE_3_4"]

TITLE = "Seed 000: LGC ranking against alpha (Tables 3.2, 3.4) and Nystrom against the exact kernel (ch. 4)"
ALPHAS = (0.9, 0.7, 0.5, 0.3, 0.1, 0.01, 1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)
BOUND = 0.005  # the seed's B_alpha for MNIST
GROUPS = 5  # ensemble / BoostNystrom: m landmarks = GROUPS groups of m / GROUPS (the seed's p = T)
PAIRS = ((4, 7), (0, 1), (5, 9), (2, 8))
# Seed 000 Table 3.2 (MNIST, A in % per alpha of ALPHAS) and Table 3.4 (mean (sd) above / below B_alpha)
SEED_TABLE_3_2 = {
    (4, 7): (97.49, 97.81, 98.02, 98.02, 97.91, 98.23, 97.91, 98.02, 98.12, 98.23, 98.12, 98.12),
    (0, 1): (100,) * 12,
    (5, 9): (97.54, 97.43, 97.64, 97.54, 97.64, 96.71, 97.64, 97.33, 97.74, 97.33, 97.64, 97.43),
    (2, 8): (97.67, 97.86, 98.15, 97.67, 98.05, 96.69, 97.57, 98.35, 98.05, 98.35, 97.86, 97.76),
}
SEED_TABLE_3_4 = {(4, 7): ((97.91, 0.25), (98.09, 0.11)), (0, 1): ((100, 0), (100, 0)),
                  (5, 9): ((97.42, 0.35), (97.52, 0.18)), (2, 8): ((97.71, 0.49), (97.88, 0.28))}


# --------------------------------------------------------------------------- LGC ranking
def rbf_graph(X: np.ndarray, width: float) -> sp.csr_matrix:
    """Dense RBF similarity ``exp(-||x_i - x_j||^2 / (2 width^2))`` with a zero diagonal, as CSR."""
    K = Kernel("rbf", width=width)(X)
    np.fill_diagonal(K, 0.0)
    return sp.csr_matrix(K)


def lgc_ranking_accuracy(W, y: np.ndarray, positive, labeled: np.ndarray, alphas=ALPHAS) -> np.ndarray:
    """``A = N_R / R`` per alpha (eq. 3.41): true negatives among the R lowest-ranked unlabelled nodes.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
    y : ndarray of shape (n,)
        Two classes.
    positive
        The labelled class.
    labeled : ndarray of int
        Labelled nodes, all of class ``positive``.
    alphas : sequence of float

    Returns
    -------
    ndarray of shape (len(alphas),)
    """
    y = np.asarray(y)
    classes = [positive] + [c for c in np.unique(y).tolist() if c != positive]
    unl = np.ones(y.size, dtype=bool)
    unl[labeled] = False
    R = int(np.sum(y != positive))
    out = []
    for a in alphas:
        # CG for the larger alphas; the propagation itself for tiny ones, where F* differs from
        # (1 - alpha) Y by O(alpha) and a residual-based stop would blur the ranking
        model = LocalGlobalConsistency(a, solver="cg", tol=1e-12) if a >= 0.01 else \
            LocalGlobalConsistency(a, solver="iterate", tol=1e-15)
        model.fit(W, labeled, y[labeled], classes=classes)
        order = model.rank(positive)[::-1]  # least relevant first
        retrieved = order[unl[order]][:R]
        out.append(np.mean(y[retrieved] != positive))
    return np.asarray(out)


# --------------------------------------------------------------------------- Nystrom
def nystrom_percent_errors(X: np.ndarray, kernel: Kernel, factors: list[np.ndarray], block: int = 500) -> np.ndarray:
    """``100 ||K - Phi Phi^T||_F / ||K||_F`` (seed 000 eq. 4.19) for each factor, K never stored.

    Uses ``||K - P P^T||^2 = ||K||^2 - 2 <K, P P^T> + ||P^T P||^2`` with ``<K, P P^T>`` summed
    over blocks of rows of ``K P`` (one matrix product for all factors at once).
    """
    n = X.shape[0]
    P = np.hstack(factors)
    edges = np.cumsum([0] + [f.shape[1] for f in factors])
    normK = 0.0
    cross = np.zeros(len(factors))
    for a in range(0, n, block):
        Kb = kernel(X[a:a + block], X)
        normK += float(np.sum(Kb * Kb))
        prod = (Kb @ P) * P[a:a + block]
        cross += np.add.reduceat(prod.sum(axis=0), edges[:-1])
    gram = np.array([float(np.sum((f.T @ f) ** 2)) for f in factors])
    return 100.0 * np.sqrt(np.maximum(normK - 2.0 * cross + gram, 0.0) / normK)


def landmark_factor(X: np.ndarray, kernel: Kernel, method: str, m: int, seed) -> np.ndarray:
    """The factor of ``m`` landmarks in all: one Nystrom ("uniform", "kmeans"), ``GROUPS``
    groups of ``m / GROUPS`` ("ensemble", "boost"), or one such group alone ("base")."""
    if method in ("uniform", "kmeans"):
        return nystrom_factor(X, kernel, m, method=method, seed=seed)
    if method == "base":
        return nystrom_factor(X, kernel, m // GROUPS, method="uniform", seed=seed)
    if method == "ensemble":
        return ensemble_nystrom_groups(X, m // GROUPS, GROUPS, seed=seed).factor(X, kernel)
    return boost_nystrom_groups(X, kernel, m // GROUPS, GROUPS, seed=seed).factor(X, kernel)


# --------------------------------------------------------------------------- the section
def run(quick: bool = False, repeats: int | None = None, log=None) -> str:
    """Run both experiments and return the markdown section."""
    reps = check_repeats(repeats, 1 if quick else 5)
    pairs = PAIRS[:2] if quick else PAIRS
    per_pair = 300 if quick else None
    alphas = (0.9, 0.1, 1e-3, 1e-6) if quick else ALPHAS
    lgc = {}
    for pair in pairs:
        X, y = mnist(per_pair, digits=pair, seed=0)
        width = median_distance(X, max_points=1000, seed=0)
        W = rbf_graph(X, width)
        pos = pair[0]
        P = np.flatnonzero(y == pos)
        accs = []
        for r in range(reps):
            rng = np.random.default_rng([0, pair[0], pair[1], r])
            L = np.sort(rng.choice(P, round(0.2 * P.size), replace=False))
            accs.append(lgc_ranking_accuracy(W, y, pos, L, alphas))
        lgc[pair] = (y.size, width, np.asarray(accs))
        if log is not None:
            log(f"[seed000] LGC {pair}: n = {y.size}, A = {np.round(100 * np.mean(accs, axis=0), 2).tolist()}")
    n_nys = 1000 if quick else 10_000
    X, _ = mnist(n_nys if quick else None, seed=0)
    width = median_distance(X, max_points=1000, seed=0)
    kernel = Kernel("rbf", width=width)
    ms = (30, 100) if quick else (100, 300, 1000)
    methods = ("uniform", "kmeans", "base", "ensemble", "boost")
    # quick: k-means (a mini-batch k-means per factor, the slow part) at the smallest m only
    combos = [(method, m) for method in methods for m in ms if not (quick and method == "kmeans" and m != ms[0])]
    nys_reps = reps if quick else min(reps, 3)
    factors, keys, build = [], [], {}
    for method, m in combos:
        for r in range(nys_reps):
            Phi, t = timed(lambda: landmark_factor(X, kernel, method, m, seed=[1, m, r]))
            factors.append(Phi)
            keys.append((method, m))
            build.setdefault((method, m), []).append(t)
    errs, t_err = timed(lambda: nystrom_percent_errors(X, kernel, factors))
    if log is not None:
        log(f"[seed000] Nystrom errors on n = {X.shape[0]} in {t_err:.1f} s")
    nys = {}
    for key, e in zip(keys, errs):
        nys.setdefault(key, []).append(float(e))
    return render(lgc, alphas, reps, (X.shape[0], width, combos, nys, build, nys_reps), quick, repeats)


def render(lgc, alphas, reps, nys_out, quick, repeats) -> str:
    lines = [f"## {TITLE}", "", f"Command: `{section_command('seed000', quick, repeats)}`", ""]
    lines += ["### LGC ranking accuracy A (%) against alpha", "",
              ("Quick run (300 images per pair, few alphas; not for comparison). " if quick else "")
              + "MNIST test images of each pair (the seed: MNIST subsets of unstated size); the first digit is "
              "positive, 20% of it labelled at random; dense RBF similarity with width = median pairwise "
              "distance (the seed does not give its width); LGC row-stochastic with the 1/c prior; "
              f"R = number of negatives. Ours: mean over {reps} labelled draw(s).", ""]
    header = ["alpha"]
    for pair in lgc:
        header += [f"seed {pair[0]}-{pair[1]}", f"ours {pair[0]}-{pair[1]}"]
    rows = []
    for j, a in enumerate(alphas):
        row = [f"{a:g}"]
        for pair, (_, _, accs) in lgc.items():
            row += [f"{SEED_TABLE_3_2[pair][ALPHAS.index(a)]:.2f}", f"{100 * accs[:, j].mean():.2f}"]
        rows.append(row)
    lines += [md_table(header, rows), ""]
    hi = np.array([a > BOUND for a in alphas])
    rows = []
    for pair, (n, width, accs) in lgc.items():
        (s_hi, s_hi_sd), (s_lo, s_lo_sd) = SEED_TABLE_3_4[pair]
        per_alpha = 100 * accs.mean(axis=0)
        rows.append([f"{pair[0]}-{pair[1]}", n, f"{s_hi:.2f} ({s_hi_sd:.2f})", f"{per_alpha[hi].mean():.2f} "
                     f"({per_alpha[hi].std():.2f})", f"{s_lo:.2f} ({s_lo_sd:.2f})",
                     f"{per_alpha[~hi].mean():.2f} ({per_alpha[~hi].std():.2f})"])
    lines += [f"Table 3.4: mean (sd over alphas) of A above and below B_alpha = {BOUND}:", "",
              md_table(["pair", "n", "seed > B", "ours > B", "seed < B", "ours < B"], rows), ""]
    n, width, combos, nys, build, nys_reps = nys_out
    rows = [[method, m, f"{100 * m / n:.1f}%", pm(np.asarray(nys[(method, m)]) / 100, 2),
             f"{np.mean(build[(method, m)]):.1f}"] for method, m in combos]
    lines += ["### Nystrom against the exact kernel", "",
              f"RBF kernel, width {width:.2f} (median distance), on n = {n:,} MNIST test images (the seed's "
              "MNIST-10K); percent error 100 ||K - K~||_F / ||K||_F (eq. 4.19) of the rank-k Nystrom "
              "approximation, k = the numerical rank of the landmark block (the seed's choice), mean ± sd over "
              f"{nys_reps} landmark draw(s). The seed uses m = 0.03 n landmarks ({int(0.03 * n)} here). "
              f"ensemble and boost: {GROUPS} groups of m / {GROUPS} landmarks (seed 000 §4.3; BoostNystrom "
              f"with subsets of m / {4 * GROUPS} columns, validation on m / {GROUPS} columns and 2,000 rows); "
              f"base: one uniform group of m / {GROUPS} alone.", "",
              md_table(["landmarks", "m", "m / n", "percent error", "build s"], rows), ""]
    lines += _discussion(lgc, alphas, nys, combos)
    return "\n".join(lines).rstrip() + "\n"


def _discussion(lgc, alphas, nys, combos) -> list[str]:
    hi = np.array([a > BOUND for a in alphas])
    steadier = [pair for pair, (_, _, accs) in lgc.items()
                if (100 * accs.mean(axis=0))[~hi].std() <= (100 * accs.mean(axis=0))[hi].std() + 1e-9]
    both = [m for method, m in combos if method == "kmeans" and ("uniform", m) in nys]
    km_better = all(np.mean(nys[("kmeans", m)]) <= np.mean(nys[("uniform", m)]) for m in both)
    levels = "; ".join(f"{a}-{b}: ours {100 * accs.mean():.2f}%, seed {np.mean(SEED_TABLE_3_2[(a, b)]):.2f}%"
                       for (a, b), (_, _, accs) in lgc.items())
    return [
        "### Where we agree and differ", "",
        f"- Seed: A varies less for alpha below B_alpha than above (Table 3.4). Ours: the sd over alphas "
        f"is at least as small below B_alpha for {len(steadier)} of {len(lgc)} pairs "
        f"({', '.join(f'{a}-{b}' for a, b in steadier) or 'none'}).",
        f"- Mean A over the alphas: {levels}. The level depends on the similarity width, which the seed does "
        "not give, and on the subset of images.",
        "- Nystrom: the seed's values are in its Figs. 4.2-4.3 (not in the text; the only number given is "
        "9.93% for the deterministic method on USPS). "
        f"k-means landmarks are better than uniform ones at every m compared "
        f"({', '.join(str(m) for m in both)}): {'yes' if km_better else 'no'} "
        "(the seed found the k-means method unstable across data sets).",
        _boost_reading(nys, combos),
        "",
    ]


def _boost_reading(nys, combos) -> str:
    ms = [m for method, m in combos if method == "boost" and ("ensemble", m) in nys and ("base", m) in nys]
    if not ms:
        return ""
    mean = {key: float(np.mean(v)) for key, v in nys.items()}
    def at(method):
        return ", ".join(f"{mean[(method, m)]:.2f}" for m in ms)

    beats_ens = [m for m in ms if mean[("boost", m)] <= mean[("ensemble", m)]]
    beats_base = [m for m in ms if mean[("boost", m)] <= mean[("base", m)]]
    single = [m for m in ms if ("uniform", m) in mean and mean[("uniform", m)] < mean[("boost", m)]]
    return (f"- BoostNystrom against the seed's baselines (same groups of m / {GROUPS}; m = "
            f"{', '.join(map(str, ms))}): boost {at('boost')}%, ensemble {at('ensemble')}%, one group alone "
            f"(base) {at('base')}%. Boost is at or below the ensemble at m = {', '.join(map(str, beats_ens)) or 'none'} "
            f"and below one group at m = {', '.join(map(str, beats_base)) or 'none'}, as the seed reports, but "
            "its gain over the ensemble is within a few hundredths of a point here. One Nystrom on all m uniform "
            f"landmarks ({at('uniform')}%) is better than BoostNystrom at m = "
            f"{', '.join(map(str, single)) or 'none'}: at the same rank an ensemble of {GROUPS} small groups "
            "spans less of the kernel's leading eigenspace than one group of m, which is why the product's "
            "posteriors use one uniform or k-means Nystrom (the ensemble factor is in "
            "core/kernels/boost_nystrom.py for experiments).")
