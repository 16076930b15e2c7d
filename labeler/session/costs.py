"""What a session will cost before it is allocated: its memory, its dense step's time, and the
posterior that follows from both.

Pure functions of the pool's size, the features the kernel sees, the classes and a low-rank
posterior's rank, read by the creation checks of :mod:`labeler.session.config` (the posterior
"auto" resolves to, the memory check) and by :func:`labeler.session.model.build_learner` (the
memory check before it allocates; the size above which a dense posterior's picks are
subsampled). Nothing here builds or reads a learner.

Memory is checked before it is spent
------------------------------------
The dense learner holds the posterior covariance C, one n x n float64 matrix (8 n^2 bytes),
and needs working memory besides: per-point arrays (features, outputs, weights), the scores of
a query, and the n x k blocks of a block update of k labels (the initial labels, or the
labelled points reweighted under "balanced" weights). :func:`session_bytes` estimates the peak
(measured: 1.07-1.7 x 8 n^2 for n = 3,000-6,000 with up to 1,000 labels),
:func:`available_memory` reads what the machine can give (``MemAvailable`` of
``/proc/meminfo``, capped by a cgroup limit: :mod:`labeler.memory`), and :func:`check_memory`
refuses a session that does not fit with :class:`MemoryBudgetError`, saying how many points
would fit. :func:`labeler.session.model.build_learner` checks before it allocates, so neither
creating nor reopening a session runs into a ``MemoryError`` (or the kernel's OOM killer)
half-way. A low-rank posterior's estimate is :func:`factor_bytes`, a graph model's
:func:`labeler.session.graphs.graph_bytes`.

The dense step's time
---------------------
:func:`dense_step_seconds` estimates one exact dense step (score every point, apply the exact
update: the work of a key press); :func:`choose_posterior` keeps the dense posterior for
``"auto"`` while that step and the memory fit, and :func:`dense_exact_pick_max_points` is the
pool size above which a dense posterior's picks are subsampled.
"""

from __future__ import annotations

import numpy as np

from labeler.memory import available_memory, format_bytes as _gib

from .graphs import ZHU_SESSION_MAX, graph_bytes
from .lowrank import DEFAULT_KNN, default_rank

__all__ = [
    "MemoryBudgetError",
    "MEMORY_FRACTION",
    "POSTERIORS",
    "AUTO_DENSE_FRACTION",
    "DENSE_STEP_TARGET_S",
    "DENSE_STEP_S_PER_N2",
    "DENSE_STEP_PER_CLASS",
    "session_bytes",
    "factor_bytes",
    "estimate_bytes",
    "max_points",
    "available_memory",
    "check_memory",
    "dense_step_seconds",
    "dense_latency_max_points",
    "dense_exact_pick_max_points",
    "choose_posterior",
]

#: Fraction of the available memory a session may take (the rest: the app, other tabs, the OS).
MEMORY_FRACTION = 0.9
_BLOCK_LABELS = 256  # labels of a block update the estimate always allows for
_FIXED_BYTES = 32 << 20  # numba and numpy working buffers that do not grow with n
_LOW_RANK_HINT = "a low-rank posterior: --posterior nystrom (in the app: posterior 'nystrom')"

