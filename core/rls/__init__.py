"""Weighted RLS: the scikit-learn estimator, its exact leave-one-out path, class weights.

* :mod:`core.rls.loo`: closed-form LOO residuals for a whole lambda grid (docs/algorithms.md §1).
* :mod:`core.rls.estimator`: :class:`WeightedRLSClassifier`.
* :mod:`core.rls.weights`: class weights -> per-point loss weights.
* :mod:`core.rls.ard`: per-feature RBF widths (and lambda) learned by exact LOO with gradients.
"""

from .ard import RLSWidths, learn_rls_widths, rls_loo_objective
from .loo import LooPath, default_widths, lambda_grid, loo_errors, loo_path, select_index

__all__ = ["WeightedRLSClassifier", "LooPath", "default_widths", "lambda_grid", "loo_errors", "loo_path",
           "select_index", "RLSWidths", "learn_rls_widths", "rls_loo_objective"]


def __getattr__(name):
    """:class:`WeightedRLSClassifier` is imported when first asked for: it is a scikit-learn
    estimator, and scikit-learn costs 0.7-3 s to import on every start of the app, which
    never uses it (:mod:`core.rls.tuning` imports this package)."""
    if name == "WeightedRLSClassifier":
        from .estimator import WeightedRLSClassifier

        return WeightedRLSClassifier
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
