"""Command line: ``labeler`` (the app), ``labeler simulate``, ``labeler reproduce``.

::

    labeler                                   # the app on the two-moons demo
    labeler app [PATH|NAME] [--store F] [--port P] [--host H] [--session ID] [--token T|auto]
                [ROLES] [-- streamlit args]
    labeler simulate DATA [--strategy auto|arls|margin|random] [--budget N] [--seed S]
                     [--kernel rbf|linear|poly] [--width W] [--lam L|auto]
                     [--weighting none|balanced] [--validation PATH] [ROLES]
                     [--out curve.csv] [--report curve.html] [--initial N]
                     [--model rls|harmonic|lgc] [--transform T] [--graph-k K] [--graph-rank R] [--alpha A]

ROLES (CSV / Parquet): ``--id-col NAME --label-col NAME --text-col NAME --image-col NAME
--feature-cols A,B --features-from columns|text|image --layout-cols X,Y`` (``''`` for none);
roles not given are guessed and printed at start (:mod:`labeler.cli_columns`).
    labeler reproduce [--quick] [--out docs/] [--seeds K] [--no-png]
    labeler reproduce-graph [--quick] [--only seed004,seed001,...] [--repeats K] [--out docs/]
    labeler backup OUT [--store F] [--session ID]   # one self-contained copy of the store

Every user error (missing file, bad option value, a data file that cannot be loaded -- for
``labeler app`` before the server starts) prints one message naming the problem and the fix on
stderr and exits with status 2, without a traceback; warnings (e.g. ``--lam auto``
falling back to the default) print one ``labeler: warning:`` line each. Output files are written
atomically, so a failed or interrupted run leaves no partial file.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
import warnings
from pathlib import Path

from labeler.cli_columns import add_role_arguments, open_data, role_arguments_given
from labeler.cli_graph import add_app_model_arguments, add_graph_arguments, app_model_to_env, run_graph_simulate
from labeler.cli_reproduce_graph import add_reproduce_graph_parser, run_reproduce_graph
from labeler.cli_posterior import BuildProgress as _BuildProgress, add_posterior_arguments, model_options as _model_options
from labeler.cli_posterior import app_executor as _app_executor, simulate_executor as _simulate_executor
from labeler.runtime import configure_threads, limit_malloc_arenas

__all__ = ["main", "build_parser", "CLIError"]

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
PROGRESS_INTERVAL = 2.0  # seconds between two progress lines on stderr


class CLIError(Exception):
    """A user error found after parsing: printed as ``labeler: error: <message>``, exit 2."""


# --------------------------------------------------------------------------- option types
def _int_at_least(low: int):
    """An argparse type: a whole number >= ``low``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number >= {low}, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be >= {low}, got {value}")
        return value

    return parse


_positive_int = _int_at_least(1)
_non_negative_int = _int_at_least(0)


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number > 0, got {text}")
    return value


def _lam(text: str):
    if text == "auto":
        return "auto"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number > 0 or 'auto' (leave-one-out on the initial labels), got {text!r}"
        ) from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(
            f"lambda must be a finite number > 0, got {text}; try 0.1, or 'auto'"
        )
    return value


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a TCP port number 1-65535, got {text!r}") from None
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"a TCP port is 1-65535, got {value}")
    return value


# --------------------------------------------------------------------------- parser
def _builtin_names() -> str:
    from labeler.data import BUILTIN_DATASETS

    return ", ".join(BUILTIN_DATASETS)