#: Posteriors of a session: "auto" is resolved at creation (:func:`choose_posterior`).
POSTERIORS = ("auto", "dense", "nystrom", "spectral")
#: "auto" keeps the exact dense learner while twice its memory (a re-tune builds the new n x n
#: matrix beside the one answering) is under this share of the free memory, and while its
#: exact step fits the key press (:func:`dense_latency_max_points`).
AUTO_DENSE_FRACTION = 0.5
#: A dense posterior scores every candidate exactly (its expected-risk picks) while this step
#: (score every point, apply the exact update: the work of a key press) is estimated under this
#: many seconds (:func:`dense_step_seconds`, :func:`dense_latency_max_points`): the app's target
#: from key press to next query (issue 23: 300 ms at 2 x 10^4 points). On a larger pool it picks
#: by :class:`core.criteria.subsampled.SubsampledExpectedRisk` (as the low-rank posteriors do
#: above :data:`labeler.session.lowrank.SUBSAMPLE_ABOVE` points), on the exact model.
DENSE_STEP_TARGET_S = 0.3
#: Seconds per n^2 of one exact binary step on this project's 2-core machine, quiet: the step is
#: memory-bound (about three passes over the n x n covariance). Measured by
#: ``python benchmarks/arls_step.py``: 136 ms at n = 10,000 and 408 ms at n = 20,000
#: (docs/benchmarks.md §1), 1.0e-9 s n^2 at the larger.
DENSE_STEP_S_PER_N2 = 1.0e-9
#: One-vs-all with T classes costs about this times T binary steps (scoring is O(n T) per
#: candidate): T = 10 with "balanced" weights measured 7.8 x the binary step
#: (docs/benchmarks.md §1; ``python benchmarks/multiclass_step.py`` on several data sets).
DENSE_STEP_PER_CLASS = 0.8


class MemoryBudgetError(ValueError):
    """The session would need more memory than the machine has available."""


def _linear_bytes(n_features: int, n_classes: int, n_block: int) -> int:
    """Bytes per point besides C: features, outputs and scores (T columns), a block update."""
    T = 1 if n_classes <= 2 else int(n_classes)
    return 8 * (int(n_features) + 4 * T + 32) + 28 * max(int(n_block), _BLOCK_LABELS)


def session_bytes(n_samples: int, n_features: int, n_classes: int = 2, n_block: int = 0) -> int:
    """Estimated peak memory of a dense session, in bytes.

    ``8 n^2`` for C, plus per point ``8 (d + 4 T + 32)`` (features, outputs, scores) and
    ``28 k`` for a block update of ``k = max(n_block, 256)`` labels, plus a fixed 32 MiB.

    Parameters
    ----------
    n_samples, n_features : int
        Pool size n and the number of features the kernel sees.
    n_classes : int
        Number of classes (T = 1 output column for two, else T = n_classes).
    n_block : int
        Largest block of labels given at once (the initial labels).
    """
    n = int(n_samples)
    return 8 * n * n + n * _linear_bytes(n_features, n_classes, n_block) + _FIXED_BYTES


def max_points(budget: float, n_features: int, n_classes: int = 2, n_block: int = 0) -> int:
    """The largest pool size whose :func:`session_bytes` fits in ``budget`` bytes."""
    b, c = _linear_bytes(n_features, n_classes, n_block), _FIXED_BYTES
    room = float(budget) - c
    if room <= 0:
        return 0
    n = int((-b + np.sqrt(b * b + 32.0 * room)) / 16.0)
    while n > 0 and session_bytes(n, n_features, n_classes, n_block) > budget:
        n -= 1
    return n


def factor_bytes(n_samples: int, n_features: int, n_classes: int = 2, rank: int = 300,
                 posterior: str = "nystrom", knn: int = 10) -> int:
    """Estimated peak memory of a session on a low-rank posterior, in bytes.

    ``8 n r`` for the factor ``Phi`` (taken over by the posterior, never copied) times 1.25
    (the block temporaries of the build and of the mean updates), plus per point two copies
    of the features (the data set's and the kernel's), the outputs and scores (as
    :func:`session_bytes`, without the n x k blocks a dense block update needs: a factor's
    updates are r x r), the candidate block of the subsampled score (at most 64 MiB), plus
    a fixed 32 MiB. A spectral factor also holds the kNN graph and its Laplacian (about
    ``200 n k`` bytes with the approximate search's index) and the Lanczos basis of the
    eigensolver (``2 r`` vectors of n).
    """
    n, r, T = int(n_samples), int(rank), 1 if n_classes <= 2 else int(n_classes)
    per_point = 8 * (2 * int(n_features) + 4 * T + 32)
    need = int(1.25 * 8 * n * r) + n * per_point + _FIXED_BYTES + (64 << 20)
    if posterior == "spectral":
        need += 200 * n * int(knn) + 8 * n * 2 * r
    return need


