"""Fused expected-risk kernels over covariance rows ``R[rows[k]]`` (private).

Same numbers as :func:`core.criteria.risk.expected_risk_reference` (seed 002 eq. 3.47-3.50,
docs/algorithms.md §3) and the same conventions as :mod:`core.criteria._expected_risk_numba` (``sign(0) = -1``, argmax
ties to the lowest index, uniform probabilities when every clipped value is 0, exact
recomputation when an O(1) update of a normaliser cancels). The covariance rows of the
candidates are passed as an array ``R`` and a row index per candidate, so that a dense
posterior (``R = C``, ``rows = candidates``) and a computed block (``R`` of shape (k, n),
``rows = arange(k)``) use the same code.

* :func:`expected_risk_multiclass_weighted`: one-vs-all with any class weights in O(n T) per
  candidate (the previous kernel, which shared the work between the classes of one
  hypothetical lambda, cost O(n T G) for G distinct lambdas; it is kept as the baseline of
  ``benchmarks/weighted_kernel.py``).

How the weighted kernel avoids the factor G. For candidate ``i`` and pool point ``z`` let
``c = C[z, i]``, ``a_t = m_t(i) + 1`` and ``r_g = 1 / (C_ii + lam_g)``. Every class of group
``g`` (one distinct ``lam_g = lam / w_y``) moves the base outputs to
``b_t(u) = m_t(z) - u a_t`` at ``u = u_g = c r_g``: T straight lines evaluated at G points of
the interval between ``u_A = c r_min`` and ``u_B = c r_max``. The kernel evaluates the lines at
the two ends only. If every line stays in the same clip region (``q = 0``, ``q = (b + 1) / 2``
or ``q = 1``) at both ends, and the two best lines (value, then lowest index) are the same two
in the same order at both ends, then the same holds on the whole interval (a difference of
two lines is linear, so it keeps its sign between the ends; a tie at one end is broken the
same way as the strict order at the other). There the clipped sums ``S1 = sum_t q_t`` and
``S2 = sum_t q_t / w_t`` are affine in ``u``: with ``theta_g = (r_g - r_min) / (r_max - r_min)``
(independent of ``z``), ``S_g = (1 - theta_g) S_A + theta_g S_B`` -- a convex combination of
two sums of non-negative terms, hence without cancellation -- and the two best values are
interpolated the same way (``v_A + theta_g (v_B - v_A)``, exact when the line does not move).
Each group then costs O(1) and each hypothesis O(1): O(n T) per candidate. Points ``z`` where
a line crosses a clip boundary or the top two change inside the interval (few: near the
candidate, where ``|c|`` is large, and on data whose outputs crowd a clip bound, as one-vs-all
outputs near -1 on hard, overlapping classes: there they can be most points) are scored exactly
with the lines evaluated at each group's own step (O(T) per group, O(1) per hypothesis:
:func:`_direct_block`). They are gathered from the lane blocks and scored ``_LANES`` at a time
with the lanes in step (vectorised): scored one by one where they occur, as before, each cost
tens of times a vectorised lane, and the weighted kernel cost 10 x the equal-weights one on
MNIST (``python benchmarks/multiclass_step.py``). Lanes where the O(1) update of a normaliser
cancels, and exact ties, take the O(T)-per-hypothesis formula (:func:`_exact_point_risk`).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._expected_risk_numba import _CANCEL, _LANES, _clip01, candidate_hypotheses

__all__ = ["expected_risk_multiclass_weighted", "weighted_slow_fraction"]


# The helpers below are small njit functions that LLVM inlines into the kernel's lane loops
# (which then vectorise); only the two used in the per-hypothesis loop of a one-class group
# are inlined by numba ("always"), which LLVM does not do by itself. Inlining all of them in
# numba gives the same code for ~4x the compile time.

# rows of the per-lane state of the weighted kernel (st[row, lane]); the first 13 are the
# state of the pass over the lines, in the order of _load_state / _store_state
_S1A, _S1B, _S2A, _S2B, _SLOW = 0, 1, 2, 3, 4
_V1A, _V2A, _I1A, _I2A = 5, 6, 7, 8
_V1B, _V2B, _I1B, _I2B = 9, 10, 11, 12
_N_LINE_STATE = 13
# after the pass over the lines: 1 / w of the two best lines at A
_W1, _W2 = 13, 14
# per group of two or more classes: sums, top two values and their q / w at u_g
_S1G, _S2G, _E1G, _E2G, _P1G, _P2G = 15, 16, 17, 18, 19, 20
_N_STATE = 21


@njit
def _load_state(st, u):
    return (st[0, u], st[1, u], st[2, u], st[3, u], st[4, u], st[5, u], st[6, u], st[7, u],
            st[8, u], st[9, u], st[10, u], st[11, u], st[12, u])


@njit
def _store_state(st, u, S):
    st[0, u] = S[0]
    st[1, u] = S[1]
    st[2, u] = S[2]
    st[3, u] = S[3]
    st[4, u] = S[4]
    st[5, u] = S[5]
    st[6, u] = S[6]
    st[7, u] = S[7]
    st[8, u] = S[8]
    st[9, u] = S[9]
    st[10, u] = S[10]
    st[11, u] = S[11]
    st[12, u] = S[12]


@njit
def _line(S, mz, uA, uB, at, iwt, tf):
    """One line ``b_t(u) = m_t(z) - u a_t`` at both ends ``uA``, ``uB`` of one lane."""
    s1a, s1b, s2a, s2b, slw, v1a, v2a, i1a, i2a, v1b, v2b, i1b, i2b = S
    bA = mz - uA * at
    bB = mz - uB * at
    xA = 0.5 * (bA + 1.0)
    xB = 0.5 * (bB + 1.0)
    qA = _clip01(xA)
    qB = _clip01(xB)
    # q is affine between the ends iff both ends are inside [0, 1] or both are clipped to
    # the same bound (x is linear, so it cannot leave and come back); else the lane takes
    # the exact path
    same = ((xA == qA) & (xB == qB)) | (qA == qB)
    # running top two at A and at B (value, index); strict ">" keeps the lowest index on ties
    gt1 = bA > v1a
    gt2 = bA > v2a
    n_v2a = v1a if gt1 else (bA if gt2 else v2a)
    n_i2a = i1a if gt1 else (tf if gt2 else i2a)
    n_v1a = bA if gt1 else v1a
    n_i1a = tf if gt1 else i1a
    gt1 = bB > v1b
    gt2 = bB > v2b
    n_v2b = v1b if gt1 else (bB if gt2 else v2b)
    n_i2b = i1b if gt1 else (tf if gt2 else i2b)
    n_v1b = bB if gt1 else v1b
    n_i1b = tf if gt1 else i1b
    return (s1a + qA, s1b + qB, s2a + qA * iwt, s2b + qB * iwt, slw if same else 1.0,
            n_v1a, n_v2a, n_i1a, n_i2a, n_v1b, n_v2b, n_i1b, n_i2b)


@njit(inline="always")
def _hyp_core(s, S1, S2, cv, cp, my, ay, iwy):
    """O(1) point risk of hypothesis ``y`` with step ``s = c r_g`` on a lane whose clip
    pattern and top two lines do not change between the ends A and B.

    ``S1``, ``S2``: sums of clipped values (``/ w`` for ``S2``) of the base outputs at
    ``u_g``; ``cv``, ``cp``: value and ``q / w`` of the best column other than ``y``; ``my``,
    ``ay``, ``iwy``: ``m_y(z)``, ``m_y(i) + 1``, ``1 / w_y``. Returns ``(r, ok)``; ``ok`` is
    False where the exact path is needed: every clipped value 0 (uniform fallback),
    cancellation in the O(1) update of a normaliser (the test of :mod:`core.criteria._expected_risk_numba`), an
    exact tie between column ``y`` and the best other column, or a slow lane (``S1 = NaN``).
    """
    by = my - s * ay
    vy = by + 2.0 * s
    qo = _clip01(0.5 * (by + 1.0))
    qy = _clip01(0.5 * (vy + 1.0))
    s1 = (S1 - qo) + qy
    s2 = S2 + (qy - qo) * iwy
    win = vy > cv
    num = s2 - (qy * iwy if win else cp)
    pos = s1 > 0.0
    rn = num / (s1 if pos else 1.0)
    ok = pos & (s1 >= _CANCEL * S1) & (s2 >= _CANCEL * S2) & (vy != cv)
    return rn, ok


@njit(inline="always")
def _hyp(st, u, s, th, om, my, ay, iwy, yf):
    """:func:`_hyp_core` with the group quantities interpolated from the two ends here
    (``th = theta_g``, ``om = 1 - theta_g``): for a group of one class."""
    s1a = st[_S1A, u]
    s1b = st[_S1B, u]
    s2a = st[_S2A, u]
    s2b = st[_S2B, u]
    v1a = st[_V1A, u]
    v2a = st[_V2A, u]
    v1b = st[_V1B, u]
    v2b = st[_V2B, u]
    j1 = st[_I1A, u]
    k1 = st[_W1, u]
    k2 = st[_W2, u]
    # sums of clipped values at u_g: a convex combination of the two ends (no cancellation)
    S1 = om * s1a + th * s1b
    S2 = om * s2a + th * s2b
    # best of the other columns at u_g: the top line unless it is y itself. The second
    # operands are "+ 0.0" so that LLVM keeps blends of loaded values (it turns a select of
    # two plain loads into a gather)
    o1 = j1 != yf
    ea = v1a if o1 else v2a + 0.0
    eb = v1b if o1 else v2b + 0.0
    kk = k1 if o1 else k2 + 0.0
    cv = ea + th * (eb - ea)
    cp = _clip01(0.5 * (cv + 1.0)) * kk
    return _hyp_core(s, S1, S2, cv, cp, my, ay, iwy)


@njit
def _group_state(st, u, th, om):
    """The quantities of one group at ``u_g`` (same formulas as :func:`_hyp`), stored for
    the classes of a group of two or more."""
    s1a = st[_S1A, u]
    s1b = st[_S1B, u]
    s2a = st[_S2A, u]
    s2b = st[_S2B, u]
    v1a = st[_V1A, u]
    v2a = st[_V2A, u]
    v1b = st[_V1B, u]
    v2b = st[_V2B, u]
    k1 = st[_W1, u]
    k2 = st[_W2, u]
    e1 = v1a + th * (v1b - v1a)
    e2 = v2a + th * (v2b - v2a)
    st[_S1G, u] = om * s1a + th * s1b
    st[_S2G, u] = om * s2a + th * s2b
    st[_E1G, u] = e1
    st[_E2G, u] = e2
    st[_P1G, u] = _clip01(0.5 * (e1 + 1.0)) * k1
    st[_P2G, u] = _clip01(0.5 * (e2 + 1.0)) * k2


@njit
def _hyp_group(st, u, s, my, ay, iwy, yf):
    """:func:`_hyp_core` with the group quantities stored by :func:`_group_state`."""
    S1 = st[_S1G, u]
    S2 = st[_S2G, u]
    j1 = st[_I1A, u]
    e1 = st[_E1G, u]
    e2 = st[_E2G, u]
    p1 = st[_P1G, u]
    p2 = st[_P2G, u]
    o1 = j1 != yf
    cv = e1 if o1 else e2 + 0.0
    cp = p1 if o1 else p2 + 0.0
    return _hyp_core(s, S1, S2, cv, cp, my, ay, iwy)


@njit(cache=True)
def _exact_point_risk(MT, z, s, a, iw, y, sum_iw):
    """Point risk at ``z`` after the hypothetical label ``y`` with step ``s = c r_y``, in O(T).

    ``F_t = m_t(z) - s a_t`` plus ``2 s`` for ``t = y`` (the same rounding as the O(1) path);
    sums of clipped values formed directly, argmax with ties to the lowest index.
    """
    T = MT.shape[0]
    s1 = 0.0
    s2 = 0.0
    best = -np.inf
    bt = 0
    bq = 0.0
    for t in range(T):
        v = MT[t, z] - s * a[t]
        if t == y:
            v = v + 2.0 * s
        q = _clip01(0.5 * (v + 1.0))
        s1 += q
        s2 += q * iw[t]
        if v > best:
            best = v
            bt = t
            bq = q
    if s1 > 0.0:
        return (s2 - bq * iw[bt]) / s1
    return (sum_iw - iw[bt]) / T


@njit
def _line1(S, mz, s, at, iwt, tf):
    """One line ``b_t = m_t(z) - s a_t`` at one step ``s`` of one lane: sums of clipped
    values and the running top two (value, index; strict ">" keeps the lowest index)."""
    s1, s2, v1, v2, i1, i2 = S
    b = mz - s * at
    q = _clip01(0.5 * (b + 1.0))
    gt1 = b > v1
    gt2 = b > v2
    n_v2 = v1 if gt1 else (b if gt2 else v2)
    n_i2 = i1 if gt1 else (tf if gt2 else i2)
    n_v1 = b if gt1 else v1
    n_i1 = tf if gt1 else i1
    return (s1 + q, s2 + q * iwt, n_v1, n_v2, n_i1, n_i2)


# rows of the scratch array of _direct_block (sd[row, lane])
_DS, _DS1, _DS2, _DV1, _DV2, _DI1, _DI2, _DW1, _DW2 = 0, 1, 2, 3, 4, 5, 6, 7, 8
_N_DIRECT = 9


@njit
def _direct_hyp(sd, u, my, ay, iwy, yf):
    """:func:`_hyp_core` with the group quantities computed at the group's own step."""
    s = sd[_DS, u]
    o1 = sd[_DI1, u] != yf
    cv = sd[_DV1, u] if o1 else sd[_DV2, u] + 0.0
    kk = sd[_DW1, u] if o1 else sd[_DW2, u] + 0.0
    cp = _clip01(0.5 * (cv + 1.0)) * kk
    return _hyp_core(s, sd[_DS1, u], sd[_DS2, u], cv, cp, my, ay, iwy)


