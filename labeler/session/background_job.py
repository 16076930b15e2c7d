"""One computation off the key press's request: the base of the session's background jobs.

The app keeps seconds of work out of the request that makes it due: the automatic re-tune of
width and lam (:mod:`.retune`), the model choice's evaluation (:mod:`.choice_job`) and the
Progress tab's LOO curves (:class:`.retune.CurvesJob`, which writes nothing and needs no slot).
They follow one pattern, kept here once:

* :class:`BackgroundJob` runs one computation (its :meth:`~BackgroundJob.compute`, the body)
  in a worker thread on a SNAPSHOT of what it reads, copied in the request that starts it, never
  on the live learner; it can be cancelled (the body checks :attr:`~BackgroundJob.cancelled`
  between its steps and drops what it built), waited for, and tells whether its result still
  applies: :func:`labels_stale` (the snapshot's labels are still labels of the session, each
  unchanged; new ones may have come after them) and :func:`labels_added` with
  :func:`catch_up` (the labels added since the snapshot given to a learner the job built, as
  exact incremental updates: one ``add`` or one block ``add_many``, the live learner's own).
* :class:`JobSlot` holds a session's one job of a kind: one job at a time, a job that comes
  due while one runs is remembered, and is started as soon as the running one finishes (the
  owner's ``when_done`` callback, run in the worker thread under the session's lock, takes the
  finished result and starts the due job), not at the next label.
* :class:`JobSlotOwner` is the owner's side of its slot, written once: the job held, whether
  another run is due, ``pending``, ``wait`` and ``cancel``.

The owner (:class:`.settings.Settings`, :class:`.model_selection.ModelChoice`) takes a finished
result at the next change of the labels (or when a due job waits, as soon as it is done): it
writes the change as ordinary ``setting`` events at the label count where it takes effect and
swaps the job's learner in, so a reopened session replays the log exactly; a stale result is
discarded and the computation runs again on the labels now.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

__all__ = ["BackgroundJob", "JobSlot", "JobSlotOwner", "labels_stale", "labels_added", "catch_up"]


def labels_stale(before: Sequence, now: Sequence) -> str:
    """Why the labels ``now`` no longer extend the labels ``before`` ("" when they do).

    Parameters
    ----------
    before, now : sequence of (int, str)
        Net labels ``(index, label)`` in labelling order: those a job read, those of the
        session now.

    Returns
    -------
    str
        "" when every label of ``before`` is in ``now`` with the same class (new labels may
        have come after them), else the reason in words.
    """
    current = dict(now)
    if any(current.get(i) != label for i, label in before):
        return "labels it was computed on were undone or changed meanwhile"
    return ""


def labels_added(before: Sequence, now: Sequence) -> list:
    """The labels of ``now`` whose points ``before`` has no label for, in labelling order
    (checked by :func:`labels_stale` first); ``[(index, label), ...]``."""
    known = {i for i, _ in before}
    return [(i, label) for i, label in now if i not in known]


def catch_up(learner, added: Sequence):
    """Give ``learner`` the labels ``added`` (``[(index, label), ...]``): one exact ``add`` or
    one block ``add_many``, the live learner's own updates. Returns ``learner``."""
    added = list(added)
    if len(added) == 1:
        learner.add(added[0][0], added[0][1])
    elif added:
        learner.add_many([i for i, _ in added], [label for _, label in added])
    return learner


