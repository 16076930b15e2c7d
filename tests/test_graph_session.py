"""Sessions on a graph model (issue 10 §2): the app's contract (exact undo, confidence, export,
resume) for the harmonic function and LGC, and the settings that do not apply refused."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from core.graph import HarmonicFunction, LocalGlobalConsistency
from core.graph.active import GraphLearner
from core.kernels import knn_graph
from labeler.session import LabelingSession, SessionConfig
from labeler.session.config import check_model_settings
from labeler.ui.model_choice import picked_model_settings, same_model_settings, strategies_for

N = 120


def _config(**kw) -> SessionConfig:
    return SessionConfig(dataset="moons", dataset_options={"n": N}, **kw)


def _oracle(model, W, labels, classes, class_mass=False):
    L = np.fromiter(labels, dtype=np.int64)
    y = list(labels.values())
    if model == "harmonic":
        return HarmonicFunction(solver="direct", class_mass=class_mass).fit(W, L, y, classes=classes)
    return LocalGlobalConsistency(solver="direct").fit(W, L, y, classes=classes)


# --------------------------------------------------------------------------------------------
# the learner alone, against the models' own fits and brute-force refits
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["harmonic", "lgc"])
@pytest.mark.parametrize("class_mass", [False, True])
def test_graph_learner_equals_a_fresh_fit_after_add_remove_relabel(model, class_mass):
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(60, 2)), rng.normal(size=(20, 2)) + 12.0])  # two components
    W = knn_graph(X, 5)
    classes = ["a", "b", "c"]
    g = GraphLearner(W, classes, model, class_mass=class_mass)
    for i, lab in [(0, "a"), (5, "b"), (9, "c"), (30, "a")]:
        g.add(i, lab)
    g.remove(5)
    g.relabel(9, "b")
    g.add_many([40, 41], ["c", "a"])
    ref = _oracle(model, W, g.labels, classes, class_mass)
    np.testing.assert_allclose(g.raw_values, ref.decision_values_, atol=1e-8)
    if model == "harmonic":  # the component at +12 holds no label: the largest class there
        assert not ref.reached_[60:].any()
    got = np.array([classes.index(c) for c in g.predict()])
    if model == "harmonic":
        np.testing.assert_array_equal(got, ref.predict_indices())
    elif not class_mass:  # LGC predicts by argmax (class mass normalisation is this learner's option)
        np.testing.assert_array_equal(got, ref.predict_indices())
    else:
        free = np.setdiff1d(np.arange(80), list(g.labels))
        q = np.bincount([classes.index(v) for v in g.labels.values()], minlength=3) / len(g.labels)
        from core.graph import class_mass_normalize

        np.testing.assert_array_equal(got[free], class_mass_normalize(ref.decision_values_[free], q).argmax(1))


@pytest.mark.parametrize("model", ["harmonic", "lgc"])
def test_graph_learner_loo_equals_refits(model):
    rng = np.random.default_rng(1)
    W = knn_graph(rng.normal(size=(90, 2)), 6)
    classes = ["a", "b", "c"]
    g = GraphLearner(W, classes, model)
    g.add_many([1, 7, 20, 33, 50, 61, 80], ["a", "b", "c", "a", "b", "c", "a"])
    loo = g.loo_decision_values()
    labels = g.labels
    for k, j in enumerate(labels):
        h = GraphLearner(W, classes, model)
        rest = [i for i in labels if i != j]
        h.add_many(rest, [labels[i] for i in rest])
        np.testing.assert_allclose(loo[k], h.decision_values[j], atol=1e-8)


def test_zhu_expected_risk_kept_by_downdates_equals_a_fresh_rule():
    rng = np.random.default_rng(2)
    W = knn_graph(rng.normal(size=(80, 2)), 6)
    g = GraphLearner(W, ["a", "b"], "harmonic")
    g.add_many([0, 40], ["a", "b"])
    g.expected_risk()  # builds Zhu's inverse
    g.add(11, "b")  # kept by its rank-one downdate
    fresh = GraphLearner(W, ["a", "b"], "harmonic").add_many([0, 40, 11], ["a", "b", "b"])
    np.testing.assert_allclose(g.expected_risk(), fresh.expected_risk(), rtol=1e-8)
    with pytest.raises(ValueError, match="LGC has no expected-risk rule"):  # a refused capability names the fix
        GraphLearner(W, ["a", "b"], "lgc").add(0, "a").expected_risk()


def test_graph_learner_refuses_the_rls_settings():
    W = sp.csr_matrix(np.ones((3, 3)) - np.eye(3))
    g = GraphLearner(W, ["a", "b"], "harmonic")
    for params in ({"lam": 0.1}, {"weighting": "none"}, {"kernel": None}):
        with pytest.raises(ValueError, match="does not apply to the harmonic model"):
            g.set_params(**params)


# --------------------------------------------------------------------------------------------
# sessions
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("model", ["harmonic", "lgc"])
def test_label_undo_label_equals_a_fresh_fit_and_reopens_the_same(tmp_path, model):
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, _config(model=model))
    assert s.config.model == model and s.config.posterior == "graph"
    assert s.config.width is None and s.config.lam is None
    assert s.config.strategy == "auto"  # LGC: VOpt for the first 10 labels, then margin
    if model == "lgc":
        assert "LGC has no expected-risk rule" in s.auto_settings["strategy"]
        assert s.auto_settings["strategy"].startswith("VOpt for the first 10 labels")
    classes = s.classes
    for k in range(4):
        s.label(s.next_query(), classes[k % 2])
    s.undo()
    after_undo = _oracle(model, s.learner.graph, s.learner.labels, classes)
    np.testing.assert_allclose(s.learner.raw_values, after_undo.decision_values_, atol=1e-8)
    assert len(s.learner.labels) == 3
    s.label(s.next_query(), classes[0])
    s.label(s.next_query(), classes[1])
    W = s.learner.graph
    np.testing.assert_allclose(W.toarray(), knn_graph(s.X, 10).toarray())  # the graph of the pool
    ref = _oracle(model, W, s.learner.labels, classes)
    np.testing.assert_allclose(s.learner.raw_values, ref.decision_values_, atol=1e-8)
    pred = s.predictions()
    np.testing.assert_array_equal(pred["predicted"].to_numpy(), np.asarray(ref.predict(), dtype=object))
    conf = pred["confidence"].to_numpy()
    assert np.all((conf >= 0.5 - 1e-12) & (conf <= 1 + 1e-12))
    query, sid, values = s.next_query(), s.id, s.learner.raw_values
    s.close()

    t = LabelingSession.open(store, sid)
    assert t.config.model == model
    np.testing.assert_allclose(t.learner.raw_values, values, atol=1e-10)
    assert t.next_query() == query
    # the same query from the rebuilt state itself, not only from the store's record
    from core import strategies

    assert strategies.query_one(t.learner, t.config.strategy, t._rng()) == query
    t.close()


def test_reopen_reads_the_stored_graph_instead_of_searching(tmp_path, monkeypatch):
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, _config(model="harmonic"))
    s.label(s.next_query(), s.classes[0])
    sid = s.id
    s.close()
    import core.kernels

    def refuse(*a, **k):
        raise AssertionError("the kNN search ran again on reopening")

    monkeypatch.setattr(core.kernels, "knn_neighbours", refuse)
    t = LabelingSession.open(store, sid)
    assert t.n_labeled == 1
    t.close()


def test_next_query_is_zhu_then_margin(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", _config(model="harmonic", initial_labels=4))
    from core.graph import ZhuActiveLearning

    labels = s.learner.labels
    zhu = ZhuActiveLearning(eps=1e-8).fit(s.learner.graph, np.fromiter(labels, dtype=np.int64),
                                          list(labels.values()), classes=s.learner.classes)
    E = zhu.expected_risks()
    best = set(zhu.unlabeled_[np.flatnonzero(E <= E.min() * (1 + 1e-12))].tolist())
    assert s.next_query() in best
    why = s.explain_query()
    assert why.answered_by == "arls" and np.isfinite(why.expected_risk)
    summary = s.model_summary()
    assert summary["model"] == "harmonic" and "Zhu" in summary["description"]


def test_export_holds_the_labels_with_their_sources(tmp_path):
    import pandas as pd

    s = LabelingSession.create(tmp_path / "s.sqlite", _config(model="lgc", initial_labels=3))
    q = s.next_query()
    s.label(q, s.classes[1])
    other = next(i for i in range(N) if i not in s.learner.labels)
    s.label(other, s.classes[0], source="chosen")
    table = pd.read_csv(s.export(tmp_path / "labels.csv", include_predictions=True))
    labelled = table[table["label"].notna()]
    assert len(labelled) == 5
    assert sorted(labelled["source"].value_counts().items()) == [("chosen", 1), ("initial", 3), ("queried", 1)]
    shown = s.predictions()
    assert {str(int(v)) for v in labelled["label"]} <= set(s.classes)
    np.testing.assert_allclose(table["confidence"].to_numpy(), shown["confidence"].to_numpy())


@pytest.mark.parametrize("given,match", [
    (dict(model="harmonic", posterior="nystrom"), "posterior 'nystrom'.*does not apply.*model 'rls'"),
    (dict(model="harmonic", width=1.5), "width 1.5 does not apply"),
    (dict(model="lgc", lam=0.5), "lam 0.5 does not apply"),
    (dict(model="harmonic", kernel="linear"), "kernel 'linear' does not apply"),
    (dict(model="harmonic", rank=20), "rank 20"),
    (dict(model="harmonic", alpha=0.5), "alpha applies to model 'lgc' only"),
    (dict(model="lgc", strategy="arls"), "LGC has no expected-risk rule"),
    (dict(model="lgc", alpha=1.0), r"alpha must be a number in \(0, 1\)"),
    (dict(class_mass=True), "class_mass.*graph models only"),
    (dict(model="knn"), "Unknown model 'knn'"),
    (dict(model="harmonic", knn=N), "knn must be below the pool size"),
])
def test_bad_combinations_are_refused_and_store_nothing(tmp_path, given, match):
    store = tmp_path / "s.sqlite"
    with pytest.raises(ValueError, match=match):
        LabelingSession.create(store, _config(**given))
    assert not store.exists() or LabelingSession.list_sessions(store) == []


def test_rls_settings_refused_on_a_graph_session_and_nothing_stored(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", _config(model="harmonic"))
    s.label(s.next_query(), s.classes[0])
    events = s.n_events
    for call, what in ((lambda: s.set_lam(0.5), "λ"), (lambda: s.set_width("auto"), "width"),
                       (lambda: s.set_weighting("none"), "Class weighting"), (lambda: s.loo_curve(), "LOO tuning")):
        with pytest.raises(ValueError, match=f"{what}.*does not apply to the harmonic model"):
            call()
    lgc = LabelingSession.create(tmp_path / "t.sqlite", _config(model="lgc"))
    with pytest.raises(ValueError, match="LGC has no expected-risk rule.*margin, random, vopt, sigmaopt"):
        lgc.set_strategy("arls")
    lgc.set_strategy("auto")  # VOpt while cold, then margin
    s.set_strategy("margin")
    assert s.config.strategy == "margin" and s.n_events == events + 1
    assert s.tuning_status()["lam"] is None


def test_old_sessions_reopen_as_rls(tmp_path):
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, _config())
    assert s.config.model == "rls" and s.model_summary()["model"] == "rls"
    sid = s.id
    s.close()
    # a config stored before the model field existed
    import json
    import sqlite3

    con = sqlite3.connect(store)
    (text,) = con.execute("SELECT config FROM sessions WHERE id = ?", (sid,)).fetchone()
    cfg = json.loads(text)
    for key in ("model", "alpha", "class_mass"):
        cfg.pop(key)
    con.close()
    from labeler.session.config import SessionConfig as C

    assert C.from_dict(cfg).model == "rls"


def test_form_and_cli_options():
    assert picked_model_settings({"pick_model": "rls"}) == {}
    assert picked_model_settings({}, "harmonic") == {"model": "harmonic", "knn": 10, "class_mass": False}
    assert picked_model_settings({"pick_model": "lgc", "pick_alpha": 0.9, "pick_graph_k": 7}) == \
        {"model": "lgc", "knn": 7, "class_mass": False, "alpha": 0.9}
    assert strategies_for("lgc", 100) == ("auto", "margin", "random", "vopt", "sigmaopt")
    assert "arls" in strategies_for("harmonic", 100) and "arls" not in strategies_for("harmonic", 10**6)
    with pytest.raises(ValueError, match="posterior 'spectral'"):
        check_model_settings(SessionConfig(model="lgc", posterior="spectral"))


def test_new_session_on_this_data_keeps_the_open_sessions_model():
    lgc = SessionConfig(model="lgc", knn=7, alpha=0.9, class_mass=True)
    assert same_model_settings(lgc, {"posterior": "nystrom"}) == \
        {"model": "lgc", "knn": 7, "class_mass": True, "alpha": 0.9}
    assert same_model_settings(SessionConfig(model="harmonic", knn=5), {}) == \
        {"model": "harmonic", "knn": 5, "class_mass": False}
    # an rls session: the app's own options (labeler app --posterior ...), no graph model
    assert same_model_settings(SessionConfig(), {"posterior": "nystrom", "model": "harmonic", "alpha": 0.5}) == \
        {"posterior": "nystrom"}
    assert same_model_settings(None, None) == {}


def test_cli_refuses_a_graph_model_with_a_posterior(capsys):
    from labeler.cli import main

    assert main(["app", "--model", "harmonic", "--posterior", "nystrom"]) == 2
    err = capsys.readouterr().err
    assert "posterior 'nystrom' (--posterior) does not apply to model 'harmonic'" in err


def test_labeler_model_env_carries_the_model():
    from labeler.ui.config import AppConfig

    cfg = AppConfig.from_env({"LABELER_MODEL": '{"model": "lgc", "alpha": 0.9, "knn": 7, "other": 1}'})
    assert cfg.model == {"model": "lgc", "alpha": 0.9, "knn": 7}


def test_above_the_zhu_limit_auto_is_vopt_then_margin_and_arls_is_refused(tmp_path, monkeypatch):
    import labeler.session.graphs as graphs

    monkeypatch.setattr(graphs, "ZHU_SESSION_MAX", N - 1)
    with pytest.raises(ValueError, match=f"limited to {N - 1:,} points in a session"):
        LabelingSession.create(tmp_path / "a.sqlite", _config(model="harmonic", strategy="arls"))
    s = LabelingSession.create(tmp_path / "s.sqlite", _config(model="harmonic"))
    assert s.config.strategy == "auto" and "limited to" in s.auto_settings["strategy"]
    assert "Queries: VOpt for the first 10 labels, then margin" in s.model_summary()["description"]
    assert s.explain_query().answered_by == "vopt"
    assert "limited to" in s.model_summary()["why"]
    with pytest.raises(ValueError, match="limited to"):
        s.set_strategy("arls")
