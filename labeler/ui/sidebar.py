"""Sidebar: data set picker, saved sessions, learner settings, classes (:mod:`.class_panel`)."""

from __future__ import annotations

import streamlit as st

from core.learner import WEIGHTINGS
from core.strategies import cold_strategy
from core.validation import LAM_RANGE, WIDTH_RANGE
from labeler.ui import actions, state
from labeler.ui.columns import is_table_path, picked_options, render_columns_box
from labeler.ui.class_panel import render_class_manager
from labeler.ui.charts import tuning_caption
from labeler.ui.config import BUILTIN_CHOICES, SIZED_BUILTINS
from labeler.data.preprocessing import parse_standardize
from labeler.ui.inputs import check_data_path, parse_positive_or_auto
from labeler.session.model import learner_capabilities
from labeler.ui.model_choice import (DEFAULT_ALPHA, MODEL_LABELS, MODEL_OPTIONS, model_label, picked_model_settings,
                                    same_model_settings, strategies_for)
from labeler.ui.registry import REGISTRY
from labeler.ui.session_list import describe, describe_stable, session_summaries
from labeler.ui.text import md_text

__all__ = ["render_sidebar", "strategy_label", "weighting_label"]

# display names of core's strategy and weighting names (the lists themselves are core's)
_STRATEGY_LABELS = {"arls": "ARLS (expected risk)", "margin": "Margin (uncertainty)", "random": "Random",
                    "vopt": "VOpt (graph variance)", "sigmaopt": "Sigma-opt (graph covariance)"}
_WEIGHTING_LABELS = {"balanced": "Balanced (class weights)", "none": "None",
                     "evident": "Balanced once imbalance is evident"}


#: What "auto" runs while cold (:func:`core.strategies.cold_strategy`), in the strategy's name.
_AUTO_LABELS = {"arls": "Auto (expected risk, then margin)", "vopt": "Auto (VOpt, then margin)",
                "margin": "Auto (margin)"}


def strategy_label(name, model: str = "rls", n_samples: int | None = None) -> str:
    """How the app names a strategy of :data:`core.strategies.STRATEGIES` for a session of
    ``model`` on ``n_samples`` points: "auto" says what it runs while cold on that learner
    (:func:`core.strategies.cold_strategy` of its capabilities, the rule the session and the
    model's description follow), e.g. "Auto (VOpt, then margin)" for harmonic above
    Zhu et al.'s size limit. The header and the learner panel both name it so."""
    if name == "auto":
        return _AUTO_LABELS[cold_strategy(learner_capabilities(model, n_samples))]
    return _STRATEGY_LABELS.get(name, str(name))


def weighting_label(weighting) -> str:
    """How the app names a weighting: one of :data:`core.learner.WEIGHTINGS`, or a dict of class
    weights ("Custom: a 2, b 1")."""
    if isinstance(weighting, dict):
        return "Custom: " + ", ".join(f"{c} {w:g}" for c, w in weighting.items())
    return _WEIGHTING_LABELS.get(weighting, str(weighting))


def render_sidebar(session, lock=None, model_info: dict | None = None) -> None:
    """Draw the sidebar; ``session`` may be None (nothing open yet), ``lock`` is its lock.

    ``model_info`` is the page run's :meth:`~labeler.session.LabelingSession.model_summary`,
    the same dict the header shows (computed once per run); None computes it here.
    """
    with st.sidebar:
        st.markdown("### :material/label: ARLS labeler")
        _data_picker()
        _saved_sessions(session, lock)
        if session is not None:
            _settings(session, model_info if model_info is not None else session.model_summary())
            render_class_manager(session)


# ------------------------------------------------------------------------------------------
def _open_builtin() -> None:
    name = st.session_state.get("pick_builtin")
    options = {}
    if name in SIZED_BUILTINS:
        options["n"] = int(st.session_state.get("pick_n") or 1000)
    state.new_session(name, options, **_picked_settings())


def _picked_settings() -> dict:
    """The "Open data" settings that apply to a new session (both open buttons)."""
    pca = int(st.session_state.get("pick_pca") or 0)
    return {
        "layout": st.session_state.get("pick_layout") or "auto",
        "pca_components": pca if pca > 0 else None,
        "initial_labels": int(st.session_state.get("pick_initial") or 0),
        "standardize": parse_standardize(st.session_state.get("pick_standardize")
                                         or state.app_config().model.get("standardize") or "auto"),
        **picked_model_settings(dict(st.session_state), _default_model()),
    }


