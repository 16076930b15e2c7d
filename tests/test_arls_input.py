"""Bad input to ActiveRLS: a clear error naming the problem, and the state left unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from core.learner import ActiveRLS
from core.kernels import Kernel


@pytest.fixture
def learner():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((20, 3))
    lrn = ActiveRLS.from_features(X, classes=["cat", "dog"], kernel=Kernel("rbf", width=1.5), lam=0.1, weighting="balanced")
    lrn.add(0, "cat").add(3, "dog").add(7, "dog")
    return lrn


def snapshot(lrn):
    return {
        "labels": lrn.labels,
        "classes": lrn.classes,
        "weights": lrn.class_weights,
        "weighting": lrn.weighting,
        "lambdas": lrn.point_lambdas,
        "m": lrn.decision_values,
        "C": lrn.posterior_covariance(),
        "E": lrn.expected_risk(),
        "rebuilds": lrn.n_rebuilds,
    }


def assert_unchanged(lrn, before):
    after = snapshot(lrn)
    assert list(after["labels"].items()) == list(before["labels"].items())
    assert after["classes"] == before["classes"]
    assert after["weights"] == before["weights"]
    assert after["weighting"] == before["weighting"]
    assert after["rebuilds"] == before["rebuilds"]
    for key in ("lambdas", "m", "C", "E"):
        assert_array_equal(after[key], before[key])  # bit for bit


BAD_CALLS = [
    ("add label not in classes", lambda l: l.add(1, "bird"), ValueError, "not one of the classes"),
    ("add label of wrong type", lambda l: l.add(1, 0), ValueError, "not one of the classes"),
    ("add unhashable label", lambda l: l.add(1, ["cat"]), ValueError, "not one of the classes"),
    ("label a point twice", lambda l: l.add(3, "cat"), ValueError, "already labelled"),
    ("index out of range", lambda l: l.add(20, "cat"), IndexError, "out of range"),
    ("negative index", lambda l: l.add(-1, "cat"), IndexError, "out of range"),
    ("float index", lambda l: l.add(1.0, "cat"), IndexError, "integer"),
    ("string index", lambda l: l.add("1", "cat"), IndexError, "integer"),
    ("bool index", lambda l: l.add(True, "cat"), IndexError, "integer"),
    ("remove unlabelled point", lambda l: l.remove(5), ValueError, "not labelled"),
    ("remove out of range", lambda l: l.remove(99), IndexError, "out of range"),
    ("relabel unlabelled point", lambda l: l.relabel(5, "cat"), ValueError, "not labelled"),
    ("relabel to unknown class", lambda l: l.relabel(3, "bird"), ValueError, "not one of the classes"),
    ("unknown weighting", lambda l: l.set_weighting("equal"), ValueError, "weighting"),
    ("weighting of unknown class", lambda l: l.set_weighting({"bird": 2.0}), ValueError, "not in classes"),
    ("zero class weight", lambda l: l.set_weighting({"cat": 0.0}), ValueError, "> 0"),
    ("negative class weight", lambda l: l.set_weighting({"cat": -1.0}), ValueError, "> 0"),
    ("NaN class weight", lambda l: l.set_weighting({"cat": float("nan")}), ValueError, "> 0"),
    ("weighting of wrong type", lambda l: l.set_weighting(3), ValueError, "weighting"),
    ("add existing class", lambda l: l.add_class("dog"), ValueError, "already exists"),
    ("add unhashable class", lambda l: l.add_class({"x": 1}), ValueError, "hashable"),
    ("add_many with a labelled point", lambda l: l.add_many([1, 3], ["cat", "dog"]), ValueError, "already labelled"),
    ("add_many with a duplicate", lambda l: l.add_many([1, 1], ["cat", "dog"]), ValueError, "twice"),
    ("add_many with a bad label", lambda l: l.add_many([1, 2], ["cat", "emu"]), ValueError, "not one of"),
    ("add_many with length mismatch", lambda l: l.add_many([1, 2], ["cat"]), ValueError, "one label per index"),
    ("unknown risk backend", lambda l: l.expected_risk(backend="gpu"), ValueError, "backend"),
]


@pytest.mark.parametrize("name, call, exc, match", BAD_CALLS, ids=[c[0] for c in BAD_CALLS])
def test_bad_call_raises_and_leaves_state_unchanged(learner, name, call, exc, match):
    before = snapshot(learner)
    with pytest.raises(exc, match=match):
        call(learner)
    assert_unchanged(learner, before)


def test_good_calls_still_work_after_errors(learner):
    with pytest.raises(ValueError):
        learner.add(3, "cat")
    learner.add(1, "cat").relabel(1, "dog").remove(1)
    assert learner.labels == {0: "cat", 3: "dog", 7: "dog"}
    learner.relabel(3, "dog")  # same label: a no-op
    assert learner.n_labeled == 3


GOOD_X = np.random.default_rng(1).standard_normal((10, 2))


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        ({"lam": 0.0}, ValueError, "lam"),
        ({"lam": -0.5}, ValueError, "lam"),
        ({"lam": float("inf")}, ValueError, "lam"),
        ({"lam": "0.1"}, ValueError, "lam"),
        ({"classes": ["only"]}, ValueError, "at least two classes"),
        ({"classes": []}, ValueError, "at least two classes"),
        ({"classes": ["a", "a"]}, ValueError, "appears twice"),
        ({"classes": [1, 1.0]}, ValueError, "appears twice"),
        ({"classes": "ab"[0:0]}, ValueError, "at least two classes"),
        ({"classes": 5}, ValueError, "list of labels"),
        ({"classes": [["a"], ["b"]]}, ValueError, "hashable"),
        ({"weighting": "inverse"}, ValueError, "weighting"),
        ({"weighting": {"z": 1.0}}, ValueError, "not in classes"),
        ({"kernel": "rbf"}, TypeError, "Kernel"),
    ],
)
def test_bad_constructor_arguments(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        ActiveRLS.from_features(GOOD_X, **kwargs)


@pytest.mark.parametrize("width", [0.0, -1.0, float("nan")])
def test_bad_kernel_width(width):
    with pytest.raises(ValueError, match="width"):
        ActiveRLS.from_features(GOOD_X, kernel=Kernel("rbf", width=width))


@pytest.mark.parametrize(
    "X, match",
    [
        (np.array([[0.0, np.nan], [1.0, 2.0]]), "NaN or infinite"),
        (np.array([[0.0, np.inf], [1.0, 2.0]]), "NaN or infinite"),
        (np.array([["a", "b"], ["c", "d"]], dtype=object), "non-numeric"),
        (np.array([["1.0", "x"], ["2", "3"]]), "non-numeric"),
        (np.zeros((1, 3)), "at least 2"),
        (np.zeros((0, 3)), "empty"),
        (np.zeros((3, 0)), "empty"),
        (np.zeros(5), "2-D"),
    ],
)
def test_bad_features(X, match):
    with pytest.raises(ValueError, match=match):
        ActiveRLS.from_features(X)


@pytest.mark.parametrize(
    "K, match",
    [
        (np.array([[1.0, 0.5], [0.2, 1.0]]), "not symmetric"),
        (np.ones((2, 3)), "square"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), "NaN or infinite entries: a kernel matrix"),
        (np.ones((1, 1)), "at least 2"),
    ],
)
def test_bad_precomputed_kernel(K, match):
    with pytest.raises(ValueError, match=match):
        ActiveRLS.from_kernel(K)


def test_non_psd_kernel_is_reported_clearly_and_the_label_is_rolled_back():
    K = np.array([[1.0, 2.0, 0.0], [2.0, 1.0, 0.0], [0.0, 0.0, 1.0]])  # eigenvalue -1
    learner = ActiveRLS.from_kernel(K, lam=0.01)
    learner.add(0, 1)  # one point: 1 + lam > 0 is fine
    before = snapshot(learner)
    # C_11 = 1 - 4 / 1.01 < 0: the add guard trips, and the direct solve must refuse too
    with pytest.raises(np.linalg.LinAlgError, match="not positive definite"):
        learner.add(1, 0)
    after = snapshot(learner)
    assert after["labels"] == {0: 1} and after["weights"] == before["weights"]
    np.testing.assert_allclose(after["m"], before["m"], atol=1e-14)
    np.testing.assert_allclose(after["C"], before["C"], atol=1e-14)


@pytest.mark.parametrize("lam", [0.0, -1.0, float("nan"), float("inf"), "0.1", None, True])
def test_bad_set_lam_leaves_state_unchanged(learner, lam):
    before = snapshot(learner)
    with pytest.raises(ValueError, match="lam"):
        learner.set_lam(lam)
    assert_unchanged(learner, before)
    assert learner.lam == 0.1


@pytest.mark.parametrize("kernel", ["rbf", None, 1.5])
def test_set_kernel_needs_a_kernel(learner, kernel):
    before, old = snapshot(learner), learner.kernel
    with pytest.raises(TypeError, match="Kernel"):
        learner.set_kernel(kernel)
    assert_unchanged(learner, before)
    assert learner.kernel is old


def test_set_kernel_on_a_precomputed_kernel_is_refused():
    K = Kernel("rbf", width=1.0)(GOOD_X)
    lrn = ActiveRLS.from_kernel(K).add(0, 1)
    before = snapshot(lrn)
    with pytest.raises(ValueError, match="precomputed kernel matrix"):
        lrn.set_kernel(Kernel("linear"))
    assert_unchanged(lrn, before)


def test_set_kernel_failure_restores_the_old_kernel_and_state(learner, monkeypatch):
    before, old = snapshot(learner), learner.kernel
    cov = learner.posterior
    real = type(cov).condition
    calls = []

    def fail_once(self, *args, **kw):
        calls.append(1)
        if len(calls) == 1:
            raise MemoryError("simulated")
        return real(self, *args, **kw)

    monkeypatch.setattr(type(cov), "condition", fail_once)
    with pytest.raises(MemoryError):
        learner.set_kernel(Kernel("rbf", width=0.3))
    monkeypatch.undo()
    assert learner.kernel is old
    after = snapshot(learner)
    assert after["labels"] == before["labels"] and after["weights"] == before["weights"]
    np.testing.assert_allclose(after["m"], before["m"], atol=1e-12)
    np.testing.assert_allclose(after["C"], before["C"], atol=1e-12)
    # and it keeps working with the old kernel
    learner.add(1, "cat")
    fresh = ActiveRLS.from_features(learner.posterior.features, classes=["cat", "dog"],
                      kernel=old, lam=0.1, weighting="balanced").add_many([0, 3, 7, 1], ["cat", "dog", "dog", "cat"])
    np.testing.assert_allclose(learner.decision_values, fresh.decision_values, atol=1e-10)
