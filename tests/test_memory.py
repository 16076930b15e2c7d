"""Memory is checked before it is spent: a session that does not fit is refused with a message.

The available memory is patched (``labeler.session.costs.available_memory``), so the tests
never allocate what they refuse.
"""

from __future__ import annotations

import numpy as np
import pytest

from labeler.session import LabelingSession, MemoryBudgetError, SessionConfig, costs, model

GiB = 2**30


def _limit(monkeypatch, nbytes):
    monkeypatch.setattr(costs, "available_memory", lambda: int(nbytes))


def test_estimate_is_dominated_by_the_n_by_n_matrix():
    n = 20_000
    need = costs.session_bytes(n, 2, 2)
    assert 8 * n * n < need < 1.1 * 8 * n * n
    assert costs.session_bytes(1000, 784, 10, 500) > costs.session_bytes(1000, 2, 2, 0)


@pytest.mark.parametrize("budget", [50e6, 1e9, 18.6 * GiB, 100 * GiB])
def test_max_points_is_the_largest_pool_that_fits(budget):
    n = costs.max_points(budget, 10, 3, 40)
    assert costs.session_bytes(n, 10, 3, 40) <= budget < costs.session_bytes(n + 1, 10, 3, 40)


def test_available_memory_reads_meminfo_and_a_cgroup_limit(tmp_path):
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       24000000 kB\nMemFree:  100 kB\nMemAvailable:   10000000 kB\n")
    none = tmp_path / "no-cgroup"
    assert costs.available_memory(meminfo, none) == 10_000_000 * 1024
    cg = tmp_path / "cg"
    cg.mkdir()
    (cg / "memory.max").write_text(f"{4 * GiB}\n")
    (cg / "memory.current").write_text(f"{1 * GiB}\n")
    assert costs.available_memory(meminfo, cg) == 3 * GiB
    (cg / "memory.max").write_text("max\n")  # no limit
    assert costs.available_memory(meminfo, cg) == 10_000_000 * 1024
    assert costs.available_memory(tmp_path / "missing", none) is None


def test_the_real_machine_reports_its_memory():
    avail = costs.available_memory()
    assert avail is None or avail > 0


def test_creation_is_refused_with_how_many_points_fit(tmp_path, monkeypatch):
    _limit(monkeypatch, 100e6)
    store = tmp_path / "s.sqlite"
    with pytest.raises(MemoryBudgetError) as info:
        LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": 5000},
                                                    posterior="dense"))
    text = str(info.value)
    fit = costs.max_points(costs.MEMORY_FRACTION * 100e6, 2, 2)
    assert "5,000 points" in text and f"{fit:,} points fit" in text
    assert "--posterior nystrom" in text and "subsample" in text
    assert not store.exists() or LabelingSession.list_sessions(store) == []
    assert 2000 < fit < 5000


def test_the_factory_refuses_before_allocating(monkeypatch):
    _limit(monkeypatch, 10e6)
    spec = model.RlsSpec(kernel="rbf", width=1.0)
    X = np.zeros((3000, 2))
    with pytest.raises(MemoryBudgetError, match="3,000 points"):
        model.build_learner(spec, X, ["a", "b"])
    _limit(monkeypatch, 10 * GiB)
    assert model.build_learner(spec, X[:100], ["a", "b"]).n_samples == 100


def test_reopening_a_session_that_no_longer_fits_is_refused(tmp_path, monkeypatch):
    store = tmp_path / "s.sqlite"
    with LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": 2000})) as s:
        s.label(s.next_query(), s.classes[0])
    _limit(monkeypatch, 20e6)
    with pytest.raises(MemoryBudgetError, match="2,000 points"):
        LabelingSession.open(store, s.id)
    monkeypatch.undo()
    with LabelingSession.open(store, s.id) as t:
        assert t.n_labeled == 1


def test_sidebar_refuses_a_pool_too_large_for_the_memory(tmp_path, monkeypatch):
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    from labeler.ui.registry import REGISTRY

    monkeypatch.setenv("LABELER_STORE", str(tmp_path / "store.sqlite"))
    monkeypatch.setenv("LABELER_DATA", "moons")
    monkeypatch.setenv("LABELER_DATA_OPTIONS", '{"n": 100}')
    monkeypatch.delenv("LABELER_SESSION", raising=False)
    REGISTRY.clear()
    try:
        at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "labeler" / "app.py"),
                               default_timeout=120)
        at.run()
        sid = at.session_state["session_id"]
        _limit(monkeypatch, 2 * GiB)
        _limit(monkeypatch, 100e6)  # not even the low-rank posterior "auto" falls back to fits
        at.selectbox(key="pick_builtin").set_value("moons").run()
        at.number_input(key="pick_n").set_value(50_000).run()
        at.button(key="open_builtin").click().run()
        assert not at.exception, at.exception
        shown = [e.value.replace("\\", "") for e in at.error]
        assert any("50,000 points" in e and "nystrom" in e and "--rank" in e for e in shown), shown
        assert at.session_state["session_id"] == sid
        assert len(LabelingSession.list_sessions(tmp_path / "store.sqlite")) == 1
        _limit(monkeypatch, 2 * GiB)  # a dense 50,000 would need 20 GB: "auto" takes nystrom
        at.button(key="open_builtin").click().run()
        assert not at.exception, at.exception
        assert at.session_state["session_id"] != sid
        sessions = LabelingSession.list_sessions(tmp_path / "store.sqlite")
        assert len(sessions) == 2
    finally:
        REGISTRY.clear()


