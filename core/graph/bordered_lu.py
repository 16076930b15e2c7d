"""A sparse LU of the harmonic function's system, kept while labels arrive (solves by bordering).

The harmonic step solves with ``Delta_UU`` on the unlabelled nodes ``U`` after every label
(docs/algorithms.md §5). Where Jacobi CG is slow (a graph of long diameter: two-moons, any
low-dimensional pool) the system is badly conditioned, and a multigrid-preconditioned CG still
takes about 30 V-cycles per solve. The same graphs have small separators, so a sparse LU of
``Delta_UU`` fills in little: a solve is two triangular solves.

:class:`GroundedLaplacianLU` factorises ``A0 = Delta_U0U0`` once and keeps solving on later,
smaller systems ``Delta_U'U'`` (``U' ⊂ U0``: nodes labelled since, ``R = U0 \\ U'``) without a new
factorisation, by bordering: the solution of ``Delta_U'U' x = b`` is the solution on ``U0`` of

    x = A0^-1 b~ - Z C^-1 (A0^-1 b~)_R,      Z = A0^-1 E_R,  C = Z_R = (A0^-1)_RR

(``b~``: ``b`` on ``U'``, 0 on ``R``; the multipliers on the rows ``R`` make ``x_R = 0``), with one
column of ``Z`` per node labelled (kept; the harmonic step's own solve of ``e_j`` gives it) and
``C`` of order ``|R|``. Past
:data:`REFACTOR_AFTER` nodes, or when ``U'`` is not inside ``U0`` (a label removed), it factorises
again. Exact (a direct solve; the tests compare with a fresh sparse LU).

It is used only where the fill is bounded: the reverse Cuthill-McKee bandwidth ``b`` of the graph
bounds the LU's fill by ``u b`` numbers, and :meth:`GroundedLaplacianLU.accepts` asks
``u b <= FILL_MAX`` (a graph of many dimensions, an expander, has a bandwidth near ``u``; there
Jacobi CG is fast anyway, or the multigrid answers).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import reverse_cuthill_mckee
from scipy.sparse.linalg import splu

__all__ = ["GroundedLaplacianLU", "rcm_bandwidth", "spd_lu", "REFACTOR_AFTER", "FILL_MAX"]

#: Nodes labelled since the factorisation after which it is made again (each adds a column to
#: ``Z`` and a row and column to ``C``).
REFACTOR_AFTER = 64
#: Largest fill bound ``u b`` (numbers of the LU, 8 bytes each: 800 MB) the factorisation is tried at.
FILL_MAX = 100_000_000


def rcm_bandwidth(W) -> int:
    """The bandwidth of the symmetric sparse ``W`` (n, n) in reverse Cuthill-McKee order: a
    sparse LU of a matrix with its pattern fills at most ``n`` times this many numbers. O(nnz)."""
    W_csr = sp.csr_matrix(W)
    rank = np.empty(W_csr.shape[0], dtype=np.int64)
    rank[reverse_cuthill_mckee(W_csr, symmetric_mode=True)] = np.arange(W_csr.shape[0])
    rows = np.repeat(rank, np.diff(W_csr.indptr))  # each stored entry's row, renumbered
    return int(np.abs(rows - rank[W_csr.indices]).max(initial=0))


def spd_lu(A):
    """A sparse LU of the symmetric positive definite ``A`` (its pattern's minimum degree
    ordering, symmetric mode, no pivoting: SPD needs none); about 100x faster to make than
    SuperLU's default partial pivoting on a kNN graph's Laplacian of 2x10^4 nodes, with the same
    fill, and ten times faster to solve with."""
    return splu(sp.csc_matrix(A), permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                options={"SymmetricMode": True})


class GroundedLaplacianLU:
    """Sparse LU of ``Delta_U0U0`` reused on later ``U' ⊂ U0`` by bordering (module docstring).

    Parameters
    ----------
    refactor_after : int
        See :data:`REFACTOR_AFTER`.
    fill_max : int
        See :data:`FILL_MAX`.

    Attributes
    ----------
    n_factorisations : int
        Factorisations made so far (a test reads it).
    """

    def __init__(self, refactor_after: int = REFACTOR_AFTER, fill_max: int = FILL_MAX):
        self.refactor_after = int(refactor_after)
        self.fill_max = int(fill_max)
        self.n_factorisations = 0
        self._bandwidth = None  # (graph id, bandwidth): of the whole graph, computed once
        self._lu = None
        self._free = None  # U0, sorted node indices
        self._removed = []  # positions in U0 of the nodes labelled since, in order
        self._Z = None  # (u0, r): A0^-1 E_R
        self._spare = None  # (p, A0^-1 e_p) of the last solve with a unit right-hand side

    def copy(self) -> GroundedLaplacianLU:
        """A holder of the same factorisation (shared: only read) with its own bordering state."""
        twin = GroundedLaplacianLU(self.refactor_after, self.fill_max)
        twin.n_factorisations = self.n_factorisations
        twin._bandwidth, twin._lu, twin._free, twin._Z = self._bandwidth, self._lu, self._free, self._Z
        twin._removed = list(self._removed)
        twin._spare = self._spare
        return twin

    def reset(self) -> None:
        """Forget the factorisation (the graph changed)."""
        self._lu = self._free = self._Z = self._spare = None
        self._removed = []

    def accepts(self, W: sp.csr_matrix, u: int) -> bool:
        """Whether a factorisation of ``u`` unknowns of the graph ``W`` keeps its fill bound
        ``u b <= fill_max`` (``b``: the graph's reverse Cuthill-McKee bandwidth, computed once)."""
        if self._bandwidth is None or self._bandwidth[0] is not W:
            self._bandwidth = (W, rcm_bandwidth(W))
        return int(u) * max(self._bandwidth[1], 1) <= self.fill_max

    def solve(self, A: sp.spmatrix, free: np.ndarray, B: np.ndarray) -> np.ndarray:
        """``A X = B`` for ``A = Delta_UU`` on the sorted nodes ``free``.

        Parameters
        ----------
        A : scipy.sparse matrix of shape (u, u), or a callable returning it
            The grounded Laplacian on ``free`` (rows and columns in the order of ``free``); read
            only when it factorises again.
        free : ndarray of int, shape (u,)
        B : ndarray of shape (u, T)

        Returns
        -------
        ndarray of shape (u, T)
        """
        free = np.asarray(free, dtype=np.intp)
        pos = None
        kept = self._free
        if self._lu is not None and kept.size - free.size <= self.refactor_after:
            pos = np.searchsorted(kept, free)
            if pos.size and (pos[-1] >= kept.size or not np.array_equal(kept[np.minimum(pos, kept.size - 1)], free)):
                pos = None
        if pos is None:
            self._lu = spd_lu(A() if callable(A) else A)
            self._free = free.copy()
            self._removed = []
            self._Z = np.zeros((free.size, 0))
            self._spare = None
            self.n_factorisations += 1
            return self._lu.solve(np.ascontiguousarray(B, dtype=np.float64))
        u0 = self._free.size
        inside = np.zeros(u0, dtype=bool)
        inside[pos] = True
        known = set(self._removed)
        new = [int(p) for p in np.flatnonzero(~inside) if int(p) not in known]
        if new:
            spare, self._spare = self._spare, None
            cols = {}
            if spare is not None and spare[0] in new:  # solved already (the last solve's e_p)
                cols[spare[0]] = spare[1]
            rest = [p for p in new if p not in cols]
            if rest:
                E = np.zeros((u0, len(rest)))
                E[rest, np.arange(len(rest))] = 1.0
                cols.update(zip(rest, self._lu.solve(E).T))
            self._Z = np.column_stack([self._Z] + [cols[p][:, None] for p in new])
            self._removed.extend(new)
        order = np.array(self._removed, dtype=np.intp)
        use = ~inside[order]  # nodes removed since the factorisation and still removed
        R, Z = order[use], self._Z[:, use]
        Bf = np.zeros((u0, B.shape[1]))
        Bf[pos] = B
        X = self._lu.solve(Bf)
        unit = self._unit_column(Bf)
        if unit is not None:  # A0^-1 e_p: the column of Z the node p will need once labelled
            self._spare = (unit, X[:, 0].copy())
        if R.size:
            X -= Z @ np.linalg.solve(Z[R], X[R])
        return X[pos]

    @staticmethod
    def _unit_column(B: np.ndarray):
        """The position p when ``B`` is the single column ``e_p``, else None."""
        if B.shape[1] != 1:
            return None
        nz = np.flatnonzero(B[:, 0])
        return int(nz[0]) if nz.size == 1 and B[nz[0], 0] == 1.0 else None
