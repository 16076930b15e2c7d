"""Every learner the app can build obeys the laws of core.learner.base.Learner (in the spirit of
scikit-learn's check_estimator).

One list, :data:`BUILDERS`, names every learner: kernel RLS on a dense, a factor (spectral graph
kernel) and a Nystrom posterior, the harmonic function and LGC, each built by the app's own
factory (labeler.session.model.build_learner). A new model joins by adding one builder
``(name, build(X, classes, seed) -> Learner)``; every law below then runs on it.
"""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from core.criteria import Margin, Random
from core.learner.base import CAPABILITIES, EXPECTED_RISK, GRAPH_VARIANCE, LAM, WEIGHTING, Learner
from core.strategies import scores
from labeler.session.model import GraphSpec, RlsSpec, build_learner

N = 60


def _rls(**kw):
    return lambda X, classes, seed: build_learner(RlsSpec(width=1.0, lam=0.1, weighting="balanced", seed=seed, **kw),
                                                  X, classes)


def _graph(model, **kw):
    return lambda X, classes, seed: build_learner(GraphSpec(model=model, knn=6, seed=seed, **kw), X, classes)


def _graph_rls():
    """Graph-kernel RLS as the model choice builds it (kernel RLS on the kNN graph's spectral kernel)."""
    def build(X, classes, seed):
        from core.kernels import knn_graph
        from labeler.experiments.model_select_simulate import graph_rls_candidate
        chosen = {"lam": 0.1, "weighting": "balanced", "auto_tune": {"lam": True}}
        return graph_rls_candidate(X, knn_graph(X, 6, seed=seed), classes, chosen, seed, n_neighbors=6, rank=12)[0]
    return build


#: Every learner the app can build: (name, build(X, classes, seed)).
BUILDERS = [
    ("rls-dense", _rls()),
    ("rls-factor", _rls(posterior="spectral", rank=12, knn=6)),
    ("rls-nystrom", _rls(posterior="nystrom", rank=20)),
    ("harmonic", _graph("harmonic")),
    ("lgc", _graph("lgc", alpha=0.9)),
    ("poisson", _graph("poisson")),
    ("graph-rls", _graph_rls()),
]


