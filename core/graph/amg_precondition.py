"""A multigrid preconditioner for the harmonic function's system, kept while labels arrive.

The harmonic step solves ``Delta_UU F_U = W_UL Y_L`` (docs/algorithms.md §5) on the unlabelled
nodes ``U`` after every label. With few labels ``Delta_UU`` is a Laplacian grounded at a handful
of nodes: its condition number grows with the square of the graph's diameter, and Jacobi-
preconditioned CG needs hundreds of iterations per class to a relative residual of 1e-12 (about
700 at 20,000 points of two-moons, seconds per label). Smoothed-aggregation algebraic multigrid
(Vanek, Mandel and Brezina 1996; pyamg) preconditions it to about 25 iterations whatever the size,
but its set-up costs as much as a few dozen of those iterations.

:class:`GroundedLaplacianAMG` builds the hierarchy of ``Delta_UU`` once and keeps using it while
labels are added: a later system is a principal submatrix ``Delta_U'U'`` (``U' ⊂ U``), and the
hierarchy's V-cycle restricted to ``U'`` (``v -> (M [v; 0])_U'``, symmetric positive definite as
``M`` is) preconditions it with at most ``|U \\ U'|`` extra outlying eigenvalues (interlacing), so
CG needs a few more iterations per label added since the set-up; past :data:`REBUILD_AFTER`
labels, or when a label is removed (``U'`` no longer inside ``U``), the hierarchy is rebuilt.
The preconditioner changes only the iterations, not the answer: CG still stops at the same
relative residual (the tests compare with a sparse LU).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator

__all__ = ["GroundedLaplacianAMG", "NodeSetAMG", "kernel_projection", "AMG_ABOVE", "REBUILD_AFTER"]

#: Systems of at least this many unknowns use the multigrid preconditioner (below, Jacobi CG is
#: fast enough and the set-up would dominate).
AMG_ABOVE = 4000
#: Labels added since the hierarchy was built after which it is rebuilt (each adds at most one
#: outlying eigenvalue to the preconditioned system: a CG iteration or two).
REBUILD_AFTER = 40


class GroundedLaplacianAMG:
    """Smoothed-aggregation AMG of ``Delta_UU``, reused on later subsets of ``U``.

    Parameters
    ----------
    rebuild_after : int
        See :data:`REBUILD_AFTER`.

    Attributes
    ----------
    n_builds : int
        Hierarchies built so far (a test reads it).
    """

    def __init__(self, rebuild_after: int = REBUILD_AFTER):
        self.rebuild_after = int(rebuild_after)
        self.n_builds = 0
        self._free = None  # U of the hierarchy, sorted node indices, shape (u0,)
        self._solver = None

    def reset(self) -> None:
        """Forget the hierarchy (the graph changed)."""
        self._free = None
        self._solver = None

    def operator(self, A: sp.spmatrix, free: np.ndarray) -> LinearOperator:
        """The preconditioner of ``A = Delta_UU`` for the unlabelled nodes ``free``.

        Parameters
        ----------
        A : scipy.sparse matrix of shape (u, u)
            The grounded Laplacian on ``free`` (rows and columns in the order of ``free``).
        free : ndarray of int, shape (u,)
            The nodes of ``A``'s rows, sorted.

        Returns
        -------
        scipy.sparse.linalg.LinearOperator of shape (u, u)
            One V-cycle of the kept hierarchy (restricted to ``free`` when it was built for a
            superset), symmetric positive definite.
        """
        import pyamg

        free = np.asarray(free, dtype=np.intp)
        kept = self._free
        pos = None
        if kept is not None and kept.size - free.size <= self.rebuild_after:
            pos = np.searchsorted(kept, free)
            if pos.size and (pos[-1] >= kept.size or not np.array_equal(kept[np.minimum(pos, kept.size - 1)], free)):
                pos = None
        if pos is None:
            self._solver = pyamg.smoothed_aggregation_solver(sp.csr_matrix(A), symmetry="hermitian")
            self._free = free.copy()
            self.n_builds += 1
            pos = np.arange(free.size)
        solver, u0 = self._solver, self._free.size
        if pos.size == u0:
            return LinearOperator(A.shape, matvec=lambda v: solver.solve(np.ravel(v), x0=np.zeros(u0), tol=1e-30,
                                                                         maxiter=1, cycle="V"), dtype=np.float64)

        def matvec(v, pos=pos):
            full = np.zeros(u0)
            full[pos] = np.ravel(v)
            return solver.solve(full, x0=np.zeros(u0), tol=1e-30, maxiter=1, cycle="V")[pos]

        return LinearOperator(A.shape, matvec=matvec, dtype=np.float64)


def _v_cycle(solver, shape) -> LinearOperator:
    n = shape[0]
    return LinearOperator(shape, matvec=lambda v: solver.solve(np.ravel(v), x0=np.zeros(n), tol=1e-30, maxiter=1,
                                                               cycle="V"), dtype=np.float64)


class NodeSetAMG:
    """Smoothed-aggregation AMG of a matrix that depends only on a set of nodes, kept while the
    set is the same (Poisson learning's normalised Laplacian ``I - D^-1/2 W D^-1/2`` on the
    components that hold a label, :mod:`core.graph.poisson`: its right-hand side changes with
    every label, its matrix only when a label reaches a new component).

    A singular matrix (a Laplacian) needs its kernel. The aggregation must reproduce it: the
    normalised Laplacian's kernel is ``D^1/2 1`` on each component, not the constant pyamg
    assumes by default, and on a graph whose degrees vary (a kNN graph in many dimensions: its
    hubs reach 10-20 times ``k``) a hierarchy built around the constant leaves a near-kernel
    vector on the coarsest level that its pseudo-inverse amplifies by orders of magnitude: the
    V-cycle's output is then almost all kernel (cosine 0.999999 with it), and CG stalls short of
    its tolerance (a relative residual of 3e-5 after 500 iterations on 2,540 nodes of a
    32-dimensional mixture, where the hierarchy built around ``D^1/2 1`` needs 10; at 10^5
    nodes 1e-9, then a drift to 1e-4; docs/algorithms.md §10). So the
    caller passes the kernel (``null_vector``, with the components it spans), the hierarchy is
    built around it, and the V-cycle's input and output are projected off it on each component:
    the preconditioner is then symmetric positive semi-definite with the matrix's range as its
    own, what CG on a consistent singular system needs.

    Attributes
    ----------
    n_builds : int
        Hierarchies built so far.
    """

    def __init__(self):
        self.n_builds = 0
        self._nodes = None
        self._solver = None

    def holds(self, nodes: np.ndarray) -> bool:
        """Whether the hierarchy held is that of ``nodes`` (sorted node indices)."""
        return self._nodes is not None and np.array_equal(self._nodes, np.asarray(nodes, dtype=np.intp))

    def operator(self, A: sp.spmatrix, nodes: np.ndarray, null_vector: np.ndarray | None = None,
                 components: np.ndarray | None = None) -> LinearOperator:
        """One V-cycle of the hierarchy of ``A`` (rows: ``nodes``), built when ``nodes`` changed.

        Parameters
        ----------
        A : scipy.sparse matrix of shape (s, s)
            Symmetric positive semi-definite (a Laplacian: singular on each component's
            kernel vector; CG stays in the range with a consistent right-hand side).
        nodes : ndarray of int, shape (s,)
        null_vector : ndarray of shape (s,), optional
            ``A``'s kernel: ``A @ null_vector = 0``, its restriction to each component spanning
            that component's kernel (the normalised Laplacian's ``sqrt(d)``). Default: the
            constant (a combinatorial Laplacian's), without projection.
        components : ndarray of int, shape (s,), optional
            The component of each row (with ``null_vector``; default: one component).

        Returns
        -------
        scipy.sparse.linalg.LinearOperator of shape (s, s)
            Symmetric positive semi-definite; with ``null_vector``, zero on the kernel and
            mapping into its orthogonal complement.
        """
        import pyamg

        nodes = np.asarray(nodes, dtype=np.intp)
        if self._nodes is None or not np.array_equal(self._nodes, nodes):
            B = None if null_vector is None else np.asarray(null_vector, dtype=np.float64).reshape(-1, 1)
            self._solver = pyamg.smoothed_aggregation_solver(sp.csr_matrix(A), B=B, symmetry="hermitian")
            self._nodes = nodes.copy()
            self.n_builds += 1
        if null_vector is None:
            return _v_cycle(self._solver, A.shape)
        project = kernel_projection(null_vector, components)
        solver, n = self._solver, A.shape[0]

        def matvec(v):
            return project(solver.solve(project(np.ravel(v)), x0=np.zeros(n), tol=1e-30, maxiter=1, cycle="V"))

        return LinearOperator(A.shape, matvec=matvec, dtype=np.float64)


def kernel_projection(null_vector: np.ndarray, components: np.ndarray | None = None):
    """The orthogonal projection off a matrix's kernel, one direction per component.

    Parameters
    ----------
    null_vector : ndarray of shape (s,)
        Non-zero on every component.
    components : ndarray of int, shape (s,), optional
        Component labels (any integers); default: one component.

    Returns
    -------
    callable
        ``v (s,) -> v - sum_c q_c (q_c^T v)`` with ``q_c`` the unit vector of ``null_vector``
        on component ``c`` (zero elsewhere).
    """
    q = np.asarray(null_vector, dtype=np.float64).ravel()
    comp = np.zeros(q.size, dtype=np.intp) if components is None else np.unique(components, return_inverse=True)[1]
    k = int(comp.max()) + 1 if comp.size else 0
    q = q / np.sqrt(np.bincount(comp, weights=q * q, minlength=k))[comp]

    def project(v: np.ndarray) -> np.ndarray:
        return v - q * np.bincount(comp, weights=q * v, minlength=k)[comp]

    return project
