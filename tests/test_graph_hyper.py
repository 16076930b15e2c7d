"""Oracle tests of the width learning: RLS LOO (core.rls.ard), LOOHL and MinEnt (core.graph.hyper).

Every closed form is checked against the slow obvious computation: LOO values against one
refit per left-out point, analytic gradients against central finite differences in log widths.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from core.graph import HarmonicFunction
from core.graph.hyper import (harmonic_loo, harmonic_soft_labels, learn_graph_widths, loohl_objective,
                              minent_objective, transition_matrix)
from core.kernels.ard import scaled_sq_distances, width_contraction
from core.rls import loo_path
from core.rls.ard import learn_rls_widths, rls_loo_objective


def _blobs(n=36, m=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    y = (X[:, 0] + 0.4 * X[:, 1] + 0.3 * rng.normal(size=n) > 0).astype(int)
    return X, y


def _labelled(y, per_class):
    """The first ``per_class`` points of each class (sorted indices)."""
    return np.sort(np.r_[np.flatnonzero(y == 0)[:per_class], np.flatnonzero(y == 1)[:per_class]])


def _central(fun, x, h=1e-6):
    out = np.zeros(x.size)
    for d in range(x.size):
        e = np.zeros(x.size)
        e[d] = h
        out[d] = (fun(x * np.exp(e)) - fun(x * np.exp(-e))) / (2 * h)
    return out


# --------------------------------------------------------------------------- ARD helpers
def test_scaled_distances_and_contraction_against_loops():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(7, 4)) + 100.0  # an offset: centring must keep the cancellation small
    s = np.array([0.5, 1.0, 2.0, 3.0])
    G = rng.normal(size=(7, 7))  # not symmetric
    diff2 = (X[:, None, :] - X[None, :, :]) ** 2 / s**2
    np.testing.assert_allclose(scaled_sq_distances(X, s), diff2.sum(axis=2), atol=1e-9)
    np.testing.assert_allclose(width_contraction(X, G, s), np.einsum("ij,ijd->d", G, diff2), rtol=1e-9, atol=1e-8)


# --------------------------------------------------------------------------- RLS LOO
def _weighted_rls_refit(K, y, a, lam, train, test, offset):
    """Weighted RLS with offset solved from its stationarity system on ``train``; f at ``test``."""
    Kt = K[np.ix_(train, train)] + lam * np.diag(1.0 / a[train])
    k = train.size
    if offset:
        A = np.block([[Kt, np.ones((k, 1))], [np.ones((1, k)), np.zeros((1, 1))]])
        sol = np.linalg.solve(A, np.append(y[train], 0.0))
        c, b = sol[:k], sol[k]
    else:
        c, b = np.linalg.solve(Kt, y[train]), 0.0
    return K[test, train] @ c + b


@pytest.mark.parametrize("offset", [True, False])
def test_rls_loo_objective_against_refits(offset):
    X, y = _blobs(20, 3)
    a = np.random.default_rng(1).uniform(0.5, 2.0, 20)
    s, lam = np.array([0.7, 1.3, 2.0]), 0.2
    K = np.exp(-0.5 * scaled_sq_distances(X, s))
    codes = np.where(y == 1, 1.0, -1.0)
    res = np.array([codes[i] - _weighted_rls_refit(K, codes, a, lam, np.delete(np.arange(20), i), i, offset)
                    for i in range(20)])
    want = float(np.sum(a * res**2) / a.sum())
    got = rls_loo_objective(X, y, s, lam, a, offset, gradient=False)
    assert got == pytest.approx(want, rel=1e-10)
    assert got == pytest.approx(loo_path(K, codes, a, lams=[lam], fit_offset=offset).squared[0], rel=1e-10)


@pytest.mark.parametrize("offset", [True, False])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_rls_loo_gradient_against_finite_differences(offset, n_classes):
    X, _ = _blobs(24, 4, seed=2)
    y = np.arange(24) % n_classes
    a = np.random.default_rng(5).uniform(0.5, 2.0, 24)
    s, lam = np.array([0.8, 1.5, 2.0, 1.0]), 0.3
    J, gw, gl = rls_loo_objective(X, y, s, lam, a, offset)
    num = _central(lambda v: rls_loo_objective(X, y, v, lam, a, offset, gradient=False), s)
    np.testing.assert_allclose(gw, num, rtol=1e-6, atol=1e-9)
    num_lam = _central(lambda v: rls_loo_objective(X, y, s, v[0], a, offset, gradient=False), np.array([lam]))
    assert gl == pytest.approx(num_lam[0], rel=1e-6, abs=1e-9)


def test_learned_rls_widths_improve_the_loo_objective():
    X, y = _blobs(30, 4, seed=4)
    out = learn_rls_widths(X, y, 1.0, 0.3, max_evals=40)
    assert out.objective < 0.8 * out.objective_start
    assert out.loo == pytest.approx(rls_loo_objective(X, y, out.widths, out.lam, gradient=False), rel=1e-12)
    # the informative feature 0 gets the narrowest width, the pure-noise features wider ones
    assert out.widths[0] < out.widths[2] and out.widths[0] < out.widths[3]


# --------------------------------------------------------------------------- harmonic / LOOHL / MinEnt
def test_dense_harmonic_matches_the_sparse_harmonic_function():
    X, y = _blobs(30, 3)
    L = np.arange(8)
    s = np.array([1.0, 1.5, 2.5])
    W = np.exp(-scaled_sq_distances(X, s))
    np.fill_diagonal(W, 0.0)
    ref = HarmonicFunction(solver="direct").fit(sp.csr_matrix(W), L, y[L]).decision_values_[:, 1]
    np.testing.assert_allclose(harmonic_soft_labels(X, L, y[L], s), ref, atol=1e-12)


def test_tiny_widths_do_not_underflow():
    X, y = _blobs(30, 3)
    L = np.arange(8)
    f = harmonic_soft_labels(X, L, y[L], 1e-3, eps=0.01)  # exp(-D) alone is 0 for every pair
    assert np.all(np.isfinite(f)) and np.all((f >= 0) & (f <= 1))


@pytest.mark.parametrize("eps", [0.0, 0.05])
def test_harmonic_loo_against_refits(eps):
    X, y = _blobs(30, 3, seed=6)
    L = np.arange(9)
    U = np.arange(9, 30)
    _, _, _, Pt = transition_matrix(X, [1.0, 1.5, 2.5], eps)
    fhat = harmonic_loo(Pt, L, U, y[L].astype(float))[0]
    for k, t in enumerate(L):
        Lt, V = np.delete(L, k), np.r_[t, U]
        f = np.linalg.solve(np.eye(V.size) - Pt[np.ix_(V, V)], Pt[np.ix_(V, Lt)] @ y[Lt])
        assert fhat[k] == pytest.approx(f[0], abs=1e-12)


def test_loohl_objective_is_the_balanced_cubic_loss_of_the_refits():
    X, y = _blobs(30, 3, seed=6)
    L = np.arange(9)
    s = np.array([1.0, 1.5, 2.5])
    _, _, _, Pt = transition_matrix(X, s, 0.01)
    fhat = harmonic_loo(Pt, L, np.arange(9, 30), y[L].astype(float))[0]
    pos = y[L] == 1
    want = np.sum((1 - fhat[pos]) ** 3) / (2 * pos.sum()) + np.sum(fhat[~pos] ** 3) / (2 * (~pos).sum())
    assert loohl_objective(X, L, y[L], s, gradient=False) == pytest.approx(want, rel=1e-12)
    prior = s * 1.5
    extra = 0.2 * np.sum((s - prior) ** 2) / 3
    assert loohl_objective(X, L, y[L], s, prior=prior, prior_weight=0.2, gradient=False) == pytest.approx(want + extra)


@pytest.mark.parametrize("kw", [dict(eps=0.05, prior=1.2, prior_weight=0.3), dict(eps=0.0, power=1.0),
                                dict(eps=0.01, power=2.0)])
def test_loohl_gradient_against_finite_differences(kw):
    X, y = _blobs(32, 3, seed=7)
    L = _labelled(y, 5)
    s = np.array([1.0, 1.5, 3.0])
    _, g = loohl_objective(X, L, y[L], s, **kw)
    num = _central(lambda v: loohl_objective(X, L, y[L], v, gradient=False, **kw), s)
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("eps", [0.01, 0.2])
def test_minent_gradient_against_finite_differences(eps):
    X, y = _blobs(32, 3, seed=8)
    L = np.arange(6)
    s = np.array([1.0, 1.5, 3.0])
    H, g = minent_objective(X, L, y[L], s, eps=eps)
    f = harmonic_soft_labels(X, L, y[L], s, eps=eps)[6:]
    assert H == pytest.approx(-np.mean(f * np.log(f) + (1 - f) * np.log(1 - f)), rel=1e-12)
    num = _central(lambda v: minent_objective(X, L, y[L], v, eps=eps, gradient=False), s)
    np.testing.assert_allclose(g, num, rtol=1e-5, atol=1e-10)


@pytest.mark.parametrize("method", ["loohl", "minent"])
def test_learned_graph_widths_improve_the_objective(method):
    X, y = _blobs(40, 3, seed=9)
    L = np.arange(10)
    out = learn_graph_widths(X, L, y[L], 1.0, method=method, max_evals=25)
    assert out.objective < out.objective_start
    fun = loohl_objective if method == "loohl" else minent_objective
    kw = dict(prior=1.0, prior_weight=0.01) if method == "loohl" else {}
    assert fun(X, L, y[L], out.widths, eps=out.eps, gradient=False, **kw) == pytest.approx(out.objective)


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("widths, match", [(-1.0, "finite and > 0"), ([1.0, np.nan, 1.0], "feature 1"),
                                           ([1.0, 1.0], "one positive number per feature")])
def test_bad_widths_are_refused(widths, match):
    X, y = _blobs(20, 3)
    L = _labelled(y, 3)
    with pytest.raises(ValueError, match=match):
        rls_loo_objective(X, y, widths, 0.1)
    with pytest.raises(ValueError, match=match):
        loohl_objective(X, L, y[L], widths)
    with pytest.raises(ValueError, match=match):
        learn_graph_widths(X, L, y[L], widths)


def test_label_problems_name_the_fix():
    X, y = _blobs(20, 3)
    with pytest.raises(ValueError, match="no labelled points.*Label at least"):
        loohl_objective(X, [], [], 1.0)
    with pytest.raises(ValueError, match="no labelled points"):
        minent_objective(X, np.array([], dtype=int), [], 1.0)
    with pytest.raises(ValueError, match="at least two classes|Pass classes"):
        loohl_objective(X, [0, 1, 2], [1, 1, 1], 1.0)
    with pytest.raises(ValueError, match="at least 2 label.*Label more"):
        loohl_objective(X, [0, 1, 2], [0, 1, 1], 1.0)
    with pytest.raises(ValueError, match="two classes.*one class against the rest"):
        minent_objective(X, [0, 1, 2], [0, 1, 2], 1.0)
    with pytest.raises(ValueError, match="at least two classes.*Label points of another class"):
        rls_loo_objective(X[:5], np.zeros(5), 1.0, 0.1)
    with pytest.raises(ValueError, match="at least 2 labels of every class"):
        rls_loo_objective(X[:5], [0, 0, 0, 0, 1], 1.0, 0.1)


def test_bad_eps_lam_and_method_are_refused():
    X, y = _blobs(20, 3)
    with pytest.raises(ValueError, match=r"eps .* must be in \[0, 1\)"):
        minent_objective(X, np.arange(6), y[:6], 1.0, eps=1.0)
    with pytest.raises(ValueError, match="lam"):
        rls_loo_objective(X, y, 1.0, 0.0)
    with pytest.raises(ValueError, match="method must be one of"):
        learn_graph_widths(X, np.arange(6), y[:6], 1.0, method="evidence")
