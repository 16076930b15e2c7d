"""The quick seed 003 reproduction: the section's shape, and learning never worsens the LOO loss."""

from __future__ import annotations

import numpy as np
import pytest

from labeler.experiments.graph_repro import seed003


@pytest.fixture(scope="module")
def quick():
    return seed003.experiment(quick=True)


def test_section_shape(quick):
    text = seed003.render(quick, "python -m labeler.experiments.graph_repro.seed003 --quick")
    assert text.startswith("## Seed 003")
    assert "Command: `python -m labeler.experiments.graph_repro.seed003 --quick`" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert rows[0].startswith("| method | seed 003 says | ours Thrd | ours CMN |")
    assert [r.split(" | ")[0][2:] for r in rows[1:]] == list(seed003.METHODS)
    assert "60 min" in text and "Where we differ" in text
    assert "Where the run contradicts the seed:" in text and "§5.4.1 point 2" in text
    most = max(max(quick.evals[name]) for name in (seed003.METHODS[1], seed003.METHODS[2], seed003.METHODS[4]))
    if most > quick.max_evals:  # the cap is checked between iterations: the page must state the departure
        assert f"runs here took up to {most}" in text and "a departure" in text
        assert f"at most {quick.max_evals} objective" not in text
    else:
        assert f"at most {quick.max_evals} objective evaluations" in text
    for name in seed003.METHODS:
        acc = np.asarray(quick.acc[name])
        assert acc.shape == (quick.repeats, 2) and np.all((acc[:, 0] >= 0) & (acc[:, 0] <= 1))
        assert np.all((acc[:, 1] >= 0) & (acc[:, 1] <= 1)) or (name.startswith("RLS") and np.isnan(acc[:, 1]).all())


def test_learned_widths_beat_or_equal_fixed_on_the_loo_loss(quick):
    fixed, learned = np.asarray(quick.loo_fixed), np.asarray(quick.loo_learned)
    assert fixed.shape == learned.shape == (quick.repeats,)
    assert np.all(learned <= fixed + 1e-12)
    assert learned.mean() < fixed.mean()  # and it does move
    rls = np.asarray(quick.rls_loo)  # the cheap version: the RLS LOO squared error, start -> learned
    assert rls.shape == (quick.repeats, 2) and np.all(rls[:, 1] <= rls[:, 0] + 1e-12)


def test_preprocessing_follows_the_seed():
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, size=(12, 6)).astype(float)
    raw[:, 2] = 7.0  # constant: dropped
    raw[:, 4] = 0.0
    raw[:2, 4] = 255.0  # non-zero in 2 < 3 images: dropped
    X = seed003.seed_preprocess(raw)
    assert X.shape == (12, 4)
    raw2 = np.vstack([raw, np.zeros(6)])  # an image with no bright pixel stays zero, not NaN
    X2 = seed003.seed_preprocess(raw2)
    assert np.all(X2[-1] == 0)
    norms = np.linalg.norm(X, axis=1)
    np.testing.assert_allclose(norms[norms > 0], 1.0)
    assert np.all((X == 0) | (X >= 0.5 / np.sqrt(4) - 1e-12))
