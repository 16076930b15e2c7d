"""One-vs-all expected risk with an O(G)-per-point path for "calm" points (private).

Same numbers as :func:`core.criteria.risk.expected_risk_reference` (seed 002 eq. 3.47-3.50,
docs/algorithms.md §3) and the conventions of :mod:`core.criteria._expected_risk_numba`; any class
weights. The O(n T) kernels score every hypothesis ``y`` of candidate ``i`` at every pool
point ``z`` in O(1) after an O(T) pass over the T output lines of ``z``: O(T) work per
(candidate, point) whatever happens at ``z``. This kernel first asks, per (candidate, point),
whether anything CAN happen there.

Calm points. Let ``c = C[z, i]``, ``a_t = m_t(i) + 1``, ``s_y = c / (C_ii + lam_y)``. The
hypothetical label ``y`` moves line ``t`` from ``m_t(z)`` to ``m_t(z) - s_y a_t`` (``t != y``)
or ``m_y(z) - s_y (a_y - 2)``: by at most ``beta = |c| r_max (max_t |m_t(i)| + 1)`` with
``r_max = 1 / (C_ii + min_y lam_y)``, for every ``y`` and ``t``. With ``tau`` the top line at
``z`` and ``rho(z) = min(min_t | |m_t(z)| - 1 |, m_tau(z) - m_second(z))`` (less 1e-12, so that
no output within rounding of a clip bound or of a tie counts), the point is calm when
``2 beta < rho(z)`` and ``m_tau(z) > -1``: then under every hypothesis each line stays in its
clip region (``q = 0``, ``q = (F + 1) / 2`` or ``q = 1``), a clipped value between 0 and 1
keeps between half and 3/2 of itself, and ``tau`` stays the unique argmax. The point risk is
then an explicit rational function of ``s_y``: with ``lin`` the lines inside (-1, 1),

    S1_y = S1_0 - s_y D1 / 2 + s_y [y in lin]                     D1  = sum_{t in lin} a_t
    N_y  = S2x_0 - s_y D2x / 2 + s_y / w_y [y in lin, y != tau]   D2x = sum_{t in lin, t != tau} a_t / w_t
    r_zy = N_y / S1_y

(``S1_0 = sum_t q_t``, ``S2x_0 = sum_{t != tau} q_t / w_t`` at ``z`` before any label). Within
a group ``g`` of classes with the same ``(lam_y, w_y)`` only ``[y in lin]`` and ``[y = tau]``
vary, so the whole group costs O(1): ``(W_g - Pe) A / B + (Pe A + P_g s / w_g) / (B + s)``
with ``A = S2x_0 - s D2x / 2``, ``B = S1_0 - s D1 / 2``, ``P_g = sum_{y in g, lin, != tau}
p(y|i) / w_y``, ``Pe = P_g + [tau in g, lin] p(tau|i) / w_tau`` and ``W_g`` the group's total
prior weight. All terms are sums of non-negative numbers that keep at least half their size
(``B >= S1_0 / 2``, ``A >= S2x_0 / 2``): no cancellation.

Patterns. ``D1``, ``D2x`` and the ``P_g`` depend on the point only through its pattern
``(tau, lin)``. :func:`prepare` sorts the points by pattern once per scoring call; per
candidate each pattern costs O(T + G) and each of its calm points O(G) (:func:`_calm_sum`:
the G group terms are added as one fraction, one division per point). Patterns of fewer than
``_MIN_RUN`` points (many, on a broad kernel) are left to the O(T) kernels.

Calm points are the far ones (small ``|c|``) with outputs not near a clip bound or a tie; on
a kernel with local support most pairs are calm, on a broad one few, and on hard, overlapping
classes (one-vs-all outputs crowding -1, MNIST) almost none: there the O(T) kernels do the work,
and the weighted one gathers its per-group points so that they too run vectorised
(:mod:`core.criteria._expected_risk_weighted`; ``python benchmarks/multiclass_step.py``). A candidate with fewer
than ``min_calm`` calm points is scored by the O(T) kernels directly; otherwise its other
points are gathered and scored by them
(:func:`core.criteria._expected_risk_numba.equal_candidate_sums` for equal weights,
:func:`core.criteria._expected_risk_weighted.weighted_candidate_sums` otherwise). Exact ties,
points on a clip bound and points whose every output is below -1 are never calm, so every
convention of the reference is kept by the O(T) kernels.

Floating point: :func:`_calm_sum` lets LLVM fuse multiply-adds (``fastmath={"contract"}``,
no reassociation): its results are deterministic on a given machine and agree with the
reference to ~1e-15 relative, as the other kernels'.
"""

