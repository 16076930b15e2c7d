"""Batch queries: the next k points to label, chosen together.

Two rules (``BATCH_RULES``), both starting with the session's next query:

``"greedy"``
    Greedy expected risk with hypothetical labels (the "believer" batch of the ARLS thesis'
    batch-mode discussion, docs/algorithms.md §3 for the exact add / remove): after each pick the
    learner is given the pick with its PREDICTED class (``ActiveRLS.add``, an exact rank-one
    update), the strategy scores the pool again and the next pick is its best point; at the
    end every hypothetical label is taken back with the exact ``ActiveRLS.remove``, in
    reverse order, so the learner is where it was (checked by the tests against a direct
    solve). k strategy passes: for "arls" k expected-risk passes, O(k n^2).
``"diverse"``
    Farthest-first among the best-scored points: the m = max(10 k, 50) unlabelled points with
    the lowest scores are the candidates, and each next pick is the candidate farthest (in the
    kernel's features ``session.X``) from every pick so far (ties: the better score). One
    strategy pass and O(k m d).

``benchmarks/batch_queries.py`` compares them (and the k best points scored alone) on
built-in data sets by simulated labelling; the README reports which rule is better.

Plain functions over a :class:`~labeler.session.LabelingSession` (no Streamlit). A batch is
computed once per state (``session.n_events``); the page labels it with
``session.label_many(..., via="batch", expected_version=...)`` as one undoable action.
"""

from __future__ import annotations

import numpy as np

from core import strategies

__all__ = ["BATCH_RULES", "batch_queries", "greedy_batch", "diverse_batch"]

BATCH_RULES = ("greedy", "diverse")
MAX_BATCH = 50


def _check(k, rule):
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= MAX_BATCH:
        raise ValueError(f"The batch size must be an integer from 1 to {MAX_BATCH}; got {k!r}.")
    if rule not in BATCH_RULES:
        raise ValueError(f"Unknown batch rule {rule!r}; choose one of {', '.join(BATCH_RULES)}.")


def greedy_batch(learner, first: int, k: int, strategy: str, rng, exclude) -> list[int]:
    """Greedy batch of ``k`` points starting with ``first`` (see the module docstring).

    The learner is changed while the batch is chosen and given back exactly as it was
    (hypothetical labels removed in reverse order), also when an error interrupts.

    Parameters
    ----------
    learner : core.learner.ActiveRLS
    first : int
        The first pick (the session's next query).
    k : int
    strategy : str
        Name of a :mod:`core.strategies` strategy.
    rng : numpy.random.Generator
        Breaks ties among equal scores.
    exclude : ndarray of int
        Unlabelled points never picked (skipped).

    Returns
    -------
    list of int, length <= k
        Shorter when the pool runs out.
    """
    picks = [int(first)]
    added: list[int] = []
    try:
        while len(picks) < k:
            last = picks[-1]
            predicted = learner.predict()
            learner.add(last, predicted[last])  # hypothetical: the class the model expects
            added.append(last)
            left = np.setdiff1d(learner.unlabeled_indices, exclude)
            if left.size == 0:
                break
            picks.append(int(strategies.query_one(learner, strategy, rng, exclude=exclude)))
    finally:
        for i in reversed(added):
            learner.remove(i)  # exact inverse of add (docs/algorithms.md §3)
    return picks


def diverse_batch(X, scores, first: int, k: int, candidates) -> list[int]:
    """Farthest-first batch among the best-scored ``candidates`` (see the module docstring).

    Parameters
    ----------
    X : ndarray of shape (n, d)
    scores : ndarray of shape (n,)
        Strategy scores (lower is better).
    first : int
    k : int
    candidates : ndarray of int
        Unlabelled, not skipped points.

    Returns
    -------
    list of int, length min(k, len(candidates) + 1)
    """
    cand = np.asarray(candidates, dtype=np.int64)
    cand = cand[cand != first]
    m = min(cand.size, max(10 * k, 50))
    if m == 0:
        return [int(first)]
    best = cand[np.lexsort((cand, scores[cand]))[:m]]  # lowest scores, ties by index
    diff = X[best] - X[first]
    dmin = np.einsum("ij,ij->i", diff, diff)
    picks = [int(first)]
    taken = np.zeros(m, dtype=bool)
    while len(picks) < k and not taken.all():
        far = np.where(taken, -np.inf, dmin)
        top = np.flatnonzero(far == far.max())  # ties: the better score (best is sorted)
        j = int(top[0])
        taken[j] = True
        picks.append(int(best[j]))
        diff = X[best] - X[best[j]]
        dmin = np.minimum(dmin, np.einsum("ij,ij->i", diff, diff))
    return picks


def batch_queries(session, k: int = 5, rule: str = "greedy") -> np.ndarray:
    """The next ``k`` points to label, chosen together by ``rule`` (:data:`BATCH_RULES`).

    Starts with :meth:`~labeler.session.LabelingSession.next_query`; computed once per state
    and seeded by (seed, number of events), so a reload shows the same batch.

    Returns
    -------
    ndarray of shape (<= k,) of int64
        Empty when every point is labelled or skipped.

    Raises
    ------
    ValueError
        ``k`` not in 1..50 or an unknown rule.
    """
    _check(k, rule)
    with session._lock:
        def compute():
            first = session.next_query()
            if first is None:
                return np.zeros(0, dtype=np.int64)
            session.graph_refits.settle()  # the picks after the first read a learner holding every label
            exclude = np.fromiter(session._log.skipped, dtype=np.intp, count=len(session._log.skipped))
            strategy = session._config.strategy
            rng = np.random.default_rng([session._config.seed, session.n_events, 7])
            learner = session.learner
            if rule == "greedy":
                try:
                    picks = greedy_batch(learner, first, int(k), strategy, rng, exclude)
                except Exception:
                    session._rebuild()  # the hypothetical labels may not all be taken back
                    raise
            else:
                left = np.setdiff1d(learner.unlabeled_indices, exclude)
                picks = diverse_batch(session.X, strategies.scores(learner, strategy), first,
                                      int(k), left)
            return np.asarray(picks, dtype=np.int64)

        return session._cached(("batch", int(k), rule), compute).copy()
