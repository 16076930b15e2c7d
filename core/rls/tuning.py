"""Leave-one-out choice of ``lam`` and the RBF width for the model ARLS runs.

One tuner for every caller: the labelling session (``set_lam("auto")``, ``set_width("auto")``,
the LOO curve it draws) and the simulation (:func:`labeler.experiments.simulate.resolve_lam`), so the same
labels give the same choice everywhere.

The model (docs/algorithms.md §1 last line, §3): weighted RLS without offset on the labelled points,
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

Automatic tuning as labels arrive (:func:`auto_tune`, :func:`retune_due`)
------------------------------------------------------------------------
The labelling session and ``labeler simulate`` re-tune while the user labels, with one rule
measured on the built-in sets (``benchmarks/autotune.py`` times it; README "Auto-tuning"):

* The width first, at the lam in use: over the width grid the least LOO classification error
  (ties: the least LOO squared error, then the largest width) replaces the width in use only
  when its error is STRICTLY lower and a one-sided sign test on the points it fixes against
  those it breaks gives p < ``width_alpha`` = :data:`WIDTH_ALPHA` (0.3). Keeping the width in
  use on a tie or a near-tie stops it from jumping between neighbouring grid values from one
  label to the next: with only the strict rule it moved 11 times in 40 labels on two-moons,
  24 times in 60 on MAGIC and 23 times in 45 on 20,000 moons, each jump an O(n^2 |L|) rebuild
  of the learner (6 s at n = 20,000). The loose test still moves it as soon as the labels show
  the default is wrong (on two-moons the median width is too smooth: 93.6 % at 40 labels):
  accuracy at 15 / 25 / 40 labels over 10 seeds of moons 98.7 / 99.9 / 100.0 % (strict rule
  98.9 / 99.9 / 100.0), 4 seeds of MAGIC 75.2 / 77.2 / 79.4 % (72.6 / 74.9 / 77.1), digits
  level, with 3.6, 8.2 and 2.5 moves instead of 10.8, 23.8 and 8.0
  (``python benchmarks/width_rule.py``; 20,000 moons: ``--data moons --n 20000 --seeds 1
  --labels 45``). A move may be bounded (``max_width_step``: to the best width within that
  factor of the width in use, so one re-tune cannot jump across the grid on the LOO of a few
  labels: 1.78 -> 14.2 was seen on a 3-class table); by default it is not
  (:data:`WIDTH_MAX_STEP` says why).
* Then lam, at the chosen width, over :func:`lam_grid` (0.001 to 10 times the kernel's mean
  diagonal): the best lam (least error, ties to the largest) replaces the lam in use only on
  DECISIVE evidence: the points it fixes outnumber those it breaks with a one-sided sign
  test at ``alpha`` = 0.05. A few labels chosen by the active learner near its own boundary
  always have an interpolating, small-lam fit without LOO mistakes; taking it on a tie (the
  plain LOO rule above) made ARLS overconfident and slowed every built-in set tried
  (two-moons: 95 % instead of 99 % at 25 labels; imbalanced moons: 95 % instead of 99 % at
  40). lam also sets the noise of the posterior the query criterion reads, so it moves only
  when the labels clearly ask for it.
* :func:`retune_due`: after every label while there are at most :data:`TUNE_EVERY_LABEL_UNTIL`
  labels, then each time the count crosses a multiple of a step that doubles with the count
  (10 up to 100 labels, 20 up to 200, ...): O(log) re-tunes, each O(W |L|^3) with |L|
  capped at :data:`MAX_TUNE_LABELS` (a seeded subsample beyond). A low-rank kernel (Nystrom,
  spectral, linear with fewer features than labels, rank r) runs the exact LOO of the factor
  (docs/algorithms.md §17) in O(W m r^2) on up to :func:`tune_label_cap` labels (at least
  :data:`MAX_TUNE_LABELS`, work about :data:`MAX_LOWRANK_TUNE_WORK` per width).
* :func:`tuning_subsample`: beyond the cap the LOO is an ESTIMATE on a deterministic, seeded,
  class-stratified subsample (every labelled class keeps at least
  :data:`MIN_SUBSAMPLE_PER_CLASS` points, or all of its points): a box selection of thousands
  of one class never falls back to an O(m^3) LOO over every label.

Numerics only (numpy, scipy through :mod:`core.rls`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from ..kernels import Kernel
from ..criteria.risk import predicted_class_indices, target_codes
from .loo import loo_path, select_index
from .width_scale import clusters_agree

__all__ = [
    "DEFAULT_LAM",
    "MIN_LOO_LABELS",
    "MAX_TUNE_LABELS",
    "MAX_LOWRANK_TUNE_WORK",
    "MIN_SUBSAMPLE_PER_CLASS",
    "TUNE_EVERY_LABEL_UNTIL",
    "AutoTuning",
    "LooTuning",
    "LooTuningWarning",
    "auto_tune",
    "lam_grid",
    "loo_readiness",
    "retune_due",
    "tune_label_cap",
    "tune_lam_width",
    "tuning_subsample",
]

#: lam returned when there are too few labels for leave-one-out. The thesis' experiments use
#: 0.1-0.5 on unit-scale RBF kernels (docs/algorithms.md §4).
DEFAULT_LAM = 0.1

#: Fewest labels LOO tuning runs on (two classes with two labels each).
MIN_LOO_LABELS = 4

#: :func:`retune_due` re-tunes after every label up to this many labels.
TUNE_EVERY_LABEL_UNTIL = 50

#: :func:`auto_tune` runs on at most this many labelled points (a seeded subsample beyond):
#: its cost is O(W m^3) for W widths and m points.
MAX_TUNE_LABELS = 500

#: With a low-rank kernel of rank r, :func:`auto_tune` runs the exact factor LOO on up to
#: ``MAX_LOWRANK_TUNE_WORK / r^2`` labels (at least :data:`MAX_TUNE_LABELS`): O(m r^2) per width.
MAX_LOWRANK_TUNE_WORK = 1e9

#: Fewest points of a labelled class a :func:`tuning_subsample` keeps (all of them when it has fewer).
MIN_SUBSAMPLE_PER_CLASS = 20

#: Significance of the sign test that lets :func:`auto_tune` move lam.
LAM_ALPHA = 0.05

#: Significance of the sign test that lets :func:`auto_tune` move the width. Looser than
#: lam's: the default width is often clearly wrong early (two-moons), and the width must be
#: free to leave it after a few labels; None: any strictly lower LOO error moves it.
WIDTH_ALPHA = 0.3

#: Largest factor by which one re-tune of :func:`auto_tune` may move the width: the move goes
#: to the best width of the grid within the factor (None: anywhere on the grid, the default).
#: A factor 2 won on the first half of ``benchmarks/defaults.py`` (issue 20; docs/defaults.md:
#: +0.47 AUBC points on the mean over its 9 tasks, +1.6 on spheres, -0.3 on two-moons) but lost
#: on MAGIC (800 points, seed 1, app defaults, 150 ARLS labels; tests/test_stopping.py): the
#: first re-tune could not reach the width LOO asked for (0.88 from 3.0), stepped to 4.97 and
#: stayed, and the balanced error at 150 labels was 33.1 % against 26.0 % unbounded, with the
#: stopping signal saying "likely enough" above 15 % error. So moves stay unbounded; the
#: option remains for ``max_width_step``.
WIDTH_MAX_STEP = None

#: :func:`lam_grid` factors (times the kernel's mean diagonal): 0.001 ... 10, 9 values.
LAM_FACTORS = np.geomspace(1e-3, 10.0, 9)


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
            f"classes; there {'is' if y.size == 1 else 'are'} {y.size:,} of {len(present)} "
            f"{'class' if len(present) == 1 else 'classes'}. Label more points first."
        )
    single = [str(c) for c, k in zip(present, counts) if k < 2]
    if single:
        return (
            f"Leave-one-out tuning needs at least 2 labels of every labelled class; "
            f"{', '.join(single[:5])}{' ...' if len(single) > 5 else ''} "
            f"{'has' if len(single) == 1 else 'have'} only one. Label more points first."
        )
    return ""


def tune_label_cap(rank: int | None = None) -> int:
    """Most labels one LOO re-tune runs on: :data:`MAX_TUNE_LABELS` for a dense kernel
    (``rank`` None: O(m^3) per width), ``max(MAX_TUNE_LABELS, MAX_LOWRANK_TUNE_WORK / rank^2)``
    for a kernel of rank ``rank`` (the factor LOO, O(m r^2) per width)."""
    if rank is None:
        return MAX_TUNE_LABELS
    return max(MAX_TUNE_LABELS, int(MAX_LOWRANK_TUNE_WORK // max(1, int(rank)) ** 2))


def tuning_subsample(labels, cap: int, seed: int = 0) -> np.ndarray:
    """Deterministic, seeded, class-stratified subsample of at most about ``cap`` labels.

    Every class keeps ``max(MIN_SUBSAMPLE_PER_CLASS, floor(cap n_c / m))`` of its ``n_c``
    points (all of them when it has fewer; the largest remainders get one more until the size
    reaches ``cap``), drawn uniformly with a generator seeded by
    ``(seed, m)``; so a class with at least 2 labels keeps at least 2 and a subsample of
    labels :func:`loo_readiness` accepts is accepted too. The size exceeds ``cap`` by at most
    ``MIN_SUBSAMPLE_PER_CLASS`` per class.

    Parameters
    ----------
    labels : array-like of shape (m,)
        The class of every labelled point.
    cap : int >= 1
    seed : int

    Returns
    -------
    ndarray of int of shape (k,)
        Sorted positions into ``labels``; ``arange(m)`` when ``m <= cap``.
    """
    y = np.asarray(labels, dtype=object).ravel().astype(str)
    m, cap = y.size, int(cap)
    if cap < 1:
        raise ValueError(f"cap must be >= 1; got {cap}.")
    if m <= cap:
        return np.arange(m)
    rng = np.random.default_rng([int(seed), m])
    present, codes = np.unique(y, return_inverse=True)
    sizes = np.bincount(codes, minlength=present.size)
    share = cap * sizes / m
    quota = np.minimum(sizes, np.maximum(MIN_SUBSAMPLE_PER_CLASS, np.floor(share).astype(np.intp)))
    for c in np.argsort(-(share - np.floor(share)), kind="stable"):  # largest remainders: size cap
        if quota.sum() >= cap:
            break
        quota[c] += int(quota[c] < sizes[c])
    keep = []
    for c in range(present.size):
        members = np.flatnonzero(codes == c)
        keep.append(members if quota[c] == members.size else rng.choice(members, quota[c], replace=False))
    return np.sort(np.concatenate(keep))


def _subsample_note(k: int, m: int) -> str:
    return (f"LOO estimated on a class-stratified subsample of {k:,} of the {m:,} labels "
            "(docs/algorithms.md §17: the exact LOO over every label costs O(m^3))")


def _low_rank_features(kernel, X: np.ndarray):
    """Features ``Phi`` with ``kernel(X) = Phi Phi^T`` when their rank is below the number of
    rows (a Nystrom kernel, or the linear kernel with fewer features than points), else None."""
    if getattr(kernel, "landmarks", None) is not None and hasattr(kernel, "features"):
        rank = np.asarray(kernel.landmarks).shape[0]
        return kernel.features(X) if rank < X.shape[0] else None
    if isinstance(kernel, Kernel) and kernel.kind == "linear" and X.shape[1] < X.shape[0]:
        return X
    return None


def _kernel_rank(kernel, X: np.ndarray):
    """Rank bound of the kernel's factor on ``X`` (None: a dense kernel, no factor)."""
    if getattr(kernel, "landmarks", None) is not None and hasattr(kernel, "features"):
        return int(np.asarray(kernel.landmarks).shape[0])
    if isinstance(kernel, Kernel) and kernel.kind == "linear":
        return int(X.shape[1])
    return None


