"""The exact update steps of ARLS, phrased on the posterior protocol, with their guards.

Every step is a correction ``m += C[:, S] W``, ``C += C[:, S] M C[S, :]`` with a small index
set ``S`` (docs/algorithms.md §3, §8; seed 002 §3.3.3, eq. 3.51-3.55, App. A.4):

* add ``i`` with ``lambda_i``:  ``den = C_ii + lambda_i``,
  ``m -= C[:, i] (m_i - y_i)^T / den``, ``C -= C[:, i] C[i, :] / den``.
* remove ``S``:  ``D = Lambda_S - C_SS``, ``m -= C[:, S] D^-1 (y_S - m_S)``,
  ``C += C[:, S] D^-1 C[S, :]`` (one point: ``D = lambda_j - C_jj``).
* relabel ``j`` (same ``lambda_j``):  ``m += C[:, j] (y_j' - y_j)^T / lambda_j``.
* reweight a set ``S`` from ``Lambda_S`` to ``Lambda_S + diag(delta)`` (block Woodbury form;
  ``C[:, L] = K_XL A^-1 Lambda`` and ``A^-1 = Lambda^-1 (Lambda - C_LL) Lambda^-1`` with
  ``A = K_LL + Lambda``)::

      G  = Lambda_S^-1 (Lambda_S - C_SS) Lambda_S^-1          (= (A^-1)_SS)
      Mw = (I + diag(delta) G)^-1 diag(delta)
      C' = C + C[:, S] (Lambda_S^-1 Mw Lambda_S^-1) C[S, :]
      m' = m - C[:, S] Lambda_S^-1 Mw c_S,    c_S = (y_S - m_S) / lambda_S   (eq. 3.54)

Guards. A step divides by ``den``, ``D`` or solves with ``I + diag(delta) G``. The entries of
``C`` carry an absolute rounding error of order ``eps * max K_ii`` (the kernel ``scale``), so a
denominator near that scale, or an ill-conditioned small system, amplifies it. Each step
returns its error amplification, the product of

* ``(lambda + scale) / denominator`` (the denominators ``den`` and ``D_jj``);
* for a solve with ``A = I + diag(delta) G``: LAPACK's condition estimate of ``A`` times the
  cancellation in forming it, ``max_i sum_j (|I| + |delta_i| |G_ij|) / sum_j |A_ij|``. A weight
  that goes back from huge to small (``delta ~ -lambda``) cancels ``I + diag(delta) G`` to
  rounding noise, whose condition estimate alone would not see it.

and raises :class:`GuardTripped` instead of stepping when a denominator is below
``DENOM_RTOL * (lambda + scale)``; the learner adds ``eps * amplification`` to a running error
estimate and rebuilds by a direct solve when a step or the total is too large
(:mod:`core.learner.arls`). The outputs are accounted there too: each step leaves an absolute
rounding of order ``eps`` times the terms it moves in ``m``, which the learner compares with the
size of the terms that sum to ``m``, ``scale * sum_j |y_j - m_j| / lambda_j`` (``m = K_XL c``
with the dual coefficients ``c = Lambda^-1 (Y_L - m_L)``, eq. 3.54). A huge lambda shrinks
those terms by its ratio, so the errors left by earlier steps (and by the last direct solve)
count that much more: lambda 0.1 -> 1e20 -> 0.1 is caught whichever step it is.

Each function takes the posterior and the outputs ``mT`` (T, n), updates both in place, and
returns the amplification; the caller has validated its arguments. A step whose amplification
the caller refuses is simply followed by a rebuild from the prior, which overwrites it.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

__all__ = ["GuardTripped", "RebuildIsCheaper", "add_step", "add_reweight_step", "remove_step", "reweight_matrices", "reweight_step",
           "relabel_step"]

DENOM_RTOL = 1e-8  # a denominator must exceed this fraction of (its lambda + the kernel scale)


class GuardTripped(Exception):
    """A step would be numerically unsafe; rebuild by a direct solve instead."""


class RebuildIsCheaper(Exception):
    """The posterior recomputes from scratch faster than it applies this block."""


def solve_with_condition(A: np.ndarray, B: np.ndarray) -> tuple[np.ndarray, float]:
    """``A^-1 B`` by LU and LAPACK's 1-norm condition estimate of ``A`` (O(s^2) after the LU).

    Raises
    ------
    GuardTripped
        If ``A`` is exactly singular or not finite.
    """
    if not np.all(np.isfinite(A)):
        raise GuardTripped
    lu, piv, info = lapack.dgetrf(A)
    if info != 0:
        raise GuardTripped
    rcond, info = lapack.dgecon(lu, float(np.abs(A).sum(axis=0).max()), norm="1")
    if info != 0 or not rcond > 0:
        raise GuardTripped
    X, info = lapack.dgetrs(lu, piv, B)
    if info != 0:
        raise GuardTripped
    return X, 1.0 / rcond


def cancellation(terms: np.ndarray, total: np.ndarray) -> float:
    """``max_i sum_j terms_ij / sum_j |total_ij|``: how much a sum of terms (entry bounds
    ``terms`` >= 0) cancelled in forming ``total``; inf when a row cancelled to exactly 0."""
    size = np.abs(total).sum(axis=1)
    bound = terms.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(bound == 0, 1.0, bound / size)
    return float(np.max(ratio)) if ratio.size else 1.0


def check_denominators(D, lam, scale: float) -> float:
    """Guard ``D_j = lambda_j - C_jj`` (or ``C_ii + lambda_i``); return the amplification.

    Raises
    ------
    GuardTripped
        If a denominator is not finite or below ``DENOM_RTOL * (lambda_j + scale)``.
    """
    D = np.asarray(D, dtype=np.float64)
    ref = np.asarray(lam, dtype=np.float64) + scale
    if not np.all(np.isfinite(D)) or np.any(D <= DENOM_RTOL * ref):
        raise GuardTripped
    return float(np.max(ref / D))


def add_step(post, mT: np.ndarray, i: int, code: np.ndarray, lam_i: float, scale: float) -> float:
    """Rank-one 'add point' ``i`` with target row ``code`` (T,) (seed eq. 3.53, 3.55)."""
    den = float(post.diag([i])[0]) + lam_i
    amp = check_denominators([den], [lam_i], scale)
    resid = mT[:, i] - code
    mT -= post.combine([i], (resid / den)[None, :])
    post.update([i], [[-1.0 / den]])
    return amp


def remove_step(post, mT: np.ndarray, S: np.ndarray, codes_S: np.ndarray, lam_s: np.ndarray,
                scale: float) -> float:
    """Remove labels ``S`` (targets ``codes_S`` (s, T), old lambdas ``lam_s``): exact downdate."""
    D = np.diag(lam_s) - post.block(S)
    D = 0.5 * (D + D.T)
    amp = check_denominators(np.diagonal(D), lam_s, scale)
    if S.size == 1:
        Dinv, cond = np.array([[1.0 / D[0, 0]]]), 1.0
    else:
        Dinv, cond = solve_with_condition(D, np.eye(S.size))
        Dinv = 0.5 * (Dinv + Dinv.T)
    resid = codes_S - mT[:, S].T  # (s, T)
    mT -= post.combine(S, Dinv @ resid)
    post.update(S, Dinv)
    return amp * cond


def reweight_matrices(C_SS: np.ndarray, m_S: np.ndarray, codes_S: np.ndarray, lam_old: np.ndarray,
                       lam_new: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray, float]:
    """The small matrices of a block reweight (module docstring) from ``C_SS`` and ``m_S`` (T, s).

    Returns ``(M, W, amplification)`` such that the reweight is ``C += C[:, S] M C[S, :]``
    and ``m += C[:, S] W`` (``mT += W^T C[S, :]``).
    """
    delta = lam_new - lam_old
    Dm = np.diag(lam_old) - C_SS
    amp = check_denominators(np.diagonal(Dm), lam_old, scale)
    inv = 1.0 / lam_old
    with np.errstate(over="ignore", invalid="ignore"):
        G = inv[:, None] * Dm * inv[None, :]  # not Dm / outer(lam, lam): that overflows for lam > 1e154
        eye = np.eye(lam_old.size)
        A = eye + delta[:, None] * G
        Mw, cond = solve_with_condition(A, np.diag(delta))
        cond *= cancellation(eye + np.abs(delta)[:, None] * np.abs(G), A)
        Mw = 0.5 * (Mw + Mw.T)
        c_S = (codes_S - m_S.T) / lam_old[:, None]  # (s, T) dual coefficients, eq. 3.54
        M, W = inv[:, None] * Mw * inv[None, :], -(inv[:, None] * (Mw @ c_S))
    if not (np.all(np.isfinite(M)) and np.all(np.isfinite(W)) and np.isfinite(cond)):
        raise GuardTripped
    return M, W, amp * cond


def reweight_step(post, mT: np.ndarray, S: np.ndarray, codes_S: np.ndarray, lam_old: np.ndarray,
                  lam_new: np.ndarray, scale: float) -> float:
    """Block (Woodbury) reweight of labels ``S`` from ``lam_old`` to ``lam_new`` (module docstring)."""
    M, W, amp = reweight_matrices(post.block(S), mT[:, S], codes_S, lam_old, lam_new, scale)
    mT += post.combine(S, W)
    post.update(S, M)
    return amp


def add_reweight_step(post, mT: np.ndarray, i: int, code: np.ndarray, lam_i: float, S: np.ndarray,
                      codes_S: np.ndarray, lam_old: np.ndarray, lam_new: np.ndarray,
                      scale: float) -> tuple[float, float]:
    """Add point ``i`` and reweight labels ``S`` (``i`` not in ``S``) in ONE update of ``C``.

    The same result as :func:`add_step` followed by :func:`reweight_step` (what a new label
    does under "balanced" weights, where it changes the weights of every class), with one
    pass over ``C`` instead of two. With ``V = [C[:, S], C[:, i]]`` (before the step),
    ``den = C_ii + lambda_i`` and ``E = [I; -C_iS / den]`` ((s + 1) x s), the added point
    gives ``C1 = C + V diag(0, -1/den) V^T`` and ``C1[:, S] = V E``, so the reweight
    ``(M2, W2)`` computed from ``C1_SS`` and ``m1_S`` composes into
    ``C += V (E M2 E^T + diag(0, -1/den)) V^T`` and ``m += V (E W2 + [0; -(m_i - y_i) / den])``.

    Returns
    -------
    (amplification of the add, amplification of the reweight)
    """
    s = S.size
    idx = np.append(S, i).astype(np.int64)
    B = post.block(idx)
    c_S = B[:s, s]
    den = float(B[s, s]) + lam_i
    amp_add = check_denominators([den], [lam_i], scale)
    resid = mT[:, i] - code  # (T,)
    C1_SS = B[:s, :s] - np.outer(c_S, c_S) / den
    m1_S = mT[:, S] - np.outer(resid, c_S) / den
    M2, W2, amp_rw = reweight_matrices(C1_SS, m1_S, codes_S, lam_old, lam_new, scale)
    E = np.vstack([np.eye(s), -c_S[None, :] / den])
    N = E @ M2 @ E.T
    N[s, s] -= 1.0 / den
    W = E @ W2
    W[s] -= resid / den
    mT += post.combine(idx, W)
    post.update(idx, N)
    return amp_add, amp_rw


def relabel_step(post, mT: np.ndarray, j: int, code_old: np.ndarray, code_new: np.ndarray, lam_j: float) -> float:
    """``m += C[:, j] (y_j' - y_j)^T / lambda_j``: ``m = C[:, L] Lambda^-1 Y_L`` is linear in the targets.

    Returns the amplification 1 (``C`` does not change; the learner still accounts the
    rounding of ``m``, see the module docstring).
    """
    mT += post.combine([j], ((code_new - code_old) / lam_j)[None, :])
    return 1.0
