"""Poisson learning: the paper's iteration and CG against a direct sparse solve, exact LOO against
refits, agreement with GraphLearning, and the variance criteria against dense covariances."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose
from scipy.sparse.linalg import spsolve
from sklearn.datasets import make_blobs

from core.graph.poisson import DisconnectedGraphWarning, PoissonLearning, PoissonSolverWarning, UnitSourceValues
from core.graph.variance import variance_reduction
from core.kernels import knn_graph, laplacian_eigenpairs


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(300, centers=[[0, 0], [3, 0], [0, 3], [3, 3]], cluster_std=1.0, random_state=0)
    rng = np.random.default_rng(0)
    L = np.concatenate([rng.choice(np.flatnonzero(y == c), 2, replace=False) for c in range(4)])
    return X, y, L


def oracle_poisson(W, L, yL, T):
    """The paper's system written out: L u = sum_j (y_j - ybar) delta_j with sum_i d_i u_i = 0,
    solved densely as the bordered system [[L, d], [d^T, 0]] (connected graph)."""
    W = sp.csr_matrix(W).toarray()
    n = W.shape[0]
    d = W.sum(1)
    Y = np.zeros((len(L), T))
    Y[np.arange(len(L)), yL] = 1
    B = np.zeros((n, T))
    B[L] = Y - Y.mean(0)
    A = np.block([[np.diag(d) - W, d[:, None]], [d[None, :], np.zeros((1, 1))]])
    sol = np.linalg.solve(A, np.vstack([B, np.zeros((1, T))]))
    return sol[:n]


@pytest.mark.parametrize("weights", ["connectivity", "heat"])
@pytest.mark.parametrize("solver", ["iteration", "cg", "direct"])
def test_every_solver_matches_the_direct_solve_of_the_same_system(blobs, weights, solver):
    X, y, L = blobs
    W = knn_graph(X, 10, weights=weights)
    model = PoissonLearning(solver=solver, tol=1e-12).fit(W, L, y[L])
    U = oracle_poisson(W, L, y[L], 4)
    assert_allclose(model.decision_values_, U, atol=1e-8)
    d = np.asarray(W.sum(1)).ravel()
    assert_allclose(d @ model.decision_values_, 0.0, atol=1e-9)  # the paper's normalisation
    assert (model.residual_ < 1e-10).all()
    assert (model.predict_indices() == y).mean() > 0.8


def test_the_iteration_is_the_papers_algorithm(blobs):
    """U_T of Algorithm 1 (U <- U + D^-1 (B - L U), written out) converges to the same U."""
    X, y, L = blobs
    W = knn_graph(X, 10).toarray()
    d = W.sum(1)
    B = np.zeros((len(y), 4))
    Y = np.eye(4)[y[L]]
    B[L] = Y - Y.mean(0)
    U = np.zeros_like(B)
    for _ in range(6000):
        U = U + (B - (d[:, None] * U - W @ U)) / d[:, None]
    assert_allclose(U, PoissonLearning(solver="direct").fit(W, L, y[L]).decision_values_, atol=1e-8)


def test_loo_equals_refits_without_each_label(blobs):
    X, y, L = blobs
    W = knn_graph(X, 10)
    for solver in ("direct", "cg"):
        model = PoissonLearning(solver=solver, tol=1e-12, class_sizes="uniform").fit(W, L, y[L])
        loo = model.loo_decision_values()
        pred = model.loo_predict_indices()
        for k in range(L.size):
            keep = np.arange(L.size) != k
            refit = PoissonLearning(solver="direct", class_sizes="uniform").fit(W, L[keep], y[L][keep],
                                                                              classes=[0, 1, 2, 3])
            assert_allclose(loo[k], refit.decision_values_[L[k]], atol=1e-8)
            assert pred[k] == refit.predict_indices()[L[k]]


def test_every_node_labelled_fits_and_its_loo_equals_refits_without_each_label():
    """``labeler suspects --model poisson`` fits every row: allowed (the sources sum to zero
    without unlabelled nodes); each row's leave-one-out value is the refit without it."""
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(0, 1, (25, 2)), rng.normal(4, 1, (25, 2))])
    y = np.repeat([0, 1], 25)
    W = knn_graph(X, 6)
    L = np.arange(50)
    model = PoissonLearning(solver="direct").fit(W, L, y)
    loo = model.loo_decision_values()
    for k in (0, 7, 31, 49):
        keep = L != k
        refit = PoissonLearning(solver="direct").fit(W, L[keep], y[keep], classes=[0, 1])
        assert_allclose(loo[k], refit.decision_values_[k], atol=1e-8)


