"""The access token: with one configured (``labeler app --token``), a tab sees nothing else.

What it is: a shared secret, compared in constant time (:func:`hmac.compare_digest`), that a
tab gives once, as ``?token=...`` in the link the server printed or typed into the field the
page shows; the tab remembers it in its ``st.session_state`` (per browser tab, gone when the
tab is closed; the link keeps the token, so a reload passes again). Until then the script
stops before it opens any session or draws any widget, so no callback (label, delete, export)
can run either: Streamlit only runs callbacks of widgets it drew for that tab.

The server's gate (:mod:`labeler.http_guard`) asks for the same token on every route (media,
exports, static files, the WebSocket) and sets a cookie once a browser gave it; this page
accepts that cookie too.

What it is not: encryption (plain HTTP carries the token and the data: use an SSH tunnel or a
TLS reverse proxy across a network you do not trust), nor per-user accounts.
"""

from __future__ import annotations

import hmac

import streamlit as st

__all__ = ["granted", "require_token"]

_OK = "access_granted"


def _matches(given, token: str) -> bool:
    return isinstance(given, str) and hmac.compare_digest(given.encode(), token.encode())


def granted(token: str | None) -> bool:
    """Whether this tab may see the app: no token configured, or it gave the right one."""
    if not token or st.session_state.get(_OK) is True:
        return True
    if _matches(st.query_params.get("token"), token) or _cookie_matches(token):
        st.session_state[_OK] = True
        return True
    return False


def _cookie_matches(token: str) -> bool:
    """The server's gate (:mod:`labeler.http_guard`) set its cookie for this browser: the token was given."""
    from labeler.http_guard import COOKIE, cookie_value

    try:
        given = st.context.cookies.get(COOKIE)
    except Exception:  # noqa: BLE001 - no browser context (e.g. a script run outside a server)
        return False
    return isinstance(given, str) and hmac.compare_digest(given.encode(), cookie_value(token).encode())


def require_token(token: str | None) -> None:
    """Draw the token field and stop the script unless this tab may see the app."""
    if granted(token):
        return

    def check():
        if _matches(st.session_state.get("access_token_input"), token):
            st.session_state[_OK] = True
            st.query_params["token"] = st.session_state["access_token_input"]
        else:
            st.session_state["access_refused"] = True

    st.markdown("### ARLS labeler")
    st.text_input("Access token", type="password", key="access_token_input", on_change=check,
                  help="The server was started with --token; its link carries it as ?token=...")
    if st.session_state.pop("access_refused", False) or st.query_params.get("token"):
        st.error("That token is not right. Use the link the server printed, or ask whoever "
                 "started it.")
    st.stop()