@njit
def _direct_block(gm, gc, L, a, iw, sum_iw, rg, gstart, gmem, acc, sd):
    """Points gathered from slow lanes (``gm[:, u]`` their outputs, ``gc[u]`` their
    ``C[z, i]``, ``u < L``), every hypothesis, exactly, with the lanes in step: per group the
    T lines at the group's own step ``s = c r_g`` (O(T) per group, vectorised over the
    points), then O(1) per hypothesis (``acc[y, u] += r_zy``). What the O(1) update cannot
    decide (exact ties, every clipped value 0, cancellation) takes :func:`_exact_point_risk`.
    """
    T = gm.shape[0]
    for g in range(rg.shape[0]):
        r = rg[g]
        for u in range(L):
            sd[_DS, u] = gc[u] * r
            sd[_DS1, u] = 0.0
            sd[_DS2, u] = 0.0
            sd[_DV1, u] = -np.inf
            sd[_DV2, u] = -np.inf
            sd[_DI1, u] = -1.0
            sd[_DI2, u] = -1.0
        for t in range(T):
            mt = gm[t]
            at = a[t]
            iwt = iw[t]
            tf = float(t)
            for u in range(L):
                S = (sd[_DS1, u], sd[_DS2, u], sd[_DV1, u], sd[_DV2, u], sd[_DI1, u], sd[_DI2, u])
                S = _line1(S, mt[u], sd[_DS, u], at, iwt, tf)
                sd[_DS1, u] = S[0]
                sd[_DS2, u] = S[1]
                sd[_DV1, u] = S[2]
                sd[_DV2, u] = S[3]
                sd[_DI1, u] = S[4]
                sd[_DI2, u] = S[5]
        for u in range(L):
            sd[_DW1, u] = iw[np.int64(sd[_DI1, u])]
            sd[_DW2, u] = iw[np.int64(sd[_DI2, u])]
        for jj in range(gstart[g], gstart[g + 1]):
            y = gmem[jj]
            yf = float(y)
            my = gm[y]
            ay = a[y]
            iwy = iw[y]
            n_bad = 0
            for u in range(L):
                rn, ok = _direct_hyp(sd, u, my[u], ay, iwy, yf)
                n_bad += np.int64(not ok)
                acc[y, u] += rn if ok else 0.0
            if n_bad > 0:
                for u in range(L):
                    rn, ok = _direct_hyp(sd, u, my[u], ay, iwy, yf)
                    if not ok:
                        acc[y, u] += _exact_point_risk(gm, u, sd[_DS, u], a, iw, y, sum_iw)