from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba import njit, prange

from ._expected_risk_numba import _LANES, _clip01, candidate_prior, equal_candidate_sums
from ._expected_risk_weighted import _groups, weighted_candidate_sums

__all__ = ["CalmData", "prepare", "expected_risk_multiclass", "calm_fraction",
           "MIN_CALM_EQUAL", "MIN_CALM_WEIGHTED"]

# Use the calm path for a candidate when at least this fraction of its points is calm. The
# calm pass costs about 1/10 (equal weights) to 1/20 (distinct) of the O(T) kernels per
# point plus a gather of the other points; these thresholds are well above that break-even.
MIN_CALM_EQUAL = 0.3
MIN_CALM_WEIGHTED = 0.15
# Points whose margin is below this never take the calm path: an output within rounding of a
# clip bound, or two top outputs within rounding of each other, would make the reference's
# own rounding decide the clip region or the argmax.
_RHO_FLOOR = 1e-12
_MIN_RUN = 16  # patterns with fewer points are not worth their per-pattern work (never calm)
_CHUNK = 256  # points of one pattern scored together (their data stays in L1 over the groups)
_GROUP_BATCH = 32  # groups added into one fraction (its denominator stays in [4^-32, (9/4)^32])
# rows of the scratch array of _calm_sum (w[row, point])
_WC, _WX, _WS2, _WN, _WD, _WT = 0, 1, 2, 3, 4, 5
_N_W = 6


class CalmData(NamedTuple):
    """What the calm path needs of the outputs, computed once per scoring call (:func:`prepare`).

    The points that can be calm are sorted by their pattern (top line ``tau`` and set of
    lines inside (-1, 1)); within a pattern every masked sum of the module docstring is one
    number per candidate.
    """

    cgrp: np.ndarray  # (T,) int64: group of each class (distinct (lam_y, 1 / w_y))
    glam: np.ndarray  # (G,) lam_y of each group
    giw: np.ndarray  # (G,) 1 / w of each group
    perm: np.ndarray  # (n_e,) int64: points that can be calm, by pattern, ascending within one
    run_start: np.ndarray  # (R + 1,) int64: pattern r is perm[run_start[r]:run_start[r + 1]]
    run_tau: np.ndarray  # (R,) int64: top line of each pattern
    run_lin: np.ndarray  # (R, T) float64: 1 for the lines inside (-1, 1)
    rho: np.ndarray  # (n_e,) margin of each point of perm
    s2x: np.ndarray  # (n_e,) S2x_0
    is1: np.ndarray  # (n_e,) 1 / S1_0 (S1_0 > 5e-13 on a point that can be calm)
    never: np.ndarray  # (n_o,) int64: the points that are never calm
    mz: np.ndarray  # (n, T) the outputs point by point (the other points are gathered from it)


@njit(parallel=True, fastmath=False, cache=True)
def _point_data(MT, iw, keys, pdat):
    """Per point: ``keys[z] = (tau, [t in lin] for each t)`` and ``pdat[:, z] = (rho, S1_0,
    S2x_0)``; ``rho = 0`` where the point is never calm (module docstring)."""
    T, n = MT.shape
    for z in prange(n):
        v1 = -np.inf
        v2 = -np.inf
        tau = 0
        for t in range(T):
            v = MT[t, z]
            if v > v1:
                v2 = v1
                v1 = v
                tau = t
            elif v > v2:
                v2 = v
        reg = np.inf
        s1 = 0.0
        s2x = 0.0
        for t in range(T):
            m = MT[t, z]
            am = abs(m)
            d = abs(am - 1.0)
            reg = d if d < reg else reg
            q = _clip01(0.5 * (m + 1.0))
            s1 += q
            keys[z, 1 + t] = 1 if am < 1.0 else 0
            if t != tau:
                s2x += q * iw[t]
        keys[z, 0] = tau
        gap = v1 - v2
        rho = (reg if reg < gap else gap) - _RHO_FLOOR
        if not (rho > 0.0 and v1 > -1.0):  # also NaN
            rho = 0.0
        pdat[0, z] = rho
        pdat[1, z] = s1
        pdat[2, z] = s2x


