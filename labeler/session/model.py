"""The model factory: the one place that builds the session's learner and changes its settings.

A session's model is described by a spec (:mod:`labeler.session.spec`: an
:class:`RlsSpec` or a :class:`GraphSpec`), read from its
:class:`~labeler.session.config.SessionConfig`. This module turns a spec into a
:class:`core.learner.base.Learner` (:func:`build_learner`: :class:`core.learner.ActiveRLS` or
:class:`core.graph.active.GraphLearner` or :class:`core.graph.poisson_learner.PoissonLearner`,
the one place that tells the models apart), applies a
change of spec to a live learner (:func:`apply`: one ``set_params``, all or nothing by the
learner's own rollback; :func:`add_class`) and tunes lam and the width by leave-one-out on
the labelled points (:func:`tune`, through :func:`core.rls.tuning.tune_lam_width`, the tuner
that ``labeler.experiments.simulate`` uses too). Above this module the code asks a learner's
``capabilities``, never its model's name.

Memory is checked before it is spent: :func:`build_learner` refuses a learner that would not
fit (:func:`labeler.session.costs.check_memory`, :class:`~labeler.session.costs.MemoryBudgetError`)
before it allocates anything. What a session will cost, and the posterior "auto" chooses from
it, is estimated in :mod:`labeler.session.costs`.
"""

from __future__ import annotations

import numpy as np

from core.criteria.blocks import BlockScoredExpectedRisk, SerialExecutor
from core.criteria.subsampled import SubsampledExpectedRisk
from core.graph.active import GraphLearner
from core.graph.poisson_learner import PoissonLearner
from core.learner import ActiveRLS
from core.learner.base import LAM, Learner
from core.rls.tuning import AutoTuning, LooTuning, auto_tune as _auto_tune, loo_readiness, tune_lam_width
from core.rls.width_scale import WidthScale, width_scale as _width_scale
from core.validation import check_features, check_magnitude
from labeler.errors import SettingsError

from . import graphs
from .costs import check_memory, dense_exact_pick_max_points
from .graphs import (GRAPH_MODELS, MODEL_OPTIONS, MODELS, ZHU_SESSION_MAX, auto_note, build_graph,
                     learner_capabilities, model_description, strategies_for)
from .spec import GraphSpec, ModelSpec, RlsSpec, spec_from_config
from .lowrank import (SUBSAMPLE_ABOVE, SUBSAMPLED, build_factor,
                      default_rank, loo_problem as _loo_problem, scoring_note)

__all__ = [
    "default_rank",
    "build_factor",
    "scoring_note",
    "ModelSpec",
    "RlsSpec",
    "GraphSpec",
    "spec_from_config",
    "build_learner",
    "apply",
    "add_class",
    "tune",
    "auto_tune",
    "auto_tune_labels",
    "loo_problem",
    "MODEL_SETTINGS",
    "MODELS",
    "MODEL_OPTIONS",
    "strategies_for",
    "learner_capabilities",
    "auto_note",
    "GRAPH_MODELS",
    "ZHU_SESSION_MAX",
    "build_graph",
    "model_description",
    "width_grid",
]

#: The settings that change the learner (``auto_tune`` only says which of them re-tune).
MODEL_SETTINGS = ("width", "lam", "weighting", "strategy")