@njit(cache=True)
def _groups(lam_y):
    """Distinct hypothetical lambdas, ascending, and the classes of each (CSR layout)."""
    T = lam_y.shape[0]
    order = np.argsort(lam_y, kind="mergesort")
    glam = np.empty(T)
    start = np.zeros(T + 1, dtype=np.int64)
    G = 0
    for j in range(T):
        lv = lam_y[order[j]]
        if j == 0 or lv != glam[G - 1]:
            glam[G] = lv
            start[G] = j
            G += 1
    start[G] = T
    return glam[:G].copy(), start[:G + 1].copy(), order.astype(np.int64)


@njit(cache=True)
def weighted_candidate_sums(crow_all, MTb, N, a, iw, sum_iw, rg, theta, gstart, gmem, risk):
    """Point risks of one candidate with any class weights, summed over ``z``, into ``risk``.

    The O(n T) body of :func:`expected_risk_multiclass_weighted` for one candidate over the
    first ``N`` entries of ``crow_all`` and columns of ``MTb`` (the whole pool, or points that
    another kernel gathered, as :func:`core.criteria._expected_risk_numba.equal_candidate_sums`).

    Parameters
    ----------
    crow_all : ndarray of shape (>= N,)
        ``C[z, i]``.
    MTb : ndarray of shape (T, >= N), C-contiguous
        ``m_t(z)``.
    N : int
    a : ndarray of shape (T,)
        ``m_t(i) + 1``.
    iw : ndarray of shape (T,)
        ``1 / w_t``; ``sum_iw`` their sum.
    rg, theta : ndarray of shape (G,)
        ``1 / (C_ii + lam_g)`` of the groups of :func:`_groups` and their place in the
        interval of steps (module docstring).
    gstart, gmem : ndarray of int64
        The groups (CSR layout, :func:`_groups`).
    risk : ndarray of shape (T,)
        ``risk[y] += sum_z r_zy`` (the point risk after the hypothetical label ``y``).

    Returns
    -------
    n_slow : int
        Points scored on the exact O(T)-per-hypothesis path.
    """
    T = MTb.shape[0]
    B = _LANES
    G = rg.shape[0]
    rA = rg[G - 1]
    rB = rg[0]
    acc = np.zeros((T, B))
    # Per-lane state: the rows of ONE (_N_STATE, B) array indexed as st[row, lane] with
    # constant rows (LLVM then sees the distances between the rows and vectorises the lane
    # loops; with one array per quantity it gives up: too many runtime alias checks).
    # Class indices are stored as float64 (exact) so that they share that array.
    st = np.empty((_N_STATE, B))
    # the gathered slow lanes: outputs, C[z, i], their sums and the scratch of _direct_block
    gm = np.empty((T, B))
    gc = np.empty(B)
    gacc = np.zeros((T, B))
    sd = np.empty((_N_DIRECT, B))
    ng = 0
    n_slow_k = 0
    for z0 in range(0, N, B):
        L = min(B, N - z0)
        crow = crow_all[z0:z0 + L]
        for u in range(L):
            _store_state(st, u, (0.0, 0.0, 0.0, 0.0, 0.0, -np.inf, -np.inf, -1.0, -1.0,
                                 -np.inf, -np.inf, -1.0, -1.0))
        # one pass over the T lines at both ends of the interval, four (then two, then
        # one) lines per sweep over the lanes: the state is loaded and stored once per
        # sweep and stays in registers in between
        t_quad = T - T % 4
        for t0 in range(0, t_quad, 4):
            mt0 = MTb[t0, z0:z0 + L]
            mt1 = MTb[t0 + 1, z0:z0 + L]
            mt2 = MTb[t0 + 2, z0:z0 + L]
            mt3 = MTb[t0 + 3, z0:z0 + L]
            a0 = a[t0]
            a1 = a[t0 + 1]
            a2 = a[t0 + 2]
            a3 = a[t0 + 3]
            w0 = iw[t0]
            w1 = iw[t0 + 1]
            w2 = iw[t0 + 2]
            w3 = iw[t0 + 3]
            f0 = float(t0)
            f1 = float(t0 + 1)
            f2 = float(t0 + 2)
            f3 = float(t0 + 3)
            for u in range(L):
                cu = crow[u]
                uA = cu * rA
                uB = cu * rB
                S = _load_state(st, u)
                S = _line(S, mt0[u], uA, uB, a0, w0, f0)
                S = _line(S, mt1[u], uA, uB, a1, w1, f1)
                S = _line(S, mt2[u], uA, uB, a2, w2, f2)
                S = _line(S, mt3[u], uA, uB, a3, w3, f3)
                _store_state(st, u, S)
        for t0 in range(t_quad, T - 1, 2):
            t1 = t0 + 1
            mt0 = MTb[t0, z0:z0 + L]
            mt1 = MTb[t1, z0:z0 + L]
            a0 = a[t0]
            a1 = a[t1]
            w0 = iw[t0]
            w1 = iw[t1]
            f0 = float(t0)
            f1 = float(t1)
            for u in range(L):
                cu = crow[u]
                S = _load_state(st, u)
                S = _line(S, mt0[u], cu * rA, cu * rB, a0, w0, f0)
                S = _line(S, mt1[u], cu * rA, cu * rB, a1, w1, f1)
                _store_state(st, u, S)
        if T % 2 == 1:
            t0 = T - 1
            mt0 = MTb[t0, z0:z0 + L]
            a0 = a[t0]
            w0 = iw[t0]
            f0 = float(t0)
            for u in range(L):
                cu = crow[u]
                S = _load_state(st, u)
                S = _line(S, mt0[u], cu * rA, cu * rB, a0, w0, f0)
                _store_state(st, u, S)
        # slow lanes: a line changes clip region or the top two change between the ends
        n_slow_blk = 0
        for u in range(L):
            j1 = st[_I1A, u]
            j2 = st[_I2A, u]
            same = (j1 == st[_I1B, u]) & (j2 == st[_I2B, u])
            sl0 = st[_SLOW, u]
            sl = sl0 if same else 1.0
            st[_SLOW, u] = sl
            n_slow_blk += np.int64(sl > 0.0)
            st[_W1, u] = iw[np.int64(j1)]
            st[_W2, u] = iw[np.int64(j2)]
            # S1_A = NaN on slow lanes: every test of _hyp_core fails there, so they add
            # 0 below and are counted in n_bad (a real fix-up needs n_bad > n_slow_blk)
            s1a = st[_S1A, u]
            st[_S1A, u] = s1a if sl == 0.0 else np.nan
        n_slow_k += n_slow_blk
        # O(1) per group and per hypothesis on the other lanes
        for g in range(G):
            r = rg[g]
            th = theta[g]
            om = 1.0 - th
            shared = gstart[g + 1] - gstart[g] > 1
            if shared:
                for u in range(L):
                    _group_state(st, u, th, om)
            for jj in range(gstart[g], gstart[g + 1]):
                y = gmem[jj]
                yf = float(y)
                my = MTb[y, z0:z0 + L]
                ay = a[y]
                iwy = iw[y]
                n_bad = 0
                if shared:
                    for u in range(L):
                        rn, ok = _hyp_group(st, u, crow[u] * r, my[u], ay, iwy, yf)
                        n_bad += np.int64(not ok)
                        acc[y, u] += rn if ok else 0.0
                else:
                    for u in range(L):
                        rn, ok = _hyp(st, u, crow[u] * r, th, om, my[u], ay, iwy, yf)
                        n_bad += np.int64(not ok)
                        acc[y, u] += rn if ok else 0.0
                if n_bad > n_slow_blk:
                    # exact path for the lanes that failed a test (not the slow lanes)
                    for u in range(L):
                        if st[_SLOW, u] == 0.0:
                            s = crow[u] * r
                            if shared:
                                rn, ok = _hyp_group(st, u, s, my[u], ay, iwy, yf)
                            else:
                                rn, ok = _hyp(st, u, s, th, om, my[u], ay, iwy, yf)
                            if not ok:
                                acc[y, u] += _exact_point_risk(MTb, z0 + u, s, a, iw, y, sum_iw)
        if n_slow_blk > 0:
            # slow lanes: gathered, and scored B at a time with the lanes in step (a slow
            # lane scored on its own costs tens of times a vectorised one, and on data where
            # many outputs sit near a clip bound most blocks hold some)
            for u in range(L):
                if st[_SLOW, u] != 0.0:
                    gc[ng] = crow[u]
                    for t in range(T):
                        gm[t, ng] = MTb[t, z0 + u]
                    ng += 1
                    if ng == B:
                        _direct_block(gm, gc, B, a, iw, sum_iw, rg, gstart, gmem, gacc, sd)
                        ng = 0
    if ng > 0:
        _direct_block(gm, gc, ng, a, iw, sum_iw, rg, gstart, gmem, gacc, sd)
    for y in range(T):
        risk_y = 0.0
        for u in range(B):
            risk_y += acc[y, u]
        for u in range(B):
            risk_y += gacc[y, u]
        risk[y] += risk_y
    return n_slow_k


