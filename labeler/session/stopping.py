"""When further labels are unlikely to help: a stopping signal that follows the real error.

The estimated risk of seed 002 (eq. 3.49) is the model's opinion of itself: it stayed flat
while the true error fell from 64 % to 23 % (issue 7), so it cannot tell a user when to stop.
:class:`StoppingMonitor` combines signals that do track it:

* **Stabilising predictions** (Bloodgood & Vijay-Shanker 2009, "A method for stopping active
  learning based on stabilizing predictions and the need for user-adjustable stopping",
  CoNLL): the predictions of successive models on a fixed *stop set* (here: the whole pool;
  it needs no labels) are compared with Cohen's kappa; once the mean kappa over a window of
  the last ``window`` pairs of successive models is at least ``threshold`` (their values:
  3 and 0.99), new labels have stopped changing what the model predicts. Bloodgood and
  Grothendieck (2013) bound the change in F-measure between two models by ``4 (1 - K) / K``
  for kappa ``K``. Their models come one batch of labels apart; here one label barely moves
  a model, so the compared models are ``spacing`` user labels apart (a *checkpoint* every
  ``spacing`` labels), and the window spans ``window * spacing`` labels.
* **The window's net change**: kappa corrects for chance agreement, which falls with the
  number of classes (ten balanced classes: kappa 0.99 lets about 0.9 % of the pool change
  between models 5 labels apart; two balanced classes: 0.5 %). The verdict also needs the
  share of the pool predicted differently by the oldest and the newest model of the window
  to be at most ``max_window_changed`` (:data:`MAX_WINDOW_CHANGED`, 0.5 %), whatever the
  number of classes.
* **Changed predictions**: the fraction of pool points whose predicted class differs between
  now and the checkpoint at least ``changed_over`` labels ago.
* **Leave-one-out error of the labelled points** with a Wilson 95 % interval
  (:func:`core.confidence.wilson_interval`), from the learner's exact LOO outputs. The points
  were queried because they were hard, so this overstates the error of the whole pool; it is
  shown, not used to stop.

Only user labels count (accepted predictions repeat the model's own guess, so they would make
the predictions look stable by construction). The verdict is "keep going" until there are
``(window + 1)`` checkpoints, i.e. ``window * spacing`` labels of history, and the window is
stable. A monitor is a plain object: :meth:`record` predictions, read :meth:`signal`. The
session records after every action that changes the labels and keeps the checkpoints in its
store (:meth:`to_array` / :meth:`from_array`), so a reopened session keeps its history.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from core.confidence import wilson_interval
from core.coverage import uncovered_share  # the share of the pool in clusters without a label
from core.criteria.risk import predicted_class_indices

__all__ = ["StoppingMonitor", "StoppingSignal", "cohen_kappa", "reweighted_codes", "uncovered_share", "KEEP_GOING",
           "LIKELY_ENOUGH", "MAX_UNCOVERED", "MAX_WINDOW_CHANGED"]

KEEP_GOING = "keep going"
LIKELY_ENOUGH = "likely enough"

#: Largest share of the pool that may lie in clusters holding no label when the rule says
#: "likely enough" (:func:`uncovered_share`).
MAX_UNCOVERED = 0.01

#: Largest share of the pool whose predicted class may differ between the oldest and the
#: newest model of the window when the rule says "likely enough" (the window's net change).
#: Kappa corrects for chance agreement, and chance agreement falls with the number of
#: classes: with ten balanced classes kappa 0.99 lets about 0.9 % of the pool change between
#: models 5 labels apart, twice the 0.5 % of two balanced classes. On digits the rule then
#: stopped while the pool's predictions were still being corrected (docs/trust.md).
MAX_WINDOW_CHANGED = 0.005


def reweighted_codes(learner):
    """Predicted class codes under "balanced" weights of a learner weighted "evident".

    "evident" keeps every class weight at 1 until the label counts show imbalance
    (:mod:`core.learner.weighting`); the predictions of such an unweighted model can settle
    while it still misses a smaller class. These are the predictions the same labels give
    with the weights "balanced" would use (``ActiveRLS.decision_values_under``), for
    :meth:`StoppingMonitor.signal`'s ``reweighted``.

    Returns
    -------
    ndarray of int32, shape (n_points,), or None
        None for any other weighting or learner (nothing to check).
    """
    if getattr(learner, "weighting", None) != "evident" or not hasattr(learner, "decision_values_under"):
        return None
    F = learner.decision_values_under("balanced")
    return None if F is None else predicted_class_indices(F).astype(np.int32)


#: Integer codes spanning fewer values than this are counted by :func:`numpy.bincount` in
#: :func:`cohen_kappa` (no sort of the 2 x 10^6 codes of two checkpoints).
KAPPA_COUNT_MAX = 1 << 16


def cohen_kappa(a, b) -> float:
    """Cohen's kappa of two label vectors: ``(p_o - p_e) / (1 - p_e)``.

    ``p_o`` is the fraction of points where ``a`` and ``b`` agree and ``p_e = sum_c a_c b_c``
    the agreement expected by chance from the class frequencies ``a_c``, ``b_c``. When both
    predict one and the same class everywhere (``p_e = 1``) kappa is 1 (they agree fully).

    Parameters
    ----------
    a, b : array-like of int, shape (n,)
        Class codes (any integers).

    Returns
    -------
    float in [-1, 1]
    """
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape or a.ndim != 1 or a.size == 0:
        raise ValueError(f"need two non-empty 1-D label vectors of one length; got {a.shape}, {b.shape}.")
    lo = hi = 0
    if a.dtype.kind in "iu" and b.dtype.kind in "iu":
        lo, hi = int(min(a.min(), b.min())), int(max(a.max(), b.max()))
    if a.dtype.kind in "iu" and b.dtype.kind in "iu" and hi - lo < KAPPA_COUNT_MAX:
        # class codes: counted directly (O(n)), the codes present in the order np.unique gives
        ca = np.bincount((a - lo).astype(np.intp), minlength=hi - lo + 1)
        cb = np.bincount((b - lo).astype(np.intp), minlength=hi - lo + 1)
        present = np.flatnonzero(ca + cb)
        p_o = float(np.mean(a == b))
        fa, fb = ca[present] / a.size, cb[present] / b.size
    else:  # any other values: their union sorted (a sort of 2n values)
        values, inverse = np.unique(np.concatenate([a, b]), return_inverse=True)
        ia, ib = inverse[: a.size], inverse[a.size:]
        p_o = float(np.mean(ia == ib))
        fa = np.bincount(ia, minlength=values.size) / a.size
        fb = np.bincount(ib, minlength=values.size) / b.size
    p_e = float(fa @ fb)
    if p_e >= 1.0 - 1e-15:
        return 1.0 if p_o >= 1.0 else 0.0
    return (p_o - p_e) / (1.0 - p_e)


@dataclass(frozen=True)
class StoppingSignal:
    """What the monitor says now.

    Attributes
    ----------
    verdict : {"keep going", "likely enough"}
    message : str
        The verdict in plain words, with the reason.
    n_labels : int
        User labels (accepted predictions left out).
    kappas : tuple of float
        Kappa of each pair of successive checkpoints in the window (oldest first; fewer than
        ``window`` while the history is short).
    mean_kappa : float
        Mean of ``kappas`` (NaN without any).
    changed_fraction : float
        Fraction of pool points whose prediction changed over the last ``changed_over`` (or
        more) labels; NaN without such a checkpoint.
    changed_since : int or None
        Label count of the checkpoint ``changed_fraction`` compares with.
    loo_error, loo_lower, loo_upper : float
        LOO error rate of the labelled points and its Wilson 95 % interval (NaN, 0, 1 when
        LOO cannot judge yet).
    loo_n : int
        Points behind the LOO error.
    labels_to_go : int
        User labels still needed before the window can be full (0 once it is).
    uncovered : float
        Share of the pool in clusters holding no label (:func:`uncovered_share`); NaN when the
        pool has no clusters to check.
    window_changed : float
        Share of the pool whose prediction differs between the oldest and the newest
        checkpoint of the window (NaN while the window is not full).
    """

    verdict: str
    message: str
    n_labels: int
    kappas: tuple
    mean_kappa: float
    changed_fraction: float
    changed_since: int | None
    loo_error: float
    loo_lower: float
    loo_upper: float
    loo_n: int
    labels_to_go: int
    uncovered: float = float("nan")
    window_changed: float = float("nan")

    @property
    def enough(self) -> bool:
        return self.verdict == LIKELY_ENOUGH


class StoppingMonitor:
    """Stabilising-predictions stopping rule with the changed fraction and the LOO error.

    Parameters
    ----------
    n_points : int
        Size of the stop set (the pool).
    spacing : int
        User labels between checkpoints (the "successive models" compared).
    window : int
        Kappas averaged (Bloodgood & Vijay-Shanker: 3).
    threshold : float
        Mean kappa at or above which predictions count as stable (theirs: 0.99).
    changed_over : int
        Labels over which the changed fraction is measured.
    max_uncovered : float in [0, 1]
        Largest share of the pool in clusters without a label at which the rule may say
        "likely enough" (when the caller passes the share to :meth:`signal`).
    max_window_changed : float in [0, 1]
        Largest net change of the window (share of the pool predicted differently by its
        oldest and newest checkpoint) at which the rule may say "likely enough"; 1 turns the
        condition off (kappa alone).
    """

    def __init__(self, n_points: int, spacing: int = 5, window: int = 3, threshold: float = 0.99,
                 changed_over: int = 10, max_uncovered: float = MAX_UNCOVERED,
                 max_window_changed: float = MAX_WINDOW_CHANGED):
        for name, v in (("n_points", n_points), ("spacing", spacing), ("window", window),
                        ("changed_over", changed_over)):
            if isinstance(v, bool) or int(v) != v or v < 1:
                raise ValueError(f"{name} must be an integer >= 1; got {v!r}.")
        if not 0.0 < float(threshold) <= 1.0:
            raise ValueError(f"threshold must lie in (0, 1]; got {threshold!r}.")
        self.n_points = int(n_points)
        self.spacing = int(spacing)
        self.window = int(window)
        self.threshold = float(threshold)
        self.changed_over = int(changed_over)
        if not 0.0 <= float(max_uncovered) <= 1.0:
            raise ValueError(f"max_uncovered must lie in [0, 1]; got {max_uncovered!r}.")
        self.max_uncovered = float(max_uncovered)
        if not 0.0 <= float(max_window_changed) <= 1.0:
            raise ValueError(f"max_window_changed must lie in [0, 1]; got {max_window_changed!r}.")
        self.max_window_changed = float(max_window_changed)
        self._checkpoints: dict[int, np.ndarray] = {}  # user label count -> predicted codes
        self._kappas: dict[tuple[int, int], float] = {}  # of two kept checkpoints (signal's window)

    # ---- history -------------------------------------------------------------------------
    @property
    def checkpoints(self) -> list[int]:
        """Label counts of the kept checkpoints, increasing."""
        return sorted(self._checkpoints)

    def _keep(self) -> int:
        return self.window + 1 + -(-self.changed_over // self.spacing)

    def record(self, n_labels: int, predicted) -> bool:
        """Note the model's predictions after a change of the labels.

        Checkpoints past ``n_labels`` are dropped (an undo went back); a new checkpoint is
        kept when there is none yet or ``n_labels`` is at least ``spacing`` past the last one.

        Parameters
        ----------
        n_labels : int
            User labels now.
        predicted : array-like of int, shape (n_points,)
            Predicted class codes of the stop set.

        Returns
        -------
        bool
            Whether a checkpoint was kept.
        """
        n_labels = int(n_labels)
        codes = np.asarray(predicted)
        if codes.shape != (self.n_points,) or codes.dtype.kind not in "iu":
            raise ValueError(
                f"predicted must be {self.n_points} integer class codes; got shape {codes.shape}, "
                f"dtype {codes.dtype}."
            )
        for k in [k for k in self._checkpoints if k > n_labels]:
            del self._checkpoints[k]
            self._kappas.clear()  # a checkpoint of this count may come back with other codes
        last = max(self._checkpoints, default=None)
        if last is not None and n_labels < last + self.spacing:
            return False
        self._checkpoints[n_labels] = codes.astype(np.int32, copy=True)
        for k in self.checkpoints[: -self._keep()]:
            del self._checkpoints[k]
        self._kappas = {key: v for key, v in self._kappas.items()
                        if key[0] in self._checkpoints and key[1] in self._checkpoints}
        return True

    def _kappa(self, a: int, b: int) -> float:
        """:func:`cohen_kappa` of the checkpoints at label counts ``a`` and ``b``, kept until the
        checkpoints change (every call of :meth:`signal` reads the same pairs: three passes
        over the pool per label at 10^6 points otherwise)."""
        key = (a, b)
        if key not in self._kappas:
            self._kappas[key] = cohen_kappa(self._checkpoints[a], self._checkpoints[b])
        return self._kappas[key]

    def to_array(self) -> np.ndarray:
        """The checkpoints as one int32 array of shape (k, 1 + n_points): the label count,
        then the predicted codes."""
        keys = self.checkpoints
        out = np.empty((len(keys), 1 + self.n_points), dtype=np.int32)
        for row, k in enumerate(keys):
            out[row, 0] = k
            out[row, 1:] = self._checkpoints[k]
        return out

    def load_array(self, array, n_labels: int) -> None:
        """Restore checkpoints from :meth:`to_array`; rows past ``n_labels`` are dropped, and a
        malformed array is ignored (the history is a cache: it only delays the verdict)."""
        self._checkpoints.clear()
        self._kappas.clear()
        arr = None if array is None else np.asarray(array)
        if arr is None or arr.ndim != 2 or arr.shape[1] != 1 + self.n_points or arr.dtype.kind not in "iu":
            return
        for row in arr:
            if 0 <= int(row[0]) <= int(n_labels):
                self._checkpoints[int(row[0])] = row[1:].astype(np.int32)

    # ---- the signal ----------------------------------------------------------------------
    def _labels_to_go(self, keys: list[int], n_labels: int) -> int:
        """User labels, one at a time, until the window is full under :meth:`record`'s rule:
        the first checkpoint comes with the next label, each further one ``spacing`` labels
        after the last, and the window needs ``window + 1`` of them (at least 1 while it is
        not full)."""
        if not keys:
            return 1 + self.window * self.spacing
        missing = self.window + 1 - len(keys)
        return max(1, keys[-1] + missing * self.spacing - n_labels)

    def signal(self, n_labels: int, predicted, loo_correct=None, uncovered: float | None = None,
               reweighted=None) -> StoppingSignal:
        """The stopping signal for the current model.

        Parameters
        ----------
        n_labels : int
            User labels now.
        predicted : array-like of int, shape (n_points,)
            The current predicted class codes of the stop set.
        loo_correct : array-like of bool, shape (n_labelled,), optional
            Whether each labelled point's LOO prediction is right (None: LOO cannot judge).
        uncovered : float in [0, 1], optional
            Share of the pool in clusters holding no label (:func:`uncovered_share`); None
            when the pool has no clusters to check. Above ``max_uncovered`` the verdict is
            "keep going" whatever the agreement.
        reweighted : array-like of int, shape (n_points,), optional
            The predicted class codes the model would give with "balanced" class weights,
            while its own weighting ("evident") keeps the weights at 1. Unless they agree with
            ``predicted`` (kappa at least ``threshold``) the verdict is "keep going": stable
            predictions of an unweighted model can still miss a minority class.

        Returns
        -------
        StoppingSignal
        """
        n_labels = int(n_labels)
        codes = np.asarray(predicted)
        if uncovered is not None and not 0.0 <= float(uncovered) <= 1.0:
            raise ValueError(f"uncovered must be a share in [0, 1] (or None); got {uncovered!r}.")
        keys = [k for k in self.checkpoints if k <= n_labels]
        window = keys[-(self.window + 1):]
        kappas = tuple(self._kappa(a, b) for a, b in zip(window[:-1], window[1:]))
        mean_kappa = float(np.mean(kappas)) if kappas else float("nan")
        older = [k for k in keys if k <= n_labels - self.changed_over]
        since = older[-1] if older else None
        changed = float(np.mean(self._checkpoints[since] != codes)) if since is not None else float("nan")

        if loo_correct is None or len(loo_correct) == 0:
            loo_n, loo_err, lo, hi = 0, float("nan"), 0.0, 1.0
        else:
            ok = np.asarray(loo_correct, dtype=bool)
            loo_n = int(ok.size)
            wrong = int(loo_n - ok.sum())
            loo_err = wrong / loo_n
            lo_acc, hi_acc = wilson_interval(loo_n - wrong, loo_n)
            lo, hi = float(1.0 - hi_acc), float(1.0 - lo_acc)

        full = len(kappas) == self.window
        net = float(np.mean(self._checkpoints[window[0]] != self._checkpoints[window[-1]])) if full else float("nan")
        to_go = 0 if full else self._labels_to_go(keys, n_labels)
        if not full:
            verdict = KEEP_GOING
            message = (f"Keep going: too early to judge. The signal compares the predictions of "
                       f"models {self.spacing} labels apart over {self.window * self.spacing} labels; "
                       f"{to_go} more {'label' if to_go == 1 else 'labels'} first.")
        elif mean_kappa >= self.threshold and uncovered is not None and uncovered > self.max_uncovered:
            verdict = KEEP_GOING
            message = (f"Keep going: {100 * uncovered:.1f} % of the pool lies in clusters that hold no "
                       "label yet. Their predictions come from other clusters and cannot change until "
                       "one of their points is labelled, so the agreement of successive predictions "
                       f"(κ = {mean_kappa:.3f}) says nothing about them. Label a point in each.")
        elif mean_kappa >= self.threshold and net > self.max_window_changed:
            verdict = KEEP_GOING
            message = (f"Keep going: the agreement of successive models is high (κ = {mean_kappa:.3f}), "
                       f"but {100 * net:.1f} % of the pool's predictions changed over the last "
                       f"{window[-1] - window[0]} labels (at most {100 * self.max_window_changed:g} % for "
                       "\"likely enough\"). Further labels are still correcting predictions.")
        elif mean_kappa >= self.threshold and reweighted is not None and (
                weighted_kappa := cohen_kappa(codes, reweighted)) < self.threshold:
            verdict = KEEP_GOING
            message = (f"Keep going: the predictions have stopped changing (κ = {mean_kappa:.3f}), but "
                       f"{100 * float(np.mean(np.asarray(reweighted) != codes)):.1f} % of them change when "
                       f"the classes are weighted by their label counts (κ = {weighted_kappa:.3f}): the "
                       "model may still miss a smaller class.")
        elif mean_kappa >= self.threshold:
            verdict = LIKELY_ENOUGH
            message = (f"Likely enough: predictions have stopped changing (agreement κ = "
                       f"{mean_kappa:.3f} ≥ {self.threshold:g} between models {self.spacing} labels "
                       f"apart over the last {self.window * self.spacing} labels), so further "
                       "labels are unlikely to change many predictions. Check the uncertain "
                       "points, then export.")
        else:
            share = "" if np.isnan(changed) else (f"{100 * changed:.1f} % of the predictions changed over "
                                                  f"the last {n_labels - since} labels; ")
            verdict = KEEP_GOING
            message = (f"Keep going: the predictions are still changing ({share}agreement κ = "
                       f"{mean_kappa:.3f} < {self.threshold:g}). Further labels are likely to help.")
        return StoppingSignal(verdict=verdict, message=message, n_labels=n_labels, kappas=kappas,
                              mean_kappa=mean_kappa, changed_fraction=changed, changed_since=since,
                              loo_error=loo_err, loo_lower=lo, loo_upper=hi, loo_n=loo_n,
                              labels_to_go=to_go,
                              uncovered=float("nan") if uncovered is None else float(uncovered),
                              window_changed=net)
