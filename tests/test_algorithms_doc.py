"""The formulas of docs/algorithms.md, checked numerically against brute force.

Each test writes the closed form exactly as the document does (plain numpy, no project code
except where named) and compares it with a direct computation: n refits, a direct solve of
the linear system, or a dense inverse. If the document and the maths drift apart, these fail.
"""

from __future__ import annotations

import numpy as np
import pytest

from core.rls.loo import loo_path


def _rbf(X, s):
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    return np.exp(-sq / (2 * s * s))


def _offset_rls(K, y, a, lam):
    """Direct solve of J(f, b) = sum a_i (y_i - f(x_i) - b)^2 + lam ||f||^2 (eq. 3.28): c, b."""
    n = y.size
    # stationarity: (diag(a) K + lam I) c + a b = a y  and  a . (y - K c - b) = 0
    A = np.zeros((n + 1, n + 1))
    A[:n, :n] = a[:, None] * K + lam * np.eye(n)
    A[:n, n] = a
    A[n, :n] = a @ K
    A[n, n] = a.sum()
    sol = np.linalg.solve(A, np.append(a * y, a @ y))
    return sol[:n], sol[n]


@pytest.fixture(scope="module")
def pool():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(24, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=24) > 0, 1.0, -1.0)
    a = rng.uniform(0.5, 2.0, size=24)
    return X, y, a


def test_section1_offset_closed_form_and_loo_against_refits(pool):
    X, y, a = pool
    K, lam = _rbf(X, 1.0), 0.3
    W = np.sqrt(a)
    w, z = W, W * y
    G = W[:, None] * K * W[None, :] + lam * np.eye(y.size)
    Ginv = np.linalg.inv(G)
    r = Ginv @ w
    b = (z @ r) / (w @ r)
    c = W * (Ginv @ (z - b * w))
    c_direct, b_direct = _offset_rls(K, y, a, lam)
    np.testing.assert_allclose(c, c_direct, atol=1e-10)
    assert abs(b - b_direct) < 1e-10
    loo = c / (a * (np.diag(Ginv) - r * r / (w @ r)))  # eq. A.60 as written in §1
    brute = np.empty_like(y)
    for i in range(y.size):
        keep = np.arange(y.size) != i
        ci, bi = _offset_rls(K[np.ix_(keep, keep)], y[keep], a[keep], lam)
        brute[i] = y[i] - (K[i, keep] @ ci + bi)
    np.testing.assert_allclose(loo, brute, atol=1e-10)
    # the module that implements it gives the same residuals
    path = loo_path(K, y, sample_weight=a, lams=[lam], fit_offset=True)
    np.testing.assert_allclose(path.residuals[0, :, 0], brute, atol=1e-9)


def _posterior(K, L, lams, y):
    """m and C of §3 by a direct solve."""
    A = K[np.ix_(L, L)] + np.diag(lams)
    m = K[:, L] @ np.linalg.solve(A, y)
    C = K - K[:, L] @ np.linalg.solve(A, K[L, :])
    return m, C


def test_section3_add_remove_relabel_reweight_against_direct_solves(pool):
    X, y, a = pool
    K, lam = _rbf(X, 0.8), 0.2
    lam_of = lam / a
    L = [0, 3, 5, 9]
    m, C = _posterior(K, L, lam_of[L], y[L])
    # add i
    i = 12
    den = C[i, i] + lam_of[i]
    m_add = m - C[:, i] * (m[i] - y[i]) / den
    C_add = C - np.outer(C[:, i], C[i, :]) / den
    m2, C2 = _posterior(K, L + [i], lam_of[L + [i]], y[L + [i]])
    np.testing.assert_allclose(m_add, m2, atol=1e-10)
    np.testing.assert_allclose(C_add, C2, atol=1e-10)
    # remove j: the exact undo, and y_j - m_j(new) is j's LOO residual
    j = 3
    D = lam_of[j] - C[j, j]
    m_rm = m - C[:, j] * (y[j] - m[j]) / D
    C_rm = C + np.outer(C[:, j], C[j, :]) / D
    rest = [k for k in L if k != j]
    m3, C3 = _posterior(K, rest, lam_of[rest], y[rest])
    np.testing.assert_allclose(m_rm, m3, atol=1e-10)
    np.testing.assert_allclose(C_rm, C3, atol=1e-10)
    np.testing.assert_allclose(y[j] - m_rm[j], (y[j] - m[j]) / (1 - C[j, j] / lam_of[j]), atol=1e-12)
    # relabel j
    y_new = y.copy()
    y_new[j] = -y[j]
    m_rl = m + C[:, j] * (y_new[j] - y[j]) / lam_of[j]
    np.testing.assert_allclose(m_rl, _posterior(K, L, lam_of[L], y_new[L])[0], atol=1e-10)
    # reweight j: lam_j -> lam_j + delta
    delta = 0.7
    u = C[:, j] / lam_of[j]
    g = (lam_of[j] - C[j, j]) / lam_of[j] ** 2
    cj = (y[j] - m[j]) / lam_of[j]
    C_rw = C + delta * np.outer(u, u) / (1 + delta * g)
    m_rw = m - delta * u * cj / (1 + delta * g)
    lam_new = lam_of.copy()
    lam_new[j] += delta
    m4, C4 = _posterior(K, L, lam_new[L], y[L])
    np.testing.assert_allclose(m_rw, m4, atol=1e-10)
    np.testing.assert_allclose(C_rw, C4, atol=1e-10)


