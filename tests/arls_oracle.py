"""Slow, obvious oracles for the ARLS tests: direct solves and brute-force refits."""

from __future__ import annotations

import numpy as np

from core.criteria.risk import class_probabilities, estimated_risk, target_codes


def expected_class_weights(labels: dict, classes: list, weighting) -> np.ndarray:
    """Class weights written out independently of core.learner (module docstring there)."""
    T = len(classes)
    if isinstance(weighting, dict):
        return np.array([float(weighting.get(c, 1.0)) for c in classes])
    if weighting == "none" or not labels:
        return np.ones(T)
    n_l = len(labels)
    out = []
    for c in classes:
        n_y = sum(1 for v in labels.values() if v == c)
        out.append(n_l / (T * n_y) if n_y else n_l / T)
    return np.array(out)


def direct_solve(K, labels: dict, classes: list, lam: float, weights: np.ndarray):
    """m = K_XL (K_LL + Lambda)^-1 Y_L and C = K - K_XL (K_LL + Lambda)^-1 K_LX.

    Returns m of shape (n, T) and C of shape (n, n).
    """
    n = K.shape[0]
    T = 1 if len(classes) == 2 else len(classes)
    if not labels:
        return np.zeros((n, T)), K.copy()
    L = np.array(list(labels), dtype=int)
    y = np.array([classes.index(labels[j]) for j in L])
    Y = target_codes(T, len(classes))[y]
    A = K[np.ix_(L, L)] + np.diag(lam / weights[y])
    m = K[:, L] @ np.linalg.solve(A, Y)
    C = K - K[:, L] @ np.linalg.solve(A, K[L, :])
    return m, C


def brute_force_expected_risk(K, labels: dict, classes: list, lam: float, weights: np.ndarray):
    """E_i for every unlabelled i by refitting RLS (direct solve) per candidate and label."""
    n = K.shape[0]
    m, _ = direct_solve(K, labels, classes, lam, weights)
    prior = class_probabilities(m)
    E = np.full(n, np.inf)
    for i in range(n):
        if i in labels:
            continue
        total = 0.0
        for t, c in enumerate(classes):
            F, _ = direct_solve(K, {**labels, i: c}, classes, lam, weights)
            total += prior[i, t] / weights[t] * estimated_risk(F, weights)
        E[i] = total
    return E


POSTERIORS = ("dense", "factor")


def build_learner(posterior: str, X, kernel=None, **kwargs):
    """An ActiveRLS on the given posterior store, for the conformance suite.

    ``"dense"``: the n x n covariance of ``kernel`` on ``X``; ``"factor"``: the low-rank
    store on the full-rank factor ``Phi`` of the same kernel matrix (``K = Phi Phi^T`` from an
    exact eigendecomposition), so both must give the same numbers to rounding.
    """
    from core.kernels import Kernel, eigen_factor
    from core.learner import ActiveRLS

    kernel = Kernel("rbf", width=1.0) if kernel is None else kernel
    if posterior == "dense":
        return ActiveRLS.from_features(X, kernel=kernel, **kwargs)
    if posterior == "factor":
        return ActiveRLS.from_factor(eigen_factor(kernel(np.asarray(X, dtype=float))), **kwargs)
    raise ValueError(f"unknown posterior {posterior!r}")
