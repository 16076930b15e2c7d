"""Tests for the file loaders of labeler.data: CSV, Parquet, NPZ, image folders, and their errors."""

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from PIL import Image

from labeler.data import DatasetError, load_dataset

SAMPLE_DATA_DIR = Path(__file__).resolve().parents[1] / "sample_data"


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    n = 40
    return pd.DataFrame({
        "name": [f"p{i:03d}" for i in range(n)],
        "a": rng.normal(size=n),
        "b": rng.integers(0, 5, size=n),
        "c": rng.normal(size=n),
        "x": rng.normal(size=n),
        "y": rng.normal(size=n),
        "label": np.where(np.arange(n) % 3 == 0, "cat", "dog"),
    })


def test_csv_columns_roles(tmp_path, table):
    path = tmp_path / "pets.csv"
    table.to_csv(path, index=False)
    d = load_dataset(path, id_col="name")
    assert d.name == "pets"
    assert d.feature_names == ["a", "b", "c"]
    assert_allclose(d.X, table[["a", "b", "c"]].to_numpy(dtype=float), rtol=1e-15)
    assert_allclose(d.layout, table[["x", "y"]].to_numpy(), rtol=1e-15)
    assert d.classes == ["cat", "dog"]
    assert_array_equal(d.y, table["label"].to_numpy())
    assert_array_equal(d.ids, table["name"].to_numpy())
    assert list(d.frame.columns) == list(table.columns)
    assert d.images is None and d.X_val is None


def test_csv_without_label_and_layout(tmp_path, table):
    path = tmp_path / "t.csv"
    table.drop(columns=["label", "name"]).to_csv(path, index=False)
    d = load_dataset(path, layout_cols=None)
    assert d.y is None and d.classes == [] and d.layout is None
    assert d.feature_names == ["a", "b", "c", "x", "y"]
    assert_array_equal(d.ids, np.arange(40))


def test_csv_custom_label_and_feature_cols(tmp_path, table):
    path = tmp_path / "t.csv"
    table.rename(columns={"label": "species"}).to_csv(path, index=False)
    d = load_dataset(path, label_col="species", feature_cols=["a", "c"])
    assert d.feature_names == ["a", "c"] and d.classes == ["cat", "dog"]


def test_csv_seeded_subset(tmp_path, table):
    path = tmp_path / "t.csv"
    table.drop(columns=["name"]).to_csv(path, index=False)
    d1 = load_dataset(path, n=10, seed=4)
    d2 = load_dataset(path, n=10, seed=4)
    assert_array_equal(d1.ids, d2.ids)
    assert len(d1.ids) == 10 and (np.diff(d1.ids) > 0).all()
    assert_allclose(d1.X, table[["a", "b", "c"]].to_numpy(dtype=float)[d1.ids])


def test_sample_moons_csv_is_its_own_layout():
    d = load_dataset(SAMPLE_DATA_DIR / "moons.csv")
    assert d.X.shape == (300, 2) and d.feature_names == ["x", "y"]
    assert_array_equal(d.layout, d.X)
    assert d.classes == [0, 1]
    ref = load_dataset("moons", n=300, seed=0)
    assert_allclose(d.X, ref.X, atol=5e-7)  # written with 6 decimals
    assert_array_equal(d.y, ref.y)


def _write_pngs(folder: Path, specs):
    """specs: list of (relative path, array) written as PNG."""
    for rel, arr in specs:
        p = folder / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(arr).save(p)


def test_parquet_with_image_arrays(tmp_path):
    rng = np.random.default_rng(1)
    imgs = rng.integers(0, 256, size=(6, 4, 5), dtype=np.uint8)
    frame = pd.DataFrame({
        "f1": rng.normal(size=6),
        "label": [0, 1, 0, 1, 0, 1],
        "pic": [img.tolist() for img in imgs],
    })
    path = tmp_path / "d.parquet"
    frame.to_parquet(path, engine="pyarrow")
    d = load_dataset(path, image_col="pic")
    assert d.feature_names == ["f1"]
    assert_array_equal(d.images, imgs)
    assert d.image_paths is None
    # without numeric features the pixels are the features
    frame.drop(columns=["f1"]).to_parquet(path, engine="pyarrow")
    d = load_dataset(path, image_col="pic")
    assert d.X.shape == (6, 20)
    assert_allclose(d.X, imgs.reshape(6, -1) / 255.0)