def estimate_bytes(posterior: str, n_samples: int, n_features: int, n_classes: int = 2, n_block: int = 0,
                   rank: int | None = None, knn: int = DEFAULT_KNN) -> int:
    """:func:`session_bytes` (dense), :func:`factor_bytes` (nystrom, spectral) or
    :func:`graph_bytes` ("graph": with Zhu's inverse up to :data:`ZHU_SESSION_MAX` points)."""
    if posterior == "graph":
        return graph_bytes(n_samples, n_features, n_classes, knn, zhu=int(n_samples) <= ZHU_SESSION_MAX)
    if posterior == "dense":
        return session_bytes(n_samples, n_features, n_classes, n_block)
    rank = default_rank(posterior, n_samples) if rank is None else int(rank)
    return factor_bytes(n_samples, n_features, n_classes, rank, posterior, knn)


def dense_step_seconds(n_samples: int, n_classes: int = 2) -> float:
    """Estimated seconds of one exact dense step (score all, update) on a quiet machine:
    ``DENSE_STEP_S_PER_N2 n^2``, times ``DENSE_STEP_PER_CLASS T`` for one-vs-all (T >= 3)."""
    n, T = float(n_samples), int(n_classes)
    per_class = 1.0 if T <= 2 else max(1.0, DENSE_STEP_PER_CLASS * T)
    return DENSE_STEP_S_PER_N2 * n * n * per_class


def dense_latency_max_points(n_classes: int = 2) -> int:
    """The largest pool whose :func:`dense_step_seconds` is within :data:`DENSE_STEP_TARGET_S`
    (17,320 points for two classes, 6,123 for ten): the largest a dense posterior scores
    every candidate of exactly with ``n_classes`` classes (a dense posterior's picks are
    subsampled beyond the binary size: :func:`dense_exact_pick_max_points`)."""
    T = int(n_classes)
    per_class = 1.0 if T <= 2 else max(1.0, DENSE_STEP_PER_CLASS * T)
    return int(np.sqrt(DENSE_STEP_TARGET_S / (DENSE_STEP_S_PER_N2 * per_class)))


def dense_exact_pick_max_points() -> int:
    """The largest pool a dense posterior scores every candidate of exactly: the binary
    :func:`dense_latency_max_points` (17,320 points). It depends on the pool size only, never on
    the classes, so that a session rebuilt after a class was added (a reopen, a re-tune) picks
    as the live one did."""
    return dense_latency_max_points(2)


def choose_posterior(requested: str, n_samples: int, n_features: int, n_classes: int = 2, n_block: int = 0,
                     available: int | None = None) -> tuple[str, str]:
    """The posterior of a new session, and in words why.

    ``"auto"``: dense (the exact learner) while its exact step fits the latency target (at most
    :func:`dense_latency_max_points`: :func:`dense_step_seconds` within
    :data:`DENSE_STEP_TARGET_S`) and twice its :func:`session_bytes` (a re-tune builds the new
    matrix beside the old) is under :data:`AUTO_DENSE_FRACTION` of the available memory, else
    ``"nystrom"``; any other name is returned as given. (A dense posterior chosen on a larger
    pool picks by the subsampled expected risk: :func:`labeler.session.model.build_learner`.)

    Returns
    -------
    posterior : {"dense", "nystrom", "spectral"}
    note : str
        Empty unless "auto" chose a low-rank posterior (the CLI prints it, the app shows it).
    """
    if requested not in POSTERIORS:
        raise ValueError(f"Unknown posterior {requested!r}; choose one of {', '.join(POSTERIORS)}.")
    if requested != "auto":
        return requested, ""
    # twice the session: a width re-tune builds the new n x n matrix beside the one answering
    need = 2 * session_bytes(n_samples, n_features, n_classes, n_block)
    avail = available_memory() if available is None else available
    fits_memory = avail is None or need <= AUTO_DENSE_FRACTION * avail
    step = dense_step_seconds(n_samples, n_classes)
    if fits_memory and step <= DENSE_STEP_TARGET_S:
        return "dense", ""  # the default stays silent (the CLI prints the posterior anyway)
    if fits_memory:
        return "nystrom", (
            f"nystrom, rank {default_rank('nystrom', n_samples)}: an exact dense step on {int(n_samples):,} points "
            f"and {int(n_classes)} classes takes about {step:.1f} s on a quiet 2-core machine, over the "
            f"{1e3 * DENSE_STEP_TARGET_S:.0f} ms a key press may take (the exact learner answers within it up to "
            f"{dense_latency_max_points(n_classes):,} points); the low-rank posterior approximates the kernel "
            f"(--posterior dense to insist: beyond that size its picks are subsampled; --rank to change the rank)"
        )
    return "nystrom", (
        f"nystrom, rank {default_rank('nystrom', n_samples)}: a dense posterior of {int(n_samples):,} points "
        f"would need about {_gib(need)} (its n x n matrix twice while a re-tune rebuilds it), more than half of "
        f"the {_gib(avail)} available; the low-rank "
        f"posterior approximates the kernel (--posterior dense to insist, --rank to change the rank)"
    )


