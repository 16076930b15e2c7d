"""The map's slow layout (UMAP, t-SNE) computed in the background while the session is used.

A new session shows its first query at once with a fast layout (the data set's own
coordinates, else PCA: :meth:`LabelingSession.fast_layout`); UMAP of 10^5 points takes minutes
on this machine, once. :func:`start_layout_job` runs :meth:`LabelingSession.compute_layout` in
a worker thread, which hands the computation itself to a separate process (UMAP's numba code
holds the GIL for seconds at a time: in a thread of the server it would stall every page),
and the session swaps the layout in and keeps it (store and session cache) when it is there.

That process is ``python -m labeler.data.layout_job`` (:func:`layout_command`), not a
``multiprocessing`` worker: spawn re-runs the parent's main script in the child, which under
``streamlit run`` is the app itself (warnings by the hundred and ~1 GB at 10^5 points). The
features go over as the session cache's ``.npy`` file (a temporary copy when the cache is
off), the layout comes back as a ``.npy`` written atomically; a failed or killed process
leaves a clear error on the page and the fast map in place; the server kills running layout
processes when it exits, and a layout process exits by itself when its server is gone.

The jobs live in a module-level registry keyed by (store, session id), so they survive the
reruns of a page and are shared by the tabs of one session; the page draws
:func:`render_layout_progress`, a fragment that reruns itself every second with a bar moving
with the elapsed time against :func:`layout_seconds_estimate`, the time on a quiet machine, said
so (UMAP reports no progress of its own that could be forwarded; capped at 95 % until it is
there), then reruns the whole page once so the map is redrawn with the new layout.
"""

from __future__ import annotations

import atexit
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import streamlit as st

from labeler.atomic import sweep_stale_dirs

__all__ = ["layout_seconds_estimate", "LayoutJob", "start_layout_job", "layout_job", "render_layout_progress",
           "layout_command", "LayoutProcessError", "POLL_S"]

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


class LayoutProcessError(RuntimeError):
    """The layout process failed or was stopped; the message says how (the fast map stays)."""


#: Layout processes running now: killed when the server exits (atexit); a server killed
#: outright leaves them to notice it themselves (``layout_job.watch_parent``).
_CHILDREN: set[subprocess.Popen] = set()
_CHILDREN_LOCK = threading.Lock()


#: The temporary folders of layout processes, and the age at which one is a leftover of a
#: killed server (a live one is younger: no layout runs for days).
_TMP_PREFIX, _TMP_STALE_S = "labeler-layout-", 2 * 86400.0


def _stop_children() -> None:
    with _CHILDREN_LOCK:
        children = list(_CHILDREN)
    for proc in children:
        if proc.poll() is None:
            proc.kill()


atexit.register(_stop_children)


def layout_command(features_path, out_path, method: str, seed: int) -> list[str]:
    """The command of a layout process: :mod:`labeler.data.layout_job` run by this Python,
    watching this process (it exits when the server is gone)."""
    return [sys.executable, "-m", "labeler.data.layout_job", str(features_path), str(out_path), str(method),
            str(int(seed)), str(os.getpid())]


def _child_env() -> dict:
    """This environment, with the folder holding this ``labeler`` package first on the path
    (the child runs the same code as the server, installed or not)."""
    import labeler

    root = str(Path(labeler.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env


def _features_file(X) -> str | None:
    """The ``.npy`` file ``X`` maps whole (the session cache's features), or None."""
    if not (isinstance(X, np.memmap) and str(X.filename or "").endswith(".npy")):
        return None
    try:
        whole = np.load(X.filename, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError):
        return None
    return str(X.filename) if whole.shape == X.shape and whole.dtype == X.dtype else None


def _layout_in_process(X, method: str, seed: int) -> np.ndarray:
    """``compute_layout`` in a separate process, ``python -m labeler.data.layout_job``
    (:func:`layout_command`), which imports only what the layout needs (a ``multiprocessing``
    spawn would run the app's script again in the child). A memory-mapped ``X`` (the session
    cache's features) is read there by its file name, any other is written to a temporary
    ``.npy`` first; the layout comes back in a temporary ``.npy``, removed afterwards.

    Raises
    ------
    LayoutProcessError
        The process failed (its error's last line), was killed (by whom is unknown: out of
        memory, or by hand) or wrote no layout of the right shape.
    """
    n = int(X.shape[0])
    sweep_stale_dirs(_TMP_PREFIX, older_than=_TMP_STALE_S)  # left by a server that was killed
    with tempfile.TemporaryDirectory(prefix=_TMP_PREFIX) as tmp:
        source = _features_file(X)
        if source is None:
            source = os.path.join(tmp, "features.npy")
            np.save(source, np.asarray(X, dtype=np.float64), allow_pickle=False)
        out, err = os.path.join(tmp, "layout.npy"), os.path.join(tmp, "stderr.txt")
        with open(err, "wb") as err_file:
            proc = subprocess.Popen(layout_command(source, out, method, seed), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=err_file, env=_child_env())
            with _CHILDREN_LOCK:
                _CHILDREN.add(proc)
            try:
                status = proc.wait()
            finally:
                with _CHILDREN_LOCK:
                    _CHILDREN.discard(proc)
        if status < 0:  # the page says: "The UMAP map could not be computed (<this>); the PCA map stays."
            raise LayoutProcessError(f"its process was stopped by signal {-status}: out of memory, or stopped "
                                     "by hand")
        if status != 0:
            lines = Path(err).read_text(errors="replace").strip().splitlines()
            raise LayoutProcessError(f"its process ended with status {status}" + (f": {lines[-1]}" if lines else ""))
        try:
            Z = np.load(out, allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise LayoutProcessError(f"its process wrote no readable layout: {exc}") from exc
        if Z.shape != (n, 2):
            raise LayoutProcessError(f"its process wrote a layout of shape {Z.shape}, not ({n}, 2)")
        return np.array(Z, dtype=np.float64)


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
        """The bar's words: the elapsed time against the estimate, which holds on a quiet
        machine (measured so); past it, the machine is busy (other processes share its cores)."""
        name, elapsed, estimate = _NAMES.get(self.method, self.method), self.elapsed_s, self.estimate_s
        timing = (f"{elapsed:.0f} s of about {estimate:.0f} s on a quiet machine" if elapsed <= estimate else
                  f"{elapsed:.0f} s, longer than the {estimate:.0f} s it takes on a quiet machine (this one is busy)")
        return (f"Computing the {name} map of {self.n_samples:,} points in the background: {timing}; "
                "the PCA map is shown meanwhile and replaced when it is ready (kept with the session)")


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