def _default_model() -> str:
    """The model ``labeler app --model`` gave (the form's first choice)."""
    return str(state.app_config().model.get("model") or "rls")


STANDARDIZE_LABELS = {"auto": "Auto (decide from the data)", "on": "On", "off": "Off"}


def _standardize_box() -> None:
    """The new session's column scaling: auto / on / off (``labeler app --standardize``)."""
    default = str(state.app_config().model.get("standardize") or "auto")
    choices = list(STANDARDIZE_LABELS)
    st.selectbox("Standardise columns", choices, format_func=STANDARDIZE_LABELS.get, key="pick_standardize",
                 index=choices.index(default) if default in choices else 0,
                 help="Scale every feature column to mean 0, sd 1 before the kernel. Auto: off for "
                      "images, text, pixel-like tables (columns sharing one value range) and PCA / "
                      "SVD components (scaling them would whiten them); on for other tables.")


def _model_form() -> None:
    """The new session's model: kernel RLS or a graph model, and the graph's settings."""
    models = list(MODEL_LABELS)
    default = _default_model()
    st.selectbox("Model", models, format_func=model_label, key="pick_model",
                 index=models.index(default) if default in models else 0,
                 help="Kernel RLS: exact incremental ARLS on an RBF kernel (the default). Harmonic "
                      "function / LGC / Poisson learning: predictions spread over the kNN graph of the pool, "
                      "refitted on every label (they have no kernel width, λ or class weights). Poisson "
                      "learning stays accurate with very few labels per class.")
    model = st.session_state.get("pick_model") or default
    if MODEL_OPTIONS.get(model):
        cols = st.columns(2)
        cols[0].number_input("Graph neighbours k", min_value=1, max_value=1000, step=1, key="pick_graph_k",
                             value=int(state.app_config().model.get("knn") or 10),
                             help="Each point is joined to its k nearest neighbours (symmetrised).")
        if "alpha" in MODEL_OPTIONS[model]:
            cols[1].number_input("α (propagation)", min_value=0.01, max_value=0.999, step=0.01,
                                 value=DEFAULT_ALPHA, key="pick_alpha",
                                 help="LGC's weight of the neighbours against the labels, in (0, 1).")
        st.checkbox("Class mass normalisation", key="pick_class_mass",
                    help="Rescale each class's outputs to the labelled class proportions (seed 003 eq. 2.7).")


def _layout_choices() -> dict:
    from labeler.data.layout import available_layout_methods

    names = {"pca": "PCA", "tsne": "t-SNE", "umap": "UMAP"}
    return {"auto": "Given x, y columns, else PCA",
            **{m: names.get(m, m) for m in available_layout_methods()}}


def _open_path() -> None:
    cfg = state.app_config()
    try:
        path = check_data_path(st.session_state.get("pick_path", ""), cfg.data_dir, cfg.max_file_mb)
    except ValueError as exc:
        state.flash("error", str(exc))
        return
    options = {}
    if is_table_path(path):
        try:
            options.update(picked_options(path, int(cfg.max_file_mb * 1e6)))
        except (ValueError, OSError) as exc:
            state.flash("error", f"Could not open {path.name}: {exc}")
            return
    state.new_session(str(path), options, **_picked_settings())


def _columns_box() -> None:
    """The roles of the table typed in the path field, when it is one (else nothing)."""
    cfg = state.app_config()
    text = (st.session_state.get("pick_path") or "").strip()
    if not text:
        return
    try:
        path = check_data_path(text, cfg.data_dir, cfg.max_file_mb)
    except ValueError:
        return  # "Open path" names the problem
    if is_table_path(path):
        render_columns_box(path, int(cfg.max_file_mb * 1e6))


