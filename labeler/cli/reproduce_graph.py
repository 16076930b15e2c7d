"""``labeler reproduce-graph``: the graph seeds' experiments (issue 10 §3).

:func:`add_parser` adds the sub-command to ``labeler``'s parser and :func:`run` runs
:func:`labeler.experiments.graph_repro.run_graph_reproduction`. User errors raise
:class:`~labeler.cli.common.CLIError` (one line, exit status 2).
"""

from __future__ import annotations

import argparse
import sys

from labeler.cli.common import Command, output_folder, positive_int

__all__ = ["COMMAND"]


def add_parser(sub):
    """``reproduce-graph [--quick] [--only A,B] [--repeats K] [--out DIR]``."""
    repg = sub.add_parser(
        "reproduce-graph",
        help="re-run the graph seeds' experiments and write docs/reproduction_graph.md",
        description="Re-run the experiments of the graph seeds (000, 001, 003, 004, Zhu et al.) on MNIST and "
        "write reproduction_graph.md and one file per section (reproduction_graph/<name>.md) into the "
        "output folder.",
    )
    repg.add_argument("--quick", action="store_true", help="small pools and few repeats (about two minutes)")
    repg.add_argument("--only", type=_section_list, default=None, metavar="A,B",
                      help="comma-separated sections (default all: seed004, seed001, seed000, zhu, seed003)")
    repg.add_argument("--repeats", type=positive_int, default=None, metavar="K",
                      help="labelled sets / draws per setting (default per section, e.g. 30 for seed 004)")
    repg.add_argument("--out", default="docs", metavar="DIR", help="output folder (default docs/)")
    return repg


def _section_list(text: str) -> list[str]:
    from labeler.experiments.graph_repro import SECTIONS

    names = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [t for t in names if t not in SECTIONS]
    if not names or unknown:
        raise argparse.ArgumentTypeError(
            f"unknown section(s) {', '.join(unknown) or repr(text)}; choose from {', '.join(SECTIONS)}, "
            "comma-separated (e.g. --only seed004,zhu)."
        )
    return names


def run(args) -> int:
    """Run the chosen sections; progress on stderr; return 0."""
    from labeler.experiments.graph_repro import run_graph_reproduction

    out = output_folder(args.out)
    parts = ["reproduce-graph"] + (["--quick"] if args.quick else []) \
        + (["--only", ",".join(args.only)] if args.only else []) \
        + (["--repeats", str(args.repeats)] if args.repeats is not None else []) + ["--out", args.out]
    run_graph_reproduction(out, quick=args.quick, only=args.only, repeats=args.repeats,
                           log=lambda text: print(text, file=sys.stderr, flush=True),
                           command="labeler " + " ".join(parts))
    return 0


COMMAND = Command("reproduce-graph", add_parser, run)
