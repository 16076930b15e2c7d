"""Spectral graph kernels by kernel-target alignment (seed 004), as factors for ARLS.

Seed 004 (Zhu, Kandola, Ghahramani, Lafferty 2004); docs/algorithms.md §5, §9. With the m smallest
Laplacian eigenpairs ``(lambda_i, phi_i)`` a spectral kernel is ``K = sum_i mu_i phi_i phi_i^T``
and ``Phi = [phi_i sqrt(mu_i)]`` is its factor (:meth:`core.learner.ActiveRLS.from_factor`).
Transforms:

==================  =========================================================================
``diffusion``       ``mu_i = exp(-s^2 lambda_i / 2)``
``gaussian_field``  ``mu_i = 1 / (lambda_i + eps)``
``max_alignment``   maximise the alignment over ``mu >= 0`` (Lanckriet et al.; no order)
``order``           ... subject to ``mu_1 >= mu_2 >= ... >= mu_m >= 0`` (Definition 1)
``improved_order``  ... with the order only on non-constant eigenvectors (Definition 2)
==================  =========================================================================

The alignment of ``K_tr = K[L, L]`` with the target ``T`` (``T_ij = +1`` for equal labels,
-1 otherwise) is ``<K_tr, T>_F / (||K_tr||_F ||T||_F)`` (eq. 5). Maximising it over a convex
cone of ``mu`` is the paper's QCQP (eq. 12-15): ``max vec(T)^T M mu`` s.t. ``||M mu|| <= 1``,
with ``M = [vec(K_1,tr) ... vec(K_m,tr)]``. Two independent solvers (checked against each
other in ``tests/test_graph_spectral.py``):

* ``"nnls"`` (default, SciPy only): for a closed convex cone the projection ``p`` of
  ``vec(T)`` onto ``{M mu}`` maximises ``<T, p> / ||p||`` (``<T - p, u> <= 0`` for every ``u``
  in the cone, so ``<T, u> <= ||p|| ||u||``, with equality at ``p``). Writing the cone as
  ``mu = B t, t >= 0`` (``B`` sums the ordered block from the end) makes the projection a
  non-negative least-squares problem in m unknowns, solved exactly by Lawson-Hanson
  (:func:`scipy.optimize.nnls`) on the Gram matrix ``H_ij = (phi_i,L^T phi_j,L)^2``.
* ``"clarabel"`` (optional dependency): the QCQP as written, a second-order cone program
  for the interior-point solver Clarabel.

Scale: alignment is scale-free; seed 004 fixes ``trace(K) = sum(mu) = 1``. The factor
builders rescale to ``trace(K) = n`` (mean diagonal 1, as an RBF kernel) so that the learner's
``lam`` means the same as with the default kernel; the alignment is unchanged.

"Constant" eigenvectors (Definition 2) are taken as those with eigenvalue 0 (the null space:
constant per connected component, ``D^1/2``-weighted for the normalised Laplacian). On a
connected graph this is the paper's ``phi_1``. With several components the paper keeps their
order, but an eigensolver returns an arbitrary rotation of the null space, so an order among
those vectors has no meaning: here they are all left free.
"""

from __future__ import annotations

import numpy as np

from ._checks import check_labels

__all__ = ["ALIGNMENT_TRANSFORMS", "SPECTRAL_TRANSFORMS", "target_matrix", "kernel_target_alignment",
           "aligned_spectrum", "parametric_spectrum", "fit_parametric_spectrum", "spectrum_factor"]

ALIGNMENT_TRANSFORMS = ("max_alignment", "order", "improved_order")
SPECTRAL_TRANSFORMS = ("diffusion", "gaussian_field") + ALIGNMENT_TRANSFORMS
NULL_TOL = 1e-8  # eigenvalues at or below this are the Laplacian's null space


def target_matrix(y) -> np.ndarray:
    """``T`` (l, l): +1 where two labels agree, -1 otherwise (seed 004 eq. 5)."""
    y = np.asarray(y)
    return np.where(y[:, None] == y[None, :], 1.0, -1.0)


def kernel_target_alignment(K_tr, T) -> float:
    """``<K, T>_F / sqrt(<K, K>_F <T, T>_F)`` (seed 004 eq. 5); 0 for a zero kernel."""
    K_tr = np.asarray(K_tr, dtype=np.float64)
    T = np.asarray(T, dtype=np.float64)
    nk = float(np.linalg.norm(K_tr))
    return 0.0 if nk == 0 else float(np.sum(K_tr * T) / (nk * np.linalg.norm(T)))


def parametric_spectrum(eigenvalues, transform: str, *, eps: float = 1e-2, s: float = 1.0) -> np.ndarray:
    """``mu`` of the diffusion (``exp(-s^2 lambda / 2)``) or Gaussian-field (``1/(lambda+eps)``) kernel."""
    lam = np.asarray(eigenvalues, dtype=np.float64)
    if transform == "diffusion":
        return np.exp(-(s**2) * lam / 2.0)
    if transform == "gaussian_field":
        if not eps > 0:
            raise ValueError(f"eps must be > 0 for the Gaussian field (1/(lambda + eps)); got {eps!r}.")
        return 1.0 / (lam + eps)
    raise ValueError(f"transform must be 'diffusion' or 'gaussian_field'; got {transform!r}.")


