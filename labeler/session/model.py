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

Memory is checked before it is spent
------------------------------------
The dense learner holds the posterior covariance C, one n x n float64 matrix (8 n^2 bytes),
and needs working memory besides: per-point arrays (features, outputs, weights), the scores of
a query, and the n x k blocks of a block update of k labels (the initial labels, or the
labelled points reweighted under "balanced" weights). :func:`session_bytes` estimates the peak
(measured: 1.07-1.7 x 8 n^2 for n = 3,000-6,000 with up to 1,000 labels),
:func:`available_memory` reads what the machine can give (``MemAvailable`` of
``/proc/meminfo``, capped by a cgroup limit), and :func:`check_memory` refuses a session that
does not fit with :class:`MemoryBudgetError`, saying how many points would fit.
:func:`build_learner` checks before it allocates, so neither creating nor reopening a session
runs into a ``MemoryError`` (or the kernel's OOM killer) half-way.
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
from labeler.memory import available_memory, format_bytes as _gib

from . import graphs
from .graphs import (GRAPH_MODELS, MODEL_OPTIONS, MODELS, ZHU_SESSION_MAX, auto_note, build_graph, graph_bytes,
                     learner_capabilities, model_description, strategies_for)
from .spec import GraphSpec, ModelSpec, RlsSpec, spec_from_config
from .lowrank import (DEFAULT_KNN, DEFAULT_RANK, LANDMARKS, SUBSAMPLE_ABOVE, SUBSAMPLED, build_factor,
                      default_rank, loo_problem as _loo_problem, scoring_note)

__all__ = [
    "MemoryBudgetError",
    "session_bytes",
    "factor_bytes",
    "estimate_bytes",
    "choose_posterior",
    "dense_step_seconds",
    "dense_latency_max_points",
    "dense_exact_pick_max_points",
    "default_rank",
    "build_factor",
    "scoring_note",
    "POSTERIORS",
    "max_points",
    "available_memory",
    "check_memory",
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
    "graph_bytes",
    "build_graph",
    "model_description",
    "width_grid",
]

#: The settings that change the learner (``auto_tune`` only says which of them re-tune).
MODEL_SETTINGS = ("width", "lam", "weighting", "strategy")


# --------------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------------

#: Fraction of the available memory a session may take (the rest: the app, other tabs, the OS).
MEMORY_FRACTION = 0.9
_BLOCK_LABELS = 256  # labels of a block update the estimate always allows for
_FIXED_BYTES = 32 << 20  # numba and numpy working buffers that do not grow with n
_LOW_RANK_HINT = "a low-rank posterior: --posterior nystrom (in the app: posterior 'nystrom')"

#: Posteriors of a session: "auto" is resolved at creation (:func:`choose_posterior`).
POSTERIORS = ("auto", "dense", "nystrom", "spectral")
#: "auto" keeps the exact dense learner while twice its memory (a re-tune builds the new n x n
#: matrix beside the one answering) is under this share of the free memory, and while its
#: exact step fits the key press (:func:`dense_latency_max_points`).
AUTO_DENSE_FRACTION = 0.5
#: A dense posterior scores every candidate exactly (its expected-risk picks) while this step
#: (score every point, apply the exact update: the work of a key press) is estimated under this
#: many seconds (:func:`dense_step_seconds`, :func:`dense_latency_max_points`): the app's target
#: from key press to next query (issue 23: 300 ms at 2 x 10^4 points). On a larger pool it picks
#: by :class:`core.criteria.subsampled.SubsampledExpectedRisk` (as the low-rank posteriors do
#: above :data:`SUBSAMPLE_ABOVE` points), on the exact model.
DENSE_STEP_TARGET_S = 0.3
#: Seconds per n^2 of one exact binary step on this project's 2-core machine, quiet: the step is
#: memory-bound (about three passes over the n x n covariance). Measured by
#: ``python benchmarks/arls_step.py``: 136 ms at n = 10,000 and 408 ms at n = 20,000
#: (docs/benchmarks.md §1), 1.0e-9 s n^2 at the larger.
DENSE_STEP_S_PER_N2 = 1.0e-9
#: One-vs-all with T classes costs about this times T binary steps (scoring is O(n T) per
#: candidate): T = 10 with "balanced" weights measured 7.8 x the binary step
#: (docs/benchmarks.md §1; ``python benchmarks/multiclass_step.py`` on several data sets).
DENSE_STEP_PER_CLASS = 0.8


class MemoryBudgetError(ValueError):
    """The session would need more memory than the machine has available."""


def _linear_bytes(n_features: int, n_classes: int, n_block: int) -> int:
    """Bytes per point besides C: features, outputs and scores (T columns), a block update."""
    T = 1 if n_classes <= 2 else int(n_classes)
    return 8 * (int(n_features) + 4 * T + 32) + 28 * max(int(n_block), _BLOCK_LABELS)


def session_bytes(n_samples: int, n_features: int, n_classes: int = 2, n_block: int = 0) -> int:
    """Estimated peak memory of a dense session, in bytes.

    ``8 n^2`` for C, plus per point ``8 (d + 4 T + 32)`` (features, outputs, scores) and
    ``28 k`` for a block update of ``k = max(n_block, 256)`` labels, plus a fixed 32 MiB.

    Parameters
    ----------
    n_samples, n_features : int
        Pool size n and the number of features the kernel sees.
    n_classes : int
        Number of classes (T = 1 output column for two, else T = n_classes).
    n_block : int
        Largest block of labels given at once (the initial labels).
    """
    n = int(n_samples)
    return 8 * n * n + n * _linear_bytes(n_features, n_classes, n_block) + _FIXED_BYTES


def max_points(budget: float, n_features: int, n_classes: int = 2, n_block: int = 0) -> int:
    """The largest pool size whose :func:`session_bytes` fits in ``budget`` bytes."""
    b, c = _linear_bytes(n_features, n_classes, n_block), _FIXED_BYTES
    room = float(budget) - c
    if room <= 0:
        return 0
    n = int((-b + np.sqrt(b * b + 32.0 * room)) / 16.0)
    while n > 0 and session_bytes(n, n_features, n_classes, n_block) > budget:
        n -= 1
    return n


def factor_bytes(n_samples: int, n_features: int, n_classes: int = 2, rank: int = 300,
                 posterior: str = "nystrom", knn: int = 10) -> int:
    """Estimated peak memory of a session on a low-rank posterior, in bytes.

    ``8 n r`` for the factor ``Phi`` (taken over by the posterior, never copied) times 1.25
    (the block temporaries of the build and of the mean updates), plus per point two copies
    of the features (the data set's and the kernel's), the outputs and scores (as
    :func:`session_bytes`, without the n x k blocks a dense block update needs: a factor's
    updates are r x r), the candidate block of the subsampled score (at most 64 MiB), plus
    a fixed 32 MiB. A spectral factor also holds the kNN graph and its Laplacian (about
    ``200 n k`` bytes with the approximate search's index) and the Lanczos basis of the
    eigensolver (``2 r`` vectors of n).
    """
    n, r, T = int(n_samples), int(rank), 1 if n_classes <= 2 else int(n_classes)
    per_point = 8 * (2 * int(n_features) + 4 * T + 32)
    need = int(1.25 * 8 * n * r) + n * per_point + _FIXED_BYTES + (64 << 20)
    if posterior == "spectral":
        need += 200 * n * int(knn) + 8 * n * 2 * r
    return need


def estimate_bytes(posterior: str, n_samples: int, n_features: int, n_classes: int = 2, n_block: int = 0,
                   rank: int | None = None, knn: int = DEFAULT_KNN) -> int:
    """:func:`session_bytes` (dense), :func:`factor_bytes` (nystrom, spectral) or
    :func:`graph_bytes` ("graph": with Zhu's inverse up to :data:`ZHU_SESSION_MAX` points)."""
    if posterior == "graph":
        return graph_bytes(n_samples, n_features, n_classes, knn, zhu=int(n_samples) <= ZHU_SESSION_MAX)
    if posterior == "dense":
        return session_bytes(n_samples, n_features, n_classes, n_block)
    rank = default_rank(posterior, n_samples) if rank is None else int(rank)
    return factor_bytes(n_samples, n_features, n_classes, rank, posterior, knn)


def dense_step_seconds(n_samples: int, n_classes: int = 2) -> float:
    """Estimated seconds of one exact dense step (score all, update) on a quiet machine:
    ``DENSE_STEP_S_PER_N2 n^2``, times ``DENSE_STEP_PER_CLASS T`` for one-vs-all (T >= 3)."""
    n, T = float(n_samples), int(n_classes)
    per_class = 1.0 if T <= 2 else max(1.0, DENSE_STEP_PER_CLASS * T)
    return DENSE_STEP_S_PER_N2 * n * n * per_class


def dense_latency_max_points(n_classes: int = 2) -> int:
    """The largest pool whose :func:`dense_step_seconds` is within :data:`DENSE_STEP_TARGET_S`
    (17,320 points for two classes, 6,123 for ten): the largest a dense posterior scores
    every candidate of exactly with ``n_classes`` classes (a dense posterior's picks are
    subsampled beyond the binary size: :func:`dense_exact_pick_max_points`)."""
    T = int(n_classes)
    per_class = 1.0 if T <= 2 else max(1.0, DENSE_STEP_PER_CLASS * T)
    return int(np.sqrt(DENSE_STEP_TARGET_S / (DENSE_STEP_S_PER_N2 * per_class)))


def dense_exact_pick_max_points() -> int:
    """The largest pool a dense posterior scores every candidate of exactly: the binary
    :func:`dense_latency_max_points` (17,320 points). It depends on the pool size only, never on
    the classes, so that a session rebuilt after a class was added (a reopen, a re-tune) picks
    as the live one did."""
    return dense_latency_max_points(2)


def choose_posterior(requested: str, n_samples: int, n_features: int, n_classes: int = 2, n_block: int = 0,
                     available: int | None = None) -> tuple[str, str]:
    """The posterior of a new session, and in words why.

    ``"auto"``: dense (the exact learner) while its exact step fits the latency target (at most
    :func:`dense_latency_max_points`: :func:`dense_step_seconds` within
    :data:`DENSE_STEP_TARGET_S`) and twice its :func:`session_bytes` (a re-tune builds the new
    matrix beside the old) is under :data:`AUTO_DENSE_FRACTION` of the available memory, else
    ``"nystrom"``; any other name is returned as given. (A dense posterior chosen on a larger
    pool picks by the subsampled expected risk: :func:`build_learner`.)

    Returns
    -------
    posterior : {"dense", "nystrom", "spectral"}
    note : str
        Empty unless "auto" chose a low-rank posterior (the CLI prints it, the app shows it).
    """
    if requested not in POSTERIORS:
        raise ValueError(f"Unknown posterior {requested!r}; choose one of {', '.join(POSTERIORS)}.")
    if requested != "auto":
        return requested, ""
    # twice the session: a width re-tune builds the new n x n matrix beside the one answering
    need = 2 * session_bytes(n_samples, n_features, n_classes, n_block)
    avail = available_memory() if available is None else available
    fits_memory = avail is None or need <= AUTO_DENSE_FRACTION * avail
    step = dense_step_seconds(n_samples, n_classes)
    if fits_memory and step <= DENSE_STEP_TARGET_S:
        return "dense", ""  # the default stays silent (the CLI prints the posterior anyway)
    if fits_memory:
        return "nystrom", (
            f"nystrom, rank {default_rank('nystrom', n_samples)}: an exact dense step on {int(n_samples):,} points "
            f"and {int(n_classes)} classes takes about {step:.1f} s on a quiet 2-core machine, over the "
            f"{1e3 * DENSE_STEP_TARGET_S:.0f} ms a key press may take (the exact learner answers within it up to "
            f"{dense_latency_max_points(n_classes):,} points); the low-rank posterior approximates the kernel "
            f"(--posterior dense to insist: beyond that size its picks are subsampled; --rank to change the rank)"
        )
    return "nystrom", (
        f"nystrom, rank {default_rank('nystrom', n_samples)}: a dense posterior of {int(n_samples):,} points "
        f"would need about {_gib(need)} (its n x n matrix twice while a re-tune rebuilds it), more than half of "
        f"the {_gib(avail)} available; the low-rank "
        f"posterior approximates the kernel (--posterior dense to insist, --rank to change the rank)"
    )


def check_memory(n_samples: int, n_features: int, n_classes: int = 2, n_block: int = 0,
                 available: int | None = None, posterior: str = "dense", rank: int | None = None,
                 knn: int = DEFAULT_KNN) -> int:
    """Refuse a session that does not fit in the available memory, before it is allocated.

    Parameters
    ----------
    n_samples, n_features, n_classes, n_block : int
        See :func:`session_bytes`.
    available : int, optional
        Bytes available; default :func:`available_memory` (no check when it is unknown).
    posterior : {"dense", "nystrom", "spectral"}
    rank, knn : int, optional
        Of a low-rank posterior (:func:`factor_bytes`).

    Returns
    -------
    int
        The estimated bytes (:func:`estimate_bytes`).

    Raises
    ------
    MemoryBudgetError
        More than :data:`MEMORY_FRACTION` of the available memory would be needed; the
        message says how much, how many points fit, and what to do (a dense posterior that
        does not fit names ``--posterior nystrom``).
    """
    need = estimate_bytes(posterior, n_samples, n_features, n_classes, n_block, rank, knn)
    avail = available_memory() if available is None else available
    if avail is None or need <= MEMORY_FRACTION * avail:
        return need
    n = int(n_samples)
    if posterior == "graph":
        raise MemoryBudgetError(
            f"A graph-model session on {n:,} points needs about {_gib(need)} of memory, but only "
            f"{_gib(avail)} is available now. Choose fewer neighbours (knn), subsample the data, or free memory."
        )
    if posterior != "dense":
        r = default_rank(posterior, n) if rank is None else int(rank)
        raise MemoryBudgetError(
            f"A {posterior} session on {n:,} points with rank {r} needs about {_gib(need)} of memory "
            f"(the factor alone is 8 n r bytes = {_gib(8 * n * r)}), but only {_gib(avail)} is "
            f"available now. Choose a smaller rank (--rank), subsample the data, or free memory."
        )
    fit = max_points(MEMORY_FRACTION * avail, n_features, n_classes, n_block)
    raise MemoryBudgetError(
        f"A session on {n:,} points needs about {_gib(need)} of memory (the exact learner keeps "
        f"an n x n matrix: 8 n^2 bytes = {_gib(8 * n * n)}, plus working memory), but only "
        f"{_gib(avail)} is available now. At most about {fit:,} points fit densely. Use {_LOW_RANK_HINT}, "
        f"which keeps an n x r factor instead (about "
        f"{_gib(factor_bytes(n, n_features, n_classes, default_rank('nystrom', n)))}), or posterior "
        f"'auto'; or subsample the data, or free memory (close other sessions or programs)."
    )


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
