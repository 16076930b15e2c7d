"""Poisson learning in the app (issue 20 §3): a session of model "poisson" (undo, resume with
bit-identical predictions, export), the graph models' variance strategies "vopt" and
"sigmaopt" offered by capability, and ``labeler app / simulate --model poisson``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from core import strategies
from core.graph import HarmonicFunction
from core.graph.active import GraphLearner
from core.graph.poisson import PoissonLearning
from core.graph.poisson_learner import PoissonLearner
from core.graph.variance import VarianceCriterion, variance_reduction
from core.kernels import knn_graph, laplacian_eigenpairs
from core.learner import ActiveRLS
from core.learner.base import EXPECTED_RISK, GRAPH_VARIANCE
from labeler.session import LabelingSession, SessionConfig
from labeler.session.graphs import strategies_for
from labeler.ui.model_choice import picked_model_settings, same_model_settings

N = 120


def _config(**kw) -> SessionConfig:
    return SessionConfig(dataset="moons", dataset_options={"n": N}, **kw)


def _direct_poisson(W, labels: dict, classes):
    """The oracle: Poisson learning by the grounded sparse LU (core.graph.poisson)."""
    L = np.fromiter(labels, dtype=np.int64)
    y = [classes.index(v) for v in labels.values()]
    return PoissonLearning(solver="direct").fit(W, L, y, classes=list(range(len(classes))))


def _variance_pick(learner, criterion):
    """The unlabelled node with the largest variance drop, from a fresh eigendecomposition."""
    lam, V = laplacian_eigenpairs(learner.graph, min(50, learner.n_samples - 1), normalized=True,
                                  seed=learner.random_state)
    unl = learner.unlabeled_indices
    drop = variance_reduction(lam, V, np.fromiter(learner.labels, dtype=np.int64), unl, criterion=criterion)
    return set(unl[drop >= drop.max() * (1 - 1e-12)].tolist())


# --------------------------------------------------------------------------------------------
# the strategies by capability (core)
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda W, c: GraphLearner(W, c, "harmonic"), lambda W, c: GraphLearner(W, c, "lgc"),
    lambda W, c: PoissonLearner(W, c)], ids=["harmonic", "lgc", "poisson"])
@pytest.mark.parametrize("criterion", ["vopt", "sigmaopt"])
def test_every_graph_model_queries_by_the_variance_criteria(make, criterion):
    rng = np.random.default_rng(5)
    W = knn_graph(np.vstack([rng.normal(size=(50, 2)), rng.normal(size=(50, 2)) + 4.0]), 7)
    learner = make(W, ["a", "b", "c"])
    assert GRAPH_VARIANCE in learner.capabilities
    assert criterion in strategies.offered(learner.capabilities)
    learner.add_many([0, 60, 7], ["a", "b", "c"])
    s = strategies.scores(learner, criterion)
    assert np.isinf(s[[0, 60, 7]]).all()
    assert strategies.query_one(learner, criterion) in _variance_pick(learner, criterion)


def test_kernel_rls_has_no_variance_strategies():
    rng = np.random.default_rng(0)
    learner = ActiveRLS.from_features(rng.normal(size=(40, 2)), classes=["a", "b"])
    assert GRAPH_VARIANCE not in learner.capabilities
    assert strategies.offered(learner.capabilities) == ("auto", "arls", "margin", "random")
    with pytest.raises(ValueError, match="variance strategy 'vopt' does not apply"):
        strategies.query_one(learner, "vopt")
    with pytest.raises(ValueError, match="unknown strategy 'entropy'.*vopt, sigmaopt"):
        strategies.query_one(learner, "entropy")


def test_auto_on_a_learner_without_expected_risk_is_vopt_while_cold_then_margin():
    rng = np.random.default_rng(2)
    W = knn_graph(rng.normal(size=(80, 2)), 6)
    learner = PoissonLearner(W, ["a", "b"])
    assert EXPECTED_RISK not in learner.capabilities
    assert strategies.cold_strategy(learner.capabilities) == "vopt"
    assert strategies.resolve(learner, "auto") == "vopt"
    assert strategies.query_one(learner, "auto") in _variance_pick(learner, "vopt")
    learner.add_many(list(range(10)), ["a", "b"] * 5)
    assert strategies.resolve(learner, "auto") == "margin"
    harmonic = GraphLearner(W, ["a", "b"], "harmonic")
    assert strategies.resolve(harmonic, "auto") == "arls"  # its own expected risk (Zhu et al.)


# --------------------------------------------------------------------------------------------
# sessions
# --------------------------------------------------------------------------------------------
def test_poisson_session_label_undo_reopen_export(tmp_path):
    import pandas as pd

    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, _config(model="poisson", initial_labels=2))
    assert isinstance(s.learner, PoissonLearner)
    assert s.config.model == "poisson" and s.config.posterior == "graph"
    assert s.config.width is None and s.config.lam is None
    assert s.config.strategy == "auto"
    assert s.model_summary()["model"] == "poisson" and "Poisson learning" in s.model_summary()["description"]
    classes = s.classes
    assert s.next_query() in _variance_pick(s.learner, "vopt")  # auto: VOpt while cold
    assert "VOpt answered" in s.explain_query().reasons[0]
    for k in range(5):
        s.label(s.next_query(), classes[k % 2])
    s.undo()
    assert s.n_labeled == 6
    ref = _direct_poisson(s.learner.graph, s.learner.labels, classes)
    np.testing.assert_allclose(s.learner.raw_values, ref.decision_values_, atol=1e-8)
    s.label(s.next_query(), classes[0])
    W = s.learner.graph
    np.testing.assert_allclose(W.toarray(), knn_graph(s.X, 10).toarray())
    ref = _direct_poisson(W, s.learner.labels, classes)
    np.testing.assert_allclose(s.learner.raw_values, ref.decision_values_, atol=1e-8)
    pred = s.predictions()
    np.testing.assert_array_equal(pred["predicted"].to_numpy(),
                                  np.asarray(classes, dtype=object)[ref.predict_indices()])
    conf = pred["confidence"].to_numpy()
    assert np.all((conf >= 0.5 - 1e-12) & (conf <= 1 + 1e-12))
    table = pd.read_csv(s.export(tmp_path / "labels.csv", include_predictions=True))
    labelled = table[table["label"].notna()]
    assert len(labelled) == 7
    assert sorted(labelled["source"].value_counts().items()) == [("initial", 2), ("queried", 5)]
    np.testing.assert_allclose(table["confidence"].to_numpy(), conf)
    query, sid = s.next_query(), s.id
    values, decision = s.learner.raw_values, s.learner.decision_values
    s.close()

    # store replay: one fit on every label, the live learner's values to the solver's accuracy (it
    # added each label by linearity: PoissonLearning.add_label)
    t = LabelingSession.open(store, sid)
    assert isinstance(t.learner, PoissonLearner) and t.config.model == "poisson"
    np.testing.assert_allclose(t.learner.raw_values, values, atol=1e-8)
    np.testing.assert_allclose(t.learner.decision_values, decision, atol=1e-8)
    assert t.next_query() == query
    assert strategies.query_one(t.learner, t.config.strategy, t._rng()) == query
    t.close()


@pytest.mark.parametrize("model", ["harmonic", "lgc", "poisson"])
@pytest.mark.parametrize("criterion", ["vopt", "sigmaopt"])
def test_graph_sessions_take_the_variance_strategies(tmp_path, model, criterion):
    s = LabelingSession.create(tmp_path / "s.sqlite", _config(model=model, strategy=criterion, initial_labels=3))
    assert s.config.strategy == criterion
    assert criterion in strategies_for(model, N)
    assert s.next_query() in _variance_pick(s.learner, criterion)
    s.set_strategy("margin")
    s.set_strategy(criterion)
    assert s.config.strategy == criterion


def test_variance_strategies_refused_on_rls_and_arls_on_poisson_naming_the_valid_ones(tmp_path):
    with pytest.raises(ValueError, match="'vopt' is a graph model's variance criterion.*runs auto, arls, margin, random"):
        LabelingSession.create(tmp_path / "a.sqlite", _config(strategy="vopt"))
    rls = LabelingSession.create(tmp_path / "r.sqlite", _config())
    events = rls.n_events
    with pytest.raises(ValueError, match="'sigmaopt' is a graph model's variance criterion"):
        rls.set_strategy("sigmaopt")
    assert rls.n_events == events and rls.config.strategy == "auto"
    with pytest.raises(ValueError, match="Poisson learning has no expected-risk rule.*vopt, sigmaopt"):
        LabelingSession.create(tmp_path / "p.sqlite", _config(model="poisson", strategy="arls"))
    s = LabelingSession.create(tmp_path / "s.sqlite", _config(model="poisson"))
    with pytest.raises(ValueError, match="Poisson learning has no expected-risk rule"):
        s.set_strategy("arls")
    for call, what in ((lambda: s.set_lam(0.5), "λ"), (lambda: s.set_weighting("none"), "Class weighting")):
        with pytest.raises(ValueError, match=f"{what}.*does not apply to the poisson model"):
            call()
    with pytest.raises(ValueError, match="alpha applies to model 'lgc' only"):
        LabelingSession.create(tmp_path / "q.sqlite", _config(model="poisson", alpha=0.5))


def test_offered_strategies_follow_the_capabilities():
    assert strategies_for("poisson", N) == ("auto", "margin", "random", "vopt", "sigmaopt")
    assert strategies_for("rls", N) == ("auto", "arls", "margin", "random")
    assert {"arls", "vopt", "sigmaopt"} <= set(strategies_for("harmonic", N))


def test_class_mass_reaches_the_learner_and_the_model_box():
    assert picked_model_settings({"pick_model": "poisson", "pick_graph_k": 7, "pick_class_mass": True}) == \
        {"model": "poisson", "knn": 7, "class_mass": True}
    assert same_model_settings(SessionConfig(model="poisson", knn=6), {}) == \
        {"model": "poisson", "knn": 6, "class_mass": False}


def test_class_mass_session_equals_the_weighted_oracle(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", _config(model="poisson", class_mass=True, initial_labels=4))
    assert s.learner.class_mass is True
    L = np.fromiter(s.learner.labels, dtype=np.int64)
    y = [s.classes.index(v) for v in s.learner.labels.values()]
    ref = PoissonLearning(solver="direct", class_sizes="uniform").fit(s.learner.graph, L, y, classes=[0, 1])
    np.testing.assert_array_equal(s.learner.predict(), np.asarray(s.classes, dtype=object)[ref.predict_indices()])


# --------------------------------------------------------------------------------------------
# command line
# --------------------------------------------------------------------------------------------
def test_simulate_poisson_writes_the_curve_and_the_predictions(tmp_path, capsys):
    import pandas as pd

    from labeler.cli import main

    out, pred = tmp_path / "curve.csv", tmp_path / "pred.csv"
    assert main(["simulate", "moons", "--model", "poisson", "--strategy", "vopt", "--budget", "12", "--quiet",
                 "--out", str(out), "--predictions", str(pred)]) == 0
    curve, table = pd.read_csv(out), pd.read_csv(pred)
    assert len(curve) == 12 and curve["accuracy"].iloc[-1] > 0.9
    assert list(table.columns[:4]) == ["id", "label", "predicted", "confidence"]
    assert len(table) == 1000 - 12  # every point the oracle did not label
    assert main(["simulate", "moons", "--model", "poisson", "--strategy", "arls", "--budget", "5", "--quiet"]) == 2
    assert "not available with model 'poisson'" in capsys.readouterr().err
    assert main(["simulate", "moons", "--strategy", "sigmaopt", "--budget", "5", "--quiet"]) == 2
    assert "does not apply to kernel RLS" in capsys.readouterr().err


def test_simulate_poisson_auto_is_vopt_then_margin():
    from labeler.data import load_dataset
    from labeler.experiments.graph_simulate import simulate_graph

    ds = load_dataset("moons", seed=0, n=150)
    auto = simulate_graph(ds, "poisson", "auto", budget=14, seed=0, n_neighbors=6)
    vopt = simulate_graph(ds, "poisson", "vopt", budget=14, seed=0, n_neighbors=6)
    assert auto["index"].iloc[:10].tolist() == vopt["index"].iloc[:10].tolist()


def test_labeler_app_model_poisson_reaches_the_first_session(monkeypatch):
    from labeler.cli.graph import app_model_to_env

    monkeypatch.delenv("LABELER_MODEL", raising=False)
    app_model_to_env({"model": "poisson", "knn": 8})
    import os

    assert json.loads(os.environ["LABELER_MODEL"]) == {"model": "poisson", "knn": 8}
    from labeler.cli.common import CLIError

    with pytest.raises(CLIError, match="alpha applies to model 'lgc' only"):
        app_model_to_env({"model": "poisson", "alpha": 0.5})


def test_harmonic_oracle_unchanged_by_the_shared_variance_code():
    rng = np.random.default_rng(4)
    W = knn_graph(rng.normal(size=(60, 2)), 5)
    g = GraphLearner(W, ["a", "b"], "harmonic")
    g.add_many([1, 2, 3], ["a", "b", "a"])
    ref = HarmonicFunction(solver="direct").fit(W, np.array([1, 2, 3]), ["a", "b", "a"], classes=["a", "b"])
    np.testing.assert_allclose(g.raw_values, ref.decision_values_, atol=1e-8)


def test_the_variance_criteria_stop_at_their_pool_limit(tmp_path, monkeypatch):
    from core.graph.outputs import GraphOutputs

    rng = np.random.default_rng(1)
    W = knn_graph(rng.normal(size=(60, 2)), 5)
    for learner in (GraphLearner(W, ["a", "b"], "lgc"), PoissonLearner(W, ["a", "b"])):
        learner.variance_max_points = 59
        assert GRAPH_VARIANCE not in learner.capabilities
        assert strategies.cold_strategy(learner.capabilities) == "margin"
        with pytest.raises(ValueError, match="limited to 59 points; this pool has 60. Choose margin"):
            strategies.query_one(learner, "vopt")
        with pytest.raises(ValueError, match="limited to 59 points"):
            learner.score(VarianceCriterion("vopt"))
    monkeypatch.setattr(GraphOutputs, "variance_max_points", N - 1)
    assert "vopt" not in strategies_for("poisson", N) and "auto" in strategies_for("poisson", N)
    with pytest.raises(ValueError, match=f"limited to {N - 1:,} points; this pool has {N}"):
        LabelingSession.create(tmp_path / "a.sqlite", _config(model="poisson", strategy="vopt"))
    s = LabelingSession.create(tmp_path / "s.sqlite", _config(model="poisson"))
    assert s.config.strategy == "auto" and s.auto_settings["strategy"].startswith("margin:")
    assert "Queries: margin" in s.model_summary()["description"]
    assert s.explain_query().answered_by == "margin"