def _loo_path_at(kernel, X, Y, a, lams, fit_offset=False, n_lams=50):
    """:func:`core.rls.loo.loo_path` of ``kernel`` on ``X``: from the factor when it has a low rank."""
    Phi = _low_rank_features(kernel, X)
    if Phi is not None:
        return loo_path(None, Y, a, lams, fit_offset=fit_offset, n_lams=n_lams, features=Phi)
    return loo_path(kernel(X), Y, a, lams, fit_offset=fit_offset, n_lams=n_lams)


def _mean_diagonal(kernel, X) -> float:
    """Mean of ``diag(kernel(X))`` without the m x m matrix."""
    Phi = _low_rank_features(kernel, X)
    if Phi is not None:
        return float(np.mean(np.einsum("ij,ij->i", Phi, Phi)))
    if hasattr(kernel, "diag"):
        return float(np.mean(kernel.diag(X)))
    return float(np.mean(np.diag(kernel(X))))


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
                   default_lam: float = DEFAULT_LAM, n_lams: int = 50, seed: int = 0) -> LooTuning:
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
    seed : int
        Seeds the :func:`tuning_subsample` beyond :func:`tune_label_cap` labels (then the LOO
        is an estimate, said in ``reason``; not with ``"precomputed"``, which is never capped).

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

    note = ""
    cap = None if precomputed else tune_label_cap(_kernel_rank(kernel, X))
    if cap is not None and len(labels) > cap:
        keep = tuning_subsample(labels, cap, seed)
        note = _subsample_note(keep.size, len(labels))
        X, cls, a = X[keep], cls[keep], a[keep]
    Y = target_codes(1 if len(classes) == 2 else len(classes), len(classes))[cls]

    def path_at(width):
        if precomputed:
            return loo_path(X, Y, a, grid, fit_offset=False, n_lams=n_lams)
        return _loo_path_at(kernel if width is None else replace(kernel, width=float(width)), X, Y, a, grid,
                            n_lams=n_lams)

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
    return LooTuning(lam=float(path.lams[i]), width=width, tuned=True, reason=note,
                     error=float(path.classification[i]), squared=float(path.squared[i]), curve=curve)