def prepare(MT, lam_y, iw, min_run: int = _MIN_RUN) -> CalmData:
    """The :class:`CalmData` of outputs ``MT`` (T, n) and class weights; O(n T log n).

    ``min_run``: patterns with fewer points are left to the O(T) kernels (tests use 1).
    """
    MT = np.ascontiguousarray(MT, dtype=np.float64)
    lam_y = np.ascontiguousarray(lam_y, dtype=np.float64)
    iw = np.ascontiguousarray(iw, dtype=np.float64)
    uniq, cgrp = np.unique(np.stack([lam_y, iw], axis=1), axis=0, return_inverse=True)
    T, n = MT.shape
    keys = np.empty((n, T + 1), dtype=np.int32)
    pdat = np.empty((3, n))
    _point_data(MT, iw, keys, pdat)
    elig = pdat[0] > 0.0
    idx = np.flatnonzero(elig)
    if T <= 57:  # the pattern as one int64: tau (< 64) above the T bits of the linear lines
        packed = (keys[idx, 0].astype(np.int64) << T) | (keys[idx, 1:].astype(np.int64) << np.arange(T)).sum(axis=1)
        _, pid = np.unique(packed, return_inverse=True)
    else:
        _, pid = np.unique(keys[idx], axis=0, return_inverse=True)
    pid = pid.reshape(-1)
    # patterns of fewer than min_run points cost more per point than they save: never calm
    big = np.bincount(pid)[pid] >= min_run if pid.size else np.zeros(0, dtype=bool)
    elig[idx[~big]] = False
    idx, pid = idx[big], pid[big]
    order = np.argsort(pid, kind="stable")
    perm = np.ascontiguousarray(idx[order], dtype=np.int64)
    pid_sorted = pid[order]
    starts = np.flatnonzero(np.r_[True, pid_sorted[1:] != pid_sorted[:-1]]) if perm.size else np.zeros(0, np.int64)
    first = perm[starts]
    return CalmData(
        cgrp=np.ascontiguousarray(cgrp.reshape(-1), dtype=np.int64),
        glam=np.ascontiguousarray(uniq[:, 0]),
        giw=np.ascontiguousarray(uniq[:, 1]),
        perm=perm,
        run_start=np.r_[starts, perm.size].astype(np.int64),
        run_tau=np.ascontiguousarray(keys[first, 0], dtype=np.int64),
        run_lin=np.ascontiguousarray(keys[first, 1:], dtype=np.float64),
        rho=np.ascontiguousarray(pdat[0, perm]),
        s2x=np.ascontiguousarray(pdat[2, perm]),
        is1=np.ascontiguousarray(1.0 / pdat[1, perm]),
        never=np.flatnonzero(~elig).astype(np.int64),
        mz=np.ascontiguousarray(MT.T),
    )