@njit(parallel=True, fastmath=False, cache=True)
def _weighted(R, rows, candidates, MT, lam_y, iw, out, n_slow):
    """:func:`expected_risk_multiclass_weighted`; ``n_slow[k]`` receives the number of
    points of candidate ``k`` scored on the exact O(T)-per-hypothesis path."""
    n = R.shape[1]
    T = MT.shape[0]
    sum_iw = 0.0
    for t in range(T):
        sum_iw += iw[t]
    glam, gstart, gmem = _groups(lam_y)
    G = glam.shape[0]
    for k in prange(candidates.shape[0]):
        i, row, cii, a, prior = candidate_hypotheses(R, rows, candidates, MT, k)
        # r_g = 1 / (C_ii + lam_g) decreases with lam_g: end A = largest lam, end B = smallest
        rg = np.empty(G)
        for g in range(G):
            rg[g] = 1.0 / (cii + glam[g])
        rA = rg[G - 1]
        rB = rg[0]
        dr = rB - rA
        theta = np.empty(G)
        for g in range(G):
            theta[g] = (rg[g] - rA) / dr if dr > 0.0 else 0.0
        risk = np.zeros(T)
        n_slow[k] = weighted_candidate_sums(row, MT, n, a, iw, sum_iw, rg, theta, gstart, gmem, risk)
        total = 0.0
        for y in range(T):
            total += prior[y] * iw[y] * risk[y]
        out[k] = total


