"""Query strategies: which unlabelled point to ask about next (one interface, seeded ties).

Each strategy is a criterion of :mod:`core.criteria` that turns the learner's state into a
score per pool point (lower is better, labelled points ``+inf``); :func:`query_one` returns the
unlabelled point with the lowest score and :func:`query_batch` the ``k`` lowest, breaking ties
uniformly at random with the given generator.

* ``"auto"`` (the app's default): ``"arls"`` while fewer than
  :data:`core.criteria.auto.MAX_RISK_LABELS` labels are stored, ``"margin"`` after
  (:mod:`core.criteria.auto`; :func:`auto_decision` says which and why); a learner without an
  expected-risk rule runs :func:`cold_strategy` in its place ("vopt" on a graph model). Given a
  :class:`core.coldstart.ColdStart`, :func:`query_one` lets it answer the first labels.
* ``"arls"``: expected risk ``E_i`` of labelling ``i`` (seed 002 eq. 3.50, docs/algorithms.md §3).
* ``"margin"``: ``|f(x_i)|`` (binary) or the gap between the two largest one-vs-all outputs.
* ``"random"``: every unlabelled point scores 0, so the pick is uniform.
* ``"vopt"``, ``"sigmaopt"``: the drop of the graph's posterior variance (its sum) if the point
  were labelled (:mod:`core.graph.variance`), for a learner with the capability
  :data:`~core.learner.base.GRAPH_VARIANCE` (the graph models: harmonic, LGC, Poisson); the
  criterion is the learner's own ``variance_criterion(name)``.

:data:`REQUIRES` says which capability a strategy needs and :func:`offered` which strategies a
learner with given capabilities runs: callers ask these, never a model's name.
"""

from __future__ import annotations

import numpy as np

from .criteria import CRITERIA, get_criterion
from .criteria.auto import AutoDecision, decide
from .learner.base import EXPECTED_RISK, GRAPH_VARIANCE

__all__ = ["STRATEGIES", "VARIANCE_STRATEGIES", "REQUIRES", "offered", "check_strategy", "cold_strategy", "scores", "query_one",
           "query_batch", "auto_decision", "resolve"]

#: The graph models' variance criteria (:class:`core.graph.variance.VarianceCriterion`).
VARIANCE_STRATEGIES = ("vopt", "sigmaopt")
STRATEGIES = tuple(CRITERIA) + VARIANCE_STRATEGIES
#: The capability each strategy needs of the learner ("auto" starts with expected risk).
REQUIRES = {"arls": EXPECTED_RISK, "vopt": GRAPH_VARIANCE, "sigmaopt": GRAPH_VARIANCE}


def check_strategy(name: str) -> str:
    """``name`` if it is one of :data:`STRATEGIES`, else ValueError naming them."""
    if not isinstance(name, str) or name not in STRATEGIES:
        raise ValueError(f"unknown strategy {name!r}; choose one of {', '.join(STRATEGIES)}.")
    return name


def offered(capabilities) -> tuple:
    """The strategies a learner with ``capabilities`` runs, in the order of :data:`STRATEGIES`
    ("auto" on every learner: its cold phase is :func:`cold_strategy`, margin at worst)."""
    return tuple(s for s in STRATEGIES if REQUIRES.get(s) is None or REQUIRES[s] in capabilities)

# Scores within this relative distance of the minimum count as ties (the fused kernel and a
# reference implementation sum in different orders, so exact ties can differ by rounding).
TIE_RTOL = 1e-12


def auto_decision(learner) -> AutoDecision:
    """Which plain strategy ``"auto"`` uses in ``learner``'s state, and the signal behind it."""
    return decide(learner.scoring_state().class_counts)


def resolve(learner, strategy: str) -> str:
    """The plain strategy that answers: ``strategy`` itself, or ``"auto"``'s current choice
    (:func:`auto_decision`; while cold, a learner without expected risk but with the graph
    variance criteria runs "vopt" in its place, see :func:`cold_strategy`)."""
    check_strategy(strategy)
    if strategy != "auto":
        return strategy
    plain = auto_decision(learner).strategy
    return cold_strategy(learner.capabilities) if plain == "arls" else plain


def cold_strategy(capabilities) -> str:
    """What "auto" runs while cold (its expected-risk phase) on a learner with ``capabilities``:
    "arls" with an expected-risk rule, else "vopt" with the graph variance criteria (a pick that,
    like expected risk, spreads labels over the unexplored parts of the graph), else margin."""
    if EXPECTED_RISK in capabilities:
        return "arls"
    return "vopt" if GRAPH_VARIANCE in capabilities else "margin"


