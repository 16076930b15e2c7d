"""core/weights.py: balanced and one-vs-all equilibrating weights (seed 002 eq. 3.14-3.18)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.utils.class_weight import compute_class_weight

from core.rls.weights import balanced_class_weights, equilibrating_weights, sample_weights


def test_binary_balanced_is_sklearn_balanced():
    y = np.array([0] * 7 + [1] * 3)
    expected = compute_class_weight("balanced", classes=np.array([0, 1]), y=y)
    assert_allclose(balanced_class_weights([7, 3]), expected, rtol=1e-15)
    assert_allclose(balanced_class_weights({"a": 7, "b": 3}, n_classes=2), expected, rtol=1e-15)
    # proportional to 1 / n_y, and both classes carry the same total weight n / 2
    w = balanced_class_weights([7, 3])
    assert_allclose(w * [7, 3], [5.0, 5.0])


def test_multiclass_balanced_is_sklearn_balanced():
    counts = np.array([5, 11, 2, 8])
    y = np.repeat(np.arange(4), counts)
    expected = compute_class_weight("balanced", classes=np.arange(4), y=y)
    assert_allclose(balanced_class_weights(counts), expected, rtol=1e-15)


def test_equilibrating_weights_match_eq_3_14_3_15_for_equal_classes():
    T, per_class = 5, 6
    n = T * per_class
    n_minus = n - per_class
    E = equilibrating_weights([per_class] * T)
    # eq. 3.14-3.15 scaled by n (mean weight 1): w_+ = n (T-1) / (2 n_-), w_- = n / (2 n_-)
    assert_allclose(np.diag(E), n * (T - 1) / (2 * n_minus))
    assert_allclose(E[~np.eye(T, dtype=bool)], n / (2 * n_minus))


def test_equilibrating_weights_balance_every_column_and_every_class():
    counts = np.array([3, 10, 40, 7])
    E = equilibrating_weights(counts)
    T, n = counts.size, counts.sum()
    for t in range(T):
        positive = counts[t] * E[t, t]
        negatives = counts * E[:, t]
        negatives[t] = 0
        assert_allclose(positive, n / 2)
        assert_allclose(negatives.sum(), n / 2)
        # the negatives of a column are balanced across classes
        assert_allclose(negatives[np.arange(T) != t], n / (2 * (T - 1)))


def test_equilibrating_weights_come_from_the_multiclass_objective():
    """eq. 3.17-3.18: per-point weight 1/n_s, positive term counted T-1 times, negative once."""
    counts = np.array([4, 9, 2])
    T = counts.size
    E = equilibrating_weights(counts)
    raw = np.array([[(T - 1 if s == t else 1) / counts[s] for t in range(T)] for s in range(T)])
    ratio = E / raw
    assert_allclose(ratio, ratio[0, 0])  # same up to one global scale


def test_equilibrating_weights_reduce_to_balanced_for_two_classes():
    E = equilibrating_weights([7, 3])
    assert_allclose(E, np.repeat(balanced_class_weights([7, 3])[:, None], 2, axis=1))


def test_sample_weights_none_dict_balanced_shapes_and_values():
    y = np.array(["b", "a", "b", "c", "b", "a"])
    classes = np.array(["a", "b", "c"])
    assert_allclose(sample_weights(y, classes, None), np.ones(6))
    w = sample_weights(y, classes, {"b": 2.5})
    assert_allclose(w, [2.5, 1, 2.5, 1, 2.5, 1])
    W = sample_weights(y, classes, "equilibrating")
    E = equilibrating_weights([2, 3, 1])
    assert W.shape == (6, 3)
    assert_allclose(W, E[[1, 0, 1, 2, 1, 0]])
    # "balanced" has one meaning everywhere: n / (T n_y), one weight per point
    assert_allclose(sample_weights(y, classes, "balanced"), balanced_class_weights([2, 3, 1])[[1, 0, 1, 2, 1, 0]])


def test_sample_weights_binary_balanced_is_one_column():
    y = np.array([1, 1, 1, 0])
    w = sample_weights(y, [0, 1], "balanced")
    assert w.shape == (4,)
    assert_allclose(w, [4 / 6, 4 / 6, 4 / 6, 2.0])


def test_sample_weight_multiplies_and_counts_like_repetition():
    y = np.array([0, 0, 1, 2, 2, 1, 0])
    sw = np.array([2.0, 1.0, 3.0, 1.0, 0.5, 1.0, 0.0])
    assert_allclose(sample_weights(y, [0, 1, 2], {1: 4.0}, sample_weight=sw), sw * [1, 1, 4, 1, 1, 4, 1])
    for classes in ([0, 1, 2], [1, 2]):
        keep = np.isin(y, classes)
        yk, swk = y[keep], np.array([2.0, 1.0, 3.0, 1.0, 0.5, 1.0, 2.0])[keep]
        weighted = sample_weights(yk, classes, "balanced", sample_weight=swk)
        # an integer sample weight is the same as repeating the point (here 2.0 and 3.0 and 1.0)
        reps = np.round(swk * 2).astype(int)  # weights in halves: repeat 2 w times, weight 1/2
        repeated = sample_weights(np.repeat(yk, reps), classes, "balanced")
        first = np.cumsum(reps) - reps
        assert_allclose(weighted, swk.reshape(-1, *([1] * (weighted.ndim - 1))) * repeated[first])


@pytest.mark.parametrize(
    "y, classes, class_weight, match",
    [
        ([0, 1, 2], [0, 1], None, "not among the classes"),
        ([0, 1], [0, 1], {5: 1.0}, "not among the classes"),
        ([0, 1], [0, 1], {0: 0.0}, "> 0"),
        ([0, 1], [0, 1], {0: -2.0}, "> 0"),
        ([0, 1], [0, 1], {0: float("inf")}, "> 0"),
        ([0, 1], [0, 1], {0: "heavy"}, "> 0"),
        ([0, 0], [0, 1], "balanced", "of every class"),
        ([0, 1], [0, 1], "balance", "must be None, 'balanced', 'equilibrating' or a dict"),
        ([0, 1], [0], None, "at least 2 distinct"),
        ([[0, 1]], [0, 1], None, "1-D"),
    ],
)
def test_sample_weights_bad_input(y, classes, class_weight, match):
    with pytest.raises(ValueError, match=match):
        sample_weights(np.array(y), np.array(classes), class_weight)


@pytest.mark.parametrize(
    "counts, kwargs, match",
    [
        ([3, 0], {}, "no points"),
        ({"a": 3, "b": 0}, {}, r"\['b'\]"),
        ([3], {}, "at least 2 classes"),
        ([3, 2], {"n_classes": 3}, "n_classes=3"),
        ([3, -1], {}, "finite numbers >= 0"),
        ([3, float("nan")], {}, "finite numbers >= 0"),
        ([[3, 1]], {}, "1-D"),
    ],
)
def test_class_weight_functions_bad_counts(counts, kwargs, match):
    for func in (balanced_class_weights, equilibrating_weights):
        with pytest.raises(ValueError, match=match):
            func(counts, **kwargs)


@pytest.mark.parametrize("sample_weight", [np.array([1.0, -1.0]), np.array([1.0]), np.array([np.nan, 1.0])])
def test_bad_sample_weight(sample_weight):
    with pytest.raises(ValueError, match="sample_weight"):
        sample_weights(np.array([0, 1]), [0, 1], "balanced", sample_weight=sample_weight)


# ---- core.learner.weighting "evident": balanced once the counts show imbalance (issue 20 §4) ----
def test_imbalance_evident_is_the_chi_square_test_of_the_labelled_classes():
    from scipy.stats import chisquare

    from core.learner.weighting import EVIDENT_ALPHA, imbalance_evident

    rng = np.random.default_rng(0)
    for _ in range(200):
        counts = rng.integers(0, 30, size=rng.integers(2, 6))
        seen = counts[counts > 0]
        want = seen.size >= 2 and chisquare(seen).pvalue < EVIDENT_ALPHA
        assert imbalance_evident(counts) == want, counts
    assert not imbalance_evident([5, 0, 0])  # one class found: no test
    assert not imbalance_evident([6, 4]) and imbalance_evident([10, 1])


def test_evident_weights_are_one_until_imbalance_then_balanced():
    from core.learner.weighting import check_weighting, class_weight_vector

    classes = ["a", "b", "c"]
    assert check_weighting("evident", classes) == "evident"
    assert_allclose(class_weight_vector("evident", classes, [7, 6, 8]), np.ones(3))
    assert_allclose(class_weight_vector("evident", classes, [30, 2, 4]),
                    class_weight_vector("balanced", classes, [30, 2, 4]))


def test_a_learner_with_evident_weights_matches_one_with_the_same_fixed_weights():
    from core.kernels import Kernel
    from core.learner import ActiveRLS
    from core.learner.weighting import class_weight_vector

    rng = np.random.default_rng(1)
    X = rng.standard_normal((60, 2))
    labels = [(i, "a" if i % 9 else "b") for i in range(0, 40)]
    kw = dict(classes=["a", "b"], kernel=Kernel("rbf", width=1.0), lam=0.3)
    ev = ActiveRLS.from_features(X, weighting="evident", **kw)
    for i, c in labels:
        ev.add(i, c)
    counts = [sum(c == k for _, c in labels) for k in ("a", "b")]
    w = class_weight_vector("balanced", ["a", "b"], counts)
    assert not np.allclose(w, 1.0)  # 35 : 5 is evident
    fixed = ActiveRLS.from_features(X, weighting=dict(zip(["a", "b"], w)), **kw)
    fixed.add_many([i for i, _ in labels], [c for _, c in labels])
    assert_allclose([ev.class_weights[c] for c in ("a", "b")], w)
    assert_allclose(ev.decision_values, fixed.decision_values, atol=1e-9)


@pytest.mark.parametrize("classes, own", [(["a", "b"], "evident"), (["a", "b", "c"], "none"),
                                          (["a", "b", "c"], "balanced")])
def test_outputs_under_another_weighting_match_a_learner_built_with_it(classes, own):
    """decision_values_under: the reweighted outputs without touching the learner, against a
    learner that carries the other weighting from the start (a direct solve)."""
    from core.kernels import Kernel
    from core.learner import ActiveRLS

    rng = np.random.default_rng(2)
    X = rng.standard_normal((70, 3))
    names = np.array(classes)
    labels = [(i, str(names[rng.integers(len(classes))]) if i % 4 else str(names[0])) for i in range(0, 45, 2)]
    kw = dict(classes=classes, kernel=Kernel("rbf", width=1.2), lam=0.2)
    learner = ActiveRLS.from_features(X, weighting=own, **kw)
    for i, c in labels:
        learner.add(i, c)
    before = learner.decision_values
    for other in ("balanced", "none", {classes[0]: 0.5, classes[1]: 3.0}):
        direct = ActiveRLS.from_features(X, weighting=other, **kw)
        direct.add_many([i for i, _ in labels], [c for _, c in labels])
        assert_allclose(learner.decision_values_under(other), direct.decision_values, atol=1e-9)
        assert_allclose(learner.decision_values, before, atol=0)  # unchanged
    assert_allclose(learner.decision_values_under(own), before, atol=0)  # nothing moves: its own outputs
