"""``labeler simulate --model auto``: the model that answers is chosen by exact LOO as labels arrive.

Issue 20 §2. The candidates are the app's default kernel RLS (the settings of
:func:`labeler.experiments.simulate.app_settings`, its width and lam re-tuned by LOO as in
``labeler simulate``) and the graph models on the 10-NN graph of the same features: harmonic
function, LGC and Poisson learning. The model that answers first is
:data:`core.selection.selector.FIRST_MODEL` ("prior": the harmonic function where the pool's
kNN graph splits into its classes, :func:`core.selection.prior.first_model`, else RLS); after
each label (on the schedule of
:func:`core.selection.evaluation_due`) every candidate's exact LOO on the labels is compared,
weighted by the pool mass each label stands for, and a challenger takes over only when it beats
the model in use on the paired sign test of :class:`core.selection.SwitchRule`
(docs/algorithms.md §14). The model in use answers the queries too (the strategy "auto" is
margin from 10 labels on, the earliest a switch can happen), and the curve's extra column
``model`` names it after each label.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Callable

import numpy as np
import pandas as pd

from core import coldstart as _coldstart
from core.graph.active import GraphLearner
from core.graph.poisson_learner import PoissonLearner
from core.kernels import knn_graph
from core.selection import ModelSelector, SwitchRule, evaluation_due, strategy_in_use
from core.validation import check_count
from labeler.errors import SettingsError
from labeler.experiments.oracle import curve_frame, oracle_loop
from labeler.session import model as _model
from labeler.session.rls_candidate import RlsRetune, tune_flags

__all__ = ["AUTO_CANDIDATES", "CANDIDATE_MODELS", "simulate_auto_model", "rls_candidate", "graph_rls_candidate",
           "graph_candidates", "ChosenModel"]

#: The candidates of ``--model auto`` in order of preference on equal errors (the first model: core.selection.selector.FIRST_MODEL):
#: the session's (:data:`labeler.session.model_selection.AUTO_CANDIDATES`).
from labeler.session.model_selection import AUTO_CANDIDATES  # noqa: E402
#: Every candidate this simulation builds: the default's and "graph-rls", kernel RLS on the spectral
#: graph kernel of the kNN graph (:func:`graph_rls_candidate`; docs/defaults.md "Graph-kernel RLS").
CANDIDATE_MODELS = ("rls", "harmonic", "lgc", "poisson", "graph-rls")


def rls_candidate(X, classes, chosen: dict, seed: int):
    """The app's default kernel RLS and its re-tune hook ``retune(learner, n_before)``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The kernel's features (``chosen["X"]``).
    classes : list
    chosen : dict
        :func:`labeler.experiments.simulate.app_settings`'s output.
    seed : int

    Returns
    -------
    learner : core.learner.ActiveRLS
    retune : callable(learner, n_before)
        Re-tunes width and lam by LOO when :func:`core.rls.tuning.retune_due` says so (one
        ``set_params``), the rule of ``labeler simulate``.
    spec : callable() -> RlsSpec
        The settings in use (width and lam after the re-tunes).
    """
    kernel = chosen["kernel"]
    spec = _model.RlsSpec(kernel=kernel.kind, width=float(kernel.width) if kernel.kind == "rbf" else None,
                          lam=float(chosen["lam"]), seed=int(seed), posterior=chosen["posterior"],
                          rank=chosen["rank"], landmarks=chosen["landmarks"], knn=int(chosen["knn"]),
                          weighting=chosen["weighting"] if isinstance(chosen["weighting"], str) else "none")
    learner = _model.build_learner(spec, X, classes, 0, parts={} if spec.has_parts else None)
    if not isinstance(chosen["weighting"], str):
        learner.set_params(weighting=chosen["weighting"])
    return (learner,) + _retuner(spec, X, tune_flags(chosen["auto_tune"], spec))


def _retuner(spec, X, tune: dict):
    """The re-tune hook ``retune(learner, n_before)`` of a kernel-RLS candidate and its spec now:
    :class:`labeler.session.rls_candidate.RlsRetune` (width and lam by LOO on the schedule of
    :func:`core.rls.tuning.retune_due`, one ``set_params``), the hook an app session's RLS
    candidate runs too."""
    hook = RlsRetune(spec, X, tune)
    return hook, lambda: hook.spec


def graph_rls_candidate(X, W, classes, chosen: dict, seed: int, n_neighbors: int = 10, rank: int | None = None):
    """Graph-kernel RLS: kernel RLS on the spectral graph kernel of ``W`` (the session's
    ``--posterior spectral``: the Gaussian field ``1 / (lambda_i + 0.01)`` on the ``rank`` smallest
    eigenpairs of the normalised Laplacian, docs/algorithms.md §9, §18), with the app's class
    weights and lam re-tuned by LOO on its factor (docs/algorithms.md §17) on the schedule of RLS.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The kernel's features (the mass weights' and the LOO problem's pool).
    W : sparse matrix of shape (n, n)
        The kNN graph the graph models share (its eigenpairs are computed once, here).
    classes : list
    chosen : dict
        :func:`labeler.experiments.simulate.app_settings`'s output (lam, weighting, auto_tune).
    seed : int
    n_neighbors : int
        k of ``W`` (the spec's ``knn``).
    rank : int, optional
        Eigenpairs; default :func:`labeler.session.model.default_rank` of "spectral".

    Returns
    -------
    learner : core.learner.ActiveRLS
    retune : callable(learner, n_before)
    spec : callable() -> RlsSpec
    """
    from core.kernels.graph import spectral_factor

    n = X.shape[0]
    rank = _model.default_rank("spectral", n) if rank is None else int(rank)
    spec = _model.RlsSpec(kernel="linear", lam=float(chosen["lam"]), seed=int(seed), posterior="spectral", rank=rank,
                          knn=int(n_neighbors),
                          weighting=chosen["weighting"] if isinstance(chosen["weighting"], str) else "none")
    Phi, eigenvalues = spectral_factor(W, rank, seed=int(seed))
    learner = _model.build_learner(spec, X, classes, 0, parts={"factor": Phi, "eigenvalues": eigenvalues})
    if not isinstance(chosen["weighting"], str):
        learner.set_params(weighting=chosen["weighting"])
    tune = {"width": False, "lam": bool(dict(chosen["auto_tune"]).get("lam", False))}
    return (learner,) + _retuner(spec, X, tune)


def graph_candidates(W, classes, seed: int, names=("harmonic", "lgc", "poisson"), alpha: float = 0.99) -> dict:
    """The graph models on ``W`` as candidates ``{name: learner}`` (no labels yet)."""
    build = {"harmonic": lambda: GraphLearner(W, classes, "harmonic", random_state=seed),
             "lgc": lambda: GraphLearner(W, classes, "lgc", alpha=alpha, random_state=seed),
             "poisson": lambda: PoissonLearner(W, classes, random_state=seed)}
    unknown = [n for n in names if n not in build]
    if unknown:
        raise ValueError(f"unknown graph candidate(s) {unknown}; choose from {', '.join(build)}.")
    return {name: build[name]() for name in names}


class ChosenModel:
    """The learner in use of a :class:`core.selection.ModelSelector`, as one learner for
    :func:`labeler.experiments.oracle.oracle_loop`: reads go to the model in use, a label goes
    to it (the other candidates get it at their next evaluation)."""

    def __init__(self, selector: ModelSelector):
        self._selector = selector

    def __getattr__(self, name):
        return getattr(self._selector.learner, name)

    def add(self, i, label):
        self._selector.learner.add(i, label)
        return self


def _pool_components(X):
    """The pool's clusters (core.rls.width_scale), or None where the cluster rule does not apply."""
    from core.rls.width_scale import MAX_CLUSTER_POINTS, width_scale
    if X.shape[0] > MAX_CLUSTER_POINTS:
        return None
    try:
        return width_scale(X).components
    except ValueError:  # a median distance of 0: no clusters
        return None


def simulate_auto_model(dataset, strategy: str = "auto", budget: int = 100, seed: int = 0, *,
                        candidates=None, n_neighbors: int = 10, correction: str = "mass",
                        rule: SwitchRule | None = None, chosen: dict | None = None, cold_start: int | None = None,
                        progress: Callable[[int, int], None] | None = None) -> pd.DataFrame:
    """Simulate active labelling with the model chosen by exact LOO (module docstring).

    Parameters
    ----------
    dataset : labeler.data.Dataset
        Pool with true labels.
    strategy : {"auto", "margin", "random"}
        Asked of the model in use ("arls" would be refused by LGC and Poisson learning).
    budget, seed : int
    candidates : sequence of str, optional
        From :data:`CANDIDATE_MODELS`; must hold "rls" (the model that answers where the
        first-model rule picks no graph model). Default the session's
        :data:`labeler.session.model_selection.AUTO_CANDIDATES` (read at call time).
    n_neighbors : int
        k of the graph models' kNN graph.
    correction : {"mass", "none"}
        Label weights of the LOO error (:mod:`core.selection.loo`).
    rule : core.selection.SwitchRule, optional
    chosen : dict, optional
        :func:`labeler.experiments.simulate.app_settings` of the data set (computed if None).
    cold_start : int >= 0, optional
        With ``strategy="auto"``: labels picked by typicality / coverage first
        (:mod:`core.coldstart`); default :func:`core.coldstart.cold_start_labels` of the pool's
        class count (as ``labeler simulate --model rls``).
    progress : callable(step, budget), optional

    Returns
    -------
    pandas.DataFrame
        :data:`~labeler.experiments.oracle.CURVE_COLUMNS` (``width`` and ``lam``: RLS's while it
        answers, NaN while a graph model does) plus ``model`` (the model in use after each
        label); ``attrs``: ``strategy``, ``seed``, ``candidates``, ``correction``,
        ``switches`` (list of (labels, from, to, reason)), ``evaluation``.
    """
    from labeler.experiments.simulate import app_settings

    if candidates is None:
        from labeler.session import model_selection
        candidates = model_selection.AUTO_CANDIDATES
    candidates = tuple(candidates)
    if "rls" not in candidates or any(c not in CANDIDATE_MODELS for c in candidates):
        raise SettingsError(f"candidates must include 'rls' and come from {', '.join(CANDIDATE_MODELS)}; "
                            f"got {', '.join(candidates)}.")
    if strategy not in ("auto", "margin", "random"):
        raise SettingsError(f"strategy {strategy!r} does not apply to --model auto (the graph candidates have no "
                            "expected-risk rule of their own past 10 labels); choose auto, margin or random.")
    if dataset.y is None:
        raise SettingsError(f"{dataset.name} has no true labels, so there is no oracle to simulate.")
    budget = check_count("budget", budget, 1)
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise ValueError(f"seed must be an integer; got {seed!r}.")
    chosen = app_settings(dataset, seed) if chosen is None else chosen
    X = np.asarray(chosen["X"], dtype=np.float64)
    y = np.asarray(dataset.y)
    n = X.shape[0]
    if budget > n - 1:
        raise SettingsError(f"a budget of {budget} leaves no unlabelled point of the {n}; pass a budget <= {n - 1}.")
    classes = list(dataset.classes)
    rls, retune, rls_spec = rls_candidate(X, classes, chosen, seed)
    learners, prepare = {"rls": rls}, {"rls": retune}
    graphs = [c for c in candidates if c not in ("rls", "graph-rls")]
    if len(candidates) > 1:
        W = knn_graph(X, n_neighbors, seed=seed)
        learners.update(graph_candidates(W, classes, seed, graphs))
        if "graph-rls" in candidates:
            learners["graph-rls"], prepare["graph-rls"], _ = graph_rls_candidate(X, W, classes, chosen, seed,
                                                                                 n_neighbors)
    learners = {c: learners[c] for c in candidates}
    from core.selection import selector as _selection  # FIRST_MODEL read at call time
    first = _selection.FIRST_MODEL
    if first == "prior" and "harmonic" in learners:  # from the pool's kNN graph (core.selection.prior)
        from core.selection.prior import first_model
        first = first_model(W, len(classes), seed=seed)
    first = first if first in learners else "rls"
    selector = ModelSelector(learners, first, X, correction=correction, rule=rule, prepare=prepare)
    switches, in_use = [], []

    def after_label(proxy):
        hook = prepare.get(selector.incumbent)  # a kernel-RLS model in use re-tunes as it answers
        if hook is not None:
            hook(selector.learner, selector.learner.n_labeled - 1)
        n_labels = proxy.n_labeled
        if evaluation_due(n_labels):
            before = selector.incumbent
            labels = selector.learner.labels
            weights = np.array(list(rls.class_weights.values()), dtype=np.float64)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                decision = selector.evaluate(labels, balanced=bool(np.ptp(weights) > 0))
            if decision.switched:
                switches.append((n_labels, before, decision.model, decision.reason))
        in_use.append(selector.incumbent)

    def settings():  # the RLS width and lam while RLS answers, graph-kernel RLS's lam, else NaN
        spec = rls_spec()
        if selector.incumbent == "graph-rls":
            return float("nan"), float(selector.learner.get_params()["lam"])
        if selector.incumbent != "rls":
            return float("nan"), float("nan")
        return (float(spec.width) if spec.width is not None else float("nan")), float(spec.lam)

    if cold_start is None:
        cold_start = _coldstart.cold_start_labels(len(classes))  # read at call time
    starter = _coldstart.ColdStart(X, cold_start, seed) if strategy == "auto" and cold_start > 0 else None
    if strategy == "auto" and _coldstart.COLD_START_KIND == "vopt" and "harmonic" in learners:
        from core.strategies import scores as _scores  # the graph's VOpt, on every pool

        def vopt_scores():
            return _scores(selector.sync("harmonic", selector.learner.labels), "vopt")
        starter = _coldstart.CriterionStart(_coldstart.COLD_START_LABELS, vopt_scores)
    if strategy == "auto" and _coldstart.CLUSTER_COVER:
        components = _pool_components(X)
        if components is not None:
            from core.strategies import scores as _scores
            score = (lambda: _scores(selector.learner, strategy_in_use(selector.learner, "auto"))
                     if _coldstart.CLUSTER_COVER == "model" else None)
            starter = _coldstart.Starters(starter, _coldstart.ClusterCover(X, components,
                                                                          lambda: selector.learner.labels, score=score))
    rng = np.random.default_rng(seed)
    rows = oracle_loop(ChosenModel(selector), y, strategy, budget, rng, after_label=after_label, settings=settings,
                       progress=progress, cold_start=starter, strategy_of=strategy_in_use)
    frame = curve_frame(rows, y)
    frame["model"] = in_use
    frame.attrs.update(strategy=strategy, seed=int(seed), candidates=list(candidates), correction=correction,
                       switches=switches, evaluation="unlabelled pool")
    return frame
