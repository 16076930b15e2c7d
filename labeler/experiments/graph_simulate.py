"""Oracle simulation with the graph models of :mod:`core.graph` (``labeler simulate --model``).

Issue 10 §2. The same loop and curve columns as :func:`labeler.experiments.simulate.simulate`
(:data:`~labeler.experiments.simulate.CURVE_COLUMNS`), on a kNN graph of the pool
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
=====================  ====================================================================

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

from core.criteria.auto import decide
from core.criteria.risk import predicted_class_indices
from core.graph import (ALIGNMENT_TRANSFORMS, SPECTRAL_TRANSFORMS, HarmonicFunction, LocalGlobalConsistency,
                        ZhuActiveLearning, aligned_spectrum, harmonic_risk, parametric_spectrum, spectrum_factor)
from core.graph.active import ZHU_MAX_POINTS  # the one limit of Zhu's exact rule
from core.kernels import knn_graph, laplacian_eigenpairs
from core.learner import ActiveRLS
from core.strategies import query
from core.validation import check_count, check_features, check_positive
from labeler.experiments.simulate import CURVE_COLUMNS, DEFAULT_LAM, _loo_correct, balanced_accuracy
from labeler.session.stopping import StoppingMonitor

__all__ = ["GRAPH_MODELS", "GRAPH_STRATEGIES", "ZHU_MAX_POINTS", "simulate_graph", "graph_factor"]

GRAPH_MODELS = ("rls", "harmonic", "lgc")
# "auto" (the default strategy, core/criteria/auto.py): expected risk for the first
# MAX_RISK_LABELS labels, then margin; for harmonic the expected risk is Zhu et al.'s rule,
# and LGC, which has no expected-risk rule, takes margin throughout.
GRAPH_STRATEGIES = {"rls": ("auto", "arls", "margin", "random"), "harmonic": ("auto", "arls", "margin", "random"),
                    "lgc": ("auto", "margin", "random")}


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
            raise ValueError(f"the {transform} transform is fitted to labels (kernel-target alignment); "
                             "give initial labels of at least two classes (--initial N).")
        mu, _ = aligned_spectrum(lam, V, labeled, labels, transform)
    else:
        mu = parametric_spectrum(lam, transform, eps=eps, s=s)
    return spectrum_factor(V, mu)


def _scores_margin(F: np.ndarray) -> np.ndarray:
    """Gap between the two largest values of each row (smaller = less certain)."""
    top2 = np.sort(F, axis=1)[:, -2:]
    return top2[:, 1] - top2[:, 0]


def _normalised(F: np.ndarray) -> np.ndarray:
    s = F.sum(axis=1, keepdims=True)
    return np.where(s > 0, F / np.where(s > 0, s, 1.0), 1.0 / F.shape[1])


def simulate_graph(dataset, model: str = "harmonic", strategy: str = "margin", budget: int = 100, seed: int = 0,
                   *, transform: str | None = None, n_neighbors: int = 10, rank: int = 100, lam=DEFAULT_LAM,
                   alpha: float = 0.99, initial: int = 0, X=None,
                   progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """Simulate active labelling with a graph model (see the module docstring).

    Parameters
    ----------
    dataset : labeler.data.Dataset
        Pool with true labels.
    model : {"rls", "harmonic", "lgc"}
    strategy : str
        One of :data:`GRAPH_STRATEGIES` ``[model]``.
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
        counts, or a pool too large for the exact Zhu rule.
    """
    if model not in GRAPH_MODELS:
        raise ValueError(f"model must be one of {GRAPH_MODELS}; got {model!r}.")
    if strategy not in GRAPH_STRATEGIES[model]:
        raise ValueError(f"strategy {strategy!r} is not available with model {model!r}; choose one of "
                         f"{', '.join(GRAPH_STRATEGIES[model])}.")
    if model == "rls" and transform is None:
        raise ValueError("model 'rls' on a graph needs a spectral transform: pass transform= one of "
                         f"{', '.join(SPECTRAL_TRANSFORMS)} (without one, use the kernel simulation).")
    if model != "rls" and transform is not None:
        raise ValueError(f"a spectral transform applies to model 'rls' only; model {model!r} uses the graph "
                         "itself. Drop the transform or use model='rls'.")
    if dataset.y is None:
        raise ValueError(f"{dataset.name} has no true labels, so there is no oracle to simulate.")
    budget = check_count("budget", budget, 1)
    initial = check_count("initial", initial, 0)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ValueError(f"seed must be an integer; got {seed!r}.")
    X = check_features(dataset.X if X is None else X)
    y = np.asarray(dataset.y)
    n = X.shape[0]
    if initial + budget > n - 1:
        raise ValueError(f"initial + budget = {initial + budget} leaves no unlabelled point of the {n}; "
                         f"pass a budget <= {n - 1 - initial}.")
    if model == "harmonic" and strategy in ("arls", "auto") and n > ZHU_MAX_POINTS:
        raise ValueError(f"Zhu et al.'s exact expected risk keeps a dense {n} x {n} inverse; it is limited to "
                         f"{ZHU_MAX_POINTS:,} points. Use model='rls', transform='gaussian_field' (the same "
                         "rule on a low-rank factor, docs/algorithms.md §9) or strategy='margin'.")
    if model == "rls":
        lam = check_positive("lam", lam)
        rank = check_count("rank", rank, 1)
        if rank >= n:
            raise ValueError(f"rank = {rank} eigenpairs needs more than {n} points; pass a rank of at most "
                             f"{n - 1} (--graph-rank).")
    classes = list(dataset.classes)
    rng = np.random.default_rng(seed)
    init_idx = rng.choice(n, size=initial, replace=False) if initial else np.zeros(0, dtype=np.int64)

    if model == "rls" and transform in ALIGNMENT_TRANSFORMS and len(set(y[init_idx].tolist())) < 2:
        raise ValueError(f"the {transform} transform is fitted to labels (kernel-target alignment); give "
                         "initial labels of at least two classes (--initial N, N >= 2; a larger N if the draw "
                         "holds one class).")
    t0 = time.perf_counter()
    W = knn_graph(X, n_neighbors, seed=seed)
    learner = None
    if model == "rls":
        Phi = graph_factor(W, transform, rank, init_idx if initial else None, y[init_idx] if initial else None,
                           seed=seed)
        learner = ActiveRLS.from_factor(Phi, classes=classes, lam=lam, random_state=seed)
        if initial:
            learner.add_many(init_idx.tolist(), [v.item() if hasattr(v, "item") else v for v in y[init_idx]])
    graph_seconds = time.perf_counter() - t0

    labeled = np.zeros(n, dtype=bool)
    labeled[init_idx] = True
    order = [int(i) for i in init_idx]
    rows = {name: [] for name in CURVE_COLUMNS}
    monitor = StoppingMonitor(n)
    zhu = None
    F = None

    def fit_graph_model():
        L = np.asarray(order, dtype=np.int64)
        if L.size == 0:
            return np.full((n, len(classes)), 1.0 / len(classes))
        if model == "harmonic":
            return HarmonicFunction().fit(W, L, y[L], classes=classes).decision_values_
        return LocalGlobalConsistency(alpha).fit(W, L, y[L], classes=classes).decision_values_

    if learner is None and order:
        F = fit_graph_model()
    for step in range(1, budget + 1):
        t1 = time.perf_counter()
        if learner is not None:
            i = int(query(learner, strategy, rng))
            learner.add(i, y[i].item() if hasattr(y[i], "item") else y[i])
        else:
            unl = np.flatnonzero(~labeled)
            rule = strategy
            if strategy == "auto":
                counts = [int(np.sum(y[np.asarray(order, dtype=np.int64)] == c)) for c in classes] if order \
                    else [0] * len(classes)
                rule = decide(counts).strategy if model == "harmonic" else "margin"
            if rule == "random" or not order:
                i = int(rng.choice(unl))
            elif rule == "arls":
                if zhu is None:
                    L = np.asarray(order, dtype=np.int64)
                    zhu = ZhuActiveLearning(eps=1e-8).fit(W, L, y[L], classes=classes)
                E = zhu.expected_risks()
                i = int(zhu.unlabeled_[int(np.argmin(E))])
            else:
                s = _scores_margin(F[unl])
                i = int(unl[int(np.argmin(s))])
            order.append(i)
            if zhu is not None:
                zhu.add(i, y[i].item() if hasattr(y[i], "item") else y[i])
                F = zhu.decision_values_
            else:
                F = fit_graph_model()
        seconds = time.perf_counter() - t1
        labeled[i] = True
        rest = ~labeled
        if learner is not None:
            codes = predicted_class_indices(learner.decision_values).astype(np.int32)
            risk = learner.estimated_risk()
            lam_now = float(learner.lam)
        else:
            codes = F.argmax(axis=1).astype(np.int32)
            risk = harmonic_risk(_normalised(F[rest])) if rest.any() else 0.0
            lam_now = float("nan")
        pred = np.asarray(classes, dtype=object)[codes]
        truth = y[rest]
        pred_rest = pred[rest].astype(y.dtype) if y.dtype != object else pred[rest]
        acc = float(np.mean(pred_rest == truth)) if truth.size else float("nan")
        rows["step"].append(step)
        rows["index"].append(i)
        rows["label"].append(y[i])
        rows["n_labeled"].append(int(labeled.sum()))
        rows["accuracy"].append(acc)
        rows["balanced_accuracy"].append(balanced_accuracy(truth, pred_rest))
        rows["estimated_risk"].append(float(risk))
        rows["step_seconds"].append(seconds)
        rows["width"].append(float("nan"))
        rows["lam"].append(lam_now)
        monitor.record(int(labeled.sum()), codes)
        loo_ok = None
        if learner is not None and len(set(learner.labels.values())) >= 2:
            loo_ok = _loo_correct(learner)
        rows["stop"].append(monitor.signal(int(labeled.sum()), codes, loo_ok).verdict)
        if progress is not None:
            progress(step, budget)
    frame = pd.DataFrame({name: rows[name] for name in CURVE_COLUMNS})
    frame["label"] = np.asarray(rows["label"], dtype=y.dtype)
    frame.attrs.update(model=model, transform=transform, strategy=strategy, seed=int(seed),
                       lam=float(lam) if model == "rls" else float("nan"), kernel="graph", width=None,
                       n_neighbors=int(n_neighbors), rank=int(rank) if model == "rls" else None,
                       alpha=float(alpha) if model == "lgc" else None, initial=initial,
                       initial_indices=[int(v) for v in init_idx], evaluation="unlabelled pool",
                       graph_seconds=graph_seconds)
    return frame
