"""Input details: features whose squares overflow, class names that differ only in surrounding
whitespace or are blank, symlinked class folders, IDX headers that announce absurd sizes."""

import gzip
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from core import kernels
from core.rls import default_widths
from labeler.data import DatasetError, load_dataset
from labeler.data.bundled import read_idx
from labeler.data.preprocessing import standardize
from labeler.session import model
from labeler.session.config import check_class_name


def _table(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "width": rng.normal(size=n),
        "height": rng.normal(size=n),
        "label": np.where(np.arange(n) % 2, "cat", "dog"),
    })


# --------------------------------------------------------------------------- overflow
def test_a_single_huge_cell_is_refused_with_its_column_named(tmp_path):
    t = _table()
    t.loc[3, "height"] = 1e300
    t.to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DatasetError, match=r"'height'.*row 3.*(Rescale|rescale).*drop"):
        load_dataset(tmp_path / "d.csv")


def test_columns_around_1e300_are_all_named(tmp_path):
    t = _table()
    t["width"] = 1e300 * (1 + np.random.default_rng(1).random(len(t)))
    t["height"] = -t["width"]
    t.to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DatasetError, match=r"'width', 'height'.*overflow"):
        load_dataset(tmp_path / "d.csv")


def test_values_below_the_limit_still_load(tmp_path):
    t = _table()
    t["width"] *= 1e140  # squares 1e280: finite
    t.to_csv(tmp_path / "d.csv", index=False)
    d = load_dataset(tmp_path / "d.csv")
    Z = standardize(d.X)[0]
    assert np.isfinite(Z).all() and Z[:, 0].std() == pytest.approx(1.0)
    assert np.isfinite(kernels.median_distance(Z))


def test_npz_features_are_checked_too(tmp_path):
    X = np.random.default_rng(0).normal(size=(10, 3))
    X[2, 1] = -1e200
    np.savez(tmp_path / "a.npz", X=X)
    with pytest.raises(DatasetError, match=r"'x1'.*row 2"):
        load_dataset(tmp_path / "a.npz")


def test_standardize_refuses_a_column_it_would_zero():
    X = np.random.default_rng(0).normal(size=(30, 3))
    X[5, 2] = 1e300
    with pytest.raises(ValueError, match=r"column\(s\) 2 .*overflow"):
        standardize(X)


def test_standardize_refuses_a_non_finite_result():
    # finite, positive statistics from elsewhere that overflow on these values
    X = np.random.default_rng(0).normal(size=(30, 2)) * 1e10
    with pytest.raises(ValueError, match=r"column\(s\) 0, 1 .*overflow"):
        standardize(X, stats=(np.zeros(2), np.full(2, 1e-300)))


@pytest.mark.parametrize("fn", [kernels.median_distance, default_widths, model.width_grid])
def test_widths_name_the_overflow_not_a_zero_median(fn):
    X = 1e300 * (1 + np.random.default_rng(0).random((20, 2)))
    with pytest.raises(ValueError, match=r"column\(s\) 0, 1 .*overflow") as info:
        fn(X)
    assert "is 0" not in str(info.value) and "got inf" not in str(info.value)


# --------------------------------------------------------------------------- class names
def test_label_whitespace_is_stripped(tmp_path):
    t = _table()
    t["label"] = np.where(np.arange(len(t)) % 2, " cat", "dog  ")
    t.to_csv(tmp_path / "d.csv", index=False)
    d = load_dataset(tmp_path / "d.csv")
    assert d.classes == ["cat", "dog"]
    assert set(d.y.tolist()) == {"cat", "dog"}


def test_labels_differing_only_in_whitespace_are_refused_with_both_spellings(tmp_path):
    t = _table()
    t.loc[5, "label"] = "cat "
    t.to_csv(tmp_path / "d.csv", index=False)
    with pytest.raises(DatasetError, match=r"'cat'.*'cat '|'cat '.*'cat'"):
        load_dataset(tmp_path / "d.csv")


def test_a_blank_label_leaves_its_row_unlabelled(tmp_path):
    # a whitespace-only label is an empty one: the row joins the pool to label, the others
    # carry their labels (a partly filled label column)
    t = _table()
    t.loc[7, "label"] = "   "
    t.to_csv(tmp_path / "d.csv", index=False)
    ds = load_dataset(tmp_path / "d.csv")
    assert ds.y is None and ds.file_labels is not None
    assert 7 not in set(ds.file_labels.rows) and len(ds.file_labels.rows) == len(t) - 1


def test_npz_string_labels_are_normalised_too(tmp_path):
    X = np.random.default_rng(0).normal(size=(6, 2))
    np.savez(tmp_path / "a.npz", X=X, y=np.array(["a", "b", "a ", "b", "a", "b"]))
    with pytest.raises(DatasetError, match="'a '"):
        load_dataset(tmp_path / "a.npz")


def _png(path: Path, value=0):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((3, 3), value, np.uint8)).save(path)


def test_class_folders_differing_only_in_whitespace_are_refused(tmp_path):
    _png(tmp_path / "cat" / "a.png")
    _png(tmp_path / "cat " / "b.png")
    _png(tmp_path / "dog" / "c.png")
    with pytest.raises(DatasetError, match=r"'cat'.*'cat '|'cat '.*'cat'"):
        load_dataset(tmp_path)


