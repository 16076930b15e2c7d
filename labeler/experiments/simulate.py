"""Oracle simulation of active labelling: a strategy asks, the true labels answer.

:func:`simulate` runs the loop used by ``labeler simulate`` and by the thesis reproduction
(seed 002 §4.3): start from ``initial`` random labels, then ``budget`` times ask
:func:`core.strategies.query_one` for a point, give it its true label (the oracle) and record the
learner's accuracy and estimated risk. One row per query:

==================  ===================================================================
``step``            1, 2, ..., budget
``index``           pool row that was queried
``label``           its true label (what the oracle answered)
``n_labeled``       labels after this query (``initial + step``)
``accuracy``        fraction of evaluation points predicted right
``balanced_accuracy`` mean over the classes present of the per-class recall
``estimated_risk``  ``R(f_L)`` over the pool (seed 002 eq. 3.49, bias-corrected)
``step_seconds``    wall time of the query and the label update (evaluation excluded;
                    the first query of a process also pays numba's one-time compilation)
``width``           RBF width in use after this query (NaN for other kernels)
``lam``             lam in use after this query
``stop``            the stopping signal after this query ("keep going" or "likely
                    enough", :class:`labeler.session.stopping.StoppingMonitor`)
==================  ===================================================================

Defaults shared with the app
----------------------------
:func:`app_settings` resolves the features, kernel, lam, weighting and automatic tuning of
a data set exactly as a new labelling session does (:func:`labeler.session.config.resolve_model`,
:data:`labeler.session.config.DEFAULTS`); ``labeler simulate`` uses it, so the command line
and the app start from the same model. With ``auto_tune`` the loop re-tunes width and lam
after each label on the session's schedule and rule (:func:`labeler.session.model.auto_tune`,
:func:`core.rls.tuning.retune_due`): width first, then lam. It re-tunes in step, before the
next query, as a session does by default: a run is deterministic. The app runs its re-tunes in
the background (:mod:`labeler.session.retune`), so there a moved value takes effect a label or
more later, at the label count its ``setting`` event records; a simulation does not model that
delay (at most a few labels, while the schedule re-tunes after every label up to 50).

The evaluation points are a validation set when one is given, otherwise the pool points that
are still unlabelled after the query (accuracy is NaN once every point is labelled).

Predictions on a validation set come from
:class:`core.learner.out_of_pool.OutOfPoolPredictor` (the learner's dual coefficients, seed 002
eq. 3.54, docs/algorithms.md §3): :class:`ActiveRLS` keeps its outputs on the pool only.

This module imports no UI code (numpy, pandas, :mod:`core`, :mod:`labeler.data` and the
session's model and configuration modules).
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd

from core import coldstart as _coldstart
from core.kernels import Kernel, median_distance
from core.kernels.factors import NystromKernel
from core.learner import ActiveRLS
from core.learner.out_of_pool import OutOfPoolPredictor
from core.rls.tuning import DEFAULT_LAM, MIN_LOO_LABELS, loo_readiness, retune_due, tune_lam_width
from core.rls.width_scale import MAX_CLUSTER_POINTS
from core.strategies import REQUIRES, STRATEGIES, offered
from core.validation import check_count, check_features, check_positive
from labeler.data.preprocessing import standardize
from labeler.errors import SettingsError
from labeler.session import costs as _costs, model as _model
from labeler.session.config import DEFAULTS, SessionConfig, check_auto_tune, resolve_model, resolve_posterior
from labeler.experiments.oracle import CURVE_COLUMNS, balanced_accuracy, curve_frame, oracle_loop

__all__ = [
    "CURVE_COLUMNS",
    "DEFAULT_LAM",
    "app_settings",
    "MIN_LOO_LABELS",
    "simulate",
    "resolve_lam",
    "prepare_features",
    "balanced_accuracy",
]





# --------------------------------------------------------------------------- small helpers
def prepare_features(dataset, X_val=None, standardize_features: bool | None = None):
    """Features for the kernel: standardised when the data set asks for it.

    Parameters
    ----------
    dataset : labeler.data.Dataset
    X_val : array-like of shape (n_val, n_features), optional
        Validation features, transformed with the pool's statistics.
    standardize_features : bool or None
        None follows ``dataset.params.get("standardize", False)`` (docs/algorithms.md §4: the MAGIC
        widths refer to standardised features).

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)
    X_val : ndarray of shape (n_val, n_features) or None
    """
    X = check_features(dataset.X)
    if X_val is not None:
        X_val = check_features(X_val, name="X_val")
        if X_val.shape[1] != X.shape[1]:
            raise ValueError(
                f"The validation set has {X_val.shape[1]} feature(s) but the pool has "
                f"{X.shape[1]}; give a validation file with the same feature columns."
            )
    if standardize_features is None:
        standardize_features = bool(dataset.params.get("standardize", False))
    if standardize_features:
        X, stats = standardize(X)
        if X_val is not None:
            X_val, _ = standardize(X_val, stats=stats)
    return X, X_val


def app_settings(dataset, seed: int = 0, *, kernel: str = DEFAULTS["kernel"], width="auto",
                 lam="auto", weighting=None, X_val=None, posterior: str = "auto", rank=None,
                 landmarks: str = "uniform", knn: int = 10, standardize="auto") -> dict:
    """The model a new labelling session would start on ``dataset`` with: the same defaults.

    Parameters
    ----------
    dataset : labeler.data.Dataset
    seed : int
    kernel : {"rbf", "linear", "poly"}
    width, lam : float or "auto"
        "auto": where the session starts (the data set's recommendation when it refers to
        the same scaling, else the median pairwise distance and 0.1) AND re-tuned as labels
        arrive; a number is fixed.
    weighting : str or dict, optional
        Default :data:`labeler.session.config.DEFAULTS` ("balanced").
    X_val : array-like of shape (n_val, n_features), optional
        Validation features, scaled with the pool's statistics.
    standardize : "auto", "on", "off" or bool
        Standardise the columns; "auto" (the default, as a session's) decides from the data
        (:func:`labeler.session.config.resolve_model`).
    posterior, rank, landmarks, knn
        The learner's posterior, as a session's (:func:`labeler.session.config.resolve_posterior`:
        "auto" is dense while it fits in half the available memory, else nystrom; checked
        against the memory before anything is built).

    Returns
    -------
    dict
        ``X``, ``X_val`` (kernel features), ``kernel`` (:class:`core.kernels.Kernel`), ``lam``,
        ``weighting``, ``auto_tune`` ({"width", "lam"}: bool), ``standardize``, ``posterior``,
        ``rank``, ``landmarks``, ``knn`` (resolved), ``notes`` (how each "auto" value was chosen,
        and ``"scoring"`` when the picks are approximate).
    """
    cfg = SessionConfig(dataset=str(getattr(dataset, "name", "data")), kernel=kernel, width=width, lam=lam,
                        weighting=DEFAULTS["weighting"] if weighting is None else weighting,
                        seed=int(seed), posterior=posterior, rank=rank, landmarks=landmarks, knn=knn,
                        standardize=standardize,
                        classes=[str(c) for c in (getattr(dataset, "classes", None) or [])] or None)
    X_raw = check_features(dataset.X)
    posterior_notes = resolve_posterior(cfg, X_raw.shape[0], X_raw.shape[1])
    X, notes = resolve_model(cfg, dataset, X_raw)
    notes.update(posterior_notes)
    if X_val is not None:
        X_val = prepare_features(dataset, X_val, standardize_features=cfg.standardize)[1]
    spec = _model.ModelSpec.from_config(cfg)
    return {"X": X, "X_val": X_val, "kernel": spec.kernel_function(), "lam": float(cfg.lam),
            "weighting": cfg.weighting, "auto_tune": dict(cfg.auto_tune),
            "standardize": bool(cfg.standardize), "posterior": cfg.posterior, "rank": cfg.rank,
            "landmarks": cfg.landmarks, "knn": int(cfg.knn), "notes": notes}


def resolve_lam(lam, X, y, labeled, kernel: Kernel, weighting="none", default: float = DEFAULT_LAM,
                classes=None):
    """The regularisation to use: ``lam`` itself, or for ``"auto"`` exact LOO on the labels.

    ``"auto"`` is :func:`core.rls.tuning.tune_lam_width` (the one LOO tuner, also the
    labelling session's) on the labelled points, with the class weights of an
    :class:`ActiveRLS` holding those labels (so they are the learner's by construction, also
    for "balanced") and the learner's target codes over every class of ``classes``. Its rule:
    weighted LOO classification error over 50 geometric values between the smallest positive
    and the largest eigenvalue of ``W K_LL W``, ties to the largest lambda (seed 002 §4.1).
    With too few labels (fewer than :data:`MIN_LOO_LABELS`, fewer than two classes, or a
    labelled class with one label) LOO cannot judge: a :class:`core.rls.tuning.LooTuningWarning`
    and ``default``.

    Parameters
    ----------
    lam : float or "auto"
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        True labels (only ``y[labeled]`` is read).
    labeled : array-like of int
        Indices of the initial labels.
    kernel : core.kernels.Kernel
    weighting : {"none", "balanced"} or dict
        The learner's class weighting.
    default : float
    classes : sequence, optional
        The learner's classes (their order and number fix the target codes and the
        "balanced" weights). Default: the sorted labels of ``y[labeled]``.

    Returns
    -------
    float
    """
    if not (isinstance(lam, str) and lam == "auto"):
        return check_positive("lam", lam)
    labeled = np.asarray(labeled, dtype=np.intp)
    y_l = np.asarray(y)[labeled]
    classes = sorted(np.unique(y_l).tolist()) if classes is None else list(classes)
    X_l = np.asarray(X, dtype=np.float64)[labeled]
    labels = [v.item() if hasattr(v, "item") else v for v in y_l]
    weights = np.ones(len(classes))
    if not loo_readiness(labels):
        # the learner itself gives the weights (and validates labels and weighting)
        probe = ActiveRLS.from_features(X_l, classes=classes, kernel=kernel, lam=1.0, weighting=weighting)
        probe.add_many(list(range(labeled.size)), labels)
        weights = probe.class_weights
    return tune_lam_width(X_l, labels, classes, weights, kernel=kernel, default_lam=default).lam


# --------------------------------------------------------------------------- the loop
def simulate(
    dataset,
    strategy: str = "auto",
    budget: int = 100,
    seed: int = 0,
    kernel: Kernel | None = None,
    lam=DEFAULT_LAM,
    weighting="none",
    X_val=None,
    y_val=None,
    initial: int = 0,
    progress: Callable[[int, int], None] | None = None,
    X=None,
    auto_tune: dict | None = None,
    posterior: str = "dense",
    rank: int | None = None,
    landmarks: str = "uniform",
    knn: int = 10,
    build_progress: Callable[[str, float], None] | None = None,
    executor=None,
    final: dict | None = None,
    cold_start: int | None = None,
    observe: Callable | None = None,
) -> pd.DataFrame:
    """Simulate active labelling with an oracle that knows the true labels.

    Parameters
    ----------
    dataset : labeler.data.Dataset
        The pool (``dataset.X``, true labels ``dataset.y``, ``dataset.classes``).
    strategy : {"auto", "arls", "margin", "random"}
        Query strategy (:func:`core.strategies.query_one`); "auto", the app's default, is expected
        risk for the first :data:`core.criteria.auto.MAX_RISK_LABELS` (10) labels stored, initial
        ones included, then margin (:mod:`core.criteria.auto`).
    budget : int >= 1
        Number of queries (at most the number of points left after the initial labels).
    seed : int
        Seeds the initial labels and the tie-breaking of every query (one generator).
    kernel : core.kernels.Kernel, optional
        Default ``Kernel("rbf", width=median_distance(X, seed=seed))`` (:func:`core.kernels.median_distance`).
    lam : float > 0 or "auto"
        Regularisation; "auto" as in :func:`resolve_lam` on the initial labels.
    weighting : {"none", "balanced"} or dict {class: weight}
        Class weights of the learner (the expected risk is bias-corrected, eq. 3.49-3.50).
    X_val, y_val : array-like of shape (n_val, n_features) and (n_val,), optional
        Validation set (features as ``X``). Without it, accuracy is measured on the pool
        points still unlabelled.
    initial : int >= 0
        Random labels given before the first query (drawn with ``seed``).
    progress : callable(step, budget), optional
        Called after every query.
    X : ndarray of shape (n_samples, n_features), optional
        Features to use instead of ``dataset.X`` (e.g. standardised by
        :func:`prepare_features`).
    auto_tune : dict {"width": bool, "lam": bool}, optional
        Re-tune these values after each label as the labelling session does (see the module
        docstring); the width only with an RBF kernel. Default: nothing is re-tuned.
    posterior : {"dense", "nystrom", "spectral"}
        The learner's posterior (:func:`labeler.session.model.build_learner`, as in a session):
        a low-rank one on more than ``model.SUBSAMPLE_ABOVE`` points picks by the subsampled
        expected risk (approximate). With a validation set, a Nystrom learner predicts with its
        own kernel ``k(x, Z) W^+ k(Z, x')``; a spectral one cannot predict outside its pool.
    rank, landmarks, knn
        Of a low-rank posterior (:class:`labeler.session.model.ModelSpec`).
    executor : core.criteria.blocks.BlockExecutor, optional
        Where a low-rank posterior's candidates are scored (:mod:`labeler.distributed`; the
        scores do not depend on it).
    build_progress : callable(message, fraction), optional
        Progress of the factor's build.
    final : dict, optional
        Filled at the end with ``learner`` and ``decision_values`` (of X_val, else None).
    cold_start : int >= 0, optional
        With ``strategy="auto"``: labels picked by typicality / coverage first
        (:mod:`core.coldstart`); default :func:`core.coldstart.cold_start_labels` of the pool's
        class count.
    observe : callable(learner, labeled), optional
        Called after each query's row is recorded (``labeled``: bool mask of the pool), e.g. by
        a benchmark that evaluates other stopping rules on the same run.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`CURVE_COLUMNS`, one row per query. ``attrs`` holds the parameters
        used (``strategy``, ``seed``, ``lam``, ``kernel``, ``width``, ``weighting``,
        ``initial``, ``initial_indices``, ``evaluation``).

    Raises
    ------
    ValueError
        Unlabelled data, unknown strategy, bad budget / initial / lam, validation labels
        outside the classes, or a budget larger than the points left.
    """
    if getattr(dataset, "file_labels", None) is not None:
        raise SettingsError(
            f"{dataset.name}: {dataset.file_labels.summary().split(';')[0]}, so there is no oracle for the "
            "others to simulate. Fill that column in every row, or simulate on the labelled rows alone."
        )
    if dataset.y is None:
        raise SettingsError(
            f"{dataset.name} has no true labels, so there is no oracle to simulate. Give a file "
            "with a label column."
        )
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}.")
    budget = check_count("budget", budget, 1)
    initial = check_count("initial", initial, 0)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ValueError(f"seed must be an integer; got {seed!r}.")
    X = check_features(dataset.X if X is None else X)
    y = np.asarray(dataset.y)
    n = X.shape[0]
    if y.shape != (n,):
        raise ValueError(f"dataset.y has shape {y.shape}; expected ({n},), one label per point.")
    if initial + budget > n:
        raise SettingsError(
            f"initial + budget = {initial} + {budget} exceeds the {n} points of the pool; "
            f"pass a budget <= {n - initial}."
        )
    classes = list(dataset.classes)
    if X_val is not None or y_val is not None:
        if X_val is None or y_val is None:
            raise ValueError("give both X_val and y_val (validation features and labels), or neither.")
        X_val = check_features(X_val, name="X_val")
        y_val = np.asarray(y_val)
        if X_val.shape[1] != X.shape[1]:
            raise SettingsError(
                f"X_val has {X_val.shape[1]} feature(s) but the pool has {X.shape[1]}; use the "
                "same feature columns."
            )
        if y_val.shape != (X_val.shape[0],):
            raise ValueError(f"y_val has shape {y_val.shape}; expected ({X_val.shape[0]},).")
        unknown = sorted(set(np.unique(y_val).tolist()) - set(classes), key=str)
        if unknown:
            raise SettingsError(
                f"validation labels {unknown[:5]!r} are not classes of the pool ({classes!r}); "
                "use a validation set with the same classes."
            )
    if kernel is None:
        kernel = Kernel("rbf", width=median_distance(X, seed=seed))

    rng = np.random.default_rng(seed)
    init_idx = rng.choice(n, size=initial, replace=False) if initial else np.zeros(0, dtype=np.int64)
    if posterior == "spectral" and X_val is not None:
        raise SettingsError("A spectral (graph) posterior has no kernel outside its pool, so it cannot "
                         "predict a validation set; leave the validation set out (accuracy on the "
                         "unlabelled pool) or use posterior 'nystrom'.")
    lam_used = resolve_lam(lam, X, y, init_idx, kernel, weighting, classes=classes)
    spec = _model.RlsSpec(kernel=kernel.kind, width=float(kernel.width) if kernel.kind == "rbf" else None,
                            lam=float(lam_used), seed=int(seed), posterior=posterior, rank=rank,
                            landmarks=landmarks, knn=int(knn), strategy=strategy,
                            weighting=weighting if isinstance(weighting, str) else "none")
    if spec.posterior == "dense":
        learner = ActiveRLS.from_features(X, classes=classes, kernel=kernel, lam=lam_used, weighting=weighting,
                                          random_state=seed)
    else:
        learner = _model.build_learner(spec, X, classes, initial, parts={}, progress=build_progress,
                                       executor=executor)
        if not isinstance(weighting, str):
            learner.set_params(weighting=weighting)
    need = REQUIRES.get(strategy)
    if need is not None and need not in learner.capabilities:  # e.g. "vopt": a graph model's criterion
        raise SettingsError(f"the strategy {strategy!r} does not apply to kernel RLS (it needs the "
                            f"{need.replace('_', ' ')} of a graph model); choose one of "
                            f"{', '.join(offered(learner.capabilities))}, or a graph model (--model harmonic, lgc "
                            "or poisson) for it.")
    if initial:
        learner.add_many(init_idx.tolist(), y[init_idx].tolist())

    def predictor(kernel):
        if X_val is None:
            return None
        if spec.posterior == "nystrom":  # the learner's own kernel, not the one it approximates
            kernel = NystromKernel(kernel.kind, kernel.width, kernel.degree, kernel.coef0,
                                   landmarks=learner.posterior.landmarks)
        return OutOfPoolPredictor(X, X_val, kernel)

    val_predictor = predictor(kernel)

    tune = check_auto_tune(auto_tune or {})
    tune["width"] = tune["width"] and kernel.kind == "rbf" and spec.posterior != "spectral"
    scale = _model.width_scale(X) if tune["width"] else None
    pool_scale = scale  # the pool's clusters feed the stopping signal, as in a session
    if pool_scale is None and X.shape[0] <= MAX_CLUSTER_POINTS:  # larger pools get no clusters anyway
        try:
            pool_scale = _model.width_scale(X)
        except ValueError:  # a median distance of 0: no clusters to check
            pool_scale = None
    start_kernel = kernel
    now = {"spec": spec, "kernel": kernel, "predictor": val_predictor, "planned_rebuilds": 0}

    def retune(learner):
        if not ((tune["width"] or tune["lam"]) and retune_due(learner.n_labeled - 1, learner.n_labeled)
                and not loo_readiness(list(learner.labels.values()))):
            return
        fit = _model.auto_tune(now["spec"], learner, X, tune_width=tune["width"], tune_lam=tune["lam"],
                               scale=scale)
        new = now["spec"]
        if fit.width_changed:  # the session's order: width (a rebuild, planned), then lam
            new = new.with_setting("width", fit.width)
            now["planned_rebuilds"] += 1
        if fit.lam_changed:
            new = new.with_setting("lam", fit.lam)
        _model.apply(now["spec"], new, learner)
        now["spec"] = new
        if fit.width_changed:
            now["kernel"] = new.kernel_function()
            now["predictor"] = predictor(now["kernel"])

    def evaluate(learner, labeled):
        if now["predictor"] is not None:
            return y_val, now["predictor"].predict(learner)
        rest = ~labeled
        return y[rest], learner.predict()[rest]

    def settings():
        k = now["kernel"]
        return (float(k.width) if k.kind == "rbf" else float("nan")), float(now["spec"].lam)

    if cold_start is None:
        cold_start = _coldstart.cold_start_labels(len(classes))  # read at call time
    starter = (_coldstart.ColdStart(X, cold_start, seed) if strategy == "auto" and cold_start > 0 else None)
    if strategy == "auto" and _coldstart.CLUSTER_COVER and pool_scale is not None and pool_scale.components is not None:
        from core.strategies import scores as _scores
        starter = _coldstart.Starters(starter, _coldstart.ClusterCover(
            X, pool_scale.components, lambda: learner.labels,
            score=(lambda: _scores(learner, "auto")) if _coldstart.CLUSTER_COVER == "model" else None))
    rows = oracle_loop(learner, y, strategy, budget, rng, evaluate=evaluate, after_label=retune, settings=settings,
                       loo_ready=lambda lr: not loo_readiness(list(lr.labels.values())), progress=progress,
                       cold_start=starter, observe=observe, clusters=None if pool_scale is None else pool_scale.components)
    kernel, spec, planned_rebuilds = now["kernel"], now["spec"], now["planned_rebuilds"]
    if learner.n_rebuilds > planned_rebuilds:
        warnings.warn(
            f"the learner rebuilt its state from scratch {learner.n_rebuilds - planned_rebuilds} time(s) because an "
            "update was ill-conditioned (results stay exact); a larger lam avoids this.",
            RuntimeWarning,
            stacklevel=2,
        )
    if final is not None:
        final.update(learner=learner, decision_values=None if now["predictor"] is None
                     else now["predictor"].decision_values(learner))
    frame = curve_frame(rows, y)
    frame.attrs.update(
        strategy=strategy,
        seed=int(seed),
        lam=float(lam_used),
        kernel=kernel.kind,
        width=float(start_kernel.width) if kernel.kind == "rbf" else None,
        auto_tune=dict(tune),
        weighting=weighting if isinstance(weighting, str) else dict(weighting),
        initial=initial,
        initial_indices=[int(v) for v in init_idx],
        evaluation="validation" if X_val is not None else "unlabelled pool",
        posterior=spec.posterior,
        rank=None if spec.posterior == "dense" else int(learner.posterior.rank),
        scoring=_model.scoring_note(spec, n, _costs.dense_exact_pick_max_points()) or "exact",
    )
    return frame
