"""A session with model "auto" (issue 20 §2, labeler/session/model_selection.py): a switch is one
setting event, the warm candidate becomes the session's learner, a reopen replays the stored
model, an undo below the switch's label count gives the old model back, and the app's sentence."""

from __future__ import annotations

import numpy as np
import pytest

from core.graph.active import GraphLearner
from core.learner import ActiveRLS
from core.selection import Decision, selector
from labeler.session import LabelingSession, SessionConfig
from labeler.session.model_selection import ModelChoice

N = 120


@pytest.fixture(autouse=True)
def _rls_answers_first(monkeypatch):
    """These tests follow the switches from RLS: the first model is RLS here, not the pool's
    choice (tests/test_first_model_session.py tests that one)."""
    monkeypatch.setattr(selector, "FIRST_MODEL", "rls")


def _config(**kw) -> SessionConfig:
    return SessionConfig(dataset="moons", dataset_options={"n": N}, model="auto", **kw)


def _label(s, k):
    y = s.dataset.y
    for _ in range(k):
        i = s.next_query()
        s.label(i, s.classes[list(s.dataset.classes).index(y[i])] if y[i] in list(s.dataset.classes) else str(y[i]))


def _model_events(s):
    return [ev.value for ev in s._store.events(s.id) if ev.kind == "setting" and ev.value.get("name") == "model"]


def _force(monkeypatch, at: int, to: str):
    real = ModelChoice.evaluate

    def evaluate(self):
        d = real(self)
        if len(self._log.labels) == at:
            return Decision(to, True, d.errors, to, 0.01, at, f"{to} forced at {at} labels")
        return Decision(self.model, False, d.errors, d.challenger, 1.0, d.n_labels, "kept")

    monkeypatch.setattr(ModelChoice, "evaluate", evaluate)


