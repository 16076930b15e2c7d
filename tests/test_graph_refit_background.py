"""A graph model's refit off the key press's request (labeler/session/graph_refit.py): the label
is stored at once, the next query is picked by the model of the moment among the points without
a label, the refitted twin is swapped in when done, any other change settles first, and a
reopened session replays the same queries and the same model (against a fresh fit).

The pool threshold is lowered so that a small pool takes the background path, and the refit is
held at a gate so that labels arrive while it runs."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest
from numpy.testing import assert_allclose

import labeler.session.graph_refit as graph_refit
from labeler.session import LabelingSession, SessionConfig

N = 300


@pytest.fixture
def gate(monkeypatch):
    """Background refits on pools of >= 100 points, each held until ``gate.set()``."""
    monkeypatch.setattr(graph_refit, "BACKGROUND_REFIT_ABOVE", 100)
    event = threading.Event()
    compute = graph_refit.GraphRefitJob.compute

    def held(job):
        event.wait(30)
        compute(job)

    monkeypatch.setattr(graph_refit.GraphRefitJob, "compute", held)
    return event


def _session(tmp_path, model):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": N},
                                                                    model=model, layout="pca", seed=1))
    s.retune_in_background(True)
    return s


def _press(s, y):
    q = s.next_query()
    assert q not in s.labels
    assert s.label(q, str(y[q]), expected_query=q)
    return q


@pytest.mark.parametrize("model", ["harmonic", "lgc", "poisson"])
def test_labels_arrive_while_the_refit_runs_and_the_twin_is_swapped_in(tmp_path, gate, model):
    s = _session(tmp_path, model)
    y = np.asarray(s.dataset.y)
    before = s.learner
    asked = [_press(s, y) for _ in range(4)]  # the gate holds the first refit: none applied yet
    assert len(set(asked)) == 4 and s.n_labeled == 4
    assert s.learner is before and s.learner.n_labeled == 0  # the model of the moment answered
    assert set(s.graph_refits.pending_indices.tolist()) == set(asked)
    s.predictions()
    s.confidence_bins()  # the LOO rows of the labels the learner holds (none yet)
    gate.set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # the first refit swapped in, the second (three labels) started at once
        s.graph_refits.wait(1)
        with s._lock:
            if not s.graph_refits.pending and s.learner.n_labeled == 4:
                break
        time.sleep(0.05)
    assert s.learner.labels == s.labels
    gate.clear()  # the next refits wait again: the session closes with labels still being fitted
    for _ in range(3):
        _press(s, y)
    assert s.learner.n_labeled == 4 and s.n_labeled == 7
    shown = s.next_query()  # picked by the model holding 4 of the 7 labels, recorded in the store
    sid = s.id
    s.close()
    gate.set()
    r = LabelingSession.open(tmp_path / "s.sqlite", sid)
    assert r.labels == r.learner.labels and r.n_labeled == 7
    assert r.next_query() == shown  # the same query after a reopen
    r.retune_in_background(True)
    _press(r, y)
    r.undo()  # settles: the learner holds every label, then the undo applies in the request
    assert r.learner.labels == r.labels and not r.graph_refits.pending
    reopened = LabelingSession.open(tmp_path / "s.sqlite", sid)
    assert_allclose(r.learner.class_values, reopened.learner.class_values, atol=1e-8)  # a fresh fit
    r.close()
    reopened.close()


def test_small_pools_and_the_library_refit_in_the_request(tmp_path, monkeypatch):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": N},
                                                                    model="harmonic", layout="pca"))
    y = np.asarray(s.dataset.y)
    s.retune_in_background(True)  # the pool is below BACKGROUND_REFIT_ABOVE
    _press(s, y)
    assert s.learner.n_labeled == 1 and not s.graph_refits.pending
    monkeypatch.setattr(graph_refit, "BACKGROUND_REFIT_ABOVE", 100)
    s.retune_in_background(False)  # the library: in the request whatever the size
    _press(s, y)
    assert s.learner.n_labeled == 2 and not s.graph_refits.pending
    s.close()


def test_a_failed_refit_gives_its_labels_in_the_next_request(tmp_path, monkeypatch):
    monkeypatch.setattr(graph_refit, "BACKGROUND_REFIT_ABOVE", 100)
    compute = graph_refit.GraphRefitJob.compute
    calls = []

    def fails_once(job):
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("solver broke")
        compute(job)

    monkeypatch.setattr(graph_refit.GraphRefitJob, "compute", fails_once)
    s = _session(tmp_path, "harmonic")
    y = np.asarray(s.dataset.y)
    q = _press(s, y)
    s.graph_refits.wait(30)
    s.skip(s.next_query())  # another change: settles (the failed job's label given here)
    assert isinstance(s.graph_refits.error, RuntimeError) and s.learner.n_labeled == 1
    assert q in s.learner.labels
    s.close()


def test_a_stopping_checkpoint_is_the_model_holding_its_labels_and_no_press_waits(tmp_path, gate):
    """While the refits are held, every press answers from the model of the moment (none
    waits for a refit) and a checkpoint counts only the labels that model holds; once they are
    swapped in, the checkpoint of every label is recorded from the model holding them."""
    s = _session(tmp_path, "harmonic")
    y = np.asarray(s.dataset.y)
    monitor = s.settings.stopping_monitor
    record = monitor.record
    seen = []

    def spy(n_labels, predicted):
        kept = record(n_labels, predicted)
        if kept:
            seen.append((n_labels, s.learner.n_labeled))
        return kept

    monitor.record = spy
    presses = 2 * monitor.spacing + 1
    for _ in range(presses):
        _press(s, y)
    assert s.learner.n_labeled == 0 and s.n_labeled == presses  # no press waited for a refit
    assert all(held == n == 0 for n, held in seen)
    gate.set()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        s.graph_refits.wait(1)
        with s._lock:
            if not s.graph_refits.pending and s.learner.n_labeled == presses:
                break
        time.sleep(0.05)
    assert s.learner.n_labeled == presses
    assert all(held == n for n, held in seen)  # each checkpoint: the model holding its n labels
    assert seen[-1] == (presses, presses) and monitor.checkpoints[-1] == presses
    s.close()


@pytest.fixture
def held_until_waited(monkeypatch):
    """Background refits on pools of >= 100 points, each held until a request waits for it
    (``settle``): a refit nobody waits for is still running when the request goes on."""
    monkeypatch.setattr(graph_refit, "BACKGROUND_REFIT_ABOVE", 100)
    compute, wait = graph_refit.GraphRefitJob.compute, graph_refit.GraphRefitJob.wait

    def held(job):
        job.waited.wait(30)
        compute(job)

    def waited(job, timeout=None):
        job.waited.set()
        return wait(job, timeout)

    init = graph_refit.GraphRefitJob.__init__

    def init_with_gate(job, *args, **kwargs):
        job.waited = threading.Event()
        init(job, *args, **kwargs)

    monkeypatch.setattr(graph_refit.GraphRefitJob, "__init__", init_with_gate)
    monkeypatch.setattr(graph_refit.GraphRefitJob, "compute", held)
    monkeypatch.setattr(graph_refit.GraphRefitJob, "wait", waited)


def _label_of_the_second_class(s):
    """Label one point of the second class (deferred: the learner does not hold it yet)."""
    y = np.asarray(s.dataset.y).astype(str)
    second = s.classes[1]
    s.label(int(np.flatnonzero(y == second)[0]), second)
    assert s.learner.n_labeled == 0  # held until a request waits for it
    return second


def test_export_waits_for_the_refit(tmp_path, held_until_waited):
    s = _session(tmp_path, "harmonic")
    second = _label_of_the_second_class(s)  # one label: the harmonic function gives every point its class
    table = s.export_table(include_predictions=True)
    assert s.learner.n_labeled == 1
    assert set(table["predicted"].astype(str)) == {second}
    s.close()


def test_accepted_predictions_wait_for_the_refit(tmp_path, held_until_waited):
    s = _session(tmp_path, "harmonic")
    second = _label_of_the_second_class(s)
    other = next(i for i in range(N) if i not in s.labels)
    assert s.accept_predictions([other]) == 1
    assert s.labels[other] == second  # the prediction of the learner holding the label
    s.close()


def test_a_view_computed_across_the_swap_is_not_kept(tmp_path, gate):
    s = _session(tmp_path, "harmonic")
    y = np.asarray(s.dataset.y)
    _press(s, y)
    job = s.graph_refits._job
    assert job is not None and s.learner.n_labeled == 0

    def computed_while_the_refit_is_swapped_in():  # a page render on the old learner (no lock)
        gate.set()
        job._thread.join(30)  # the worker swapped the twin in (under the session's lock)
        return "from the learner replaced"

    assert s._cached("view", computed_while_the_refit_is_swapped_in) == "from the learner replaced"
    assert s.learner.n_labeled == 1
    assert s._cached("view", lambda: "from the learner holding the label") == "from the learner holding the label"
    s.close()


def test_after_a_failed_refit_the_next_label_is_given_in_its_request(tmp_path, gate, monkeypatch):
    held = graph_refit.GraphRefitJob.compute  # held at the gate (the fixture)
    calls, fail_now = [], threading.Event()

    def fails_once(job):
        calls.append(1)
        if len(calls) == 1:
            fail_now.wait(30)
            raise RuntimeError("solver broke")
        held(job)

    monkeypatch.setattr(graph_refit.GraphRefitJob, "compute", fails_once)
    s = _session(tmp_path, "harmonic")
    y = np.asarray(s.dataset.y)
    _press(s, y)
    job = s.graph_refits._job
    fail_now.set()
    job._thread.join(30)  # failed, taken by the worker (nothing started)
    assert isinstance(s.graph_refits.error, RuntimeError) and s.learner.n_labeled == 0
    assert "solver broke" in s.refit_note
    _press(s, y)  # no retry in the background: both labels given in this request
    assert s.learner.n_labeled == 2 and not s.graph_refits.pending and len(calls) == 1
    assert "solver broke" in s.refit_note  # shown until a refit succeeds
    _press(s, y)  # the next refit runs in the background again
    assert s.learner.n_labeled == 2 and s.graph_refits.pending
    gate.set()
    s.graph_refits.wait(30)
    s.graph_refits.settle()
    assert s.learner.n_labeled == 3 and s.refit_note == ""
    s.close()


def test_a_refit_done_at_once_is_swapped_in(tmp_path, monkeypatch):
    """A refit finished before its start returned is still taken (it is due from the start)."""
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": N},
                                                                    model="harmonic", layout="pca"))
    start = graph_refit.GraphRefitJob.start

    def start_and_finish(job):
        start(job)
        job._thread.join(30)  # done (and its when_done run) before the request goes on

    monkeypatch.setattr(graph_refit.GraphRefitJob, "start", start_and_finish)
    swapped = []
    refits = graph_refit.GraphRefits(lambda: s.learner, swapped.append, N, lock=threading.RLock())
    refits.add([SimpleNamespace(index=3, label=s.classes[0])])
    assert len(swapped) == 1 and swapped[0].labels == {3: s.classes[0]} and not refits.pending
    s.close()
