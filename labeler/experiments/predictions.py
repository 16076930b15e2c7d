"""``labeler simulate --predictions CSV``: the final model's calibrated predictions.

One row per evaluated point after the last label -- the validation set when there is one,
else the pool's unlabelled points -- with columns ``id``, ``label`` (true), ``predicted`` and
``confidence``: the probability of the predicted class, calibrated on the exact leave-one-out
decision values of the labels (:mod:`core.calibration`), as the app shows it. With these,
anyone can check calibration from the command line.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from core.calibration import fit_calibration
from core.criteria.risk import predicted_class_indices

from ..atomic import atomic_write

__all__ = ["PREDICTION_COLUMNS", "prediction_table", "write_predictions", "write_final_predictions"]

PREDICTION_COLUMNS = ("id", "label", "predicted", "confidence")


def prediction_table(learner, y_pool, ids_pool, decision_values=None, y_val=None, ids_val=None) -> pd.DataFrame:
    """The table of the module docstring.

    Parameters
    ----------
    learner : core.learner.ActiveRLS or core.graph.active.GraphLearner
        After the last label (``labels``, ``classes``, ``decision_values``,
        ``loo_decision_values()``).
    y_pool, ids_pool : array-like of shape (n_samples,)
        True labels and ids of the pool.
    decision_values : ndarray of shape (n_val, T), optional
        The learner's outputs on a validation set; then ``y_val`` (and optionally ``ids_val``,
        default ``0 .. n_val - 1``) describe it and the rows are the validation points.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`PREDICTION_COLUMNS`.
    """
    classes = list(learner.classes)
    labels = learner.labels
    codes = np.array([classes.index(v) for v in labels.values()], dtype=np.int64)
    pool = np.asarray(learner.decision_values)[np.asarray(learner.unlabeled_indices)] if len(classes) > 2 else None
    calibration = fit_calibration(learner.loo_decision_values(), codes, F_pool=pool, n_classes=len(classes))
    if decision_values is None:
        rows = np.asarray(learner.unlabeled_indices)
        F = np.asarray(learner.decision_values)[rows]
        truth, ids = np.asarray(y_pool)[rows], np.asarray(ids_pool)[rows]
    else:
        F = np.asarray(decision_values)
        truth = np.asarray(y_val)
        ids = np.arange(F.shape[0]) if ids_val is None else np.asarray(ids_val)
    _, conf = calibration.confidence(F)
    names = np.empty(len(classes), dtype=object)
    names[:] = classes
    predicted = names[predicted_class_indices(F)]
    return pd.DataFrame({"id": ids, "label": truth,
                         "predicted": pd.Series(predicted).astype(truth.dtype if truth.dtype.kind != "U" else object),
                         "confidence": conf})


def write_predictions(path, table: pd.DataFrame) -> None:
    """Write ``table`` as CSV to ``path`` atomically."""
    atomic_write(path, lambda tmp: table.to_csv(tmp, index=False, lineterminator="\n"))


def write_final_predictions(path, final: dict, dataset, y_val=None, ids_val=None) -> None:
    """Write the table of ``final`` (filled by ``simulate(..., final=final)``) to ``path``."""
    table = prediction_table(final["learner"], dataset.y, dataset.ids, final.get("decision_values"),
                             y_val=y_val, ids_val=ids_val)
    write_predictions(path, table)
