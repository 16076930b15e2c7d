"""The fused add + reweight step (core.learner.updates.add_reweight_step) against its two steps.

Under "balanced" weights a new label changes the weight of every class, so the learner adds
the point and reweights the other labels in one update of C. It must equal the add step
followed by the block reweight (the slow obvious form) and a direct solve.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from core.kernels import Kernel
from core.learner import ActiveRLS
from core.learner import arls as arls_mod
from core.learner.updates import add_reweight_step, add_step, reweight_step


def balanced_learner(posterior, T, n=70, n_labels=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(-3, 3, (n, 2))
    if posterior == "dense":
        learner = ActiveRLS.from_features(X, classes=list(range(T)), kernel=Kernel("rbf", width=1.0), lam=0.1,
                                          weighting="balanced")
    else:
        centres = rng.uniform(-3, 3, (40, 2))
        Phi = np.exp(-((X[:, None, :] - centres[None]) ** 2).sum(-1))
        learner = ActiveRLS.from_factor(Phi, classes=list(range(T)), lam=0.1, weighting="balanced")
    idx = rng.choice(n, size=n_labels, replace=False)
    learner.add_many([int(i) for i in idx], [t % T for t in range(n_labels)])
    return learner, rng


@pytest.mark.parametrize("posterior", ["dense", "factor"])
@pytest.mark.parametrize("T", [2, 4])
def test_fused_step_equals_add_then_reweight(posterior, T):
    learner, rng = balanced_learner(posterior, T)
    i = int(learner.unlabeled_indices[3])
    y = 1
    codes = learner._codes()
    lam_old = learner.point_lambdas
    counts = learner._book.counts.copy()
    counts[y] += 1
    w_new = arls_mod.class_weight_vector("balanced", learner.classes, counts)
    S = np.array(list(learner.labels), dtype=np.int64)
    lam_new = learner.lam / w_new[learner._book.codes[S]]
    lam_i = learner.lam / w_new[y]
    assert np.all(lam_new != lam_old[S])  # every other label is reweighted

    fused_post, fused_m = copy.deepcopy(learner.posterior), learner._mT.copy()
    amps = add_reweight_step(fused_post, fused_m, i, codes[y], lam_i, S, codes[learner._book.codes[S]], lam_old[S],
                             lam_new, learner._scale)
    seq_post, seq_m = copy.deepcopy(learner.posterior), learner._mT.copy()
    amp_add = add_step(seq_post, seq_m, i, codes[y], lam_i, learner._scale)
    amp_rw = reweight_step(seq_post, seq_m, S, codes[learner._book.codes[S]], lam_old[S], lam_new, learner._scale)

    C_f, C_s = fused_post.to_array(), seq_post.to_array()
    scale = np.abs(C_s).max()
    assert np.abs(C_f - C_s).max() <= 1e-12 * scale
    assert np.abs(fused_m - seq_m).max() <= 1e-12 * max(1.0, np.abs(seq_m).max())
    assert amps[0] == pytest.approx(amp_add, rel=1e-12)
    assert amps[1] == pytest.approx(amp_rw, rel=1e-6)

    # and the learner's own add (which takes the fused step) equals a direct solve
    learner.add(i, y)
    C_l, m_l = learner.posterior_covariance(), learner.decision_values
    learner.rebuild()
    assert np.abs(C_l - learner.posterior_covariance()).max() <= 1e-10 * scale
    assert np.abs(m_l - learner.decision_values).max() <= 1e-10


def test_learner_add_uses_one_update_of_C_under_balanced(monkeypatch):
    learner, _ = balanced_learner("dense", 3)
    calls = []
    post = learner.posterior
    real = post.update

    def spy(idx, M):
        calls.append(len(np.atleast_1d(idx)))
        return real(idx, M)

    monkeypatch.setattr(post, "update", spy)
    n_labels = learner.n_labeled
    learner.add(int(learner.unlabeled_indices[0]), 2)
    assert calls == [n_labels + 1]