def check_memory(n_samples: int, n_features: int, n_classes: int = 2, n_block: int = 0,
                 available: int | None = None, posterior: str = "dense", rank: int | None = None,
                 knn: int = DEFAULT_KNN) -> int:
    """Refuse a session that does not fit in the available memory, before it is allocated.

    Parameters
    ----------
    n_samples, n_features, n_classes, n_block : int
        See :func:`session_bytes`.
    available : int, optional
        Bytes available; default :func:`available_memory` (no check when it is unknown).
    posterior : {"dense", "nystrom", "spectral"}
    rank, knn : int, optional
        Of a low-rank posterior (:func:`factor_bytes`).

    Returns
    -------
    int
        The estimated bytes (:func:`estimate_bytes`).

    Raises
    ------
    MemoryBudgetError
        More than :data:`MEMORY_FRACTION` of the available memory would be needed; the
        message says how much, how many points fit, and what to do (a dense posterior that
        does not fit names ``--posterior nystrom``).
    """
    need = estimate_bytes(posterior, n_samples, n_features, n_classes, n_block, rank, knn)
    avail = available_memory() if available is None else available
    if avail is None or need <= MEMORY_FRACTION * avail:
        return need
    n = int(n_samples)
    if posterior == "graph":
        raise MemoryBudgetError(
            f"A graph-model session on {n:,} points needs about {_gib(need)} of memory, but only "
            f"{_gib(avail)} is available now. Choose fewer neighbours (knn), subsample the data, or free memory."
        )
    if posterior != "dense":
        r = default_rank(posterior, n) if rank is None else int(rank)
        raise MemoryBudgetError(
            f"A {posterior} session on {n:,} points with rank {r} needs about {_gib(need)} of memory "
            f"(the factor alone is 8 n r bytes = {_gib(8 * n * r)}), but only {_gib(avail)} is "
            f"available now. Choose a smaller rank (--rank), subsample the data, or free memory."
        )
    fit = max_points(MEMORY_FRACTION * avail, n_features, n_classes, n_block)
    raise MemoryBudgetError(
        f"A session on {n:,} points needs about {_gib(need)} of memory (the exact learner keeps "
        f"an n x n matrix: 8 n^2 bytes = {_gib(8 * n * n)}, plus working memory), but only "
        f"{_gib(avail)} is available now. At most about {fit:,} points fit densely. Use {_LOW_RANK_HINT}, "
        f"which keeps an n x r factor instead (about "
        f"{_gib(factor_bytes(n, n_features, n_classes, default_rank('nystrom', n)))}), or posterior "
        f"'auto'; or subsample the data, or free memory (close other sessions or programs)."
    )
