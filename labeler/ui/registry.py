"""Open labelling sessions of this server process, shared by the browser tabs.

A :class:`~labeler.session.LabelingSession` holds the learner (an n x n matrix), so it is
opened once per (store, session id) and shared by every tab showing that session; a reload
of the page then costs no rebuild. Streamlit runs each tab's script in its own thread, so
every session comes with a re-entrant lock that callers hold while they read or change it.
At most ``max_open`` sessions stay in memory (least recently used are dropped; their state
is in the SQLite store and is replayed on the next open).

The registry stores nothing per user: which session a tab shows lives in the tab's
``st.session_state`` (and the ``?session=`` query parameter).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path

__all__ = ["SessionRegistry", "REGISTRY"]


def _session_module():
    # Imported at call time: the tests may register a stand-in under this name.
    import importlib

    return importlib.import_module("labeler.session")


class SessionRegistry:
    """LRU map ``(store path, session id) -> (session, lock)``.

    Parameters
    ----------
    max_open : int
        Number of sessions kept in memory.
    """

    def __init__(self, max_open: int = 2):
        self.max_open = max_open
        self._lock = threading.Lock()
        self._open: OrderedDict[tuple[str, str], tuple[object, threading.RLock]] = OrderedDict()

    @staticmethod
    def _key(store, session_id) -> tuple[str, str]:
        return (str(Path(store).expanduser().resolve()), str(session_id))

    def get(self, store, session_id):
        """The open session ``session_id`` of ``store`` and its lock (opened when needed).

        Raises
        ------
        KeyError, ValueError, OSError
            Whatever ``LabelingSession.open`` raises for an unknown id or a bad store.
        """
        key = self._key(store, session_id)
        with self._lock:
            if key in self._open:
                self._open.move_to_end(key)
                return self._open[key]
            session = _session_module().LabelingSession.open(Path(store), session_id)
            return self._put(key, session)

    def create(self, store, config):
        """Create a new session in ``store`` and keep it open; returns ``(session, lock)``."""
        session = _session_module().LabelingSession.create(Path(store), config)
        with self._lock:
            return self._put(self._key(store, session.id), session)

    def forget(self, store, session_id) -> None:
        """Drop a session from memory (after it was deleted from the store)."""
        with self._lock:
            self._open.pop(self._key(store, session_id), None)

    def clear(self) -> None:
        """Drop every open session."""
        with self._lock:
            self._open.clear()

    def _put(self, key, session):
        entry = (session, threading.RLock())
        self._open[key] = entry
        self._open.move_to_end(key)
        while len(self._open) > self.max_open:
            self._open.popitem(last=False)
        return entry


#: The registry of this server process.
REGISTRY = SessionRegistry()
