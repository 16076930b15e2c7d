"""A graph model (harmonic function or LGC) with the learner interface the labelling session uses.

Issue 10 §2. :class:`GraphLearner` holds a fixed graph ``W`` and the labels in labelling order,
and refits the model on every change of the labels, so every state is a function of the labels
alone: undo is a refit without the label, a reopened session is one fit on the replayed labels,
and both equal a fresh fit on the same labels (to the solver's accuracy). It is a
:class:`core.learner.base.Learner`: the labels live in the shared
:class:`~core.learner.base.LabelBook` and the read API (``classes``, ``labels``, ``predict``,
``score``, ``expected_risk``, ...) is :class:`~core.learner.base.LearnerBase`'s, as for
:class:`core.learner.ActiveRLS`. Its settings (``model``, ``alpha``, ``class_mass``) are read
only and change by :meth:`GraphLearner.set_params`, which refits, all or nothing; the RLS
capabilities (lam, kernel, class weights, posterior variance) are not in its ``capabilities``
and asking for them raises ``ValueError`` naming the fix.

Models (docs/algorithms.md §5)
----------------------
* ``"harmonic"``: ``Delta_UU F_U = W_UL Y_L`` (seed 001; :class:`core.graph.HarmonicFunction`),
  one-hot rows on labelled nodes, 0 on nodes of components without a label.
* ``"lgc"``: ``(D - alpha W) F = (1 - alpha) D Y`` (seed 000 §3.2, row-stochastic form,
  ``Y = 1/c`` on unlabelled rows: :class:`core.graph.LocalGlobalConsistency`). The matrix does not
  depend on the labels, so it is factorised once and every refit is one solve.

Solver: Jacobi-preconditioned CG warm-started from the previous solution (from
:data:`~core.graph.amg_precondition.AMG_ABOVE` unlabelled nodes on, the harmonic system is
preconditioned by a multigrid hierarchy kept while labels arrive,
:class:`core.graph.amg_precondition.GroundedLaplacianAMG`), to a relative residual
of :data:`CG_TOL` (the tests compare against :class:`~core.graph.HarmonicFunction`'s sparse LU
to 1e-8): :func:`core.graph.harmonic.solve_spd`, the one graph solve, which warns
(:class:`~core.graph.harmonic.HarmonicSolverWarning`) and solves by a sparse LU if CG stops early.
A warm-started refit after one label takes a few CG iterations, where a sparse LU of
``Delta_UU`` suffers fill-in on a graph of many dimensions (timings: docs/benchmarks.md §8,
``python benchmarks/graph_session.py``); on a graph of few dimensions, where Jacobi CG is slow and
the fill bound is small, a sparse LU of the harmonic system is kept and solved by bordering as
labels arrive (:mod:`core.graph.bordered_lu`). LGC's matrix ``D - alpha W`` does not change: it is
factorised once up to :data:`ITERATIVE_ABOVE` nodes and wherever the fill bound is small (one
solve per refit), CG elsewhere.

Outputs as the session reads them
---------------------------------
``class_values`` ``P`` (n, c): the model's ``F`` with rows normalised to sum 1 (class mass
normalisation first when asked, seed 003 eq. 2.7, with the labelled set's class proportions
``q``); nodes without a labelled node in their component get ``q`` (the class
:meth:`HarmonicFunction.predict_indices` gives them); with no labels every row is uniform.
``decision_values`` in the RLS coding, so the app's confidence and margin apply unchanged:
``P_1 - P_0`` (binary, one column) or ``2 P - 1`` (one-vs-all). The soft confidence
(docs/algorithms.md §2, ``clip((f + 1) / 2)``) is then ``P`` itself.

Queries
-------
The "arls" strategy is :attr:`GraphLearner.risk_criterion`, a
:class:`core.criteria.harmonic_risk.HarmonicExpectedRisk`: Zhu et al.'s exact expected risk of
the harmonic function (seed 003 §2.8.1; a dense ``u x u`` inverse the criterion keeps and
downdates by rank one when one label is added while the rule is in use; dropped when a state
passes without it, e.g. once "auto" moved to margin), on pools up to :data:`ZHU_MAX_POINTS`.
LGC has no expected-risk rule, nor has a larger pool: there the capability
:data:`~core.learner.base.EXPECTED_RISK` is missing and scoring "arls" raises ``ValueError``
(the session does not offer "arls" then). Margin, random and the variance criteria "vopt" /
"sigmaopt" (:mod:`core.graph.variance`, shared with Poisson learning through
:class:`~core.graph.outputs.GraphOutputs`) work on every graph model.

LOO (:meth:`loo_decision_values`), exact from one factorisation: harmonic, with ``j`` made
unlabelled, ``f'_j = (a - c y_j) / (d_j - c)`` where ``h = Delta_UU^-1 W_Uj``, ``c = W_jU h``
and ``a = W_jU F_U + W_jL' Y_L'`` (block elimination of the system with ``j`` unlabelled);
LGC: ``F' = F + (1 - alpha) d_j (A^-1)_jj (1/c - e_yj)`` at ``j`` (``Y_j`` back to the prior).
"""

