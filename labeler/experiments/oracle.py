"""The one oracle loop of every simulation: a strategy asks any learner, the true labels answer.

:func:`oracle_loop` drives a :class:`core.learner.base.Learner` (kernel RLS, a graph model, a
model still to come) for ``budget`` queries of :func:`core.strategies.query_one` and records
one row of :data:`CURVE_COLUMNS` per query; what differs between the simulations (how the
learner is built, what is evaluated, an automatic re-tune) comes in as the learner and a few
hooks: :func:`labeler.experiments.simulate.simulate` (ARLS on a kernel) and
:func:`labeler.experiments.graph_simulate.simulate_graph` (a learner factory on a kNN graph).
The columns are described in :mod:`labeler.experiments.simulate`.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from core.criteria.risk import predicted_class_indices
from core.selection.loo import loo_predicted_classes
from core.strategies import query_one
from labeler.session.stopping import StoppingMonitor, reweighted_codes, uncovered_share

__all__ = ["CURVE_COLUMNS", "balanced_accuracy", "loo_correct", "oracle_loop", "curve_frame"]

CURVE_COLUMNS = (
    "step",
    "index",
    "label",
    "n_labeled",
    "accuracy",
    "balanced_accuracy",
    "estimated_risk",
    "step_seconds",
    "width",
    "lam",
    "stop",
)


def balanced_accuracy(y_true, y_pred) -> float:
    """Mean over the classes present in ``y_true`` of the fraction predicted right.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n,)

    Returns
    -------
    float
        NaN when ``y_true`` is empty.
    """
    # Same value as sklearn.metrics.balanced_accuracy_score (tested), which is not used here
    # because in this loop it would (a) warn "y_pred contains classes not in y_true" whenever
    # the learner predicts a class absent from the evaluation points -- routine once every point
    # of a class is labelled -- and (b) raise on empty input, where the curve wants NaN.
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    if y_true.size == 0:
        return float("nan")
    recalls = [np.mean(y_pred[y_true == c] == c) for c in np.unique(y_true)]
    return float(np.mean(recalls))


def loo_correct(learner) -> np.ndarray:
    """Whether each labelled point's exact LOO prediction is right, shape (n_labeled,): the
    model choice's rule (:func:`core.selection.loo.loo_predicted_classes`: an output within
    :data:`core.selection.loo.TIE_TOLERANCE` of a tie is the tie), so rounding decides nothing."""
    F = np.asarray(learner.loo_decision_values(), dtype=np.float64)
    index = {c: t for t, c in enumerate(learner.classes)}
    truth = np.array([index[v] for v in learner.labels.values()], dtype=np.intp)
    if F.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    return loo_predicted_classes(F) == truth


def _native(value):
    return value.item() if hasattr(value, "item") else value


def oracle_loop(learner, y, strategy: str, budget: int, rng, *, evaluate=None, after_label=None, settings=None,
                loo_ready=None, progress: Callable[[int, int], None] | None = None, cold_start=None,
                clusters=None, observe=None,
                strategy_of: Callable | None = None) -> dict:
    """Ask ``learner`` ``budget`` times and answer with the true labels ``y``: the one loop of
    every oracle simulation, for any :class:`core.learner.base.Learner`.

    Parameters
    ----------
    learner : core.learner.base.Learner
        Holding the initial labels already.
    y : ndarray of shape (n_samples,)
        True labels of the pool (the oracle).
    strategy : str
        Query strategy (:func:`core.strategies.query_one`).
    budget : int
    rng : numpy.random.Generator
        Breaks the ties of every query.
    evaluate : callable(learner, labeled) -> (truth, pred), optional
        The evaluation points' true and predicted labels (``labeled``: bool mask of the pool);
        default the unlabelled rest of the pool.
    after_label : callable(learner), optional
        Runs after each label, inside the timed step (the automatic re-tune).
    settings : callable() -> (width, lam), optional
        The values to record per row (default NaN, NaN).
    loo_ready : callable(learner) -> bool, optional
        Whether the stopping signal reads the exact LOO predictions (default: never).
    progress : callable(step, budget), optional
    cold_start : core.coldstart.ColdStart, optional
        Answers the first queries of the "auto" strategy (:func:`core.strategies.query_one`).
    clusters : ndarray of int of shape (n_samples,), optional
        The pool's clusters (:meth:`labeler.session.settings.Settings.pool_clusters`); the
        stopping signal then also asks for a label in every cluster, as in a session.
    observe : callable(learner, labeled), optional
        Called at the end of every query (``labeled``: bool mask of the pool).
    strategy_of : callable(learner, strategy) -> str, optional
        The strategy asked at each step (default ``strategy`` itself).

    Returns
    -------
    dict {column: list}
        The columns of :data:`CURVE_COLUMNS`, one entry per query.
    """
    n = learner.n_samples
    labeled = np.zeros(n, dtype=bool)
    labeled[np.fromiter(learner.labels, dtype=np.int64, count=learner.n_labeled)] = True
    rows = {name: [] for name in CURVE_COLUMNS}
    monitor = StoppingMonitor(n)
    for step in range(1, budget + 1):
        t0 = time.perf_counter()
        asked = strategy if strategy_of is None else strategy_of(learner, strategy)
        i = query_one(learner, asked, rng, cold_start=cold_start)
        learner.add(i, _native(y[i]))
        if after_label is not None:
            after_label(learner)
        seconds = time.perf_counter() - t0
        labeled[i] = True
        if evaluate is not None:
            truth, pred = evaluate(learner, labeled)
        else:
            rest = ~labeled
            truth, pred = y[rest], learner.predict()[rest]
        width, lam = settings() if settings is not None else (float("nan"), float("nan"))
        rows["step"].append(step)
        rows["index"].append(int(i))
        rows["label"].append(y[i])
        rows["n_labeled"].append(learner.n_labeled)
        rows["accuracy"].append(float(np.mean(pred == truth)) if truth.size else float("nan"))
        rows["balanced_accuracy"].append(balanced_accuracy(truth, pred))
        rows["estimated_risk"].append(float(learner.estimated_risk()))
        rows["step_seconds"].append(seconds)
        rows["width"].append(width)
        rows["lam"].append(lam)
        codes = predicted_class_indices(learner.decision_values).astype(np.int32)
        monitor.record(learner.n_labeled, codes)
        loo_ok = loo_correct(learner) if loo_ready is not None and loo_ready(learner) else None
        uncovered = None if clusters is None else uncovered_share(clusters, np.flatnonzero(labeled))
        rows["stop"].append(monitor.signal(learner.n_labeled, codes, loo_ok, uncovered=uncovered,
                                           reweighted=reweighted_codes(learner)).verdict)
        if observe is not None:
            observe(learner, labeled)
        if progress is not None:
            progress(step, budget)
    return rows


def curve_frame(rows: dict, y: np.ndarray) -> pd.DataFrame:
    """The learning curve of :func:`oracle_loop`'s rows (labels in the dtype of ``y``)."""
    frame = pd.DataFrame({name: rows[name] for name in CURVE_COLUMNS})
    frame["label"] = np.asarray(rows["label"], dtype=y.dtype)
    return frame
