"""The model that answers first in a session with model "auto", chosen from the pool at creation
(docs/algorithms.md §20, ``ModelChoice.first_switch``): the same choice as ``labeler simulate``
on the same pool, written as one ``setting`` event with the session, replayed on open, never
undone by taking labels back, and said in the app's sentence."""

from __future__ import annotations

import numpy as np
import pytest

from core.graph.active import GraphLearner
from core.learner import ActiveRLS
from core.selection import selector
from core.selection.prior import first_model_evidence
from labeler import data
from labeler.experiments.model_select_simulate import knn_graph
from labeler.experiments.simulate import app_settings
from labeler.session import LabelingSession, SessionConfig

N = 300


def _model_events(s):
    return [ev for ev in s._store.events(s.id) if ev.kind == "setting" and ev.value.get("name") == "model"]


def _truth(s, i):
    return s.classes[list(s.dataset.classes).index(s.dataset.y[i])]


def test_two_moons_start_on_the_harmonic_model_with_one_event_replayed_on_open(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": N},
                                                                     model="auto"))
    assert (s.config.model, s.config.model_choice) == ("harmonic", "auto")
    assert isinstance(s.learner, GraphLearner)
    (event,) = _model_events(s)
    assert event.action == 1 and event.value["value"] == "harmonic"
    assert event.value["prior"] and event.value["n_labels"] == 0 and event.value["from"] == "rls"
    text = s.model_choice_summary()["text"]
    assert text.startswith("Model: harmonic — answers first, as the pool's kNN graph splits into 2 parts: λ₂ = ")
    assert "splits into 2 parts" in s._stored_config["auto"]["first model"]
    assert s.settings.stopping_monitor.checkpoints == []  # no label yet: no stopping checkpoint
    s.next_query()
    for _ in range(2):
        i = s.next_query()
        s.label(i, _truth(s, i))
    outputs = np.asarray(s.learner.proba())
    s.close()

    again = LabelingSession.open(tmp_path / "s.sqlite", s.id)
    assert again.config.model == "harmonic" and isinstance(again.learner, GraphLearner)
    np.testing.assert_allclose(np.asarray(again.learner.proba()), outputs, rtol=1e-10, atol=1e-12)
    for _ in range(2):
        again.undo()
    assert again.model_choice_summary()["text"] == text
    for _ in range(3):
        i = again.next_query()
        again.label(i, _truth(again, i))
    for _ in range(3):
        again.undo()
    assert again.config.model == "harmonic" and len(_model_events(again)) == 1  # no labels chose it
    again.close()


def test_a_pool_of_more_components_than_classes_starts_on_rls_and_says_why(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="spheres", model="auto"))
    assert s.config.model == "rls" and isinstance(s.learner, ActiveRLS) and not _model_events(s)
    assert s.model_choice_summary()["text"].startswith(
        "Model: RLS — answers first, as the pool's kNN graph has 60 components, more than its 2 classes")
    s.close()


@pytest.mark.parametrize("name, options", [("moons", {"n": N}), ("spheres", {}), ("circles", {}),
                                           ("digits", {})])
def test_the_app_and_simulate_choose_the_same_first_model(tmp_path, name, options):
    """``labeler simulate`` (labeler/experiments/model_select_simulate.py) reads the rule on its own
    kNN graph of its own features: a new app session on the same pool must start on the same
    model, for the same reason."""
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset=name, dataset_options=options,
                                                                     model="auto"))
    ds = data.load_dataset(name, seed=0, **options)
    X = np.asarray(app_settings(ds, 0)["X"], dtype=np.float64)
    model, reason = first_model_evidence(knn_graph(X, 10, seed=0), len(ds.classes), seed=0)
    assert s.config.model == model and s._stored_config["auto"]["first model"] == reason
    s.close()


def test_initial_labels_follow_the_switch_and_reach_the_graph_model(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": N},
                                                                     model="auto", initial_labels=4))
    kinds = [(ev.action, ev.kind) for ev in s._store.events(s.id)]
    assert kinds[0] == (1, "setting") and {a for a, k in kinds[1:]} == {2} and len(kinds) == 5
    assert s.config.model == "harmonic" and s.learner.n_labeled == 4
    s.close()
    again = LabelingSession.open(tmp_path / "s.sqlite", s.id)
    assert again.config.model == "harmonic" and again.learner.n_labeled == 4
    again.close()


@pytest.mark.parametrize("first, data, model", [("rls", "moons", "rls"), ("harmonic", "spheres", "harmonic")])
def test_a_fixed_first_model_is_taken_as_given(tmp_path, monkeypatch, first, data, model):
    """Against the pool's rule: RLS on the moons (where the rule says harmonic), the harmonic
    function on the spheres (where it says RLS)."""
    monkeypatch.setattr(selector, "FIRST_MODEL", first)
    options = {"n": N} if data == "moons" else {}
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset=data, dataset_options=options,
                                                                     model="auto"))
    assert s.config.model == model and len(_model_events(s)) == (model != "rls")
    s.close()


