"""``labeler simulate DATA ...``: active labelling simulated with an oracle (the data set's true
labels), one CSV row per query (:func:`labeler.experiments.simulate.simulate`, with the app's
defaults); graph models through :mod:`labeler.cli.graph`."""

from __future__ import annotations

import sys
import time

from labeler.cli.columns import add_role_arguments, open_data
from labeler.cli.common import (CLIError, Command, add_standardize_argument, Progress, builtin_names, check_output_path, lam_value,
                                non_negative_int, positive_float, positive_int)
from labeler.cli.graph import add_graph_arguments, run_graph_simulate
from labeler.cli.posterior import BuildProgress, add_posterior_arguments, simulate_executor
from labeler.cli.predictions import add_prediction_argument, prediction_request, write_requested_predictions

__all__ = ["COMMAND"]


def add_parser(sub):
    from core.kernels import KERNELS
    from core.learner import WEIGHTINGS
    from core.strategies import STRATEGIES

    sim = sub.add_parser(
        "simulate",
        help="simulate labelling with an oracle and write the learning curve",
        description="Simulate active labelling: the strategy asks for points, the true labels answer. "
        "Writes one CSV row per query: step, index, label, n_labeled, accuracy, balanced_accuracy, "
        "estimated_risk, step_seconds.",
    )
    sim.add_argument(
        "data", metavar="DATA",
        help=f"built-in name ({builtin_names()}) or a .csv / .parquet / .npz file with labels",
    )
    sim.add_argument("--strategy", choices=STRATEGIES, default="auto",
                     help="query strategy (default auto: expected risk for the first 10 labels, margin after)")
    sim.add_argument("--budget", type=positive_int, default=100, help="number of queries (default 100)")
    sim.add_argument(
        "--seed", type=non_negative_int, default=0,
        help="seeds everything: a built-in data set's construction, the initial labels, tie-breaking (default 0)",
    )
    sim.add_argument("--kernel", choices=KERNELS, default="rbf", help="kernel (default rbf)")
    sim.add_argument(
        "--width", type=positive_float, default=None,
        help="RBF width s in exp(-|x-x'|^2 / (2 s^2)), fixed; default as in the app: the built-in's "
        "recommended width (when it refers to the same scaling), else the median pairwise distance "
        "of the standardised features, re-tuned by leave-one-out as labels arrive",
    )
    sim.add_argument(
        "--lam", type=lam_value, default=None, metavar="L|auto",
        help="regularisation lambda > 0 (fixed), or 'auto' (the default, as in the app): start from "
        "the built-in's recommended value, else 0.1, and re-tune by leave-one-out as labels arrive",
    )
    sim.add_argument(
        "--weighting", choices=WEIGHTINGS, default=None,
        help="class weights (balanced: w_y ~ 1/n_y over the labels, bias-corrected risk); "
        "default as in the app: balanced",
    )
    sim.add_argument(
        "--validation", metavar="PATH",
        help="labelled validation file (same columns); default: a built-in's validation set, "
        "else the unlabelled rest of the pool",
    )
    sim.add_argument("--out", metavar="CSV", help="write the curve here (default: standard output)")
    sim.add_argument("--report", metavar="HTML", help="also write a self-contained HTML page with the learning curves")
    sim.add_argument("--initial", type=non_negative_int, default=0, help="random labels before the first query (default 0)")
    sim.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    add_graph_arguments(sim)  # --model, --transform, --graph-k, --graph-rank, --alpha (labeler/cli/graph.py)
    add_standardize_argument(sim)
    add_posterior_arguments(sim, positive_int)
    add_role_arguments(sim)
    add_prediction_argument(sim)  # --predictions (labeler/cli/suspects.py)
    return sim


def load_data(source: str, args, seed: int, what: str):
    """The simulation's data set (a table's column roles printed first, unless ``--quiet``)."""
    from labeler.data import BUILTIN_DATASETS

    try:
        return open_data(source, args, seed=seed, quiet=args.quiet)[0]
    except FileNotFoundError as exc:
        hint = "" if source in BUILTIN_DATASETS else (
            f" Check the path, or use a built-in data set: {', '.join(BUILTIN_DATASETS)}."
        )
        raise CLIError(f"{what}: {exc}{hint}") from None


