"""labeler reproduce-graph: the quick run of every section (CI), its files, and sanity checks that can fail."""

from __future__ import annotations

import re

import numpy as np
import pytest

from labeler import cli
from labeler.experiments import graph_repro
from labeler.experiments.graph_repro import _common, seed000, seed001, seed004

SECTION_NAMES = list(graph_repro.SECTIONS)


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs")
    messages = []
    index = graph_repro.run_graph_reproduction(out, quick=True, log=messages.append,
                                               command="labeler reproduce-graph --quick")
    return out, index, messages


# --------------------------------------------------------------------------- shape of the output
def test_quick_run_writes_index_and_one_file_per_section(quick_run):
    out, index, messages = quick_run
    assert index == out / "reproduction_graph.md"
    text = index.read_text()
    assert text.startswith("# Reproduction of the graph seeds")
    assert "Command: `labeler reproduce-graph --quick`" in text
    assert "Quick run" in text
    for name in SECTION_NAMES:
        path = out / "reproduction_graph" / f"{name}.md"
        assert path.is_file(), name
        assert f"(reproduction_graph/{name}.md)" in text
        section = path.read_text()
        assert section.startswith("## ")
        assert section.rstrip() in text  # the index holds every section verbatim
    assert any(m.startswith("[seed004]") for m in messages)


@pytest.mark.parametrize("name", ["seed004", "seed001", "seed000", "zhu"])
def test_each_section_has_command_tables_and_discussion(quick_run, name):
    out, _, _ = quick_run
    section = (out / "reproduction_graph" / f"{name}.md").read_text()
    assert f"Command: `labeler reproduce-graph --only {name} --quick`" in section
    assert section.count("|---") >= 1
    assert re.search(r"^### Where we (agree and )?differ", section, re.MULTILINE)
    assert "nan" not in section.lower().replace("nanmean", "")


def test_seed004_section_puts_the_seed_numbers_beside_ours(quick_run):
    out, _, _ = quick_run
    section = (out / "reproduction_graph" / "seed004.md").read_text()
    # one-two at 10 labels: the paper's improved order kernel, 96.2 ± 2.7, alignment 0.87
    row = next(line for line in section.splitlines() if line.startswith("| Improved order | 10 |"))
    assert "96.2 ± 2.7" in row and "0.87" in row
    assert "omitted for space" in section  # odd-even: the paper gives no numbers


def test_seed003_is_skipped_with_a_note_when_absent(quick_run):
    out, index, _ = quick_run
    section = (out / "reproduction_graph" / "seed003.md").read_text()
    if graph_repro.load_section("seed003") is None:
        assert "Skipped" in section and "seed003.py" in section
        assert "| skipped |" in index.read_text()
    else:  # built by its helper: then it must be a real section
        assert "Skipped" not in section


def test_missing_module_is_skipped_but_a_broken_import_raises(monkeypatch):
    monkeypatch.setitem(graph_repro.SECTIONS, "nosuch", ("nosuch_section", "A section not in this checkout"))
    assert graph_repro.load_section("nosuch") is None
    text, ran = graph_repro.run_section("nosuch")
    assert not ran and "Skipped" in text and "nosuch_section.py" in text
    with pytest.raises(ValueError, match="unknown section 'bogus'"):
        graph_repro.load_section("bogus")


def test_unknown_section_and_bad_repeats_are_refused(tmp_path):
    with pytest.raises(ValueError, match="unknown section.*choose from seed004"):
        graph_repro.run_graph_reproduction(tmp_path, quick=True, only=["seed004", "bogus"], log=lambda m: None)
    with pytest.raises(ValueError, match="repeats must be an integer >= 1"):
        graph_repro.run_graph_reproduction(tmp_path, quick=True, only=["zhu"], repeats=0, log=lambda m: None)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        graph_repro.run_graph_reproduction(tmp_path / "missing", quick=True, log=lambda m: None)
    assert list(tmp_path.iterdir()) == []


def test_a_failing_section_leaves_no_files(tmp_path, monkeypatch):
    def boom(quick=False, repeats=None):
        raise RuntimeError("section failed")

    monkeypatch.setattr(seed001, "run", boom)
    with pytest.raises(RuntimeError, match="section failed"):
        graph_repro.run_graph_reproduction(tmp_path, quick=True, only=["seed000", "seed001"], log=lambda m: None)
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------------------------------- command line
def test_cli_runs_one_section(tmp_path, capsys):
    out = tmp_path / "docs"
    assert cli.main(["reproduce-graph", "--quick", "--only", "seed001", "--repeats", "1", "--out", str(out)]) == 0
    text = (out / "reproduction_graph.md").read_text()
    assert f"Command: `labeler reproduce-graph --quick --only seed001 --repeats 1 --out {out}`" in text
    assert (out / "reproduction_graph" / "seed001.md").is_file()
    assert not (out / "reproduction_graph" / "seed004.md").exists()
    assert "[seed001]" in capsys.readouterr().err


