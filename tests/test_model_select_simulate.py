"""``labeler simulate --model auto`` (labeler/experiments/model_select_simulate.py): the model in
use answers and learns, switches only on the rule's evidence, and the command line's path."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from core.graph.active import GraphLearner
from core.learner import ActiveRLS
from core.selection import SwitchRule
from labeler import cli
from labeler.data.dataset import finish
from labeler.experiments.model_select_simulate import simulate_auto_model
from labeler.experiments.oracle import CURVE_COLUMNS


def _two_rings(n=160, seed=0):
    """Two concentric rings: a graph model separates them from a few labels."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 2
    t = rng.uniform(0, 2 * np.pi, n)
    r = np.where(y == 1, 3.0, 1.0) + rng.normal(0, 0.05, n)
    X = np.stack([r * np.cos(t), r * np.sin(t)], axis=1)
    return finish("rings", X, np.where(y == 1, "outer", "inner"), ["f1", "f2"])


def test_curve_names_the_model_and_switches_follow_the_rule(monkeypatch):
    from core.selection import selector as sel
    monkeypatch.setattr(sel, "FIRST_MODEL", "rls")  # RLS answers first, as on a pool the prior leaves to it
    ds = _two_rings()
    never = simulate_auto_model(ds, budget=20, seed=0, rule=SwitchRule(p_switch=0.0))
    assert set(never["model"]) == {"rls"} and never.attrs["switches"] == []
    assert tuple(never.columns[:len(CURVE_COLUMNS)]) == CURVE_COLUMNS and len(never) == 20
    eager = simulate_auto_model(ds, budget=20, seed=0, rule=SwitchRule(p_switch=1.0 + 1e-9, min_labels=10))
    assert (eager["model"].iloc[:9] == "rls").all() and eager.attrs["switches"]  # none before min_labels
    for n_labels, old, new, reason in eager.attrs["switches"]:
        assert n_labels >= 10 and old != new and "beats" in reason
        assert eager["model"].iloc[n_labels - 1] == new


def test_refuses_what_does_not_apply():
    ds = _two_rings(60)
    with pytest.raises(ValueError, match="candidates must include 'rls'"):
        simulate_auto_model(ds, budget=3, candidates=("harmonic",))
    with pytest.raises(ValueError, match="choose auto, margin or random"):
        simulate_auto_model(ds, budget=3, strategy="arls")


def test_cli_auto_writes_the_curve_with_the_model_column(tmp_path, capsys):
    ds = _two_rings(100)
    pd.DataFrame({"f1": ds.X[:, 0], "f2": ds.X[:, 1], "label": ds.y}).to_csv(tmp_path / "pool.csv", index=False)
    out = tmp_path / "curve.csv"
    code = cli.main(["simulate", str(tmp_path / "pool.csv"), "--model", "auto", "--budget", "12",
                     "--graph-k", "6", "--out", str(out)])
    _, err = capsys.readouterr()
    assert code == 0, err
    curve = pd.read_csv(out)
    assert len(curve) == 12 and "model" in curve.columns
    assert "chosen by leave-one-out" in err and "final accuracy" in err
    code = cli.main(["simulate", str(tmp_path / "pool.csv"), "--model", "auto", "--initial", "2", "--budget", "3"])
    _, err = capsys.readouterr()
    assert code == 2 and "--initial" in err


def test_app_accepts_model_auto(monkeypatch):
    from labeler.cli.graph import app_model_to_env
    monkeypatch.delenv("LABELER_MODEL", raising=False)
    app_model_to_env({"model": "auto", "knn": 10})
    import os
    assert '"auto"' in os.environ["LABELER_MODEL"]


def test_width_and_lam_are_rls_while_it_answers():
    eager = simulate_auto_model(_two_rings(), budget=14, seed=0, rule=SwitchRule(p_switch=1.0 + 1e-9, min_labels=10))
    rls = eager["model"] == "rls"
    assert eager.loc[rls, "lam"].gt(0).all() and eager.loc[~rls, "lam"].isna().all()


def test_app_default_model_leaves_a_given_environment(monkeypatch):
    import json
    import os
    from labeler.cli.graph import app_model_to_env
    from labeler.session.model_selection import DEFAULT_MODEL
    monkeypatch.delenv("LABELER_MODEL", raising=False)
    app_model_to_env({"model": None})
    assert json.loads(os.environ.get("LABELER_MODEL", "{}")).get("model", "rls") == DEFAULT_MODEL
    monkeypatch.setenv("LABELER_MODEL", '{"model": "harmonic"}')
    app_model_to_env({"model": None})
    assert json.loads(os.environ["LABELER_MODEL"]) == {"model": "harmonic"}


