"""Smoke test of benchmarks/peers.py --quick: our strategies on a tiny task (no peer library)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def load_benchmark():
    spec = importlib.util.spec_from_file_location("peers_benchmark", ROOT / "benchmarks" / "peers.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_quick_run_prints_a_row_per_strategy(capsys):
    bench = load_benchmark()
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    assert "## tiny-blobs" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines()
            if line and not line[0].isspace() and line.split()[0] in bench.OURS}
    assert set(rows) == {"auto", "arls", "margin", "random"}
    for cells in rows.values():
        assert cells[1] != "-" and cells[3] == "-"  # @10 measured, @50 beyond the quick budget
        assert 0.0 <= float(cells[1]) <= 100.0


def test_summary_reach_and_checkpoints():
    bench = load_benchmark()
    acc = np.array([[0.5, 0.6, 0.7, 0.8], [0.5, 0.6, 0.7, 0.8]])
    slow = np.array([[0.5, 0.5, 0.55, 0.6], [0.5, 0.5, 0.55, 0.6]])
    sec = np.zeros((2, 3))
    rows = {r["strategy"]: r for r in bench.summarise({"fast": (acc, sec), "random": (slow, sec)}, budget=5)}
    assert rows["fast"]["reach"] == "3"  # 0.6 (random's final accuracy) first at index 1 = 3 labels
    assert rows["random"]["reach"] == "5"
    assert np.isclose(rows["fast"]["auc"], 0.65) and rows["fast"]["auc_sd"] == 0.0


def test_peer_skipped_cleanly_when_absent(capsys, monkeypatch):
    bench = load_benchmark()
    monkeypatch.setattr(bench, "available", lambda module: False)
    assert bench.main(["--tasks", "tiny-blobs", "--strategies", "random,gl-vopt", "--seeds", "1",
                       "--budget", "12"]) == 0
    out = capsys.readouterr().out
    assert "skipped (not installed): graphlearning" in out
    firsts = [line.split()[0] for line in out.splitlines() if line.strip()]
    assert "random" in firsts and "gl-vopt" not in firsts


def test_paired_differences_mark_only_what_exceeds_the_noise():
    bench = load_benchmark()
    L = 200 - bench.INITIAL + 1
    base = np.tile(np.linspace(0.5, 0.9, L), (5, 1))
    noise = np.random.default_rng(0).normal(scale=0.002, size=(5, L))
    curves = {"auto": (base + noise, None), "arls": (base - 0.05, None), "margin": (base + 0.05, None)}
    lines = bench.paired(curves, "auto")
    assert len(lines) == 2
    vs_arls, vs_margin = lines
    assert vs_arls.split()[:3] == ["auto", "-", "arls"] and vs_arls.count("+") >= 6 and "*" not in vs_arls
    assert vs_margin.count("*") == 6  # five checkpoints and the AUC, all 5 points below
    assert "-5.0" in vs_margin
    zero_mean = np.vstack([noise[0], -noise[0], noise[1], -noise[1], 0 * noise[0]])  # mean 0 per checkpoint
    level = bench.paired({"auto": (base + zero_mean, None), "margin": (base, None)}, "auto")[0]
    assert "*" not in level  # a difference within the noise is not marked
    assert bench.paired({"arls": (base, None)}, "auto") == []


def test_switch_candidates_are_functions_of_the_class_counts():
    bench = load_benchmark()
    assert not bench.SWITCHES["sw-n10"](np.array([9, 0]))
    assert bench.SWITCHES["sw-n10"](np.array([9, 1]))
    assert not bench.SWITCHES["sw-min1"](np.array([5, 0, 5])) and bench.SWITCHES["sw-min1"](np.array([1, 1, 1]))
    assert bench.SWITCHES["sw-min3-n10"](np.array([8, 2])) and not bench.SWITCHES["sw-min3-n10"](np.array([7, 2]))


def test_graphlearning_picker_builds_the_graph_of_each_pool():
    """Two pools of one shape (consecutive seeds) must not share a cached graph."""
    import pytest
    pytest.importorskip("graphlearning")
    bench = load_benchmark()
    Xa, ya = bench.task_tiny(0)
    Xb, yb = bench.task_tiny(1)
    X = Xa.copy()
    a = bench.GraphLearningPicker("gl-vopt", X, ya, [0, 1, 2], None, 0)
    Wa = a.W.copy()
    X[:] = Xb  # the same array object (same id and shape), another pool
    b = bench.GraphLearningPicker("gl-vopt", X, yb, [0, 1, 2], None, 1)
    assert (b.W != Wa).nnz > 0
    c = bench.GraphLearningPicker("gl-vopt", Xb.copy(), yb, [0, 1, 2], None, 1)
    assert c.W is b.W  # the same pool (by content) reuses its graph and eigenpairs


def test_load_renames_per_file_and_orders_rows(tmp_path, capsys):
    bench = load_benchmark()
    acc = np.tile(np.linspace(0.5, 0.9, 9), (2, 1))
    sec = np.zeros((2, 8))
    np.savez(tmp_path / "a.npz", **{"t|auto": acc, "t|auto|sec": sec, "t|sw-n10": acc + 0.05,
                                    "t|sw-n10|sec": sec, "t|margin": acc, "t|margin|sec": sec})
    np.savez(tmp_path / "b.npz", **{"t|random": acc - 0.1, "t|random|sec": sec})
    bench.print_saved(f"{tmp_path / 'a.npz'}:auto=sw-min3;sw-n10=auto,{tmp_path / 'b.npz'}", 2)
    rows = [line.split() for line in capsys.readouterr().out.splitlines()
            if line and not line[0].isspace() and not line.startswith("#")]
    names = [r[0] for r in rows[1:]]
    assert names == ["auto", "margin", "random", "sw-min3"]  # ours first, then the switches
    assert float(rows[1][-4]) > float(rows[4][-4])  # "auto" holds sw-n10's (higher) curve


def test_against_pairs_the_compared_strategies_with_the_chosen_references(capsys, monkeypatch):
    bench = load_benchmark()
    L = 30 - bench.INITIAL + 1
    fake = {"auto": 0.7, "margin": 0.8, "random": 0.6}

    def run(X, y, strategy, seed, budget):  # constant curves: every paired difference is exact
        return np.full(L, fake[strategy]), np.zeros(L - 1)

    monkeypatch.setattr(bench, "run", run)
    assert bench.main(["--tasks", "tiny-blobs", "--seeds", "2", "--budget", "30", "--strategies",
                       "auto,margin,random", "--compare", "random,margin", "--against", "auto"]) == 0
    out = capsys.readouterr().out
    pairs = {" ".join(line.split()[:3]): line for line in out.splitlines()
             if line.startswith("  ") and " - " in line}
    assert set(pairs) == {"random - auto", "margin - auto"}  # auto is the reference, not arls/margin
    assert "-10.0" in pairs["random - auto"] and "*" in pairs["random - auto"]
    assert "+10.0" in pairs["margin - auto"] and "*" not in pairs["margin - auto"]


def test_runs_are_capped_at_the_requested_threads(capsys, monkeypatch):
    threadpoolctl = __import__("pytest").importorskip("threadpoolctl")
    bench = load_benchmark()
    seen = []

    def run(X, y, strategy, seed, budget):
        seen.append({p["user_api"]: p["num_threads"] for p in threadpoolctl.threadpool_info()})
        return np.full(budget - bench.INITIAL + 1, 0.5), np.zeros(budget - bench.INITIAL)

    monkeypatch.setattr(bench, "run", run)
    assert bench.main(["--tasks", "tiny-blobs", "--seeds", "1", "--budget", "12", "--strategies",
                       "random"]) == 0
    assert seen and all(n == 1 for pools in seen for n in pools.values())
    assert "1 thread(s)" in capsys.readouterr().out


def test_eer_candidates_option_sets_and_resets_the_candidate_count(monkeypatch):
    import sys
    bench = load_benchmark()
    seen = []

    def run(X, y, strategy, seed, budget):
        seen.append(bench.EER_CANDIDATES)
        return np.full(budget - bench.INITIAL + 1, 0.5), np.zeros(budget - bench.INITIAL)

    monkeypatch.setattr(bench, "run", run)
    common = ["--tasks", "tiny-blobs", "--seeds", "1", "--budget", "12", "--strategies", "random"]
    assert bench.main(common + ["--eer-candidates", "0"]) == 0
    assert bench.main(common) == 0  # a later run without the option is back at the default
    assert seen == [sys.maxsize, bench.EER_CANDIDATES_DEFAULT]
