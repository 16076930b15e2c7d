"""``labeler suspects`` and ``labeler simulate --predictions`` (issue 21)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from core.learner import ActiveRLS
from labeler import cli
from labeler.data import load_dataset
from labeler.experiments.suspects import fit_all_labels, suspect_table


def write_blobs(path: Path, n=120, seed=0, flips=(), id_col=True, sep=3.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(2, size=n)
    X = rng.standard_normal((n, 2)) + sep * y[:, None]
    label = np.where(y == 1, "pos", "neg")
    for i in flips:
        label[i] = "neg" if label[i] == "pos" else "pos"
    frame = pd.DataFrame({"f1": X[:, 0], "f2": X[:, 1], "label": label})
    if id_col:
        frame.insert(0, "id", [f"row{i}" for i in range(n)])
    frame.to_csv(path, index=False)
    return frame


def run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_suspects_ranks_the_flipped_labels_first(tmp_path, capsys):
    flips = (3, 17, 60)
    write_blobs(tmp_path / "t.csv", flips=flips, sep=5.0)  # separated: only the flips are wrong
    code, _, err = run(["suspects", str(tmp_path / "t.csv"), "--out", str(tmp_path / "s.csv")], capsys)
    assert code == 0, err
    table = pd.read_csv(tmp_path / "s.csv")
    assert list(table.columns) == ["id", "label", "suggested", "score", "rank"]
    assert len(table) == 120 and table["rank"].tolist() == list(range(1, 121))
    assert np.all(np.diff(table["score"]) <= 0) and table["score"].between(0, 1).all()
    assert set(table["id"][:3]) == {f"row{i}" for i in flips}
    assert (table["label"][:3] != table["suggested"][:3]).all()
    assert "most suspect" in err


def test_suspects_with_a_graph_model(tmp_path, capsys):
    write_blobs(tmp_path / "t.csv", flips=(5,), sep=5.0)
    code, _, err = run(["suspects", str(tmp_path / "t.csv"), "--model", "harmonic", "--quiet",
                        "--out", str(tmp_path / "s.csv")], capsys)
    assert code == 0, err
    table = pd.read_csv(tmp_path / "s.csv")
    assert table["id"][0] == "row5"


@pytest.mark.parametrize("model", ["lgc", "poisson"])
def test_suspects_with_every_graph_model_the_app_offers(tmp_path, capsys, model):
    write_blobs(tmp_path / "t.csv", flips=(5,), sep=5.0)
    code, _, err = run(["suspects", str(tmp_path / "t.csv"), "--model", model, "--quiet",
                        "--out", str(tmp_path / "s.csv")], capsys)
    assert code == 0, err
    table = pd.read_csv(tmp_path / "s.csv")
    assert len(table) == 120 and table["id"][0] == "row5"


def test_suspects_refuses_model_auto_naming_the_choices(tmp_path, capsys):
    write_blobs(tmp_path / "t.csv")
    code, _, err = run(["suspects", str(tmp_path / "t.csv"), "--model", "auto",
                        "--out", str(tmp_path / "s.csv")], capsys)
    assert code == 2 and "Choose one of rls, harmonic, lgc, poisson" in err
    assert not (tmp_path / "s.csv").exists()


def test_suspect_scores_come_from_refits_without_the_point(tmp_path):
    """Oracle: each row's LOO decision values are those of the model refitted without it."""
    write_blobs(tmp_path / "t.csv", n=40, flips=(2,), sep=5.0)
    ds = load_dataset(str(tmp_path / "t.csv"))
    learner, classes = fit_all_labels(ds, "rls", 0, tune=False)
    F = learner.loo_decision_values()
    order = list(learner.labels)
    kernel, lam = learner.kernel, learner.lam
    from labeler.experiments.simulate import app_settings

    X = app_settings(ds, 0)["X"]
    for k in (0, 2, 11, 39):
        j = order[k]
        # the LOO of docs/algorithms.md §1 keeps the class weights of the full fit: the refit uses them too
        refit = ActiveRLS.from_features(X, classes=learner.classes, kernel=kernel, lam=lam,
                                        weighting=learner.class_weights)
        keep = [i for i in order if i != j]
        refit.add_many(keep, [learner.labels[i] for i in keep])
        assert np.allclose(refit.decision_values[j], F[k], atol=1e-8)
    table = suspect_table(learner, classes, ds.ids)
    assert table["id"][0] == "row2"


