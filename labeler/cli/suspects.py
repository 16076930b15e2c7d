"""``labeler suspects FILE --out CSV``: rank the labels of a table by how likely each is wrong.

The table is read with the column roles of ``labeler app`` (:mod:`labeler.cli.columns`:
guessed roles printed, ``--label-col`` ... to change them); every labelled row is a label (a
label column filled in some rows only: those rows are ranked, the empty ones ignored, as if the
table held the labelled rows alone);
the output has one row per labelled row, most suspect first, with columns ``id``, ``label``,
``suggested``, ``score`` (the calibrated leave-one-out probability that the label is wrong)
and ``rank`` (:mod:`labeler.experiments.suspects`).
"""

from __future__ import annotations

import sys

from labeler.cli.columns import add_role_arguments
from labeler.cli.common import CLIError, Command, check_output_path
from labeler.cli.graph import MODEL_CHOICES

__all__ = ["COMMAND"]


def add_parser(sub):
    """The ``suspects`` sub-command."""
    p = sub.add_parser(
        "suspects", help="rank the labels of a table by how likely each is wrong",
        description="Fit the app's model on every labelled row of FILE and rank the rows by the "
        "calibrated probability that their label is wrong, from the exact leave-one-out prediction "
        "of each row (the model fitted without it). Writes id, label, suggested, score, rank.")
    p.add_argument("data", metavar="FILE", help="CSV or Parquet table with a label column")
    p.add_argument("--out", metavar="CSV", required=True, help="where to write the ranking")
    p.add_argument("--model", choices=MODEL_CHOICES, default="rls",
                   help="rls: kernel RLS with the app's defaults (width and lam tuned by leave-one-out "
                   "on the labels; default); harmonic, lgc or poisson: a graph model on the kNN graph; "
                   "auto is the app's choice as labels arrive and is refused here (choose one model)")
    p.add_argument("--seed", type=int, default=0, help="seed of the model's random choices (default 0)")
    p.add_argument("--quiet", action="store_true", help="no messages on stderr")
    add_role_arguments(p)
    return p


def run(args) -> int:
    """Run ``labeler suspects`` (errors raise :class:`labeler.cli.common.CLIError`: one line, exit 2)."""
    from labeler.cli.simulate import load_data
    from labeler.data.load import is_table
    from labeler.experiments.predictions import write_predictions
    from labeler.experiments.suspects import check_labels_for_suspects, fit_all_labels, labelled_only, suspect_table

    from labeler.session.graphs import MODELS

    if args.model not in MODELS:  # "auto": the app's choice among them as labels arrive
        raise CLIError(f"--model {args.model}: labeler suspects fits one model on every label; the app's "
                       f"\"auto\" chooses among them as labels arrive. Choose one of {', '.join(MODELS)} "
                       "(rls is the default).")
    out = check_output_path(args.out, "--out")
    if not is_table(args.data):
        raise CLIError(f"{args.data}: labeler suspects reads a CSV or Parquet table with a label column; "
                       "give one (an image folder or a built-in data set is not a table).")
    dataset = load_data(args.data, args, args.seed, "FILE")
    known = getattr(dataset, "file_labels", None)
    if known is not None:  # a partly filled label column: its labelled rows are ranked, the rest ignored
        if not args.quiet:
            print(f"labeler suspects: {known.summary().split(';')[0]}; ranking those, ignoring the "
                  f"{known.n_rows - len(known.rows):,} unlabelled row(s)", file=sys.stderr, flush=True)
        dataset = labelled_only(dataset)
    try:
        check_labels_for_suspects(dataset, getattr(args, "label_col", None))
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    learner, classes = fit_all_labels(dataset, args.model, args.seed)
    table = suspect_table(learner, classes, dataset.ids)
    write_predictions(out, table)
    if not args.quiet:
        top = table.iloc[0]
        print(f"labeler suspects: {len(table)} labels of {dataset.name} ranked; most suspect: id "
              f"{top['id']} labelled {top['label']!r}, the model suggests {top['suggested']!r} "
              f"(probability {top['score']:.2f} that the label is wrong); wrote {out}",
              file=sys.stderr, flush=True)
    return 0


COMMAND = Command("suspects", add_parser, run)
