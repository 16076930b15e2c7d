"""When the model in use gives way to another: a paired sign test on the LOO losses.

The model in use (the incumbent) keeps answering until a challenger beats it with evidence,
so the choice does not flip-flop between models whose LOO errors differ by noise
(docs/algorithms.md §14). At each evaluation:

1. below :data:`MIN_LABELS` labels nothing changes (a LOO error on a few labels says little);
2. the challenger is the candidate of lowest weighted LOO error other than the incumbent; a
   challenger not strictly better than the incumbent changes nothing (a tie keeps it);
3. on the labels where exactly one of the two errs (the discordant labels), the weighted sign
   test :func:`weighted_sign_test` asks whether the challenger is right more often than chance
   allows; it takes over when the one-sided p-value is below ``P_SWITCH / 2^s``, ``s`` the
   switches made so far (alpha spending: over a whole session the chance of switching on
   noise stays below ``2 P_SWITCH``).

The rule is symmetric in the two models but not in their roles: a model that has just lost
must win a stricter test to come back, which is the hysteresis. The halving is measured: with
one threshold for every switch, the queries of the model in use (margin: its own uncertain
points) lower its LOO error's standing and the choice swung back and forth (rls <-> poisson,
four switches at p = 0.07-0.09 on mnist-4v9, ``python benchmarks/auto_model.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import betainc

from ..criteria.auto import MAX_RISK_LABELS
from .loo import weighted_error

__all__ = ["SwitchRule", "Decision", "weighted_sign_test", "MIN_LABELS", "P_SWITCH"]

#: No switch before this many labels: the "auto" strategy's switch to margin
#: (core/criteria/auto.py), so a model without an expected-risk rule is never asked for one.
MIN_LABELS = MAX_RISK_LABELS
#: A challenger takes over when the sign test's one-sided p-value is below this.
P_SWITCH = 0.1


def weighted_sign_test(wins, losses) -> float:
    """One-sided p-value that the challenger wins the discordant labels by chance.

    Parameters
    ----------
    wins : array-like of float
        Weights of the labels where the challenger is right and the incumbent wrong.
    losses : array-like of float
        Weights of the labels where the incumbent is right and the challenger wrong.

    Returns
    -------
    float
        ``P(B >= k)`` for ``B ~ Binomial(m, 1/2)`` with the effective count
        ``m = (sum w)^2 / sum w^2`` of the discordant labels (Kish) and ``k = m`` times the
        challenger's share of their weight, by the regularised incomplete beta function
        ``I_{1/2}(k, m - k + 1)`` (the binomial tail extended to real counts). With equal
        weights this is the exact sign test. 1.0 without discordant labels.
    """
    wins = np.asarray(wins, dtype=np.float64)
    losses = np.asarray(losses, dtype=np.float64)
    w = np.concatenate([wins, losses])
    total = w.sum()
    if w.size == 0 or total <= 0:
        return 1.0
    m = total ** 2 / np.dot(w, w)
    k = m * wins.sum() / total
    if k <= 0:
        return 1.0
    return float(betainc(k, m - k + 1.0, 0.5))


@dataclass(frozen=True)
class Decision:
    """The outcome of one evaluation.

    Attributes
    ----------
    model : str
        The candidate that answers after this evaluation.
    switched : bool
        Whether it differs from the incumbent before.
    errors : dict {name: float}
        Each candidate's weighted LOO error.
    challenger : str or None
        The best other candidate (None with one candidate).
    p_value : float
        The sign test's p-value for the challenger (1.0 when not run).
    n_labels : int
    reason : str
        The outcome in words.
    """

    model: str
    switched: bool
    errors: dict = field(default_factory=dict)
    challenger: str | None = None
    p_value: float = 1.0
    n_labels: int = 0
    reason: str = ""


@dataclass(frozen=True)
class SwitchRule:
    """The switching rule (module docstring).

    Parameters
    ----------
    p_switch : float
        Largest p-value of the sign test at which the challenger takes over (the first time).
    min_labels : int
        No switch below this many labels.
    spend : bool
        Halve the threshold after each switch (``p_switch / 2^s``); False: one threshold.
    """

    p_switch: float = P_SWITCH
    min_labels: int = MIN_LABELS
    spend: bool = True

    def threshold(self, n_switches: int = 0) -> float:
        """The p-value below which a challenger takes over after ``n_switches`` switches."""
        return self.p_switch / 2 ** int(n_switches) if self.spend else self.p_switch

    def decide(self, incumbent: str, losses: dict, weights, n_switches: int = 0) -> Decision:
        """Keep the incumbent or switch to the challenger.

        Parameters
        ----------
        incumbent : str
            The candidate in use (a key of ``losses``).
        losses : dict {name: ndarray of shape (l,)}
            Each candidate's 0/1 LOO loss per label, labels in one order.
        weights : ndarray of shape (l,)
            The labels' weights (:func:`core.selection.loo.label_weights`), summing to 1.
        n_switches : int
            Switches made so far (the threshold is :meth:`threshold`).

        Returns
        -------
        Decision
        """
        if incumbent not in losses:
            raise ValueError(f"the model in use {incumbent!r} is not a candidate ({', '.join(losses)}).")
        weights = np.asarray(weights, dtype=np.float64)
        n = weights.size
        errors = {name: weighted_error(loss, weights) for name, loss in losses.items()}
        others = [name for name in losses if name != incumbent]
        if not others:
            return Decision(incumbent, False, errors, None, 1.0, n, "the only candidate")
        challenger = min(others, key=lambda name: (errors[name], others.index(name)))
        if n < self.min_labels:
            return Decision(incumbent, False, errors, challenger, 1.0, n,
                            f"waiting for {self.min_labels} labels ({n} so far)")
        if not errors[challenger] < errors[incumbent]:
            return Decision(incumbent, False, errors, challenger, 1.0, n,
                            f"no other model has a lower leave-one-out error (best other: {challenger})")
        inc, ch = np.asarray(losses[incumbent]), np.asarray(losses[challenger])
        p = weighted_sign_test(weights[(inc > 0) & (ch == 0)], weights[(inc == 0) & (ch > 0)])
        alpha = self.threshold(n_switches)
        if p < alpha:
            return Decision(challenger, True, errors, challenger, p, n,
                            f"{challenger} beats {incumbent} on the labels (sign test p = {p:.3f} < {alpha:.3g})")
        return Decision(incumbent, False, errors, challenger, p, n,
                        f"{challenger} is ahead but not by enough (sign test p = {p:.3f} >= {alpha:.3g})")
