"""Scoring in blocks through executors: serial, threads and a real Dask ``LocalCluster``.

Every executor must give the scores of the plain criterion (to 1e-12) and the same pick; a
worker killed during a query must not change the pick; a scheduler that cannot be reached
is named, and a cluster lost during a session leaves the session scoring on this machine.
The cluster tests start a ``distributed.LocalCluster`` with 2 worker processes (what a 2-core
CI machine holds) and close it at the end of the module.
"""

from __future__ import annotations

import os
import signal
import threading
import time
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose

from core.criteria import ExpectedRisk
from core.criteria.blocks import (BlockScoredExpectedRisk, ExecutorFallbackWarning, ExecutorUnavailable,
                                  SerialExecutor, ThreadExecutor)
from core.criteria.subsampled import SubsampledExpectedRisk
from core.kernels import Kernel, nystrom_factor
from core.learner import ActiveRLS

distributed = pytest.importorskip("distributed")

from labeler.distributed import DaskExecutor, make_executor  # noqa: E402


def factor_learner(classes, weighting="balanced", n=900, rank=60, n_labels=24, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((len(classes), 5)) * 2.5
    y = rng.integers(0, len(classes), n)
    X = centres[y] + rng.standard_normal((n, 5))
    Phi = nystrom_factor(X, Kernel("rbf", width=2.0), rank, seed=seed)
    learner = ActiveRLS.from_factor(Phi, classes=classes, lam=0.1, weighting=weighting, random_state=seed)
    idx = rng.choice(n, n_labels, replace=False)
    learner.add_many(idx, [classes[y[i]] for i in idx])
    return learner


@pytest.fixture(scope="module")
def cluster():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lc = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
        client = distributed.Client(lc)
    try:
        yield lc, client
    finally:
        client.close()
        lc.close()


CASES = [([0, 1], "balanced"), (["a", "b", "c", "d"], "balanced"), (["a", "b", "c"], "none")]


@pytest.mark.parametrize("classes, weighting", CASES)
def test_serial_and_thread_blocks_give_the_plain_expected_risk(classes, weighting):
    learner = factor_learner(classes, weighting)
    unl = learner.unlabeled_indices
    exact = learner.score(ExpectedRisk(), unl)
    for executor in (SerialExecutor(), ThreadExecutor(2)):
        got = learner.score(BlockScoredExpectedRisk(executor, block_rows=97), unl)
        assert_allclose(got, exact, rtol=1e-12, atol=0)
    sub = SubsampledExpectedRisk(n_uncertain=60, n_random=40, n_points=300, seed=3)
    want = learner.score(sub, unl)
    got = learner.score(BlockScoredExpectedRisk(ThreadExecutor(2), block_rows=17, subsample=sub), unl)
    assert np.array_equal(np.isfinite(got), np.isfinite(want)) and np.isfinite(want).sum() == 100
    assert_allclose(got[np.isfinite(got)], want[np.isfinite(want)], rtol=1e-12, atol=0)


def test_a_dense_posterior_is_scored_as_before():
    rng = np.random.default_rng(4)
    learner = ActiveRLS.from_features(rng.standard_normal((200, 3)), classes=[0, 1], kernel=Kernel("rbf", width=1.0))
    learner.add_many([0, 1, 2, 3], [0, 1, 0, 1])
    unl = learner.unlabeled_indices
    assert_allclose(learner.score(BlockScoredExpectedRisk(ThreadExecutor(2)), unl),
                    learner.score(ExpectedRisk(), unl), rtol=1e-12, atol=0)


@pytest.mark.parametrize("classes, weighting", CASES[:2])
def test_a_local_cluster_gives_the_same_scores_and_pick(cluster, classes, weighting):
    _, client = cluster
    learner = factor_learner(classes, weighting, seed=1)
    unl = learner.unlabeled_indices
    exact = learner.score(ExpectedRisk(), unl)
    executor = DaskExecutor(client=client)
    got = learner.score(BlockScoredExpectedRisk(executor, block_rows=128), unl)
    assert_allclose(got, exact, rtol=1e-12, atol=0)
    assert unl[np.argmin(got)] == unl[np.argmin(exact)]


def test_the_factor_is_shipped_once_and_the_state_once_per_query(cluster):
    _, client = cluster
    learner = factor_learner([0, 1], seed=2, n=3000, rank=80)  # Phi: 1.9 MB, shipped once
    executor = DaskExecutor(client=client)
    crit = BlockScoredExpectedRisk(executor, block_rows=500)
    first = learner.score(crit)
    phi_future = executor._cache["Phi"][2]
    learner.add(int(learner.unlabeled_indices[np.argmin(first)]), 1)
    second = learner.score(crit)
    assert executor._cache["Phi"][2] is phi_future  # the same scattered factor
    assert_allclose(second, learner.score(ExpectedRisk()), rtol=1e-12, atol=0)


def _slow_block(block, **shared):
    time.sleep(0.05)
    from core.criteria.blocks import score_factor_block

    return score_factor_block(block, **shared)


def test_a_worker_killed_during_a_query_does_not_change_the_pick(cluster):
    lc, client = cluster
    learner = factor_learner(["a", "b", "c"], seed=3, n=1200)
    unl = learner.unlabeled_indices
    exact = learner.score(ExpectedRisk(), unl)
    executor = DaskExecutor(client=client)
    state = learner.scoring_state()
    post = learner._post
    blocks = [(unl[a:a + 20], unl[a:a + 20]) for a in range(0, unl.size, 20)]  # ~60 tasks of 50 ms
    shared = dict(Phi=post.factor, P=post.weight_covariance, outputs_T=np.ascontiguousarray(state.outputs_T),
                  hypothetical_lam=state.hypothetical_lam, class_weights=state.class_weights, cols=None)
    pids = client.run(os.getpid)
    result = {}

    def run():
        try:
            result["parts"] = executor.map(_slow_block, blocks, shared)
        except Exception as exc:  # shown by the assertion below
            result["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    deadline = time.monotonic() + 60
    while not any(client.processing().values()) and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(0.3)  # some tasks are done, some running
    victim = sorted(pids)[0]
    os.kill(pids[victim], signal.SIGKILL)
    worker.join(timeout=180)
    assert not worker.is_alive(), "the query did not finish after a worker was killed"
    assert "error" not in result, f"the query failed after a worker was killed: {result.get('error')!r}"
    got = np.concatenate(result["parts"])
    assert_allclose(got, exact, rtol=1e-12, atol=0)
    assert unl[np.argmin(got)] == unl[np.argmin(exact)]
    client.wait_for_workers(2, timeout=120)  # the nanny restarts it for the next tests


def test_a_query_whose_shipped_arrays_were_lost_is_run_again(cluster, monkeypatch):
    """A worker that dies holding the only copy of a shipped array cancels the query's futures
    (as when the arrays were scattered while a restarted worker had not joined yet): the
    arrays are shipped again and the query run once more, with the same scores; a second loss
    in a row gives up with the executor's message."""
    from distributed.client import FuturesCancelledError

    lc, client = cluster
    learner = factor_learner([0, 1], seed=5, n=600)
    executor = DaskExecutor(client=client)
    crit = BlockScoredExpectedRisk(executor, block_rows=200)
    gather, calls = client.gather, []

    def lose_once(futures, *args, **kwargs):
        calls.append(len(futures))
        if len(calls) == 1:
            raise FuturesCancelledError([])
        return gather(futures, *args, **kwargs)

    monkeypatch.setattr(client, "gather", lose_once)
    shipped = []
    ship = executor._ship
    monkeypatch.setattr(executor, "_ship", lambda name, value: shipped.append(name) or ship(name, value))
    assert_allclose(learner.score(crit), learner.score(ExpectedRisk()), rtol=1e-12, atol=0)
    assert len(calls) == 2 and shipped.count("Phi") == 2  # the factor shipped again after the loss

    def lose_always(futures, *args, **kwargs):
        raise FuturesCancelledError([])

    monkeypatch.setattr(client, "gather", lose_always)
    with pytest.raises(ExecutorUnavailable, match="could not finish the query"):
        executor.map(_slow_block, [], {})
    monkeypatch.setattr(client, "status", "closed")
    started = time.monotonic()  # a client closed meanwhile: no wait for workers, no retry
    assert executor._workers_back(timeout=30.0) is False and time.monotonic() - started < 5.0


def test_an_unreachable_scheduler_is_named_with_what_to_do():
    with pytest.raises(ExecutorUnavailable, match=r"Could not reach the Dask scheduler at tcp://127.0.0.1:9 .*--executor"):
        DaskExecutor("tcp://127.0.0.1:9", connect_timeout=1.0)
    with pytest.raises(ExecutorUnavailable, match="Could not reach"):
        make_executor("dask://127.0.0.1:9")


def test_a_cluster_lost_mid_session_leaves_the_session_scoring_here():
    learner = factor_learner([0, 1], seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        executor = DaskExecutor(local_workers=1)
    crit = BlockScoredExpectedRisk(executor, block_rows=200)
    exact = learner.score(ExpectedRisk())
    assert_allclose(learner.score(crit), exact, rtol=1e-12, atol=0)
    executor.close()  # the cluster is gone
    with pytest.warns(ExecutorFallbackWarning, match="scored on this machine"):
        again = learner.score(crit)
    assert_allclose(again, exact, rtol=1e-12, atol=0)
    assert isinstance(crit.executor, SerialExecutor)


def test_executor_names():
    assert isinstance(make_executor(None), SerialExecutor)
    assert isinstance(make_executor("serial"), SerialExecutor)
    assert make_executor("threads:3").n_threads == 3
    for bad, match in (("gpu", "unknown executor 'gpu'"), ("dask://host", "needs a host and a port"),
                       ("threads:0", "positive integer")):
        with pytest.raises(ValueError, match=match):
            make_executor(bad)
    with pytest.raises(ValueError, match="block_rows"):
        BlockScoredExpectedRisk(block_rows=0)


# ---------------------------------------------------------------------------- factor building
def pool(n=700, d=6, seed=7):
    return np.random.default_rng(seed).standard_normal((n, d))


def test_nystrom_rows_in_tasks_equal_the_single_machine_factor(cluster):
    from labeler.distributed_factors import nystrom_factor_blocks

    _, client = cluster
    X, kernel = pool(), Kernel("rbf", width=2.5)
    want = nystrom_factor(X, kernel, 80, seed=3)
    for executor in (SerialExecutor(), ThreadExecutor(2), DaskExecutor(client=client)):
        got = nystrom_factor_blocks(X, kernel, 80, seed=3, executor=executor, block_rows=123)
        assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    with pytest.raises(ValueError, match="block_rows"):
        nystrom_factor_blocks(X, kernel, 80, block_rows=0)


def test_nystrom_of_a_dask_array_stays_lazy_and_equals_the_factor(cluster):
    import dask.array as da

    from labeler.distributed_factors import nystrom_factor_blocks

    X, kernel = pool(), Kernel("rbf", width=2.5)
    lazy = nystrom_factor_blocks(da.from_array(X, chunks=(150, 3)), kernel, 60, seed=5, landmarks_from=X)
    assert isinstance(lazy, da.Array) and lazy.shape == (700, 60)
    assert_allclose(lazy.compute(), nystrom_factor(X, kernel, 60, seed=5), rtol=1e-12, atol=1e-14)


def test_knn_graph_in_tasks_equals_the_exact_graph(cluster):
    from core.kernels import knn_graph
    from labeler.distributed_factors import knn_blocks, knn_graph_blocks

    _, client = cluster
    X = pool(n=500)
    want = knn_graph(X, 8, weights="heat")
    for executor in (SerialExecutor(), DaskExecutor(client=client)):
        got = knn_graph_blocks(X, 8, weights="heat", executor=executor, block_rows=77)
        assert (got != want).nnz == 0 or np.abs(got - want).max() < 1e-12
    ind, dist = knn_blocks(X, 3)
    brute = np.linalg.norm(X[:, None] - X[None], axis=2)
    np.fill_diagonal(brute, np.inf)
    assert np.array_equal(ind, np.argsort(brute, axis=1, kind="stable")[:, :3])
    with pytest.raises(ValueError, match="n_neighbors"):
        knn_blocks(X, 500)


# ---------------------------------------------------------------------------- the commands and the app
def test_simulate_with_an_executor_takes_the_same_queries(tmp_path):
    from labeler.data import load_dataset
    from labeler.experiments.simulate import simulate

    dataset = load_dataset("moons", n=600)
    kw = dict(strategy="arls", budget=6, seed=1, initial=4, posterior="nystrom", rank=40)
    plain = simulate(dataset, **kw)
    spread = simulate(dataset, executor=ThreadExecutor(2), **kw)
    assert plain["index"].tolist() == spread["index"].tolist()
    assert_allclose(spread["estimated_risk"], plain["estimated_risk"], rtol=1e-10)


def test_a_session_scores_on_the_process_executor(tmp_path, monkeypatch):
    import labeler.distributed as dist
    from labeler.session import LabelingSession
    from labeler.session.config import SessionConfig

    config = SessionConfig(dataset="moons", dataset_options={"n": 600}, posterior="nystrom", rank=40,
                           initial_labels=4)
    with LabelingSession.create(tmp_path / "a.sqlite", config) as s:
        want = s.next_query()
        phi = np.array(s.learner.posterior.factor)
    monkeypatch.setenv("LABELER_EXECUTOR", "threads:2")
    monkeypatch.setattr(dist, "_PROCESS", {})
    with LabelingSession.create(tmp_path / "b.sqlite", config) as s:
        assert isinstance(s.learner.risk_criterion, BlockScoredExpectedRisk)
        assert_allclose(s.learner.posterior.factor, phi, rtol=1e-12, atol=1e-14)  # rows built in tasks
        assert s.next_query() == want
    monkeypatch.setenv("LABELER_EXECUTOR", "dask://127.0.0.1:9")
    monkeypatch.setattr(dist, "_PROCESS", {})
    with pytest.warns(UserWarning, match="scored on this machine"):
        assert dist.process_executor() is None


def test_the_commands_name_a_bad_executor_before_anything_starts(tmp_path, capsys, monkeypatch):
    from labeler import cli

    started = []
    monkeypatch.setattr("labeler.serve.run_app", lambda **kw: started.append(kw))
    for argv in (["simulate", "moons", "--posterior", "nystrom", "--budget", "2", "--executor", "gpu"],
                 ["app", "moons", "--executor", "dask://127.0.0.1:9"]):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert "--executor" in err and ("unknown executor 'gpu'" in err or "Could not reach" in err)
    assert started == []


def test_a_spectral_factor_from_neighbours_found_in_tasks_is_the_same(tmp_path):
    from labeler.session.lowrank import build_factor
    from labeler.session.model import RlsSpec

    X = pool(n=300, d=3)
    spec = RlsSpec(posterior="spectral", rank=12, knn=6, width=1.0)
    here, _ = build_factor(spec, X)
    there, _ = build_factor(spec, X, executor=ThreadExecutor(2))
    assert_allclose(np.abs(there.factor), np.abs(here.factor), rtol=1e-8, atol=1e-10)
