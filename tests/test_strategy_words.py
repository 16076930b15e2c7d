"""One description of the "auto" strategy: the header and the learner panel name what it runs
while cold as the session's model description does (core.strategies.cold_strategy of the
learner's capabilities), e.g. VOpt for a harmonic session above Zhu et al.'s size limit."""

from __future__ import annotations

import pytest

from core.strategies import cold_strategy
from labeler.session.graphs import GraphOutputs
from labeler.session.model import ZHU_SESSION_MAX, auto_note, learner_capabilities
from labeler.ui.sidebar import strategy_label


def test_a_large_harmonic_session_names_vopt_as_its_description_does():
    n = 2 * 10**4
    assert n > ZHU_SESSION_MAX
    assert strategy_label("auto", "harmonic", n) == "Auto (VOpt, then margin)"
    assert auto_note("harmonic", n).startswith("VOpt for the first 10 labels, then margin")


@pytest.mark.parametrize("model", ["rls", "harmonic", "lgc", "poisson"])
@pytest.mark.parametrize("n", [500, 2 * 10**4, GraphOutputs.variance_max_points + 1])
def test_the_auto_label_follows_the_cold_strategy(model, n):
    cold = cold_strategy(learner_capabilities(model, n))
    label = strategy_label("auto", model, n)
    words = {"arls": "expected risk, then margin", "vopt": "VOpt, then margin", "margin": "margin"}[cold]
    assert label == f"Auto ({words})"
    note = auto_note(model, n) if model != "rls" else ""
    assert note == "" if cold == "arls" else note.lower().startswith(cold.replace("vopt", "vopt for"))
    assert strategy_label("margin", model, n) == "Margin (uncertainty)"
