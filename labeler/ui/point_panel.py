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
from labeler.ui.figures import class_color
from labeler.ui.label_controls import render_label_controls, undo_button
from labeler.ui.text import html_text, md_text
from labeler.ui.view import ScreenView, feature_table, point_image, upscale

__all__ = ["render_point_panel", "shown_id", "hidden_columns"]


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
        undo_button(session)
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

    predicted, confidence = row["predicted"], float(row["confidence"])
    p_code = int(view.predicted_codes[index])
    st.markdown(
        # the class colour on a dot, the name in the text colour: a light class colour (yellow,
        # orange) as text on white is unreadable
        f'<span class="counts">Predicted <span class="dot" style="background:{class_color(p_code)}">'
        f'</span><b>{html_text(predicted)}</b> · confidence {confidence:.2f}</span>',
        unsafe_allow_html=True,
    )
    render_label_controls(session, view, index, source, panel_rev)


def _point_id(session, index: int) -> str:
    ids = getattr(session.dataset, "ids", None)
    if ids is None:
        return f"#{index}"
    ident = shown_id(session.dataset, index)
    return f"#{index}" if ident == str(index) else f"#{index} ({ident})"


def shown_id(dataset, index: int) -> str:
    """The point's id as the labeller sees it: without the answer the data came with.

    An image folder's id is ``class/file.png``; a path component equal to the point's own
    label (the class folder) is left out, so ``cat/001.png`` shows as ``001.png``. The full id
    stays in the data set and the export.
    """
    ident = str(dataset.ids[index])
    y = getattr(dataset, "y", None)
    if y is None or "/" not in ident:
        return ident
    answer = str(y[index])
    parts = [p for p in ident.split("/") if p != answer]
    return "/".join(parts) if parts else ident


def hidden_columns(dataset) -> tuple[str, ...]:
    """Columns of the point's table never shown beside it: the text column (shown on its own)
    and the label column the data came with (the answer; it stays the initial labels and is
    exported)."""
    options = getattr(dataset, "load_options", None) or {}
    hidden = [str(options[k]) for k in ("text_col", "label_col") if options.get(k)]
    frame, y = getattr(dataset, "frame", None), getattr(dataset, "y", None)
    if frame is not None and y is not None and "label" in frame.columns and "label" not in hidden \
            and len(frame) == len(y) and (frame["label"].astype(str).to_numpy() == np.asarray(y).astype(str)).all():
        hidden.append("label")  # a built-in's own label column
    return tuple(hidden)


#: Longest text shown in the panel (characters); longer texts end with a note.
PANEL_TEXT_CHARS = 3000


def _point_text(session, index: int) -> None:
    """The point's text (a table's text column), escaped: data never becomes markup."""
    texts = getattr(session.dataset, "texts", None)
    if texts is None:
        return
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
    st.markdown(f'<span class="point-text" data-point="{index}">{body}</span>', unsafe_allow_html=True)


def _point_content(session, index: int) -> None:
    _point_text(session, index)
    try:
        image = point_image(session.dataset, index)
    except ValueError as exc:
        st.error(md_text(exc))
        image = None
    if image is not None:
        st.image(upscale(image, 300), width=300 if max(image.shape[:2]) <= 300 else "stretch")
    else:
        table = feature_table(session.dataset, index, skip=hidden_columns(session.dataset))
        st.dataframe(table, hide_index=True, width="stretch",
                     height=min(38 + 35 * min(len(table), 8), 320))  # rows shown, not features

