"""The graph models of a session (issue 10 §2): what does not apply to them is refused, their
creation-time resolving, the kNN graph kept in the store, and the words that name them.

A session's model is kernel RLS (``"rls"``, :class:`core.learner.ActiveRLS`) or a graph model
on the ``knn``-NN graph of the pool (``"harmonic"``, ``"lgc"``:
:class:`core.graph.active.GraphLearner`; ``"poisson"``:
:class:`core.graph.poisson_learner.PoissonLearner`). Which strategies a model runs follows from
its learner's capabilities (:func:`learner_capabilities`, :func:`core.strategies.offered`).
Used by :mod:`labeler.session.config` (the checks) and :mod:`labeler.session.model` (which
re-exports the rest, and alone builds the learner).
"""

from __future__ import annotations

import numbers
import numpy as np

from core.graph.active import GraphLearner
from core.graph.poisson_learner import PoissonLearner
from core.graph.outputs import GraphOutputs
from core.graph.variance import VARIANCE_RANK
from core.learner.base import EXPECTED_RISK, GRAPH_VARIANCE
from core.strategies import REQUIRES, STRATEGIES, cold_strategy, offered

from .spec import GraphSpec, ModelSpec

__all__ = ["MODELS", "GRAPH_MODELS", "GRAPH_LEARNERS", "MODEL_OPTIONS", "strategies_for", "learner_capabilities",
           "auto_note", "ZHU_SESSION_MAX", "check_model_settings", "check_graph_strategy", "resolve_graph",
           "graph_bytes", "build_graph", "model_description"]

#: The graph models and the learner class of each (:func:`labeler.session.model.build_learner`);
#: a session's models are kernel RLS (ActiveRLS, the default) and these, whose stored posterior
#: is "graph".
GRAPH_LEARNERS = {"harmonic": GraphLearner, "lgc": GraphLearner, "poisson": PoissonLearner}
GRAPH_MODELS = tuple(GRAPH_LEARNERS)
MODELS = ("rls",) + GRAPH_MODELS
#: Largest pool on which a session runs Zhu et al.'s exact expected risk (``labeler simulate``
#: allows 5,000: core.graph.active.ZHU_MAX_POINTS). The first query inverts Delta_UU densely,
#: O(u^3), and every later label costs O(u^2) (downdate + scores): the session's cost per label
#: is in docs/benchmarks.md §8 (``python benchmarks/graph_session.py``).
ZHU_SESSION_MAX = 2000
_FIXED_BYTES = 32 << 20  # numba and numpy working buffers (as labeler.session.costs' estimates)


#: The settings a new session of each model takes besides the strategy and the seed (the
#: new-session form and ``labeler app --model`` offer these).
MODEL_OPTIONS = {"rls": (), "harmonic": ("knn", "class_mass"), "lgc": ("knn", "alpha", "class_mass"),
                 "poisson": ("knn", "class_mass")}


def learner_capabilities(model: str, n_samples: int | None) -> frozenset:
    """The capabilities of the learner a session of ``model`` builds on ``n_samples`` points
    (None: a pool of unknown size, taken as small), as its class says, before it is built.
    Kernel RLS: expected risk (every :class:`core.learner.ActiveRLS` scores it), no graph variance."""
    if model == "rls":
        return frozenset({EXPECTED_RISK})
    n = 0 if n_samples is None else int(n_samples)
    return GRAPH_LEARNERS[model].capabilities_for(model, n, ZHU_SESSION_MAX)


def strategies_for(model: str, n_samples: int) -> tuple:
    """The strategies a session of ``model`` on ``n_samples`` points can run: those its
    learner's capabilities allow (:func:`core.strategies.offered`): every plain one but the
    variance criteria for rls; "arls" (Zhu et al.'s rule) for harmonic up to
    :data:`ZHU_SESSION_MAX` points; "vopt" and "sigmaopt" for every graph model."""
    return offered(learner_capabilities(model, n_samples))


def _choice(name: str, value, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"Unknown {name} {value!r}; choose one of {', '.join(choices)}.")
    return value


