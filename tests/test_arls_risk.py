"""Expected risk (seed 002 eq. 3.47-3.50) against brute-force refits and the numpy reference."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from arls_oracle import brute_force_expected_risk, build_learner, direct_solve, expected_class_weights
from core.learner import ActiveRLS
from core.criteria import ExpectedRisk, ScoringState
from core.posteriors import DensePosterior, FactorPosterior
from core.kernels import Kernel
from core.criteria.risk import (
    class_probabilities,
    estimated_risk,
    expected_risk_reference,
    pointwise_risk,
    target_codes,
)


def labelled_learner(classes, weighting, n=60, n_labels=15, seed=0, lam=0.1, posterior="dense"):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(loc=(2.0 * t, 0.0), size=(n // len(classes) + 1, 2)) for t in range(len(classes))])[:n]
    kernel = Kernel("rbf", width=1.0)
    learner = build_learner(posterior, X, classes=classes, kernel=kernel, lam=lam, weighting=weighting)
    # imbalanced labels so that "balanced" weights really differ per class
    probs = np.linspace(3.0, 1.0, len(classes))
    probs /= probs.sum()
    for i in rng.permutation(n)[:n_labels]:
        learner.add(int(i), classes[rng.choice(len(classes), p=probs)])
    return learner, kernel(X)


CASES = [
    (["neg", "pos"], "none"),
    (["neg", "pos"], "balanced"),
    (["neg", "pos"], {"neg": 0.4, "pos": 2.5}),
    ([0, 1, 2, 3], "none"),
    ([0, 1, 2, 3], "balanced"),
    ([0, 1, 2, 3], {0: 2.0, 2: 0.5}),
    ([0, 1, 2, 3], {0: 2.0, 1: 2.0, 2: 2.0, 3: 2.0}),  # equal weights: one group, O(nT)
]


@pytest.mark.parametrize("classes, weighting", CASES)
def test_expected_risk_matches_brute_force_refits(posterior, classes, weighting):
    learner, K = labelled_learner(classes, weighting, posterior=posterior)
    w = expected_class_weights(learner.labels, learner.classes, weighting)
    E_brute = brute_force_expected_risk(K, learner.labels, learner.classes, learner.lam, w)
    E = learner.expected_risk()
    labelled = np.array(list(learner.labels))
    assert np.isinf(E[labelled]).all()
    unl = learner.unlabeled_indices
    assert np.isfinite(E[unl]).all()
    assert_allclose(E[unl], E_brute[unl], rtol=1e-9)
    assert_allclose(learner.expected_risk(backend="numpy")[unl], E_brute[unl], rtol=1e-9)
    # a candidate subset, in the order given
    sub = unl[::-3]
    assert_allclose(learner.expected_risk(candidates=sub), E_brute[sub], rtol=1e-9)


def test_factor_posterior_scores_in_blocks():
    """Candidates handed to the criterion in many small row blocks give the same scores."""
    from core.criteria.expected_risk import score_block

    learner, K = labelled_learner([0, 1, 2], "balanced", posterior="factor")
    E = learner.expected_risk(candidates=learner.unlabeled_indices)
    blocks = list(learner.posterior.candidate_blocks(learner.unlabeled_indices, max_bytes=8 * 60 * 7))
    assert len(blocks) > 5 and all(b.candidates.size <= 7 for b in blocks)
    parts = np.concatenate([score_block(b, learner.scoring_state()) for b in blocks])
    assert_allclose(parts, E, rtol=1e-12)


def test_expected_risk_without_labels_matches_brute_force(posterior):
    learner, K = labelled_learner(["a", "b", "c"], "balanced", n=30, n_labels=0, posterior=posterior)
    w = np.ones(3)
    E_brute = brute_force_expected_risk(K, {}, learner.classes, learner.lam, w)
    assert_allclose(learner.expected_risk(), E_brute, rtol=1e-9)


def test_balanced_scores_with_current_weights():
    """Documented choice: under "balanced" the hypothetical label does not move the weights."""
    learner, K = labelled_learner(["neg", "pos"], "balanced", n_labels=12, seed=3)
    current = learner.class_weights
    frozen = ActiveRLS.from_kernel(K, classes=learner.classes, lam=learner.lam, weighting=current)
    for i, lab in learner.labels.items():
        frozen.add(i, lab)
    assert_allclose(learner.expected_risk(), frozen.expected_risk(), rtol=1e-10)
    # The alternative (weights recomputed with the hypothetical label) gives other numbers.
    unl = learner.unlabeled_indices[:8]
    prior = class_probabilities(learner.decision_values)
    alt = []
    for i in unl:
        total = 0.0
        for t, c in enumerate(learner.classes):
            labels = {**learner.labels, int(i): c}
            w = expected_class_weights(labels, learner.classes, "balanced")
            F, _ = direct_solve(K, labels, learner.classes, learner.lam, w)
            total += prior[i, t] / w[t] * estimated_risk(F, w)
        alt.append(total)
    assert not np.allclose(learner.expected_risk()[unl], alt, rtol=1e-3)


def fused_scores(posterior, MT, cand, lam_y, w):
    """The expected-risk criterion on its fused kernels, through the posterior's row blocks."""
    return ExpectedRisk().score(ScoringState(np.asarray(MT, dtype=float), lam_y, np.asarray(w, dtype=float)),
                                posterior, cand)


