"""The harmonic step's fast paths (core/graph/active.py, core/graph/amg_precondition.py) against the
obvious oracle: a fresh sparse-LU fit of the same labels (core.graph.HarmonicFunction, solver
"direct"), after every label, an undo, a label in an unreached component, and on ten classes.

The fast paths: one label added is ONE solve of the old system's Green's function whatever the
number of classes (``F' = F + g (e_y - F_j) / g_j``), and the system is preconditioned by a
multigrid hierarchy kept while labels arrive. Small pools with the threshold lowered, so that both
run here."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose
from sklearn.datasets import make_blobs, make_moons

import core.graph.active as active
from core.graph import HarmonicFunction
from core.graph.active import GraphLearner
from core.graph.amg_precondition import GroundedLaplacianAMG
from core.graph.poisson import DisconnectedGraphWarning
from core.kernels.graph import knn_graph


def _oracle(W, learner) -> np.ndarray:
    labels = learner.labels
    L = np.fromiter(labels, dtype=np.intp)
    codes = np.array([learner.classes.index(v) for v in labels.values()])
    fit = HarmonicFunction(solver="direct").fit(W, L, codes, classes=np.arange(len(learner.classes)))
    return fit.decision_values_


@pytest.fixture(params=[1, 150, "lu"], ids=["multigrid", "jacobi", "kept lu"])
def low_threshold(monkeypatch, request):
    """The fast paths on small pools: multigrid forced (the Jacobi probe given 1 iteration, no
    sparse LU), Jacobi kept (it converges within the probe on these graphs), or the kept sparse
    LU (the probe given 1 iteration, the LU allowed)."""
    monkeypatch.setattr(active, "AMG_ABOVE", 50)
    monkeypatch.setattr(active, "JACOBI_PROBE_ITER", 1 if request.param == "lu" else request.param)
    monkeypatch.setattr(active, "DIRECT_FILL_MAX", 10**12 if request.param == "lu" else 0)
    return request.param


def test_one_label_at_a_time_matches_a_fresh_direct_fit(low_threshold):
    X, y = make_moons(600, noise=0.08, random_state=0)
    W = knn_graph(X, 8)
    g = GraphLearner(W, ["0", "1"], "harmonic")
    order = np.random.default_rng(0).permutation(600)[:12]
    fast = 0
    for k, i in enumerate(order):
        before = g._amg.n_builds
        g.add(int(i), str(y[i]))
        if k >= 2:  # both classes labelled: the oracle has both columns
            assert_allclose(g._F, _oracle(W, g), atol=1e-8)
        fast += g._harmonic_fit is not None and g._amg.n_builds == before
    assert fast >= 8  # the one-solve step (and the kept hierarchy) were used
    assert (g._amg.n_builds > 0) == (low_threshold == 1)
    assert (g._direct.n_factorisations > 0) == (low_threshold == "lu")
    g.remove(int(order[3]))  # an undo: U grows, a fresh fit
    assert_allclose(g._F, _oracle(W, g), atol=1e-8)
    g.add(int(order[3]), str(y[order[3]]))
    assert_allclose(g._F, _oracle(W, g), atol=1e-8)


def test_ten_classes_and_a_label_in_an_unreached_component(low_threshold):
    X, y = make_blobs(700, centers=10, cluster_std=0.4, random_state=1)
    W = knn_graph(X, 6)
    classes = [str(c) for c in range(10)]
    g = GraphLearner(W, classes, "harmonic")
    rng = np.random.default_rng(1)
    for i in rng.permutation(700)[:25]:
        g.add(int(i), str(y[i]))
        if len(set(g.labels.values())) == 10:
            assert_allclose(g._F, _oracle(W, g), atol=1e-8)
    # two disconnected copies: a label in the second one grows the reached set (a fresh fit)
    W2 = sp.block_diag([W, W]).tocsr()
    g2 = GraphLearner(W2, classes, "harmonic")
    picks = [int(i) for i in rng.permutation(700)[:15]]
    for i in picks:
        g2.add(i, str(y[i]))
    g2.add(700 + picks[0], str(y[picks[0]]))
    g2.add(700 + picks[1], str(y[picks[1]]))
    F = g2._F
    expect = _oracle(W2, g2)
    assert_allclose(F, expect, atol=1e-8)


def test_the_restricted_v_cycle_is_symmetric_positive_definite():
    X, _ = make_moons(300, noise=0.08, random_state=2)
    W = knn_graph(X, 8)
    deg = np.asarray(W.sum(1)).ravel()
    free = np.arange(3, 300)
    A = (sp.diags(deg[free]) - W[free][:, free]).tocsc()
    amg = GroundedLaplacianAMG()
    amg.operator(A, free)
    sub = free[5:]
    M = amg.operator(A[5:][:, 5:], sub)  # kept, restricted
    assert amg.n_builds == 1
    dense = np.column_stack([M.matvec(e) for e in np.eye(sub.size)])
    assert_allclose(dense, dense.T, atol=1e-10)
    assert np.linalg.eigvalsh((dense + dense.T) / 2).min() > 0
    wider = np.arange(1, 300)  # a superset of the hierarchy's nodes (an undo): rebuilt
    amg.operator((sp.diags(deg[wider]) - W[wider][:, wider]).tocsc(), wider)
    assert amg.n_builds == 2


def test_poisson_with_the_kept_multigrid_matches_the_direct_solve(monkeypatch):
    """Poisson learning's CG preconditioned by the hierarchy kept between fits (the session's
    learner) gives the direct sparse solve's answer, label after label."""
    import core.graph.poisson as poisson
    from core.graph.amg_precondition import NodeSetAMG
    from core.graph.poisson import PoissonLearning

    monkeypatch.setattr(poisson, "AMG_ABOVE", 50)
    monkeypatch.setattr(poisson, "JACOBI_BEFORE_MULTIGRID", 0)  # the hierarchy at once
    X, y = make_blobs(500, centers=3, cluster_std=2.5, random_state=3)  # overlapping: one component
    W = knn_graph(X, 10)
    amg = NodeSetAMG()
    order = np.random.default_rng(3).permutation(500)[:8]
    for k in range(3, 9):
        L = order[:k]
        fast = PoissonLearning(solver="cg", tol=1e-10, multigrid=amg).fit(W, L, y[L], classes=[0, 1, 2])
        direct = PoissonLearning(solver="direct").fit(W, L, y[L], classes=[0, 1, 2])
        assert_allclose(fast.decision_values_, direct.decision_values_, atol=1e-7)
        assert fast.n_iter_ < 100
    assert amg.n_builds == 1  # one graph component: the same nodes at every fit


