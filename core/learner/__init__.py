"""The ARLS learner: one class over any posterior store (:mod:`core.posteriors`).

* :mod:`core.learner.arls`: :class:`ActiveRLS` (add, remove, relabel, reweight, rebuild).
* :mod:`core.learner.weighting`: class weights ("none", "balanced", dict).
* :mod:`core.learner.out_of_pool`: the learner's predictions off its pool (dual coefficients).
"""

from .arls import ActiveRLS, NumericalRebuildWarning
from .weighting import WEIGHTINGS

__all__ = ["ActiveRLS", "NumericalRebuildWarning", "WEIGHTINGS"]