def test_a_fixed_model_or_a_large_pool_is_not_chosen_for(tmp_path, monkeypatch):
    s = LabelingSession.create(tmp_path / "a.sqlite", SessionConfig(dataset="moons", dataset_options={"n": N}))
    assert s.config.model == "rls" and not _model_events(s) and "first model" not in s._stored_config["auto"]
    s.close()
    from labeler.session import model_selection
    monkeypatch.setattr(model_selection, "AUTO_MAX_POINTS", N - 1)
    s = LabelingSession.create(tmp_path / "b.sqlite", SessionConfig(dataset="moons", dataset_options={"n": N},
                                                                     model="auto"))
    assert s.config.model == "rls" and not _model_events(s)
    s.close()


def test_the_first_ten_queries_of_a_three_class_pool_are_simulate_s(tmp_path):
    """On three separate blobs the pool's graph chooses the harmonic model, and the first 10
    queries are the typicality cold start's (TypiClust, core.coldstart) in the app as in
    ``labeler simulate``: the same points in the same order. (Past them the harmonic outputs
    are constant on each blob, every query a tie broken by each loop's own random stream.)"""
    import pandas as pd
    from sklearn.datasets import make_blobs

    from labeler.experiments.model_select_simulate import simulate_auto_model

    X, y = make_blobs(300, centers=[[0, 0], [10, 0], [0, 10]], cluster_std=1.0, random_state=0)
    path = tmp_path / "blobs.csv"
    pd.DataFrame({"a": X[:, 0], "b": X[:, 1], "label": [f"c{v}" for v in y]}).to_csv(path, index=False)
    simulated = simulate_auto_model(data.load_dataset(str(path), seed=0), budget=10, seed=0)
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset=str(path), model="auto"))
    assert s.config.model == "harmonic"
    asked = []
    for k in range(10):
        i = s.next_query()
        why = s.explain_query(i)  # "Why this point?" names the typicality pick, not expected risk
        stored = "no label is stored" if k == 0 else f"{k} label"
        assert why.answered_by == "cold start" and why.reasons[0].startswith(
            f"Auto strategy: a typicality pick (TypiClust) answered, because {stored}")
        assert not any("random" in r or "expected to leave" in r for r in why.reasons)  # no other rule's words
        asked.append(int(i))
        s.label(i, _truth(s, i))
    assert asked == simulated["index"].astype(int).tolist()
    assert s.explain_query(s.next_query()).answered_by != "cold start"  # 10 labels: the model's rule
    s.close()


class _ForcedRule:
    """The switch rule, except that at ``at`` labels it switches to ``to``."""

    def __init__(self, at: int, to: str):
        from core.selection import SwitchRule

        self.rule, self.at, self.to = SwitchRule(), at, to
        self.seen = []

    def __getattr__(self, name):
        return getattr(self.rule, name)

    def decide(self, incumbent, losses, weights, n_switches=0):
        from core.selection import Decision

        self.seen.append(n_switches)
        d = self.rule.decide(incumbent, losses, weights, n_switches)
        if len(weights) == self.at and incumbent != self.to:
            return Decision(self.to, True, d.errors, self.to, 0.01, len(weights), f"{self.to} forced")
        return Decision(incumbent, False, d.errors, d.challenger, 1.0, len(weights), "kept")


def test_the_first_switch_is_not_counted_by_the_rule_and_an_undone_switch_replays_alike(tmp_path):
    """The first model's switch (0 labels) does not halve the evidence the first leave-one-out
    switch needs (as in labeler simulate); undoing a later switch leaves the first one, live
    and after a reopen."""
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 120},
                                                                     model="auto"))
    rule = s.model_choice.rule = _ForcedRule(4, "rls")
    for _ in range(4):
        i = s.next_query()
        s.label(i, _truth(s, i))
    assert rule.seen and set(rule.seen) == {0}  # the first model's switch is not a leave-one-out one
    assert s.config.model == "rls" and s.model_choice.switches() == [("rls", "harmonic", 0), ("harmonic", "rls", 4)]
    assert s.model_choice.loo_switches() == 1
    s.undo()
    assert s.config.model == "harmonic" and s.model_choice.switches() == [("rls", "harmonic", 0)]
    s.close()
    again = LabelingSession.open(tmp_path / "s.sqlite", s.id)
    assert again.config.model == "harmonic" and again.model_choice.switches() == [("rls", "harmonic", 0)]
    assert again.model_choice.loo_switches() == 0
    again.close()


def test_the_background_evaluations_take_the_candidate_built_at_creation(tmp_path):
    """The RLS learner built before the switch to the first model is held as a labelled-block
    candidate (its n x n matrix freed, core.selection.block_rls); the app's background
    evaluations use that candidate instead of building one of their own."""
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": N},
                                                                     model="auto"))
    held = s.model_choice._held.get("rls")
    assert held is not None and held.posterior is None  # no matrix of the pool
    s.retune_in_background(True)
    assert not s.model_choice._held
    for _ in range(3):
        i = s.next_query()
        s.label(i, _truth(s, i))
        assert s.model_choice.wait(60)
    job = s.model_choice._job
    pool = job.pool if job is not None else s.model_choice._pool
    assert pool["rls"][1] is held
    s.close()
