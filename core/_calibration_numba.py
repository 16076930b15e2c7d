"""Numba kernel of the calibrated confidence (private): the top class's softmax probability of
every pool point at one or more slopes, in one parallel pass over the decision values.

What :func:`scipy.special.log_softmax` computes row by row (``t = a g - max(a g)``,
``log p = t - log(sum exp(t))``), for the predicted class only and without the (n, K) temporaries
(the confidence and the error-rate interval of a 10^6-point pool read it four times per label).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, fastmath=False, cache=True)
def top_probabilities(F, slopes, out):
    """``out[s, i] = softmax(slopes[s] * G_i)[top_i]``: the predicted class's probability.

    ``G_i = (-f_i, f_i)`` when ``F`` has one column (binary; top = 1 iff ``f_i > 0``), else
    ``G_i = F_i`` (top = the first largest output).

    Parameters
    ----------
    F : ndarray of shape (n, T), float64, finite
    slopes : ndarray of shape (S,), float64, > 0
    out : ndarray of shape (S, n), float64
        Written.
    """
    n, T = F.shape
    for i in prange(n):
        if T == 1:
            f = F[i, 0]
            for s in range(slopes.shape[0]):
                x0 = slopes[s] * -f
                x1 = slopes[s] * f
                m = max(x0, x1)
                t0 = x0 - m
                t1 = x1 - m
                lse = np.log(np.exp(t0) + np.exp(t1))
                out[s, i] = np.exp((t1 if f > 0.0 else t0) - lse)
        else:
            top = 0
            for j in range(1, T):
                if F[i, j] > F[i, top]:
                    top = j
            for s in range(slopes.shape[0]):
                a = slopes[s]
                m = a * F[i, 0]
                for j in range(1, T):
                    m = max(m, a * F[i, j])
                total = 0.0
                for j in range(T):
                    total += np.exp(a * F[i, j] - m)
                out[s, i] = np.exp((a * F[i, top] - m) - np.log(total))
