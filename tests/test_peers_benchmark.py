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
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line and line.split()[0] in bench.OURS}
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
