"""The point panel's label controls: what can be done to the shown point.

* an unlabelled point: one "label as" button per class (with its shortcut key); the query has
  "Skip" (key S), a clicked point "Not sure (skip for good)" (key S) and "Back to query";
* a skipped point (clicked in the map): marked as skipped, with the class buttons and
  "Un-skip";
* a labelled point (clicked in the map): its label, a "Change to <class>" button per other
  class (the class's shortcut key) and "Unlabel".

Every change is one action in the store, undone by Undo (key U). The buttons carry the state
they were drawn for (the point, its label as shown, the panel's number): a press that comes
late, after another tab or an earlier press changed the point, is refused and the user is told
why (:mod:`labeler.ui.actions`). Class names reach button labels and help texts escaped as
Markdown (:func:`~labeler.ui.text.md_text`).
"""

from __future__ import annotations

import streamlit as st

from labeler.ui import actions
from labeler.ui.keyboard import BACK_KEY, SKIP_KEY, UNDO_KEY, class_shortcuts
from labeler.ui.text import md_text

__all__ = ["render_label_controls", "undo_button"]


def render_label_controls(session, view, index: int, source: str, panel_rev: int) -> None:
    """Draw the controls of point ``index`` shown as ``source`` ("queried" or "chosen") on the
    panel drawing number ``panel_rev`` (call under the session's lock)."""
    is_labeled = bool(view.label_codes[index] >= 0)
    row = view.predictions.iloc[index] if is_labeled else None  # the table: a labelled point only
    current = row["label"] if is_labeled else None
    is_skipped = index in view.skipped and not is_labeled
    keys = class_shortcuts(view.classes)
    if is_labeled:
        st.info(f"Already labelled **{md_text(current)}** ({md_text(row['source'])}). Change or remove the "
                "label below; Undo reverts the change.")
        # the keys name the point and the buttons carry the label shown: a late press (another
        # tab changed the point first) is refused and explained, never applied to a new state
        with st.container(horizontal=True, gap="small", key="relabel_buttons"):
            for j, (name, key) in enumerate(zip(view.classes, keys)):
                if name == current:
                    continue
                st.button(
                    f"Change to {md_text(name)}", key=f"relabel_{j}_{index}", shortcut=key,
                    on_click=actions.relabel, args=(index, name, current, panel_rev),
                    help=f"Relabel this point as {md_text(name)}" + (f" (key {key})" if key else ""),
                )
            st.button("Unlabel", key=f"unlabel_{index}", icon=":material/label_off:",
                      on_click=actions.unlabel, args=(index, current, panel_rev),
                      help="Remove this label: the point becomes unlabelled and may be queried again")
    else:
        if is_skipped:
            st.warning("Skipped (not sure): this point is not asked for again. Label it, or "
                       "un-skip it to let the learner query it.")
        expected = view.query if source == "queried" else None
        # The buttons' keys name the point they label. A key press reaches the server as
        # "button <key> clicked": while the browser still shows the previous point (and its
        # buttons), the press names that point's button, whose callback the session then
        # ignores as stale or repeated -- a label can never land on a point the page has not
        # shown yet.
        with st.container(horizontal=True, gap="small", key="class_buttons"):
            for j, (name, key) in enumerate(zip(view.classes, keys)):
                st.button(
                    md_text(name), key=f"class_{j}_{index}", shortcut=key, type="primary",
                    on_click=actions.label, args=(index, name, source, expected, panel_rev),
                    help=f"Label as {md_text(name)}" + (f" (key {key})" if key else ""),
                )
    with st.container(horizontal=True, gap="small", key="step_buttons"):
        if source == "queried":
            st.button("Skip", key=f"skip_{index}", shortcut=SKIP_KEY, icon=":material/skip_next:",
                      on_click=actions.skip, args=(index, view.query, panel_rev),
                      help="Not sure: do not ask for this point again (key S; Undo reverts it)")
        else:
            if is_skipped:
                st.button("Un-skip", key=f"unskip_{index}", icon=":material/replay:",
                          on_click=actions.unskip, args=(index, panel_rev),
                          help="Let the learner query this point again")
            elif not is_labeled:
                st.button("Not sure (skip for good)", key=f"skip_{index}", shortcut=SKIP_KEY,
                          icon=":material/block:", on_click=actions.skip,
                          args=(index, None, panel_rev),
                          help="Never ask for this point (key S); Un-skip or Undo reverts it")
            st.button("Back to query", key="back", shortcut=BACK_KEY,
                      icon=":material/keyboard_return:", on_click=actions.back,
                      help="Show the next query again (Esc)")
        st.button("More like this", key=f"similar_{index}", icon=":material/join:",
                  on_click=actions.similar, args=(index,),
                  help="Show the unlabelled points most like this one, to label them at once "
                       "(the \"More like this\" tab below the map)")
        undo_button(session)
        with st.popover("New class", icon=":material/add:"):
            st.text_input("Class name", key="new_class_name", placeholder="e.g. noise")
            st.button("Add class", key="add_class", on_click=actions.add_class,
                      args=("new_class_name",))


def undo_button(session) -> None:
    """The Undo button (key U).

    The key names the action this button undoes (as the class buttons name their point): a
    second press before the page is redrawn names the old action, which the session then
    refuses as no longer the last one, instead of undoing a second action.
    """
    action = int(session.last_action)
    st.button("Undo", key=f"undo_{action}", shortcut=UNDO_KEY, icon=":material/undo:",
              on_click=actions.undo, args=(action,),
              help="Undo the last label, change of a label, skip or change of a class (key U)")
