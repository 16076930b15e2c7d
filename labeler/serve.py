"""Start the Streamlit server of the labelling app (used by ``labeler`` / ``labeler app PATH``).

The app script (``labeler/app.py``) runs in this same process under Streamlit's server; what
to open is passed to it through environment variables, read by
:func:`labeler.ui.config.AppConfig.from_env`:

``LABELER_DATA``      data set to open at start (built-in name or file/folder path)
``LABELER_DATA_OPTIONS``  its ``load_dataset`` options as a JSON object (e.g. a table's roles)
``LABELER_STORE``     SQLite store file (default ``~/.labeler/labeler.sqlite``)
``LABELER_SESSION``   id of a saved session to resume at start
``LABELER_DATA_DIR``  folder the in-app path picker may read from (default: the current folder)
``LABELER_TOKEN``     access token the page asks for (``--token``); empty: no token

Exposure beyond this machine
----------------------------
By default the server listens on 127.0.0.1 only. With another address (``--host 0.0.0.0``)
anyone who can reach the port can list, open, label, delete and export every session of the
store, so :func:`run_app` prints a loud warning and offers ``--token`` (a shared secret that
every route requires, media and exports included: :mod:`labeler.http_guard`; the page asks
for it, or takes it as ``?token=...`` in the link). Whatever the address, requests whose
``Host`` or ``Origin`` names another server are refused with 403 (DNS rebinding); more names
with ``--allow-host``. What is not protected: the traffic is plain HTTP (use an SSH tunnel or
a TLS reverse proxy across a network you do not trust).
"""

from __future__ import annotations

import ipaddress
import json
import os
import secrets
import sys
from collections.abc import Sequence
from pathlib import Path

from labeler.errors import SettingsError

__all__ = ["APP_SCRIPT", "streamlit_argv", "run_app", "is_local", "exposure_warning", "make_token"]

#: The Streamlit script of the app.
APP_SCRIPT = Path(__file__).resolve().parent / "app.py"