@pytest.mark.parametrize("T", [1, 3, 6])
@pytest.mark.parametrize("weights", ["equal", "distinct", "two_groups"])
@pytest.mark.parametrize("store", ["dense", "factor"])
def test_numba_kernel_matches_numpy_reference_on_adversarial_inputs(T, weights, store):
    """Random PSD C of large scale and outputs spread over [-3, 3] (many clipped values,
    exact zeros, exact +1, uniform rows): every branch of the fused kernels.

    Outputs sitting exactly on -1 in every column are avoided on purpose: there the
    normalised probability jumps between "uniform" and "all mass on one class", so a
    difference in the last bit (two correct summation orders) decides the value."""
    rng = np.random.default_rng(T)
    n = 157  # not a multiple of the lane count
    A = rng.standard_normal((n, 12))
    C = A @ A.T / 4.0
    n_classes = 2 if T == 1 else T
    MT = rng.uniform(-3.0, 3.0, size=(T, n))
    MT[:, ::7] = -1.0 + 1e-3
    MT[:, 3::11] = 1.0
    MT[:, 5::13] = -2.5  # all clipped to 0: uniform p
    MT[:, 9] = 0.0
    if weights == "equal":
        w = np.full(n_classes, 1.7)
    elif weights == "distinct":
        w = rng.uniform(0.3, 3.0, n_classes)
    else:
        w = np.where(np.arange(n_classes) % 2 == 0, 0.5, 2.0)
    lam_y = 0.2 / w
    posterior = DensePosterior.from_matrix(C) if store == "dense" else FactorPosterior(A / 2.0)
    cand = np.arange(n)
    fast = fused_scores(posterior, MT, cand, lam_y, w)
    slow = expected_risk_reference(C, MT.T, cand, lam_y, w)
    assert_allclose(fast, slow, rtol=1e-11, atol=1e-11)


@pytest.mark.parametrize("w", [[1.0, 1.0, 1.0], [1.0, 0.5, 2.0]], ids=["equal", "distinct"])
def test_numba_kernel_handles_cancellation_in_the_normaliser(w):
    """Point z where the hypothesised column carried all probability mass and drops to 0:
    the O(1) running-sum update would cancel; the kernel must recompute exactly."""
    n, T = 40, 3
    C = np.eye(n) * 0.5
    C[0, 1] = C[1, 0] = -0.49  # hypothesis y = 0 pushes column 0 of point 1 below -1
    MT = np.full((T, n), -1.0)
    MT[0, 1] = 0.9  # point 1: column 0 holds nearly all the mass
    MT[1, 1] = -1.0 + 1e-15  # ... and a sliver in column 1
    MT[0, 0] = -0.99
    w = np.asarray(w)
    cand = np.array([0])
    fast = fused_scores(DensePosterior.from_matrix(C), MT, cand, 0.01 / w, w)
    slow = expected_risk_reference(C, MT.T, cand, 0.01 / w, w)
    assert_allclose(fast, slow, rtol=1e-12)


