"""The model factory: the one place that builds the session's learner and changes its settings.

A session's model is described by a :class:`ModelSpec` (kernel, width, lam, weighting,
strategy, seed), read from its :class:`~labeler.session.config.SessionConfig`. This module
turns a spec into an :class:`core.learner.ActiveRLS` (:func:`build_learner`), applies a change of
spec to a live learner (:func:`apply`, :func:`add_class`: the learner's exact updates, each
leaving the learner as it was when it raises) and tunes lam and the width by leave-one-out on
the labelled points (:func:`tune`, through :func:`core.rls.tuning.tune_lam_width`, the tuner
that ``labeler.experiments.simulate`` uses too). Nothing else in the labeler constructs an ``ActiveRLS`` or a
``Kernel``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from core.learner import ActiveRLS
from core.kernels import Kernel
from core.rls.tuning import LooTuning, loo_readiness, tune_lam_width
from core.rls import default_widths

__all__ = [
    "ModelSpec",
    "build_learner",
    "apply",
    "add_class",
    "tune",
    "width_grid",
    "median_distance",
]

_MEDIAN_AT = 6  # default_widths is median * 2**[-3, -2.5, ..., 2]: index 6 is the factor 2**0


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
        """A copy with one setting changed ("width", "lam", "weighting" or "strategy")."""
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


def build_learner(spec: ModelSpec, X: np.ndarray, classes) -> ActiveRLS:
    """A new learner without labels on the pool ``X`` with the settings of ``spec``.

    Parameters
    ----------
    spec : ModelSpec
    X : ndarray of shape (n_samples, n_features)
        The features the kernel sees.
    classes : list of str

    Returns
    -------
    core.learner.ActiveRLS
    """
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
    fixed subsample of at most 1000 points) times ``2**[-3, -2.5, ..., 2]``."""
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
