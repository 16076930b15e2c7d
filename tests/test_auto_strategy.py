"""The default "auto" strategy: expected risk while cold, margin once every class has labels."""

from __future__ import annotations

import numpy as np
import pytest

from core.criteria import CRITERIA, Auto, ExpectedRisk, Margin, ScoringState
from core.criteria.auto import MAX_RISK_LABELS, MIN_LABELS_PER_CLASS, decide
from core.kernels import Kernel
from core.learner import ActiveRLS
from core.strategies import STRATEGIES, auto_decision, query_one, resolve, scores
from labeler.session import LabelingSession, SessionConfig
from labeler.session.config import DEFAULTS
from labeler.session.explain import explain


def blobs(n=60, seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [4.0, 0.0], [0.0, 4.0]])
    y = np.arange(n) % 3
    return centres[y] + rng.normal(scale=0.8, size=(n, 2)), y


def learner(X, seed=0):
    return ActiveRLS.from_features(X, classes=[0, 1, 2], kernel=Kernel("rbf", width=1.5), lam=0.1,
                                   weighting="balanced", random_state=seed)


def test_default_rule_is_the_first_ten_labels_of_expected_risk():
    assert (MAX_RISK_LABELS, MIN_LABELS_PER_CLASS) == (10, None)
    d = decide([1] * 9 + [0])
    assert (d.strategy, d.n_labels, d.max_labels, d.min_labels, d.warm) == ("arls", 9, 10, None, False)
    d = decide([1] * 10)
    assert (d.strategy, d.warm, d.capped, d.n_labels) == ("margin", True, True, 10)
    assert decide([9, 0]).strategy == "arls" and decide([10, 0]).strategy == "margin"  # a class unseen
    assert decide([3, 3]).strategy == "arls"  # covered classes do not switch without a coverage rule
    assert decide([0, 0]).strategy == "arls"


def test_coverage_rule_switches_exactly_at_its_threshold():
    k = 3
    assert decide([k, k, k - 1], min_labels=k, max_labels=None).strategy == "arls"
    d = decide([k, k - 1, k + 5], min_labels=k, max_labels=None)
    assert (d.warm, d.fewest, d.class_index, d.capped) == (False, k - 1, 1, False)
    d = decide([k, k, k], min_labels=k, max_labels=None)
    assert (d.strategy, d.warm, d.fewest, d.capped) == ("margin", True, k, False)
    assert decide([1, 1], min_labels=1).strategy == "margin"
    d = decide([3, 3], min_labels=3)  # covered before the cap: not "capped"
    assert (d.strategy, d.capped) == ("margin", False)
    d = decide([8, 2], min_labels=3)  # the cap first
    assert (d.strategy, d.capped) == ("margin", True)
    assert decide([1] * 10, max_labels=11).strategy == "arls"


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_decide_rejects_a_bad_threshold(bad):
    with pytest.raises(ValueError, match="min_labels must be an integer >= 1 or None"):
        decide([3, 3], bad)


@pytest.mark.parametrize("bad", [0, -2, 2.5, True])
def test_decide_rejects_a_bad_cap(bad):
    with pytest.raises(ValueError, match="max_labels must be an integer >= 1 or None"):
        decide([3, 3], max_labels=bad)


def test_decide_rejects_no_rule_at_all():
    with pytest.raises(ValueError, match="never switch to margin.*use the strategy 'arls'"):
        decide([3, 3], None, None)


def test_auto_criterion_takes_the_cap():
    X, y = blobs()
    lrn = learner(X)
    lrn.add_many([0, 3, 6, 9, 1], [0, 0, 0, 0, 1])  # counts 4, 1, 0: 5 labels
    state = lrn.scoring_state()
    assert Auto().decision(state).strategy == "arls"
    assert Auto(max_labels=5).decision(state).strategy == "margin"
    np.testing.assert_array_equal(lrn.score(Auto(max_labels=5)), lrn.score(Margin()))


def test_decide_rejects_no_classes():
    with pytest.raises(ValueError, match="class_counts is empty"):
        decide([])


def test_auto_is_registered_and_selectable_beside_the_plain_ones():
    assert "auto" in STRATEGIES and {"arls", "margin", "random"} <= set(STRATEGIES)
    assert CRITERIA["auto"] is Auto


def test_auto_needs_class_counts():
    state = ScoringState(np.zeros((3, 4)), np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="needs the label count of every class"):
        Auto().score(state, None, np.arange(4))


def test_scoring_state_counts_labels_per_class():
    X, y = blobs()
    lrn = learner(X)
    lrn.add_many([0, 1, 3, 6], [0, 1, 0, 0])
    assert lrn.scoring_state().class_counts.tolist() == [3, 1, 0]