@njit(fastmath={"contract"}, cache=True, error_model="numpy")
def _calm_sum(cp, Kc, rho, s2x, is1, run_start, run_tau, run_lin, cgrp, a, pi, aiw, rgrp, wgrp, giw,
              tot, P, Pe, Wc, Piw):
    """``sum_y p(y|i) / w_y r_zy`` summed over the calm points of one candidate.

    ``cp[j] = C[perm[j], i]``; ``tot`` (n_e,), ``P``, ``Pe``, ``Wc``, ``Piw`` (G,) are scratch
    arrays.

    The G group terms ``num_g / den_g`` of a point are added as one fraction (``N <- N den_g
    + num_g D``, ``D <- D den_g``): one division per point instead of G (a division costs
    as much as the rest of a group). ``B`` and ``B + s`` are divided by ``S1_0`` first, so
    that every ``den_g`` lies in [1/4, 9/4] (module docstring: each clipped value keeps at
    least half of itself and at most 3/2), and at most ``_GROUP_BATCH`` groups share one
    fraction: ``D`` neither overflows nor underflows.
    """
    T = a.shape[0]
    G = rgrp.shape[0]
    ne = cp.shape[0]
    w = np.empty((_N_W, _CHUNK))
    for run in range(run_start.shape[0] - 1):
        j0 = run_start[run]
        j1 = run_start[run + 1]
        tau = run_tau[run]
        # the masked sums of this pattern
        D1 = 0.0
        D2x = 0.0
        for g in range(G):
            P[g] = 0.0
        for t in range(T):
            if run_lin[run, t] != 0.0:
                D1 += a[t]
                if t != tau:
                    D2x += aiw[t]
                    P[cgrp[t]] += pi[t]
        for g in range(G):
            Pe[g] = P[g]
        if run_lin[run, tau] != 0.0:
            Pe[cgrp[tau]] += pi[tau]
        for g in range(G):
            Wc[g] = wgrp[g] - Pe[g]
            Piw[g] = P[g] * giw[g]
        hD1 = -0.5 * D1
        hD2 = -0.5 * D2x
        # chunks of the run, copied into the rows of ONE scratch array (w[row, point], constant
        # rows): LLVM then knows that the rows do not overlap and vectorises the loops (with
        # one array per quantity it needs more run-time alias checks than it allows)
        for c0 in range(j0, j1, _CHUNK):
            c1 = min(c0 + _CHUNK, j1)
            m = c1 - c0
            cpr = cp[c0:c1]
            s2xr = s2x[c0:c1]
            isr = is1[c0:c1]
            for u in range(m):
                w[_WC, u] = cpr[u]
                w[_WX, u] = isr[u]
                w[_WS2, u] = s2xr[u]
                w[_WT, u] = 0.0
            for b0 in range(0, G, _GROUP_BATCH):
                b1 = min(b0 + _GROUP_BATCH, G)
                for u in range(m):
                    w[_WN, u] = 0.0
                    w[_WD, u] = 1.0
                # per group: num / den = (W - Pe) A / B + (Pe A + P s / w) / (B + s), two
                # groups per pass over the points
                g = b0
                while g + 1 < b1:
                    ra = rgrp[g]
                    Wa = Wc[g]
                    Pa = Pe[g]
                    Qa = Piw[g]
                    rb = rgrp[g + 1]
                    Wb = Wc[g + 1]
                    Pb = Pe[g + 1]
                    Qb = Piw[g + 1]
                    for u in range(m):
                        c = w[_WC, u]
                        x = w[_WX, u]
                        S2 = w[_WS2, u]
                        sa = c * ra
                        sxa = sa * x
                        Ba = 1.0 + hD1 * sxa
                        Bsa = Ba + sxa
                        Aa = S2 + hD2 * sa
                        na = Wa * Aa * Bsa + (Pa * Aa + Qa * sa) * Ba
                        da = Ba * Bsa
                        sb = c * rb
                        sxb = sb * x
                        Bb = 1.0 + hD1 * sxb
                        Bsb = Bb + sxb
                        Ab = S2 + hD2 * sb
                        nb = Wb * Ab * Bsb + (Pb * Ab + Qb * sb) * Bb
                        db = Bb * Bsb
                        d2 = da * db
                        Dn = w[_WD, u]
                        w[_WN, u] = w[_WN, u] * d2 + (na * db + nb * da) * Dn
                        w[_WD, u] = Dn * d2
                    g += 2
                if g < b1:
                    ra = rgrp[g]
                    Wa = Wc[g]
                    Pa = Pe[g]
                    Qa = Piw[g]
                    for u in range(m):
                        sa = w[_WC, u] * ra
                        sxa = sa * w[_WX, u]
                        Ba = 1.0 + hD1 * sxa
                        Bsa = Ba + sxa
                        Aa = w[_WS2, u] + hD2 * sa
                        na = Wa * Aa * Bsa + (Pa * Aa + Qa * sa) * Ba
                        da = Ba * Bsa
                        Dn = w[_WD, u]
                        w[_WN, u] = w[_WN, u] * da + na * Dn
                        w[_WD, u] = Dn * da
                for u in range(m):
                    w[_WT, u] += w[_WN, u] / w[_WD, u] * w[_WX, u]
            totr = tot[c0:c1]
            for u in range(m):
                totr[u] = w[_WT, u]
    B = _LANES
    acc = np.zeros(B)
    for j0 in range(0, ne, B):
        L = min(B, ne - j0)
        cpb = cp[j0:j0 + L]
        rhob = rho[j0:j0 + L]
        totb = tot[j0:j0 + L]
        for u in range(L):
            acc[u] += totb[u] if abs(cpb[u]) * Kc < rhob[u] else 0.0
    total = 0.0
    for u in range(B):
        total += acc[u]
    return total


