"""Poisson learning on a sparse graph (Calder, Cook, Thorpe and Slepcev, ICML 2020).

With the combinatorial Laplacian ``L = D - W`` of a kNN graph (:func:`core.kernels.knn_graph`),
``m`` labelled nodes ``x_j`` with one-hot labels ``y_j`` (one column per class, one-vs-all) and
their mean ``ybar = (1/m) sum_j y_j``, Poisson learning solves::

    L U = B,      B = sum_j delta_{x_j} (y_j - ybar)^T      (n x T),
    sum_i d_i U_i = 0                                        (degree-weighted mean zero)

and predicts ``argmax_t U_it``; with class sizes ``b`` (the paper's option; uniform ``1/T`` when
the sizes are unknown) ``argmax_t s_t U_it`` with ``s_t = b_t / ybar_t``, which undoes the effect
of a class holding more or fewer labels than its share. Where Laplace learning (the harmonic
function) tends to a constant away from the labels as they get few, so that one label per class
gives near-random argmaxes, the mean-zero source keeps a spike of each class's mass at its
labels; the paper's MNIST table: 90.2 % against 16.1 % at one label per class.

Normalisation. The right-hand side sums to zero, so the solutions form a line ``U + 1 c^T``
and the argmax depends on the constant ``c``. The paper fixes ``sum_i d_i U_i = 0``: its
iteration (below) keeps every iterate there (``d^T P = d^T`` with ``P = D^-1 W``), and so does
GraphLearning's CG on the symmetric form (Krylov vectors orthogonal to ``D^1/2 1``). This module
projects every solution onto it, so the three solvers answer the same ``U``.

Solvers
-------
* ``"iteration"``: the paper's Algorithm 1, ``U <- U + D^-1 (B - L U)`` from ``U = 0``, run
  until the relative residual ``||B - L U|| / ||B||`` reaches ``tol`` (the paper stops earlier,
  when a random walk from the labels has mixed; run to convergence it is the equation's
  solution). It converges when no component is bipartite (``P`` has no eigenvalue -1).
* ``"cg"`` (default): CG on ``(I - D^-1/2 W D^-1/2) V = D^-1/2 B``, ``U = D^-1/2 V``, as
  GraphLearning solves it (the symmetric form is the Jacobi-preconditioned system); the
  right-hand side is projected onto the range first. A CG run that stops early falls back to
  ``"direct"`` with a :class:`PoissonSolverWarning`. With a caller's ``multigrid`` holder on
  at least :data:`~core.graph.amg_precondition.AMG_ABOVE` nodes, a run that has not converged
  after :data:`JACOBI_BEFORE_MULTIGRID` iterations gets a smoothed-aggregation V-cycle built
  around the kernel ``D^1/2 1`` and projected off it (docs/algorithms.md §10: built around the
  constant, as pyamg does by default, it made CG stall on graphs with hubs).
* ``"direct"`` (the oracle): one sparse LU of ``L`` with one node per component grounded
  (its row and column removed: non-singular on a connected component), then the projection.

Components. A component without any label gets ``U = 0`` and ``reached_ = False`` (predicted as
the most frequent labelled class), as in :class:`core.graph.HarmonicFunction`. On a graph with
several components holding labels the equation has no solution unless each component's source
sums to zero, so each such component is solved with its own label mean ``ybar_c`` and shifted
by ``ybar_c - ybar`` (zero on a connected graph; a component whose labels are all of one class
then predicts that class); a :class:`DisconnectedGraphWarning` says so.

Leave-one-out (exact, one solve per label)
------------------------------------------
Let ``g_i`` solve ``L g_i = e_i - pi_c`` (``pi_c = d / vol(c)`` on the component ``c`` of
``x_i``, 0 elsewhere), projected to degree-weighted mean zero. The source of any set of labels
in ``c`` is ``sum_i e_i a_i^T`` with ``sum_i a_i = 0``, so its solution is ``sum_i g_i a_i^T``
(the ``pi_c`` terms cancel): the solution is linear in the sources. Without label ``j`` the
component's coefficients become ``a_i = y_i - ybar'_c`` for ``i != j`` (``ybar'_c`` the mean of
the remaining labels of ``c``) and ``a_j = 0``, so the value at ``x_j`` is::

    U^(-j)(x_j) = sum_{i in L_c, i != j} G[x_j, i] (y_i - ybar'_c) + (ybar'_c - ybar')

with ``G[L, L]`` (l x l) from the ``l`` solves for the unit sources. Cost: one solve per label
(one sparse LU and ``l`` triangular solves for ``"direct"``), then ``O(l^2 T)``. A label alone
in its component leaves it label-free: ``U^(-j)(x_j) = 0``.
"""

