"""Query strategies: which unlabelled point to ask about next (one interface, seeded ties).

Each strategy is a criterion of :mod:`core.criteria` that turns the learner's state into a
score per pool point (lower is better, labelled points ``+inf``); :func:`query` returns the
unlabelled point with the lowest score (or the ``batch_size`` lowest), breaking ties uniformly
at random with the given generator.

* ``"auto"`` (the app's default): ``"arls"`` while fewer than
  :data:`core.criteria.auto.MAX_RISK_LABELS` labels are stored, ``"margin"`` after
  (:mod:`core.criteria.auto`; :func:`auto_decision` says which and why).
* ``"arls"``: expected risk ``E_i`` of labelling ``i`` (seed 002 eq. 3.50, docs/algorithms.md §3).
* ``"margin"``: ``|f(x_i)|`` (binary) or the gap between the two largest one-vs-all outputs.
* ``"random"``: every unlabelled point scores 0, so the pick is uniform.
"""

from __future__ import annotations

import numpy as np

from .criteria import CRITERIA, get_criterion
from .criteria.auto import AutoDecision, decide

__all__ = ["STRATEGIES", "scores", "query", "auto_decision", "resolve"]

STRATEGIES = tuple(CRITERIA)

# Scores within this relative distance of the minimum count as ties (the fused kernel and a
# reference implementation sum in different orders, so exact ties can differ by rounding).
TIE_RTOL = 1e-12


def auto_decision(learner) -> AutoDecision:
    """Which plain strategy ``"auto"`` uses in ``learner``'s state, and the signal behind it."""
    return decide(learner.scoring_state().class_counts)


def resolve(learner, strategy: str) -> str:
    """The plain strategy that answers: ``strategy`` itself, or ``"auto"``'s current choice."""
    get_criterion(strategy)  # validates the name
    return auto_decision(learner).strategy if strategy == "auto" else strategy


def scores(learner, strategy: str = "arls") -> np.ndarray:
    """Score of every pool point under ``strategy`` (lower is queried first).

    Parameters
    ----------
    learner : core.learner.ActiveRLS
    strategy : {"auto", "arls", "margin", "random"}

    Returns
    -------
    s : ndarray of shape (n_samples,)
        ``+inf`` for labelled points.
    """
    strategy = resolve(learner, strategy)
    criterion = get_criterion(strategy)
    if strategy == "arls":
        return learner.expected_risk()  # cached until the state changes
    s = np.full(learner.n_samples, np.inf)
    unl = learner.unlabeled_indices
    s[unl] = learner.score(criterion, unl)
    return s


def query(learner, strategy: str = "arls", rng=None, exclude=None, batch_size=None):
    """Index of the next point to label: the unlabelled point with the lowest score.

    Parameters
    ----------
    learner : core.learner.ActiveRLS
    strategy : {"auto", "arls", "margin", "random"}
    rng : numpy.random.Generator, int or None
        Breaks ties uniformly at random (scores within ``TIE_RTOL`` of the minimum).
        ``None`` uses ``learner.rng`` (seeded by the learner's ``random_state``).
    exclude : array-like of int, optional
        Unlabelled points never to return (for example points the user skipped).
    batch_size : int, optional
        Return the ``batch_size`` best points (each scored alone, lowest first) instead of one.

    Returns
    -------
    int, or ndarray of shape (batch_size,) of int64 when ``batch_size`` is given

    Raises
    ------
    ValueError
        If every point is labelled (or excluded), or ``strategy`` is unknown.
    """
    get_criterion(strategy)  # validates the name
    if batch_size is not None and (isinstance(batch_size, bool) or int(batch_size) != batch_size or batch_size < 1):
        raise ValueError(f"batch_size must be a positive integer; got {batch_size!r}.")
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
    if batch_size is not None:
        # lowest scores first; ties in random order (a random permutation, then a stable sort)
        perm = rng.permutation(unl.size)
        rounded = s[perm]
        order = perm[np.argsort(rounded, kind="stable")]
        return unl[order[: int(batch_size)]].astype(np.int64)
    best = s.min()
    tied = unl[s <= best + TIE_RTOL * abs(best)]
    return int(tied[rng.integers(tied.size)]) if tied.size > 1 else int(tied[0])
