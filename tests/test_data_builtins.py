"""Tests for the built-in data sets of labeler.data: the thesis' constructions, MAGIC, MNIST, digits."""

import gzip
import shutil
import struct

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from labeler.data import (
    BUILTIN_DATA_DIR,
    BUILTIN_DATASETS,
    Dataset,
    DatasetError,
    bundled,
    load,
    load_dataset,
    read_idx,
)

MNIST_COUNTS = [980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009]  # shared datasets README


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
