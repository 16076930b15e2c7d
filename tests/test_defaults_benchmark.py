"""benchmarks/defaults.py: the quick run (two tiny tasks, 1 seed), its CSV, resuming, the report."""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("defaults_benchmark", ROOT / "benchmarks" / "defaults.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def quick_run(bench, tmp_path_factory):
    out = tmp_path_factory.mktemp("defaults")
    assert bench.main(["--quick", "--out", str(out)]) == 0
    return out


def _rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def test_quick_run_writes_one_row_per_task_seed_method_and_label_count(bench, quick_run):
    for task in bench.QUICK_TASKS:
        rows = _rows(quick_run / f"{task}.csv")
        assert list(rows[0]) == list(bench.FIELDS)
        for method in bench.QUICK_RUNS:
            mine = [r for r in rows if r["method"] == method]
            assert [int(r["labels"]) for r in mine] == list(range(1, 21))
            assert {r["seed"] for r in mine} == {"0"}
            acc = np.array([float(r["accuracy"]) for r in mine])
            assert np.all((acc >= 0) & (acc <= 1))
            idx = [int(r["index"]) for r in mine]
            assert len(set(idx)) == 20  # every label a new point


def test_a_second_run_resumes_and_adds_nothing(bench, quick_run):
    before = {t: (quick_run / f"{t}.csv").read_text() for t in bench.QUICK_TASKS}
    assert bench.main(["--quick", "--out", str(quick_run)]) == 0
    assert {t: (quick_run / f"{t}.csv").read_text() for t in bench.QUICK_TASKS} == before


def test_report_aubc_is_the_hand_computed_trapezoid_mean(bench, quick_run, capsys):
    doc = quick_run / "defaults.md"
    assert bench.main(["--quick", "--report", "--out", str(quick_run), "--doc", str(doc)]) == 0
    text = capsys.readouterr().out
    rows = [r for r in _rows(quick_run / "tiny-moons.csv") if r["method"] == "default"]
    acc = {int(r["labels"]): float(r["accuracy"]) for r in rows}
    hand = sum((acc[k] + acc[k + 1]) / 2 for k in range(10, 20)) / 10  # labels 10 -> 20
    summary = {r["method"]: r for r in bench.summarise("tiny-moons", quick_run, budget=20)}
    assert summary["default"]["aubc"][0] == pytest.approx(hand, abs=1e-12)
    assert summary["default"][10][0] == pytest.approx(acc[10])
    assert f"| default | 1 | {100 * hand:.1f} ± 0.0 |" in text
    for task in bench.QUICK_TASKS:
        assert f"### {task}" in text
    md = doc.read_text()
    assert "python benchmarks/defaults.py --quick --report" in md and "First half" in md


def test_aubc_edge_cases(bench):
    labels = np.arange(1, 101)
    assert bench.aubc(labels, np.full(100, 0.7)) == pytest.approx(0.7)
    ramp = (labels - 10) / 90.0
    assert bench.aubc(labels, ramp) == pytest.approx(0.5)
    assert np.isnan(bench.aubc(np.arange(1, 50), np.ones(49)))  # the curve stops before 100


def test_halves_are_fixed_disjoint_and_cover_every_kind(bench):
    first, second = set(bench.FIRST_HALF), set(bench.SECOND_HALF)
    assert not first & second and first | second == set(bench.TASKS)
    assert len(bench.TASKS) >= 14
    kinds = lambda half: {bench.TASKS[t][0] for t in half}  # noqa: E731
    assert kinds(first) == kinds(second)


def _run(task, seed, method, n, acc):
    return [(task, seed, method, k, f"{acc:.6f}", k) for k in range(1, n + 1)]


def test_append_rows_does_not_repeat_a_stored_row(bench, tmp_path):
    assert bench.append_rows("t", _run("t", 0, "m", 5, 0.5), tmp_path) == 5
    # the same run again (two runners, or a resumed one) writes nothing; the first rows stay
    assert bench.append_rows("t", _run("t", 0, "m", 5, 0.9), tmp_path) == 0
    # a longer run of the same method and seed adds only the counts not stored
    assert bench.append_rows("t", _run("t", 0, "m", 7, 0.9), tmp_path) == 2
    rows = _rows(tmp_path / "t.csv")
    assert [(int(r["labels"]), float(r["accuracy"])) for r in rows] == [(k, 0.5) for k in range(1, 6)] + [(6, 0.9),
                                                                                                        (7, 0.9)]
    assert bench.append_rows("t", _run("t", 1, "m", 2, 0.1) + _run("t", 1, "m", 2, 0.2), tmp_path) == 2


def test_dedupe_rows_keeps_the_first_of_repeated_rows_and_one_header(bench, tmp_path):
    path = tmp_path / "t.csv"
    lines = [",".join(bench.FIELDS)] + [",".join(map(str, r)) for r in _run("t", 0, "m", 3, 0.5)]
    lines += [",".join(bench.FIELDS)] + [",".join(map(str, r)) for r in _run("t", 0, "m", 3, 0.7)]
    lines += [",".join(map(str, r)) for r in _run("t", 1, "m", 2, 0.4)]
    path.write_text("\n".join(lines) + "\n")
    assert bench.dedupe_rows("t", tmp_path) == 3
    rows = _rows(path)
    assert [(r["seed"], int(r["labels"]), float(r["accuracy"])) for r in rows] == (
        [("0", k, 0.5) for k in (1, 2, 3)] + [("1", 1, 0.4), ("1", 2, 0.4)])
    assert path.read_text().count("task,seed") == 1
    assert bench.dedupe_rows("t", tmp_path) == 0


def test_run_seconds_default_per_task_and_override(bench):
    assert bench.run_seconds("iris") == bench.RUN_SECONDS
    assert bench.run_seconds("mnist-10") == bench.RUN_SECONDS_BY_TASK["mnist-10"] > bench.RUN_SECONDS
    assert bench.run_seconds("mnist-10", 30) == 30


def test_gate_table_takes_the_candidate_only_where_the_rule_fires(bench, tmp_path, monkeypatch):
    for seed in (0, 1):
        bench.append_rows("tiny-blobs", _run("tiny-blobs", seed, "default", 100, 0.5), tmp_path)
        bench.append_rows("tiny-blobs", _run("tiny-blobs", seed, "cand", 100, 0.6 if seed == 0 else 0.3), tmp_path)
    monkeypatch.setattr(bench, "GATES", {"always": lambda t, s: True, "seed 0": lambda t, s: s == 0})
    monkeypatch.setattr(bench, "pool_separation", lambda t, s: 0.5)
    text = bench.gate_table(["tiny-blobs"], "cand", "default", out=tmp_path)
    row = next(line for line in text.splitlines() if line.startswith("| tiny-blobs"))
    # always: (+10 - 20) / 2 = -5 points; seed 0 only: (+10 + 0) / 2 = +5
    assert "-5.00 / -5.0" in row and "+5.00 / +5.0 (1/2)" in row
    assert "**-5.00 / -5.0**" in text and "**+5.00 / +5.0**" in text


def test_relabel_default_keeps_the_old_rows_and_takes_the_rule_where_it_fires(bench, tmp_path):
    for seed in (0, 1):
        bench.append_rows("t", _run("t", seed, "default", 3, 0.5), tmp_path)
        bench.append_rows("t", _run("t", seed, "cand", 3, 0.8), tmp_path)
    moved, kept = bench.relabel_default("t", lambda t, s: s == 1, "cand", "old", tmp_path)
    assert moved == [1] and kept == [0]
    rows = _rows(tmp_path / "t.csv")
    acc = {(r["method"], r["seed"]): float(r["accuracy"]) for r in rows}
    assert acc[("old", "0")] == acc[("old", "1")] == 0.5
    assert acc[("default", "0")] == 0.5 and acc[("default", "1")] == 0.8 and acc[("cand", "1")] == 0.8
    assert len(rows) == 3 * 6
    with pytest.raises(ValueError, match="relabelled before"):
        bench.relabel_default("t", lambda t, s: True, "cand", "old", tmp_path)
