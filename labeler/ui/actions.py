"""Button callbacks: each one forwards to the shown :class:`LabelingSession` under its lock.

Callbacks run at the start of the rerun that the click (or key press) triggers, with the
arguments the button was drawn with: a label therefore names the point the user saw and the
query that was shown; the session ignores it when that query is no longer current or the point
is already labelled (a stale or repeated click). Errors become flash messages; nothing else
happens in the page layer.
"""

from __future__ import annotations

import time

import streamlit as st

from labeler.ui import state

__all__ = ["label", "skip", "unskip", "relabel", "unlabel", "undo", "add_class", "rename_class",
           "delete_class", "move_class_labels", "unlabel_class", "accept", "set_setting", "choose",
           "back", "label_area", "label_grid", "similar", "clear_area", "keep"]


def _run(action, *args):
    # ConcurrentUpdateError needs no handler: LabelingSession._commit catches it, catches up
    # with the other tab's events and decides again (stale clicks are then ignored there).
    for _ in range(2):  # once more if the registry closed the session meanwhile (memory)
        session, lock = state.current()
        if session is None:
            return None
        try:
            with lock:
                if session.closed:
                    continue
                return action(session, *args)
        except state.USER_ERRORS as exc:
            state.flash("error", str(exc))
            return None
    return None


def _named(index) -> str:
    """Point ``index`` as the messages name it: "#58 (1058)" with the data's own ids
    (:meth:`~labeler.session.LabelingSession.point_name`)."""
    session, _ = state.current()
    return session.point_name(index) if session is not None else f"#{int(index)}"


def _stale_panel(panel_rev: int | None) -> bool:
    """True when a button was drawn by an earlier point panel than the one on the page now.

    Each drawing of the point panel has a number (``panel_rev``, given right after its title
    went to the browser: :func:`labeler.ui.point_panel._number_panel`) and its buttons carry it.
    """
    return panel_rev is not None and panel_rev != st.session_state.get("panel_rev")


_OLD_PAGE = ("A key press on point {point} was not applied: it came from the page of an "
             "earlier point (a repeated or early press). Press again on the point shown now.")

#: A button read twice for one point this close together is one press (a double click, or a
#: browser that sends a widget's trigger again): the second is dropped without a message.
TWIN_SECONDS = 2.0


def _press_target(index: int, source: str, expected_query, panel_rev):
    """The point a label or skip press is for: ``(index, source, expected_query)``, or None
    when the press came from the buttons of an earlier panel that showed another point (then
    it is refused, and said).

    A key press clicks the newest button with that key that is not greyed out, in the browser
    (:data:`labeler.ui.keyboard.KEY_BUFFER_SCRIPT`); a press heard while the page is greyed
    out (a rerun under way) waits for the new buttons and is dropped, and said, when they show
    another point. So a press that names an earlier panel was made with that panel's point on
    the screen: it applies when the panel on the page now shows the same point (a rerun that
    redrew it), and is never carried over to another point, which the user may not have seen
    (on a loaded machine a panel sent is not yet a panel shown).
    """
    if not _stale_panel(panel_rev) or st.session_state.get("panel_point") == int(index):
        return int(index), source, expected_query
    return None


def _twin(kind: str, name, target: int) -> bool:
    """True when this press is the twin of the press just applied (the same key, read for the
    same point within :data:`TWIN_SECONDS`)."""
    last = st.session_state.get("last_press")
    return (last is not None and last[0] == (kind, name, target)
            and time.monotonic() - last[1] <= TWIN_SECONDS)


def _applied_press(kind: str, name, target: int) -> None:
    st.session_state["last_press"] = ((kind, name, target), time.monotonic())


def _applied_or_why(do, index: int, expected_query: int | None):
    """``(True, None)`` when ``do(session)`` applied the press, ``(False, why)`` when the
    session refused it (stale: another tab acted first), ``(None, None)`` on an error (already
    shown). Decided under the session's lock, so ``why`` describes the refusing state."""
    def run(s):
        if do(s):
            return True, None
        return False, s.why_not_applied(int(index), expected_query)

    return _run(run) or (None, None)


def label(index: int, name, source: str, expected_query: int | None,
          panel_rev: int | None = None) -> None:
    """Label point ``index`` as ``name`` (source 'queried' or 'chosen'); a press from an earlier
    panel's button is refused (:func:`_press_target`); a refused (stale) press is reported,
    never silently dropped (but for the twin of an applied press)."""
    target = _press_target(index, source, expected_query, panel_rev)
    if target is None:
        state.flash("warning", _OLD_PAGE.format(point=_named(index)))
        return
    index, source, expected_query = target
    if _twin("label", name, index):
        return
    done, why = _applied_or_why(
        lambda s: s.label(int(index), name, source=source, expected_query=expected_query),
        index, expected_query)
    if done:
        _applied_press("label", name, index)
        state.clear_selection()
        st.session_state["last_action"] = ("label", int(index), name)
    elif done is False:
        state.flash("warning", why)


