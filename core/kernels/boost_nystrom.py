"""Ensemble and BoostNystrom factors (seed 000 §4.3, Algorithms 7-9).

An ensemble Nystrom approximation mixes ``p`` standard Nystrom approximations, each on its own
group of ``m`` landmarks (seed 000 eq. 4.13)::

    K~ = sum_j mu_j E_j W_j^+ E_j^T,     mu_j >= 0, sum_j mu_j = 1

As a factor (docs/algorithms.md §8) it is the side-by-side stack ``Phi = [sqrt(mu_1) Phi_1, ...,
sqrt(mu_p) Phi_p]`` of the groups' Nystrom factors ``Phi_j = E_j W_j^{+1/2}``
(:func:`core.kernels.factors.nystrom_map`), of rank at most ``p m``, so that ``Phi Phi^T = K~``.

BoostNystrom (:func:`boost_nystrom_groups`) chooses the groups adaptively: at iteration ``t``
it samples ``m (p - t + 1)`` columns from a distribution ``P_t`` (uniform at first), splits
them into subsets of ``d`` columns, scores each subset's Nystrom approximation on a
validation set ``V`` of columns, keeps the ``m / d`` best subsets as the ``t``-th group, and
raises the probability of the columns in the next ``m / d`` subsets by ``eps_avg / eps_min``
(Algorithm 8) while the kept columns leave the pool. After ``T = p`` iterations the groups are
mixed with exponential weights ``mu_j ~ exp(-eta eps_j)`` (Algorithm 9).

Two choices the seed leaves open, made here:

* The error of a subset on ``V`` is the relative Frobenius error ``||K_RV - K~_RV||_F /
  ||K_RV||_F`` over the validation columns ``V`` and a seeded sample ``R`` of at most
  ``n_rows`` rows (all rows on small pools): the seed's full ``n x |V|`` block would cost
  ``8 n |V|`` bytes at 10^6 points, and the row sample is an unbiased estimate of its square.
  ``V`` is drawn first and never used as a landmark (a landmark column is reproduced exactly,
  which would favour subsets that contain validation columns).
* ``eta`` multiplies the relative error (a number in [0, 1]); the seed gives no value. The
  default 10 keeps the weights close to equal (the ensemble method's usual choice) while
  still favouring clearly better groups.

The groups are chosen with the kernel at hand; a new RBF width keeps them and their weights
(:class:`EnsembleNystrom` recomputes the factor from the same landmarks).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..validation import check_features
from .factors import nystrom_map, nystrom_transform
from .kernel import Kernel

__all__ = ["EnsembleNystrom", "boost_nystrom_groups", "ensemble_nystrom_groups", "DEFAULT_ETA"]

DEFAULT_ETA = 10.0


@dataclass(frozen=True)
class EnsembleNystrom:
    """Groups of landmarks and their mixture weights (seed 000 eq. 4.13).

    Attributes
    ----------
    landmarks : ndarray of shape (p * m, d)
        The landmarks of every group, group after group.
    groups : ndarray of shape (p * m,) of int
        The group of each landmark, ``0 ... p - 1``, in non-decreasing order.
    weights : ndarray of shape (p,)
        Mixture weights ``mu_j >= 0`` summing to 1.
    errors : ndarray of shape (p,)
        Relative validation error of each group's own Nystrom approximation (NaN when the
        groups were not scored).
    indices : ndarray of shape (p * m,) of int
        Row of ``X`` of each landmark.
    validation : ndarray of int
        Rows of ``X`` whose kernel columns scored the groups (empty when not scored).
    """

    landmarks: np.ndarray
    groups: np.ndarray
    weights: np.ndarray
    errors: np.ndarray
    indices: np.ndarray
    validation: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))

    @property
    def n_groups(self) -> int:
        return int(self.weights.size)

    def group(self, j: int) -> np.ndarray:
        """Landmarks of group ``j``, shape (m_j, d)."""
        return self.landmarks[self.groups == j]

    def factor(self, X, kernel: Kernel, *, rtol: float = 1e-10, progress=None) -> np.ndarray:
        """The ensemble factor ``[sqrt(mu_1) Phi_1, ..., sqrt(mu_p) Phi_p]``, shape (n, r).

        ``r`` is the sum of the groups' numerical ranks (at most ``p m``). Groups of weight 0
        are left out. Memory O(n r): each group's rows are built in blocks
        (:func:`core.kernels.factors.nystrom_map`).
        """
        X = check_features(X, min_samples=1)
        parts = []
        live = [j for j in range(self.n_groups) if self.weights[j] > 0]
        for k, j in enumerate(live):
            def say(message, fraction, k=k):
                if progress is not None:
                    progress(f"group {k + 1} of {len(live)}: {message}", (k + fraction) / len(live))

            parts.append(np.sqrt(self.weights[j]) * nystrom_map(X, kernel, self.group(j), rtol=rtol,
                                                                progress=say, warn=False))
        return np.ascontiguousarray(np.hstack(parts))


def _check_sizes(n: int, m: int, p: int, d: int, n_validation: int):
    for name, v in (("m", m), ("p", p), ("d", d), ("n_validation", n_validation)):
        if isinstance(v, bool) or int(v) != v or v < 1:
            raise ValueError(f"{name} must be an integer >= 1; got {v!r}.")
    if m % d:
        raise ValueError(f"m ({m}) must be a multiple of the subset size d ({d}): each group is m / d "
                         "whole subsets (seed 000 Algorithm 7).")
    need = n_validation + m * p
    if need > n:
        raise ValueError(f"BoostNystrom needs {n_validation} validation columns plus {p} groups of {m} "
                         f"landmarks = {need} points, more than the pool's {n}. Use fewer or smaller groups.")


def _relative_errors(K_RV: np.ndarray, E_R: np.ndarray, E_V: np.ndarray, kernel: Kernel, Z_sets) -> np.ndarray:
    """``||K_RV - E_R W^+ E_V^T||_F / ||K_RV||_F`` for each subset of landmarks (columns of E)."""
    norm = np.linalg.norm(K_RV)
    out = np.empty(len(Z_sets))
    for s, (cols, Z) in enumerate(Z_sets):
        T = nystrom_transform(kernel, Z, warn=False)
        approx = (E_R[:, cols] @ T) @ (E_V[:, cols] @ T).T
        out[s] = np.linalg.norm(K_RV - approx) / norm if norm > 0 else 0.0
    return out


def _mixture(errors: np.ndarray, eta: float) -> np.ndarray:
    """Algorithm 9: ``mu_j = exp(-eta eps_j) / Z`` (shifted by the least error: same weights,
    no underflow)."""
    w = np.exp(-float(eta) * (errors - errors.min()))
    return w / w.sum()


def boost_nystrom_groups(X, kernel: Kernel, m: int, p: int, *, d: int | None = None,
                         n_validation: int | None = None, n_rows: int = 2000, eta: float = DEFAULT_ETA,
                         seed=0) -> EnsembleNystrom:
    """BoostNystrom's groups of landmarks and mixture weights (seed 000 Algorithms 7-9).

    Parameters
    ----------
    X : array-like of shape (n, dim)
    kernel : core.kernels.Kernel
    m : int
        Landmarks per group (the seed's ``m``).
    p : int
        Number of groups = iterations ``T`` (the seed sets ``p = T``).
    d : int, optional
        Size of the subsets compared within an iteration; ``m`` must be a multiple of it.
        Default ``m // 4`` rounded down to a divisor of ``m`` (at least 1).
    n_validation : int, optional
        Size of the validation set ``V`` of columns; default ``m`` (the seed's choice).
    n_rows : int
        Rows on which the validation error is estimated (see the module docstring).
    eta : float
        Mixture weight parameter of Algorithm 9 on relative errors.
    seed : int or numpy.random.Generator

    Returns
    -------
    EnsembleNystrom
        ``p`` groups of ``m`` landmarks (rows of ``X``), weights, each group's error on ``V``.

    Raises
    ------
    ValueError
        Sizes that are not positive integers, ``m`` not a multiple of ``d``, or a pool too
        small for ``V`` and ``p`` groups.

    Notes
    -----
    Cost: ``O(p^2 m (|R| + |V|) dim + p^2 m d^2)`` for the errors of the subsets (the seed's
    O(T n m p d) with ``n`` replaced by ``|R|``), one pass of ``O(n p m dim)`` to build the
    factor afterwards.
    """
    X = check_features(X, min_samples=2)
    n = X.shape[0]
    if d is None:
        d = max(1, m // 4)
        while m % d:
            d -= 1
    if n_validation is None:
        n_validation = m
    _check_sizes(n, int(m), int(p), int(d), int(n_validation))
    m, p, d = int(m), int(p), int(d)
    if not (np.isfinite(eta) and eta >= 0):
        raise ValueError(f"eta must be a number >= 0; got {eta!r}.")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)

    V = rng.choice(n, int(n_validation), replace=False)  # step 2: the validation columns
    prob = np.ones(n)
    prob[V] = 0.0
    R = np.sort(rng.choice(n, min(n, int(n_rows)), replace=False))
    K_RV = kernel(X[R], X[V])
    chosen = []
    for t in range(1, p + 1):
        k = m * (p - t + 1)  # step 3: m (p - t + 1) columns from P_t, without replacement
        live = np.flatnonzero(prob > 0)
        pt = prob[live] / prob[live].sum()
        cols = live[rng.choice(live.size, k, replace=False, p=pt)]
        subsets = cols.reshape(-1, d)  # step 4: k / d subsets of d columns
        E_R, E_V = kernel(X[R], X[cols]), kernel(X[V], X[cols])
        local = np.arange(k).reshape(-1, d)
        eps = _relative_errors(K_RV, E_R, E_V, kernel, [(c, X[s]) for c, s in zip(local, subsets)])  # step 5
        order = np.argsort(eps, kind="stable")  # step 6: the m / d best subsets form group t
        best = order[: m // d]
        chosen.append(np.sort(subsets[best].ravel()))
        prob[chosen[-1]] = 0.0  # Algorithm 8 step 4: kept columns leave the pool
        if t < p:  # Algorithm 8 steps 1-3: raise the runners-up
            runners = order[m // d: 2 * (m // d)]
            eps_min = float(eps[best].mean())
            ratio = float(eps.mean()) / eps_min if eps_min > 0 else 1.0
            prob[subsets[runners].ravel()] *= ratio
    indices = np.concatenate(chosen)
    groups = np.repeat(np.arange(p), m)
    E_R, E_V = kernel(X[R], X[indices]), kernel(X[V], X[indices])
    errors = _relative_errors(K_RV, E_R, E_V, kernel,
                              [(np.flatnonzero(groups == j), X[indices[groups == j]]) for j in range(p)])
    return EnsembleNystrom(np.ascontiguousarray(X[indices]), groups, _mixture(errors, eta), errors, indices,
                           np.asarray(V, dtype=np.int64))


def ensemble_nystrom_groups(X, m: int, p: int, *, seed=0) -> EnsembleNystrom:
    """Ensemble Nystrom of Kumar et al. (seed 000 §4.3.1): ``p`` disjoint uniform groups of
    ``m`` landmarks with equal weights ``1 / p`` (errors not scored: NaN)."""
    X = check_features(X, min_samples=1)
    n = X.shape[0]
    if isinstance(m, bool) or isinstance(p, bool) or int(m) != m or int(p) != p or m < 1 or p < 1 or m * p > n:
        raise ValueError(f"m and p must be integers >= 1 with m * p <= n ({n}); got m={m!r}, p={p!r}.")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    idx = rng.choice(n, int(m) * int(p), replace=False)
    idx = np.concatenate([np.sort(g) for g in idx.reshape(int(p), int(m))])
    return EnsembleNystrom(np.ascontiguousarray(X[idx], dtype=np.float64), np.repeat(np.arange(int(p)), int(m)),
                           np.full(int(p), 1.0 / int(p)), np.full(int(p), np.nan), idx)
