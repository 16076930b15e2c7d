"""The ``labeler`` entry point: the parser of every registered sub-command, and :func:`main`,
which runs one and turns the project's user errors into one line and exit status 2."""

from __future__ import annotations

import argparse
import sys
import warnings

from labeler.cli import app, backup, cache, reproduce, reproduce_graph, simulate, suspects
from labeler.cli.common import EXIT_INTERRUPTED, EXIT_USAGE, print_warning, user_errors
from labeler.runtime import configure_threads

__all__ = ["COMMANDS", "build_parser", "main"]

#: The sub-commands, in the order ``labeler --help`` lists them. A new sub-command is a module
#: with a ``COMMAND`` (:class:`labeler.cli.common.Command`) and one entry here.
COMMANDS = (
    app.COMMAND,
    simulate.COMMAND,
    suspects.COMMAND,
    reproduce.COMMAND,
    reproduce_graph.COMMAND,
    backup.COMMAND,
    cache.COMMAND,
)


def build_parser() -> argparse.ArgumentParser:
    """The ``labeler`` argument parser, one sub-parser per entry of :data:`COMMANDS`."""
    parser = argparse.ArgumentParser(
        prog="labeler",
        description="Interactive active labelling with exact incremental Active RLS. "
        "Without a sub-command: the app on the two-moons demo ('labeler app' options work "
        "there too: labeler --port 8502 is labeler app --port 8502).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="{" + ",".join(c.name for c in COMMANDS) + "}")
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("arls-labeler")
    except PackageNotFoundError:  # not installed (running from a checkout)
        return "0.1.0"


def _app_options_alone(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``labeler --port 8502`` (an option of ``labeler app`` first, no sub-command) is
    ``labeler app --port 8502``: ``labeler`` alone is the app, so its options are too. Any
    other argument list is returned unchanged."""
    if not argv or not argv[0].startswith("-"):
        return argv
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    app_parser = subs.choices[app.COMMAND.name]
    option = argv[0].split("=", 1)[0]
    if option in parser._option_string_actions or option not in app_parser._option_string_actions:
        return argv  # labeler's own (--help, --version) or unknown: the top parser says so
    return [app.COMMAND.name, *argv]


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 2 usage error, 130 interrupted).

    User errors (:func:`labeler.cli.common.user_errors`: the project's own error types, each
    naming the fix) and ``OSError`` print one message and return 2; any other exception, an
    internal ``ValueError`` included, is a bug and propagates with its traceback.
    """
    configure_threads()  # before anything imports numpy or numba: see labeler.runtime
    return _main(list(sys.argv[1:] if argv is None else argv))


def _main(argv: list[str]) -> int:
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    parser = build_parser()
    argv = _app_options_alone(parser, argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage and the message
        return int(exc.code or 0)
    command = next((c for c in COMMANDS if c.name == args.command), None)
    if extra and command is not None and not command.takes_extra:
        parser.print_usage(sys.stderr)
        print(f"labeler: error: arguments after '--' ({' '.join(extra)}) are only for 'labeler app'.",
              file=sys.stderr)
        return EXIT_USAGE
    args.extra = extra
    try:
        if command is None:
            return app.run_default(extra)
        if not command.warnings_as_lines:
            return command.run(args)
        with warnings.catch_warnings():
            warnings.showwarning = print_warning  # restored when the block ends
            return command.run(args)
    except KeyboardInterrupt:
        print("labeler: interrupted; no output file was written or completed.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except user_errors() as exc:
        print(f"labeler: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        print(f"labeler: error: {exc.strerror or exc}{where}. Check the path and its permissions.",
              file=sys.stderr)
        return EXIT_USAGE