def test_section8_factor_form_equals_the_dense_posterior(pool):
    X, y, a = pool
    rng = np.random.default_rng(3)
    Phi = rng.normal(size=(y.size, 5))
    K = Phi @ Phi.T
    lams = 0.4 / a
    L = [1, 2, 8, 13, 20]
    Pinv = np.eye(5) + Phi[L].T @ (Phi[L] / lams[L, None])
    P = np.linalg.inv(Pinv)
    mu = P @ Phi[L].T @ (y[L] / lams[L])
    m_dense, C_dense = _posterior(K, L, lams[L], y[L])
    np.testing.assert_allclose(Phi @ mu, m_dense, atol=1e-10)
    np.testing.assert_allclose(Phi @ P @ Phi.T, C_dense, atol=1e-10)
    # add i in weight space
    i = 4
    av = P @ Phi[i]
    s = lams[i] + Phi[i] @ av
    P_add = P - np.outer(av, av) / s
    m_add = Phi @ mu + (Phi @ av) * (y[i] - Phi[i] @ mu) / s
    m2, C2 = _posterior(K, L + [i], lams[L + [i]], y[L + [i]])
    np.testing.assert_allclose(m_add, m2, atol=1e-10)
    np.testing.assert_allclose(Phi @ P_add @ Phi.T, C2, atol=1e-10)


def _knn_graph(X, k):
    n = X.shape[0]
    sq = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)
    W = np.zeros((n, n))
    nearest = np.argsort(sq, axis=1)[:, 1:k + 1]
    for i in range(n):
        W[i, nearest[i]] = 1.0
    return np.maximum(W, W.T)  # symmetrised: i in kNN(j) or j in kNN(i)


@pytest.fixture(scope="module")
def graph():
    rng = np.random.default_rng(11)
    t = rng.uniform(0, np.pi, size=60)
    upper = rng.random(60) < 0.5
    X = np.column_stack([np.cos(t) + np.where(upper, 0, 1), np.where(upper, np.sin(t), 0.5 - np.sin(t))])
    X += 0.05 * rng.normal(size=X.shape)
    W = _knn_graph(X, 6)
    assert np.all(W.sum(1) > 0)
    return W, upper.astype(float)


def test_section5_zhu_update_and_downdate_against_direct_solves(graph):
    W, y = graph
    n = y.size
    Delta = np.diag(W.sum(1)) - W
    L = np.array([0, 1, 2, 3])
    U = np.setdiff1d(np.arange(n), L)
    G = np.linalg.inv(Delta[np.ix_(U, U)] + 1e-9 * np.eye(U.size))
    f = G @ (W[np.ix_(U, L)] @ y[L])
    k, yk = 5, 1.0  # position in U
    f_plus = f + (yk - f[k]) * G[:, k] / G[k, k]  # eq. 2.21
    L2, U2 = np.append(L, U[k]), np.delete(U, k)
    y2 = y.copy()
    y2[U[k]] = yk
    direct = np.linalg.solve(Delta[np.ix_(U2, U2)] + 1e-9 * np.eye(U2.size), W[np.ix_(U2, L2)] @ y2[L2])
    np.testing.assert_allclose(np.delete(f_plus, k), direct, atol=1e-6)
    keep = np.arange(U.size) != k
    G_down = G[np.ix_(keep, keep)] - np.outer(G[keep, k], G[k, keep]) / G[k, k]
    np.testing.assert_allclose(G_down, np.linalg.inv(Delta[np.ix_(U2, U2)] + 1e-9 * np.eye(U2.size)),
                               rtol=1e-6, atol=1e-6)


def test_section9_gaussian_field_rls_is_the_harmonic_function(graph):
    W, y = graph
    n = y.size
    Delta = np.diag(W.sum(1)) - W
    eps, lam = 1e-6, 1e-10
    K = np.linalg.inv(Delta + eps * np.eye(n))
    L = np.array([0, 1, 2, 3, 30, 31])
    U = np.setdiff1d(np.arange(n), L)
    m = K[:, L] @ np.linalg.solve(K[np.ix_(L, L)] + lam * np.eye(L.size), y[L])
    f_U = np.linalg.solve(Delta[np.ix_(U, U)], W[np.ix_(U, L)] @ y[L])
    assert np.max(np.abs(m[U] - f_U)) < 1e-3


def test_section10_poisson_iteration_keeps_the_mean_and_solves_the_equation(graph):
    W, y = graph
    n = y.size
    d = W.sum(1)
    Lap = np.diag(d) - W
    labelled = np.array([0, 7, 30, 41])
    Y = np.zeros((labelled.size, 2))
    Y[np.arange(labelled.size), y[labelled].astype(int)] = 1.0
    B = np.zeros((n, 2))
    B[labelled] = Y - Y.mean(0)
    assert np.allclose(B.sum(0), 0)  # solvable: orthogonal to the constants
    U = np.zeros((n, 2))
    for step in range(20000):
        U = (B + W @ U) / d[:, None]  # U <- U + D^-1 (B - L U)
        if step % 500 == 0:
            assert np.allclose(d @ U, 0, atol=1e-9)  # degree-weighted mean zero along the way
        if step % 500 == 0 and np.abs(Lap @ U - B).max() < 1e-9:
            break
    assert np.allclose(d @ U, 0, atol=1e-9)
    # the direct solution with the same normalisation
    direct = np.linalg.lstsq(Lap, B, rcond=None)[0]
    direct -= np.outer(np.ones(n), d @ direct) / d.sum()
    np.testing.assert_allclose(Lap @ U, B, atol=1e-6)
    np.testing.assert_allclose(U, direct, atol=1e-6)
    # the symmetric form GraphLearning solves by CG: same U
    Dm = 1 / np.sqrt(d)
    S = np.eye(n) - Dm[:, None] * W * Dm[None, :]
    V = np.linalg.lstsq(S, Dm[:, None] * B, rcond=None)[0]  # minimum norm: orthogonal to D^1/2 1
    np.testing.assert_allclose(Dm[:, None] * V, direct, atol=1e-8)
