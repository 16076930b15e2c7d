"""Weighted RLS: the scikit-learn estimator, its exact leave-one-out path, class weights.

* :mod:`core.rls.loo`: closed-form LOO residuals for a whole lambda grid (docs/algorithms.md §1).
* :mod:`core.rls.estimator`: :class:`WeightedRLSClassifier`.
* :mod:`core.rls.weights`: class weights -> per-point loss weights.
* :mod:`core.rls.ard`: per-feature RBF widths (and lambda) learned by exact LOO with gradients.
"""

from .ard import RLSWidths, learn_rls_widths, rls_loo_objective
from .estimator import WeightedRLSClassifier
from .loo import LooPath, default_widths, lambda_grid, loo_errors, loo_path, select_index

__all__ = ["WeightedRLSClassifier", "LooPath", "default_widths", "lambda_grid", "loo_errors", "loo_path",
           "select_index", "RLSWidths", "learn_rls_widths", "rls_loo_objective"]