def test_the_loo_columns_carried_over_labels_match_a_fresh_learner(low_threshold, monkeypatch):
    """The harmonic LOO (the app's calibration reads it on every label) from columns carried over
    each label added (no solve), against a fresh learner that solves them (sparse LU)."""
    X, y = make_moons(500, noise=0.1, random_state=4)
    W = knn_graph(X, 8)
    g = GraphLearner(W, ["0", "1"], "harmonic")
    order = np.random.default_rng(4).permutation(500)[:14]
    for k, i in enumerate(order):
        g.add(int(i), str(y[i]))
        if k == 3:
            g.loo_decision_values()  # solved once here, then carried over
    carried = g._loo_columns is not None
    fast = g.loo_decision_values()
    monkeypatch.setattr(active, "AMG_ABOVE", 10**9)
    fresh = GraphLearner(W, ["0", "1"], "harmonic")
    fresh.add_many([int(i) for i in order], [str(y[i]) for i in order])
    assert carried
    assert_allclose(fast, fresh.loo_decision_values(), atol=1e-8)
    g.remove(int(order[5]))  # an undo: solved again
    fresh.remove(int(order[5]))
    assert_allclose(g.loo_decision_values(), fresh.loo_decision_values(), atol=1e-8)


def test_lgc_loo_with_the_kept_diagonal_matches_a_fresh_learner():
    """LGC's LOO keeps each node's (A^-1)_jj (A = D - alpha W does not change with the labels):
    the values after more labels, an undo and a new alpha equal a fresh learner's."""
    X, y = make_moons(400, noise=0.1, random_state=5)
    W = knn_graph(X, 8)
    g = GraphLearner(W, ["0", "1"], "lgc")
    order = [int(i) for i in np.random.default_rng(5).permutation(400)[:12]]
    for k, i in enumerate(order):
        g.add(i, str(y[i]))
        if k in (3, 8):
            g.loo_decision_values()
    g.remove(order[2])
    g.set_params(alpha=0.9)

    fresh = GraphLearner(W, ["0", "1"], "lgc", alpha=0.9)
    fresh.add_many([i for i in order if i != order[2]], [str(y[i]) for i in order if i != order[2]])
    assert_allclose(g.loo_decision_values(), fresh.loo_decision_values(), atol=1e-9)


