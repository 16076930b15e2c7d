"""Command line: ``labeler`` (the app), ``labeler app``, ``simulate``, ``reproduce``,
``reproduce-graph``, ``backup``, ``cache``.

::

    labeler                                   # the app on the two-moons demo
    labeler app [PATH|NAME] [--store F] [--port P] [--host H] [--session ID] [--token T|auto]
                [ROLES] [-- streamlit args]
    labeler simulate DATA [--strategy auto|arls|margin|random|vopt|sigmaopt] [--budget N] [--seed S]
                     [--kernel rbf|linear|poly] [--width W] [--lam L|auto]
                     [--weighting none|balanced] [--validation PATH] [ROLES]
                     [--out curve.csv] [--report curve.html] [--initial N]
                     [--model rls|harmonic|lgc|poisson] [--transform T] [--graph-k K] [--graph-rank R] [--alpha A]
    labeler reproduce [--quick] [--out docs/] [--seeds K] [--no-png]
    labeler reproduce-graph [--quick] [--only seed004,seed001,...] [--repeats K] [--out docs/]
    labeler backup OUT [--store F] [--session ID]   # one self-contained copy of the store
    labeler cache [--store F] [--clear]             # the session cache beside the store: size, clear

ROLES (CSV / Parquet): ``--id-col NAME --label-col NAME --text-col NAME --image-col NAME
--feature-cols A,B --features-from columns|text|image --layout-cols X,Y`` (``''`` for none);
roles not given are guessed and printed at start (:mod:`labeler.cli.columns`).

Every user error (missing file, bad option value, a data file that cannot be loaded -- for
``labeler app`` before the server starts) prints one message naming the problem and the fix on
stderr and exits with status 2, without a traceback; warnings (e.g. ``--lam auto`` falling back
to the default) print one ``labeler: warning:`` line each. User errors are the project's own
error types (:func:`labeler.cli.common.user_errors`); any other exception, an internal
``ValueError`` included, is a bug and keeps its traceback. Output files are written atomically,
so a failed or interrupted run leaves no partial file.

The package, one module per job:

- :mod:`labeler.cli.entry`: :func:`main` (the ``labeler`` console script and
  ``python -m labeler``), the parser, the list of sub-commands ``COMMANDS``, error handling;
- :mod:`labeler.cli.common`: what the sub-commands share (:class:`~labeler.cli.common.CLIError`,
  :class:`~labeler.cli.common.Command`, option types, output paths, progress lines);
- one module per sub-command: :mod:`~labeler.cli.app`, :mod:`~labeler.cli.simulate`,
  :mod:`~labeler.cli.reproduce`, :mod:`~labeler.cli.reproduce_graph`, :mod:`~labeler.cli.backup`;
- option families shared by sub-commands: :mod:`~labeler.cli.columns` (column roles),
  :mod:`~labeler.cli.posterior` (posterior and executor), :mod:`~labeler.cli.graph` (graph
  models, and ``simulate``'s graph run).

Adding a sub-command ``labeler NAME``: write ``labeler/cli/NAME.py`` with ``add_parser(sub)``
(``sub.add_parser("NAME", help=..., description=...)`` plus its options; reuse the option
types of :mod:`labeler.cli.common` and the option families above), ``run(args) -> int`` (raise
:class:`~labeler.cli.common.CLIError` or another of the project's errors for user errors, with
the fix in the message), and ``COMMAND = Command("NAME", add_parser, run)``; then add
``NAME.COMMAND`` to ``COMMANDS`` in :mod:`labeler.cli.entry` (with the import). An option for
an existing sub-command goes in that sub-command's module, or in the option family it belongs
to. Sub-command modules import :mod:`labeler.cli.common` and the option modules, never
:mod:`labeler.cli` or :mod:`labeler.cli.entry` (no import cycle: ``tests/test_import_cycles.py``).
"""

from labeler.cli.common import CLIError
from labeler.cli.entry import build_parser, main

__all__ = ["main", "build_parser", "CLIError"]
