"""Exact leave-one-out losses of a candidate model and the weights of the labels.

A candidate is any :class:`core.learner.base.Learner` with the capability
:data:`~core.learner.base.LOO`: its :meth:`~core.learner.base.Learner.loo_decision_values` are
exact (RLS from the posterior's diagonal, docs/algorithms.md §1; harmonic, LGC and Poisson
learning from one solve per label, docs/algorithms.md §5). The loss of label ``k`` is 1 when
the model trained on the other labels predicts another class at that point, else 0. Outputs
within :data:`TIE_TOLERANCE` of a tie are a tie, broken as an exact one (binary: ``classes[0]``;
one-vs-all: the lowest index), so that rounding never decides a loss: a label whose kernel
values to the others are negligible has a LOO output of rounding size, whose sign two exact
implementations of one model (or one learner after two update paths) do not share.

Actively chosen labels are not a random sample of the pool: the strategies ask near the class
boundaries, where every model errs more, and ask there many times. An unweighted LOO error
then measures the boundary region over and over. :func:`nearest_labelled_mass` gives each
label the number of pool points whose nearest labelled point it is (a Voronoi cell's
population in the features the kernel sees), so each region of the pool counts by its size,
not by how often the strategy asked there (docs/algorithms.md §14).
"""

from __future__ import annotations

import numpy as np

from ..learner.base import LOO

__all__ = ["loo_losses", "loo_predicted_classes", "nearest_labelled_mass", "label_weights", "weighted_error",
           "TIE_TOLERANCE"]

#: LOO outputs (RLS coding: targets +-1) within this of a tie between classes are a tie.
TIE_TOLERANCE = 1e-9

#: Pool rows per block of the nearest-labelled search (bounded memory: block x labels floats).
_BLOCK = 4096


def loo_losses(learner) -> np.ndarray:
    """0/1 leave-one-out loss of each label of ``learner``, shape (n_labeled,), labelling order.

    Parameters
    ----------
    learner : core.learner.base.Learner
        Offers :data:`~core.learner.base.LOO`.

    Returns
    -------
    ndarray of float64, shape (n_labeled,)
        1.0 where the model without label ``k`` predicts another class at its point.

    Raises
    ------
    ValueError
        The learner has no exact LOO (the message names the fix).
    """
    learner.require(LOO, "model choice by leave-one-out")
    F = np.asarray(learner.loo_decision_values(), dtype=np.float64)
    index = {c: t for t, c in enumerate(learner.classes)}
    truth = np.fromiter((index[v] for v in learner.labels.values()), dtype=np.int64, count=learner.n_labeled)
    if F.shape[0] == 0:
        return np.zeros(0)
    return (loo_predicted_classes(F) != truth).astype(np.float64)


def loo_predicted_classes(F) -> np.ndarray:
    """The class each row of LOO outputs predicts: as
    :func:`core.criteria.risk.predicted_class_indices`, with outputs within
    :data:`TIE_TOLERANCE` of a tie taken as the tie.

    Parameters
    ----------
    F : array-like of float, shape (n, 1) or (n, T)
        LOO decision values (RLS coding, targets +-1): one column for two classes, one per
        class (one-vs-all) for ``T >= 3``.

    Returns
    -------
    ndarray of int64, shape (n,)
        Class index per row. Binary: 1 where ``f > TIE_TOLERANCE``, else 0 (``classes[0]``);
        one-vs-all: the lowest index within :data:`TIE_TOLERANCE` of the row's maximum.

    Notes
    -----
    The tolerance is absolute: at a very small lam a dense RLS learner's rounding can exceed it
    (docs/algorithms.md §14).
    """
    F = np.asarray(F, dtype=np.float64)
    if F.shape[1] == 1:
        return (F[:, 0] > TIE_TOLERANCE).astype(np.int64)
    return np.argmax(F >= F.max(axis=1, keepdims=True) - TIE_TOLERANCE, axis=1).astype(np.int64)


def nearest_labelled_mass(X, labeled) -> np.ndarray:
    """How many pool points have each labelled point as their nearest labelled point.

    Parameters
    ----------
    X : ndarray of shape (n, d)
        The pool's features (the kernel's).
    labeled : array-like of int, shape (l,)
        Pool indices of the labelled points (distinct).

    Returns
    -------
    ndarray of float64, shape (l,)
        Counts summing to ``n``; a labelled point counts itself. Ties go to the earlier label.

    Notes
    -----
    O(n l d) in blocks of :data:`_BLOCK` rows (squared distances ``|x|^2 - 2 x.z + |z|^2``).
    """
    X = np.asarray(X, dtype=np.float64)
    L = np.asarray(labeled, dtype=np.int64)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array of features (n, d); got shape {X.shape}.")
    if L.size == 0:
        return np.zeros(0)
    Z = X[L]
    zz = np.einsum("ij,ij->i", Z, Z)
    owner = np.empty(X.shape[0], dtype=np.int64)
    for start in range(0, X.shape[0], _BLOCK):
        B = X[start:start + _BLOCK]
        d2 = zz[None, :] - 2.0 * (B @ Z.T)  # |b|^2 is the same for every label: left out
        owner[start:start + B.shape[0]] = np.argmin(d2, axis=1)
    owner[L] = np.arange(L.size)  # rounding must not give a labelled point to another label
    return np.bincount(owner, minlength=L.size).astype(np.float64)


def label_weights(codes, n_classes: int, mass=None, balanced: bool = False) -> np.ndarray:
    """Weights of the labels in the LOO error, summing to 1.

    Parameters
    ----------
    codes : array-like of int, shape (l,)
        Class index of each label.
    n_classes : int
    mass : array-like of float, shape (l,), optional
        The pool mass each label stands for (:func:`nearest_labelled_mass`); default 1 each
        (the plain LOO error).
    balanced : bool
        Each class with labels weighs the same in total (the balanced error, as the class
        weights "balanced" ask), the mass shared within a class.

    Returns
    -------
    ndarray of float64, shape (l,)
    """
    codes = np.asarray(codes, dtype=np.int64)
    if codes.size == 0:
        return np.zeros(0)
    w = np.ones(codes.size) if mass is None else np.asarray(mass, dtype=np.float64).copy()
    if w.shape != codes.shape or np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError(f"mass must be {codes.size} finite non-negative numbers (one per label); got {mass!r}.")
    if w.sum() <= 0:
        w = np.ones(codes.size)
    if balanced:
        per_class = np.bincount(codes, weights=w, minlength=n_classes)
        present = int(np.count_nonzero(per_class > 0))
        w = w / per_class[codes] / present
    return w / w.sum()


def weighted_error(losses, weights) -> float:
    """``sum_k w_k loss_k`` (weights summing to 1): the estimated error; NaN without labels."""
    losses = np.asarray(losses, dtype=np.float64)
    if losses.size == 0:
        return float("nan")
    return float(np.dot(losses, weights))