def test_cold_start_answers_the_first_labels_of_auto(monkeypatch):
    """The first picks of --model auto with a cold start are TypiClust's on the kernel features
    (oracle: core.coldstart.typiclust_pick on the labels so far); off on a two-class pool when
    the rule asks for three classes."""
    from core import coldstart
    from labeler.experiments.simulate import app_settings
    X, y = _blobs3()
    ds = finish("blobs3", X, y, ["a", "b"])
    chosen = app_settings(ds, 0)
    monkeypatch.setattr(coldstart, "COLD_START_LABELS", 4)
    monkeypatch.setattr(coldstart, "COLD_START_MIN_CLASSES", 3)
    curve = simulate_auto_model(ds, budget=6, seed=0, chosen=chosen, candidates=("rls", "harmonic"))
    picks = curve["index"].astype(int).tolist()
    Xk = np.asarray(chosen["X"], dtype=np.float64)
    for k in range(4):
        assert picks[k] == coldstart.typiclust_pick(Xk, picks[:k], seed=0)
    ds2 = _two_rings()
    off = simulate_auto_model(ds2, budget=4, seed=0, candidates=("rls", "harmonic"))
    none = simulate_auto_model(ds2, budget=4, seed=0, candidates=("rls", "harmonic"), cold_start=0)
    assert off["index"].tolist() == none["index"].tolist()


def _blobs3(seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0, 0], [8, 0], [0, 8]], dtype=float)
    X = np.vstack([c + rng.normal(size=(40, 2)) for c in centres])
    return X, np.repeat(np.array(["p", "q", "r"]), 40)


def test_graph_strategy_asks_vopt_of_a_graph_model_in_use(monkeypatch):
    """strategy_in_use: "auto" on a graph model becomes GRAPH_STRATEGY when it is set; RLS and
    any named strategy are left alone; the simulation's picks after a switch are VOpt's
    (oracle: query_one with "vopt" on the graph model holding the same labels)."""
    from core.kernels import Kernel, knn_graph
    from core.selection import selector as sel
    from core.strategies import query_one
    ds = _two_rings()
    X = np.asarray(ds.X, dtype=np.float64)
    graph = GraphLearner(knn_graph(X, 10, seed=0), list(ds.classes), "harmonic", random_state=0)
    rls = ActiveRLS.from_features(X, classes=list(ds.classes), kernel=Kernel("rbf", width=1.0), lam=0.1,
                                  random_state=0)
    monkeypatch.setattr(sel, "FIRST_MODEL", "rls")
    monkeypatch.setattr(sel, "GRAPH_STRATEGY", None)
    assert sel.strategy_in_use(graph, "auto") == "auto"
    monkeypatch.setattr(sel, "GRAPH_STRATEGY", "vopt")
    assert sel.strategy_in_use(graph, "auto") == "vopt"
    assert sel.strategy_in_use(graph, "margin") == "margin"
    assert sel.strategy_in_use(rls, "auto") == "auto"
    eager = SwitchRule(p_switch=1.0 + 1e-9, min_labels=10)
    curve = simulate_auto_model(ds, budget=16, seed=0, rule=eager, candidates=("rls", "harmonic"))
    switched = [n for n, _, new, _ in curve.attrs["switches"] if new == "harmonic"]
    assert switched, "the eager rule switches to harmonic on the rings"
    first = switched[0]
    idx = curve["index"].astype(int).tolist()
    y = np.asarray(ds.y)
    checked = False
    for k in range(first, len(idx)):
        if curve["model"].iloc[k - 1] != "harmonic":
            continue
        g = GraphLearner(knn_graph(np.asarray(app_X(ds), dtype=np.float64), 10, seed=0), list(ds.classes),
                         "harmonic", random_state=0)
        g.add_many(idx[:k], [y[i] for i in idx[:k]])
        assert idx[k] == query_one(g, "vopt", np.random.default_rng(0))
        checked = True
        break
    assert checked, "a pick was made while harmonic answered"


def app_X(ds):
    from labeler.experiments.simulate import app_settings
    return app_settings(ds, 0)["X"]


def test_graph_kernel_rls_candidate_answers_and_retunes_its_lam():
    """Graph-kernel RLS as a candidate: with an eager rule it takes over on two rings (the kNN
    graph's kernel separates them), then answers with its own lam; the LOO of the model in use
    after the switch is its own (the switch's label count is when it took over)."""
    ds = _two_rings()
    eager = SwitchRule(p_switch=1.0 + 1e-9, min_labels=10)
    curve = simulate_auto_model(ds, budget=16, seed=0, rule=eager, candidates=("rls", "graph-rls"))
    assert set(curve["model"]) <= {"rls", "graph-rls"}
    graph = curve["model"] == "graph-rls"
    assert graph.any() and curve.attrs["switches"][0][2] == "graph-rls"
    assert curve.loc[graph, "lam"].gt(0).all() and curve.loc[graph, "width"].isna().all()
    assert curve["accuracy"].iloc[-1] > 0.95


