"""labeler reproduce: helpers, the report figures, and the quick run end to end (slow)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from labeler import cli
from labeler.experiments import findings, reproduce, thesis_arls, thesis_rls
from labeler.experiments.report import chromium_path, curve_figure, summarize_runs, write_png


def curve(values, start=1, column="accuracy"):
    values = np.asarray(values, dtype=float)
    return pd.DataFrame({"n_labeled": np.arange(start, start + values.size), column: values})


def test_summarize_runs_mean_and_population_sd():
    runs = [curve([0.5, 0.7, 0.9]), curve([0.7, 0.7]), curve([0.6, 0.4, 1.0, 1.0])]
    s = summarize_runs(runs, "accuracy")
    assert s["n_labeled"].tolist() == [1, 2, 3, 4]
    np.testing.assert_allclose(s["mean"], [0.6, 0.6, 0.95, 1.0])
    np.testing.assert_allclose(s["std"], [np.std([0.5, 0.7, 0.6]), np.std([0.7, 0.7, 0.4]), 0.05, 0.0])
    assert s["count"].tolist() == [3, 3, 2, 1]
    err = summarize_runs(runs[:1], "error")
    np.testing.assert_allclose(err["mean"], [0.5, 0.3, 0.1])
    with pytest.raises(ValueError, match="no column"):
        summarize_runs(runs, "precision")


def test_first_reaching_and_value_at():
    s = summarize_runs([curve([0.2, 0.5, 0.9, 0.8, 1.0])], "accuracy")
    assert findings.first_at_least(s, 0.9) == 3
    assert findings.first_at_least(s, 1.0) == 5
    assert findings.first_at_least(s, 1.1) is None
    assert findings.first_at_most(s, 0.2) == 1
    assert findings.value_at(s, 4) == pytest.approx(0.8)
    assert np.isnan(findings.value_at(s, 99))
    run = curve([0.2, 1.0, 0.9])
    assert findings.run_first_at_least(run, "accuracy", 1.0) == 2


def test_pool_ratio_weights_equilibrate_the_classes():
    y = np.array([0] * 90 + [1] * 10)
    w = findings.pool_ratio_weights(y)
    assert w == {0: pytest.approx(100 / 180), 1: pytest.approx(5.0)}
    assert 90 * w[0] == pytest.approx(10 * w[1])  # each class carries the same total weight
    assert all(type(k) is int for k in w)


def test_monotonicity_verdicts():
    assert thesis_rls._monotonicity(0, 0.9) == "monotone"
    assert thesis_rls._monotonicity(1, 0.8) == "nearly monotone"
    assert thesis_rls._monotonicity(3, 0.9) == "erratic"
    assert thesis_rls._monotonicity(0, 0.1) == "erratic"


def test_curve_figure_draws_bands_for_several_runs():
    fig = curve_figure({"a": [curve([0.1, 0.2]), curve([0.3, 0.4])], "b": curve([0.5, 0.6])},
                       metrics=("accuracy",), markers={"x": 1})
    names = [t.name for t in fig.data]
    assert "a (mean ± 1 sd, 2 runs)" in names and "b" in names
    assert sum(t.fill == "toself" for t in fig.data) == 1  # one band, for the group with two runs


def test_bayes_variance_matches_the_gp_formula():
    rng = np.random.default_rng(0)
    Xt, Xs = rng.standard_normal((15, 2)), rng.standard_normal((4, 2))
    from core.kernels import Kernel

    k = Kernel("rbf", width=0.9)
    A = np.column_stack([np.full(15, 1.0), rng.uniform(0.5, 2.0, 15)])
    got = thesis_rls._bayes_variance(k(Xt), k(Xs, Xt), 0.3, A)
    for t in range(2):
        G = k(Xt) + np.diag(0.3 / A[:, t])
        expected = [1.0 + 0.3 - k(Xs[i:i + 1], Xt)[0] @ np.linalg.solve(G, k(Xt, Xs[i:i + 1])[:, 0])
                    for i in range(4)]
        np.testing.assert_allclose(got[:, t], expected, rtol=1e-10)


def test_disc_probability_replays_the_run_against_a_direct_solve():
    from core.kernels import Kernel
    from labeler.data import load_dataset
    from labeler.experiments.simulate import simulate

    ds = load_dataset("circles", seed=3, n=202)
    kernel, lam = Kernel("rbf", width=1.7), 0.2
    run = simulate(ds, "random", budget=30, seed=3, kernel=kernel, lam=lam, initial=4)
    got = thesis_arls.disc_probability(ds, run, kernel, lam, [10, 30])
    order = [*run.attrs["initial_indices"], *run["index"].tolist()]  # initial labels, then the queries
    K = kernel(ds.X)
    disc = np.flatnonzero(ds.y == 1)
    for m, p in zip([10, 30], got):
        L = np.array(order[: 4 + m])
        codes = np.where(ds.y[L] == 1, 1.0, -1.0)
        f = K[:, L] @ np.linalg.solve(K[np.ix_(L, L)] + lam * np.eye(L.size), codes)
        assert p == pytest.approx(np.clip((f[disc] + 1) / 2, 0, 1).mean(), rel=1e-9)


def test_render_markdown_has_the_command_and_one_row_per_finding(tmp_path):
    settings = reproduce.Settings(quick=True, seeds=2, png=False, out=tmp_path, log=lambda s: None)
    findings = [reproduce.Finding("a", "Exp A (§1)", "thesis 1", "ours | 1", "note 1", ["detail"], 2.0),
                reproduce.Finding("b", "Exp B (§2)", "thesis 2", "ours 2", "note 2")]
    text = reproduce.render_markdown(findings, settings, "labeler reproduce --quick", 90.0)
    assert "Command: `labeler reproduce --quick`" in text
    assert "| Exp A (§1) | thesis 1 | ours \\| 1 | note 1 |" in text
    assert "## 1. Exp A (§1)" in text and "## 2. Exp B (§2)" in text and "detail" in text


def test_run_reproduction_rejects_bad_arguments(tmp_path):
    with pytest.raises(FileNotFoundError):
        reproduce.run_reproduction(tmp_path / "missing")
    with pytest.raises(ValueError, match="seeds"):
        reproduce.run_reproduction(tmp_path, seeds=0)
    with pytest.raises(ValueError, match="unknown experiment"):
        reproduce.run_reproduction(tmp_path, only=["nope"])
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_png_snapshot(tmp_path):
    if chromium_path() is None:
        pytest.skip("no Chromium on this machine")
    path = write_png(tmp_path / "fig.png", curve_figure({"a": curve([0.1, 0.5, 0.9])}, metrics=("accuracy",)))
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    assert [p.name for p in tmp_path.iterdir()] == ["fig.png"]


@pytest.mark.slow
def test_reproduce_quick_end_to_end(tmp_path, capsys):
    code = cli.main(["reproduce", "--quick", "--out", str(tmp_path), "--no-png"])
    _, err = capsys.readouterr()
    assert code == 0, err
    text = (tmp_path / "reproduction.md").read_text(encoding="utf-8")
    assert text.startswith("# Reproduction of the ARLS thesis experiments")
    assert f"Command: `labeler reproduce --quick --out {tmp_path} --no-png`" in text
    for title in ("two moons", "Confidence bins", "Spheres", "MAGIC, balanced", "Imbalanced circles",
                  "MAGIC, 10 background per gamma"):
        assert title in text, title
    summary = text.split("## Summary")[1].split("## 1.")[0]
    rows = [line for line in summary.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + len(reproduce.EXPERIMENTS)  # header + one row per experiment
    assert "n/a" not in summary
    plots = tmp_path / "reproduction"
    for name in reproduce.EXPERIMENTS:
        html = (plots / f"{name}.html").read_text(encoding="utf-8")
        assert re.findall(r'<script[^>]*src="([^"]*)"', html) == ["plotly.min.js"]  # local, no CDN
        assert f"reproduction/{name}.html" in text
    assert (plots / "plotly.min.js").stat().st_size > 1_000_000
    for name in ("spheres", "magic", "circles", "magic_imbalanced"):
        table = pd.read_csv(plots / f"{name}.csv")
        assert list(table.columns) == ["strategy", "metric", "n_labeled", "mean", "std", "count"]
    # the spheres result of the thesis holds even in the quick run: 60 queries, one per sphere
    assert "ARLS 100% after 60 queries (2/2 seeds exactly 60)" in text
    # every number comes from the run: the circles' p(+1) of the unqueried disc is computed
    assert "never asks about the central disc in 2 of 2 seeds" in text
    found = re.search(r"p\(\+1\) there stays between (\d\.\d\d) and (\d\.\d\d) \(mean over the disc's "
                      r"points, seed 0, after 10 to 100 queries\)", text)
    assert found and 0 <= float(found[1]) <= float(found[2]) < 0.5, text
    leftovers = [p.name for p in Path(tmp_path).rglob("*.tmp")]
    assert leftovers == []