def test_loo_on_a_graph_with_two_labelled_components():
    rng = np.random.default_rng(1)
    X = np.vstack([rng.normal(0, 1, (60, 2)), rng.normal(40, 1, (60, 2))])
    W = knn_graph(X, 6)
    L = np.array([0, 1, 2, 60, 61, 62, 63])
    y = np.array([0, 1, 1, 2, 2, 2, 0])
    with pytest.warns(DisconnectedGraphWarning):
        model = PoissonLearning(solver="direct").fit(W, L, y)
    loo = model.loo_decision_values()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DisconnectedGraphWarning)
        for k in range(L.size):
            keep = np.arange(L.size) != k
            refit = PoissonLearning(solver="direct").fit(W, L[keep], y[keep], classes=[0, 1, 2])
            assert_allclose(loo[k], refit.decision_values_[L[k]], atol=1e-8)


def test_a_component_without_labels_is_unreached_and_one_class_components_predict_their_class():
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(40, 1, (40, 2)), rng.normal(80, 1, (40, 2))])
    W = knn_graph(X, 5)
    with pytest.warns(DisconnectedGraphWarning):
        model = PoissonLearning(solver="cg").fit(W, [0, 1, 40], ["a", "b", "c"])
    assert not model.reached_[80:].any() and model.reached_[:80].all()
    assert_allclose(model.decision_values_[80:], 0.0)
    assert (model.predict()[40:80] == "c").all()


def test_class_sizes_weighting_is_the_papers_rescaling(blobs):
    X, y, L = blobs
    W = knn_graph(X, 10)
    L = np.concatenate([L, np.flatnonzero(y == 0)[10:16]])  # class 0 over-represented
    plain = PoissonLearning(solver="direct").fit(W, L, y[L])
    b = np.array([0.1, 0.2, 0.3, 0.4])
    weighted = PoissonLearning(solver="direct", class_sizes=b).fit(W, L, y[L])
    s = b / plain.label_mean_
    assert_allclose(weighted.weighted_values(), plain.decision_values_ * s)
    assert (weighted.predict_indices() == (plain.decision_values_ * s).argmax(1)).all()


def test_a_class_without_labels_is_never_predicted(blobs):
    X, y, L = blobs
    model = PoissonLearning(solver="direct").fit(knn_graph(X, 10), L, y[L], classes=[0, 1, 2, 3, 9])
    assert_allclose(model.decision_values_[:, 4], 0.0)
    assert 9 not in set(model.predict().tolist())


def test_cg_stopping_early_falls_back_to_the_direct_solve_with_a_warning(blobs):
    X, y, L = blobs
    W = knn_graph(X, 10)
    with pytest.warns(PoissonSolverWarning):
        model = PoissonLearning(solver="cg", tol=1e-12, max_iter=2).fit(W, L, y[L])
    assert_allclose(model.decision_values_, oracle_poisson(W, L, y[L], 4), atol=1e-8)


def test_the_iteration_refuses_a_bipartite_graph():
    W = sp.csr_matrix(np.array([[0, 1, 0, 1], [1, 0, 1, 0], [0, 1, 0, 1], [1, 0, 1, 0]], float))  # a 4-cycle
    with pytest.raises(RuntimeError, match="solver='cg'"):
        PoissonLearning(solver="iteration", max_iter=500).fit(W, [0, 1], [0, 1])
    U = PoissonLearning(solver="direct").fit(W, [0, 1], [0, 1]).decision_values_
    assert_allclose(U, oracle_poisson(W, np.array([0, 1]), np.array([0, 1]), 2), atol=1e-12)


@pytest.mark.parametrize("bad,match", [({"solver": "lu"}, "solver"), ({"tol": 0}, "tol"),
                                       ({"max_iter": 0}, "max_iter"), ({"class_sizes": [1, 2]}, "class_sizes"),
                                       ({"class_sizes": "balanced"}, "uniform")])
def test_bad_parameters_are_named(blobs, bad, match):
    X, y, L = blobs
    with pytest.raises(ValueError, match=match):
        PoissonLearning(**bad).fit(knn_graph(X, 5), L, y[L])


def test_agrees_with_graphlearning_poisson(blobs):
    gl = pytest.importorskip("graphlearning")
    X, y, L = blobs
    W = knn_graph(X, 10)
    ours = PoissonLearning(solver="cg", tol=1e-12).fit(W, L, y[L])
    theirs = gl.ssl.poisson(W, tol=1e-12)
    u = theirs.fit(L, y[L])
    assert_allclose(ours.decision_values_, u, atol=1e-8)
    assert (ours.predict_indices() == theirs.predict()).all()


