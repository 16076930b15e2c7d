"""Tests of labeler/export.py: files are read back and compared cell by cell."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest
from PIL import Image

from labeler.export import (
    ExportError,
    infer_format,
    label_table,
    write_image_zip,
    write_table,
)
from labeler.store import LabelRecord

N = 6
IDS = np.array([f"p{i}" for i in range(N)], dtype=object)
RECORDS = [
    LabelRecord(4, "cat", "queried", 1, 1, "2024-05-01T10:00:00.000001+00:00"),
    LabelRecord(0, "dog", "chosen", 2, 2, "2024-05-01T10:00:01.500000+00:00"),
    LabelRecord(2, "cat", "accepted", 3, 3, "2024-05-01T10:00:02.000000+00:00"),
]
X = np.random.default_rng(0).normal(size=(N, 2))
ORIGINAL = pd.DataFrame({"x0": X[:, 0], "x1": X[:, 1], "label": list("abcdef"), "n": np.arange(N) * 10})
PRED = np.array(["dog", "cat", "cat", "dog", "cat", "dog"], dtype=object)
CONF = np.array([0.9, 0.6, 0.7, 0.5500000000000001, 1 / 3 + 0.5, 0.75])


def expected_rows(with_pred):
    """The table written out, as plain Python rows, built without label_table()."""
    by_index = {r.index: (k + 1, r) for k, r in enumerate(RECORDS)}
    order = range(N) if with_pred else [r.index for r in RECORDS]
    rows = []
    for i in order:
        k, r = by_index.get(i, (None, None))
        row = {
            "id": f"p{i}",
            "label": r.label if r else None,
            "source": r.source if r else None,
            "origin": {"queried": "user", "chosen": "user", "accepted": "bulk-guess"}[r.source] if r else None,
            "order": k,
            "timestamp": r.timestamp if r else None,
        }
        if with_pred:
            row["predicted"] = PRED[i]
            row["confidence"] = float(CONF[i])
        row.update({"x0": float(X[i, 0]), "x1": float(X[i, 1]), "label_original": "abcdef"[i], "n": 10 * i})
        rows.append(row)
    return rows


def table(with_pred):
    kw = {"predicted": PRED, "confidence": CONF} if with_pred else {}
    return label_table(IDS, RECORDS, original=ORIGINAL, **kw)


def blank(v):
    return v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA


def check_rows(got_rows, want_rows):
    assert len(got_rows) == len(want_rows)
    for got, want in zip(got_rows, want_rows):
        assert list(got) == list(want)
        for key, w in want.items():
            g = got[key]
            if w is None:
                assert blank(g), (key, g)
            else:
                assert g == w, (key, g, w)  # exact, floats included


@pytest.mark.parametrize("with_pred", [False, True])
def test_csv_round_trip(tmp_path, with_pred):
    path = write_table(table(with_pred), tmp_path / "out.csv")
    back = pd.read_csv(path, keep_default_na=False, na_values=[""])
    rows = [{k: (None if blank(v) else (v.item() if hasattr(v, "item") else v)) for k, v in r.items()}
            for r in back.to_dict("records")]
    for r in rows:
        r["order"] = None if r["order"] is None else int(r["order"])
    check_rows(rows, expected_rows(with_pred))


@pytest.mark.parametrize("with_pred", [False, True])
def test_jsonl_round_trip(tmp_path, with_pred):
    path = write_table(table(with_pred), tmp_path / "out.jsonl")
    lines = path.read_text(encoding="utf-8").splitlines()
    check_rows([json.loads(line) for line in lines], expected_rows(with_pred))


@pytest.mark.parametrize("with_pred", [False, True])
def test_parquet_round_trip(tmp_path, with_pred):
    path = write_table(table(with_pred), tmp_path / "out.parquet")
    tab = pq.read_table(path)
    assert str(tab.schema.field("timestamp").type) == "timestamp[us, tz=UTC]"
    assert str(tab.schema.field("order").type) == "int64"
    rows = tab.to_pylist()
    for r in rows:
        if r["timestamp"] is not None:
            r["timestamp"] = r["timestamp"].isoformat(timespec="microseconds")
    check_rows(rows, expected_rows(with_pred))


def test_features_without_frame_and_numeric_ids(tmp_path):
    orig = pd.DataFrame(X, columns=["f0", "f1"])
    t = label_table(np.arange(N) * 7, RECORDS[:2], original=orig)
    lines = write_table(t, tmp_path / "o.jsonl").read_text().splitlines()
    got = [json.loads(s) for s in lines]
    assert [g["id"] for g in got] == [28, 0]
    assert [g["f0"] for g in got] == [X[4, 0], X[0, 0]]


def test_empty_export_has_header(tmp_path):
    t = label_table(IDS, [], original=ORIGINAL)
    back = pd.read_csv(write_table(t, tmp_path / "e.csv"))
    assert len(back) == 0
    assert list(back.columns) == ["id", "label", "source", "origin", "order", "timestamp", "x0", "x1", "label_original", "n"]


def images(n=N, shape=(5, 4)):
    rng = np.random.default_rng(1)
    return rng.integers(0, 256, size=(n, *shape), dtype=np.uint8)


@pytest.mark.parametrize("rgb", [False, True])
def test_zip_one_folder_per_class(tmp_path, rgb):
    imgs = images(shape=(5, 4, 3) if rgb else (5, 4))
    path = write_image_zip(table(False), tmp_path / "out.zip", images=imgs)
    with zipfile.ZipFile(path) as zf:
        names = sorted(zf.namelist())
        assert names == ["cat/p2.png", "cat/p4.png", "dog/p0.png", "labels.csv"]
        for name, i in (("cat/p4.png", 4), ("dog/p0.png", 0), ("cat/p2.png", 2)):
            with Image.open(io.BytesIO(zf.read(name))) as im:
                assert im.format == "PNG"
                assert np.array_equal(np.asarray(im), imgs[i])
        manifest = pd.read_csv(io.BytesIO(zf.read("labels.csv")))
        assert list(manifest["file"]) == ["cat/p4.png", "dog/p0.png", "cat/p2.png"]
        assert list(manifest["id"]) == ["p4", "p0", "p2"]


def test_zip_from_image_paths_and_unsafe_names(tmp_path):
    imgs = images()
    paths = []
    for i, img in enumerate(imgs):
        p = tmp_path / f"img{i}.png"
        Image.fromarray(img).save(p)
        paths.append(str(p))
    recs = [LabelRecord(1, "a/b", "queried", 1, 1, "t"), LabelRecord(3, "a_b", "queried", 2, 2, "t"),
            LabelRecord(5, "..", "chosen", 3, 3, "t")]
    ids = np.array(["x", "../evil", "x", "x", "x", "x"], dtype=object)
    t = label_table(ids, recs)
    path = write_image_zip(t, tmp_path / "o.zip", image_paths=paths)
    with zipfile.ZipFile(path) as zf:
        names = zf.namelist()
        assert names == ["labels.csv", "a_b/evil.png", "a_b~2/x.png", "___/x.png"]
        for n in names:
            assert not n.startswith("/") and "/../" not in f"/{n}"
        with Image.open(io.BytesIO(zf.read([n for n in names if n.startswith("a_b~2/")][0]))) as im:
            assert np.array_equal(np.asarray(im), imgs[3])


def test_zip_without_images_is_a_clear_error(tmp_path):
    with pytest.raises(ExportError, match="no images.*CSV"):
        write_image_zip(table(False), tmp_path / "o.zip")
    assert list(tmp_path.iterdir()) == []


def test_unknown_format_and_suffix(tmp_path):
    with pytest.raises(ExportError, match="Unknown export format 'xlsx'.*csv, jsonl, parquet, zip"):
        write_table(table(False), tmp_path / "o.xlsx", format="xlsx")
    with pytest.raises(ExportError, match="Cannot tell the export format"):
        write_table(table(False), tmp_path / "o.txt")
    with pytest.raises(ExportError, match="needs images"):
        write_table(table(False), tmp_path / "o.zip")
    assert infer_format("a.NDJSON") == "jsonl" and infer_format("a.bin", "Parquet") == "parquet"
    assert list(tmp_path.iterdir()) == []


def test_unwritable_paths(tmp_path, unwritable_folder):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        write_table(table(False), tmp_path / "missing" / "o.csv")
    (tmp_path / "afile").write_text("x")
    with pytest.raises(NotADirectoryError, match="not a directory"):
        write_table(table(False), tmp_path / "afile" / "o.csv")
    with pytest.raises(IsADirectoryError, match="is a directory"):
        write_table(table(False), tmp_path, format="csv")
    with pytest.raises(PermissionError, match="not writable"):
        write_table(table(False), unwritable_folder / "o.csv")


def test_failure_leaves_no_partial_file_and_keeps_old_one(tmp_path, monkeypatch):
    path = tmp_path / "o.zip"
    path.write_bytes(b"previous export")
    imgs = images().astype(np.float32)  # not uint8: fails after the zip was started
    with pytest.raises(ExportError, match="uint8"):
        write_image_zip(table(False), path, images=imgs)
    assert path.read_bytes() == b"previous export"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.zip"]

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(pd.DataFrame, "to_csv", boom)
    with pytest.raises(OSError, match="disk full"):
        write_table(table(False), tmp_path / "n.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["o.zip"]


def test_table_validation():
    with pytest.raises(ExportError, match="rows"):
        label_table(IDS, RECORDS, original=ORIGINAL.iloc[:3])
    with pytest.raises(ExportError, match="both"):
        label_table(IDS, RECORDS, predicted=PRED)


def test_zip_names_image_folder_ids_by_their_file_stem(tmp_path):
    """Ids that are relative image paths keep only the file's stem under the class folder."""
    imgs = images()
    recs = [LabelRecord(0, "circle", "queried", 1, 1, "t"), LabelRecord(1, "square", "queried", 2, 2, "t")]
    ids = np.array(["circle/circle_09.png", "shapes\\sq.JPEG", "x", "x", "x", "x"], dtype=object)
    path = write_image_zip(label_table(ids, recs), tmp_path / "o.zip", images=imgs)
    with zipfile.ZipFile(path) as zf:
        assert zf.namelist() == ["labels.csv", "circle/circle_09.png", "square/sq.png"]


@pytest.mark.parametrize("with_pred", [False, True])
def test_the_export_tab_names_the_columns_the_file_has_in_order(with_pred):
    """The Export tab's caption listed "source, order, timestamp": the file also has ``origin``
    (and ``predicted``, ``confidence`` with predictions); it names every column before the
    original ones, in the file's order, and every source and origin value."""
    import re

    from labeler.export import ORIGINS
    from labeler.store import LABEL_SOURCES
    from labeler.ui.export_panel import columns_caption

    caption = columns_caption(with_pred)
    columns = list(table(with_pred).columns)
    own = columns[:len(columns) - len(ORIGINAL.columns)]  # the original columns come last
    named = re.findall(r"(?:Columns: |\), |, )([a-z]+)\b", caption)
    assert named[:len(own)] == own
    assert all(s in caption for s in LABEL_SOURCES) and all(o in caption for o in ORIGINS.values())
    assert caption.endswith("then the original columns.")
