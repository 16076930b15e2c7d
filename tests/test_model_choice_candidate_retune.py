"""The RLS candidate of an app session with model "auto" is re-tuned while a graph model answers,
as in ``labeler simulate`` (labeler/session/rls_candidate.py): on the same labels the app's
candidate has simulate's width and lam and the app decides as simulate does, in step and in the
background; a switch to RLS writes the width and lam it was re-tuned to in the same action as
the ``model`` event, and a reopen replays that RLS exactly; a session with a fixed width and lam
re-tunes nothing."""

from __future__ import annotations

import numpy as np
import pytest

from core.learner import ActiveRLS
from core.selection import Decision, SwitchRule
from labeler import data
from labeler.experiments import model_select_simulate as simulate_module
from labeler.session import LabelingSession, SessionConfig

N = 300  # two moons: the pool's kNN graph makes the harmonic function answer first
BUDGET = 24  # the candidate's width moves at 7 labels


class RecordingRule(SwitchRule):
    """The switch rule, recording every decision and each candidate's 0/1 LOO losses per label
    (the data decide). (The weighted errors are not compared with simulate's: simulate reads
    "balanced" from its RLS candidate's class weights before the evaluation gives it the new
    labels, the app from the session's weighting.)"""

    def __init__(self):
        super().__init__()
        self.seen = []

    def decide(self, incumbent, losses, weights, n_switches=0):
        d = super().decide(incumbent, losses, weights, n_switches)
        self.seen.append((len(weights), incumbent, d.model, {k: np.asarray(v).tolist() for k, v in losses.items()},
                          {k: float(v) for k, v in d.errors.items()}))
        return d


def _record_loo(monkeypatch):
    """Record every candidate's LOO outputs ``[(n_labels, F)]`` in the order the evaluations ask."""
    from core.selection import selector

    seen = []
    real = selector.loo_losses

    def recorded(learner):
        seen.append((learner.n_labeled, np.asarray(learner.loo_decision_values()).copy()))
        return real(learner)

    monkeypatch.setattr(selector, "loo_losses", recorded)
    return seen


def _same_decisions(app, simulated, app_loo, simulated_loo):
    """The same decisions, the same 0/1 LOO losses, and the same LOO outputs to 1e-9 (the app's
    RLS candidate is its labelled block, simulate's a dense learner: equal to rounding; an output
    within rounding of a tie is a tie in both, core.selection.loo.TIE_TOLERANCE)."""
    assert [d[:4] for d in app] == [d[:4] for d in simulated]
    assert [(n, F.shape) for n, F in app_loo] == [(n, F.shape) for n, F in simulated_loo]
    for (n, F), (_, G) in zip(app_loo, simulated_loo):
        np.testing.assert_allclose(F, G, rtol=0, atol=1e-9, err_msg=f"LOO outputs at {n} labels")


def _simulated(monkeypatch, budget):
    """simulate's run on the moons: its labels, decisions and the RLS candidate's width and lam
    after each evaluation."""
    tuned = {}
    real = simulate_module.rls_candidate

    def recorded(X, classes, chosen, seed):
        learner, retune, spec = real(X, classes, chosen, seed)

        def hook(rls, n_before):
            retune(rls, n_before)
            tuned[rls.n_labeled] = (spec().width, spec().lam)

        return learner, hook, spec

    monkeypatch.setattr(simulate_module, "rls_candidate", recorded)
    rule = RecordingRule()
    loo = _record_loo(monkeypatch)
    frame = simulate_module.simulate_auto_model(data.load_dataset("moons", seed=0, n=N), budget=budget, seed=0,
                                                rule=rule)
    monkeypatch.setattr(simulate_module, "rls_candidate", real)
    return frame, rule.seen, tuned, list(loo)


def _truth(s, i):
    return s.classes[list(s.dataset.classes).index(s.dataset.y[i])]


def _candidate(s):
    """The app's RLS candidate learner (held for in-step evaluations, or the background pool's)."""
    choice = s.model_choice
    learner = choice._held.get("rls")
    if learner is None:
        job = choice._job
        pool = job.pool if job is not None else choice._pool
        learner = pool["rls"][1]
    return learner


