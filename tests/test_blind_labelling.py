"""The labeller does not see the answer (issue 21 item 7): the data's own label column and an
image's class folder are never shown beside the point asked about; both stay in the data set,
the initial labels and the export."""

from __future__ import annotations

import numpy as np
import pandas as pd
from PIL import Image

from labeler.data import load_dataset
from labeler.session import LabelingSession, SessionConfig
from labeler.ui.point_panel import hidden_columns, shown_id
from labeler.ui.view import feature_table


def test_a_tables_label_column_is_not_in_the_point_table(tmp_path):
    frame = pd.DataFrame({"name": [f"p{i}" for i in range(20)], "f1": np.arange(20.0),
                          "kind": ["a", "b"] * 10, "note": ["hi"] * 20})
    frame.to_csv(tmp_path / "t.csv", index=False)
    ds = load_dataset(str(tmp_path / "t.csv"), label_col="kind")
    table = feature_table(ds, 3, skip=hidden_columns(ds))
    assert "kind" not in table["feature"].tolist() and "f1" in table["feature"].tolist()
    assert "kind" in ds.frame.columns  # still there for the export


def test_a_builtins_label_column_is_hidden():
    ds = load_dataset("digits", seed=0)
    assert "label" in hidden_columns(ds)


def _image_folder(root, n=3):
    for cls in ("cat", "dog"):
        (root / cls).mkdir(parents=True)
        for k in range(n):
            Image.fromarray(np.full((8, 8), 40 * k + (cls == "dog") * 100, dtype=np.uint8)).save(
                root / cls / f"{k:03d}.png")


def test_an_images_id_is_shown_without_its_class_folder(tmp_path):
    _image_folder(tmp_path / "pets")
    ds = load_dataset(str(tmp_path / "pets"))
    for i in range(len(ds.ids)):
        full = str(ds.ids[i])
        assert "/" in full and str(ds.y[i]) in full.split("/")
        shown = shown_id(ds, i)
        assert str(ds.y[i]) not in shown.split("/") and full.endswith(shown)


def test_the_export_keeps_the_full_id_and_the_initial_labels(tmp_path):
    _image_folder(tmp_path / "pets")
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset=str(tmp_path / "pets"),
                                                                  initial_labels=2, seed=0))
    table = s.export_table()
    assert all("/" in str(v) for v in table["id"])
    labelled = table[table["label"].notna()]
    assert len(labelled) == 2 and all(str(r.id).startswith(f"{r.label}/") for r in labelled.itertuples())
