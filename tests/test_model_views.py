"""Views a user needs to trust the model: honest confidence bins (counts, Wilson intervals,
the risk of a bulk accept), the explanation of a query, and their page adapters."""

from __future__ import annotations

import numpy as np
import pytest

from core.confidence import confidence_bins, wilson_interval
from labeler.session import LabelingSession, SessionConfig
from labeler.ui import charts


def _wilson_by_inversion(k, n, z=1.959963984540054):
    """Oracle: the Wilson interval is the set of p with |k/n - p| <= z sqrt(p (1 - p) / n),
    found by bisection on each side of k/n."""
    if n == 0:
        return 0.0, 1.0
    phat = k / n

    def inside(p):
        return abs(phat - p) <= z * np.sqrt(p * (1 - p) / n) + 1e-15

    def edge(lo, hi):  # inside(lo) != inside(hi)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if inside(mid) == inside(lo):
                lo = mid
            else:
                hi = mid
        return 0.5 * (lo + hi)

    lower = 0.0 if inside(0.0) else edge(0.0, phat)
    upper = 1.0 if inside(1.0) else edge(1.0, phat)
    return lower, upper


@pytest.mark.parametrize("k, n", [(6, 6), (0, 6), (3, 10), (38, 40), (1, 1), (0, 0), (500, 1000)])
def test_wilson_interval_against_inverting_the_score_test(k, n):
    lo, hi = wilson_interval(np.array([k]), np.array([n]))
    want = _wilson_by_inversion(k, n)
    assert lo[0] == pytest.approx(want[0], abs=1e-9) and hi[0] == pytest.approx(want[1], abs=1e-9)


def test_wilson_interval_refuses_bad_counts():
    for k, n, level in (([3], [2], 0.95), ([-1], [2], 0.95), ([1], [2], 1.0)):
        with pytest.raises(ValueError):
            wilson_interval(k, n, level)


def test_confidence_bins_carry_counts_hits_and_intervals():
    conf = np.array([0.95, 0.96, 0.97, 0.98, 0.99, 1.0, 0.55])
    correct = np.array([1, 1, 1, 1, 1, 1, 0], dtype=bool)
    bins = confidence_bins(conf, correct, n_bins=10)
    assert bins.counts[9] == 6 and bins.correct[9] == 6 and bins.accuracy[9] == 1.0
    assert bins.lower[9] == pytest.approx(0.6097, abs=1e-4) and bins.upper[9] == 1.0
    assert (bins.lower[0], bins.upper[0]) == (0.0, 1.0)  # an empty bin: nothing known


@pytest.fixture
def labelled(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 200}, seed=4,
                                                                  strategy="arls"))
    y = np.asarray(s.dataset.y).astype(str)
    for _ in range(14):
        q = s.next_query()
        s.label(q, y[q], expected_query=q)
    return s


def test_bulk_accept_risk_states_the_expected_wrong_labels_from_the_interval(labelled):
    s = labelled
    bins = s.confidence_bins(n_bins=10)
    b = int(np.argmax(bins.counts))  # the bin with the most labelled points
    lo, hi = bins.edges[b], bins.edges[b + 1] if b < 9 else np.nextafter(1.0, 2.0)
    risk = s.bulk_accept_risk(lo, hi)
    n = risk["n"]
    assert n == s.points_in_bin(lo, hi).size and risk["labelled"] == bins.counts[b]
    assert risk["lower"] == bins.lower[b] and risk["upper"] == bins.upper[b]
    assert risk["wrong_low"] == pytest.approx(n * (1 - bins.upper[b]))
    assert risk["wrong_high"] == pytest.approx(n * (1 - bins.lower[b]))
    assert risk["uncertain"] == (bins.lower[b] < 0.95)
    text = charts.accept_warning(risk)
    assert f"up to {risk['wrong_high']:.0f} of these {n:,} labels" in text
    assert f"{risk['labelled']} labelled point(s)" in text


def test_issue_case_six_right_of_six_is_uncertain(labelled, monkeypatch):
    """The bin of the issue: 6 labelled points all right is 100 % with a 61-100 % interval, so
    accepting its 46 points asks first and says up to 18 may be wrong."""
    s = labelled
    conf = np.array([0.95] * 6)
    monkeypatch.setattr(type(s.views), "_loo_correct", lambda self: (np.ones(6, dtype=bool), conf))
    monkeypatch.setattr(type(s.views), "points_in_bin", lambda self, lo, hi: np.arange(46))
    risk = s.bulk_accept_risk(0.9, 1.0)
    assert risk["uncertain"] and risk["n"] == 46 and risk["accuracy"] == 1.0
    assert round(risk["wrong_high"]) == 18 and risk["expected_wrong"] == 0.0
    assert "Expect about 0, up to 18 of these 46 labels to be wrong" in charts.accept_warning(risk)


def test_explain_query_names_the_expected_risk_and_the_alternatives(labelled):
    s = labelled
    q = s.next_query()
    why = s.explain_query()
    assert why.index == q and why.strategy == "arls"
    E = s.expected_risk()
    assert why.expected_risk == E[q] and why.risk_now == pytest.approx(s.learner.estimated_risk())
    free = np.setdiff1d(np.flatnonzero(np.isfinite(E)), [q])
    best_others = free[np.argsort(E[free], kind="stable")[:3]]
    assert [i for i, _ in why.alternatives] == best_others.tolist()
    assert all(why.expected_risk <= e for _, e in why.alternatives)
    assert why.reasons[0].startswith("Of all unlabelled points, its label is expected to leave the least risk")
    # margin share against a loop over the unlabelled points
    f = np.abs(np.asarray(s.learner.decision_values)[:, 0])
    unl = [i for i in range(s.n_samples) if i not in s.labels]
    assert why.margin == f[q] and why.margin_share == pytest.approx(np.mean(f[unl] <= f[q]))
    assert why.near_boundary == (why.margin_share <= 0.2)
    assert any("decision boundary" in r for r in why.reasons) == why.near_boundary


def test_explain_other_strategies_and_a_chosen_point(labelled):
    s = labelled
    s.set_strategy("margin")
    why = s.explain_query()
    assert "margin strategy" in why.reasons[0] and np.isnan(why.expected_risk)
    s.set_strategy("arls")
    other = [i for i in range(s.n_samples) if i not in s.labels and i != s.next_query()][0]
    assert s.explain_query(other).reasons[0].startswith("Its label is expected to leave a risk of")


def test_page_adapters_say_what_is_in_use(labelled):
    s = labelled
    text = charts.tuning_caption(s.tuning_status())
    assert f"width **{s.config.width:.4g}** (auto)" in text and "λ **0.1** (auto)" in text
    s.set_lam(0.2)
    assert "λ **0.2** (fixed)" in charts.tuning_caption(s.tuning_status())
    curves = charts.loo_arrays(s.loo_curve())
    grid, errors, in_use, _ = curves["width"]
    assert in_use == s.config.width and in_use in grid and np.all((errors >= 0) & (errors <= 1))
    grid, errors, in_use, chosen = curves["lam"]
    assert in_use == 0.2 and 0.2 in grid
    lo, hi, acc, counts, lower, upper = charts.bin_arrays(s.confidence_bins())
    assert counts.sum() == s.n_labeled and np.all(lower <= upper)
