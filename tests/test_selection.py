"""Model choice by exact LOO (core/selection, docs/algorithms.md §14): every candidate's LOO
losses against brute-force refits, the label weights against a plain nearest-neighbour count,
the sign test against the binomial tail, and the switching rule's hysteresis."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from scipy.spatial.distance import cdist
from scipy.stats import binom

from core.criteria.risk import predicted_class_indices
from core.graph.active import GraphLearner
from core.graph.poisson_learner import PoissonLearner
from core.kernels import Kernel, knn_graph
from core.learner import ActiveRLS
from labeler.experiments.model_select_simulate import graph_rls_candidate
from core.selection import (ModelSelector, SwitchRule, evaluation_due, label_weights, loo_losses,
                            nearest_labelled_mass, weighted_error, weighted_sign_test)


def _pool(n=50, n_classes=3, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(n_classes, size=n)
    X = rng.standard_normal((n, 2)) * 0.7 + np.stack([y, (y == 1) * 2.0], axis=1)
    return X, y


def _labels(y, n_labels=14, seed=1):
    idx = np.random.default_rng(seed).choice(y.size, n_labels, replace=False)
    return [int(i) for i in idx], [int(y[i]) for i in idx]


def _builders(X, classes):
    W = knn_graph(X, 6, seed=0)
    return {
        "rls": lambda: ActiveRLS.from_features(X, classes=classes, kernel=Kernel("rbf", width=1.0), lam=0.1),
        "rls-balanced": lambda: ActiveRLS.from_features(X, classes=classes, kernel=Kernel("rbf", width=1.0), lam=0.1,
                                                        weighting={c: 1.0 + t for t, c in enumerate(classes)}),
        "harmonic": lambda: GraphLearner(W, classes, "harmonic"),
        "lgc": lambda: GraphLearner(W, classes, "lgc", alpha=0.9),
        "poisson": lambda: PoissonLearner(W, classes),
        # graph-kernel RLS, the model choice's candidate (labeler/experiments/model_select_simulate.py)
        "graph-rls": lambda: graph_rls_candidate(X, W, classes, {"lam": 0.05, "auto_tune": {}, "weighting": {
            c: 1.0 + t for t, c in enumerate(classes)}}, seed=0, n_neighbors=6, rank=20)[0],
    }


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name", ["rls", "rls-balanced", "harmonic", "lgc", "poisson", "graph-rls"])
def test_loo_losses_match_refits(name, n_classes):
    X, y = _pool(n_classes=n_classes)
    classes = list(range(n_classes))
    build = _builders(X, classes)[name]
    idx, lab = _labels(y)
    learner = build()
    learner.add_many(idx, lab)
    losses = loo_losses(learner)
    F = learner.loo_decision_values()
    for k, j in enumerate(idx):
        refit = build()
        refit.add_many(idx[:k] + idx[k + 1:], lab[:k] + lab[k + 1:])
        f = refit.decision_values[j]
        assert losses[k] == float(predicted_class_indices(f[None, :])[0] != lab[k])
        if name != "poisson":  # Poisson's shown scale m is the full fit's (its argmax is exact)
            assert_allclose(F[k], f, atol=1e-7)


def test_loo_losses_refuse_a_model_without_loo():
    class NoLoo:
        def require(self, capability, what=None):
            raise ValueError(f"{what} does not apply to this model; use one with LOO.")
    with pytest.raises(ValueError, match="model choice by leave-one-out"):
        loo_losses(NoLoo())


def test_nearest_labelled_mass_counts_voronoi_cells():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 4))
    L = rng.choice(300, 17, replace=False)
    owner = np.argmin(cdist(X, X[L]), axis=1)
    owner[L] = np.arange(L.size)
    mass = nearest_labelled_mass(X, L)
    assert_array_equal(mass, np.bincount(owner, minlength=L.size))
    assert mass.sum() == 300 and np.all(mass >= 1)


def test_label_weights():
    codes = np.array([0, 0, 0, 1])
    assert_allclose(label_weights(codes, 2), np.full(4, 0.25))
    assert_allclose(label_weights(codes, 2, balanced=True), [1 / 6, 1 / 6, 1 / 6, 0.5])
    mass = np.array([1.0, 1.0, 2.0, 4.0])
    assert_allclose(label_weights(codes, 2, mass), mass / 8)
    assert_allclose(label_weights(codes, 2, mass, balanced=True), [0.125, 0.125, 0.25, 0.5])
    assert weighted_error([1, 0, 0, 1], label_weights(codes, 2, mass)) == pytest.approx(5 / 8)
    with pytest.raises(ValueError, match="one per label"):
        label_weights(codes, 2, [1.0, 2.0])


@pytest.mark.parametrize("wins,losses", [(5, 0), (7, 2), (3, 3), (10, 4), (0, 3)])
def test_sign_test_with_equal_weights_is_the_binomial_tail(wins, losses):
    p = weighted_sign_test(np.full(wins, 0.1), np.full(losses, 0.1))
    expected = binom.sf(wins - 1, wins + losses, 0.5) if wins else 1.0
    assert p == pytest.approx(expected, rel=1e-9)


def test_sign_test_weighs_labels():
    # one heavy win among light losses is weaker evidence than the count of wins says
    assert weighted_sign_test([5.0, 0.1, 0.1, 0.1], [0.1]) > weighted_sign_test([1, 1, 1, 1], [1])
    assert weighted_sign_test([], []) == 1.0


def _losses(inc, ch):
    return {"a": np.asarray(inc, float), "b": np.asarray(ch, float)}


def test_rule_waits_for_labels_and_keeps_ties():
    rule = SwitchRule(p_switch=0.1, min_labels=10)
    w = np.full(8, 1 / 8)
    d = rule.decide("a", _losses([1] * 8, [0] * 8), w)
    assert (d.model, d.switched) == ("a", False) and "waiting" in d.reason
    w = np.full(12, 1 / 12)
    d = rule.decide("a", _losses([1, 0] * 6, [0, 1] * 6), w)  # equal errors: a tie keeps the incumbent
    assert (d.model, d.switched) == ("a", False)


def test_rule_switches_on_evidence_only():
    rule = SwitchRule(p_switch=0.1, min_labels=10)
    w = np.full(20, 1 / 20)
    inc = np.zeros(20)
    inc[:3] = 1
    d = rule.decide("a", _losses(inc, np.zeros(20)), w)  # 3 discordant wins: p = 1/8
    assert d.model == "a" and not d.switched and d.p_value == pytest.approx(0.125)
    inc[:4] = 1
    d = rule.decide("a", _losses(inc, np.zeros(20)), w)  # 4 wins: p = 1/16 < 0.1
    assert d.model == "b" and d.switched and d.p_value == pytest.approx(1 / 16)


def test_rule_hysteresis_the_loser_must_win_the_test_to_come_back():
    rule = SwitchRule(p_switch=0.1, min_labels=10)
    w = np.full(20, 1 / 20)
    a = np.zeros(20)
    a[:4] = 1
    d = rule.decide("a", {"a": a, "b": np.zeros(20)}, w)
    assert d.model == "b"
    # now a is slightly ahead of b (one label): b stays
    b = np.zeros(20)
    b[:2] = 1
    a = np.zeros(20)
    a[2] = 1
    d = rule.decide("b", {"a": a, "b": b}, w)
    assert d.model == "b" and not d.switched and d.challenger == "a"
    # with the same margin the incumbent a would have stayed too: the rule favours whoever answers
    d = rule.decide("a", {"a": b, "b": a}, w)
    assert d.model == "a"


def test_rule_picks_the_best_challenger():
    rule = SwitchRule(min_labels=2)
    w = np.full(10, 0.1)
    d = rule.decide("a", {"a": np.ones(10), "b": np.r_[np.zeros(5), np.ones(5)], "c": np.zeros(10)}, w)
    assert d.challenger == "c" and d.model == "c"
    assert d.errors == pytest.approx({"a": 1.0, "b": 0.5, "c": 0.0})


def test_evaluation_schedule():
    assert all(evaluation_due(n) for n in range(1, 51))
    assert [n for n in range(51, 101) if evaluation_due(n)] == [55, 60, 65, 70, 75, 80, 85, 90, 95, 100]


def test_selector_syncs_candidates_lazily_and_switches():
    X, y = _pool(n=60, n_classes=2, seed=4)
    classes = [0, 1]
    b = _builders(X, classes)
    cands = {"rls": b["rls"](), "harmonic": b["harmonic"](), "lgc": b["lgc"]()}
    seen = []
    sel = ModelSelector(cands, "rls", X, prepare={"harmonic": lambda learner, before: seen.append(before)})
    idx, lab = _labels(y, 20, seed=2)
    labels = dict(zip(idx, lab))
    d = sel.evaluate(labels)
    for learner in cands.values():
        assert learner.labels == labels
    assert seen == [0]
    expected = {name: loo_losses(learner) for name, learner in cands.items()}
    w = sel.weights(labels, classes, False)
    assert d.errors == pytest.approx({k: weighted_error(v, w) for k, v in expected.items()})
    # an undo and a relabel reach every candidate at the next evaluation
    del labels[idx[0]]
    labels[idx[1]] = 1 - labels[idx[1]]
    sel.evaluate(labels)
    for learner in cands.values():
        assert learner.labels == labels
    assert seen == [0, 18]


def test_selector_refuses_bad_settings():
    X, y = _pool()
    cands = {"harmonic": _builders(X, [0, 1, 2])["harmonic"]()}
    with pytest.raises(ValueError, match="not one of the candidates"):
        ModelSelector(cands, "rls", X)
    with pytest.raises(ValueError, match="give the features"):
        ModelSelector(cands, "harmonic")
    with pytest.raises(ValueError, match="correction"):
        ModelSelector(cands, "harmonic", X, correction="ips")


def test_evaluation_schedule_doubles_its_step():
    assert [n for n in range(100, 201) if evaluation_due(n)] == list(range(100, 201, 10))
    assert sum(evaluation_due(n) for n in range(200, 400)) == 10


def test_threshold_halves_with_each_switch():
    rule = SwitchRule(p_switch=0.1, min_labels=10)
    assert [rule.threshold(s) for s in range(3)] == [0.1, 0.05, 0.025]
    assert SwitchRule(spend=False).threshold(3) == 0.1
    w = np.full(20, 1 / 20)
    a = np.zeros(20)
    a[:4] = 1  # four discordant wins: p = 1/16
    assert rule.decide("a", {"a": a, "b": np.zeros(20)}, w, n_switches=0).switched
    assert not rule.decide("a", {"a": a, "b": np.zeros(20)}, w, n_switches=1).switched
    a[:5] = 1  # p = 1/32 < 0.05
    assert rule.decide("a", {"a": a, "b": np.zeros(20)}, w, n_switches=1).switched


def test_selector_counts_its_switches():
    X, y = _pool(n=60, n_classes=2, seed=4)
    b = _builders(X, [0, 1])
    sel = ModelSelector({"rls": b["rls"](), "harmonic": b["harmonic"]()}, "rls", X,
                        rule=SwitchRule(p_switch=1.0 + 1e-9, min_labels=2, spend=False))
    idx, lab = _labels(y, 20, seed=2)
    d = sel.evaluate(dict(zip(idx, lab)))
    assert sel.n_switches == int(d.switched)
