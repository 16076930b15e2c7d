"""The RLS candidate of model "auto" depends only on the session's RLS settings, the count RLS
last stopped answering at, and the labels (labeler/session/rls_candidate.py): a switch to RLS
whose write fails, a switch undone, or a class added while the candidate is a labelled block
leave a live session that a reopened one agrees with."""

from __future__ import annotations

import numpy as np
import pytest

from core.learner import ActiveRLS
from labeler import data
from labeler.session import LabelingSession, SessionConfig, model
from labeler.session.rls_candidate import CandidateTuning, build_candidate, tune_flags
from labeler.store import StoreWriteError

from test_model_choice_candidate_retune import N, ForcedRule, RecordingRule, _candidate, _label_from


class SwitchFromRule(ForcedRule):
    """The rule, except that from ``at`` labels on it switches to ``to`` (a background evaluation
    may run at another count than the one it came due at)."""

    def decide(self, incumbent, losses, weights, n_switches=0):
        if len(weights) >= self.at and incumbent != self.to:
            self.at = len(weights)
        return super().decide(incumbent, losses, weights, n_switches)


def _moons_setup(n_labels=30):
    ds = data.load_dataset("moons", seed=0, n=200)
    X = np.asarray(ds.X, dtype=np.float64)
    classes = [str(c) for c in sorted(set(ds.y))]
    base = model.RlsSpec(kernel="rbf", width=2.0, lam=0.1, seed=0)
    flags = tune_flags({"width": True, "lam": True}, base)
    order = np.random.default_rng(2).permutation(len(ds.y))
    labels = [(int(i), str(ds.y[i])) for i in order[:n_labels]]
    return X, classes, base, flags, labels


def test_a_learner_followed_afresh_is_retuned_from_start_as_a_fresh_one():
    """A learner that already holds labels (followed by another CandidateTuning: a job's, or one
    handed back) ends with the settings of a fresh learner given the same labels."""
    X, classes, base, flags, labels = _moons_setup()
    first = CandidateTuning(X)
    learner = build_candidate(base, X, classes)
    first.bring(learner, base, 0, flags, classes, labels[:20])
    other = CandidateTuning(X)
    refollowed = other.bring(learner, base, 0, flags, classes, labels[:24])
    fresh_learner = build_candidate(base, X, classes)
    fresh = CandidateTuning(X).bring(fresh_learner, base, 0, flags, classes, labels[:24])
    assert refollowed == fresh
    assert learner.labels == fresh_learner.labels
    np.testing.assert_allclose(learner.loo_decision_values(), fresh_learner.loo_decision_values(),
                               rtol=0, atol=1e-9)


def _failing_settings(s):
    real = s._store.append

    def failing(sid, rows, after=None):
        if any(getattr(r, "kind", None) == "setting" for r in rows):
            raise StoreWriteError("disk full (test)")
        return real(sid, rows, after=after)

    return real, failing


def test_a_failed_switch_to_rls_leaves_the_candidate_a_reopen_recomputes(tmp_path):
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": N}, model="auto"))
    assert s.config.model == "harmonic"
    s.model_choice.rule = ForcedRule(14, "rls")
    order = np.random.default_rng(0).permutation(N)
    _label_from(s, order, 13)
    real, failing = _failing_settings(s)
    s._store.append = failing
    _label_from(s, order, 1)  # the switch to RLS at 14 labels is not written
    s._store.append = real
    assert s.config.model == "harmonic" and "not applied" in s.model_choice.note
    assert s.model_choice.rls_since() == 0  # RLS never answered
    s.model_choice.rule = ForcedRule(10**6, "rls")
    _label_from(s, order, 16)
    live = s.model_choice.candidate_spec("rls")
    sid = s.id
    s.close()
    t = LabelingSession.open(store, sid)
    t.model_choice.rule = ForcedRule(10**6, "rls")
    t.model_choice.evaluate()
    assert t.model_choice.rls_since() == 0
    assert t.model_choice.candidate_spec("rls") == live
    t.close()


