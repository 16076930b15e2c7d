"""Read-only views of a labelling session: tables, confidence bins, LOO curve and export.

:class:`Views` is owned by :class:`~labeler.session.session.LabelingSession` (as
``session.views``; the session's methods of the same names delegate to it): its methods only
read the session's state, never write the store's events. It is given only what it needs:

* the learner (through a getter: the session may rebuild it), ``dataset``, ``X``;
* ``log`` (:class:`labeler.store.LogState`: net labels in labelling order, skips, classes,
  the undo stack) and ``config`` (the current settings);
* ``cached(key, compute)`` (one value per state version);
* the session's :class:`~labeler.session.settings.Settings` (the LOO fit of the state,
  ``auto_tune``, ``tuning_note``, the stopping monitor, the user's label count and the
  predicted classes), the "auto" notes of creation, the recorded risks (``risks()``) and the
  next query (``next_query()``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from core.calibration import estimated_error_rate, fit_calibration, label_suspicion
from core.confidence import confidence_bins as _confidence_bins
from core.criteria.risk import predicted_class_indices
from core.learner.base import CHEAP_LOO, EXPECTED_RISK
from core.rls.tuning import loo_readiness
from core.selection.loo import loo_predicted_classes

from .. import export as _export
from ..store import GUESS_SOURCES
from .config import SessionConfig
from .explain import explain
from .stopping import reweighted_codes, uncovered_share

__all__ = ["Views", "class_codes", "INITIAL_SOURCE", "BULK_ACCEPT_MIN_ACCURACY", "KEEP_SCORE_MARGIN", "label_origin"]

INITIAL_SOURCE = "initial"  # shown source of the labels drawn from the data set at creation
#: A graph model's calibration is refitted after every label up to this many labels, then
#: when the label count has moved by a quarter (its LOO values cost one solve per label).
GRAPH_CALIBRATION_EVERY_LABEL = 20
#: At most this many unlabelled points (every k-th) give the pool's margins for the
#: calibration's pool-margin weights (more classes than two): their quartiles are what is used.
POOL_MARGIN_SAMPLE = 50_000
#: A bin whose accuracy interval reaches below this asks before its predictions are accepted.
BULK_ACCEPT_MIN_ACCURACY = 0.95
#: A kept label (a ``keep`` event) stays off the suspects list while its label is the one kept,
#: the model suggests the class it suggested then, and its suspicion score has not risen by
#: more than this since: a new suggestion or a score this much higher is a material change of
#: the leave-one-out view (new labels nearby), and the label is shown for review again.
KEEP_SCORE_MARGIN = 0.2


def class_codes(values, classes) -> np.ndarray:
    """Integer code of each value in ``classes`` (-1 for None / unknown values).

    Parameters
    ----------
    values : array-like of shape (n,)
        Class names or None.
    classes : sequence of length k

    Returns
    -------
    ndarray of shape (n,) of int32

    Notes
    -----
    The values are factorised first (``pandas.factorize``: one hash pass, missing values coded
    -1) and only the distinct values are looked up: at n = 10^6 this is about 0.05 s where
    ``Series.map(dict)`` took 0.4 s. The screen reads the codes of its labels and predictions
    from :meth:`Views.point_codes` (no pass over names at all).
    """
    code_of = {c: j for j, c in enumerate(classes)}
    code_of.update({str(c): j for j, c in enumerate(classes)})
    codes, uniques = pd.factorize(pd.Series(values, dtype=object).to_numpy(), use_na_sentinel=True)
    lookup = np.array([code_of.get(u, -1) for u in uniques] + [-1], dtype=np.int32)
    return lookup[codes]  # codes == -1 (missing) reads the final -1


class Views:
    """Tables, bins, curves and exports of a session (read-only; see the module docstring).

    Parameters
    ----------
    learner : callable
        ``learner()``: the session's learner now.
    dataset : labeler.data.Dataset
    X : ndarray of shape (n_samples, n_features)
        The features the learner sees.
    log : labeler.store.LogState
        The session's event-log state; read only here.
    config : SessionConfig
        The session's current settings; read only here.
    cached : callable
        ``cached(key, compute)``: one value per state version (``LabelingSession._cached``).
    settings : labeler.session.settings.Settings
        The session's settings (LOO fit, "auto" flags, tuning note, stopping monitor).
    auto_settings : dict
        How the "auto" settings were resolved at creation.
    risks : callable
        ``risks()`` -> {event seq: estimated risk} recorded in the store.
    next_query : callable
        ``next_query()``: the point the strategy asks for now, or None.
    cold_start : callable, optional
        ``cold_start()``: the starter of the "auto" strategy (:mod:`core.coldstart`) or None.
    """

    def __init__(self, learner, dataset, X, log, config, cached, settings, auto_settings, risks,
                 next_query, cold_start=None):
        self._learner = learner
        self.dataset = dataset
        self.X = X
        self.n_samples = X.shape[0]
        self._log = log
        self._config = config
        self._cached = cached
        self._settings = settings
        self._auto_settings = dict(auto_settings)
        self._risks = risks
        self.next_query = next_query
        self._cold_start = cold_start
        self._graph_calibration = None  # (label count, calibration) of a graph model's last fit
        self._error_trace: dict = {}  # label count -> pool error estimate (error_rate_trace)

    # ---- what explain() and the tables read -----------------------------------------------
    @property
    def learner(self):
        """The session's learner now."""
        return self._learner()

    @property
    def config(self) -> SessionConfig:
        """Current settings (a copy)."""
        return SessionConfig.from_dict(self._config.to_dict())

    def cold_start_answering(self):
        """The cold-start picker that answers the "auto" strategy's next query
        (:class:`core.coldstart.ColdStart`, ``ClusterCover`` or ``CriterionStart``), or None
        when the strategy's criterion does."""
        if self._config.strategy != "auto" or self._cold_start is None:
            return None
        starter = self._cold_start()
        if starter is None:
            return None
        n = self.learner.n_labeled
        return starter.answering(n) if hasattr(starter, "answering") else (starter if starter.active(n) else None)

    @property
    def skipped(self) -> list[int]:
        """Skipped points, in skipping order."""
        return list(self._log.skipped)

    @property
    def n_labeled(self) -> int:
        return len(self._log.labels)

    @property
    def n_events(self) -> int:
        """Number of stored events (the state version)."""
        return self._log.n_events

    # ---- sources ---------------------------------------------------------------------------
    def _shown_source(self, rec) -> str:
        """A label's source as shown and exported: its events' ``source`` column
        (:data:`labeler.store.LABEL_SOURCES`: "initial" for the data set's labels at creation,
        "selection", "similar" or "batch" for labels given many at once, ...)."""
        return rec.source

    def _shown_records(self) -> list:
        return list(self._log.labels.values())

    def _labelled_arrays(self):
        idx = np.fromiter(self._log.labels, dtype=np.intp, count=len(self._log.labels))
        y = np.array([r.label for r in self._log.labels.values()], dtype=object)
        return idx, y

    # ---- model views -----------------------------------------------------------------------
    def loo_curve(self) -> dict:
        """The LOO error the automatic tuner sees, around the values in use.

        The model ARLS runs (no offset, the learner's class weights and target codes;
        :func:`core.rls.tuning.auto_tune`): the weighted LOO classification error of the
        labelled points over the width grid at the lam in use, and over the lam grid at the
        width in use. Errors lie in [0, 1]; the grids are the ones the tuner searches.

        Returns
        -------
        dict
            ``lams`` (L,) and ``errors`` (L,) the lam curve; ``widths`` (W,) and
            ``width_errors`` (W,) the width curve (empty without an RBF kernel); ``current``
            and ``width`` the lam and width in use; ``lam`` the lam the tuner would choose
            now (equal to ``current`` when it keeps it); ``chosen_width`` likewise; ``error``
            the LOO error at the values in use; ``auto`` the ``auto_tune`` flags; ``reason``
            the tuner's words; ``n_labels`` the labels the curves are computed on and
            ``pending`` whether those of the labels now are still being computed (the app
            computes them in the background: :meth:`.settings.Settings.tuning`; ``current``
            and ``width`` are then the values those curves were computed at).

        Raises
        ------
        ValueError
            Too few labels (at least 2 labels of each of at least 2 classes);
            :class:`.settings.CurvesPending` before the app's first curves are ready.
        """
        fits = self._settings.tuning()
        fw, fl = fits["width"], fits["lam"]
        width = fits["width_in_use"]  # the values the curves were computed at (pending: earlier ones)
        return {
            "lams": np.asarray(fl.lams), "errors": np.asarray(fl.lam_errors),
            "widths": np.zeros(0) if fw is None else np.asarray(fw.widths),
            "width_errors": np.zeros(0) if fw is None else np.asarray(fw.width_errors),
            "lam": float(fl.lam), "current": float(fits["lam_in_use"]),
            "chosen_width": None if fw is None else float(fw.width),
            "width": None if width is None else float(width),
            "error": float(fl.before_error), "auto": dict(self._settings.auto_tune),
            "reason": "; ".join(f.reason for f in (fw, fl) if f is not None),
            "n_labels": int(fits["n_labels"]), "pending": bool(fits["pending"]),
        }

    def tuning_status(self) -> dict:
        """The width and lam in use and whether each is re-tuned automatically.

        Returns
        -------
        dict
            ``width`` (None without an RBF kernel), ``lam``, ``auto`` ({"width", "lam"}:
            bool), ``note`` (the last re-tune's words, or why it was not applied), ``start``
            (how the starting values were chosen, e.g. {"width": "median pairwise distance"}).
        """
        width, lam = self._config.width, self._config.lam
        return {"width": None if width is None else float(width), "lam": None if lam is None else float(lam),
                "auto": dict(self._settings.auto_tune), "note": self._settings.tuning_note, "start": dict(self._auto_settings)}

    def _loo_rows(self):
        """The labelled points' exact LOO decision values in the log's labelling order.

        Returns ``(idx, y, F, keep)``: point indices (l,), labels (l,) object, LOO decision
        values (l, T) and whether each label is the user's (accepted predictions and grid picks
        left on the model's guess, :data:`labeler.store.GUESS_SOURCES`, are not: they only
        repeat the model's guess), all in :attr:`labels` order.
        """
        idx, y = self._labelled_arrays()
        keep = np.array([r.source not in GUESS_SOURCES for r in self._log.labels.values()],
                        dtype=bool)
        learner = self.learner
        T = learner.n_outputs
        # rows follow the learner's order, which a relabel or an undo may make differ from the log's
        row = {i: k for k, i in enumerate(learner.labels)}
        if len(row) < idx.size:  # labels still being fitted in the background (labeler/session/graph_refit.py)
            held = np.array([i in row for i in idx.tolist()], dtype=bool)
            idx, y, keep = idx[held], y[held], keep[held]
        if idx.size == 0:
            return idx, y, np.zeros((0, T)), keep
        F = np.asarray(learner.loo_decision_values(), dtype=np.float64)
        return idx, y, F[[row[i] for i in idx.tolist()]], keep

    def calibration(self):
        """The temperature fitted on the LOO decision values of the user's labels
        (:func:`core.calibration.fit_calibration`: class-count weights and prior, and with more
        than two classes the pool-margin weights (docs/trust.md); labels that repeat the model's
        guess left out), refitted once per state. Every confidence the session shows or exports uses it."""
        def compute():
            idx, y, F, keep = self._loo_rows()
            classes = list(self.learner.classes)
            codes = np.array([classes.index(v) for v in y], dtype=np.int64)
            pool = None
            if len(classes) > 2:  # the pool-margin weights: measured better on 10 classes only
                mask = np.ones(self.n_samples, dtype=bool)
                mask[list(self._log.labels)] = False
                rows = np.flatnonzero(mask)
                # the margins' quartiles need no more than POOL_MARGIN_SAMPLE points (every k-th)
                rows = rows[::max(1, -(-rows.size // POOL_MARGIN_SAMPLE))]
                pool = np.asarray(self.learner.decision_values, dtype=np.float64)[rows]
            return fit_calibration(F, codes, weights=keep.astype(np.float64), F_pool=pool,
                                   n_classes=len(classes))

        if CHEAP_LOO in self.learner.capabilities:  # ARLS: the LOO values are O(labels), refit every state
            return self._cached("calibration", compute)
        # a graph model's LOO values cost one solve per label: refit while there are few labels,
        # then when the label count moved by a quarter since the last fit
        n = self.n_labeled
        last = self._graph_calibration
        if last is None or n <= GRAPH_CALIBRATION_EVERY_LABEL or not 0.8 * last[0] <= n < 1.25 * last[0]:
            last = (n, compute())
            self._graph_calibration = last
        return last[1]

    def _loo_correct(self) -> np.ndarray:
        """Whether each labelled point's exact LOO prediction is right (accepted predictions
        left out: they only repeat the model's guess), shape (n_kept,); with its calibrated
        confidence. An output within rounding of a class tie is the tie
        (:func:`core.selection.loo.loo_predicted_classes`), as in ``labeler simulate``'s oracle."""
        idx, y, F, keep = self._loo_rows()
        if not keep.any():
            return np.zeros(0, dtype=bool), np.zeros(0)
        F = F[keep]
        _, conf = self.calibration().confidence(F)
        classes = np.array(self._log.classes, dtype=object)
        pred = classes[loo_predicted_classes(F)]  # the model choice's and simulate's rule: rounding decides nothing
        return pred == y[keep], conf

    def pool_error_rate(self, level: float = 0.95):
        """Estimated share of wrong predictions among the unlabelled points, from the
        calibrated probabilities (:func:`core.calibration.estimated_error_rate`), with its
        interval; and the LOO error of the user's labels.

        Returns
        -------
        dict
            ``rate``, ``lower``, ``upper`` (fractions; NaN without unlabelled points), ``n``
            (unlabelled points), ``loo_error`` (NaN without labels), ``n_loo``.

        Raises
        ------
        ValueError
            The labels hold fewer than two classes: every prediction is the class labelled
            so far and every LOO prediction right, so the calibrated estimate would say 0 %
            whatever the pool holds.
        """
        waiting = self._one_class_words("The error estimate")
        if waiting:
            raise ValueError(waiting)

        def compute():
            F = np.asarray(self.learner.decision_values, dtype=np.float64)
            pool = np.ones(self.n_samples, dtype=bool)
            pool[list(self._log.labels)] = False
            est = estimated_error_rate(self.calibration(), F[pool], level)
            correct, _ = self._loo_correct()
            out = {"rate": est.rate, "lower": est.lower, "upper": est.upper, "n": est.n,
                   "loo_error": float(1.0 - correct.mean()) if correct.size else float("nan"),
                   "n_loo": int(correct.size)}
            self._record_error_rate(out)
            return out

        return dict(self._cached(f"pool_error_{level}", compute))

    def _one_class_words(self, what: str) -> str:
        """Why ``what`` waits while the labels hold fewer than two classes ("" once they hold two)."""
        n = len(self._log.labels)
        k = len({r.label for r in self._log.labels.values()})
        if k >= 2:
            return ""
        labels = "1 label" if n == 1 else f"{n:,} labels"
        kinds = "1 class" if k == 1 else f"{k} classes"
        then = "Label a point of another class first." if k == 1 else "Label points of two classes first."
        return (f"{what} needs labels of at least 2 classes; there {'is' if n == 1 else 'are'} {labels} of "
                f"{kinds}. {then}")

    def _model_words(self) -> str:
        """The model in use in a few words (kernel width and lam, or the graph model)."""
        cfg = self._config
        model = getattr(cfg, "model", None) or "rls"
        if model != "rls":
            return str(model)
        width = "" if cfg.width is None else f"width {float(cfg.width):.3g}, "
        return f"{width}λ {float(cfg.lam):.3g}"

    def _record_error_rate(self, out: dict) -> None:
        """Keep the estimate for :meth:`error_rate_trace` (one entry per label count, the latest)."""
        trace = self._error_trace
        trace[self.n_labeled] = {"n_labeled": self.n_labeled, **out, "model": self._model_words()}

    def error_rate_trace(self) -> pd.DataFrame:
        """The pool error estimates of this session's states seen since it was opened, by label
        count: n_labeled, rate, lower, upper, loo_error, model (words), model_changed (the
        model differs from the previous row's: a width, lam or model change)."""
        self.pool_error_rate()
        trace = self._error_trace
        rows = [trace[k] for k in sorted(trace)]
        table = pd.DataFrame(rows, columns=["n_labeled", "rate", "lower", "upper", "n", "loo_error", "n_loo",
                                            "model"])
        table["model_changed"] = table["model"].ne(table["model"].shift()) & (table.index > 0)
        return table

    def suspects(self, hide_kept: bool = False) -> pd.DataFrame:
        """Labelled points ranked by how likely their label is wrong (most suspect first).

        The score is ``1 - p(label)`` under the calibrated exact LOO probabilities
        (:func:`core.calibration.label_suspicion`): the model fitted without the point.

        Parameters
        ----------
        hide_kept : bool
            Leave out the labels the user kept (``kept`` True).

        Returns
        -------
        pandas.DataFrame
            Columns index, id, label, suggested, score, source, rank (1 = most suspect) and
            kept: the label was kept (a ``keep`` event) and the model's view of it has not
            changed materially since (same label and suggestion, score at most
            :data:`KEEP_SCORE_MARGIN` higher).
        """
        def compute():
            idx, y, F, _ = self._loo_rows()
            classes = list(self.learner.classes)
            codes = np.array([classes.index(v) for v in y], dtype=np.int64)
            if idx.size:
                score, suggested = label_suspicion(self.calibration(), F, codes)
            else:
                score, suggested = np.zeros(0), np.zeros(0, dtype=np.int64)
            names = np.array(self._log.classes, dtype=object)
            recs = list(self._log.labels.values())
            table = pd.DataFrame({
                "index": idx, "id": np.asarray(self.dataset.ids)[idx] if idx.size else np.zeros(0, dtype=object),
                "label": pd.Series(y, dtype=object),
                "suggested": pd.Series(names[suggested] if idx.size else [], dtype=object),
                "score": score,
                "source": pd.Series([self._shown_source(r) for r in recs], dtype=object),
            })
            kept = self._log.kept
            table["kept"] = np.array([
                (k := kept.get(int(i))) is not None and k.label == lab and k.suggested == sug
                and sc <= k.score + KEEP_SCORE_MARGIN
                for i, lab, sug, sc in zip(table["index"], table["label"], table["suggested"], table["score"])],
                dtype=bool)
            table = table.sort_values("score", ascending=False, kind="stable").reset_index(drop=True)
            table["rank"] = np.arange(1, len(table) + 1)
            return table

        table = self._cached("suspects", compute).copy()
        return table[~table["kept"]].reset_index(drop=True) if hide_kept else table

    def stopping_signal(self):
        """Whether further labels are likely to help (:class:`.stopping.StoppingSignal`):
        stabilising predictions over the pool, the share of changed predictions and the LOO
        error of the labelled points with its interval (:mod:`.stopping`)."""
        def compute():
            correct, _ = self._loo_correct()
            ready = not loo_readiness([r.label for r in self._log.labels.values()])
            clusters = self._settings.coverage_clusters()
            users = [i for i, r in self._log.labels.items() if r.source not in GUESS_SOURCES]  # guesses cover nothing
            uncovered = None if clusters is None else uncovered_share(clusters, users)
            return self._settings.stopping_monitor.signal(self._settings.user_label_count(),
                                                          self._settings.predicted_codes(),
                                                          correct if ready and correct.size else None,
                                                          uncovered=uncovered,
                                                          reweighted=reweighted_codes(self._learner()))

        return self._cached("stopping", compute)

    def bulk_accept_risk(self, lo: float, hi: float, n_bins: int = 10) -> dict:
        """What accepting the predictions of the unlabelled points of a confidence bin risks.

        The bin's accuracy is estimated from the LOO predictions of the labelled points in
        the same bin (:meth:`confidence_bins`), with its Wilson 95 % interval; the expected
        number of wrong labels among the ``n`` points is ``n (1 - accuracy)``, between
        ``n (1 - upper)`` and ``n (1 - lower)``.

        Returns
        -------
        dict
            ``points`` (indices), ``n``, ``labelled`` (labelled points behind the estimate),
            ``accuracy`` (NaN without any), ``lower``, ``upper``, ``expected_wrong``,
            ``wrong_low``, ``wrong_high`` and ``uncertain``: True when the interval allows
            more than 5 % wrong (lower bound < 0.95) -- then the app asks for confirmation.
        """
        points = self.points_in_bin(lo, hi)
        bins = self.confidence_bins(n_bins=n_bins)
        centre = 0.5 * (float(lo) + min(float(hi), 1.0))
        b = int(np.clip(np.searchsorted(bins.edges, centre, side="right") - 1, 0, len(bins.counts) - 1))
        n = int(points.size)
        acc, lower, upper = float(bins.accuracy[b]), float(bins.lower[b]), float(bins.upper[b])
        return {
            "points": points, "n": n, "labelled": int(bins.counts[b]), "accuracy": acc,
            "lower": lower, "upper": upper,
            "expected_wrong": float("nan") if np.isnan(acc) else n * (1.0 - acc),
            "wrong_low": n * (1.0 - upper), "wrong_high": n * (1.0 - lower),
            "uncertain": bool(lower < BULK_ACCEPT_MIN_ACCURACY),
        }

    def explain_query(self, index: int | None = None, n_alternatives: int = 3):
        """Why the strategy asks for ``index`` (default: the next query).

        Returns
        -------
        QueryExplanation or None
            None when there is no query.
        """
        q = self.next_query() if index is None else int(index)
        if q is None:
            return None
        return self._cached(f"explain_{q}_{n_alternatives}",
                            lambda: explain(self, q, int(n_alternatives)))

    def _soft(self):
        """(predicted class of every point, its calibrated confidence), once per state."""
        return self._predicted_names(), self._calibrated_confidence()

    def _calibrated_confidence(self) -> np.ndarray:
        def compute():
            conf = self.calibration().top_confidence(self.learner.decision_values)
            if CHEAP_LOO in self.learner.capabilities and not self._one_class_words(""):
                self.pool_error_rate()  # one point of the progress tab's trace per state (ARLS: cheap)
            return conf

        return self._cached("confidence", compute)

    def _predicted_names(self) -> np.ndarray:
        """The predicted class of every point (10^6 Python objects at 10^6 points: only for
        the tables, never for the labelling screen), once per state."""
        return self._cached("predicted", lambda: np.asarray(self.learner.predict()))

    def expected_risk(self) -> np.ndarray:
        """Expected risk of querying each point (eq. 3.50; +inf for labelled points), shape
        (n_samples,). Computed only when asked, once per state (the "arls" strategy's
        ``next_query`` computes the same scores, which the learner keeps). NaN everywhere
        where the model has no expected-risk rule (LGC; a harmonic model on a large pool)."""
        def compute():
            if EXPECTED_RISK not in self.learner.capabilities:
                return np.full(self.n_samples, np.nan)
            return np.asarray(self.learner.expected_risk(), dtype=np.float64)

        return self._cached("expected_risk", compute).copy()

    def predictions(self, with_risk: bool = False) -> pd.DataFrame:
        """Per point: id, predicted, confidence (calibrated: :meth:`calibration`), label (or None), source
        (or None); with ``with_risk`` also expected_risk (:meth:`expected_risk`, +inf for
        labelled points: an O(n^2) pass, so only when asked). Indexed by point index."""
        def compute():
            predicted, conf = self._soft()
            label = np.full(self.n_samples, None, dtype=object)
            source = np.full(self.n_samples, None, dtype=object)
            for i, rec in self._log.labels.items():
                label[i], source[i] = rec.label, self._shown_source(rec)
            return pd.DataFrame(
                {
                    "id": np.asarray(self.dataset.ids),
                    "predicted": pd.Series(predicted.astype(object), dtype=object),
                    "confidence": conf,
                    "label": pd.Series(label, dtype=object),
                    "source": pd.Series(source, dtype=object),
                },
                index=pd.RangeIndex(self.n_samples, name="index"),
            )

        table = self._cached("predictions", compute).copy()
        if with_risk:
            table.insert(3, "expected_risk", self.expected_risk())
        return table

    def confidence_bins(self, n_bins: int = 10):
        """Accuracy per calibrated-confidence bin of the labelled points' LOO predictions, with the
        count and a Wilson 95 % interval per bin.

        Uses the learner's exact LOO outputs (docs/algorithms.md §3: ``y_j - m_j`` after removing j),
        so the accuracy is an honest estimate. Accepted predictions are left out: their label
        is the model's own guess, so they would only confirm it. Returns
        :class:`core.confidence.ConfidenceBins` (``counts``, ``correct``, ``lower``,
        ``upper``: :func:`core.confidence.wilson_interval`).
        """
        correct, conf = self._loo_correct()
        return _confidence_bins(conf, correct, n_bins)

    def points_in_bin(self, lo: float, hi: float) -> np.ndarray:
        """Unlabelled points with calibrated confidence in ``[lo, hi)`` (``[lo, 1]`` when hi >= 1,
        matching the last bin of :meth:`confidence_bins`). Sorted indices."""
        lo, hi = float(lo), float(hi)
        if not lo < hi:
            raise ValueError(f"Need lo < hi; got lo={lo}, hi={hi}.")
        conf = self._calibrated_confidence()
        inside = (conf >= lo) & ((conf < hi) | ((hi >= 1.0) & (conf <= hi)))
        inside[list(self._log.labels)] = False
        return np.flatnonzero(inside)

    def confidence(self) -> np.ndarray:
        """The calibrated confidence of every prediction (the ``confidence`` column of
        :meth:`predictions`), shape (n_samples,), a copy."""
        return np.array(self._calibrated_confidence(), dtype=np.float64)

    def point_codes(self) -> tuple[np.ndarray, np.ndarray]:
        """The class code (index in ``classes``) of every point's label, -1 where unlabelled,
        and of its prediction: what :func:`labeler.ui.view.class_codes` gives for the
        ``label`` and ``predicted`` columns of :meth:`predictions`, from the labels and the
        learner's outputs instead of 10^6 class names (two hash passes over Python strings per
        render at 10^6 points). Once per state; copies.

        Returns
        -------
        label_codes, predicted_codes : ndarray of shape (n_samples,) of int32
        """
        def compute():
            from core.learner.base import LearnerBase

            classes = list(self._log.classes)
            code_of = {c: j for j, c in enumerate(classes)}
            code_of.update({str(c): j for j, c in enumerate(classes)})
            label = np.full(self.n_samples, -1, dtype=np.int32)
            if self._log.labels:
                idx = np.fromiter(self._log.labels, dtype=np.intp, count=len(self._log.labels))
                label[idx] = [code_of.get(r.label, -1) for r in self._log.labels.values()]
            learner = self.learner
            if type(learner).predict is LearnerBase.predict:  # classes[predicted_class_indices(m)]
                lookup = np.array([code_of.get(c, -1) for c in learner.classes] + [-1], dtype=np.int32)
                predicted = lookup[predicted_class_indices(learner.decision_values)]
            else:  # any other rule: its class names, coded
                predicted = class_codes(learner.predict(), classes)
            return label, predicted

        label, predicted = self._cached("point_codes", compute)
        return label.copy(), predicted.copy()

    def class_counts(self) -> dict[str, int]:
        """Number of labels per class (every class, zeros included)."""
        counts = {c: 0 for c in self._log.classes}
        for rec in self._log.labels.values():
            counts[rec.label] += 1
        return counts

    @property
    def history(self) -> pd.DataFrame:
        """One row per net label, in labelling order: order (1-based), index, id, label,
        source, timestamp (UTC), n_labeled, estimated_risk (of the model right after the
        label, or after the whole accepted batch; NaN if the process died before recording
        it)."""
        ids = np.asarray(self.dataset.ids)
        recs = list(self._log.labels.values())
        order = np.arange(1, len(recs) + 1)
        risks = self._risks() if recs else {}
        return pd.DataFrame(
            {
                "order": order,
                "index": np.array([r.index for r in recs], dtype=np.intp),
                "id": ids[[r.index for r in recs]] if recs else ids[:0],
                "label": pd.Series([r.label for r in recs], dtype=object),
                "source": pd.Series([self._shown_source(r) for r in recs], dtype=object),
                "timestamp": pd.to_datetime(
                    pd.Series([r.timestamp for r in recs], dtype=object), utc=True, format="ISO8601"
                ),
                "n_labeled": order,
                "estimated_risk": np.array([risks.get(r.seq, np.nan) for r in recs], dtype=np.float64),
            }
        )

    # ---- export ----------------------------------------------------------------------------
    def export_table(self, include_predictions: bool = False) -> pd.DataFrame:
        """The table :meth:`export` writes (see :mod:`labeler.export`)."""
        ds = self.dataset
        original = getattr(ds, "frame", None)
        if original is None:
            names = list(getattr(ds, "feature_names", None) or [f"x{j}" for j in range(self.X.shape[1])])
            original = pd.DataFrame(np.asarray(ds.X), columns=names)
        kw = {}
        if include_predictions:
            predicted, conf = self._soft()
            kw = {"predicted": predicted.astype(object), "confidence": conf}
        table = _export.label_table(ds.ids, self._shown_records(), original=original, **kw)
        return self._native_class_values(table)

    def _native_class_values(self, table: pd.DataFrame) -> pd.DataFrame:
        """Give ``label`` and ``predicted`` the data set's own class values (e.g. ints).

        The session names classes by strings; when every class is one of the data set's and
        those are not strings, the exported columns use the original values, so that they
        compare equal to the data set's own label column. Classes added while labelling keep
        the strings (one column must have one type).
        """
        native = {}
        for c in getattr(self.dataset, "classes", None) or []:
            value = c.item() if isinstance(c, np.generic) else c
            native[str(value)] = value
        if not native or any(isinstance(v, str) for v in native.values()) \
                or not set(self._log.classes) <= set(native):
            return table
        ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in native.values())
        for col in ("label", "predicted"):
            if col in table:
                values = table[col].map(lambda v: native.get(v, v) if isinstance(v, str) else v)
                # nullable integers: unlabelled rows (None) must not turn the column into floats
                table[col] = values.astype("Int64") if ints else values
        return table

    def export(self, path, format: str | None = None, include_predictions: bool = False) -> Path:
        """Write the labels to ``path`` atomically; returns the path.

        Parameters
        ----------
        path : path-like
        format : {"csv", "jsonl", "parquet", "zip"}, optional
            Default: from the file suffix. "zip" needs an image data set.
        include_predictions : bool
            Add predicted class and confidence and export every point.

        Raises
        ------
        labeler.export.ExportError
            Unknown format, zip without images. OSError subclasses: unwritable path.
        """
        fmt = _export.infer_format(path, format)
        if fmt == "zip":
            images = getattr(self.dataset, "images", None)
            paths = getattr(self.dataset, "image_paths", None)
            if images is None and paths is None:
                raise _export.ExportError(
                    f"The zip export writes one folder of images per class, but data set "
                    f"{self._config.dataset!r} has no images. Export CSV, JSONL or Parquet instead."
                )
            table = self.export_table(include_predictions)
            return _export.write_image_zip(table, path, images=images, image_paths=paths)
        return _export.write_table(self.export_table(include_predictions), path, fmt)
