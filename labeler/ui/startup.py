"""The map's slow layout (UMAP, t-SNE) computed in the background while the session is used.

A new session shows its first query at once with a fast layout (the data set's own
coordinates, else PCA: :meth:`LabelingSession.fast_layout`); UMAP of 10^5 points takes minutes
on this machine, once. :func:`start_layout_job` runs :meth:`LabelingSession.compute_layout` in
a worker thread, which hands the computation itself to a separate process (UMAP's numba code
holds the GIL for seconds at a time: in a thread of the server it would stall every page),
and the session swaps the layout in and keeps it (store and session cache) when it is there.

The jobs live in a module-level registry keyed by (store, session id), so they survive the
reruns of a page and are shared by the tabs of one session; the page draws
:func:`render_layout_progress`, a fragment that reruns itself every second with a bar moving
with the elapsed time against :func:`layout_seconds_estimate` (UMAP reports no progress of its
own that could be forwarded; capped at 95 % until it is there), then reruns the whole page
once so the map is redrawn with the new layout.
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

import numpy as np
import streamlit as st

__all__ = ["layout_seconds_estimate", "LayoutJob", "start_layout_job", "layout_job", "render_layout_progress",
           "POLL_S"]

#: Names of the layout methods, as the bar says them.
_NAMES = {"umap": "UMAP", "tsne": "t-SNE", "pca": "PCA", "given": "the data set's own"}
#: Seconds between the progress fragment's reruns.
POLL_S = 1.0


def layout_seconds_estimate(method: str, n_samples: int) -> float:
    """Rough seconds a layout takes here (UMAP measured; t-SNE of the same order; PCA ~0)."""
    from labeler.data.layout import umap_seconds_estimate

    if method in ("umap", "tsne"):
        return umap_seconds_estimate(n_samples)
    return 1.0


def _layout_in_process(X, method: str, seed: int) -> np.ndarray:
    """``compute_layout`` in a fresh process (one worker, spawned); a memory-mapped ``X`` (the
    session cache's features) is opened there by its file name instead of being copied over."""
    source = X.filename if isinstance(X, np.memmap) and str(X.filename or "").endswith(".npy") else None
    with ProcessPoolExecutor(max_workers=1, mp_context=_spawn()) as pool:
        return pool.submit(_child_layout, source, tuple(X.shape), None if source else np.asarray(X),
                           method, seed).result()


def _spawn():
    import multiprocessing

    return multiprocessing.get_context("spawn")  # no fork of a threaded server


def _child_layout(npy_path, shape: tuple, X, method: str, seed: int) -> np.ndarray:
    from labeler.data.layout import compute_layout

    if npy_path is not None:
        X = np.load(npy_path, mmap_mode="r", allow_pickle=False)
        if tuple(X.shape) != shape:
            raise ValueError(f"{npy_path} holds {X.shape}, not the session's features {shape}.")
    return compute_layout(np.asarray(X), method=method, seed=seed)


@dataclass
class LayoutJob:
    """One background layout: the session it is for, its method and size, and how it ended."""

    session: object
    method: str
    n_samples: int
    estimate_s: float
    started: float = field(default_factory=time.monotonic)
    error: BaseException | None = None
    thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self.thread is not None and self.thread.is_alive()

    @property
    def elapsed_s(self) -> float:
        return time.monotonic() - self.started

    def fraction(self) -> float:
        """Elapsed time against the estimate, at most 0.95 while it runs; 1 when done."""
        return min(0.95, self.elapsed_s / self.estimate_s) if self.running else 1.0

    def text(self) -> str:
        name = _NAMES.get(self.method, self.method)
        return (f"Computing the {name} map of {self.n_samples:,} points in the background: "
                f"{self.elapsed_s:.0f} s of about {self.estimate_s:.0f} s; the PCA map is shown meanwhile "
                "and replaced when it is ready (kept with the session)")


_JOBS: dict[tuple[str, str], LayoutJob] = {}
_JOBS_LOCK = threading.Lock()


def _key(session) -> tuple[str, str]:
    return str(session.store_path), str(session.id)


def layout_job(session) -> LayoutJob | None:
    """The background layout job of ``session`` (running or finished), or None."""
    with _JOBS_LOCK:
        return _JOBS.get(_key(session))


def start_layout_job(session, compute=None) -> LayoutJob | None:
    """Start computing ``session``'s pending slow layout in the background; the job, or None
    when the layout is there already. Idempotent: a job running for this session is returned
    as it is, and a job that failed is not started again (its error is shown instead).

    Parameters
    ----------
    compute : callable(X, method, seed), optional
        What computes the layout (tests give a stand-in); default UMAP / t-SNE in a separate
        process.
    """
    if not session.layout_pending:
        return None
    key = _key(session)
    with _JOBS_LOCK:
        job = _JOBS.get(key)
        if job is not None and (job.running or job.error is not None) and job.session is session:
            return job
        # none yet, or it finished for another object of this session (reopened after an
        # eviction): this one then reads the kept layout instead of computing it
        job = LayoutJob(session, str(session.config.layout), int(session.n_samples),
                        max(1.0, layout_seconds_estimate(str(session.config.layout), int(session.n_samples))))
        run = compute or _layout_in_process

        def work():
            try:
                session.compute_layout(compute=run)
            except BaseException as exc:  # shown on the page; the fast layout stays
                job.error = exc

        job.thread = threading.Thread(target=work, name="labeler-layout", daemon=True)
        _JOBS[key] = job
        job.thread.start()
        return job


@st.fragment(run_every=POLL_S)
def render_layout_progress(session) -> None:
    """The background layout's bar, redrawn every :data:`POLL_S` seconds (a fragment); when
    the layout is in, one rerun of the whole page redraws the map with it."""
    job = layout_job(session)
    if job is None:
        return
    if job.error is not None:
        st.warning(f"The {_NAMES.get(job.method, job.method)} map could not be computed ({job.error}); "
                   "the PCA map stays.")
        return
    if job.running or session.layout_pending:
        st.progress(job.fraction(), text=job.text())
        return
    st.rerun(scope="app")  # the layout is in: the page (which then draws no bar) redraws the map