class BackgroundJob:
    """One computation in a worker thread on a snapshot (see the module docstring).

    Subclasses give the body, :meth:`compute` (it reads ``self.snapshot`` and the read-only
    inputs they keep, stores its result on ``self``, and checks :attr:`cancelled` between its
    steps), and :meth:`discard` (drop what a cancelled job built).

    Parameters
    ----------
    snapshot : object
        What the computation reads, copied in the request that starts it (frozen).
    start : bool
        Start the worker thread now (tests may call :meth:`run` themselves).

    Attributes
    ----------
    snapshot : object
    error : Exception or None
        What the body raised (the owner shows it; nothing is applied).
    when_done : callable or None
        ``when_done(job)``, called in the worker thread once the job is done (:class:`JobSlot`
        sets it before the thread starts).
    """

    #: The worker thread's name.
    thread_name = "labeler-background-job"

    def __init__(self, snapshot, start: bool = True):
        self.snapshot = snapshot
        self.error: Exception | None = None
        self.when_done: Callable | None = None
        self._done = threading.Event()
        self._cancelled = threading.Event()
        self._thread: threading.Thread | None = None
        if start:
            self.start()

    def start(self) -> None:
        """Start the worker thread (once)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self.run, name=self.thread_name, daemon=True)
            self._thread.start()

    # ---- the worker ---------------------------------------------------------------------
    def compute(self) -> None:
        """The computation (the subclass's body)."""
        raise NotImplementedError

    def discard(self) -> None:
        """Drop what a cancelled job built (the subclass's results)."""

    def run(self) -> None:
        """Run :meth:`compute`, keep what it raised, then mark the job done (the worker
        thread's body; never raises)."""
        try:
            if not self._cancelled.is_set():
                self.compute()
        except Exception as exc:  # shown by the owner; the labels are stored already
            self.error = exc
        finally:
            if self._cancelled.is_set():
                self.discard()
            self._done.set()
        callback = self.when_done
        if callback is not None:
            callback(self)

    # ---- the request's side -------------------------------------------------------------
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the job is done; True if it is."""
        return self._done.wait(timeout)

    def cancel(self) -> None:
        """Ask the worker to stop at its next step and drop what it built (a stale job, or
        the session closing)."""
        self._cancelled.set()
        self.discard()

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()


class JobSlot:
    """A session's one background job of a kind: one at a time, a due one waits for the
    running one and starts as soon as it finishes (see the module docstring).

    Parameters
    ----------
    lock : threading.RLock or None
        The session's lock: the owner's ``when_done`` runs under it (it writes events and
        swaps learners as a request does). None: ``when_done`` is never called (tests).
    when_done : callable or None
        ``when_done()``: the owner takes the finished job and starts the due one; called in
        the worker thread, under ``lock``, when a job finishes while one is due.

    Attributes
    ----------
    job : BackgroundJob or None
        The job running or waiting to be taken.
    due : bool
        Another run came due while :attr:`job` ran.
    """

    #: How long the worker waits at a time for the session's lock (a request holds it): it
    #: tries again until the job is taken or cancelled.
    LOCK_POLL_SECONDS = 0.1

    def __init__(self, lock=None, when_done: Callable | None = None):
        self._lock = lock
        self._when_done = when_done
        self.job: BackgroundJob | None = None
        self.due = False

    @property
    def pending(self) -> bool:
        """Whether a job is running or waits to be taken."""
        return self.job is not None

    def start(self, job: BackgroundJob) -> BackgroundJob:
        """Hold ``job`` and start its thread (the slot must be free)."""
        if self.job is not None:
            raise RuntimeError("A background job is still held: take or cancel it before starting another.")
        self.job = job
        job.when_done = self._finished
        job.start()
        return job

    def take(self) -> BackgroundJob | None:
        """Free the slot; returns the job it held."""
        job, self.job = self.job, None
        return job

    def take_due(self) -> bool:
        """Whether a run came due while the job ran (and forget it)."""
        due, self.due = self.due, False
        return due

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the held job (if any) is done; True if none is running then."""
        job = self.job
        return True if job is None else job.wait(timeout)

    def cancel(self) -> None:
        """Drop the held job and a due run."""
        job, self.job = self.job, None
        self.due = False
        if job is not None:
            job.cancel()

    def _finished(self, job: BackgroundJob) -> None:
        """In the worker thread, once ``job`` is done: when a run is due, let the owner take
        the result and start it, under the session's lock (waiting for a request that holds
        it; giving up once the job was taken meanwhile, or dropped by :meth:`cancel`). A job
        cancelled as stale while a run is due stays held: the owner discards it here."""
        if self._lock is None or self._when_done is None:
            return
        while self.job is job and self.due:
            if self._lock.acquire(timeout=self.LOCK_POLL_SECONDS):
                try:
                    if self.job is job and self.due:
                        self._when_done()
                finally:
                    self._lock.release()
                return


class JobSlotOwner:
    """The owner's side of its :class:`JobSlot` (:class:`.settings.Settings`,
    :class:`.model_selection.ModelChoice`): a base class.

    The owner calls :meth:`_open_slot` in its ``__init__`` and gives ``_job_finished()``, the
    slot's ``when_done`` (take the finished job and start the due one).
    """

    _slot: JobSlot

    def _open_slot(self, lock=None) -> None:
        """Make the owner's slot; ``lock``: the session's lock (see :class:`JobSlot`)."""
        self._slot = JobSlot(lock, self._job_finished)

    def _job_finished(self) -> None:
        """Take the finished job and start the due one (the owner's; see :class:`JobSlot`)."""
        raise NotImplementedError

    @property
    def _job(self) -> BackgroundJob | None:
        """The background job running or waiting to be taken (:attr:`JobSlot.job`)."""
        return self._slot.job

    @property
    def _due_while_busy(self) -> bool:
        """Another run came due while :attr:`_job` ran (:attr:`JobSlot.due`)."""
        return self._slot.due

    @property
    def pending(self) -> bool:
        """Whether a background job is running or waits to be taken."""
        return self._slot.pending

    def wait(self, timeout: float | None = None) -> bool:
        """Wait until the background job (if any) is done; True if none is running then. Its
        result applies at the next change of the labels."""
        return self._slot.wait(timeout)

    def cancel(self) -> None:
        """Drop the background job and a due run (closing the session, or the background
        turned off)."""
        self._slot.cancel()
