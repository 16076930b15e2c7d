"""Tests for labeler.data: built-in constructions, real MAGIC / MNIST files, file loaders, errors."""

import gzip
import shutil
import struct
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from PIL import Image

from labeler.data import bundled, load
from labeler.data import (
    BUILTIN_DATA_DIR,
    BUILTIN_DATASETS,
    Dataset,
    DatasetError,
    load_dataset,
    read_idx,
)

SAMPLE_DATA_DIR = Path(__file__).resolve().parents[1] / "sample_data"
MNIST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]  # shared datasets README


# =========================================================================== built-ins
def test_builtin_names_are_documented():
    assert set(BUILTIN_DATASETS) == {
        "moons", "moons-imbalanced", "spheres", "circles", "magic", "magic-imbalanced", "digits", "mnist",
    }
    assert all(isinstance(v, str) and v for v in BUILTIN_DATASETS.values())
    assert set(load._BUILTIN_LOADERS) == set(BUILTIN_DATASETS)


@pytest.mark.parametrize("name", ["moons", "moons-imbalanced", "spheres", "circles"])
def test_synthetic_builtins_are_seeded(name):
    a, b, c = load_dataset(name, seed=1), load_dataset(name, seed=1), load_dataset(name, seed=2)
    assert_array_equal(a.X, b.X)
    assert_array_equal(a.y, b.y)
    assert_array_equal(a.X_val, b.X_val)
    assert not np.array_equal(a.X, c.X)
    assert isinstance(a, Dataset)
    assert a.X.dtype == np.float64 and a.X.flags.c_contiguous
    assert a.classes == [0, 1]
    assert_array_equal(a.layout, a.X)
    assert a.feature_names == ["x", "y"]
    assert_array_equal(a.ids, np.arange(len(a.X)))
    assert len(a.frame) == len(a.X)
    assert "width" in a.params and "lam" in a.params


def test_moons_balanced():
    d = load_dataset("moons")
    assert d.X.shape == (1000, 2) and d.X_val.shape == (1000, 2)
    assert np.bincount(d.y).tolist() == [500, 500]
    assert np.bincount(d.y_val).tolist() == [500, 500]
    assert load_dataset("moons", n=301).X.shape == (301, 2)


def test_moons_imbalanced_has_ten_times_fewer_positives():
    d = load_dataset("moons-imbalanced")
    assert np.bincount(d.y).tolist() == [500, 50]  # seed 002 Fig. 4-1
    assert np.bincount(d.y_val).tolist() == [500, 500]  # balanced test set
    assert d.params["width"] == 2.0 and d.params["lam"] == "auto"
    assert d.params["rare_class"] == 1


def test_spheres_construction():
    d = load_dataset("spheres", seed=3)
    assert d.X.shape == (1200, 2) and d.X_val.shape == (1200, 2)
    gx, gy = np.meshgrid(6.0 * np.arange(10), 6.0 * np.arange(6))
    centres = np.column_stack([gx.ravel(), gy.ravel()])
    for X, y in ((d.X, d.y), (d.X_val, d.y_val)):
        dist = np.linalg.norm(X[:, None, :] - centres[None], axis=2)
        nearest = dist.argmin(axis=1)
        assert dist.min(axis=1).max() < 1.0  # inside unit discs
        assert np.bincount(nearest, minlength=60).tolist() == [20] * 60
        sphere_label = np.array([y[nearest == s][0] for s in range(60)])
        assert all((y[nearest == s] == sphere_label[s]).all() for s in range(60))
        assert sphere_label.sum() == 30  # half the spheres positive
        if X is d.X:
            train_labels = sphere_label
    assert_array_equal(sphere_label, train_labels)  # validation drawn from the same spheres
    assert d.params == {**d.params, "width": 1.7, "lam": 0.5}


def test_spheres_points_are_uniform_in_area():
    d = load_dataset("spheres", seed=0, n=6000)
    r = np.linalg.norm(d.X - np.round(d.X / 6) * 6, axis=1)
    # P(r < 1/sqrt(2)) = 1/2 for a uniform disc; 6000 points -> sd 0.0065
    assert abs(np.mean(r < 1 / np.sqrt(2)) - 0.5) < 0.03


def test_spheres_needs_multiples_of_60():
    with pytest.raises(DatasetError, match="multiple of 60"):
        load_dataset("spheres", n=100)


def test_circles_construction():
    d = load_dataset("circles")
    r = np.linalg.norm(d.X, axis=1)
    assert np.bincount(d.y).tolist() == [2000, 20]
    assert (r[d.y == 1] < 1).all()
    assert ((r[d.y == 0] > 1.8) & (r[d.y == 0] < 3.5)).all()
    assert np.bincount(d.y_val).tolist() == [500, 500]
    r_val = np.linalg.norm(d.X_val, axis=1)
    assert (r_val[d.y_val == 1] < 1).all() and (r_val[d.y_val == 0] > 1.8).all()
    assert d.params["width"] == 1.0 and d.params["lam"] == 0.1 and d.params["weighting"] == "balanced"


