"""Start the Streamlit server of the labelling app (used by ``labeler`` / ``labeler app PATH``).

The app script (``labeler/app.py``) runs in this same process under Streamlit's server; what
to open is passed to it through environment variables, read by
:func:`labeler.ui.config.AppConfig.from_env`:

``LABELER_DATA``      data set to open at start (built-in name or file/folder path)
``LABELER_STORE``     SQLite store file (default ``~/.labeler/labeler.sqlite``)
``LABELER_SESSION``   id of a saved session to resume at start
``LABELER_DATA_DIR``  folder the in-app path picker may read from (default: the current folder)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["APP_SCRIPT", "streamlit_argv", "run_app"]

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
        If ``port`` is not an integer in 1..65535 or ``host`` is empty.
    """
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(f"port must be an integer in 1..65535; got {port!r}.")
    if not isinstance(host, str) or not host.strip():
        raise ValueError(f"host must be a non-empty address such as '127.0.0.1'; got {host!r}.")
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


def run_app(data: str | os.PathLike | None = None, store: str | os.PathLike | None = None,
            port: int = 8501, host: str = "127.0.0.1", session: str | None = None,
            extra_args: Sequence[str] = ()) -> None:
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

    Raises
    ------
    ValueError
        Bad port or host, or ``data`` names a path that does not exist.
    """
    argv = streamlit_argv(port=port, host=host, extra_args=extra_args)
    if data is not None:
        text = os.fspath(data)
        looks_like_path = os.sep in text or "." in Path(text).name or Path(text).exists()
        if looks_like_path:
            path = Path(text).expanduser()
            if not path.exists():
                raise ValueError(f"data path {text!r} does not exist; give an existing CSV, "
                                 "Parquet, NPZ file or image folder, or a built-in name.")
            text = str(path.resolve())
        os.environ["LABELER_DATA"] = text
    if store is not None:
        os.environ["LABELER_STORE"] = str(Path(os.fspath(store)).expanduser().resolve())
    if session is not None:
        os.environ["LABELER_SESSION"] = str(session)
    os.environ.setdefault("LABELER_DATA_DIR", os.getcwd())

    from streamlit.web import cli as stcli  # imported late: slow, and only needed here

    stcli.main.main(args=argv, prog_name="streamlit", standalone_mode=True)
