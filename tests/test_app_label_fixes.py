"""The app's controls to fix labels and manage classes, driven by streamlit.testing.v1.AppTest:
"Change to" / "Unlabel" on a labelled point, "Not sure (skip for good)" / "Un-skip", the
sidebar's "Classes" expander (rename, move, unlabel all, delete), and stale presses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from labeler.session import LabelingSession
from test_app import _markdown_marks, map_figure
from labeler.ui.registry import REGISTRY

APP = str(Path(__file__).resolve().parents[1] / "labeler" / "app.py")
N = 120


@pytest.fixture(autouse=True)
def _env(tmp_path, monkeypatch):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    monkeypatch.setenv("LABELER_STORE", str(tmp_path / "store.sqlite"))
    monkeypatch.setenv("LABELER_DATA", "moons")
    monkeypatch.setenv("LABELER_DATA_OPTIONS", f'{{"n": {N}}}')
    monkeypatch.setenv("LABELER_DATA_DIR", str(data_dir))
    monkeypatch.delenv("LABELER_SESSION", raising=False)
    REGISTRY.clear()
    yield data_dir
    REGISTRY.clear()


def start() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception, at.exception
    return at


def session_of(at):
    session, _ = REGISTRY.get(at.session_state["app_config"].store, at.session_state["session_id"])
    return session


def point_tag(at):
    for md in at.markdown:
        m = re.search(r'class="point-tag" data-point="(\d*)" data-query="(\d*)"', md.value)
        if m:
            return tuple(int(g) if g else None for g in m.groups())
    raise AssertionError("no point tag on the page")


def label_queries(at, k):
    done = []
    for j in range(k):
        shown = point_tag(at)[0]
        at.button(key=f"class_{j % 2}_{shown}").click().run()
        done.append(shown)
    return done


def select(at, index):
    at.session_state["scatter"] = {"selection": {
        "points": [{"curve_number": 0, "point_index": index}], "point_indices": [index],
        "box": [], "lasso": []}}
    at.run()
    assert not at.exception
    assert point_tag(at)[0] == index


def shown_text(markdown: str) -> str:
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def messages(at, kind):
    return [shown_text(e.value) for e in getattr(at, kind)]


def keys(at):
    return [b.key for b in at.button]


def test_a_labelled_point_offers_change_to_and_unlabel_and_undo_reverts(_env):
    at = start()
    s = session_of(at)
    pts = label_queries(at, 6)
    old = pts[1]
    was = s.labels[old]
    select(at, old)
    assert any("Already labelled" in i.value for i in at.info)
    j_other = next(j for j, c in enumerate(s.classes) if c != was)
    j_own = s.classes.index(was)
    assert f"relabel_{j_other}_{old}" in keys(at) and f"relabel_{j_own}_{old}" not in keys(at)
    assert f"unlabel_{old}" in keys(at) and not any(k.startswith("class_") for k in keys(at))
    change = at.button(key=f"relabel_{j_other}_{old}")
    assert change.label == f"Change to {s.classes[j_other]}"
    n = s.n_events
    change.click().run()
    assert not at.exception
    assert s.labels[old] == s.classes[j_other] and s.n_events == n + 1
    assert any("is now labelled" in m for m in messages(at, "success"))
    assert point_tag(at)[0] == point_tag(at)[1]  # back on the query
    at.button(key=f"undo_{s.last_action}").click().run()
    assert s.labels[old] == was
    select(at, old)
    at.button(key=f"unlabel_{old}").click().run()
    assert old not in s.labels and any("is unlabelled" in m for m in messages(at, "success"))


def test_a_press_after_another_tab_changed_the_point_is_refused_and_explained(_env):
    at = start()
    s = session_of(at)
    pts = label_queries(at, 4)
    old = pts[0]
    was = s.labels[old]
    select(at, old)
    j_other = next(j for j, c in enumerate(s.classes) if c != was)
    other_tab = LabelingSession.open(s.store_path, s.id)
    assert other_tab.unlabel(old)  # another tab acts first
    n = other_tab.n_events
    at.button(key=f"relabel_{j_other}_{old}").click().run()
    assert not at.exception
    assert old not in s.labels and s.n_events == n  # nothing written
    assert any("not labelled any more" in w and "not applied" in w for w in messages(at, "warning"))
    other_tab.close()


def test_not_sure_skips_a_clicked_point_for_good_and_unskip_reverts(_env):
    at = start()
    s = session_of(at)
    _, q = point_tag(at)
    k = next(i for i in range(N) if i != q)
    select(at, k)
    skip = at.button(key=f"skip_{k}")
    assert skip.label == "Not sure (skip for good)"
    skip.click().run()
    assert s.skipped == [k] and point_tag(at) == (q, q)
    chart = map_figure(at)
    marked = [t for t in chart["data"] if t.get("name") == "skipped (not sure)"]
    assert len(marked) == 1  # the map marks it
    select(at, k)
    assert any("Skipped (not sure)" in w for w in messages(at, "warning"))
    assert f"skip_{k}" not in keys(at) and f"class_0_{k}" in keys(at)
    at.button(key=f"unskip_{k}").click().run()
    assert s.skipped == [] and point_tag(at)[0] == k  # stays on it, to label it
    assert not [t for t in map_figure(at)["data"]
                if t.get("name") == "skipped (not sure)"]


HOSTILE_NAME = '<img src=x onerror=alert(1)> ![t](http://127.0.0.1:9/t.png)'


def test_classes_expander_renames_moves_unlabels_and_deletes(_env):
    at = start()
    s = session_of(at)
    label_queries(at, 6)
    a, b = s.classes
    at.selectbox(key=f"manage_class_{s.id}").set_value(a).run()
    at.text_input(key=f"rename_to_{s.id}").input(HOSTILE_NAME).run()
    at.button(key="rename_class").click().run()
    assert not at.exception
    assert s.classes == [HOSTILE_NAME, b]
    with LabelingSession.open(s.store_path, s.id) as stored:  # in the store, not only in memory
        assert stored.classes == [HOSTILE_NAME, b] and stored.labels == s.labels
    assert at.selectbox(key=f"manage_class_{s.id}").value == HOSTILE_NAME
    # shown as typed, as text: button labels and captions escape the Markdown marks
    assert any(shown_text(x.label) == HOSTILE_NAME for x in at.button)
    assert any(HOSTILE_NAME in shown_text(c.value) for c in at.caption)
    for x in at.button:
        assert not _markdown_marks(x.label), x.label
    for x in [*at.caption, *at.markdown, *at.success]:
        html = getattr(x.proto, "allow_html", False)
        text = re.sub(r"<[^>]*>", "", x.value) if html else x.value
        assert not _markdown_marks(text), x.value
        assert "<img" not in x.value.replace("\\<img", ""), x.value
    # a new class, labels for it, then the ways to empty it, then delete
    at.text_input(key="new_class_name").input("noise").run()
    at.button(key="add_class").click().run()
    shown = point_tag(at)[0]
    at.button(key=f"class_2_{shown}").click().run()
    assert s.class_counts()["noise"] == 1
    at.selectbox(key=f"manage_class_{s.id}").set_value("noise").run()
    assert "delete_class" not in keys(at)
    assert any("has 1 labelled point" in shown_text(c.value) for c in at.caption)
    at.selectbox(key=f"move_to_{s.id}").set_value(b).run()
    at.button(key="move_class").click().run()
    assert s.class_counts()["noise"] == 0 and s.labels[shown] == b
    at.button(key=f"undo_{s.last_action}").click().run()
    assert s.labels[shown] == "noise"
    at.button(key="unlabel_class").click().run()
    assert shown not in s.labels
    at.button(key="delete_class").click().run()
    assert s.classes == [HOSTILE_NAME, b]
    assert any("Deleted class" in m for m in messages(at, "success"))
    at.button(key=f"undo_{s.last_action}").click().run()
    assert s.classes == [HOSTILE_NAME, b, "noise"]
    # a reload shows it all (a new page on the same store and session)
    at2 = AppTest.from_file(APP, default_timeout=120)
    at2.query_params["session"] = s.id
    at2.run()
    assert not at2.exception
    t = session_of(at2)
    assert t.classes == s.classes and t.labels == s.labels


def test_deleting_a_class_with_labels_is_refused_with_the_ways_out(_env):
    at = start()
    s = session_of(at)
    label_queries(at, 2)
    s.add_class("c")
    label = next(i for i in range(N) if i not in s.labels)
    s.label(label, "c", source="chosen")
    with pytest.raises(ValueError, match="still has 1 labelled point"):
        s.delete_class("c")
    at.run()
    at.selectbox(key=f"manage_class_{s.id}").set_value(s.classes[0]).run()
    assert "delete_class" not in keys(at)  # it has labels: move or unlabel first
