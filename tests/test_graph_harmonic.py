"""Harmonic function: preconditioned CG / MINRES against a direct sparse solve (the oracle)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose
from scipy.sparse.linalg import spsolve
from sklearn.datasets import make_blobs, make_moons

from core.graph import HarmonicFunction, class_mass_normalize
from core.graph.harmonic import HarmonicSolverWarning
from core.kernels import knn_graph


@pytest.fixture(scope="module")
def blobs():
    X, y = make_blobs(300, centers=[[0, 0], [4, 0], [0, 4]], cluster_std=1.0, random_state=0)
    rng = np.random.default_rng(0)
    L = np.concatenate([rng.choice(np.flatnonzero(y == c), 3, replace=False) for c in range(3)])
    return X, y, L


def direct_harmonic(W, L, yL, T, eps=0.0):
    """spsolve of (D_UU - W_UU + eps I) F_U = W_UL Y_L, written out from docs/algorithms.md §5."""
    W = sp.csr_matrix(W)
    n = W.shape[0]
    U = np.setdiff1d(np.arange(n), L)
    d = np.asarray(W.sum(1)).ravel()
    A = sp.diags(d[U] + eps) - W[U][:, U]
    Y = np.zeros((len(L), T))
    Y[np.arange(len(L)), yL] = 1
    F = np.zeros((n, T))
    F[L] = Y
    F[U] = np.asarray(spsolve(A.tocsc(), W[U][:, L] @ Y)).reshape(len(U), T)
    return F


@pytest.mark.parametrize("weights", ["connectivity", "heat"])
@pytest.mark.parametrize("solver,pre", [("cg", "jacobi"), ("cg", "none"), ("minres", "jacobi"), ("direct", "jacobi")])
def test_iterative_solution_matches_a_direct_sparse_solve(blobs, weights, solver, pre):
    X, y, L = blobs
    W = knn_graph(X, 8, weights=weights)
    model = HarmonicFunction(solver=solver, preconditioner=pre, tol=1e-12).fit(W, L, y[L])
    assert_allclose(model.decision_values_, direct_harmonic(W, L, y[L], 3), atol=1e-8)
    assert (model.residual_ < 1e-10).all()
    assert (model.predict() == y).mean() > 0.9


def test_harmonic_rows_sum_to_one_and_lie_in_the_unit_interval(blobs):
    X, y, L = blobs
    F = HarmonicFunction(solver="direct").fit(knn_graph(X, 8), L, y[L]).decision_values_
    assert_allclose(F.sum(1), 1.0, atol=1e-10)
    assert F.min() >= -1e-12 and F.max() <= 1 + 1e-12


def test_jacobi_needs_fewer_iterations_on_heat_weights(blobs):
    """Seed 001 §4.3: Jacobi preconditioning reduces CG iterations (varying degrees)."""
    X, y, L = blobs
    W = knn_graph(X, 10, weights="heat", sigma=0.5)
    plain = HarmonicFunction(preconditioner="none", tol=1e-8).fit(W, L, y[L]).n_iter_
    jac = HarmonicFunction(preconditioner="jacobi", tol=1e-8).fit(W, L, y[L]).n_iter_
    assert jac.sum() < plain.sum()


def test_regulariser_matches_direct_solve_with_eps(blobs):
    X, y, L = blobs
    W = knn_graph(X, 8)
    model = HarmonicFunction(eps=0.3, tol=1e-12).fit(W, L, y[L])
    assert_allclose(model.decision_values_, direct_harmonic(W, L, y[L], 3, eps=0.3), atol=1e-8)


def test_component_without_labels_gets_the_eps_to_zero_limit():
    """docs/algorithms.md §5: a label-free component is singular; its regularised solution is 0 for every eps > 0."""
    X, _ = make_moons(120, noise=0.04, random_state=1)
    X2 = X + np.array([50.0, 0.0])  # a second, far-away copy: its own components
    Xall = np.vstack([X, X2])
    W = knn_graph(Xall, 6)
    L = np.array([0, 1])
    labels = np.array([0, 1])
    model = HarmonicFunction(tol=1e-12).fit(W, L, labels)
    assert not model.reached_[120:].any() and model.reached_[:120].all()
    assert_allclose(model.decision_values_[120:], 0.0)
    for eps in (1e-3, 1e-7):
        reg = HarmonicFunction(eps=eps, solver="direct").fit(W, L, labels)
        assert_allclose(reg.decision_values_[120:], 0.0, atol=1e-12)
    # predictions there: the largest class proportion (ties: first class)
    assert (model.predict_indices()[120:] == 0).all()


def test_class_mass_normalisation_is_eq_2_7():
    F = np.array([[0.9, 0.1], [0.6, 0.4], [0.45, 0.55], [0.2, 0.8]])
    q = np.array([0.25, 0.75])
    G = class_mass_normalize(F, q)
    assert_allclose(G[:, 0], 0.25 * F[:, 0] / F[:, 0].sum())
    assert_allclose(G[:, 1], 0.75 * F[:, 1] / F[:, 1].sum())
    # with q = 3:1 for class 1 the boundary moves: row 1 (0.6, 0.4) becomes class 1
    assert G.argmax(1).tolist() == [0, 1, 1, 1]
    assert F.argmax(1).tolist() == [0, 0, 1, 1]


def test_class_mass_prediction_uses_labelled_proportions(blobs):
    X, y, L = blobs
    W = knn_graph(X, 8)
    model = HarmonicFunction(class_mass=True, tol=1e-10).fit(W, L, y[L])
    U = np.setdiff1d(np.arange(len(y)), L)
    expected = class_mass_normalize(model.decision_values_[U], np.full(3, 1 / 3)).argmax(1)
    assert (model.predict_indices()[U] == expected).all()
    assert (model.predict()[L] == y[L]).all()


def test_string_classes_and_declared_classes(blobs):
    X, y, L = blobs
    names = np.array(["a", "b", "c"])[y]
    model = HarmonicFunction().fit(knn_graph(X, 8), L, names[L], classes=["a", "b", "c", "d"])
    assert model.decision_values_.shape == (300, 4)
    assert set(model.predict()) <= {"a", "b", "c"}


def test_bad_input_is_named(blobs):
    X, y, L = blobs
    W = knn_graph(X, 8)
    with pytest.raises(ValueError, match="solver"):
        HarmonicFunction(solver="lu").fit(W, L, y[L])
    with pytest.raises(ValueError, match="eps"):
        HarmonicFunction(eps=-1).fit(W, L, y[L])
    with pytest.raises(ValueError, match="repeated"):
        HarmonicFunction().fit(W, [0, 0], [0, 1])
    with pytest.raises(ValueError, match="lie in"):
        HarmonicFunction().fit(W, [0, 300], [0, 1])
    with pytest.raises(ValueError, match="two classes"):
        HarmonicFunction().fit(W, [0, 1], [0, 0])
    with pytest.raises(ValueError, match="not symmetric"):
        HarmonicFunction().fit(sp.triu(W), L, y[L])
    with pytest.raises(ValueError, match="negative"):
        HarmonicFunction().fit(-W, L, y[L])
    with pytest.raises(ValueError, match="not one of"):
        HarmonicFunction().fit(W, [0, 1], [0, 5], classes=[0, 1])
    with pytest.warns(HarmonicSolverWarning, match="max_iter"):  # one policy: warn, then a sparse LU
        early = HarmonicFunction(max_iter=1, tol=1e-12).fit(W, L, y[L])
    direct = HarmonicFunction(solver="direct").fit(W, L, y[L])
    np.testing.assert_allclose(early.decision_values_, direct.decision_values_, atol=1e-10)
    with pytest.raises(RuntimeError, match="not fitted"):
        HarmonicFunction().predict()
