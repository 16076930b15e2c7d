"""The in-place map's figure state built without plotly (labeler/ui/map_delta.spec_state of
labeler/ui/figures.scatter_spec) equals plotly's own JSON of the same figure (the oracle:
``figure_state(go.Figure(spec))``, every property validated by plotly), for both maps, every
colour mode, and the pool's tooltips as compact arrays."""

from __future__ import annotations

import itertools

import numpy as np
import plotly.graph_objects as go
import pytest

from labeler.ui.figures import scatter_figure, scatter_spec
from labeler.ui.map_delta import HOVER_KEY, compact_pool_hover, expand_hover, figure_state, spec_state

MODES = ("label", "predicted", "confidence", "expected_risk")


def _case(n: int, k: int, seed: int, labelled: int = 12):
    rng = np.random.default_rng(seed)
    xy = rng.normal(size=(n, 2)).astype(np.float32)
    labels = np.full(n, -1)
    chosen = rng.choice(n, labelled, replace=False)
    labels[chosen] = rng.integers(0, k, labelled)
    pred = rng.integers(-1, k, n)
    conf = rng.random(n)
    conf[:3] = [0.0, 1.0, 0.125]  # the ends, and a tie of the two decimals' rounding
    risk = rng.random(n) * 3
    risk[labels >= 0] = np.inf
    return xy, labels, pred, conf, risk, chosen


def _kwargs(n, k, seed, mode, *, density, texts, query=True, selected=True, skipped=True,
            viewport=None, predictions=True):
    xy, labels, pred, conf, risk, chosen = _case(n, k, seed)
    classes = [f"class <{j}>" for j in range(k)]  # names that need escaping
    hover = None
    if texts:
        hover = np.array([f"text {i} &amp; more" for i in range(n)], dtype=object)
    return dict(layout=xy, classes=classes, color_mode=mode, label_codes=labels,
                predicted_codes=pred, confidence=conf, expected_risk=risk,
                query=int(np.flatnonzero(labels < 0)[0]) if query else None,
                selected=int(np.flatnonzero(labels < 0)[1]) if selected else None,
                skipped=[int(np.flatnonzero(labels < 0)[2]), int(chosen[0])] if skipped else (),
                view_key="session-1", hover_text=hover, hover_predictions=predictions,
                viewport=viewport, density=density)


CASES = [
    dict(n=n, k=k, seed=seed, mode=mode, density=density, texts=texts)
    for (n, k, seed), mode, density, texts in itertools.product(
        [(300, 2, 0), (500, 3, 1), (400, 8, 2)], MODES, [False, True], [False, True])
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_spec_state_equals_plotly_json(case):
    kwargs = _kwargs(**case)
    assert spec_state(scatter_spec(**kwargs)) == figure_state(go.Figure(scatter_spec(**kwargs)))
    # and scatter_figure is that figure
    assert figure_state(scatter_figure(**kwargs)) == figure_state(go.Figure(scatter_spec(**kwargs)))


@pytest.mark.parametrize("extra", [
    dict(query=False, selected=False, skipped=False),
    dict(predictions=False),
    dict(viewport=(-0.5, 0.5, -0.5, 0.5)),  # density map zoomed in: its points drawn
    dict(viewport=(-9.0, 9.0, -9.0, 9.0)),  # too many points in view: none drawn
])
@pytest.mark.parametrize("mode", MODES)
def test_spec_state_equals_plotly_json_edge_cases(extra, mode):
    for density in (False, True):
        kwargs = _kwargs(400, 3, 5, mode, density=density, texts=True, **extra)
        if "viewport" in extra:
            import os

            os.environ["LABELER_MAP_VIEWPORT_MAX"] = "60"
            try:
                spec = scatter_spec(**kwargs)
                oracle = figure_state(go.Figure(scatter_spec(**kwargs)))
            finally:
                del os.environ["LABELER_MAP_VIEWPORT_MAX"]
        else:
            spec, oracle = scatter_spec(**kwargs), figure_state(go.Figure(scatter_spec(**kwargs)))
        assert spec_state(spec) == oracle


@pytest.mark.parametrize("texts", [False, True])
@pytest.mark.parametrize("mode", MODES)
def test_compact_hover_equals_compacted_plotly_json(mode, texts):
    """``compact_hover=True`` gives what compacting plotly's JSON gave (the strings are never
    built), and the page's strings are the figure's."""
    kwargs = _kwargs(500, 3, 7, mode, density=False, texts=texts)
    state = spec_state(scatter_spec(**kwargs, compact_hover=True))
    plotly_state = figure_state(scatter_figure(**kwargs))
    assert state == compact_pool_hover(plotly_state, kwargs["classes"], kwargs["predicted_codes"],
                                       kwargs["confidence"])
    assert expand_hover(state["data"][0][HOVER_KEY]) == plotly_state["data"][0]["text"]


def test_compact_hover_keeps_strings_for_confidences_out_of_range():
    kwargs = _kwargs(300, 2, 3, "label", density=False, texts=False)
    kwargs["confidence"] = kwargs["confidence"] * 4.0  # not in [0, 1]: the strings are sent
    state = spec_state(scatter_spec(**kwargs, compact_hover=True))
    assert HOVER_KEY not in state["data"][0]
    assert state == figure_state(scatter_figure(**kwargs))


def test_compact_hover_not_on_the_density_map():
    kwargs = _kwargs(400, 2, 4, "predicted", density=True, texts=False)
    assert spec_state(scatter_spec(**kwargs, compact_hover=True)) == figure_state(scatter_figure(**kwargs))