def _data_picker() -> None:
    with st.expander("Open data", icon=":material/database:",
                     expanded=st.session_state.get("session_id") is None):
        st.selectbox("Built-in data set", BUILTIN_CHOICES, key="pick_builtin",
                     help="moons-imbalanced: ten times fewer points in one moon.")
        if st.session_state.get("pick_builtin") in SIZED_BUILTINS:
            st.number_input("Pool size n", min_value=50, max_value=50_000, value=1000, step=500,
                            key="pick_n")
        st.button("Open built-in", key="open_builtin", on_click=_open_builtin,
                  icon=":material/play_arrow:", width="stretch")
        st.divider()
        cfg = state.app_config()
        st.text_input("File or image folder", key="pick_path",
                      placeholder="data/pool.csv",
                      help=f"CSV, Parquet or NPZ file, or a folder of images, inside {cfg.data_dir} "
                           f"(at most {cfg.max_file_mb:,.0f} MB). A table's column roles "
                           "(id, label, text, features...) are shown below to check first.")
        _columns_box()
        st.button("Open path", key="open_path", on_click=_open_path,
                  icon=":material/folder_open:", width="stretch")
        choices = _layout_choices()
        st.selectbox("2-D map", list(choices), format_func=choices.get, key="pick_layout",
                     help="How the pool is drawn (the model always uses all features). t-SNE "
                          "takes a while on large pools; it is computed once and cached in the "
                          "store. UMAP appears when umap-learn is installed.")
        cols = st.columns(2)
        cols[0].number_input("PCA components (0 = off)", min_value=0, max_value=100_000, value=0,
                             step=1, key="pick_pca",
                             help="Give the kernel the first k principal components of the "
                                  "features instead of the features themselves (e.g. 50 for "
                                  "image pixels: faster, often better). At most min(points, "
                                  "features). Columns are standardised first, image pixels not.")
        cols[1].number_input("Start with N true labels (0 = none)", min_value=0,
                             max_value=1_000_000, value=0, step=1, key="pick_initial",
                             help="Label N points at the start with the data set's own labels "
                                  "(the label column, or an image folder's subfolder names), "
                                  "one of each class first, drawn with the session's seed. One "
                                  "undo step; exported with source 'initial'. Needs labelled data.")
        _standardize_box()
        _model_form()
        st.caption("The 2-D map, PCA, starting labels and model apply to the session the buttons above open.")


# ------------------------------------------------------------------------------------------
def _resume() -> None:
    sid = st.session_state.get("pick_session")
    if sid is not None:
        state.open_session(sid)


def _delete() -> None:
    from labeler.session import LabelingSession

    sid = st.session_state.get("pick_session")
    if sid is None:
        return
    cfg = state.app_config()
    try:
        LabelingSession.delete_session(cfg.store, sid)
    except state.USER_ERRORS as exc:
        state.flash("error", f"Could not delete session {sid}: {exc}")
        return
    REGISTRY.forget(cfg.store, sid)
    if st.session_state.get("session_id") == sid:
        st.session_state["session_id"] = None
        st.query_params.pop("session", None)
    state.flash("success", f"Deleted session {sid}.")


def _new_same_data(session) -> None:
    cfg, config = state.app_config(), session.config  # session.config is a copy: read once
    state.new_session(config.dataset or cfg.data, config.dataset_options,
                      **same_model_settings(config, cfg.model))


def _saved_sessions(session, lock=None) -> None:
    cfg = state.app_config()
    with st.expander("Sessions", icon=":material/history:", expanded=False):
        try:
            infos = session_summaries(cfg.store)
        except state.USER_ERRORS as exc:
            st.error(md_text(f"Could not read the store {cfg.store}: {exc}"))
            infos = []
        st.caption(f"Store: {md_text(cfg.store)}")
        if infos:
            for info in infos[:8]:  # most recently used first: file · model · labels · last use
                here = " · **open now**" if session is not None and info.id == session.id else ""
                st.caption(md_text(describe(info)) + here)
            if len(infos) > 8:
                st.caption(f"… and {len(infos) - 8} older")
            by_id = {info.id: info for info in sorted(infos, key=lambda i: (i.created, i.id))}
            lines = [describe_stable(info) for info in by_id.values()]
            twice = {line for line in lines if lines.count(line) > 1}

            def describe_id(sid):  # stable text (labels arrive while it is shown): the count goes below
                return describe_stable(by_id[sid], duplicates=describe_stable(by_id[sid]) in twice)

            picked = st.selectbox("Saved sessions", list(by_id), key="pick_session",
                                  format_func=describe_id)
            if picked in by_id:
                info = by_id[picked]
                here = " · open now" if session is not None and picked == session.id else ""
                st.caption(f"{info.n_labeled} labels · last used {info.last_used[:16].replace('T', ' ')}{here}")
            # a wrapping row of buttons as wide as their labels (two columns cut them off)
            row = st.container(horizontal=True, gap="small")
            row.button("Resume", key="resume", on_click=_resume, icon=":material/play_arrow:")
            with row.popover("Delete", icon=":material/delete:"):
                st.write("Delete the chosen session and its labels from the store?")
                st.button("Delete for good", key="delete_session", on_click=_delete, type="primary")
        else:
            st.caption("No saved session yet.")
        if session is not None:
            st.button("New session on this data", key="new_session", on_click=_new_same_data,
                      args=(session,), icon=":material/add:", width="stretch")
            _session_download(session, lock)