def _magic_rows():
    frame = pd.read_csv(BUILTIN_DATA_DIR / "magic04.data", header=None)
    return frame.iloc[:, :10].to_numpy(), frame.iloc[:, 10].to_numpy()


def test_magic_reads_the_real_file():
    X_all, cls = _magic_rows()
    assert X_all.shape == (19020, 10)
    d = load_dataset("magic", seed=5)
    assert d.classes == ["gamma", "hadron"]
    assert d.X.shape == (1900, 10) and d.X_val.shape == (2000, 10)
    assert d.feature_names[0] == "fLength" and d.feature_names[-1] == "fDist"
    # ids are the file's row numbers: features and labels match the file exactly
    assert_array_equal(d.X, X_all[d.ids])
    assert_array_equal(d.y, np.where(cls[d.ids] == "g", "gamma", "hadron"))
    assert d.params["width"] == 3.0 and d.params["lam"] == 0.2 and d.params["standardize"]


@pytest.mark.parametrize("name", ["magic", "magic-imbalanced"])
def test_magic_validation_is_disjoint_from_pool(name):
    X_all, _ = _magic_rows()
    frame = pd.DataFrame(X_all)
    duplicated = {tuple(r) for r in X_all[frame.duplicated(keep=False).to_numpy()]}
    d = load_dataset(name, seed=0)
    shared = {tuple(r) for r in d.X_val} & {tuple(r) for r in d.X}
    assert shared <= duplicated  # only rows the file itself repeats (115 duplicates)


def test_magic_split_indices_are_disjoint():
    labels = np.array(["gamma"] * 60 + ["hadron"] * 40)
    rng = np.random.default_rng(0)
    pool, val, _ = bundled._magic_split(labels, rng, {"gamma": 5, "hadron": 20}, {"gamma": 10, "hadron": 10}, 20)
    assert not set(pool) & set(val)
    assert (labels[pool] == "gamma").sum() == 5 and (labels[val] == "hadron").sum() == 10
    _, val, rest = bundled._magic_split(labels, rng, None, None, 30)
    assert len(val) == 30 and len(rest) == 70 and not set(val) & set(rest)


def test_magic_imbalanced_counts():
    d = load_dataset("magic-imbalanced", seed=0)
    counts = {c: int((d.y == c).sum()) for c in d.classes}
    assert counts == {"gamma": 118, "hadron": 1182}  # 10 hadrons per gamma, 1300 points
    assert {c: int((d.y_val == c).sum()) for c in d.classes} == {"gamma": 1000, "hadron": 1000}
    assert d.params["rare_class"] == "gamma" and d.params["width"] == 1.5 and d.params["lam"] == 0.1
    X_all, _ = _magic_rows()
    assert_array_equal(d.X, X_all[d.ids])


def test_magic_imbalanced_original_validation():
    d = load_dataset("magic-imbalanced", seed=0, validation="original")
    share = np.mean(d.y_val == "gamma")
    assert abs(share - 12332 / 19020) < 0.04
    with pytest.raises(DatasetError, match="validation"):
        load_dataset("magic-imbalanced", validation="weird")


def test_magic_too_many_rows():
    with pytest.raises(DatasetError, match="exceeds"):
        load_dataset("magic", n=18000)


def test_digits_builtin():
    from sklearn.datasets import load_digits

    d = load_dataset("digits")
    ref = load_digits()
    assert d.images.shape == (1797, 8, 8) and d.images.dtype == np.uint8
    assert d.images.max() == 255
    assert_allclose(d.X, ref.data / 16.0, atol=0.5 / 255 + 1e-12)
    assert_array_equal(d.y, ref.target)
    sub = load_dataset("digits", digits=(3, 8), n=50, seed=1)
    assert set(sub.classes) == {3, 8} and len(sub.y) == 50


def test_digits_width_is_the_median_pairwise_distance():
    from scipy.spatial.distance import pdist

    small = load_dataset("digits", n=300, seed=1)  # <= 500 points: the median over all pairs
    assert small.params["width"] == np.median(pdist(small.X))
    full = load_dataset("digits", seed=0)  # a seeded subset of 500 points
    rows_median = np.median(pdist(full.X))
    assert 0.9 * rows_median < full.params["width"] < 1.1 * rows_median
    assert load_dataset("digits", seed=0).params["width"] == full.params["width"]


def _parse_idx_slowly(path):
    """Independent IDX parser (struct, byte by byte header) as an oracle for read_idx."""
    raw = gzip.open(path).read()
    zero, dtype, ndim = struct.unpack(">HBB", raw[:4])
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    return dims, raw[4 + 4 * ndim:]


