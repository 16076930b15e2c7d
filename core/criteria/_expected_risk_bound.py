"""Lower bounds of the one-vs-all expected risk, to skip candidates that cannot be picked (private).

The exact one-vs-all kernels cost O(T) per (candidate, point) with a large constant (the
weighted one ~4 x the equal-weights one, ``python benchmarks/multiclass_step.py``). A query
only needs the candidate of lowest expected risk (and every candidate tied with it), so this
module gives, for every candidate ``i``, a number ``B_i <= E_i`` in one cheap O(n T) pass
(additions and maxima, one division per point); the criterion then scores exactly only the
candidates whose bound is below the best exact score found
(:meth:`core.criteria.expected_risk.ExpectedRisk.score_to_pick`). The derivation is
docs/algorithms.md §16; in short, for pool point ``z``, hypothesis ``y`` and step
``s_y = C[z, i] / (C_ii + lam_y)`` every output moves by ``Delta_t = s_y (2 [t = y] - a_t)``
(``a_t = m_t(i) + 1``), and:

* every clipped value ``q_t = clip((F_t + 1) / 2, 0, 1)`` moves by its linear part
  ``[t in lin] Delta_t / 2`` plus an error of at most ``max(0, |Delta_t| / 2 - dist_t)``,
  ``dist_t`` the distance of ``(m_t(z) + 1) / 2`` to the nearest clip bound (0 or 1);
* when the gap between the two top outputs exceeds ``|s| (max a - min a + 2)`` the argmax
  stays; otherwise the top term is bounded by the largest ``q_t / w_t`` reachable;
* the point risk ``N / S1`` is then at least ``N_lo / D_hi`` (``N >= N_lo``, ``0 < S1 <=
  D_hi``; where ``S1 = 0`` the risk is the uniform value >= 0 and ``N_lo <= 0``), and one
  common ``D_hi`` for the T hypotheses lets their sum over ``y`` be formed in the same pass
  over the lines as the sums of the numerators.

Everything above ``|s|`` uses ``|s_y| <= |C[z, i]| r_max`` (``r_max = 1 / (C_ii + min_y lam_y)``),
so the bound holds for any class weights (a hypothesis of prior 0 is left out: it adds nothing
to ``E_i``). On the benchmark's data sets 83-97 % of the candidates are proven unable to be
picked at this cost (docs/benchmarks.md §10).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ._expected_risk_numba import _LANES, candidate_hypotheses

__all__ = ["BoundData", "prepare_bounds", "risk_lower_bounds"]

class BoundData(NamedTuple):
    """What the bounds need of the outputs, per pool point (:func:`prepare_bounds`)."""

    dist: np.ndarray  # (T, n) distance of (m + 1) / 2 to the nearest of 0 and 1
    q: np.ndarray  # (T, n) clipped values
    point: np.ndarray  # (7, n) top gap (0 on a tie), S1_0, S2_0 = sum q / w, N0 = S2_0 - q_top / w_top,
    #                    top line, 1.0 if the top line is inside (-1, 1), its dist
    pid: np.ndarray  # (n,) int64 the point's set of lines inside (-1, 1), a row of pat
    pat: np.ndarray  # (P, T) 1.0 for the lines inside (-1, 1) of each distinct set


def prepare_bounds(MT, iw) -> BoundData:
    """:class:`BoundData` of outputs ``MT`` (T, n) and ``iw = 1 / w`` (T,); O(n T)."""
    MT = np.ascontiguousarray(MT, dtype=np.float64)
    iw = np.asarray(iw, dtype=np.float64)
    T, n = MT.shape
    x = 0.5 * (MT + 1.0)
    q = np.clip(x, 0.0, 1.0)
    lin = ((x > 0.0) & (x < 1.0)).astype(np.float64)
    dist = np.minimum(np.abs(x), np.abs(x - 1.0))
    tau = np.argmax(MT, axis=0)
    cols = np.arange(n)
    top = MT[tau, cols]
    rest = MT.copy()
    rest[tau, cols] = -np.inf
    gap = top - rest.max(axis=0) if T > 1 else np.full(n, np.inf)
    s1 = q.sum(axis=0)
    s2 = iw @ q
    n0 = s2 - q[tau, cols] * iw[tau]
    if T <= 62:  # the set of lines inside (-1, 1) as the bits of one int64
        packed = (lin.astype(np.int64) << np.arange(T, dtype=np.int64)[:, None]).sum(axis=0)
        first_keys, first, pid = np.unique(packed, return_index=True, return_inverse=True)
        pat = lin[:, first].T
    else:
        pat, pid = np.unique(lin.T, axis=0, return_inverse=True)
    point = np.stack([gap, s1, s2, n0, tau.astype(np.float64), lin[tau, cols], dist[tau, cols]])
    return BoundData(np.ascontiguousarray(dist), np.ascontiguousarray(q), np.ascontiguousarray(point), np.ascontiguousarray(pid.reshape(-1), dtype=np.int64),
                     np.ascontiguousarray(pat, dtype=np.float64))


@njit(fastmath={"reassoc", "contract", "nsz"}, cache=True)
def _bound_sums(crow, n, dist, q, point, pid, psum, a, iw, ha, hb, iwa, rhoiw, piiw, W, Rs, rmax, rmin, omega,
                hamax, st):
    """``sum_z`` of the per-point bound of one candidate (module docstring).

    The pool points in blocks of ``_LANES``: the four sums over the lines (errors of the clip,
    with and without ``1 / w``, the largest change of an error when the line is the
    hypothesis, and its prior-weighted sum) with the lanes in step (vectorised), then the
    rest point by point. The sums over the lines inside (-1, 1) depend on the point only
    through that set (``psum[pid[z]]``); the sums over the lines other than the top one are
    the full sums less the top line's term.
    """
    T = a.shape[0]
    B = _LANES
    sSM = st[0]
    sEBD = st[1]
    sEB2 = st[2]
    sMX = st[3]
    sGE = st[4]
    sMH = st[5]
    gPD = st[6]
    gP2 = st[7]
    gGN = st[8]
    gHA = st[9]
    gHB = st[10]
    gIW = st[11]
    gIWA = st[12]
    gRI = st[13]
    gPI = st[14]
    acc = np.zeros(B)
    total = 0.0
    for z0 in range(0, n, B):
        L = min(B, n - z0)
        cz = crow[z0:z0 + L]
        for u in range(L):
            sSM[u] = abs(cz[u]) * rmax
            sEBD[u] = 0.0
            sEB2[u] = 0.0
            sMX[u] = 0.0
            sGE[u] = 0.0
        for t in range(T):
            dt = dist[t, z0:z0 + L]
            hat = ha[t]
            hbt = hb[t]
            iwt = iw[t]
            pit = piiw[t]
            for u in range(L):
                sm = sSM[u]
                e = sm * hat - dt[u]
                e = e if e > 0.0 else 0.0
                e2 = sm * hbt - dt[u]
                e2 = e2 if e2 > 0.0 else 0.0
                de = e2 - e
                sEBD[u] += e
                sEB2[u] += iwt * e
                mx = sMX[u]
                sMX[u] = de if de > mx else mx
                sGE[u] += pit * de
        # the argmax cannot change where the top gap exceeds sm * omega; elsewhere the top
        # term is bounded by the largest q / w the lines can reach
        n_free = 0
        pg = point[0, z0:z0 + L]
        for u in range(L):
            n_free += np.int64(not (pg[u] > sSM[u] * omega))
        if n_free > 0:
            for u in range(L):
                sMH[u] = 0.0
            for t in range(T):
                qt = q[t, z0:z0 + L]
                iwt = iw[t]
                for u in range(L):
                    qh = qt[u] + sSM[u] * hamax
                    qh = (qh if qh < 1.0 else 1.0) * iwt
                    mh = sMH[u]
                    sMH[u] = qh if qh > mh else mh
        p1 = point[1, z0:z0 + L]
        p2 = point[2, z0:z0 + L]
        p3 = point[3, z0:z0 + L]
        ptau = point[4, z0:z0 + L]
        pl = point[5, z0:z0 + L]
        pdt = point[6, z0:z0 + L]
        pidb = pid[z0:z0 + L]
        # gather what depends on the point's pattern and top line (scalar loads), so that
        # the arithmetic below runs with the lanes in step
        for u in range(L):
            ti = np.int64(ptau[u])
            pz = pidb[u]
            gPD[u] = psum[pz, 0]
            gP2[u] = psum[pz, 1]
            gGN[u] = psum[pz, 2]
            gHA[u] = ha[ti]
            gHB[u] = hb[ti]
            gIW[u] = iw[ti]
            gIWA[u] = iwa[ti]
            gRI[u] = rhoiw[ti]
            gPI[u] = piiw[ti]
        for u in range(L):
            c = cz[u]
            sm = sSM[u]
            P2 = gP2[u]
            GN = gGN[u]
            EB2 = sEB2[u]
            GE = sGE[u]
            l = pl[u]
            e = sm * gHA[u] - pdt[u]
            e = e if e > 0.0 else 0.0
            e2 = sm * gHB[u] - pdt[u]
            e2 = e2 if e2 > 0.0 else 0.0
            num_f = (W * (p3[u] - (EB2 - gIW[u] * e)) - c * (0.5 * Rs * (P2 - l * gIWA[u]) - (GN - l * gRI[u]))
                     - (GE - gPI[u] * (e2 - e)))
            num_n = W * (p2[u] - EB2 - sMH[u]) - c * (0.5 * Rs * P2 - GN) - GE
            num = num_f if pg[u] > sm * omega else num_n
            # largest change of S1's linear part over the hypotheses: c r_y (l_y - PD / 2),
            # l_y in {0, 1}, r_y in [rmin, rmax]
            u0 = -0.5 * gPD[u]
            u1 = u0 + 1.0
            d0 = c * rmax * u0
            d1 = c * rmin * u0
            d2 = c * rmax * u1
            d3 = c * rmin * u1
            d = d0 if d0 > d1 else d1
            d = d if d > d2 else d2
            d = d if d > d3 else d3
            den = p1[u] + d + sEBD[u] + sMX[u]
            pos = den > 0.0
            acc[u] += (num if pos else 0.0) / (den if pos else 1.0)
    for u in range(B):
        total += acc[u]
    return total


@njit(parallel=True, fastmath=False, cache=True)
def _bounds(R, rows, candidates, MT, lam_y, iw, dist, q, point, pid, pat, out):
    n = R.shape[1]
    T = MT.shape[0]
    lam_min = lam_y[0]
    lam_max = lam_y[0]
    for t in range(T):
        lam_min = min(lam_min, lam_y[t])
        lam_max = max(lam_max, lam_y[t])
    for k in prange(candidates.shape[0]):
        i, row, cii, a, prior = candidate_hypotheses(R, rows, candidates, MT, k)
        ha = np.empty(T)
        hb = np.empty(T)
        iwa = np.empty(T)
        rhoiw = np.empty(T)
        piiw = np.empty(T)
        W = 0.0
        Rs = 0.0
        amax = -np.inf
        amin = np.inf
        hamax = 0.0
        for t in range(T):
            pi = prior[t] * iw[t]
            rho = pi / (cii + lam_y[t])
            W += pi
            Rs += rho
            ha[t] = 0.5 * abs(a[t])
            # the move of line t when it is the hypothesis; a hypothesis of prior 0 adds
            # nothing to E, so its own move is left out of the bound (as if t != y)
            hb[t] = 0.5 * abs(a[t] - 2.0) if pi > 0.0 else ha[t]
            hamax = max(hamax, max(ha[t], hb[t]))
            iwa[t] = iw[t] * a[t]
            rhoiw[t] = rho * iw[t]
            piiw[t] = pi * iw[t]
            amax = max(amax, a[t])
            amin = min(amin, a[t])
        rmax = 1.0 / (cii + lam_min)
        rmin = 1.0 / (cii + lam_max)
        if not (rmax > 0.0 and np.isfinite(rmax) and rmin > 0.0):
            out[k] = -np.inf  # no bound: the candidate is scored exactly
            continue
        psum = np.zeros((pat.shape[0], 3))
        for r in range(pat.shape[0]):
            for t in range(T):
                if pat[r, t] != 0.0:
                    psum[r, 0] += a[t]
                    psum[r, 1] += iwa[t]
                    psum[r, 2] += rhoiw[t]
        st = np.empty((15, _LANES))
        out[k] = _bound_sums(row, n, dist, q, point, pid, psum, a, iw, ha, hb, iwa, rhoiw, piiw, W, Rs, rmax,
                             rmin, amax - amin + 2.0, hamax, st)


def risk_lower_bounds(R, rows, candidates, MT, lam_y, iw, out, data: BoundData | None = None) -> None:
    """A lower bound of the one-vs-all expected risk of every candidate, into ``out``.

    Parameters
    ----------
    R : ndarray of shape (k_R, n), C-contiguous, float64
        Rows of the posterior covariance.
    rows : ndarray of shape (k,), int64
        ``R[rows[k]]`` is ``C[candidates[k], :]``.
    candidates : ndarray of shape (k,), int64
    MT : ndarray of shape (T, n), C-contiguous, T >= 2
        Current one-vs-all outputs, transposed.
    lam_y : ndarray of shape (T,)
        ``lam / w_y``.
    iw : ndarray of shape (T,)
        ``1 / w_t``.
    out : ndarray of shape (k,)
        Receives ``B_k <= E_k`` (up to rounding; ``-inf`` where no bound is formed).
    data : BoundData, optional
        :func:`prepare_bounds` of ``MT`` and ``iw`` (computed here when omitted).
    """
    if candidates.shape[0] == 0:
        return
    d = prepare_bounds(MT, iw) if data is None else data
    _bounds(R, rows, candidates, np.ascontiguousarray(MT, dtype=np.float64),
            np.ascontiguousarray(lam_y, dtype=np.float64), np.ascontiguousarray(iw, dtype=np.float64),
            d.dist, d.q, d.point, d.pid, d.pat, out)
