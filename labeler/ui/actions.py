"""Button callbacks: each one forwards to the shown :class:`LabelingSession` under its lock.

Callbacks run at the start of the rerun that the click (or key press) triggers, with the
arguments the button was drawn with: a label therefore names the point the user saw and the
query that was shown; the session ignores it when that query is no longer current or the point
is already labelled (a stale or repeated click). Errors become flash messages; nothing else
happens in the page layer.
"""

from __future__ import annotations

import streamlit as st

from labeler.ui import state

__all__ = ["label", "skip", "undo", "add_class", "accept", "set_setting", "choose", "back"]


def _run(action, *args):
    # ConcurrentUpdateError needs no handler: LabelingSession._commit catches it, catches up
    # with the other tab's events and decides again (stale clicks are then ignored there).
    session, lock = state.current()
    if session is None:
        return None
    try:
        with lock:
            return action(session, *args)
    except state.USER_ERRORS as exc:
        state.flash("error", str(exc))
        return None


def _stale_panel(panel_rev: int | None) -> bool:
    """True when a button was drawn by an earlier point panel than the one on the page now.

    Each drawing of the point panel has a number (``panel_rev``) and its buttons carry it.
    While the browser swaps one panel for the next, the old panel's buttons can still be on
    the page and hear the same shortcut key; their press then names an old panel and is
    dropped, so one key press labels at most the point on the newest panel.
    """
    return panel_rev is not None and panel_rev != st.session_state.get("panel_rev")


def label(index: int, name, source: str, expected_query: int | None,
          panel_rev: int | None = None) -> None:
    """Label point ``index`` as ``name`` (source 'queried' or 'chosen')."""
    if _stale_panel(panel_rev):
        return
    done = _run(lambda s: s.label(int(index), name, source=source, expected_query=expected_query))
    if done:
        state.clear_selection()
        st.session_state["last_action"] = ("label", int(index), name)


def skip(index: int, expected_query: int | None, panel_rev: int | None = None) -> None:
    """Skip the query ``index`` (the session ignores it when it is no longer the query)."""
    if _stale_panel(panel_rev):
        return
    if _run(lambda s: s.skip(int(index), expected_query=expected_query)):
        st.session_state["last_action"] = ("skip", int(index), None)


def undo(expected_action: int) -> None:
    """Undo the action the button was drawn for (``session.last_action`` then; 0: nothing).

    A repeated press, or one from a page drawn before another action, names an action that is
    no longer the last one: the session ignores it, so one press undoes at most one action.
    """
    index = _run(lambda s: s.undo(expected_action=int(expected_action)))
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


def accept(indices, labels, version: int) -> None:
    """Label ``indices`` with the classes shown (``labels``), one undo step; refused when the
    session changed since the page was drawn at state ``version``."""
    n = _run(lambda s: s.accept_predictions([int(i) for i in indices], labels=list(labels),
                                            expected_version=int(version)))
    if n:
        state.flash("success", f"Accepted the predictions of {n} points (Undo reverts them at once).")
        state.clear_selection()
    elif n == 0:
        state.flash("warning", "The labels changed since this bin was shown; nothing was accepted. "
                               "Check the bin and accept again.")


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