def scores(learner, strategy: str = "arls") -> np.ndarray:
    """Score of every pool point under ``strategy`` (lower is queried first).

    Every strategy is one call of ``learner.score(criterion, candidates)``; "arls" is the
    learner's own :attr:`~core.learner.base.Learner.risk_criterion` (exact or subsampled
    expected risk of RLS, Zhu et al.'s rule of a harmonic model), whose whole-pool scores the
    learner keeps until its state changes.

    Parameters
    ----------
    learner : core.learner.base.Learner
    strategy : {"auto", "arls", "margin", "random", "vopt", "sigmaopt"}

    Returns
    -------
    s : ndarray of shape (n_samples,)
        ``+inf`` for labelled points.

    Raises
    ------
    ValueError
        "arls" on a learner without expected-risk scoring (the message names the fix).
    """
    strategy = resolve(learner, strategy)
    if strategy == "arls":
        learner.require(EXPECTED_RISK, "the expected-risk strategy 'arls'")
        criterion = learner.risk_criterion
    elif strategy in VARIANCE_STRATEGIES:
        learner.require(GRAPH_VARIANCE, f"the variance strategy {strategy!r}")
        criterion = learner.variance_criterion(strategy)
    else:
        criterion = get_criterion(strategy)
    s = np.full(learner.n_samples, np.inf)
    unl = learner.unlabeled_indices
    s[unl] = learner.score(criterion, unl)
    return s


def _candidates(learner, exclude) -> np.ndarray:
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
    return unl


def _generator(learner, rng) -> np.random.Generator:
    if rng is None:
        return learner.rng
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def _scores_of(learner, strategy, unl) -> np.ndarray:
    s = scores(learner, strategy)[unl]
    if np.isnan(s).any():
        raise ValueError(f"strategy {strategy!r} produced NaN scores; rebuild() the learner.")
    return s


def _pick_scores(learner, strategy, unl) -> np.ndarray:
    """Scores of ``unl`` that give :func:`query_one` the same pick and ties as
    :func:`_scores_of`: "arls" lets the learner skip candidates that provably cannot be within
    ``TIE_RTOL`` of the minimum (``Learner.score_to_pick``; exact one-vs-all criterion only)."""
    if resolve(learner, strategy) != "arls" or not hasattr(learner, "score_to_pick"):
        return _scores_of(learner, strategy, unl)
    learner.require(EXPECTED_RISK, "the expected-risk strategy 'arls'")
    s = learner.score_to_pick(learner.risk_criterion, unl, TIE_RTOL)
    if np.isnan(s).any():
        raise ValueError(f"strategy {strategy!r} produced NaN scores; rebuild() the learner.")
    return s


def query_one(learner, strategy: str = "arls", rng=None, exclude=None, cold_start=None) -> int:
    """Index of the next point to label: the unlabelled point with the lowest score.

    Parameters
    ----------
    learner : core.learner.base.Learner
    strategy : {"auto", "arls", "margin", "random"}
    rng : numpy.random.Generator, int or None
        Breaks ties uniformly at random (scores within ``TIE_RTOL`` of the minimum).
        ``None`` uses ``learner.rng`` (seeded by the learner's ``random_state``).
    exclude : array-like of int, optional
        Unlabelled points never to return (for example points the user skipped).
    cold_start : core.coldstart.ColdStart, optional
        With ``strategy="auto"``: answers while fewer than its ``n_labels`` labels are stored
        (typicality / coverage picks, :mod:`core.coldstart`), before the model's criterion.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        If every point is labelled (or excluded), ``strategy`` is unknown, or the learner
        cannot score it (e.g. "arls" without an expected-risk rule).
    """
    check_strategy(strategy)
    unl = _candidates(learner, exclude)
    if strategy == "auto" and cold_start is not None and cold_start.active(learner.n_labeled):
        labeled = np.fromiter(learner.labels, dtype=np.intp, count=learner.n_labeled)
        return cold_start.pick(labeled, exclude)
    rng = _generator(learner, rng)
    s = _pick_scores(learner, strategy, unl)
    best = s.min()
    tied = unl[s <= best + TIE_RTOL * abs(best)]
    return int(tied[rng.integers(tied.size)]) if tied.size > 1 else int(tied[0])


def query_batch(learner, strategy: str = "arls", k: int = 1, rng=None, exclude=None) -> np.ndarray:
    """The ``k`` best points to label, each scored alone, lowest score first.

    Parameters
    ----------
    learner, strategy, rng, exclude
        As in :func:`query_one`.
    k : int >= 1
        How many (fewer when fewer points are left).

    Returns
    -------
    ndarray of shape (min(k, n_candidates),) of int64
        Ties in random order (a random permutation, then a stable sort).
    """
    check_strategy(strategy)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer; got {k!r}.")
    unl = _candidates(learner, exclude)
    rng = _generator(learner, rng)
    s = _scores_of(learner, strategy, unl)
    perm = rng.permutation(unl.size)
    order = perm[np.argsort(s[perm], kind="stable")]
    return unl[order[: int(k)]].astype(np.int64)
