"""The read access every graph model of the app shares: class scores ``P`` (n, c) on a graph ``W``.

A graph learner (:class:`core.graph.active.GraphLearner`: harmonic and LGC;
:class:`core.graph.poisson_learner.PoissonLearner`) keeps its weights in ``self._W`` and, after
each refit, class scores ``P`` (n, c) in ``self._P`` whose rows sum to 1. From these alone come
the outputs in the RLS coding (``P_1 - P_0`` for two classes, ``2 P - 1`` otherwise), so that
confidence, margin and the estimated risk apply unchanged, the graph similarity the
explanations read, and the variance criteria VOpt / Sigma-opt (:mod:`core.graph.variance`, the
capability :data:`~core.learner.base.GRAPH_VARIANCE`: a property of the graph alone, so every
graph model has them). Written once here, so the learners differ only in how they fit ``P``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..criteria.base import ScoringState
from ..kernels.graph import laplacian_eigenpairs
from ..learner.base import GRAPH_VARIANCE, LearnerBase
from .variance import VARIANCE_MAX_POINTS, VARIANCE_RANK, SpectralField, VarianceCriterion
from .zhu import harmonic_risk

__all__ = ["GraphOutputs"]


class GraphOutputs(LearnerBase):
    """Reads of a learner with graph weights ``_W`` (n, n) and class scores ``_P`` (n, c)."""

    _W: sp.csr_matrix
    _P: np.ndarray
    #: Eigenpairs of the variance criteria (at most n - 1).
    variance_rank: int = VARIANCE_RANK
    #: Largest pool with the variance criteria (the capability GRAPH_VARIANCE).
    variance_max_points: int = VARIANCE_MAX_POINTS
    random_state: int = 0
    _spectrum = None

    @classmethod
    def capabilities_for(cls, model: str, n_samples: int, zhu_max_points: int) -> frozenset:
        """The :attr:`capabilities` a learner of this class has for ``model`` on ``n_samples``
        nodes, before it is built (what a caller offers in advance: the strategies of a new
        session)."""
        raise NotImplementedError

    @classmethod
    def variance_capability(cls, n_samples: int, variance_max_points: int | None = None) -> set:
        """``{GRAPH_VARIANCE}`` up to ``variance_max_points`` nodes (default: the class's
        :attr:`variance_max_points`), else empty."""
        limit = cls.variance_max_points if variance_max_points is None else variance_max_points
        return {GRAPH_VARIANCE} if int(n_samples) <= int(limit) else set()

    def _variance_refusal(self) -> str:
        return (f"the {self.model} model on this pool: VOpt and Sigma-opt read the {self.variance_rank} smallest "
                f"Laplacian eigenpairs (computed on the first such query) and are limited to "
                f"{self.variance_max_points:,} points; this pool has {self.n_samples:,}. Choose margin or random.")

    @property
    def graph(self) -> sp.csr_matrix:
        """The weights ``W`` (read only)."""
        return self._W

    @property
    def class_weights(self) -> dict:
        """Every class weighs 1 (the graph models have no class weights)."""
        return {c: 1.0 for c in self._book.classes}

    @property
    def class_values(self) -> np.ndarray:
        """``P`` (n, c): rows summing to 1, a copy."""
        return self._P.copy()

    @property
    def decision_values(self) -> np.ndarray:
        """``P_1 - P_0`` (n, 1) for two classes, ``2 P - 1`` (n, c) otherwise."""
        return self._outputs(self._P)

    @staticmethod
    def _outputs(P: np.ndarray) -> np.ndarray:
        if P.shape[1] == 2:
            return (P[:, 1] - P[:, 0])[:, None]
        return 2.0 * P - 1.0

    def proba(self) -> np.ndarray:
        """``P`` (n, c)."""
        return self.class_values

    def estimated_risk(self) -> float:
        """``sum_i (1 - max_t P_it)`` over the unlabelled nodes (seed 003 §2.8.1's risk)."""
        unl = self.unlabeled_indices
        return harmonic_risk(self._P[unl]) if unl.size else 0.0

    def scoring_state(self) -> ScoringState:
        """For the output-only criteria (margin, random) and the "auto" switch."""
        out = self.decision_values.T
        out.flags.writeable = False
        c = self.n_classes
        return ScoringState(out, np.full(c, np.nan), np.ones(c), self.class_counts())

    def mean_similarity(self, rows, cols) -> np.ndarray:
        """Mean graph weight of each of ``rows`` to the nodes ``cols``, shape (len(rows),)."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        if cols.size == 0:
            return np.zeros(rows.size)
        mask = np.zeros(self.n_samples)
        mask[cols] = 1.0
        return np.asarray(self._W[rows] @ mask).ravel() / cols.size

    # ------------------------------------------------------------------ variance criteria
    def variance_criterion(self, name: str = "vopt") -> VarianceCriterion:
        """VOpt (``"vopt"``) or Sigma-opt (``"sigmaopt"``) on the spectral truncation of the
        normalised Laplacian (:mod:`core.graph.variance`); score it with :meth:`score`.

        Raises
        ------
        ValueError
            A pool above :attr:`variance_max_points` (the message names the fix).
        """
        self.require(GRAPH_VARIANCE, f"the variance strategy {name!r}")
        return VarianceCriterion(name)

    def spectral_field(self) -> SpectralField:
        """The :attr:`variance_rank` smallest eigenpairs of the normalised Laplacian (computed once:
        ``W`` does not change; Lanczos started from :attr:`random_state`) and the labelled nodes."""
        if self._spectrum is None:
            rank = min(int(self.variance_rank), self.n_samples - 1)
            self._spectrum = laplacian_eigenpairs(self._W, rank, normalized=True, seed=self.random_state)
        lam, V = self._spectrum
        return SpectralField(lam, V, self._book.labeled_indices())

    def score(self, criterion, candidates=None) -> np.ndarray:
        """:meth:`core.learner.base.LearnerBase.score`; a :class:`VarianceCriterion` reads
        :meth:`spectral_field`."""
        if isinstance(criterion, VarianceCriterion):
            self.require(GRAPH_VARIANCE, f"the variance strategy {criterion.name!r}")
            cand = self.unlabeled_indices if candidates is None else self._check_candidates(candidates)
            return np.asarray(criterion.score(self.scoring_state(), self.spectral_field(), cand), dtype=np.float64)
        return super().score(criterion, candidates)
