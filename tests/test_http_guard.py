"""The server's gate against a real server on 127.0.0.1: Host/Origin check and the token.

Raw HTTP requests and WebSocket handshakes (http.client, a socket), loopback only, each with
a timeout. DNS rebinding is a page of ``evil.example`` whose name resolves to 127.0.0.1: the
port is reached, but the requests say ``Host: evil.example`` and ``Origin: http://evil.example``.
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from labeler.http_guard import COOKIE, allowed_hosts, cookie_value, host_allowed

REPO = Path(__file__).resolve().parents[1]
TOKEN = "s3cret-token-for-guard-tests"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _request(port, path, host=None, headers=None, method="GET"):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True)
        conn.putheader("Host", host or f"127.0.0.1:{port}")
        for k, v in (headers or {}).items():
            conn.putheader(k, v)
        conn.endheaders()
        r = conn.getresponse()
        return r.status, dict(r.getheaders()), r.read()
    finally:
        conn.close()


def _websocket_status(port, host, origin=None, path="/_stcore/stream", extra=None) -> int:
    """The HTTP status of a WebSocket handshake (101 = accepted)."""
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [f"GET {path} HTTP/1.1", f"Host: {host}", "Upgrade: websocket", "Connection: Upgrade",
             f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
    if origin:
        lines.append(f"Origin: {origin}")
    lines += list(extra or [])
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        data = b""
        while b"\r\n" not in data:
            chunk = s.recv(1024)
            if not chunk:
                break
            data += chunk
    return int(data.split(b" ", 2)[1])


@contextlib.contextmanager
def _server(tmp_path, *args):
    port = _free_port()
    env = dict(os.environ, LABELER_STORE=str(tmp_path / "s.sqlite"), STREAMLIT_SERVER_HEADLESS="true",
               PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    env.pop("LABELER_TOKEN", None)
    log = tempfile.TemporaryFile()
    cmd = [sys.executable, "-c", "import sys; from labeler.cli import main; sys.exit(main())",
           "app", "--port", str(port), "--host", "127.0.0.1", *args]
    proc = subprocess.Popen(cmd, cwd=str(REPO), env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 90
        while True:
            if proc.poll() is not None:
                log.seek(0)
                raise RuntimeError(log.read().decode(errors="replace")[-3000:])
            with contextlib.suppress(OSError):
                status, _, _ = _request(port, "/_stcore/health" + (f"?token={TOKEN}" if "--token" in args else ""))
                if status == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.3)
        yield port
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(timeout=5)
        log.close()


@pytest.fixture(scope="module")
def open_server(tmp_path_factory):
    with _server(tmp_path_factory.mktemp("open")) as port:
        yield port


@pytest.fixture(scope="module")
def token_server(tmp_path_factory):
    with _server(tmp_path_factory.mktemp("token"), "--token", TOKEN, "--allow-host", "labels.lan") as port:
        yield port


def test_dns_rebinding_websocket_is_refused(open_server):
    port = open_server
    assert _websocket_status(port, "evil.example", "http://evil.example") == 403
    assert _websocket_status(port, f"evil.example:{port}", f"http://evil.example:{port}") == 403
    # the server's own name with a foreign page's Origin: refused too
    assert _websocket_status(port, f"127.0.0.1:{port}", "http://evil.example") == 403


def test_names_the_server_is_bound_to_are_accepted(open_server):
    port = open_server
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "localhost"):
        status, _, _ = _request(port, "/_stcore/health", host=host)
        assert status == 200, host
    assert _websocket_status(port, f"localhost:{port}", f"http://localhost:{port}") == 101


@pytest.mark.parametrize("path", ["/", "/_stcore/health", "/media/0123456789abcdef.png"])
def test_a_foreign_host_gets_403_on_every_route(open_server, path):
    status, _, body = _request(open_server, path, host="evil.example")
    assert status == 403 and b"evil.example" in body


def test_a_foreign_origin_gets_403(open_server):
    status, _, _ = _request(open_server, "/_stcore/health", headers={"Origin": "http://evil.example"})
    assert status == 403


@pytest.mark.parametrize("path", ["/_stcore/health", "/media/0123456789abcdef.png", "/media/labels.csv",
                                  "/static/js/index.js", "/_stcore/host-config"])
def test_token_mode_guards_every_route_media_included(token_server, path):
    status, _, _ = _request(token_server, path)
    assert status == 403, path
    # with the token the request reaches Streamlit (a media id it does not know: 404)
    status, headers, _ = _request(token_server, path + ("&" if "?" in path else "?") + f"token={TOKEN}")
    assert status != 403, path
    status, _, _ = _request(token_server, path, headers={"Cookie": f"{COOKIE}={cookie_value(TOKEN)}"})
    assert status != 403, path
    status, _, _ = _request(token_server, path, headers={"Cookie": f"{COOKIE}=wrong"})
    assert status == 403, path


def test_token_mode_page_asks_for_the_token_and_sets_a_cookie_when_given(token_server):
    status, _, body = _request(token_server, "/")
    assert status == 401 and b"Access token" in body and b"<script" not in body
    status, headers, _ = _request(token_server, f"/?token={TOKEN}")
    assert status == 200
    cookie = headers.get("set-cookie", "")
    assert cookie.startswith(f"{COOKIE}={cookie_value(TOKEN)}") and "HttpOnly" in cookie and TOKEN not in cookie
    status, _, body = _request(token_server, "/?token=wrong-token")
    assert status == 401 and b"not right" in body


def test_token_mode_websocket_needs_the_token(token_server):
    port = token_server
    assert _websocket_status(port, f"127.0.0.1:{port}", f"http://127.0.0.1:{port}") == 403
    assert _websocket_status(port, f"127.0.0.1:{port}", f"http://127.0.0.1:{port}",
                             extra=[f"Cookie: {COOKIE}={cookie_value(TOKEN)}"]) == 101


def test_allow_host_adds_a_name(token_server):
    status, _, _ = _request(token_server, f"/_stcore/health?token={TOKEN}", host="labels.lan:8501")
    assert status == 200
    status, _, _ = _request(token_server, f"/_stcore/health?token={TOKEN}", host="other.lan")
    assert status == 403


def test_host_names_unit():
    names = allowed_hosts("0.0.0.0", ["Labels.LAN"])
    assert names == {"localhost", "127.0.0.1", "::1", "labels.lan"}
    assert host_allowed("[::1]:8501", names, any_ip=False)
    assert host_allowed("192.168.1.5:8501", names, any_ip=True)
    assert not host_allowed("192.168.1.5:8501", names, any_ip=False)
    assert not host_allowed("evil.example", names, any_ip=True)
    assert not host_allowed(None, names, any_ip=True)
