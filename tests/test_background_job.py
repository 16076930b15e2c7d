"""The base of the session's background jobs (labeler/session/background_job.py): a job's worker,
cancel, wait, the staleness of its snapshot's labels, the catch-up of labels added meanwhile, and the
slot that runs one job at a time and starts a due one as soon as the running one finishes."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from labeler.session.background_job import BackgroundJob, JobSlot, catch_up, labels_added, labels_stale

WAIT = 30


class GatedJob(BackgroundJob):
    """Doubles the snapshot's numbers once its gate opens; checks the cancel flag before finishing."""

    thread_name = "test-gated-job"

    def __init__(self, snapshot, start=True, fail=False):
        self.gate = threading.Event()
        self.result = None
        self.fail = fail
        self.discarded = False
        super().__init__(snapshot, start=start)

    def compute(self):
        assert self.gate.wait(WAIT)
        if self.fail:
            raise ArithmeticError("no answer")
        if self.cancelled:
            return
        self.result = [2 * v for v in self.snapshot]

    def discard(self):
        self.discarded = True
        self.result = None


class Recorder:
    """A learner's add / add_many, recorded."""

    def __init__(self):
        self.calls = []

    def add(self, i, label):
        self.calls.append(("add", i, label))

    def add_many(self, indices, labels):
        self.calls.append(("add_many", list(indices), list(labels)))


def _until(predicate, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_a_job_runs_its_body_in_a_worker_and_is_waited_for():
    job = GatedJob((1, 2, 3))
    assert not job.done() and not job.wait(0.05)
    job.gate.set()
    assert job.wait(WAIT) and job.done()
    assert job.result == [2, 4, 6] and job.error is None and job._thread.name == "test-gated-job"


def test_a_failing_body_is_kept_as_the_error_never_raised():
    job = GatedJob((1,), fail=True)
    job.gate.set()
    assert job.wait(WAIT)
    assert isinstance(job.error, ArithmeticError) and job.result is None


def test_a_cancelled_job_drops_what_it_built():
    job = GatedJob((1, 2))
    job.cancel()
    job.gate.set()
    assert job.wait(WAIT)
    assert job.cancelled and job.discarded and job.result is None
    early = GatedJob((1,), start=False)
    early.cancel()
    early.run()  # cancelled before it started: the body never runs
    assert early.done() and early.result is None


def test_labels_stale_and_added():
    before = ((3, "a"), (5, "b"))
    assert labels_stale(before, [(3, "a"), (5, "b"), (7, "a")]) == ""
    assert labels_added(before, [(3, "a"), (5, "b"), (7, "a"), (1, "b")]) == [(7, "a"), (1, "b")]
    assert "undone or changed" in labels_stale(before, [(3, "a")])  # undone
    assert "undone or changed" in labels_stale(before, [(3, "a"), (5, "a")])  # relabelled
    assert labels_stale((), [(1, "a")]) == ""


def test_catch_up_is_one_add_or_one_block():
    one, many, none = Recorder(), Recorder(), Recorder()
    catch_up(one, [(4, "a")])
    catch_up(many, [(4, "a"), (6, "b")])
    catch_up(none, [])
    assert one.calls == [("add", 4, "a")]
    assert many.calls == [("add_many", [4, 6], ["a", "b"])]
    assert none.calls == []


def test_catch_up_gives_a_real_learner_the_same_state_as_labelling_it_live():
    from core.learner import ActiveRLS

    X = np.random.default_rng(0).normal(size=(40, 2))
    labels = [(i, "a" if X[i, 0] > 0 else "b") for i in range(8)]
    live = ActiveRLS.from_features(X, classes=["a", "b"], lam=0.5)
    for i, lab in labels:
        live.add(i, lab)
    worker = ActiveRLS.from_features(X, classes=["a", "b"], lam=0.5)
    catch_up(worker, labels[:5])  # the snapshot's labels, in the worker
    catch_up(worker, labels_added(labels[:5], labels))  # those added meanwhile
    np.testing.assert_allclose(worker.decision_values, live.decision_values, atol=1e-10)


def test_the_slot_runs_one_job_at_a_time():
    slot = JobSlot()
    job = slot.start(GatedJob((1,), start=False))
    assert slot.pending and slot.job is job
    with pytest.raises(RuntimeError, match="still held"):
        slot.start(GatedJob((2,), start=False))
    job.gate.set()
    assert slot.wait(WAIT)
    assert slot.take() is job and not slot.pending and slot.wait(0)


def test_the_slot_cancel_drops_the_job_and_a_due_run():
    lock = threading.RLock()
    started = []
    slot = JobSlot(lock, lambda: started.append(1))
    job = slot.start(GatedJob((1,), start=False))
    slot.due = True
    slot.cancel()
    job.gate.set()
    assert job.wait(WAIT)
    time.sleep(0.2)
    assert job.cancelled and not slot.pending and not slot.due and started == []


def test_a_due_run_starts_as_soon_as_the_running_job_finishes():
    """Not at the next label: the owner's callback runs in the worker, under the session's lock,
    and (waiting while a request holds the lock) starts the due job."""
    lock = threading.RLock()
    slot = None
    jobs = []

    def when_done():
        assert lock._is_owned()
        finished = slot.take()
        assert finished.done() and slot.take_due()
        jobs.append(slot.start(GatedJob((len(jobs) + 10,), start=False)))

    slot = JobSlot(lock, when_done)
    first = slot.start(GatedJob((1,), start=False))
    slot.due = True  # came due while it runs
    with lock:  # a request holds the session's lock when the job finishes
        first.gate.set()
        assert first.wait(WAIT)
        time.sleep(0.3)
        assert slot.job is first  # waits for the lock
    # the callback takes the finished job, then starts the due one: wait for the start itself
    assert _until(lambda: bool(jobs))
    second = slot.job
    assert second is jobs[0] and second.snapshot == (10,) and not slot.due
    second.gate.set()
    assert second.wait(WAIT)
    time.sleep(0.2)
    assert slot.job is second and len(jobs) == 1  # nothing due: left to be taken at the next label


def test_a_job_cancelled_as_stale_while_a_run_is_due_is_discarded_by_the_owner():
    lock = threading.RLock()
    seen = []
    slot = None

    def when_done():
        job = slot.take()
        slot.take_due()
        seen.append(job.cancelled)

    slot = JobSlot(lock, when_done)
    job = slot.start(GatedJob((1,), start=False))
    job.cancel()  # stale: the owner cancels it but keeps it held
    slot.due = True
    job.gate.set()
    assert _until(lambda: seen == [True])
    assert not slot.pending
