"""Open labelling sessions of this server process, shared by the browser tabs.

A :class:`~labeler.session.LabelingSession` holds the learner (an n x n matrix), so it is
opened once per (store, session id) and shared by every tab showing that session; a reload
of the page then costs no rebuild. Streamlit runs each tab's script in its own thread, so
every session comes with a re-entrant lock that callers hold while they read or change it.

Opening is slow (the data set is loaded and the learner rebuilt from the log), so it runs
outside the registry's own lock: each (store, session id) has its own opening gate, two tabs
opening two sessions open them at the same time, and two tabs opening the same session open it
once. The registry's lock only guards its map.

How many sessions stay open is set by memory, not by a count: after a session is opened, the
least recently used others are closed (their learner freed, their store checkpointed and
closed) while the available memory is below ``reserve_bytes``, or more than ``max_open`` are
open; when opening fails because the session does not fit
(:class:`~labeler.session.costs.MemoryBudgetError`), the least recently used are closed one by
one and the open is tried again. A closed session's state is in the SQLite store and is
replayed on the next open.

The registry stores nothing per user: which session a tab shows lives in the tab's
``st.session_state`` (and the ``?session=`` query parameter).
"""

from __future__ import annotations

import atexit
import threading
from collections import OrderedDict
from pathlib import Path

__all__ = ["SessionRegistry", "REGISTRY"]


def _session_module():
    # Imported at call time: the tests may register a stand-in under this name.
    import importlib

    return importlib.import_module("labeler.session")


def _costs():
    import importlib

    return importlib.import_module("labeler.session.costs")


def _available_memory():
    return _costs().available_memory()


class SessionRegistry:
    """LRU map ``(store path, session id) -> (session, lock)``, sized by memory.

    Parameters
    ----------
    max_open : int
        Most sessions kept open, whatever the memory.
    reserve_bytes : int
        Close the least recently used sessions while less memory than this is available
        (default 1 GiB: room for the next session to open).
    available_memory : callable, optional
        Bytes available now, or None when unknown; default
        :func:`labeler.session.costs.available_memory`.
    """

    def __init__(self, max_open: int = 16, reserve_bytes: int = 1 << 30, available_memory=None):
        self.max_open = int(max_open)
        self.reserve_bytes = int(reserve_bytes)
        self._available = available_memory or _available_memory
        self._lock = threading.Lock()
        self._open: OrderedDict[tuple[str, str], tuple[object, threading.RLock]] = OrderedDict()
        self._gates: dict[tuple[str, str], threading.Lock] = {}

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
            gate = self._gates.setdefault(key, threading.Lock())
        with gate:  # one opener per session; other sessions open meanwhile
            with self._lock:
                if key in self._open:
                    self._open.move_to_end(key)
                    return self._open[key]
            try:
                session = self._with_room(
                    # a damaged event log opens read-only up to the damage (session.damage says where)
                    lambda: _session_module().LabelingSession.open(Path(store), session_id, up_to_damage=True))
            finally:
                with self._lock:
                    if self._gates.get(key) is gate:
                        del self._gates[key]
            return self._put(key, session)

    def create(self, store, config, progress=None):
        """Create a new session in ``store`` and keep it open; returns ``(session, lock)``.
        ``progress(message, fraction)`` hears the long build steps of a low-rank posterior."""
        extra = {} if progress is None else {"progress": progress}
        session = self._with_room(lambda: _session_module().LabelingSession.create(Path(store), config, **extra))
        return self._put(self._key(store, session.id), session)

    def forget(self, store, session_id) -> None:
        """Close a session and drop it from memory (after it was deleted from the store)."""
        with self._lock:
            entry = self._open.pop(self._key(store, session_id), None)
        self._close([entry] if entry else [])

    def clear(self) -> None:
        """Close every open session."""
        with self._lock:
            entries = list(self._open.values())
            self._open.clear()
        self._close(entries)

    def __len__(self) -> int:
        return len(self._open)

    # ---- internals -------------------------------------------------------------------------
    def _with_room(self, make):
        """``make()``; when the session does not fit in memory, close the least recently used
        ones one at a time and try again."""
        budget_error = _costs().MemoryBudgetError
        while True:
            try:
                return make()
            except (MemoryError, budget_error):
                with self._lock:
                    entry = self._open.popitem(last=False)[1] if self._open else None
                if entry is None:
                    raise
                self._close([entry])

    def _put(self, key, session):
        # the app's key presses never wait on a re-tune's rebuild nor on a model-choice evaluation
        # (labeler.session.retune, labeler.session.choice_job)
        retune_in_background = getattr(session, "retune_in_background", None)
        if retune_in_background is not None:
            retune_in_background(True)
        entry = (session, threading.RLock())
        with self._lock:
            old = self._open.pop(key, None)
            self._open[key] = entry
            evicted = [old] if old is not None and old[0] is not session else []
            while len(self._open) > 1:
                if len(self._open) <= self.max_open:
                    avail = self._available()
                    if avail is None or avail + self._freed(evicted) >= self.reserve_bytes:
                        break
                evicted.append(self._open.popitem(last=False)[1])
        self._close(evicted)
        return entry

    @staticmethod
    def _freed(entries) -> int:
        """Memory the sessions about to be closed give back (their n x n matrices)."""
        total = 0
        for session, _ in entries:
            total += 8 * int(session.n_samples) ** 2
        return total

    @staticmethod
    def _close(entries) -> None:
        """Close sessions outside the registry's lock, each under its own lock (a tab using
        it finishes first)."""
        for session, lock in entries:
            with lock:
                try:
                    session.close()
                except Exception:  # noqa: BLE001 - closing is best effort; the store is safe
                    pass


#: The registry of this server process; its sessions are closed (their write-ahead log
#: checkpointed into the store file) when the server exits normally.
REGISTRY = SessionRegistry()
atexit.register(REGISTRY.clear)