@pytest.mark.parametrize("background", [False, True])
def test_the_app_candidate_is_retuned_and_decides_as_simulate(tmp_path, monkeypatch, background):
    frame, decisions, tuned, simulated_loo = _simulated(monkeypatch, BUDGET)
    assert set(frame["model"]) == {"harmonic"}  # the graph model answers throughout
    widths = {w for w, _ in tuned.values()}
    assert len(widths) > 1  # the simulation's candidate moved its width: the test can tell

    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": N},
                                                                     model="auto"))
    assert s.config.model == "harmonic"
    s.retune_in_background(background)
    rule = s.model_choice.rule = RecordingRule()
    app_loo = _record_loo(monkeypatch)
    for i in frame["index"].astype(int):
        s.label(int(i), _truth(s, int(i)))
        if background:
            assert s.model_choice.wait(60)
        n = len(s.labels)
        params = _candidate(s).get_params()
        assert (params["kernel"].width, params["lam"]) == tuned[n], f"after {n} labels"
    assert s.config.model == "harmonic" and s.model_choice.switches() == [("rls", "harmonic", 0)]
    if background:  # the background evaluations start at 2 labels
        decisions = [d for d in decisions if d[0] >= 2]
        simulated_loo = [(n, F) for n, F in simulated_loo if n >= 2]
    _same_decisions(rule.seen, decisions, app_loo, simulated_loo)
    # nothing of the candidate's re-tunes is written while the graph model answers
    assert not [ev for ev in s._store.events(s.id) if ev.kind == "setting" and ev.value.get("name") != "model"]
    s.close()


class ForcedRule(SwitchRule):
    """The rule, except that at ``at`` labels it switches to ``to``."""

    def __init__(self, at: int, to: str):
        super().__init__()
        self.at, self.to = at, to

    def decide(self, incumbent, losses, weights, n_switches=0):
        d = super().decide(incumbent, losses, weights, n_switches)
        if len(weights) == self.at and incumbent != self.to:
            return Decision(self.to, True, d.errors, self.to, 0.01, len(weights), f"{self.to} forced")
        return Decision(incumbent, False, d.errors, d.challenger, 1.0, len(weights), "kept")


def _label_from(s, order, k):
    for i in order[len(s.labels):len(s.labels) + k]:
        s.label(int(i), _truth(s, int(i)))
        if s.model_choice.background:
            assert s.model_choice.wait(60)


def _settings_rows(s):
    return [ev for ev in s._store.events(s.id) if ev.kind == "setting"]


@pytest.mark.parametrize("background", [False, True])
def test_a_switch_to_rls_writes_the_tuned_width_and_lam_and_a_reopen_replays_it(tmp_path, background):
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": N}, model="auto"))
    created = (s.config.width, s.config.lam)
    s.retune_in_background(background)
    s.model_choice.rule = ForcedRule(14, "rls")
    order = np.random.default_rng(0).permutation(N)
    _label_from(s, order, 14)
    if background:  # the switch decided at 14 labels takes effect at the next label
        assert s.config.model == "harmonic"
        _label_from(s, order, 1)
    assert s.config.model == "rls" and isinstance(s.learner, ActiveRLS)
    rows = _settings_rows(s)[1:]  # after the first model's switch at creation
    assert {ev.action for ev in rows} == {rows[0].action}  # one action: the switch and its width / lam
    names = {ev.value["name"]: ev.value for ev in rows}
    assert names["model"]["value"] == "rls"
    assert "width" in names, "the candidate's width moved from the creation's on these labels"
    width = names["width"]["value"]
    lam = names["lam"]["value"] if "lam" in names else created[1]
    assert width != created[0] and (s.config.width, s.config.lam) == (width, lam)
    params = s.learner.get_params()
    assert (params["kernel"].width, params["lam"]) == (width, lam)
    # the RLS that took over equals one built on the labels at the written settings
    fresh = s._build_learner()
    np.testing.assert_allclose(s.learner.decision_values, fresh.decision_values, rtol=0, atol=1e-10)
    _label_from(s, order, 2)  # RLS answers (and re-tunes as a session does)
    live = {"model": s.config.model, "width": s.config.width, "lam": s.config.lam,
            "values": np.asarray(s.learner.decision_values).copy(), "predictions": s.predictions()}
    sid = s.id
    s.close()

    t = LabelingSession.open(store, sid)
    assert (t.config.model, t.config.width, t.config.lam) == (live["model"], live["width"], live["lam"])
    params = t.learner.get_params()
    assert (params["kernel"].width, params["lam"]) == (live["width"], live["lam"])
    again = t.predictions()
    np.testing.assert_array_equal(again.iloc[:, 1].to_numpy(), live["predictions"].iloc[:, 1].to_numpy())
    np.testing.assert_allclose(np.asarray(t.learner.decision_values), live["values"], rtol=0, atol=1e-10)
    t.close()