def test_parquet_with_image_paths(tmp_path):
    rng = np.random.default_rng(2)
    imgs = [rng.integers(0, 256, size=(8, 8, 3), dtype=np.uint8) for _ in range(4)]
    _write_pngs(tmp_path, [(f"img/{i}.png", im) for i, im in enumerate(imgs)])
    pd.DataFrame({"file": [f"img/{i}.png" for i in range(4)], "label": ["a", "b", "a", "b"]}).to_parquet(
        tmp_path / "d.parquet")
    d = load_dataset(tmp_path / "d.parquet", image_col="file")
    assert d.images.shape == (4, 8, 8, 3)
    assert_array_equal(d.images, np.stack(imgs))
    assert d.image_paths == [str((tmp_path / f"img/{i}.png").resolve()) for i in range(4)]
    assert d.X.shape == (4, 192) and d.feature_names[:3] == ["px_0_0_r", "px_0_0_g", "px_0_0_b"]


def test_npz_full(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(12, 3))
    y = np.array(["u", "v"] * 6)
    images = rng.integers(0, 256, size=(12, 5, 5), dtype=np.uint8)
    layout = rng.normal(size=(12, 2))
    ids = np.array([f"id{i}" for i in range(12)])
    np.savez(tmp_path / "d.npz", X=X, y=y, images=images, layout=layout, ids=ids)
    d = load_dataset(tmp_path / "d.npz")
    assert_array_equal(d.X, X)
    assert_array_equal(d.y, y) and d.classes == ["u", "v"]
    assert_array_equal(d.images, images)
    assert_array_equal(d.layout, layout)
    assert_array_equal(d.ids, ids)


def test_npz_images_only_and_float_pixels(tmp_path):
    rng = np.random.default_rng(4)
    images = rng.uniform(size=(5, 3, 3))
    np.savez_compressed(tmp_path / "d.npz", images=images)
    d = load_dataset(tmp_path / "d.npz")
    assert_array_equal(d.images, np.rint(images * 255).astype(np.uint8))
    assert d.X.shape == (5, 9) and d.y is None


def test_npz_object_array_refused(tmp_path):
    np.savez(tmp_path / "d.npz", X=np.ones((3, 2)), y=np.array([{"a": 1}, None, 3], dtype=object))
    with pytest.raises(DatasetError, match="pickle"):
        load_dataset(tmp_path / "d.npz")


def test_npz_inconsistent_rows(tmp_path):
    np.savez(tmp_path / "d.npz", X=np.ones((3, 2)), y=np.array([0, 1]))
    with pytest.raises(DatasetError, match="3 rows"):
        load_dataset(tmp_path / "d.npz")


def test_image_folder_with_classes(tmp_path):
    rng = np.random.default_rng(5)
    specs = [(f"{cls}/{i}.png", rng.integers(0, 256, size=(6, 7), dtype=np.uint8))
             for cls in ("cats", "dogs") for i in range(3)]
    _write_pngs(tmp_path / "pics", specs)
    d = load_dataset(tmp_path / "pics")
    assert d.name == "pics"
    assert d.classes == ["cats", "dogs"]
    assert_array_equal(d.y, ["cats"] * 3 + ["dogs"] * 3)
    assert d.images.shape == (6, 6, 7)  # grayscale kept 2-D
    assert_array_equal(d.images, np.stack([a for _, a in specs]))
    assert_allclose(d.X, d.images.reshape(6, -1) / 255.0)
    assert d.ids.tolist() == [s for s, _ in specs]
    assert list(d.frame.columns) == ["path", "label"]


