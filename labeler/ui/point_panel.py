"""The point panel: the next query (or a clicked point), its image or features, the buttons.

The element ``<span class="point-tag" data-point="I" data-query="Q">`` carries the shown point
and the current query for the browser tests and the latency benchmark.

Class names and point ids come from the data file: they reach the HTML of the panel escaped
(:func:`~labeler.ui.text.html_text`) and its Markdown, button labels and help texts escaped as
Markdown (:func:`~labeler.ui.text.md_text`).
"""

from __future__ import annotations

import streamlit as st

from labeler.ui import actions
from labeler.ui.charts import render_query_explanation
from labeler.ui.figures import class_color
from labeler.ui.keyboard import BACK_KEY, SKIP_KEY, UNDO_KEY, class_shortcuts
from labeler.ui.text import html_text, md_text
from labeler.ui.view import ScreenView, feature_table, point_image, upscale

__all__ = ["render_point_panel"]


def _shown_point(view: ScreenView) -> tuple[int | None, str]:
    selected = st.session_state.get("selected")
    if selected is not None and 0 <= selected < view.n_samples and selected != view.query:
        return int(selected), "chosen"
    return view.query, "queried"


def render_point_panel(session, view: ScreenView) -> None:
    """Draw the point panel for ``session`` (call under the session's lock)."""
    index, source = _shown_point(view)
    query_attr = "" if view.query is None else str(view.query)
    # number this drawing of the panel: its buttons carry it (see actions._stale_panel)
    panel_rev = int(st.session_state.get("panel_rev", 0)) + 1
    st.session_state["panel_rev"] = panel_rev
    if index is None:
        st.markdown(f'#### <span class="point-tag" data-point="" data-query="{query_attr}">'
                    "All done</span>", unsafe_allow_html=True)
        st.success("Every point is labelled or skipped. Export the labels below, or undo.")
        _undo_button(session)
        return

    row = view.predictions.iloc[index]
    ident = html_text(_point_id(session, index))
    if source == "queried":
        title = f"Next query · point {ident}"
    else:
        title = f"Chosen point · {ident}"
    st.markdown(
        f'#### <span class="point-tag" data-point="{index}" data-query="{query_attr}">{title}</span>',
        unsafe_allow_html=True,
    )

    _point_content(session, index)
    if source == "queried" and hasattr(session, "explain_query"):
        render_query_explanation(session, index)

    current = row["label"]
    predicted, confidence = row["predicted"], float(row["confidence"])
    p_code = int(view.predicted_codes[index])
    st.markdown(
        f'Predicted <span style="color:{class_color(p_code)};font-weight:700">'
        f"{html_text(predicted)}</span> · confidence {confidence:.2f}",
        unsafe_allow_html=True,
    )
    is_labeled = view.label_codes[index] >= 0
    if is_labeled:
        st.info(f"Already labelled **{md_text(current)}** ({md_text(row['source'])}). Undo to change it.")

    expected = view.query if source == "queried" else None
    keys = class_shortcuts(view.classes)
    # The buttons' keys name the point they label. A key press reaches the server as "button
    # <key> clicked": while the browser still shows the previous point (and its buttons), the
    # press names that point's button, whose callback the session then ignores as stale or
    # repeated -- a label can never land on a point the page has not shown yet.
    with st.container(horizontal=True, gap="small", key="class_buttons"):
        for j, (name, key) in enumerate(zip(view.classes, keys)):
            st.button(
                md_text(name), key=f"class_{j}_{index}", shortcut=key, type="primary",
                on_click=actions.label, args=(index, name, source, expected, panel_rev),
                disabled=bool(is_labeled),
                help=f"Label as {md_text(name)}" + (f" (key {key})" if key else ""),
            )
    with st.container(horizontal=True, gap="small", key="step_buttons"):
        if source == "queried":
            st.button("Skip", key=f"skip_{index}", shortcut=SKIP_KEY, icon=":material/skip_next:",
                      on_click=actions.skip, args=(index, view.query, panel_rev),
                      help="Do not ask for this point again in this session (key S)")
        else:
            st.button("Back to query", key="back", shortcut=BACK_KEY,
                      icon=":material/keyboard_return:", on_click=actions.back,
                      help="Show the next query again (Esc)")
        _undo_button(session)
        with st.popover("New class", icon=":material/add:"):
            st.text_input("Class name", key="new_class_name", placeholder="e.g. noise")
            st.button("Add class", key="add_class", on_click=actions.add_class,
                      args=("new_class_name",))


def _undo_button(session) -> None:
    # The key names the action this button undoes (as the class buttons name their point): a
    # second press before the page is redrawn names the old action, which the session then
    # refuses as no longer the last one, instead of undoing a second action.
    action = int(session.last_action)
    st.button("Undo", key=f"undo_{action}", shortcut=UNDO_KEY, icon=":material/undo:",
              on_click=actions.undo, args=(action,),
              help="Undo the last label, accept or skip (key U)")


def _point_id(session, index: int) -> str:
    ids = getattr(session.dataset, "ids", None)
    if ids is None:
        return f"#{index}"
    ident = ids[index]
    return f"#{index}" if str(ident) == str(index) else f"#{index} ({ident})"


def _point_content(session, index: int) -> None:
    try:
        image = point_image(session.dataset, index)
    except ValueError as exc:
        st.error(md_text(exc))
        image = None
    if image is not None:
        st.image(upscale(image, 300), width=300 if max(image.shape[:2]) <= 300 else "stretch")
    else:
        st.dataframe(feature_table(session.dataset, index), hide_index=True, width="stretch",
                     height=min(38 + 35 * min(len(session.dataset.feature_names or []), 8), 320))