def test_a_reopened_session_retunes_its_candidate_to_the_live_one(tmp_path):
    """The candidate's re-tunes are not written: a reopened session recomputes them from the
    stored labels (every due count since RLS last answered), to the live session's values, and
    its next evaluation decides alike."""
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": N}, model="auto"))
    order = np.random.default_rng(1).permutation(N)
    _label_from(s, order, 15)
    s.undo()  # an undo drops the re-tunes made on the label taken back
    order = np.concatenate([order[:14], order[15:]])  # another 15th label
    _label_from(s, order, 1)
    sid = s.id
    s.model_choice.rule = rule = RecordingRule()
    _label_from(s, order, 1)
    live_spec, live_decision = s.model_choice.candidate_spec("rls"), rule.seen[-1]
    s.undo()
    s.close()

    t = LabelingSession.open(store, sid)
    assert len(t.labels) == 15
    assert t.model_choice.candidate_spec("rls") is None  # nothing held yet: built at the next evaluation
    t.model_choice.rule = rule = RecordingRule()
    _label_from(t, order, 1)
    assert t.model_choice.candidate_spec("rls") == live_spec
    assert rule.seen[-1][:4] == live_decision[:4]
    np.testing.assert_allclose(list(rule.seen[-1][4].values()), list(live_decision[4].values()), atol=1e-12)
    t.close()


def test_a_fixed_width_and_lam_session_never_retunes_the_candidate(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": N},
                                                                     model="auto", width=0.9, lam=0.2))
    assert s.config.model == "harmonic" and not s.model_choice.tune_flags()["width"]
    assert not s.model_choice.tune_flags()["lam"]
    _label_from(s, np.random.default_rng(0).permutation(N), 20)
    params = _candidate(s).get_params()
    assert (params["kernel"].width, params["lam"]) == (0.9, 0.2)
    assert s.model_choice.candidate_spec("rls").width == 0.9
    s.close()


def test_candidate_tuning_drops_the_retunes_of_labels_taken_back():
    """CandidateTuning against its definition: after labels are taken back and others given, the
    candidate has the settings and labels of a fresh CandidateTuning run on the labels now."""
    from labeler.session import model
    from labeler.session.rls_candidate import CandidateTuning, learner_spec, tune_flags

    X, y = data.load_dataset("moons", seed=0, n=200).X, data.load_dataset("moons", seed=0, n=200).y
    X = np.asarray(X, dtype=np.float64)
    classes = [str(c) for c in sorted(set(y))]
    base = model.RlsSpec(kernel="rbf", width=2.0, lam=0.1, seed=0)
    flags = tune_flags({"width": True, "lam": True}, base)
    order = np.random.default_rng(2).permutation(len(y))
    labels = [(int(i), str(y[i])) for i in order[:30]]
    other = [(int(i), str(y[i])) for i in order[30:36]]

    def run(sequence):
        tuning = CandidateTuning(X)
        learner = model.build_learner(base, X, classes)
        for k in sequence:
            tuning.bring(learner, base, 0, flags, classes, k)
        return tuning, learner

    live, live_learner = run([labels[:12], labels[:30], labels[:9] + other])
    fresh, fresh_learner = run([labels[:9] + other])
    assert live.spec == fresh.spec and learner_spec(base, live_learner) == fresh.spec
    assert live_learner.labels == fresh_learner.labels
    np.testing.assert_allclose(live_learner.decision_values, fresh_learner.decision_values, atol=1e-8)


def test_on_a_pool_of_many_components_the_app_loses_and_decides_as_simulate(tmp_path, monkeypatch):
    """Spheres: 60 components of 2 classes, RLS answers first. A label alone in its component has
    a LOO output of rounding size, whose sign the session's learner and simulate's (other update
    paths) do not share; as a tie (core.selection.loo.TIE_TOLERANCE) it is the same loss in both."""
    rule = RecordingRule()
    simulated_loo = _record_loo(monkeypatch)
    frame = simulate_module.simulate_auto_model(data.load_dataset("spheres", seed=0), budget=20, seed=0, rule=rule)
    simulated_loo = list(simulated_loo)
    monkeypatch.undo()
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="spheres", model="auto"))
    assert s.config.model == "rls"
    app = s.model_choice.rule = RecordingRule()
    app_loo = _record_loo(monkeypatch)
    for i in frame["index"].astype(int):
        s.label(int(i), _truth(s, int(i)))
    tiny = [k for _, F in simulated_loo for k in np.abs(F).ravel() if k < 1e-12]
    assert tiny  # rounding-size outputs occur: the test can tell
    _same_decisions(app.seen, rule.seen, app_loo, simulated_loo)
    s.close()
