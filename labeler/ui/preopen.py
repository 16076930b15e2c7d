"""The start-up session opened by the server before any browser asks for it.

Why (``benchmarks/startup_browser.py``): ``labeler app FILE`` used to open or create its session
in the page's first run, i.e. only once a browser had connected, loaded Streamlit's page and
run the script. On a cold start of 10^6 rows that creation (the kernel features, the Nystrom
factor, the layout: 10-15 s) waited for the server's start, the browser's and the page's load
(5-6 s); on a reopen the 1-2 s of opening did. Now :func:`start` (called by
:func:`labeler.serve.run_app` before it imports Streamlit) opens it in a background thread at
once: the factor's blocks (numpy, outside the interpreter's lock) run on the second core while
Streamlit is imported and started. Starting it only once the server answered (the previous
rule) cost 1-6 s on the cold start at 10^6 rows and gained nothing on a reopen
(docs/benchmarks.md §13). The first tab's :func:`labeler.ui.state.ensure_session` takes it
(:func:`take`), waiting for it if it is not ready yet.

The session is the one the page would choose itself: the same rules
(:func:`labeler.ui.startup_sessions.startup_candidates`: ``LABELER_SESSION``, the session used last when
no data set is given, the most recent saved session on the data set given, else a new one with
the start-up settings), opened through the same registry (:data:`labeler.ui.registry.REGISTRY`:
a tab opening the same saved session meanwhile waits at its gate and gets the same object),
and what the page's first run reads first is computed there too (:func:`_warm`: the layout, the
first query, the map's tooltips and density bins, each kept where the page finds it). A
tab whose URL names another session (``?session=``) does not take it (it stays open in the
registry, closed as any other by memory). A failure is not reported here: the tab that takes
it finds nothing and goes its usual way, which shows the error.
"""

from __future__ import annotations

import threading

__all__ = ["start", "take", "PreOpened"]

_lock = threading.Lock()
_job: dict | None = None


class PreOpened:
    """What :func:`take` hands over: the session's ``id`` and whether it was ``created`` (the
    page then says what a new session says)."""

    def __init__(self, session_id: str, created: bool):
        self.id, self.created = str(session_id), bool(created)


def _warm(entry) -> None:
    """What the page's first run asks of the session first: its map layout (PCA at a cold start,
    a second or two at 10^6 points), the first query (both kept by the session), the map's
    tooltips (kept on the data set) and a large pool's density bins (kept per layout): the page
    gets the same values. Errors are left to the page, which shows them."""
    from labeler.ui.map_density import layout_bins, uses_density
    from labeler.ui.view import map_hover_texts

    session, lock = entry
    try:
        with lock:
            layout = session.layout
            session.next_query()
            map_hover_texts(session.dataset)  # kept on the data set
            if uses_density(session.n_samples):
                layout_bins(layout)  # the density map's bins and image, kept per layout
    except Exception:  # noqa: BLE001 - see the docstring
        pass


def _open(config) -> PreOpened | None:
    from labeler.session import SessionConfig
    from labeler.ui.registry import REGISTRY
    from labeler.ui.startup_sessions import startup_candidates

    for session_id in ([config.session] if config.session else []) + startup_candidates(config):
        try:
            entry = REGISTRY.get(config.store, session_id)
        except Exception:  # noqa: BLE001 - the page tries it again and shows why
            continue
        _warm(entry)
        return PreOpened(session_id, created=False)
    session_config = SessionConfig(dataset=config.data, dataset_options=dict(config.data_options or {}),
                                   **config.model)
    entry = REGISTRY.create(config.store, session_config)
    _warm(entry)
    return PreOpened(entry[0].id, created=True)


def start(config=None) -> None:
    """Open (or create) the start-up session in a background thread (once per process).

    Parameters
    ----------
    config : AppConfig, optional
        Default :meth:`labeler.ui.config.AppConfig.from_env` (what the page reads).
    """
    global _job
    with _lock:
        if _job is not None:
            return
        job = _job = {"done": threading.Event(), "result": None, "taken": False}

    def run():
        try:
            from labeler.ui.config import AppConfig

            job["result"] = _open(config if config is not None else AppConfig.from_env())
        except Exception:  # noqa: BLE001 - see the module's doc: the page shows the error
            job["result"] = None
        finally:
            job["done"].set()

    threading.Thread(target=run, name="labeler-preopen", daemon=True).start()


def take(timeout: float | None = None) -> PreOpened | None:
    """The pre-opened session, once (the first caller; waits for it); None when nothing was
    started, it failed, or it was taken already."""
    with _lock:
        job = _job
        if job is None or job["taken"]:
            return None
        job["taken"] = True
    job["done"].wait(timeout)
    return job["result"]
