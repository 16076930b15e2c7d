"""Variance criteria for graph queries: VOpt (Ji and Han, 2012) and Sigma-opt (Ma, Garnett and
Schneider, 2013) on a spectral truncation of the normalised Laplacian, as GraphLearning's
``var_opt`` and ``sigma_opt`` build them.

The prior is a Gaussian field ``f ~ N(0, C0)``, ``C0 = V diag(1 / (lambda + tau)) V^T`` over the
``r`` smallest eigenpairs ``(lambda, V)`` of ``I - D^-1/2 W D^-1/2``
(:func:`core.kernels.laplacian_eigenpairs`); a label observes ``f_i`` with noise ``gamma^2``.
In the eigen-coordinates the posterior covariance after the labelled set ``L`` is::

    C = V P V^T,     P = (diag(lambda + tau) + V_L^T V_L / gamma^2)^-1       (r x r)

and observing node ``k`` lowers it by ``C[:, k] C[k, :] / (gamma^2 + C_kk)``, so

* VOpt: the drop of the total variance ``tr C``: ``||C[:, k]||^2 / (gamma^2 + C_kk)`` =
  ``||P v_k||^2 / (gamma^2 + v_k^T P v_k)`` (``V`` has orthonormal columns);
* Sigma-opt: the drop of ``1^T C 1``: ``(1^T C[:, k])^2 / (gamma^2 + C_kk)`` =
  ``((V^T 1)^T P v_k)^2 / (gamma^2 + v_k^T P v_k)``. (GraphLearning's truncated ``sigma_opt``
  sums ``P v_k`` in the eigen-coordinates instead of ``V P v_k`` over the nodes; this is the
  criterion of the paper.)

Neither depends on the labels' values, only on where they are: the scores are exact, and a
fresh ``P`` from the labelled set costs ``O(l r^2 + r^3)``, the scores ``O(k r^2)`` for ``k``
candidates; no state to downdate, so undo is free.

Why a variance criterion for Poisson learning rather than an expected risk: Poisson learning's
``U`` is not a probability (mean zero, its scale set by the graph), so an expected risk would
rest on a calibration the model lacks; the variance drop is a property of the graph alone and
is what GraphLearning pairs with Poisson learning. For the same reason it applies to every graph
model of the app (harmonic, LGC, Poisson): :class:`VarianceCriterion` is the query strategy
"vopt" / "sigmaopt" of a learner with the capability
:data:`~core.learner.base.GRAPH_VARIANCE` (scored by ``learner.score(criterion)``, which passes
the learner's :class:`SpectralField`). The harmonic function is the posterior mean of this field
with ``tau, gamma^2 -> 0`` (Ji and Han's setting); LGC's regulariser is the normalised Laplacian
the prior is built on.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from ..criteria.base import ScoringState

__all__ = ["variance_reduction", "VARIANCE_CRITERIA", "GAMMA2", "TAU", "VARIANCE_RANK", "VARIANCE_MAX_POINTS",
           "SpectralField",
           "VarianceCriterion"]

VARIANCE_CRITERIA = ("vopt", "sigmaopt")
#: Laplacian eigenpairs of the variance criterion (GraphLearning's examples use 50).
VARIANCE_RANK = 50
#: Largest pool a graph learner offers the variance criteria on: their eigenpairs (n x 50,
#: computed by Lanczos on the first variance query) took 17 s at 20,000 points and 61 s at
#: 100,000 on the shared machine under load 20 (``python benchmarks/poisson_strategy.py
#: --eigenpairs 20000 100000``; docs/benchmarks.md §12).
VARIANCE_MAX_POINTS = 20_000
#: GraphLearning's defaults: observation noise ``gamma^2`` and the prior's shift ``tau``.
GAMMA2 = 0.1**2
TAU = 1e-11


def variance_reduction(eigenvalues, eigenvectors, labeled, candidates, *, criterion: str = "vopt",
                       gamma2: float = GAMMA2, tau: float = TAU) -> np.ndarray:
    """Drop of the posterior variance (VOpt) or of its sum (Sigma-opt) if each candidate were labelled.

    Parameters
    ----------
    eigenvalues : array-like of shape (r,)
        Of the normalised Laplacian, >= 0.
    eigenvectors : array-like of shape (n, r)
        Orthonormal columns.
    labeled : array-like of int, shape (l,)
    candidates : array-like of int, shape (k,)
    criterion : {"vopt", "sigmaopt"}
    gamma2, tau : float
        Observation noise and prior shift (> 0).

    Returns
    -------
    ndarray of shape (k,)
        Larger is queried first.
    """
    if criterion not in VARIANCE_CRITERIA:
        raise ValueError(f"criterion must be one of {VARIANCE_CRITERIA}; got {criterion!r}.")
    if not (gamma2 > 0 and tau > 0):
        raise ValueError(f"gamma2 and tau must be > 0; got {gamma2!r} and {tau!r}.")
    lam = np.asarray(eigenvalues, dtype=np.float64)
    V = np.asarray(eigenvectors, dtype=np.float64)
    if V.ndim != 2 or lam.shape != (V.shape[1],) or (lam < -1e-12).any():
        raise ValueError(f"eigenvectors must be (n, r) and eigenvalues (r,) >= 0; got {V.shape} and {lam.shape}.")
    labeled = np.asarray(labeled, dtype=np.int64).ravel()
    candidates = np.asarray(candidates, dtype=np.int64).ravel()
    prec = np.clip(lam, 0.0, None) + tau
    if labeled.size:
        VL = V[labeled]
        Pinv = np.diag(prec) + VL.T @ VL / gamma2
        scale = np.sqrt(prec)  # Jacobi scaling before Cholesky (prec spans 1e-11 .. 2)
        cf = cho_factor(Pinv / np.outer(scale, scale))
        P = cho_solve(cf, np.diag(1.0 / scale)) / scale[:, None]
        P = (P + P.T) / 2.0
    else:
        P = np.diag(1.0 / prec)
    Vc = V[candidates]  # (k, r)
    PV = Vc @ P  # rows: (P v_k)^T
    den = gamma2 + np.einsum("kr,kr->k", PV, Vc)
    if criterion == "vopt":
        num = np.einsum("kr,kr->k", PV, PV)
    else:
        num = (PV @ V.sum(axis=0)) ** 2
    return num / den


class SpectralField(NamedTuple):
    """What :class:`VarianceCriterion` reads of a graph learner: the ``r`` smallest eigenpairs of
    its normalised Laplacian and the labelled nodes."""

    eigenvalues: np.ndarray  # (r,)
    eigenvectors: np.ndarray  # (n, r)
    labeled: np.ndarray  # (l,) int64


class VarianceCriterion:
    """VOpt or Sigma-opt as a query criterion (lower is queried first: minus the variance drop).

    Parameters
    ----------
    criterion : {"vopt", "sigmaopt"}
    gamma2, tau : float
        Observation noise and prior shift (:data:`GAMMA2`, :data:`TAU`).
    """

    needs_posterior = True

    def __init__(self, criterion: str = "vopt", gamma2: float = GAMMA2, tau: float = TAU):
        if criterion not in VARIANCE_CRITERIA:
            raise ValueError(f"criterion must be one of {VARIANCE_CRITERIA}; got {criterion!r}.")
        self.name = criterion
        self.gamma2 = gamma2
        self.tau = tau

    def score(self, state: ScoringState, posterior: SpectralField, candidates) -> np.ndarray:
        """``-variance_reduction`` of each candidate, shape (k,)."""
        if not isinstance(posterior, SpectralField):
            raise ValueError(f"the {self.name!r} criterion reads a graph learner's spectral field; score it with "
                             "learner.score(criterion) on a graph model (harmonic, lgc, poisson).")
        return -variance_reduction(posterior.eigenvalues, posterior.eigenvectors, posterior.labeled, candidates,
                                   criterion=self.name, gamma2=self.gamma2, tau=self.tau)
