"""``labeler reproduce [--quick] [--out DIR] [--seeds K] [--no-png]``: the ARLS thesis'
experiments (:mod:`labeler.experiments.reproduce`), written to ``DIR/reproduction.md``."""

from __future__ import annotations

import sys

from labeler.cli.common import Command, output_folder, positive_int

__all__ = ["COMMAND"]


def add_parser(sub):
    rep = sub.add_parser(
        "reproduce",
        help="re-run the thesis experiments and write docs/reproduction.md",
        description="Re-run the experiments of the ARLS thesis (seed 002 ch. 4) and write "
        "reproduction.md and plots (reproduction/) into the output folder.",
    )
    rep.add_argument("--quick", action="store_true", help="small pools, budgets and seed counts (a few minutes)")
    rep.add_argument("--out", default="docs", metavar="DIR", help="output folder (default docs/)")
    rep.add_argument(
        "--seeds", type=positive_int, default=None, metavar="K",
        help="random repetitions where the thesis averaged several trials (default 10, quick 2)",
    )
    rep.add_argument("--no-png", action="store_true", help="skip PNG snapshots (they need Chromium)")
    return rep


def run(args) -> int:
    from labeler.experiments.reproduce import run_reproduction

    out = output_folder(args.out)
    run_reproduction(out, quick=args.quick, seeds=args.seeds, png=not args.no_png,
                     log=lambda text: print(text, file=sys.stderr, flush=True),
                     command="labeler " + " ".join(_argv_for_display(args)))
    return 0


def _argv_for_display(args) -> list[str]:
    parts = ["reproduce"]
    if args.quick:
        parts.append("--quick")
    parts += ["--out", args.out]
    if args.seeds is not None:
        parts += ["--seeds", str(args.seeds)]
    if args.no_png:
        parts.append("--no-png")
    return parts


COMMAND = Command("reproduce", add_parser, run)
