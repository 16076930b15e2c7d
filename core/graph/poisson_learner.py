"""Poisson learning with the learner interface (model name ``"poisson"``).

:class:`PoissonLearner` is a :class:`core.learner.base.Learner` in the pattern of
:class:`core.graph.active.GraphLearner`: a fixed graph ``W``, the labels in the shared
:class:`~core.learner.base.LabelBook`, the read API of :class:`~core.learner.base.LearnerBase`,
and a refit of :class:`core.graph.poisson.PoissonLearning` on every change of the labels, so
every state is a function of the labels alone (undo, reopen and a fresh fit agree to the
solver's accuracy).

Outputs as the session reads them
---------------------------------
Poisson learning's ``U`` (n, c) is mean zero, not a probability. ``class_values`` ``P`` is the
affine map GraphLearning's ``predict`` applies before its argmax, made row-stochastic:
``V = U diag(s)`` (``s``: the class-size weighting when ``class_mass``, else 1),
``P_it = (V_it - m) / sum_t' (V_it' - m)`` with ``m`` the smallest ``V`` of the classes holding
labels; a class without labels gets ``P = 0``. Since the rows of ``U`` sum to zero,
``P = 1/c + U / (c |m|)`` without weighting: a linear image of ``U`` that keeps its argmax,
and for two classes ``P_1 - P_0 = U_1 / |m|``. Nodes of a component without labels get the
labelled set's class proportions. ``decision_values`` are ``P_1 - P_0`` (binary) or ``2 P - 1``
as for the other graph models, so margin, confidence and the "auto" switch apply unchanged.

Settings (:meth:`PoissonLearner.set_params`): ``class_mass`` (the paper's class-size weighting
``s_t = b_t / ybar_t`` with uniform ``b``: the counterpart of the harmonic model's class mass
normalisation) and ``model`` (``"poisson"`` only). Capabilities: exact LOO
(:meth:`~core.graph.poisson.PoissonLearning.loo_decision_values`, one solve per label) and the
graph similarity. No expected-risk rule (Poisson's ``U`` is not a probability): the "arls"
strategy is refused; queries by margin, random, or the variance criterion
:attr:`PoissonLearner.variance_criterion` (VOpt on the normalised Laplacian's spectral
truncation, :mod:`core.graph.variance`), scored through ``learner.score(criterion)``.
"""

from __future__ import annotations

import copy

import numpy as np

from ..learner.base import EXPECTED_RISK, GRAPH_VARIANCE, LOO, SIMILARITY, LabelBook
from ._checks import check_graph
from .amg_precondition import NodeSetAMG
from .bordered_lu import FILL_MAX, rcm_bandwidth
from .outputs import GraphOutputs
from .poisson import JACOBI_BEFORE_MULTIGRID, PoissonLearning, UnitSourceValues, jacobi_cg_converges
from .variance import VARIANCE_RANK, SpectralField, VarianceCriterion

__all__ = ["PoissonLearner", "VarianceCriterion", "SpectralField", "VARIANCE_RANK"]
_PARAMS = ("model", "class_mass")
#: Up to this many nodes the LOO's unit-source solves share one sparse LU (l CG runs above).
LOO_DIRECT_MAX = 3_000
#: Fits solve by a sparse LU kept per node set where the graph's fill bound is at most this
#: (numbers; :mod:`core.graph.bordered_lu`), by multigrid-preconditioned CG elsewhere.
DIRECT_FILL_MAX = FILL_MAX


class _NoExpectedRisk:
    """The "arls" criterion of a learner without one: scoring it is refused by the learner
    (:meth:`core.learner.base.LearnerBase.score` requires the capability for "arls")."""

    name = "arls"
    needs_posterior = False

    def score(self, state, posterior, candidates):  # pragma: no cover - the learner refuses first
        raise ValueError("the poisson model has no expected-risk rule; choose vopt, sigmaopt, margin or random.")


_NO_EXPECTED_RISK = _NoExpectedRisk()


def _check_params(model, class_mass) -> tuple:
    if model != "poisson":
        raise ValueError(f"model must be 'poisson' for a PoissonLearner; got {model!r} (harmonic and lgc are "
                         "GraphLearner models).")
    if not isinstance(class_mass, (bool, np.bool_)):
        raise ValueError(f"class_mass must be True or False; got {class_mass!r}.")
    return model, bool(class_mass)


