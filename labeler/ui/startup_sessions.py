"""Which saved session a first tab opens: the page's rules, without Streamlit.

Shared by the page (:mod:`labeler.ui.state`) and the server's pre-opening
(:mod:`labeler.ui.preopen`), which opens the same session before a browser asks for it.
"""

from __future__ import annotations

from pathlib import Path

from labeler.store import StoreError
from labeler.ui.config import AppConfig

__all__ = ["startup_candidates"]

USER_ERRORS = (ValueError, OSError, StoreError)


def startup_candidates(cfg: AppConfig, on_error=None) -> list[str]:
    """The saved sessions a first tab tries, in order (no Streamlit: the server's pre-opening
    uses it too): without a data set given at start, the session used last; then the most
    recent saved session on the start-up data set with its options. Empty: a new session.

    ``on_error(exc)`` hears a store that cannot be read (then no candidate).
    """
    from labeler.session import LabelingSession

    try:
        saved = LabelingSession.list_sessions(cfg.store)
    except USER_ERRORS as exc:
        if on_error is not None:
            on_error(exc)
        saved = []
    out = []
    if saved and not cfg.data_given:  # no data set asked for: the session used last, not the demo
        from labeler.ui.session_list import last_used, session_summaries

        try:
            last = last_used(session_summaries(cfg.store))
        except USER_ERRORS:
            last = None
        if last is not None:
            out.append(str(last.id))
    same = [s for s in saved if _same_data(s.dataset, cfg.data)
            and _options_match(cfg.store, s.id, cfg.data_options)]
    if same:
        latest = str(max(same, key=lambda s: str(s.created)).id)
        if latest not in out:
            out.append(latest)
    return out


def _same_data(saved, wanted) -> bool:
    """True when a saved session's data set is ``wanted``: a built-in name or the same file.

    Sessions store file paths resolved (absolute), the command line may give them relative.
    """
    if str(saved) == str(wanted):
        return True
    path = Path(str(wanted)).expanduser()
    return path.exists() and str(path.resolve()) == str(saved)


def _options_match(store_path, session_id, wanted: dict) -> bool:
    """True when the saved session was made with every data set option in ``wanted``."""
    if not wanted:
        return True
    from labeler.store import Store

    try:
        with Store(store_path) as store:
            stored = dict(store.session(session_id).config.get("dataset_options") or {})
    except USER_ERRORS:
        return False
    return all(stored.get(k) == v for k, v in wanted.items())