def _count(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def check_model_settings(cfg) -> None:
    """Refuse settings that do not apply to the chosen model (before anything is loaded).

    A graph model (harmonic, lgc, poisson) has no kernel, width, lam, class weights, posterior, rank or
    landmarks; each given one is named with the fix. ``alpha`` applies to lgc only and
    ``class_mass`` to the graph models only.

    Raises
    ------
    ValueError
        Naming the setting and what to do.
    """
    _choice("model", cfg.model, MODELS)
    if not isinstance(cfg.class_mass, (bool, np.bool_)):
        raise ValueError(f"class_mass must be True or False; got {cfg.class_mass!r}.")
    if cfg.model == "rls":
        if cfg.class_mass:
            raise ValueError("class_mass (class mass normalisation) applies to the graph models only; "
                             "choose model 'harmonic', 'lgc' or 'poisson', or drop it.")
        if cfg.alpha != 0.99:
            raise ValueError("alpha applies to model 'lgc' only; choose model 'lgc', or drop it.")
        check_graph_strategy(cfg.model, cfg.strategy, None)  # vopt / sigmaopt are the graph models'
        return
    fix = f"drop it: the {cfg.model} model works on the kNN graph of the pool (its only setting is knn" + \
          (", alpha" if cfg.model == "lgc" else "") + "), or choose model 'rls'."
    given = [(name, shown) for name, bad, shown in (
        ("kernel", cfg.kernel != "rbf", f"kernel {cfg.kernel!r}"),
        ("width", cfg.width != "auto", f"width {cfg.width!r}"),
        ("lam", cfg.lam != "auto", f"lam {cfg.lam!r}"),
        ("posterior", cfg.posterior not in ("auto", "graph"), f"posterior {cfg.posterior!r} (--posterior)"),
        ("rank", cfg.rank is not None, f"rank {cfg.rank!r} (--rank)"),
        ("landmarks", cfg.landmarks != "uniform", f"landmarks {cfg.landmarks!r} (--landmarks)"),
        ("weighting", isinstance(cfg.weighting, dict), "class weights"),
        ("auto_tune", bool(cfg.auto_tune) and any(dict(cfg.auto_tune).values()), "auto_tune"),
    ) if bad]
    if given:
        raise ValueError(f"{given[0][1]} does not apply to model {cfg.model!r}; {fix}")
    if cfg.model != "lgc" and cfg.alpha != 0.99:
        raise ValueError("alpha applies to model 'lgc' only; drop it, or choose model 'lgc'.")
    if cfg.model == "lgc" and not (isinstance(cfg.alpha, numbers.Real) and not isinstance(cfg.alpha, bool)
                                   and 0 < float(cfg.alpha) < 1):
        raise ValueError(f"alpha must be a number in (0, 1) for LGC (seed 000 uses 0.01 to 0.99); got {cfg.alpha!r}.")
    check_graph_strategy(cfg.model, cfg.strategy if cfg.strategy != "auto" else "auto", None)


def check_graph_strategy(model: str, strategy: str, n_samples: int | None) -> str:
    """The strategy a session's model can run: one of :func:`core.strategies.offered` for the
    capabilities of its learner (:func:`learner_capabilities`): "arls" is Zhu et al.'s exact rule
    (harmonic, at most :data:`ZHU_SESSION_MAX` points; LGC and Poisson have no expected-risk
    rule); "vopt" and "sigmaopt" are the graph models'; "auto" runs on every model (expected
    risk, or VOpt where there is none, for the first 10 labels, then margin).

    Raises
    ------
    ValueError
        A strategy the model's learner cannot score; the message names those that run.
    """
    _choice("strategy", strategy, STRATEGIES)
    caps = learner_capabilities(model, n_samples)
    if strategy in offered(caps):
        return strategy
    runs = ", ".join(offered(caps))
    if REQUIRES.get(strategy) == GRAPH_VARIANCE and model != "rls":
        raise ValueError(f"VOpt and Sigma-opt read the {VARIANCE_RANK} smallest Laplacian eigenpairs of the graph and "
                         f"are limited to {GraphOutputs.variance_max_points:,} points; this pool has {int(n_samples):,}. Choose "
                         f"one of {runs}.")
    if REQUIRES.get(strategy) == GRAPH_VARIANCE:
        raise ValueError(f"The strategy {strategy!r} is a graph model's variance criterion (VOpt / Sigma-opt on "
                         f"the kNN graph); model {model!r} runs {runs}. Choose one of these, or a graph model "
                         "(harmonic, lgc, poisson) for it.")
    if model == "harmonic":
        raise ValueError(f"Zhu et al.'s exact expected risk keeps a dense u x u inverse (O(u^3) once, O(u^2) per "
                         f"label) and is limited to {ZHU_SESSION_MAX:,} points in a session; this pool has "
                         f"{int(n_samples):,}. Choose one of {runs}, "
                         "or model 'rls' with posterior 'spectral' (expected risk on a graph kernel).")
    why = {"lgc": "LGC has no expected-risk rule",
           "poisson": "Poisson learning has no expected-risk rule (its outputs are not probabilities)"}.get(
        model, f"the {model} model has no expected-risk rule")
    raise ValueError(f"{why}; choose one of {runs} (auto: VOpt for the first 10 labels, then margin), or model "
                     "'harmonic' for Zhu et al.'s expected risk.")


def auto_note(model: str, n_samples: int) -> str:
    """What "auto" runs on a graph model without an expected-risk rule, and why ("" where it is
    Zhu et al.'s rule, then margin)."""
    caps = learner_capabilities(model, n_samples)
    if EXPECTED_RISK in caps:
        return ""
    why = {"lgc": "LGC has no expected-risk rule",
           "poisson": "Poisson learning has no expected-risk rule (its outputs are not probabilities)"}.get(
        model, f"Zhu et al.'s exact expected risk is limited to {ZHU_SESSION_MAX:,} points "
               "(a dense inverse: seconds per label beyond)")
    if cold_strategy(caps) == "vopt":
        return f"VOpt for the first 10 labels, then margin: {why}"
    return (f"margin: {why}, and VOpt is limited to {GraphOutputs.variance_max_points:,} points (its Laplacian eigenpairs)")


def resolve_graph(cfg, n_samples: int) -> dict:
    """Check and resolve a graph model's settings in place (the counterpart of
    :func:`resolve_posterior`): knn below the pool size, the strategy (what "auto" runs where
    Zhu's rule does not, said in the returned notes); the RLS settings stored as None / "graph"
    / "none" (they play no part). The caller checks the memory
    (:func:`labeler.session.costs.check_memory` with ``posterior="graph"``).

    Raises
    ------
    ValueError
        knn out of range, or "arls" where it does not run.
    """
    n = int(n_samples)
    cfg.knn = _count("knn", cfg.knn, 1)
    if not cfg.knn < n:
        raise ValueError(f"knn must be below the pool size {n:,}; got {cfg.knn}.")
    notes = {}
    check_graph_strategy(cfg.model, cfg.strategy, n)
    if cfg.strategy == "auto" and auto_note(cfg.model, n):
        notes["strategy"] = auto_note(cfg.model, n)
    cfg.posterior, cfg.rank, cfg.kernel = "graph", None, "graph"
    cfg.width = cfg.lam = None
    cfg.weighting = "none"
    cfg.auto_tune = {"width": False, "lam": False}
    cfg.alpha = float(cfg.alpha)
    cfg.class_mass = bool(cfg.class_mass)
    return notes


def graph_bytes(n_samples: int, n_features: int, n_classes: int = 2, knn: int = 10,
                zhu: bool = False) -> int:
    """Estimated peak memory of a graph-model session, in bytes: the kNN search and the
    symmetrised graph (about ``200 n k``), per point the features, ``F``, its CG work vectors
    and the outputs (``8 (d + 12 T + 32)``), the search's renumbered copy of the features
    (``12 d`` per point, float64 and float32, where the hnsw search renumbers them:
    :data:`core.kernels.knn_search.HNSW_ORDER_ABOVE`), plus Zhu's dense inverse and its Cholesky
    factor (``3 x 8 n^2``) when the exact expected-risk rule runs, plus a fixed 32 MiB."""
    from core.kernels import knn_search

    n, T = int(n_samples), max(2, int(n_classes))
    need = 200 * n * int(knn) + n * 8 * (int(n_features) + 12 * T + 32) + _FIXED_BYTES
    order_above = knn_search.HNSW_ORDER_ABOVE
    if knn_search.default_knn_method(n) == "hnsw" and order_above is not None and n >= order_above:
        need += 12 * n * int(n_features)
    return need + (24 * n * n if zhu else 0)


def build_graph(spec: GraphSpec, X: np.ndarray, parts: dict | None = None, progress=None):
    """The kNN graph of a graph model and the parts that rebuild it.

    The neighbours ``(n, k)`` and their distances are kept (``8 n k`` bytes each: 16 MB at 10^5
    points, k = 10); the symmetrised weights are rebuilt from them in a fraction of a second
    (:func:`core.kernels.neighbour_graph`), so a reopened session does not search again.

    Returns
    -------
    W : scipy.sparse.csr_matrix of shape (n, n)
    parts : dict
        ``{"neighbours": ind, "distances": dist}``: what to store.
    """
    from core.kernels import knn_neighbours, neighbour_graph
    from core.kernels.knn_search import SearchReport

    n = X.shape[0]
    parts = dict(parts or {})
    ind, dist = parts.get("neighbours"), parts.get("distances")
    k = int(spec.knn)
    if ind is None or dist is None or ind.shape != (n, k) or dist.shape != (n, k):
        say = progress or (lambda message, fraction: None)
        what = f"kNN graph of {n:,} points (k = {k})"
        say(what, 0.0)
        report = SearchReport()
        ind, dist = knn_neighbours(X, k, seed=int(spec.seed), progress=lambda f: say(what, 0.99 * f),
                                   report=report)
        say(graph_ready_words(report, k), 1.0)
    return neighbour_graph(ind, dist), {"neighbours": np.asarray(ind, dtype=np.int64),
                                        "distances": np.asarray(dist, dtype=np.float64)}


def graph_ready_words(report, k: int) -> str:
    """The progress line that ends a kNN search: with the approximate searches' recall@k
    estimated on their sample of points (:class:`core.kernels.knn_search.SearchReport`)."""
    if report.recall is None:
        return "kNN graph ready"
    error = f" ± {report.error:.3f}" if getattr(report, "error", None) else ""
    return (f"kNN graph ready: recall@{k} {report.recall:.3f}{error} (estimated on {report.sample} points against "
            f"exact neighbours{'; lists widened to ' + ', '.join(map(str, report.widths)) if report.widths else ''})")


def model_description(spec: ModelSpec, n_samples: int) -> str:
    """The model that answers, in words (the sidebar's learner panel)."""
    if not isinstance(spec, GraphSpec):
        post = {"dense": "exact dense posterior", "nystrom": f"Nystrom posterior of rank {spec.rank}",
                "spectral": f"spectral graph kernel of rank {spec.rank} on a {spec.knn}-NN graph"}
        return (f"Active RLS (kernel {spec.kernel}, {post.get(spec.posterior, spec.posterior)}): exact "
                "incremental updates of the kernel model.")
    what = {"harmonic": "harmonic function (Laplace learning, seed 001)",
            "poisson": "Poisson learning (Calder, Cook, Thorpe and Slepcev 2020)"}.get(
        spec.model, f"local and global consistency (LGC, seed 000, alpha {spec.alpha:g})")
    text = (f"{what[0].upper()}{what[1:]} on the {spec.knn}-NN graph of the pool, refitted exactly on every "
            "change of the labels (one sparse solve per label)")
    if spec.class_mass:
        text += ", with class mass normalisation"
    note = auto_note(spec.model, n_samples)
    auto = note.split(":")[0] if note else "Zhu et al.'s exact expected risk for the first 10 labels, then margin"
    rule = {"auto": auto,
            "arls": "Zhu et al.'s exact expected risk", "margin": "margin", "random": "random",
            "vopt": "VOpt (the largest drop of the graph's posterior variance)",
            "sigmaopt": "Sigma-opt (the largest drop of the summed posterior covariance)"}
    return text + f". Queries: {rule.get(spec.strategy, spec.strategy)}."
