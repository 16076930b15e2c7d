"""Per-feature (ARD) RBF widths: scaled squared distances and the width-gradient contraction.

Two width conventions meet here, both per feature ``d``:

* RBF kernel of RLS (docs/algorithms.md notation, seed 002 eq. 2.6): ``k(x, x') = exp(-sum_d
  (x_d - x'_d)^2 / (2 s_d^2))``;
* graph weights of the harmonic function (docs/algorithms.md §5, seed 003 eq. 3.6, seed 001 eq. 2.4):
  ``w_ij = exp(-sum_d (x_id - x_jd)^2 / sigma_d^2)``, so ``sigma_d = sqrt(2) s_d``.

Both need ``D_ij = sum_d (x_id - x_jd)^2 / widths_d^2`` and, for gradients with respect to
``log widths``, the contraction ``g_d = sum_ij G_ij (x_id - x_jd)^2 / widths_d^2`` of a
coefficient matrix ``G`` (seed 003 §3.4, eq. 3.17-3.18: the ``alpha_ij`` pre-computed once,
independent of ``d``). :func:`width_contraction` evaluates it as one matrix product,
O(n^2 m), without the (n, n, m) array of squared differences.
"""

from __future__ import annotations

import numpy as np

from ..validation import check_features

__all__ = ["check_widths", "scaled_sq_distances", "width_contraction"]


def check_widths(widths, n_features: int, *, name: str = "widths") -> np.ndarray:
    """``widths`` as a float64 array of shape (n_features,), each finite and > 0.

    A scalar is broadcast to every feature.

    Raises
    ------
    ValueError
        Wrong length, non-finite or non-positive entries; the message names the fix.
    """
    arr = np.asarray(widths, dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(n_features, float(arr))
    if arr.shape != (n_features,):
        raise ValueError(f"{name} must be one positive number per feature ({n_features}) or a single "
                         f"number; got shape {arr.shape}.")
    bad = ~np.isfinite(arr) | (arr <= 0)
    if bad.any():
        d = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name} must be finite and > 0; feature {d} has {arr[d]!r}. Use a width on the "
                         "scale of that feature's spread (e.g. the median distance divided by sqrt(m)).")
    return arr


def scaled_sq_distances(X, widths, Y=None) -> np.ndarray:
    """``D_ij = sum_d (x_id - y_jd)^2 / widths_d^2``, shape (len(X), len(Y)), clipped at 0.

    Parameters
    ----------
    X : array-like of shape (n, m)
    widths : array-like of shape (m,)
        Positive per-feature widths (checked).
    Y : array-like of shape (k, m), optional
        Default ``X`` (then the diagonal is exactly 0).
    """
    X = check_features(X)
    w = check_widths(widths, X.shape[1])
    same = Y is None
    Y = X if same else check_features(Y, name="Y")
    if Y.shape[1] != X.shape[1]:
        raise ValueError(f"X and Y must have the same features; got {X.shape[1]} and {Y.shape[1]}.")
    centre = X.mean(axis=0)  # distances are translation invariant; centring limits cancellation
    A = (X - centre) / w
    B = A if same else (Y - centre) / w
    D = np.einsum("ij,ij->i", A, A)[:, None] + np.einsum("ij,ij->i", B, B)[None, :] - 2.0 * (A @ B.T)
    np.maximum(D, 0.0, out=D)
    if same:
        np.fill_diagonal(D, 0.0)
    return D


def width_contraction(X, G, widths) -> np.ndarray:
    """``g_d = sum_ij G_ij (x_id - x_jd)^2 / widths_d^2`` for every feature, shape (m,).

    With ``w_ij = exp(-D_ij)`` (graph convention) ``d w_ij / d log sigma_d = 2 w_ij (x_id -
    x_jd)^2 / sigma_d^2``, so ``sum_ij C_ij dw_ij/dlog sigma_d = 2 g_d`` with ``G = C * W``; with the RLS
    kernel (``2 s^2``) the factor is 1. ``G`` need not be symmetric.

    Parameters
    ----------
    X : ndarray of shape (n, m)
    G : ndarray of shape (n, n)
    widths : ndarray of shape (m,)
    """
    X = np.asarray(X, dtype=np.float64)
    G = np.asarray(G, dtype=np.float64)
    Xc = X - X.mean(axis=0)
    # sum_ij G_ij (x_i^2 + x_j^2 - 2 x_i x_j) = (rowsum + colsum) . x^2 - 2 sum_i x_i (G X)_i
    weight = G.sum(axis=1) + G.sum(axis=0)
    g = weight @ (Xc * Xc) - 2.0 * np.einsum("id,id->d", Xc, G @ Xc)
    return g / np.asarray(widths, dtype=np.float64) ** 2
