"""Sessions and simulations on a low-rank posterior (issue 8): the choice is stored and replayed,
the factor is cached in the store, LOO tunes the model the learner runs, picks and curves
follow the dense learner, and no view allocates an n x n array."""

from __future__ import annotations

import dataclasses
import tracemalloc

import numpy as np
import pytest

from core.criteria.subsampled import SubsampledExpectedRisk
from core.kernels import Kernel
from core.kernels.factors import NystromKernel, nystrom_landmarks, nystrom_map
from core.posteriors import FactorPosterior, NystromPosterior
from labeler.data import load_dataset
from labeler.experiments.simulate import simulate
from labeler.session import LabelingSession, SessionConfig, costs, model
from labeler.session import data as session_data
from labeler.session.config import SessionConfig as _Cfg

GiB = 2**30


def _nystrom(n=600, rank=40, **kw):
    return SessionConfig(dataset="moons", dataset_options={"n": n}, posterior="nystrom", rank=rank,
                         initial_labels=4, **kw)


def _label_some(s, k):
    for j in range(k):
        s.label(s.next_query(), s.classes[j % 2])


# ------------------------------------------------------------------ stored and replayed
def test_the_posterior_is_stored_and_a_reopened_session_is_the_live_one(tmp_path):
    store = tmp_path / "s.sqlite"
    with LabelingSession.create(store, _nystrom()) as s:
        assert isinstance(s.learner.posterior, NystromPosterior)
        _label_some(s, 6)
        s.set_width(0.7 * s.config.width)  # Phi recomputed from the same landmarks
        _label_some(s, 3)
        s.undo()
        live, query, sid = s.learner.decision_values.copy(), s.next_query(), s.id
        cfg = s.config
    assert (cfg.posterior, cfg.rank, cfg.landmarks) == ("nystrom", 40, "uniform")
    with LabelingSession.open(store, sid) as t:
        assert isinstance(t.learner.posterior, NystromPosterior)
        assert t.config.posterior == "nystrom" and t.config.rank == 40
        np.testing.assert_allclose(t.learner.decision_values, live, rtol=0, atol=1e-10)
        assert t.next_query() == query


def test_the_landmarks_are_read_from_the_store_not_drawn_again(tmp_path, monkeypatch):
    store = tmp_path / "s.sqlite"
    with LabelingSession.create(store, _nystrom(landmarks="kmeans")) as s:
        _label_some(s, 3)
        Z, sid = s.learner.posterior.landmarks.copy(), s.id
        live = s.learner.decision_values.copy()
    import core.kernels.factors as factors

    def fail(*a, **k):
        raise AssertionError("landmarks chosen again on reopening")

    monkeypatch.setattr(factors, "nystrom_landmarks", fail)
    with LabelingSession.open(store, sid) as t:
        np.testing.assert_array_equal(t.learner.posterior.landmarks, Z)
        np.testing.assert_allclose(t.learner.decision_values, live, rtol=0, atol=1e-10)


def test_a_spectral_factor_is_stored_in_chunks_and_reused(tmp_path, monkeypatch):
    monkeypatch.setattr(session_data, "FACTOR_CHUNK_BYTES", 8 * 20 * 100)  # 100 rows of rank 20
    store = tmp_path / "s.sqlite"
    cfg = SessionConfig(dataset="moons", dataset_options={"n": 450}, posterior="spectral", rank=20,
                        knn=8, initial_labels=4)
    with LabelingSession.create(store, cfg) as s:
        assert type(s.learner.posterior) is FactorPosterior and s.learner.posterior.rank == 20
        assert s.config.auto_tune["width"] is False  # a graph kernel has no width
        with pytest.raises(ValueError, match="spectral"):
            s.set_width(1.0)
        assert "width" not in s.model_summary()["settings"] and "lam" in s.model_summary()["settings"]
        _label_some(s, 5)
        Phi, live, sid = s.learner.posterior.factor.copy(), s.learner.decision_values.copy(), s.id
    import core.kernels.graph as graph

    monkeypatch.setattr(graph, "knn_graph", lambda *a, **k: (_ for _ in ()).throw(AssertionError("rebuilt")))
    with LabelingSession.open(store, sid) as t:
        np.testing.assert_array_equal(t.learner.posterior.factor, Phi)
        np.testing.assert_allclose(t.learner.decision_values, live, rtol=0, atol=1e-10)


