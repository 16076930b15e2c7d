"""LGC against its closed form (dense solve at small n); the propagation converges to it."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.datasets import make_blobs

from core.graph import LocalGlobalConsistency
from core.kernels import knn_graph


@pytest.fixture(scope="module")
def data():
    X, y = make_blobs(150, centers=3, cluster_std=1.2, random_state=3)
    L = np.array([np.flatnonzero(y == c)[0] for c in range(3)] + [np.flatnonzero(y == 0)[1]])
    return knn_graph(X, 7, weights="heat"), y, L


def closed_form(W, L, yL, c, alpha, form, prior):
    """F = (1 - alpha) (I - alpha S)^-1 Y, dense (seed 000 Algorithm 4)."""
    Wd = W.toarray()
    d = Wd.sum(1)
    S = Wd / d[:, None] if form == "row_stochastic" else Wd / np.sqrt(np.outer(d, d))
    n = len(d)
    Y = np.full((n, c), 1.0 / c if prior == "uniform" else 0.0)
    Y[L] = 0
    Y[L, yL] = 1
    return (1 - alpha) * np.linalg.solve(np.eye(n) - alpha * S, Y)


@pytest.mark.parametrize("form", ["row_stochastic", "symmetric"])
@pytest.mark.parametrize("prior", ["uniform", "zero"])
@pytest.mark.parametrize("solver", ["cg", "direct", "iterate"])
@pytest.mark.parametrize("alpha", [0.1, 0.9])
def test_matches_the_closed_form(data, form, prior, solver, alpha):
    W, y, L = data
    tol = 1e-13 if solver == "iterate" else 1e-12
    model = LocalGlobalConsistency(alpha, form=form, unlabeled_prior=prior, solver=solver, tol=tol).fit(W, L, y[L])
    assert_allclose(model.decision_values_, closed_form(W, L, y[L], 3, alpha, form, prior), atol=1e-9)


def test_row_stochastic_rows_are_probabilities(data):
    """Seed 000 §3.2.2: with S = D^-1 W and rows of Y summing to 1, rows of F* sum to 1."""
    W, y, L = data
    F = LocalGlobalConsistency(0.99).fit(W, L, y[L]).decision_values_
    assert_allclose(F.sum(1), 1.0, atol=1e-8)
    assert F.min() > 0


def test_classification_and_ranking(data):
    W, y, L = data
    model = LocalGlobalConsistency(0.99).fit(W, L, y[L])
    assert (model.predict() == y).mean() > 0.9
    order = model.rank(2)
    F = model.decision_values_[:, 2]
    assert sorted(order.tolist()) == list(range(150))
    assert (np.diff(F[order]) <= 0).all()
    # the top of the ranking is class 2
    assert (y[order[:40]] == 2).mean() > 0.95
    with pytest.raises(ValueError, match="not a class"):
        model.rank(7)


def test_bad_parameters_are_named(data):
    W, y, L = data
    for kwargs, word in [({"alpha": 1.0}, "alpha"), ({"alpha": 0}, "alpha"), ({"form": "sym"}, "form"),
                         ({"unlabeled_prior": "one"}, "unlabeled_prior"), ({"solver": "lu"}, "solver")]:
        with pytest.raises(ValueError, match=word):
            LocalGlobalConsistency(**kwargs).fit(W, L, y[L])
    with pytest.raises(RuntimeError, match="did not settle"):
        LocalGlobalConsistency(0.99, solver="iterate", max_iter=3).fit(W, L, y[L])
    with pytest.raises(RuntimeError, match="not fitted"):
        LocalGlobalConsistency().rank(0)
