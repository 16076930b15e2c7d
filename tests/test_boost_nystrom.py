"""Ensemble and BoostNystrom factors (core.kernels.boost_nystrom, seed 000 §4.3) against
direct dense formulas."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import load_digits

from core.kernels import Kernel
from core.kernels.boost_nystrom import DEFAULT_ETA, boost_nystrom_groups, ensemble_nystrom_groups
from core.kernels.kernel import median_distance


def _blobs(n=150, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=4.0, size=(5, 3))
    return centres[rng.integers(0, 5, n)] + rng.normal(size=(n, 3))


def _nystrom_dense(K, idx):
    """Oracle: E W^+ E^T of the columns ``idx`` of a dense K (pseudo-inverse, no factor)."""
    E = K[:, idx]
    return E @ np.linalg.pinv(K[np.ix_(idx, idx)], rcond=1e-10, hermitian=True) @ E.T


def test_the_ensemble_factor_is_the_weighted_sum_of_the_groups_nystrom_approximations():
    X = _blobs()
    k = Kernel("rbf", width=2.0)
    K = k(X)
    for groups in (boost_nystrom_groups(X, k, 12, 4, seed=1), ensemble_nystrom_groups(X, 12, 4, seed=1)):
        Phi = groups.factor(X, k)
        oracle = sum(w * _nystrom_dense(K, groups.indices[groups.groups == j]) for j, w in enumerate(groups.weights))
        np.testing.assert_allclose(Phi @ Phi.T, oracle, atol=1e-8)
        np.testing.assert_array_equal(groups.landmarks, X[groups.indices])


def test_boost_groups_are_disjoint_best_subsets_weighted_by_their_validation_error():
    X = _blobs(200, seed=2)
    k = Kernel("rbf", width=2.0)
    b = boost_nystrom_groups(X, k, 12, 3, d=4, seed=3, n_rows=10_000)  # every row in R
    assert b.groups.tolist() == [0] * 12 + [1] * 12 + [2] * 12
    assert np.unique(b.indices).size == 36  # disjoint groups
    assert b.validation.size == 12 and not np.isin(b.indices, b.validation).any()
    # each group's error, recomputed densely on all rows and the validation columns
    K = k(X)
    KV = K[:, b.validation]
    for j in range(3):
        approx = _nystrom_dense(K, b.indices[b.groups == j])[:, b.validation]
        assert b.errors[j] == pytest.approx(np.linalg.norm(KV - approx) / np.linalg.norm(KV), rel=1e-8)
    # Algorithm 9: mu_j proportional to exp(-eta eps_j), summing to one
    assert b.weights.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(b.weights / b.weights[0], np.exp(-DEFAULT_ETA * (b.errors - b.errors[0])), rtol=1e-12)


def _boost_oracle(X, k, m, p, d, seed):
    """Seed 000 Algorithms 7-8 written out on the dense K (all rows scored), drawing from the
    same generator in the same order as the function: V, the rows, then each iteration's
    sample from P_t."""
    n = X.shape[0]
    K = k(X)
    rng = np.random.default_rng(seed)
    V = rng.choice(n, m, replace=False)
    rng.choice(n, n, replace=False)  # the rows: all of them
    KV = K[:, V]

    def err(idx):
        return np.linalg.norm(KV - _nystrom_dense(K, idx)[:, V]) / np.linalg.norm(KV)

    P = np.ones(n)
    P[V] = 0
    groups = []
    for t in range(1, p + 1):
        live = np.flatnonzero(P > 0)
        cols = live[rng.choice(live.size, m * (p - t + 1), replace=False, p=P[live] / P[live].sum())]
        subsets = cols.reshape(-1, d)
        errs = np.array([err(s) for s in subsets])
        order = np.argsort(errs, kind="stable")
        best = order[: m // d]
        groups.append(np.sort(subsets[best].ravel()))
        P[groups[-1]] = 0  # Algorithm 8 step 4
        if t < p:  # steps 1-3: the next m / d subsets get eps_avg / eps_min times the probability
            P[subsets[order[m // d: 2 * (m // d)]].ravel()] *= errs.mean() / errs[best].mean()
    return groups


@pytest.mark.parametrize("m, p, d", [(8, 3, 2), (6, 4, 3)])
def test_the_groups_follow_algorithms_7_and_8_step_by_step(m, p, d):
    X = _blobs(160, seed=4)
    k = Kernel("rbf", width=2.0)
    b = boost_nystrom_groups(X, k, m, p, d=d, seed=5, n_rows=10_000)
    for j, group in enumerate(_boost_oracle(X, k, m, p, d, seed=5)):
        np.testing.assert_array_equal(b.indices[b.groups == j], group)


def test_boost_is_closer_to_the_kernel_than_the_ensemble_and_one_group_on_digits():
    """The seed's claim (Fig. 4.3), on scikit-learn's digits, mean over 4 seeds."""
    X = load_digits().data / 16.0
    k = Kernel("rbf", width=median_distance(X))
    K = k(X)

    def err(Phi):
        return np.linalg.norm(K - Phi @ Phi.T) / np.linalg.norm(K)

    boost = np.mean([err(boost_nystrom_groups(X, k, 20, 5, seed=s).factor(X, k)) for s in range(4)])
    ens = np.mean([err(ensemble_nystrom_groups(X, 20, 5, seed=s).factor(X, k)) for s in range(4)])
    base = np.mean([err(ensemble_nystrom_groups(X, 20, 1, seed=s).factor(X, k)) for s in range(4)])
    assert boost < ens < base


@pytest.mark.parametrize("kwargs, message", [
    (dict(m=10, p=2, d=3), "multiple of the subset size"),
    (dict(m=50, p=3), "more than the pool's 150"),
    (dict(m=0, p=2), "m must be an integer >= 1"),
    (dict(m=10, p=2, eta=-1.0), "eta must be"),
])
def test_bad_sizes_are_refused_with_the_fix(kwargs, message):
    with pytest.raises(ValueError, match=message):
        boost_nystrom_groups(_blobs(), Kernel("rbf", width=2.0), **kwargs)
    with pytest.raises(ValueError, match="m \\* p <= n"):
        ensemble_nystrom_groups(_blobs(), 100, 2)