def test_factor_chunks_round_trip():
    spec = model.RlsSpec(posterior="spectral", rank=3, knn=5)
    Phi = np.arange(3000.0).reshape(1000, 3)
    arrays = session_data.factor_arrays(spec, {"factor": Phi, "eigenvalues": np.ones(3)})
    old = session_data.FACTOR_CHUNK_BYTES
    try:
        session_data.FACTOR_CHUNK_BYTES = 8 * 3 * 300
        arrays = session_data.factor_arrays(spec, {"factor": Phi, "eigenvalues": np.ones(3)})
    finally:
        session_data.FACTOR_CHUNK_BYTES = old
    assert sum(k.startswith("factor-spectral-k5-r3-s0-factor-") for k in arrays) == 5  # 4 chunks + count
    parts = session_data.load_factor_parts(arrays.get, spec)
    np.testing.assert_array_equal(parts["factor"], Phi)
    assert session_data.load_factor_parts({}.get, spec) == {}


def test_sessions_stored_before_the_posterior_field_reopen_dense(tmp_path, monkeypatch):
    store = tmp_path / "s.sqlite"
    new_keys = ("posterior", "rank", "landmarks", "knn")
    to_dict = _Cfg.to_dict
    monkeypatch.setattr(_Cfg, "to_dict", lambda self: {k: v for k, v in to_dict(self).items()
                                                       if k not in new_keys})
    with LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": 300},
                                                     posterior="dense")) as s:
        _label_some(s, 3)
        sid, live = s.id, s.learner.decision_values.copy()
    monkeypatch.undo()
    with LabelingSession.open(store, sid) as t:
        assert t.config.posterior == "dense" and t.learner.posterior.__class__.__name__ == "DensePosterior"
        np.testing.assert_allclose(t.learner.decision_values, live, rtol=0, atol=1e-10)


# ------------------------------------------------------------------ the choice
def test_auto_takes_nystrom_when_dense_needs_over_half_the_memory(tmp_path, monkeypatch):
    """Over half the memory for twice the dense session (a re-tune's new matrix beside the old)."""
    n = 3000
    dense = costs.session_bytes(n, 2, 2, 4)
    monkeypatch.setattr(costs, "available_memory", lambda: int(3.5 * dense))
    with LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(
            dataset="moons", dataset_options={"n": n}, initial_labels=4)) as s:
        assert s.config.posterior == "nystrom" and s.config.rank == 300
        assert "3,000 points" in s.auto_settings["posterior"]
        assert isinstance(s.learner.posterior, NystromPosterior)
    monkeypatch.setattr(costs, "available_memory", lambda: int(4.5 * dense))
    with LabelingSession.create(tmp_path / "t.sqlite", SessionConfig(
            dataset="moons", dataset_options={"n": n})) as s:
        assert s.config.posterior == "dense" and "posterior" not in s.auto_settings


def test_large_factor_pools_score_by_the_subsampled_criterion_and_say_so():
    X = np.random.default_rng(0).standard_normal((model.SUBSAMPLE_ABOVE + 1, 3))
    spec = model.RlsSpec(width=1.0, posterior="nystrom", rank=20)
    learner = model.build_learner(spec, X, ["a", "b"])
    assert isinstance(learner.risk_criterion, SubsampledExpectedRisk)
    assert "approximate" in model.scoring_note(spec, X.shape[0])
    small = model.build_learner(spec, X[:500], ["a", "b"])
    assert not isinstance(small.risk_criterion, SubsampledExpectedRisk)
    assert model.scoring_note(spec, 500) == "" == model.scoring_note(dataclasses.replace(spec, posterior="dense"), 10**6)


