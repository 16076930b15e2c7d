"""Fused numba kernel of Zhu et al.'s expected risk (private; :mod:`core.graph.zhu`).

For candidate ``k`` (position ``p`` among the unlabelled nodes) and hypothetical class ``t``
the harmonic function after the label is (seed 003 eq. 2.21)::

    F+_is = F_is + S_i (delta_ts - F_ks),    S_i = G_ip / G_pp

and the risk ``sum_i (1 - max_s F+_is)``. Writing ``v_is = F_is - S_i F_ks`` (free of ``t``),
``max_s F+_is = max(v_it + S_i, max_{s != t} v_is)``, and ``max_{s != t} v_is`` is the largest
``v_is`` unless ``t`` is its index, then the second largest. One pass over ``s`` per ``(i, k)``
gives every class: O(u T) per candidate instead of the O(u T^2) of forming every ``F+``
(the numpy form, kept as the oracle in ``tests/test_graph_zhu.py``).

``G`` is symmetric (:class:`core.graph.zhu.ZhuActiveLearning` keeps it so exactly), so the
column ``G[:, p]`` is read as the contiguous row ``G[p]``. Candidates run in parallel; each
candidate's sums run in a fixed order (deterministic results).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def zhu_expected_risks(FU, G, positions, weights):
    """Expected risk of labelling each candidate.

    Parameters
    ----------
    FU : ndarray of shape (u, T)
        Harmonic function on the unlabelled nodes.
    G : ndarray of shape (u, u)
        ``(Delta_UU + eps I)^-1``, symmetric.
    positions : ndarray of int64, shape (k,)
        Candidates as positions among the unlabelled nodes.
    weights : ndarray of shape (k, T)
        Probability of each class for each candidate (rows sum to 1).

    Returns
    -------
    ndarray of shape (k,)
    """
    u, T = FU.shape
    k = positions.size
    out = np.empty(k)
    for c in prange(k):
        p = positions[c]
        inv_gpp = 1.0 / G[p, p]
        risk = np.zeros(T)
        v = np.empty(T)
        for i in range(u):
            s_i = G[p, i] * inv_gpp
            best = -np.inf
            second = -np.inf
            arg = 0
            for s in range(T):
                val = FU[i, s] - s_i * FU[p, s]
                v[s] = val
                if val > best:
                    second = best
                    best = val
                    arg = s
                elif val > second:
                    second = val
            for t in range(T):
                other = second if t == arg else best
                hit = v[t] + s_i
                risk[t] += 1.0 - (hit if hit > other else other)
        total = 0.0
        for t in range(T):
            total += weights[c, t] * risk[t]
        out[c] = total
    return out
