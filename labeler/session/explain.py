"""Why the strategy asks for a point: its expected risk against the alternatives, its margin
and how central it is among the unlabelled points.

ARLS (seed 002 §3.3, docs/algorithms.md §3) asks for the point whose label is expected to leave the
least risk: ``E_i`` (eq. 3.50) against the current estimated risk ``R`` (eq. 3.49), so
``R - E_i`` is the risk the label is expected to remove. Two things make ``E_i`` small, and
the explanation names whichever holds:

* the point is **near the decision boundary**: a small margin (``|f|`` for two classes, the
  gap between the two largest one-vs-all outputs otherwise), so either answer moves the
  boundary;
* the point is **central to unlabelled points**: a high mean kernel similarity to the
  unlabelled pool, so its label changes the predictions of many points.

Each is ranked among the unlabelled points (the margin among all of them, the density among a
seeded sample of at most :data:`DENSITY_SAMPLE`, an O(sample x n) pass in blocks; with a
low-rank posterior an O(n r) pass with the factor), and said when it is in
the top :data:`NOTABLE` share. :func:`explain` reads the session only.

Under the default strategy "auto" (:mod:`core.criteria.auto`) the first reason says which plain
strategy answered and the measured signal behind it: expected risk for the first
:data:`core.criteria.auto.MAX_RISK_LABELS` labels, margin after.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.coldstart import ClusterCover, ColdStart
from core.learner.base import SIMILARITY
from core.strategies import VARIANCE_STRATEGIES, auto_decision, resolve

from ..data.point_names import point_name

__all__ = ["QueryExplanation", "explain", "DENSITY_SAMPLE", "NOTABLE"]

DENSITY_SAMPLE = 256
NOTABLE = 0.2  # a rank in the top 20 % is worth saying


@dataclass(frozen=True)
class QueryExplanation:
    """Why a point is asked for.

    Attributes
    ----------
    index : int
    strategy : str
    risk_now : float
        Estimated risk of the current model (eq. 3.49), NaN unless "arls".
    expected_risk : float
        ``E_index`` (eq. 3.50), NaN unless "arls".
    alternatives : tuple of (int, float)
        The next best points and their expected risks (lowest first).
    margin : float
        Margin of the point (see the module docstring).
    margin_share : float
        Share of unlabelled points with a margin at most as small (small = near the boundary).
    density : float
        Mean kernel similarity of the point to the unlabelled points.
    density_share : float
        Share of (sampled) unlabelled points at least as central.
    near_boundary, central : bool
        Whether the share is within :data:`NOTABLE`.
    reasons : tuple of str
        The explanation in plain words, most important first.
    answered_by : str
        The plain strategy that chose the point (``strategy`` itself, or "auto"'s choice).
    """

    index: int
    strategy: str
    risk_now: float
    expected_risk: float
    alternatives: tuple
    margin: float
    margin_share: float
    density: float
    density_share: float
    near_boundary: bool
    central: bool
    reasons: tuple
    answered_by: str = ""

    @property
    def reduction(self) -> float:
        """Risk the label is expected to remove, ``R - E``."""
        return self.risk_now - self.expected_risk


def _margins(F: np.ndarray) -> np.ndarray:
    F = np.asarray(F, dtype=np.float64)
    if F.ndim == 1 or F.shape[1] == 1:
        return np.abs(F.reshape(-1))
    top2 = np.partition(F, F.shape[1] - 2, axis=1)[:, -2:]
    return top2[:, 1] - top2[:, 0]


_COLUMN_BLOCK = 1 << 15  # unlabelled points per kernel block (256 x 32768 x 8 bytes = 64 MiB)


def _mean_similarity(learner, X, rows: np.ndarray, unl: np.ndarray) -> np.ndarray:
    """Mean kernel similarity of each of ``rows`` to the points ``unl``, shape (len(rows),),
    with the learner's kernel.

    Low-rank posterior ``K = Phi Phi^T``: ``Phi_rows (sum_{j in unl} phi_j) / |unl|``, with the
    sum taken as all rows (the factor's column sums, kept with it: one O(n r) pass per factor,
    not per call) minus the others (no copy of ``Phi[unl]``): O(n + (n - |unl|) r). Dense: the
    kernel in blocks of :data:`_COLUMN_BLOCK` columns, never a len(rows) x n array.
    """
    if SIMILARITY in learner.capabilities:  # a graph model: the mean graph weight
        return learner.mean_similarity(rows, unl)
    post = learner.posterior
    Phi = getattr(post, "factor", None)
    if Phi is not None:
        others = np.ones(Phi.shape[0], dtype=bool)
        others[unl] = False
        sums = post.column_sums() if hasattr(post, "column_sums") else Phi.sum(axis=0)
        total = sums - Phi[others].sum(axis=0)
        return (Phi[rows] @ total) / unl.size
    kernel = learner.kernel
    out = np.zeros(rows.size)
    Xr = X[rows]
    for a in range(0, unl.size, _COLUMN_BLOCK):
        out += kernel(Xr, X[unl[a:a + _COLUMN_BLOCK]]).sum(axis=1)
    return out / unl.size


def _smallest_stable(values: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` smallest ``values`` in the order of a stable argsort (ties by
    position), in O(n) plus the sort of the values at or below the k-th: the first ``k`` of
    ``np.argsort(values, kind="stable")`` without sorting all n."""
    if k >= values.size:
        return np.argsort(values, kind="stable")
    kth = np.partition(values, k - 1)[k - 1]
    cand = np.flatnonzero(values <= kth)
    return cand[np.argsort(values[cand], kind="stable")][:k]


def _unlabelled_not_skipped(unlabeled: np.ndarray, skipped, n: int) -> np.ndarray:
    """``np.setdiff1d(unlabeled, skipped)`` (sorted) by a mask: O(n), no sort of 10^6 indices."""
    keep = np.zeros(int(n), dtype=bool)
    keep[np.asarray(unlabeled, dtype=np.intp)] = True
    keep[np.asarray(skipped, dtype=np.intp)] = False
    return np.flatnonzero(keep)


def explain(session, index: int, n_alternatives: int = 3) -> QueryExplanation:
    """The :class:`QueryExplanation` of pool point ``index`` in ``session``'s current state."""
    learner = session.learner
    strategy = answered_by = session.config.strategy
    reasons = []
    starter = session.cold_start_answering() if strategy == "auto" else None
    if starter is not None:  # the first labels' picks: typicality, one per cluster, or VOpt
        answered_by = "cold start"
        reasons.append(cold_start_reason(starter, learner.n_labeled))
    elif strategy == "auto":
        answered_by = resolve(learner, "auto")
        reasons.append(auto_reason(auto_decision(learner), learner.classes, answered_by))
    unl = _unlabelled_not_skipped(learner.unlabeled_indices, session.skipped, learner.n_samples)
    margins = _margins(learner.decision_values)
    margin = float(margins[index])
    margin_share = float(np.mean(margins[unl] <= margin)) if unl.size else float("nan")

    density = float(_mean_similarity(learner, session.X, np.array([index]), unl)[0]) if unl.size else float("nan")
    rng = np.random.default_rng([int(session.config.seed), int(session.n_events), int(index)])
    sample = unl if unl.size <= DENSITY_SAMPLE else rng.choice(unl, DENSITY_SAMPLE, replace=False)
    dens = _mean_similarity(learner, session.X, sample, unl) if unl.size else np.zeros(0)
    density_share = float(np.mean(dens >= density)) if dens.size else float("nan")

    risk_now = expected = float("nan")
    alternatives: tuple = ()
    if answered_by == "arls":
        E = session.expected_risk()
        risk_now = float(learner.estimated_risk())
        expected = float(E[index])
        order = unl[_smallest_stable(E[unl], int(n_alternatives) + 1)]
        alternatives = tuple((int(i), float(E[i])) for i in order if i != index)[:n_alternatives]
        alt = ", ".join(f"point {point_name(session.dataset, i)} ({e - expected:+.3g})" for i, e in alternatives)
        best = not alternatives or expected <= alternatives[0][1]
        reasons.append(
            ("Of all unlabelled points, its label is expected to leave the least risk: "
             if best else "Its label is expected to leave a risk of ")
            + f"{expected:.4g} misclassified pool points (the estimate now: {risk_now:.4g})."
            + (f" Next best: {alt}." if alt else "")
        )
    elif answered_by == "margin":
        reasons.append("The margin strategy asks for the unlabelled point closest to the decision boundary.")
    elif answered_by in VARIANCE_STRATEGIES:
        what = "posterior variance" if answered_by == "vopt" else "summed posterior covariance"
        reasons.append(f"The {_VARIANCE_NAMES[answered_by]} strategy asks for the unlabelled point whose label "
                       f"lowers the kNN graph's {what} the most (a Gaussian field on the graph: it depends on "
                       "where the labels are, not on their values).")
    elif answered_by == "random":
        reasons.append("The random strategy picked it uniformly at random (a baseline).")
    near = bool(margin_share <= NOTABLE)
    central = bool(density_share <= NOTABLE)
    if near:
        reasons.append(f"It lies near the decision boundary: its margin {margin:.3g} is smaller than "
                       f"that of {100 * (1 - margin_share):.0f} % of the unlabelled points.")
    if central:
        reasons.append(f"It is central to unlabelled points: it is more similar to them on average than "
                       f"{100 * (1 - density_share):.0f} % of the unlabelled points, so its label "
                       "informs many predictions.")
    if answered_by == "arls" and not (near or central):
        reasons.append(f"Neither its margin (smaller than {100 * (1 - margin_share):.0f} % of the "
                       f"unlabelled points) nor its centrality (above {100 * (1 - density_share):.0f} %) "
                       "stands out alone: the expected risk weighs both.")
    return QueryExplanation(index=int(index), strategy=str(strategy), risk_now=risk_now,
                            expected_risk=expected, alternatives=alternatives, margin=margin,
                            margin_share=margin_share, density=density, density_share=density_share,
                            near_boundary=near, central=central, reasons=tuple(reasons),
                            answered_by=str(answered_by))


_VARIANCE_NAMES = {"vopt": "VOpt", "sigmaopt": "Sigma-opt"}


def _labels(n: int) -> str:
    """``"1 label"``, ``"3 labels"``."""
    return f"{n} label" if n == 1 else f"{n} labels"


def cold_start_reason(starter, n_labeled: int) -> str:
    """The sentence saying which cold-start pick answered the "auto" strategy (:mod:`core.coldstart`)."""
    if isinstance(starter, ColdStart):
        stored = ("no label is stored" if n_labeled == 0
                  else f"{_labels(n_labeled)} {'is' if n_labeled == 1 else 'are'} stored")
        return (f"Auto strategy: a typicality pick (TypiClust) answered, because {stored}, fewer than "
                f"{starter.n_labels}: the most typical "
                "point of the largest k-means cluster of the pool that holds no label yet, so that the first "
                "labels find the classes (docs/algorithms.md §13).")
    if isinstance(starter, ClusterCover):
        return ("Auto strategy: one label per pool cluster answered: a cluster of the pool's 10-NN graph holds "
                "no label yet and the labels so far agree with the clusters, so a point of an unlabelled "
                "cluster is asked first (docs/algorithms.md §12).")
    return (f"Auto strategy: the graph's variance criterion answers the first {starter.n_labels} labels "
            f"({_labels(n_labeled)} stored).")


def auto_reason(decision, classes, answered_by: str | None = None) -> str:
    """The sentence saying which strategy "auto" used and why (:class:`core.criteria.auto.AutoDecision`;
    ``answered_by``: the plain strategy that answered, when the model runs VOpt in place of
    expected risk while cold, :func:`core.strategies.cold_strategy`)."""
    name = classes[decision.class_index]
    cap = getattr(decision, "max_labels", None)
    n = getattr(decision, "n_labels", None)
    if decision.warm and getattr(decision, "capped", False):
        return (f"Auto strategy: margin answered, because {n} labels are stored, at least {cap}; from "
                "there on margin refines the boundary better than expected risk (docs/peers.md).")
    if decision.warm:
        return (f"Auto strategy: margin answered, because every class has at least {decision.min_labels} "
                f"labels (the fewest: {decision.fewest}, class {name!r}); from here on margin refines the "
                "boundary better than expected risk.")
    why = [f"{_labels(n)} {'is' if n == 1 else 'are'} stored, fewer than {cap}"] if cap is not None else []
    if decision.min_labels is not None:
        why.append(f"class {name!r} has {_labels(decision.fewest)}, fewer than {decision.min_labels}")
    if answered_by in VARIANCE_STRATEGIES:
        return (f"Auto strategy: {_VARIANCE_NAMES[answered_by]} answered (this model has no expected-risk rule), "
                f"because {' and '.join(why)}; while labels are few, the variance criterion spreads them over the "
                "unexplored parts of the graph.")
    return (f"Auto strategy: expected risk (ARLS) answered, because {' and '.join(why)}; while labels are "
            "few, expected risk finds the unexplored clusters and classes.")