"""Predictions of an :class:`~core.learner.ActiveRLS` learner on points outside its pool.

The learner keeps its outputs only on the pool. Off the pool its function is the kernel
expansion over the labelled points with the dual coefficients (seed 002 eq. 3.54,
docs/algorithms.md §3)::

    c_j = (y_j - m_j) / lambda_j        f(x) = k(x, X_L) c

which equal ``learner.decision_values`` on the pool (``m = K_XL (K_LL + Lambda)^-1 Y_L`` and
``(K_LL + Lambda)^-1 Y_L = Lambda^-1 (Y_L - m_L)``). :class:`OutOfPoolPredictor` evaluates it
on fixed points (a validation set), caching the kernel rows ``k(x_j, X_new)`` of the labelled
points (one row per label, O(n_new d) each).
"""

from __future__ import annotations

import numpy as np

from ..criteria.risk import predicted_class_indices, target_codes
from ..kernels import Kernel
from ..validation import check_features
from .arls import ActiveRLS

__all__ = ["dual_coefficients", "OutOfPoolPredictor"]


def dual_coefficients(learner: ActiveRLS) -> tuple[np.ndarray, np.ndarray]:
    """Dual coefficients of the learner's current function (seed 002 eq. 3.54).

    ``c_j = (y_j - m_j) / lambda_j`` for every labelled ``j`` (codes ``y_j``, outputs
    ``m_j = f_L(x_j)``, ``lambda_j = lam / w_{y_j}``), so that ``f(x) = k(x, X_L) c``.

    Parameters
    ----------
    learner : core.learner.ActiveRLS

    Returns
    -------
    indices : ndarray of shape (n_labeled,), int64
        Labelled pool indices, in labelling order.
    c : ndarray of shape (n_labeled, T)
    """
    labels = learner.labels
    L = np.fromiter(labels.keys(), dtype=np.int64, count=len(labels))
    T = learner.n_outputs
    if L.size == 0:
        return L, np.zeros((0, T))
    index = {c: t for t, c in enumerate(learner.classes)}
    codes = target_codes(T, learner.n_classes)[[index[labels[j]] for j in L]]
    m_L = learner.decision_values[L]
    lam_L = learner.point_lambdas[L]
    return L, (codes - m_L) / lam_L[:, None]


class OutOfPoolPredictor:
    """Predictions of an :class:`ActiveRLS` learner on fixed points outside its pool.

    Keeps the kernel rows ``k(x_j, X_new)`` of the labelled pool points (computed once per
    label) and evaluates ``f(X_new) = k(X_new, X_L) c`` with the current dual coefficients
    (seed 002 eq. 3.54): O(n_new |L| T) per call.

    Parameters
    ----------
    X_pool : ndarray of shape (n_samples, n_features)
        The learner's pool (the same features it was built from).
    X_new : ndarray of shape (n_new, n_features)
    kernel : core.kernels.Kernel
        The learner's kernel.
    """

    def __init__(self, X_pool, X_new, kernel: Kernel):
        self.X_pool = check_features(X_pool, name="X_pool")
        self.X_new = check_features(X_new, name="X_new")
        if self.X_new.shape[1] != self.X_pool.shape[1]:
            raise ValueError(
                f"X_new has {self.X_new.shape[1]} feature(s) but the pool has {self.X_pool.shape[1]}."
            )
        self.kernel = kernel
        # Row s of _rows holds k(x_j, X_new) for the pool point j stored in slot s; a point keeps
        # its slot for good (also after a removal), so no row is ever moved or copied again.
        self._slot: dict[int, int] = {}
        self._rows = np.empty((16, self.X_new.shape[0]))

    def _slots(self, L: np.ndarray) -> np.ndarray:
        """Slot of every labelled point, computing the kernel rows of new points in one block."""
        missing = [int(j) for j in L if int(j) not in self._slot]
        if missing:
            start = len(self._slot)
            need = start + len(missing)
            if need > self._rows.shape[0]:
                grown = np.empty((max(need, 2 * self._rows.shape[0]), self._rows.shape[1]))
                grown[:start] = self._rows[:start]
                self._rows = grown
            self._rows[start:need] = self.kernel(self.X_pool[missing], self.X_new)
            for k, j in enumerate(missing):
                self._slot[j] = start + k
        return np.fromiter((self._slot[int(j)] for j in L), dtype=np.intp, count=L.size)

    def decision_values(self, learner: ActiveRLS) -> np.ndarray:
        """``f(X_new)``, ndarray of shape (n_new, T) (binary: T = 1, +1 = ``classes[1]``)."""
        L, c = dual_coefficients(learner)
        if L.size == 0:
            return np.zeros((self.X_new.shape[0], learner.n_outputs))
        slots = self._slots(L)
        used = len(self._slot)
        coef = np.zeros((used, c.shape[1]))
        coef[slots] = c  # slots of points no longer labelled keep a zero coefficient
        return (coef.T @ self._rows[:used]).T

    def predict(self, learner: ActiveRLS) -> np.ndarray:
        """Class labels of ``X_new``, ndarray of shape (n_new,) (the learner's decision rule)."""
        classes = np.empty(learner.n_classes, dtype=object)
        classes[:] = learner.classes
        idx = predicted_class_indices(self.decision_values(learner))
        return _as_label_array(classes[idx], learner.classes)


def _as_label_array(values: np.ndarray, classes: list) -> np.ndarray:
    """Object array of shape (n,) -> the natural dtype of the class labels (int, str, ...)."""
    probe = np.array(classes)
    if probe.ndim == 1 and probe.dtype != object and probe.tolist() == list(classes):
        return values.astype(probe.dtype)
    return values