def build_parser() -> argparse.ArgumentParser:
    """The ``labeler`` argument parser (sub-commands ``app``, ``simulate``, ``reproduce``)."""
    from core.learner import WEIGHTINGS
    from core.kernels import KERNELS
    from core.strategies import STRATEGIES

    parser = argparse.ArgumentParser(
        prog="labeler",
        description="Interactive active labelling with exact incremental Active RLS. "
        "Without a sub-command: the app on the two-moons demo.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="{app,simulate,reproduce,reproduce-graph,backup}")

    app = sub.add_parser(
        "app",
        help="open the labelling app in the browser",
        description="Start the labelling app (Streamlit). Arguments after '--' go to streamlit run.",
    )
    app.add_argument(
        "data", nargs="?", default=None, metavar="PATH|NAME",
        help=f"CSV / Parquet / NPZ file, image folder, or built-in name ({_builtin_names()}); "
        "default: two moons",
    )
    app.add_argument("--store", metavar="FILE", help="SQLite store (default $LABELER_STORE or ~/.labeler/labeler.sqlite)")
    app.add_argument("--port", type=_port, default=8501, help="TCP port (default 8501)")
    app.add_argument("--host", default="127.0.0.1", help="bind address (default 127.0.0.1: this machine only)")
    app.add_argument("--session", metavar="ID", help="resume a saved session")
    app.add_argument(
        "--token", metavar="SECRET|auto",
        help="access token every browser tab must give (?token=... in the link, or typed in); "
        "'auto' makes a random one and prints the link. Use it with --host beyond 127.0.0.1 "
        "(default $LABELER_TOKEN, else none)",
    )
    add_role_arguments(app)
    add_posterior_arguments(app, _positive_int)
    add_app_model_arguments(app)  # --model, --alpha, --class-mass (labeler/cli_graph.py)

    sim = sub.add_parser(
        "simulate",
        help="simulate labelling with an oracle and write the learning curve",
        description="Simulate active labelling: the strategy asks for points, the true labels answer. "
        "Writes one CSV row per query: step, index, label, n_labeled, accuracy, balanced_accuracy, "
        "estimated_risk, step_seconds.",
    )
    sim.add_argument(
        "data", metavar="DATA",
        help=f"built-in name ({_builtin_names()}) or a .csv / .parquet / .npz file with labels",
    )
    sim.add_argument("--strategy", choices=STRATEGIES, default="auto",
                     help="query strategy (default auto: expected risk while cold, margin once every class has 3 labels)")
    sim.add_argument("--budget", type=_positive_int, default=100, help="number of queries (default 100)")
    sim.add_argument(
        "--seed", type=_non_negative_int, default=0,
        help="seeds everything: a built-in data set's construction, the initial labels, tie-breaking (default 0)",
    )
    sim.add_argument("--kernel", choices=KERNELS, default="rbf", help="kernel (default rbf)")
    sim.add_argument(
        "--width", type=_positive_float, default=None,
        help="RBF width s in exp(-|x-x'|^2 / (2 s^2)), fixed; default as in the app: the built-in's "
        "recommended width (when it refers to the same scaling), else the median pairwise distance "
        "of the standardised features, re-tuned by leave-one-out as labels arrive",
    )
    sim.add_argument(
        "--lam", type=_lam, default=None, metavar="L|auto",
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
    sim.add_argument("--initial", type=_non_negative_int, default=0, help="random labels before the first query (default 0)")
    sim.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    add_graph_arguments(sim)  # --model, --transform, --graph-k, --graph-rank, --alpha (labeler/cli_graph.py)
    for p in (app, sim):  # labeler.data.preprocessing.shared_scale states the "auto" rule
        p.add_argument("--standardize", choices=("auto", "on", "off"), default=None, help="scale every column to "
                       "mean 0, sd 1; default auto: off for images, text, pixel-like tables and PCA components")
    add_posterior_arguments(sim, _positive_int)
    add_role_arguments(sim)

    rep = sub.add_parser(
        "reproduce",
        help="re-run the thesis experiments and write docs/reproduction.md",
        description="Re-run the experiments of the ARLS thesis (seed 002 ch. 4) and write "
        "reproduction.md and plots (reproduction/) into the output folder.",
    )
    rep.add_argument("--quick", action="store_true", help="small pools, budgets and seed counts (a few minutes)")
    rep.add_argument("--out", default="docs", metavar="DIR", help="output folder (default docs/)")
    rep.add_argument(
        "--seeds", type=_positive_int, default=None, metavar="K",
        help="random repetitions where the thesis averaged several trials (default 10, quick 2)",
    )
    rep.add_argument("--no-png", action="store_true", help="skip PNG snapshots (they need Chromium)")

    add_reproduce_graph_parser(sub)

    bak = sub.add_parser(
        "backup",
        help="copy the store (or one session) to one self-contained SQLite file",
        description="Write a consistent copy of the store, or of one session, to a new file: one "
        "SQLite file without -wal / -shm files, safe to make while the app runs. Open it with "
        "`labeler app --store OUT`.",
    )
    bak.add_argument("out", metavar="OUT", help="the new file (an existing one is refused)")
    bak.add_argument("--store", metavar="FILE", help="store to copy (default $LABELER_STORE or ~/.labeler/labeler.sqlite)")
    bak.add_argument("--session", metavar="ID", help="copy only this session")
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("arls-labeler")
    except PackageNotFoundError:  # not installed (running from a checkout)
        return "0.1.0"


# --------------------------------------------------------------------------- commands
def _run_app(args, extra: list[str]) -> int:
    from labeler.serve import run_app  # lazy: Streamlit is slow to import

    kwargs = dict(data=args.data, store=args.store, port=args.port, host=args.host,
                  session=args.session, extra_args=tuple(extra), token=args.token)
    options = _app_data_options(args)
    if options:
        kwargs["data_options"] = options
    app_model_to_env({**_model_options(args), **({"standardize": args.standardize} if args.standardize else {})})  # checked first: a graph model with --posterior nystrom stops here
    try:  # reach it once before the server starts: a wrong address stops here
        _app_executor(args.executor)
    except ValueError as exc:
        raise CLIError(f"--executor {args.executor}: {exc}") from None
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
            f"image folder, or a built-in data set: {_builtin_names()}."
        )
    dataset, options = open_data(str(path) if path.exists() else args.data, args, seed=0,
                                 options=options)
    classes = f"{len(dataset.classes)} classes" if dataset.y is not None else "no labels"
    print(f"labeler: {dataset.name}: {len(dataset.X):,} points, {dataset.X.shape[1]:,} features, "
          f"{classes}; starting the app", file=sys.stderr, flush=True)
    from labeler.data.load import hand_over

    hand_over(dataset)  # the app's first session takes it: the file is not read twice
    return options


def _check_output_path(path: str | None, option: str) -> Path | None:
    if path is None:
        return None
    p = Path(path).expanduser()
    if p.is_dir():
        raise CLIError(f"{option} {path!r} is a folder; give a file name, e.g. {option} {p / 'curve'}.")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise CLIError(
            f"{option} {path!r}: folder {str(parent)!r} does not exist; create it first "
            f"(mkdir -p {parent}) or choose another path."
        )
    return p


def _load(source: str, args, seed: int, what: str):
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


class _Progress:
    """Throttled progress lines on stderr: at most one every ``PROGRESS_INTERVAL`` seconds."""

    def __init__(self, stream, enabled: bool = True):
        self.stream = stream
        self.enabled = enabled
        self.start = time.perf_counter()
        self.last = self.start

    def __call__(self, step: int, budget: int) -> None:
        now = time.perf_counter()
        if not self.enabled or now - self.last < PROGRESS_INTERVAL or step == budget:
            return
        self.last = now
        rate = step / max(now - self.start, 1e-9)
        left = (budget - step) / rate
        print(f"labeler simulate: step {step}/{budget} ({rate:.1f} queries/s, ~{left:.0f} s left)",
              file=self.stream, flush=True)


def _run_simulate(args) -> int:
    import numpy as np

    from labeler.experiments.simulate import app_settings, simulate
    from labeler.session.model import MemoryBudgetError
    from labeler.atomic import atomic_write
    from labeler.experiments.report import write_report

    out = _check_output_path(args.out, "--out")
    report = _check_output_path(args.report, "--report")
    if out is not None and report is not None and out.resolve() == report.resolve():
        raise CLIError("--out and --report name the same file; give the HTML report its own name.")

    dataset = _load(args.data, args, args.seed, "DATA")
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
    except ValueError as exc:
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
    progress = _Progress(err, enabled=not args.quiet)
    build_progress = _BuildProgress(err, enabled=not args.quiet)
    try:
        executor = _simulate_executor(args.executor, chosen["posterior"], None if args.quiet else err)
    except ValueError as exc:
        raise CLIError(f"--executor {args.executor}: {exc}") from None
    try:
        curve = simulate(
            dataset, strategy=args.strategy, budget=args.budget, seed=args.seed, kernel=kernel, lam=lam,
            weighting=weighting, X_val=X_val, y_val=y_val, initial=args.initial, progress=progress, X=X,
            auto_tune=auto_tune, posterior=chosen["posterior"], rank=chosen["rank"],
            landmarks=chosen["landmarks"], knn=chosen["knn"], build_progress=build_progress, executor=executor,
        )
    finally:
        if executor is not None and hasattr(executor, "close"):
            executor.close()
    if out is None:
        curve.to_csv(sys.stdout, index=False, lineterminator="\n")
    else:
        atomic_write(out, lambda tmp: curve.to_csv(tmp, index=False, lineterminator="\n"))
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


def _run_reproduce(args) -> int:
    from labeler.experiments.reproduce import run_reproduction

    out = Path(args.out).expanduser()
    if out.exists() and not out.is_dir():
        raise CLIError(f"--out {args.out!r} is a file; give a folder (e.g. docs).")
    if not out.exists():
        parent = out.parent if str(out.parent) else Path(".")
        if not parent.is_dir():
            raise CLIError(f"--out {args.out!r}: folder {str(parent)!r} does not exist; create it first.")
        out.mkdir()
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


def _run_backup(args) -> int:
    from labeler.store import Store, StoreError, default_store_path

    source = Path(args.store).expanduser() if args.store else default_store_path()
    if not source.is_file():
        raise CLIError(f"no store at {source}; give it with --store FILE.")
    try:
        with Store(source) as store:
            out = store.backup(args.out, session_id=args.session)
            sessions = store.list_sessions()
    except (StoreError, FileExistsError) as exc:
        raise CLIError(str(exc)) from None
    kept = [s for s in sessions if args.session in (None, s.id)]
    print(f"Wrote {out}: {len(kept)} session(s), {sum(s.n_labeled for s in kept)} labels, one "
          "self-contained SQLite file (open it with --store).")
    return 0


# --------------------------------------------------------------------------- entry point
def _print_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Show a warning as one ``labeler: warning: ...`` line on stderr (no source line)."""
    print(f"labeler: warning: {message}", file=sys.stderr if file is None else file, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 2 usage error, 130 interrupted).

    User errors (:class:`CLIError`, ``ValueError`` such as
    :class:`~labeler.data.DatasetError`, ``OSError``) print one message and return 2; any
    other exception is a bug and propagates with its traceback.
    """
    configure_threads()  # before anything imports numpy or numba: see labeler.runtime
    return _main(list(sys.argv[1:] if argv is None else argv))


def _main(argv: list[str]) -> int:
    extra: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, extra = argv[:cut], argv[cut + 1:]
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage and the message
        return int(exc.code or 0)
    if extra and args.command not in (None, "app"):
        parser.print_usage(sys.stderr)
        print(f"labeler: error: arguments after '--' ({' '.join(extra)}) are only for 'labeler app'.",
              file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.command in (None, "app"):
            limit_malloc_arenas()  # before the data loads and Streamlit's threads: labeler.runtime
        if args.command is None:
            from labeler.serve import run_app

            run_app(extra_args=tuple(extra))
            return 0
        if args.command == "app":
            return _run_app(args, extra)
        if args.command == "backup":
            return _run_backup(args)
        with warnings.catch_warnings():  # (not around the app: Streamlit shows its own)
            warnings.showwarning = _print_warning  # restored when the block ends
            run = {"simulate": _run_simulate, "reproduce-graph": run_reproduce_graph}.get(args.command, _run_reproduce)
            return run(args)
    except KeyboardInterrupt:
        print("labeler: interrupted; no output file was written or completed.", file=sys.stderr)
        return EXIT_INTERRUPTED
    except (CLIError, ValueError) as exc:  # DatasetError is a ValueError
        print(f"labeler: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as exc:
        where = f" ({exc.filename})" if getattr(exc, "filename", None) else ""
        print(f"labeler: error: {exc.strerror or exc}{where}. Check the path and its permissions.",
              file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
