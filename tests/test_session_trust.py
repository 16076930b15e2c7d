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


def test_the_pool_error_waits_for_labels_of_two_classes(tmp_path):
    """Labels of one class only (a lasso over one cluster of a large pool): every prediction is
    that class and every LOO prediction right, so the calibrated estimate said "0.0 %" while most
    of the pool was of other classes. It says what it needs instead, as the LOO panel does, and
    the page's other views still answer; a label of a second class brings the estimate back."""
    from labeler.ui.error_chart import error_rate_caption

    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 200},
                                                                  seed=4))
    y = np.asarray(s.dataset.y).astype(str)
    first = s.classes[0]
    with pytest.raises(ValueError, match=r"needs labels of at least 2 classes; there are 0 labels of 0 classes"):
        s.pool_error_rate()
    ones = [i for i in range(s.n_samples) if y[i] == first]
    s.label_points(ones[:1], first)
    with pytest.raises(ValueError, match=r"there is 1 label of 1 class\. Label a point of another class first"):
        s.pool_error_rate()
    s.label_points(ones[1:40], first)
    for view in (s.pool_error_rate, s.error_rate_trace):
        with pytest.raises(ValueError, match=r"^The error estimate needs labels of at least 2 classes; there are "
                                             r"40 labels of 1 class\."):
            view()
    assert s.predictions()["confidence"].notna().all()  # the rest of the page still answers
    other = next(i for i in range(s.n_samples) if y[i] != first)
    s.label(other, y[other])
    rate = s.pool_error_rate()
    assert 0.0 <= rate["rate"] <= 1.0 and rate["n_loo"] == 41
    assert s.error_rate_trace()["n_labeled"].tolist()[-1] == 41
    assert "LOO error of your 41 labels" in error_rate_caption(rate)
    s.close()


def test_counts_in_the_progress_texts_have_thousands_separators():
    from types import SimpleNamespace

    from labeler.ui.charts import stopping_loo_row
    from labeler.ui.error_chart import error_rate_caption

    rate = {"rate": 0.1, "lower": 0.05, "upper": 0.2, "n": 91_523, "loo_error": 0.0, "n_loo": 8_477}
    assert "your 8,477 labels" in error_rate_caption(rate) and "91,523 unlabelled" in error_rate_caption(rate)
    sig = SimpleNamespace(loo_n=8_477, loo_error=0.0, loo_lower=0.0, loo_upper=0.01)
    assert "your 8,477 labels" in stopping_loo_row(sig)
