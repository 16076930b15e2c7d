"""The in-place map's delta (labeler/ui/map_delta.py): applying the delta of two figure states
to the first gives the second (the oracle: the new state itself), on random nested states and
on the app's real maps before and after labels (every point drawn, and the density map); the
exchange sends the whole figure exactly when the page cannot apply a delta."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from labeler.ui.figures import scatter_figure
from labeler.ui.map_delta import (HOVER_KEY, MapSync, apply_delta, compact_pool_hover, expand_hover,
                                  figure_delta, figure_state, message_size, next_message)


def _random_tree(rng, depth=0):
    out = {}
    for k in rng.choice(list("abcdef"), size=rng.integers(0, 5), replace=False):
        r = rng.random()
        if r < 0.3 and depth < 3:
            out[str(k)] = _random_tree(rng, depth + 1)
        elif r < 0.45:
            out[str(k)] = {"dtype": "u1", "bdata": str(rng.integers(0, 3))}
        elif r < 0.6:
            out[str(k)] = [int(v) for v in rng.integers(0, 3, size=rng.integers(0, 3))]
        else:
            out[str(k)] = int(rng.integers(0, 3))
    return out


def _random_state(rng):
    return {"data": [_random_tree(rng) for _ in range(rng.integers(0, 5))], "layout": _random_tree(rng)}


def test_delta_applied_to_the_old_state_is_the_new_state_on_random_states():
    rng = np.random.default_rng(0)
    for _ in range(500):
        old, new = _random_state(rng), _random_state(rng)
        kept = copy.deepcopy(old)
        delta = json.loads(json.dumps(figure_delta(old, new)))  # as the page receives it
        assert apply_delta(old, delta) == new
        assert old == kept  # copy on write: the old state is untouched
        assert apply_delta(old, figure_delta(old, old)) == old


def _moons(n, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 2)).astype(np.float32)


def _map(xy, labels, query, mode="label", density=None, skipped=()):
    n = len(xy)
    rng = np.random.default_rng(int((labels >= 0).sum()))
    pred = rng.integers(0, 2, size=n)
    conf = rng.random(n)
    return scatter_figure(xy, ["a", "b"], color_mode=mode, label_codes=labels, predicted_codes=pred,
                          confidence=conf, expected_risk=rng.random(n), query=query, skipped=list(skipped),
                          view_key="s1", hover_predictions=True, density=density)


@pytest.mark.parametrize("density", [False, True])
@pytest.mark.parametrize("mode", ["label", "predicted", "confidence"])
def test_delta_of_real_maps_before_and_after_labels(density, mode):
    xy = _moons(3000)
    labels = -np.ones(3000, dtype=int)
    old = figure_state(_map(xy, labels, 5, mode, density))
    for step, (point, query) in enumerate([(5, 17), (17, 40), (40, 99)]):
        labels[point] = step % 2
        new = figure_state(_map(xy, labels, query, mode, density, skipped=[3] if step == 2 else ()))
        delta = json.loads(json.dumps(figure_delta(old, new)))
        assert apply_delta(old, delta) == new
        full, small = message_size({"figure": new}), message_size({"delta": delta})
        assert small < full  # the coordinates, template and axes are not sent again
        if mode == "label" and not density:
            paths = {tuple(p[:3]) for p, _ in delta["set"]}
            assert ("data", 0, "x") not in paths and ("data", 0, "y") not in paths
        old = new


def test_exchange_sends_the_whole_figure_only_when_needed():
    a = {"data": [{"x": 1}], "layout": {"h": 1}}
    b = {"data": [{"x": 2}], "layout": {"h": 1}}
    c = {"data": [{"x": 3}, {"y": 1}], "layout": {"h": 2}}
    sync = MapSync()
    m1 = next_message(sync, "k", a)
    assert m1["full"] and m1["figure"] == a and (m1["rev"], m1["from"]) == (1, 1)
    m2 = next_message(sync, "k", b)
    assert not m2["full"] and (m2["rev"], m2["from"]) == (2, 1) and apply_delta(a, m2["delta"]) == b
    m3 = next_message(sync, "k", c)  # from the whole figure: a page that missed m2 draws it
    assert not m3["full"] and (m3["rev"], m3["from"]) == (3, 1) and apply_delta(a, m3["delta"]) == c
    ask = {"base": "k", "rev": 3, "seq": 1}  # the page lost its copy (remount, new tab)
    m4 = next_message(sync, "k", b, need_full=ask)
    assert m4["full"] and m4["figure"] == b and (m4["rev"], m4["from"]) == (4, 4)
    m5 = next_message(sync, "k", a, need_full=ask)  # the same request is answered once
    assert not m5["full"] and m5["from"] == 4 and apply_delta(b, m5["delta"]) == a
    assert sync.state == a
    m6 = next_message(sync, "other", a)  # another map (session, layout, colour mode)
    assert m6["full"]


def test_compact_hover_gives_back_the_tooltips_of_the_figure():
    rng = np.random.default_rng(3)
    n = 2000
    xy = _moons(n)
    labels = -np.ones(n, dtype=int)
    labels[:5] = 1
    pred = rng.integers(-1, 3, size=n)
    conf = np.concatenate([rng.random(n - 6), [0.125, 0.005, 0.995, 0.0, 1.0, 0.00499999]])
    texts = np.array([f"text {i}<br>line" if i % 3 else "" for i in range(n)], dtype=object)
    for hover_text in (None, texts):
        fig = scatter_figure(xy, ["a", "b&lt;", "c"], label_codes=labels, predicted_codes=pred,
                             confidence=conf, query=0, hover_text=hover_text, hover_predictions=True,
                             density=False)
        state = figure_state(fig)
        names = ["a", "b&lt;", "c"]
        small = compact_pool_hover(state, names, pred, conf)
        assert "text" not in small["data"][0] and "text" in state["data"][0]
        assert expand_hover(small["data"][0][HOVER_KEY]) == state["data"][0]["text"]
        assert message_size(small) < message_size(state)
    dense = figure_state(scatter_figure(xy, ["a", "b"], label_codes=labels, predicted_codes=pred,
                                        confidence=conf, query=0, hover_predictions=True, density=True))
    assert compact_pool_hover(dense, ["a", "b"], pred, conf) is dense  # a few points drawn: as is