# --------------------------------------------------------------------------------------------
# Automatic tuning while labelling
# --------------------------------------------------------------------------------------------


def _tune_step(n: int) -> int:
    """Labels between re-tunes beyond :data:`TUNE_EVERY_LABEL_UNTIL`: 10 up to 100, 20 up to
    200, 40 up to 400, ..."""
    step, top = 10, 2 * TUNE_EVERY_LABEL_UNTIL
    while n > top:
        step, top = 2 * step, 2 * top
    return step


def retune_due(before: int, after: int) -> bool:
    """Whether the labels changing from ``before`` to ``after`` labels call for a re-tune.

    Every change while ``after <= TUNE_EVERY_LABEL_UNTIL``; beyond, when the count crosses a
    multiple of :func:`_tune_step` (in either direction: an undo or a batch of accepted
    predictions crosses it too). A pure function of the counts, so a reopened session keeps
    the same schedule.
    """
    before, after = int(before), int(after)
    if after < MIN_LOO_LABELS:
        return False
    if after <= TUNE_EVERY_LABEL_UNTIL:
        return before != after
    lo, hi = sorted((before, after))
    step = _tune_step(hi)
    return hi // step != lo // step


def lam_grid(kernel_diagonal_mean: float = 1.0) -> np.ndarray:
    """The lam values :func:`auto_tune` chooses from: :data:`LAM_FACTORS` times the mean of
    the kernel's diagonal (1 for an RBF kernel), so the grid follows the kernel's scale."""
    scale = float(kernel_diagonal_mean)
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"the kernel's mean diagonal must be a number > 0; got {kernel_diagonal_mean!r}.")
    return LAM_FACTORS * scale


