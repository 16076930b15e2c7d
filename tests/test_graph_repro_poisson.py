"""labeler reproduce-graph --only poisson: the quick section, its trend, and the paper's graph weights."""

from __future__ import annotations

import re

import numpy as np
import pytest
from numpy.testing import assert_allclose

from labeler.experiments import graph_repro
from labeler.experiments.graph_repro import poisson


@pytest.fixture(scope="module")
def quick_section():
    return poisson.run(quick=True, repeats=2)


def test_the_section_is_registered_and_states_its_command(quick_section):
    assert "poisson" in graph_repro.SECTIONS
    assert graph_repro.load_section("poisson") is poisson
    assert quick_section.startswith("## Calder et al. (2020)")
    assert "Command: `labeler reproduce-graph --only poisson --quick --repeats 2`" in quick_section
    assert re.search(r"^### Where we agree and differ", quick_section, re.MULTILINE)
    assert "| 1 |" in quick_section and "90.2" in quick_section and "16.1" in quick_section


def test_poisson_beats_laplace_at_one_label_per_class_on_mnist():
    from core.kernels.graph import knn_neighbours, self_tuned_graph
    from labeler.experiments.graph_repro._common import mnist

    X, y = mnist(1500, seed=1)
    W = self_tuned_graph(*knn_neighbours(X, 10))
    curve = poisson.few_label_curve(W, y, (1,), repeats=3, seed=5)
    assert np.mean(curve[1]["poisson"]) > np.mean(curve[1]["laplace"]) + 0.05
    assert np.mean(curve[1]["poisson"]) > 0.5


def test_per_class_draw_holds_each_class_equally():
    y = np.repeat(np.arange(4), 10)
    L = poisson.per_class_draw(y, 3, np.random.default_rng(0))
    assert (np.bincount(y[L]) == 3).all() and np.unique(L).size == L.size


def test_self_tuned_weights_are_graphlearnings_knn_weights():
    gl = pytest.importorskip("graphlearning")
    from core.kernels.graph import knn_neighbours, self_tuned_graph

    X = np.random.default_rng(0).normal(size=(200, 5))
    ind, dist = knn_neighbours(X, 10)
    ours = self_tuned_graph(ind, dist)
    n = X.shape[0]
    # GraphLearning's knn_data holds each point itself first (distance 0), then its neighbours
    knn_ind = np.hstack([np.arange(n)[:, None], ind])
    knn_dist = np.hstack([np.zeros((n, 1)), dist])
    theirs = gl.weightmatrix.knn(X, 11, knn_data=(knn_ind, knn_dist))
    theirs = theirs.toarray()
    np.fill_diagonal(theirs, 0.0)
    assert_allclose(ours.toarray(), theirs, atol=1e-12)


def test_self_tuned_graph_refuses_duplicates():
    from core.kernels.graph import self_tuned_graph

    with pytest.raises(ValueError, match="duplicat"):
        self_tuned_graph(np.array([[1], [0]]), np.array([[0.0], [0.0]]))
