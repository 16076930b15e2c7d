"""The pool's width grid and clusters (core.rls.width_scale) and the cluster rule of
core.rls.tuning.auto_tune (issue 20 §6: a width re-tune that cannot wander when the labels
sit one per cluster)."""

from __future__ import annotations

import numpy as np
import pytest

from core.kernels import Kernel
from core.rls import default_widths
from core.rls import width_scale as ws
from core.rls.tuning import auto_tune


@pytest.fixture(autouse=True)
def _rules_on(monkeypatch):
    """The rules under test, whatever the shipped default of the switch."""
    monkeypatch.setattr(ws, "POOL_WIDTH_RULES", True)


def _discs(per=20, rows=3, cols=4, spacing=6.0, seed=0):
    """Unit discs on a grid ``spacing`` apart (seed 002's spheres, smaller), sphere id per point."""
    rng = np.random.default_rng(seed)
    centres = np.array([(spacing * i, spacing * j) for j in range(rows) for i in range(cols)], dtype=float)
    r = np.sqrt(rng.uniform(size=(centres.shape[0], per)))
    t = rng.uniform(0, 2 * np.pi, size=(centres.shape[0], per))
    X = (centres[:, None, :] + np.stack([r * np.cos(t), r * np.sin(t)], axis=-1)).reshape(-1, 2)
    return X, np.repeat(np.arange(centres.shape[0]), per)


def _slow_components(X, k):
    """Oracle: components of the symmetric k-NN graph by a breadth-first search over the full
    distance matrix (ties broken by index, as a stable argsort)."""
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    nbrs = np.argsort(D, axis=1, kind="stable")[:, :k]
    adj = [set() for _ in range(len(X))]
    for i, row in enumerate(nbrs):
        for j in row:
            adj[i].add(int(j))
            adj[int(j)].add(i)
    label = -np.ones(len(X), dtype=int)
    c = 0
    for s in range(len(X)):
        if label[s] >= 0:
            continue
        stack = [s]
        label[s] = c
        while stack:
            u = stack.pop()
            for v in adj[u]:
                if label[v] < 0:
                    label[v] = c
                    stack.append(v)
        c += 1
    return label


def _same_partition(a, b):
    pairs = {}
    for u, v in zip(a.tolist(), b.tolist()):
        if pairs.setdefault(u, v) != v:
            return False
    return len(set(pairs.values())) == len(pairs)


@pytest.mark.parametrize("seed", [0, 1])
def test_components_match_a_breadth_first_search_over_all_distances(seed):
    X, sphere = _discs(seed=seed)
    X = np.vstack([X, np.random.default_rng(seed).normal(scale=8.0, size=(15, 2)) + 9.0])
    comp = ws.neighbour_components(X, 5)
    assert _same_partition(comp, _slow_components(X, 5))
    assert comp[0] == 0 and set(np.unique(comp)) == set(range(comp.max() + 1))


def test_gaps_match_the_least_distance_to_another_component():
    X, sphere = _discs(per=8, seed=3)
    comp = sphere.copy()
    comp[:3] = -1  # points of a small component do not count
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    want = [D[np.ix_(comp == c, (comp != c) & (comp >= 0))].min() for c in np.unique(comp[comp >= 0])]
    np.testing.assert_allclose(ws.component_gaps(X, comp), want, rtol=1e-9)


def test_grid_is_the_old_one_where_neighbours_are_not_closer_than_median_over_8():
    X = np.random.default_rng(0).normal(size=(300, 10))  # 10-D: neighbours are far apart
    scale = ws.width_scale(X)
    np.testing.assert_allclose(scale.widths, default_widths(X))
    assert scale.components is None and scale.cluster_width is None


def test_clustered_pool_extends_the_grid_down_and_finds_its_clusters():
    X, sphere = _discs()
    scale = ws.width_scale(X)
    old = default_widths(X)
    assert scale.widths[0] < old[0] and scale.widths[-1] == pytest.approx(old[-1])
    ratios = scale.widths[1:] / scale.widths[:-1]
    np.testing.assert_allclose(ratios, np.sqrt(2.0))
    dist = np.sort(np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1)), axis=1)[:, ws.NEIGHBOURS]
    assert scale.widths[0] <= np.quantile(dist, ws.LOW_QUANTILE) < scale.widths[1]
    assert _same_partition(scale.components, sphere)
    gaps = ws.component_gaps(X, sphere)
    assert scale.cluster_width == pytest.approx(0.5 * np.median(gaps))
    assert 1.0 < scale.cluster_width < 3.0  # discs 6 apart, radius 1: gaps about 4