def _load_validation(args, dataset):
    """The ``--validation`` file, with the pool's column roles."""
    from labeler.data import load_dataset

    if "text_features" in dataset.params:
        raise CLIError(
            f"--validation {args.validation}: the pool's features are the TF-IDF of its text "
            "column, whose vocabulary and SVD are fitted on the pool, so a separate file would "
            "get other features. Leave --validation out (the accuracy is then measured on the "
            "unlabelled rest of the pool), or put the validation rows in the pool's file."
        )
    from labeler.data import DatasetError

    try:
        return load_dataset(args.validation, seed=args.seed, **dataset.load_options)
    except (FileNotFoundError, DatasetError) as exc:
        raise CLIError(f"--validation {args.validation}: {exc}") from None


def run(args) -> int:
    import numpy as np

    from labeler.experiments.simulate import app_settings, simulate
    from labeler.errors import SettingsError
    from labeler.session.costs import MemoryBudgetError
    from labeler.atomic import atomic_write
    from labeler.experiments.report import write_report

    out = check_output_path(args.out, "--out")
    report = check_output_path(args.report, "--report")
    if out is not None and report is not None and out.resolve() == report.resolve():
        raise CLIError("--out and --report name the same file; give the HTML report its own name.")

    dataset = load_data(args.data, args, args.seed, "DATA")
    known = getattr(dataset, "file_labels", None)
    if known is not None:
        raise CLIError(
            f"{args.data}: {known.summary().split(';')[0]}, but labeler simulate needs a label in every "
            f"row (the oracle answers whichever point is queried). Fill column {known.column!r} in every "
            "row, or simulate on the labelled rows alone (a file holding only them); to label the rest, "
            f"open the file with labeler app {args.data}."
        )
    if dataset.y is None:
        raise CLIError(
            f"{args.data} has no labels, so there is no oracle to answer the queries. Add a label "
            "column (default name 'label') or name it with --label-col NAME."
        )
    if args.validation is not None:
        val = _load_validation(args, dataset)
        if val.y is None:
            raise CLIError(
                f"--validation {args.validation}: no label column found; it needs the same label "
                "column as DATA (--label-col NAME)."
            )
        if list(val.feature_names) != list(dataset.feature_names):
            raise CLIError(
                f"--validation {args.validation} has feature columns {val.feature_names[:6]} but DATA "
                f"has {dataset.feature_names[:6]}; use a validation file with the same columns."
            )
        X_val_raw, y_val, evaluation = val.X, val.y, f"validation file {args.validation} ({len(val.y)} points)"
    elif dataset.X_val is not None and dataset.y_val is not None:
        X_val_raw, y_val = dataset.X_val, dataset.y_val
        evaluation = f"the built-in validation set ({len(y_val)} points)"
    else:
        X_val_raw = y_val = None
        evaluation = "the unlabelled rest of the pool"
    try:  # the app's defaults (labeler.experiments.simulate.app_settings): one set of defaults
        chosen = app_settings(dataset, args.seed, kernel=args.kernel,
                              width="auto" if args.width is None else args.width,
                              lam="auto" if args.lam is None else args.lam,
                              weighting=args.weighting, X_val=X_val_raw, posterior=args.posterior,
                              rank=args.rank, landmarks=args.landmarks, knn=args.knn,
                              standardize=args.standardize or "auto")
    except MemoryBudgetError as exc:
        raise CLIError(f"{args.data}: {exc}") from None
    except SettingsError as exc:  # e.g. no automatic width for constant points
        raise CLIError(f"{args.data}: {exc} Or pass --width W.") from None
    X, X_val, kernel, lam, weighting = (chosen[k] for k in ("X", "X_val", "kernel", "lam", "weighting"))
    auto_tune = chosen["auto_tune"]
    notes = chosen["notes"]
    width_note = f" ({notes['width']})" if "width" in notes else ""
    tuned = [k for k, v in auto_tune.items() if v]
    tune_note = f"; {' and '.join(tuned)} re-tuned by leave-one-out as labels arrive" if tuned else ""
    if args.budget + args.initial > len(dataset.y):
        raise CLIError(
            f"--budget {args.budget} plus --initial {args.initial} exceeds the {len(dataset.y)} points "
            f"of {args.data}; pass --budget {max(len(dataset.y) - args.initial, 1)} or less."
        )
    from labeler.cli.auto_model import default_simulate_model, run_auto_model_simulate
    if args.model is None:  # the app's default model, where it applies
        args.model = default_simulate_model(args, chosen)
    if args.model == "auto":  # the model chosen by exact LOO (issue 20 §2)
        return run_auto_model_simulate(args, dataset, chosen, out, report)
    if args.model != "rls" or args.transform is not None:  # graph models (issue 10)
        return run_graph_simulate(args, dataset, X, out, report)

    err = sys.stderr
    if not args.quiet:
        kdesc = f"rbf width {kernel.width:.4g}{width_note}" if args.kernel == "rbf" else args.kernel
        print(
            f"labeler simulate: {dataset.name}: {len(dataset.y)} points, {len(dataset.classes)} classes; "
            f"{args.strategy}, kernel {kdesc}, lambda {lam:g}, weighting {weighting}{tune_note}; "
            f"accuracy on {evaluation}",
            file=err, flush=True,
        )
        post = chosen["posterior"]
        pdesc = "dense (exact)" if post == "dense" else f"{post}, rank {chosen['rank']}"
        print(f"labeler simulate: posterior {pdesc}"
              + (f" -- chosen automatically: {notes['posterior']}" if "posterior" in notes and post != "dense"
                 else ""),
              file=err, flush=True)
        if "scoring" in notes and args.strategy == "arls":
            print(f"labeler simulate: {notes['scoring']}", file=err, flush=True)
    progress = Progress(err, enabled=not args.quiet)
    build_progress = BuildProgress(err, enabled=not args.quiet)
    executor = simulate_executor(args.executor, chosen["posterior"], None if args.quiet else err)
    final = prediction_request(args)  # None, or {} that simulate fills for --predictions
    try:
        curve = simulate(
            dataset, strategy=args.strategy, budget=args.budget, seed=args.seed, kernel=kernel, lam=lam,
            weighting=weighting, X_val=X_val, y_val=y_val, initial=args.initial, progress=progress, X=X,
            auto_tune=auto_tune, posterior=chosen["posterior"], rank=chosen["rank"],
            landmarks=chosen["landmarks"], knn=chosen["knn"], build_progress=build_progress, executor=executor,
            final=final)
    finally:
        if executor is not None and hasattr(executor, "close"):
            executor.close()
    if out is None:
        curve.to_csv(sys.stdout, index=False, lineterminator="\n")
    else:
        atomic_write(out, lambda tmp: curve.to_csv(tmp, index=False, lineterminator="\n"))
    write_requested_predictions(args, final, dataset, y_val, val if args.validation is not None else None)
    if report is not None:
        intro = (
            f"labeler simulate {args.data}: strategy {args.strategy}, {args.budget} queries after "
            f"{args.initial} random labels, seed {args.seed}, kernel "
            f"{args.kernel}{f' width {kernel.width:.4g}' if args.kernel == 'rbf' else ''}, "
            f"lambda {curve.attrs['lam']:.4g}, weighting {weighting}; accuracy on {evaluation}."
        )
        write_report(report, {args.strategy: curve}, title=f"Learning curve: {dataset.name}", intro=intro)
    if not args.quiet:
        total = time.perf_counter() - progress.start
        last = curve.iloc[-1]
        acc = "n/a" if np.isnan(last["accuracy"]) else f"{last['accuracy']:.4f}"
        written = ", ".join(str(p) for p in (out, report) if p is not None)
        print(
            f"labeler simulate: {len(curve)} queries in {total:.1f} s, lambda {curve.attrs['lam']:.4g}; "
            f"final accuracy {acc}" + (f"; wrote {written}" if written else ""),
            file=err, flush=True,
        )
    return 0


COMMAND = Command("simulate", add_parser, run)