def test_auto_scores_are_arls_while_cold_and_margin_once_warm():
    X, y = blobs()
    lrn = learner(X)
    lrn.add_many([0, 1, 2, 3], y[[0, 1, 2, 3]].tolist())  # 4 labels: cold
    assert resolve(lrn, "auto") == "arls"
    np.testing.assert_array_equal(scores(lrn, "auto"), scores(lrn, "arls"))
    np.testing.assert_allclose(lrn.score(Auto()), lrn.score(ExpectedRisk()), rtol=1e-12)
    more = list(range(4, 4 + MAX_RISK_LABELS))
    lrn.add_many(more, y[more].tolist())
    assert resolve(lrn, "auto") == "margin"
    np.testing.assert_array_equal(scores(lrn, "auto"), scores(lrn, "margin"))
    np.testing.assert_array_equal(lrn.score(Auto()), lrn.score(Margin()))


def test_auto_switches_during_a_run_and_queries_like_the_strategy_it_names():
    X, y = blobs()
    lrn = learner(X, seed=4)
    seen = []
    for _ in range(20):
        plain = resolve(lrn, "auto")
        i = query_one(lrn, "auto", np.random.default_rng(len(lrn.labels)))
        assert i == query_one(lrn, plain, np.random.default_rng(len(lrn.labels)))
        seen.append(plain)
        lrn.add(i, int(y[i]))
    assert seen[0] == "arls" and seen[-1] == "margin"
    assert seen == sorted(seen)  # arls < margin: one switch, never back while labels only grow


def test_auto_query_is_a_function_of_the_stored_labels():
    """Replay: a learner rebuilt from the same labels asks the same point, cold and warm."""
    X, y = blobs()
    a = learner(X, seed=7)
    order = []
    for _ in range(14):
        i = query_one(a, "auto")
        a.add(i, int(y[i]))
        order.append(i)
        b = learner(X, seed=7)  # a reopened session: the labels replayed one by one
        for j in order:
            query_one(b, "auto")  # the replay draws the same tie-breaking numbers
            b.add(j, int(y[j]))
        assert auto_decision(b) == auto_decision(a)
        assert query_one(b, "auto") == query_one(a, "auto")


def test_auto_is_the_default_of_new_sessions_and_simulate():
    import inspect

    from labeler.experiments.simulate import simulate
    assert DEFAULTS["strategy"] == "auto"
    assert SessionConfig(dataset="moons").strategy == "auto"
    assert inspect.signature(simulate).parameters["strategy"].default == "auto"


def test_reopened_session_asks_the_same_point_and_explains_auto(tmp_path):
    store = tmp_path / "labels.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": 80}, seed=3))
    assert s.config.strategy == "auto"
    reasons = []
    for _ in range(MAX_RISK_LABELS + 2):
        q = s.next_query()
        why = explain(s, q)
        reasons.append((why.answered_by, why.reasons[0]))
        assert s.label(q, str(s.dataset.y[q]), expected_query=q)
    assert reasons[0][0] == "arls" and "expected risk (ARLS) answered" in reasons[0][1]
    assert reasons[-1][0] == "margin" and "margin answered" in reasons[-1][1]
    nxt = s.next_query()
    again = LabelingSession.open(store, s.id)
    assert again.next_query() == nxt
    assert explain(again, nxt).reasons == explain(s, nxt).reasons


def test_explanation_says_which_rule_answered():
    from labeler.session.explain import auto_reason
    text = auto_reason(decide([1] * 10), list("abcdefghij"))
    assert text.startswith("Auto strategy: margin answered, because 10 labels are stored, at least 10")
    cold = auto_reason(decide([2, 0, 1]), ["x", "y", "z"])
    assert cold.startswith("Auto strategy: expected risk (ARLS) answered, because 3 labels are stored, "
                           "fewer than 10;")
    both = auto_reason(decide([2, 0, 1], min_labels=3), ["x", "y", "z"])
    assert "fewer than 10 and class 'y' has 0 labels, fewer than 3" in both
    covered = auto_reason(decide([3, 4], min_labels=3), ["x", "y"])
    assert "margin answered, because every class has at least 3 labels (the fewest: 3, class 'x')" in covered
    only_cov = auto_reason(decide([2, 4], min_labels=3, max_labels=None), ["x", "y"])
    assert "because class 'x' has 2 labels, fewer than 3;" in only_cov
    one = auto_reason(decide([1, 0], min_labels=3), ["x", "y"])
    assert "because 1 label is stored, fewer than 10 and class 'y' has 0 labels" in one
    assert "(s)" not in one + cold + both + only_cov
