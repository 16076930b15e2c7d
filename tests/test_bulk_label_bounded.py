"""A box selection of thousands of points on a factor (Nystrom) session: the request runs only
bounded LOO work (docs/algorithms.md §17). Counted through the shapes the LOO sees, never timed."""

from __future__ import annotations

import numpy as np

from labeler.session import LabelingSession, SessionConfig
from loo_spy import count_loo_shapes


def test_bulk_label_on_a_nystrom_session_runs_only_factor_loo(tmp_path, monkeypatch):
    seen = count_loo_shapes(monkeypatch)
    cfg = SessionConfig(dataset="moons", dataset_options={"n": 3000}, seed=1, posterior="nystrom", rank=40)
    s = LabelingSession.create(tmp_path / "s.sqlite", cfg)
    y = np.asarray(s.dataset.y).astype(str)
    for c in np.unique(y):
        for i in np.flatnonzero(y == c)[:3]:
            s.label_points([int(i)], str(c))
    first = str(np.unique(y)[0])
    box = [int(i) for i in np.flatnonzero(y == first)[3:1503]]
    seen.clear()
    assert s.label_points(box, first) == len(box)
    assert s.learner.n_labeled == len(box) + 6
    # no m x m kernel at any label count: every LOO ran on the rank-40 factor
    assert seen, "the bulk label was due a re-tune"
    assert all(kind == "features" and shape[1] <= 40 for kind, shape in seen), seen
    # the page's tuning view is bounded the same way
    seen.clear()
    s.settings.tuning()
    assert all(kind == "features" and shape[1] <= 40 for kind, shape in seen), seen