from __future__ import annotations

import threading
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import cg

from ._checks import check_graph, check_labels
from .amg_precondition import AMG_ABOVE, kernel_projection
from .bordered_lu import spd_lu

__all__ = ["PoissonLearning", "UnitSourceValues", "jacobi_cg_converges", "POISSON_SOLVERS", "PoissonSolverWarning",
           "DisconnectedGraphWarning"]

POISSON_SOLVERS = ("cg", "iteration", "direct")
#: Multigrid-preconditioned CG runs at most this many iterations per column (it needs 5-30);
#: past them Jacobi CG carries on from its iterate (a guard: each V-cycle costs several matrix
#: products, and a hierarchy that does not fit the matrix stalls rather than fails).
MULTIGRID_MAX_ITER = 200
#: Where no multigrid hierarchy is held for the node set, CG runs this many Jacobi iterations
#: before one is built: a kNN graph in many dimensions (an expander: its normalised Laplacian's
#: spectral gap is wide) converges in 20-60, for less than the hierarchy's set-up (seconds at
#: 10^5 nodes); a graph of few dimensions (long, thin: hundreds to thousands) gets its hierarchy
#: at the first solve, kept for the next.
JACOBI_BEFORE_MULTIGRID = 100
#: Unit-source solves (leave-one-out) made at a time: their right-hand sides and solutions are
#: dense (n, block) arrays.
UNIT_SOURCE_BLOCK = 16


class PoissonSolverWarning(RuntimeWarning):
    """CG stopped before its tolerance; the direct sparse solve answered instead."""


class DisconnectedGraphWarning(UserWarning):
    """Several components of the graph hold labels; each was solved on its own."""


def jacobi_cg_converges(W, max_iter: int, tol: float = 1e-10, seed: int = 0) -> bool:
    """Whether Jacobi CG reaches the relative residual ``tol`` within ``max_iter`` iterations on
    the graph's normalised Laplacian ``I - D^-1/2 W D^-1/2`` for a random consistent right-hand
    side (orthogonal to ``D^1/2 1`` on each component; every eigenvector excited, so the
    sources of Poisson learning converge as fast or faster). True on an expander (a kNN graph
    in many dimensions: a wide spectral gap), False on a long, thin graph.

    Parameters
    ----------
    W : sparse matrix of shape (n, n)
        Symmetric non-negative weights (checked by the caller).
    max_iter : int
    tol : float
    seed : int
        Seeds the right-hand side.

    Returns
    -------
    bool
    """
    W = sp.csr_matrix(W)
    d = np.asarray(W.sum(axis=1)).ravel()
    S = np.flatnonzero(d > 0)
    if S.size < 2:
        return True
    W_S = W[S][:, S]
    r = 1.0 / np.sqrt(d[S])
    A = sp.identity(S.size, format="csr") - sp.diags(r) @ W_S @ sp.diags(r)
    _, comp = connected_components(W_S, directed=False)
    b = kernel_projection(np.sqrt(d[S]), comp)(np.random.default_rng(seed).standard_normal(S.size))
    if not b.any():
        return True
    _, info = cg(A.tocsr(), b, rtol=tol, maxiter=int(max_iter))
    return info == 0


