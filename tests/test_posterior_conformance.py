"""Every posterior store implements the protocol of core.posteriors.base the same way.

Each method is checked against the same operation written out on a plain (n, n) array. The
learner-level conformance (add/remove/relabel/reweight against direct solves, expected risk
against brute-force refits, undo against never having labelled) runs over the same stores in
test_arls_exact.py, test_arls_risk.py and test_arls_edges.py through the ``posterior`` fixture.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.linalg import LinAlgError
from numpy.testing import assert_allclose

from core.kernels import Kernel, eigen_factor
from core.posteriors import DensePosterior, FactorPosterior, NystromPosterior, Posterior

N = 37


@pytest.fixture(params=["dense", "factor", "factor_lowrank", "nystrom"])
def store(request):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N, 3))
    if request.param == "nystrom":  # the app's low-rank posterior: Phi = k(X, Z) T on 8 landmarks
        post = NystromPosterior(X, Kernel("rbf", width=1.3), X[::5][:8])
        Phi = np.array(post.factor)
        return post, Phi @ Phi.T
    if request.param == "dense":
        kernel = Kernel("rbf", width=1.3)
        return DensePosterior.from_kernel(kernel, X), kernel(X)
    if request.param == "factor":
        K = Kernel("rbf", width=1.3)(X)
        return FactorPosterior(eigen_factor(K)), K
    Phi = rng.standard_normal((N, 5))  # an exact rank-5 kernel
    return FactorPosterior(Phi), Phi @ Phi.T


def test_implements_the_protocol(store):
    post, K = store
    assert isinstance(post, Posterior)
    assert post.n_samples == N and post.nbytes > 0


def test_reads_match_the_array(store):
    post, K = store
    C = post.to_array()
    assert_allclose(C, K, atol=1e-12)
    idx = [4, 0, 17]
    assert_allclose(post.diag(), np.diag(C), atol=1e-12)
    assert_allclose(post.diag(idx), np.diag(C)[idx], atol=1e-12)
    assert_allclose(post.prior_diag(), np.diag(K), atol=1e-12)
    assert_allclose(post.block(idx), C[np.ix_(idx, idx)], atol=1e-12)
    assert_allclose(post.prior_block(idx), K[np.ix_(idx, idx)], atol=1e-12)
    assert_allclose(post.columns(idx), C[idx], atol=1e-12)
    assert_allclose(post.cross(idx, [30, 2]), C[np.ix_(idx, [30, 2])], atol=1e-12)
    W = np.random.default_rng(1).standard_normal((3, 2))
    assert_allclose(post.combine(idx, W), W.T @ C[idx], atol=1e-12)


def test_update_is_the_index_form(store):
    post, K = store
    C = post.to_array()
    idx = np.array([3, 9, 30])
    M = np.array([[-0.5, 0.1, 0.0], [0.1, -0.3, 0.05], [0.0, 0.05, -0.2]])
    post.update(idx, M)
    assert_allclose(post.to_array(), C + C[:, idx] @ M @ C[idx, :], atol=1e-12)
    post.update([5], [[-0.25]])
    C2 = C + C[:, idx] @ M @ C[idx, :]
    assert_allclose(post.to_array(), C2 - 0.25 * np.outer(C2[:, 5], C2[5]), atol=1e-12)


@pytest.mark.parametrize("n_obs", [3, 12])
def test_condition_is_the_direct_solve_and_reset_restores_the_prior(store, n_obs):
    post, K = store
    rng = np.random.default_rng(2)
    idx = rng.choice(N, n_obs, replace=False)
    noise = rng.uniform(0.05, 0.5, n_obs)
    resid = rng.standard_normal((n_obs, 2))
    C = post.to_array()
    A = C[np.ix_(idx, idx)] + np.diag(noise)
    shift = post.condition(idx, noise, resid)
    assert shift.shape == (2, N)
    assert_allclose(shift, (C[:, idx] @ np.linalg.solve(A, resid)).T, atol=1e-10)
    assert_allclose(post.to_array(), C - C[:, idx] @ np.linalg.solve(A, C[idx, :]), atol=1e-10)
    post.reset()
    assert_allclose(post.to_array(), K, atol=1e-12)


def test_condition_that_is_not_positive_definite_changes_nothing(store):
    post, K = store
    C = post.to_array()
    with pytest.raises(LinAlgError, match="not positive definite"):
        post.condition([1, 2], np.array([-50.0, -50.0]), np.ones((2, 1)))
    assert_allclose(post.to_array(), C)


def test_candidate_blocks_cover_the_candidates_in_order(store):
    post, K = store
    C = post.to_array()
    cand = np.array([30, 2, 7, 11, 19, 0, 36])
    seen = []
    for R, rows, cb in post.candidate_blocks(cand, max_bytes=8 * N * 2):
        assert R.flags.c_contiguous and R.dtype == np.float64
        for k, i in enumerate(cb):
            assert_allclose(R[rows[k]], C[i], atol=1e-12)
        seen.extend(cb.tolist())
    assert seen == cand.tolist()


def test_the_threaded_products_with_the_factor_are_those_of_one_call(monkeypatch):
    """times_factor (combine, columns, condition's shift) in row blocks over threads against the
    plain product and against a learner whose factor runs one thread."""
    import core.posteriors.factor as factor_module
    from core.learner.arls import ActiveRLS

    monkeypatch.setattr(factor_module, "ROW_BLOCK", 64)  # many blocks at a small n
    rng = np.random.default_rng(4)
    Phi = rng.standard_normal((1000, 7))
    post = FactorPosterior(Phi)
    coef = rng.standard_normal((3, 7))
    for threads in (2, 3, 16):
        post.threads = threads
        assert_allclose(post.times_factor(coef), coef @ Phi.T, rtol=0, atol=1e-12)
        assert_allclose(post.columns([5, 900]), Phi[[5, 900]] @ Phi.T, rtol=0, atol=1e-12)
    one, many = (ActiveRLS(FactorPosterior(Phi), classes=["a", "b"], lam=0.3, weighting="balanced")
                 for _ in range(2))
    many.posterior.threads = 3
    for learner in (one, many):
        learner.add_many([1, 2, 3], ["a", "b", "a"])
        for i in (10, 500, 999):
            learner.add(i, "b" if i % 2 else "a")
    assert_allclose(many.decision_values, one.decision_values, rtol=0, atol=1e-12)
