"""Exact incremental Active RLS (ARLS): add, remove, relabel, reweight in O(n^2) or less.

The learner keeps the outputs ``m = f_L(X)`` and one posterior covariance
``C = K - K_XL (K_LL + Lambda_L)^-1 K_LX`` with ``Lambda_L = diag(lam / w_j)`` (ALGORITHMS §3,
seed 002 §3.3.3, eq. 3.51-3.55, App. A.4). Every operation is an exact low-rank correction of
``(m, C)``; :meth:`ActiveRLS.rebuild` recomputes both by a direct (Cholesky) solve and is used
automatically when a denominator guard trips.

Update formulas (``c = C[:, j]``, targets ``y_j`` are rows of :func:`core.risk.target_codes`):

* add ``i`` with ``lambda_i``:  ``den = C_ii + lambda_i``,
  ``m -= c (m_i - y_i)^T / den``, ``C -= c c^T / den``.
* remove ``j``:  ``D = lambda_j - C_jj``, ``m -= c (y_j - m_j)^T / D``, ``C += c c^T / D``.
* relabel ``j`` (same ``lambda_j``):  ``m += c (y_j' - y_j)^T / lambda_j``
  (``m = C[:, L] Lambda_L^-1 Y_L`` is linear in the targets for fixed ``C``).
* reweight a set ``S`` from ``Lambda_S`` to ``Lambda_S + diag(delta)`` (block Woodbury form,
  derived from ``C[:, L] = K_XL A^-1 Lambda`` and ``A^-1 = Lambda^-1 (Lambda - C_LL) Lambda^-1``
  with ``A = K_LL + Lambda``)::

      U  = C[:, S] Lambda_S^-1                       (= K_XL A^-1 restricted to S)
      G  = Lambda_S^-1 (Lambda_S - C_SS) Lambda_S^-1  (= (A^-1)_SS)
      Mw = (I + diag(delta) G)^-1 diag(delta)
      C' = C + U Mw U^T,   m' = m - U Mw c_S,   c_S = (y_S - m_S) / lambda_S  (eq. 3.54)

  For one point this is the rank-one reweight of ALGORITHMS §3.
* new class (binary -> one-vs-all or T -> T+1): the new column is
  ``C[:, L] Lambda_L^-1 (-1) = -sum_j C[:, j] / lambda_j``; the binary column ``f`` becomes the
  two columns ``(-f, f)``.

Class weights (``weighting``):

* ``"none"``: every ``w = 1``.
* ``{class: weight}``: fixed positive weights; classes not in the dict get 1.
* ``"balanced"``: follows the labelled counts exactly, ``w_y = n_L / (n_classes * n_y)``
  (ALGORITHMS §1, ``w_y`` proportional to ``1 / n_y``). A class with no label yet gets
  ``n_L / n_classes`` (the weight its first label would nearly get); with no labels at all
  every weight is 1. Adding, removing or relabelling a point changes the weights of whole
  classes, which the block form above applies exactly (cost O(n^2 |L|) for such a step,
  dominated by one BLAS matrix product).

Expected risk (eq. 3.47-3.50, see :mod:`core.risk`): scored with the CURRENT class weights,
as the seed does: a hypothetical label ``y`` gives the candidate ``lambda_i = lam / w_y`` and
the risk uses ``1 / w`` of the current weights, even under ``"balanced"`` where really
labelling the point would also shift the weights.
"""

from __future__ import annotations

import numbers

import numpy as np
from numpy.linalg import LinAlgError

from .covariance import DenseCovariance
from .kernels import Kernel
from .risk import class_probabilities, estimated_risk, predicted_class_indices, target_codes
from .validation import check_features, check_index, check_positive

__all__ = ["ActiveRLS", "WEIGHTINGS"]

WEIGHTINGS = ("none", "balanced")

# Guards (ALGORITHMS §3): a step whose denominator is this close to zero would amplify
# rounding errors, so the learner rebuilds from scratch instead.
_ADD_GUARD_EPS = 1e-8  # add:    C_ii + lambda_i  > eps * (k(x_i, x_i) + lambda_i)
_REMOVE_GUARD_EPS = 1e-8  # remove: lambda_j - C_jj > eps * lambda_j
_BLOCK_COND_MAX = 1e10  # reweight: condition number of I + diag(delta) G


