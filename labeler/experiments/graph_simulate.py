"""Oracle simulation with the graph models of :mod:`core.graph` (``labeler simulate --model``).

Issue 10 §2. The same loop and curve columns as :func:`labeler.experiments.simulate.simulate`
(:data:`~labeler.experiments.oracle.CURVE_COLUMNS`), on a kNN graph of the pool
(:func:`core.kernels.knn_graph`):

=====================  ====================================================================
``--model rls``        ARLS on a spectral graph kernel: the factor of the ``rank`` smallest
  ``--transform T``    eigenpairs of the normalised Laplacian with the transform T (seed 004:
                       diffusion, gaussian_field, max_alignment, order, improved_order;
                       docs/algorithms.md §9). Every strategy works (the learner is :class:`ActiveRLS`).
                       The aligned transforms are fitted once, on the initial labels.
``--model harmonic``   harmonic function (CG, Jacobi; seed 001), refitted after every label.
                       ``arls`` is Zhu et al.'s exact expected risk (seed 003 §2.8.1; dense,
                       pools up to :data:`ZHU_MAX_POINTS`), ``margin`` the smallest gap between
                       the two largest class values, ``random``.
``--model lgc``        local and global consistency (seed 000, row-stochastic, ``alpha``);
                       ``margin`` or ``random`` (LGC has no expected-risk rule).
``--model poisson``    Poisson learning (Calder et al. 2020; :class:`core.graph.poisson_learner.
                       PoissonLearner`), refitted after every label; no expected-risk rule:
                       ``auto`` is :data:`POISSON_AUTO` (docs/benchmarks.md, "Poisson
                       learning in the app": the measurement).
=====================  ====================================================================

Every graph model also runs the variance strategies ``vopt`` and ``sigmaopt``
(:mod:`core.graph.variance`; the capability :data:`~core.learner.base.GRAPH_VARIANCE`). The
strategies a model runs come from its learner's capabilities (:func:`core.strategies.offered`).

Graph models are transductive: accuracy is measured on the unlabelled rest of the pool (a
validation file is refused). ``width`` is NaN; ``lam`` is the learner's (NaN for harmonic and
LGC); ``estimated_risk`` is the learner's bias-corrected risk (rls) or ``sum_i (1 - max_t F_it)``
over the unlabelled points with rows of ``F`` normalised to sum 1 (harmonic, LGC).
"""

from __future__ import annotations

import numbers
import time
from collections.abc import Callable

import numpy as np
import pandas as pd

from core.graph import (ALIGNMENT_TRANSFORMS, SPECTRAL_TRANSFORMS, aligned_spectrum, parametric_spectrum,
                        spectrum_factor)
from core.graph.active import ZHU_MAX_POINTS, GraphLearner  # the one limit of Zhu's exact rule
from core.graph.poisson_learner import PoissonLearner
from core.kernels import knn_graph, laplacian_eigenpairs
from core.learner import ActiveRLS
from core.learner.base import LAM
from core.strategies import REQUIRES, STRATEGIES, offered
from core.rls.tuning import DEFAULT_LAM
from core.validation import check_count, check_features, check_positive
from labeler.experiments.oracle import curve_frame, oracle_loop
from labeler.session.model import MODEL_OPTIONS
from labeler.errors import SettingsError

__all__ = ["GRAPH_MODELS", "ZHU_MAX_POINTS", "simulate_graph", "graph_factor", "graph_factory"]

GRAPH_MODELS = ("rls", "harmonic", "lgc", "poisson")
# "auto" (the default strategy, core/criteria/auto.py): expected risk for the first
# MAX_RISK_LABELS labels, then margin; for harmonic the expected risk is Zhu et al.'s rule.
# A learner without an expected-risk rule runs VOpt in its place while cold
# (core.strategies.cold_strategy: by its capabilities, as a session does).


def graph_factor(W, transform: str, rank: int, labeled=None, labels=None, *, eps: float = 1e-2, s: float = 1.0,
                 seed: int = 0) -> np.ndarray:
    """Spectral-kernel factor ``Phi`` (n, rank) of ``W`` for ``transform`` (trace n).

    The aligned transforms need ``labeled`` / ``labels`` with at least two classes.
    """
    if transform not in SPECTRAL_TRANSFORMS:
        raise ValueError(f"transform must be one of {SPECTRAL_TRANSFORMS}; got {transform!r}.")
    lam, V = laplacian_eigenpairs(W, rank, seed=seed)
    if transform in ALIGNMENT_TRANSFORMS:
        if labeled is None or len(set(np.asarray(labels).tolist())) < 2:
            raise SettingsError(f"the {transform} transform is fitted to labels (kernel-target alignment); "
                             "give initial labels of at least two classes (--initial N).")
        mu, _ = aligned_spectrum(lam, V, labeled, labels, transform)
    else:
        mu = parametric_spectrum(lam, transform, eps=eps, s=s)
    return spectrum_factor(V, mu)


