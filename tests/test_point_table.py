"""The point panel's table shows the point's values: an NPZ's features too (its table holds
only ids and labels), never the answer, and never numbers derived from a text."""

from __future__ import annotations

import numpy as np
import pandas as pd

from labeler.data import load_dataset
from labeler.ui.point_panel import hidden_columns
from labeler.ui.view import feature_table


def _panel_table(ds, index):
    table = feature_table(ds, index, skip=hidden_columns(ds))
    return dict(zip(table["feature"], table["value"]))


def test_an_npz_point_shows_its_features_and_not_its_label(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = np.array(["a", "b", "c"] * 10)
    np.savez(tmp_path / "pool.npz", X=X, y=y, ids=np.arange(100, 130))
    ds = load_dataset(str(tmp_path / "pool.npz"))
    shown = _panel_table(ds, 4)
    assert shown["id"] == "104"
    assert [shown[f"x{j}"] for j in range(3)] == [f"{v:.4g}" for v in X[4]]
    assert "label" not in shown and "c" not in shown.values()  # the answer stays hidden


def test_a_table_lists_its_columns_once_and_a_text_table_no_components(tmp_path):
    frame = pd.DataFrame({"id": range(40), "f1": np.arange(40.0), "f2": np.ones(40),
                          "label": ["a", "b"] * 20})
    frame.to_csv(tmp_path / "t.csv", index=False)
    shown = feature_table(load_dataset(str(tmp_path / "t.csv")), 3)
    assert shown["feature"].tolist() == ["id", "f1", "f2", "label"]  # no second f1, f2
    words = ["rain cloud wind storm", "bread oven flour bake", "goal match team score"]
    texts = pd.DataFrame({"id": range(60), "text": [f"{words[i % 3]} {i}" for i in range(60)],
                          "label": [str(i % 3) for i in range(60)]})
    texts.to_csv(tmp_path / "s.csv", index=False)
    ds = load_dataset(str(tmp_path / "s.csv"))
    assert ds.params.get("text_features")
    assert _panel_table(ds, 2) == {"id": "2"}  # the text is shown on its own, no SVD numbers


def test_a_filled_missing_value_shows_the_fill_not_nan(tmp_path):
    frame = pd.DataFrame({"id": [f"T{i:05d}" for i in range(20)], "f1": np.arange(20.0),
                          "f2": np.arange(20.0) * 0.5 + 0.03, "label": ["a", "b"] * 10})
    frame.loc[5, "f2"] = np.nan
    frame.to_csv(tmp_path / "gaps.csv", index=False)
    ds = load_dataset(str(tmp_path / "gaps.csv"), missing="mean")
    fill = float(np.nanmean(frame["f2"]))
    shown = _panel_table(ds, 5)
    assert shown["f2"] == f"{fill:.4g} (filled: mean)"
    assert "nan" not in " ".join(shown.values()).lower()
    assert _panel_table(ds, 6)["f2"] == f"{frame.loc[6, 'f2']:.4g}"  # a value of its own: unmarked
