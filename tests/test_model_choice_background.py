"""The model choice's evaluations off the key press's request (labeler/session/choice_job.py): with
the background on, a due evaluation runs in a worker on its own learners, its switch applies at the
next label as the same ``setting`` event, a reopen replays it, and a stale result is discarded."""

from __future__ import annotations

import time

import numpy as np
import pytest

from core.graph.active import GraphLearner
from core.learner import ActiveRLS
from core.selection import Decision, SwitchRule, selector
from labeler.session import LabelingSession, SessionConfig

N = 120


@pytest.fixture(autouse=True)
def _rls_answers_first(monkeypatch):
    """These tests follow the switches from RLS: the first model is RLS here, not the pool's
    choice (tests/test_first_model_session.py tests that one)."""
    monkeypatch.setattr(selector, "FIRST_MODEL", "rls")


class ForcedRule(SwitchRule):
    """The rule, except that at ``at`` labels it switches to ``to`` (the data decide elsewhere)."""

    def __init__(self, at: int, to: str):
        super().__init__()
        self.at, self.to = at, to

    def decide(self, incumbent, losses, weights, n_switches=0):
        d = super().decide(incumbent, losses, weights, n_switches)
        n = len(weights)
        if n == self.at and incumbent != self.to:
            return Decision(self.to, True, d.errors, self.to, 0.01, n, f"{self.to} forced at {n} labels")
        return Decision(incumbent, False, d.errors, d.challenger, 1.0, n, "kept")


def _session(path, at=None, to="harmonic"):
    s = LabelingSession.create(path, SessionConfig(dataset="moons", dataset_options={"n": N}, model="auto"))
    s.retune_in_background(True)
    if at is not None:
        s.model_choice.rule = ForcedRule(at, to)
    return s


def _truth(s, i):
    return str(s.dataset.y[i]) if str(s.dataset.y[i]) in s.classes else s.classes[int(s.dataset.y[i])]


def _label(s, k, wait=True):
    for _ in range(k):
        i = s.next_query()
        s.label(i, _truth(s, i))
        if wait:
            assert s.model_choice.wait(60)


def _model_events(s):
    return [ev.value for ev in s._store.events(s.id) if ev.kind == "setting" and ev.value.get("name") == "model"]


def test_switch_applies_at_the_next_label_and_replays(tmp_path):
    store = tmp_path / "s.sqlite"
    s = _session(store, at=8)
    _label(s, 8)  # the evaluation at 8 labels ran in the worker; nothing applied yet
    assert s.model_choice.pending and s.config.model == "rls" and not _model_events(s)
    live = s.learner
    _label(s, 1)  # taken at the 9th label
    assert s.config.model == "harmonic" and isinstance(s.learner, GraphLearner)
    assert live is not s.learner
    (ev,) = _model_events(s)
    assert ev["value"] == "harmonic" and ev["auto"] and ev["from"] == "rls" and ev["background"]
    assert ev["n_labels"] == 8 and ev["effective_labels"] == 9
    assert set(ev["errors"]) >= {"rls", "harmonic", "lgc"}
    assert s.learner.labels == {i: r.label for i, r in s._log.labels.items()}
    fresh = s._build_learner()  # the worker's learner, caught up, equals a fit on the labels
    np.testing.assert_allclose(s.learner.decision_values, fresh.decision_values, atol=1e-8)
    _label(s, 3)  # more evaluations (kept: the forced rule switches only at 8)
    assert s.config.model == "harmonic" and len(_model_events(s)) == 1
    s.model_choice.wait(60)
    predictions, query, sid = s.predictions(), s.next_query(), s.id
    values = s.learner.decision_values.copy()
    s.close()

    t = LabelingSession.open(store, sid)
    assert t.config.model == "harmonic" and t.model_choice.switches() == [("rls", "harmonic", 8)]
    again = t.predictions()  # the predicted classes exactly, the confidences to rounding
    assert list(again.columns) == list(predictions.columns)
    np.testing.assert_array_equal(again.iloc[:, 1].to_numpy(), predictions.iloc[:, 1].to_numpy())
    np.testing.assert_allclose(again.iloc[:, 2].to_numpy(float), predictions.iloc[:, 2].to_numpy(float), atol=1e-8)
    np.testing.assert_allclose(t.learner.decision_values, values, atol=1e-8)
    assert t.next_query() == query
    t.close()