def skip(index: int, expected_query: int | None, panel_rev: int | None = None) -> None:
    """Skip point ``index``: the query (``expected_query``; ignored when it is no longer the
    query) or a clicked point (``expected_query`` None: "not sure, skip for good"). Presses are
    read as in :func:`label`; a refused press is reported."""
    target = _press_target(index, "queried" if expected_query is not None else "chosen",
                           expected_query, panel_rev)
    if target is None:
        state.flash("warning", _OLD_PAGE.format(point=_named(index)))
        return
    index, _, expected_query = target
    if _twin("skip", None, index):
        return
    done, why = _applied_or_why(lambda s: s.skip(int(index), expected_query=expected_query),
                                index, expected_query)
    if done:
        _applied_press("skip", None, index)
        st.session_state["last_action"] = ("skip", int(index), None)
        if expected_query is None:
            state.clear_selection()
            state.flash("info", f"Point {_named(index)} is skipped for good (Un-skip it from the "
                                "map, or Undo).")
    elif done is False:
        state.flash("warning", why)


def _changed_or_why(do, why):
    """``(True, None)`` when ``do(session)`` was applied, ``(False, why(session))`` when the
    session refused it (the point changed first), ``(None, None)`` on an error (shown)."""
    def run(s):
        if do(s):
            return True, None
        return False, why(s)

    return _run(run) or (None, None)


def unskip(index: int, panel_rev: int | None = None) -> None:
    """Un-skip point ``index`` (the panel stays on it, to label it)."""
    if _stale_panel(panel_rev):
        state.flash("warning", _OLD_PAGE.format(point=_named(index)))
        return
    done, why = _changed_or_why(lambda s: s.unskip(int(index)),
                                lambda s: s.why_not_changed(int(index), "unskip"))
    if done:
        state.flash("info", f"Point {_named(index)} may be queried again.")
    elif done is False:
        state.flash("warning", why)


def relabel(index: int, name, expected_label, panel_rev: int | None = None) -> None:
    """Change the label of point ``index`` from ``expected_label`` (as the panel showed it) to
    ``name``; refused, and explained, when the point changed first."""
    if _stale_panel(panel_rev):
        state.flash("warning", _OLD_PAGE.format(point=_named(index)))
        return
    done, why = _changed_or_why(
        lambda s: s.relabel(int(index), name, expected_label=expected_label),
        lambda s: s.why_not_changed(int(index), "relabel", name, expected_label))
    if done:
        state.clear_selection()
        state.flash("success", f"Point {_named(index)} is now labelled {name!r} (was "
                               f"{expected_label!r}; Undo reverts it).")
    elif done is False:
        state.flash("warning", why)


def keep(index: int, expected_label) -> None:
    """Keep the label ``expected_label`` of point ``index`` (reviewed in the Suspects tab): one
    stored, undoable action; refused, and explained, when the point changed first."""
    done, why = _changed_or_why(
        lambda s: s.keep(int(index), expected_label=expected_label),
        lambda s: s.why_not_changed(int(index), "unlabel", None, expected_label))
    if done:
        state.flash("success", f"Kept label {expected_label!r} of point {_named(index)}: it leaves the "
                               "suspects list until the model's view of it changes (Undo reverts it).")
    elif done is False:
        state.flash("warning", why)


def unlabel(index: int, expected_label, panel_rev: int | None = None) -> None:
    """Remove the label ``expected_label`` (as the panel showed it) of point ``index``."""
    if _stale_panel(panel_rev):
        state.flash("warning", _OLD_PAGE.format(point=_named(index)))
        return
    done, why = _changed_or_why(
        lambda s: s.unlabel(int(index), expected_label=expected_label),
        lambda s: s.why_not_changed(int(index), "unlabel", expected_label=expected_label))
    if done:
        state.clear_selection()
        state.flash("success", f"Point {_named(index)} is unlabelled (it was {expected_label!r}; "
                               "Undo reverts it).")
    elif done is False:
        state.flash("warning", why)


def undo(expected_action: int) -> None:
    """Undo the action the button was drawn for (``session.last_action`` then; 0: nothing).

    A repeated press, or one from a page drawn before another action, names an action that is
    no longer the last one: the session ignores it, so one press undoes at most one action.
    """
    result = _run(lambda s: (s.undo(expected_action=int(expected_action)), int(s.last_action)))
    index, last = result if result is not None else (None, 0)
    state.clear_selection()
    if index is None and result is not None and last and last != int(expected_action):
        state.flash("warning", "Undo was not applied: the last action changed since this page was "
                               "drawn (another tab or an earlier press acted first). Press Undo "
                               "again to undo the action shown now.")
    elif index is None:
        state.flash("info", "Nothing to undo.")
    elif index < 0:
        state.flash("info", "Undid the last change of a class.")
    else:
        state.flash("info", f"Undid the last action on point {_named(index)}.")
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


