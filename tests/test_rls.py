"""core/rls.py: weighted RLS against direct solves and brute-force leave-one-out refits."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.datasets import make_blobs, make_moons
from sklearn.exceptions import NotFittedError

from core.kernels import Kernel
from core.rls import LooPath, WeightedRLSClassifier, loo_errors, loo_path, select_index
from core.rls.weights import sample_weights

TOL = dict(rtol=1e-10, atol=1e-10)


# ------------------------------------------------------------------------------------------------
# Oracles: the weighted system solved directly, and n refits without one point each
# ------------------------------------------------------------------------------------------------


def direct_fit(K, y, a, lam, offset):
    """Minimise sum a_i (y_i - (Kc)_i - b)^2 + lam c^T K c by solving the normal equations.

    With offset: A (y - Kc - b 1) = lam c and 1^T c = 0 (bordered system, eq. 3.29);
    without: (A K + lam I) c = A y (eq. 3.5).
    """
    n = len(y)
    if not offset:
        return np.linalg.solve(a[:, None] * K + lam * np.eye(n), a * y), 0.0
    S = np.zeros((n + 1, n + 1))
    S[:n, :n] = a[:, None] * K + lam * np.eye(n)
    S[:n, n] = a
    S[n, :n] = 1.0
    sol = np.linalg.solve(S, np.append(a * y, 0.0))
    return sol[:n], sol[n]


def brute_force_loo(K, y, a, lam, offset):
    """y_i - f_{-i}(x_i) by n refits, each without point i (other weights unchanged)."""
    n = len(y)
    res = np.empty(n)
    for i in range(n):
        keep = np.arange(n) != i
        c, b = direct_fit(K[np.ix_(keep, keep)], y[keep], a[keep], lam, offset)
        res[i] = y[i] - (K[i, keep] @ c + b)
    return res


def objective(K, y, a, lam, c, b):
    r = y - K @ c - b
    return a @ (r * r) + lam * c @ K @ c


@pytest.fixture
def binary_problem():
    X, y = make_moons(40, noise=0.25, random_state=1)
    K = Kernel("rbf", width=0.8)(X)
    Y = np.where(y == 1, 1.0, -1.0)
    a = np.random.default_rng(2).uniform(0.2, 3.0, size=40)
    return X, y, K, Y, a


@pytest.fixture
def multiclass_problem():
    X, y = make_blobs(45, centers=3, cluster_std=2.0, random_state=3)
    K = Kernel("rbf", width=2.0)(X)
    Y = -np.ones((45, 3))
    Y[np.arange(45), y] = 1.0
    return X, y, K, Y


# ------------------------------------------------------------------------------------------------
# loo_path against the oracles
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("offset", [True, False])
@pytest.mark.parametrize("weighted", [True, False])
@pytest.mark.parametrize("lams", [[0.3], [0.01, 0.3, 2.0]])  # Cholesky path and eigen path
def test_binary_fit_and_loo_match_direct_solve_and_refits(binary_problem, offset, weighted, lams):
    _, _, K, Y, a = binary_problem
    a = a if weighted else np.ones_like(a)
    path = loo_path(K, Y, a, lams, offset)
    for j, lam in enumerate(lams):
        c, b = direct_fit(K, Y, a, lam, offset)
        assert_allclose(path.dual_coef[j, :, 0], c, **TOL)
        assert_allclose(path.intercept[j, 0], b, **TOL)
        assert_allclose(path.residuals[j, :, 0], brute_force_loo(K, Y, a, lam, offset), **TOL)


@pytest.mark.parametrize("offset", [True, False])
def test_solution_minimises_the_weighted_objective(binary_problem, offset):
    _, _, K, Y, a = binary_problem
    path = loo_path(K, Y, a, [0.5], offset)
    c, b = path.dual_coef[0, :, 0], path.intercept[0, 0]
    best = objective(K, Y, a, 0.5, c, b)
    rng = np.random.default_rng(0)
    for _ in range(20):
        dc = 1e-3 * rng.normal(size=c.size)
        db = 1e-3 * rng.normal() if offset else 0.0
        assert objective(K, Y, a, 0.5, c + dc, b + db) > best


@pytest.mark.parametrize("offset", [True, False])
def test_multiclass_shared_weights_match_refits_per_column(multiclass_problem, offset):
    _, _, K, Y = multiclass_problem
    a = np.random.default_rng(4).uniform(0.5, 2.0, size=K.shape[0])
    path = loo_path(K, Y, a, [0.05, 0.4], offset)
    for j, lam in enumerate([0.05, 0.4]):
        for t in range(3):
            c, b = direct_fit(K, Y[:, t], a, lam, offset)
            assert_allclose(path.dual_coef[j, :, t], c, **TOL)
            assert_allclose(path.intercept[j, t], b, **TOL)
            assert_allclose(path.residuals[j, :, t], brute_force_loo(K, Y[:, t], a, lam, offset), **TOL)


@pytest.mark.parametrize("offset", [True, False])
@pytest.mark.parametrize("lams", [[0.2], [0.02, 0.2]])
def test_multiclass_per_column_weights_match_refits(multiclass_problem, offset, lams):
    _, y, K, Y = multiclass_problem
    A = sample_weights(y, [0, 1, 2], "equilibrating")  # (n, 3): weights differ per column
    assert A.shape == (45, 3)
    path = loo_path(K, Y, A, lams, offset)
    for j, lam in enumerate(lams):
        for t in range(3):
            c, b = direct_fit(K, Y[:, t], A[:, t], lam, offset)
            assert_allclose(path.dual_coef[j, :, t], c, **TOL)
            assert_allclose(path.intercept[j, t], b, **TOL)
            assert_allclose(path.residuals[j, :, t], brute_force_loo(K, Y[:, t], A[:, t], lam, offset), **TOL)


@pytest.mark.parametrize("offset", [True, False])
@pytest.mark.parametrize("lams", [[0.3], [0.1, 1.0]])
def test_zero_weight_points_are_left_out_of_the_fit(binary_problem, offset, lams):
    _, _, K, Y, a = binary_problem
    a = a.copy()
    a[[3, 17, 30]] = 0.0
    path = loo_path(K, Y, a, lams, offset)
    keep = a > 0
    for j, lam in enumerate(lams):
        c, b = direct_fit(K[np.ix_(keep, keep)], Y[keep], a[keep], lam, offset)
        assert_allclose(path.dual_coef[j, keep, 0], c, **TOL)
        assert_allclose(path.dual_coef[j, ~keep, 0], 0.0)
        assert_allclose(path.residuals[j, :, 0], brute_force_loo(K, Y, a, lam, offset), **TOL)


@pytest.mark.parametrize("offset", [True, False])
def test_auto_grid_path_equals_refit_per_lambda(binary_problem, offset):
    _, _, K, Y, a = binary_problem
    path = loo_path(K, Y, a, None, offset, n_lams=12)
    e = np.linalg.eigvalsh(np.sqrt(a)[:, None] * K * np.sqrt(a)[None, :])
    assert path.lams.size == 12
    assert_allclose(path.lams[-1], e[-1], rtol=1e-10)
    assert path.lams[0] >= e[e > 0].min() * (1 - 1e-10)
    assert_allclose(np.diff(np.log(path.lams)), np.log(path.lams[1] / path.lams[0]), rtol=1e-9)
    # every lambda of the one-eigendecomposition path equals a separate Cholesky fit, to the
    # accuracy the conditioning of G = M + lam I allows (the grid reaches cond(G) ~ 1e14) ...
    for j, lam in enumerate(path.lams):
        single = loo_path(K, Y, a, [lam], offset)
        tol = 100 * (e[-1] + lam) / lam * np.finfo(float).eps
        assert_allclose(path.dual_coef[j], single.dual_coef[0], rtol=0, atol=tol * np.abs(single.dual_coef).max())
        assert_allclose(path.residuals[j], single.residuals[0], rtol=0, atol=tol * np.abs(single.residuals).max())
        if tol < 1e-6:
            assert path.classification[j] == pytest.approx(single.classification[0], abs=1e-12)
    # ... and, where G is well conditioned, brute-force refits to 1e-10
    for j in range(6, 12):
        assert_allclose(path.residuals[j, :, 0], brute_force_loo(K, Y, a, path.lams[j], offset), **TOL)


def test_loo_errors_definitions():
    Y = np.array([[1.0], [-1.0], [1.0], [-1.0]])
    res = np.array([[[0.5], [0.2], [1.5], [-1.2]]])  # LOO outputs 0.5, -1.2, -0.5, 0.2
    A = np.array([[1.0], [2.0], [3.0], [4.0]])
    cls, sq = loo_errors(Y, res, A)
    assert cls[0] == pytest.approx((3.0 + 4.0) / 10.0)
    assert sq[0] == pytest.approx((0.25 + 2 * 0.04 + 3 * 2.25 + 4 * 1.44) / 10.0)
    # multiclass: argmax of the LOO outputs, weight of the point in its own column
    Y = np.array([[1.0, -1.0, -1.0], [-1.0, 1.0, -1.0]])
    res = np.array([[[0.0, -2.0, 0.0], [0.0, 0.0, 0.0]]])  # row 0 LOO out (1, 1, -1): argmax 0
    A = np.array([[5.0, 1.0, 1.0], [1.0, 7.0, 1.0]])
    cls, _ = loo_errors(Y, res, A)
    assert cls[0] == pytest.approx(0.0)
    res = np.array([[[3.0, -2.0, 0.0], [0.0, 0.0, 0.0]]])  # row 0 LOO out (-2, 1, -1): wrong
    cls, _ = loo_errors(Y, res, A)
    assert cls[0] == pytest.approx(5.0 / 12.0)


def test_select_index_prefers_the_largest_lambda_on_ties():
    assert select_index([0.3, 0.1, 0.2, 0.1, 0.4]) == 3
    assert select_index([0.1, 0.1 + 1e-17, 0.2]) == 1
    assert select_index([0.2, 0.1]) == 1
    assert select_index([np.nan, 0.5, 0.7]) == 1


# ------------------------------------------------------------------------------------------------
# The estimator
# ------------------------------------------------------------------------------------------------


def test_estimator_fixed_lam_equals_direct_solve_with_class_weights():
    X, y = make_moons(60, noise=0.2, random_state=0)
    keep = (y == 0) | (np.arange(60) % 4 == 0)  # imbalanced: few of class 1
    X, y = X[keep], y[keep]
    sw = np.random.default_rng(1).uniform(0.5, 2.0, size=y.size)
    clf = WeightedRLSClassifier(width=0.7, lam=0.2, class_weight="balanced").fit(X, y, sample_weight=sw)
    a = sample_weights(y, [0, 1], "balanced", sample_weight=sw)
    K = Kernel("rbf", width=0.7)(X)
    Y = np.where(y == 1, 1.0, -1.0)
    c, b = direct_fit(K, Y, a, 0.2, True)
    assert_allclose(clf.dual_coef_[:, 0], c, **TOL)
    assert_allclose(clf.intercept_, [b], **TOL)
    assert_allclose(clf.loo_residuals_[:, 0], brute_force_loo(K, Y, a, 0.2, True), **TOL)
    assert_allclose(clf.loo_decision_[:, 0], Y - clf.loo_residuals_[:, 0])
    assert_allclose(clf.sample_weight_[:, 0], a)
    Xt = np.random.default_rng(5).normal(size=(7, 2))
    assert_allclose(clf.decision_function(Xt), Kernel("rbf", width=0.7)(Xt, X) @ c + b, **TOL)


def test_estimator_loo_equals_refitting_the_estimator():
    """The estimator's own LOO outputs against n estimator refits (binary, weighted)."""
    X, y = make_moons(30, noise=0.3, random_state=4)
    sw = np.random.default_rng(3).uniform(0.5, 2.0, size=30)
    clf = WeightedRLSClassifier(width=0.9, lam=0.1).fit(X, y, sample_weight=sw)
    for i in range(30):
        keep = np.arange(30) != i
        other = WeightedRLSClassifier(width=0.9, lam=0.1).fit(X[keep], y[keep], sample_weight=sw[keep])
        assert other.decision_function(X[i : i + 1])[0] == pytest.approx(clf.loo_decision_[i, 0], abs=1e-10)


