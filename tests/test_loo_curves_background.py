"""The Progress tab's LOO curves off the key press's request (labeler/session/retune.py
``CurvesJob``, ``Settings.tuning``): in the app they are computed in a worker thread on a
snapshot of the labels, the page shows the last finished ones with their label count, and they
are the numbers the in-step computation gives on the same labels."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from labeler.session import LabelingSession, SessionConfig
from labeler.session.settings import CurvesPending


def _label(s, k):
    y = np.asarray(s.dataset.y)
    for _ in range(k):
        i = s.next_query()
        s.label(i, s.classes[list(s.dataset.classes).index(y[i])])


def _same(a: dict, b: dict):
    for key in ("lams", "errors", "widths", "width_errors"):
        assert_allclose(a[key], b[key], rtol=1e-12, atol=1e-15)
    assert a["lam"] == b["lam"] and a["chosen_width"] == b["chosen_width"]


@pytest.mark.parametrize("posterior", ["dense", "nystrom"])
def test_background_curves_are_the_in_step_ones_and_follow_the_labels(tmp_path, posterior):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 400},
                                                                     posterior=posterior, rank=60 if posterior == "nystrom"
                                                                     else None))
    _label(s, 8)
    s.retune_in_background(True)
    with pytest.raises(CurvesPending, match="of your 8 labels are being computed"):
        s.loo_curve()
    assert s.settings.wait_for_curves(60)
    ready = s.loo_curve()
    assert ready["n_labels"] == 8 and not ready["pending"]
    s.settings.background = False  # the same labels, computed in this request
    in_step = s.loo_curve()
    s.settings.background = True
    _same(ready, in_step)
    assert in_step["n_labels"] == 8 and not in_step["pending"]

    _label(s, 1)  # a new label: the last curves are shown, those of 9 labels are computed meanwhile
    s.settings.wait_for_retune(60)
    shown = s.loo_curve()
    if shown["pending"]:
        assert shown["n_labels"] == 8
        _same(shown, ready)
    assert s.settings.wait_for_curves(60)
    now = s.loo_curve()
    assert now["n_labels"] == 9 and not now["pending"]
    s.settings.background = False
    _same(now, s.loo_curve())
    s.close()


def _ready_curves(tmp_path):
    """A background session of 300 moons with 8 labels and its first curves ready; also checks
    that too few labels still say why (not "being computed")."""
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 300}))
    s.retune_in_background(True)
    with pytest.raises(ValueError) as info:
        s.loo_curve()
    assert not isinstance(info.value, CurvesPending)
    _label(s, 8)
    s.settings.wait_for_retune(60)
    with pytest.raises(CurvesPending):
        s.loo_curve()
    assert s.settings.wait_for_curves(60)
    return s, s.loo_curve()


def test_a_changed_lam_shows_the_old_curves_at_their_values_then_new_ones(tmp_path):
    s, before = _ready_curves(tmp_path)
    s.set_lam(before["current"] * 10)
    shown = s.loo_curve()  # the old curves, at the values they were computed at
    assert shown["pending"] and shown["n_labels"] == 8
    assert shown["current"] == before["current"] and shown["width"] == before["width"]
    assert s.settings.wait_for_curves(60)
    again = s.loo_curve()
    assert not again["pending"] and again["current"] == pytest.approx(before["current"] * 10)
    s.settings.background = False
    _same(again, s.loo_curve())
    s.close()


def test_turning_the_background_off_cancels_the_curves_job(tmp_path):
    s, before = _ready_curves(tmp_path)
    s.set_lam(before["current"] * 10)
    assert s.loo_curve()["pending"]
    s.retune_in_background(False)  # the library again: the job is cancelled, the curves computed here
    assert s.settings._curves_job is None
    now = s.loo_curve()
    assert not now["pending"] and now["current"] == pytest.approx(before["current"] * 10)
    s.close()
