"""The obvious nearest neighbours that the kNN tests check the fast searches against."""

import numpy as np


def brute_force(X, k):
    """All pairwise distances, self excluded, sorted by (distance, index): indices and
    distances of the ``k`` nearest, each of shape (n, k)."""
    d = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(d, np.inf)
    order = np.lexsort((np.broadcast_to(np.arange(len(X)), d.shape), d), axis=1)[:, :k]
    return order, np.take_along_axis(d, order, 1)
