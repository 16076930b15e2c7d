"""Estimated classification risk of RLS outputs and the expected risk of a query (numpy).

Everything here is the plain, obviously correct form of the formulas; the fused numba kernels
in :mod:`core._risk_numba` compute the same numbers in one pass over the covariance and are
tested against :func:`expected_risk_reference`.

Conventions (docs/algorithms.md §2-§3, seed 002 eq. 3.46-3.50 with the misprints corrected):

* Decision values ``F`` have shape (n,) or (n, 1) for a binary problem (``+1`` means
  ``classes[1]``) and (n, T) for one-vs-all with T >= 2 classes.
* Soft probabilities ("asymptotic" estimate, eq. 3.46 with the sign corrected):
  binary ``p(classes[1] | z) = clip((f(z) + 1) / 2, 0, 1)`` and ``p(classes[0] | z) = 1 - p``;
  one-vs-all ``p(t | z) = clip((F[z, t] + 1) / 2, 0, 1)`` normalised over ``t``, and uniform
  ``1 / T`` when every clipped value is 0.
* Predicted class: binary ``classes[1]`` iff ``f(z) > 0`` -- so ``sign(0) = -1`` predicts
  ``classes[0]``; one-vs-all ``argmax_t F[z, t]`` with ties going to the lowest class index.
  (For T = 2 one-vs-all columns ``(-f, f)`` the two rules agree.)
* Bias-corrected estimated risk (eq. 3.47 / 3.49), class weights ``w``::

      R(F) = sum_z sum_l p(l | z) / w_l * [l != predicted(z)]
           = sum_z ( sum_t p(t | z) / w_t  -  p(t* | z) / w_t* )

* Expected risk of querying pool point ``i`` (eq. 3.48 / 3.50, "=" misprint corrected to "+")::

      E_i = sum_y p_L(y | x_i) / w_y * R(F_{L + (x_i, y)})

  where ``F_{L+(x_i, y)} = m - C[:, i] (m_i - code(y))^T / (C_ii + lam / w_y)`` is the exact
  rank-one "add point" update of docs/algorithms.md §3 applied hypothetically (``code(y)`` is ``+-1``
  binary, or ``+1`` at ``y`` and ``-1`` elsewhere one-vs-all).
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "one_vs_all_probabilities",
    "class_probabilities",
    "predicted_class_indices",
    "pointwise_risk",
    "estimated_risk",
    "target_codes",
    "expected_risk_reference",
    "expected_risk_reference_rows",
]


def _as_outputs(F) -> np.ndarray:
    """Return decision values as a float64 array of shape (n, T), T = 1 for binary."""
    F = np.asarray(F, dtype=np.float64)
    if F.ndim == 1:
        F = F[:, None]
    if F.ndim != 2 or F.shape[1] < 1:
        raise ValueError(
            f"decision values must have shape (n,) or (n, T); got {F.shape}. Pass learner outputs."
        )
    return F


def one_vs_all_probabilities(F) -> np.ndarray:
    """Unnormalised soft probabilities ``clip((f + 1) / 2, 0, 1)`` (eq. 3.36 sign corrected).

    Parameters
    ----------
    F : array-like of shape (n,), (n, 1) or (n, T)
        Decision values: binary (+1 means ``classes[1]``) or one-vs-all with T columns.

    Returns
    -------
    Q : ndarray of shape (n, n_classes)
        Binary: ``[1 - p, p]`` with ``p = clip((f + 1) / 2, 0, 1)`` (rows sum to 1).
        One-vs-all: ``clip((F + 1) / 2, 0, 1)`` per column (rows need not sum to 1; the gap
        confidence of seed 002 eq. 3.37 uses these values).
    """
    F = _as_outputs(F)
    if F.shape[1] == 1:
        p = np.clip(0.5 * (F[:, 0] + 1.0), 0.0, 1.0)
        return np.column_stack([1.0 - p, p])
    return np.clip(0.5 * (F + 1.0), 0.0, 1.0)


def class_probabilities(F) -> np.ndarray:
    """Soft class probabilities from RLS outputs (docs/algorithms.md §2, eq. 3.46 corrected).

    Parameters
    ----------
    F : array-like of shape (n,), (n, 1) or (n, T)
        Decision values: binary (+1 means ``classes[1]``) or one-vs-all with T columns.

    Returns
    -------
    P : ndarray of shape (n, n_classes)
        Rows sum to 1. Binary: ``[1 - p, p]`` with ``p = clip((f + 1) / 2, 0, 1)``.
        One-vs-all: :func:`one_vs_all_probabilities` normalised per row; uniform ``1 / T``
        where all of them are 0 (every output <= -1).
    """
    F = _as_outputs(F)
    Q = one_vs_all_probabilities(F)
    if F.shape[1] == 1:
        return Q  # [1 - p, p] already sums to 1
    s = Q.sum(axis=1)
    P = np.full_like(Q, 1.0 / Q.shape[1])
    pos = s > 0
    P[pos] = Q[pos] / s[pos, None]
    return P


def predicted_class_indices(F) -> np.ndarray:
    """Index of the predicted class per point.

    Binary: 1 iff ``f > 0`` (``sign(0) = -1``, i.e. ``classes[0]``). One-vs-all: argmax with
    ties to the lowest index.

    Returns
    -------
    ndarray of shape (n,), int64
    """
    F = _as_outputs(F)
    if F.shape[1] == 1:
        return (F[:, 0] > 0.0).astype(np.int64)
    return np.argmax(F, axis=1).astype(np.int64)


def _weights(class_weights, n_classes: int) -> np.ndarray:
    if class_weights is None:
        return np.ones(n_classes)
    w = np.asarray(class_weights, dtype=np.float64)
    if w.shape != (n_classes,) or not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(
            f"class_weights must be {n_classes} finite positive numbers (one per class); got {w!r}."
        )
    return w


def pointwise_risk(F, class_weights=None) -> np.ndarray:
    """Per-point terms of the bias-corrected estimated risk (eq. 3.47 / 3.49).

    Parameters
    ----------
    F : array-like of shape (n,), (n, 1) or (n, T)
        Decision values.
    class_weights : array-like of shape (n_classes,), optional
        Class weights ``w``; all 1 when omitted.

    Returns
    -------
    r : ndarray of shape (n,)
        ``r_z = sum_t p(t|z) / w_t - p(t*|z) / w_t*`` with ``t*`` the predicted class.
    """
    F = _as_outputs(F)
    P = class_probabilities(F)
    iw = 1.0 / _weights(class_weights, P.shape[1])
    t_star = predicted_class_indices(F)
    return P @ iw - P[np.arange(P.shape[0]), t_star] * iw[t_star]


def estimated_risk(F, class_weights=None) -> float:
    """Estimated (bias-corrected) classification risk ``R(F)`` over the pool (eq. 3.47 / 3.49).

    Parameters
    ----------
    F : array-like of shape (n,), (n, 1) or (n, T)
        Decision values of every pool point.
    class_weights : array-like of shape (n_classes,), optional
        Class weights ``w`` (``1 / w_l`` removes the bias that weighting puts into ``p``).

    Returns
    -------
    float
    """
    from ._risk_numba import pointwise_risk_terms

    F = _as_outputs(F)
    n_classes = 2 if F.shape[1] == 1 else F.shape[1]
    inv_w = 1.0 / _weights(class_weights, n_classes)
    terms = np.empty(F.shape[0])
    if F.shape[0]:  # the terms of pointwise_risk in one parallel pass (no (n, K) table), summed as they were
        pointwise_risk_terms(F, inv_w, terms)
    return float(terms.sum())


def target_codes(n_outputs: int, n_classes: int) -> np.ndarray:
    """RLS targets of each class: rows of shape (n_outputs,).

    Returns
    -------
    codes : ndarray of shape (n_classes, n_outputs)
        Binary (``n_outputs == 1``): ``[[-1], [+1]]``. One-vs-all: ``2 I - 1``.
    """
    if n_outputs == 1:
        if n_classes != 2:
            raise ValueError("one output column means a binary problem with exactly 2 classes.")
        return np.array([[-1.0], [1.0]])
    if n_outputs != n_classes:
        raise ValueError(f"one-vs-all needs one output per class; got {n_outputs} for {n_classes}.")
    return 2.0 * np.eye(n_classes) - 1.0


def expected_risk_reference(C, M, candidates, hypothetical_lam, class_weights=None) -> np.ndarray:
    """Expected risk ``E_i`` of each candidate, plain numpy (eq. 3.48 / 3.50; the oracle).

    For every candidate ``i`` and hypothetical class ``y`` the outputs after labelling are
    formed explicitly with the rank-one update of docs/algorithms.md §3 and scored with
    :func:`estimated_risk`. Costs O(n T) memory per (candidate, class); for tests and small n.

    Parameters
    ----------
    C : ndarray of shape (n, n)
        Posterior covariance ``K - K_XL (K_LL + Lambda_L)^-1 K_LX``.
    M : ndarray of shape (n,), (n, 1) or (n, T)
        Current outputs ``m = f_L(X)``.
    candidates : array-like of int, shape (k,)
        Pool indices to score.
    hypothetical_lam : array-like of shape (n_classes,)
        ``lam / w_y``: the regularisation the candidate would get with label ``y``.
    class_weights : array-like of shape (n_classes,), optional
        Class weights used in the risk (all 1 when omitted).

    Returns
    -------
    E : ndarray of shape (k,)
    """
    cand = np.asarray(candidates, dtype=np.int64)
    return expected_risk_reference_rows(C, cand, M, cand, hypothetical_lam, class_weights)


def expected_risk_reference_rows(R, rows, M, candidates, hypothetical_lam, class_weights=None) -> np.ndarray:
    """:func:`expected_risk_reference` reading candidate ``k``'s row of ``C`` as ``R[rows[k]]``.

    Parameters
    ----------
    R : ndarray of shape (*, n)
        Rows of the posterior covariance.
    rows : array-like of int, shape (k,)
        Row of ``R`` of each candidate.
    M, candidates, hypothetical_lam, class_weights
        As in :func:`expected_risk_reference`.

    Returns
    -------
    E : ndarray of shape (k,)
    """
    R = np.asarray(R, dtype=np.float64)
    M = _as_outputs(M)
    n_out = M.shape[1]
    n_classes = 2 if n_out == 1 else n_out
    w = _weights(class_weights, n_classes)
    lam_y = np.asarray(hypothetical_lam, dtype=np.float64)
    codes = target_codes(n_out, n_classes)
    prior = class_probabilities(M)
    cand = np.asarray(candidates, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    E = np.empty(cand.shape[0])
    for k, i in enumerate(cand):
        c = R[rows[k]]
        total = 0.0
        for y in range(n_classes):
            den = c[i] + lam_y[y]
            F_new = M - np.outer(c, M[i] - codes[y]) / den
            total += prior[i, y] / w[y] * estimated_risk(F_new, w)
        E[k] = total
    return E
