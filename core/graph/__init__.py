"""Graph-based semi-supervised models (docs/algorithms.md §5, §9; seeds 000, 001, 003, 004).

* :mod:`core.graph.harmonic`: harmonic function / Laplace learning, preconditioned CG,
  class mass normalisation (:class:`HarmonicFunction`).
* :mod:`core.graph.lgc`: local and global consistency and LGC ranking (:class:`LocalGlobalConsistency`).
* :mod:`core.graph.spectral`: spectral graph kernels (diffusion, Gaussian field, maximal
  alignment, order-constrained, improved order) as factors ``Phi`` for ARLS.
* :mod:`core.graph.zhu`: Zhu et al.'s harmonic active learning, exact on small pools.
* :mod:`core.graph.hyper`: per-feature graph widths learned by leave-one-out (LOOHL, seed 003)
  or entropy minimisation (MinEnt, seeds 001 and 003) on the dense harmonic function.

The graph itself comes from :func:`core.kernels.knn_graph`, the eigenpairs from
:func:`core.kernels.laplacian_eigenpairs`.
"""

from .hyper import (WIDTH_METHODS, GraphWidths, harmonic_loo, harmonic_soft_labels, learn_graph_widths,
                    loohl_objective, minent_objective, transition_matrix)
from .harmonic import PRECONDITIONERS, SOLVERS, HarmonicFunction, class_mass_normalize
from .lgc import LGC_FORMS, LGC_SOLVERS, LocalGlobalConsistency
from .spectral import (ALIGNMENT_TRANSFORMS, SPECTRAL_TRANSFORMS, aligned_spectrum, fit_parametric_spectrum,
                       kernel_target_alignment, parametric_spectrum, spectrum_factor, target_matrix)
from .zhu import ZhuActiveLearning, harmonic_risk

__all__ = ["HarmonicFunction", "class_mass_normalize", "SOLVERS", "PRECONDITIONERS",
           "LocalGlobalConsistency", "LGC_FORMS", "LGC_SOLVERS",
           "ALIGNMENT_TRANSFORMS", "SPECTRAL_TRANSFORMS", "aligned_spectrum", "fit_parametric_spectrum",
           "kernel_target_alignment", "parametric_spectrum", "spectrum_factor", "target_matrix",
           "ZhuActiveLearning", "harmonic_risk",
           "WIDTH_METHODS", "GraphWidths", "harmonic_loo", "harmonic_soft_labels", "learn_graph_widths",
           "loohl_objective", "minent_objective", "transition_matrix"]
