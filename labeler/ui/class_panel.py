"""Sidebar expander "Classes": rename a class, delete one, move or unlabel all its points.

A class is deleted only once it has no labelled points (the session refuses otherwise): for a
class with labels the expander offers the two ways out first, "Move all k points to ..." and
"Unlabel all k points", each one action that Undo reverts. Deleting asks for confirmation (a
popover, as deleting a session does). Class names are shown escaped
(:func:`~labeler.ui.text.md_text`).
"""

from __future__ import annotations

import streamlit as st

from labeler.ui import actions
from labeler.ui.map_colors import class_color
from labeler.ui.text import html_text, md_text

__all__ = ["render_class_manager"]


def render_class_manager(session) -> None:
    """Draw the "Classes" expander for ``session`` (inside the sidebar)."""
    classes = list(session.classes)
    counts = session.class_counts()
    version = int(session.n_events)
    with st.expander("Classes", icon=":material/category:", expanded=False):
        st.markdown(
            "".join(f'<div class="class-count"><span style="color:{class_color(j)}">●</span> '
                    f"{html_text(c)}: <b>{counts.get(c, 0)}</b></div>" for j, c in enumerate(classes)),
            unsafe_allow_html=True,
        )
        pick_key = f"manage_class_{session.id}"
        picked = st.selectbox("Class", classes, key=pick_key)
        if picked is None:
            return
        rename_key = f"rename_to_{session.id}"
        st.text_input("New name", key=rename_key, placeholder="e.g. cat")
        st.button("Rename", key="rename_class", icon=":material/edit:", width="stretch",
                  on_click=actions.rename_class, args=(picked, rename_key, pick_key))
        k = counts.get(picked, 0)
        others = [c for c in classes if c != picked]
        if k:
            st.caption(f"**{md_text(picked)}** has {k} labelled point{'s' if k != 1 else ''}. "
                       "To delete the class, move them or unlabel them first (each is one step "
                       "Undo reverts).")
            move_key = f"move_to_{session.id}"
            st.selectbox("Move them to", others, key=move_key)
            st.button(f"Move all {k} points", key="move_class", width="stretch",
                      icon=":material/move_item:", on_click=actions.move_class_labels,
                      args=(picked, move_key, version))
            st.button(f"Unlabel all {k} points", key="unlabel_class", width="stretch",
                      icon=":material/label_off:", on_click=actions.unlabel_class,
                      args=(picked, version))
        elif len(classes) <= 2:
            st.caption("A session needs at least two classes: add another one before deleting "
                       "this one (or rename it).")
        else:
            with st.popover("Delete class", icon=":material/delete:", width="stretch"):
                st.write(f"Delete class **{md_text(picked)}**? It has no labels; Undo brings it back.")
                st.button("Delete for good", key="delete_class", type="primary",
                          on_click=actions.delete_class, args=(picked,))
