"""``labeler app [PATH|NAME] ...`` (and ``labeler`` alone): the labelling app in the browser.

The data file is loaded before the server starts (a file that cannot be loaded stops here with
the reason, exit 2, not in the browser); a table's column roles are printed and handed on
resolved. The model, posterior and executor options are checked first too.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from labeler.cli.columns import add_role_arguments, open_data, role_arguments_given
from labeler.cli.common import CLIError, Command, add_standardize_argument, builtin_names, port, positive_int
from labeler.cli.graph import add_app_model_arguments, app_model_to_env
from labeler.cli.posterior import add_posterior_arguments, app_executor, model_options
from labeler.runtime import limit_malloc_arenas

__all__ = ["COMMAND", "run_default"]


def add_parser(sub):
    app = sub.add_parser(
        "app",
        help="open the labelling app in the browser",
        description="Start the labelling app (Streamlit). Arguments after '--' go to streamlit run.",
    )
    app.add_argument(
        "data", nargs="?", default=None, metavar="PATH|NAME",
        help=f"CSV / Parquet / NPZ file, image folder, or built-in name ({builtin_names()}); "
        "default: two moons",
    )
    app.add_argument("--store", metavar="FILE", help="SQLite store (default $LABELER_STORE or ~/.labeler/labeler.sqlite)")
    app.add_argument("--port", type=port, default=8501, help="TCP port (default 8501)")
    app.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1: this machine only)")
    app.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                     help="another host name the server answers to (repeatable; localhost, 127.0.0.1, [::1] and "
                     "--host always are; requests naming any other host are refused)")
    app.add_argument("--session", metavar="ID", help="resume a saved session")
    app.add_argument(
        "--token", metavar="SECRET|auto",
        help="access token every browser tab must give (?token=... in the link, or typed in); "
        "'auto' makes a random one and prints the link. Use it with --host beyond 127.0.0.1 "
        "(default $LABELER_TOKEN, else none)",
    )
    add_role_arguments(app)
    add_posterior_arguments(app, positive_int)
    add_app_model_arguments(app)  # --model, --alpha, --class-mass (labeler/cli/graph.py)
    add_standardize_argument(app)
    return app


def run_default(extra: list[str]) -> int:
    """``labeler`` without a sub-command: the app on the two-moons demo."""
    limit_malloc_arenas()  # before the data loads and Streamlit's threads: labeler.runtime
    from labeler.serve import run_app  # lazy: Streamlit is slow to import

    run_app(extra_args=tuple(extra))
    return 0


def run(args) -> int:
    limit_malloc_arenas()  # before the data loads and Streamlit's threads: labeler.runtime
    from labeler.serve import run_app  # lazy: Streamlit is slow to import

    kwargs = dict(data=args.data, store=args.store, port=args.port, host=args.host,
                  allow_hosts=tuple(args.allow_host), session=args.session, extra_args=tuple(args.extra),
                  token=args.token)
    options = _app_data_options(args)
    if options:
        kwargs["data_options"] = options
    app_model_to_env({**model_options(args), **({"standardize": args.standardize} if args.standardize else {})})
    # (checked first: a graph model with --posterior nystrom stops here)
    app_executor(args.executor)  # reached once before the server starts: a wrong address stops here
    run_app(**kwargs)
    return 0


def _app_data_options(args) -> dict:
    """Load the app's data file before the server starts; return its resolved options.

    A file that cannot be loaded stops here with the reason (exit 2), not in the browser. A
    table's column roles are printed and passed on resolved, so the app's first session
    gets exactly them. Built-in names are not loaded here (they always load).
    """
    import json
    import os

    from labeler.data import BUILTIN_DATASETS
    from labeler.runtime import warm_numba_in_background

    warm_numba_in_background()  # numba's target loaded while the file is read (the first query's cost)

    flags = role_arguments_given(args)
    if args.data is None:
        if flags:
            raise CLIError(f"{', '.join(flags)} need a data file: labeler app PATH {flags[0]} ...")
        return {}
    text = os.environ.get("LABELER_DATA_OPTIONS", "").strip()
    try:
        options = json.loads(text) if text else {}
    except json.JSONDecodeError as exc:
        raise CLIError(f"LABELER_DATA_OPTIONS is not valid JSON ({exc}); give an object such as "
                       "'{\"n\": 2000}', or unset it.") from None
    if not isinstance(options, dict):
        raise CLIError("LABELER_DATA_OPTIONS must be a JSON object such as '{\"n\": 2000}'.")
    path = Path(args.data).expanduser()
    if args.data in BUILTIN_DATASETS and not path.exists() and not flags:
        return {}
    if not path.exists() and args.data not in BUILTIN_DATASETS:
        raise CLIError(
            f"{args.data!r}: no such file or folder. Give an existing CSV, Parquet or NPZ file or "
            f"image folder, or a built-in data set: {builtin_names()}."
        )
    if path.is_file():
        dataset, options = _load_file(path, args, options)
    else:
        dataset, options = open_data(str(path) if path.exists() else args.data, args, seed=0,
                                     options=options)
    classes = f"{len(dataset.classes)} classes" if dataset.y is not None else "no labels"
    file_labels = getattr(dataset, "file_labels", None)
    if file_labels is not None:  # a partly filled label column
        classes = f"{len(dataset.classes)} classes; {file_labels.summary()}"
    print(f"labeler: {dataset.name}: {len(dataset.X):,} points, {dataset.X.shape[1]:,} features, "
          f"{classes}; starting the app", file=sys.stderr, flush=True)
    from labeler.data.load import hand_over

    hand_over(dataset)  # the app's first session takes it: the file is not read twice
    return options


def _load_file(path: Path, args, options: dict):
    """:func:`open_data` of a file, or its snapshot in the session cache when the file is
    unchanged (:mod:`labeler.session.source_snapshot`: identified by size, modification time
    and sampled blocks; mapped, not read). After a read the snapshot is made and written in a
    background thread at the lowest priority (not a daemon: it finishes before the process
    ends). Returns ``(dataset, options)`` as :func:`open_data` does."""
    import io
    import os
    import threading

    from labeler.cli.columns import given_roles
    from labeler.session import source_snapshot as snap
    from labeler.session.cache import SessionCache
    from labeler.session.data import fingerprint
    from labeler.store.faults import default_store_path

    cache = SessionCache.for_store(args.store or default_store_path())
    if not cache.enabled:
        return open_data(str(path), args, seed=0, options=options)
    try:
        identity = snap.file_identity(path)
    except OSError:  # unreadable: the load below says why
        return open_data(str(path), args, seed=0, options=options)
    key = snap.snapshot_key(identity, options=options, roles=given_roles(args),
                            missing=getattr(args, "missing", None))
    dataset, printed, kept_options = snap.load_snapshot(cache, key)
    for message in cache.messages:
        print(f"labeler: {message}", file=sys.stderr, flush=True)
    if dataset is not None:
        if printed:
            print(printed, file=sys.stderr, end="", flush=True)
        from labeler.data.load import load_key

        dataset._load_key = load_key(str(path), **kept_options)  # what the session's load asks for
        return dataset, kept_options
    seen = _Tee(sys.stderr, io.StringIO())
    dataset, options = open_data(str(path), args, seed=0, options=options, stream=seen)
    X = np.ascontiguousarray(dataset.X, dtype=np.float64)
    digest = fingerprint(X)  # the session's check of its data: computed once, here
    dataset._fingerprint = (digest, X.shape)
    printed = seen.copy.getvalue()

    def write():
        try:  # Linux: this thread alone at the lowest priority (the first query goes first)
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except (AttributeError, OSError):
            pass
        kept = snap.snapshot_arrays(dataset, printed, digest, options)  # (the labels' codes: ~1 s at 10^6 rows)
        if kept is not None:
            snap.save_snapshot(cache, key, *kept)

    threading.Thread(target=write, name="labeler-snapshot-write", daemon=False).start()
    return dataset, options


class _Tee:
    """A text stream writing to ``main`` and keeping a copy (what the load printed)."""

    def __init__(self, main, copy):
        self.main, self.copy = main, copy

    def write(self, text):
        self.copy.write(text)
        return self.main.write(text)

    def flush(self):
        self.main.flush()


COMMAND = Command("app", add_parser, run, takes_extra=True, warnings_as_lines=False)
