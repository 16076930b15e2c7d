"""Model choice by exact leave-one-out on the labels (issue 20 §2; docs/algorithms.md §14).

* :mod:`core.selection.loo`: each candidate's exact LOO losses on the labels, and the label
  weights that correct for actively chosen labels (the pool mass each label stands for,
  balanced over the classes when class weights are on).
* :mod:`core.selection.rule`: the switching rule: a challenger replaces the model in use only
  when it beats it on a paired sign test over the labels (p < 0.1, at least
  :data:`~core.selection.rule.MIN_LABELS` labels), never on a tie.
* :mod:`core.selection.selector`: :class:`ModelSelector`, the candidates kept in step with the
  labels (lazily: a candidate is given the labels it lacks only when it is evaluated) and the
  one in use.
"""

from .loo import label_weights, loo_losses, nearest_labelled_mass, weighted_error
from .rule import MIN_LABELS, P_SWITCH, Decision, SwitchRule, weighted_sign_test
from .selector import GRAPH_STRATEGY, ModelSelector, evaluation_due, strategy_in_use

__all__ = ["loo_losses", "nearest_labelled_mass", "label_weights", "weighted_error", "SwitchRule", "Decision",
           "weighted_sign_test", "MIN_LABELS", "P_SWITCH", "ModelSelector", "evaluation_due", "GRAPH_STRATEGY",
           "strategy_in_use"]