def test_bad_posterior_settings_are_refused_with_the_fix(tmp_path):
    for bad, match in (({"posterior": "sparse"}, "Unknown posterior"), ({"landmarks": "grid"}, "Unknown landmarks"),
                       ({"posterior": "nystrom", "rank": 10_000}, "smaller --rank"),
                       ({"posterior": "spectral", "knn": 0}, "knn must be")):
        with pytest.raises(ValueError, match=match):
            LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons",
                                                                        dataset_options={"n": 300}, **bad))
    assert LabelingSession.list_sessions(tmp_path / "s.sqlite") == []


# ------------------------------------------------------------------ LOO on the factor
def test_loo_tuning_sees_the_factor_kernel_block():
    X = np.random.default_rng(1).standard_normal((400, 3))
    base = Kernel("rbf", width=1.3)
    Z = nystrom_landmarks(X, 25, seed=0)
    Phi = nystrom_map(X, base, Z)
    L = np.array([3, 50, 7, 300])
    nk = NystromKernel("rbf", 1.3, landmarks=Z)
    np.testing.assert_allclose(nk(X[L]), Phi[L] @ Phi[L].T, atol=1e-12)
    wide = dataclasses.replace(nk, width=2.0)  # what the width tuner does
    Phi2 = nystrom_map(X, Kernel("rbf", width=2.0), Z)
    np.testing.assert_allclose(wide(X[L]), Phi2[L] @ Phi2[L].T, atol=1e-12)
    assert not np.allclose(nk(X[L]), base(X[L]), atol=1e-3)  # the exact kernel is another model
    spec = model.RlsSpec(width=1.3, posterior="nystrom", rank=25)
    learner = model.build_learner(spec, X, ["a", "b"])
    X_L, kernel, ok = model._loo_problem(spec, learner, X, L)
    assert ok and isinstance(kernel, NystromKernel)
    np.testing.assert_allclose(kernel(X_L), learner.posterior.prior_block(L), atol=1e-12)


# ------------------------------------------------------------------ fidelity at small n
def _curve(**kw):
    ds = load_dataset("moons", n=300, seed=0, n_val=2)
    return simulate(ds, budget=25, initial=4, seed=0, kernel=Kernel("rbf", width=0.5), lam=0.1,
                    weighting="balanced", **kw)


def test_a_full_rank_factor_picks_as_dense_and_a_truncated_one_learns_as_well():
    dense = _curve()
    full = _curve(posterior="nystrom", rank=300)
    assert full.attrs["posterior"] == "nystrom" and full.attrs["scoring"] == "exact"
    assert (full["index"].to_numpy()[:15] == dense["index"].to_numpy()[:15]).all()
    low = _curve(posterior="nystrom", rank=30)
    assert low.attrs["rank"] <= 30
    area_dense, area_low = dense["accuracy"].mean(), low["accuracy"].mean()
    assert abs(area_dense - area_low) < 0.03, (area_dense, area_low)


