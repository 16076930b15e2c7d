"""Suspect labels of a labelled table: how likely each label is wrong (issue 21).

Every labelled row is a label of one model (the app's defaults: :func:`labeler.experiments.
simulate.app_settings`, or a graph model); each row's score is ``1 - p(label)`` under the
calibrated exact leave-one-out probabilities (:func:`core.calibration.label_suspicion`): the
model fitted on every other row, whose prediction for the row is its honest opinion of it.
(Dividing the LOO values by their LOO predictive spread first,
:func:`core.calibration.standardized_suspicion`, was measured as no better: docs/trust.md.)
With a kernel model the width and lam are first tuned by leave-one-out on all the labels, as
a session re-tunes them (:func:`labeler.session.model.auto_tune`).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from core.calibration import fit_calibration, label_suspicion

from ..session import model as _model
from ..session.config import SessionConfig
from .simulate import app_settings

__all__ = ["SUSPECT_COLUMNS", "fit_all_labels", "suspect_table", "check_labels_for_suspects", "labelled_only"]

SUSPECT_COLUMNS = ("id", "label", "suggested", "score", "rank")


def labelled_only(dataset):
    """The rows of ``dataset`` that carry a label, as a fully labelled data set.

    A table whose label column is filled in some rows only (``dataset.file_labels``) is ranked
    on its labelled rows; the unlabelled rows are left out (they have no label to doubt, and
    the ranking is that of a table holding the labelled rows alone). Any other data set is
    returned as it is.

    Returns
    -------
    labeler.data.Dataset
        With ``y`` the labels of its ``n_labelled`` rows (X, ids, layout, frame subset alike)
        and ``file_labels`` None.
    """
    from dataclasses import replace

    known = getattr(dataset, "file_labels", None)
    if known is None:
        return dataset
    rows = np.asarray(known.rows)
    frame = dataset.frame
    return replace(
        dataset, X=np.ascontiguousarray(dataset.X[rows]), y=np.asarray(known.labels), ids=np.asarray(dataset.ids)[rows],
        layout=None if dataset.layout is None else dataset.layout[rows],
        frame=None if frame is None else frame.iloc[rows].reset_index(drop=True),
        texts=None if dataset.texts is None else dataset.texts[rows], images=None if dataset.images is None
        else dataset.images[rows], image_paths=None if dataset.image_paths is None
        else [dataset.image_paths[i] for i in rows.tolist()], file_labels=None)


def check_labels_for_suspects(dataset, label_col: str | None = None) -> None:
    """Refuse data whose labels cannot be doubted, naming the problem and the fix.

    Raises
    ------
    ValueError
        No label column; a label column with a different value in every row (an id or free
        text, not classes). A single class is refused by the loader already.
    """
    where = f"column {label_col!r}" if label_col else "the label column"
    if dataset.y is None:
        raise ValueError(
            f"{dataset.name} has no label column, so there are no labels to check. Name the "
            "column of labels with --label-col NAME."
        )
    y = np.asarray(dataset.y)
    n_classes = len(np.unique(y.astype(str)))
    if n_classes == len(y):
        raise ValueError(
            f"{where} of {dataset.name} has a different value in every one of its {len(y)} rows, so it "
            "holds ids or free text, not classes. Name the column of classes with --label-col NAME."
        )


def fit_all_labels(dataset, model: str = "rls", seed: int = 0, tune: bool = True):
    """A learner on ``dataset`` with every row labelled (the app's defaults for ``model``).

    Returns
    -------
    learner : core.learner.ActiveRLS or core.graph.active.GraphLearner
    classes : list
        The data set's classes, in the learner's column order.
    """
    y = np.asarray(dataset.y)
    classes = list(dataset.classes)
    chosen = app_settings(dataset, seed)
    X = chosen["X"]
    if model == "rls":
        cfg = SessionConfig(dataset=str(dataset.name), seed=int(seed))
        spec = _model.RlsSpec(kernel=cfg.kernel, width=float(chosen["kernel"].width)
                                if chosen["kernel"].kind == "rbf" else None, lam=float(chosen["lam"]),
                                seed=int(seed), posterior=chosen["posterior"], rank=chosen["rank"],
                                landmarks=chosen["landmarks"], knn=chosen["knn"])
        spec = spec.with_setting("weighting", chosen["weighting"])
    else:
        spec = _model.GraphSpec(seed=int(seed), model=model, knn=chosen["knn"])
    names = [str(c) for c in classes]
    learner = _model.build_learner(spec, X, names, n_block=len(y))
    learner.add_many(list(range(len(y))), [str(v) for v in y.tolist()])
    if tune and model == "rls" and any(chosen["auto_tune"].values()):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = _model.auto_tune(spec, learner, X, tune_width=chosen["auto_tune"]["width"],
                                   tune_lam=chosen["auto_tune"]["lam"])
        if fit.width_changed:
            spec = spec.with_setting("width", fit.width)
            learner.set_kernel(spec.kernel_function())
        if fit.lam_changed:
            learner.set_lam(fit.lam)
    return learner, classes


def suspect_table(learner, classes, ids) -> pd.DataFrame:
    """One row per labelled point, most suspect first: id, label, suggested, score, rank.

    Parameters
    ----------
    learner
        With every point labelled (``labels``, ``classes``, ``loo_decision_values()``).
    classes : list
        The data set's class values in the learner's column order (reported as given).
    ids : array-like of shape (n_samples,)
    """
    names = list(learner.classes)
    order = np.fromiter(learner.labels, dtype=np.intp, count=learner.n_labeled)
    codes = np.array([names.index(v) for v in learner.labels.values()], dtype=np.int64)
    F = learner.loo_decision_values()
    score, suggested = label_suspicion(fit_calibration(F, codes, n_classes=len(names)), F, codes)
    values = np.empty(len(classes), dtype=object)
    values[:] = [c.item() if isinstance(c, np.generic) else c for c in classes]
    table = pd.DataFrame({"id": np.asarray(ids)[order], "label": values[codes],
                          "suggested": values[suggested], "score": score})
    table = table.iloc[np.argsort(-score, kind="stable")].reset_index(drop=True)
    table["rank"] = np.arange(1, len(table) + 1)
    return table