# ---------------------------------------------------------------------- variance criteria
def dense_posterior(lam, V, labeled, gamma2, tau):
    C0 = V @ np.diag(1.0 / (lam + tau)) @ V.T
    if len(labeled) == 0:
        return C0
    K = C0[np.ix_(labeled, labeled)] + gamma2 * np.eye(len(labeled))
    return C0 - C0[:, labeled] @ np.linalg.solve(K, C0[labeled])


@pytest.mark.parametrize("criterion", ["vopt", "sigmaopt"])
@pytest.mark.parametrize("n_labeled", [0, 5])
def test_variance_reduction_equals_the_drop_of_a_dense_posterior(blobs, criterion, n_labeled):
    X, y, L = blobs
    X, L = X[:120], np.arange(n_labeled) * 7
    lam, V = laplacian_eigenpairs(knn_graph(X, 8), 30)
    gamma2, tau = 0.01, 1e-2
    cand = np.setdiff1d(np.arange(120), L)[:25]
    got = variance_reduction(lam, V, L, cand, criterion=criterion, gamma2=gamma2, tau=tau)
    C = dense_posterior(lam, V, L, gamma2, tau)
    want = []
    for k in cand:
        C2 = dense_posterior(lam, V, np.append(L, k), gamma2, tau)
        want.append(np.trace(C) - np.trace(C2) if criterion == "vopt" else C.sum() - C2.sum())
    assert_allclose(got, want, rtol=1e-7)


def test_vopt_ranks_as_graphlearning_var_opt(blobs):
    gl = pytest.importorskip("graphlearning")
    X, y, L = blobs
    lam, V = laplacian_eigenpairs(knn_graph(X, 10), 40)
    acq = gl.active_learning.var_opt(C=np.diag(1.0 / (lam + 1e-11)), V=V.copy(), gamma2=0.01)
    acq.update(L, y[L])
    cand = np.setdiff1d(np.arange(len(y)), L)
    theirs = acq.compute(None, cand)
    ours = variance_reduction(lam, V, L, cand)
    assert_allclose(ours, theirs, rtol=1e-4)  # their rank-one downdates of a 1e11 prior round at ~1e-5
    assert ours.argmax() == theirs.argmax()


def _grounded_solve(W, source):
    """``L g = source`` on each component by ``spsolve`` with its first node grounded, then the
    degree-weighted mean removed per component (the oracle of the unit-source solves)."""
    from scipy.sparse.csgraph import connected_components

    W = sp.csr_matrix(W)
    d = np.asarray(W.sum(1)).ravel()
    _, comp = connected_components(W, directed=False)
    g = np.zeros(W.shape[0])
    for c in np.unique(comp):
        nodes = np.flatnonzero(comp == c)
        if not source[nodes].any():
            continue
        keep = nodes[1:]
        Lk = (sp.diags(d[keep]) - W[keep][:, keep]).tocsc()
        g[keep] = spsolve(Lk, source[keep])
        g[nodes] -= d[nodes] @ g[nodes] / d[nodes].sum()
    return g


def test_multigrid_cg_converges_on_a_graph_with_hubs(monkeypatch):
    """A kNN graph in 32 dimensions has hubs (degrees from k to 10-20 k), so the normalised
    Laplacian's kernel ``D^1/2 1`` is far from the constant a multigrid hierarchy assumes by
    default: built around the constant, its V-cycle made CG stall (the multigrid CG of the
    unit-source solves ran to its cap of 10 n iterations at 10^5 points). Built around the
    kernel and projected off it, CG needs a few dozen iterations, and every unit-source
    solution equals the grounded sparse solve of its component."""
    import core.graph.poisson as poisson
    from core.graph.amg_precondition import NodeSetAMG
    from core.kernels.graph import neighbour_graph

    rng = np.random.default_rng(0)
    n, dim = 3000, 32  # seed 0: a hierarchy around the constant has a 1 x 1 near-singular coarsest level
    centres = rng.standard_normal((6, dim)) * 1.5  # benchmarks/scale.py's mixture: 6 clusters
    X = centres[rng.integers(6, size=n)] + rng.standard_normal((n, dim))
    from sklearn.neighbors import NearestNeighbors

    dist, ind = NearestNeighbors(n_neighbors=11).fit(X).kneighbors(X)
    W = neighbour_graph(ind[:, 1:], dist[:, 1:])
    deg = np.asarray(W.sum(1)).ravel()
    assert deg.max() > 5 * deg.min()  # hubs: the case this test is about
    monkeypatch.setattr(poisson, "AMG_ABOVE", 50)
    monkeypatch.setattr(poisson, "JACOBI_BEFORE_MULTIGRID", 0)  # the hierarchy at once
    L = rng.choice(n, 6, replace=False)
    y = np.arange(6) % 2
    with warnings.catch_warnings():
        warnings.simplefilter("error", PoissonSolverWarning)  # no fallback to the direct solve
        warnings.simplefilter("ignore", DisconnectedGraphWarning)
        amg = NodeSetAMG()
        model = PoissonLearning(solver="cg", tol=1e-10, multigrid=amg, max_iter=500).fit(W, L, y)
        assert model.n_iter_ <= 40
        G = model.unit_source_solutions()
        assert model.unit_iter_ <= 40
        full = {j: model._unit_source(j) for j in L.tolist()}
        assert model.unit_iter_ <= 40
    assert amg.n_builds == 1  # the unit sources ran on the fit's node set and hierarchy
    _, comp = poisson.connected_components(W, directed=False)
    for k, j in enumerate(L.tolist()):
        source = np.zeros(n)
        source[j] = 1.0
        nodes = comp == comp[j]
        source[nodes] -= deg[nodes] / deg[nodes].sum()
        oracle = _grounded_solve(W, source)
        assert_allclose(full[j], oracle, atol=1e-8)
        assert_allclose(G[:, k], oracle[L], atol=1e-8)