def test_cli_simulate_with_a_nystrom_posterior(tmp_path, capsys):
    from labeler.cli import main

    rng = np.random.default_rng(0)
    X = rng.standard_normal((400, 3))
    path = tmp_path / "pool.csv"
    lines = ["a,b,c,label"] + [f"{x[0]},{x[1]},{x[2]},{'p' if x[0] + x[1] > 0 else 'n'}" for x in X]
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "curve.csv"
    assert main(["simulate", str(path), "--budget", "8", "--initial", "4", "--posterior", "nystrom",
                 "--rank", "30", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "posterior nystrom, rank 30" in err and "Nystrom factor" in err
    assert len(out.read_text().strip().splitlines()) == 9


def test_cli_simulate_refuses_a_dense_pool_that_does_not_fit(tmp_path, capsys, monkeypatch):
    from labeler.cli import main

    monkeypatch.setattr(costs, "available_memory", lambda: 20 << 20)
    code = main(["simulate", "moons", "--budget", "3", "--posterior", "dense"])
    err = capsys.readouterr().err
    assert code == 2 and "--posterior nystrom" in err


# ------------------------------------------------------------------ no n x n anywhere
def test_no_view_allocates_an_n_by_n_array(tmp_path):
    n = 6000  # an n x n float64 array is 288 MB; an n x 256 block 12 MB
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, _nystrom(n=n, rank=50))
    try:
        tracemalloc.start()
        _label_some(s, 4)
        s.explain_query()
        s.predictions(with_risk=True)
        s.stopping_signal()
        s.confidence_bins()
        s.bulk_accept_risk(0.5, 1.0)
        s.export_table()
        s.set_width(0.8 * s.config.width)
        s.next_query()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    finally:
        s.close()
    assert peak < 8 * n * n / 4, f"peak {peak / 2**20:.0f} MiB"


def test_explain_density_oracles(monkeypatch):
    from labeler.session import explain

    rng0 = np.random.default_rng(8)
    for _ in range(5):
        unlabeled = np.sort(rng0.choice(500, 300, replace=False))
        skipped = list(rng0.choice(500, 20, replace=False))
        assert np.array_equal(explain._unlabelled_not_skipped(unlabeled, skipped, 500),
                              np.setdiff1d(unlabeled, np.asarray(skipped, dtype=np.intp)))
    assert np.array_equal(explain._unlabelled_not_skipped(np.arange(5), [], 5), np.arange(5))

    rng = np.random.default_rng(3)
    X = rng.standard_normal((300, 2))
    rows, unl = np.array([0, 5, 9]), np.sort(rng.choice(300, 200, replace=False))
    spec = model.RlsSpec(width=0.8, posterior="nystrom", rank=30)
    factor = model.build_learner(spec, X, ["a", "b"])
    Phi = factor.posterior.factor
    slow = (Phi[rows] @ Phi[unl].T).mean(axis=1)
    np.testing.assert_allclose(explain._mean_similarity(factor, X, rows, unl), slow, atol=1e-12)
    # the kept column sums: the same bits as the pass over the factor on every call before
    others = np.ones(300, dtype=bool)
    others[unl] = False
    before = (Phi[rows] @ (Phi.sum(axis=0) - Phi[others].sum(axis=0))) / unl.size
    assert np.array_equal(explain._mean_similarity(factor, X, rows, unl), before)
    assert np.array_equal(factor.posterior.column_sums(), Phi.sum(axis=0))
    factor.posterior.set_kernel(Kernel("rbf", width=0.5))  # a new factor: its own sums
    assert np.array_equal(factor.posterior.column_sums(), factor.posterior.factor.sum(axis=0))
    dense = model.build_learner(dataclasses.replace(spec, posterior="dense"), X, ["a", "b"])
    monkeypatch.setattr(explain, "_COLUMN_BLOCK", 7)  # many column blocks
    slow = Kernel("rbf", width=0.8)(X[rows], X[unl]).mean(axis=1)
    np.testing.assert_allclose(explain._mean_similarity(dense, X, rows, unl), slow, atol=1e-12)


def test_labeler_app_hands_the_posterior_to_the_first_session(monkeypatch):
    from labeler import cli
    from labeler.cli.posterior import model_options
    from labeler.ui.config import AppConfig

    args = cli.build_parser().parse_args(["app", "--posterior", "nystrom", "--rank", "50"])
    assert model_options(args) == {"posterior": "nystrom", "rank": 50}
    cfg = AppConfig.from_env({"LABELER_MODEL": '{"posterior": "nystrom", "rank": 50, "other": 1}'})
    assert cfg.model == {"posterior": "nystrom", "rank": 50}
    assert AppConfig.from_env({}).model == {}
    with pytest.raises(ValueError, match="LABELER_MODEL"):
        AppConfig.from_env({"LABELER_MODEL": "[1]"})


def test_the_alternatives_are_the_stable_sort_prefix_without_sorting_all():
    from labeler.session.explain import _smallest_stable

    rng = np.random.default_rng(5)
    for values in (rng.integers(0, 5, 200).astype(float), rng.standard_normal(300),
                   np.r_[np.full(50, np.inf), rng.standard_normal(3)], np.full(10, np.inf)):
        for k in (1, 4, 60, 400):
            np.testing.assert_array_equal(_smallest_stable(values, k),
                                          np.argsort(values, kind="stable")[:k])