def test_only_keeps_the_other_sections_of_an_earlier_run(tmp_path):
    folder = tmp_path / "reproduction_graph"
    folder.mkdir()
    (folder / "seed004.md").write_text("## Seed 004 from before\n\nCommand: `earlier`\n")
    index = graph_repro.run_graph_reproduction(tmp_path, quick=True, only=["seed001"], repeats=1,
                                               log=lambda m: None)
    text = index.read_text()
    assert "## Seed 004 from before" in text and "| kept from an earlier run |" in text
    assert text.index("## Seed 004 from before") < text.index("## Seed 001")  # the registry's order
    assert (folder / "seed004.md").read_text().startswith("## Seed 004 from before")
    assert "zhu.md" not in text  # never run, no file: not listed


def test_cli_refuses_unknown_sections_and_a_file_as_out(tmp_path, capsys):
    assert cli.main(["reproduce-graph", "--only", "seed004,bogus"]) == 2
    assert "unknown section(s) bogus" in capsys.readouterr().err
    afile = tmp_path / "f.md"
    afile.write_text("x")
    assert cli.main(["reproduce-graph", "--quick", "--only", "zhu", "--out", str(afile)]) == 2
    assert "is a file" in capsys.readouterr().err
    assert cli.main(["reproduce-graph", "--quick", "--out", str(tmp_path / "no" / "such")]) == 2
    assert "does not exist" in capsys.readouterr().err


# --------------------------------------------------------------------------- sanity checks that can fail
def test_harmonic_three_vs_rest_beats_the_base_rate_and_cg_matches_direct():
    from core.kernels import knn_graph

    X, y = _common.mnist(2000, seed=0)
    target = (y == 3).astype(np.int64)
    W = knn_graph(X, 3)
    cell = seed001.harmonic_curve(W, target, (150,), repeats=2)[150]
    base = np.mean(target == 0)
    assert min(cell["acc"]) > base + 0.03 and min(cell["acc"]) > 0.93
    assert min(cell["agree"]) == 1.0
    assert max(cell["max_diff"]) < 1e-3


def test_alignment_order_of_the_kernel_cones():
    # max-align >= improved order >= order >= (diffusion, Gaussian field): nested cones, and the
    # parametric spectra are decreasing, so they lie in the order cone
    X, y = _common.mnist(500, digits=(4, 9), seed=1)
    out = seed004.evaluate_task(X, y, (10, 30), repeats=2, rank=30, C_grid=(1.0,))
    res = out["results"]
    for size in (10, 30):
        a = {k: np.asarray(res[k][size]["align"]) for k in seed004.SEMI}
        assert np.all(a["max_alignment"] >= a["improved_order"] - 1e-6)
        assert np.all(a["improved_order"] >= a["order"] - 1e-6)
        assert np.all(a["order"] >= a["diffusion"] - 1e-6)
        assert np.all(a["order"] >= a["gaussian_field"] - 1e-6)
    assert np.mean(res["improved_order"][30]["svm"]) > 0.85  # 4 vs 9 with 30 labels on 500 images


def test_nystrom_percent_error_matches_the_dense_formula():
    from core.kernels import Kernel, nystrom_factor

    rng = np.random.default_rng(0)
    X = rng.standard_normal((230, 5))
    kernel = Kernel("rbf", width=2.0)
    factors = [nystrom_factor(X, kernel, m, seed=m) for m in (5, 20, 60)]
    K = kernel(X)
    dense = [100 * np.linalg.norm(K - F @ F.T) / np.linalg.norm(K) for F in factors]
    np.testing.assert_allclose(seed000.nystrom_percent_errors(X, kernel, factors, block=37), dense, rtol=1e-6)
    assert dense[0] > dense[1] > dense[2]


def test_lgc_ranking_retrieves_the_negatives():
    X, y = _common.mnist(400, digits=(0, 1), seed=0)
    from core.kernels.kernel import median_distance

    W = seed000.rbf_graph(X, median_distance(X, seed=0))
    P = np.flatnonzero(y == 0)
    L = np.sort(np.random.default_rng(0).choice(P, P.size // 5, replace=False))
    A = seed000.lgc_ranking_accuracy(W, y, 0, L, alphas=(0.9, 1e-6))
    assert A.shape == (2,) and np.all(A > 0.95)
    assert W.diagonal().max() == 0


def test_svm_and_rls_on_a_perfect_kernel():
    y = np.repeat([0, 1, 2], 20)
    K = (y[:, None] == y[None, :]).astype(float) + 1e-3 * np.eye(y.size)  # class-indicator kernel
    L = np.array([0, 1, 2, 20, 21, 22, 40, 41, 42])
    acc, C = seed004.svm_accuracy(K[:, L], L, y, C_grid=(1.0, 10.0))
    assert acc == 1.0 and C in (1.0, 10.0)
    assert seed004.rls_accuracy(K[:, L], L, y) == 1.0


def test_draw_labelled_holds_every_class_and_refuses_too_small_sets():
    y = np.array([0] * 50 + [1] * 3 + [2] * 3)
    rng = np.random.default_rng(0)
    for _ in range(20):
        L = _common.draw_labelled(y, 5, rng)
        assert set(y[L]) == {0, 1, 2} and np.unique(L).size == 5
    with pytest.raises(ValueError, match="cannot hold all 3 classes"):
        _common.draw_labelled(y, 2, rng)
    with pytest.raises(ValueError, match="repeats must be an integer"):
        _common.check_repeats(True, 3)
    assert _common.check_repeats(None, 3) == 3
