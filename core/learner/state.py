"""Read access to an ARLS learner's state: outputs, predictions, scores, leave-one-out.

:class:`LearnerState` holds everything :class:`core.learner.ActiveRLS` exposes without
changing it; the operations (add, remove, reweight, ...) are in :mod:`core.learner.arls`. The
attributes it reads are set by ``ActiveRLS.__init__``: ``_post`` (the posterior), ``_mT``
(outputs, T x n), ``_labels``, ``_cls``, ``_lam_pt``, ``_w``, ``_lam``, ``_classes``,
``_weighting``, ``_criterion`` and ``_risk_cache``.
"""

from __future__ import annotations

import numpy as np

from ..criteria import Criterion, ExpectedRisk, ScoringState
from ..criteria.risk import class_probabilities, estimated_risk, predicted_class_indices, target_codes

__all__ = ["LearnerState"]


class LearnerState:
    """Read-only views of the learner (base class of :class:`core.learner.ActiveRLS`)."""

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
    def classes(self) -> list:
        """Class labels (a copy; add one with :meth:`add_class`)."""
        return list(self._classes)

    @property
    def n_classes(self) -> int:
        return len(self._classes)

    @property
    def n_outputs(self) -> int:
        """T: 1 for binary, ``n_classes`` for one-vs-all."""
        return self._mT.shape[0]

    @property
    def n_samples(self) -> int:
        return self._post.n_samples

    @property
    def n_labeled(self) -> int:
        return len(self._labels)

    @property
    def labels(self) -> dict:
        """``{index: label}`` in labelling order (a copy)."""
        return dict(self._labels)

    @property
    def unlabeled_indices(self) -> np.ndarray:
        """Indices of unlabelled points, ndarray of shape (n_unlabeled,), int64."""
        return np.flatnonzero(self._cls < 0)

    @property
    def class_weights(self) -> dict:
        """Current class weights ``{class: w}`` (:mod:`core.learner.weighting`)."""
        return {c: float(w) for c, w in zip(self._classes, self._w)}

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

    def predict(self) -> np.ndarray:
        """Predicted class labels, ndarray of shape (n,) (``f > 0`` / argmax, see core.criteria.risk)."""
        return self._label_array()[predicted_class_indices(self._mT.T)]

    def proba(self) -> np.ndarray:
        """Soft class probabilities (docs/algorithms.md §2, normalised), ndarray of shape (n, n_classes)."""
        return class_probabilities(self._mT.T)

    def _label_array(self) -> np.ndarray:
        arr = np.array(self._classes)
        if arr.ndim != 1 or arr.dtype.kind not in "biufUS" or arr.tolist() != self._classes:
            arr = np.empty(len(self._classes), dtype=object)
            arr[:] = self._classes
        return arr

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
        counts = np.bincount(self._cls[self._cls >= 0], minlength=len(self._classes))
        return ScoringState(mT, self.hypothetical_lambdas(), self._w.copy(), counts)

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

    def score(self, criterion, candidates=None) -> np.ndarray:
        """Scores of ``criterion`` (a :class:`core.criteria.Criterion`) for candidates.

        Parameters
        ----------
        criterion : core.criteria.Criterion
        candidates : array-like of int, optional
            Pool indices to score (default: every unlabelled point).

        Returns
        -------
        ndarray of shape (k,) in the order of ``candidates``.
        """
        cand = self.unlabeled_indices if candidates is None else self._check_candidates(candidates)
        return np.asarray(criterion.score(self.scoring_state(), self._post, cand), dtype=np.float64)

    def _check_candidates(self, candidates) -> np.ndarray:
        cand = np.asarray(candidates)
        if cand.ndim != 1 or (cand.size and cand.dtype.kind not in "iu"):
            raise ValueError(f"candidates must be a 1-D array of pool indices; got {candidates!r}.")
        cand = cand.astype(np.int64)
        if cand.size and (cand.min() < 0 or cand.max() >= self.n_samples):
            raise IndexError(f"candidates must lie in [0, {self.n_samples}); got {cand.min()}..{cand.max()}.")
        return cand

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
        criterion = self._criterion if backend == "numba" else ExpectedRisk(backend)
        if candidates is not None:
            return self.score(criterion, candidates)
        if backend == "numba" and self._risk_cache is not None:
            return self._risk_cache.copy()
        E = np.full(self.n_samples, np.inf)
        cand = self.unlabeled_indices
        E[cand] = self.score(criterion, cand)
        if backend == "numba":
            self._risk_cache = E.copy()
        return E

    def loo_decision_values(self) -> np.ndarray:
        """Leave-one-out outputs of the labelled points, ndarray of shape (n_labeled, T).

        From the removal update: ``f_{-j}(x_j) = m_j - C_jj (y_j - m_j) / (lambda_j - C_jj)``
        (the LOO residual is ``(y_j - m_j) lambda_j / (lambda_j - C_jj)``, docs/algorithms.md §1). Rows follow
        :attr:`labels` order.
        """
        L = np.array(list(self._labels), dtype=np.int64)
        if L.size == 0:
            return np.zeros((0, self.n_outputs))
        cjj = self._post.diag(L)
        lam = self._lam_pt[L]
        M = self._mT[:, L].T
        Y = self._codes()[self._cls[L]]
        return M - (cjj / (lam - cjj))[:, None] * (Y - M)

    def _codes(self) -> np.ndarray:
        return target_codes(self._mT.shape[0], len(self._classes))