class PoissonLearner(GraphOutputs):
    """Poisson learning on a fixed graph, refitted on every change of the labels.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric non-negative weights (:func:`core.kernels.knn_graph`).
    classes : sequence of hashable
        At least two distinct class labels.
    class_mass : bool, default False
        The paper's class-size weighting with uniform class sizes.
    random_state : int, default 0
        Seeds :attr:`rng` and the Lanczos start of the variance criterion's eigenpairs.
    variance_rank : int
        Eigenpairs of the variance criterion (:data:`VARIANCE_RANK`, at most n - 1).

    Attributes
    ----------
    model : "poisson"
    class_mass : bool (read only; :meth:`set_params`)
    capabilities : frozenset {LOO, SIMILARITY, GRAPH_VARIANCE (up to ``variance_max_points`` nodes)}
    """

    def __init__(self, W, classes, *, class_mass: bool = False, random_state: int = 0,
                 variance_rank: int = VARIANCE_RANK):
        _, self._class_mass = _check_params("poisson", class_mass)
        self._W = check_graph(W)
        self._book = LabelBook(self._W.shape[0], classes)
        self.random_state = random_state
        self.rng = np.random.default_rng(random_state)
        self.variance_rank = int(variance_rank)
        self._spectrum = None
        self._multigrid = NodeSetAMG()  # the CG preconditioner, kept while the reached nodes are
        self._unit_sources = UnitSourceValues()  # the LOO's unit-source values, on this fixed graph
        self._direct = None  # solve by a kept sparse LU (decided at the first fit)
        self._fit = None
        self._loo = None
        self._refit()

    # ------------------------------------------------------------------ parameters
    @property
    def model(self) -> str:
        return "poisson"

    @property
    def class_mass(self) -> bool:
        return self._class_mass

    def get_params(self) -> dict:
        return {"model": "poisson", "class_mass": self._class_mass}

    def set_params(self, **params) -> PoissonLearner:
        """Change ``class_mass`` and refit, all or nothing (``model`` must stay ``"poisson"``)."""
        rls = [name for name in params if name in ("lam", "kernel", "weighting", "width")]
        if rls:
            raise ValueError(f"{rls[0]} does not apply to {self._refusal('lam')}")
        unknown = sorted(set(params) - set(_PARAMS))
        if unknown:
            raise ValueError(f"unknown parameter(s) {unknown}; set_params takes {', '.join(_PARAMS)}.")
        _, class_mass = _check_params(params.get("model", "poisson"), params.get("class_mass", self._class_mass))
        if class_mass == self._class_mass:
            return self
        saved = (self._class_mass, self._fit, self._P, self._loo)
        try:
            self._class_mass = class_mass
            self._loo = None
            self._risk_cache = None
            self._refit()
        except Exception:
            self._class_mass, self._fit, self._P, self._loo = saved
            raise
        return self

    # ------------------------------------------------------------------ capabilities
    @property
    def capabilities(self) -> frozenset:
        return frozenset({LOO, SIMILARITY} | self.variance_capability(self.n_samples, self.variance_max_points))

    @classmethod
    def capabilities_for(cls, model: str, n_samples: int, zhu_max_points: int = 0) -> frozenset:
        """LOO, similarity and, up to :data:`~core.graph.variance.VARIANCE_MAX_POINTS` nodes, the
        graph variance criteria (``model`` and ``zhu_max_points`` play no part)."""
        return frozenset({LOO, SIMILARITY} | cls.variance_capability(n_samples))

    def _refusal(self, capability: str) -> str:
        if capability == GRAPH_VARIANCE:
            return self._variance_refusal()
        if capability == EXPECTED_RISK:
            return ("the poisson model: Poisson learning's outputs are not probabilities, so it has no expected-risk "
                    "rule; choose the strategy vopt, sigmaopt, margin or random, or the harmonic model for Zhu et al.'s "
                    "expected risk.")
        return ("the poisson model: it predicts from the graph alone (no kernel, lam, class weights or posterior "
                "variance); use kernel RLS for it (create a session with model 'rls').")

    @property
    def risk_criterion(self) -> _NoExpectedRisk:
        """A stand-in named "arls" that :meth:`score` refuses (ValueError naming the fix):
        Poisson learning has no expected-risk rule."""
        return _NO_EXPECTED_RISK

    # ------------------------------------------------------------------ read access
    @property
    def raw_values(self) -> np.ndarray:
        """Poisson learning's ``U`` (n, c) (zeros before any label), a copy."""
        n, c = self.n_samples, self.n_classes
        return np.zeros((n, c)) if self._fit is None else self._fit.decision_values_.copy()

    def _scoring_posterior(self) -> None:
        """The output-only criteria read nothing more (the variance criteria read
        :meth:`~core.graph.outputs.GraphOutputs.spectral_field`)."""
        return None

    def twin(self) -> PoissonLearner:
        """A copy that can be refitted in another thread while this one is read: it shares the
        graph, the fit (never changed in place: :meth:`PoissonLearning.add_label` makes a new
        one) and the unit sources (each a function of its node alone), and has its own label
        book, multigrid holder and generator. Its outputs equal this learner's."""
        twin = copy.copy(self)
        twin._book = self._book.copy()
        twin._multigrid = copy.copy(self._multigrid)
        twin.rng = copy.deepcopy(self.rng)
        return twin

    # ------------------------------------------------------------------ label changes
    def _changed(self) -> None:
        self._loo = None
        self._risk_cache = None
        self._refit()

    def _guarded(self, change) -> PoissonLearner:
        """Apply ``change`` to a copy of the label book and refit; on failure, nothing changed."""
        saved = (self._book.copy(), self._fit, self._P, self._loo)
        try:
            change()
            self._changed()
        except Exception:
            self._book, self._fit, self._P, self._loo = saved
            raise
        return self

    def add(self, i, label) -> PoissonLearner:
        i = self._book.check_unlabeled(i)
        self._book.class_of(label)
        return self._guarded(lambda: self._book.add(i, label))

    def add_many(self, indices, labels) -> PoissonLearner:
        idx, labels = self._book.check_new_labels(indices, labels)
        if not idx:
            return self
        return self._guarded(lambda: [self._book.add(i, lab) for i, lab in zip(idx, labels)])

    def remove(self, i) -> PoissonLearner:
        return self.remove_many([self._book.check_labeled(i)])

    def remove_many(self, indices) -> PoissonLearner:
        idx = self._book.check_many(indices, labeled=True)
        if not idx:
            return self
        return self._guarded(lambda: [self._book.remove(i) for i in idx])

    def relabel(self, i, label) -> PoissonLearner:
        i = self._book.check_labeled(i)
        self._book.class_of(label)
        return self._guarded(lambda: self._book.relabel(i, label))

    def add_class(self, name) -> PoissonLearner:
        self._book.check_new_class(name)
        return self._guarded(lambda: self._book.add_class(name))

    def rename_class(self, old, new) -> PoissonLearner:
        """Names only: the outputs stay as they are."""
        self._book.class_of(old)
        self._book.check_new_class(new)
        self._book.rename_class(old, new)
        if self._fit is not None:
            self._fit.classes_ = list(self._book.classes)
        return self

    def rebuild(self) -> PoissonLearner:
        self._changed()
        return self

    # ------------------------------------------------------------------ fitting
    def _refit(self) -> None:
        n, c = self.n_samples, self.n_classes
        L, y = self._book.labeled_indices(), self._book.labeled_codes()
        if L.size == 0:
            self._fit = None
            self._P = np.full((n, c), 1.0 / c)
            return
        fit = self._one_more(L, y)
        if fit is None:
            fit = PoissonLearning(solver="cg", tol=1e-10, class_sizes="uniform" if self._class_mass else None,
                                  multigrid=self._multigrid, unit_sources=self._unit_sources,
                                  factorise=self._factorise())
            fit.fit(self._W, L, y, classes=list(range(c)))
        self._fit = fit
        self._P = self._shown(fit, fit.decision_values_, fit.label_mean_, fit.reached_)

    def _factorise(self) -> bool:
        """Solve by a kept sparse LU where the graph's fill bound (RCM bandwidth x nodes) is at
        most :data:`DIRECT_FILL_MAX` and Jacobi CG is slow on it (a graph of few dimensions,
        where CG needs hundreds of iterations or its multigrid), else by CG: a kNN graph in many
        dimensions mixes fast (:func:`jacobi_cg_converges`: 20-60 iterations, a few matrix
        products) while its LU fills much (3 s to factorise 2x10^4 nodes of a 32-dimensional
        mixture, again whenever a label reaches a new component). Decided once per learner."""
        if self._direct is None:
            n = self.n_samples
            self._direct = (n * max(rcm_bandwidth(self._W), 1) <= DIRECT_FILL_MAX
                            and not jacobi_cg_converges(self._W, JACOBI_BEFORE_MULTIGRID, seed=self.random_state))
        return self._direct

    def _one_more(self, L: np.ndarray, y: np.ndarray):
        """The fit after ONE label added to the last one, by linearity
        (:meth:`PoissonLearning.add_label`: one unit-source solve, kept for the LOO too), or
        None when the labels changed otherwise (the caller fits from scratch)."""
        last = self._fit
        if (last is None or L.size != last.labeled_.size + 1 or len(last.classes_) != self.n_classes
                or last.class_sizes != ("uniform" if self._class_mass else None)
                or not np.array_equal(L[:-1], last.labeled_) or not np.array_equal(y[:-1], last.label_indices_)):
            return None
        return last.add_label(int(L[-1]), int(y[-1]))

    def _shown(self, fit: PoissonLearning, U: np.ndarray, ybar: np.ndarray, reached: np.ndarray) -> np.ndarray:
        """``P`` (rows summing to 1) of the values ``U`` (module docstring)."""
        c = U.shape[1]
        V = fit.weighted_values(U, ybar)  # -inf on classes without labels
        has = ybar > 0
        finite = V[:, has]
        m = float(finite.min()) if finite.size else 0.0
        P = np.zeros_like(U)
        P[:, has] = finite - m
        s = P.sum(axis=1, keepdims=True)
        q = ybar if ybar.sum() > 0 else np.full(c, 1.0 / c)
        P = np.where(s > 0, P / np.where(s > 0, s, 1.0), q[None, :])
        P[~reached] = q
        return P

    # ------------------------------------------------------------------ leave-one-out
    def _loo_values(self) -> np.ndarray:
        """Poisson learning's exact LOO ``U`` (l, c): its l unit-source solves by one sparse LU
        up to :data:`LOO_DIRECT_MAX` nodes (the same system as the fit's CG), else by CG."""
        fit = self._fit
        if self.n_samples > LOO_DIRECT_MAX:
            return fit.loo_decision_values()
        solver = fit.solver
        try:
            fit.solver = "direct"
            return fit.loo_decision_values()
        finally:
            fit.solver = solver

    def loo_decision_values(self) -> np.ndarray:
        """Each labelled node's outputs without its own label, shape (n_labeled, T), rows in the
        order of :attr:`labels`: exact ``U`` (:meth:`PoissonLearning.loo_decision_values`), shown
        as ``P`` with the remaining labels' class means and the full fit's scale ``m`` (the
        argmax is exact; one row's change of ``m`` is left out)."""
        if self._loo is None:
            n_lab, c = self.n_labeled, self.n_classes
            if self._fit is None:
                self._loo = np.zeros((0, self.n_outputs))
            else:
                U = self._loo_values()
                y = self._book.labeled_codes()
                rows = np.zeros((n_lab, c))
                V_all = self._fit.weighted_values()
                m = float(V_all[:, self._fit.label_mean_ > 0].min())
                for k in range(n_lab):
                    counts = np.bincount(np.delete(y, k), minlength=c).astype(np.float64)
                    ybar = counts / max(counts.sum(), 1.0)
                    V = self._fit.weighted_values(U[k:k + 1], ybar)[0]
                    has = ybar > 0
                    row = np.zeros(c)
                    row[has] = np.clip(V[has] - m, 0.0, None)
                    rows[k] = row / row.sum() if row.sum() > 0 else (ybar if counts.sum() else np.full(c, 1.0 / c))
                self._loo = self._outputs(rows)
        return self._loo.copy()
