"""The "Suspects" tab: labelled points ranked by how likely their label is wrong.

The ranking is :meth:`labeler.session.views.Views.suspects`: ``1 - p(label)`` under the
calibrated exact leave-one-out probabilities (the model fitted without the point), for every
label -- typed, from the file (initial), bulk, batch or accepted. Each shown point has its
image, text or first features, its label, the model's suggestion and two buttons:

* "Change to <suggested>" relabels it (one action; the app's Undo reverts it);
* "Keep" stores that the label was reviewed and kept (a ``keep`` event: one action, undone by
  the app's Undo or "Undo keep" here). A kept label leaves the list until the model's view of
  it changes materially (another suggestion, or a score higher by
  :data:`labeler.session.views.KEEP_SCORE_MARGIN`).

The element ``<span class="suspect-tag" data-point=.. data-label=.. data-suggested=..>`` per
shown point carries what is shown for the browser tests.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from labeler.ui import actions
from labeler.ui.point_panel import point_name
from labeler.ui.text import html_text, md_text
from labeler.ui.view import point_image, upscale

__all__ = ["render_suspects_tab", "suspect_line", "SUSPECTS_SHOWN"]

#: How many of the most suspect labels the tab shows at once.
SUSPECTS_SHOWN = 8
_TEXT_CHARS = 200


def _content(session, i: int) -> None:
    ds = session.dataset
    try:
        image = point_image(ds, i)
    except ValueError:
        image = None
    if image is not None:
        st.image(upscale(image, 96), width=96)
        return
    texts = getattr(ds, "texts", None)
    if texts is not None:
        text = str(texts[i])
        cut = text[:_TEXT_CHARS] + ("…" if len(text) > _TEXT_CHARS else "")
        st.markdown(f'<span class="grid-text">{html_text(cut)}</span>', unsafe_allow_html=True)
        return
    names = list(getattr(ds, "feature_names", None) or [])
    x = np.asarray(ds.X[i]).ravel()[:4]
    st.caption(" · ".join(f"{names[j] if j < len(names) else f'x{j}'} {v:.3g}" for j, v in enumerate(x)))


def render_suspects_tab(session) -> None:
    """Draw the tab for ``session`` (call under the session's lock)."""
    table = session.suspects()
    if not len(table):
        st.info("No labels yet: the labels most likely to be wrong show here once there are some.")
        return
    kept = int(table["kept"].sum())
    rest = table[~table["kept"]]
    likely = int((table["score"] > 0.5).sum())
    st.markdown(f"**Labels most likely to be wrong**, from the model fitted without each point "
                f"(calibrated leave-one-out). {likely} of {len(table)} labels are more likely wrong "
                "than right.")
    last_is_keep = session.last_action_kind == "keep"
    if kept or last_is_keep:
        with st.container(horizontal=True, gap="small"):
            st.caption(f"{kept} kept (hidden here until the model's view of them changes).")
            if last_is_keep:
                st.button("Undo keep", key="suspects_undo_keep", on_click=actions.undo,
                          args=(int(session.last_action),), icon=":material/undo:")
    version = session.n_events
    for _, row in rest.head(SUSPECTS_SHOWN).iterrows():
        i, label, suggested = int(row["index"]), str(row["label"]), str(row["suggested"])
        with st.container(border=True, key=f"suspect_{i}_{version}"):
            left, mid, right = st.columns([1, 2, 2], gap="small")
            with left:
                _content(session, i)
            with mid:
                st.markdown(suspect_line(session, row), unsafe_allow_html=True)
            with right, st.container(horizontal=True, gap="small"):
                if suggested != label:
                    st.button(f"Change to {md_text(suggested)}", key=f"suspect_change_{i}_{version}",
                              type="primary", on_click=actions.relabel, args=(i, suggested, label),
                              help="Relabel this point (one action: Undo reverts it)")
                st.button("Keep", key=f"suspect_keep_{i}_{version}", on_click=actions.keep, args=(i, label),
                          help="The label is right: store that it was reviewed and take it off this "
                               "list (one action: Undo reverts it)")
    if len(rest) > SUSPECTS_SHOWN:
        st.caption(f"{len(rest) - SUSPECTS_SHOWN} more labels, less suspect.")


def suspect_line(session, row) -> str:
    """One Suspects row's text (HTML): the point named as the point panel names it
    (:func:`labeler.ui.point_panel.point_name`: "#58 (1058)" with the data's own ids), its label
    and where it came from, the model's class and how likely the label is wrong."""
    i, label, suggested = int(row["index"]), str(row["label"]), str(row["suggested"])
    return (f'<span class="suspect-tag" data-point="{i}" data-label="{html_text(label)}" '
            f'data-suggested="{html_text(suggested)}">{html_text(point_name(session, i))}</span>'
            f" · labelled <b>{html_text(label)}</b> ({html_text(row['source'])})<br>"
            f"model: <b>{html_text(suggested)}</b> · {100 * float(row['score']):.0f} % likely wrong")