@pytest.mark.parametrize("background", [False, True])
def test_an_undone_switch_to_rls_keeps_its_settings_and_a_reopen_agrees(tmp_path, background):
    """An undo below the count of a switch to RLS gives the graph model back and keeps the width
    and lam RLS answered with (settings are not undone by an undo of labels); RLS stopped
    answering at the restore's count, from which the candidate is re-tuned again, live and after
    a reopen alike."""
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": N}, model="auto"))
    created = (s.config.width, s.config.lam)
    s.retune_in_background(background)
    s.model_choice.rule = ForcedRule(14, "rls")
    order = np.random.default_rng(0).permutation(N)
    _label_from(s, order, 15)
    assert s.config.model == "rls" and (s.config.width, s.config.lam) != created
    switched = (s.config.width, s.config.lam)
    s.model_choice.rule = ForcedRule(10**6, "rls")
    while len(s.labels) >= 14:
        s.undo()
    if background:
        assert s.model_choice.wait(60)
    assert s.config.model == "harmonic" and (s.config.width, s.config.lam) == switched
    assert s.model_choice.rls_since() == 13
    order = np.concatenate([order[:13], order[20:]])  # other labels from the 14th on
    _label_from(s, order, 12)
    if background:
        s.retune_in_background(False)
    rule = s.model_choice.rule = RecordingRule()
    _label_from(s, order, 1)
    live = {"model": s.config.model, "width": s.config.width, "lam": s.config.lam,
            "candidate": s.model_choice.candidate_spec("rls"), "predictions": s.predictions(),
            "decision": rule.seen[-1]}
    assert (live["candidate"].width, live["candidate"].lam) != switched  # re-tuned above 13: the test can tell
    sid = s.id
    s.undo()
    s.close()

    t = LabelingSession.open(store, sid)
    assert (t.config.model, t.config.width, t.config.lam) == (live["model"], live["width"], live["lam"])
    assert t.model_choice.rls_since() == 13
    rule = t.model_choice.rule = RecordingRule()
    _label_from(t, order, 1)
    assert t.model_choice.candidate_spec("rls") == live["candidate"]
    assert rule.seen[-1][:4] == live["decision"][:4]
    np.testing.assert_allclose(list(rule.seen[-1][4].values()), list(live["decision"][4].values()), atol=1e-12)
    np.testing.assert_array_equal(t.predictions().iloc[:, 1].to_numpy(), live["predictions"].iloc[:, 1].to_numpy())
    t.close()


@pytest.mark.parametrize("background", [False, True])
@pytest.mark.parametrize("change", ["add", "rename"])
def test_a_class_change_while_the_candidate_is_a_block_learner_rebuilds_it(tmp_path, background, change):
    """A class added or renamed while a graph model answers: the RLS candidate (a labelled-block
    learner) is rebuilt for the classes now, and the RLS a later switch makes answer equals a
    learner built on the labels at the settings written."""
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": N},
                                                                     model="auto"))
    assert s.config.model == "harmonic"
    s.retune_in_background(background)
    s.model_choice.rule = SwitchFromRule(18, "rls")
    order = np.random.default_rng(0).permutation(N)
    _label_from(s, order, 10)
    before = _candidate(s)
    assert not isinstance(before, ActiveRLS)  # the candidate is its labelled block
    if change == "add":
        s.add_class("third")
    else:
        s.rename_class(s.classes[0], "renamed")
    _label_from(s, order, 2)  # 12 labels: an evaluation is due
    rebuilt = _candidate(s)
    assert rebuilt is not before and rebuilt.classes == list(s.classes) and not isinstance(rebuilt, ActiveRLS)
    _label_from(s, order, 6)  # the switch decided at 18 labels (in the background: at 18 or more)
    while background and s.config.model != "rls" and len(s.labels) < 30:
        _label_from(s, order, 1)  # the background's switch takes effect at the next label
    assert s.config.model == "rls" and isinstance(s.learner, ActiveRLS)
    assert s.learner.classes == list(s.classes)
    fresh = s._build_learner()
    np.testing.assert_allclose(s.learner.decision_values, fresh.decision_values, rtol=0, atol=1e-10)
    np.testing.assert_array_equal(np.asarray(s.learner.predict()), np.asarray(fresh.predict()))
    s.close()
