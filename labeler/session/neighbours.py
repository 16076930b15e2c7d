""""More like this": the nearest neighbours of a point in the features the kernel sees.

Plain functions over a :class:`~labeler.session.LabelingSession` (no Streamlit). Distances are
Euclidean in ``session.X`` (standardised, PCA-projected or TF-IDF features: the space whose
RBF kernel the learner uses, so near here means "similar to the model" too). One exact pass
over the pool, O(n d) time and O(n) memory: 20,000 x 784 takes a few tens of milliseconds.
"""

from __future__ import annotations

import numpy as np

from core.validation import check_index

__all__ = ["nearest_neighbours", "similar_points"]


def nearest_neighbours(X, index: int, k: int, candidates=None) -> np.ndarray:
    """The ``k`` points of ``candidates`` closest to ``X[index]``, nearest first.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    index : int
        The point; never in the answer.
    k : int
        At most this many neighbours (fewer when there are fewer candidates).
    candidates : ndarray of int, optional
        Points allowed in the answer (default every point).

    Returns
    -------
    ndarray of shape (min(k, m),) of int64
        Ties in distance are broken by the smaller index (a stable order: the same answer
        on every call).
    """
    X = np.asarray(X)
    n = X.shape[0]
    cand = np.arange(n) if candidates is None else np.asarray(candidates, dtype=np.int64)
    cand = cand[cand != index]
    if k <= 0 or cand.size == 0:
        return np.zeros(0, dtype=np.int64)
    diff = X[cand] - X[index]
    d2 = np.einsum("ij,ij->i", diff, diff)  # exact squared distances (no cancellation)
    if k < cand.size:
        # the k-th smallest distance; every point at most that far (ties included) is kept,
        # then sorted by (distance, index)
        kth = np.partition(d2, k - 1)[k - 1]
        keep = np.flatnonzero(d2 <= kth)
        cand, d2 = cand[keep], d2[keep]
    order = np.lexsort((cand, d2))[:k]
    return cand[order].astype(np.int64)


def similar_points(session, index, k: int = 12, include_labelled: bool = False,
                   include_skipped: bool = False) -> np.ndarray:
    """The ``k`` points most like point ``index`` (:func:`nearest_neighbours` in
    ``session.X``), by default only those still unlabelled and not skipped: the ones to
    label in the "more like this" grid.

    Raises
    ------
    IndexError
        ``index`` out of range. ValueError: ``k`` not a positive integer.
    """
    index = check_index(index, session.n_samples, name="point index")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive number of neighbours; got {k!r}.")
    allowed = np.ones(session.n_samples, dtype=bool)
    if not include_labelled:
        allowed[list(session.labels)] = False
    if not include_skipped:
        allowed[list(session.skipped)] = False
    return nearest_neighbours(session.X, index, int(k), np.flatnonzero(allowed))