def test_class_folder_names_are_stripped_and_blank_ones_refused(tmp_path):
    _png(tmp_path / "ok" / " cat " / "a.png")
    _png(tmp_path / "ok" / "dog" / "b.png")
    d = load_dataset(tmp_path / "ok")
    assert d.classes == ["cat", "dog"]
    assert d.ids.tolist() == [" cat /a.png", "dog/b.png"]  # ids stay the real relative paths
    _png(tmp_path / "bad" / " " / "a.png")
    _png(tmp_path / "bad" / "dog" / "b.png")
    with pytest.raises(DatasetError, match="blank"):
        load_dataset(tmp_path / "bad")


@pytest.mark.parametrize("existing, new, match", [
    (["cat", "dog"], " cat", r"'cat'"),
    (["cat ", "dog"], "cat", r"'cat '"),  # a store made before names were stripped
    (["cat", "dog"], "\t \n", "empty"),
    (["cat", "dog"], "", "empty"),
])
def test_add_class_compares_normalised_names(existing, new, match):
    with pytest.raises(ValueError, match=match):
        check_class_name(new, existing)


def test_add_class_strips_the_new_name():
    assert check_class_name("  bird ", ["cat", "dog"]) == "bird"


def test_session_add_class_refuses_a_whitespace_twin(tmp_path):
    from labeler.session import LabelingSession, SessionConfig

    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 60},
                                                                     classes=["cat", "dog"]))
    with pytest.raises(ValueError, match="'cat'"):
        s.add_class("cat ")
    s.add_class(" bird")
    assert s.classes == ["cat", "dog", "bird"]


# --------------------------------------------------------------------------- symlinked folders
@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links on this system")
def test_a_symlinked_class_folder_inside_the_data_folder_is_followed(tmp_path):
    data = tmp_path / "data"
    _png(data / "dog" / "d1.png", 10)
    _png(data / ".pool" / "cats" / "c1.png", 200)
    _png(data / ".pool" / "cats" / "c2.png", 210)
    (data / "cat").symlink_to(data / ".pool" / "cats", target_is_directory=True)
    d = load_dataset(data)
    assert d.classes == ["cat", "dog"]
    assert d.ids.tolist() == ["cat/c1.png", "cat/c2.png", "dog/d1.png"]


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links on this system")
def test_a_symlinked_class_folder_outside_the_data_folder_is_refused_by_name(tmp_path):
    _png(tmp_path / "elsewhere" / "c1.png")
    data = tmp_path / "data"
    _png(data / "dog" / "d1.png")
    (data / "cat").symlink_to(tmp_path / "elsewhere", target_is_directory=True)
    with pytest.raises(DatasetError, match=r"'cat'.*outside the data folder.*[Cc]opy"):
        load_dataset(data)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links on this system")
def test_a_symlink_loop_is_refused(tmp_path):
    data = tmp_path / "data"
    _png(data / "dog" / "d1.png")
    _png(data / "cat" / "c1.png")
    (data / "cat" / "again").symlink_to(data / "cat", target_is_directory=True)
    with pytest.raises(DatasetError, match=r"cat/again.*loop"):
        load_dataset(data)


@pytest.mark.skipif(not hasattr(os, "symlink"), reason="no symbolic links on this system")
def test_one_folder_reached_twice_is_refused(tmp_path):
    data = tmp_path / "data"
    _png(data / "dog" / "d1.png")
    _png(data / "cat" / "c1.png")
    (data / "kitten").symlink_to(data / "cat", target_is_directory=True)
    with pytest.raises(DatasetError, match=r"'kitten'.*'cat'.*twice"):
        load_dataset(data)


# --------------------------------------------------------------------------- IDX
def _idx(path: Path, dims, payload: bytes):
    header = bytes([0, 0, 8, len(dims)]) + b"".join(int(d).to_bytes(4, "big") for d in dims)
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wb") as fh:
        fh.write(header + payload)


@pytest.mark.parametrize("suffix", [".idx", ".gz"])
@pytest.mark.parametrize("dims", [(0xFFFFFFFF, 28, 28), (2**31 - 1, 2**31 - 1, 2**31 - 1), (0x80000000,)])
def test_an_idx_header_announcing_a_huge_size_is_named(tmp_path, dims, suffix):
    path = tmp_path / f"bad{suffix}"
    _idx(path, dims, bytes(100))
    with pytest.raises(DatasetError) as info:
        read_idx(path)
    text = str(info.value)
    assert f"{dims[0]:,}" in text and "100 bytes of data" in text
    assert not any(tok.startswith("-") and tok[1:2].isdigit() for tok in text.split())


def test_an_idx_file_that_matches_its_header_reads(tmp_path):
    data = np.arange(24, dtype=np.uint8)
    _idx(tmp_path / "ok.gz", (2, 3, 4), data.tobytes())
    np.testing.assert_array_equal(read_idx(tmp_path / "ok.gz"), data.reshape(2, 3, 4))
