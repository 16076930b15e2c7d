"""Per-tab state of the app (``st.session_state``) and the session it shows.

Keys of ``st.session_state`` used by the app (tests read and inject them):

``app_config``     :class:`~labeler.ui.config.AppConfig` read from the environment at start
``session_id``     id of the labelling session shown in this tab
``selected``       pool index clicked in the scatter (labelled out of turn), or None
``scatter``        the scatter chart's selection event (owned by ``st.plotly_chart``)
``scatter_seen``   signature of the last selection event already applied
``area``           a box or lasso selection: {"how", "indices" (int64 array of pool
                   indices), "version"} or None
``similar_to``     the point whose neighbours the "More like this" tab shows, or None
``color_mode``     colour of the pool map (key of :data:`labeler.ui.map_colors.COLOR_MODES`)
``flash``          messages of the last action, shown once: list of (kind, text)
"""

from __future__ import annotations

import json


import streamlit as st

from labeler.store import StoreError
from labeler.ui.config import AppConfig
from labeler.ui.figures import point_index_from_selection
from labeler.ui.selection import area_selection
from labeler.ui.registry import REGISTRY
from labeler.ui.startup_sessions import _same_data, startup_candidates  # noqa: F401 - re-exported

__all__ = [
    "USER_ERRORS", "app_config", "flash", "pop_flash", "current", "open_session", "new_session",
    "sync_selection", "select_point", "clear_selection", "clear_area", "show_similar",
    "seed_color_mode", "keep_color_mode_in_url", "startup_candidates",
]

#: Errors that bad input, a bad data or store file or the file system raise: shown to the
#: user, never a crash. ``ValueError`` covers the session's and core's checks (and
#: ``ExportError``, ``LinAlgError``), ``StoreError`` the store's (``UnknownSessionError``
#: too), ``OSError`` unreadable or unwritable files. Anything else is a programming error
#: and raises.
USER_ERRORS = (ValueError, OSError, StoreError)


def app_config() -> AppConfig:
    """The start-up configuration of this tab (read from the environment once)."""
    if "app_config" not in st.session_state:
        st.session_state["app_config"] = AppConfig.from_env()
    return st.session_state["app_config"]


def flash(kind: str, text: str) -> None:
    """Queue a message ('success' | 'info' | 'warning' | 'error') for the next render.

    A warning replaces the warning queued before it (several presses refused before the page
    reran showed a stack of "not applied" warnings: the latest says what matters); a message of
    another kind queued twice is shown once.
    """
    queued = st.session_state.setdefault("flash", [])
    queued[:] = [(k, t) for k, t in queued if not (k == kind and (kind == "warning" or t == text))]
    queued.append((kind, text))


def pop_flash() -> list[tuple[str, str]]:
    """Messages queued since the last render (and forget them)."""
    return st.session_state.pop("flash", [])


def current():
    """``(session, lock)`` of the session shown in this tab, or ``(None, None)``."""
    sid = st.session_state.get("session_id")
    if sid is None:
        return None, None
    try:
        return REGISTRY.get(app_config().store, sid)
    except USER_ERRORS as exc:
        flash("error", f"Could not open session {sid}: {exc}")
        st.session_state["session_id"] = None
        return None, None


def _show(session_id) -> None:
    st.session_state["session_id"] = session_id
    st.query_params["session"] = str(session_id)
    clear_selection()


def open_session(session_id) -> bool:
    """Show the saved session ``session_id``; on failure queue the error and change nothing."""
    try:
        session, _ = REGISTRY.get(app_config().store, session_id)
    except USER_ERRORS as exc:
        flash("error", f"Could not open session {session_id}: {exc}")
        return False
    if session.damage is not None:  # shown read-only, as it was before its first damaged event
        flash("warning", f"{session.damage} It is shown read-only up to that event.")
    _show(session_id)
    return True


def new_session(dataset: str, dataset_options: dict | None = None, **settings) -> bool:
    """Create a session on ``dataset`` and show it; on bad input queue the error, change nothing.

    ``settings`` are further :class:`~labeler.session.SessionConfig` fields.
    """
    from labeler.session import SessionConfig

    try:
        config = SessionConfig(dataset=dataset, dataset_options=dict(dataset_options or {}),
                               **settings)
        bar = st.progress(0.0, text=f"Loading {dataset} and building the model…")
        with st.spinner(f"Loading {dataset} and building the model…", show_time=True):
            session, _ = REGISTRY.create(app_config().store, config,
                                         progress=lambda text, done: bar.progress(done, text=text))
        bar.empty()  # (a slow map layout, UMAP, starts in the background once the page is drawn)
    except (*USER_ERRORS, MemoryError) as exc:  # MemoryError: an n x n matrix too large
        flash("error", f"Could not open {dataset}: {exc}")
        return False
    _announce_new(session)
    _show(session.id)
    return True


def _announce_new(session) -> None:
    """What a new session says once: the posterior "auto" chose, an approximate pick."""
    chosen = session.auto_settings.get("posterior")
    if chosen and session.config.posterior != "dense":  # "auto" chose a low-rank posterior: say so, and that the picks are approximate
        flash("info", f"Posterior chosen automatically: {chosen}")
    if session.scoring_note:
        flash("info", f"The next query is an {session.scoring_note}.")


