"""Class weights of the ARLS learner: one meaning of "none", "balanced" and a dict.

A labelled point of class ``y`` gets the regularisation ``lambda_j = lam / w_y`` (docs/algorithms.md
§1, last line: weighted RLS without offset is ``K_XL (K_LL + lam diag(1/w))^-1 y_L``). One
weight per point is shared by all one-vs-all columns, so that the columns share one posterior
covariance.

* ``"none"``: every ``w = 1``.
* ``{class: weight}``: fixed positive weights; classes not in the dict get 1.
* ``"balanced"``: ``w_y = n_L / (T n_y)`` over the labelled counts (``w_y`` proportional to
  ``1 / n_y``, averaging 1 over the labelled points, as scikit-learn's
  ``class_weight="balanced"``). A class without labels yet gets ``n_L / T`` (the weight its
  first label would nearly get); with no labels at all every weight is 1. The same formula
  is what :class:`core.rls.WeightedRLSClassifier` uses for ``class_weight="balanced"``.
* ``"evident"``: every ``w = 1`` until the label counts show the classes are imbalanced,
  then the ``"balanced"`` weights (:func:`imbalance_evident`: a chi-square test of the counts
  of the labelled classes against equal counts, p < :data:`EVIDENT_ALPHA`). On balanced data
  "balanced" weights move with every chance difference of the counts, and each move re-weights
  the labels the query criterion reads: on seed 002's spheres "balanced" alone takes exact ARLS
  from 100 % at 48 labels to 84 % at 60. A test on the counts keeps the weights at 1 there and
  turns them on as soon as a minority shows (10 : 1 after 11 labels); like "balanced" it is a
  function of the counts only, so every learner and the LOO tuner share it.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["EVIDENT_ALPHA", "WEIGHTINGS", "check_weighting", "class_weight_vector", "imbalance_evident",
           "renamed_weighting"]

WEIGHTINGS = ("none", "balanced", "evident")

#: Significance of the chi-square test of :func:`imbalance_evident`.
EVIDENT_ALPHA = 0.01


def check_weighting(weighting, classes, *, every_class: bool = False):
    """Validate a weighting; returns ``"none"``, ``"balanced"`` or a dict {class: float}.

    The one weighting validator (the learner's, and the session's with ``every_class``).

    Parameters
    ----------
    weighting : {"none", "balanced"} or dict {class: weight}
    classes : sequence
        The classes a dict may name.
    every_class : bool, default False
        A dict must give every class a weight (a session's stored setting).

    Raises
    ------
    ValueError
        If ``weighting`` is another string or type, names an unknown class, gives a weight
        that is not a finite number > 0, or (``every_class``) lacks a class.
    """
    if isinstance(weighting, str):
        if weighting not in WEIGHTINGS:
            raise ValueError(f"Unknown weighting {weighting!r}; choose one of {', '.join(WEIGHTINGS)} or a "
                             "dict {class: weight}.")
        return weighting
    if isinstance(weighting, dict):
        known = set(classes)
        out = {}
        for c, v in weighting.items():
            if c not in known:
                raise ValueError(f"weighting names class {c!r}, which is not in classes={list(classes)!r}.")
            if isinstance(v, bool) or not isinstance(v, numbers.Real) or not np.isfinite(v) or v <= 0:
                raise ValueError(f"weight of class {c!r} must be a finite number > 0; got {v!r}.")
            out[c] = float(v)
        missing = [c for c in classes if c not in out] if every_class else []
        if missing:
            raise ValueError(f"Weighting dict lacks class(es) {missing}; give a weight for every class.")
        return out
    raise ValueError(f"weighting must be 'none', 'balanced', 'evident' or a dict {{class: weight}}; got {weighting!r}.")


def class_weight_vector(weighting, classes, counts) -> np.ndarray:
    """Weights ``w`` of shape (T,) for a checked weighting and labelled counts per class.

    Parameters
    ----------
    weighting : "none", "balanced", "evident" or dict
        As returned by :func:`check_weighting`.
    classes : list of length T
    counts : array-like of shape (T,)
        Labelled points per class.
    """
    T = len(classes)
    if isinstance(weighting, dict):
        return np.array([weighting.get(c, 1.0) for c in classes], dtype=np.float64)
    if weighting == "none":
        return np.ones(T)
    counts = np.asarray(counts, dtype=np.float64)
    if weighting == "evident" and not imbalance_evident(counts):
        return np.ones(T)
    n_l = counts.sum()
    if n_l == 0:
        return np.ones(T)
    return n_l / (T * np.maximum(counts, 1.0))


def imbalance_evident(counts, alpha: float = EVIDENT_ALPHA) -> bool:
    """Whether labelled counts reject equal class sizes (chi-square test, p < ``alpha``).

    Only the classes with at least one label take part (a class not found yet says nothing
    about its size), and at least two must: the statistic is ``sum_y (n_y - e)^2 / e`` with
    ``e = n_L / k`` over the ``k`` labelled classes, ``k - 1`` degrees of freedom.

    Parameters
    ----------
    counts : array-like of shape (T,)
        Labelled points per class.
    alpha : float in (0, 1)

    Returns
    -------
    bool
    """
    c = np.asarray(counts, dtype=np.float64)
    c = c[c > 0]
    if c.size < 2:
        return False
    expected = c.sum() / c.size
    stat = float(np.sum((c - expected) ** 2) / expected)
    from scipy.stats import chi2  # here: scipy.stats costs 0.5-5 s to import, on every start

    return bool(chi2.sf(stat, c.size - 1) < alpha)


def renamed_weighting(weighting, old, new):
    """``weighting`` after class ``old`` is renamed ``new``: a dict of per-class weights gets the
    new key in the old one's place; a named rule ("none", "balanced", "evident") is unchanged."""
    if isinstance(weighting, dict):
        return {(new if c == old else c): w for c, w in weighting.items()}
    return weighting
