"""The shapes the LOO sees: how the bounded-LOO tests count its work, never by timing."""

import numpy as np

import core.rls.tuning as tuning


def count_loo_shapes(monkeypatch):
    """Spy on ``core.rls.tuning.loo_path`` (the real one still runs).

    Returns
    -------
    list of (str, tuple)
        Filled as the tuner calls the LOO: ``("features", Phi.shape)`` for a factor LOO,
        ``("K", K.shape)`` for a dense one, in call order.
    """
    seen = []
    real = tuning.loo_path

    def spy(K, Y, *args, features=None, **kw):
        seen.append(("features", features.shape) if features is not None else ("K", np.shape(K)))
        return real(K, Y, *args, features=features, **kw)

    monkeypatch.setattr(tuning, "loo_path", spy)
    return seen
