"""The posterior options of ``labeler app`` and ``labeler simulate`` (``--posterior --rank
--landmarks --knn --executor``), the executor they name, and the progress lines of a factor's
build."""

from __future__ import annotations

import time

from labeler.cli.common import CLIError

__all__ = ["add_posterior_arguments", "model_options", "open_executor", "simulate_executor", "app_executor", "BuildProgress"]

PROGRESS_INTERVAL = 2.0  # seconds between two progress lines of one build step


def add_posterior_arguments(parser, positive_int) -> None:
    """``--posterior --rank --landmarks --knn``: the learner's posterior (labeler.session.model)."""
    parser.add_argument(
        "--posterior", choices=("auto", "dense", "nystrom", "spectral"), default="auto",
        help="the learner's posterior: dense (exact, 8 n^2 bytes), nystrom (low rank: n x rank "
        "factor of landmark kernel columns), spectral (kNN-graph kernel); auto (default): dense "
        "while it needs under half the free memory, else nystrom (said on start)",
    )
    parser.add_argument("--rank", type=positive_int, default=None,
                        help="rank of a low-rank posterior: landmarks (nystrom, default 300) or "
                        "Laplacian eigenpairs (spectral, default 100)")
    parser.add_argument("--landmarks", choices=("uniform", "kmeans"), default="uniform",
                        help="Nystrom landmarks: a uniform sample of points or k-means centres (default uniform)")
    parser.add_argument("--knn", type=positive_int, default=10,
                        help="neighbours of the kNN graph of the spectral posterior or of a graph model (default 10)")
    parser.add_argument("--executor", default="serial",
                        help="where a low-rank posterior's candidates are scored: serial (default), "
                        "threads[:N], dask://HOST:PORT (a running Dask scheduler) or local-dask:N; "
                        "the picks do not depend on it (docs/distributed.md)")


def open_executor(spec: str):
    """The executor ``--executor`` names, connected.

    Raises
    ------
    labeler.cli.common.CLIError
        An unknown name or a scheduler that cannot be reached (``--executor SPEC: reason``).
    """
    from core.criteria.blocks import ExecutorUnavailable
    from labeler.distributed import make_executor

    try:
        return make_executor(spec)
    except (ValueError, ExecutorUnavailable) as exc:  # make_executor's ValueError: the name itself
        raise CLIError(f"--executor {spec}: {exc}") from None


def simulate_executor(spec: str, posterior: str, stream=None):
    """The executor of ``labeler simulate --executor`` (None for serial), said on ``stream``."""
    if spec == "serial":
        return None
    executor = open_executor(spec)
    if stream is not None:
        where = "here: a dense posterior scores on this machine" if posterior == "dense" else f"on {executor!r}"
        print(f"labeler simulate: candidates scored {where}", file=stream, flush=True)
    return executor


def app_executor(spec: str) -> None:
    """Reach ``labeler app --executor``'s executor once (a wrong address stops before the
    server starts), then hand its name to the app's sessions (``LABELER_EXECUTOR``)."""
    import os

    if spec == "serial":
        return
    executor = open_executor(spec)
    if hasattr(executor, "close"):
        executor.close()
    os.environ["LABELER_EXECUTOR"] = spec


def model_options(args) -> dict:
    """The model and posterior options given on the command line (only those that differ from
    the defaults): posterior, rank, landmarks, knn, and ``labeler app``'s model (when given: "rls"
    too, since the default is "auto"), alpha, class_mass."""
    options = {"posterior": args.posterior, "rank": args.rank, "landmarks": args.landmarks, "knn": args.knn,
               "model": getattr(args, "model", None), "alpha": getattr(args, "alpha", None),
               "class_mass": bool(getattr(args, "class_mass", False))}
    defaults = {"posterior": "auto", "rank": None, "landmarks": "uniform", "knn": 10, "model": None,
                "alpha": None, "class_mass": False}
    return {k: v for k, v in options.items() if v != defaults[k]}


class BuildProgress:
    """Progress lines of the long build steps (``progress(message, fraction)``): a new step, or
    at most one line every ``PROGRESS_INTERVAL`` seconds."""

    def __init__(self, stream, enabled: bool = True):
        self.stream, self.enabled = stream, enabled
        self.start = self.last = time.perf_counter()
        self.message = None

    def __call__(self, message: str, fraction: float) -> None:
        now = time.perf_counter()
        step = message.split(":")[0]
        if not self.enabled or (step == self.message and now - self.last < PROGRESS_INTERVAL and fraction < 1):
            return
        self.message, self.last = step, now
        print(f"labeler: {message} ({100 * fraction:.0f} %, {now - self.start:.0f} s)", file=self.stream, flush=True)