def graph_factory(W, model: str, classes, *, seed: int = 0, transform: str | None = None, rank: int = 100,
                  lam: float = DEFAULT_LAM, alpha: float = 0.99):
    """The learner factory of a graph simulation: ``factory(initial_indices, initial_labels)``
    returns a :class:`core.learner.base.Learner` on the graph ``W`` holding the initial labels.

    * ``"rls"``: :class:`ActiveRLS` on the spectral factor of ``transform`` (an aligned
      transform is fitted to the initial labels);
    * ``"harmonic"``, ``"lgc"``: :class:`core.graph.active.GraphLearner` (CG refits; "arls" is
      Zhu et al.'s exact rule, :class:`core.criteria.harmonic_risk.HarmonicExpectedRisk`);
    * ``"poisson"``: :class:`core.graph.poisson_learner.PoissonLearner` (CG refits).
    """
    def factory(init_idx, init_labels):
        labels = [v.item() if hasattr(v, "item") else v for v in init_labels]
        if model == "rls":
            given = len(init_idx) > 0
            Phi = graph_factor(W, transform, rank, init_idx if given else None, init_labels if given else None,
                               seed=seed)
            learner = ActiveRLS.from_factor(Phi, classes=classes, lam=lam, random_state=seed)
        elif model == "poisson":
            learner = PoissonLearner(W, classes, random_state=seed)
        else:
            learner = GraphLearner(W, classes, model, alpha=alpha, random_state=seed, zhu_max_points=ZHU_MAX_POINTS)
        if len(init_idx):
            learner.add_many([int(i) for i in init_idx], labels)
        return learner

    return factory