def test_switch_off_gives_the_grid_before(monkeypatch):
    X, _ = _discs()
    monkeypatch.setattr(ws, "POOL_WIDTH_RULES", False)
    scale = ws.width_scale(X)
    np.testing.assert_allclose(scale.widths, default_widths(X))
    assert scale.components is None


def test_clusters_agree():
    assert ws.clusters_agree([0, 1, 1], ["a", "b", "b"])
    assert not ws.clusters_agree([0, 1, 1], ["a", "b", "a"])  # component 1 holds two classes
    assert not ws.clusters_agree([0, 0, -1], ["a", "a", "b"])  # one component labelled
    assert ws.clusters_agree([0, 2, -1, -1], ["a", "a", "b", "a"])  # -1 does not count


def _one_label_per_disc():
    X, sphere = _discs()
    scale = ws.width_scale(X)
    first = np.array([np.flatnonzero(sphere == s)[0] for s in range(sphere.max() + 1)])
    labels = ["a" if s % 3 else "b" for s in range(first.size)]
    # two labels in two discs so that every class has two labels (LOO can run)
    extra = np.array([np.flatnonzero(sphere == 0)[1], np.flatnonzero(sphere == 1)[1]])
    idx = np.r_[first, extra]
    labels = labels + [labels[0], labels[1]]
    return X, scale, idx, labels


def test_labels_one_per_cluster_keep_the_width_below_the_cluster_width():
    X, scale, idx, labels = _one_label_per_disc()
    kernel = Kernel("rbf", width=scale.median)  # the session's start: merges the discs
    free = auto_tune(X[idx], labels, ["a", "b"], [1.0, 1.0], kernel=kernel, lam=0.1, tune_lam=False,
                     widths=scale.widths)
    ruled = auto_tune(X[idx], labels, ["a", "b"], [1.0, 1.0], kernel=kernel, lam=0.1, tune_lam=False,
                      widths=scale.widths, components=scale.components[idx], cluster_width=scale.cluster_width)
    assert ruled.width_changed and ruled.width <= scale.cluster_width
    assert "clusters" in ruled.reason
    # the move goes to the best width at or below the cluster width (least error, squared, largest)
    below = ruled.widths <= scale.cluster_width * (1 + 1e-9)
    assert ruled.width_errors[np.isclose(ruled.widths, ruled.width)][0] == ruled.width_errors[below].min()
    np.testing.assert_allclose(free.width_errors, ruled.width_errors)  # same LOO, another rule
    # below the cluster width the usual rule applies: from a width there it moves only on evidence
    inside = auto_tune(X[idx], labels, ["a", "b"], [1.0, 1.0], kernel=Kernel("rbf", width=ruled.width), lam=0.1,
                       tune_lam=False, widths=scale.widths, components=scale.components[idx],
                       cluster_width=scale.cluster_width)
    assert inside.width <= scale.cluster_width


def test_a_cluster_holding_two_classes_switches_the_rule_off():
    X, scale, idx, labels = _one_label_per_disc()
    labels = list(labels)
    labels[-1] = "b" if labels[1] == "a" else "a"  # disc 1 now holds both classes
    kernel = Kernel("rbf", width=scale.median)
    free = auto_tune(X[idx], labels, ["a", "b"], [1.0, 1.0], kernel=kernel, lam=0.1, tune_lam=False,
                     widths=scale.widths)
    ruled = auto_tune(X[idx], labels, ["a", "b"], [1.0, 1.0], kernel=kernel, lam=0.1, tune_lam=False,
                      widths=scale.widths, components=scale.components[idx], cluster_width=scale.cluster_width)
    assert ruled.width == free.width and ruled.reason == free.reason


def test_components_must_be_one_per_label():
    X, scale, idx, labels = _one_label_per_disc()
    with pytest.raises(ValueError, match="one cluster per label"):
        auto_tune(X[idx], labels, ["a", "b"], [1.0, 1.0], kernel=Kernel("rbf", width=1.0), lam=0.1,
                  widths=scale.widths, components=scale.components[:3], cluster_width=1.0)