def test_auto_starts_on_rls_and_says_why(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", _config())
    assert (s.config.model, s.config.model_choice) == ("rls", "auto")
    assert isinstance(s.learner, ActiveRLS)
    assert "once labels arrive" in s.model_choice_summary()["text"]
    _label(s, 6)
    text = s.model_choice_summary()["text"]
    assert text.startswith("Model: RLS — kept by leave-one-out: ") and text.endswith(" on 6 labels")
    assert " vs " in text
    assert s.model_summary()["why"].startswith("kept by leave-one-out: ")
    # the rule's reason follows after "; " (it has parentheses of its own: none nested)
    assert s.model_summary()["why"].endswith(" on 6 labels; waiting for 10 labels (6 so far)")
    s.close()


def test_fixed_sessions_have_no_model_choice(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": N}))
    assert s.config.model_choice == "fixed" and s.model_choice_summary() is None
    _label(s, 12)
    assert not _model_events(s)
    s.close()


def test_switch_is_one_setting_event_replayed_on_open_and_undone(tmp_path, monkeypatch):
    _force(monkeypatch, 12, "harmonic")
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, _config())
    _label(s, 11)
    assert s.config.model == "rls" and not _model_events(s)
    _label(s, 1)
    assert s.config.model == "harmonic" and isinstance(s.learner, GraphLearner)
    (ev,) = _model_events(s)
    assert ev["value"] == "harmonic" and ev["auto"] and ev["from"] == "rls" and ev["n_labels"] == 12
    assert set(ev["errors"]) >= {"rls", "harmonic", "lgc"}
    assert s.learner.labels == {i: r.label for i, r in s._log.labels.items()}
    fresh = s._build_learner()  # the warm candidate equals a fit on the labels
    np.testing.assert_allclose(s.learner.decision_values, fresh.decision_values, atol=1e-8)
    _label(s, 1)
    values, sid, query = s.learner.decision_values, s.id, s.next_query()
    s.close()

    t = LabelingSession.open(store, sid)
    assert t.config.model == "harmonic" and isinstance(t.learner, GraphLearner)
    np.testing.assert_allclose(t.learner.decision_values, values, atol=1e-8)
    assert t.next_query() == query
    t.undo()  # 12 labels: the switch's labels are all there
    assert t.config.model == "harmonic"
    t.undo()  # 11: the label that chose harmonic is gone, RLS answers again
    assert t.config.model == "rls" and isinstance(t.learner, ActiveRLS)
    back = _model_events(t)[-1]
    assert back["value"] == "rls" and back["restored"] and back["auto"]
    np.testing.assert_allclose(t.learner.decision_values, t._build_learner().decision_values, atol=1e-8)
    t.close()

    u = LabelingSession.open(store, sid)
    assert u.config.model == "rls" and u.model_choice.switches() == []
    u.close()


def test_model_setting_is_checked():
    from labeler.session.config import check_setting
    assert check_setting("model", "lgc", "rbf", ["a", "b"]) == "lgc"
    with pytest.raises(ValueError, match="model"):
        check_setting("model", "svm", "rbf", ["a", "b"])


def test_large_pools_keep_rls_and_say_why(tmp_path, monkeypatch):
    from labeler.session import model_selection
    monkeypatch.setattr(model_selection, "AUTO_MAX_POINTS", 100)
    s = LabelingSession.create(tmp_path / "s.sqlite", _config())
    _label(s, 12)
    assert s.config.model == "rls" and not _model_events(s)
    assert "off above 100 points" in s.model_choice_summary()["text"]
    s.close()


def test_the_model_line_says_weighted_and_which_label_an_older_evaluation_is_from(tmp_path):
    import dataclasses

    from labeler.ui.charts import stopping_loo_row

    s = LabelingSession.create(tmp_path / "s.sqlite", _config())
    _label(s, 6)
    text = s.model_choice_summary()["text"]
    assert "leave-one-out: weighted error " in text and text.endswith(" on 6 labels")
    version, decision = s.model_choice._last  # the evaluation shown is from an earlier label
    s.model_choice._last = (version, dataclasses.replace(decision, n_labels=5))
    text = s.model_choice_summary()["text"]
    assert " as of label 5 (you have 6" in text and " on 5 labels" not in text
    sig = s.stopping_signal()
    row = stopping_loo_row(sig)  # the stopping panel's plain error says it is not weighted
    assert row.startswith(f"Unweighted LOO error of your {sig.loo_n} labels") and sig.loo_n == 6
    s.close()


def test_labels_of_one_class_give_no_comparison_but_what_the_loo_panel_says(tmp_path):
    """Every candidate's LOO error is 0 % on labels of one class: the header (and the sidebar's
    "Why:") says leave-one-out needs two classes, as the LOO panel does, not "0% vs harmonic 0%";
    an evaluation from an earlier label of one class says so too."""
    import dataclasses

    s = LabelingSession.create(tmp_path / "s.sqlite", _config())
    first, other = s.classes[0], s.classes[1]
    for _ in range(3):
        s.label(s.next_query(), first)
    text = s.model_choice_summary()["text"]
    assert text == "Model: RLS — leave-one-out needs labels of at least 2 classes; there are 3 labels of 1 class"
    assert "%" not in text and " vs " not in text
    assert s.model_summary()["why"] == "leave-one-out needs labels of at least 2 classes; there are 3 labels of 1 class"
    with pytest.raises(ValueError, match=r"at least 2 classes; there are 3 of 1 class\. Label"):
        s.loo_curve()  # the LOO panel's words
    s.label(s.next_query(), other)
    text = s.model_choice_summary()["text"]
    assert " vs " in text and text.endswith(" on 4 labels")
    version, decision = s.model_choice._last  # an evaluation from label 3: one class then
    s.model_choice._last = (version, dataclasses.replace(decision, n_labels=3))
    assert "needs labels of at least 2 classes; there are 3 labels" in s.model_choice_summary()["text"]
    s.close()
