"""A graph model's refit off the key press's request, on large pools (issue 23 item 4).

On a pool of at least :data:`BACKGROUND_REFIT_ABOVE` points a graph learner's refit after a
label costs seconds (one multigrid-preconditioned CG solve of 10^6 unknowns for the harmonic
function, one unit-source solve for Poisson learning, one column of ``(D - alpha W)^-1`` for
LGC). In the app (:meth:`LabelingSession.retune_in_background`) a label added there is not given
to the learner in the request: the label is stored at once, and

* a :class:`GraphRefitJob` gives it to a TWIN of the learner (``learner.twin()``: the same
  graph and solutions, its own label book) in a worker thread, with the learner's own exact
  update (``add`` / ``add_many``, :func:`.background_job.catch_up`), and computes the twin's
  exact LOO values there too (the calibration of the confidence reads them after each label);
* meanwhile the session answers from the learner of the moment: the next query is picked by
  its outputs among the points without a label (the labels still being fitted are excluded,
  :attr:`GraphRefits.pending_indices`), and its predictions are shown;
* the twin replaces the learner as soon as it is done (in the worker thread, under the
  session's lock, as a finished re-tune is taken); labels given meanwhile go to the next
  refit, started at once on the new learner.

Any other change of the labels or the model (an undo, a relabel, a setting, a class, a batch
query, the model choice) first settles: it waits for the refit under way, swaps it in and gives
the learner the labels still pending, then applies as before, so everything but a label added
sees the learner holding every label of the log.

Replay stays exact: the labels are events of the log, written at the press; the query of each
state is recorded in the store when it is picked (``LabelingSession.next_query``) and read back
by a reopened session, whose learner is fitted once on every label (the state every refit
reaches). The library and ``labeler simulate`` (background off) refit in the request, as
before.
"""

from __future__ import annotations

import numpy as np

from core.graph.outputs import GraphOutputs

from .background_job import BackgroundJob, JobSlotOwner, catch_up

__all__ = ["GraphRefitJob", "GraphRefits", "BACKGROUND_REFIT_ABOVE"]

#: Pools from this many points on refit a graph model off the key press's request (the app).
#: Below, a refit takes a few tens of milliseconds (one solve of at most 10^5 unknowns) and the
#: next query is picked by the model holding the label.
BACKGROUND_REFIT_ABOVE = 100_000


class GraphRefitJob(BackgroundJob):
    """The learner's twin given ``added`` labels in a worker thread.

    Parameters
    ----------
    learner : core.graph.outputs.GraphOutputs
        The session's learner (read once here: its twin is made in the request).
    added : sequence of (int, str)
        The labels to give, in labelling order.

    Attributes
    ----------
    learner : the twin, holding the labels once the job is done (None once discarded).
    """

    thread_name = "labeler-graph-refit"

    def __init__(self, learner, added, start: bool = True):
        self.learner = learner.twin()
        super().__init__(tuple(added), start)

    def compute(self) -> None:
        catch_up(self.learner, self.snapshot)
        if not self.cancelled:  # the calibration reads it after every label: solved here, not in a request
            self.learner.loo_decision_values()

    def discard(self) -> None:
        self.learner = None


class GraphRefits(JobSlotOwner):
    """A session's graph refits in the background (see the module docstring).

    Parameters
    ----------
    get_learner, set_learner : callable
        The session's learner, read and replaced (``set_learner`` also drops what the session
        computed from the learner it replaces).
    n_samples : int
    lock : threading.RLock
        The session's lock (a finished refit is swapped in under it).

    Attributes
    ----------
    background : bool
        Refit in the background (the app); off by default (the library, ``labeler simulate``).
    error : Exception or None
        What the last refit raised (the learner was then given its labels in the request that
        settled it); None again once a refit succeeds.
    note : str
        For the user: a refit failed and the labels were given to the model in the request
        ("" once a refit succeeds).
    """

    def __init__(self, get_learner, set_learner, n_samples: int, lock=None):
        self._get = get_learner
        self._set = set_learner
        self.n_samples = int(n_samples)
        self.background = False
        self.error: Exception | None = None
        self.note = ""
        self._in_request = False  # a refit failed: the next label is given in its request
        self._pending: list = []  # labels not given to the learner nor to the running job
        self._open_slot(lock)

    # ---- the request's side ---------------------------------------------------------------
    def defers(self, change) -> bool:
        """Whether ``change`` (a :class:`labeler.store.LogChange`) is given to the learner in
        the background: labels added, nothing else, to a graph learner on a large pool."""
        return (self.background and self.n_samples >= BACKGROUND_REFIT_ABOVE and bool(change.added)
                and isinstance(self._get(), GraphOutputs) and not change.removed and not change.relabeled
                and change.new_class is None and change.renamed is None and change.deleted_class is None
                and change.restored_class is None and not change.settings)

    def add(self, records) -> None:
        """Give the labels ``records`` (``.index``, ``.label``) to the learner in the background."""
        self._pending.extend((int(r.index), r.label) for r in records)
        if self._in_request:  # the last refit failed: no retry in the background
            self.settle()
        elif self._job is None:
            self._start()

    @property
    def pending_indices(self) -> np.ndarray:
        """Points labelled in the log that the learner does not hold yet (being fitted or
        waiting for the refit under way), int64 of shape (k,)."""
        job = self._job
        held = [] if job is None else [i for i, _ in job.snapshot]
        return np.array(held + [i for i, _ in self._pending], dtype=np.int64)

    def settle(self) -> None:
        """Wait for the refit under way, swap it in and give the learner the labels still
        pending, in this request: afterwards the learner holds every label of the log."""
        job = self._slot.take()
        self._slot.take_due()
        if job is not None:
            job.wait()
            self._swap(job)
        if self._pending:
            added, self._pending = self._pending, []
            catch_up(self._get(), added)
        self._in_request = False  # the learner holds every label: the next refit may run in the background

    def drop(self) -> None:
        """Forget the refit under way and the pending labels (the learner is rebuilt from the
        log, or the session closes)."""
        self._slot.cancel()
        self._pending = []

    # ---- internals --------------------------------------------------------------------------
    def _start(self) -> None:
        added, self._pending = self._pending, []
        # due first, the thread started by the slot (after it set when_done): a job done at
        # once is taken then (JobSlot calls _job_finished), never left unswapped
        self._slot.due = True
        self._slot.start(GraphRefitJob(self._get(), added, start=False))

    def _swap(self, job: GraphRefitJob) -> None:
        if job.error is not None or job.learner is None:
            self.error = job.error
            if job.error is not None:
                self._in_request = True
                self.note = (f"A background refit of the graph model failed ({type(job.error).__name__}: "
                             f"{job.error}); its labels are given to the model in the next request.")
            # the learner lacks the job's labels: give them in the request (exact, slow)
            self._pending = list(job.snapshot) + self._pending
            return
        self.error = None
        self.note = ""
        self._set(job.learner)

    def _job_finished(self) -> None:
        """In the worker thread, under the session's lock: swap the finished twin in and start
        the next refit when labels came meanwhile."""
        job = self._slot.take()
        self._slot.take_due()
        if job is None:
            return
        self._swap(job)
        if self._pending and job.error is None:
            self._start()
