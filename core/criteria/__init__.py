"""Query criteria: the risk formulas and the scores that choose the next point.

* :mod:`core.criteria.risk`: estimated risk of outputs (eq. 3.47 / 3.49), probabilities,
  decision rule, and the plain expected-risk reference (the oracle).
* :mod:`core.criteria.expected_risk`: the ARLS criterion (eq. 3.50) on fused kernels.
* :mod:`core.criteria.simple`: margin and random.
* :mod:`core.criteria.auto`: the default, expected risk while cold and margin once warm.

``CRITERIA`` maps each strategy name to its criterion class.
"""

from .auto import Auto
from .base import Criterion, ScoringState
from .expected_risk import ExpectedRisk
from .simple import Margin, Random

CRITERIA = {"auto": Auto, "arls": ExpectedRisk, "margin": Margin, "random": Random}

__all__ = ["CRITERIA", "Criterion", "ScoringState", "Auto", "ExpectedRisk", "Margin", "Random", "get_criterion"]


def get_criterion(name: str):
    """A criterion instance by strategy name (``"auto"``, ``"arls"``, ``"margin"``, ``"random"``)."""
    try:
        return CRITERIA[name]()
    except (KeyError, TypeError):
        raise ValueError(f"unknown strategy {name!r}; choose one of {', '.join(CRITERIA)}.") from None
