"""Numba kernel of the estimated risk's per-point terms (private; docs/algorithms.md §2, eq. 3.47 /
3.49): ``r_z = sum_t p(t|z) / w_t - p(t*|z) / w_t*`` of every pool point in one parallel pass,
without the (n, K) probability table (:func:`core.criteria.risk.pointwise_risk` is the numpy
reference; the session reads the sum after every label).
"""

from __future__ import annotations

from numba import njit, prange


@njit(parallel=True, fastmath=False, cache=True)
def pointwise_risk_terms(F, inv_w, out):
    """``out[z] = r_z`` for outputs ``F`` (n, T) and inverse class weights ``inv_w``.

    Binary (T = 1): ``p = clip((f + 1) / 2, 0, 1)``, probabilities ``(1 - p, p)``, predicted
    class 1 iff ``f > 0``. One-vs-all: ``q_t = clip((f_t + 1) / 2, 0, 1)`` normalised per row
    (uniform where all are 0), predicted class the first largest output.
    """
    n, T = F.shape
    for z in prange(n):
        if T == 1:
            p = min(max(0.5 * (F[z, 0] + 1.0), 0.0), 1.0)
            total = (1.0 - p) * inv_w[0] + p * inv_w[1]
            out[z] = total - (p * inv_w[1] if F[z, 0] > 0.0 else (1.0 - p) * inv_w[0])
        else:
            top = 0
            s = 0.0
            for t in range(T):
                if F[z, t] > F[z, top]:
                    top = t
                s += min(max(0.5 * (F[z, t] + 1.0), 0.0), 1.0)
            total = 0.0
            if s > 0.0:
                for t in range(T):
                    total += min(max(0.5 * (F[z, t] + 1.0), 0.0), 1.0) / s * inv_w[t]
                p_top = min(max(0.5 * (F[z, top] + 1.0), 0.0), 1.0) / s
            else:
                for t in range(T):
                    total += inv_w[t] / T
                p_top = 1.0 / T
            out[z] = total - p_top * inv_w[top]