def build_learner(spec: ModelSpec, X: np.ndarray, classes, n_block: int = 0, *, parts: dict | None = None,
                  progress=None, executor=None) -> Learner:
    """A new learner without labels on the pool ``X`` with the settings of ``spec``: the one
    place that tells the models apart.

    Parameters
    ----------
    spec : RlsSpec or GraphSpec
    X : ndarray of shape (n_samples, n_features)
        The features the kernel (or the kNN graph) sees.
    classes : list of str
    n_block : int
        Labels the caller will give in one block update next (reopening a session).
    parts : dict, optional
        A low-rank posterior's or a graph's stored parts (:func:`build_factor`,
        :func:`build_graph`): rebuilt from them instead of from scratch; the dict is then
        filled with the parts used (what the caller stores).
    progress : callable(message, fraction), optional
        Progress of the long build steps (landmarks, factor rows, kNN graph, eigenpairs).
    executor : core.criteria.blocks.BlockExecutor, optional
        Where a low-rank posterior's candidates are scored (:mod:`labeler.distributed`); the
        scores do not depend on it. A dense posterior always scores here.

    Returns
    -------
    core.learner.base.Learner
        :class:`core.learner.ActiveRLS` for an :class:`RlsSpec` (with a low-rank posterior on
        more than :data:`SUBSAMPLE_ABOVE` points, or a dense one on more than
        :func:`dense_exact_pick_max_points`, "arls" scores by
        :class:`core.criteria.subsampled.SubsampledExpectedRisk`, see :func:`scoring_note`), or
        :class:`core.graph.active.GraphLearner` (harmonic, lgc) or
        :class:`core.graph.poisson_learner.PoissonLearner` (poisson) for a :class:`GraphSpec`.

    Raises
    ------
    MemoryBudgetError
        The learner would not fit in the available memory (:func:`check_memory`); nothing
        is allocated.
    """
    n = X.shape[0]
    if isinstance(spec, GraphSpec):
        check_memory(n, X.shape[1], len(classes), n_block, posterior="graph", knn=spec.knn)
        W, built = build_graph(spec, X, parts, progress)
        if parts is not None:
            parts.clear()
            parts.update(built)
        if spec.model == "poisson":
            return PoissonLearner(W, list(classes), class_mass=spec.class_mass, random_state=spec.seed)
        return GraphLearner(W, list(classes), spec.model, alpha=spec.alpha, class_mass=spec.class_mass,
                            random_state=spec.seed, zhu_max_points=graphs.ZHU_SESSION_MAX)
    check_memory(n, X.shape[1], len(classes), n_block, posterior=spec.posterior, rank=spec.rank, knn=spec.knn)
    if spec.posterior == "dense":
        learner = ActiveRLS.from_features(
            X, classes=list(classes), kernel=spec.kernel_function(), lam=float(spec.lam),
            weighting=spec.learner_weighting(classes), random_state=spec.seed,
        )
        if n > dense_exact_pick_max_points():  # scoring every point exactly: over the target
            learner.set_risk_criterion(SubsampledExpectedRisk(**SUBSAMPLED, seed=int(spec.seed)))
        return learner
    post, built = build_factor(spec, X, parts, progress, executor=executor)
    if parts is not None:
        parts.clear()
        parts.update(built)
    learner = ActiveRLS(post, classes=list(classes), lam=float(spec.lam),
                        weighting=spec.learner_weighting(classes), random_state=spec.seed)
    criterion = SubsampledExpectedRisk(**SUBSAMPLED, seed=int(spec.seed)) if n > SUBSAMPLE_ABOVE else None
    if executor is not None and not isinstance(executor, SerialExecutor):
        criterion = BlockScoredExpectedRisk(executor, subsample=criterion)
    if criterion is not None:
        learner.set_risk_criterion(criterion)
    return learner


def apply(old: ModelSpec, new: ModelSpec, learner: Learner) -> Learner:
    """Change the live ``learner`` from the settings of ``old`` to those of ``new``: one
    ``learner.set_params(**old.params_to(new))``, all or nothing (the learner's own rollback:
    when a value is rejected, e.g. ``K_LL + Lambda_L`` is not positive definite, the learner
    keeps ``old``).

    Raises
    ------
    ValueError
        ``numpy.linalg.LinAlgError`` (a ValueError) when the learner rejects a value; a change
        the learner has no parameter for (another kernel family; a setting the model does not
        have: the message names the fix).
    """
    params = old.params_to(new, learner.classes)
    if params:
        learner.set_params(**params)
    return learner


