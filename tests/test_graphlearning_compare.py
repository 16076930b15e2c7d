"""Our harmonic function agrees with GraphLearning's Laplace learning on the same graph (issue 10 §4)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

gl = pytest.importorskip("graphlearning")

ROOT = Path(__file__).resolve().parents[1]


def load_benchmark():
    spec = importlib.util.spec_from_file_location("gl_compare", ROOT / "benchmarks" / "graphlearning_compare.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def small_graph(seed=0, n=150):
    from sklearn.datasets import make_moons
    X, y = make_moons(n_samples=n, noise=0.12, random_state=seed)
    return X, y


@pytest.mark.parametrize("n_labels", [2, 10])
def test_harmonic_function_equals_graphlearning_laplace(n_labels):
    bench = load_benchmark()
    X, y = small_graph()
    W = bench.gl_graph(X, 8)
    L = bench.random_labels(y, n_labels, np.random.default_rng(n_labels))
    u = bench.gl_laplace(W, L, y[L], tol=1e-12)
    F = bench.harmonic_values(W, L, y[L], 2, solver="direct")
    free = np.setdiff1d(np.arange(len(y)), L)
    np.testing.assert_allclose(F[free], u[free], atol=1e-8)
    np.testing.assert_array_equal(F.argmax(axis=1), u.argmax(axis=1))
    np.testing.assert_array_equal(F[L], u[L])  # one-hot on the labelled nodes in both


def test_random_labels_hold_every_class_once_first():
    bench = load_benchmark()
    y = np.array([0] * 30 + [1] * 3 + [2] * 5)
    L = bench.random_labels(y, 6, np.random.default_rng(0))
    assert len(set(L.tolist())) == 6 and set(y[L[:3]].tolist()) == {0, 1, 2}


def test_every_picker_returns_unlabelled_nodes():
    bench = load_benchmark()
    X, y = small_graph(seed=1, n=120)
    W = bench.gl_graph(X, 8)
    for kind in bench.GL_STRATEGIES + bench.OUR_STRATEGIES:
        acc = bench.run_curve(kind, W, y, seed=0, budget=8, rank=20)
        assert acc.shape == (7,) and np.all((0 <= acc) & (acc <= 1)), kind


def test_quick_run_prints_the_three_tables(capsys):
    bench = load_benchmark()
    assert bench.main(["--quick"]) == 0
    out = capsys.readouterr().out
    for title in ("## 1. Laplace learning", "## 2. Time per query", "## 3. Labels to accuracy"):
        assert title in out
    rows = [line.split() for line in out.splitlines() if line.startswith("3v5")]
    assert rows and all(float(r[4]) == 100.0 for r in rows)  # agreement of the predictions, %


def test_skips_cleanly_without_graphlearning(capsys, monkeypatch):
    bench = load_benchmark()
    monkeypatch.setattr(bench, "available", lambda: False)
    assert bench.main(["--quick"]) == 0
    assert "skipped: graphlearning is not installed" in capsys.readouterr().out
