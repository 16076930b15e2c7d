"""The graph models of :mod:`core.graph` on the command line.

:func:`add_graph_arguments` adds ``--model``, ``--transform``, ``--graph-k``, ``--graph-rank`` and
``--alpha`` to the ``simulate`` parser; :func:`run_graph_simulate` runs
:func:`labeler.experiments.graph_simulate.simulate_graph` when ``--model`` is not ``rls`` or a
``--transform`` is given, with the same output files, messages and exit codes as the kernel path
(errors raise :class:`labeler.cli.common.CLIError` or another user error: one line, exit status
2). :func:`add_app_model_arguments` and :func:`app_model_to_env`: ``labeler app``'s model options.
"""

from __future__ import annotations

import sys
import time

from labeler.cli.common import CLIError, Progress, positive_float, positive_int
from labeler.session.model_selection import DEFAULT_MODEL

__all__ = ["add_graph_arguments", "add_app_model_arguments", "app_model_to_env", "run_graph_simulate"]

MODEL_CHOICES = ("rls", "harmonic", "lgc", "poisson", "auto")
MODEL_HELP = (
    "rls: kernel RLS; harmonic: harmonic function on the kNN graph (queries: Zhu et al.'s expected risk, "
    "then margin); lgc: local and global consistency (VOpt, then margin); poisson: Poisson learning, "
    "Calder et al. 2020 (VOpt, then margin); auto: the harmonic function first where the pool's kNN graph "
    "splits into its classes, else RLS, then the model of lowest leave-one-out error among RLS and the graph "
    "models once a sign test over the labels says so (the default)."
)


def add_graph_arguments(sim) -> None:
    """The graph-model options of ``labeler simulate``."""
    sim.add_argument(
        "--model", choices=MODEL_CHOICES, default=None,
        help=MODEL_HELP + " With --transform, rls is kernel RLS on a spectral kernel of the kNN graph. The graph "
        "models also take --strategy vopt / sigmaopt. Default: the app's (labeler/cli/auto_model.py "
        "default_simulate_model)",
    )
    sim.add_argument(
        "--transform", choices=("diffusion", "gaussian_field", "max_alignment", "order", "improved_order"),
        default=None, help="with --model rls: ARLS on this spectral kernel of the kNN graph (seed 004); the "
        "aligned transforms are fitted to the --initial labels",
    )
    sim.add_argument("--graph-k", type=positive_int, default=10, help="neighbours of the kNN graph (default 10)")
    sim.add_argument("--graph-rank", type=positive_int, default=100,
                     help="Laplacian eigenpairs of the spectral kernel (default 100)")
    sim.add_argument("--alpha", type=positive_float, default=0.99, help="LGC propagation weight in (0, 1) (default 0.99)")


def add_app_model_arguments(app) -> None:
    """``labeler app --model --alpha --class-mass``: the model of the app's first new session
    (also chosen in the sidebar's new-session form); the graph's k is ``--knn``."""
    app.add_argument(
        "--model", choices=MODEL_CHOICES, default=None,
        help="the learner of new sessions. " + MODEL_HELP + " The graph models use the --knn graph of the pool "
        "and take no --posterior, --rank or --landmarks",
    )
    app.add_argument("--alpha", type=positive_float, default=None,
                     help="LGC propagation weight in (0, 1) (default 0.99; --model lgc only)")
    app.add_argument("--class-mass", action="store_true",
                     help="class mass normalisation of a graph model's outputs (seed 003 eq. 2.7)")


def app_model_to_env(options: dict) -> None:
    """Check ``labeler app``'s model and posterior options together
    (:func:`labeler.session.config.check_model_settings`; a bad combination raises
    :class:`labeler.cli.common.CLIError` before the server starts), then hand them to the app's
    first new session as ``LABELER_MODEL`` (:mod:`labeler.ui.config`)."""
    import json
    import os

    from labeler.session.config import SessionConfig, check_model_settings

    options = dict(options)
    if options.get("model") is None:  # not given: the default, unless the environment names a model already
        options.pop("model", None)
        if DEFAULT_MODEL != "rls" and "LABELER_MODEL" not in os.environ:
            options["model"] = DEFAULT_MODEL

    try:  # model "auto" starts on rls: checked as rls
        check_model_settings(SessionConfig(**dict(options, model="rls") if options.get("model") == "auto"
                                           else options))
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if options:
        os.environ["LABELER_MODEL"] = json.dumps(options)