def test_read_idx_matches_struct_parser():
    for name in ("mnist-t10k-labels-idx1-ubyte.gz", "mnist-t10k-images-idx3-ubyte.gz"):
        arr = read_idx(BUILTIN_DATA_DIR / name)
        dims, body = _parse_idx_slowly(BUILTIN_DATA_DIR / name)
        assert arr.shape == dims and arr.dtype == np.uint8
        assert arr.tobytes() == body


def test_mnist_builtin_real_files():
    d = load_dataset("mnist")
    assert d.images.shape == (10000, 28, 28) and d.images.dtype == np.uint8
    assert np.bincount(d.y).tolist() == MNIST_COUNTS
    assert d.y[0] == 7  # first test digit of MNIST
    assert_allclose(d.X, d.images.reshape(10000, -1) / 255.0)
    pair = load_dataset("mnist", digits=(4, 9))
    assert len(pair.y) == 982 + 1009 and pair.classes == [4, 9]
    sub = load_dataset("mnist", digits=(4, 9), n=200, seed=3)
    assert len(sub.y) == 200 and set(np.unique(sub.y)) == {4, 9}
    assert_array_equal(sub.images, pair.images[np.searchsorted(pair.ids, sub.ids)])
    assert_array_equal(load_dataset("mnist", n=50, seed=3).ids, load_dataset("mnist", n=50, seed=3).ids)


@pytest.mark.parametrize("digits", [(4,), (4, 12)])
def test_mnist_bad_digits(digits):
    with pytest.raises(DatasetError, match="digits"):
        load_dataset("mnist", digits=digits)


@pytest.mark.parametrize(
    "corrupt, match",
    [
        (lambda raw: raw[:1000], "truncated or corrupt"),
        (lambda raw: b"\x00\x00\x08\x09" + raw[4:], "magic number"),
        (lambda raw: b"\x00\x00\x08\x03" + raw[4:] + b"extra", "truncated or corrupt"),
    ],
)
def test_corrupt_mnist_file_gives_clear_error(tmp_path, corrupt, match):
    raw = gzip.open(BUILTIN_DATA_DIR / "mnist-t10k-images-idx3-ubyte.gz").read()
    with gzip.open(tmp_path / "mnist-t10k-images-idx3-ubyte.gz", "wb", compresslevel=1) as fh:
        fh.write(corrupt(raw))
    shutil.copy(BUILTIN_DATA_DIR / "mnist-t10k-labels-idx1-ubyte.gz", tmp_path)
    with pytest.raises(DatasetError, match=match):
        load_dataset("mnist", data_dir=tmp_path)


def test_mnist_not_gzip_gives_clear_error(tmp_path):
    (tmp_path / "mnist-t10k-images-idx3-ubyte.gz").write_bytes(b"this is not gzip data at all")
    shutil.copy(BUILTIN_DATA_DIR / "mnist-t10k-labels-idx1-ubyte.gz", tmp_path)
    with pytest.raises(DatasetError, match="corrupt"):
        load_dataset("mnist", data_dir=tmp_path)


def test_mnist_missing_file_names_the_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="data_dir"):
        load_dataset("mnist", data_dir=tmp_path)


def test_unknown_builtin_lists_names():
    with pytest.raises(DatasetError, match="moons, moons-imbalanced, spheres"):
        load_dataset("moon")


def test_unknown_builtin_option():
    with pytest.raises(DatasetError, match="Unknown option.*colour"):
        load_dataset("moons", colour="red")


@pytest.mark.parametrize("n", [1, 0, 2.5, True])
def test_bad_n(n):
    with pytest.raises(DatasetError, match="n must be"):
        load_dataset("moons", n=n)


# =========================================================================== files
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
    with pytest.raises(DatasetError, match=r"column 'c' .* row 7.*Drop those rows or impute"):
        load_dataset(tmp_path / "d.csv")


def test_error_non_numeric_feature_column(tmp_path, table):
    table.to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DatasetError, match="'name' are not numeric.*id_col"):
        load_dataset(tmp_path / "d.csv")


def test_error_missing_explicit_label_column(tmp_path, table):
    table.drop(columns=["name"]).to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DatasetError, match="Label column 'species' not found.*a, b, c"):
        load_dataset(tmp_path / "d.csv", label_col="species")


def test_error_single_class(tmp_path):
    pd.DataFrame({"a": [1.0, 2.0, 3.0], "label": ["x", "x", "x"]}).to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DatasetError, match="at least two classes.*label_col=None"):
        load_dataset(tmp_path / "d.csv")


def test_error_fewer_than_two_rows(tmp_path):
    pd.DataFrame({"a": [1.0], "label": [0]}).to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DatasetError, match="1 row.*at least two"):
        load_dataset(tmp_path / "d.csv")


def test_error_missing_label_values(tmp_path):
    pd.DataFrame({"a": [1.0, 2.0, 3.0], "label": ["x", None, "y"]}).to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DatasetError, match="row 1"):
        load_dataset(tmp_path / "d.csv")


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
