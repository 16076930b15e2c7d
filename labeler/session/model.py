"""The model factory: the one place that builds the session's learner and changes its settings.

A session's model is described by a :class:`ModelSpec` (kernel, width, lam, weighting,
strategy, seed), read from its :class:`~labeler.session.config.SessionConfig`. This module
turns a spec into an :class:`core.learner.ActiveRLS` (:func:`build_learner`), applies a change of
spec to a live learner (:func:`apply`, :func:`add_class`: the learner's exact updates, each
leaving the learner as it was when it raises) and tunes lam and the width by leave-one-out on
the labelled points (:func:`tune`, through :func:`core.rls.tuning.tune_lam_width`, the tuner
that ``labeler.experiments.simulate`` uses too). Nothing else in the labeler constructs an ``ActiveRLS`` or a
``Kernel``.

Memory is checked before it is spent
------------------------------------
The dense learner holds the posterior covariance C, one n x n float64 matrix (8 n^2 bytes),
and needs working memory besides: per-point arrays (features, outputs, weights), the scores of
a query, and the n x k blocks of a block update of k labels (the initial labels, or the
labelled points reweighted under "balanced" weights). :func:`session_bytes` estimates the peak
(measured: 1.07-1.7 x 8 n^2 for n = 3,000-6,000 with up to 1,000 labels),
:func:`available_memory` reads what the machine can give (``MemAvailable`` of
``/proc/meminfo``, capped by a cgroup limit), and :func:`check_memory` refuses a session that
does not fit with :class:`MemoryBudgetError`, saying how many points would fit.
:func:`build_learner` checks before it allocates, so neither creating nor reopening a session
runs into a ``MemoryError`` (or the kernel's OOM killer) half-way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from core.learner import ActiveRLS
from core.kernels import Kernel
from core.rls.tuning import AutoTuning, LooTuning, auto_tune as _auto_tune, loo_readiness, tune_lam_width
from core.rls import default_widths
from core.validation import check_features, check_magnitude
from labeler.memory import available_memory, format_bytes as _gib

__all__ = [
    "MemoryBudgetError",
    "session_bytes",
    "max_points",
    "available_memory",
    "check_memory",
    "ModelSpec",
    "build_learner",
    "apply",
    "add_class",
    "tune",
    "auto_tune",
    "MODEL_SETTINGS",
    "width_grid",
    "median_distance",
]

#: The settings that change the learner (``auto_tune`` only says which of them re-tune).
MODEL_SETTINGS = ("width", "lam", "weighting", "strategy")

_MEDIAN_AT = 6  # default_widths is median * 2**[-3, -2.5, ..., 2]: index 6 is the factor 2**0


# --------------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------------

#: Fraction of the available memory a session may take (the rest: the app, other tabs, the OS).
MEMORY_FRACTION = 0.9
_BLOCK_LABELS = 256  # labels of a block update the estimate always allows for
_FIXED_BYTES = 32 << 20  # numba and numpy working buffers that do not grow with n
_LOW_RANK_HINT = "a low-rank posterior (planned)"


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


def check_memory(n_samples: int, n_features: int, n_classes: int = 2, n_block: int = 0,
                 available: int | None = None) -> int:
    """Refuse a session that does not fit in the available memory, before it is allocated.

    Parameters
    ----------
    n_samples, n_features, n_classes, n_block : int
        See :func:`session_bytes`.
    available : int, optional
        Bytes available; default :func:`available_memory` (no check when it is unknown).

    Returns
    -------
    int
        The estimated bytes (:func:`session_bytes`).

    Raises
    ------
    MemoryBudgetError
        More than :data:`MEMORY_FRACTION` of the available memory would be needed; the
        message says how much, how many points fit, and what to do.
    """
    need = session_bytes(n_samples, n_features, n_classes, n_block)
    avail = available_memory() if available is None else available
    if avail is None or need <= MEMORY_FRACTION * avail:
        return need
    n = int(n_samples)
    fit = max_points(MEMORY_FRACTION * avail, n_features, n_classes, n_block)
    raise MemoryBudgetError(
        f"A session on {n:,} points needs about {_gib(need)} of memory (the exact learner keeps "
        f"an n x n matrix: 8 n^2 bytes = {_gib(8 * n * n)}, plus working memory), but only "
        f"{_gib(avail)} is available now. At most about {fit:,} points fit: subsample the data "
        f"(or choose a smaller pool size), free memory (close other sessions or programs), or "
        f"wait for {_LOW_RANK_HINT}, which will keep an n x r factor instead."
    )


@dataclass(frozen=True)
class ModelSpec:
    """The settings that define a session's learner and how it queries (immutable, hashable).

    Parameters
    ----------
    kernel : {"rbf", "linear", "poly"}
    width : float or None
        RBF width ``s`` in ``exp(-||x - x'||^2 / (2 s^2))``; None for other kernels.
    lam : float
        Regularisation ``lam > 0``.
    weighting : "none", "balanced" or tuple of (class, weight) pairs
        Class weighting; a dict of the configuration is kept as sorted pairs (hashable).
    strategy : {"arls", "margin", "random"}
        Query strategy (:mod:`core.strategies`); no part of the learner itself.
    seed : int
        The learner's ``random_state``.
    """

    kernel: str = "rbf"
    width: float | None = None
    lam: float = 0.1
    weighting: str | tuple = "balanced"
    strategy: str = "arls"
    seed: int = 0

    @classmethod
    def from_config(cls, config) -> ModelSpec:
        """The spec of a resolved :class:`~labeler.session.config.SessionConfig` (numbers, not
        "auto")."""
        spec = cls(kernel=config.kernel, seed=int(config.seed), strategy=config.strategy, lam=float(config.lam))
        spec = spec.with_setting("weighting", config.weighting)
        return spec.with_setting("width", config.width) if config.kernel == "rbf" else spec

    def with_setting(self, name: str, value) -> ModelSpec:
        """A copy with one setting changed ("width", "lam", "weighting" or "strategy");
        ``"auto_tune"`` (which values the session re-tunes) leaves the model as it is."""
        if name == "auto_tune":
            return self
        if name == "weighting" and isinstance(value, dict):
            value = tuple(sorted((str(k), float(v)) for k, v in value.items()))
        elif name in ("width", "lam"):
            value = float(value)
        elif name not in ("weighting", "strategy"):
            raise ValueError(f"Unknown setting {name!r}; settings are width, lam, weighting, strategy.")
        return replace(self, **{name: value})

    def kernel_function(self) -> Kernel:
        """The :class:`core.kernels.Kernel` of this spec."""
        if self.kernel == "rbf":
            return Kernel("rbf", width=float(self.width))
        return Kernel(self.kernel)

    def learner_weighting(self, classes) -> str | dict:
        """The weighting as ``ActiveRLS`` takes it: a dict names every class of ``classes``
        (a class added after the weights were set weighs 1)."""
        if isinstance(self.weighting, tuple):
            given = dict(self.weighting)
            return {c: float(given.get(c, 1.0)) for c in classes}
        return self.weighting


def build_learner(spec: ModelSpec, X: np.ndarray, classes, n_block: int = 0) -> ActiveRLS:
    """A new learner without labels on the pool ``X`` with the settings of ``spec``.

    Parameters
    ----------
    spec : ModelSpec
    X : ndarray of shape (n_samples, n_features)
        The features the kernel sees.
    classes : list of str
    n_block : int
        Labels the caller will give in one block update next (reopening a session).

    Returns
    -------
    core.learner.ActiveRLS

    Raises
    ------
    MemoryBudgetError
        The learner would not fit in the available memory (:func:`check_memory`); nothing
        is allocated.
    """
    check_memory(X.shape[0], X.shape[1], len(classes), n_block)
    return ActiveRLS.from_features(
        X, classes=list(classes), kernel=spec.kernel_function(), lam=float(spec.lam),
        weighting=spec.learner_weighting(classes), random_state=spec.seed,
    )


def _steps(old: ModelSpec, new: ModelSpec, learner: ActiveRLS) -> list:
    """The learner updates that take ``old`` to ``new``, each with its inverse."""
    if new.kernel != old.kernel:
        raise ValueError(
            f"The kernel of a session cannot change ({old.kernel!r} -> {new.kernel!r}); create a "
            "new session with the other kernel."
        )
    classes = learner.classes
    steps = []
    if new.weighting != old.weighting:
        steps.append((lambda: learner.set_weighting(new.learner_weighting(classes)),
                      lambda: learner.set_weighting(old.learner_weighting(classes))))
    if new.lam != old.lam:
        steps.append((lambda: learner.set_lam(new.lam), lambda: learner.set_lam(old.lam)))
    if new.width != old.width:  # C refilled in place with the new kernel
        steps.append((lambda: learner.set_kernel(new.kernel_function()),
                      lambda: learner.set_kernel(old.kernel_function())))
    return steps


def apply(old: ModelSpec, new: ModelSpec, learner: ActiveRLS) -> ActiveRLS:
    """Change the live ``learner`` from the settings of ``old`` to those of ``new``.

    Every change is the learner's exact update (``set_weighting``, ``set_lam``: a block
    reweight; ``set_kernel``: ``C`` refilled in place). All or nothing: when one raises (the
    learner rejects the value, e.g. ``K_LL + Lambda_L`` is not positive definite), the ones
    already made are undone and the error is raised, so the learner keeps ``old``.

    Parameters
    ----------
    old, new : ModelSpec
    learner : core.learner.ActiveRLS
        A learner in the state of ``old``.

    Returns
    -------
    core.learner.ActiveRLS
        ``learner``.

    Raises
    ------
    ValueError
        ``numpy.linalg.LinAlgError`` (a ValueError) when the learner rejects a value; a
        change of kernel family.
    """
    done = []
    try:
        for forward, backward in _steps(old, new, learner):
            forward()
            done.append(backward)
    except BaseException:
        for backward in reversed(done):
            backward()
        raise
    return learner


def add_class(spec: ModelSpec, learner: ActiveRLS, name: str) -> ActiveRLS:
    """Add the class ``name`` to the live learner (binary -> one-vs-all); with a dict
    weighting the new class gets weight 1, explicitly.

    Raises
    ------
    ValueError
        The learner rejects it (it may then hold the class without the dict weight: rebuild
        it with :func:`build_learner`).
    """
    learner.add_class(name)
    if isinstance(spec.weighting, tuple):
        learner.set_weighting(spec.learner_weighting(learner.classes))
    return learner


def width_grid(X: np.ndarray) -> np.ndarray:
    """:func:`core.rls.default_widths` of the pool: median pairwise Euclidean distance (over a
    fixed subsample of at most 1000 points) times ``2**[-3, -2.5, ..., 2]``.

    Raises
    ------
    ValueError
        A column's values overflow float64 when squared (named by
        :func:`core.validation.check_magnitude`), or the median distance is 0.
    """
    check_magnitude(check_features(X, min_samples=2))
    try:
        return default_widths(X)
    except ValueError:
        raise ValueError(
            "Cannot choose the RBF width automatically: the median distance between the points "
            "is 0 (duplicated or constant points). Pass width=<number> in SessionConfig."
        ) from None


def median_distance(X: np.ndarray) -> float:
    """Median pairwise Euclidean distance of ``X``: the centre of :func:`width_grid`."""
    return float(width_grid(X)[_MEDIAN_AT])


def tune(spec: ModelSpec, learner: ActiveRLS, X: np.ndarray, widths=None, lams="auto") -> LooTuning:
    """Exact LOO choice of lam (and the width) on the learner's labelled points.

    The model tuned is the one the learner runs: weighted RLS without offset, its class
    weights and target codes (:mod:`core.rls.tuning`).

    Parameters
    ----------
    spec : ModelSpec
        The current settings (kernel and width).
    learner : core.learner.ActiveRLS
    X : ndarray of shape (n_samples, n_features)
        The learner's pool.
    widths : ndarray of shape (W,), optional
        RBF widths to choose from; default the spec's width.
    lams : "auto" or array-like
        Lambda grid; ``[spec.lam]`` tunes the width alone.

    Returns
    -------
    core.rls.tuning.LooTuning

    Raises
    ------
    ValueError
        Too few labels (the rule of :func:`core.rls.tuning.loo_readiness`; nothing is tuned).
    """
    labels = learner.labels
    reason = loo_readiness(list(labels.values()))
    if reason:
        raise ValueError(reason)
    idx = np.fromiter(labels, dtype=np.intp, count=len(labels))
    return tune_lam_width(X[idx], list(labels.values()), learner.classes, learner.class_weights,
                          kernel=spec.kernel_function(), lams=lams, widths=widths,
                          default_lam=spec.lam)


def auto_tune(spec: ModelSpec, learner: ActiveRLS, X: np.ndarray, *, tune_width: bool, tune_lam: bool,
              widths=None) -> AutoTuning:
    """The automatic re-tune of the session's width and lam on the learner's labelled points
    (:func:`core.rls.tuning.auto_tune`: the width when a width on the grid has a strictly lower
    LOO error, lam on decisive evidence). Reads the learner, changes nothing.

    Parameters
    ----------
    spec : ModelSpec
        The settings in use.
    learner : core.learner.ActiveRLS
    X : ndarray of shape (n_samples, n_features)
        The learner's pool.
    tune_width, tune_lam : bool
        Which values may move (the width only with the RBF kernel).
    widths : ndarray, optional
        Width grid; default :func:`width_grid` of ``X``.

    Raises
    ------
    ValueError
        Too few labels (:func:`core.rls.tuning.loo_readiness`).
    """
    labels = learner.labels
    idx = np.fromiter(labels, dtype=np.intp, count=len(labels))
    rbf = spec.kernel == "rbf"
    if rbf and tune_width and widths is None:
        widths = width_grid(X)
    return _auto_tune(X[idx], list(labels.values()), learner.classes, learner.class_weights,
                      kernel=spec.kernel_function(), lam=spec.lam, tune_width=rbf and tune_width,
                      tune_lam=tune_lam, widths=widths, seed=spec.seed)