@njit(fastmath=False, cache=True)
def _other_points(crow, mrows, N, cii, a, prior, iw, sum_iw, lam_y, equal, wglam, wgstart, wgmem,
                  rg, theta, risk):
    """``sum_y p(y|i) / w_y sum_z r_zy`` over the first ``N`` points of ``crow``, ``mrows`` by
    the O(T) kernels (``rg``, ``theta``, ``ry``, ``risk``: scratch arrays)."""
    T = a.shape[0]
    for t in range(T):
        risk[t] = 0.0
    total = 0.0
    if equal:
        equal_candidate_sums(crow, mrows, N, a, 1.0 / (cii + lam_y[0]), risk)
        for y in range(T):
            total += prior[y] * iw[y] * iw[y] * risk[y]
        return total
    WG = wglam.shape[0]
    for g in range(WG):
        rg[g] = 1.0 / (cii + wglam[g])
    rA = rg[WG - 1]
    dr = rg[0] - rA
    for g in range(WG):
        theta[g] = (rg[g] - rA) / dr if dr > 0.0 else 0.0
    weighted_candidate_sums(crow, mrows, N, a, iw, sum_iw, rg, theta, wgstart, wgmem, risk)
    for y in range(T):
        total += prior[y] * iw[y] * risk[y]
    return total