from __future__ import annotations

import copy

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..criteria.harmonic_risk import ZHU_EPS, GraphField, HarmonicExpectedRisk
from ..learner.base import EXPECTED_RISK, GRAPH_VARIANCE, LAM, LOO, SIMILARITY, LabelBook
from ._checks import check_graph
from .amg_precondition import AMG_ABOVE, GroundedLaplacianAMG
from .bordered_lu import FILL_MAX, GroundedLaplacianLU, spd_lu
from .harmonic import class_mass_normalize, solve_spd
from .outputs import GraphOutputs
from .variance import VarianceCriterion

__all__ = ["GraphLearner", "GRAPH_MODELS", "ZHU_MAX_POINTS", "ZHU_EPS", "ITERATIVE_ABOVE", "CG_TOL"]

GRAPH_MODELS = ("harmonic", "lgc")
#: Largest pool on which Zhu et al.'s exact rule runs (a dense u x u inverse: 200 MB at 5,000).
ZHU_MAX_POINTS = 5000
#: LGC's constant matrix is factorised once (sparse LU) up to this many nodes; above, CG.
ITERATIVE_ABOVE = 3_000
#: CG's relative residual (CG and the sparse LU agreed to 1e-13 on a 10-NN graph of 3,000
#: points in 10 dimensions).
CG_TOL = 1e-12
#: LGC refits by a rank-k correction of the last fit (one solve per changed row of the targets)
#: when at most this many rows changed; a full refit (one warm-started solve per class) above.
LGC_RANK_UPDATE_MAX = 4
#: From AMG_ABOVE unknowns the harmonic system is solved by a kept sparse LU (bordered on later
#: labels, :mod:`core.graph.bordered_lu`) when the graph's fill bound allows this many numbers,
#: else by Jacobi CG, or multigrid-preconditioned CG where Jacobi is slow.
DIRECT_FILL_MAX = FILL_MAX
#: Jacobi CG iterations tried on the first large harmonic solve before the multigrid takes over.
JACOBI_PROBE_ITER = 150
#: The harmonic LOO's columns ``Delta_UU^-1 W_UL`` are kept (and carried over each label added)
#: while they hold at most this many numbers (u x l; 8 bytes each).
LOO_COLUMNS_MAX = 20_000_000


def _jacobi_probe(A, B, x0, tol, max_iter):
    """Jacobi CG for at most ``max_iter`` iterations per column: ``(X, reached)`` (no fallback)."""
    from scipy.sparse.linalg import cg

    M = sp.diags(1.0 / A.diagonal())
    X = np.zeros(B.shape) if x0 is None else np.array(x0, dtype=np.float64, copy=True)
    reached = True
    for t in range(B.shape[1]):
        if not B[:, t].any():
            X[:, t] = 0.0
            continue
        X[:, t], info = cg(A, B[:, t], x0=X[:, t], rtol=tol, maxiter=max_iter, M=M)
        reached = reached and info == 0
    return X, reached
_PARAMS = ("model", "alpha", "class_mass")


class _Principal:
    """``Delta_UU`` as the principal submatrix of a larger system's on ``U``, sliced on first use
    (a label added costs no slicing while the kept sparse LU answers by bordering).

    Call it for the matrix (CSC, rows and columns in the order of ``U``)."""

    def __init__(self, base, base_free, free):
        self._base, self._base_free, self._free, self._matrix = base, base_free, free, None

    @classmethod
    def of(cls, A, free_A, free) -> "_Principal":
        """The submatrix on ``free`` of ``A`` (a matrix on ``free_A``, or a :class:`_Principal`)."""
        if isinstance(A, _Principal):
            if A._matrix is not None:
                return cls(A._matrix, A._free, free)
            return cls(A._base, A._base_free, free)
        return cls(A, free_A, free)

    def __call__(self):
        if self._matrix is None:
            pos = np.searchsorted(self._base_free, self._free)
            self._matrix = sp.csc_matrix(self._base)[pos][:, pos].tocsc()
        return self._matrix