def test_an_lgc_twin_keeps_its_own_diagonal_entries():
    """A twin (refitted in another thread) fills its own dict of (A^-1)_jj: the learner it was
    made from, read meanwhile, is not written by the twin."""
    X, y = make_moons(300, noise=0.1, random_state=7)
    g = GraphLearner(knn_graph(X, 8), ["0", "1"], "lgc")
    order = [int(i) for i in np.random.default_rng(7).permutation(300)[:8]]
    for i in order[:4]:
        g.add(i, str(y[i]))
    g.loo_decision_values()
    known = dict(g._lgc_diag[1])
    twin = g.twin()
    for i in order[4:]:
        twin.add(i, str(y[i]))
    twin.loo_decision_values()
    assert twin._lgc_diag[1] is not g._lgc_diag[1] and set(twin._lgc_diag[1]) > set(known)
    assert g._lgc_diag[1] == known


def test_poisson_loo_with_kept_unit_sources_matches_a_fresh_learner():
    """Poisson's LOO keeps each labelled node's unit-source solution between refits (it depends
    on the node alone): after more labels and an undo, a fresh learner's values."""
    from core.graph.poisson_learner import PoissonLearner

    X, y = make_blobs(400, centers=3, cluster_std=2.5, random_state=6)
    W = knn_graph(X, 10)
    classes = ["0", "1", "2"]
    g = PoissonLearner(W, classes)
    order = [int(i) for i in np.random.default_rng(6).permutation(400)[:12]]
    for k, i in enumerate(order):
        g.add(i, str(y[i]))
        if k in (4, 8):
            g.loo_decision_values()
    g.remove(order[3])
    rest = [i for i in order if i != order[3]]
    fresh = PoissonLearner(W, classes)
    fresh.add_many(rest, [str(y[i]) for i in rest])
    assert len(g._unit_sources) >= 9  # kept between refits
    assert_allclose(g.loo_decision_values(), fresh.loo_decision_values(), atol=1e-8)


