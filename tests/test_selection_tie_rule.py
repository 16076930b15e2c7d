"""Every place that decides whether a LOO prediction is right uses core.selection.loo's rule:
outputs within TIE_TOLERANCE of a tie are the tie (docs/algorithms.md §14)."""

from __future__ import annotations

import numpy as np

from core.selection.loo import TIE_TOLERANCE, loo_losses, loo_predicted_classes
from labeler.experiments.oracle import loo_correct


class _FixedLoo:
    """A learner whose LOO outputs are given (rounding-size ones among them)."""

    capabilities = frozenset({"loo"})

    def __init__(self, F, classes, labels):
        self._F = np.asarray(F, dtype=np.float64)
        self.classes = list(classes)
        self.labels = dict(labels)
        self.n_labeled = len(self.labels)

    def require(self, capability, what):
        return None

    def loo_decision_values(self):
        return self._F


def test_oracle_loo_correct_takes_rounding_size_outputs_as_ties():
    tiny = TIE_TOLERANCE / 10
    binary = _FixedLoo([[tiny], [-tiny], [0.5]], ["a", "b"], {0: "a", 1: "a", 2: "b"})
    np.testing.assert_array_equal(loo_correct(binary), [True, True, True])
    np.testing.assert_array_equal(loo_correct(binary), loo_losses(binary) == 0)
    three = _FixedLoo([[0.2, 0.2 + tiny, -1.0], [-1.0, 0.1, 0.1 - tiny], [0.0, -1.0, 0.3]],
                      ["a", "b", "c"], {0: "a", 1: "b", 2: "c"})
    np.testing.assert_array_equal(loo_correct(three), [True, True, True])
    np.testing.assert_array_equal(loo_predicted_classes(three.loo_decision_values()), [0, 1, 2])


def test_the_apps_stopping_signal_reads_loo_correctness_by_the_same_rule():
    """The session's views (the stopping signal, the LOO error on screen) and ``labeler simulate``'s
    oracle decide alike on rounding-size outputs (a label alone in its cluster)."""
    from types import SimpleNamespace

    from labeler.session.views import Views

    tiny = TIE_TOLERANCE / 10
    F = np.array([[tiny], [-tiny], [0.5], [-0.3]])
    views = Views.__new__(Views)
    views._loo_rows = lambda: (np.arange(4), np.array(["a", "a", "b", "b"], dtype=object), F,
                               np.ones(4, dtype=bool))
    views.calibration = lambda: SimpleNamespace(confidence=lambda F: (None, np.full(len(F), 0.5)))
    views._log = SimpleNamespace(classes=["a", "b"])
    correct, _ = views._loo_correct()
    np.testing.assert_array_equal(correct, [True, True, True, False])  # tiny > 0 is "a": the tie
    learner = _FixedLoo(F, ["a", "b"], {0: "a", 1: "a", 2: "b", 3: "b"})
    np.testing.assert_array_equal(correct, loo_correct(learner))
