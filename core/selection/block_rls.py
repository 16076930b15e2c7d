"""Kernel RLS as a model-choice candidate, from its labelled block alone.

The exact leave-one-out of kernel RLS (:class:`core.learner.ActiveRLS` on a dense posterior:
weighted RLS without offset, ``f = K_XL (K_LL + Lambda_L)^-1 Y_L`` with ``Lambda_L =
diag(lam / w_y)``, docs/algorithms.md §1) reads the labelled block only: with ``A = K_LL +
Lambda_L`` and ``G = A^-1``, the output at label ``j`` of the model fitted without it is

    f_{-j}(x_j) = y_j - (G Y)_j / G_jj = - sum_{k != j} G_jk y_k / G_jj,

the same number as the learner's removal update ``m_j - C_jj (y_j - m_j) / (lambda_j - C_jj)``
(docs/algorithms.md §1, §14; ``C_LL = Lambda_L G K_LL`` and ``m_L = K_LL G Y``). It is computed in
the second form, from the off-diagonal entries of ``G``: a label whose kernel values to the
others are negligible gets the small output they give, not the rounding error of ``y_j`` minus
almost ``y_j``, and one label alone gets exactly 0, the prior (the full learner's removal update
leaves such outputs to rounding). So a candidate that
is only compared by leave-one-out (:class:`core.selection.ModelSelector`) needs no n x n
posterior: :class:`LabelledBlockRLS` keeps the labels, the kernel, lam and the class weights,
and computes ``K_LL`` and one Cholesky factorisation of ``A`` per LOO read (O(m^2 d + m^3) for m
labels), never a matrix of the pool. Its settings change in O(1) (nothing is refactored until
the next read), so the width re-tunes of the RLS candidate cost no rebuild either. It answers
for the pool too (:attr:`LabelledBlockRLS.decision_values`, O(n m)), but offers no query
criterion: the model that answers is a full learner.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from ..criteria.risk import target_codes
from ..kernels import Kernel
from ..learner.base import KERNEL, LAM, LOO, WEIGHTING, LabelBook, LearnerBase
from ..learner.weighting import check_weighting, class_weight_vector, renamed_weighting
from ..validation import check_features, check_lam

__all__ = ["LabelledBlockRLS"]


class LabelledBlockRLS(LearnerBase):
    """Kernel RLS on the labelled points only, for its exact LOO (module docstring).

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        The pool (read only; kept by reference).
    classes : sequence of hashable
        At least two; two give one output (+1 means ``classes[1]``), more one-vs-all.
    kernel : core.kernels.Kernel
    lam : float
        Regularisation ``> 0``; a label of class ``y`` gets ``lam / w_y``.
    weighting : {"none", "balanced", "evident"} or dict
        Class weights (:mod:`core.learner.weighting`).

    Attributes
    ----------
    posterior : None
        No posterior of the pool is kept (what LOO tuning reads of a dense learner is the
        labelled rows of ``X`` and :attr:`kernel`).
    """

    capabilities = frozenset({LOO, LAM, KERNEL, WEIGHTING})
    posterior = None

    def __init__(self, X, classes, kernel: Kernel, lam: float = 0.1, weighting="none"):
        self._X = check_features(X, min_samples=2)
        self._book = LabelBook(self._X.shape[0], classes)
        self._kernel = _check_kernel(kernel)
        self._lam = check_lam(lam)
        self._weighting = check_weighting(weighting, self._book.classes)
        self.rng = np.random.default_rng(0)

    # ------------------------------------------------------------------ settings
    @property
    def lam(self) -> float:
        return self._lam

    @property
    def kernel(self) -> Kernel:
        return self._kernel

    @property
    def weighting(self):
        return self._weighting

    @property
    def class_weights(self) -> dict:
        """Current class weights ``{class: w}`` (those of :class:`core.learner.ActiveRLS`)."""
        w = class_weight_vector(self._weighting, self._book.classes, self._book.counts)
        return {c: float(v) for c, v in zip(self._book.classes, w)}

    def get_params(self) -> dict:
        """``{"lam", "kernel", "weighting"}``, as :meth:`core.learner.ActiveRLS.get_params`."""
        return {"lam": self._lam, "kernel": self._kernel, "weighting": self._weighting}

    def set_params(self, **params) -> LabelledBlockRLS:
        """Change ``lam``, ``kernel`` and/or ``weighting`` (checked first, all or nothing)."""
        unknown = sorted(set(params) - {"lam", "kernel", "weighting"})
        if unknown:
            raise ValueError(f"unknown parameter(s) {unknown}; set_params takes lam, kernel, weighting.")
        lam = check_lam(params["lam"]) if "lam" in params else self._lam
        kernel = _check_kernel(params["kernel"]) if "kernel" in params else self._kernel
        weighting = (check_weighting(params["weighting"], self._book.classes) if "weighting" in params
                     else self._weighting)
        self._lam, self._kernel, self._weighting = lam, kernel, weighting
        return self

    # ------------------------------------------------------------------ labels
    def add(self, i, label) -> LabelledBlockRLS:
        return self.add_many([i], [label])

    def add_many(self, indices, labels) -> LabelledBlockRLS:
        idx, labels = self._book.check_new_labels(indices, labels)
        for i, label in zip(idx, labels):
            self._book.add(i, label)
        return self

    def remove(self, i) -> LabelledBlockRLS:
        return self.remove_many([i])

    def remove_many(self, indices) -> LabelledBlockRLS:
        for i in self._book.check_many(indices, labeled=True):
            self._book.remove(i)
        return self

    def relabel(self, i, label) -> LabelledBlockRLS:
        i = self._book.check_labeled(i)
        self._book.class_of(label)
        self._book.relabel(i, label)
        return self

    def add_class(self, name) -> LabelledBlockRLS:
        self._book.check_new_class(name)
        self._book.add_class(name)
        if isinstance(self._weighting, dict):
            self._weighting = {**self._weighting, name: 1.0}
        return self

    def rename_class(self, old, new) -> LabelledBlockRLS:
        self._book.class_of(old)
        self._book.check_new_class(new)
        self._book.rename_class(old, new)
        self._weighting = renamed_weighting(self._weighting, old, new)
        return self

    def rebuild(self) -> LabelledBlockRLS:
        return self  # nothing is kept between reads

    # ------------------------------------------------------------------ the model
    def _solve(self):
        """``(idx, Y, G Y, G)`` of the labelled block, or None without labels."""
        idx = self._book.labeled_indices()
        if idx.size == 0:
            return None
        codes = self._book.codes[idx]
        Y = target_codes(self.n_outputs, self.n_classes)[codes]
        w = class_weight_vector(self._weighting, self._book.classes, self._book.counts)
        A = np.asarray(self._kernel(self._X[idx], self._X[idx]), dtype=np.float64)
        A[np.diag_indices_from(A)] += self._lam / w[codes]
        factor = cho_factor(A, lower=True, check_finite=False)
        GY = cho_solve(factor, Y, check_finite=False)
        G = cho_solve(factor, np.eye(idx.size), check_finite=False)
        return idx, Y, GY, G

    def loo_decision_values(self) -> np.ndarray:
        """Leave-one-out outputs of the labelled points, shape (n_labeled, T), :attr:`labels`
        order: ``- sum_{k != j} G_jk y_k / G_jj`` (module docstring).

        Raises
        ------
        numpy.linalg.LinAlgError
            ``K_LL + Lambda_L`` is not positive definite (a ValueError).
        """
        solved = self._solve()
        if solved is None:
            return np.zeros((0, self.n_outputs))
        _, Y, _, G = solved
        G_diag = np.diag(G).copy()
        G[np.diag_indices_from(G)] = 0.0
        return -(G @ Y) / G_diag[:, None]

    @property
    def decision_values(self) -> np.ndarray:
        """Outputs of every pool point ``K_XL G Y``, shape (n_samples, T) (O(n m))."""
        solved = self._solve()
        if solved is None:
            return np.zeros((self.n_samples, self.n_outputs))
        idx, _, GY, _ = solved
        return np.asarray(self._kernel(self._X, self._X[idx]), dtype=np.float64) @ GY

    def _refusal(self, capability: str) -> str:
        return ("a labelled-block RLS candidate (core.selection.block_rls): it answers leave-one-out only; the "
                "model that answers is a full learner (core.learner.ActiveRLS).")


def _check_kernel(kernel) -> Kernel:
    if not isinstance(kernel, Kernel):
        raise ValueError(f"kernel must be a core.kernels.Kernel; got {kernel!r}.")
    return kernel