def test_the_projected_v_cycle_is_symmetric_semidefinite_and_zero_on_the_kernel():
    """NodeSetAMG with the kernel ``sqrt(d)`` of a normalised Laplacian on two components:
    the preconditioner is symmetric, positive on the range, zero on each component's kernel."""
    from core.graph.amg_precondition import NodeSetAMG

    X, _ = make_blobs(240, centers=[[0, 0], [40, 40]], cluster_std=1.0, random_state=1)
    W = knn_graph(X, 6)
    _, comp = poisson_components(W)
    d = np.asarray(W.sum(1)).ravel()
    r = 1.0 / np.sqrt(d)
    A = sp.identity(240) - sp.diags(r) @ W @ sp.diags(r)
    M = NodeSetAMG().operator(A, np.arange(240), null_vector=np.sqrt(d), components=comp)
    dense = np.column_stack([M.matvec(e) for e in np.eye(240)])
    assert_allclose(dense, dense.T, atol=1e-10)
    for c in np.unique(comp):
        k = np.where(comp == c, np.sqrt(d), 0.0)
        assert_allclose(dense @ k, 0.0, atol=1e-10)
    eig = np.linalg.eigvalsh((dense + dense.T) / 2)
    assert eig.min() > -1e-10 and np.sum(eig > 1e-8) == 240 - np.unique(comp).size


def poisson_components(W):
    from scipy.sparse.csgraph import connected_components

    return connected_components(W, directed=False)


def test_two_classes_take_one_cg_run(blobs, monkeypatch):
    """With two classes the second column of B is minus the first, so is its solution: one CG
    run answers both (counted), and the answer is the direct solve's."""
    import core.graph.poisson as poisson

    X, y, L = blobs
    W = knn_graph(X, 10)
    runs = []
    real_cg = poisson.cg

    def counted(*args, **kwargs):
        runs.append(1)
        return real_cg(*args, **kwargs)

    monkeypatch.setattr(poisson, "cg", counted)
    yb = y[L] % 2
    model = PoissonLearning(solver="cg", tol=1e-12).fit(W, L, yb)
    assert len(runs) == 1
    assert_allclose(model.decision_values_, oracle_poisson(W, L, yb, 2), atol=1e-8)
    assert (model.residual_ < 1e-10).all()


def _mixture_graph(n, seed):
    from sklearn.neighbors import NearestNeighbors

    from core.kernels.graph import neighbour_graph

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((2, 32))[rng.integers(2, size=n)] * 0.3 + rng.standard_normal((n, 32))
    dist, ind = NearestNeighbors(n_neighbors=11).fit(X).kneighbors(X)
    return neighbour_graph(ind[:, 1:], dist[:, 1:])