def _pool(n=N, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.integers(3, size=n)
    X = rng.standard_normal((n, 2)) * 0.6 + np.stack([y, (y == 1) * 2.0], axis=1)
    return X, y


@pytest.fixture(params=BUILDERS, ids=[name for name, _ in BUILDERS])
def build(request):
    return request.param[1]


def _labels(classes):
    """Eight labels (two or more per class) in a fixed order."""
    idx = [3, 41, 17, 8, 55, 22, 30, 12]
    return idx, [classes[k % len(classes)] for k in range(len(idx))]


def _same(a: Learner, b: Learner, atol=1e-7):
    assert a.labels == b.labels and list(a.labels) == list(b.labels)
    assert a.classes == b.classes
    assert_allclose(a.decision_values, b.decision_values, atol=atol)
    assert_array_equal(a.predict(), b.predict())


def test_is_a_learner(build):
    X, _ = _pool()
    learner = build(X, ["a", "b", "c"], 0)
    assert isinstance(learner, Learner)
    assert learner.capabilities <= set(CAPABILITIES)
    assert learner.n_samples == N and learner.n_labeled == 0 and learner.unlabeled_indices.size == N


def test_add_then_remove_equals_never_labelled(build):
    X, _ = _pool()
    classes = ["a", "b", "c"]
    idx, labs = _labels(classes)
    live = build(X, classes, 0).add_many(idx, labs)
    never = build(X, classes, 0).add_many(idx, labs)
    live.add(50, "b")
    live.remove(50)
    _same(live, never)
    live.add_many([1, 2], ["a", "c"])
    live.remove_many([1, 2])
    _same(live, never)


def test_a_reopen_equals_the_live_learner(build):
    X, _ = _pool()
    classes = ["a", "b", "c"]
    idx, labs = _labels(classes)
    live = build(X, classes, 0)
    for i, lab in zip(idx, labs):
        live.add(i, lab)
    live.remove(idx[2])
    live.relabel(idx[4], "a")
    live.add(idx[2], "c")  # back at the end of the labelling order
    reopened = build(X, classes, 0).add_many(list(live.labels), list(live.labels.values()))
    _same(live, reopened)


def test_rename_class_changes_names_only(build):
    X, _ = _pool()
    classes = ["a", "b", "c"]
    idx, labs = _labels(classes)
    learner = build(X, classes, 0).add_many(idx, labs)
    before_values, before_pred = learner.decision_values, learner.predict()
    learner.rename_class("b", "bee")
    assert learner.classes == ["a", "bee", "c"]
    assert_array_equal(learner.decision_values, before_values)
    assert_array_equal(learner.predict(), np.where(before_pred == "b", "bee", before_pred))
    assert list(learner.labels) == idx and "b" not in learner.labels.values()
    built = build(X, ["a", "bee", "c"], 0).add_many(idx, [("bee" if v == "b" else v) for v in labs])
    _same(learner, built)


def test_add_class_keeps_the_outputs(build):
    """The predictions, with fixed class weights (balanced weights follow the class count by their
    rule); kernel RLS keeps the old output columns exactly."""
    X, _ = _pool()
    for classes in (["a", "b"], ["a", "b", "c"]):  # binary -> one-vs-all, and T -> T + 1
        idx, labs = _labels(classes)
        learner = build(X, classes, 0).add_many(idx, labs)
        if WEIGHTING in learner.capabilities:
            learner.set_params(weighting="none")
        before, values = learner.predict(), learner.decision_values
        learner.add_class("new")
        assert learner.classes == classes + ["new"]
        assert_array_equal(learner.predict(), before)
        if len(classes) > 2 and LAM in learner.capabilities:  # RLS: the old columns exactly (LGC's prior
            assert_allclose(learner.decision_values[:, :len(classes)], values, atol=1e-10)  # 1/c moves with c)
        assert learner.class_counts().tolist() == [labs.count(c) for c in classes] + [0]
        learner.add(50, "new")  # and the new class is usable
        assert learner.labels[50] == "new"


@pytest.mark.parametrize("classes", [[0, 1, 2], ["x", "y", "z"]])
def test_predict_keeps_the_label_types(build, classes):
    X, _ = _pool()
    idx, labs = _labels(classes)
    pred = build(X, classes, 0).add_many(idx, labs).predict()
    assert pred.shape == (N,)
    assert all(isinstance(p, type(classes[0])) for p in pred.tolist())  # ints stay ints, str stay str
    assert set(pred.tolist()) <= set(classes)


def test_score_has_one_entry_per_candidate_in_their_order(build):
    X, _ = _pool()
    classes = ["a", "b", "c"]
    idx, labs = _labels(classes)
    learner = build(X, classes, 0).add_many(idx, labs)
    cand = learner.unlabeled_indices[[7, 0, 30, 12]]
    criteria = [Margin(), Random()] + ([learner.risk_criterion] if EXPECTED_RISK in learner.capabilities else []) \
        + ([learner.variance_criterion("vopt"), learner.variance_criterion("sigmaopt")]
           if GRAPH_VARIANCE in learner.capabilities else [])
    for criterion in criteria:
        s = learner.score(criterion, cand)
        assert s.shape == (4,)
        assert_allclose(learner.score(criterion, cand[::-1])[::-1], s, rtol=1e-10)
    whole = scores(learner, "margin")
    assert whole.shape == (N,) and np.isinf(whole[idx]).all()


def _a_change(learner) -> tuple[dict, dict]:
    """A valid parameter change, and the same with one invalid value (so it must fail)."""
    params = learner.get_params()
    if "lam" in params:
        return {"lam": 0.5, "weighting": "none"}, {"weighting": "none", "lam": -1.0}
    return {"class_mass": True}, {"class_mass": True, "alpha": 2.0, "model": "lgc"}


def test_set_params_is_all_or_nothing(build):
    X, _ = _pool()
    classes = ["a", "b", "c"]
    idx, labs = _labels(classes)
    learner = build(X, classes, 0).add_many(idx, labs)
    good, bad = _a_change(learner)
    params, values = learner.get_params(), learner.decision_values
    with pytest.raises(ValueError):
        learner.set_params(**bad)
    assert repr(learner.get_params()) == repr(params)
    assert_array_equal(learner.decision_values, values)
    learner.set_params(**good)
    assert all(learner.get_params()[k] == v for k, v in good.items())
    with pytest.raises(ValueError, match="unknown parameter|does not apply"):
        learner.set_params(no_such_setting=1)


def test_set_params_rolls_back_a_change_that_fails_half_way(build, monkeypatch):
    X, _ = _pool()
    classes = ["a", "b", "c"]
    idx, labs = _labels(classes)
    learner = build(X, classes, 0).add_many(idx, labs)
    good, _ = _a_change(learner)
    params, values = learner.get_params(), learner.decision_values
    calls = {"n": 0}
    fail_in = "set_lam" if "lam" in params else "_refit"
    real = getattr(learner, fail_in)

    def fails_once(*a, **kw):  # the last step fails after the first was applied
        calls["n"] += 1
        if calls["n"] == 1:
            raise np.linalg.LinAlgError("not positive definite")
        return real(*a, **kw)

    monkeypatch.setattr(learner, fail_in, fails_once)
    with pytest.raises(np.linalg.LinAlgError):
        learner.set_params(**good)
    assert repr(learner.get_params()) == repr(params)
    assert_allclose(learner.decision_values, values, atol=1e-10)


def test_a_refused_capability_raises_valueerror_naming_the_fix(build):
    X, _ = _pool()
    learner = build(X, ["a", "b", "c"], 0).add_many(*_labels(["a", "b", "c"]))
    for capability in CAPABILITIES:
        if capability in learner.capabilities:
            learner.require(capability)
            continue
        with pytest.raises(ValueError, match="does not apply to .*(use|choose|create|build)"):
            learner.require(capability)
    if EXPECTED_RISK not in learner.capabilities:
        with pytest.raises(ValueError, match="does not apply"):
            scores(learner, "arls")
    if LAM not in learner.capabilities:
        with pytest.raises(ValueError, match="does not apply"):
            learner.set_params(lam=0.5)


def test_bad_input_leaves_the_learner_as_it_was(build):
    X, _ = _pool()
    classes = ["a", "b", "c"]
    idx, labs = _labels(classes)
    learner = build(X, classes, 0).add_many(idx, labs)
    values = learner.decision_values
    for call, error in ((lambda: learner.add(idx[0], "a"), ValueError), (lambda: learner.add(1, "nope"), ValueError),
                        (lambda: learner.remove(1), ValueError), (lambda: learner.add(N, "a"), IndexError),
                        (lambda: learner.add_many([1, 1], ["a", "b"]), ValueError),
                        (lambda: learner.add_class("a"), ValueError),
                        (lambda: learner.rename_class("a", "b"), ValueError)):
        with pytest.raises(error):
            call()
    assert list(learner.labels) == idx
    assert_array_equal(learner.decision_values, values)
