"""Labelling many points at once: a box or lasso selection, "More like this", a batch of queries.

* :func:`render_area_panel` replaces the point panel while a box or lasso selection is on the
  map: how many pool points it holds (every point inside, also on the density map of a large
  pool: :mod:`labeler.ui.selection`) by current label, the predicted classes of the unlabelled
  ones and how many of those are confident, one "Label N as <class>" button per class (one
  action, one Undo) and "Clear selection";
* :func:`render_similar_tab` ("More like this" tab): the nearest neighbours of a point
  (:func:`labeler.session.neighbours.similar_points`) in a grid;
* :func:`render_batch_tab` ("Batch" tab): the next k queries chosen together
  (:func:`labeler.session.batch.batch_queries`) in a grid.

The two tabs are Streamlit fragments (:func:`render_bulk_tab`): picking a class in a grid,
the batch size or rule reruns only the tab, not the map and the rest of the page; after "Label
these N" the whole page reruns once (the map, counts and point panel show the new labels).

A grid shows each point (thumbnail, text or first features), its prediction and a class picker
set to the prediction; "Label these N" stores them as ONE action (one Undo reverts them all).
Every button carries the state version its page was drawn from: a press after the session
changed (another tab, an earlier press) writes nothing and says why
(:func:`labeler.ui.actions.label_grid`, ``LabelingSession.why_not_labelled``).

The elements ``<span class="area-tag" data-count=.. data-unlabelled=..>``,
``<span class="grid-tag" data-via=.. data-points="i,j,.." data-unsure="k,..">`` carry what is
shown for the browser tests (``data-unsure``: the pickers that start on "not sure").
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from labeler.session.batch import BATCH_RULES, MAX_BATCH, batch_queries
from labeler.session.neighbours import similar_points
from labeler.ui import actions, state
from labeler.ui.map_colors import class_color
from labeler.ui.selection import CONFIDENT, area_summary, selection_spread
from labeler.ui.label_controls import undo_button
from labeler.ui.text import html_text, md_text
from labeler.ui.view import build_view, point_image, upscale

__all__ = ["render_area_panel", "render_similar_tab", "render_batch_tab", "render_bulk_tab",
           "GRID_COLUMNS", "GUESS_MIN_CONFIDENCE", "CONFIDENT", "selection_spread", "grid_summary"]

GRID_COLUMNS = 5
#: A grid's picker is preset to the model's guess only at this calibrated confidence or above;
#: below it starts on "not sure" and the user must choose.
GUESS_MIN_CONFIDENCE = 0.9
_RULE_LABELS = {"greedy": "Greedy expected risk", "diverse": "Diverse (farthest first)"}
_TEXT_CHARS = 140


def _dot(code: int) -> str:
    return f'<span class="dot" style="background:{class_color(code)}"></span>' if code >= 0 else ""


def grid_summary(picked, predicted, confidence) -> dict:
    """What "Label these N" would store: ``guesses`` (picks equal to the model's prediction),
    ``expected_wrong`` (sum of 1 - confidence over them), ``unsure`` (no pick yet)."""
    conf = np.asarray(confidence, dtype=float)
    guess = np.array([p is not None and p == q for p, q in zip(picked, predicted)], dtype=bool)
    return {"guesses": int(guess.sum()), "expected_wrong": float((1.0 - conf[guess]).sum()),
            "unsure": int(sum(p is None for p in picked))}


def render_area_panel(session, view, area: dict) -> None:
    """The box or lasso selection ``area`` ({"how", "indices", "version"}) and its buttons.

    Its data (counts by label, the unlabelled points, their predicted classes) is
    :func:`labeler.ui.selection.area_summary`: O(selection), whatever the pool size."""
    confidence = view.confidence
    summary = area_summary(area.get("indices", ()), view.label_codes, view.predicted_codes,
                           confidence, len(view.classes))
    idx, free = summary.indices, summary.unlabelled
    how = "Lasso" if area.get("how") == "lasso" else "Box"
    st.markdown(
        f'#### <span class="area-tag" data-count="{idx.size}" data-unlabelled="{free.size}">'
        f"{how} selection · {idx.size:,} point{'s' * (idx.size != 1)}</span>",
        unsafe_allow_html=True,
    )
    if idx.size == 0:
        st.info("The selection holds no points: draw the lasso or box around points of the map "
                "(its toolbar has both tools), or clear it to go back to the query.")
    else:
        by = [f"{_dot(j)}{html_text(c)}: <b>{summary.by_label[j]:,}</b>"
              for j, c in enumerate(view.classes) if summary.by_label[j]]
        by.append(f"unlabelled: <b>{free.size:,}</b>")
        st.markdown('<div class="counts">' + " · ".join(by) + "</div>", unsafe_allow_html=True)
        if free.size == 0:
            st.info("Every selected point is labelled already: click a point to change its label.")
        else:
            spread = summary.spread
            st.caption("The model predicts for them: " + "; ".join(
                f"{md_text(c)}: {spread['predicted'][j]:,} ({spread['confident'][j]:,} confident, "
                f"{spread['predicted'][j] - spread['confident'][j]:,} not)"
                for j, c in enumerate(view.classes) if spread["predicted"][j])
                + f" (confident: calibrated confidence ≥ {CONFIDENT:.0%}).")
            with st.container(horizontal=True, gap="small", key="area_buttons"):
                for j, name in enumerate(view.classes):
                    against = spread["against"][j]
                    note = f" ({against:,} against a confident prediction)" if against else ""
                    st.button(f"Label {free.size:,} as {md_text(name)}{note}", key=f"area_{j}",
                              type="primary", on_click=actions.label_area,
                              args=(free, name, view.version),
                              help=f"Label the {free.size:,} unlabelled selected points as "
                                   f"{md_text(name)}: one action, one Undo. {against:,} of them the model "
                                   f"predicts as another class with confidence ≥ {CONFIDENT:.0%}.")
    with st.container(horizontal=True, gap="small", key="area_step_buttons"):
        st.button("Clear selection", key="area_clear", icon=":material/deselect:",
                  on_click=actions.clear_area, help="Back to the next query")
        undo_button(session)
    st.caption("Labelled points keep their label. Draw a new lasso or box to change the selection; "
               "it holds every point inside it, also where the map shows only the density.")


def _cell(session, view, i: int, key: str) -> None:
    ds = session.dataset
    try:
        image = point_image(ds, i)
    except ValueError:
        image = None
    if image is not None:
        st.image(upscale(image, 112), width=112)
    else:
        texts = ds.texts
        if texts is not None:
            text = str(texts[i])
            cut = text[:_TEXT_CHARS] + ("…" if len(text) > _TEXT_CHARS else "")
            st.markdown(f'<span class="grid-text">{html_text(cut)}</span>', unsafe_allow_html=True)
        else:
            x = np.asarray(ds.X[i]).ravel()[:3]
            st.caption(" · ".join(f"{v:.3g}" for v in x))
    p = int(view.predicted_codes[i])
    conf = float(view.confidence[i])
    name = view.classes[p] if p >= 0 else "?"
    st.markdown(f'<small class="counts">{html_text(session.point_name(i))} · {_dot(p)}{html_text(name)} ({conf:.2f})</small>',
                unsafe_allow_html=True)
    preset = p >= 0 and conf >= GUESS_MIN_CONFIDENCE  # an unsure guess is not preset
    st.selectbox("Class", view.classes, index=p if preset else None, key=key,
                 label_visibility="collapsed", format_func=md_text, placeholder="not sure: choose")


def _grid(session, view, indices, via: str, button: str) -> None:
    indices = [int(i) for i in indices]
    conf = view.confidence
    unsure = [i for i in indices if not (conf[i] >= GUESS_MIN_CONFIDENCE and view.predicted_codes[i] >= 0)]
    st.markdown(f'<span class="grid-tag" data-via="{via}" data-version="{view.version}" '
                f'data-points="{",".join(map(str, indices))}" data-unsure="{",".join(map(str, unsure))}">'
                '</span>', unsafe_allow_html=True)
    keys = [f"grid_{via}_{view.version}_{i}" for i in indices]
    for start in range(0, len(indices), GRID_COLUMNS):
        cols = st.columns(GRID_COLUMNS, gap="small")
        for col, i, key in zip(cols, indices[start:start + GRID_COLUMNS],
                               keys[start:start + GRID_COLUMNS]):
            with col, st.container(border=True):
                _cell(session, view, i, key)
    picked = [st.session_state.get(k, view.classes[int(view.predicted_codes[i])]
                                   if conf[i] >= GUESS_MIN_CONFIDENCE and view.predicted_codes[i] >= 0 else None)
              for i, k in zip(indices, keys)]
    summary = grid_summary(picked, [view.classes[int(view.predicted_codes[i])] if view.predicted_codes[i] >= 0
                                    else None for i in indices], conf[indices])
    words = button
    if summary["guesses"]:
        words += f" ({summary['guesses']} model guesses, ~{summary['expected_wrong']:.1f} expected wrong)"
    if summary["unsure"]:
        st.caption(f"{summary['unsure']} point(s) the model is unsure of (confidence below "
                   f"{GUESS_MIN_CONFIDENCE:.0%}) start on *not sure*: choose their class first.")
    presets = [view.classes[int(view.predicted_codes[i])]
               if conf[i] >= GUESS_MIN_CONFIDENCE and view.predicted_codes[i] >= 0 else None for i in indices]
    st.button(words, key=f"grid_label_{via}", type="primary", icon=":material/done_all:",
              on_click=actions.label_grid, args=(indices, keys, via, view.version, presets),
              help="Store every point with the class picked under it: one action, one Undo. A "
                   "'model guess' is a pick equal to the model's prediction; its expected number "
                   "wrong is the sum of (1 - calibrated confidence).")


def render_similar_tab(session, view) -> None:
    """The "More like this" tab: neighbours of ``st.session_state["similar_to"]``."""
    anchor = st.session_state.get("similar_to")
    if anchor is None or not 0 <= int(anchor) < view.n_samples:
        st.info("Press **More like this** under a point to see its nearest neighbours here.")
        return
    anchor = int(anchor)
    with st.columns([1, 3])[0]:
        k = st.number_input("Neighbours", 1, 50, 10, key="similar_k", bind="query-params",
                            help="How many of the most similar unlabelled points to show")
    found = similar_points(session, anchor, k=int(k))
    st.markdown(f"**The {len(found)} unlabelled points most like point {md_text(session.point_name(anchor))}** (distance in "
                "the features the model sees). Set each class, then label them all at once.")
    if not len(found):
        st.info("No unlabelled point is left to compare with.")
        return
    _grid(session, view, found, "similar", f"Label these {len(found)}")


def render_batch_tab(session, view) -> None:
    """The "Batch" tab: the next k queries chosen together, labelled in one go."""
    left, right, _ = st.columns([1, 2, 1])
    with left:
        k = st.number_input("Batch size", 1, MAX_BATCH, 5, key="batch_k", bind="query-params",
                            help="How many queries to choose together")
    with right:
        rule = st.segmented_control("Rule", BATCH_RULES, default="greedy", key="batch_rule",
                                    format_func=_RULE_LABELS.get, required=True,
                                    bind="query-params",
                                    help="Greedy: each pick assumes the earlier picks get their "
                                         "predicted class. Diverse: far apart among the best-scored.")
    with st.spinner("Choosing the batch…"):
        picks = batch_queries(session, int(k), rule or "greedy")
    if not len(picks):
        st.success("Every point is labelled or skipped.")
        return
    _grid(session, view, picks, "batch", f"Label these {len(picks)}")


@st.fragment
def render_bulk_tab(kind: str) -> None:
    """The "More like this" (``kind="similar"``) or "Batch" (``"batch"``) tab as a fragment:
    its widgets rerun only this function. Reads the session and its view itself (a fragment
    rerun does not run the page), under the session's lock."""
    session, lock = state.current()
    if session is None:
        return
    with lock:
        if session.closed:
            return
        view = build_view(session, color_mode="label")  # cached per state: cheap
        (render_batch_tab if kind == "batch" else render_similar_tab)(session, view)
    if st.session_state.pop("grid_labelled", False):
        st.rerun()  # the whole page once: the map, counts and point panel show the new labels