def test_the_multigrid_is_built_only_where_jacobi_is_slow(monkeypatch):
    """CG runs JACOBI_BEFORE_MULTIGRID Jacobi iterations before it builds a hierarchy: a kNN
    graph in 32 dimensions (an expander) converges within them and builds none; two-moons (a
    long, thin graph) builds one at its first solve and keeps it. Both equal the direct solve."""
    import core.graph.poisson as poisson
    from sklearn.datasets import make_moons

    from core.graph.amg_precondition import NodeSetAMG

    monkeypatch.setattr(poisson, "AMG_ABOVE", 50)
    X, _ = make_moons(3000, noise=0.1, random_state=0)  # connected; Jacobi CG: 246 iterations
    cases = [(_mixture_graph(3000, 0), 0), (knn_graph(X, 10), 1)]  # the mixture: 21 Jacobi iterations
    for W, builds in cases:
        L = np.array([5, 17, 40, 41])
        y = np.array([0, 1, 0, 1])
        amg = NodeSetAMG()
        model = PoissonLearning(solver="cg", tol=1e-10, multigrid=amg).fit(W, L, y)
        G = model.unit_source_solutions()
        assert amg.n_builds == builds, (builds, model.n_iter_)
        direct = PoissonLearning(solver="direct").fit(W, L, y)
        assert_allclose(model.decision_values_, direct.decision_values_, atol=1e-8)
        assert_allclose(G, direct.unit_source_solutions(), atol=1e-8)


def test_the_unit_source_values_kept_are_symmetric_and_those_of_full_solves(blobs):
    """The leave-one-out keeps g_j at the held nodes only, by the symmetry g_j(x_i) = g_i(x_j)
    on a component: against the full solutions (direct), labels added one by one."""
    X, y, L = blobs
    W = knn_graph(X, 10)
    held = UnitSourceValues()
    model = PoissonLearning(solver="cg", tol=1e-12, unit_sources=held).fit(W, L[:3], y[L[:3]], classes=[0, 1, 2, 3])
    model.unit_source_solutions()
    for j in L[3:]:
        model = model.add_label(int(j), int(y[j]))
    G = model.unit_source_solutions()
    assert_allclose(G, G.T, atol=1e-9)
    full = np.stack([model._unit_source(int(j)) for j in L], axis=1)  # (n, l)
    assert_allclose(G, full[L], atol=1e-9)
    direct = PoissonLearning(solver="direct").fit(W, L, y[L], classes=[0, 1, 2, 3])
    assert_allclose(model.decision_values_, direct.decision_values_, atol=1e-8)
    assert_allclose(model.loo_decision_values(), direct.loo_decision_values(), atol=1e-8)
    assert len(held) == len(L) and held._table.shape[0] <= 16  # values at held nodes, not vectors of n


def test_the_kept_table_grows_and_solves_in_blocks(blobs, monkeypatch):
    """40 labels solved 7 at a time, then 20 more one by one (the table grows past its first
    16 x 16): G[L, L] equals the direct solver's, which keeps its own table."""
    import core.graph.poisson as poisson

    monkeypatch.setattr(poisson, "UNIT_SOURCE_BLOCK", 7)
    X, y, _ = blobs
    W = knn_graph(X, 10)
    L = np.random.default_rng(9).permutation(300)[:60]
    held = UnitSourceValues()
    model = PoissonLearning(solver="cg", tol=1e-12, unit_sources=held).fit(W, L[:40], y[L[:40]], classes=[0, 1, 2, 3])
    model.unit_source_solutions()
    for j in L[40:]:
        model = model.add_label(int(j), int(y[j]))
    direct = PoissonLearning(solver="direct").fit(W, L, y[L], classes=[0, 1, 2, 3])
    assert_allclose(model.unit_source_solutions(), direct.unit_source_solutions(), atol=1e-9)
    assert len(held) == 60 and held._table.shape[0] < 120


def test_the_learner_factorises_only_graphs_where_jacobi_is_slow(monkeypatch):
    """The kept sparse LU is for graphs that fill little AND mix slowly: with the fill bound
    lifted, two-moons (246 Jacobi iterations) is factorised, the 32-dimensional mixture (21)
    is solved by CG; both learners equal the direct solve."""
    import core.graph.poisson_learner as poisson_learner
    from sklearn.datasets import make_moons

    from core.graph.poisson import jacobi_cg_converges
    from core.graph.poisson_learner import PoissonLearner

    monkeypatch.setattr(poisson_learner, "DIRECT_FILL_MAX", 10**12)
    X, _ = make_moons(3000, noise=0.1, random_state=0)
    for W, factorised in [(knn_graph(X, 10), True), (_mixture_graph(3000, 0), False)]:
        assert jacobi_cg_converges(W, 100) == (not factorised)
        learner = PoissonLearner(W, ["a", "b"])
        learner.add_many([5, 17, 40], ["a", "b", "a"])
        learner.add(41, "b")
        assert learner._direct == factorised
        direct = PoissonLearning(solver="direct").fit(W, [5, 17, 40, 41], [0, 1, 0, 1])
        assert_allclose(learner.raw_values, direct.decision_values_, atol=1e-8)
