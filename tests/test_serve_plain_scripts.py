"""The page components' scripts (the map's plotly.js) are served uncompressed, as Streamlit
serves its own bundles: the gzip layer never sees the client's Accept-Encoding for them; every
other request reaches the application unchanged."""

from __future__ import annotations

import asyncio

from labeler.serve import plain_component_scripts


def _seen(path, kind="http"):
    seen = {}

    async def app(scope, receive, send):
        seen["scope"] = scope

    scope = {"type": kind, "path": path, "headers": [(b"host", b"localhost"), (b"accept-encoding", b"gzip, br"),
                                                     (b"Accept-Encoding", b"gzip")]}
    asyncio.run(plain_component_scripts(app)(scope, None, None))
    return seen["scope"], scope


def test_component_scripts_lose_accept_encoding_only():
    got, _ = _seen("/component/labeler.ui.map_component.labeler_plotly_js/plotly.min.js")
    assert got["headers"] == [(b"host", b"localhost")]
    for path in ("/_stcore/stream", "/media/x.png", "/component/x/style.css", "/", "/static/js/main.js"):
        got, sent = _seen(path)
        assert got is sent  # unchanged, the same object
    got, sent = _seen("/component/x/plotly.min.js", kind="websocket")
    assert got is sent