def test_estimator_multiclass_loo_equals_refitting_the_estimator():
    X, y = make_blobs(36, centers=3, cluster_std=2.5, random_state=7)
    clf = WeightedRLSClassifier(width=1.5, lam=0.3, fit_offset=False).fit(X, y)
    assert clf.dual_coef_.shape == (36, 3) and clf.intercept_.shape == (3,)
    assert_allclose(clf.intercept_, 0.0)
    wrong = 0
    for i in range(36):
        keep = np.arange(36) != i
        other = WeightedRLSClassifier(width=1.5, lam=0.3, fit_offset=False).fit(X[keep], y[keep])
        f = other.decision_function(X[i : i + 1])[0]
        assert_allclose(f, clf.loo_decision_[i], **TOL)
        wrong += np.argmax(f) != y[i]
    assert clf.loo_error_ == pytest.approx(wrong / 36)


@pytest.mark.parametrize("criterion", ["classification", "squared"])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_lam_auto_picks_the_refit_minimiser(criterion, class_weight):
    X, y = make_blobs(60, centers=3, cluster_std=3.0, random_state=5)
    clf = WeightedRLSClassifier(width=2.0, lam="auto", n_lams=15, loo_criterion=criterion, class_weight=class_weight)
    clf.fit(X, y)
    lams = clf.loo_curve_["lam"]
    assert lams.shape == (15,) and clf.lam_ in lams
    # every grid value refitted separately (Cholesky path) gives the same errors
    errors = []
    for lam in lams:
        one = WeightedRLSClassifier(width=2.0, lam=float(lam), class_weight=class_weight).fit(X, y)
        errors.append(one.loo_error_ if criterion == "classification" else one.loo_squared_error_)
    errors = np.array(errors)
    assert_allclose(clf.loo_curve_[criterion], errors, rtol=1e-6, atol=1e-12)
    best = errors.min()
    assert clf.lam_ == lams[np.flatnonzero(np.isclose(errors, best, rtol=1e-9, atol=1e-12))[-1]]
    fixed = WeightedRLSClassifier(width=2.0, lam=clf.lam_, class_weight=class_weight).fit(X, y)
    assert_allclose(clf.dual_coef_, fixed.dual_coef_, rtol=1e-6, atol=1e-8 * np.abs(fixed.dual_coef_).max())


