"""Leave-one-out choice of ``lam`` and the RBF width for the model ARLS runs.

One tuner for every caller: the labelling session (``set_lam("auto")``, ``set_width("auto")``,
the LOO curve it draws) and the simulation (:func:`labeler.experiments.simulate.resolve_lam`), so the same
labels give the same choice everywhere.

The model (ALGORITHMS §1 last line, §3): weighted RLS without offset on the labelled points,
with the learner's per-point weights ``w_j = w_{y_j}`` (its class weights, whatever its
weighting: "none", "balanced" or a dict; the caller reads them from the learner, so there is
one meaning of "balanced": the learner's) and the learner's target codes (one column +1 /
-1 for two classes, else one-vs-all over EVERY class, also those without a label yet)::

    f = K_XL (K_LL + lam diag(1/w))^-1 Y_L         i.e. loss weights a_j = w_j

Exact LOO (:func:`core.rls.loo_path`, seed 002 eq. A.33): residual ``c_i / (a_i G^-1_ii)``
with ``G = W K_LL W + lam I``; one eigendecomposition of ``W K_LL W`` serves a whole lambda
grid. The rule:

* Score: the weighted LOO classification error ``sum_i w_i [class of f_-i(x_i) != y_i] /
  sum_i w_i`` (decision rule of :func:`core.criteria.risk.predicted_class_indices`).
* Lambda grid: ``lams="auto"`` is ``n_lams`` geometric values between the smallest positive and
  the largest eigenvalue of ``W K_LL W``; or a given grid. Ties go to the LARGEST lam (seed
  002 §4.1).
* Width grid (RBF): each width at its chosen lam; the least error wins, ties go to the least
  LOO squared error, then to the largest width (as :class:`core.rls.WeightedRLSClassifier`).
* Enough labels: at least :data:`MIN_LOO_LABELS` labels, of at least two classes, and at
  least two labels of every labelled class (leaving out a class's only label always
  misclassifies it, so the curve would only measure that). Otherwise LOO cannot judge: the
  tuner warns (:class:`LooTuningWarning`) and returns ``default_lam`` and the given width,
  with ``tuned=False`` and the reason. :func:`loo_readiness` states the same rule for callers
  that prefer to refuse (the session raises ``ValueError`` with the reason).

Numerics only (numpy, scipy through :mod:`core.rls`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from ..kernels import Kernel
from ..criteria.risk import target_codes
from .loo import loo_path, select_index

__all__ = [
    "DEFAULT_LAM",
    "MIN_LOO_LABELS",
    "LooTuning",
    "LooTuningWarning",
    "loo_readiness",
    "tune_lam_width",
]

#: lam returned when there are too few labels for leave-one-out. The thesis' experiments use
#: 0.1-0.5 on unit-scale RBF kernels (ALGORITHMS §4).
DEFAULT_LAM = 0.1

#: Fewest labels LOO tuning runs on (two classes with two labels each).
MIN_LOO_LABELS = 4


class LooTuningWarning(UserWarning):
    """Too few labels for leave-one-out: the default was returned instead of a tuned value."""


@dataclass(frozen=True)
class LooTuning:
    """The result of :func:`tune_lam_width`.

    Attributes
    ----------
    lam : float
        The chosen regularisation (``default_lam`` when not tuned).
    width : float or None
        The chosen RBF width (the kernel's own when no width grid was given or not tuned);
        None for other kernels and precomputed kernel matrices.
    tuned : bool
        False when there were too few labels (see ``reason``).
    error : float
        Weighted LOO classification error at the choice (NaN when not tuned).
    squared : float
        Weighted mean LOO squared error at the choice (NaN when not tuned).
    curve : dict of ndarray
        At the chosen width: ``"lam"``, ``"classification"``, ``"squared"`` of shape (L,).
        With a width grid also ``"width"``, ``"width_lam"``, ``"width_classification"``,
        ``"width_squared"`` of shape (W,): each width at its own chosen lam. Empty when not
        tuned.
    reason : str
        Why LOO was not run (empty when tuned).
    """

    lam: float
    width: float | None
    tuned: bool
    error: float = float("nan")
    squared: float = float("nan")
    curve: dict = field(default_factory=dict)
    reason: str = ""


def loo_readiness(labels) -> str:
    """Why LOO cannot tune on these labels, or ``""`` when it can (the module's rule).

    Parameters
    ----------
    labels : array-like of shape (n_labeled,)
        The class of every labelled point.

    Returns
    -------
    str
        Empty, or a sentence ending in "Label more points first."
    """
    y = np.asarray(labels, dtype=object).ravel()
    present, counts = np.unique(y.astype(str), return_counts=True) if y.size else ([], np.zeros(0))
    if y.size < MIN_LOO_LABELS or len(present) < 2:
        return (
            f"Leave-one-out tuning needs at least {MIN_LOO_LABELS} labelled points of at least 2 "
            f"classes; there are {y.size} of {len(present)} class(es). Label more points first."
        )
    single = [str(c) for c, k in zip(present, counts) if k < 2]
    if single:
        return (
            f"Leave-one-out tuning needs at least 2 labels of every labelled class; "
            f"{', '.join(single[:5])}{' ...' if len(single) > 5 else ''} "
            f"{'has' if len(single) == 1 else 'have'} only one. Label more points first."
        )
    return ""


def _point_weights(labels: list, classes: list, class_weights) -> tuple[np.ndarray, np.ndarray]:
    """Class index and weight ``w_{y_j}`` of every labelled point."""
    index = {c: t for t, c in enumerate(classes)}
    unknown = [v for v in labels if v not in index]
    if unknown:
        raise ValueError(f"labels {unknown[:5]!r} are not among the classes {classes!r}.")
    if isinstance(class_weights, dict):
        missing = [c for c in classes if c not in class_weights]
        if missing:
            raise ValueError(
                f"class_weights lacks class(es) {missing!r}; pass the learner's class_weights "
                "(a weight for every class)."
            )
        w = np.array([class_weights[c] for c in classes], dtype=np.float64)
    else:
        w = np.asarray(class_weights, dtype=np.float64)
        if w.shape != (len(classes),):
            raise ValueError(
                f"class_weights must be a dict {{class: weight}} or one weight per class "
                f"({len(classes)}); got shape {w.shape}."
            )
    if not np.all(np.isfinite(w)) or np.any(w <= 0):
        raise ValueError(f"class weights must be finite numbers > 0; got {w.tolist()}.")
    cls = np.array([index[v] for v in labels], dtype=np.intp)
    return cls, w[cls]


def tune_lam_width(X, labels, classes, class_weights, *, kernel, lams="auto", widths=None,
                   default_lam: float = DEFAULT_LAM, n_lams: int = 50) -> LooTuning:
    """Choose ``lam`` (and the RBF width) by exact LOO on the labelled points.

    Parameters
    ----------
    X : array-like of shape (n_labeled, n_features), or (n_labeled, n_labeled)
        The labelled points' features, or their kernel matrix ``K_LL`` when
        ``kernel="precomputed"``.
    labels : sequence of length n_labeled
        The class of every labelled point (each one of ``classes``).
    classes : sequence
        The learner's classes in its order: their number and order fix the target codes.
    class_weights : dict {class: weight} or array-like of shape (n_classes,)
        The learner's class weights (``ActiveRLS.class_weights``); point ``j`` weighs
        ``w_{y_j}``.
    kernel : core.kernels.Kernel or "precomputed"
        The kernel; its width is the fixed width when ``widths`` is None.
    lams : "auto" or array-like of float > 0
        Lambda grid (see the module docstring); one value fixes lam (e.g. to tune the width).
    widths : array-like of float > 0, optional
        RBF widths to choose from (``kernel`` must be RBF).
    default_lam : float
        Returned when there are too few labels.
    n_lams : int
        Size of the ``"auto"`` grid.

    Returns
    -------
    LooTuning

    Warns
    -----
    LooTuningWarning
        Too few labels (:func:`loo_readiness`): ``default_lam`` and the kernel's width are
        returned, ``tuned=False``.

    Raises
    ------
    ValueError
        Labels outside ``classes``, bad weights, grids or kernel; a kernel matrix that is not
        positive semi-definite.
    """
    precomputed = isinstance(kernel, str) and kernel == "precomputed"
    if not precomputed and not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a core.kernels.Kernel or 'precomputed'; got {kernel!r}.")
    if widths is not None:
        if precomputed or kernel.kind != "rbf":
            raise ValueError("A width grid needs an RBF kernel; pass widths=None for other kernels.")
        widths = np.atleast_1d(np.asarray(widths, dtype=np.float64))
        if widths.ndim != 1 or widths.size == 0 or not np.all(np.isfinite(widths)) or np.any(widths <= 0):
            raise ValueError(f"widths must be a non-empty list of numbers > 0; got {widths.tolist()}.")
    fixed_width = None if precomputed or kernel.kind != "rbf" else float(kernel.width)
    grid = None if isinstance(lams, str) and lams == "auto" else np.atleast_1d(np.asarray(lams, dtype=np.float64))
    if isinstance(lams, str) and lams != "auto":
        raise ValueError(f"lams must be 'auto' or a sequence of numbers > 0; got {lams!r}.")
    classes = list(classes)
    labels = [v.item() if isinstance(v, np.generic) else v for v in np.asarray(labels, dtype=object).ravel()]
    cls, a = _point_weights(labels, classes, class_weights)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] != len(labels) or (precomputed and X.shape[1] != X.shape[0]):
        raise ValueError(
            f"X must have one row per label ({len(labels)}) (square with 'precomputed'); got shape {X.shape}."
        )

    reason = loo_readiness(labels)
    if reason:
        warnings.warn(f"{reason} Using lam={default_lam:g}.", LooTuningWarning, stacklevel=2)
        return LooTuning(lam=float(default_lam), width=fixed_width, tuned=False, reason=reason)

    Y = target_codes(1 if len(classes) == 2 else len(classes), len(classes))[cls]

    def path_at(width):
        K = X if precomputed else (kernel if width is None else replace(kernel, width=float(width)))(X)
        return loo_path(K, Y, a, grid, fit_offset=False, n_lams=n_lams)

    if widths is None:
        path = path_at(None)
        i = select_index(path.classification)
        width, extra = fixed_width, {}
    else:
        paths = [path_at(s) for s in widths]
        best = [select_index(p.classification) for p in paths]
        errors = np.array([p.classification[j] for p, j in zip(paths, best)])
        squared = np.array([p.squared[j] for p, j in zip(paths, best)])
        k = int(np.lexsort((-widths, squared, errors))[0])  # least error, squared, largest width
        path, i, width = paths[k], best[k], float(widths[k])
        extra = {"width": widths, "width_lam": np.array([p.lams[j] for p, j in zip(paths, best)]),
                 "width_classification": errors, "width_squared": squared}
    curve = {"lam": path.lams, "classification": path.classification, "squared": path.squared, **extra}
    return LooTuning(lam=float(path.lams[i]), width=width, tuned=True,
                     error=float(path.classification[i]), squared=float(path.squared[i]), curve=curve)