def _cone_basis(eigenvalues: np.ndarray, transform: str) -> np.ndarray:
    """``B`` (m, m) with the cone ``{mu = B t : t >= 0}``."""
    m = eigenvalues.size
    if transform == "max_alignment":
        return np.eye(m)
    ordered = np.ones(m, dtype=bool)
    if transform == "improved_order":
        ordered = eigenvalues > NULL_TOL
    B = np.zeros((m, m))
    idx = np.flatnonzero(ordered)
    # mu_{o_i} = sum_{j >= i} t_{o_j}: upper-triangular ones on the ordered block
    B[np.ix_(idx, idx)] = np.triu(np.ones((idx.size, idx.size)))
    free = np.flatnonzero(~ordered)
    B[free, free] = 1.0
    return B


def _check_problem(eigenvalues, V, labeled, labels):
    lam = np.asarray(eigenvalues, dtype=np.float64).ravel()
    V = np.asarray(V, dtype=np.float64)
    if V.ndim != 2 or V.shape[1] != lam.size:
        raise ValueError(f"V must be (n, m) with m = len(eigenvalues) = {lam.size}; got shape {V.shape}.")
    if not (np.isfinite(lam).all() and np.isfinite(V).all()):
        raise ValueError("eigenvalues and V must be finite; recompute the eigenpairs.")
    if np.any(np.diff(lam) < -1e-10):
        raise ValueError("eigenvalues must be increasing (smoothest eigenvector first); sort them with V.")
    L, y, _ = check_labels(V.shape[0] + 1, labeled, labels)  # n + 1: a fully labelled pool is allowed here
    if L.max() >= V.shape[0]:
        raise ValueError(f"labeled indices must lie in [0, {V.shape[0] - 1}]; got {L.max()}.")
    return lam, V, L, y


def aligned_spectrum(eigenvalues, V, labeled, labels, transform: str = "improved_order",
                     solver: str = "nnls") -> tuple[np.ndarray, float]:
    """The spectral transform ``mu`` that maximises kernel-target alignment on the labels.

    Parameters
    ----------
    eigenvalues : array-like of shape (m,)
        Increasing Laplacian eigenvalues (:func:`core.kernels.laplacian_eigenpairs`).
    V : array-like of shape (n, m)
        Their eigenvectors.
    labeled : array-like of int, shape (l,)
    labels : array-like, shape (l,)
        At least two classes.
    transform : {"max_alignment", "order", "improved_order"}
    solver : {"nnls", "clarabel"}

    Returns
    -------
    mu : ndarray of shape (m,)
        Non-negative, ``sum(mu) = 1`` (seed 004: ``trace(K) = 1``).
    alignment : float
        The alignment of ``K_tr``, in (0, 1].

    Raises
    ------
    ValueError
        Bad input, or no kernel in the cone aligns positively with the labels.
    ImportError
        ``solver="clarabel"`` without the package (``pip install clarabel``).
    """
    if transform not in ALIGNMENT_TRANSFORMS:
        raise ValueError(f"transform must be one of {ALIGNMENT_TRANSFORMS}; got {transform!r}.")
    if solver not in ("nnls", "clarabel"):
        raise ValueError(f"solver must be 'nnls' or 'clarabel'; got {solver!r}.")
    lam, V, L, y = _check_problem(eigenvalues, V, labeled, labels)
    VL = V[L]
    T = target_matrix(y)
    B = _cone_basis(lam, transform)
    if solver == "nnls":
        G = VL.T @ VL
        H = G * G  # <K_i,tr, K_j,tr>_F
        a = np.einsum("li,lk,ki->i", VL, T, VL)  # <T, K_i,tr>_F
        Hb, ab = B.T @ H @ B, B.T @ a
        e, Q = np.linalg.eigh(0.5 * (Hb + Hb.T))
        keep = e > e.max() * 1e-12
        R = np.sqrt(e[keep])[:, None] * Q[:, keep].T  # Hb = R^T R
        z = (Q[:, keep].T @ ab) / np.sqrt(e[keep])  # R^T z = ab (ab lies in the range of R^T)
        from scipy.optimize import nnls  # imported here: SciPy's optimize is slow to import (app start-up)

        t, _ = nnls(R, z, maxiter=50 * B.shape[0])
    else:
        t = _clarabel_alignment(VL, T, B)
    mu = np.maximum(B @ t, 0.0)
    K_tr = (VL * mu) @ VL.T
    align = kernel_target_alignment(K_tr, T)
    if not mu.sum() > 0 or not align > 0:
        raise ValueError("no spectral kernel in the cone aligns positively with these labels; label more "
                         "points or use more eigenpairs (rank).")
    return mu / mu.sum(), align


