"""Fused numba kernels of the expected-risk criterion (private; :mod:`core.criteria.expected_risk`).

* :func:`expected_risk_binary` / :func:`expected_risk_multiclass_equal` (one-vs-all, equal
  weights; distinct weights are in :mod:`core.criteria._expected_risk_weighted`): one pass over the rows of
  the posterior covariance ``C`` (row ``i`` is column ``i``: ``C`` is symmetric) scores every
  candidate ``i`` for every hypothetical label ``y`` (docs/algorithms.md §3, seed 002 eq. 3.47-3.50,
  3.53). Candidates run in parallel; within a row the pool points ``z`` are summed in
  ``_LANES`` independent partial sums so that LLVM vectorises the loop without
  ``fastmath`` (the order of summation is fixed, so results are deterministic).

Every kernel reads candidate ``k``'s covariance row as ``R[rows[k]]`` (shape (n,)) and its
pool index as ``candidates[k]`` (so ``C_ii = R[rows[k], candidates[k]]``): a dense posterior
passes its whole array with ``rows = candidates`` (no copy), a factor posterior a computed
block of rows with ``rows = arange(k)`` (:class:`core.posteriors.base.CandidateBlock`).

The same numbers in plain numpy: :func:`core.criteria.risk.expected_risk_reference` (oracle tests).
Conventions (probabilities, ``sign(0) = -1``, argmax ties to the lowest index, uniform
probabilities when all clipped values are 0) are documented in :mod:`core.criteria.risk`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..posteriors import _dense_numba as _dense

_LANES = 32  # independent partial sums per row (a multiple of the SIMD width)
_CANCEL = 1e-3  # recompute a normaliser exactly when it dropped below this fraction


@njit(inline="always")
def _clip01(x):
    if x < 0.0:
        return 0.0
    if x > 1.0:
        return 1.0
    return x


@njit(inline="always")
def _binary_point_risk(f, iw_neg, iw_pos):
    # eq. 3.49 for one point: p(+|z) = clip((f+1)/2); predicted + iff f > 0 (sign(0) = -1)
    p = _clip01(0.5 * (f + 1.0))
    return (1.0 - p) * iw_neg if f > 0.0 else p * iw_pos


@njit(inline="always")
def binary_candidate_risk(row, i, m, lam_neg, lam_pos, iw_neg, iw_pos):
    """Expected risk (eq. 3.50) of binary candidate ``i`` from its covariance row ``row`` = ``C[i, :]``.

    The body of :func:`expected_risk_binary` and :func:`update_and_score_binary` (the same
    arithmetic, so the two give the same bits for the same row).
    """
    n = row.shape[0]
    B = _LANES
    nb = n - n % B
    mi = m[i]
    cii = row[i]
    # f_{L+(x_i, y)} = m - (m_i - y) / (C_ii + lam_y) * C[:, i]    (eq. 3.53)
    a_pos = (mi - 1.0) / (cii + lam_pos)
    a_neg = (mi + 1.0) / (cii + lam_neg)
    acc = np.zeros((2, B))
    acc_pos = acc[0]
    acc_neg = acc[1]
    for z0 in range(0, nb, B):
        r = row[z0:z0 + B]
        mm = m[z0:z0 + B]
        for u in range(B):
            c = r[u]
            mz = mm[u]
            acc_pos[u] += _binary_point_risk(mz - a_pos * c, iw_neg, iw_pos)
            acc_neg[u] += _binary_point_risk(mz - a_neg * c, iw_neg, iw_pos)
    risk_pos = 0.0
    risk_neg = 0.0
    for z in range(nb, n):
        risk_pos += _binary_point_risk(m[z] - a_pos * row[z], iw_neg, iw_pos)
        risk_neg += _binary_point_risk(m[z] - a_neg * row[z], iw_neg, iw_pos)
    for u in range(B):
        risk_pos += acc_pos[u]
        risk_neg += acc_neg[u]
    p_pos = _clip01(0.5 * (mi + 1.0))
    return (1.0 - p_pos) * iw_neg * risk_neg + p_pos * iw_pos * risk_pos


@njit(parallel=True, fastmath=False, cache=True)
def expected_risk_binary(R, rows, m, candidates, lam_neg, lam_pos, iw_neg, iw_pos, out):
    """Expected risk of every binary candidate (eq. 3.50), written into ``out``.

    Parameters
    ----------
    R : ndarray of shape (*, n), C-contiguous
        Rows of the posterior covariance (see the module docstring).
    rows : ndarray of shape (k,), int64
        Row of ``R`` of each candidate.
    m : ndarray of shape (n,)
        Current outputs (+1 means ``classes[1]``).
    candidates : ndarray of shape (k,), int64
        Pool indices to score.
    lam_neg, lam_pos : float
        ``lam / w`` the candidate would get if labelled ``classes[0]`` / ``classes[1]``.
    iw_neg, iw_pos : float
        ``1 / w`` of ``classes[0]`` / ``classes[1]`` (bias correction, eq. 3.49).
    out : ndarray of shape (k,)
    """
    for k in prange(candidates.shape[0]):
        out[k] = binary_candidate_risk(R[rows[k]], candidates[k], m, lam_neg, lam_pos, iw_neg, iw_pos)


@njit(parallel=True, fastmath=False, cache=True)
def update_and_score_binary(C, c, alpha, position, m, lam_neg, lam_pos, iw_neg, iw_pos, out):
    """Write a dense posterior's held rank-one update into ``C`` and score the binary candidates,
    in one pass over ``C``.

    Each block of :data:`core.posteriors._dense_numba.ROW_BLOCK` rows is updated
    (:func:`core.posteriors._dense_numba.update_row`, the arithmetic of every rank-one update of
    a dense ``C``) and its candidate rows are scored (:func:`binary_candidate_risk`) while they
    are in cache: the same numbers as writing the update and then calling
    :func:`expected_risk_binary`, with one read and one write of ``C`` instead of two reads
    and a write. The outputs ``m`` must be those after the update (the learner updates ``m``
    from the updated columns before it updates ``C``).

    Parameters
    ----------
    C : ndarray of shape (n, n), C-contiguous
        The covariance before the update (updated in place).
    c, alpha
        The update ``C += alpha c c^T`` (``c`` must not share memory with ``C``).
    position : ndarray of shape (n,), int64
        ``position[i]`` = the place of pool index ``i`` among the candidates, -1 for a point
        that is not a candidate (each candidate once).
    m, lam_neg, lam_pos, iw_neg, iw_pos
        As in :func:`expected_risk_binary`.
    out : ndarray of shape (k,)
        ``out[position[i]]`` = the expected risk of candidate ``i``.
    """
    n = C.shape[0]
    RB = _dense.ROW_BLOCK
    n_blocks = (n + RB - 1) // RB
    for blk in prange(n_blocks):
        r0 = blk * RB
        r1 = min(n, r0 + RB)
        for r in range(r0, r1):
            _dense.update_row(C[r], r, c, alpha)
        for r in range(r0, r1):
            k = position[r]
            if k >= 0:
                out[k] = binary_candidate_risk(C[r], r, m, lam_neg, lam_pos, iw_neg, iw_pos)


@njit(cache=True)
def equal_candidate_sums(crow, MTb, N, a, rg, risk):
    """Point risks of one candidate with equal class weights, summed over ``z``, into ``risk``.

    The O(n T) body of :func:`expected_risk_multiclass_equal` for one candidate, over the
    first ``N`` entries of ``crow`` and columns of ``MTb``: the candidate's covariance row and
    the outputs, either the whole pool (``crow = C[i]``, ``MTb = MT``) or the points another
    kernel gathered (:mod:`core.criteria._expected_risk_calm`).

    Parameters
    ----------
    crow : ndarray of shape (>= N,)
        ``C[z, i]`` of the points.
    MTb : ndarray of shape (T, >= N), C-contiguous
        Their outputs ``m_t(z)``.
    N : int
    a : ndarray of shape (T,)
        ``m_t(i) + 1``.
    rg : float
        ``1 / (C_ii + lam / w)``.
    risk : ndarray of shape (T,)
        ``risk[y] += sum_z (1 - p(t* | z))`` after the hypothetical label ``y`` (the point
        risk divided by ``1 / w``).
    """
    T = MTb.shape[0]
    B = _LANES
    r_unif = 1.0 - 1.0 / T
    acc = np.zeros((T, B))
    b = np.empty((T, B))
    q = np.empty((T, B))
    st = np.empty((4, B))
    s = st[0]
    S1 = st[1]
    v1 = st[2]
    v2 = st[3]
    for z0 in range(0, N, B):
        L = min(B, N - z0)
        crow_b = crow[z0:z0 + L]
        for u in range(L):
            s[u] = crow_b[u] * rg
            S1[u] = 0.0
            v1[u] = -np.inf
            v2[u] = -np.inf
        for t in range(T):
            mt = MTb[t, z0:z0 + L]
            at = a[t]
            bt = b[t]
            qt = q[t]
            for u in range(L):
                v = mt[u] - s[u] * at
                bt[u] = v
                qq = _clip01(0.5 * (v + 1.0))
                qt[u] = qq
                S1[u] += qq
                o1 = v1[u]
                lo = v if v < o1 else o1
                o2 = v2[u]
                v2[u] = lo if lo > o2 else o2
                v1[u] = v if v > o1 else o1
        for y in range(T):
            by = b[y]
            qo = q[y]
            accy = acc[y]
            n_fix = 0
            for u in range(L):
                vy = by[u] + 2.0 * s[u]
                qy = _clip01(0.5 * (vy + 1.0))
                s1 = (S1[u] - qo[u]) + qy
                cv = v2[u] if by[u] == v1[u] else v1[u]
                vmax = vy if vy > cv else cv
                qs = _clip01(0.5 * (vmax + 1.0))
                pos = s1 > 0.0
                r = 1.0 - qs / (s1 if pos else 1.0)
                bad = s1 < _CANCEL * S1[u]
                n_fix += np.int64(bad)
                accy[u] += 0.0 if bad else (r if pos else r_unif)
            if n_fix > 0:
                for u in range(L):
                    vy = by[u] + 2.0 * s[u]
                    qy = _clip01(0.5 * (vy + 1.0))
                    if (S1[u] - qo[u]) + qy < _CANCEL * S1[u]:
                        e1 = 0.0
                        for t in range(T):
                            e1 += qy if t == y else q[t, u]
                        cv = v2[u] if by[u] == v1[u] else v1[u]
                        vmax = vy if vy > cv else cv
                        qs = _clip01(0.5 * (vmax + 1.0))
                        accy[u] += 1.0 - qs / e1 if e1 > 0.0 else r_unif
    for y in range(T):
        risk_y = 0.0
        for u in range(B):
            risk_y += acc[y, u]
        risk[y] += risk_y


@njit(cache=True)
def candidate_prior(MT, i, a, prior):
    """``a_t = m_t(i) + 1`` and the normalised prior ``p(t | x_i)`` (uniform when all clip to 0)."""
    T = MT.shape[0]
    s_prior = 0.0
    for t in range(T):
        a[t] = MT[t, i] + 1.0
        prior[t] = _clip01(0.5 * (MT[t, i] + 1.0))
        s_prior += prior[t]
    for t in range(T):
        prior[t] = prior[t] / s_prior if s_prior > 0.0 else 1.0 / T


@njit(cache=True)
def candidate_hypotheses(R, rows, candidates, MT, k):
    """What the T label hypotheses of the ``k``-th candidate start from.

    Parameters
    ----------
    R : ndarray of shape (k_R, n)
        Rows of the posterior covariance; ``R[rows[k]]`` is ``C[candidates[k], :]``.
    rows, candidates : ndarray of shape (K,), int64
    MT : ndarray of shape (T, n)
        Current one-vs-all outputs, transposed.
    k : int

    Returns
    -------
    i : int
        The candidate's pool index, ``candidates[k]``.
    row : ndarray of shape (n,)
        ``C[i, :]`` (a view of ``R``).
    cii : float
        ``C_ii``.
    a : ndarray of shape (T,)
        ``m_t(i) + 1``.
    prior : ndarray of shape (T,)
        ``p(t | x_i)`` (:func:`candidate_prior`).
    """
    T = MT.shape[0]
    i = candidates[k]
    row = R[rows[k]]
    a = np.empty(T)
    prior = np.empty(T)
    candidate_prior(MT, i, a, prior)
    return i, row, row[i], a, prior


@njit(parallel=True, fastmath=False, cache=True)
def expected_risk_multiclass_equal(R, rows, MT, candidates, lam_y, iw, out):
    """Expected risk of every one-vs-all candidate when all class weights are equal.

    Every class has the same hypothetical lambda (one group), O(n T) per candidate.
    With equal weights ``w`` the point risk is ``(1 - p(t*|z)) / w`` and, because ``q`` is
    increasing in the output, ``p(t*|z)`` only needs the VALUE of the winning column:
    ``max(F_y, best other)`` where the best other column is ``v2`` if ``b_y`` is the top
    value ``v1`` of the base vector, else ``v1`` (with a tie at the top, ``v2 == v1``). No
    class indices are tracked, so every lane loop is branch-free and vectorises
    (:func:`equal_candidate_sums`).

    Parameters
    ----------
    R : ndarray of shape (*, n), C-contiguous
    rows : ndarray of shape (k,), int64
    MT : ndarray of shape (T, n), C-contiguous
    candidates : ndarray of shape (k,), int64
    lam_y : float
        ``lam / w``, the same for every hypothetical class.
    iw : float
        ``1 / w``.
    out : ndarray of shape (k,)
    """
    n = R.shape[1]
    T = MT.shape[0]
    for k in prange(candidates.shape[0]):
        i, row, cii, a, prior = candidate_hypotheses(R, rows, candidates, MT, k)
        risk = np.zeros(T)
        equal_candidate_sums(row, MT, n, a, 1.0 / (cii + lam_y), risk)
        total = 0.0
        for y in range(T):
            total += prior[y] * iw * iw * risk[y]
        out[k] = total
