"""``labeler simulate --model auto``: the model chosen by exact leave-one-out as labels arrive.

Runs :func:`labeler.experiments.model_select_simulate.simulate_auto_model` with the app's
defaults (``chosen``: :func:`labeler.experiments.simulate.app_settings`), the same output files
and messages as the other paths; the curve has a column ``model`` (the model answering after
each label) and the switches are printed.
"""

from __future__ import annotations

import sys
import time

from labeler.cli.common import CLIError, Progress

__all__ = ["run_auto_model_simulate", "default_simulate_model"]


def default_simulate_model(args, chosen: dict) -> str:
    """The model of ``labeler simulate`` without ``--model``: the app's default
    (:data:`labeler.session.model_selection.DEFAULT_MODEL`) where it applies, else "rls".

    "auto" compares models on the pool itself and starts from the app's RLS, so any setting of
    kernel RLS given on the command line (kernel, width, lam, weighting, posterior, rank,
    executor, a spectral transform, the "arls" strategy), a validation set, initial labels or
    ``--predictions`` (written by the kernel path) keep kernel RLS, as does a pool of more than
    :data:`~labeler.session.model_selection.AUTO_MAX_POINTS` points."""
    from labeler.session.model_selection import AUTO_MAX_POINTS, DEFAULT_MODEL

    if DEFAULT_MODEL != "auto":
        return DEFAULT_MODEL
    rls_settings = (args.kernel != "rbf" or args.width is not None or args.lam is not None
                    or args.weighting is not None or args.posterior != "auto" or args.rank is not None
                    or getattr(args, "executor", "serial") != "serial" or args.transform is not None
                    or args.strategy == "arls" or getattr(args, "predictions", None))
    applies = (not rls_settings and args.validation is None and chosen.get("X_val") is None and not args.initial
               and chosen.get("posterior") == "dense" and len(chosen["X"]) <= AUTO_MAX_POINTS)
    return "auto" if applies else "rls"


def run_auto_model_simulate(args, dataset, chosen: dict, out, report) -> int:
    """Run ``--model auto`` (errors raise :class:`CLIError`: one line, exit status 2)."""
    import numpy as np

    from labeler.atomic import atomic_write
    from labeler.errors import SettingsError
    from labeler.experiments.model_select_simulate import AUTO_CANDIDATES, simulate_auto_model
    from labeler.experiments.report import write_report

    if args.validation is not None or chosen.get("X_val") is not None:
        raise CLIError("--model auto compares graph models, which predict the pool's own points: accuracy is "
                       "measured on the unlabelled rest of the pool. Drop --validation, or choose --model rls.")
    if args.initial:
        raise CLIError("--model auto starts from no labels; drop --initial (or choose a fixed --model).")
    if args.transform is not None:
        raise CLIError("--transform applies to --model rls only; drop it with --model auto.")
    strategy = args.strategy
    err = sys.stderr
    candidates = ", ".join(AUTO_CANDIDATES)
    if not args.quiet:
        print(f"labeler simulate: {dataset.name}: {len(dataset.y)} points, {len(dataset.classes)} classes; "
              f"{strategy}, the model chosen by leave-one-out among {candidates} (the harmonic function first "
              f"where the pool's graph splits into its classes, else RLS; graph models on a {args.graph_k}-NN graph); accuracy on the unlabelled rest of the pool", file=err, flush=True)
    progress = Progress(err, enabled=not args.quiet)
    try:
        curve = simulate_auto_model(dataset, strategy, args.budget, args.seed, n_neighbors=args.graph_k,
                                    chosen=chosen, progress=progress)
    except SettingsError as exc:
        raise CLIError(f"{args.data}: {exc}") from None
    if out is None:
        curve.to_csv(sys.stdout, index=False, lineterminator="\n")
    else:
        atomic_write(out, lambda tmp: curve.to_csv(tmp, index=False, lineterminator="\n"))
    if report is not None:
        intro = (f"labeler simulate {args.data}: strategy {strategy}, model chosen by leave-one-out among "
                 f"{candidates}, {args.budget} queries, seed {args.seed}; accuracy on the unlabelled rest of the pool.")
        write_report(report, {strategy: curve}, title=f"Learning curve: {dataset.name}", intro=intro)
    if not args.quiet:
        for n_labels, old, new, reason in curve.attrs["switches"]:
            print(f"labeler simulate: at {n_labels} labels {old} -> {new}: {reason}", file=err, flush=True)
        last = curve.iloc[-1]
        acc = "n/a" if np.isnan(last["accuracy"]) else f"{last['accuracy']:.4f}"
        written = ", ".join(str(p) for p in (out, report) if p is not None)
        print(f"labeler simulate: {len(curve)} queries in {time.perf_counter() - progress.start:.1f} s; model "
              f"{last['model']} at the end; final accuracy {acc}" + (f"; wrote {written}" if written else ""),
              file=err, flush=True)
    return 0