def test_image_folder_unlabelled_rgb_and_resize(tmp_path):
    rng = np.random.default_rng(6)
    _write_pngs(tmp_path, [
        ("a.png", rng.integers(0, 256, size=(10, 10, 3), dtype=np.uint8)),
        ("b.png", rng.integers(0, 256, size=(10, 10, 3), dtype=np.uint8)),
        ("c.png", rng.integers(0, 256, size=(20, 30, 3), dtype=np.uint8)),
    ])
    Image.fromarray(rng.integers(0, 256, size=(10, 10, 3), dtype=np.uint8)).save(tmp_path / "d.jpg")
    with pytest.warns(UserWarning, match=r"resized 1 of 4 image\(s\) to 10x10 pixels.*2 sizes.*image_size="):
        d = load_dataset(tmp_path)
    assert d.y is None
    assert d.images.shape == (4, 10, 10, 3)  # most common size, RGB kept
    c = np.asarray(Image.open(tmp_path / "c.png").convert("RGB").resize((10, 10), Image.Resampling.LANCZOS))
    assert_array_equal(d.images[2], c)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an explicit image_size is not a silent repair
        g = load_dataset(tmp_path, color="gray", image_size=(4, 5))
    assert g.images.shape == (4, 4, 5)
    with pytest.warns(UserWarning, match=r"resized 4 of 4 .* to 5x5 .*max_image_side=5"):
        big = load_dataset(tmp_path, max_image_side=5)
    assert big.images.shape[1:3] == (5, 5)


def test_image_folder_of_one_size_within_the_limit_loads_without_warning(tmp_path):
    rng = np.random.default_rng(7)
    _write_pngs(tmp_path, [(f"{k}.png", rng.integers(0, 256, size=(8, 6), dtype=np.uint8)) for k in range(3)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        d = load_dataset(tmp_path)
    assert d.images.shape == (3, 8, 6)


def test_large_images_are_shrunk_with_a_warning(tmp_path):
    rng = np.random.default_rng(8)
    _write_pngs(tmp_path, [(f"{k}.png", rng.integers(0, 256, size=(100, 50), dtype=np.uint8)) for k in range(2)])
    with pytest.warns(UserWarning, match=r"resized 2 of 2 image\(s\) to 64x32 pixels.*max_image_side=64"):
        d = load_dataset(tmp_path)
    assert d.images.shape == (2, 64, 32)


def test_sample_shapes_folder():
    d = load_dataset(SAMPLE_DATA_DIR / "shapes")
    assert d.classes == ["circle", "square"]
    assert d.images.shape == (40, 24, 24) and d.X.shape == (40, 576)
    assert np.bincount(np.unique(d.y, return_inverse=True)[1]).tolist() == [20, 20]


def test_sample_shapes_are_regenerated_identically(tmp_path, monkeypatch):
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_samples", SAMPLE_DATA_DIR / "make_samples.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.write_shapes(tmp_path / "shapes")
    mod.write_moons(tmp_path / "moons.csv")
    for p in (SAMPLE_DATA_DIR / "shapes").rglob("*.png"):
        rel = p.relative_to(SAMPLE_DATA_DIR / "shapes")
        assert_array_equal(np.asarray(Image.open(p)), np.asarray(Image.open(tmp_path / "shapes" / rel)))
    assert (tmp_path / "moons.csv").read_text() == (SAMPLE_DATA_DIR / "moons.csv").read_text()


# =========================================================================== errors, one test each
def test_error_unknown_extension(tmp_path):
    (tmp_path / "d.txt").write_text("1,2\n3,4\n")
    with pytest.raises(DatasetError, match=r"Unsupported file type '.txt'.*\.csv, \.parquet, \.pq, \.npz"):
        load_dataset(tmp_path / "d.txt")


def test_error_missing_path(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.csv"):
        load_dataset(tmp_path / "nope.csv")


@pytest.mark.parametrize("name, content, match", [
    ("d.parquet", b"PAR1 definitely not parquet", "Could not read d.parquet as Parquet"),
    ("d.npz", b"PK\x03\x04 broken zip", "Could not read d.npz"),
    ("d.csv", b"a,b\n\xff\xfe\x00\x81,2\n", "Could not read d.csv as CSV"),
    ("d.csv", b"", "empty"),
])
def test_error_corrupt_file(tmp_path, name, content, match):
    (tmp_path / name).write_bytes(content)
    with pytest.raises(DatasetError, match=match):
        load_dataset(tmp_path / name)


def test_error_corrupt_image(tmp_path):
    _write_pngs(tmp_path, [("ok.png", np.zeros((4, 4), np.uint8))])
    (tmp_path / "bad.png").write_bytes(b"\x89PNG\r\n\x1a\n garbage")
    with pytest.raises(DatasetError, match="cannot read image .*bad.png"):
        load_dataset(tmp_path)


def test_error_no_numeric_feature_column(tmp_path):
    pd.DataFrame({"label": ["a", "b", "a"]}).to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DatasetError, match="no numeric feature column"):
        load_dataset(tmp_path / "d.csv")


def test_error_nan_in_features_names_column_and_row(tmp_path, table):
    table.loc[7, "c"] = np.nan
    table.drop(columns=["name"]).to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DatasetError, match=r"column 'c', row 7.*drop those rows, or fill them"):
        load_dataset(tmp_path / "d.csv")


def test_error_non_numeric_feature_column(tmp_path, table):
    table.to_csv(tmp_path / "d.csv", index=False)
    assert load_dataset(tmp_path / "d.csv").feature_names == ["a", "b", "c"]  # 'name': the id
    with pytest.raises(DatasetError, match="'name' are not numeric.*--feature-cols"):
        load_dataset(tmp_path / "d.csv", id_col=None, feature_cols=["a", "name"])


def test_error_missing_explicit_label_column(tmp_path, table):
    table.drop(columns=["name"]).to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DatasetError, match="Label column 'species' not found.*a, b, c"):
        load_dataset(tmp_path / "d.csv", label_col="species")