@dataclass(frozen=True)
class AutoTuning:
    """The decision of :func:`auto_tune`.

    Attributes
    ----------
    width, lam : float or None, float
        The values to use (the given ones when nothing moved them); width None for a kernel
        without width.
    width_changed, lam_changed : bool
    error : float
        Weighted LOO classification error at (width, lam).
    before_error : float
        The same at the values in use before.
    widths, width_errors : ndarray of shape (W,)
        The width grid (with the width in use) and the LOO error of each at the lam in use;
        empty when the width is not tuned.
    lams, lam_errors : ndarray of shape (L,)
        The lam grid (with the lam in use) and the LOO error of each at the chosen width;
        empty when lam is not tuned.
    n_points : int
        Labelled points the LOO ran on (at most :data:`MAX_TUNE_LABELS`).
    reason : str
        Why each value moved or stayed, in words.
    """

    width: float | None
    lam: float
    width_changed: bool
    lam_changed: bool
    error: float
    before_error: float
    widths: np.ndarray
    width_errors: np.ndarray
    lams: np.ndarray
    lam_errors: np.ndarray
    n_points: int
    reason: str


def _kernel_at(kernel: Kernel, width) -> Kernel:
    return kernel if width is None else replace(kernel, width=float(width))


def _with_value(grid, value) -> np.ndarray:
    grid = np.asarray(grid, dtype=np.float64)
    if value is not None and not np.any(np.isclose(grid, value, rtol=1e-12, atol=0.0)):
        grid = np.append(grid, float(value))
    return np.sort(grid)


def _at(grid, value) -> int:
    return int(np.argmin(np.abs(np.log(grid) - np.log(value))))


