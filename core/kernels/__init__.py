"""Kernels and low-rank kernel factors.

* :mod:`core.kernels.kernel`: kernel functions evaluated in row blocks (:class:`Kernel`).
* :mod:`core.kernels.factors`: factors ``Phi`` with ``K ~ Phi Phi^T`` (docs/algorithms.md §8) for the
  low-rank posterior: exact (eigen) and Nystrom.
* :mod:`core.kernels.ard`: per-feature (ARD) RBF widths: scaled distances, width gradients.
* :mod:`core.kernels.graph`: kNN graphs, Laplacians and spectral graph kernels as factors (§5, §9).
"""

from .ard import check_widths, scaled_sq_distances, width_contraction
from .factors import LANDMARK_METHODS, eigen_factor, nystrom_factor
from .graph import TRANSFORMS, knn_graph, knn_neighbours, laplacian, laplacian_eigenpairs, neighbour_graph, spectral_factor
from .kernel import KERNELS, Kernel, median_distance

__all__ = ["Kernel", "KERNELS", "median_distance", "eigen_factor", "nystrom_factor", "LANDMARK_METHODS",
           "knn_graph", "knn_neighbours", "neighbour_graph", "laplacian", "laplacian_eigenpairs", "spectral_factor", "TRANSFORMS",
           "check_widths", "scaled_sq_distances", "width_contraction"]