def test_width_auto_matches_a_manual_search():
    X, y = make_moons(80, noise=0.25, random_state=2)
    widths = [0.2, 0.5, 1.0, 2.0]
    clf = WeightedRLSClassifier(width="auto", widths=widths, lam="auto", n_lams=10).fit(X, y)
    assert clf.loo_curve_["width"].tolist() == widths
    assert clf.loo_curve_["lam"].shape == (4, 10)
    rows = []
    for s in widths:
        one = WeightedRLSClassifier(width=s, lam="auto", n_lams=10).fit(X, y)
        rows.append((one.loo_error_, one.loo_squared_error_, -s, one.lam_))
    best = min(rows)
    assert clf.width_ == -best[2] and clf.lam_ == pytest.approx(best[3], rel=1e-12)
    assert clf.loo_error_ == pytest.approx(best[0])


def test_default_width_grid_is_around_the_median_distance():
    from scipy.spatial.distance import pdist

    X, y = make_moons(50, noise=0.2, random_state=0)
    clf = WeightedRLSClassifier(width="auto", lam=0.1).fit(X, y)
    grid = clf.loo_curve_["width"]
    med = np.median(pdist(X))
    assert grid.min() < med < grid.max()
    assert_allclose(grid[1:] / grid[:-1], np.sqrt(2.0))
    assert clf.width_ in grid