def test_worker_never_touches_the_live_learner(tmp_path):
    s = _session(tmp_path / "s.sqlite")
    _label(s, 5)
    live, labels, values = s.learner, dict(s.learner.labels), s.learner.decision_values.copy()
    i = s.next_query()
    s.label(i, _truth(s, i))  # starts an evaluation
    assert s.model_choice.pending
    labels[i] = _truth(s, i)
    values = s.learner.decision_values.copy()
    job = s.model_choice._job
    assert s.model_choice.wait(60) and job.error is None and job.decision is not None
    assert s.learner is live and live.labels == labels
    np.testing.assert_array_equal(live.decision_values, values)
    assert all(learner is not live for _, learner in job.pool.values())
    s.close()


def test_undo_while_pending_discards_the_stale_result(tmp_path):
    s = _session(tmp_path / "s.sqlite", at=8)
    _label(s, 7)
    _label(s, 1, wait=False)  # the evaluation at 8 labels (it switches) is under way
    stale = s.model_choice._job
    assert stale is not None and stale.wait(60) and stale.decision.model == "harmonic"
    assert s.model_choice_summary()["n_labels"] == 8  # the finished result, shown before it is taken
    s.undo()  # 7 labels: the job's labels are no longer those of the session
    assert stale.cancelled and "discarded" in s.model_choice.note
    assert s.model_choice_summary()["n_labels"] != 8
    assert s.config.model == "rls" and not _model_events(s)
    assert s.model_choice._job is not stale  # run again on the 7 labels
    assert s.model_choice.wait(60)
    _label(s, 1)  # 8 labels again: the 7-label result (kept) is taken, the 8-label one starts
    assert s.config.model == "rls" and not _model_events(s)
    _label(s, 1)
    (ev,) = _model_events(s)
    assert (ev["value"], ev["n_labels"], ev["effective_labels"]) == ("harmonic", 8, 9)
    assert s.learner.labels == {i: r.label for i, r in s._log.labels.items()}
    s.close()


def test_in_step_by_default(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": N},
                                                                      model="auto"))
    s.model_choice.rule = ForcedRule(6, "harmonic")
    _label(s, 6, wait=False)
    assert not s.model_choice.pending and s.config.model == "harmonic"
    assert _model_events(s)[0]["n_labels"] == 6 and "background" not in _model_events(s)[0]
    s.close()


class GatedRule(SwitchRule):
    """The rule, held in the worker until the gate opens (a slow evaluation, on demand)."""

    def __init__(self):
        super().__init__()
        import threading
        self.gate = threading.Event()

    def decide(self, incumbent, losses, weights, n_switches=0):
        assert self.gate.wait(60)
        return super().decide(incumbent, losses, weights, n_switches)


def test_one_job_at_a_time_and_a_due_one_starts_when_it_is_done(tmp_path):
    s = _session(tmp_path / "s.sqlite")
    rule = s.model_choice.rule = GatedRule()
    _label(s, 3, wait=False)  # the evaluation at 2 labels holds; 3 waits for it
    first = s.model_choice._job
    assert first is not None and len(first.snapshot.labels) == 2 and not first.done()
    _label(s, 2, wait=False)
    assert s.model_choice._job is first and s.model_choice._due_while_busy
    rule.gate.set()
    assert first.wait(60)
    # taken as soon as it is done, and the one due meanwhile starts on the labels now (5), not
    # at the next label
    deadline = time.monotonic() + 60
    while s.model_choice._job is first and time.monotonic() < deadline:
        time.sleep(0.05)
    second = s.model_choice._job
    assert second is not None and second is not first and len(second.snapshot.labels) == 5
    assert s.model_choice._last[1] is first.decision and not s.model_choice._due_while_busy
    assert len(s.labels) == 5  # no label was needed to start it
    s.close()  # cancels the job: nothing is applied after
    assert second.cancelled


def test_undo_below_a_background_switch_gives_the_old_model_back(tmp_path):
    s = _session(tmp_path / "s.sqlite", at=8)
    _label(s, 9)
    assert s.config.model == "harmonic"
    s.undo()  # 8 labels: those that chose harmonic are all there
    assert s.config.model == "harmonic"
    s.model_choice.wait(60)
    s.undo()  # 7
    assert s.config.model == "rls" and isinstance(s.learner, ActiveRLS)
    back = _model_events(s)[-1]
    assert back["value"] == "rls" and back["restored"] and back["n_labels"] == 7
    assert s.learner.labels == {i: r.label for i, r in s._log.labels.items()}
    np.testing.assert_allclose(s.learner.decision_values, s._build_learner().decision_values, atol=1e-8)
    s.close()