def test_a_dense_refusal_names_the_low_rank_posterior(monkeypatch):
    _limit(monkeypatch, 4 * GiB)
    with pytest.raises(MemoryBudgetError) as info:
        costs.check_memory(100_000, 64, 2, posterior="dense")
    assert "--posterior nystrom" in str(info.value) and "100,000 points" in str(info.value)
    # the same pool fits as a factor: 8 n r bytes
    need = costs.check_memory(100_000, 64, 2, posterior="nystrom", rank=300)
    assert 8 * 100_000 * 300 < need < 2 * 8 * 100_000 * 300 + (200 << 20)


def test_auto_takes_the_factor_above_half_the_memory(monkeypatch):
    """Twice the dense session must fit in half the memory: a width re-tune builds the new
    n x n matrix beside the one answering."""
    n = 10_000
    dense = costs.session_bytes(n, 2, 2)
    assert costs.choose_posterior("auto", n, 2, available=int(4.1 * dense)) == ("dense", "")
    kind, note = costs.choose_posterior("auto", n, 2, available=int(3.9 * dense))
    assert kind == "nystrom" and "10,000 points" in note and "--posterior dense" in note
    assert "twice while a re-tune rebuilds it" in note
    assert costs.choose_posterior("spectral", n, 2, available=1) == ("spectral", "")
    with pytest.raises(ValueError, match="Unknown posterior"):
        costs.choose_posterior("sparse", n, 2)


def test_auto_keeps_the_exact_learner_only_while_its_step_fits_the_latency_target():
    """Memory to spare: the step time decides (docs/benchmarks.md, "When the exact learner answers")."""
    plenty = 1 << 50
    for T in (2, 3, 10):
        n_max = costs.dense_latency_max_points(T)
        assert costs.dense_step_seconds(n_max, T) <= costs.DENSE_STEP_TARGET_S < costs.dense_step_seconds(n_max + 1, T)
        assert costs.choose_posterior("auto", n_max, 8, T, available=plenty) == ("dense", "")
        kind, note = costs.choose_posterior("auto", n_max + 1, 8, T, available=plenty)
        assert kind == "nystrom" and f"{n_max + 1:,} points" in note and "--posterior dense" in note
        assert "its picks are subsampled" in note
    assert costs.dense_latency_max_points(10) < costs.dense_latency_max_points(3) < costs.dense_latency_max_points(2)
    assert costs.choose_posterior("dense", 10**6, 8, 10, available=plenty) == ("dense", "")


@pytest.mark.parametrize("T", [2, 10])
def test_a_dense_learner_scores_exactly_up_to_the_binary_exact_step_and_by_a_subsample_beyond(T, monkeypatch):
    """The size is the binary one for any class count (a class added later must not change
    how a rebuilt learner picks); the step constant is scaled so that the pools stay small."""
    from core.criteria.subsampled import SubsampledExpectedRisk

    monkeypatch.setattr(costs, "DENSE_STEP_S_PER_N2", costs.DENSE_STEP_TARGET_S / 300.5 ** 2)
    n_max = costs.dense_exact_pick_max_points()
    assert n_max == costs.dense_latency_max_points(2) == 300
    classes = [f"c{k}" for k in range(T)]
    spec = model.RlsSpec(kernel="rbf", width=1.0, lam=0.1, strategy="arls", posterior="dense")
    rng = np.random.default_rng(0)
    small = model.build_learner(spec, rng.standard_normal((n_max, 2)), classes)
    assert not isinstance(small.risk_criterion, SubsampledExpectedRisk)
    assert model.scoring_note(spec, n_max, n_max) == ""
    big = model.build_learner(spec, rng.standard_normal((n_max + 1, 2)), classes)
    assert isinstance(big.risk_criterion, SubsampledExpectedRisk)
    note = model.scoring_note(spec, n_max + 1, n_max)
    assert note.startswith("approximate pick") and "exact dense posterior" in note and f"{n_max:,} points" in note