def expected_risk_multiclass_weighted(R, rows, candidates, MT, lam_y, iw, out):
    """Expected risk of every one-vs-all candidate, any class weights, O(n T) per candidate.

    O(n T) per candidate whatever the number G of distinct ``lam_y`` (see the module
    docstring for how).
    Candidates run in parallel.

    Parameters
    ----------
    R : ndarray of shape (k_R, n), C-contiguous, float64
        Rows of the posterior covariance: ``C`` itself, or a computed block of rows.
    rows : ndarray of shape (k,), int64
        ``R[rows[k]]`` is ``C[candidates[k], :]``.
    candidates : ndarray of shape (k,), int64
        Pool indices to score (``C_ii = R[rows[k], candidates[k]]``).
    MT : ndarray of shape (T, n), C-contiguous, T >= 2
        Current one-vs-all outputs, transposed.
    lam_y : ndarray of shape (T,)
        ``lam / w_y`` the candidate would get with label ``y`` (any values > 0).
    iw : ndarray of shape (T,)
        ``1 / w_t``.
    out : ndarray of shape (k,)
        Receives ``E``.

    Notes
    -----
    A Python function on purpose: a cached non-parallel njit function that calls a parallel
    one can crash when it is loaded from the cache (numba issue #8578).
    """
    _weighted(R, rows, candidates, MT, lam_y, iw, out, np.empty(candidates.shape[0], dtype=np.int64))


def weighted_slow_fraction(R, rows, candidates, MT, lam_y, iw, out) -> float:
    """:func:`expected_risk_multiclass_weighted` (into ``out``), returning the fraction of
    (candidate, z) pairs scored on the exact O(T)-per-hypothesis path (benchmarks)."""
    n_slow = np.empty(candidates.shape[0], dtype=np.int64)
    _weighted(R, rows, candidates, MT, lam_y, iw, out, n_slow)
    k = candidates.shape[0]
    return float(n_slow.sum()) / (k * R.shape[1]) if k else 0.0
