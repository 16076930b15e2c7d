"""Read access to an ARLS learner's state: outputs, scores, leave-one-out.

:class:`LearnerState` holds what :class:`core.learner.ActiveRLS` exposes without changing it
beyond the read API every learner shares (:class:`core.learner.base.LearnerBase`: labels,
classes, ``predict``, ``score``); the operations (add, remove, reweight, ...) are in
:mod:`core.learner.arls`. The attributes it reads are set by ``ActiveRLS.__init__``:
``_post`` (the posterior), ``_mT`` (outputs, T x n), ``_book`` (the labels,
:class:`core.learner.base.LabelBook`), ``_lam_pt``, ``_w``, ``_lam``, ``_weighting``,
``_criterion`` and ``_risk_cache``.
"""

from __future__ import annotations

import numpy as np

from ..criteria import Criterion, ExpectedRisk, ScoringState
from ..criteria.risk import class_probabilities, estimated_risk, target_codes
from .base import CHEAP_LOO, EXPECTED_RISK, GRAPH_VARIANCE, KERNEL, LAM, LOO, POSTERIOR_VARIANCE, SIMILARITY, WEIGHTING, LearnerBase

__all__ = ["LearnerState"]


class LearnerState(LearnerBase):
    """Read-only views of the learner (base class of :class:`core.learner.ActiveRLS`)."""

    @property
    def capabilities(self) -> frozenset:
        """Expected risk, LOO (cheap: from the posterior's diagonal), lam, class weights, the posterior variance, and a kernel to change
        when there are features to evaluate it on (the similarity of explanations is the
        caller's kernel on its features: no :data:`~core.learner.base.SIMILARITY`)."""
        caps = {EXPECTED_RISK, LOO, CHEAP_LOO, LAM, WEIGHTING, POSTERIOR_VARIANCE}
        if getattr(self._post, "features", None) is not None:
            caps.add(KERNEL)
        return frozenset(caps)

    def _refusal(self, capability: str) -> str:
        if capability == KERNEL:
            return ("this learner: it was built from a precomputed kernel matrix or a factor (from_kernel / "
                    "from_factor, e.g. a spectral graph kernel), so it has no features to evaluate a new kernel "
                    "(an RBF width) on; build a new learner, e.g. ActiveRLS.from_kernel(K_new), or one from "
                    "features (a session with posterior 'dense' or 'nystrom').")
        if capability == SIMILARITY:
            return ("this learner: kernel RLS has no similarity of its own; use its kernel on the features "
                    "(learner.kernel, or the factor of a low-rank posterior).")
        if capability == GRAPH_VARIANCE:
            return ("kernel RLS: VOpt and Sigma-opt are variance criteria of a graph model's Gaussian field on the "
                    "kNN graph; choose a graph model (harmonic, lgc or poisson) for them, or the strategy arls or "
                    "margin here.")
        return "this learner; every ActiveRLS offers it (use ActiveRLS)."

    def _scoring_posterior(self):
        return self._post

    # ------------------------------------------------------------------ parameters
    @property
    def lam(self) -> float:
        """Regularisation ``lambda`` (read only: :meth:`set_params` / :meth:`set_lam`)."""
        return self._lam

    @property
    def kernel(self):
        """The kernel of a dense posterior built from features, else None (read only)."""
        return getattr(self._post, "kernel", None)

    @property
    def weighting(self):
        """``"none"``, ``"balanced"`` or a dict {class: weight} (a copy)."""
        return dict(self._weighting) if isinstance(self._weighting, dict) else self._weighting

    @property
    def posterior(self):
        """The posterior store (read access for criteria, benchmarks and tests)."""
        return self._post

    # ------------------------------------------------------------------ outputs
    @property
    def class_weights(self) -> dict:
        """Current class weights ``{class: w}`` (:mod:`core.learner.weighting`)."""
        return {c: float(w) for c, w in zip(self._book.classes, self._w)}

    @property
    def point_lambdas(self) -> np.ndarray:
        """``lambda_j = lam / w_{y_j}`` per point (inf for unlabelled), ndarray of shape (n,)."""
        return self._lam_pt.copy()

    @property
    def decision_values(self) -> np.ndarray:
        """Outputs ``m = f_L(X)``, ndarray of shape (n, T) (binary: T = 1, +1 = classes[1])."""
        return self._mT.T.copy()

    def posterior_covariance(self) -> np.ndarray:
        """A copy of ``C`` (n x n): for tests and small pools only."""
        return self._post.to_array()

    def posterior_variance(self) -> np.ndarray:
        """GP predictive variance ``C_zz + lam`` (docs/algorithms.md §2), ndarray of shape (n,)."""
        return self._post.diag() + self._lam

    def proba(self) -> np.ndarray:
        """Soft class probabilities (docs/algorithms.md §2, normalised), ndarray of shape (n, n_classes)."""
        return class_probabilities(self._mT.T)

    def estimated_risk(self) -> float:
        """Bias-corrected estimated risk ``R(f_L)`` over the pool (eq. 3.49)."""
        return estimated_risk(self._mT.T, self._w)

    def hypothetical_lambdas(self) -> np.ndarray:
        """``lam / w_y`` a candidate would get with label ``y`` (current weights), shape (n_classes,)."""
        return self._lam / self._w

    def scoring_state(self) -> ScoringState:
        """The read-only state a criterion scores from (:class:`core.criteria.ScoringState`)."""
        mT = self._mT.view()
        mT.flags.writeable = False
        return ScoringState(mT, self.hypothetical_lambdas(), self._w.copy(), self._book.counts.copy())

    @property
    def risk_criterion(self):
        """The criterion behind :meth:`expected_risk` and the ``"arls"`` strategy.

        Default :class:`core.criteria.ExpectedRisk` (exact, every candidate); change it with
        :meth:`set_risk_criterion`.
        """
        return self._criterion

    def set_risk_criterion(self, criterion=None):
        """Score expected risk with ``criterion`` from now on (``None``: the exact default).

        For example :class:`core.criteria.subsampled.SubsampledExpectedRisk` on large pools
        or :class:`core.criteria.blocks.BlockScoredExpectedRisk` on an executor. The learner's
        state is untouched; only the cached scores are dropped.

        Parameters
        ----------
        criterion : core.criteria.Criterion or None

        Returns
        -------
        self
        """
        if criterion is None:
            criterion = ExpectedRisk()
        elif not isinstance(criterion, Criterion):
            raise TypeError(
                "criterion must implement core.criteria.Criterion (a name, needs_posterior and "
                f"score(state, posterior, candidates)); got {type(criterion).__name__}. Pass None "
                "for the exact expected risk."
            )
        self._criterion = criterion
        self._risk_cache = None
        return self

    def expected_risk(self, candidates=None, backend: str = "numba") -> np.ndarray:
        """Expected risk ``E_i`` of labelling each point (seed 002 eq. 3.50).

        Parameters
        ----------
        candidates : array-like of int, optional
            Score only these pool indices and return an array of their length, in their
            order (labelled ones included: their score is what labelling them again would
            give, which the strategies never ask for). Default: an array of shape (n,) with
            every unlabelled point scored and ``+inf`` for labelled points (cached until the
            state changes).
        backend : {"numba", "numpy"}
            ``"numpy"`` is the slow reference (tests only).

        Returns
        -------
        E : ndarray of shape (n,) or (len(candidates),)
        """
        if backend == "numba":
            return super().expected_risk(candidates)
        criterion = ExpectedRisk(backend)
        if candidates is not None:
            return self.score(criterion, candidates)
        E = np.full(self.n_samples, np.inf)
        E[self.unlabeled_indices] = self.score(criterion, self.unlabeled_indices)
        return E

    def loo_decision_values(self) -> np.ndarray:
        """Leave-one-out outputs of the labelled points, ndarray of shape (n_labeled, T).

        From the removal update: ``f_{-j}(x_j) = m_j - C_jj (y_j - m_j) / (lambda_j - C_jj)``
        (the LOO residual is ``(y_j - m_j) lambda_j / (lambda_j - C_jj)``, docs/algorithms.md §1). Rows follow
        :attr:`labels` order.
        """
        L = self._book.labeled_indices()
        if L.size == 0:
            return np.zeros((0, self.n_outputs))
        cjj = self._post.diag(L)
        lam = self._lam_pt[L]
        M = self._mT[:, L].T
        Y = self._codes()[self._book.codes[L]]
        return M - (cjj / (lam - cjj))[:, None] * (Y - M)

    def loo_predictive_sd(self) -> np.ndarray:
        """Leave-one-out predictive standard deviation of each label's target, ndarray of shape
        (n_labeled,), :attr:`labels` order.

        The GP view of the model (docs/algorithms.md §2): without its label, point ``j``'s latent
        value has variance ``v_j = C_jj lambda_j / (lambda_j - C_jj)`` (the removal update) and
        its target adds the noise ``lambda_j``, so the standard deviation is
        ``sqrt(v_j + lambda_j) = lambda_j / sqrt(lambda_j - C_jj)``. A LOO residual divided by it
        is a z-score: labels far from every other label (large ``v_j``) count as less surprising.
        """
        L = self._book.labeled_indices()
        if L.size == 0:
            return np.zeros(0)
        cjj = self._post.diag(L)
        lam = self._lam_pt[L]
        return lam / np.sqrt(np.maximum(lam - cjj, np.finfo(np.float64).tiny))

    def _codes(self) -> np.ndarray:
        return target_codes(self._mT.shape[0], len(self._book.classes))
