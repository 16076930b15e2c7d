"""Lower bounds of the one-vs-all expected risk, to skip candidates that cannot be picked (private).

The exact one-vs-all kernels cost O(T) per (candidate, point) with a large constant (the
weighted one ~4 x the equal-weights one, ``python benchmarks/multiclass_step.py``). A query
only needs the candidate of lowest expected risk (and every candidate tied with it), so this
module gives, for every candidate ``i``, a number ``B_i <= E_i`` in one cheap O(n T) pass
(additions and maxima, one division per point); the criterion then scores exactly only the
candidates whose bound is below the best exact score found
(:meth:`core.criteria.expected_risk.ExpectedRisk.score_to_pick`). The derivation is
docs/algorithms.md §15; in short, for pool point ``z``, hypothesis ``y`` and step
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
so the bound holds for any class weights. On the benchmark's data sets 87-99 % of the
candidates are proven unable to be picked at this cost.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ._expected_risk_numba import candidate_prior

__all__ = ["BoundData", "prepare_bounds", "risk_lower_bounds"]

class BoundData(NamedTuple):
    """What the bounds need of the outputs, per pool point (:func:`prepare_bounds`)."""

    pz: np.ndarray  # (n, T, 4) per point and line: 1.0 where 0 < (m + 1) / 2 < 1; 1.0 where t
    #                 is not the top output; distance of (m + 1) / 2 to the nearest of 0 and 1; q
    point: np.ndarray  # (n, 4) top gap (0 on a tie), S1_0, S2_0 = sum q / w, N0 = S2_0 - q_top / w_top


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
    other = np.ones((T, n))
    other[tau, cols] = 0.0
    s1 = q.sum(axis=0)
    s2 = iw @ q
    n0 = s2 - q[tau, cols] * iw[tau]
    pz = np.ascontiguousarray(np.stack([lin, other, dist, q], axis=-1).transpose(1, 0, 2))
    return BoundData(pz, np.ascontiguousarray(np.stack([gap, s1, s2, n0], axis=1)))


@njit(fastmath={"reassoc", "contract", "nsz"}, cache=True)
def _bound_sums(crow, n, pz, point, a, iw, ha, hb, iwa, rhoiw, piiw, W, Rs, rmax, rmin, omega, hamax):
    """``sum_z`` of the per-point bound of one candidate (module docstring); one point at a
    time with its T lines in registers (``pz[z, t]`` = lin, other, dist, q)."""
    T = a.shape[0]
    total = 0.0
    for z in range(n):
        c = crow[z]
        sm = abs(c) * rmax
        PD = 0.0
        P2 = 0.0
        PN = 0.0
        EBD = 0.0
        EB2 = 0.0
        EBN = 0.0
        MX = 0.0
        FN = 0.0
        FE = 0.0
        GN = 0.0
        GE = 0.0
        MH = 0.0
        pzz = pz[z]
        for t in range(T):
            l = pzz[t, 0]
            o = pzz[t, 1]
            dt = pzz[t, 2]
            qt = pzz[t, 3]
            iwt = iw[t]
            e = sm * ha[t] - dt
            e = e if e > 0.0 else 0.0
            e2 = sm * hb[t] - dt
            e2 = e2 if e2 > 0.0 else 0.0
            de = e2 - e
            lo = l * o
            PD += l * a[t]
            P2 += l * iwa[t]
            PN += lo * iwa[t]
            EBD += e
            EB2 += iwt * e
            EBN += o * (iwt * e)
            MX = de if de > MX else MX
            FN += lo * rhoiw[t]
            FE += o * (piiw[t] * de)
            GN += l * rhoiw[t]
            GE += piiw[t] * de
            qh = qt + sm * hamax
            qh = (qh if qh < 1.0 else 1.0) * iwt
            MH = qh if qh > MH else MH
        if point[z, 0] > sm * omega:  # the argmax cannot change
            num = W * (point[z, 3] - EBN) - c * (0.5 * Rs * PN - FN) - FE
        else:
            num = W * (point[z, 2] - EB2 - MH) - c * (0.5 * Rs * P2 - GN) - GE
        # largest change of S1's linear part over the hypotheses: c r_y (l_y - PD / 2),
        # l_y in {0, 1}, r_y in [rmin, rmax]
        u0 = -0.5 * PD
        u1 = u0 + 1.0
        d = max(max(c * rmax * u0, c * rmin * u0), max(c * rmax * u1, c * rmin * u1))
        den = point[z, 1] + d + EBD + MX
        if den > 0.0:
            total += num / den
    return total


@njit(parallel=True, fastmath=False, cache=True)
def _bounds(R, rows, candidates, MT, lam_y, iw, pz, point, out):
    n = R.shape[1]
    T = MT.shape[0]
    lam_min = lam_y[0]
    lam_max = lam_y[0]
    for t in range(T):
        lam_min = min(lam_min, lam_y[t])
        lam_max = max(lam_max, lam_y[t])
    for k in prange(candidates.shape[0]):
        i = candidates[k]
        row = R[rows[k]]
        cii = row[i]
        a = np.empty(T)
        prior = np.empty(T)
        candidate_prior(MT, i, a, prior)
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
            hb[t] = 0.5 * abs(a[t] - 2.0)
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
        out[k] = _bound_sums(row, n, pz, point, a, iw, ha, hb, iwa, rhoiw, piiw, W, Rs, rmax, rmin,
                             amax - amin + 2.0, hamax)


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
            d.pz, d.point, out)
