"""Zhu et al.'s harmonic active learning against brute-force refits; its relation to ARLS (docs/algorithms.md §9)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose
from sklearn.datasets import make_blobs, make_moons

from core.graph import HarmonicFunction, ZhuActiveLearning, harmonic_risk
from core.kernels import knn_graph
from core.learner import ActiveRLS


@pytest.fixture(scope="module")
def moons():
    X, y = make_moons(70, noise=0.12, random_state=4)
    W = knn_graph(X, 6, weights="heat")
    L = np.array([np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0], np.flatnonzero(y == 1)[3]])
    return W, y, L


def brute_force_expected_risk(W, L, labels, k, classes, eps=0.0):
    """Refit the harmonic function with (k, y) added for every y; weight the risks by F_k."""
    F = HarmonicFunction(eps=eps, solver="direct").fit(W, L, labels, classes=classes).decision_values_
    p = np.clip(F[k], 0, 1)
    p = p / p.sum()
    total = 0.0
    for t, c in enumerate(classes):
        Lk = np.append(L, k)
        Fk = HarmonicFunction(eps=eps, solver="direct").fit(W, Lk, np.append(labels, c), classes=classes)
        U = np.setdiff1d(np.arange(W.shape[0]), Lk)
        total += p[t] * harmonic_risk(Fk.decision_values_[U])
    return total


@pytest.mark.parametrize("eps", [0.0, 0.05])
def test_expected_risk_equals_brute_force_refits(moons, eps):
    W, y, L = moons
    model = ZhuActiveLearning(eps=eps).fit(W, L, y[L])
    cand = model.unlabeled_[::3]
    E = model.expected_risks(cand)
    ref = [brute_force_expected_risk(W, L, y[L], k, [0, 1], eps) for k in cand]
    assert_allclose(E, ref, rtol=1e-9, atol=1e-10)


def test_multiclass_expected_risk_equals_brute_force():
    X, y = make_blobs(60, centers=3, cluster_std=2.0, random_state=2)
    W = knn_graph(X, 6)
    L = np.array([np.flatnonzero(y == c)[0] for c in range(3)])
    model = ZhuActiveLearning().fit(W, L, y[L])
    cand = model.unlabeled_[::5]
    ref = [brute_force_expected_risk(W, L, y[L], k, [0, 1, 2]) for k in cand]
    assert_allclose(model.expected_risks(cand), ref, rtol=1e-9, atol=1e-10)


def every_hypothesis_expected_risk(model, cand):
    """The numpy form: F+ for every candidate and class, its risk, weighted (O(u T^2) each)."""
    pos = np.searchsorted(model.unlabeled_, cand)
    FU = model.decision_values_[model.unlabeled_]
    G = model.inverse_
    out = []
    for p in pos:
        w = np.clip(FU[p], 0, 1)
        w = w / w.sum() if w.sum() > 0 else w
        total = 0.0
        for t in range(FU.shape[1]):
            Fp = FU + np.outer(G[:, p] / G[p, p], np.eye(FU.shape[1])[t] - FU[p])
            total += w[t] * np.sum(1.0 - Fp.max(axis=1))
        out.append(total)
    return np.array(out)


@pytest.mark.parametrize("centers", [2, 4, 10])
def test_fused_kernel_equals_every_hypothesis_formed(centers):
    """The one-pass top-two kernel against forming F+ for every class (ties in F included:
    points of one-hot rows and label-free rows have equal entries)."""
    X, y = make_blobs(150, centers=centers, cluster_std=3.0, random_state=centers)
    W = knn_graph(X, 5)
    L = np.array([np.flatnonzero(y == c)[0] for c in range(centers)])
    model = ZhuActiveLearning(eps=0.01).fit(W, L, y[L])
    cand = model.unlabeled_
    assert_allclose(model.expected_risks(cand), every_hypothesis_expected_risk(model, cand),
                    rtol=1e-11, atol=1e-11)
    model.add(cand[3], y[cand[3]])
    assert_allclose(model.expected_risks(), every_hypothesis_expected_risk(model, model.unlabeled_),
                    rtol=1e-11, atol=1e-11)


def test_binary_risk_is_the_sum_of_min_f_one_minus_f(moons):
    W, y, L = moons
    model = ZhuActiveLearning().fit(W, L, y[L])
    f = model.decision_values_[model.unlabeled_, 1]
    assert model.risk() == pytest.approx(np.minimum(f, 1 - f).sum())


def test_add_downdates_the_inverse_exactly(moons):
    W, y, L = moons
    model = ZhuActiveLearning().fit(W, L, y[L])
    labels = list(y[L])
    Ls = list(L)
    for _ in range(5):
        k = model.query()
        model.add(k, y[k])
        Ls.append(k)
        labels.append(y[k])
    ref = ZhuActiveLearning().fit(W, np.array(Ls), np.array(labels))
    assert_allclose(model.decision_values_, ref.decision_values_, atol=1e-10)
    assert_allclose(model.inverse_, ref.inverse_, atol=1e-9)
    assert (model.unlabeled_ == ref.unlabeled_).all()


def test_query_is_the_argmin(moons):
    W, y, L = moons
    model = ZhuActiveLearning().fit(W, L, y[L])
    E = model.expected_risks()
    assert model.query() == model.unlabeled_[np.argmin(E)]


def laplacian_dense(W):
    Wd = W.toarray()
    return np.diag(Wd.sum(1)) - Wd


def test_arls_on_the_gaussian_field_kernel_is_the_regularised_harmonic_function(moons):
    """docs/algorithms.md §9, exact: with K = (Delta + eps I)^-1 and lam -> 0, ARLS's mean on U is the harmonic
    function with the eps regulariser (targets +-1) and its posterior covariance on U is G."""
    W, y, L = moons
    eps = 0.05
    K = np.linalg.inv(laplacian_dense(W) + eps * np.eye(70))
    learner = ActiveRLS.from_kernel(0.5 * (K + K.T), classes=[0, 1], lam=1e-10).add_many(L, y[L])
    zhu = ZhuActiveLearning(eps=eps).fit(W, L, y[L])
    U = zhu.unlabeled_
    F = zhu.decision_values_
    m = np.asarray(learner.decision_values).reshape(70, -1)[:, 0]
    assert_allclose(m[U], F[U, 1] - F[U, 0], atol=1e-7)
    assert_allclose(learner.posterior_covariance()[np.ix_(U, U)], zhu.inverse_, atol=1e-7)


def test_arls_expected_risk_tends_to_zhus_as_eps_goes_to_zero(moons):
    """docs/algorithms.md §9, the limit: at eps -> 0 the +-1 and 0/1 codings agree (constants are harmonic), and
    ARLS's unweighted soft risk sum min(p, 1 - p) with p = (f + 1) / 2 is Zhu's risk."""
    W, y, L = moons
    zhu = ZhuActiveLearning().fit(W, L, y[L])
    U = zhu.unlabeled_
    E_zhu = zhu.expected_risks()
    gaps = []
    for eps in (1e-4, 1e-6):
        K = np.linalg.inv(laplacian_dense(W) + eps * np.eye(70))
        learner = ActiveRLS.from_kernel(0.5 * (K + K.T), classes=[0, 1], lam=1e-10).add_many(L, y[L])
        m = np.asarray(learner.decision_values).reshape(70, -1)[:, 0]
        assert_allclose((m[U] + 1) / 2, zhu.decision_values_[U, 1], atol=50 * eps)
        E = learner.expected_risk(U, backend="numpy")
        assert np.argmin(E) == np.argmin(E_zhu)  # the same query
        gaps.append(np.abs(E - E_zhu).max())
    # the gap is O(eps): 1.7e-2 at 1e-4, 1.7e-4 at 1e-6 on this example
    assert gaps[1] < 1e-3 and gaps[1] < gaps[0] / 50


def test_bad_input_is_named(moons):
    W, y, L = moons
    Wd = sp.block_diag([W, W]).tocsr()
    with pytest.raises(ValueError, match="eps > 0"):
        ZhuActiveLearning().fit(Wd, L, y[L])
    ZhuActiveLearning(eps=1e-6).fit(Wd, L, y[L])  # the fix named in the message works
    model = ZhuActiveLearning().fit(W, L, y[L])
    with pytest.raises(ValueError, match="labelled or not in the graph"):
        model.expected_risks([L[0]])
    with pytest.raises(ValueError, match="not one of"):
        model.add(int(model.unlabeled_[0]), 7)
    with pytest.raises(RuntimeError, match="not fitted"):
        ZhuActiveLearning().query()


def test_arls_on_the_truncated_spectral_factor_follows_the_harmonic_function():
    """docs/algorithms.md §9 at scale: the r smallest eigenpairs of Delta (Gaussian-field transform) give a factor
    whose ARLS predictions match the exact harmonic function's (r = 20 of 200 points)."""
    from core.kernels import spectral_factor

    X, y = make_moons(200, noise=0.05, random_state=0)
    W = knn_graph(X, 8)
    L = np.array([np.flatnonzero(y == 0)[0], np.flatnonzero(y == 1)[0]])
    exact = HarmonicFunction(solver="direct").fit(W, L, y[L])
    Phi, _ = spectral_factor(W, 20, transform="gaussian_field", eps=1e-6, normalized=False)
    learner = ActiveRLS.from_factor(Phi, classes=[0, 1], lam=1e-9).add_many(L, y[L])
    assert (learner.predict() == exact.predict()).all()
