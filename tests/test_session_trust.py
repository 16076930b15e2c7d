"""A session's calibrated confidence, pool error rate and suspect labels (issue 21)."""

from __future__ import annotations

import numpy as np
import pytest

from core.calibration import fit_calibration
from core.confidence import soft_confidence
from labeler.session import LabelingSession, SessionConfig


@pytest.fixture
def labelled(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 200},
                                                                  seed=4, strategy="arls"))
    y = np.asarray(s.dataset.y).astype(str)
    for _ in range(14):
        q = s.next_query()
        s.label(q, y[q], expected_query=q)
    return s


def test_confidence_shown_and_exported_is_the_calibrated_one(labelled):
    s = labelled
    F = np.asarray(s.learner.decision_values)
    cal = s.calibration()
    order = list(s.learner.labels)
    codes = [s.learner.classes.index(s.labels[i]) for i in order]
    assert cal.slope == pytest.approx(fit_calibration(s.learner.loo_decision_values(), codes).slope)
    _, want = cal.confidence(F)
    assert np.allclose(s.predictions()["confidence"].to_numpy(float), want)
    assert not np.allclose(want, soft_confidence(F)[1])
    table = s.export_table(include_predictions=True)
    assert np.allclose(table["confidence"].to_numpy(float), want)


def test_accepted_predictions_do_not_calibrate(labelled):
    s = labelled
    before = s.calibration().slope
    free = [i for i in range(s.n_samples) if i not in s.labels][:5]
    s.accept_predictions(free)
    # the accepted labels change the model, but they do not enter the fit's weights
    idx, y, F, keep = s.views._loo_rows()
    assert keep.sum() == 14 and (~keep).sum() == 5
    codes = np.array([s.learner.classes.index(v) for v in y])
    assert s.calibration().slope == pytest.approx(fit_calibration(F, codes, weights=keep.astype(float)).slope)
    assert before > 0


def test_pool_error_rate_is_the_mean_calibrated_doubt_of_the_unlabelled(labelled):
    s = labelled
    pe = s.pool_error_rate()
    pred = s.predictions()
    pool = pred["label"].isna().to_numpy()
    assert pe["n"] == pool.sum()
    assert pe["rate"] == pytest.approx(float(np.mean(1 - pred["confidence"].to_numpy(float)[pool])))
    assert pe["lower"] <= pe["rate"] <= pe["upper"]
    correct, _ = s.views._loo_correct()
    assert pe["loo_error"] == pytest.approx(1 - correct.mean()) and pe["n_loo"] == 14


def test_suspects_rank_a_flipped_label_first_and_match_refits(labelled):
    s = labelled
    y = np.asarray(s.dataset.y).astype(str)
    # flip the label whose LOO prediction is the most confident right one: its own LOO value
    # does not depend on its label, so the flip makes it the most suspect
    before = s.suspects()
    j = int(before.iloc[-1]["index"])
    assert before.iloc[-1]["suggested"] == y[j]
    other = [c for c in s.classes if c != y[j]][0]
    s.relabel(j, other)
    table = s.suspects()
    assert list(table.columns) == ["index", "id", "label", "suggested", "score", "source", "kept", "rank"]
    assert table["rank"].tolist() == list(range(1, len(table) + 1))
    assert np.all(np.diff(table["score"].to_numpy()) <= 0)
    # its neighbours' LOO predictions now lean towards the wrong label too: the flip is among the
    # first two
    row = table[table["index"] == j].iloc[0]
    assert row["rank"] <= 2 and row["label"] == other and row["suggested"] == y[j]
    assert row["score"] > 0.5


def test_error_rate_trace_marks_a_width_change_and_draws(labelled):
    from labeler.ui.error_chart import error_rate_caption, error_rate_figure

    s = labelled
    y = np.asarray(s.dataset.y).astype(str)
    first = s.error_rate_trace()
    assert first["n_labeled"].tolist() == [14] and not first["model_changed"].any()
    s.set_width(0.9 * s.config.width)
    q = s.next_query()
    s.label(q, y[q], expected_query=q)
    trace = s.error_rate_trace()
    assert trace["n_labeled"].tolist() == [14, 15]
    assert trace["model_changed"].tolist() == [False, True]
    assert (trace["lower"] <= trace["rate"]).all() and (trace["rate"] <= trace["upper"]).all()
    fig = error_rate_figure(trace)
    names = [t.name for t in fig.data]
    assert "pool (estimated)" in names and "labels (LOO)" in names
    assert np.allclose(fig.data[1].y, 100 * trace["rate"].to_numpy())
    assert len(fig.layout.shapes) == 1 and fig.layout.shapes[0].x0 == 15
    text = error_rate_caption(s.pool_error_rate())
    assert "%" in text and "LOO error of your 15 labels" in text


def test_with_more_than_two_classes_the_fit_weights_labels_by_the_pool_margins(tmp_path):
    import pandas as pd

    rng = np.random.default_rng(2)
    centres = np.array([[0, 0], [4, 0], [0, 4]])
    y = np.repeat(["a", "b", "c"], 50)
    X = centres[np.repeat([0, 1, 2], 50)] + rng.normal(size=(150, 2))
    pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "label": y}).to_csv(tmp_path / "t.csv", index=False)
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset=str(tmp_path / "t.csv"), seed=1,
                                                                  strategy="arls", initial_labels=0))
    truth = np.asarray(s.dataset.y).astype(str)
    for _ in range(12):
        q = s.next_query()
        s.label(q, truth[q], expected_query=q)
    idx, yy, F, keep = s.views._loo_rows()
    codes = np.array([s.learner.classes.index(v) for v in yy])
    pool = np.asarray(s.learner.decision_values)[[i for i in range(s.n_samples) if i not in s.labels]]
    want = fit_calibration(F, codes, weights=keep.astype(float), F_pool=pool)
    assert s.calibration().slope == pytest.approx(want.slope)
    assert want.slope != pytest.approx(fit_calibration(F, codes, weights=keep.astype(float)).slope)