def test_error_single_class(tmp_path):
    pd.DataFrame({"a": [1.0, 2.0, 3.0], "label": ["x", "x", "x"]}).to_csv(tmp_path / "d.csv", index=False)
    # the fix named for the command line too, as the message of a partly empty label column does
    with pytest.raises(DatasetError, match="at least two classes.*--label-col '' / label_col=None"):
        load_dataset(tmp_path / "d.csv")


def test_error_fewer_than_two_rows(tmp_path):
    pd.DataFrame({"a": [1.0], "label": [0]}).to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DatasetError, match="1 row.*at least two"):
        load_dataset(tmp_path / "d.csv")


def test_missing_label_values_make_the_labelled_rows_file_labels(tmp_path):
    pd.DataFrame({"a": [1.0, 2.0, 3.0], "label": ["x", None, "y"]}).to_csv(tmp_path / "d.csv", index=False)
    d = load_dataset(tmp_path / "d.csv")  # more in tests/test_partial_labels.py
    assert d.y is None and d.file_labels.rows.tolist() == [0, 2] and d.classes == ["x", "y"]


def test_error_duplicate_ids(tmp_path):
    pd.DataFrame({"a": [1.0, 2.0, 3.0], "k": [1, 1, 2]}).to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DatasetError, match="unique"):
        load_dataset(tmp_path / "d.csv", id_col="k")


@pytest.mark.parametrize("bad_path", ["../outside.png", "sub/../../outside.png", "/etc/passwd"])
def test_error_image_path_outside_folder(tmp_path, bad_path):
    data = tmp_path / "data"
    data.mkdir()
    _write_pngs(tmp_path, [("outside.png", np.zeros((3, 3), np.uint8))])
    _write_pngs(data, [("in.png", np.zeros((3, 3), np.uint8))])
    pd.DataFrame({"img": ["in.png", bad_path]}).to_csv(data / "d.csv", index=False)
    with pytest.raises(DatasetError, match="outside the data folder"):
        load_dataset(data / "d.csv", image_col="img")


def test_error_symlink_out_of_image_folder(tmp_path):
    _write_pngs(tmp_path, [("secret.png", np.zeros((3, 3), np.uint8))])
    data = tmp_path / "data"
    _write_pngs(data, [("a/ok.png", np.zeros((3, 3), np.uint8))])
    (data / "a" / "link.png").symlink_to(tmp_path / "secret.png")
    with pytest.raises(DatasetError, match="outside the data folder"):
        load_dataset(data)


