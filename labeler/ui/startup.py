"""A new session's map layout, built with a progress bar (the creation path of the app only).

UMAP of 10^5 points takes a minute or more on this machine, once (the layout is kept in the
store, so a reopened session reads it). Computed in a worker thread while the page shows a
bar moving with the elapsed time against the estimate of
:func:`layout_seconds_estimate` (UMAP reports no progress of its own that we could forward);
capped at 95 % until the layout is there.
"""

from __future__ import annotations

import threading
import time

import streamlit as st

__all__ = ["layout_seconds_estimate", "build_layout"]

#: Names of the layout methods, as the bar says them.
_NAMES = {"umap": "UMAP", "tsne": "t-SNE", "pca": "PCA", "given": "the data set's own"}


def layout_seconds_estimate(method: str, n_samples: int) -> float:
    """Rough seconds a layout takes here (UMAP measured; t-SNE of the same order; PCA ~0)."""
    from labeler.data.layout import umap_seconds_estimate

    if method in ("umap", "tsne"):
        return umap_seconds_estimate(n_samples)
    return 1.0


def build_layout(session, *, quiet_s: float = 0.3, poll_s: float = 0.5, progress=None):
    """Compute ``session.layout`` (cached in its store) with a progress bar when it is slow.

    Parameters
    ----------
    session : LabelingSession
        Just created (no other thread uses it yet).
    quiet_s : float
        No bar when the layout is there within this time (PCA, a stored layout).
    poll_s : float
        Seconds between bar updates.
    progress : callable, optional
        ``progress(fraction, text)``; default a new ``st.progress`` bar (removed at the end).

    Returns
    -------
    ndarray of shape (n_samples, 2)

    Raises
    ------
    Exception
        Whatever computing the layout raised (e.g. ImportError without umap-learn).
    """
    box: dict = {}

    def work():
        try:
            box["layout"] = session.layout
        except BaseException as exc:  # handed to the caller's thread below
            box["error"] = exc

    worker = threading.Thread(target=work, name="labeler-layout", daemon=True)
    worker.start()
    worker.join(quiet_s)
    if worker.is_alive():
        method = str(session.config.layout)
        n = int(session.n_samples)
        estimate = max(1.0, layout_seconds_estimate(method, n))
        bar = None
        if progress is None:
            bar = st.progress(0.0)
            progress = lambda fraction, text: bar.progress(fraction, text=text)  # noqa: E731
        start = time.monotonic()
        while worker.is_alive():
            elapsed = time.monotonic() - start + quiet_s
            progress(min(0.95, elapsed / estimate),
                     f"Computing the map ({_NAMES.get(method, method)} layout of {n:,} points): "
                     f"{elapsed:.0f} s of about {estimate:.0f} s; once only, it is kept with the session")
            worker.join(poll_s)
        progress(1.0, "Map layout ready")
        if bar is not None:
            bar.empty()
    if "error" in box:
        raise box["error"]
    return box["layout"]
