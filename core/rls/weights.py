"""Class weights for weighted RLS: balanced and one-vs-all equilibrating weights.

Weighted RLS minimises ``sum_i a_i (y_i - f(x_i) - b)^2 + lam ||f||^2`` (docs/algorithms.md §1,
seed 002 eq. 3.28). This module turns a class weighting into the per-point weights ``a_i``.

Scale. Weights are normalised like scikit-learn's ``class_weight="balanced"``: with unit
sample weights they average 1 over the points, so ``lam`` keeps the meaning it has in the
unweighted problem ``sum_i (y_i - f(x_i))^2 + lam ||f||^2`` (the seed instead normalises
``sum_i a_i = 1``, eq. 3.19, which rescales ``lam`` by ``n``).

Binary (T = 2 classes, one output column):
    ``w_y = n / (2 n_y)`` -- proportional to ``1 / n_y``, each class carries total weight n/2.
    This is eq. 3.14-3.15 for T = 2 (``w_+ = 1/(2 n_+)``, ``w_- = 1/(2 n_-)``) times ``n``.

Multiclass (T > 2 classes, T one-vs-all columns, codes +1 / -1; seed 002 §2.6, §3.1):
    eq. 3.14-3.15 give, for column t, ``w_+ = (T-1)/(2 n_-)`` and ``w_- = 1/(2 n_-)``: the
    positives of a column weigh (T-1) times as much as its negatives, so that both sides of
    every column carry the same total weight. The seed derives them (eq. 3.16-3.18) from the
    multiclass objective ``sum_i sum_{j != y_i} [V(f^{y_i}(x_i), 1) + V(f^j(x_i), -1)]`` under
    equal class sizes (``n_- = (T-1) n_+``). For unequal class sizes we apply the same
    objective with every point weighted by ``1 / n_{y_i}`` (each class carries the same total
    weight), which gives for a point of class s in column t::

        E[s, t] = n / (2 n_t)              if s == t   (positives of column t)
        E[s, t] = n / (2 (T-1) n_s)        if s != t   (negatives of column t)

    Each column then has positive and negative total weight n/2 and the negatives are
    themselves balanced across classes. With equal class sizes ``n_s = n/T`` this is exactly
    ``n * (T-1)/(2 n_-)`` and ``n * 1/(2 n_-)`` of eq. 3.14-3.15. For T = 2 both columns
    equal the binary weights above. A point's weight differs between its own column and the
    others, so multiclass ``"balanced"`` weights are per column: shape (n, T).
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["balanced_class_weights", "equilibrating_weights", "sample_weights"]


def _counts_array(counts, n_classes) -> np.ndarray:
    """Counts as a float array of shape (T,) after checking they are usable."""
    if isinstance(counts, dict):
        keys = list(counts)
        values = np.array([counts[k] for k in keys], dtype=object)
    else:
        keys = None
        values = np.asarray(counts, dtype=object)
        if values.ndim != 1:
            raise ValueError(f"counts must be a 1-D sequence of class counts; got shape {values.shape}.")
    try:
        arr = values.astype(np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"counts must be numbers of points per class; got {counts!r}.") from None
    if n_classes is not None and int(n_classes) != arr.size:
        raise ValueError(
            f"counts gives {arr.size} class(es) but n_classes={n_classes}; give one count per class."
        )
    if arr.size < 2:
        raise ValueError(f"Class weights need at least 2 classes; got {arr.size}.")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"counts must be finite numbers >= 0 (weighted counts allowed); got {counts!r}.")
    if np.any(arr == 0):
        empty = [keys[i] if keys is not None else i for i in np.flatnonzero(arr == 0)]
        raise ValueError(
            f"Balanced weights are undefined for class(es) {empty} with no points; label at "
            "least one point of every class or pass explicit weights {class: weight}."
        )
    return arr


def balanced_class_weights(counts, n_classes: int | None = None) -> np.ndarray:
    """Per-class weights ``n / (T n_y)``, the same for every output column.

    For T = 2 these are the equilibrating weights of eq. 3.14-3.15 (``w_y`` proportional to
    ``1 / n_y``, scaled to average 1 over the points). For T > 2 they balance the class sizes
    but not the one-vs-all columns; see :func:`equilibrating_weights` for those.

    Parameters
    ----------
    counts : dict {class: number} or array-like of shape (T,)
        Number (or total sample weight) of the points of each class; every count must be > 0.
    n_classes : int, optional
        Number of classes T; if given it must equal ``len(counts)``.

    Returns
    -------
    ndarray of shape (T,)
        Weight of a point of each class, in the order of ``counts``.
    """
    n_y = _counts_array(counts, n_classes)
    return n_y.sum() / (n_y.size * n_y)


def equilibrating_weights(counts, n_classes: int | None = None) -> np.ndarray:
    """One-vs-all equilibrating weights (eq. 3.14-3.15, generalised to unequal classes).

    Parameters
    ----------
    counts : dict {class: number} or array-like of shape (T,)
        Number (or total sample weight) of the points of each class; every count must be > 0.
    n_classes : int, optional
        Number of classes T; if given it must equal ``len(counts)``.

    Returns
    -------
    ndarray of shape (T, T)
        ``E[s, t]`` is the weight of a point of class s in one-vs-all column t:
        ``n / (2 n_t)`` on the diagonal, ``n / (2 (T-1) n_s)`` off it (module docstring).
        Every column has positive and negative total weight ``n / 2``.
    """
    n_y = _counts_array(counts, n_classes)
    T, n = n_y.size, n_y.sum()
    table = np.repeat((n / (2.0 * (T - 1) * n_y))[:, None], T, axis=1)
    np.fill_diagonal(table, n / (2.0 * n_y))
    return table


def _class_weight_dict(class_weight: dict, classes) -> np.ndarray:
    """Weights of shape (T,) from a dict {class: weight}; classes not in the dict weigh 1."""
    known = {c: t for t, c in enumerate(classes)}
    out = np.ones(len(classes))
    for key, value in class_weight.items():
        if key not in known:
            raise ValueError(
                f"class_weight names class {key!r}, which is not among the classes "
                f"{list(classes)}; remove it or fix the class label."
            )
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value) or value <= 0:
            raise ValueError(
                f"class_weight[{key!r}] must be a finite number > 0; got {value!r}. "
                "To ignore a class, drop its points instead."
            )
        out[known[key]] = float(value)
    return out


def sample_weights(y, classes, class_weight=None, sample_weight=None) -> np.ndarray:
    """Per-point loss weights: class weights times sample weights (the one place they meet).

    Parameters
    ----------
    y : array-like of shape (n,)
        Class label of each point; every label must be in ``classes``.
    classes : array-like of shape (T,)
        The classes, in the order of the output columns (T >= 2).
    class_weight : None, "balanced", "equilibrating" or dict {class: weight}
        None: all weights 1. dict: the given weight per class (classes not named weigh 1).
        "balanced": ``n / (T n_y)`` for every T (scikit-learn's meaning, and the one the ARLS
        learner uses, :mod:`core.learner.weighting`). "equilibrating": the one-vs-all
        equilibrating weights of :func:`equilibrating_weights` (per column; for two classes
        the same as "balanced"). Classes are counted on ``y`` weighted by ``sample_weight``,
        so an integer sample weight is the same as repeating the point.
    sample_weight : array-like of shape (n,), optional
        Non-negative weight of each point (default 1); multiplies the class weights.

    Returns
    -------
    ndarray of shape (n,) or (n, T)
        Shape (n,) when a point's weight is the same in every output column (None, dict,
        "balanced", binary "equilibrating"); shape (n, T) for multiclass "equilibrating",
        where column t holds the weights of one-vs-all problem t.

    Raises
    ------
    ValueError
        If a label of ``y`` is not in ``classes``, a class weight is not > 0, a class of
        ``classes`` has no point under "balanced", or ``class_weight`` is of another kind.
    """
    y = np.asarray(y)
    classes = np.asarray(classes)
    if y.ndim != 1:
        raise ValueError(f"y must be 1-D (one label per point); got shape {y.shape}.")
    if classes.ndim != 1 or classes.size < 2 or np.unique(classes).size != classes.size:
        raise ValueError(f"classes must list at least 2 distinct labels; got {classes.tolist()!r}.")
    order = np.argsort(classes, kind="stable")
    pos = np.searchsorted(classes[order], y)
    pos = np.minimum(pos, classes.size - 1)
    idx = order[pos]
    unknown = classes[idx] != y
    if np.any(unknown):
        bad = np.unique(y[unknown])[:5].tolist()
        raise ValueError(
            f"y holds label(s) {bad} that are not among the classes {classes.tolist()}; "
            "add them to classes or fix the labels."
        )
    if sample_weight is None:
        sw = np.ones(y.size)
    else:
        sw = np.asarray(sample_weight, dtype=np.float64)
        if sw.shape != y.shape or not np.all(np.isfinite(sw)) or np.any(sw < 0):
            raise ValueError(
                f"sample_weight must hold {y.size} finite numbers >= 0, one per point; got shape {sw.shape}."
            )
    if class_weight is None:
        return sw.copy()
    if isinstance(class_weight, dict):
        return _class_weight_dict(class_weight, classes.tolist())[idx] * sw
    if isinstance(class_weight, str) and class_weight in ("balanced", "equilibrating"):
        counts = np.bincount(idx, weights=sw, minlength=classes.size)
        if np.any(counts == 0):
            raise ValueError(
                f"class_weight={class_weight!r} needs at least one point (of weight > 0) of every "
                f"class; class(es) {classes[counts == 0].tolist()} have none. Remove them from classes "
                "or label one."
            )
        if class_weight == "balanced" or classes.size == 2:
            return balanced_class_weights(counts)[idx] * sw
        return equilibrating_weights(counts)[idx] * sw[:, None]
    raise ValueError(
        f"class_weight must be None, 'balanced', 'equilibrating' or a dict {{class: weight}}; "
        f"got {class_weight!r}."
    )
