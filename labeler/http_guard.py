"""The server's gate: a Host/Origin check (on by default) and the access token on every route.

An ASGI middleware wrapped around Streamlit's web application (:func:`install`, called by
:func:`labeler.serve.run_app` before Streamlit starts its server). Every HTTP request and
WebSocket handshake passes it first:

* **Host and Origin.** The ``Host`` header must name the server by a name it is bound to:
  ``localhost``, ``127.0.0.1``, ``[::1]``, the ``--host`` value, or a name given with
  ``--allow-host``; an IP address is accepted too when the server listens on every interface
  (``0.0.0.0`` / ``::``). A browser page's ``Origin`` (sent with every WebSocket handshake and
  POST), when present, must name one of the same hosts. Anything else gets ``403``. This is
  the defence against DNS rebinding: a page of ``evil.example`` whose name is made to resolve
  to 127.0.0.1 reaches the port, but its requests say ``Host: evil.example``.
* **Token** (``--token``). Every route answers ``403`` unless the request carries the token:
  as ``?token=...`` in the URL, or the cookie this gate sets when it sees a right token
  (HttpOnly, SameSite=Strict: a derived value, not the token itself). That covers the page,
  Streamlit's static files, its WebSocket, health check and uploads, and the ``/media/``
  URLs (point images, the exported labels file). A page navigation without the token gets a
  small form asking for it instead of the app.

Not covered: the traffic is plain HTTP (token, cookie and labels in clear), there are no
per-user accounts, and a client that can reach the port and knows the token can do
everything the app can.
"""

from __future__ import annotations

import hashlib
import hmac
import html
import ipaddress
from collections.abc import Iterable
from http.cookies import SimpleCookie
from urllib.parse import parse_qs, urlsplit

__all__ = ["COOKIE", "cookie_value", "allowed_hosts", "host_allowed", "TokenAndHostGuard", "install"]

#: Name of the cookie that carries the (derived) token once a tab gave it.
COOKIE = "labeler_access"
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_WILDCARDS = ("0.0.0.0", "::", "")


def _host_name(value: str) -> str:
    """The host part of a ``Host`` header or URL netloc: no port, no brackets, lower case."""
    value = value.strip().lower()
    if value.startswith("["):  # [::1]:8501
        return value[1:value.find("]")] if "]" in value else value[1:]
    if value.count(":") == 1:  # name:port (a bare IPv6 address has several colons)
        value = value.split(":", 1)[0]
    return value.rstrip(".")


def allowed_hosts(bind_host: str, extra: Iterable[str] = ()) -> frozenset[str]:
    """The host names requests may use: loopback names, ``bind_host`` and ``extra``."""
    names = set(_LOOPBACK_NAMES)
    for value in (bind_host, *extra):
        name = _host_name(str(value))
        if name and name not in _WILDCARDS:
            names.add(name)
    return frozenset(names)


def host_allowed(value: str | None, names: frozenset[str], any_ip: bool) -> bool:
    """Whether a ``Host`` header (or an Origin's netloc) names this server."""
    if not value:
        return False
    name = _host_name(value)
    if name in names:
        return True
    if any_ip:
        try:
            ipaddress.ip_address(name)
            return True
        except ValueError:
            return False
    return False


def cookie_value(token: str) -> str:
    """The cookie's value for ``token`` (an HMAC of it: the cookie does not carry the token)."""
    return hmac.new(token.encode(), b"labeler access cookie", hashlib.sha256).hexdigest()


_FORM = """<!doctype html><html><head><meta charset="utf-8"><title>ARLS labeler</title></head>
<body style="font-family:sans-serif;margin:3em">
<h3>ARLS labeler</h3>
<form method="get" action="/"><label>Access token <input type="password" name="token" autofocus></label>
<button type="submit">Open</button></form>
<p>{message}</p></body></html>"""


class TokenAndHostGuard:
    """ASGI middleware: Host/Origin check, then the token (module docstring).

    Parameters
    ----------
    app : ASGI application
        Streamlit's application.
    bind_host : str
        The address the server is bound to (``--host``).
    extra_hosts : iterable of str
        More host names to accept (``--allow-host``).
    token : str or None
        The access token; None: no token needed.
    """

    def __init__(self, app, bind_host: str, extra_hosts: Iterable[str] = (), token: str | None = None):
        self.app = app
        self.names = allowed_hosts(bind_host, extra_hosts)
        self.any_ip = _host_name(bind_host) in _WILDCARDS
        self.token = token or None
        self._cookie = cookie_value(token) if token else None

    def __getattr__(self, name):  # the wrapped application's attributes (e.g. state, router)
        return getattr(self.app, name)

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if not host_allowed(headers.get("host"), self.names, self.any_ip):
            return await self._refuse(scope, receive, send, "this server does not answer to the host name "
                                      f"{headers.get('host')!r} (start it with --allow-host NAME to add one)")
        origin = headers.get("origin")
        if origin and origin != "null" and not host_allowed(urlsplit(origin).netloc, self.names, self.any_ip):
            return await self._refuse(scope, receive, send, f"requests from the page {origin!r} are refused")
        if self.token is None:
            return await self.app(scope, receive, send)
        given = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token", [None])[0]
        if given is not None and hmac.compare_digest(given.encode(), self.token.encode()):
            return await self.app(scope, receive, self._with_cookie(send) if scope["type"] == "http" else send)
        cookie = SimpleCookie()
        try:
            cookie.load(headers.get("cookie", ""))
        except Exception:  # noqa: BLE001 - a malformed cookie header is no token
            cookie = SimpleCookie()
        if COOKIE in cookie and hmac.compare_digest(cookie[COOKIE].value.encode(), self._cookie.encode()):
            return await self.app(scope, receive, send)
        if scope["type"] == "http" and scope.get("method") == "GET" and scope.get("path", "/") in ("/", ""):
            message = "That token is not right." if given is not None else ""
            return await self._respond(send, 401, _FORM.format(message=html.escape(message)), "text/html")
        return await self._refuse(scope, receive, send, "this server needs its access token")

    def _with_cookie(self, send):
        async def wrapped(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"set-cookie", f"{COOKIE}={self._cookie}; Path=/; HttpOnly; "
                                               "SameSite=Strict".encode("latin-1")))
                message = {**message, "headers": headers}
            await send(message)
        return wrapped

    async def _refuse(self, scope, receive, send, reason: str):
        if scope["type"] == "websocket":
            # Before accepting, a close is answered with HTTP 403 by the ASGI server.
            await receive()  # websocket.connect
            return await send({"type": "websocket.close", "code": 1008, "reason": reason[:120]})
        return await self._respond(send, 403, f"403 Forbidden: {reason}\n", "text/plain")

    @staticmethod
    async def _respond(send, status: int, body: str, content_type: str):
        data = body.encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", f"{content_type}; charset=utf-8".encode()),
                                (b"content-length", str(len(data)).encode()),
                                (b"cache-control", b"no-store")]})
        await send({"type": "http.response.body", "body": data})


def install(bind_host: str, extra_hosts: Iterable[str] = (), token: str | None = None) -> None:
    """Wrap the application Streamlit's server builds in a :class:`TokenAndHostGuard`.

    Call before Streamlit starts its server (in the process that runs it).
    """
    from streamlit.web.server.starlette import starlette_server

    build = getattr(starlette_server.create_starlette_app, "__wrapped_build__", starlette_server.create_starlette_app)
    extra = tuple(extra_hosts)

    def guarded(runtime):
        return TokenAndHostGuard(build(runtime), bind_host, extra, token)

    guarded.__wrapped_build__ = build
    starlette_server.create_starlette_app = guarded