def test_estimated_risk_binary_matches_the_seed_formula():
    rng = np.random.default_rng(11)
    f = rng.uniform(-2, 2, 50)
    f[:5] = 0.0
    w = np.array([0.7, 3.0])  # w_{-1}, w_{+1}
    expected = 0.0
    for fz in f:  # eq. 3.49 written out: sum_z sum_l p(l|z)/w_l [l != sign f(z)]
        p_pos = min(max((fz + 1) / 2, 0.0), 1.0)
        sign = 1 if fz > 0 else -1  # sign(0) = -1
        for l, p, wl in ((-1, 1 - p_pos, w[0]), (1, p_pos, w[1])):
            expected += p / wl * (l != sign)
    assert estimated_risk(f, w) == pytest.approx(expected, rel=1e-13)
    assert estimated_risk(f[:, None], w) == pytest.approx(expected, rel=1e-13)


def test_estimated_risk_multiclass_matches_the_formula():
    rng = np.random.default_rng(12)
    F = rng.uniform(-2, 2, (40, 4))
    F[0] = -3.0  # all clipped: uniform, argmax tie -> class 0
    F[1] = [0.5, 0.5, -1, -1]  # tie -> class 0
    w = np.array([1.0, 0.5, 2.0, 4.0])
    expected = 0.0
    for row in F:
        q = np.clip((row + 1) / 2, 0, 1)
        p = q / q.sum() if q.sum() > 0 else np.full(4, 0.25)
        t_star = int(np.argmax(row))
        expected += sum(p[t] / w[t] for t in range(4) if t != t_star)
    assert estimated_risk(F, w) == pytest.approx(expected, rel=1e-13)
    r = pointwise_risk(F, w)
    assert r[0] == pytest.approx((1 / 0.5 + 1 / 2 + 1 / 4) / 4)


def test_learner_estimated_risk_is_the_formula_on_its_outputs():
    learner, K = labelled_learner([0, 1, 2], "balanced", n=40, n_labels=10)
    w = expected_class_weights(learner.labels, learner.classes, "balanced")
    m, _ = direct_solve(K, learner.labels, learner.classes, learner.lam, w)
    assert learner.estimated_risk() == pytest.approx(estimated_risk(m, w), rel=1e-10)
    empty = ActiveRLS.from_kernel(K, classes=["a", "b"], weighting={"b": 4.0})
    assert empty.estimated_risk() == pytest.approx(40 * 0.5 / 4.0)  # f = 0 predicts "a"


def test_target_codes_and_probabilities():
    assert_allclose(target_codes(1, 2), [[-1], [1]])
    assert_allclose(target_codes(3, 3), 2 * np.eye(3) - 1)
    P = class_probabilities(np.array([[-3.0, -2.0, -1.5], [0.0, 0.0, 1.0]]))
    assert_allclose(P[0], 1 / 3)
    assert_allclose(P[1], [0.25, 0.25, 0.5])


def test_expected_risk_cache_is_invalidated_by_updates():
    learner, K = labelled_learner(["a", "b"], "none", n=30, n_labels=5)
    E1 = learner.expected_risk()
    i = int(learner.unlabeled_indices[0])
    learner.add(i, "a")
    E2 = learner.expected_risk()
    assert np.isinf(E2[i]) and not np.isinf(E1[i])
    learner.remove(i)
    assert_allclose(learner.expected_risk(), E1, rtol=1e-10)


def test_estimated_risk_is_the_sum_of_the_pointwise_terms():
    """The one-pass kernel of estimated_risk against pointwise_risk(F).sum() (the numpy
    reference), binary and one-vs-all, with ties, rows whose outputs are all <= -1 (uniform
    probabilities), outputs beyond +-1 (clipped), weights and none, a transposed view."""
    from core.criteria.risk import estimated_risk, pointwise_risk

    rng = np.random.default_rng(12)
    for T in (1, 2, 4):
        F = rng.standard_normal((3000, T)) * 1.5
        F[:40] = np.round(F[:40])
        F[40:60] = -1.0 - rng.random((20, T))  # every output <= -1
        n_classes = 2 if T == 1 else T
        for w in (None, rng.random(n_classes) + 0.2):
            assert_allclose(estimated_risk(F, w), pointwise_risk(F, w).sum(), rtol=1e-12)
            assert_allclose(estimated_risk(np.asfortranarray(F), w), pointwise_risk(F, w).sum(), rtol=1e-12)
    assert estimated_risk(np.zeros((0, 1))) == 0.0
    assert_allclose(estimated_risk(F[:, 0]), pointwise_risk(F[:, 0]).sum(), rtol=1e-12)
