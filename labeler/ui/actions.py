"""Button callbacks: each one forwards to the shown :class:`LabelingSession` under its lock.

Callbacks run at the start of the rerun that the click (or key press) triggers, with the
arguments the button was drawn with: a label therefore names the point the user saw and the
query that was shown; the session ignores it when that query is no longer current or the point
is already labelled (a stale or repeated click). Errors become flash messages; nothing else
happens in the page layer.
"""

from __future__ import annotations

import streamlit as st

from labeler.store import ConcurrentUpdateError
from labeler.ui import state
from labeler.ui.registry import REGISTRY

__all__ = ["label", "skip", "undo", "add_class", "accept", "set_setting", "choose", "back"]


def _run(action, *args):
    session, lock = state.current()
    if session is None:
        return None
    try:
        with lock:
            return action(session, *args)
    except ConcurrentUpdateError:
        # Another process changed this session in the store: drop the stale copy, reopen.
        REGISTRY.forget(state.app_config().store, session.id)
        state.flash("warning", "This session was changed elsewhere; it has been reloaded. "
                               "Check the point and repeat your action.")
        return None
    except state.USER_ERRORS as exc:
        state.flash("error", str(exc))
        return None


def label(index: int, name, source: str, expected_query: int | None) -> None:
    """Label point ``index`` as ``name`` (source 'queried' or 'chosen')."""
    done = _run(lambda s: s.label(int(index), name, source=source, expected_query=expected_query))
    if done:
        state.clear_selection()
        st.session_state["last_action"] = ("label", int(index), name)


def skip(index: int, expected_query: int | None) -> None:
    """Skip the query ``index`` (ignored when it is no longer the query)."""

    def act(s):
        if expected_query is not None and s.next_query() != expected_query:
            return False
        return s.skip(int(index))

    if _run(act):
        st.session_state["last_action"] = ("skip", int(index), None)


def undo() -> None:
    """Undo the last label, accept or skip."""
    index = _run(lambda s: s.undo())
    state.clear_selection()
    if index is None:
        state.flash("info", "Nothing to undo.")
    else:
        state.flash("info", f"Undid the last action on point {index}.")
        st.session_state["last_action"] = ("undo", int(index), None)


def add_class(key: str) -> None:
    """Add the class typed in the text field ``key``."""
    name = (st.session_state.get(key) or "").strip()
    if not name:
        state.flash("error", "Type a name for the new class first.")
        return
    if _run(lambda s: s.add_class(name) or True):
        state.flash("success", f"Added class {name!r}.")
        st.session_state[key] = ""


def accept(indices) -> None:
    """Accept the predicted class of ``indices`` (one undo step)."""
    n = _run(lambda s: s.accept_predictions([int(i) for i in indices]))
    if n:
        state.flash("success", f"Accepted the predictions of {n} points (Undo reverts them at once).")
        state.clear_selection()


def set_setting(setter: str, key: str, parse=None) -> None:
    """Apply the widget value ``st.session_state[key]`` with ``session.<setter>``."""
    value = st.session_state.get(key)
    try:
        if parse is not None:
            value = parse(value)
    except ValueError as exc:
        state.flash("error", str(exc))
        return
    _run(lambda s: getattr(s, setter)(value))


def choose(index: int) -> None:
    """Show point ``index`` in the point panel (from the bin inspector)."""
    state.select_point(index)


def back() -> None:
    """Show the next query again (forget the clicked point)."""
    state.clear_selection()