@pytest.mark.parametrize("amg_above", [50, 10**9, "lu"], ids=["multigrid", "jacobi-free cg", "kept lu"])
def test_poisson_one_label_at_a_time_by_linearity_matches_the_direct_solve(monkeypatch, amg_above):
    """Poisson learning after one more label is the last fit plus one unit-source solution
    (PoissonLearning.add_label, docs/algorithms.md §10): the learner's outputs against a fresh
    direct solve of the same labels, label after label, then an undo, a label of a second
    component (a fresh fit) and class mass normalisation."""
    import core.graph.poisson as poisson
    from core.graph.poisson import PoissonLearning
    from core.graph.poisson_learner import PoissonLearner

    import core.graph.poisson_learner as poisson_learner

    monkeypatch.setattr(poisson, "AMG_ABOVE", 50 if amg_above == "lu" else amg_above)
    monkeypatch.setattr(poisson, "JACOBI_BEFORE_MULTIGRID", 0)  # the hierarchy at once where it applies
    monkeypatch.setattr(poisson_learner, "DIRECT_FILL_MAX", 10**12 if amg_above == "lu" else 0)
    monkeypatch.setattr(poisson_learner, "jacobi_cg_converges", lambda *args, **kwargs: False)  # LU by the fill alone
    X, y = make_blobs(600, centers=3, cluster_std=2.5, random_state=5)
    W = knn_graph(X, 10)
    learner = PoissonLearner(W, ["a", "b", "c"])
    names = np.array(["a", "b", "c"])
    order = np.random.default_rng(5).permutation(600)[:15]
    linear = 0

    def check(learner, W):
        L = learner._book.labeled_indices()
        codes = learner._book.labeled_codes()
        direct = PoissonLearning(solver="direct").fit(W, L, codes, classes=[0, 1, 2])
        assert_allclose(learner._fit.decision_values_, direct.decision_values_, atol=1e-8)
        assert np.array_equal(learner._fit.predict_indices(), direct.predict_indices())

    for k, i in enumerate(order):
        learner.add(int(i), names[y[i]])
        linear += bool(np.isnan(learner._fit.residual_).all())
        check(learner, W)
    assert linear == len(order) - 1  # every label after the first by one unit-source solve
    assert ("lu" in learner._fit._system_cache) == (amg_above == "lu")  # the kept LU, or CG
    fresh = PoissonLearner(W, ["a", "b", "c"])
    fresh.add_many([int(i) for i in order], list(names[y[order]]))
    assert_allclose(learner.class_values, fresh.class_values, atol=1e-8)
    assert_allclose(learner.loo_decision_values(), fresh.loo_decision_values(), atol=1e-8)
    reopened = PoissonLearner(W, ["a", "b", "c"])  # a reopen: no unit source held, s by one solve
    reopened.add_many([int(i) for i in order[:-1]], list(names[y[order[:-1]]]))
    reopened.add(int(order[-1]), names[y[order[-1]]])
    assert len(reopened._unit_sources) == 1 and np.isnan(reopened._fit.residual_).all()
    check(reopened, W)
    learner.remove(int(order[4]))  # an undo: a fresh fit
    check(learner, W)
    learner.add(int(order[4]), names[y[order[4]]])
    check(learner, W)
    learner.set_params(class_mass=True)
    learner.add(int(np.setdiff1d(np.arange(600), order)[0]), "b")
    weighted = PoissonLearner(W, ["a", "b", "c"], class_mass=True)
    weighted.add_many(list(learner.labels), list(learner.labels.values()))
    assert_allclose(learner.class_values, weighted.class_values, atol=1e-8)
    # two copies of the graph: a label in the second one reaches it without a solve (its source
    # is zero), later ones on either component by one unit-source solve each
    W2 = sp.block_diag([W, W]).tocsr()
    two = PoissonLearner(W2, ["a", "b", "c"])
    for i in order[:6]:
        two.add(int(i), names[y[i]])
    for i in [600 + int(order[0]), 600 + int(order[1]), int(order[6]), 600 + int(order[2]), int(order[7])]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DisconnectedGraphWarning)  # the direct fits of check()
            two.add(i, names[y[i % 600]])
            assert np.isnan(two._fit.residual_).all()  # by linearity, not a fresh fit
            check(two, W2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DisconnectedGraphWarning)
        fresh2 = PoissonLearner(W2, ["a", "b", "c"])
        fresh2.add_many(list(two.labels), list(two.labels.values()))
    assert_allclose(two.loo_decision_values(), fresh2.loo_decision_values(), atol=1e-8)