def test_precomputed_kernel_gives_the_same_model():
    X, y = make_blobs(50, centers=3, random_state=1)
    Xt = np.random.default_rng(0).normal(size=(9, 2))
    k = Kernel("rbf", width=1.2)
    a = WeightedRLSClassifier(width=1.2, lam="auto", class_weight="balanced").fit(X, y)
    b = WeightedRLSClassifier(kernel="precomputed", lam="auto", class_weight="balanced").fit(k(X), y)
    assert a.lam_ == pytest.approx(b.lam_, rel=1e-12)
    assert_allclose(a.decision_function(Xt), b.decision_function(k(Xt, X)), rtol=1e-9, atol=1e-9)
    assert b.n_features_in_ == 50 and b.width_ is None


@pytest.mark.parametrize("kernel", ["linear", "poly"])
def test_other_kernels_match_direct_solve(kernel):
    X, y = make_moons(40, noise=0.2, random_state=0)
    clf = WeightedRLSClassifier(kernel=kernel, degree=2, coef0=1.0, lam=0.5).fit(X, y)
    K = Kernel(kernel, degree=2, coef0=1.0)(X)
    c, b = direct_fit(K, np.where(y == 1, 1.0, -1.0), np.ones(40), 0.5, True)
    assert_allclose(clf.dual_coef_[:, 0], c, **TOL)
    assert_allclose(clf.intercept_[0], b, **TOL)
    auto = WeightedRLSClassifier(kernel=kernel, degree=2, lam="auto").fit(X, y)  # low rank: grid still valid
    assert np.all(np.isfinite(auto.loo_curve_["squared"]))