def add_class(spec: ModelSpec, learner: Learner, name: str) -> Learner:
    """Add the class ``name`` to the live learner (binary -> one-vs-all); with a dict
    weighting the new class gets weight 1, explicitly.

    Raises
    ------
    ValueError
        The learner rejects it (it may then hold the class without the dict weight: rebuild
        it with :func:`build_learner`).
    """
    learner.add_class(name)
    if isinstance(spec, RlsSpec) and isinstance(spec.weighting, tuple):
        learner.set_params(weighting=spec.learner_weighting(learner.classes))
    return learner


def width_grid(X: np.ndarray) -> np.ndarray:
    """The widths of :func:`width_scale`: median pairwise Euclidean distance (over a fixed
    subsample of at most 1000 points) times ``2**[j/2 ... 2]``, ``j/2 = -3`` or lower down to
    the neighbour distances (:mod:`core.rls.width_scale`).

    Raises
    ------
    As :func:`width_scale`.
    """
    return width_scale(X).widths


def width_scale(X: np.ndarray) -> WidthScale:
    """:func:`core.rls.width_scale.width_scale` of the pool: the width grid and the pool's
    clusters (which keep the width from merging them while the labels agree with them).

    Raises
    ------
    ValueError
        A column's values overflow float64 when squared (named by
        :func:`core.validation.check_magnitude`); :class:`labeler.errors.SettingsError` when the
        median distance is 0.
    """
    check_magnitude(check_features(X, min_samples=2))
    try:
        return _width_scale(X)
    except ValueError:
        raise SettingsError(
            "Cannot choose the RBF width automatically: the median distance between the points "
            "is 0 (duplicated or constant points). Pass width=<number> in SessionConfig."
        ) from None


def tune(spec: ModelSpec, learner: ActiveRLS, X: np.ndarray, widths=None, lams="auto") -> LooTuning:
    """Exact LOO choice of lam (and the width) on the learner's labelled points.

    The model tuned is the one the learner runs: weighted RLS without offset, its class
    weights and target codes (:mod:`core.rls.tuning`).

    Parameters
    ----------
    spec : RlsSpec
        The current settings (kernel and width).
    learner : core.learner.ActiveRLS
    X : ndarray of shape (n_samples, n_features)
        The learner's pool.
    widths : ndarray of shape (W,), optional
        RBF widths to choose from; default the spec's width.
    lams : "auto" or array-like
        Lambda grid; ``[spec.lam]`` tunes the width alone.

    Returns
    -------
    core.rls.tuning.LooTuning

    Raises
    ------
    ValueError
        Too few labels (the rule of :func:`core.rls.tuning.loo_readiness`; nothing is tuned).
    """
    learner.require(LAM, "LOO tuning of width and lam")
    labels = learner.labels
    reason = loo_readiness(list(labels.values()))
    if reason:
        raise ValueError(reason)
    idx = np.fromiter(labels, dtype=np.intp, count=len(labels))
    X_L, kernel, width_ok = _loo_problem(spec, learner, X, idx)
    if widths is not None and not width_ok:
        raise ValueError("The RBF width plays no part in a spectral (graph) posterior; tune lam alone.")
    return tune_lam_width(X_L, list(labels.values()), learner.classes, learner.class_weights,
                          kernel=kernel, lams=lams, widths=widths, default_lam=spec.lam, seed=spec.seed)


