"""The point panel: the next query (or a clicked point), its image or features, the buttons
(label, relabel, unlabel, skip, un-skip: :mod:`labeler.ui.label_controls`).

The element ``<span class="point-tag" data-point="I" data-query="Q">`` carries the shown point
and the current query for the browser tests and the latency benchmark.

Class names and point ids come from the data file: they reach the HTML of the panel escaped
(:func:`~labeler.ui.text.html_text`) and its Markdown, button labels and help texts escaped as
Markdown (:func:`~labeler.ui.text.md_text`).
"""

from __future__ import annotations


import numpy as np
import streamlit as st

from labeler.ui.charts import render_query_explanation
from labeler.ui.map_colors import class_color
from labeler.ui.label_controls import render_label_controls, undo_button
from labeler.data.point_names import point_name as _point_name
from labeler.ui.text import html_text, md_text
from labeler.ui.view import ScreenView, feature_table, point_image, shown_id, upscale

__all__ = ["render_point_panel", "point_name", "shown_id", "hidden_columns"]


def _shown_point(view: ScreenView) -> tuple[int | None, str]:
    selected = st.session_state.get("selected")
    if selected is not None and 0 <= selected < view.n_samples and selected != view.query:
        return int(selected), "chosen"
    return view.query, "queried"


def render_point_panel(session, view: ScreenView):
    """Draw the point panel for ``session`` (call under the session's lock).

    Returns
    -------
    callable or None
        Draws the panel's slow last part (the query's explanation, an O(n) pass or more) in
        its place at the panel's end: the page calls it once the pool map is drawn, so the map
        does not wait for it after a label; with ``pending=True`` (a large pool's first run,
        :mod:`labeler.ui.first_paint`) it says it is computed later instead. None when there
        is nothing left to draw.
    """
    index, source = _shown_point(view)
    query_attr = "" if view.query is None else str(view.query)
    if index is None:
        st.markdown(f'#### <span class="point-tag" data-point="" data-query="{query_attr}">'
                    "All done</span>", unsafe_allow_html=True)
        _number_panel(None)
        st.success("Every point is labelled or skipped. Export the labels below, or undo.")
        undo_button(session)
        return None

    # Everything the panel shows is computed first and then drawn without a pause, and the
    # slow parts (the explanation) come after the buttons: until this run ends the browser
    # keeps the previous point's buttons (greyed) beside the new ones, and they hear the same
    # keys: a key press clicks the newest button that is not greyed out (labeler.ui.keyboard).
    draw_content = _point_content(session, index)
    ident = html_text(point_name(session, index))
    if source == "queried":
        title = f"Next query · point {ident}"
    else:
        title = f"Chosen point · {ident}"
    st.markdown(
        f'#### <span class="point-tag" data-point="{index}" data-query="{query_attr}">{title}</span>',
        unsafe_allow_html=True,
    )
    panel_rev = _number_panel(index)
    draw_content()

    predicted, confidence = view.predicted_name(index), float(view.confidence[index])
    p_code = int(view.predicted_codes[index])
    st.markdown(
        # the class colour on a dot, the name in the text colour: a light class colour (yellow,
        # orange) as text on white is unreadable
        f'<span class="counts">Predicted <span class="dot" style="background:{class_color(p_code)}">'
        f'</span><b>{html_text(predicted)}</b> · confidence {confidence:.2f}</span>',
        unsafe_allow_html=True,
    )
    render_label_controls(session, view, index, source, panel_rev)
    if source != "queried":
        return None
    place = st.container()  # the explanation's place, filled after the map

    def draw_explanation(pending: bool = False) -> None:
        with place:
            render_query_explanation(session, index, pending=pending)

    return draw_explanation


def _number_panel(index: int | None) -> int:
    """Number this drawing of the panel, right after its title went to the browser, and note
    the point it shows (None: none); its buttons carry the number, and a press from an
    earlier panel's buttons is applied only when this panel shows the same point
    (:func:`labeler.ui.actions._press_target`)."""
    panel_rev = int(st.session_state.get("panel_rev", 0)) + 1
    st.session_state["panel_rev"] = panel_rev
    st.session_state["panel_point"] = None if index is None else int(index)
    return panel_rev


def point_name(session, index: int) -> str:
    """How the app names point ``index``: "#58", or "#58 (1058)" when the data has its own ids
    (:func:`labeler.data.point_names.point_name`); the point panel's title, the Suspects rows
    and every message about a point."""
    return _point_name(session.dataset, index)


def hidden_columns(dataset) -> tuple[str, ...]:
    """Columns of the point's table never shown beside it: the text column (shown on its own)
    and the label column the data came with (the answer, full or partly filled; it stays the
    initial labels and is exported). A column named ``label`` that is not a feature is the
    answer too, even when loaded with no label column (``--label-col ''``)."""
    options = getattr(dataset, "load_options", None) or {}
    hidden = [str(options[k]) for k in ("text_col", "label_col") if options.get(k)]
    frame = getattr(dataset, "frame", None)
    if frame is not None and not options.get("label_col"):
        features = {str(f) for f in (getattr(dataset, "feature_names", None) or ())}
        hidden += [str(c) for c in frame.columns if str(c).lower() == "label" and str(c) not in features]
    y = getattr(dataset, "y", None)
    if frame is not None and y is not None and "label" in frame.columns and "label" not in hidden \
            and len(frame) == len(y) and (frame["label"].astype(str).to_numpy() == np.asarray(y).astype(str)).all():
        hidden.append("label")  # a built-in's own label column
    return tuple(hidden)


#: Longest text shown in the panel (characters); longer texts end with a note.
PANEL_TEXT_CHARS = 3000


def _point_text(session, index: int) -> str | None:
    """The point's text (a table's text column) as panel HTML, escaped: data never becomes
    markup; None when the data has no text."""
    texts = session.dataset.texts
    if texts is None:
        return None
    text = str(texts[index])
    if not text.strip():
        body = "<i>(empty text)</i>"
    elif len(text) > PANEL_TEXT_CHARS:
        body = (html_text(text[:PANEL_TEXT_CHARS]) + f" … <i>({len(text) - PANEL_TEXT_CHARS:,} "
                "more characters)</i>")
    else:
        body = html_text(text)
    # a span (display: block), not a div: a div would open an HTML block, in which Markdown
    # keeps html_text's backslash escapes literally
    return f'<span class="point-text" data-point="{index}">{body}</span>'


def _point_content(session, index: int):
    """What the panel shows of point ``index``, computed before anything is drawn: a function
    that draws it (see :func:`render_point_panel` for why)."""
    text = _point_text(session, index)
    try:
        image, error = point_image(session.dataset, index), None
    except ValueError as exc:
        image, error = None, md_text(exc)
    table = None
    if image is not None:
        image = upscale(image, 300)
    else:
        table = feature_table(session.dataset, index, skip=hidden_columns(session.dataset))

    def draw() -> None:
        if text is not None:
            st.markdown(text, unsafe_allow_html=True)
        if error is not None:
            st.error(error)
        if image is not None:
            st.image(image, width=300 if max(image.shape[:2]) <= 300 else "stretch")
        else:
            st.dataframe(table, hide_index=True, width="stretch",
                         height=min(38 + 35 * min(len(table), 8), 320))  # rows shown, not features

    return draw