@pytest.mark.parametrize("iterative_above", [3000, 50], ids=["lu", "cg"])
def test_lgc_rank_one_corrections_match_a_direct_solve(monkeypatch, iterative_above):
    """LGC after a label added, undone or changed is the last fit plus one column of A^-1
    (A = D - alpha W does not change with the labels): against a direct sparse solve of
    (D - alpha W) F = (1 - alpha) D Y after every change, on two and on three classes."""
    from scipy.sparse.linalg import spsolve

    monkeypatch.setattr(active, "ITERATIVE_ABOVE", iterative_above)
    monkeypatch.setattr(active, "DIRECT_FILL_MAX", 10**12 if iterative_above > 500 else 0)
    X, y = make_blobs(500, centers=3, cluster_std=1.5, random_state=7)
    W = knn_graph(X, 8)
    d = np.asarray(W.sum(axis=1)).ravel()

    def direct(g):
        c = g.n_classes
        Y = np.full((500, c), 1.0 / c)
        L, codes = g._book.labeled_indices(), g._book.labeled_codes()
        Y[L] = 0.0
        Y[L, codes] = 1.0
        A = (sp.diags(d) - 0.9 * W).tocsc()
        return spsolve(A, (1 - 0.9) * d[:, None] * Y)

    for classes in (["0", "1"], ["0", "1", "2"]):
        g = GraphLearner(W, classes, "lgc", alpha=0.9)
        order = [int(i) for i in np.random.default_rng(7).permutation(500)[:10]]
        for i in order:
            g.add(i, str(min(y[i], len(classes) - 1)))
            assert_allclose(g._F, direct(g), atol=1e-8)
        assert len(g._lgc_diag[1]) == len(order)  # (A^-1)_jj of every label, from the corrections
        g.remove(order[3])
        assert_allclose(g._F, direct(g), atol=1e-8)
        g.relabel(order[5], "0" if g.labels[order[5]] != "0" else "1")
        assert_allclose(g._F, direct(g), atol=1e-8)
        fresh = GraphLearner(W, classes, "lgc", alpha=0.9)
        fresh.add_many(list(g.labels), list(g.labels.values()))
        assert_allclose(g.loo_decision_values(), fresh.loo_decision_values(), atol=1e-8)


def test_the_kept_lu_solves_later_systems_by_bordering_as_a_fresh_lu():
    """GroundedLaplacianLU: one factorisation of Delta_U0U0, then solves on U' inside U0 (nodes
    labelled since, one of them unlabelled again) equal a fresh sparse LU of Delta_U'U'; past its
    limit, or on a U' outside U0, it factorises again."""
    from scipy.sparse.linalg import splu

    from core.graph.bordered_lu import GroundedLaplacianLU

    X, _ = make_moons(400, noise=0.08, random_state=8)
    W = knn_graph(X, 8)
    deg = np.asarray(W.sum(1)).ravel()
    rng = np.random.default_rng(8)

    def system(free):
        return (sp.diags(deg[free]) - W[free][:, free]).tocsc()

    direct = GroundedLaplacianLU(refactor_after=6)
    assert direct.accepts(W, 400)
    assert not GroundedLaplacianLU(fill_max=100).accepts(W, 400)
    free = np.arange(2, 400)
    B = rng.standard_normal((free.size, 2))
    assert_allclose(direct.solve(system(free), free, B), splu(system(free)).solve(B), atol=1e-10)
    labelled = [10, 50, 120, 300]
    for j in labelled:
        free = free[free != j]
        B = rng.standard_normal((free.size, 2))
        assert_allclose(direct.solve(system(free), free, B), splu(system(free)).solve(B), atol=1e-10)
    free = np.sort(np.append(free, 50))  # an undo: 50 is free again, still inside U0
    B = rng.standard_normal((free.size, 3))
    assert_allclose(direct.solve(system(free), free, B), splu(system(free)).solve(B), atol=1e-10)
    assert direct.n_factorisations == 1
    free = np.setdiff1d(free, [5, 6, 7, 8])  # 7 removed since the factorisation: past the limit
    B = rng.standard_normal((free.size, 1))
    assert_allclose(direct.solve(system(free), free, B), splu(system(free)).solve(B), atol=1e-10)
    assert direct.n_factorisations == 2
    wider = np.union1d(free, [5, 6])  # outside U0 (5 and 6 were labelled then): factorised again
    B = rng.standard_normal((wider.size, 1))
    assert_allclose(direct.solve(system(wider), wider, B), splu(system(wider)).solve(B), atol=1e-10)
    assert direct.n_factorisations == 3