def _clarabel_alignment(VL: np.ndarray, T: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Seed 004 eq. 12-15 in ``t`` (``mu = B t``): max vec(T)^T M B t, ||M B t|| <= 1, t >= 0."""
    try:
        import clarabel
    except ImportError:  # pragma: no cover - depends on the installation
        raise ImportError("solver='clarabel' needs the optional package clarabel (pip install clarabel); "
                          "solver='nnls' needs only SciPy.") from None
    import scipy.sparse as sp

    l, m = VL.shape
    iu = np.triu_indices(l)
    w = np.where(iu[0] == iu[1], 1.0, np.sqrt(2.0))  # isometric half-vectorisation
    M = (VL[iu[0]] * VL[iu[1]]) * w[:, None]  # (l(l+1)/2, m): column i is vech(phi_i,L phi_i,L^T)
    MB = M @ B
    R = np.linalg.qr(MB, mode="r") if MB.shape[0] > MB.shape[1] else MB  # ||M B t|| = ||R t||
    q = -(T[iu] * w) @ MB
    A = sp.vstack([sp.csc_matrix(np.vstack([np.zeros((1, m)), -R])), -sp.identity(m)]).tocsc()
    b = np.concatenate([[1.0], np.zeros(R.shape[0]), np.zeros(m)])
    cones = [clarabel.SecondOrderConeT(R.shape[0] + 1), clarabel.NonnegativeConeT(m)]
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    settings.tol_gap_abs = settings.tol_gap_rel = settings.tol_feas = 1e-10
    sol = clarabel.DefaultSolver(sp.csc_matrix((m, m)), q, A, b, cones, settings).solve()
    if "Solved" not in str(sol.status):
        raise RuntimeError(f"Clarabel did not solve the alignment program (status {sol.status}); "
                           "use solver='nnls'.")
    return np.maximum(np.asarray(sol.x), 0.0)


def fit_parametric_spectrum(eigenvalues, V, labeled, labels, transform: str,
                            bounds: tuple[float, float] | None = None) -> tuple[np.ndarray, float, float]:
    """Diffusion ``s`` or Gaussian-field ``eps`` that maximise alignment (seed 004, footnote 2).

    A bounded scalar search over ``log`` of the parameter (seed 004 used Matlab's fminbnd);
    the problem is not convex, so this is a local maximum within ``bounds``.

    Returns
    -------
    mu : ndarray of shape (m,)
        ``sum(mu) = 1``.
    parameter : float
        ``s`` (diffusion) or ``eps`` (Gaussian field).
    alignment : float
    """
    lam, V, L, y = _check_problem(eigenvalues, V, labeled, labels)
    if transform not in ("diffusion", "gaussian_field"):
        raise ValueError(f"transform must be 'diffusion' or 'gaussian_field'; got {transform!r}.")
    if bounds is None:
        bounds = (1e-2, 1e2) if transform == "diffusion" else (1e-6, 1e1)
    lo, hi = (float(b) for b in bounds)
    if not 0 < lo < hi:
        raise ValueError(f"bounds must satisfy 0 < low < high; got {bounds!r}.")
    VL, T = V[L], target_matrix(y)

    def spectrum(logp):
        p = float(np.exp(logp))
        return parametric_spectrum(lam, transform, **({"s": p} if transform == "diffusion" else {"eps": p}))

    from scipy.optimize import minimize_scalar  # (as nnls above)

    res = minimize_scalar(lambda lp: -kernel_target_alignment((VL * spectrum(lp)) @ VL.T, T),
                          bounds=(np.log(lo), np.log(hi)), method="bounded", options={"xatol": 1e-6})
    mu = spectrum(res.x)
    return mu / mu.sum(), float(np.exp(res.x)), float(-res.fun)


def spectrum_factor(V, mu, trace: float | None = None) -> np.ndarray:
    """``Phi = V diag(sqrt(mu))`` (n, m), scaled so that ``trace(Phi Phi^T) = trace``.

    Parameters
    ----------
    V : array-like of shape (n, m)
        Orthonormal eigenvectors.
    mu : array-like of shape (m,)
        Non-negative spectrum.
    trace : float, optional
        Default n (mean kernel diagonal 1, as an RBF kernel); 0 keeps ``mu`` unscaled.

    Returns
    -------
    ndarray of shape (n, m)
    """
    V = np.asarray(V, dtype=np.float64)
    mu = np.asarray(mu, dtype=np.float64).ravel()
    if mu.shape != (V.shape[1],) or (mu < 0).any() or not np.isfinite(mu).all():
        raise ValueError(f"mu must be {V.shape[1]} finite non-negative numbers (one per eigenvector).")
    if trace is None:
        trace = float(V.shape[0])
    if trace:
        if not mu.sum() > 0:
            raise ValueError("mu is all zeros: the kernel is zero and cannot be rescaled.")
        mu = mu * (float(trace) / mu.sum())
    return np.ascontiguousarray(V * np.sqrt(mu))