def _check_params(model, alpha, class_mass) -> tuple:
    if model not in GRAPH_MODELS:
        raise ValueError(f"model must be one of {GRAPH_MODELS}; got {model!r}.")
    if model == "lgc" and not (isinstance(alpha, (int, float, np.floating)) and not isinstance(alpha, bool)
                               and 0 < alpha < 1):
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r} (seed 000 uses 0.01 to 0.99).")
    if not isinstance(class_mass, (bool, np.bool_)):
        raise ValueError(f"class_mass must be True or False; got {class_mass!r}.")
    return model, float(alpha), bool(class_mass)


class GraphLearner(GraphOutputs):
    """Harmonic function or LGC on a fixed graph, refitted on every change of the labels.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric non-negative weights (:func:`core.kernels.knn_graph`).
    classes : sequence of hashable
        At least two distinct class labels (their type is kept: ``predict`` returns them).
    model : {"harmonic", "lgc"}
    alpha : float, default 0.99
        LGC propagation weight in (0, 1).
    class_mass : bool, default False
        Class mass normalisation of the unlabelled rows (seed 003 eq. 2.7).
    random_state : int, default 0
        Seeds :attr:`rng` (tie-breaking when the caller gives no generator).
    zhu_max_points : int
        Pools above this size have no expected-risk rule (:data:`ZHU_MAX_POINTS`).

    Attributes
    ----------
    model, alpha, class_mass : read only; change them with :meth:`set_params`.
    capabilities : frozenset of str
        :data:`~core.learner.base.LOO`, :data:`~core.learner.base.SIMILARITY`,
        :data:`~core.learner.base.GRAPH_VARIANCE` (VOpt, Sigma-opt; up to
        :attr:`variance_max_points` nodes), and
        :data:`~core.learner.base.EXPECTED_RISK` for a harmonic model on at most
        ``zhu_max_points`` nodes.
    n_iter_ : int
        CG iterations of the last solve (0 for a factorised one).
    """

    def __init__(self, W, classes, model: str = "harmonic", *, alpha: float = 0.99, class_mass: bool = False,
                 random_state: int = 0, zhu_max_points: int = ZHU_MAX_POINTS):
        self._model, self._alpha, self._class_mass = _check_params(model, alpha, class_mass)
        self._W = check_graph(W)
        self._book = LabelBook(self._W.shape[0], classes)
        self._deg = np.asarray(self._W.sum(axis=1)).ravel()
        _, self._comp = connected_components(self._W, directed=False)
        self.zhu_max_points = int(zhu_max_points)
        self.random_state = random_state
        self.rng = np.random.default_rng(random_state)
        self._criterion = HarmonicExpectedRisk(ZHU_EPS)
        self._lgc = None
        self._lgc_diag = None  # (A, {node: (A^-1)_jj}): LGC's matrix does not change with the labels
        self._lgc_last = None  # (A, Y): the targets of the last LGC fit (its rank-k correction)
        self._loo = None
        self._F = None
        self._amg = GroundedLaplacianAMG()  # the harmonic system's multigrid, kept while labels arrive
        self._direct = GroundedLaplacianLU(fill_max=DIRECT_FILL_MAX)  # ... or its sparse LU, where it fills little
        self._harmonic_fit = None  # (labels, U, reached, Delta_UU) of the last harmonic fit
        self._jacobi_enough = None  # Jacobi CG converges fast on this graph (probed at the first large solve)
        self._loo_columns = None  # (U, labelled nodes, Delta_UU^-1 W_UL) of the harmonic LOO, carried over labels
        self.n_iter_ = 0
        self._refit()

    # ------------------------------------------------------------------ parameters
    @property
    def model(self) -> str:
        """``"harmonic"`` or ``"lgc"`` (read only: :meth:`set_params`)."""
        return self._model

    @property
    def alpha(self) -> float:
        """LGC's propagation weight (read only: :meth:`set_params`)."""
        return self._alpha

    @property
    def class_mass(self) -> bool:
        """Class mass normalisation of the outputs (read only: :meth:`set_params`)."""
        return self._class_mass

    def get_params(self) -> dict:
        """``{"model", "alpha", "class_mass"}``: the settings :meth:`set_params` accepts."""
        return {"model": self._model, "alpha": self._alpha, "class_mass": self._class_mass}

    def set_params(self, **params) -> GraphLearner:
        """Change ``model``, ``alpha`` and/or ``class_mass`` and refit, all or nothing.

        Raises
        ------
        ValueError
            An unknown or RLS-only parameter (lam, kernel, weighting: the message names the
            fix) or an invalid value; the learner is unchanged.
        """
        rls = [name for name in params if name in ("lam", "kernel", "weighting", "width")]
        if rls:
            raise ValueError(f"{rls[0]} does not apply to {self._refusal(LAM)}")
        unknown = sorted(set(params) - set(_PARAMS))
        if unknown:
            raise ValueError(f"unknown parameter(s) {unknown}; set_params takes {', '.join(_PARAMS)}.")
        new = _check_params(*(params.get(k, v) for k, v in self.get_params().items()))
        if new == (self._model, self._alpha, self._class_mass):
            return self
        saved = (self._model, self._alpha, self._class_mass, self._lgc, self._loo, self._F, self._P,
                 self._reached)
        try:
            if new[:2] != saved[:2]:
                self._lgc = None
            self._model, self._alpha, self._class_mass = new
            self._loo = None
            self._risk_cache = None
            self._refit()
        except Exception:
            (self._model, self._alpha, self._class_mass, self._lgc, self._loo, self._F, self._P,
             self._reached) = saved
            raise
        return self

    # ------------------------------------------------------------------ capabilities
    @property
    def capabilities(self) -> frozenset:
        caps = self.capabilities_for(self._model, self.n_samples, self.zhu_max_points) - {GRAPH_VARIANCE}
        return caps | self.variance_capability(self.n_samples, self.variance_max_points)

    @classmethod
    def capabilities_for(cls, model: str, n_samples: int, zhu_max_points: int = ZHU_MAX_POINTS) -> frozenset:
        """The capabilities of a ``model`` learner on ``n_samples`` nodes (before it is built)."""
        caps = {LOO, SIMILARITY} | cls.variance_capability(n_samples)
        if model == "harmonic" and int(n_samples) <= int(zhu_max_points):
            caps.add(EXPECTED_RISK)
        return frozenset(caps)

    def _refusal(self, capability: str) -> str:
        if capability == GRAPH_VARIANCE:
            return self._variance_refusal()
        if capability == EXPECTED_RISK and self._model == "lgc":
            return ("the lgc model: LGC has no expected-risk rule; choose the strategy margin or random, or the "
                    "harmonic model for Zhu et al.'s expected risk.")
        if capability == EXPECTED_RISK:
            return (f"the harmonic model on this pool: Zhu et al.'s exact expected risk keeps a dense u x u inverse "
                    f"and is limited to {self.zhu_max_points:,} points; this pool has {self.n_samples:,}. Choose margin or random, "
                    "or kernel RLS on a spectral graph kernel (transform 'gaussian_field': the same rule on a "
                    "low-rank factor, docs/algorithms.md §9).")
        return (f"the {self._model} model: it predicts from the graph alone (no kernel, lam, class weights or "
                "posterior variance); use kernel RLS for it (ActiveRLS: create a session with model 'rls').")

    # ------------------------------------------------------------------ read access
    @property
    def raw_values(self) -> np.ndarray:
        """The model's ``F`` (n, c) as solved (harmonic: 0 on unreached nodes), a copy."""
        return self._F.copy()

    @property
    def risk_criterion(self) -> HarmonicExpectedRisk:
        """The criterion behind :meth:`expected_risk` and the "arls" strategy (Zhu et al.)."""
        return self._criterion

    def _field(self) -> GraphField:
        return GraphField(self._W, self._book.labeled_indices(), self._book.labeled_codes(), self.n_classes,
                          self.estimated_risk())

    def _scoring_posterior(self) -> GraphField:
        return self._field()

    def score(self, criterion, candidates=None) -> np.ndarray:
        """Scores of ``criterion`` for candidates, shape (k,) in their order (see
        :meth:`core.learner.base.LearnerBase.score`).

        Raises
        ------
        ValueError
            A criterion that reads an RLS posterior (e.g. :class:`core.criteria.ExpectedRisk`),
            or expected risk where the model has none.
        """
        if getattr(criterion, "needs_posterior", False) and not isinstance(criterion,
                                                                          (HarmonicExpectedRisk, VarianceCriterion)):
            raise ValueError(f"the {getattr(criterion, 'name', criterion)!r} criterion reads an RLS posterior; a "
                             f"{self._model} model scores expected risk with its risk_criterion "
                             "(HarmonicExpectedRisk, Zhu et al.).")
        return super().score(criterion, candidates)

    def twin(self) -> GraphLearner:
        """A copy that can be refitted in another thread while this one is read: it shares the
        graph and every array a refit replaces rather than changes (``F``, ``P``, the LU and
        the systems), and has its own label book, copy of the LGC diagonal entries found, multigrid hierarchy holder, generator and
        expected-risk criterion. Its outputs equal this learner's."""
        twin = copy.copy(self)
        twin._book = self._book.copy()
        twin._amg = copy.copy(self._amg)
        twin._direct = self._direct.copy()
        twin.rng = copy.deepcopy(self.rng)
        twin._criterion = HarmonicExpectedRisk(ZHU_EPS)
        if self._lgc_diag is not None:  # filled by both (LOO values, the diagonal): a dict each
            twin._lgc_diag = (self._lgc_diag[0], dict(self._lgc_diag[1]))
        return twin

    # ------------------------------------------------------------------ label changes
    def _changing(self):
        """Before a change of the labels: a held Zhu inverse that did not follow the last change goes."""
        self._criterion.release_stale(self._field())

    def _changed(self) -> None:
        self._loo = None
        self._risk_cache = None
        self._refit()

    def add(self, i, label) -> GraphLearner:
        """Label node ``i`` and refit (Zhu's inverse, when in use: its rank-one downdate)."""
        i = self._book.check_unlabeled(i)
        self._book.class_of(label)
        self._changing()
        self._book.add(i, label)
        self._changed()
        return self

    def add_many(self, indices, labels) -> GraphLearner:
        """Label several nodes and refit once."""
        idx, labels = self._book.check_new_labels(indices, labels)
        if not idx:
            return self
        self._changing()
        for i, lab in zip(idx, labels):
            self._book.add(i, lab)
        self._changed()
        return self

    def remove(self, i) -> GraphLearner:
        """Remove the label of node ``i`` and refit: as if it had never been labelled."""
        return self.remove_many([self._book.check_labeled(i)])

    def remove_many(self, indices) -> GraphLearner:
        """Remove several labels and refit once."""
        idx = self._book.check_many(indices, labeled=True)
        if not idx:
            return self
        self._changing()
        for i in idx:
            self._book.remove(i)
        self._changed()
        return self

    def relabel(self, i, label) -> GraphLearner:
        """Change the label of a labelled node (it keeps its place in the labelling order) and refit."""
        i = self._book.check_labeled(i)
        self._book.class_of(label)
        self._changing()
        self._book.relabel(i, label)
        self._changed()
        return self

    def add_class(self, name) -> GraphLearner:
        """Add a class (no node has it yet: the outputs keep their classes, the new column is 0)."""
        self._book.check_new_class(name)
        self._changing()
        self._book.add_class(name)
        self._changed()
        return self

    def rename_class(self, old, new) -> GraphLearner:
        """Names only: the outputs stay as they are."""
        self._book.class_of(old)
        self._book.check_new_class(new)
        self._book.rename_class(old, new)
        return self

    def rebuild(self) -> GraphLearner:
        """Refit from the labels (every state is one already)."""
        self._changed()
        return self

    # ------------------------------------------------------------------ fitting
    def _codes(self):
        return self._book.labeled_indices(), self._book.labeled_codes()

    def _refit(self) -> None:
        n, c = self.n_samples, self.n_classes
        L, y = self._codes()
        prev = self._F
        if prev is not None and prev.shape[1] != c:
            prev = None
        if self._model == "harmonic":
            F, reached = self._fit_harmonic(L, y, prev)
        else:
            F, reached = self._fit_lgc(L, y, prev), np.ones(n, dtype=bool)
            self._harmonic_fit = None
        self._F = F
        self._reached = reached
        self._P = self._shown(F, L, y, reached)

    def _proportions(self, y: np.ndarray) -> np.ndarray:
        c = self.n_classes
        counts = np.bincount(y, minlength=c).astype(np.float64)
        return counts / counts.sum() if counts.sum() else np.full(c, 1.0 / c)

    def _shown(self, F, L, y, reached) -> np.ndarray:
        n, c = F.shape
        if L.size == 0:
            return np.full((n, c), 1.0 / c)
        q = self._proportions(y)
        P = F.copy()
        if self._class_mass:
            free = np.ones(n, dtype=bool)
            free[L] = False
            P[free] = class_mass_normalize(np.clip(P[free], 0.0, None), q)
        P = np.clip(P, 0.0, None)
        s = P.sum(axis=1, keepdims=True)
        P = np.where(s > 0, P / np.where(s > 0, s, 1.0), q[None, :])
        P[~reached] = q
        return P

    def _fit_harmonic(self, L, y, prev):
        n, c = self.n_samples, self.n_classes
        last, self._harmonic_fit = self._harmonic_fit, None
        held = self._loo_columns
        if L.size == 0:
            return np.full((n, c), 1.0 / c), np.ones(n, dtype=bool)
        reached = np.isin(self._comp, np.unique(self._comp[L]))
        lab = np.zeros(n, dtype=bool)
        lab[L] = True
        U = np.flatnonzero(~lab & reached)
        labels = dict(zip(L.tolist(), y.tolist()))
        if prev is not None and last is not None and U.size >= AMG_ABOVE:
            F = self._harmonic_one_more(last, labels, U, reached, prev)
            if F is not None:
                return F, reached
        if self._loo_columns is held:
            self._loo_columns = None  # a refit from scratch: the LOO columns are solved again when asked
        F = np.zeros((n, c))
        F[L, y] = 1.0
        A = None
        if U.size:
            W_U = self._W[U]
            A = (sp.diags(self._deg[U]) - W_U[:, U]).tocsc()
            B = np.asarray(W_U[:, L] @ F[L])
            x0 = None if prev is None else prev[U]
            F[U] = self._solve(A, B, x0, free=U)
        self._harmonic_fit = (labels, U, reached, A)
        return F, reached

    def _loo_columns_one_more(self, old_U, pos, g, U, j) -> None:
        """Carry the LOO columns ``H = Delta_UU^-1 W_UL`` (:meth:`_loo_harmonic`) over one label
        ``j`` added, from the old system's Green's function ``g`` (no new solve): removing ``j``
        from U is the Schur complement ``G' = G - g g^T / g_j``, so ``h'_i = (h_i - g h_i[j] /
        g_j)`` on the new U, and the new label's own column is ``h'_j = g / g_j`` there."""
        held, self._loo_columns = self._loo_columns, None
        if held is None or not np.array_equal(held[0], old_U):
            return
        _, nodes, H = held
        keep = np.ones(old_U.size, dtype=bool)
        keep[pos] = False
        H = (H - np.outer(g / g[pos], H[pos]))[keep]
        self._loo_columns = (U, np.append(nodes, j), np.column_stack([H, g[keep] / g[pos]]))

    def _harmonic_one_more(self, last, labels, U, reached, prev):
        """The harmonic solution after ONE label added to the last fit, by one solve whatever
        the number of classes (None when the labels changed otherwise: the caller solves).

        Clamping node ``j`` to ``e_y`` adds to the old solution a multiple of the old system's
        Green's function ``g = Delta_UU^-1 e_j`` (harmonic on ``U \\ {j}``, zero on ``L``):
        ``F' = F + g (e_y - F_j) / g_j`` (docs/algorithms.md §5), exact up to the solve's
        residual; the tests compare it with a fresh sparse-LU fit.
        """
        old_labels, old_U, old_reached, A_old = last
        if (A_old is None or len(labels) != len(old_labels) + 1 or not np.array_equal(reached, old_reached)
                or old_U.size != U.size + 1 or any(labels.get(i) != code for i, code in old_labels.items())):
            return None
        (j,) = [i for i in labels if i not in old_labels]
        pos = int(np.searchsorted(old_U, j))
        if pos >= old_U.size or old_U[pos] != j:
            return None
        e = np.zeros((old_U.size, 1))
        e[pos, 0] = 1.0
        g = self._solve(A_old, e, free=old_U)[:, 0]
        if not g[pos] > 0:
            return None
        self._loo_columns_one_more(old_U, pos, g, U, j)
        F = prev.copy()
        step = -F[j].copy()
        step[labels[j]] += 1.0
        F[old_U] += np.outer(g / g[pos], step)
        F[j] = 0.0
        F[j, labels[j]] = 1.0
        keep = np.ones(old_U.size, dtype=bool)
        keep[pos] = False
        self._harmonic_fit = (labels, U, reached, _Principal.of(A_old, old_U, U))
        return F

    def _solve(self, A, B, x0=None, lu=None, free=None):
        """``A X = B`` for SPD sparse ``A``: with ``lu``, or by CG from ``x0`` (:func:`solve_spd`).

        ``free``: the nodes of the harmonic system's rows. From :data:`AMG_ABOVE` of them, a
        graph whose fill bound is at most :data:`DIRECT_FILL_MAX` (few dimensions) is solved by
        the kept sparse LU (:class:`~core.graph.bordered_lu.GroundedLaplacianLU`); otherwise the
        first solve tries Jacobi CG for :data:`JACOBI_PROBE_ITER` iterations, and a graph on
        which that is not enough (a long, thin graph: two-moons needs about 700) is solved with
        the multigrid preconditioner from then on, continuing from where Jacobi stopped."""
        preconditioner = "jacobi"
        if lu is None and free is not None and free.size >= AMG_ABOVE and self._direct.accepts(self._W, free.size):
            self.n_iter_ = 0  # a graph that fills little (few dimensions): the kept sparse LU
            return self._direct.solve(A, free, B)  # (A sliced only if it factorises again)
        if isinstance(A, _Principal):
            A = A()
        if lu is None and free is not None and free.size >= AMG_ABOVE and self._jacobi_enough is not True:
            if self._jacobi_enough is None:
                X, reached = _jacobi_probe(A, B, x0, CG_TOL, JACOBI_PROBE_ITER)
                self._jacobi_enough = reached
                if reached:
                    return X
                x0 = X
            preconditioner = self._amg.operator(A, free)
        X, n_iter = solve_spd(A, B, x0=x0, tol=CG_TOL, lu=lu, preconditioner=preconditioner)
        self.n_iter_ = int(n_iter.max(initial=0))
        return X

    def _lgc_system(self):
        """``A = D - alpha W`` (isolated nodes: degree 1), its LU up to :data:`ITERATIVE_ABOVE`
        nodes or where the graph's fill bound is small (:mod:`core.graph.bordered_lu`), and ``d``."""
        if self._lgc is None:
            d = np.where(self._deg > 0, self._deg, 1.0)
            A = (sp.diags(d) - self._alpha * self._W).tocsc()
            small = self.n_samples <= ITERATIVE_ABOVE or self._direct.accepts(self._W, self.n_samples)
            lu = spd_lu(A) if small else None
            self._lgc = (A, lu, d)
        return self._lgc

    def _lgc_targets(self, L, y) -> np.ndarray:
        c = self.n_classes
        Y = np.full((self.n_samples, c), 1.0 / c)
        Y[L] = 0.0
        Y[L, y] = 1.0
        return Y

    def _fit_lgc(self, L, y, prev=None) -> np.ndarray:
        """LGC's ``F`` for the labels: from the last fit by a rank-k correction where at most
        :data:`LGC_RANK_UPDATE_MAX` rows of the targets ``Y`` changed (a label added, undone or
        changed: ``A`` does not depend on the labels, so ``F' = F + (1 - alpha) A^-1 E_R
        D_R (Y'_R - Y_R)``, docs/algorithms.md §5: one solve per changed row, whose diagonal
        entry ``(A^-1)_jj`` the LOO keeps); otherwise one solve per class, warm-started."""
        A, lu, d = self._lgc_system()
        Y = self._lgc_targets(L, y)
        last, self._lgc_last = self._lgc_last, None
        if prev is not None and last is not None and last[0] is A and last[1].shape == Y.shape:
            rows = np.flatnonzero((Y != last[1]).any(axis=1))
            if rows.size <= min(LGC_RANK_UPDATE_MAX, self.n_classes):
                F = prev.copy()
                if rows.size:
                    E = np.zeros((self.n_samples, rows.size))
                    E[rows, np.arange(rows.size)] = 1.0
                    Z = self._solve(A, E, None, lu)  # columns of A^-1 (A is symmetric)
                    F += (1 - self._alpha) * Z @ (d[rows, None] * (Y[rows] - last[1][rows]))
                    if self._lgc_diag is None or self._lgc_diag[0] is not A:
                        self._lgc_diag = (A, {})
                    self._lgc_diag[1].update(zip(rows.tolist(), Z[rows, np.arange(rows.size)].tolist()))
                self._lgc_last = (A, Y)
                return F
        F = self._solve(A, (1 - self._alpha) * d[:, None] * Y, prev, lu)
        self._lgc_last = (A, Y)
        return F

    # ------------------------------------------------------------------ leave-one-out
    def loo_decision_values(self) -> np.ndarray:
        """Each labelled node's decision values without its own label, shape (n_labeled, T),
        rows in the order of :attr:`labels` (exact, see the module docstring; with
        ``class_mass`` the LOO row is rescaled by the full fit's column masses, an
        approximation: one row's change of the masses is left out)."""
        if self._loo is None:
            L, y = self._codes()
            if L.size == 0:
                self._loo = np.zeros((0, self.decision_values.shape[1]))
            else:
                F = self._loo_harmonic(L, y) if self._model == "harmonic" else self._loo_lgc(L, y)
                self._loo = self._outputs(self._loo_shown(F, L, y))
        return self._loo.copy()

    def _loo_shown(self, F, L, y) -> np.ndarray:
        """Rows of ``P`` for the LOO values ``F`` (l, c): each row without its own label."""
        c = self.n_classes
        P = np.empty_like(F)
        for k in range(L.size):
            q = self._proportions(np.delete(y, k))
            row = F[k].copy()
            if self._class_mass:
                mass = self._F.sum(axis=0)  # the fit's column masses (LOO: unchanged but for one row)
                row = row * np.where(mass > 0, q / np.where(mass > 0, mass, 1.0), 0.0)
            row = np.clip(row, 0.0, None)
            s = row.sum()
            P[k] = row / s if s > 0 else (q if L.size > 1 else np.full(c, 1.0 / c))
        return P

    def _loo_harmonic(self, L, y) -> np.ndarray:
        n, c = self.n_samples, self.n_classes
        lab = np.zeros(n, dtype=bool)
        lab[L] = True
        reached = self._reached
        U = np.flatnonzero(~lab & reached)
        W = self._W
        out = np.zeros((L.size, c))
        Y = np.zeros((n, c))
        Y[L, y] = 1.0
        FU = self._F[U]
        if U.size:
            held = self._loo_columns
            if held is not None and np.array_equal(held[0], U) and np.array_equal(np.sort(held[1]), np.sort(L)):
                col = {int(node): k for k, node in enumerate(held[1])}
                H = held[2][:, [col[int(j)] for j in L]]  # carried over the labels added (no solve)
            else:
                A = (sp.diags(self._deg[U]) - W[U][:, U]).tocsc()
                # l right-hand sides: one sparse LU up to ITERATIVE_ABOVE nodes beats l CG runs
                lu = spd_lu(A) if U.size <= ITERATIVE_ABOVE else None
                H = self._solve(A, np.asarray(W[U][:, L].todense()), lu=lu, free=U)  # h_j = Delta_UU^-1 W_Uj
                if U.size >= AMG_ABOVE and U.size * L.size <= LOO_COLUMNS_MAX:
                    self._loo_columns = (U.copy(), L.copy(), H)
        else:
            H = np.zeros((0, L.size))
        W_L = W[L]
        W_LU = W_L[:, U]
        W_LL = np.asarray(W_L[:, L].todense())
        YL = Y[L]
        # c_k = w_kU . h_k and a_k = w_kU F_U + w_kL' Y_L' (L' = L without k), all labels at once
        c_ = np.asarray(W_LU.multiply(H.T).sum(axis=1)).ravel() if U.size else np.zeros(L.size)
        a = (np.asarray(W_LU @ FU) if U.size else np.zeros((L.size, c))) + W_LL @ YL - np.diag(W_LL)[:, None] * YL
        deg_L = self._deg[L]
        den = deg_L - c_
        ok = den > 1e-12 * np.maximum(deg_L, 1e-300)  # else j was the only label of its component:
        out[ok] = (a[ok] - c_[ok, None] * YL[ok]) / den[ok, None]  # unreached without it (row 0)
        return out

    def _loo_lgc(self, L, y) -> np.ndarray:
        A, lu, d = self._lgc_system()
        n, c = self.n_samples, self.n_classes
        if self._lgc_diag is None or self._lgc_diag[0] is not A:  # node -> (A^-1)_jj, for this A
            self._lgc_diag = (A, {})
        known = self._lgc_diag[1]
        new = [j for j in L.tolist() if j not in known]
        if new:  # A is the same for every labelling: each node's (A^-1)_jj is solved once
            E = np.zeros((n, len(new)))
            E[new, np.arange(len(new))] = 1.0
            known.update(zip(new, np.einsum("ij,ij->j", self._solve(A, E, None, lu), E).tolist()))
        Ainv_jj = np.array([known[j] for j in L.tolist()])  # (A^-1)_jj
        out = self._F[L].copy()
        prior = np.full(c, 1.0 / c)
        for k, j in enumerate(L):
            e = np.zeros(c)
            e[y[k]] = 1.0
            out[k] += (1 - self._alpha) * d[j] * Ainv_jj[k] * (prior - e)
        return out
