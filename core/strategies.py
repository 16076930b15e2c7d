"""Query strategies: which unlabelled point to ask about next (one interface, seeded ties).

Each strategy turns the learner's state into a score per pool point (lower is better,
labelled points ``+inf``); :func:`query` returns the unlabelled point with the lowest score,
breaking ties uniformly at random with the given generator.

* ``"arls"``: expected risk ``E_i`` of labelling ``i`` (seed 002 eq. 3.50, ALGORITHMS §3).
* ``"margin"``: ``|f(x_i)|`` (binary) or the gap between the two largest one-vs-all outputs.
* ``"random"``: every unlabelled point scores 0, so the pick is uniform.
"""

from __future__ import annotations

import numpy as np

__all__ = ["STRATEGIES", "scores", "query"]

STRATEGIES = ("arls", "margin", "random")

# Scores within this relative distance of the minimum count as ties (the fused kernel and a
# reference implementation sum in different orders, so exact ties can differ by rounding).
TIE_RTOL = 1e-12


def _margin(learner) -> np.ndarray:
    F = learner.decision_values
    if F.shape[1] == 1:
        return np.abs(F[:, 0])
    top2 = np.partition(F, F.shape[1] - 2, axis=1)[:, -2:]
    return top2[:, 1] - top2[:, 0]


def scores(learner, strategy: str = "arls") -> np.ndarray:
    """Score of every pool point under ``strategy`` (lower is queried first).

    Parameters
    ----------
    learner : core.arls.ActiveRLS
    strategy : {"arls", "margin", "random"}

    Returns
    -------
    s : ndarray of shape (n_samples,)
        ``+inf`` for labelled points.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}.")
    if strategy == "arls":
        s = learner.expected_risk()
    elif strategy == "margin":
        s = _margin(learner)
    else:
        s = np.zeros(learner.n_samples)
    s = np.asarray(s, dtype=np.float64).copy()
    labeled = np.ones(learner.n_samples, dtype=bool)
    labeled[learner.unlabeled_indices] = False
    s[labeled] = np.inf
    return s


def query(learner, strategy: str = "arls", rng=None, exclude=None) -> int:
    """Index of the next point to label: the unlabelled point with the lowest score.

    Parameters
    ----------
    learner : core.arls.ActiveRLS
    strategy : {"arls", "margin", "random"}
    rng : numpy.random.Generator, int or None
        Breaks ties uniformly at random (scores within ``TIE_RTOL`` of the minimum).
        ``None`` uses ``learner.rng`` (seeded by the learner's ``random_state``).
    exclude : array-like of int, optional
        Unlabelled points never to return (for example points the user skipped).

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If every point is labelled (or excluded), or ``strategy`` is unknown.
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}.")
    unl = np.asarray(learner.unlabeled_indices)
    if exclude is not None and len(exclude):
        unl = unl[~np.isin(unl, np.asarray(exclude, dtype=np.intp))]
        if unl.size == 0:
            raise ValueError(
                "every unlabelled point is excluded (skipped): nothing left to query. "
                "Un-skip a point or remove a label."
            )
    if unl.size == 0:
        raise ValueError(
            f"every one of the {learner.n_samples} points is labelled: nothing left to query. "
            "Remove a label or add points to the pool."
        )
    if rng is None:
        rng = learner.rng
    elif not isinstance(rng, np.random.Generator):
        rng = np.random.default_rng(rng)
    s = scores(learner, strategy)[unl]
    if np.isnan(s).any():
        raise ValueError(f"strategy {strategy!r} produced NaN scores; rebuild() the learner.")
    best = s.min()
    tied = unl[s <= best + TIE_RTOL * abs(best)]
    return int(tied[rng.integers(tied.size)]) if tied.size > 1 else int(tied[0])
