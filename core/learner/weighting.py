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
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["WEIGHTINGS", "check_weighting", "class_weight_vector"]

WEIGHTINGS = ("none", "balanced")


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
    raise ValueError(f"weighting must be 'none', 'balanced' or a dict {{class: weight}}; got {weighting!r}.")


def class_weight_vector(weighting, classes, counts) -> np.ndarray:
    """Weights ``w`` of shape (T,) for a checked weighting and labelled counts per class.

    Parameters
    ----------
    weighting : "none", "balanced" or dict
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
    n_l = counts.sum()
    if n_l == 0:
        return np.ones(T)
    return n_l / (T * np.maximum(counts, 1.0))