def auto_tune(spec: ModelSpec, learner: ActiveRLS, X: np.ndarray, *, tune_width: bool, tune_lam: bool,
              widths=None, scale: WidthScale | None = None) -> AutoTuning:
    """The automatic re-tune of the session's width and lam on the learner's labelled points
    (:func:`core.rls.tuning.auto_tune`: the width when a width on the grid has a strictly and
    clearly lower LOO error, lam on decisive evidence). Reads the learner, changes nothing.

    Parameters
    ----------
    spec : RlsSpec
        The settings in use.
    learner : core.learner.ActiveRLS
    X : ndarray of shape (n_samples, n_features)
        The learner's pool.
    tune_width, tune_lam : bool
        Which values may move (the width only with the RBF kernel).
    widths : ndarray, optional
        Width grid; default the widths of ``scale``.
    scale : core.rls.width_scale.WidthScale, optional
        The pool's :func:`width_scale` (default: computed from ``X``): its grid when
        ``widths`` is None, and its clusters.

    Raises
    ------
    ValueError
        Too few labels (:func:`core.rls.tuning.loo_readiness`).
    """
    learner.require(LAM, "LOO tuning of width and lam")
    labels = learner.labels
    idx = np.fromiter(labels, dtype=np.intp, count=len(labels))
    X_L, kernel, width_ok = _loo_problem(spec, learner, X, idx)
    return _auto_tune_problem(spec, X, X_L, idx, kernel, width_ok, list(labels.values()), learner.classes,
                              learner.class_weights, tune_width, tune_lam, widths, scale)


def _auto_tune_problem(spec, X, X_L, idx, kernel, width_ok, labels, classes, class_weights, tune_width, tune_lam,
                       widths, scale) -> AutoTuning:
    rbf = spec.kernel == "rbf" and width_ok
    clusters = {}
    if rbf and tune_width:
        scale = width_scale(X) if scale is None else scale
        widths = scale.widths if widths is None else widths
        if scale.components is not None:
            clusters = {"components": scale.components[idx], "cluster_width": scale.cluster_width}
    return _auto_tune(X_L, labels, classes, class_weights, kernel=kernel, lam=spec.lam,
                      tune_width=rbf and tune_width, tune_lam=tune_lam, widths=widths, seed=spec.seed, **clusters)


def loo_problem(spec: ModelSpec, learner: ActiveRLS, X: np.ndarray, idx) -> tuple:
    """What exact LOO tuning of ``learner`` sees on the labelled points ``idx``: ``(X_L,
    kernel, width_tunable)`` (:func:`.lowrank.loo_problem`), copied (a background re-tune
    reads it while the live learner changes)."""
    idx = np.asarray(idx, dtype=np.intp)
    X_L, kernel, width_ok = _loo_problem(spec, learner, X, idx)
    return np.array(X_L, copy=True), kernel, width_ok


def auto_tune_labels(spec: ModelSpec, X: np.ndarray, labels: dict, classes, class_weights, *, tune_width: bool,
                     tune_lam: bool, widths=None, scale: WidthScale | None = None,
                     problem: tuple | None = None) -> AutoTuning:
    """:func:`auto_tune` from copies of what it reads of the learner (its labels ``{index:
    label}`` in labelling order, classes and class weights; for a low-rank posterior its LOO
    problem ``problem`` from :func:`loo_problem`), so that it can run while the live learner
    changes (:mod:`.retune`). Same numbers as :func:`auto_tune` on a learner holding these
    labels (``widths`` and ``scale`` as there).

    Raises
    ------
    ValueError
        Not a kernel-RLS spec; a low-rank posterior without ``problem``; too few labels
        (:func:`core.rls.tuning.auto_tune`).
    """
    if not isinstance(spec, RlsSpec):
        raise ValueError("A re-tune needs a kernel-RLS model (width and lam); a graph model has neither.")
    idx = np.fromiter(labels, dtype=np.intp, count=len(labels))
    if problem is None:
        if spec.posterior != "dense":
            raise ValueError("A re-tune of a low-rank posterior from copied labels needs its LOO problem "
                             "(model.loo_problem of the live learner).")
        problem = (X[idx], spec.kernel_function(), True)
    X_L, kernel, width_ok = problem
    return _auto_tune_problem(spec, X, X_L, idx, kernel, width_ok, list(labels.values()),
                              list(classes), dict(class_weights), tune_width, tune_lam, widths, scale)