def test_error_missing_image_file(tmp_path):
    _write_pngs(tmp_path, [("a.png", np.zeros((3, 3), np.uint8))])
    pd.DataFrame({"img": ["a.png", "gone.png"]}).to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(FileNotFoundError, match="gone.png"):
        load_dataset(tmp_path / "d.csv", image_col="img")


def test_error_file_above_size_limit_is_not_read(tmp_path, table, monkeypatch):
    table.drop(columns=["name"]).to_csv(tmp_path / "d.csv", index=False)

    def no_read(*args, **kwargs):
        raise AssertionError("file read although above the limit")

    monkeypatch.setattr(pd, "read_csv", no_read)
    with pytest.raises(DatasetError, match="above the limit of 100 bytes"):
        load_dataset(tmp_path / "d.csv", max_bytes=100)


def test_error_image_folder_above_size_limit(tmp_path):
    _write_pngs(tmp_path, [(f"{i}.png", np.zeros((8, 8), np.uint8)) for i in range(3)])
    with pytest.raises(DatasetError, match="above the limit"):
        load_dataset(tmp_path, max_bytes=50)


def test_error_mixed_image_folder(tmp_path):
    _write_pngs(tmp_path, [("loose.png", np.zeros((3, 3), np.uint8)), ("cls/a.png", np.zeros((3, 3), np.uint8))])
    with pytest.raises(DatasetError, match="mixes images"):
        load_dataset(tmp_path)


def test_error_empty_image_folder(tmp_path):
    (tmp_path / "notes.txt").write_text("nothing")
    with pytest.raises(DatasetError, match="no PNG or JPEG"):
        load_dataset(tmp_path)


def test_error_unknown_file_option(tmp_path, table):
    table.drop(columns=["name"]).to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DatasetError, match="Unknown option.*digits"):
        load_dataset(tmp_path / "d.csv", digits=(1, 2))


def test_npz_that_is_not_an_archive_is_named_as_such(tmp_path):
    """A text file renamed .npz is reported as 'not a NumPy archive', not as a pickle."""
    bad = tmp_path / "notes.npz"
    bad.write_text("x,y\n1,2\n")
    with pytest.raises(DatasetError, match="not a NumPy archive"):
        load_dataset(bad)


def test_a_column_named_id_is_the_identifier_never_a_feature(tmp_path):
    """A numeric ``id`` column used to be silently taken as a kernel feature."""
    path = tmp_path / "items.csv"
    pd.DataFrame({"id": [101, 205, 307, 409], "length": [1.0, 2.0, 3.0, 4.0],
                  "score": [0.5, 0.1, 0.9, 0.3]}).to_csv(path, index=False)
    ds = load_dataset(path)
    assert ds.feature_names == ["length", "score"]
    assert_array_equal(ds.ids, [101, 205, 307, 409])
    # without an id column the rows are numbered; a column named like an id is still no feature
    no_id = load_dataset(path, id_col=None)
    assert no_id.feature_names == ["length", "score"]
    assert_array_equal(no_id.ids, np.arange(4))
    # ... unless the feature columns are given
    asked = load_dataset(path, id_col=None, feature_cols=["id", "length"])
    assert asked.feature_names == ["id", "length"]
    with pytest.raises(DatasetError, match="'id' is the numeric id column.*cannot also be a feature"):
        load_dataset(path, feature_cols=["id", "length"])


def test_a_text_column_beside_numeric_columns_is_shown_not_a_feature(tmp_path):
    """A text column used to make the table unloadable ("'text' are not numeric")."""
    path = tmp_path / "items.csv"
    pd.DataFrame({"id": ["a", "b", "c"], "text": ["x y", "y z", "z"], "v": [1.0, 2.0, 3.0]}).to_csv(path, index=False)
    ds = load_dataset(path)
    assert ds.feature_names == ["v"]
    assert list(ds.texts) == ["x y", "y z", "z"] and list(ds.ids) == ["a", "b", "c"]
    assert ds.load_options["text_col"] == "text" and ds.load_options["features_from"] == "columns"
    with pytest.raises(DatasetError, match="'text' are not numeric.*--feature-cols"):
        load_dataset(path, feature_cols=["v", "text"], text_col=None)