@njit(parallel=True, fastmath=False, cache=True)
def _kernel(R, rows, candidates, MT, lam_y, iw, cgrp, glam, giw, perm, run_start, run_tau, run_lin,
            rho, s2x, is1, never, mz, equal, min_calm, n_threads, out, n_calm):
    n = R.shape[1]
    T = MT.shape[0]
    G = glam.shape[0]
    K = candidates.shape[0]
    ne = perm.shape[0]
    sum_iw = 0.0
    for t in range(T):
        sum_iw += iw[t]
    lam_min = glam[0]
    for g in range(G):
        lam_min = glam[g] if glam[g] < lam_min else lam_min
    wglam, wgstart, wgmem = _groups(lam_y)  # groups of the O(T) weighted kernel (by lambda)
    WG = wglam.shape[0]
    n_chunks = min(K, 4 * n_threads)
    for ch in prange(n_chunks):
        # buffers allocated once per chunk of candidates
        cp = np.empty(ne)
        tot = np.empty(ne)
        cbuf = np.empty(n)
        mbuf = np.empty((T, n))
        zidx = np.empty(ne + 1, dtype=np.int64)
        a = np.empty(T)
        prior = np.empty(T)
        pi = np.empty(T)
        aiw = np.empty(T)
        rgrp = np.empty(G)
        wgrp = np.empty(G)
        P = np.empty(G)
        Pe = np.empty(G)
        Wc = np.empty(G)
        Piw = np.empty(G)
        rg = np.empty(WG)
        theta = np.empty(WG)
        risk = np.empty(T)
        for k in range(ch * K // n_chunks, (ch + 1) * K // n_chunks):
            i = candidates[k]
            row = R[rows[k]]
            cii = row[i]
            candidate_prior(MT, i, a, prior)
            amax = 0.0
            for t in range(T):
                am = abs(MT[t, i])
                amax = am if am > amax else amax
            den = cii + lam_min
            Kc = 2.0 * (amax + 1.0) / den if den > 0.0 else np.inf  # inf: no point is calm
            # gather the row in pattern order and list the points that are not calm (one pass,
            # branch-free)
            N = 0
            for j in range(ne):
                c = row[perm[j]]
                cp[j] = c
                zidx[N] = j
                N += np.int64(not (abs(c) * Kc < rho[j]))
            cnt = ne - N
            n_calm[k] = cnt
            if cnt > 0 and cnt >= min_calm * n:
                for t in range(T):
                    pi[t] = prior[t] * iw[t]
                    aiw[t] = a[t] * iw[t]
                for g in range(G):
                    rgrp[g] = 1.0 / (cii + glam[g])
                    wgrp[g] = 0.0
                for t in range(T):
                    wgrp[cgrp[t]] += pi[t]
                total = _calm_sum(cp, Kc, rho, s2x, is1, run_start, run_tau, run_lin, cgrp, a, pi, aiw,
                                  rgrp, wgrp, giw, tot, P, Pe, Wc, Piw)
                # the other points, gathered, by the O(T) kernel
                for jj in range(N):
                    j = zidx[jj]
                    cbuf[jj] = cp[j]
                    mzz = mz[perm[j]]
                    for t in range(T):
                        mbuf[t, jj] = mzz[t]
                for z in never:
                    cbuf[N] = row[z]
                    mzz = mz[z]
                    for t in range(T):
                        mbuf[t, N] = mzz[t]
                    N += 1
                total += _other_points(cbuf, mbuf, N, cii, a, prior, iw, sum_iw, lam_y, equal,
                                       wglam, wgstart, wgmem, rg, theta, risk)
            else:
                total = _other_points(row, MT, n, cii, a, prior, iw, sum_iw, lam_y, equal,
                                      wglam, wgstart, wgmem, rg, theta, risk)
            out[k] = total


def expected_risk_multiclass(R, rows, candidates, MT, lam_y, iw, out, calm=None, min_calm=None,
                             n_calm=None):
    """Expected risk of every one-vs-all candidate, any class weights (module docstring).

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
        ``lam / w_y`` the candidate would get with label ``y``.
    iw : ndarray of shape (T,)
        ``1 / w_t``.
    out : ndarray of shape (k,)
        Receives ``E``.
    calm : CalmData, optional
        :func:`prepare` of the same ``MT``, ``lam_y``, ``iw`` (computed here if omitted; pass
        it to share it between blocks of candidates).
    min_calm : float, optional
        Calm fraction from which a candidate takes the calm path (default
        :data:`MIN_CALM_EQUAL` or :data:`MIN_CALM_WEIGHTED`); 0 always, above 1 never (tests).
    n_calm : ndarray of shape (k,), int64, optional
        Receives the number of calm points of each candidate.
    """
    lam_y = np.ascontiguousarray(lam_y, dtype=np.float64)
    iw = np.ascontiguousarray(iw, dtype=np.float64)
    equal = bool(np.all(lam_y == lam_y[0]) and np.all(iw == iw[0]))
    if min_calm is None:
        min_calm = MIN_CALM_EQUAL if equal else MIN_CALM_WEIGHTED
    if n_calm is None:
        n_calm = np.empty(candidates.shape[0], dtype=np.int64)
    if candidates.shape[0] == 0:
        return
    cd = prepare(MT, lam_y, iw) if calm is None else calm
    _kernel(R, rows, candidates, MT, lam_y, iw, cd.cgrp, cd.glam, cd.giw, cd.perm, cd.run_start,
            cd.run_tau, cd.run_lin, cd.rho, cd.s2x, cd.is1, cd.never, cd.mz, equal, float(min_calm),
            numba.get_num_threads(), out, n_calm)


def calm_fraction(R, rows, candidates, MT, lam_y, iw, min_run: int = _MIN_RUN) -> float:
    """Fraction of (candidate, point) pairs that are calm (benchmarks and tests)."""
    k = candidates.shape[0]
    if k == 0:
        return 0.0
    n_calm = np.empty(k, dtype=np.int64)
    expected_risk_multiclass(R, rows, candidates, MT, lam_y, iw, np.empty(k), calm=prepare(MT, lam_y, iw, min_run),
                             min_calm=2.0, n_calm=n_calm)
    return float(n_calm.sum()) / (k * R.shape[1])