def run_graph_simulate(args, dataset, X, out, report) -> int:
    """``labeler simulate --model harmonic|lgc|poisson`` or ``--model rls --transform T`` (graph models)."""
    import numpy as np

    from labeler.cli.predictions import prediction_request, write_requested_predictions
    from labeler.atomic import atomic_write
    from labeler.experiments.graph_simulate import MODEL_OPTIONS, simulate_graph
    from labeler.experiments.report import write_report
    from labeler.errors import SettingsError
    from labeler.experiments.simulate import DEFAULT_LAM

    if args.validation is not None:
        raise CLIError(f"--model {args.model}{' --transform ' + args.transform if args.transform else ''} is "
                       "transductive (it predicts the pool's own points): accuracy is measured on the unlabelled "
                       "rest of the pool. Drop --validation, or use --model rls without --transform.")
    if args.model == "rls" and args.transform is None:  # pragma: no cover - the caller checks
        raise CLIError("--model rls on a graph needs --transform.")
    lam = DEFAULT_LAM if args.lam is None or args.lam == "auto" else args.lam
    if "alpha" in MODEL_OPTIONS[args.model] and not args.alpha < 1:
        raise CLIError(f"--alpha must be below 1 (LGC converges for 0 < alpha < 1); got {args.alpha:g}.")
    err = sys.stderr
    what = {"rls": f"ARLS on the {args.transform} spectral kernel ({args.graph_rank} eigenpairs, lambda {lam:g})",
            "harmonic": "harmonic function (CG, Jacobi)", "lgc": f"LGC (alpha {args.alpha:g})",
            "poisson": "Poisson learning (CG)"}[args.model]
    if not args.quiet:
        print(f"labeler simulate: {dataset.name}: {len(dataset.y)} points, {len(dataset.classes)} classes; "
              f"{args.strategy}, {what} on a {args.graph_k}-NN graph; accuracy on the unlabelled rest of the pool",
              file=err, flush=True)
    progress = Progress(err, enabled=not args.quiet)
    final = prediction_request(args)  # --predictions (labeler/cli/suspects.py)
    try:
        curve = simulate_graph(dataset, args.model, args.strategy, args.budget, args.seed, transform=args.transform,
                               n_neighbors=args.graph_k, rank=args.graph_rank, lam=lam, alpha=args.alpha,
                               initial=args.initial, X=X, progress=progress, final=final)
    except SettingsError as exc:  # a setting that cannot work on this data set
        raise CLIError(f"{args.data}: {exc}") from None
    if out is None:
        curve.to_csv(sys.stdout, index=False, lineterminator="\n")
    else:
        atomic_write(out, lambda tmp: curve.to_csv(tmp, index=False, lineterminator="\n"))
    write_requested_predictions(args, final, dataset)
    if report is not None:
        intro = (f"labeler simulate {args.data}: strategy {args.strategy}, {what} on a {args.graph_k}-NN graph, "
                 f"{args.budget} queries after {args.initial} random labels, seed {args.seed}; accuracy on the "
                 "unlabelled rest of the pool.")
        write_report(report, {args.strategy: curve}, title=f"Learning curve: {dataset.name}", intro=intro)
    if not args.quiet:
        last = curve.iloc[-1]
        acc = "n/a" if np.isnan(last["accuracy"]) else f"{last['accuracy']:.4f}"
        written = ", ".join(str(p) for p in (out, report) if p is not None)
        print(f"labeler simulate: {len(curve)} queries in {time.perf_counter() - progress.start:.1f} s "
              f"(graph {curve.attrs['graph_seconds']:.1f} s); final accuracy {acc}"
              + (f"; wrote {written}" if written else ""), file=err, flush=True)
    return 0
