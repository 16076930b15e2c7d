"""A graph model (harmonic function or LGC) with the learner interface the labelling session uses.

Issue 10 §2. :class:`GraphLearner` holds a fixed graph ``W`` and the labels in labelling order,
and refits the model on every change of the labels, so every state is a function of the labels
alone: undo is a refit without the label, a reopened session is one fit on the replayed labels,
and both equal a fresh fit on the same labels (to the solver's accuracy). It offers the part of
:class:`core.learner.ActiveRLS`'s interface that ``labeler.session`` and :mod:`core.strategies`
use (``add``, ``add_many``, ``remove``, ``remove_many``, ``relabel``, ``add_class``,
``rename_class``, ``decision_values``, ``predict``, ``estimated_risk``, ``expected_risk``,
``score``, ``scoring_state``, ``loo_decision_values``, ``labels``, ``classes``,
``unlabeled_indices``); the RLS settings (lam, kernel, class weights) raise ``ValueError``.

Models (docs/algorithms.md §5)
----------------------
* ``"harmonic"``: ``Delta_UU F_U = W_UL Y_L`` (seed 001; :class:`core.graph.HarmonicFunction`),
  one-hot rows on labelled nodes, 0 on nodes of components without a label.
* ``"lgc"``: ``(D - alpha W) F = (1 - alpha) D Y`` (seed 000 §3.2, row-stochastic form,
  ``Y = 1/c`` on unlabelled rows: :class:`core.graph.LocalGlobalConsistency`). The matrix does not
  depend on the labels, so it is factorised once and every refit is one solve.

Solver: Jacobi-preconditioned CG warm-started from the previous solution, to a relative residual
of :data:`CG_TOL` (the tests compare against :class:`~core.graph.HarmonicFunction`'s sparse LU
to 1e-8); a sparse LU if CG stops early. A warm-started refit after one label takes a few CG
iterations, where a sparse LU of ``Delta_UU`` suffers fill-in (timings: docs/benchmarks.md §8,
``python benchmarks/graph_session.py``). LGC's matrix ``D - alpha W`` does not change:
it is factorised once up to :data:`ITERATIVE_ABOVE` nodes (one solve per refit), CG above.

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
``expected_risk()`` is Zhu et al.'s exact expected risk of the harmonic function (seed 003
§2.8.1, :class:`core.graph.ZhuActiveLearning`, dense ``u x u`` inverse kept and downdated by
rank one when a label is added while the rule is in use; dropped when a state passes without
it, e.g. once "auto" moved to margin, and rebuilt lazily after any other change), on pools up
to :data:`ZHU_MAX_POINTS`. LGC has no expected-risk rule, nor has a larger pool: there it is NaN
(``core.strategies.query`` refuses NaN scores; the session does not offer "arls" then). Margin
and random work on every graph model.

LOO (:meth:`loo_decision_values`), exact from one factorisation: harmonic, with ``j`` made
unlabelled, ``f'_j = (a - c y_j) / (d_j - c)`` where ``h = Delta_UU^-1 W_Uj``, ``c = W_jU h``
and ``a = W_jU F_U + W_jL' Y_L'`` (block elimination of the system with ``j`` unlabelled);
LGC: ``F' = F + (1 - alpha) d_j (A^-1)_jj (1/c - e_yj)`` at ``j`` (``Y_j`` back to the prior).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import cg, splu

from ..criteria.base import ScoringState
from ..criteria.risk import predicted_class_indices
from ._checks import check_graph
from .harmonic import class_mass_normalize
from .zhu import ZhuActiveLearning, harmonic_risk

__all__ = ["GraphLearner", "GRAPH_MODELS", "ZHU_MAX_POINTS", "ZHU_EPS", "ITERATIVE_ABOVE", "CG_TOL"]

GRAPH_MODELS = ("harmonic", "lgc")
#: Largest pool on which Zhu et al.'s exact rule runs (a dense u x u inverse: 200 MB at 5,000).
ZHU_MAX_POINTS = 5000
#: The regulariser of the Zhu rule's inverse (``labeler simulate`` uses the same).
ZHU_EPS = 1e-8
#: LGC's constant matrix is factorised once (sparse LU) up to this many nodes; above, CG.
ITERATIVE_ABOVE = 3_000
#: CG's relative residual (CG and the sparse LU agreed to 1e-13 on a 10-NN graph of 3,000
#: points in 10 dimensions).
CG_TOL = 1e-12


class GraphLearner:
    """Harmonic function or LGC on a fixed graph, refitted on every change of the labels.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric non-negative weights (:func:`core.kernels.knn_graph`).
    classes : list of str
        At least two class names.
    model : {"harmonic", "lgc"}
    alpha : float, default 0.99
        LGC propagation weight in (0, 1).
    class_mass : bool, default False
        Class mass normalisation of the unlabelled rows (seed 003 eq. 2.7).
    random_state : int, default 0
        Seeds :attr:`rng` (tie-breaking when the caller gives no generator).
    zhu_max_points : int
        Pools above this size have no expected-risk rule (:data:`ZHU_MAX_POINTS`).
    """

    def __init__(self, W, classes, model: str = "harmonic", *, alpha: float = 0.99, class_mass: bool = False,
                 random_state: int = 0, zhu_max_points: int = ZHU_MAX_POINTS):
        if model not in GRAPH_MODELS:
            raise ValueError(f"model must be one of {GRAPH_MODELS}; got {model!r}.")
        if model == "lgc" and not (isinstance(alpha, (int, float, np.floating)) and 0 < alpha < 1):
            raise ValueError(f"alpha must be in (0, 1); got {alpha!r} (seed 000 uses 0.01 to 0.99).")
        classes = [str(c) for c in classes]
        if len(classes) < 2 or len(set(classes)) != len(classes):
            raise ValueError(f"classes must be at least two distinct names; got {classes!r}.")
        self._W = check_graph(W)
        self._n = self._W.shape[0]
        self._deg = np.asarray(self._W.sum(axis=1)).ravel()
        _, self._comp = connected_components(self._W, directed=False)
        self.model = model
        self.alpha = float(alpha)
        self.class_mass = bool(class_mass)
        self.zhu_max_points = int(zhu_max_points)
        self.random_state = random_state
        self.rng = np.random.default_rng(random_state)
        self._classes = classes
        self._labels: dict[int, str] = {}
        self._lgc_A = self._lgc_lu = None
        self._zhu = None
        self._zhu_used = False  # whether expected_risk read the inverse since the last change
        self._loo = None
        self.n_iter_ = 0
        self._refit()

    # ------------------------------------------------------------------ read access
    @property
    def n_samples(self) -> int:
        return self._n

    @property
    def graph(self) -> sp.csr_matrix:
        """The weights ``W`` (read only)."""
        return self._W

    @property
    def classes(self) -> list:
        return list(self._classes)

    @property
    def n_classes(self) -> int:
        return len(self._classes)

    @property
    def labels(self) -> dict:
        """``{index: label}`` in labelling order (a copy)."""
        return dict(self._labels)

    @property
    def n_labeled(self) -> int:
        return len(self._labels)

    @property
    def unlabeled_indices(self) -> np.ndarray:
        mask = np.ones(self._n, dtype=bool)
        if self._labels:
            mask[np.fromiter(self._labels, dtype=np.int64)] = False
        return np.flatnonzero(mask)

    @property
    def class_weights(self) -> dict:
        """Every class weighs 1 (the graph models have no class weights)."""
        return {c: 1.0 for c in self._classes}

    @property
    def raw_values(self) -> np.ndarray:
        """The model's ``F`` (n, c) as solved (harmonic: 0 on unreached nodes), a copy."""
        return self._F.copy()

    @property
    def class_values(self) -> np.ndarray:
        """``P`` (n, c): rows summing to 1 (see the module docstring), a copy."""
        return self._P.copy()

    @property
    def decision_values(self) -> np.ndarray:
        """``P_1 - P_0`` (n, 1) for two classes, ``2 P - 1`` (n, c) otherwise."""
        return self._outputs(self._P)

    def _outputs(self, P: np.ndarray) -> np.ndarray:
        if P.shape[1] == 2:
            return (P[:, 1] - P[:, 0])[:, None]
        return 2.0 * P - 1.0

    def _label_array(self) -> np.ndarray:
        arr = np.empty(len(self._classes), dtype=object)
        arr[:] = self._classes
        return arr

    def predict(self) -> np.ndarray:
        """Predicted class of every node, shape (n,)."""
        return self._label_array()[predicted_class_indices(self.decision_values)]

    def proba(self) -> np.ndarray:
        """``P`` (n, c)."""
        return self.class_values

    def class_counts(self) -> np.ndarray:
        counts = np.zeros(len(self._classes), dtype=np.int64)
        for lab in self._labels.values():
            counts[self._classes.index(lab)] += 1
        return counts

    def estimated_risk(self) -> float:
        """``sum_i (1 - max_t P_it)`` over the unlabelled nodes (seed 003 §2.8.1's risk)."""
        unl = self.unlabeled_indices
        return harmonic_risk(self._P[unl]) if unl.size else 0.0

    def scoring_state(self) -> ScoringState:
        """For the output-only criteria (margin, random) and the "auto" switch."""
        out = self.decision_values.T
        out.flags.writeable = False
        c = len(self._classes)
        return ScoringState(out, np.full(c, np.nan), np.ones(c), self.class_counts())

    # ------------------------------------------------------------------ queries
    @property
    def has_expected_risk(self) -> bool:
        """Whether :meth:`expected_risk` is Zhu et al.'s rule here (harmonic, small pool)."""
        return self.model == "harmonic" and self._n <= self.zhu_max_points

    def expected_risk(self, candidates=None) -> np.ndarray:
        """Zhu et al.'s expected risk of labelling each candidate (seed 003 §2.8.1).

        Returns
        -------
        ndarray of shape (n,) with +inf for labelled nodes, or (k,) for ``candidates``. NaN
        where the model has no such rule (LGC, or more than ``zhu_max_points`` nodes). With no
        labels every node scores the current risk (a tie: the query is uniform).
        """
        unl = self.unlabeled_indices
        cand = unl if candidates is None else np.asarray(candidates, dtype=np.int64)
        if not self.has_expected_risk:
            scores = np.full(cand.size, np.nan)
        elif not self._labels:
            scores = np.full(cand.size, self.estimated_risk())
        else:
            scores = self._zhu_model().expected_risks(cand) if cand.size else np.zeros(0)
            self._zhu_used = True
        if candidates is not None:
            return scores
        out = np.full(self._n, np.inf)
        out[cand] = scores
        return out

    def _zhu_model(self) -> ZhuActiveLearning:
        if self._zhu is None:
            L = np.fromiter(self._labels, dtype=np.int64)
            self._zhu = ZhuActiveLearning(eps=ZHU_EPS).fit(self._W, L, list(self._labels.values()),
                                                          classes=self._classes)
        return self._zhu

    def score(self, criterion, candidates=None) -> np.ndarray:
        """Scores of an output-only criterion (margin, random) for ``candidates``."""
        if getattr(criterion, "needs_posterior", False):
            raise ValueError(f"the {getattr(criterion, 'name', criterion)!r} criterion needs an RLS posterior; a "
                             f"{self.model} model scores expected risk with expected_risk() (Zhu et al.).")
        cand = self.unlabeled_indices if candidates is None else np.asarray(candidates, dtype=np.int64)
        return np.asarray(criterion.score(self.scoring_state(), None, cand), dtype=np.float64)

    def mean_similarity(self, rows, cols) -> np.ndarray:
        """Mean graph weight of each of ``rows`` to the nodes ``cols``, shape (len(rows),)."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        if cols.size == 0:
            return np.zeros(rows.size)
        mask = np.zeros(self._n)
        mask[cols] = 1.0
        return np.asarray(self._W[rows] @ mask).ravel() / cols.size

    # ------------------------------------------------------------------ label changes
    def _check_node(self, i) -> int:
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)) or not 0 <= int(i) < self._n:
            raise IndexError(f"point index must be an integer in [0, {self._n}); got {i!r}.")
        return int(i)

    def _check_label(self, label) -> str:
        if label not in self._classes:
            raise ValueError(f"label {label!r} is not one of the classes {self._classes!r}; add it first.")
        return label

    def _changed(self, refit_zhu: bool = True):
        if refit_zhu:
            self._zhu = None
        self._loo = None
        self._refit()

    def add(self, i, label) -> GraphLearner:
        """Label node ``i`` and refit (Zhu's inverse: its rank-one downdate)."""
        i, label = self._check_node(i), self._check_label(label)
        if i in self._labels:
            raise ValueError(f"point {i} is labelled already; relabel it instead.")
        self._labels[i] = label
        zhu = self._zhu
        if zhu is not None and self._zhu_used and zhu.unlabeled_.size > 1:
            zhu.add(i, label)  # O(u^2), where a fresh inverse is O(u^3)
        else:  # not asked for since the last change (e.g. "auto" moved to margin): let it go
            zhu = None
        self._zhu = zhu
        self._zhu_used = False
        self._changed(refit_zhu=False)
        return self

    def add_many(self, idx, labels) -> GraphLearner:
        idx = [self._check_node(i) for i in idx]
        labels = [self._check_label(lab) for lab in labels]
        if len(idx) != len(labels) or len(set(idx)) != len(idx) or any(i in self._labels for i in idx):
            raise ValueError("add_many needs as many labels as distinct, unlabelled points.")
        self._labels.update(zip(idx, labels))
        self._changed()
        return self

    def remove(self, i) -> GraphLearner:
        return self.remove_many([i])

    def remove_many(self, idx) -> GraphLearner:
        idx = [self._check_node(i) for i in idx]
        missing = [i for i in idx if i not in self._labels]
        if missing:
            raise ValueError(f"point(s) {missing} are not labelled; nothing to remove.")
        for i in idx:
            del self._labels[i]
        self._changed()
        return self

    def relabel(self, i, label) -> GraphLearner:
        i, label = self._check_node(i), self._check_label(label)
        if i not in self._labels:
            raise ValueError(f"point {i} is not labelled; add it instead.")
        self._labels[i] = label  # keeps its place in the labelling order
        self._changed()
        return self

    def add_class(self, name) -> GraphLearner:
        name = str(name)
        if name in self._classes:
            raise ValueError(f"class {name!r} exists already.")
        self._classes.append(name)
        self._changed()
        return self

    def rename_class(self, old, new) -> GraphLearner:
        """Names only: the outputs stay as they are."""
        if old not in self._classes or new in self._classes:
            raise ValueError(f"cannot rename {old!r} to {new!r}: {old!r} must be a class and {new!r} not.")
        k = self._classes.index(old)
        self._classes[k] = new
        self._labels = {i: (new if lab == old else lab) for i, lab in self._labels.items()}
        if self._zhu is not None:
            self._zhu.classes_ = list(self._classes)
        return self

    def rebuild(self) -> GraphLearner:
        """Refit from the labels (every state is one already)."""
        self._changed()
        return self

    def _not_applicable(self, what: str):
        raise ValueError(f"{what} does not apply to the {self.model} model (a graph model has no kernel, lam or "
                         "class weights); create an rls session to use it.")

    def set_lam(self, lam):
        self._not_applicable("lam")

    def set_kernel(self, kernel):
        self._not_applicable("a kernel width")

    def set_weighting(self, weighting):
        self._not_applicable("class weighting")

    # ------------------------------------------------------------------ fitting
    def _codes(self):
        L = np.fromiter(self._labels, dtype=np.int64, count=len(self._labels))
        y = np.array([self._classes.index(lab) for lab in self._labels.values()], dtype=np.int64)
        return L, y

    def _refit(self) -> None:
        n, c = self._n, len(self._classes)
        L, y = self._codes()
        prev = getattr(self, "_F", None)
        if prev is not None and prev.shape[1] != c:
            prev = None
        if self.model == "harmonic":
            F, reached = self._fit_harmonic(L, y, prev)
        else:
            F, reached = self._fit_lgc(L, y, prev), np.ones(n, dtype=bool)
        self._F = F
        self._reached = reached
        self._P = self._shown(F, L, y, reached)

    def _proportions(self, y: np.ndarray) -> np.ndarray:
        c = len(self._classes)
        counts = np.bincount(y, minlength=c).astype(np.float64)
        return counts / counts.sum() if counts.sum() else np.full(c, 1.0 / c)

    def _shown(self, F, L, y, reached) -> np.ndarray:
        n, c = F.shape
        if L.size == 0:
            return np.full((n, c), 1.0 / c)
        q = self._proportions(y)
        P = F.copy()
        if self.class_mass:
            free = np.ones(n, dtype=bool)
            free[L] = False
            P[free] = class_mass_normalize(np.clip(P[free], 0.0, None), q)
        P = np.clip(P, 0.0, None)
        s = P.sum(axis=1, keepdims=True)
        P = np.where(s > 0, P / np.where(s > 0, s, 1.0), q[None, :])
        P[~reached] = q
        return P

    def _fit_harmonic(self, L, y, prev):
        n, c = self._n, len(self._classes)
        if L.size == 0:
            return np.full((n, c), 1.0 / c), np.ones(n, dtype=bool)
        reached = np.isin(self._comp, np.unique(self._comp[L]))
        lab = np.zeros(n, dtype=bool)
        lab[L] = True
        U = np.flatnonzero(~lab & reached)
        F = np.zeros((n, c))
        F[L, y] = 1.0
        if U.size:
            W_U = self._W[U]
            A = (sp.diags(self._deg[U]) - W_U[:, U]).tocsc()
            B = np.asarray(W_U[:, L] @ F[L])
            x0 = None if prev is None else prev[U]
            F[U] = self._solve(A, B, x0)
        return F, reached

    def _solve(self, A, B, x0=None, lu=None):
        """``A X = B`` for SPD sparse ``A``: with ``lu``, or by CG from ``x0`` column by column."""
        u, c = B.shape
        if lu is not None:
            self.n_iter_ = 0
            return lu.solve(B)
        M = sp.diags(1.0 / A.diagonal())
        X = np.zeros((u, c))
        self.n_iter_ = 0
        for t in range(c):
            if not B[:, t].any():
                continue
            count = [0]

            def tick(_xk, count=count):
                count[0] += 1

            x, info = cg(A, B[:, t], x0=None if x0 is None else x0[:, t], rtol=CG_TOL, maxiter=10 * u, M=M,
                         callback=tick)
            if info != 0:  # stopped early (rounding floor): the direct solve
                return splu(A, permc_spec="MMD_AT_PLUS_A").solve(B)
            X[:, t] = x
            self.n_iter_ = max(self.n_iter_, count[0])
        return X

    def _lgc_system(self):
        """``A = D - alpha W`` (isolated nodes: degree 1), its LU when small, and ``d``."""
        if self._lgc_A is None:
            d = np.where(self._deg > 0, self._deg, 1.0)
            self._lgc_d = d
            self._lgc_A = (sp.diags(d) - self.alpha * self._W).tocsc()
            self._lgc_lu = splu(self._lgc_A, permc_spec="MMD_AT_PLUS_A") if self._n <= ITERATIVE_ABOVE else None
        return self._lgc_A, self._lgc_lu, self._lgc_d

    def _lgc_targets(self, L, y) -> np.ndarray:
        c = len(self._classes)
        Y = np.full((self._n, c), 1.0 / c)
        Y[L] = 0.0
        Y[L, y] = 1.0
        return Y

    def _fit_lgc(self, L, y, prev=None) -> np.ndarray:
        A, lu, d = self._lgc_system()
        Y = self._lgc_targets(L, y)
        return self._solve(A, (1 - self.alpha) * d[:, None] * Y, prev, lu)

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
                F = self._loo_harmonic(L, y) if self.model == "harmonic" else self._loo_lgc(L, y)
                self._loo = self._outputs(self._loo_shown(F, L, y))
        return self._loo.copy()

    def _loo_shown(self, F, L, y) -> np.ndarray:
        """Rows of ``P`` for the LOO values ``F`` (l, c): each row without its own label."""
        c = len(self._classes)
        P = np.empty_like(F)
        for k in range(L.size):
            q = self._proportions(np.delete(y, k))
            row = F[k].copy()
            if self.class_mass:
                mass = self._F.sum(axis=0)  # the fit's column masses (LOO: unchanged but for one row)
                row = row * np.where(mass > 0, q / np.where(mass > 0, mass, 1.0), 0.0)
            row = np.clip(row, 0.0, None)
            s = row.sum()
            P[k] = row / s if s > 0 else (q if L.size > 1 else np.full(c, 1.0 / c))
        return P

    def _loo_harmonic(self, L, y) -> np.ndarray:
        n, c = self._n, len(self._classes)
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
            A = (sp.diags(self._deg[U]) - W[U][:, U]).tocsc()
            H = self._solve(A, np.asarray(W[U][:, L].todense()))  # (u, l): h_j = Delta_UU^-1 W_Uj
        else:
            H = np.zeros((0, L.size))
        W_LU = W[L][:, U]
        W_LL = np.asarray(W[L][:, L].todense())
        for k, j in enumerate(L):
            w_jU = W_LU[k]
            cj = float((w_jU @ H[:, k])[0]) if U.size else 0.0
            a = np.asarray(w_jU @ FU).ravel() + W_LL[k] @ Y[L] - W_LL[k, k] * Y[j]
            den = self._deg[j] - cj
            if den <= 1e-12 * max(self._deg[j], 1e-300):
                continue  # j was the only label of its component: unreached without it (row 0)
            out[k] = (a - cj * Y[j]) / den
        return out

    def _loo_lgc(self, L, y) -> np.ndarray:
        A, lu, d = self._lgc_system()
        n, c = self._n, len(self._classes)
        E = np.zeros((n, L.size))
        E[L, np.arange(L.size)] = 1.0
        Ainv_jj = np.einsum("ij,ij->j", self._solve(A, E, None, lu), E)  # (A^-1)_jj
        out = self._F[L].copy()
        prior = np.full(c, 1.0 / c)
        for k, j in enumerate(L):
            e = np.zeros(c)
            e[y[k]] = 1.0
            out[k] += (1 - self.alpha) * d[j] * Ainv_jj[k] * (prior - e)
        return out
