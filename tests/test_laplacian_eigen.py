"""LOBPCG with the multigrid preconditioner (core/kernels/laplacian_eigen.py) against dense eigh."""

import numpy as np
import pytest
import scipy.sparse as sp

from core.kernels.graph import knn_graph, laplacian, laplacian_eigenpairs
from core.kernels.laplacian_eigen import block_vcycle, lobpcg_eigenpairs


def graph(n=900, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((4, 3)) * 4
    X = centres[rng.integers(4, size=n)] + rng.standard_normal((n, 3))
    return knn_graph(X, 8)


@pytest.mark.parametrize("normalized", [True, False])
def test_lobpcg_matches_dense_eigh(normalized):
    W = graph()
    L = laplacian(W, normalized)
    ref = np.linalg.eigh(L.toarray())[0][:30]
    lam, V = laplacian_eigenpairs(W, 30, normalized=normalized, method="lobpcg", seed=1)
    assert lam.shape == (30,) and V.shape == (900, 30)
    np.testing.assert_allclose(lam, np.clip(ref, 0, None), atol=1e-7 * max(1.0, ref[-1]))
    np.testing.assert_allclose(V.T @ V, np.eye(30), atol=1e-8)
    res = np.linalg.norm(L @ V - V * lam, axis=0)
    assert res.max() < 1e-4 * max(1.0, ref[-1])
    assert (np.diff(lam) >= 0).all()


def test_chunks_find_the_same_eigenpairs_as_one_block():
    """Several chunks, each orthogonal to the ones before, give the spectrum of one run."""
    W = graph(seed=2)
    L = laplacian(W)
    d = np.sqrt(np.asarray(W.sum(axis=1)).ravel())
    lam1, _ = lobpcg_eigenpairs(L, 24, d / np.linalg.norm(d), chunk=24, guard=6)
    lam4, V4 = lobpcg_eigenpairs(L, 24, d / np.linalg.norm(d), chunk=6, guard=4)
    np.testing.assert_allclose(lam4, lam1, atol=1e-8)
    np.testing.assert_allclose(V4.T @ V4, np.eye(24), atol=1e-8)


def test_lobpcg_is_seeded_and_reports_progress():
    W = graph(seed=3)
    heard = []
    a = laplacian_eigenpairs(W, 12, method="lobpcg", seed=4, progress=heard.append)
    b = laplacian_eigenpairs(W, 12, method="lobpcg", seed=4)
    # the same start block: the same eigenpairs to rounding (threaded BLAS may sum in another order)
    np.testing.assert_allclose(a[0], b[0], atol=1e-12)
    assert np.linalg.svd(a[1].T @ b[1], compute_uv=False).min() > 1 - 1e-9  # the same subspace
    assert heard and heard[-1] == 1.0 and all(0 <= f <= 1 for f in heard)


def test_vcycle_is_symmetric_positive_definite():
    """LOBPCG needs an SPD preconditioner: <u, T v> = <T u, v> and <u, T u> > 0."""
    W = graph(seed=5)
    A = (laplacian(W) + 1e-3 * sp.identity(900)).tocsr()
    d = np.sqrt(np.asarray(W.sum(axis=1)).ravel())
    T = block_vcycle(A, d)
    rng = np.random.default_rng(0)
    U, V = rng.standard_normal((900, 5)), rng.standard_normal((900, 5))
    np.testing.assert_allclose(U.T @ T(V), (T(U)).T @ V, rtol=1e-10, atol=1e-10)
    assert (np.einsum("ij,ij->j", U, T(U)) > 0).all()
    np.testing.assert_allclose(T(U[:, 0]), T(U)[:, 0], rtol=1e-12)  # a vector or a block alike
    # it approximates A^-1: one cycle reduces the error of A x = b
    x = rng.standard_normal(900)
    b = A @ x
    assert np.linalg.norm(x - T(b)) < np.linalg.norm(x)


def test_bad_method_named():
    with pytest.raises(ValueError, match="method must be one of"):
        laplacian_eigenpairs(graph(), 5, method="arpack")


def test_eigsh_progress_does_not_change_the_answer():
    W = graph(seed=6)
    heard = []
    a = laplacian_eigenpairs(W, 10, method="eigsh", seed=2, progress=heard.append)
    b = laplacian_eigenpairs(W, 10, method="eigsh", seed=2)
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert heard[-1] == 1.0 and heard == sorted(heard) and len(heard) > 1


@pytest.mark.parametrize("normalized", [True, False])
def test_chebyshev_matches_dense_eigh(normalized):
    W = graph(seed=7)
    L = laplacian(W, normalized)
    ref = np.linalg.eigh(L.toarray())[0][:30]
    lam, V = laplacian_eigenpairs(W, 30, normalized=normalized, method="chebyshev", seed=1)
    assert lam.shape == (30,) and V.shape == (900, 30)
    np.testing.assert_allclose(lam, np.clip(ref, 0, None), atol=1e-8 * max(1.0, ref[-1]))
    np.testing.assert_allclose(V.T @ V, np.eye(30), atol=1e-8)
    assert np.linalg.norm(L @ V - V * lam, axis=0).max() < 1e-6 * max(1.0, ref[-1])
    assert (np.diff(lam) >= 0).all()


def test_chebyshev_widens_a_cut_below_the_wanted_eigenvalues():
    """A cut below the r-th eigenvalue maps some wanted ones into [-1, 1]: detected, cut raised."""
    from core.kernels.laplacian_eigen import chebyshev_eigenpairs

    W = graph(seed=8)
    L = laplacian(W)
    ref = np.linalg.eigh(L.toarray())[0][:20]
    assert ref[-1] > 0.01
    lam, V = chebyshev_eigenpairs(L, 20, cut=0.01, seed=3)
    np.testing.assert_allclose(lam, np.clip(ref, 0, None), atol=1e-8)


def test_chebyshev_filter_is_the_polynomial():
    """The three-term recurrence equals T_m(t(lambda)) on eigenvectors (numpy's Chebyshev series)."""
    from core.kernels.laplacian_eigen import chebyshev_filter

    W = graph(seed=9, n=300)
    L = laplacian(W)
    lam, U = np.linalg.eigh(L.toarray())
    apply = chebyshev_filter(L, 2.0, 0.4, 7)
    t = (2.0 + 0.4 - 2 * lam) / (2.0 - 0.4)
    expected = U @ (np.polynomial.chebyshev.chebval(t, [0] * 7 + [1])[:, None] * U.T)
    np.testing.assert_allclose(apply(np.eye(300)), expected, atol=1e-8 * np.abs(expected).max())
    v = np.random.default_rng(0).standard_normal(300)
    np.testing.assert_allclose(apply(v), apply(v[:, None])[:, 0], rtol=1e-12)
    assert np.abs(np.polynomial.chebyshev.chebval(t[lam >= 0.4], [0] * 7 + [1])).max() <= 1 + 1e-12


def test_chebyshev_is_seeded_and_reports_progress():
    W = graph(seed=10)
    heard = []
    a = laplacian_eigenpairs(W, 12, method="chebyshev", seed=4, progress=heard.append)
    b = laplacian_eigenpairs(W, 12, method="chebyshev", seed=4)
    np.testing.assert_allclose(a[0], b[0], atol=1e-12)
    assert np.linalg.svd(a[1].T @ b[1], compute_uv=False).min() > 1 - 1e-9
    assert heard and heard[-1] == 1.0 and all(0 <= f <= 1 for f in heard)


@pytest.mark.parametrize("normalized", [True, False])
def test_filtered_subspace_matches_dense_eigh(normalized):
    W = graph(seed=11)
    L = laplacian(W, normalized)
    ref = np.linalg.eigh(L.toarray())[0][:30]
    heard = []
    lam, V = laplacian_eigenpairs(W, 30, normalized=normalized, method="subspace", seed=1, progress=heard.append)
    np.testing.assert_allclose(lam, np.clip(ref, 0, None), atol=1e-8 * max(1.0, ref[-1]))
    np.testing.assert_allclose(V.T @ V, np.eye(30), atol=1e-8)
    assert np.linalg.norm(L @ V - V * lam, axis=0).max() < 1e-6 * max(1.0, ref[-1])
    assert heard and heard[-1] == 1.0 and heard == sorted(heard)


def test_chebyshev_fused_step_is_the_same_on_one_thread():
    """The one-vector filter (a numba kernel over rows) sums each row in order: any thread count,
    the same bits; and it equals the sparse-matrix recurrence."""
    import numba

    from core.kernels.laplacian_eigen import chebyshev_filter

    L = laplacian(graph(seed=11, n=700))
    v = np.random.default_rng(1).standard_normal(700)
    apply = chebyshev_filter(L, 2.0, 0.3, 9)
    every = apply(v)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = apply(v)
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_array_equal(one, every)
    np.testing.assert_allclose(every, apply(v[:, None])[:, 0], rtol=1e-12, atol=1e-12 * np.abs(every).max())


def test_block_product_is_the_sparse_product_on_any_thread_count():
    """The estimate's block product (numba, rows on all threads, each sum in order) equals L @ X,
    bit for bit on one thread and on all."""
    import numba

    from core.kernels.laplacian_eigen import _block_product

    L = laplacian(graph(seed=12, n=600))
    X = np.random.default_rng(2).standard_normal((600, 3))
    every = np.empty_like(X)
    _block_product(L.indptr, L.indices, L.data, X, every)
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = np.empty_like(X)
        _block_product(L.indptr, L.indices, L.data, X, one)
    finally:
        numba.set_num_threads(threads)
    np.testing.assert_array_equal(one, every)
    np.testing.assert_allclose(every, L @ X, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("seed", range(6))
def test_estimated_cut_lies_above_the_wanted_eigenvalues(seed):
    """Lanczos quadrature's count: the estimated cut has at least the rank's eigenvalues below it
    (dense eigh), and not so many that the filter would be weak (under 4 x the count asked)."""
    from core.kernels.laplacian_eigen import estimated_cut

    W = graph(seed=20 + seed, n=1500)
    L = laplacian(W)
    lam = np.linalg.eigh(L.toarray())[0]
    for rank in (10, 40):
        cut = estimated_cut(L, rank, seed=seed)
        assert cut is not None
        below = int(np.sum(lam < cut))
        assert rank < below < 4 * 1.5 * rank, (rank, cut, below)


def test_estimated_cut_gives_up_when_too_few_steps():
    from core.kernels.laplacian_eigen import estimated_cut

    L = laplacian(graph(seed=13, n=400))
    # 5 steps from 2 probes: at most 10 nodes, far too coarse to count 300 eigenvalues below one
    assert estimated_cut(L, 300, steps=5) is None


def test_chebyshev_default_matches_scipy_eigsh():
    """The default path (estimated cut, the default ncv) against scipy's eigsh in shift-invert
    mode on a small graph: the same eigenvalues, the same subspace."""
    from scipy.sparse.linalg import eigsh

    from core.kernels.laplacian_eigen import chebyshev_eigenpairs

    W = graph(seed=14, n=2500)
    L = laplacian(W)
    ref, U = eigsh(L, k=41, sigma=-1e-3, which="LM", v0=np.ones(2500), tol=1e-12)
    order = np.argsort(ref)
    ref, U = ref[order], U[:, order]
    assert ref[40] - ref[39] > 1e-6  # the 40th is separated: its subspace is well defined
    lam, V = chebyshev_eigenpairs(L, 40, seed=5)
    np.testing.assert_allclose(lam, np.clip(ref[:40], 0, None), atol=1e-10)
    assert np.linalg.norm(L @ V - V * lam, axis=0).max() < 1e-8
    assert np.linalg.svd(U[:, :40].T @ V, compute_uv=False).min() > 1 - 1e-8


@pytest.mark.parametrize("extra", [10, 25])
def test_chebyshev_with_few_lanczos_vectors(extra):
    """ncv = rank + extra (ARPACK restarts more often, each step orthogonalised against fewer
    vectors): the same eigenpairs as dense eigh."""
    from core.kernels.laplacian_eigen import chebyshev_eigenpairs

    W = graph(seed=15)
    L = laplacian(W)
    ref = np.linalg.eigh(L.toarray())[0][:30]
    lam, V = chebyshev_eigenpairs(L, 30, ncv=30 + extra, seed=2)
    np.testing.assert_allclose(lam, np.clip(ref, 0, None), atol=1e-9)
    np.testing.assert_allclose(V.T @ V, np.eye(30), atol=1e-8)
    assert np.linalg.norm(L @ V - V * lam, axis=0).max() < 1e-7


def test_chebyshev_repairs_a_wrong_estimate(monkeypatch):
    """An estimated cut below the r-th eigenvalue is detected (a filtered eigenvalue at most 1)
    and widened: the answer is still the r smallest, and the bar still ends at 1."""
    from core.kernels import laplacian_eigen

    W = graph(seed=16)
    L = laplacian(W)
    ref = np.linalg.eigh(L.toarray())[0][:25]
    cuts = []
    plain_filter = laplacian_eigen.chebyshev_filter

    def recorded_filter(L_, upper, cut, degree):
        cuts.append(cut)
        return plain_filter(L_, upper, cut, degree)

    monkeypatch.setattr(laplacian_eigen, "CHEBYSHEV_ESTIMATE", True)
    monkeypatch.setattr(laplacian_eigen, "estimated_cut", lambda *a, **kw: 0.5 * ref[12])
    monkeypatch.setattr(laplacian_eigen, "chebyshev_filter", recorded_filter)
    heard = []
    lam, V = laplacian_eigen.chebyshev_eigenpairs(L, 25, seed=1, progress=heard.append)
    assert len(cuts) >= 2 and cuts[0] == 0.5 * ref[12] and cuts[-1] > ref[24]
    np.testing.assert_allclose(lam, np.clip(ref, 0, None), atol=1e-9)
    assert heard[-1] == 1.0 and all(0 <= f <= 1 for f in heard)
    assert all(b >= a for a, b in zip(heard, heard[1:]))  # the repair's new count never moves the bar back


def test_chebyshev_refuses_a_cut_outside_the_spectrum_bound():
    """A cut of 0 (or at the bound) could never be widened into a working filter: refused."""
    from core.kernels.laplacian_eigen import chebyshev_eigenpairs

    L = laplacian(graph(seed=17))
    for cut in (0.0, -0.1, 2.0):
        with pytest.raises(ValueError, match="cut must lie in"):
            chebyshev_eigenpairs(L, 5, cut=cut)