def test_predict_and_proba_follow_the_decision_function():
    X, y = make_moons(60, noise=0.2, random_state=0)
    labels = np.where(y == 1, "pos", "neg")
    clf = WeightedRLSClassifier(width=0.5, lam=0.05).fit(X, labels)
    Xt = np.random.default_rng(1).normal(size=(30, 2))
    f = clf.decision_function(Xt)
    assert f.shape == (30,)
    assert_allclose(clf.predict_proba(Xt)[:, 1], np.clip((f + 1) / 2, 0, 1))
    assert_allclose(clf.predict_proba(Xt).sum(axis=1), 1.0)
    assert (clf.predict(Xt) == np.where(f > 0, "pos", "neg")).all()

    X, y = make_blobs(60, centers=4, random_state=0)
    clf = WeightedRLSClassifier(lam=0.1).fit(X, y + 10)
    Xt = np.vstack([X[:10], [[100.0, 100.0]]])  # the far point has all outputs near b
    F = clf.decision_function(Xt)
    P = clf.predict_proba(Xt)
    assert F.shape == (11, 4) and P.shape == (11, 4)
    assert_allclose(P.sum(axis=1), 1.0)
    soft = np.clip((F + 1) / 2, 0, 1)
    nonzero = soft.sum(axis=1) > 0
    assert_allclose(P[nonzero], soft[nonzero] / soft[nonzero].sum(axis=1, keepdims=True))
    assert (clf.predict(Xt) == clf.classes_[np.argmax(F, axis=1)]).all()
    assert clf.score(X, y + 10) > 0.9


def test_proba_is_uniform_when_every_output_is_below_minus_one():
    X, y = make_blobs(30, centers=3, random_state=0)
    clf = WeightedRLSClassifier(lam=0.1).fit(X, y)
    clf.intercept_ = np.array([-5.0, -5.0, -5.0])  # force all outputs far below -1
    assert_allclose(clf.predict_proba(X[:3]), 1.0 / 3)


def test_balanced_weights_help_on_imbalanced_multiclass():
    rng = np.random.default_rng(0)
    centers = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])
    sizes = [200, 200, 12]
    X = np.vstack([c + rng.normal(size=(m, 2)) for c, m in zip(centers, sizes)])
    y = np.repeat([0, 1, 2], sizes)
    Xt = np.vstack([c + rng.normal(size=(200, 2)) for c in centers])
    yt = np.repeat([0, 1, 2], 200)
    plain = WeightedRLSClassifier(width=1.0, lam=1.0).fit(X, y)
    balanced = WeightedRLSClassifier(width=1.0, lam=1.0, class_weight="balanced").fit(X, y)
    recall = lambda m: (m.predict(Xt)[yt == 2] == 2).mean()  # noqa: E731
    assert recall(balanced) > recall(plain) + 0.1


# ------------------------------------------------------------------------------------------------
# Bad input: a clear error, and a fitted model stays as it was
# ------------------------------------------------------------------------------------------------


