"""Posterior covariance stores behind the ARLS learner (protocol in :mod:`.base`).

* :class:`DensePosterior`: one n x n float64 array, updated in place (exact, O(n^2) a step).
* :class:`FactorPosterior`: ``C = Phi P Phi^T`` for a factored kernel (O(r^2) a step).
"""

from .base import DEFAULT_BLOCK_BYTES, CandidateBlock, Posterior
from .dense import DensePosterior
from .factor import FactorPosterior, NystromPosterior

__all__ = ["Posterior", "CandidateBlock", "DensePosterior", "FactorPosterior", "NystromPosterior",
           "DEFAULT_BLOCK_BYTES"]