def auto_tune(X, labels, classes, class_weights, *, kernel, lam: float, tune_width: bool = True,
              tune_lam: bool = True, widths=None, lams=None, alpha: float = LAM_ALPHA,
              width_alpha: float | None = WIDTH_ALPHA, seed: int = 0, max_width_step="default",
              components=None, cluster_width: float | None = None) -> AutoTuning:
    """The automatic re-tune of width and lam (the rule of the module docstring).

    Parameters
    ----------
    X : array-like of shape (n_labeled, n_features)
        The labelled points' features (in labelling order).
    labels : sequence of length n_labeled
    classes : sequence
        The learner's classes, in its order.
    class_weights : dict or array-like of shape (n_classes,)
        The learner's class weights.
    kernel : core.kernels.Kernel
        The kernel in use (its width is the width in use).
    lam : float
        The lam in use.
    tune_width, tune_lam : bool
        Which values may move (the width only for an RBF kernel).
    widths : array-like of float, optional
        Width grid (required with ``tune_width`` and an RBF kernel).
    lams : array-like of float, optional
        Lam grid; default :func:`lam_grid` of the kernel's mean diagonal on the points.
    alpha : float
        Significance of the sign test for lam.
    width_alpha : float or None
        Significance of the sign test for the width; None moves it on any strictly lower
        LOO error (the rule before: it let the width jump between neighbouring grid values
        from one label to the next, each jump an O(n^2 |L|) rebuild of the learner).
    seed : int
        Seeds the subsample of at most :data:`MAX_TUNE_LABELS` points.
    max_width_step : float > 1, None or "default"
        The width moves to the best width of the grid within this factor of the width in use
        (a bounded move: one re-tune cannot jump across the grid on the evidence of a few
        labels); None: the whole grid; "default": :data:`WIDTH_MAX_STEP`.
    components : array-like of int of shape (n_labeled,), optional
        The pool cluster of every labelled point (:attr:`core.rls.width_scale.WidthScale.components`).
    cluster_width : float, optional
        :attr:`core.rls.width_scale.WidthScale.cluster_width`. With ``components``: while the
        labels agree with the clusters (:func:`core.rls.width_scale.clusters_agree`) the width
        stays at or below it, and a width in use above it moves to the best width of the grid
        at or below it without a sign test (the pool's clusters are the evidence).

    Returns
    -------
    AutoTuning

    Raises
    ------
    ValueError
        Too few labels (:func:`loo_readiness`), labels outside ``classes``, bad grids.
    """
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel must be a core.kernels.Kernel; got {kernel!r}.")
    rbf = kernel.kind == "rbf"
    tune_width = bool(tune_width) and rbf
    classes = list(classes)
    labels = [v.item() if isinstance(v, np.generic) else v for v in np.asarray(labels, dtype=object).ravel()]
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] != len(labels):
        raise ValueError(f"X must have one row per label ({len(labels)}); got shape {X.shape}.")
    reason = loo_readiness(labels)
    if reason:
        raise ValueError(reason)
    if components is not None:
        components = np.asarray(components)
        if components.shape != (len(labels),):
            raise ValueError(f"components must give one cluster per label ({len(labels)}); "
                             f"got shape {components.shape}.")
    cluster_cap = (cluster_width if tune_width and components is not None and cluster_width is not None
                   and clusters_agree(components, labels) else None)
    cap = tune_label_cap(_kernel_rank(kernel, X))
    sample_note = ""
    if len(labels) > cap:
        keep = tuning_subsample(labels, cap, seed)  # keeps every class ready (never all m labels)
        sample_note = _subsample_note(keep.size, len(labels))
        X, labels = X[keep], [labels[i] for i in keep]
        if components is not None:
            components = components[keep]
    cls, a = _point_weights(labels, classes, class_weights)
    Y = target_codes(1 if len(classes) == 2 else len(classes), len(classes))[cls]
    truth = predicted_class_indices(Y)
    lam = float(lam)
    width = float(kernel.width) if rbf else None

    def errors(width_, lams_):
        """Weighted error (L,), squared error (L,) and the wrong points (L, m) at each lam."""
        path = _loo_path_at(_kernel_at(kernel, width_), X, Y, a, lams_)
        wrong = np.stack([predicted_class_indices(Y - r) != truth for r in path.residuals])
        return path.classification, path.squared, wrong

    notes = [sample_note] if sample_note else []
    w_grid = np.zeros(0)
    w_err = np.zeros(0)
    if tune_width:
        if widths is None:
            raise ValueError("tune_width needs the width grid (widths=...).")
        w_grid = _with_value(widths, width)
        rows = [errors(s, [lam]) for s in w_grid]
        w_err = np.array([r[0][0] for r in rows])
        w_sq = np.array([r[1][0] for r in rows])
        step = WIDTH_MAX_STEP if isinstance(max_width_step, str) else max_width_step
        reach = (np.ones(w_grid.size, dtype=bool) if step is None
                 else np.abs(np.log(w_grid / width)) <= np.log(float(step)) + 1e-9)
        forced = False
        if cluster_cap is not None:
            below = w_grid <= float(cluster_cap) * (1 + 1e-9)
            if below.any():
                forced = width > float(cluster_cap) * (1 + 1e-9)
                reach = below if forced else reach & below
        order = np.lexsort((-w_grid, w_sq, np.round(w_err, 12)))
        k = int(order[reach[order]][0]) if reach.any() else _at(w_grid, width)
        here = _at(w_grid, width)
        before_error = float(w_err[here])
        here_wrong, best_wrong = rows[here][2][0], rows[k][2][0]
        w_fixed = int(np.sum(here_wrong & ~best_wrong))
        w_broken = int(np.sum(best_wrong & ~here_wrong))
        w_p = (_binomtest(w_fixed, w_fixed + w_broken, 0.5, alternative="greater").pvalue
               if w_fixed > w_broken else 1.0)
        if forced:
            notes.append(f"width {width:.4g} -> {w_grid[k]:.4g}: the labels agree with the pool's clusters "
                         f"and a width above {float(cluster_cap):.4g} merges them (LOO error "
                         f"{w_err[here]:.3f} -> {w_err[k]:.3f})")
            width = float(w_grid[k])
        elif w_err[k] < w_err[here] - 1e-12 and (width_alpha is None or w_p < width_alpha):
            notes.append(f"width {width:.4g} -> {w_grid[k]:.4g}: LOO error {w_err[here]:.3f} -> {w_err[k]:.3f}"
                         f" (it fixes {w_fixed} LOO mistakes and makes {w_broken}, sign test p = {w_p:.3f})")
            width = float(w_grid[k])
        elif w_err[k] < w_err[here] - 1e-12:
            notes.append(f"width {width:.4g} kept: width {w_grid[k]:.4g} has a lower LOO error "
                         f"({w_err[here]:.3f} -> {w_err[k]:.3f}) but not clearly (it fixes {w_fixed} "
                         f"mistakes and makes {w_broken}, sign test p = {w_p:.3f})")
        else:
            notes.append(f"width {width:.4g} kept: no width has a lower LOO error ({w_err[here]:.3f})")
        cur_wrong = rows[_at(w_grid, width)][2][0]
        error = float(w_err[_at(w_grid, width)])
    else:
        e, _, wrong = errors(width, [lam])
        before_error = error = float(e[0])
        cur_wrong = wrong[0]

    l_grid = np.zeros(0)
    l_err = np.zeros(0)
    lam_changed = False
    if tune_lam:
        if lams is None:
            lams = lam_grid(_mean_diagonal(_kernel_at(kernel, width), X))
        l_grid = _with_value(lams, lam)
        l_err, _, l_wrong = errors(width, l_grid)
        j = select_index(np.round(l_err, 12))  # least error, ties to the largest lam
        fixed = int(np.sum(cur_wrong & ~l_wrong[j]))
        broken = int(np.sum(l_wrong[j] & ~cur_wrong))
        p = _binomtest(fixed, fixed + broken, 0.5, alternative="greater").pvalue if fixed > broken else 1.0
        if p < alpha and not np.isclose(l_grid[j], lam, rtol=1e-12, atol=0.0):
            notes.append(f"lam {lam:.4g} -> {l_grid[j]:.4g}: it fixes {fixed} LOO mistakes and makes "
                         f"{broken} (sign test p = {p:.3f})")
            lam, lam_changed, error = float(l_grid[j]), True, float(l_err[j])
        else:
            notes.append(f"lam {lam:.4g} kept: no lam is clearly better (best fixes {fixed}, makes {broken})")
    return AutoTuning(
        width=width, lam=lam,
        width_changed=bool(tune_width and not np.isclose(width, float(kernel.width), rtol=1e-12, atol=0.0)),
        lam_changed=lam_changed, error=float(error), before_error=float(before_error),
        widths=w_grid, width_errors=w_err, lams=l_grid, lam_errors=l_err,
        n_points=len(labels), reason="; ".join(notes),
    )


def _binomtest(k: int, n: int, p: float, alternative: str):
    """:func:`scipy.stats.binomtest`, imported when first needed (scipy.stats costs 0.5-5 s to
    import on every start; a re-tune is the first to need it)."""
    from scipy.stats import binomtest

    return binomtest(k, n, p, alternative=alternative)