def _session_download(session, lock) -> None:
    from labeler.ui.export_panel import session_file_bytes, session_file_name

    if lock is None:
        return
    st.download_button(
        "Download this session (one file)", key="download_session",
        data=lambda: session_file_bytes(session, lock), file_name=session_file_name(session),
        mime="application/vnd.sqlite3", on_click="ignore", icon=":material/save:", width="stretch",
        help="This session's labels, settings and history as one SQLite file: a backup, or a "
             "copy to open elsewhere with `labeler app --store FILE`.",
    )


def _short(dataset) -> str:
    text = str(dataset)
    return text if len(text) <= 28 else "…" + text[-27:]


# ------------------------------------------------------------------------------------------
def _settings(session, summary: dict) -> None:
    config = session.config

    def shown(value):
        return f"{value:.4g}" if isinstance(value, float) else str(value)

    with st.expander("Learner", icon=":material/tune:", expanded=True):
        if summary is not None:
            with st.container(key="model_panel"):
                st.markdown(f"**Model: {md_text(model_label(summary['model']))}.** {md_text(summary['description'])}")
                st.caption(f"Why: {md_text(summary['why'])}.")
        model = summary["model"] if summary is not None else "rls"
        offered = strategies_for(model, session.n_samples)
        strategy = config.strategy
        st.radio("Query strategy", offered, format_func=lambda name: strategy_label(name, model, session.n_samples),
                 index=offered.index(strategy) if strategy in offered else 0,
                 key=f"strategy_{session.id}", on_change=actions.set_setting,
                 args=("set_strategy", f"strategy_{session.id}"))
        if model != "rls":
            if config.model_choice == "auto":  # RLS is a candidate: its settings apply if it takes over
                st.caption("Kernel width, λ and class weights do not apply to the graph model answering now (it "
                           "has none); they are kernel RLS's, re-tuned by leave-one-out if the model choice "
                           "moves to it.")
            else:
                st.caption("Kernel width, λ and class weights do not apply to a graph model (it has none); "
                           "LOO tuning neither. Create an RLS session to use them.")
            if session.refit_note:
                st.caption(f"Last refit: {md_text(session.refit_note)}")
            return
        weighting = config.weighting
        # a dict of class weights is none of the named weightings: no option is selected
        named = isinstance(weighting, str) and weighting in WEIGHTINGS
        st.radio("Class weighting", WEIGHTINGS, format_func=weighting_label,
                 index=WEIGHTINGS.index(weighting) if named else None,
                 key=f"weighting_{session.id}", on_change=actions.set_setting,
                 args=("set_weighting", f"weighting_{session.id}"), horizontal=True)
        if not named:
            st.caption(f"Class weights: {md_text(weighting_label(weighting))}")
        status = session.tuning_status()
        auto = status.get("auto") or {}
        cols = st.columns(2)
        cols[0].text_input("Kernel width", value="auto" if auto.get("width") else shown(config.width),
                           key=f"width_{session.id}", on_change=actions.set_setting,
                           args=("set_width", f"width_{session.id}",
                                 lambda v: parse_positive_or_auto(v, "Kernel width", WIDTH_RANGE)),
                           help="RBF width s in exp(-|x-x'|²/(2s²)); 'auto' = re-tuned by LOO "
                                "as labels arrive, a number = fixed.")
        cols[1].text_input("λ (lam)", value="auto" if auto.get("lam") else shown(config.lam),
                           key=f"lam_{session.id}", on_change=actions.set_setting,
                           args=("set_lam", f"lam_{session.id}",
                                 lambda v: parse_positive_or_auto(v, "λ", LAM_RANGE)),
                           help="Regularisation; 'auto' = re-tuned by LOO classification error "
                                "as labels arrive, a number = fixed.")
        if status:
            with st.container(key="tuning_status"):
                st.markdown(tuning_caption(status))
            if status.get("note"):
                st.caption(f"Last re-tune: {md_text(status['note'])}")
        start = session.auto_settings
        if start:
            st.caption("Started from: " + "; ".join(f"{k}: {v}" for k, v in start.items()))