class _GuardTripped(Exception):
    """Internal: an update would be numerically unsafe; rebuild instead."""


def _check_classes(classes) -> list:
    try:
        classes = list(classes)
    except TypeError:
        raise ValueError(f"classes must be a list of labels; got {classes!r}.") from None
    index = {}
    for c in classes:
        try:
            hash(c)
        except TypeError:
            raise ValueError(f"class label {c!r} is not hashable; use str or int labels.") from None
        if c in index:
            raise ValueError(f"class label {c!r} appears twice in classes={classes!r}; give each once.")
        index[c] = len(index)
    if len(classes) < 2:
        raise ValueError(
            f"at least two classes are needed; got classes={classes!r}. Give every label "
            "you intend to use (more can be added later with add_class)."
        )
    return classes


class ActiveRLS:
    """Exact incremental kernel RLS for active labelling (ALGORITHMS §3, seed 002 §3.3).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        The pool. Finite numbers, at least two points.
    classes : sequence of hashable, default (0, 1)
        The class labels (at least two, distinct). Two classes give a binary learner with one
        output (+1 means ``classes[1]``); more give one-vs-all with one output per class.
    kernel : core.kernels.Kernel, default Kernel("rbf", width=1.0)
    lam : float, default 0.1
        Regularisation ``lambda > 0``; a labelled point of class ``y`` gets ``lam / w_y``.
    weighting : {"none", "balanced"} or dict, default "none"
        Class weights; see the module docstring.
    random_state : int, numpy.random.Generator or None
        Seeds :attr:`rng` (used by :func:`core.strategies.query` when no generator is given).

    Attributes
    ----------
    classes : list
    n_samples, n_labeled, n_outputs : int
    labels : dict {index: label} in labelling order (a copy)
    class_weights : dict {class: weight}
    n_rebuilds : int
        How many times the state was recomputed from scratch (explicitly or by a guard).

    Notes
    -----
    Memory: one (n, n) float64 array (the covariance, built in place by ``kernel(X, out=C)``)
    plus O(n T) vectors; :meth:`from_kernel` also keeps a reference to the given ``K``.
    Every public method validates its input first and leaves the state unchanged when it
    raises.
    """

    def __init__(self, X, classes=(0, 1), kernel=None, lam=0.1, weighting="none", random_state=None):
        X = check_features(X, min_samples=2)
        kernel = Kernel("rbf", width=1.0) if kernel is None else kernel
        if not isinstance(kernel, Kernel):
            raise TypeError(
                f"kernel must be a core.kernels.Kernel, e.g. Kernel('rbf', width=1.0); got {kernel!r}."
            )
        self._setup(classes, lam, weighting, random_state)
        self.kernel = kernel
        self._X = X
        self._cov = DenseCovariance.from_kernel(kernel, X)
        self._prior_diag = np.asarray(kernel.diag(X), dtype=np.float64)
        self._init_state()

    @classmethod
    def from_kernel(cls, K, classes=(0, 1), lam=0.1, weighting="none", random_state=None):
        """Build from a precomputed kernel matrix ``K`` (n x n, symmetric PSD).

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
                f"K is not symmetric (max |K - K^T| = {asym:.3g}); pass a kernel matrix, "
                "e.g. 0.5 * (K + K.T)."
            )
        self = cls.__new__(cls)
        self._setup(classes, lam, weighting, random_state)
        self.kernel = None
        self._X = None
        self._cov = DenseCovariance.from_matrix(K)
        self._prior_diag = np.diagonal(K).copy()
        self._init_state()
        return self

    def _setup(self, classes, lam, weighting, random_state):
        self.lam = check_positive("lam", lam)
        self._classes = _check_classes(classes)
        self._class_index = {c: t for t, c in enumerate(self._classes)}
        self._weighting = self._check_weighting(weighting, self._classes)
        self.random_state = random_state
        self.rng = np.random.default_rng(random_state)

    def _init_state(self):
        n = self._cov.n_samples
        self._labels: dict = {}
        self._cls = np.full(n, -1, dtype=np.int64)  # class index of each labelled point
        self._counts = np.zeros(len(self._classes), dtype=np.int64)
        self._lam_pt = np.full(n, np.inf)  # lambda_j of labelled points, inf elsewhere
        self._w = self._class_weight_vector(self._counts)
        n_out = 1 if len(self._classes) == 2 else len(self._classes)
        self._mT = np.zeros((n_out, n))  # m^T: outputs stored as (T, n) rows
        self.n_rebuilds = 0
        self._risk_cache = None

    # ------------------------------------------------------------------ validation helpers
    @staticmethod
    def _check_weighting(weighting, classes):
        if isinstance(weighting, str):
            if weighting not in WEIGHTINGS:
                raise ValueError(
                    f"weighting must be 'none', 'balanced' or a dict of class weights; got {weighting!r}."
                )
            return weighting
        if isinstance(weighting, dict):
            known = set(classes)
            out = {}
            for c, v in weighting.items():
                if c not in known:
                    raise ValueError(
                        f"weighting names class {c!r}, which is not in classes={list(classes)!r}."
                    )
                if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v <= 0:
                    raise ValueError(f"weight of class {c!r} must be a finite number > 0; got {v!r}.")
                out[c] = float(v)
            return out
        raise ValueError(
            f"weighting must be 'none', 'balanced' or a dict {{class: weight}}; got {weighting!r}."
        )

    def _class_of(self, label) -> int:
        try:
            return self._class_index[label]
        except (KeyError, TypeError):
            raise ValueError(
                f"label {label!r} is not one of the classes {self._classes!r}. Use one of them, "
                "or add it first with add_class(label)."
            ) from None

    def _check_unlabeled(self, i) -> int:
        i = check_index(i, self.n_samples)
        if self._cls[i] >= 0:
            raise ValueError(
                f"point {i} is already labelled as {self._labels[i]!r}; use relabel({i}, label) "
                f"to change its label or remove({i}) to undo it."
            )
        return i

    def _check_labeled(self, i) -> int:
        i = check_index(i, self.n_samples)
        if self._cls[i] < 0:
            raise ValueError(f"point {i} is not labelled, so it cannot be removed or relabelled.")
        return i

    # ------------------------------------------------------------------ weights
    def _class_weight_vector(self, counts, n_classes=None, weighting=None) -> np.ndarray:
        n_classes = len(self._classes) if n_classes is None else n_classes
        weighting = self._weighting if weighting is None else weighting
        if isinstance(weighting, dict):
            return np.array([weighting.get(c, 1.0) for c in self._classes[:n_classes]])
        if weighting == "none":
            return np.ones(n_classes)
        counts = np.asarray(counts, dtype=np.float64)
        n_l = counts.sum()
        if n_l == 0:
            return np.ones(n_classes)
        # "balanced": w_y = n_L / (n_classes n_y); an unseen class gets n_L / n_classes
        return n_l / (n_classes * np.maximum(counts, 1.0))

    def _refresh_lambdas(self) -> np.ndarray:
        """Recompute class weights and per-point lambda; return the old lambda array."""
        old = self._lam_pt.copy()
        self._w = self._class_weight_vector(self._counts)
        lab = self._cls >= 0
        self._lam_pt[lab] = self.lam / self._w[self._cls[lab]]
        self._lam_pt[~lab] = np.inf
        return old

    def _codes(self) -> np.ndarray:
        return target_codes(self._mT.shape[0], len(self._classes))

    # ------------------------------------------------------------------ exact updates
    def _add_update(self, i: int, y: int, lam_i: float) -> None:
        """Rank-one 'add point' (ALGORITHMS §3; seed eq. 3.53, 3.55)."""
        den = self._cov.entry(i, i) + lam_i
        if not np.isfinite(den) or den <= _ADD_GUARD_EPS * (abs(self._prior_diag[i]) + lam_i):
            raise _GuardTripped
        c = self._cov.row(i)
        resid = self._mT[:, i] - self._codes()[y]
        self._mT -= np.outer(resid / den, c)
        self._cov.rank_one_update(c, -1.0 / den)

    def _remove_update(self, j: int, y: int, lam_j: float) -> None:
        """Rank-one 'remove point' (ALGORITHMS §3): the exact inverse of an add."""
        D = lam_j - self._cov.entry(j, j)
        if not np.isfinite(D) or D <= _REMOVE_GUARD_EPS * lam_j:
            raise _GuardTripped
        c = self._cov.row(j)
        resid = self._codes()[y] - self._mT[:, j]
        self._mT -= np.outer(resid / D, c)
        self._cov.rank_one_update(c, 1.0 / D)

    def _reweight_update(self, old_lam: np.ndarray) -> None:
        """Block (Woodbury) reweight of every labelled point whose lambda changed."""
        S = np.array([j for j in self._labels if self._lam_pt[j] != old_lam[j]], dtype=np.int64)
        if S.size == 0:
            return
        lam_s = old_lam[S]
        delta = self._lam_pt[S] - lam_s
        R = self._cov.rows(S)  # (s, n) = C[:, S]^T
        C_SS = R[:, S]
        G = (np.diag(lam_s) - C_SS) / np.outer(lam_s, lam_s)
        A = np.eye(S.size) + delta[:, None] * G
        if not np.all(np.isfinite(A)) or np.linalg.cond(A) > _BLOCK_COND_MAX:
            raise _GuardTripped
        Mw = np.linalg.solve(A, np.diag(delta))
        Mw = 0.5 * (Mw + Mw.T)
        UT = R / lam_s[:, None]  # (s, n) = U^T
        c_S = (self._codes()[self._cls[S]] - self._mT[:, S].T) / lam_s[:, None]  # (s, T)
        self._mT -= (Mw @ c_S).T @ UT
        self._cov.low_rank_update(UT.T, Mw)

    def _save(self) -> tuple:
        """O(n T) copy of everything but C, to restore after a failed operation."""
        return (
            dict(self._labels), self._cls.copy(), self._counts.copy(), self._lam_pt.copy(),
            self._w.copy(), self._weighting, list(self._classes), dict(self._class_index),
            self._mT.copy(), self.lam,
        )

    def _restore(self, saved: tuple) -> None:
        (self._labels, self._cls, self._counts, self._lam_pt, self._w, self._weighting,
         self._classes, self._class_index, self._mT, self.lam) = saved

    def _apply(self, update, saved: tuple) -> None:
        """Run an exact update; on a tripped guard (or failed solve) rebuild instead.

        If even the direct solve fails (the kernel is not positive semi-definite), the
        previous labels are restored, ``C`` and ``m`` are recomputed for them, and the
        ``LinAlgError`` is raised.
        """
        self._risk_cache = None
        try:
            update()
        except (_GuardTripped, LinAlgError):
            try:
                self.rebuild()
            except LinAlgError:
                self._restore(saved)
                self.rebuild()
                raise

    # ------------------------------------------------------------------ public operations
    def add(self, i, label) -> "ActiveRLS":
        """Label pool point ``i`` with ``label`` (exact rank-one update, O(n^2)).

        Raises
        ------
        IndexError
            If ``i`` is not an integer in ``[0, n_samples)``.
        ValueError
            If ``label`` is not in :attr:`classes` or ``i`` is already labelled.
        """
        i = self._check_unlabeled(i)
        y = self._class_of(label)
        saved = self._save()
        self._labels[i] = label
        self._cls[i] = y
        self._counts[y] += 1
        old = self._refresh_lambdas()

        def update():
            self._add_update(i, y, self._lam_pt[i])
            old[i] = self._lam_pt[i]
            self._reweight_update(old)

        self._apply(update, saved)
        return self

    def add_many(self, indices, labels) -> "ActiveRLS":
        """Label several points at once (one block update of rank ``len(indices)``).

        Equivalent to calling :meth:`add` for each pair, but with one O(n^2 k) BLAS update,
        which is much faster under ``"balanced"`` weighting (e.g. to restore a session).
        """
        idx = [self._check_unlabeled(i) for i in np.asarray(indices, dtype=object).ravel()] if len(indices) else []
        labels = list(labels)
        if len(labels) != len(idx):
            raise ValueError(f"got {len(idx)} indices but {len(labels)} labels; give one label per index.")
        if len(set(idx)) != len(idx):
            raise ValueError("indices contain a point twice; label each point once.")
        ys = [self._class_of(lab) for lab in labels]
        if not idx:
            return self
        saved = self._save()
        for i, lab, y in zip(idx, labels, ys):
            self._labels[i] = lab
            self._cls[i] = y
            self._counts[y] += 1
        old = self._refresh_lambdas()
        S = np.array(idx, dtype=np.int64)

        def update():
            resid = self._codes()[self._cls[S]] - self._mT[:, S].T
            self._mT += self._cov.condition(S, self._lam_pt[S], resid)
            old[S] = self._lam_pt[S]
            self._reweight_update(old)

        self._apply(update, saved)
        return self

    def remove_many(self, indices) -> "ActiveRLS":
        """Remove several labels at once (exact; e.g. undoing an accepted batch).

        One block downdate ``C += C[:, S] D^-1 C[S, :]``, ``m -= C[:, S] D^-1 (y_S - m_S)``
        with ``D = Lambda_S - C_SS`` (the block form of :meth:`remove`), then one block
        reweight of the remaining labels whose weight changed. When at least as many labels
        go as stay, a rebuild from the remaining labels is cheaper and is used instead. Either
        way the cost is one O(n^2 k) pass, not ``len(indices)`` of them.

        Raises
        ------
        IndexError, ValueError
            If an index is invalid, not labelled, or given twice (state unchanged).
        """
        idx = [self._check_labeled(i) for i in np.asarray(indices, dtype=object).ravel()] if len(indices) else []
        if len(set(idx)) != len(idx):
            raise ValueError("indices contain a point twice; remove each label once.")
        if not idx:
            return self
        if len(idx) == 1:
            return self.remove(idx[0])
        S = np.array(idx, dtype=np.int64)
        ys = self._cls[S].copy()
        saved = self._save()
        for i, y in zip(idx, ys):
            del self._labels[i]
            self._cls[i] = -1
            self._counts[y] -= 1
        old = self._refresh_lambdas()

        def update():
            if S.size >= len(self._labels):
                raise _GuardTripped  # the rebuild from the remaining labels is the cheaper path
            lam_s = old[S]
            R = self._cov.rows(S)  # (s, n) = C[:, S]^T
            D = np.diag(lam_s) - R[:, S]
            D = 0.5 * (D + D.T)
            if not np.all(np.isfinite(D)) or np.linalg.cond(D) > _BLOCK_COND_MAX:
                raise _GuardTripped
            resid = self._codes()[ys] - self._mT[:, S].T  # (s, T)
            Dinv = np.linalg.inv(D)  # s x s, small; symmetric for the BLAS update
            Dinv = 0.5 * (Dinv + Dinv.T)
            self._mT -= (Dinv @ resid).T @ R
            self._cov.low_rank_update(R.T, Dinv)
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
        i = self._check_labeled(i)
        y = int(self._cls[i])
        saved = self._save()
        del self._labels[i]
        self._cls[i] = -1
        self._counts[y] -= 1
        old = self._refresh_lambdas()
        lam_i = old[i]

        def update():
            self._remove_update(i, y, lam_i)
            self._reweight_update(old)

        self._apply(update, saved)
        return self

    def relabel(self, i, label) -> "ActiveRLS":
        """Change the label of a labelled point (O(n T), plus a reweight if weights change).

        Raises
        ------
        IndexError, ValueError
            If ``i`` is not a valid labelled index or ``label`` is not a class.
        """
        i = self._check_labeled(i)
        y_new = self._class_of(label)
        y_old = int(self._cls[i])
        if y_new == y_old:
            self._labels[i] = label
            return self
        saved = self._save()
        self._labels[i] = label
        self._cls[i] = y_new
        self._counts[y_old] -= 1
        self._counts[y_new] += 1
        old = self._refresh_lambdas()

        def update():
            codes = self._codes()
            # m = C[:, L] Lambda^-1 Y_L is linear in the targets (old lambda_i still in C)
            self._mT += np.outer((codes[y_new] - codes[y_old]) / old[i], self._cov.row(i))
            self._reweight_update(old)

        self._apply(update, saved)
        return self

    def set_weighting(self, weighting) -> "ActiveRLS":
        """Change the class weights (``"none"``, ``"balanced"`` or a dict); exact block update.

        Raises
        ------
        ValueError
            If ``weighting`` is not valid (state unchanged).
        """
        weighting = self._check_weighting(weighting, self._classes)
        saved = self._save()
        self._weighting = weighting
        old = self._refresh_lambdas()
        self._apply(lambda: self._reweight_update(old), saved)
        return self

    def set_lam(self, lam) -> "ActiveRLS":
        """Change the regularisation ``lam``: exact block reweight, O(n^2 |L|), no new n x n array.

        Every labelled point's ``lambda_j = lam / w_{y_j}`` changes, which is the block
        (Woodbury) reweight of the module docstring applied to all of ``L`` (ALGORITHMS §3).
        A tripped guard rebuilds by a direct solve instead.

        Raises
        ------
        ValueError
            If ``lam`` is not a finite number > 0 (state unchanged).
        """
        lam = check_positive("lam", lam)
        saved = self._save()
        self.lam = lam
        old = self._refresh_lambdas()
        self._apply(lambda: self._reweight_update(old), saved)
        return self

    def set_kernel(self, kernel) -> "ActiveRLS":
        """Swap the kernel (e.g. a new RBF width) and recompute ``C`` and ``m`` exactly.

        ``C`` is refilled in place with the new prior ``k(X, X)`` and conditioned on the
        labels (:meth:`rebuild`, O(n^2 |L|)): no second n x n array is allocated. If that
        fails (e.g. the new kernel matrix is not positive semi-definite, or memory runs out),
        the old kernel is put back, the state is recomputed with it and the error is raised.

        Raises
        ------
        TypeError
            If ``kernel`` is not a :class:`core.kernels.Kernel` (state unchanged).
        ValueError
            If the learner was built :meth:`from_kernel` (there are no features to evaluate
            a kernel on; build a new learner instead).
        """
        if not isinstance(kernel, Kernel):
            raise TypeError(
                f"kernel must be a core.kernels.Kernel, e.g. Kernel('rbf', width=1.0); got {kernel!r}."
            )
        if self._X is None:
            raise ValueError(
                "This learner was built from a precomputed kernel matrix (from_kernel), so it "
                "cannot evaluate a new kernel; build a new learner with ActiveRLS.from_kernel(K_new)."
            )
        prior_diag = np.asarray(kernel.diag(self._X), dtype=np.float64)
        old_kernel, old_diag = self.kernel, self._prior_diag
        saved = self._save()
        self._cov.set_kernel(kernel)  # rebuild()'s reset() refills C in place with it
        self.kernel, self._prior_diag = kernel, prior_diag
        try:
            self.rebuild()
        except BaseException:
            self._cov.set_kernel(old_kernel)
            self.kernel, self._prior_diag = old_kernel, old_diag
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
        try:
            hash(name)
        except TypeError:
            raise ValueError(f"class label {name!r} is not hashable; use a str or int.") from None
        if name in self._class_index:
            raise ValueError(f"class {name!r} already exists; classes are {self._classes!r}.")
        L = np.array(list(self._labels), dtype=np.int64)
        if L.size:
            # new one-vs-all column: C[:, L] Lambda_L^-1 (-1)
            new_col = -((1.0 / self._lam_pt[L]) @ self._cov.rows(L))
        else:
            new_col = np.zeros(self.n_samples)
        if self._mT.shape[0] == 1:
            mT = np.vstack([-self._mT, self._mT, new_col[None]])
        else:
            mT = np.vstack([self._mT, new_col[None]])
        saved = self._save()
        self._classes.append(name)
        self._class_index[name] = len(self._classes) - 1
        self._counts = np.append(self._counts, 0)
        self._mT = mT
        old = self._refresh_lambdas()
        self._apply(lambda: self._reweight_update(old), saved)
        return self

    def rebuild(self) -> "ActiveRLS":
        """Recompute ``C`` and ``m`` from scratch by a direct Cholesky solve (O(n^2 |L|)).

        ``C`` is refilled with ``K`` in place, then conditioned on all labels
        (:meth:`core.covariance.DenseCovariance.condition`). The labelled block
        ``K_LL + Lambda_L`` is factored first, so a failure leaves the learner as it was.

        Raises
        ------
        numpy.linalg.LinAlgError
            If ``K_LL + Lambda_L`` is not positive definite (state unchanged).
        """
        L = np.array(list(self._labels), dtype=np.int64)
        if L.size:
            A = self._cov.prior_block(L) + np.diag(self._lam_pt[L])
            try:
                np.linalg.cholesky(0.5 * (A + A.T))
            except LinAlgError:
                raise LinAlgError(
                    "K_LL + Lambda_L is not positive definite: the kernel matrix is not positive "
                    "semi-definite or lam is far too small. Use an RBF kernel or increase lam."
                ) from None
        self._risk_cache = None
        self.n_rebuilds += 1
        self._cov.reset()
        self._mT = np.zeros_like(self._mT)
        if L.size:
            Y = self._codes()[self._cls[L]]
            self._mT += self._cov.condition(L, self._lam_pt[L], Y)
        return self

    # ------------------------------------------------------------------ read access
    @property
    def classes(self) -> list:
        """Class labels (a copy)."""
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
        return self._cov.n_samples

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
    def weighting(self):
        return dict(self._weighting) if isinstance(self._weighting, dict) else self._weighting

    @property
    def class_weights(self) -> dict:
        """Current class weights ``{class: w}`` (see the module docstring for "balanced")."""
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
        """A copy of ``C`` (n x n): for tests and small pools only (a second n x n array)."""
        return self._cov.to_array()

    def posterior_variance(self) -> np.ndarray:
        """GP predictive variance ``C_zz + lam`` (ALGORITHMS §2), ndarray of shape (n,)."""
        return self._cov.diag() + self.lam

    def predict(self) -> np.ndarray:
        """Predicted class labels, ndarray of shape (n,) (``f > 0`` / argmax, see core.risk)."""
        return self._label_array()[predicted_class_indices(self._mT.T)]

    def proba(self) -> np.ndarray:
        """Soft class probabilities (A§2, normalised), ndarray of shape (n, n_classes)."""
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
        return self.lam / self._w

    def expected_risk(self, backend: str = "numba") -> np.ndarray:
        """Expected risk ``E_i`` of labelling each point (eq. 3.50), +inf for labelled points.

        One fused O(n^2) pass (O(n^2 T) one-vs-all with equal weights) scores every
        unlabelled point for every hypothetical label; the result is cached until the state
        changes.

        Parameters
        ----------
        backend : {"numba", "numpy"}
            ``"numpy"`` is the slow reference (tests only).

        Returns
        -------
        E : ndarray of shape (n,)
        """
        if backend == "numba" and self._risk_cache is not None:
            return self._risk_cache.copy()
        E = np.full(self.n_samples, np.inf)
        cand = self.unlabeled_indices
        E[cand] = self._cov.expected_risk(self._mT, cand, self.hypothetical_lambdas(), self._w, backend)
        if backend == "numba":
            self._risk_cache = E.copy()
        return E

    def loo_decision_values(self) -> np.ndarray:
        """Leave-one-out outputs of the labelled points, ndarray of shape (n_labeled, T).

        From the removal update: ``f_{-j}(x_j) = m_j - C_jj (y_j - m_j) / (lambda_j - C_jj)``
        (equivalently the LOO residual is ``(y_j - m_j) lambda_j / (lambda_j - C_jj)``, A§1).
        Rows follow :attr:`labels` order.
        """
        L = np.array(list(self._labels), dtype=np.int64)
        if L.size == 0:
            return np.zeros((0, self.n_outputs))
        cjj = np.array([self._cov.entry(j, j) for j in L])
        lam = self._lam_pt[L]
        M = self._mT[:, L].T
        Y = self._codes()[self._cls[L]]
        return M - (cjj / (lam - cjj))[:, None] * (Y - M)
