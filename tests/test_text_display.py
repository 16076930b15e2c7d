"""A point's text in the map's tooltips and the point panel's table: short, escaped, safe."""

from __future__ import annotations

import numpy as np
import pandas as pd

from labeler.ui.figures import HOVER_TEXT_CHARS, hover_texts, scatter_figure
from labeler.ui.view import feature_table
from ui_stubs import StubDataset


def test_hover_texts_are_escaped_shortened_and_broken_into_lines():
    texts = ["<b>bold</b> & <script>alert(1)</script>", "word " * 60, "", "one\nline\tbreaks"]
    out = hover_texts(texts)
    assert out[0] == "&lt;b&gt;bold&lt;/b&gt; &amp; &lt;script&gt;alert(1)&lt;/script&gt;"
    assert "<b>" not in out[0] and "<script>" not in out[0]
    long = out[1].replace("<br>", " ")
    assert long.endswith("…") and len(long) <= HOVER_TEXT_CHARS + 1
    assert all(len(part) <= 45 for part in out[1].split("<br>"))
    assert out[2] == "" and out[3] == "one line breaks"
    assert hover_texts(None) is None


def test_the_map_shows_each_points_text_in_its_tooltip():
    rng = np.random.default_rng(0)
    n = 12
    texts = hover_texts([f"text <{i}>" for i in range(n)])
    codes = np.full(n, -1)
    codes[[2, 5]] = [0, 1]
    fig = scatter_figure(rng.normal(size=(n, 2)), ["a", "b"], label_codes=codes, hover_text=texts,
                         confidence=np.full(n, 0.5))
    pool, labelled = fig.data[0], fig.data[1]
    assert list(pool.text) == [f"text &lt;{i}&gt;" for i in range(n)]
    assert "%{text}" in pool.hovertemplate and "%{text}" in labelled.hovertemplate
    assert list(labelled.text) == ["text &lt;2&gt;", "text &lt;5&gt;"]
    fig = scatter_figure(rng.normal(size=(n, 2)), ["a", "b"], label_codes=codes, hover_text=texts,
                         color_mode="confidence", confidence=np.full(n, 0.5))
    assert "%{text}" in fig.data[0].hovertemplate
    plain = scatter_figure(rng.normal(size=(n, 2)), ["a", "b"], label_codes=codes)
    assert plain.data[0].text is None and "%{text}" not in plain.data[0].hovertemplate


def test_the_point_table_can_leave_the_text_column_out():
    data = StubDataset(frame=pd.DataFrame({"id": [7, 8], "text": ["long text", "more"], "label": ["a", "b"]}))
    table = feature_table(data, 1, skip=("text",))
    assert table["feature"].tolist() == ["id", "label"] and table["value"].tolist() == ["8", "b"]


def test_the_maps_tooltip_texts_are_computed_once_per_data_set(monkeypatch):
    import labeler.ui.figures as figures
    from labeler.ui.view import map_hover_texts

    calls = []
    real = figures.hover_texts
    monkeypatch.setattr(figures, "hover_texts", lambda t: calls.append(1) or real(t))
    data = StubDataset(texts=np.array(["a <b>", "c"], dtype=object))
    first = map_hover_texts(data)
    assert list(first) == ["a &lt;b&gt;", "c"] and map_hover_texts(data) is first and calls == [1]
    assert map_hover_texts(StubDataset(texts=None)) is None


def test_a_data_set_without_texts_or_own_ids_is_looked_at_once(monkeypatch):
    """"No tooltip texts" is kept too: finding it compares every id with its index (an O(n)
    pass that every label paid between the next query and the map at 10^5 points)."""
    import labeler.ui.view as view

    calls = []
    real = view.own_ids
    monkeypatch.setattr(view, "own_ids", lambda d: calls.append(1) or real(d))
    data = StubDataset(texts=None)
    data.ids, data.y = np.arange(50), None
    assert view.map_hover_texts(data) is None and view.map_hover_texts(data) is None and calls == [1]
    data.ids = np.array([f"T{i}" for i in range(50)], dtype=object)  # other ids: looked at again
    assert list(view.map_hover_texts(data)[:2]) == ["id T0", "id T1"] and calls == [1, 1]
