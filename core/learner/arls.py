"""Exact incremental Active RLS (ARLS) on a pluggable posterior.

The learner keeps the outputs ``m = f_L(X)`` (n x T) and delegates the posterior covariance
``C = K - K_XL (K_LL + Lambda_L)^-1 K_LX``, ``Lambda_L = diag(lam / w_j)``, to a posterior
store (:mod:`core.posteriors`: dense n x n, or ``Phi P Phi^T`` for a factored kernel). Every
operation is an exact correction ``m += C[:, S] W``, ``C += C[:, S] M C[S, :]`` with a small
index set ``S``: the formulas and their guards are in :mod:`core.learner.updates` (docs/algorithms.md
§3, §8). New class (binary -> one-vs-all or T -> T+1): the new column is
``-sum_j C[:, j] / lambda_j``; the binary column ``f`` becomes the two columns ``(-f, f)``.

Class weights: :mod:`core.learner.weighting`. Under ``"balanced"`` every label changes the
weights of whole classes, which the block reweight applies exactly.

Numerical guards (:mod:`core.learner.updates`): a step whose estimated error is above
``eps x 1e7``, or a running total of the estimated errors above :data:`ERROR_BUDGET`, is
replaced by :meth:`ActiveRLS.rebuild` (a direct Cholesky solve) and a
:class:`NumericalRebuildWarning` says so. A rebuild costs one
O(n^2 |L|) pass (dense), O(|L| r^2 + n r T) (factor).

Expected risk and the other query criteria live in :mod:`core.criteria`; the learner hands
them its :class:`~core.criteria.base.ScoringState` and its posterior.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.linalg import LinAlgError

from ..criteria import ExpectedRisk
from ..kernels import Kernel
from ..posteriors import DensePosterior, FactorPosterior
from ..validation import check_features, check_index, check_lam
from .base import KERNEL, LabelBook, check_classes
from .state import LearnerState
from .updates import (GuardTripped, RebuildIsCheaper, add_reweight_step, add_step, relabel_step, remove_step,
                      reweight_matrices, reweight_step)
from .weighting import WEIGHTINGS, check_weighting, class_weight_vector, renamed_weighting

__all__ = ["ActiveRLS", "WEIGHTINGS", "NumericalRebuildWarning"]

_EPS = np.finfo(np.float64).eps
# A step whose estimated relative error (eps x amplification) exceeds this is not kept.
_STEP_ERROR_MAX = 1e-9
# Running total of the estimated errors of the exact steps since the last rebuild.
ERROR_BUDGET = 1e-9


class NumericalRebuildWarning(RuntimeWarning):
    """An update was replaced by a direct solve because it would have lost accuracy."""


def _check_kernel(kernel) -> Kernel:
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a core.kernels.Kernel, e.g. Kernel('rbf', width=1.0); got {kernel!r}.")
    return kernel


class ActiveRLS(LearnerState):
    """Exact incremental kernel RLS for active labelling (docs/algorithms.md §3, §8; seed 002 §3.3).

    Build it with :meth:`from_features` (a kernel on features, dense posterior),
    :meth:`from_kernel` (a precomputed kernel matrix) or :meth:`from_factor` (``K = Phi Phi^T``,
    low-rank posterior), or inject any :class:`core.posteriors.base.Posterior`.

    Parameters
    ----------
    posterior : core.posteriors.base.Posterior
        The covariance store, at its prior (``C = K``); the learner owns it from now on.
    classes : sequence of hashable, default (0, 1)
        The class labels (at least two, distinct). Two classes give a binary learner with one
        output (+1 means ``classes[1]``); more give one-vs-all with one output per class.
    lam : float, default 0.1
        Regularisation ``lambda > 0``; a labelled point of class ``y`` gets ``lam / w_y``.
    weighting : {"none", "balanced"} or dict, default "none"
        Class weights (:mod:`core.learner.weighting`).
    random_state : int, numpy.random.Generator or None
        Seeds :attr:`rng` (used by :func:`core.strategies.query_one` when no generator is given).

    Attributes
    ----------
    classes, lam, kernel, weighting : read-only; change them with :meth:`set_params`.
    n_samples, n_labeled, n_outputs : int
    labels : dict {index: label} in labelling order (a copy)
    class_weights : dict {class: weight}
    n_rebuilds : int
        How many times the state was recomputed from scratch (explicitly or by a guard).

    Notes
    -----
    Every public method validates its input first and leaves the state unchanged when it
    raises.
    """

    def __init__(self, posterior, classes=(0, 1), lam=0.1, weighting="none", random_state=None):
        for name in ("diag", "columns", "combine", "update", "condition", "reset", "candidate_blocks"):
            if not callable(getattr(posterior, name, None)):
                raise TypeError(
                    f"posterior must implement core.posteriors.base.Posterior (no {name}()); "
                    "use ActiveRLS.from_features / from_kernel / from_factor."
                )
        self._lam = check_lam(lam)
        self._book = LabelBook(posterior.n_samples, classes)
        self._weighting = check_weighting(weighting, self._book.classes)
        self.random_state = random_state
        self.rng = np.random.default_rng(random_state)
        self._post = posterior
        self._criterion = ExpectedRisk()
        n = posterior.n_samples
        self._lam_pt = np.full(n, np.inf)  # lambda_j of labelled points, inf elsewhere
        self._w = self._weights(self._book.counts)
        self._mT = np.zeros((self.n_outputs, n))
        self._scale = max(float(np.max(np.abs(posterior.prior_diag()))), np.finfo(float).tiny)
        self._error = 0.0  # estimated relative error since the last direct solve (C's + m's)
        self._c_error = 0.0  # the part of C (relative to the kernel scale)
        self._m_error = 0.0  # the absolute error of m
        self._m_terms = 0.0  # the size of the terms summed into m, after the last step
        self.n_rebuilds = 0
        self._risk_cache = None

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_features(cls, X, classes=(0, 1), kernel=None, lam=0.1, weighting="none", random_state=None):
        """Dense posterior on ``k(X, X)``, built in place (one n x n float64 array).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The pool. Finite numbers, at least two points.
        kernel : core.kernels.Kernel, default Kernel("rbf", width=1.0)
        classes, lam, weighting, random_state
            As in the class docstring.
        """
        X = check_features(X, min_samples=2)
        kernel = _check_kernel(Kernel("rbf", width=1.0) if kernel is None else kernel)
        classes = check_classes(classes)
        check_lam(lam)
        check_weighting(weighting, classes)
        return cls(DensePosterior.from_kernel(kernel, X), classes, lam, weighting, random_state)

    @classmethod
    def from_kernel(cls, K, classes=(0, 1), lam=0.1, weighting="none", random_state=None):
        """Dense posterior on a precomputed kernel matrix ``K`` (n x n, symmetric PSD).

        ``K`` is copied into the covariance and kept (not modified) for :meth:`rebuild`, so
        two n x n arrays are alive.
        """
        K_arr = np.asarray(K)
        if K_arr.dtype.kind in "fc" and not np.isfinite(K_arr).all():
            raise ValueError(
                "K contains NaN or infinite entries: a kernel matrix must be finite. Check the "
                "features it was computed from (NaN there spreads to whole rows of K)."
            )
        K = check_features(K_arr, name="K", min_samples=2)
        n = K.shape[0]
        if K.shape != (n, n):
            raise ValueError(f"K must be square (n, n); got shape {K.shape}.")
        scale = max(float(np.abs(K).max()), np.finfo(float).tiny)
        asym = float(np.abs(K - K.T).max())
        if asym > 1e-10 * scale:
            raise ValueError(
                f"K is not symmetric (max |K - K^T| = {asym:.3g}); pass a kernel matrix, e.g. 0.5 * (K + K.T)."
            )
        classes = check_classes(classes)
        check_lam(lam)
        check_weighting(weighting, classes)
        return cls(DensePosterior.from_matrix(K), classes, lam, weighting, random_state)

    @classmethod
    def from_factor(cls, Phi, classes=(0, 1), lam=0.1, weighting="none", random_state=None):
        """Low-rank posterior for ``K = Phi Phi^T`` (docs/algorithms.md §8): O(n r) memory.

        Parameters
        ----------
        Phi : array-like of shape (n_samples, rank)
            Kernel factor (Nystrom, spectral graph kernel, :func:`core.kernels.eigen_factor`).
        """
        Phi = check_features(Phi, name="Phi", min_samples=2)
        classes = check_classes(classes)
        check_lam(lam)
        check_weighting(weighting, classes)
        return cls(FactorPosterior(Phi), classes, lam, weighting, random_state)

    # ------------------------------------------------------------------ parameters
    def get_params(self) -> dict:
        """``{"lam", "kernel", "weighting"}``: the settings :meth:`set_params` accepts."""
        return {"lam": self._lam, "kernel": self.kernel, "weighting": self.weighting}

    def set_params(self, **params) -> "ActiveRLS":
        """Change ``lam``, ``kernel`` and/or ``weighting`` exactly, all or nothing.

        Every value is validated before anything changes; if applying one fails, the
        settings applied before it are undone and the error is raised with the learner as it
        was.

        Raises
        ------
        ValueError, TypeError
            For an unknown parameter or an invalid value (state unchanged).
        numpy.linalg.LinAlgError
            If the new settings give a system that is not positive definite (state unchanged).
        """
        unknown = sorted(set(params) - {"lam", "kernel", "weighting"})
        if unknown:
            raise ValueError(f"unknown parameter(s) {unknown}; set_params takes lam, kernel, weighting.")
        if "lam" in params:
            check_lam(params["lam"])
        if "weighting" in params:
            check_weighting(params["weighting"], self._book.classes)
        if "kernel" in params:
            self._check_new_kernel(params["kernel"])
        before = self.get_params()
        done = []
        try:
            for name, setter in (("kernel", self.set_kernel), ("weighting", self.set_weighting),
                                 ("lam", self.set_lam)):
                if name in params:
                    setter(params[name])
                    done.append(name)
        except Exception:
            for name in reversed(done):
                {"kernel": self.set_kernel, "weighting": self.set_weighting, "lam": self.set_lam}[name](before[name])
            raise
        return self

    # ------------------------------------------------------------------ validation helpers
    def _check_new_kernel(self, kernel) -> Kernel:
        kernel = _check_kernel(kernel)
        self.require(KERNEL, "a new kernel")
        return kernel

    # ------------------------------------------------------------------ weights
    def _weights(self, counts) -> np.ndarray:
        return class_weight_vector(self._weighting, self._book.classes, counts)

    def _refresh_lambdas(self) -> np.ndarray:
        """Recompute class weights and per-point lambda; return the old lambda array."""
        old = self._lam_pt.copy()
        self._w = self._weights(self._book.counts)
        codes = self._book.codes
        lab = codes >= 0
        self._lam_pt[lab] = self._lam / self._w[codes[lab]]
        self._lam_pt[~lab] = np.inf
        return old

    # ------------------------------------------------------------------ exact updates
    def _output_terms(self) -> float:
        """``scale * max_t sum_j |Y_jt - m_jt| / lambda_j``: the size of the terms summed into ``m``."""
        L = np.array(list(self._book.labels), dtype=np.int64)
        if not L.size:
            return 0.0
        resid = self._codes()[self._book.codes[L]].T - self._mT[:, L]
        return self._scale * float(np.max(np.sum(np.abs(resid) / self._lam_pt[L], axis=1)))

    def _charge(self, amplification: float) -> None:
        """Account one exact step whose rounding error is ``eps * amplification`` (relative).

        The amplified part counts relative to the kernel scale (``C``) and the outputs' terms
        now; besides, each step leaves in ``m`` an absolute rounding of ``eps`` times the size
        of the terms summed into ``m`` before and after it (:meth:`_output_terms`), and these
        count relative to the terms' size now: when a huge lambda shrinks the terms, the
        rounding left by earlier steps (and the last direct solve) weighs that much more.
        """
        step = _EPS * float(amplification)
        if not np.isfinite(step) or step > _STEP_ERROR_MAX:
            raise GuardTripped
        terms = self._output_terms()
        self._m_error += _EPS * (self._m_terms + terms)
        self._m_terms = terms
        self._c_error += step
        m_relative = self._m_error / terms if terms > 0 else (0.0 if self._m_error == 0 else np.inf)
        if not np.isfinite(m_relative):
            raise GuardTripped
        self._error = self._c_error + m_relative

    def _add_update(self, i: int, y: int, lam_i: float) -> None:
        self._charge(add_step(self._post, self._mT, i, self._codes()[y], lam_i, self._scale))

    def _remove_block(self, S: np.ndarray, ys: np.ndarray, lam_s: np.ndarray) -> None:
        self._charge(remove_step(self._post, self._mT, S, self._codes()[ys], lam_s, self._scale))

    def _changed(self, old_lam: np.ndarray) -> np.ndarray:
        """Labelled points whose lambda differs from ``old_lam`` (int64, labelling order)."""
        return np.array([j for j in self._book.labels if self._lam_pt[j] != old_lam[j]], dtype=np.int64)

    def _add_and_reweight(self, i: int, y: int, old_lam: np.ndarray) -> None:
        """Add ``i``, reweight the labels whose lambda changed: one update of ``C`` (updates.py)."""
        old_lam[i] = self._lam_pt[i]
        S, codes = self._changed(old_lam), self._codes()
        if S.size == 0 or (S.size > 1 and self._post.rebuild_is_cheaper(S.size)):
            self._add_update(i, y, self._lam_pt[i])
            return self._reweight_update(old_lam)
        for amp in add_reweight_step(self._post, self._mT, i, codes[y], self._lam_pt[i], S, codes[self._book.codes[S]],
                                     old_lam[S], self._lam_pt[S], self._scale):
            self._charge(amp)

    def _reweight_update(self, old_lam: np.ndarray) -> None:
        """Block reweight of every labelled point whose lambda changed (or a cheaper rebuild)."""
        S = self._changed(old_lam)
        if S.size == 0:
            return
        if S.size > 1 and self._post.rebuild_is_cheaper(S.size):
            raise RebuildIsCheaper
        codes = self._codes()[self._book.codes[S]]
        self._charge(reweight_step(self._post, self._mT, S, codes, old_lam[S], self._lam_pt[S], self._scale))

    def _save(self) -> tuple:
        """O(n T) copy of everything but C, to restore after a failed operation."""
        return (self._book.copy(), self._lam_pt.copy(), self._w.copy(), self._weighting, self._mT.copy(), self._lam)

    def _restore(self, saved: tuple) -> None:
        (self._book, self._lam_pt, self._w, self._weighting, self._mT, self._lam) = saved

    def _apply(self, update, saved: tuple) -> None:
        """Run an exact update; on a tripped guard (or failed solve) rebuild instead.

        A rebuild also follows when the running error estimate passes :data:`ERROR_BUDGET`.
        If even the direct solve fails (the kernel is not positive semi-definite), the
        previous labels are restored, ``C`` and ``m`` are recomputed for them, and the
        ``LinAlgError`` is raised.
        """
        self._risk_cache = None
        try:
            update()
            if self._error <= ERROR_BUDGET:
                return
            reason = (f"the accumulated rounding estimate of {self._error:.1e} since the last "
                      f"rebuild passed {ERROR_BUDGET:.0e}")
        except RebuildIsCheaper:
            reason = None  # planned: the cheaper exact path, nothing to warn about
        except (GuardTripped, LinAlgError):
            reason = ("an update was ill-conditioned (a denominator near the rounding level "
                      "of C or a cancellation, e.g. with a very small lam, duplicated points or "
                      "lam changed by many orders of magnitude)")
        if reason is not None:
            warnings.warn(
                f"ActiveRLS recomputed its state by a direct solve: {reason}. The result is exact; "
                "only this step was slower.",
                NumericalRebuildWarning,
                stacklevel=3,
            )
        try:
            self.rebuild()
        except LinAlgError:
            self._restore(saved)
            self.rebuild()
            raise

    # ------------------------------------------------------------------ public operations
    def add(self, i, label) -> "ActiveRLS":
        """Label pool point ``i`` with ``label`` (exact rank-one update, O(n^2) dense).

        Raises
        ------
        IndexError
            If ``i`` is not an integer in ``[0, n_samples)``.
        ValueError
            If ``label`` is not in :attr:`classes` or ``i`` is already labelled.
        """
        i = self._book.check_unlabeled(i)
        self._book.class_of(label)
        saved = self._save()
        y = self._book.add(i, label)
        old = self._refresh_lambdas()

        self._apply(lambda: self._add_and_reweight(i, y, old), saved)
        return self

    def add_many(self, indices, labels) -> "ActiveRLS":
        """Label several points at once (one block update of rank ``len(indices)``).

        Equivalent to calling :meth:`add` for each pair, but with one O(n^2 k) BLAS update,
        which is much faster under ``"balanced"`` weighting (e.g. to restore a session).
        """
        idx, labels = self._book.check_new_labels(indices, labels)
        if not idx:
            return self
        saved = self._save()
        for i, lab in zip(idx, labels):
            self._book.add(i, lab)
        old = self._refresh_lambdas()
        S = np.array(idx, dtype=np.int64)

        def update():
            resid = self._codes()[self._book.codes[S]] - self._mT[:, S].T
            self._mT += self._post.condition(S, self._lam_pt[S], resid)
            self._charge(1.0)  # a direct solve on the block: accounts the rounding of m
            old[S] = self._lam_pt[S]
            self._reweight_update(old)

        self._apply(update, saved)
        return self

    def remove_many(self, indices) -> "ActiveRLS":
        """Remove several labels at once (exact; e.g. undoing an accepted batch).

        One block downdate ``C += C[:, S] D^-1 C[S, :]``, ``m -= C[:, S] D^-1 (y_S - m_S)``
        with ``D = Lambda_S - C_SS``, then one block reweight of the remaining labels whose
        weight changed. When at least as many labels go as stay, a rebuild from the remaining
        labels is cheaper and is used instead.

        Raises
        ------
        IndexError, ValueError
            If an index is invalid, not labelled, or given twice (state unchanged).
        """
        idx = self._book.check_many(indices, labeled=True)
        if not idx:
            return self
        S = np.array(idx, dtype=np.int64)
        ys = self._book.codes[S].copy()
        saved = self._save()
        for i in idx:
            self._book.remove(i)
        old = self._refresh_lambdas()

        def update():
            if self.n_labeled == 0 or (S.size > 1 and (S.size >= self.n_labeled
                                                     or self._post.rebuild_is_cheaper(S.size))):
                raise RebuildIsCheaper  # rebuilding from the remaining labels costs less
            self._remove_block(S, ys, old[S])
            self._reweight_update(old)

        self._apply(update, saved)
        return self

    def remove(self, i) -> "ActiveRLS":
        """Remove the label of point ``i``: exact undo, as if it had never been labelled.

        Raises
        ------
        IndexError, ValueError
            If ``i`` is not a valid index or not labelled.
        """
        return self.remove_many([self._book.check_labeled(i)])

    def relabel(self, i, label) -> "ActiveRLS":
        """Change the label of a labelled point (O(n T), plus a reweight if weights change).

        Raises
        ------
        IndexError, ValueError
            If ``i`` is not a valid labelled index or ``label`` is not a class.
        """
        i = self._book.check_labeled(i)
        y_new = self._book.class_of(label)
        if y_new == self._book.codes[i]:
            self._book.labels[i] = label
            return self
        saved = self._save()
        y_old = self._book.relabel(i, label)
        old = self._refresh_lambdas()

        def update():
            codes = self._codes()
            self._charge(relabel_step(self._post, self._mT, i, codes[y_old], codes[y_new], old[i]))  # old lambda_i
            self._reweight_update(old)

        self._apply(update, saved)
        return self

    def decision_values_under(self, weighting) -> np.ndarray | None:
        """The outputs the learner would give under ``weighting``, its own state unchanged.

        The block reweight's mean update (:func:`core.learner.updates.reweight_matrices`)
        without the update of ``C``: ``m' = m + C[:, S] W`` over the labels ``S`` whose lambda
        differs, O(|S|^3 + n |S| T). The stopping signal reads it to ask whether the
        predictions hold under "balanced" weights while "evident" keeps every weight at 1.

        Parameters
        ----------
        weighting : "none", "balanced", "evident" or dict

        Returns
        -------
        ndarray of shape (n, T), or None
            None when the step's numerical guard trips (then nothing can be said cheaply).
        """
        weighting = check_weighting(weighting, self._book.classes)
        L = self._book.labeled_indices()
        w = class_weight_vector(weighting, self._book.classes, self._book.counts)
        lam_new = self._lam / w[self._book.codes[L]]
        moved = lam_new != self._lam_pt[L]
        S = L[moved]
        if S.size == 0:
            return self.decision_values
        try:
            _, W, _ = reweight_matrices(self._post.block(S), self._mT[:, S], self._codes()[self._book.codes[S]],
                                        self._lam_pt[S], lam_new[moved], self._scale)
        except (GuardTripped, LinAlgError):
            return None
        return (self._mT + self._post.combine(S, W)).T

    def set_weighting(self, weighting) -> "ActiveRLS":
        """Change the class weights (``"none"``, ``"balanced"`` or a dict); exact block update.

        Raises
        ------
        ValueError
            If ``weighting`` is not valid (state unchanged).
        """
        weighting = check_weighting(weighting, self._book.classes)
        saved = self._save()
        self._weighting = weighting
        old = self._refresh_lambdas()
        self._apply(lambda: self._reweight_update(old), saved)
        return self

    def set_lam(self, lam) -> "ActiveRLS":
        """Change the regularisation ``lam``: exact block reweight of every label (O(n^2 |L|) dense).

        Raises
        ------
        ValueError
            If ``lam`` is not a finite number > 0 (state unchanged).
        numpy.linalg.LinAlgError
            If ``K_LL + Lambda_L`` is not positive definite with the new ``lam`` (state
            unchanged).
        """
        lam = check_lam(lam)
        saved = self._save()
        self._lam = lam
        old = self._refresh_lambdas()
        self._apply(lambda: self._reweight_update(old), saved)
        return self

    def set_kernel(self, kernel) -> "ActiveRLS":
        """Swap the kernel (e.g. a new RBF width) and recompute ``C`` and ``m`` exactly.

        ``C`` is refilled in place with the new prior and conditioned on the labels
        (:meth:`rebuild`): no second n x n array is allocated. If that fails (e.g. the new
        kernel matrix is not positive semi-definite), the old kernel is put back, the state
        is recomputed with it and the error is raised.

        Raises
        ------
        TypeError
            If ``kernel`` is not a :class:`core.kernels.Kernel` (state unchanged).
        ValueError
            If the learner has no features (built from a kernel matrix or a factor).
        """
        kernel = self._check_new_kernel(kernel)
        old_kernel = self._post.kernel
        saved = self._save()
        self._post.set_kernel(kernel)
        try:
            self._scale = max(float(np.max(np.abs(self._post.prior_diag()))), np.finfo(float).tiny)
            self.rebuild()
        except Exception:
            self._post.set_kernel(old_kernel)
            self._scale = max(float(np.max(np.abs(self._post.prior_diag()))), np.finfo(float).tiny)
            self._restore(saved)
            self.rebuild()
            raise
        return self

    def add_class(self, name) -> "ActiveRLS":
        """Add a class while labelling (binary -> one-vs-all, or T -> T + 1), O(n |L|).

        Raises
        ------
        ValueError
            If ``name`` is already a class or not hashable.
        """
        self._book.check_new_class(name)
        L = self._book.labeled_indices()
        if L.size:
            # new one-vs-all column: C[:, L] Lambda_L^-1 (-1)
            new_col = self._post.combine(L, (-1.0 / self._lam_pt[L])[:, None])
        else:
            new_col = np.zeros((1, self.n_samples))
        if self._mT.shape[0] == 1:
            mT = np.vstack([-self._mT, self._mT, new_col])
        else:
            mT = np.vstack([self._mT, new_col])
        saved = self._save()
        self._book.add_class(name)
        self._mT = mT
        old = self._refresh_lambdas()
        self._apply(lambda: self._reweight_update(old), saved)
        return self

    def rename_class(self, old, new) -> "ActiveRLS":
        """Give class ``old`` the name ``new``, O(|L|).

        Only names change: the outputs ``m``, the posterior ``C``, the class order (output
        column ``t`` stays class ``t``) and the weights (a weighting dict keeps the weight
        under the new name) are as before, so the learner equals one built with the new
        names from the start.

        Raises
        ------
        ValueError
            If ``old`` is not a class, or ``new`` is already a class or not hashable (state
            unchanged).
        """
        self._book.class_of(old)
        self._book.check_new_class(new)
        self._book.rename_class(old, new)
        self._weighting = renamed_weighting(self._weighting, old, new)
        return self

    def rebuild(self) -> "ActiveRLS":
        """Recompute ``C`` and ``m`` from the prior by a direct Cholesky solve.

        The labelled block ``K_LL + Lambda_L`` is factored first, so a failure leaves the
        learner as it was.

        Raises
        ------
        numpy.linalg.LinAlgError
            If ``K_LL + Lambda_L`` is not positive definite (state unchanged).
        """
        L = self._book.labeled_indices()
        if L.size:
            A = self._post.prior_block(L) + np.diag(self._lam_pt[L])
            try:
                np.linalg.cholesky(0.5 * (A + A.T))
            except LinAlgError:
                raise LinAlgError(
                    "K_LL + Lambda_L is not positive definite: the kernel matrix is not positive "
                    "semi-definite or lam is far too small. Use an RBF kernel or increase lam."
                ) from None
        self._risk_cache = None
        self.n_rebuilds += 1
        self._error = 0.0
        self._post.reset()
        self._mT = np.zeros_like(self._mT)
        if L.size:
            Y = self._codes()[self._book.codes[L]]
            self._mT += self._post.condition(L, self._lam_pt[L], Y)
        self._m_terms = self._output_terms()
        self._c_error = 0.0
        self._m_error = _EPS * self._m_terms  # the direct solve's own rounding of m
        return self