class UnitSourceValues:
    """The unit-source solutions ``g_j`` (module docstring) at the nodes held, kept between fits
    on one graph: a symmetric table ``G[i, j] = g_j(x_i)`` over the held nodes.

    ``G`` restricted to a component is symmetric, ``g_j(x_i) = g_i(x_j)`` (``g_j = Q L^+ P e_j``
    with ``P = I - pi 1^T`` and ``Q = P^T``; zero across components), so a solve records its
    values at the nodes held before it in its column and its row: ``h^2`` numbers for ``h``
    held nodes instead of ``h`` vectors of n (8 MB each at 10^6 nodes). Safe to share between
    a learner and its twin refitted in another thread (a lock around each record and read).
    """

    def __init__(self):
        self._row = {}  # node -> its row and column in the table
        self._table = np.zeros((0, 0))
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._row)

    def __contains__(self, node) -> bool:
        return node in self._row

    def record(self, block: np.ndarray, G: np.ndarray) -> None:
        """Keep the solutions ``G`` (n, b) of the nodes ``block`` (b,), zero outside each one's
        component: their values at every held node (these included), in both directions."""
        with self._lock:
            for j in block.tolist():
                self._row.setdefault(j, len(self._row))
            h, size = len(self._row), self._table.shape[0]
            if h > size:  # grown by half: amortised copies
                grown = np.zeros((max(h, size + size // 2, 16),) * 2)
                grown[:size, :size] = self._table
                self._table = grown
            nodes = np.fromiter(self._row.keys(), dtype=np.intp, count=h)
            rows = np.fromiter(self._row.values(), dtype=np.intp, count=h)
            for k, j in enumerate(block.tolist()):
                r = self._row[j]
                self._table[rows, r] = G[nodes, k]
                self._table[r, rows] = G[nodes, k]

    def values(self, nodes) -> np.ndarray:
        """``G[nodes, nodes]`` (l, l), every node held (KeyError otherwise)."""
        with self._lock:
            rows = np.array([self._row[j] for j in np.asarray(nodes).tolist()], dtype=np.intp)
            return self._table[np.ix_(rows, rows)].copy()


class PoissonLearning:
    """Poisson learning on a graph (transductive, one-vs-all; see the module docstring).

    Parameters
    ----------
    solver : {"cg", "iteration", "direct"}
    tol : float, default 1e-10
        Relative residual ``||B - L U|| / ||B||`` at which CG and the iteration stop.
    max_iter : int, optional
        Iteration cap (CG: ``10 n``; the iteration: ``100 n``, at least 10,000); the iteration
        raises when it reaches it, CG falls back to ``"direct"`` with a warning.
    class_sizes : None, "uniform" or array-like of shape (T,)
        None: ``argmax_t U_it``. Otherwise the paper's weighting ``argmax_t (b_t / ybar_t) U_it``
        with ``b`` the given class proportions (``"uniform"``: ``1/T``).
    multigrid : core.graph.amg_precondition.NodeSetAMG, optional
        CG on at least :data:`~core.graph.amg_precondition.AMG_ABOVE` nodes that has not
        converged after :data:`JACOBI_BEFORE_MULTIGRID` Jacobi iterations is preconditioned by
        its multigrid V-cycle (kept by the caller between fits: the matrix depends only on the
        nodes reached by a label; once held, later solves use it at once); the answer is the
        same (same relative residual), in 5-30 iterations where Jacobi needs hundreds.
    factorise : bool, default False
        With ``solver="cg"``: solve by a sparse LU of the grounded Laplacian instead, made once
        per node set and kept with its matrices (shared with the fits :meth:`add_label` makes);
        for a caller that found the graph's fill small (:func:`core.graph.bordered_lu.rcm_bandwidth`).
    unit_sources : UnitSourceValues, optional
        The unit-source solutions of :meth:`unit_source_solutions` at the nodes held (the values
        the leave-one-out reads), kept by the caller between fits on the same graph: each
        depends on its node (and its component) alone, so a new fit solves only those of new
        labels.

    Attributes (after :meth:`fit`)
    ----------
    classes_ : list
    labeled_ : ndarray of int64, shape (l,)
    label_indices_ : ndarray of int64, shape (l,)
    decision_values_ : ndarray of shape (n, T)
        ``U`` (0 on unreached nodes).
    reached_ : ndarray of bool, shape (n,)
    label_mean_ : ndarray of shape (T,)
        ``ybar``.
    n_iter_ : int
        Iterations of the last solve (0 for ``"direct"``).
    residual_ : ndarray of shape (T,)
        Relative residual of each column (NaN for a fit made by :meth:`add_label`).
    """

    def __init__(self, solver: str = "cg", tol: float = 1e-10, max_iter: int | None = None, class_sizes=None,
                 multigrid=None, unit_sources=None, factorise: bool = False):
        self.solver = solver
        self.factorise = factorise
        self.unit_sources = unit_sources
        self.tol = tol
        self.max_iter = max_iter
        self.class_sizes = class_sizes
        self.multigrid = multigrid

    # ------------------------------------------------------------------ checks
    def _check_params(self) -> None:
        if self.solver not in POISSON_SOLVERS:
            raise ValueError(f"solver must be one of {POISSON_SOLVERS}; got {self.solver!r}.")
        if not (isinstance(self.tol, (int, float, np.floating)) and 0 < self.tol < 1):
            raise ValueError(f"tol must be in (0, 1); got {self.tol!r}.")
        if self.max_iter is not None and not (isinstance(self.max_iter, (int, np.integer)) and self.max_iter >= 1):
            raise ValueError(f"max_iter must be a positive integer or None; got {self.max_iter!r}.")

    def _sizes(self, T: int):
        """``b`` (T,) or None."""
        if self.class_sizes is None:
            return None
        if isinstance(self.class_sizes, str):
            if self.class_sizes != "uniform":
                raise ValueError(f"class_sizes must be None, 'uniform' or T proportions; got {self.class_sizes!r}.")
            return np.full(T, 1.0 / T)
        b = np.asarray(self.class_sizes, dtype=np.float64)
        if b.shape != (T,) or not np.isfinite(b).all() or (b <= 0).any():
            raise ValueError(f"class_sizes must hold {T} positive class proportions (one per class); "
                             f"got {self.class_sizes!r}. Pass 'uniform' when they are unknown.")
        return b / b.sum()

    # ------------------------------------------------------------------ fit
    def fit(self, W, labeled, labels, classes=None) -> "PoissonLearning":
        """Solve the Poisson equation for the labels.

        Parameters
        ----------
        W : sparse matrix of shape (n, n)
            Symmetric non-negative weights.
        labeled : array-like of int, shape (l,)
        labels : array-like, shape (l,)
        classes : sequence, optional
            All classes (default: the distinct labels); a class without labels is never predicted.

        Raises
        ------
        ValueError
            Bad graph, labels or parameters (the message names the fix).
        RuntimeError
            The iteration did not converge in ``max_iter`` steps (a bipartite component, or a
            slowly mixing graph): use ``solver="cg"``.
        """
        self._check_params()
        W = check_graph(W)
        n = W.shape[0]
        # every node labelled is allowed: the Poisson equation's sources sum to zero per
        # component with or without unlabelled nodes (the leave-one-out values of every label)
        Lab, y, classes = check_labels(n, labeled, labels, classes, allow_all=True)
        T = len(classes)
        self._sizes(T)  # checked before anything is stored
        self._W = W
        self._deg = np.asarray(W.sum(axis=1)).ravel()
        _, self._comp = connected_components(W, directed=False)
        Y = np.zeros((Lab.size, T))
        Y[np.arange(Lab.size), y] = 1.0
        ybar = Y.mean(axis=0)
        B = np.zeros((n, T))
        offsets = {}
        held = np.unique(self._comp[Lab])
        for c in held:
            in_c = self._comp[Lab] == c
            ybar_c = Y[in_c].mean(axis=0)
            B[Lab[in_c]] = Y[in_c] - ybar_c
            offsets[int(c)] = ybar_c - ybar
        if held.size > 1:
            warnings.warn(f"the graph has {held.size} connected components holding labels; each is solved with its "
                          "own label mean (the Poisson equation has no solution otherwise). Connect the graph "
                          "(a larger k) for the paper's setting.", DisconnectedGraphWarning, stacklevel=2)
        reached = np.isin(self._comp, held)
        U = self._solve(B, reached)
        for c, off in offsets.items():
            U[self._comp == c] += off
        self.classes_ = classes
        self.labeled_ = Lab
        self.label_indices_ = y
        self.label_mean_ = ybar
        self.decision_values_ = U
        self.reached_ = reached
        self._loo = None
        return self

    # ------------------------------------------------------------------ solvers
    def _solve(self, B: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """``L U = B`` on the components marked by ``nodes`` (each one's ``B`` sums to 0),
        degree-weighted mean zero per component; 0 elsewhere. Shape (n, T)."""
        n, T = B.shape
        U = np.zeros((n, T))
        S = np.flatnonzero(nodes & (self._deg > 0))  # a labelled isolated node: U = 0 there
        self.n_iter_ = 0
        self.residual_ = np.zeros(T)
        if S.size == 0 or not B[S].any():
            return U
        system = self._system(S)
        W_S, d, comp = system["W_S"], system["d"], system["comp"]
        BS = self._project(B[S], d, comp, source=True)  # exactly in the range
        if self.solver == "direct":
            X = self._direct(W_S, d, comp, BS)
        elif self.solver == "cg" and self.factorise:  # the caller found the fill small: a kept LU
            X = self._direct(W_S, d, comp, BS, kept=system)
        elif self.solver == "iteration":
            X = self._iterate(W_S, d, BS)
        else:
            self._cg_nodes = S
            X = self._cg(W_S, d, comp, BS)
        X = self._project(X, d, comp)
        num = np.linalg.norm(BS - system["laplacian"] @ X, axis=0)
        den = np.linalg.norm(BS, axis=0)
        self.residual_ = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
        U[S] = X
        return U

    def _system(self, S: np.ndarray) -> dict:
        """The matrices of the nodes ``S`` (sorted): ``W_S``, degrees ``d``, components, the
        Laplacian ``D - W_S`` and CG's ``I - D^-1/2 W_S D^-1/2``; built once per node set and
        shared with the fits :meth:`add_label` derives (the set changes only when a label
        reaches a new component)."""
        held = getattr(self, "_system_cache", None)
        if held is not None and np.array_equal(held["S"], S):
            return held
        W_S = self._W[S][:, S]
        d = self._deg[S]
        r = 1.0 / np.sqrt(d)
        self._system_cache = {
            "S": S, "W_S": W_S, "d": d, "comp": self._comp[S], "laplacian": (sp.diags(d) - W_S).tocsr(),
            "normalised": (sp.identity(S.size, format="csr") - sp.diags(r) @ W_S @ sp.diags(r)).tocsr(),
        }
        return self._system_cache

    @staticmethod
    def _project(X: np.ndarray, d: np.ndarray, comp: np.ndarray, source: bool = False) -> np.ndarray:
        """Per component: a solution minus its degree-weighted mean (the normalisation), or
        (``source=True``) a right-hand side minus its sum spread in proportion to the degree
        (the rounding excess; afterwards it sums to zero, the range of ``L``)."""
        X = np.array(X, dtype=np.float64, copy=True)
        _, inv = np.unique(comp, return_inverse=True)
        k = inv.max() + 1
        tot = np.zeros((k, X.shape[1]))
        for t in range(X.shape[1]):  # bincount: np.add.at is ten times slower
            tot[:, t] = np.bincount(inv, weights=X[:, t] if source else d * X[:, t], minlength=k)
        vol = np.bincount(inv, weights=d, minlength=k)
        shift = (tot / vol[:, None])[inv]
        X -= shift * d[:, None] if source else shift
        return X

    def _direct(self, W_S, d, comp, BS, kept: dict | None = None) -> np.ndarray:
        """One node per component grounded, a sparse LU of the rest (kept in ``kept``, the node
        set's matrices of :meth:`_system`, when given)."""
        first = np.zeros(comp.size, dtype=bool)
        _, idx = np.unique(comp, return_index=True)
        first[idx] = True  # ground the first node of each component
        keep = np.flatnonzero(~first)
        X = np.zeros_like(BS)
        if keep.size:
            lu = None if kept is None else kept.get("lu")
            if lu is None:
                A = (sp.diags(d[keep]) - W_S[keep][:, keep]).tocsc()
                lu = spd_lu(A)
                if kept is not None:
                    kept["lu"] = lu
            X[keep] = lu.solve(np.ascontiguousarray(BS[keep]))
        return X

    def _iterate(self, W_S, d, BS) -> np.ndarray:
        s = d.size
        cap = int(self.max_iter) if self.max_iter is not None else max(10_000, 100 * s)
        norm_b = np.linalg.norm(BS)
        X = np.zeros_like(BS)
        Dinv = 1.0 / d
        Wc = W_S.tocsr()
        for it in range(1, cap + 1):
            R = BS - (d[:, None] * X - Wc @ X)  # B - L U
            if np.linalg.norm(R) <= self.tol * norm_b:
                self.n_iter_ = it - 1
                return X
            X += Dinv[:, None] * R
        raise RuntimeError(f"the Poisson iteration did not reach the relative residual {self.tol:g} in {cap} "
                           "steps (a bipartite or slowly mixing graph); use solver='cg' or 'direct', or raise "
                           "max_iter.")

    def _cg(self, W_S, d, comp, BS) -> np.ndarray:
        s, T = BS.shape
        r = 1.0 / np.sqrt(d)
        A = self._system_cache["normalised"]
        rhs = r[:, None] * BS
        cap = int(self.max_iter) if self.max_iter is not None else 10 * s
        multigrid = self.multigrid is not None and s >= AMG_ABOVE
        M = None
        if multigrid and self.multigrid.holds(self._cg_nodes):  # kept by the caller while the nodes are
            M = self._multigrid_operator(A, d, comp)
        X = np.zeros_like(BS)
        solved = []
        for t in range(T):
            if not rhs[:, t].any():
                continue
            # two classes: the second column's source is minus the first's (the rows of Y - ybar
            # sum to zero), and so is its solution: one CG run for both
            twin = next((u for u in solved if np.allclose(rhs[:, t], -rhs[:, u], rtol=1e-13, atol=0.0)), None)
            if twin is not None:
                X[:, t] = -X[:, twin]
                continue
            count = [0]

            def tick(_xk, count=count):
                count[0] += 1

            b = rhs[:, t]
            # Jacobi; where a hierarchy may be built, only JACOBI_BEFORE_MULTIGRID iterations first
            first = 0 if M is not None else min(cap, JACOBI_BEFORE_MULTIGRID) if multigrid else cap
            v, info = cg(A, b, rtol=self.tol, maxiter=first, callback=tick) if first else (None, 1)
            if info != 0 and multigrid and M is None and cap > count[0]:  # slowly mixing: build the hierarchy
                M = self._multigrid_operator(A, d, comp)
            if info != 0 and M is not None and cap > count[0]:
                # a preconditioner that stalls (it should not) costs MULTIGRID_MAX_ITER V-cycles, then Jacobi
                v, info = cg(A, b, x0=v, rtol=self.tol, maxiter=min(cap - count[0], MULTIGRID_MAX_ITER), M=M,
                             callback=tick)
                if info != 0 and cap > count[0]:
                    v, info = cg(A, b, x0=v, rtol=self.tol, maxiter=cap - count[0], callback=tick)
            if info != 0:
                warnings.warn(f"CG stopped before the relative residual {self.tol:g} (class column {t}, {cap} "
                              "iterations); the direct sparse solve answers instead.", PoissonSolverWarning,
                              stacklevel=4)
                return self._direct(W_S, d, comp, BS)
            X[:, t] = r * v
            solved.append(t)
            self.n_iter_ = max(self.n_iter_, count[0])
        return X

    def _multigrid_operator(self, A, d, comp):
        """The caller's hierarchy of ``A`` on this node set (built if not held), around the kernel
        ``D^1/2 1`` of each component and projected off it (:class:`NodeSetAMG`)."""
        return self.multigrid.operator(A, self._cg_nodes, null_vector=np.sqrt(d), components=comp)

    # ------------------------------------------------------------------ outputs
    def _check_fitted(self) -> None:
        if not hasattr(self, "decision_values_"):
            raise RuntimeError("this PoissonLearning is not fitted yet; call fit(W, labeled, labels) first.")

    def weighted_values(self, U=None, label_mean=None) -> np.ndarray:
        """``U`` with the class-size weighting ``s_t = b_t / ybar_t`` applied (if any), shape
        (n, T); classes without labels are ``-inf`` (never predicted)."""
        self._check_fitted()
        U = self.decision_values_ if U is None else np.asarray(U, dtype=np.float64)
        ybar = self.label_mean_ if label_mean is None else np.asarray(label_mean, dtype=np.float64)
        b = self._sizes(ybar.size)
        has = ybar > 0
        s = np.ones_like(ybar) if b is None else np.where(has, b / np.where(has, ybar, 1.0), 0.0)
        V = U * s
        V[:, ~has] = -np.inf
        return V

    def predict_indices(self) -> np.ndarray:
        """Class index per node, shape (n,); unreached nodes get the most frequent labelled class."""
        V = self.weighted_values()
        out = V.argmax(axis=1)
        out[~self.reached_] = int(np.argmax(self.label_mean_))
        return out

    def predict(self) -> np.ndarray:
        """Class label per node, shape (n,)."""
        idx = self.predict_indices()
        arr = np.empty(len(self.classes_), dtype=object)
        arr[:] = self.classes_
        return arr[idx]

    # ------------------------------------------------------------------ leave-one-out
    def unit_source_solutions(self) -> np.ndarray:
        """``G[L, L]`` (l, l): column ``k`` is ``g_{x_k}`` (module docstring) at the labelled nodes.

        One solve per label not held yet (for ``"direct"`` one LU and triangular solves)."""
        self._check_fitted()
        return self._unit_sources_of(self.labeled_).values(self.labeled_)

    def _held_sources(self) -> UnitSourceValues:
        """:attr:`unit_sources`, or this fit's own table when the caller keeps none."""
        if self.unit_sources is not None:
            return self.unit_sources
        if getattr(self, "_own_sources", None) is None:
            self._own_sources = UnitSourceValues()
        return self._own_sources

    def _region(self, components) -> np.ndarray:
        """The nodes a solve for sources on ``components`` runs on, bool (n,): those components
        and every one the fit reached, so that every solve of a fit shares its node set's
        matrices, kept LU and multigrid hierarchy (the system is block-diagonal by component: a
        source on one component leaves the others at 0, in as many CG iterations)."""
        return np.isin(self._comp, components) | self.reached_

    def _unit_sources_of(self, nodes) -> UnitSourceValues:
        """The held unit-source values (:class:`UnitSourceValues`; :attr:`unit_sources` when the
        caller keeps them, else this fit's own) after solving those of ``nodes`` not held yet,
        at most :data:`UNIT_SOURCE_BLOCK` at a time."""
        held = self._held_sources()
        L = np.array([j for j in np.asarray(nodes).tolist() if j not in held], dtype=np.intp)
        self.unit_iter_ = 0
        for a in range(0, L.size, UNIT_SOURCE_BLOCK):
            self._solve_unit_sources(L[a:a + UNIT_SOURCE_BLOCK])
        return held

    def _unit_source(self, node: int) -> np.ndarray:
        """``g_node`` (n,), zero outside its component: one solve, its values recorded as
        :meth:`_unit_sources_of` records them."""
        self.unit_iter_ = 0
        return self._solve_unit_sources(np.array([node], dtype=np.intp))[:, 0]

    def _solve_unit_sources(self, block: np.ndarray) -> np.ndarray:
        """Solve ``g_j`` for the nodes ``block`` (b,) on the fit's node set and record their values
        (:meth:`UnitSourceValues.record`); returns them, shape (n, b), zero outside each node's
        component."""
        held = self._held_sources()
        n = self._W.shape[0]
        E = np.zeros((n, block.size))
        E[block, np.arange(block.size)] = 1.0
        comp_b = self._comp[block]
        for c in np.unique(comp_b):  # e_i - pi_c: a source that sums to zero on the component
            in_c = self._comp == c
            vol = self._deg[in_c].sum()
            if vol > 0:
                E[np.ix_(in_c, np.flatnonzero(comp_b == c))] -= (self._deg[in_c] / vol)[:, None]
        kept = self.n_iter_, self.residual_  # the fit's, not these solves'
        G = self._solve(E, self._region(comp_b))
        self.unit_iter_ = max(self.unit_iter_, self.n_iter_)
        self.n_iter_, self.residual_ = kept
        for k, j in enumerate(block.tolist()):
            G[self._comp != self._comp[j], k] = 0.0
        held.record(block, G)
        return G

    def _source_sum_of(self, L: np.ndarray) -> np.ndarray:
        """``s = sum_{i in L} g_i`` (n,) of labels on one component: ONE solve for the summed
        source ``sum_i (e_i - pi_c)`` (the solution is linear in the sources)."""
        comp = self._comp[L[0]]
        nodes = self._comp == comp
        E = np.zeros((self._W.shape[0], 1))
        np.add.at(E[:, 0], L, 1.0)
        vol = self._deg[nodes].sum()
        if vol > 0:
            E[nodes, 0] -= L.size * self._deg[nodes] / vol
        kept = self.n_iter_, self.residual_
        s = np.where(nodes, self._solve(E, self._region([comp]))[:, 0], 0.0)
        self.n_iter_, self.residual_ = kept
        return s

    def add_label(self, node: int, class_index: int):
        """This fit with one more label, by linearity: at most ONE unit-source solve, no refit.

        On a component ``c`` holding labels, ``U = sum_{i in L_c} g_i (y_i - ybar_c)^T + (ybar_c -
        ybar)`` (the unit-source solutions ``g_i`` of the module docstring: the sources
        ``e_i - pi_c`` of labels whose coefficients sum to zero combine to ``B``; the offset is
        zero on a connected graph). One more label ``x_j`` of class ``t`` in ``c`` moves the
        means to ``ybar'_c`` and ``ybar'`` and adds a source (docs/algorithms.md §10)::

            U'_c = U_c + s_c (ybar_c - ybar'_c)^T + g_j (e_t - ybar'_c)^T
                   + (ybar'_c - ybar') - (ybar_c - ybar),              s_c = sum_{i in L_c} g_i

        the other reached components move by ``ybar - ybar'``; a label on a component without
        one makes it reached with ``U' = e_t - ybar'`` there (its source is zero: no solve).
        Exact up to the solves' residuals (the tests compare with the direct solve). The unit
        sources are kept in :attr:`unit_sources` (the leave-one-out reads the same ones).

        Parameters
        ----------
        node : int
            An unlabelled node.
        class_index : int
            Its class, an index into ``classes_``.

        Returns
        -------
        PoissonLearning
            A new fitted instance (this one is unchanged), sharing the graph's matrices.
        """
        self._check_fitted()
        node, t = int(node), int(class_index)
        L = self.labeled_
        T = len(self.classes_)
        if not 0 <= t < T or not 0 <= node < self._W.shape[0] or node in set(L.tolist()):
            raise ValueError(f"add_label needs an unlabelled node in [0, {self._W.shape[0] - 1}] and a class index "
                             f"in [0, {T - 1}]; got node {node}, class index {t}.")
        c = int(self._comp[node])
        in_c = self._comp == c
        same = self._comp[L] == c
        l = L.size
        e = np.zeros(T)
        e[t] = 1.0
        ybar = self.label_mean_
        ybar_new = (l * ybar + e) / (l + 1)
        U = self.decision_values_.copy()
        U[self.reached_ & ~in_c] += ybar - ybar_new
        sums = dict(getattr(self, "_source_sums", None) or {})  # component -> s_c on it, carried between labels
        g = None
        if same.any():
            m = int(same.sum())
            ybar_c = np.bincount(self.label_indices_[same], minlength=T) / m
            ybar_c_new = (m * ybar_c + e) / (m + 1)
            s = sums.get(c)  # on the component's nodes
            if s is None:
                s = self._source_sum_of(L[same])[in_c]
            g = self._unit_source(node)[in_c]
            U[in_c] += (np.outer(s, ybar_c - ybar_c_new) + np.outer(g, e - ybar_c_new)
                        + (ybar_c_new - ybar_new) - (ybar_c - ybar))
            sums[c] = s + g
        else:  # a label alone on its component: a zero source, the offset e_t - ybar'
            U[in_c] = e - ybar_new
            sums[c] = None  # g_node, solved when a second label arrives there
        twin = PoissonLearning(solver=self.solver, tol=self.tol, max_iter=self.max_iter,
                               class_sizes=self.class_sizes, multigrid=self.multigrid,
                               unit_sources=self.unit_sources, factorise=self.factorise)
        twin._W, twin._deg, twin._comp = self._W, self._deg, self._comp
        twin._own_sources = getattr(self, "_own_sources", None)
        twin._system_cache = getattr(self, "_system_cache", None)
        twin.classes_ = self.classes_
        twin.labeled_ = np.append(L, node).astype(np.int64)
        twin.label_indices_ = np.append(self.label_indices_, t).astype(np.int64)
        twin.label_mean_ = ybar_new
        twin.decision_values_ = U
        twin.reached_ = self.reached_ | in_c
        twin.n_iter_ = getattr(self, "unit_iter_", 0) if g is not None else 0  # the unit-source solve's
        twin.residual_ = np.full(T, np.nan)  # not computed (a product with the Laplacian per class)
        twin._source_sums = sums
        twin._loo = None
        return twin

    def loo_decision_values(self) -> np.ndarray:
        """``U`` at each labelled node without its own label, shape (l, T), rows in the order of
        ``labeled_`` (exact; the module docstring's formula)."""
        self._check_fitted()
        if self._loo is None:
            self._loo = self._loo_values()
        return self._loo.copy()

    def _loo_values(self) -> np.ndarray:
        L, y = self.labeled_, self.label_indices_
        l, T = L.size, len(self.classes_)
        G = self.unit_source_solutions()
        Y = np.zeros((l, T))
        Y[np.arange(l), y] = 1.0
        comp_L = self._comp[L]
        out = np.zeros((l, T))
        for k in range(l):
            others = np.arange(l) != k
            if not others.any():
                continue
            ybar_rest = Y[others].mean(axis=0)
            same = others & (comp_L == comp_L[k])
            if not same.any():
                continue  # its component is label-free without it: U = 0 (unreached)
            ybar_c = Y[same].mean(axis=0)
            out[k] = G[k, same] @ (Y[same] - ybar_c) + (ybar_c - ybar_rest)
        return out

    def loo_predict_indices(self) -> np.ndarray:
        """Each labelled node's predicted class index without its own label, shape (l,).

        The weighting and the classes that can be predicted follow the remaining labels; a
        node left unreached gets the most frequent remaining class."""
        loo = self.loo_decision_values()
        L, y = self.labeled_, self.label_indices_
        T = len(self.classes_)
        comp_L = self._comp[L]
        out = np.zeros(L.size, dtype=np.int64)
        for k in range(L.size):
            others = np.arange(L.size) != k
            counts = np.bincount(y[others], minlength=T).astype(np.float64)
            ybar_rest = counts / max(counts.sum(), 1.0)
            if not (others & (comp_L == comp_L[k])).any():
                out[k] = int(np.argmax(ybar_rest))
            else:
                out[k] = int(self.weighted_values(loo[k:k + 1], ybar_rest).argmax(axis=1)[0])
        return out