@pytest.mark.parametrize("case, args, message", [
    ("no label", ["--label-col", ""], "no label column"),
    ("one class", [], "every point has the label"),
    ("value per row", ["--label-col", "name"], "different value in every"),
])
def test_suspects_refuses_data_it_cannot_rank(tmp_path, capsys, case, args, message):
    frame = write_blobs(tmp_path / "t.csv", n=30, id_col=False)
    if case == "one class":
        frame["label"] = "pos"
    if case == "value per row":
        frame["name"] = [f"n{i}" for i in range(30)]
    frame.to_csv(tmp_path / "t.csv", index=False)
    out = tmp_path / "s.csv"
    code, _, err = run(["suspects", str(tmp_path / "t.csv"), "--out", str(out), *args], capsys)
    assert code == 2 and message in err and "\n" not in err.strip().splitlines()[-1]
    assert not out.exists()


def test_suspects_needs_a_table(tmp_path, capsys):
    code, _, err = run(["suspects", "moons", "--out", str(tmp_path / "s.csv")], capsys)
    assert code == 2 and "CSV or Parquet table" in err


def test_simulate_predictions_on_the_pool_and_on_a_validation_file(tmp_path, capsys):
    write_blobs(tmp_path / "t.csv", n=80, seed=1)
    write_blobs(tmp_path / "v.csv", n=50, seed=2)
    pred = tmp_path / "p.csv"
    code, _, err = run(["simulate", str(tmp_path / "t.csv"), "--budget", "12", "--quiet", "--out",
                        str(tmp_path / "c.csv"), "--predictions", str(pred)], capsys)
    assert code == 0, err
    table = pd.read_csv(pred)
    curve = pd.read_csv(tmp_path / "c.csv")
    assert list(table.columns) == ["id", "label", "predicted", "confidence"]
    assert len(table) == 80 - 12 and not set(table["id"]) & {f"row{i}" for i in curve["index"]}
    assert table["confidence"].between(0.5, 1).all()  # binary: the predicted class is the likelier
    acc = float((table["label"] == table["predicted"]).mean())
    assert acc == pytest.approx(curve["accuracy"].iloc[-1])
    code, _, err = run(["simulate", str(tmp_path / "t.csv"), "--budget", "12", "--quiet", "--out",
                        str(tmp_path / "c.csv"), "--validation", str(tmp_path / "v.csv"), "--predictions",
                        str(pred)], capsys)
    assert code == 0, err
    table = pd.read_csv(pred)
    curve = pd.read_csv(tmp_path / "c.csv")
    assert len(table) == 50 and table["id"].tolist() == [f"row{i}" for i in range(50)]
    assert float((table["label"] == table["predicted"]).mean()) == pytest.approx(curve["accuracy"].iloc[-1])


def test_simulate_predictions_of_a_graph_model(tmp_path, capsys):
    write_blobs(tmp_path / "t.csv", n=80, seed=1)
    pred = tmp_path / "p.csv"
    code, _, err = run(["simulate", str(tmp_path / "t.csv"), "--model", "harmonic", "--budget", "10", "--quiet",
                        "--out", str(tmp_path / "c.csv"), "--predictions", str(pred)], capsys)
    assert code == 0, err
    table = pd.read_csv(pred)
    assert len(table) == 70 and set(table["predicted"]) <= {"pos", "neg"}
    curve = pd.read_csv(tmp_path / "c.csv")
    assert float((table["label"] == table["predicted"]).mean()) == pytest.approx(curve["accuracy"].iloc[-1])
