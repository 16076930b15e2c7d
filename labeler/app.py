"""Streamlit page of the ARLS labeler (start it with ``labeler`` or ``labeler app PATH``).

Thin by design: all labelling logic is in :class:`labeler.session.LabelingSession`, figures in
:mod:`labeler.ui.figures`, page sections in :mod:`labeler.ui`.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, "") and "labeler" not in sys.modules:  # `streamlit run labeler/app.py`
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

# Before anything imports numpy or numba (`labeler app` already did it in labeler.cli.main;
# this covers `streamlit run labeler/app.py`): see labeler.runtime.
from labeler.runtime import configure_threads, limit_malloc_arenas  # noqa: E402

configure_threads()
# `labeler app` caps glibc's malloc arenas before Streamlit starts; under `streamlit run` the
# server's threads exist already, but later reruns' threads get no new arenas either
limit_malloc_arenas()

import plotly.graph_objects as go  # noqa: E402
import streamlit as st  # noqa: E402

from labeler.ui import state
from labeler.ui.access import require_token
from labeler.ui.bulk_panels import render_area_panel, render_bulk_tab
from labeler.ui.charts import render_confidence, render_history, render_progress
from labeler.ui.export_panel import render_export
from labeler.ui.figures import scatter_spec
from labeler.ui.first_paint import PENDING, defers_slow_panels, report_map_drawn
from labeler.ui.keyboard import KEYS_READY_CSS, SKIP_KEY, UNDO_KEY, class_shortcuts, install_key_buffer
from labeler.ui.map_colors import class_color
from labeler.ui.map_component import drop_selection, preload_plotly, render_map, take_selection, uses_component
from labeler.ui.map_density import uses_density
from labeler.ui.selection import warm_up_in_background
from labeler.ui.point_panel import render_point_panel
from labeler.ui.sidebar import render_sidebar, strategy_label
from labeler.ui.startup import layout_job, render_layout_progress, start_layout_job
from labeler.ui.suspects_panel import render_suspects_tab
from labeler.ui.text import html_text, md_text
from labeler.ui.view import build_view, map_hover_texts
from labeler.ui.viewport import map_viewport
from labeler.ui.zoom import keep_zoom

st.set_page_config(page_title="ARLS labeler", page_icon="🏷️", layout="wide",
                   initial_sidebar_state="expanded")
st.markdown(
    """<style>
    .block-container {padding-top: 2.6rem; padding-bottom: 2rem;}
    .st-key-class_buttons button {min-width: 6rem; min-height: 2.8rem; font-size: 1.05rem;}
    .counts span.dot {display:inline-block;width:.7em;height:.7em;border-radius:50%;
                      margin:0 .3em 0 .9em;vertical-align:baseline;}
    .grid-text {display:block;font-size:.9rem;line-height:1.35;min-height:3.6rem;}
    .stSidebar .stWidgetLabel p, .stSidebar label p {white-space:normal;overflow:visible;
                                                     text-overflow:clip;}
    .point-text {display:block;font-size:1.05rem;line-height:1.5;padding:.6rem .85rem;margin-bottom:.6rem;
                 border-left:4px solid #0072B2;background:#f4f6f9;border-radius:4px;
                 max-height:16rem;overflow-y:auto;overflow-wrap:anywhere;}
    """ + KEYS_READY_CSS + """
    </style>""",
    unsafe_allow_html=True,
)

require_token(state.app_config().token)  # before any session is opened or widget drawn
install_key_buffer()  # before any button: a press made before its button is on the page is kept
preload_plotly()  # the map's plotly.js loads while the session opens (labeler/ui/map_component.py)
# a new session's progress bar goes into a slot every run has: the page's later elements keep
# their places, and the first rerun after a cold start does not mount the map again
opening = st.empty()
with opening.container():
    state.ensure_session()
opening.empty()
session, lock = state.current()
flashes = state.pop_flash()  # shown in the point panel's column: they never push the map down
if session is None:
    for kind, text in flashes:
        getattr(st, kind)(md_text(text))
    render_sidebar(None)
    st.info("Open a data set or a saved session in the sidebar.")
    st.stop()

with lock:
    if session.closed:  # closed to free memory meanwhile: open it again
        st.rerun()
    try:
        session.refresh()  # events another process (or server) wrote to the store
    except state.USER_ERRORS as exc:
        st.error(f"Could not read the store: {md_text(exc)}")
    if session.read_only:
        st.warning(md_text(f"The store {session.store_path} is read-only: this session can be "
                           "viewed, not changed. Copy the store to a writable folder to label."))
    modes = state.color_modes(session)  # no "expected risk" where the model has no such rule
    state.seed_color_mode(modes)  # from the URL (a reload), before the view that depends on it
    with st.spinner("Choosing the next query…"):
        view = build_view(session, color_mode=st.session_state["color_mode"])
    in_place = uses_component()  # the map changes in place (labeler/ui/map_component.py)
    # a large pool's first run: the query and the map first, the slow panels once the map is
    # drawn (labeler/ui/first_paint.py)
    first_paint = defers_slow_panels(session, view.n_samples, in_place)
    if uses_density(view.n_samples) and not first_paint:
        warm_up_in_background()  # the first lasso on a large pool need not load compiled code
    if in_place:
        take_selection()  # its click, box or lasso as st.plotly_chart's event under "scatter"
    state.sync_selection(session.layout, view.version)
    if in_place:
        drop_selection()  # applied once; the page counts its events
    area = st.session_state.get("area")

    # ---- header: data set, counts ----------------------------------------------------------
    config = session.config  # a copy: read once
    data_name = session.dataset.name or config.dataset or "data"
    strategy = strategy_label(config.strategy, session.model_name, session.n_samples)  # as the sidebar says

    counts = session.class_counts()
    badges = "".join(
        f'<span class="dot" style="background:{class_color(j)}"></span>{html_text(c)}: '
        f"<b>{counts.get(c, 0):,}</b>" for j, c in enumerate(view.classes)
    )
    st.markdown(f"### {md_text(data_name)}")
    st.markdown(
        f'<div class="counts">Labelled <b class="labeled-count" data-labeled="{view.n_labeled}">'
        f"{view.n_labeled:,}</b> of {view.n_samples:,} · {badges} · {strategy}</div>",
        unsafe_allow_html=True,
    )
    started = session.auto_settings.get("file_labels")  # a partly filled label column's labels
    if started:
        st.markdown(f'<div class="file-labels">{html_text(started)}.</div>', unsafe_allow_html=True)
    # which model answers and why, computed ONCE per page run: the header and the sidebar's
    # learner panel show this same dict (a background comparison finishing between two calls
    # would otherwise make them disagree)
    model_info = session.model_summary()
    choice = model_info.get("choice")  # model "auto": the leave-one-out comparison (issue 20 §2)
    if choice is not None:
        st.markdown(f'<div class="model-choice">{html_text(choice["text"])}</div>', unsafe_allow_html=True)

    # ---- main: point panel (drawn first: shown sooner) and the pool map ------------------
    left, right = st.columns([3, 2], gap="large")
    explain_query = None  # the point panel's slow last part, drawn after the map
    with right:
        for kind, text in flashes:
            getattr(st, kind)(md_text(text))  # messages quote file and class names: shown as typed
        if area is not None:
            render_area_panel(session, view, area)
        else:
            explain_query = render_point_panel(session, view)
    with left:
        mode = st.segmented_control("Colour by", list(modes), format_func=modes.get,
                                    key="color_mode", required=True, label_visibility="collapsed")
        state.keep_color_mode_in_url(mode)
        layout_bar = st.empty()  # the background layout's bar, filled once the map is drawn
        job = layout_job(session)
        selected = st.session_state.get("selected")
        map_key = f"{session.id}" if not job else f"{session.id}-{session.layout_method}"
        spec = scatter_spec(  # a plain figure dict: plotly validates it only for st.plotly_chart
            session.layout, view.classes, color_mode=mode or "label",
            label_codes=view.label_codes, predicted_codes=view.predicted_codes,
            confidence=view.confidence,
            expected_risk=view.expected_risk,
            query=view.query, selected=selected, skipped=sorted(view.skipped),
            view_key=map_key,  # a new layout (UMAP swapped in) starts unzoomed
            hover_text=map_hover_texts(session.dataset), hover_predictions=True,
            viewport=map_viewport(map_key) if uses_density(view.n_samples) else None,
            compact_hover=in_place,  # the page builds the pool's tooltips from arrays
        )
        if in_place:  # the whole figure once per map, then only what changed
            map_base = f"{map_key}|{view.n_samples}|{mode}"
            render_map(spec, base=map_base, height=spec["layout"].get("height") or 560)
        else:  # LABELER_MAP_COMPONENT=0: the whole figure on every rerun
            st.plotly_chart(go.Figure(spec), key="scatter", on_select="rerun",
                            selection_mode=("points", "box", "lasso"),
                            config={"displaylogo": False, "scrollZoom": True})
        st.caption("Click a point to see it and label it out of turn. Box or lasso select "
                   "(toolbar) to label many at once. Scroll to zoom, drag to zoom in on a box, "
                   "double-click to reset."
                   + (" Large pool: the map shows where points are; zoom in to see and click "
                      "single points. A box or lasso selects every point inside it, drawn or "
                      "not." if uses_density(view.n_samples) else ""))
        if explain_query is not None:  # in its place in the point panel, once the map is sent
            explain_query(pending=first_paint)
        if session.layout_pending and not first_paint:  # UMAP / t-SNE in the background, started
            start_layout_job(session)  # once the query and the fast map are drawn (its process
            # would compete with them)
        job = layout_job(session)
        if job is not None and (session.layout_pending or job.error is not None):
            with layout_bar.container():
                render_layout_progress(session)

    # ---- lower tabs (only the open one runs) ---------------------------------------------
    progress, batch, similar, confidence, suspects, export, history, keys = st.tabs(
        ["Progress", "Batch", "More like this", "Confidence", "Suspects", "Export", "History", "Shortcuts"],
        key="lower_tab", on_change="rerun", bind="query-params")
    if batch.open:
        with batch:
            render_bulk_tab("batch")  # a fragment: its widgets rerun only the tab
    if similar.open:
        with similar:
            render_bulk_tab("similar")
    if progress.open:
        with progress:
            if first_paint:
                st.caption(f"The stopping signal, the error estimate and the leave-one-out curves: {PENDING}")
            else:
                render_progress(session)
    if confidence.open:
        with confidence:
            render_confidence(session, view)
    if suspects.open:
        with suspects:
            render_suspects_tab(session)  # labeler/ui/suspects_panel.py
    if export.open:
        with export:
            render_export(session, lock, view.n_labeled)
    if history.open:
        with history:
            render_history(session)
    if keys.open:
        with keys:
            rows = [f"| `{k.upper()}` | label **{md_text(c)}** (on a labelled point: change to it) |"
                    for c, k in zip(view.classes, class_shortcuts(view.classes)) if k]
            st.markdown("| key | action |\n|---|---|\n" + "\n".join(rows) +
                        f"\n| `{SKIP_KEY.upper()}` | skip the query |\n| `{UNDO_KEY.upper()}` | undo |"
                        "\n| `Esc` | back to the query after clicking a point |")

    if first_paint:  # the page reruns once the map is drawn, for the slow panels
        report_map_drawn(session, map_base)

    # ---- sidebar last: the point panel reaches the browser first --------------------------
    render_sidebar(session, lock, model_info=model_info)
    keep_zoom()