def streamlit_argv(port: int = 8501, host: str = "127.0.0.1",
                   extra_args: Sequence[str] = ()) -> list[str]:
    """Arguments of ``streamlit run`` for the app (without the program name).

    Parameters
    ----------
    port : int
        TCP port, 1..65535.
    host : str
        Address to bind. The default ``127.0.0.1`` keeps the app private to this machine;
        ``0.0.0.0`` exposes it to the network (only when the user asks for it).
    extra_args : sequence of str
        More ``streamlit run`` options, appended last so they win (e.g.
        ``["--server.headless", "true"]``).

    Raises
    ------
    ValueError
        If ``port`` is not an integer in 1..65535.
    labeler.errors.SettingsError
        If ``host`` is empty.
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(f"port must be an integer in 1..65535; got {port!r}.")
    if not isinstance(host, str) or not host.strip():
        raise SettingsError(f"host must be a non-empty address such as '127.0.0.1'; got {host!r}.")
    return [
        "run", str(APP_SCRIPT),
        "--server.address", host,
        "--server.port", str(port),
        "--browser.serverAddress", "localhost" if host in ("127.0.0.1", "localhost") else host,
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
        "--client.toolbarMode", "minimal",
        "--theme.base", "light",
        "--theme.primaryColor", "#0072B2",
        *map(str, extra_args),
    ]


def is_local(host: str) -> bool:
    """Whether ``host`` is this machine only (a loopback address or ``localhost``)."""
    name = str(host).strip().strip("[]").lower()
    if name in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def make_token() -> str:
    """A new random access token (128 bits, URL-safe)."""
    return secrets.token_urlsafe(16)


def exposure_warning(host: str, port: int, token: str | None) -> str | None:
    """The warning printed when the app listens beyond this machine (None for a local host)."""
    if is_local(host):
        return None
    shown = "THIS-MACHINE" if host in ("0.0.0.0", "::") else host
    lines = [
        "",
        "*" * 78,
        f"WARNING: the labeller listens on {host}:{port}, reachable from other machines.",
    ]
    if token:
        lines += [
            "A tab sees nothing until it gives the access token; open the app with",
            f"    http://{shown}:{port}/?token={token}",
            "The token and the labels travel in clear (plain HTTP): across a network you do not",
            "trust, use an SSH tunnel or a TLS reverse proxy instead.",
        ]
    else:
        lines += [
            "Anyone who can reach this port can list, open, label, DELETE and export every",
            "session of the store. Protect it with an access token:",
            f"    labeler app --host {host} --port {port} --token auto",
            "or keep the default --host 127.0.0.1 and reach it through an SSH tunnel.",
        ]
    lines += ["*" * 78, ""]
    return "\n".join(lines)


def run_app(data: str | os.PathLike | None = None, store: str | os.PathLike | None = None,
            port: int = 8501, host: str = "127.0.0.1", session: str | None = None,
            extra_args: Sequence[str] = (), token: str | None = None,
            data_options: dict | None = None, allow_hosts: Sequence[str] = ()) -> None:
    """Run the labelling app's Streamlit server in this process until it stops (Ctrl-C).

    Parameters
    ----------
    data : str or path-like, optional
        Data set to open: a built-in name (``"moons"``, ``"moons-imbalanced"``, ``"mnist"``,
        ...) or a CSV / Parquet / NPZ file or image folder. Default: two-moons. A path given
        here is trusted (typed by the user in the shell) even outside the data folder.
    store : str or path-like, optional
        SQLite store file; default ``$LABELER_STORE`` or ``~/.labeler/labeler.sqlite``.
    port : int
        TCP port (default 8501).
    host : str
        Bind address; default ``127.0.0.1`` (this machine only).
    session : str, optional
        Id of a saved session to resume.
    extra_args : sequence of str
        More ``streamlit run`` options.
    token : str, optional
        Access token every tab must give (``?token=...`` or typed in); ``"auto"`` makes a
        random one (printed). Default ``$LABELER_TOKEN`` if set, else none. A host beyond
        this machine prints a warning, louder without a token.
    data_options : dict, optional
        ``load_dataset`` options of ``data`` (JSON-serialisable), e.g. a table's column roles
        as ``labeler app PATH`` resolved and printed them; default ``$LABELER_DATA_OPTIONS``.
    allow_hosts : sequence of str
        More host names the server answers to (``--allow-host``), besides ``localhost``,
        ``127.0.0.1``, ``[::1]`` and ``host`` (:mod:`labeler.http_guard`).

    Raises
    ------
    ValueError
        A port that is not an integer in 1..65535.
    labeler.errors.SettingsError
        An empty host, a token shorter than 8 characters, or ``data`` names a path that does not
        exist.
    """
    argv = streamlit_argv(port=port, host=host, extra_args=extra_args)
    if data is not None:
        text = os.fspath(data)
        looks_like_path = os.sep in text or "." in Path(text).name or Path(text).exists()
        if looks_like_path:
            path = Path(text).expanduser()
            if not path.exists():
                raise SettingsError(f"data path {text!r} does not exist; give an existing CSV, "
                                 "Parquet, NPZ file or image folder, or a built-in name.")
            text = str(path.resolve())
        os.environ["LABELER_DATA"] = text
    if data_options is not None:
        os.environ["LABELER_DATA_OPTIONS"] = json.dumps(data_options)
    if store is not None:
        os.environ["LABELER_STORE"] = str(Path(os.fspath(store)).expanduser().resolve())
    if session is not None:
        os.environ["LABELER_SESSION"] = str(session)
    os.environ.setdefault("LABELER_DATA_DIR", os.getcwd())
    if token is None:
        token = os.environ.get("LABELER_TOKEN") or None
    if token == "auto":
        token = make_token()
    if token is not None:
        if not str(token).strip() or len(str(token)) < 8:
            raise SettingsError("--token must be 'auto' or a secret of at least 8 characters.")
        os.environ["LABELER_TOKEN"] = str(token)
    warning = exposure_warning(host, port, token)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    elif token:
        print(f"labeler: open the app with http://localhost:{port}/?token={token}", file=sys.stderr, flush=True)

    from labeler.ui import preopen

    # the first tab's session opens now, while Streamlit is imported and started (its Nystrom
    # factor's threads run beside those imports), not once a browser has loaded the page
    preopen.start()
    from streamlit.web import cli as stcli  # imported late: slow, and only needed here

    from labeler.http_guard import install

    install(host, allow_hosts, token)  # Host/Origin check, and the token on every route
    _serve_component_scripts_plain()

    stcli.main.main(args=argv, prog_name="streamlit", standalone_mode=True)


def plain_component_scripts(app):
    """``app`` (ASGI) serving the scripts of page components (``/component/.../*.js``: the
    map's plotly.js, 3.5 MB) uncompressed, as Streamlit serves its own ``/static/`` bundles
    (its gzip layer would compress them again on every page load: about 0.5 s of the server's
    CPU while the first session opens). Other requests are passed on unchanged.
    """

    async def plain(scope, receive, send):
        path = scope.get("path", "") if scope.get("type") == "http" else ""
        if "/component/" in path and path.endswith(".js"):
            scope = dict(scope, headers=[(k, v) for k, v in scope.get("headers", []) if k.lower() != b"accept-encoding"])
        await app(scope, receive, send)

    return plain


def _serve_component_scripts_plain() -> None:
    """Wrap the application Streamlit's server builds in :func:`plain_component_scripts`."""
    from streamlit.web.server.starlette import starlette_server

    build = starlette_server.create_starlette_app
    if getattr(build, "__plain_scripts__", False):
        return

    def build_plain(runtime):
        return plain_component_scripts(build(runtime))

    build_plain.__plain_scripts__ = True
    starlette_server.create_starlette_app = build_plain
