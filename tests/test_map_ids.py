"""Map tooltips name a point by the data's own id (T00005), as the point panel does, not only
by its pool index; data without ids of their own keep "point 5" alone."""

from __future__ import annotations

import numpy as np
import pandas as pd

from labeler.data import load_dataset
from labeler.ui.figures import scatter_figure
from labeler.ui.map_delta import HOVER_KEY, compact_pool_hover, expand_hover, figure_state
from labeler.ui.view import map_hover_texts


def _pool(tmp_path, with_ids=True):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"f1": rng.normal(size=30), "f2": rng.normal(size=30), "label": ["a", "b"] * 15})
    if with_ids:
        frame.insert(0, "id", [f"T{i:05d}" for i in range(30)])
    frame.to_csv(tmp_path / "pool.csv", index=False)
    return load_dataset(str(tmp_path / "pool.csv"))


def test_every_tooltip_of_a_point_names_its_own_id(tmp_path):
    ds = _pool(tmp_path)
    hover = map_hover_texts(ds)
    assert hover is not None and hover[5] == "id T00005"
    codes = np.full(30, -1)
    codes[[3, 7]] = [0, 1]
    predicted, confidence = np.arange(30) % 2, np.full(30, 0.75)
    fig = scatter_figure(np.asarray(ds.X[:, :2]), ["a", "b"], label_codes=codes, predicted_codes=predicted,
                         confidence=confidence, query=5, selected=9, skipped=[11], hover_text=hover,
                         hover_predictions=True)
    pool, labelled, query, selected = fig.data[:4]
    assert "%{text}" in pool.hovertemplate and pool.text[5].endswith("<br>id T00005")
    assert "id T00007" in labelled.text[1] and "%{text}" in labelled.hovertemplate
    assert list(query.text) == ["id T00005"] and "%{text}" in query.hovertemplate
    assert list(selected.text) == ["id T00009"]
    skipped = fig.data[-1]
    assert skipped.name.startswith("skipped") and list(skipped.text) == ["id T00011"]
    # the in-place map's compact tooltips rebuild the same strings, ids included
    state = figure_state(fig)
    compact = compact_pool_hover(state, ["a", "b"], predicted, confidence)
    assert expand_hover(compact["data"][0][HOVER_KEY]) == list(pool.text)


def test_data_without_ids_of_their_own_keep_the_pool_index(tmp_path):
    ds = _pool(tmp_path, with_ids=False)
    assert map_hover_texts(ds) is None


def test_ids_that_are_the_pool_indices_are_read_once_per_data_set(tmp_path, monkeypatch):
    """None (the ids are the pool indices) is kept like any answer: the 10^6 ids are not read
    as strings on every render."""
    import labeler.ui.view as view

    ds = _pool(tmp_path, with_ids=False)
    calls = []
    real = view.own_ids
    monkeypatch.setattr(view, "own_ids", lambda d: calls.append(1) or real(d))
    assert map_hover_texts(ds) is None and map_hover_texts(ds) is None and calls == [1]
    with_ids = _pool(tmp_path, with_ids=True)
    first = map_hover_texts(with_ids)
    assert map_hover_texts(with_ids) is first and calls == [1, 1]


def test_integer_ids_are_read_as_the_strings_would_read_them():
    """The integer fast path of own_ids (no strings when the ids are 0..n-1) answers what the
    strings' comparison answers, for ids equal to the indices, shifted, permuted, unsigned."""
    from types import SimpleNamespace

    from labeler.ui.view import own_ids

    def by_strings(ids):
        texts = np.asarray(ids).astype(str)
        return None if np.array_equal(texts, np.arange(texts.shape[0]).astype(str)) else texts.astype(object)

    rng = np.random.default_rng(3)
    cases = [np.arange(50), np.arange(50, dtype=np.uint32), np.arange(1, 51), rng.permutation(50),
             np.arange(50, dtype=np.int16), np.arange(50).astype(str), np.array([], dtype=np.int64)]
    for ids in cases:
        got = own_ids(SimpleNamespace(ids=ids, y=None))
        want = by_strings(ids)
        assert (got is None) == (want is None), ids
        if want is not None:
            assert got.dtype == object and list(got) == list(want)