def simulate_graph(dataset, model: str = "harmonic", strategy: str = "margin", budget: int = 100, seed: int = 0,
                   *, transform: str | None = None, n_neighbors: int = 10, rank: int = 100, lam=DEFAULT_LAM,
                   alpha: float = 0.99, initial: int = 0, X=None,
                   progress: Callable[[int, int], None] | None = None, final: dict | None = None) -> pd.DataFrame:
    """Simulate active labelling with a graph model (see the module docstring).

    Parameters
    ----------
    dataset : labeler.data.Dataset
        Pool with true labels.
    model : {"rls", "harmonic", "lgc", "poisson"}
    strategy : str
        "auto" or a strategy the model's learner offers (:func:`core.strategies.offered`).
    budget, seed, initial
        As in :func:`labeler.experiments.simulate.simulate`.
    transform : str, optional
        Spectral transform for ``model="rls"`` (required there; refused otherwise).
    n_neighbors : int
        k of the kNN graph (seed 004: 10).
    rank : int
        Laplacian eigenpairs of the spectral factor (seed 004: 200).
    lam : float
        ARLS regularisation (``model="rls"``).
    alpha : float
        LGC propagation weight.
    X : ndarray of shape (n, d), optional
        Features for the graph instead of ``dataset.X``.
    progress : callable(step, budget), optional
    final : dict, optional
        Filled after the last label with the final ``learner`` (a
        :class:`core.graph.active.GraphLearner` for harmonic / LGC) and ``decision_values``
        None, for :mod:`labeler.experiments.predictions`.

    Returns
    -------
    pandas.DataFrame
        Columns ``CURVE_COLUMNS``; ``attrs`` holds ``model``, ``transform``, ``strategy``,
        ``seed``, ``lam``, ``n_neighbors``, ``rank``, ``alpha``, ``initial``,
        ``initial_indices``, ``evaluation`` and ``graph_seconds`` (graph + factor build).

    Raises
    ------
    ValueError
        Unknown model / strategy / transform, a transform with a model other than rls, bad
        counts, or strategy "arls" on a pool too large for the exact Zhu rule (harmonic;
        "auto" there runs VOpt while cold, as a session does).
    """
    if model not in GRAPH_MODELS:
        raise ValueError(f"model must be one of {GRAPH_MODELS}; got {model!r}.")
    if strategy not in STRATEGIES:
        raise SettingsError(f"unknown strategy {strategy!r}; choose one of {', '.join(STRATEGIES)}.")
    if model == "rls" and transform is None:
        raise SettingsError("model 'rls' on a graph needs a spectral transform: pass transform= one of "
                         f"{', '.join(SPECTRAL_TRANSFORMS)} (without one, use the kernel simulation).")
    if model != "rls" and transform is not None:
        raise SettingsError(f"a spectral transform applies to model 'rls' only; model {model!r} uses the graph "
                         "itself. Drop the transform or use model='rls'.")
    if dataset.y is None:
        raise SettingsError(f"{dataset.name} has no true labels, so there is no oracle to simulate.")
    budget = check_count("budget", budget, 1)
    initial = check_count("initial", initial, 0)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ValueError(f"seed must be an integer; got {seed!r}.")
    X = check_features(dataset.X if X is None else X)
    y = np.asarray(dataset.y)
    n = X.shape[0]
    if isinstance(n_neighbors, numbers.Integral) and not 1 <= n_neighbors < n:
        raise SettingsError(f"a {n_neighbors}-NN graph needs more than {n_neighbors} points and the pool has {n}; "
                            f"pass --graph-k between 1 and {n - 1}.")
    if initial + budget > n - 1:
        raise SettingsError(f"initial + budget = {initial + budget} leaves no unlabelled point of the {n}; "
                         f"pass a budget <= {n - 1 - initial}.")
    # "auto" above the limit runs VOpt while cold, as a session does (the learner then has no
    # expected-risk rule: core.strategies.cold_strategy); only "arls" asks for Zhu's rule itself
    if model == "harmonic" and strategy == "arls" and n > ZHU_MAX_POINTS:
        raise SettingsError(f"Zhu et al.'s exact expected risk keeps a dense {n} x {n} inverse; it is limited to "
                         f"{ZHU_MAX_POINTS:,} points. Use strategy='auto' (VOpt, then margin, as a session "
                         "does there), model='rls', transform='gaussian_field' (the same rule on a low-rank "
                         "factor, docs/algorithms.md §9) or strategy='margin'.")
    if model == "rls":
        lam = check_positive("lam", lam)
        rank = check_count("rank", rank, 1)
        if rank >= n:
            raise SettingsError(f"rank = {rank} eigenpairs needs more than {n} points; pass a rank of at most "
                             f"{n - 1} (--graph-rank).")
    classes = list(dataset.classes)
    rng = np.random.default_rng(seed)
    init_idx = rng.choice(n, size=initial, replace=False) if initial else np.zeros(0, dtype=np.int64)

    if model == "rls" and transform in ALIGNMENT_TRANSFORMS and len(set(y[init_idx].tolist())) < 2:
        raise SettingsError(f"the {transform} transform is fitted to labels (kernel-target alignment); give "
                         "initial labels of at least two classes (--initial N, N >= 2; a larger N if the draw "
                         "holds one class).")
    t0 = time.perf_counter()
    W = knn_graph(X, n_neighbors, seed=seed)
    factor = graph_factory(W, model, classes, seed=seed, transform=transform, rank=rank, lam=lam, alpha=alpha)
    learner = factor(init_idx, y[init_idx])
    graph_seconds = time.perf_counter() - t0
    caps = learner.capabilities
    # "auto" without an expected-risk rule: the session's choice by capabilities (LGC: margin)
    strategy_run = strategy  # "auto" runs on every learner (core.strategies.cold_strategy)
    need = REQUIRES.get(strategy_run)
    if need is not None and need not in caps:
        runs = offered(caps)
        raise SettingsError(f"strategy {strategy!r} is not available with model {model!r} (it needs "
                            f"{need.replace('_', ' ')}); choose one of {', '.join(runs)}.")
    rows = oracle_loop(learner, y, strategy_run, budget, rng,
                       settings=lambda: (float("nan"), float(learner.lam) if LAM in learner.capabilities
                                         else float("nan")),
                       loo_ready=lambda lr: LAM in lr.capabilities and len(set(lr.labels.values())) >= 2,
                       progress=progress)
    if final is not None:  # the final model for labeler.experiments.predictions
        final.update(learner=learner, decision_values=None)
    frame = curve_frame(rows, y)
    frame.attrs.update(model=model, transform=transform, strategy=strategy, seed=int(seed),
                       lam=float(lam) if model == "rls" else float("nan"), kernel="graph", width=None,
                       n_neighbors=int(n_neighbors), rank=int(rank) if model == "rls" else None,
                       alpha=float(alpha) if "alpha" in MODEL_OPTIONS.get(model, ()) else None, initial=initial,
                       initial_indices=[int(v) for v in init_idx], evaluation="unlabelled pool",
                       graph_seconds=graph_seconds)
    return frame