@pytest.fixture
def fitted():
    X, y = make_moons(30, noise=0.2, random_state=0)
    return X, y, WeightedRLSClassifier(lam=0.1).fit(X, y)


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(kernel="sigmoid"), "Unknown kernel"),
        (dict(lam=0.0), "lam"),
        (dict(lam=-1.0), "lam"),
        (dict(lam="big"), "lam"),
        (dict(width=0.0), "width"),
        (dict(width=-2.0), "width"),
        (dict(width="wide"), "width"),
        (dict(kernel="linear", width="auto"), "width='auto' needs kernel='rbf'"),
        (dict(width="auto", widths=[1.0, -1.0]), "widths"),
        (dict(n_lams=0), "n_lams"),
        (dict(loo_criterion="hinge"), "loo_criterion"),
        (dict(class_weight="balance"), "class_weight"),
        (dict(class_weight={7: 2.0}), "not among the classes"),
        (dict(class_weight={0: 0.0}), "> 0"),
        (dict(kernel="poly", degree=0), "degree"),
        (dict(fit_offset="yes"), "fit_offset"),
    ],
)
def test_bad_parameters(fitted, params, match):
    X, y, clf = fitted
    before = clf.dual_coef_.copy()
    with pytest.raises(ValueError, match=match):
        clf.set_params(**params).fit(X, y)
    assert_allclose(clf.dual_coef_, before)


def test_bad_data(fitted):
    X, y, clf = fitted
    before = (clf.dual_coef_.copy(), clf.lam_, clf.classes_.copy())
    cases = []
    Xnan = X.copy()
    Xnan[3, 1] = np.nan
    cases.append(((Xnan, y), "NaN or infinite"))
    Xinf = X.copy()
    Xinf[0, 0] = np.inf
    cases.append(((Xinf, y), "NaN or infinite"))
    cases.append(((np.array([["a", "b"]] * 30), y), "non-numeric"))
    cases.append(((X, np.zeros(30)), "1 class"))
    cases.append(((X[:1], y[:1]), "n_samples = 1"))
    cases.append(((X, y[:-1]), "29 labels but X has 30"))
    cases.append(((X, None), "requires y"))
    cases.append(((X[:, 0], y), "2-D"))
    cases.append(((X, y + 0.5), "Unknown label type"))
    for args, match in cases:
        with pytest.raises(ValueError, match=match):
            clf.fit(*args)
    with pytest.raises(TypeError, match="not numbers"):
        Xobj = X.astype(object)
        Xobj[0, 0] = {"a": 1}
        clf.fit(Xobj, y)
    with pytest.raises(TypeError, match="Sparse"):
        import scipy.sparse

        clf.fit(scipy.sparse.csr_matrix(X), y)
    assert_allclose(clf.dual_coef_, before[0])
    assert clf.lam_ == before[1] and (clf.classes_ == before[2]).all()


@pytest.mark.parametrize(
    "sample_weight, match",
    [
        (-np.ones(30), ">= 0"),
        (np.full(30, np.nan), "finite"),
        (np.ones(29), "1-D array of 30"),
        (np.ones((30, 2)), "1-D array of 30"),
        (np.r_[np.zeros(29), 1.0], "at least 2 classes"),
    ],
)
def test_bad_sample_weight(fitted, sample_weight, match):
    X, y, clf = fitted
    with pytest.raises(ValueError, match=match):
        clf.fit(X, y, sample_weight=sample_weight)


def test_sample_weight_leaving_one_class_raises_naming_classes(fitted):
    X, y, clf = fitted
    with pytest.raises(ValueError, match="class"):
        clf.fit(X, y, sample_weight=(y == 1).astype(float))


def test_predict_before_fit_and_wrong_feature_count(fitted):
    X, y, clf = fitted
    for method in ("predict", "decision_function", "predict_proba"):
        with pytest.raises(NotFittedError):
            getattr(WeightedRLSClassifier(), method)(X)
        with pytest.raises(ValueError, match="X has 3 features, but WeightedRLSClassifier is expecting 2"):
            getattr(clf, method)(np.hstack([X, X[:, :1]]))
        with pytest.raises(ValueError, match="NaN or infinite"):
            getattr(clf, method)(np.full((2, 2), np.nan))


def test_precomputed_kernel_checks():
    X, y = make_moons(20, noise=0.2, random_state=0)
    K = Kernel("rbf")(X)
    with pytest.raises(ValueError, match="square"):
        WeightedRLSClassifier(kernel="precomputed").fit(K[:, :10], y)
    asym = K.copy()
    asym[0, 1] += 0.1
    with pytest.raises(ValueError, match="symmetric"):
        WeightedRLSClassifier(kernel="precomputed").fit(asym, y)
    with pytest.raises(ValueError, match="width='auto' needs kernel='rbf'"):
        WeightedRLSClassifier(kernel="precomputed", width="auto").fit(K, y)
    clf = WeightedRLSClassifier(kernel="precomputed").fit(K, y)
    with pytest.raises(ValueError, match="expecting 20 features"):
        clf.predict(K[:, :5])


