"""Tables that used to fail or hide data silently: nested Parquet columns, numbers with stray
strings, a ``label`` column with one value per row, year / code columns, missing values,
header-only files (API and CLI)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from labeler.data import DatasetError, load_dataset
from labeler.data.load import read_roles
from penguins_table import MEASUREMENTS, MISSING_ROWS, write_penguins_csv

REPO = Path(__file__).resolve().parents[1]
N = 40


@pytest.fixture
def nested_parquet(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    rng = np.random.default_rng(0)
    table = pa.table({
        "a": rng.normal(size=N), "b": rng.normal(size=N),
        "meta": pa.array([{"k": i, "s": "x"} for i in range(N)]),
        "tags": pa.array([[("u", i)] for i in range(N)], type=pa.map_(pa.string(), pa.int64())),
        "seq": pa.array([list(range(i % 3 + 1)) for i in range(N)]),
        "label": ["p" if i % 2 else "q" for i in range(N)],
    })
    path = tmp_path / "nested.parquet"
    pq.write_table(table, path)
    return path


def test_nested_map_and_list_columns_are_named_and_left_out(nested_parquet):
    guess = read_roles(nested_parquet)
    kinds = {c.name: c.kind for c in guess.columns}
    assert kinds["meta"] == "struct" and kinds["tags"] == "map" and kinds["seq"] == "list"
    assert guess.roles.image_col is None  # a map or a list is not an image column
    notes = " ".join(guess.roles.notes)
    assert "'meta' holds nested records" in notes and "'tags' holds maps" in notes and "'seq' holds lists" in notes
    dataset = load_dataset(nested_parquet)
    assert dataset.X.shape == (N, 2) and list(dataset.feature_names) == ["a", "b"]


@pytest.mark.parametrize("given,match", [
    ({"feature_cols": ["a", "meta"]}, "'meta' cannot be a feature column: it holds nested records"),
    ({"label_col": "tags"}, "'tags' cannot be a label column: it holds maps"),
    ({"image_col": "seq"}, "'seq' cannot be an image column: it holds lists"),
])
def test_a_nested_column_chosen_for_a_role_is_refused_with_the_reason(nested_parquet, given, match):
    with pytest.raises(DatasetError, match=match):
        load_dataset(nested_parquet, **given)


def test_cli_on_nested_parquet_loads_without_a_traceback(nested_parquet, tmp_path):
    out = subprocess.run([sys.executable, "-m", "labeler", "simulate", str(nested_parquet), "--budget", "3",
                          "--quiet", "--out", str(tmp_path / "o.csv")], cwd=str(REPO), capture_output=True,
                         text=True, timeout=300, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert "Traceback" not in out.stderr and "unhashable" not in out.stderr


def test_numbers_with_stray_strings_name_their_rows(tmp_path):
    rng = np.random.default_rng(1)
    x = rng.normal(size=N).round(3).astype(object)
    x[7], x[19] = "abc", "n/a?"
    pd.DataFrame({"x": x, "z": rng.normal(size=N), "label": np.arange(N) % 2}).to_csv(tmp_path / "s.csv", index=False)
    guess = read_roles(tmp_path / "s.csv")
    assert guess.roles.id_col != "x"  # not silently the id
    assert any("'x' is numeric except 2 value(s)" in n and "row 7 ('abc')" in n and "row 19" in n
               for n in guess.roles.notes)
    with pytest.raises(DatasetError, match=r"'x' .*row 7 \('abc'\), row 19"):
        load_dataset(tmp_path / "s.csv", feature_cols=["x", "z"])


def test_a_label_column_with_one_value_per_row_stays_the_label_with_a_note(tmp_path):
    rng = np.random.default_rng(2)
    pd.DataFrame({"f": rng.normal(size=N), "g": rng.normal(size=N),
                  "label": [f"item{i}" for i in range(N)]}).to_csv(tmp_path / "l.csv", index=False)
    roles = read_roles(tmp_path / "l.csv").roles
    assert roles.label_col == "label" and roles.id_col is None
    assert any("different value on each of the 40 rows" in n for n in roles.notes)


def test_penguins_roles_year_flagged_and_missing_rows_counted(tmp_path):
    write_penguins_csv(tmp_path / "penguins.csv")
    guess = read_roles(tmp_path / "penguins.csv", label_col="species")
    roles = guess.roles
    assert roles.id_col == "rowid" and roles.label_col == "species"
    assert roles.feature_cols == tuple(MEASUREMENTS)  # not the year
    assert any(n.startswith("Column 'year' is left out of the features") for n in roles.notes)
    assert not any(n.startswith("Several columns could be the label") for n in roles.notes)
    assert guess.missing_rows(MEASUREMENTS) == len(MISSING_ROWS)
    assert guess.missing_rows(["sex"]) == 3


def test_penguins_missing_values_refused_dropped_or_filled_and_stored(tmp_path):
    frame = write_penguins_csv(tmp_path / "penguins.csv")
    path = tmp_path / "penguins.csv"
    with pytest.raises(DatasetError, match=r"2 rows have a missing value.*--missing drop\|mean"):
        load_dataset(path, label_col="species")
    dropped = load_dataset(path, label_col="species", missing="drop")
    assert dropped.X.shape == (len(frame) - 2, 4) and dropped.load_options["missing"] == "drop"
    assert not set(dropped.ids) & {frame["rowid"][r] for r in MISSING_ROWS}
    filled = load_dataset(path, label_col="species", missing="mean")
    assert filled.X.shape == (len(frame), 4) and filled.load_options["missing"] == "mean"
    means = frame[MEASUREMENTS].mean().to_numpy()
    np.testing.assert_allclose(filled.X[MISSING_ROWS[0]], means)
    again = load_dataset(path, **filled.load_options)  # the stored options reopen identically
    np.testing.assert_array_equal(again.X, filled.X)
    with pytest.raises(DatasetError, match="missing must be one of error, drop, mean"):
        load_dataset(path, missing="median")


def test_integer_columns_are_filled_with_the_most_frequent_value(tmp_path):
    frame = pd.DataFrame({"f": [1.5, 2.0, np.nan, 4.0, 5.5], "k": pd.array([3, 3, 1, None, 2], dtype="Int64"),
                          "label": [0, 1, 0, 1, 0]})
    frame.to_csv(tmp_path / "i.csv", index=False)
    d = load_dataset(tmp_path / "i.csv", feature_cols=["f", "k"], missing="mean")
    assert d.X[2, 0] == 3.25 and d.X[3, 1] == 3.0  # the mean; the most frequent integer


def test_a_header_only_csv_says_it_has_no_rows(tmp_path):
    (tmp_path / "h.csv").write_text("a,b,label\n")
    with pytest.raises(DatasetError, match="no rows"):
        read_roles(tmp_path / "h.csv")
    with pytest.raises(DatasetError, match="no rows"):
        load_dataset(tmp_path / "h.csv")


def test_cli_missing_option(tmp_path):
    write_penguins_csv(tmp_path / "penguins.csv")
    base = [sys.executable, "-m", "labeler", "simulate", str(tmp_path / "penguins.csv"), "--label-col", "species",
            "--budget", "3", "--out", str(tmp_path / "o.csv")]
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    refused = subprocess.run(base, cwd=str(REPO), capture_output=True, text=True, timeout=300, env=env)
    assert refused.returncode != 0 and "--missing drop|mean" in refused.stderr and "Traceback" not in refused.stderr
    assert "2 rows have missing values in the features; --missing drop drops them, --missing mean fills" in refused.stderr
    assert "penguins: 2 rows have a missing value in the features (first: column" in refused.stderr
    assert "'year' is left out of the features" in refused.stderr
    for choice, other in (("drop", "mean"), ("mean", "drop")):
        ok = subprocess.run([*base, "--missing", choice], cwd=str(REPO), capture_output=True, text=True,
                            timeout=300, env=env)
        assert ok.returncode == 0, ok.stderr
        # the note says what the choice given does and offers the other one, never the same
        (note,) = [line for line in ok.stderr.splitlines() if "missing values in the features" in line]
        assert f"; --missing {choice} " in note and f"(--missing {other} " in note and note.endswith(" instead)")
        assert note.count(f"--missing {choice}") == 1


def test_missing_note_singular():
    from labeler.cli.columns import _missing_note

    assert _missing_note(1, None).startswith("1 row has missing values")
    assert _missing_note(1234, "mean") == ("1,234 rows have missing values in the features; --missing mean fills "
                                           "them with the column mean / most frequent value (--missing drop "
                                           "drops them instead)")


@pytest.mark.parametrize("n", [1, 5, 7, 16, 23])
def test_the_feature_block_equals_the_stacked_columns(monkeypatch, n):
    import labeler.data.tables as tables

    monkeypatch.setattr(tables, "_ROWS_STEP", 5)  # several steps, the last one short
    rng = np.random.default_rng(n)
    columns = [rng.standard_normal(n), np.arange(n, dtype=np.float64), rng.standard_normal(2 * n)[::2]]
    gappy = rng.standard_normal(n)
    gappy[::3] = np.nan
    ints = pd.Series(np.arange(n) % 4, dtype="Int64")  # converted a step at a time, gaps as NaN
    ints[::2] = pd.NA
    sources = [(None, c, None) for c in columns] + [(None, gappy, 9.5), (ints, None, None), (ints, None, -1.0)]
    block = tables._rows_of(sources, n)
    as_float = ints.to_numpy(dtype=np.float64, na_value=np.nan)
    oracle = np.column_stack(columns + [np.where(np.isnan(gappy), 9.5, gappy), as_float,
                                        np.where(np.isnan(as_float), -1.0, as_float)])
    assert block.flags.c_contiguous and np.array_equal(block, oracle, equal_nan=True)


@pytest.mark.parametrize("dtype", [object, "str", "string"])
def test_empty_labels_equal_the_row_by_row_rule(dtype):
    from labeler.data.tables import empty_labels

    values = ["a", None, "", "  ", "b", "\t", " a ", None, "b"] if dtype != object else \
        ["a", None, "", "  ", 3, float("nan"), " a ", 1.5, "\t\n"]
    labels = pd.Series(values, dtype=dtype)
    missing = labels.isna().to_numpy()
    oracle = np.array([bool(m) or str(v).strip() == "" for v, m in zip(labels.tolist(), missing)])
    assert np.array_equal(empty_labels(labels), oracle)