def ensure_session() -> None:
    """At the first run of a tab, choose the session to show.

    Order: the ``?session=`` query parameter (a reloaded page), ``LABELER_SESSION``; the session
    the server opened at start for the first tab (:mod:`labeler.ui.preopen`: chosen by the
    rules below, waited for if not ready); without a data set given at start, the session used
    last (:mod:`labeler.ui.session_list`); with one, the most recent saved session on it; else
    a new session on the start-up data set.
    """
    if st.session_state.get("session_id") is not None or st.session_state.get("start_done"):
        return
    st.session_state["start_done"] = True
    cfg = app_config()
    wanted = st.query_params.get("session") or cfg.session
    if wanted and open_session(wanted):
        return
    if not st.query_params.get("session"):
        from labeler.ui import preopen

        with st.spinner("Opening the session…", show_time=True):
            pre = preopen.take()
        if pre is not None and open_session(pre.id):
            if pre.created:
                session, _ = REGISTRY.get(cfg.store, pre.id)
                _announce_new(session)
            return
    for session_id in startup_candidates(cfg, on_error=lambda exc: flash(
            "error", f"Could not read the store {cfg.store}: {exc}")):
        if open_session(session_id):
            return
    new_session(cfg.data, cfg.data_options, **cfg.model)


def _signature(event) -> str:
    """What tells one selection event from the next: the shapes drawn (a box or lasso), else
    the points (a click)."""
    try:
        sel = event["selection"]
        shapes = {"box": sel.get("box") or [], "lasso": sel.get("lasso") or []}
        what = shapes if shapes["box"] or shapes["lasso"] else sel["points"]
    except (KeyError, TypeError, AttributeError):
        return ""
    try:
        return json.dumps(what, sort_keys=True, default=str)
    except (TypeError, ValueError):
        return repr(what)


def sync_selection(layout, version: int = 0) -> None:
    """Apply a NEW click, box or lasso in the scatter (event under key ``scatter``): a click to
    ``selected``, a box or lasso to ``area`` (every pool point of ``layout`` inside it, with
    the state ``version`` it was drawn on).

    The chart keeps its selection across reruns, so an event is applied once (its signature:
    the shapes drawn, else the points clicked); clearing ``selected`` or ``area`` after a
    label therefore sticks. On the density map two boxes may hold the same drawn points
    (none): their shapes tell them apart.

    Parameters
    ----------
    layout : ndarray of shape (n_samples, 2)
        The pool's 2-D layout (``session.layout``), in the map's coordinates.
    version : int
    """
    event = st.session_state.get("scatter")
    sig = _signature(event)
    if sig == st.session_state.get("scatter_seen", ""):
        return
    st.session_state["scatter_seen"] = sig
    n_samples = len(layout)
    area = area_selection(event, layout)
    if area is not None:
        st.session_state["area"] = {"how": area.how, "indices": area.indices,
                                    "version": int(version)}
        return
    index = point_index_from_selection(event)
    if index is not None and 0 <= index < n_samples:
        st.session_state["selected"] = index


def select_point(index: int) -> None:
    """Show ``index`` in the point panel (to label it out of turn)."""
    st.session_state["selected"] = int(index)


def clear_selection() -> None:
    """Back to the next query."""
    st.session_state["selected"] = None
    clear_area()


def clear_area() -> None:
    """Forget the box or lasso selection (the point panel comes back)."""
    st.session_state["area"] = None


def show_similar(index: int) -> None:
    """Open the "More like this" tab on the neighbours of point ``index``."""
    st.session_state["similar_to"] = int(index)
    st.session_state["lower_tab"] = "More like this"


def color_modes(session) -> dict:
    """The map's colour modes for ``session`` (key -> label): every mode of ``COLOR_MODES``
    but "expected_risk" when the learner has no expected-risk rule (LGC; a harmonic session
    above the size of Zhu et al.'s exact rule), whose map would be blank."""
    from labeler.ui.map_colors import COLOR_MODES

    from core.learner.base import EXPECTED_RISK

    if EXPECTED_RISK in session.learner.capabilities:
        return dict(COLOR_MODES)
    return {k: v for k, v in COLOR_MODES.items() if k != "expected_risk"}


def seed_color_mode(modes: dict | None = None) -> None:
    """Start the map's colour mode from the URL's ``color_mode`` (a key of ``COLOR_MODES`` or,
    from older links, its label), else "label"; once set, the widget owns it.

    The URL is written by the server at the end of each run (:func:`keep_color_mode_in_url`),
    not by the widget's own ``bind="query-params"``: with that binding, a click made while a
    run was still going (e.g. right after "Label these N") changed the map but the finishing
    run wrote the old URL back, so a reload lost the mode.

    ``modes`` (default ``COLOR_MODES``) are the modes this session offers
    (:func:`color_modes`); a mode it does not offer falls back to "label".
    """
    from labeler.ui.map_colors import COLOR_MODES

    modes = COLOR_MODES if modes is None else modes
    if "color_mode" in st.session_state:
        if st.session_state["color_mode"] not in modes:  # e.g. another session's mode
            st.session_state["color_mode"] = "label"
        return
    wanted = st.query_params.get("color_mode", "label")
    by_label = {text: key for key, text in COLOR_MODES.items()}
    wanted = wanted if wanted in COLOR_MODES else by_label.get(wanted, "label")
    st.session_state["color_mode"] = wanted if wanted in modes else "label"


def keep_color_mode_in_url(mode: str | None) -> None:
    """Write the colour mode into the URL (none for the default "label") when it differs."""
    mode = mode or "label"
    if mode == "label":
        if "color_mode" in st.query_params:
            del st.query_params["color_mode"]
    elif st.query_params.get("color_mode") != mode:
        st.query_params["color_mode"] = mode
