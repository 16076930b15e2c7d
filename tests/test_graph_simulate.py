"""labeler simulate --model harmonic|lgc and --model rls --transform: the loop and the command."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import labeler.experiments.graph_simulate as gs
from core.graph import HarmonicFunction, LocalGlobalConsistency, ZhuActiveLearning
from core.kernels import knn_graph
from core.learner import ActiveRLS
from core.strategies import query_one
from labeler import cli
from labeler.data.dataset import finish
from labeler.experiments.simulate import CURVE_COLUMNS


def blobs(n=90, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(2, size=n)
    X = rng.standard_normal((n, 2)) + 2.5 * y[:, None]
    labels = np.where(y == 1, "pos", "neg")
    return finish("blobs", X, labels, ["f1", "f2"])


@pytest.fixture(scope="module")
def data():
    return blobs()


def test_harmonic_margin_curve_equals_refits_on_the_labels_so_far(data):
    curve = gs.simulate_graph(data, "harmonic", "margin", budget=8, seed=2, initial=2, n_neighbors=6)
    assert tuple(curve.columns) == CURVE_COLUMNS
    W = knn_graph(data.X, 6, seed=2)
    y = np.asarray(data.y)
    L = list(curve.attrs["initial_indices"])
    for _, row in curve.iterrows():
        F = HarmonicFunction(solver="direct").fit(W, np.array(L), y[L], classes=data.classes).decision_values_
        rest = np.setdiff1d(np.arange(len(y)), L)
        top2 = np.sort(F[rest], axis=1)
        assert row["index"] == rest[np.argmin(top2[:, -1] - top2[:, -2])]  # the margin rule
        L.append(int(row["index"]))
        F = HarmonicFunction(solver="direct").fit(W, np.array(L), y[L], classes=data.classes)
        rest = np.setdiff1d(np.arange(len(y)), L)
        assert row["accuracy"] == pytest.approx(np.mean(F.predict()[rest] == y[rest]))
    assert curve["label"].isin(["pos", "neg"]).all()


def test_harmonic_arls_queries_are_zhus_argmin_refitted_from_scratch(data):
    curve = gs.simulate_graph(data, "harmonic", "arls", budget=6, seed=0, initial=3, n_neighbors=6)
    W = knn_graph(data.X, 6, seed=0)
    y = np.asarray(data.y)
    L = list(curve.attrs["initial_indices"])
    for i in curve["index"]:
        zhu = ZhuActiveLearning(eps=1e-8).fit(W, np.array(L), y[L], classes=data.classes)
        assert i == zhu.query()
        L.append(int(i))


def test_lgc_random_accuracy_matches_lgc(data):
    curve = gs.simulate_graph(data, "lgc", "random", budget=5, seed=4, initial=2, n_neighbors=6, alpha=0.9)
    W = knn_graph(data.X, 6, seed=4)
    y = np.asarray(data.y)
    L = curve.attrs["initial_indices"] + curve["index"].tolist()
    rest = np.setdiff1d(np.arange(len(y)), L)
    F = LocalGlobalConsistency(0.9).fit(W, np.array(L), y[L], classes=data.classes)
    assert curve["accuracy"].iloc[-1] == pytest.approx(np.mean(F.predict()[rest] == y[rest]))
    assert np.isnan(curve["lam"]).all() and np.isnan(curve["width"]).all()


@pytest.mark.parametrize("transform", ["gaussian_field", "improved_order"])
def test_rls_on_a_spectral_factor_is_arls_on_graph_factor(data, transform):
    curve = gs.simulate_graph(data, "rls", "arls", budget=5, seed=1, initial=4, transform=transform,
                              n_neighbors=6, rank=15, lam=0.05)
    y = np.asarray(data.y)
    init = curve.attrs["initial_indices"]
    Phi = gs.graph_factor(knn_graph(data.X, 6, seed=1), transform, 15, np.array(init), y[init], seed=1)
    learner = ActiveRLS.from_factor(Phi, classes=data.classes, lam=0.05, random_state=1).add_many(init, y[init].tolist())
    rng = np.random.default_rng(1)
    rng.choice(len(y), size=4, replace=False)  # the initial draw
    for i in curve["index"]:
        j = query_one(learner, "arls", rng)
        assert i == j
        learner.add(j, y[j])
    assert curve["lam"].eq(0.05).all()


def test_bad_combinations_are_named(data, monkeypatch):
    with pytest.raises(ValueError, match="not available with model 'lgc'"):
        gs.simulate_graph(data, "lgc", "arls", budget=5)
    with pytest.raises(ValueError, match="model 'rls' only"):
        gs.simulate_graph(data, "harmonic", "margin", transform="diffusion")
    with pytest.raises(ValueError, match="needs a spectral transform"):
        gs.simulate_graph(data, "rls", "arls")
    with pytest.raises(ValueError, match="--initial"):
        gs.simulate_graph(data, "rls", "arls", transform="order", budget=2, rank=10)
    with pytest.raises(ValueError, match="--graph-rank"):
        gs.simulate_graph(data, "rls", "arls", transform="diffusion", budget=2, rank=90)
    with pytest.raises(ValueError, match="budget"):
        gs.simulate_graph(data, "harmonic", "margin", budget=90)
    monkeypatch.setattr(gs, "ZHU_MAX_POINTS", 50)
    with pytest.raises(ValueError, match="gaussian_field"):
        gs.simulate_graph(data, "harmonic", "arls", budget=2)


# --------------------------------------------------------------------------- the command
def write_csv(path, n=90, seed=0):
    ds = blobs(n, seed)
    pd.DataFrame({"f1": ds.X[:, 0], "f2": ds.X[:, 1], "label": ds.y}).to_csv(path, index=False)


def test_cli_harmonic_writes_the_curve(tmp_path, capsys):
    write_csv(tmp_path / "pool.csv")
    out = tmp_path / "curve.csv"
    code = cli.main(["simulate", str(tmp_path / "pool.csv"), "--model", "harmonic", "--strategy", "margin",
                     "--budget", "6", "--initial", "2", "--graph-k", "6", "--out", str(out)])
    _, err = capsys.readouterr()
    assert code == 0, err
    curve = pd.read_csv(out)
    assert tuple(curve.columns) == CURVE_COLUMNS and len(curve) == 6
    assert "harmonic function" in err and "final accuracy" in err


def test_cli_rls_transform_and_report(tmp_path, capsys):
    write_csv(tmp_path / "pool.csv")
    out, report = tmp_path / "c.csv", tmp_path / "c.html"
    code = cli.main(["simulate", str(tmp_path / "pool.csv"), "--transform", "diffusion", "--graph-rank", "10",
                     "--graph-k", "6", "--budget", "4", "--lam", "0.2", "--out", str(out), "--report", str(report)])
    _, err = capsys.readouterr()
    assert code == 0, err
    assert pd.read_csv(out)["lam"].eq(0.2).all()
    assert "diffusion spectral kernel" in report.read_text(encoding="utf-8")


@pytest.mark.parametrize("extra,message", [
    (["--model", "lgc", "--strategy", "arls"], "not available with model 'lgc'"),
    (["--model", "lgc", "--strategy", "margin", "--alpha", "1.5"], "--alpha must be below 1"),
    (["--model", "harmonic", "--validation", "VAL"], "transductive"),
    (["--model", "harmonic", "--transform", "order"], "model 'rls' only"),
])
def test_cli_errors_exit_2_with_the_fix(tmp_path, capsys, extra, message):
    write_csv(tmp_path / "pool.csv")
    write_csv(tmp_path / "val.csv", seed=1)
    extra = [str(tmp_path / "val.csv") if e == "VAL" else e for e in extra]
    out = tmp_path / "never.csv"
    code = cli.main(["simulate", str(tmp_path / "pool.csv"), "--budget", "3", "--out", str(out)] + extra)
    _, err = capsys.readouterr()
    assert code == 2 and message in err and "Traceback" not in err
    assert not out.exists()



def test_auto_is_zhus_rule_while_a_class_lacks_labels_then_margin(data):
    # the default strategy on graph models (core/criteria/auto.py): expected risk (Zhu's rule)
    # for the first 10 labels, then margin; LGC has no expected-risk rule: VOpt in its place
    # (core.strategies.cold_strategy), then margin
    from core.criteria.auto import decide

    auto = gs.simulate_graph(data, "harmonic", "auto", budget=24, seed=0, initial=2, n_neighbors=6)
    zhu = gs.simulate_graph(data, "harmonic", "arls", budget=24, seed=0, initial=2, n_neighbors=6)
    assert decide([0] * len(data.classes)).strategy == "arls"
    assert auto["index"].iloc[:8].tolist() == zhu["index"].iloc[:8].tolist()  # 2 + 8 labels: still cold
    assert auto["index"].tolist() != zhu["index"].tolist()  # warm later: margin took over
    lgc_auto = gs.simulate_graph(data, "lgc", "auto", budget=12, seed=4, initial=2, n_neighbors=6, alpha=0.9)
    lgc_vopt = gs.simulate_graph(data, "lgc", "vopt", budget=12, seed=4, initial=2, n_neighbors=6, alpha=0.9)
    assert lgc_auto["index"].iloc[:8].tolist() == lgc_vopt["index"].iloc[:8].tolist()
    assert lgc_auto["index"].tolist() != lgc_vopt["index"].tolist()  # margin after 10 labels


def test_harmonic_auto_above_zhus_limit_runs_vopt_as_a_session_does(data, monkeypatch):
    """Above the exact rule's limit a session's harmonic "auto" asks VOpt while cold
    (core.strategies.cold_strategy: no expected-risk rule); the simulation does the same
    instead of refusing."""
    monkeypatch.setattr(gs, "ZHU_MAX_POINTS", 50)  # the pool has 90 points
    auto = gs.simulate_graph(data, "harmonic", "auto", budget=5, seed=2, initial=2)
    vopt = gs.simulate_graph(data, "harmonic", "vopt", budget=5, seed=2, initial=2)
    assert auto["index"].tolist() == vopt["index"].tolist()
    assert auto.attrs["strategy"] == "auto"