def test_not_positive_semidefinite_kernel_gives_helpful_errors():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(20, 20))
    K = (B + B.T) / 2  # indefinite: eigenvalues of both signs, well below -lam
    y = np.arange(20) % 2
    with pytest.raises(ValueError, match="not positive definite.*Increase lam"):
        WeightedRLSClassifier(kernel="precomputed", lam=1e-3).fit(K, y)
    with pytest.raises(ValueError, match="not positive semi-definite"):
        WeightedRLSClassifier(kernel="precomputed", lam="auto").fit(K, y)


def test_lam_too_small_for_a_nearly_psd_kernel():
    rng = np.random.default_rng(0)
    B = rng.normal(size=(20, 20))
    K = (B + B.T) / 2
    K -= (np.linalg.eigvalsh(K).min() + 1e-9) * np.eye(20)  # smallest eigenvalue -1e-9: tiny
    # relative to the largest, so "PSD up to rounding", but lam=1e-12 cannot make G definite
    Y = (np.arange(20) % 2) * 2.0 - 1
    with pytest.raises(ValueError, match="lam=1e-12 is too small"):
        loo_path(K, Y, None, [1e-12, 1.0])
    path = loo_path(K, Y, None, [1e-3, 1.0])
    assert isinstance(path, LooPath) and np.all(np.isfinite(path.residuals))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(K=np.eye(3)[:2]), "square"),
        (dict(K=np.full((3, 3), np.nan)), "NaN"),
        (dict(Y=np.ones(4)), r"shape \(n,\) or \(n, T\) with n=3"),
        (dict(sample_weight=-np.ones(3)), ">= 0"),
        (dict(sample_weight=np.array([1.0, 0.0, 0.0])), "at least 2"),
        (dict(sample_weight=np.ones((3, 2))), "columns"),
        (dict(lams=[0.0]), "> 0"),
        (dict(lams=[]), "non-empty"),
    ],
)
def test_loo_path_bad_input(kwargs, match):
    args = dict(K=np.eye(3), Y=np.array([1.0, -1.0, 1.0]), sample_weight=None, lams=[1.0])
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        loo_path(args["K"], args["Y"], args["sample_weight"], args["lams"])


def test_default_widths_refuse_identical_points():
    from core.rls import default_widths

    with pytest.raises(ValueError, match=r"widths=\[\.\.\.\]"):
        default_widths(np.ones((8, 2)))
    X = np.random.default_rng(0).standard_normal((40, 2))
    from scipy.spatial.distance import pdist

    assert_allclose(default_widths(X), np.median(pdist(X)) * 2.0 ** np.arange(-3.0, 2.25, 0.5), rtol=1e-15)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_zero_outputs_follow_the_risk_decision_rule(n_classes):
    """f = 0 predicts classes_[0] (sign(0) = -1), ties go to the lowest column (core.criteria.risk)."""
    from core.criteria.risk import class_probabilities

    X, y = make_blobs(30, centers=n_classes, random_state=0)
    K = Kernel("rbf", width=1.0)(X)
    clf = WeightedRLSClassifier(kernel="precomputed", lam=0.5, fit_offset=False).fit(K, y)
    K_far = np.zeros((4, 30))  # points far from every training point: all outputs exactly 0
    assert (clf.predict(K_far) == clf.classes_[0]).all()
    assert_allclose(clf.predict_proba(K_far), 1.0 / n_classes)
    K_new = K[:7]
    assert_allclose(clf.predict_proba(K_new), class_probabilities(clf.decision_function(K_new)), rtol=0, atol=0)


def test_fit_keeps_its_own_copy_of_X():
    """Changing the caller's X after fit must not change the fitted model."""
    rng = np.random.default_rng(21)
    X = rng.standard_normal((30, 2))
    y = (X[:, 0] > 0).astype(int)
    clf = WeightedRLSClassifier(width=1.0, lam=0.1).fit(X, y)
    Z = rng.standard_normal((10, 2))
    before = clf.decision_function(Z)
    X[:] = 0.0
    assert_allclose(clf.decision_function(Z), before)
