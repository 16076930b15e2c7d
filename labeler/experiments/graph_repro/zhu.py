"""Zhu, Lafferty and Ghahramani (2003): harmonic active learning against random, and ARLS on the same graph.

Seed 003 §2.8.1 describes the rule (eq. 2.21: query the node whose label minimises the
expected estimated risk ``sum_i min(f_i, 1 - f_i)`` of the harmonic function); the seeds give
no numbers for it, only the claim that it needs fewer labels than random queries. On MNIST
digit pairs, with :func:`labeler.experiments.graph_simulate.simulate_graph` on a 10NN graph:

* ``harmonic`` + ``arls``: Zhu et al.'s exact rule (:class:`core.graph.ZhuActiveLearning`);
* ``harmonic`` + ``random``;
* ``rls`` on the Gaussian-field spectral factor + ``arls``: ARLS's expected-risk rule on a
  low-rank factor, of which Zhu's rule is the limit (docs/algorithms.md §9), and + ``random``.

Accuracy on the unlabelled rest of the pool after a given number of labels, mean ± sd over
the repeats (each with its own two random starting labels and random stream).
"""

from __future__ import annotations

import numpy as np

from labeler.data.dataset import finish
from labeler.experiments.graph_simulate import simulate_graph

from ._common import check_repeats, md_table, mnist, pm, section_command

__all__ = ["run", "RUNS", "pair_dataset"]

TITLE = "Zhu et al. (2003): harmonic active learning against random, and ARLS on the same graph"
PAIRS = ((1, 2), (4, 9), (3, 5))
RUNS = (  # (label, model, strategy, transform)
    ("Zhu (harmonic, expected risk)", "harmonic", "arls", None),
    ("harmonic, random", "harmonic", "random", None),
    ("ARLS, Gaussian-field factor", "rls", "arls", "gaussian_field"),
    ("RLS Gaussian-field, random", "rls", "random", "gaussian_field"),
)
RANK = 100
K_NN = 10
INITIAL = 2  # random labels before the first query (seeded per repeat: the repeats differ)


def pair_dataset(pair, n: int | None, seed: int = 0):
    """A :class:`labeler.data.Dataset` of MNIST test images of two digits."""
    X, y = mnist(n, digits=pair, seed=seed)
    return finish(f"mnist-{pair[0]}{pair[1]}", X, y, [f"px_{i}" for i in range(X.shape[1])])


def run(quick: bool = False, repeats: int | None = None, log=None) -> str:
    """Run the comparison and return the markdown section."""
    reps = check_repeats(repeats, 2 if quick else 10)
    pairs = PAIRS[:1] if quick else PAIRS
    n = 300 if quick else 1500
    budget = 18 if quick else 48
    checkpoints = (5, 10, 20) if quick else (5, 10, 20, 30, 50)
    results = {}
    for pair in pairs:
        data = pair_dataset(pair, n)
        for label, model, strategy, transform in RUNS:
            curves, secs = [], []
            for r in range(reps):
                frame = simulate_graph(data, model=model, strategy=strategy, budget=budget, seed=r,
                                       transform=transform, n_neighbors=K_NN, rank=RANK, initial=INITIAL)
                curves.append(frame.set_index("n_labeled")["accuracy"])
                secs.append(float(frame["step_seconds"].mean()))
            results[(pair, label)] = (curves, secs)
            if log is not None:
                log(f"[zhu] {pair} {label}: " + ", ".join(
                    f"{c}: {100 * np.mean([s.loc[c] for s in curves]):.1f}" for c in checkpoints))
    return render(results, pairs, checkpoints, reps, n, budget, quick, repeats)


def render(results, pairs, checkpoints, reps, n, budget, quick, repeats) -> str:
    lines = [f"## {TITLE}", "", f"Command: `{section_command('zhu', quick, repeats)}`", ""]
    lines += [("Quick run (one pair, 300 images; not for comparison). " if quick else "")
              + f"MNIST test images of each digit pair ({n:,} drawn at random per pair), {K_NN}NN unweighted "
              f"graph; {INITIAL} random labels to start (a new draw per repeat), then {budget} queries; {reps} "
              "repeat(s). "
              f"ARLS runs on the Gaussian-field factor of the {RANK} smallest normalised-Laplacian eigenpairs "
              "(1/(lambda + 0.01)) with the product's default lambda 0.1. Accuracy (%) on the unlabelled rest "
              "after the given number of labels, mean ± sd; 's/query' is the mean time of one step.", ""]
    for pair in pairs:
        rows = []
        for label, *_ in RUNS:
            curves, secs = results[(pair, label)]
            rows.append([label] + [pm([c.loc[k] for c in curves]) for k in checkpoints] + [f"{np.mean(secs):.3f}"])
        lines += [f"### digits {pair[0]} vs {pair[1]}", "",
                  md_table(["method"] + [f"{k} labels" for k in checkpoints] + ["s/query"], rows), ""]
    lines += _discussion(results, pairs, checkpoints)
    return "\n".join(lines).rstrip() + "\n"


def _mean_at(results, pair, label, k) -> float:
    return float(np.mean([c.loc[k] for c in results[(pair, label)][0]]))


def _discussion(results, pairs, checkpoints) -> list[str]:
    zhu, rnd, arls = RUNS[0][0], RUNS[1][0], RUNS[2][0]
    mid = list(checkpoints)
    wins = sum(_mean_at(results, p, zhu, k) >= _mean_at(results, p, rnd, k) for p in pairs for k in mid)
    gap = [abs(_mean_at(results, p, zhu, k) - _mean_at(results, p, arls, k)) for p in pairs for k in mid]
    return [
        "### Where we agree and differ", "",
        f"- Claim (Zhu et al. 2003, seed 003 §2.8.1): expected-risk queries on the harmonic function need fewer "
        f"labels than random ones. Ours: Zhu's rule is at or above random in {wins} of {len(pairs) * len(mid)} "
        f"(pair, labels) cells. The seeds give no numbers for this experiment, so there is nothing to "
        "compare digit for digit.",
        f"- ARLS on the Gaussian-field factor against Zhu's exact rule: mean absolute difference "
        f"{100 * np.mean(gap):.1f} points of accuracy over the same cells. They differ because the factor keeps "
        "only the smoothest eigenpairs and ARLS regularises with lambda > 0 (docs/algorithms.md §9: the two agree in "
        "the limit of the full spectrum and lambda -> 0), because ARLS predicts by the RLS mean, not the "
        "harmonic function, and because it scores candidates by its own expected risk (the soft risk of the "
        "RLS posterior, seed 002), not by sum min(f, 1 - f).",
        "- Pool: the seeds' digit sets are not available; MNIST pairs stand in, sampled to keep the exact rule's "
        "dense u x u inverse small.",
        "",
    ]