def test_graph_kernel_rls_is_an_optional_candidate():
    from labeler.experiments.model_select_simulate import AUTO_CANDIDATES, CANDIDATE_MODELS
    from labeler.session import model_selection
    assert AUTO_CANDIDATES == model_selection.AUTO_CANDIDATES
    assert set(AUTO_CANDIDATES) <= set(CANDIDATE_MODELS) and "graph-rls" in CANDIDATE_MODELS
    with pytest.raises(Exception, match="candidates must include 'rls'"):
        simulate_auto_model(_two_rings(), budget=3, candidates=("graph-rls",))


def test_first_model_answers_until_a_switch(monkeypatch):
    """FIRST_MODEL: the named graph candidate answers from the first label (with a rule that
    never switches, every row's accuracy is that of the harmonic function on the labels so far,
    an independent GraphLearner fitted on them); an unknown name falls back to RLS."""
    from core.kernels import knn_graph
    from core.selection import selector as sel
    ds = _two_rings(120)
    y = np.asarray(ds.y)
    monkeypatch.setattr(sel, "FIRST_MODEL", "harmonic")
    curve = simulate_auto_model(ds, budget=12, seed=0, rule=SwitchRule(p_switch=0.0), candidates=("rls", "harmonic"))
    assert set(curve["model"]) == {"harmonic"} and curve.attrs["switches"] == []
    idx = curve["index"].astype(int).tolist()
    W = knn_graph(np.asarray(app_X(ds), dtype=np.float64), 10, seed=0)
    for k in (1, 5, 12):
        g = GraphLearner(W, list(ds.classes), "harmonic", random_state=0)
        g.add_many(idx[:k], [y[i] for i in idx[:k]])
        rest = np.ones(len(y), dtype=bool)
        rest[idx[:k]] = False
        assert curve["accuracy"].iloc[k - 1] == pytest.approx(np.mean(g.predict()[rest] == y[rest]))
    monkeypatch.setattr(sel, "FIRST_MODEL", "no-such-model")
    curve = simulate_auto_model(ds, budget=3, seed=0, rule=SwitchRule(p_switch=0.0), candidates=("rls", "harmonic"))
    assert set(curve["model"]) == {"rls"}


def test_vopt_cold_start_picks_the_graph_variance_drop(monkeypatch):
    """COLD_START_KIND "vopt": the first COLD_START_LABELS picks of "auto" are the free point of
    best VOpt score of the harmonic model holding the labels so far (oracle: a fresh
    GraphLearner scored alone), on a two-class pool where TypiClust would not answer."""
    from core import coldstart
    from core.kernels import knn_graph
    from core.strategies import scores
    ds = _two_rings(120)
    y = np.asarray(ds.y)
    monkeypatch.setattr(coldstart, "COLD_START_KIND", "vopt")
    monkeypatch.setattr(coldstart, "COLD_START_LABELS", 4)
    monkeypatch.setattr(coldstart, "CLUSTER_COVER", False)
    curve = simulate_auto_model(ds, budget=6, seed=0, candidates=("rls", "harmonic"))
    idx = curve["index"].astype(int).tolist()
    W = knn_graph(np.asarray(app_X(ds), dtype=np.float64), 10, seed=0)
    for k in range(4):
        g = GraphLearner(W, list(ds.classes), "harmonic", random_state=0)
        if k:
            g.add_many(idx[:k], [y[i] for i in idx[:k]])
        s = np.array(scores(g, "vopt"), dtype=np.float64)
        s[idx[:k]] = np.inf
        assert idx[k] == int(np.argmin(s))


def test_criterion_start_takes_the_lowest_free_score():
    from core.coldstart import CriterionStart
    start = CriterionStart(2, lambda: np.array([0.5, -1.0, 0.2, -1.0]))
    assert start.active(1) and not start.active(2)
    assert start.pick([]) == 1  # ties to the lower index
    assert start.pick([1]) == 3 and start.pick([1], exclude=[3]) == 2
    with pytest.raises(ValueError, match="nothing left"):
        start.pick([0, 1, 2, 3])
    with pytest.raises(ValueError, match="n_labels"):
        CriterionStart(-1, lambda: np.zeros(2))


def test_prior_first_model_is_harmonic_on_rings_and_rls_on_overlapping_blobs():
    """The default FIRST_MODEL "prior": the two rings' 10-NN graph splits into two parts
    (lambda_2 below core.selection.prior.GRAPH_FIRST_SEPARATION), so harmonic answers from the
    first label; two overlapping Gaussian blobs do not split, so RLS answers."""
    from core.selection import selector as sel
    assert sel.FIRST_MODEL == "prior"
    rings = simulate_auto_model(_two_rings(), budget=3, seed=0, rule=SwitchRule(p_switch=0.0))
    assert set(rings["model"]) == {"harmonic"}
    rng = np.random.default_rng(1)
    y = np.arange(200) % 2
    X = rng.normal(size=(200, 2)) + y[:, None] * 1.0
    blobs = finish("blobs", X, np.where(y == 1, "b", "a"), ["f1", "f2"])
    curve = simulate_auto_model(blobs, budget=3, seed=0, rule=SwitchRule(p_switch=0.0))
    assert set(curve["model"]) == {"rls"}
