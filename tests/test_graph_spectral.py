"""Spectral transforms by kernel-target alignment (seed 004): NNLS projection against Clarabel's QCQP."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.datasets import make_blobs, make_moons

from core.graph import (aligned_spectrum, fit_parametric_spectrum, kernel_target_alignment, parametric_spectrum,
                        spectrum_factor, target_matrix)
from core.kernels import knn_graph, laplacian_eigenpairs
from core.learner import ActiveRLS


def problem(n_labels, rank=12, classes=2, seed=0):
    if classes == 2:
        X, y = make_moons(160, noise=0.08, random_state=seed)
    else:
        X, y = make_blobs(160, centers=classes, cluster_std=1.5, random_state=seed)
    lam, V = laplacian_eigenpairs(knn_graph(X, 8), rank)
    rng = np.random.default_rng(seed)
    L = rng.choice(160, n_labels, replace=False)
    while len(set(y[L])) < classes:
        L = rng.choice(160, n_labels, replace=False)
    return lam, V, L, y


def alignment(V, L, y, mu):
    return kernel_target_alignment((V[L] * mu) @ V[L].T, target_matrix(y[L]))


@pytest.mark.parametrize("transform", ["max_alignment", "order", "improved_order"])
@pytest.mark.parametrize("n_labels,classes", [(8, 2), (30, 2), (30, 3)])
def test_nnls_projection_agrees_with_the_qcqp_solved_by_clarabel(transform, n_labels, classes):
    pytest.importorskip("clarabel")
    lam, V, L, y = problem(n_labels, classes=classes)
    mu1, a1 = aligned_spectrum(lam, V, L, y[L], transform, solver="nnls")
    mu2, a2 = aligned_spectrum(lam, V, L, y[L], transform, solver="clarabel")
    assert a1 == pytest.approx(a2, abs=1e-6)
    # the optimal training kernel K_tr is unique (a projection); mu is when M has full column rank
    K1 = (V[L] * mu1) @ V[L].T
    K2 = (V[L] * mu2) @ V[L].T
    assert_allclose(K1 / np.linalg.norm(K1), K2 / np.linalg.norm(K2), atol=1e-5)
    if n_labels * (n_labels + 1) // 2 > 4 * lam.size:
        assert_allclose(mu1, mu2, atol=1e-5)


@pytest.mark.parametrize("n_labels", [8, 30])
def test_constraints_and_the_ordering_of_optimal_alignments(n_labels):
    lam, V, L, y = problem(n_labels)
    mu = {t: aligned_spectrum(lam, V, L, y[L], t) for t in ("max_alignment", "order", "improved_order")}
    for t, (m, a) in mu.items():
        assert m.min() >= 0 and m.sum() == pytest.approx(1.0)
        assert a == pytest.approx(alignment(V, L, y, m))
    assert (np.diff(mu["order"][0]) <= 1e-12).all()
    null = lam <= 1e-8
    assert (np.diff(mu["improved_order"][0][~null]) <= 1e-12).all()
    # larger cones align at least as well: order <= improved order <= maximal alignment
    assert mu["order"][1] <= mu["improved_order"][1] + 1e-9 <= mu["max_alignment"][1] + 2e-9
    # every decreasing transform lies in the order cone: none beats the order-constrained optimum
    for transform, kw in [("diffusion", {"s": 1.0}), ("diffusion", {"s": 5.0}), ("gaussian_field", {"eps": 0.01})]:
        assert alignment(V, L, y, parametric_spectrum(lam, transform, **kw)) <= mu["order"][1] + 1e-9


def test_no_random_feasible_point_beats_the_optimum():
    lam, V, L, y = problem(20)
    _, best = aligned_spectrum(lam, V, L, y[L], "order")
    rng = np.random.default_rng(1)
    for _ in range(300):
        mu = np.cumsum(rng.exponential(size=lam.size) * (rng.random(lam.size) < 0.3))[::-1]
        if mu.sum() > 0:
            assert alignment(V, L, y, mu) <= best + 1e-9


def test_parametric_fit_maximises_alignment_on_its_family():
    lam, V, L, y = problem(30)
    mu, s, a = fit_parametric_spectrum(lam, V, L, y[L], "diffusion")
    assert a == pytest.approx(alignment(V, L, y, mu))
    grid = [alignment(V, L, y, parametric_spectrum(lam, "diffusion", s=t)) for t in np.geomspace(1e-2, 1e2, 200)]
    assert a >= max(grid) - 1e-4
    mu, eps, a = fit_parametric_spectrum(lam, V, L, y[L], "gaussian_field")
    assert 1e-6 <= eps <= 10 and a == pytest.approx(alignment(V, L, y, mu))


def test_factor_scaling_and_arls_on_the_improved_order_kernel():
    lam, V, L, y = problem(10, rank=20)
    mu, _ = aligned_spectrum(lam, V, L, y[L], "improved_order")
    Phi = spectrum_factor(V, mu)
    assert np.einsum("ij,ij->", Phi, Phi) == pytest.approx(160.0)
    assert_allclose(Phi @ Phi.T, (V * (mu * 160)) @ V.T, atol=1e-10)
    learner = ActiveRLS.from_factor(Phi, classes=[0, 1], lam=1e-2).add_many(L, y[L])
    assert (learner.predict() == y).mean() > 0.9


def test_bad_input_is_named():
    lam, V, L, y = problem(10)
    with pytest.raises(ValueError, match="transform"):
        aligned_spectrum(lam, V, L, y[L], "order_constrained")
    with pytest.raises(ValueError, match="solver"):
        aligned_spectrum(lam, V, L, y[L], "order", solver="sedumi")
    with pytest.raises(ValueError, match="increasing"):
        aligned_spectrum(lam[::-1], V[:, ::-1], L, y[L])
    with pytest.raises(ValueError, match="V must be"):
        aligned_spectrum(lam, V[:, :3], L, y[L])
    with pytest.raises(ValueError, match="two classes"):
        aligned_spectrum(lam, V, L[:2], [1, 1])
    with pytest.raises(ValueError, match="mu must be"):
        spectrum_factor(V, -np.ones(lam.size))
    with pytest.raises(ValueError, match="eps"):
        parametric_spectrum(lam, "gaussian_field", eps=0)