def rename_class(old, key: str, select_key: str | None = None) -> None:
    """Rename class ``old`` to the name typed in the text field ``key`` (the class picker
    ``select_key`` follows the new name)."""
    new = st.session_state.get(key) or ""
    stored = _run(lambda s: s.rename_class(old, new))
    if stored is not None:
        state.flash("success", f"Renamed class {old!r} to {stored!r} (Undo reverts it).")
        st.session_state[key] = ""
        if select_key is not None:
            st.session_state[select_key] = stored


def delete_class(name) -> None:
    """Delete class ``name`` (refused with the reason while it has labels)."""
    if _run(lambda s: s.delete_class(name) or True):
        state.flash("success", f"Deleted class {name!r} (Undo brings it back).")


_CLASS_STALE = ("The labels changed since this was shown (another tab or an earlier press); "
                "nothing was changed. Check the class and press again.")


def move_class_labels(old, key: str, version: int) -> None:
    """Relabel every point of class ``old`` with the class picked in ``key``; refused when the
    session changed since the page was drawn at state ``version``."""
    new = st.session_state.get(key)
    n = _run(lambda s: s.move_class_labels(old, new, expected_version=int(version)))
    if n:
        state.flash("success", f"Moved {n} labels from {old!r} to {new!r} (one Undo reverts it).")
    elif n == 0:
        state.flash("warning", _CLASS_STALE)


def unlabel_class(name, version: int) -> None:
    """Unlabel every point of class ``name``; refused when the session changed since the page
    was drawn at state ``version``."""
    n = _run(lambda s: s.unlabel_class(name, expected_version=int(version)))
    if n:
        state.flash("success", f"Unlabelled the {n} points of {name!r} (one Undo reverts it).")
    elif n == 0:
        state.flash("warning", _CLASS_STALE)


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


_VIA_WORDS = {"selection": "selected", "similar": "similar", "batch": "batch"}


def _label_many_or_why(labels: dict, via: str, version: int, guessed=()) -> None:
    def run(s):
        n = s.label_many(labels, via, expected_version=int(version), guessed=guessed)
        return n, (None if n else s.why_not_labelled(list(labels), int(version)))

    result = _run(run)
    if result is None:
        return
    n, why = result
    if n:
        state.clear_selection()
        skipped = len(labels) - n
        more = f" ({skipped:,} were labelled already and kept their label)" if skipped else ""
        state.flash("success", f"Labelled {n:,} {_VIA_WORDS[via]} point{'s' * (n != 1)}{more}; "
                               "one Undo reverts them all.")
        st.session_state["last_action"] = (via, -1, None)
    else:
        state.flash("warning", why)


def label_area(indices, name, version: int) -> None:
    """Label the points of a box or lasso selection (``indices``, drawn on state ``version``)
    with class ``name``: one action, one undo step; refused and explained when stale."""
    if len(indices) == 0:
        state.flash("warning", "No points are selected: draw a lasso or box around points on "
                               "the map (the lasso and box tools are in the map's toolbar).")
        return
    _label_many_or_why({int(i): name for i in indices}, "selection", version)


def label_grid(indices, keys, via: str, version: int, presets=None) -> None:
    """Label the points of a grid ("more like this" or a batch), each with the class picked in
    its selector (``st.session_state[keys[j]]``): one action, one undo step. ``presets``: the
    model's guess each selector started on (None: started on "not sure"); a pick still equal
    to it is stored as a guess (source ``<via>_guess``)."""
    labels = {int(i): st.session_state.get(k) for i, k in zip(indices, keys)}
    if any(v is None for v in labels.values()):
        state.flash("warning", "Pick a class for every point of the grid first.")
        return
    presets = presets or [None] * len(labels)
    guessed = [int(i) for i, p in zip(indices, presets) if p is not None and labels[int(i)] == p]
    _label_many_or_why(labels, via, version, guessed)
    # the grid is a fragment (labeler.ui.bulk_panels.render_bulk_tab): rerun the whole page
    # after it, so the flash message, the map and the counts show what happened
    st.session_state["grid_labelled"] = True


def similar(index: int) -> None:
    """Show the points most like ``index`` in the "More like this" tab."""
    state.show_similar(index)


def clear_area() -> None:
    """Forget the box or lasso selection."""
    state.clear_area()
