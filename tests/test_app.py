"""The Streamlit app driven by streamlit.testing.v1.AppTest (no browser).

Each test starts the app on a small two-moons pool with its own SQLite store, clicks, reruns,
and checks the page and the session state.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from labeler.ui.registry import REGISTRY


def map_figure(at: AppTest) -> dict:
    """The pool map the page holds now, as plotly JSON: ``st.plotly_chart``'s figure, or the
    figure the in-place map component (labeler/ui/map_component.py) brought the page to."""
    from labeler.ui.map_component import SYNC_KEY

    charts = at.get("plotly_chart")
    if charts and any(t.get("name") == "pool" for t in json.loads(charts[0].proto.spec)["data"]):
        return json.loads(charts[0].proto.spec)
    return at.session_state[SYNC_KEY].state


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


def start(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    return at


def session_of(at):
    session, _ = REGISTRY.get(at.session_state["app_config"].store, at.session_state["session_id"])
    return session


def point_tag(at) -> tuple[int | None, int | None]:
    """(shown point, current query) from the panel's data attributes."""
    for md in at.markdown:
        m = re.search(r'class="point-tag" data-point="(\d*)" data-query="(\d*)"', md.value)
        if m:
            return tuple(int(g) if g else None for g in m.groups())
    raise AssertionError("no point tag on the page")


def labeled_count(at) -> int:
    for md in at.markdown:
        m = re.search(r'data-labeled="(\d+)"', md.value)
        if m:
            return int(m.group(1))
    raise AssertionError("no labelled count on the page")


def class_button(at, j: int):
    """The button of class ``j`` (its key names the shown point: ``class_<j>_<point>``)."""
    shown_point = point_tag(at)[0]
    return at.button(key=f"class_{j}_{shown_point}")


def step_button(at, name: str):
    return at.button(key=f"{name}_{point_tag(at)[0]}")


def undo_button(at):
    """The Undo button (its key names the action it undoes: ``undo_<action>``)."""
    return at.button(key=f"undo_{session_of(at).last_action}")


def accept_button(at):
    """The bin inspector's accept button (its key names the state: ``accept_bin_<version>``)."""
    return at.button(key=f"accept_bin_{session_of(at).n_events}")


def shown_text(markdown: str) -> str:
    """What Markdown shows of ``markdown``'s backslash escapes (messages quote file and class
    names, escaped by the app)."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown)


def errors(at) -> list[str]:
    return [shown_text(e.value) for e in at.error]


# --------------------------------------------------------------------------------------------
def test_starts_on_moons_with_one_button_per_class():
    at = start()
    s = session_of(at)
    assert len(s.dataset.X) == N
    keys = [b.key for b in at.button]
    shown, query = point_tag(at)
    for j in range(len(s.classes)):
        assert f"class_{j}_{shown}" in keys
    assert {f"skip_{shown}", "undo_0"} <= set(keys)
    assert shown == query == s.next_query()
    assert labeled_count(at) == 0
    assert at.query_params["session"] == [s.id] or at.query_params["session"] == s.id
    assert not errors(at)


def test_class_button_labels_the_shown_query():
    at = start()
    s = session_of(at)
    _, q0 = point_tag(at)
    class_button(at, 1).click().run()
    assert not at.exception
    assert s.predictions().loc[q0, "label"] == s.classes[1]
    assert s.history["source"].tolist() == ["queried"]
    assert labeled_count(at) == 1
    shown, q1 = point_tag(at)
    assert q1 == s.next_query() and q1 != q0 and shown == q1


def test_press_from_the_previous_points_button_is_refused_never_carried_over():
    # the browser sends "button of point q0 pressed" again (a double press, or a page that did
    # not show the new point yet): the label must not go to the new query, which the user may
    # not have seen
    at = start()
    s = session_of(at)
    old_button = class_button(at, 0)
    old_button.click().run()
    assert labeled_count(at) == 1
    q1 = point_tag(at)[1]
    for _ in range(2):
        old_button.click().run()  # the old page's widget state, as a lagging browser sends it
        assert not at.exception
        assert len(s.history) == 1 and s.next_query() == q1
        assert pd.isna(s.predictions().loc[q1, "label"])
        assert any("was not applied" in w.value for w in at.warning)
    class_button(at, 0).click().run()  # a press on the point shown labels it
    assert len(s.history) == 2 and s.predictions().loc[q1, "label"] == s.classes[0]


def test_ten_labels_then_undo_and_skip():
    at = start()
    s = session_of(at)
    order = []
    for k in range(10):
        _, q = point_tag(at)
        order.append(q)
        class_button(at, k % 2).click().run()
        assert not at.exception
    assert list(s.history["index"]) == order
    assert labeled_count(at) == 10
    undo_button(at).click().run()
    assert labeled_count(at) == 9
    assert list(s.history["index"]) == order[:9]
    assert pd.isna(s.predictions().loc[order[9], "label"])
    _, q = point_tag(at)
    step_button(at, "skip").click().run()
    _, q_after = point_tag(at)
    assert q_after != q and labeled_count(at) == 9


def test_scatter_click_selects_a_point_and_labels_it_out_of_turn():
    at = start()
    s = session_of(at)
    _, q = point_tag(at)
    k = next(i for i in range(N) if i != q)
    at.session_state["scatter"] = {"selection": {
        "points": [{"curve_number": 0, "point_index": k, "point_number": k, "x": 0.0, "y": 0.0}],
        "point_indices": [k], "box": [], "lasso": []}}
    at.run()
    assert not at.exception
    shown, query = point_tag(at)
    assert shown == k and query == q
    assert any("Chosen point" in md.value for md in at.markdown)
    assert "back" in [b.key for b in at.button]
    class_button(at, 0).click().run()
    assert not at.exception
    assert s.predictions().loc[k, "label"] == s.classes[0]
    assert s.history["source"].tolist() == ["chosen"]
    # the selection was used once: the panel is back on the (new) query
    shown, query = point_tag(at)
    assert shown == query == s.next_query()
    assert at.session_state["selected"] is None


def test_back_to_query_after_a_click():
    at = start()
    _, q = point_tag(at)
    k = (q + 1) % N
    at.session_state["scatter"] = {"selection": {"points": [{"curve_number": 0, "point_index": k}],
                                                 "point_indices": [k], "box": [], "lasso": []}}
    at.run()
    assert point_tag(at)[0] == k
    at.button(key="back").click().run()
    assert point_tag(at) == (q, q)


def test_switch_strategy_weighting_lam_width():
    at = start()
    s = session_of(at)
    for k in range(4):
        class_button(at, k % 2).click().run()
    at.radio(key=f"strategy_{s.id}").set_value("margin").run()
    assert not at.exception and s.config.strategy == "margin"
    assert point_tag(at)[1] == s.next_query()
    at.radio(key=f"strategy_{s.id}").set_value("random").run()
    assert s.config.strategy == "random"
    at.radio(key=f"weighting_{s.id}").set_value("none").run()
    assert s.config.weighting == "none"
    at.text_input(key=f"lam_{s.id}").input("0.5").run()
    assert not at.exception and float(s.config.lam) == 0.5
    at.text_input(key=f"width_{s.id}").input("0.7").run()
    assert not at.exception and float(s.config.width) == 0.7
    # bad value: an error, nothing changes
    at.text_input(key=f"lam_{s.id}").input("-3").run()
    assert not at.exception
    assert any("must be 'auto' or a" in e for e in errors(at))
    assert float(s.config.lam) == 0.5
    class_button(at, 0).click().run()
    assert not at.exception and labeled_count(at) == 5


def test_add_class_adds_a_button():
    at = start()
    s = session_of(at)
    n_before = len(s.classes)
    at.text_input(key="new_class_name").input("noise").run()
    at.button(key="add_class").click().run()
    assert not at.exception
    assert s.classes[-1] == "noise" and len(s.classes) == n_before + 1
    assert f"class_{n_before}_{point_tag(at)[0]}" in [b.key for b in at.button]
    class_button(at, n_before).click().run()
    assert s.class_counts()["noise"] == 1
    # a duplicate is refused with a message
    at.text_input(key="new_class_name").input("noise").run()
    at.button(key="add_class").click().run()
    assert not at.exception and errors(at)
    assert len(s.classes) == n_before + 1


@pytest.mark.parametrize("mode", ["predicted", "confidence", "expected_risk", "label"])
def test_colour_modes(mode):
    at = start()
    class_button(at, 0).click().run()
    class_button(at, 1).click().run()
    at.button_group(key="color_mode").set_value(mode).run()
    assert not at.exception


def _url_value(at, key):
    value = at.query_params.get(key)
    return value[0] if isinstance(value, list) else value


def test_colour_mode_is_kept_in_the_url_by_the_server():
    at = start()
    assert _url_value(at, "color_mode") is None  # the default leaves the URL clean
    at.button_group(key="color_mode").set_value("confidence").run()
    assert _url_value(at, "color_mode") == "confidence"
    at.button_group(key="color_mode").set_value("label").run()
    assert not at.exception and _url_value(at, "color_mode") is None


@pytest.mark.parametrize("given, mode", [("expected_risk", "expected_risk"),
                                         ("predicted class", "predicted"),  # older links: the label
                                         ("nonsense", "label")])
def test_colour_mode_starts_from_the_url(given, mode):
    at = start(color_mode=given)
    assert at.button_group(key="color_mode").value == mode
    assert _url_value(at, "color_mode") == (None if mode == "label" else mode)


@pytest.mark.parametrize("tab", ["Progress", "Confidence", "Export", "History", "Shortcuts"])
def test_lower_tabs_render(tab):
    at = start()
    for k in range(5):
        class_button(at, k % 2).click().run()
    at.session_state["lower_tab"] = tab
    at.run()
    assert not at.exception, at.exception
    assert not errors(at)


def test_bin_inspector_accepts_predictions_in_one_undo_step():
    at = start()
    s = session_of(at)
    for k in range(4):
        class_button(at, k % 2).click().run()
    at.session_state["lower_tab"] = "Confidence"
    conf = s.predictions()["confidence"].to_numpy()
    unlabeled = s.predictions()["label"].isna().to_numpy()
    b = int(np.clip(np.floor(np.median(conf[unlabeled]) * 10), 0, 9))
    at.session_state["inspect_bin"] = b
    at.run()
    assert not at.exception
    inside = s.points_in_bin(b / 10, (b + 1) / 10 if b < 9 else np.nextafter(1.0, 2.0))
    assert inside.size > 0
    predicted = s.predictions()["predicted"]
    accept_button(at).click().run()
    assert not at.exception
    assert labeled_count(at) == 4 + inside.size
    table = s.predictions()
    assert (table.loc[inside, "source"] == "accepted").all()
    assert (table.loc[inside, "label"] == predicted[inside]).all()
    undo_button(at).click().run()
    assert labeled_count(at) == 4


def test_bin_inspector_label_button_selects_the_point():
    at = start()
    s = session_of(at)
    for k in range(4):
        class_button(at, k % 2).click().run()
    at.session_state["lower_tab"] = "Confidence"
    at.run()
    b = at.session_state["inspect_bin"]
    inside = s.points_in_bin(b / 10, (b + 1) / 10 if b < 9 else np.nextafter(1.0, 2.0))
    if inside.size == 0:
        pytest.skip("empty bin")
    at.button(key="inspect_label").click().run()
    assert not at.exception
    assert point_tag(at)[0] == at.session_state["selected"]


def test_reload_resumes_the_same_session_and_labels():
    at = start()
    s = session_of(at)
    for k in range(3):
        class_button(at, k % 2).click().run()
    labels = dict(s.labels) if hasattr(s, "labels") else None
    sid = s.id
    REGISTRY.clear()  # a new server process: everything comes back from the store
    again = start(session=sid)
    assert again.session_state["session_id"] == sid
    assert labeled_count(again) == 3
    if labels is not None:
        assert session_of(again).labels == labels
    assert point_tag(again)[1] == session_of(again).next_query()
    # without the query parameter the latest session on the start-up data is resumed
    third = start()
    assert third.session_state["session_id"] == sid and labeled_count(third) == 3


def test_start_does_not_resume_a_session_made_with_other_data_options(monkeypatch):
    first = start()
    class_button(first, 0).click().run()
    monkeypatch.setenv("LABELER_DATA_OPTIONS", '{"n": 90}')
    other = start()
    assert other.session_state["session_id"] != first.session_state["session_id"]
    assert len(session_of(other).dataset.X) == 90 and labeled_count(other) == 0


def test_new_resume_delete_sessions():
    at = start()
    first = at.session_state["session_id"]
    class_button(at, 0).click().run()
    at.button(key="new_session").click().run()
    second = at.session_state["session_id"]
    assert second != first and labeled_count(at) == 0
    at.selectbox(key="pick_session").set_value(first).run()
    at.button(key="resume").click().run()
    assert at.session_state["session_id"] == first and labeled_count(at) == 1
    at.selectbox(key="pick_session").set_value(second).run()
    at.button(key="delete_session").click().run()
    assert not at.exception
    from labeler.session import LabelingSession

    ids = [info.id for info in LabelingSession.list_sessions(at.session_state["app_config"].store)]
    assert second not in ids and first in ids
    assert at.session_state["session_id"] == first


def test_open_builtin_from_the_picker():
    at = start()
    first = at.session_state["session_id"]
    at.selectbox(key="pick_builtin").set_value("moons-imbalanced").run()
    at.number_input(key="pick_n").set_value(150).run()
    at.button(key="open_builtin").click().run()
    assert not at.exception, at.exception
    s = session_of(at)
    assert s.id != first and len(s.dataset.X) == 150
    assert labeled_count(at) == 0


@pytest.mark.parametrize("name,content,match", [
    ("../outside.csv", None, "outside the data folder"),
    ("missing.csv", None, "does not exist"),
    ("words.csv", "a,b\nx,y\nz,w\n", "numeric"),
    ("holes.csv", "a,b\n1,2\n,4\n5,6\n", "NaN"),
    ("notes.txt", "hello", "unsupported type"),
    ("garbage.parquet", "this is not parquet", "parquet|read|file"),
    ("garbage.npz", "not a zip archive", "npz|read|file|zip"),
])
def test_bad_data_path_shows_error_and_changes_nothing(_env, name, content, match):
    data_dir = _env
    if content is not None:
        (data_dir / name).write_text(content)
    (data_dir.parent / "outside.csv").write_text("a\n1\n")
    at = start()
    sid = at.session_state["session_id"]
    at.text_input(key="pick_path").input(name).run()
    at.button(key="open_path").click().run()
    assert not at.exception
    assert any(re.search(match, e, re.IGNORECASE) for e in errors(at)), errors(at)
    assert at.session_state["session_id"] == sid


def test_csv_from_the_data_folder_opens(_env):
    rng = np.random.default_rng(0)
    pd.DataFrame(rng.normal(size=(60, 3)), columns=["u", "v", "w"]).to_csv(_env / "pool.csv", index=False)
    at = start()
    at.text_input(key="pick_path").input("pool.csv").run()
    at.button(key="open_path").click().run()
    assert not at.exception and not errors(at), errors(at)
    s = session_of(at)
    assert len(s.dataset.X) == 60
    class_button(at, 0).click().run()
    assert labeled_count(at) == 1
    # no image: the point's feature values are shown as a table
    assert len(at.dataframe) >= 1


def test_export_bytes_of_the_shown_session():
    from labeler.ui.export_panel import export_bytes

    at = start()
    order = []
    for k in range(3):
        order.append(point_tag(at)[1])
        class_button(at, k % 2).click().run()
    s, lock = REGISTRY.get(at.session_state["app_config"].store, at.session_state["session_id"])
    import io

    table = pd.read_csv(io.BytesIO(export_bytes(s, lock, "csv")))
    assert len(table) == 3 and list(table["label"].astype(str)) == [str(s.classes[k % 2]) for k in range(3)]
    table = pd.read_parquet(io.BytesIO(export_bytes(s, lock, "parquet")))
    assert len(table) == 3
    lines = export_bytes(s, lock, "jsonl").decode().strip().splitlines()
    assert len(lines) == 3


def test_image_folder_opens_shows_images_and_exports_a_zip(_env):
    import io
    import shutil
    import zipfile

    from labeler.ui.export_panel import export_bytes

    shutil.copytree(Path(__file__).resolve().parents[1] / "sample_data" / "shapes", _env / "shapes")
    at = start()
    at.text_input(key="pick_path").input("shapes").run()
    at.button(key="open_path").click().run()
    assert not at.exception and not errors(at), errors(at)
    s, lock = REGISTRY.get(at.session_state["app_config"].store, at.session_state["session_id"])
    assert len(s.dataset.X) == 40
    assert len(at.get("image")) >= 1  # the query's image, not a feature table
    class_button(at, 0).click().run()
    assert labeled_count(at) == 1
    with zipfile.ZipFile(io.BytesIO(export_bytes(s, lock, "zip"))) as z:
        names = z.namelist()
    pngs = [name for name in names if name.endswith(".png")]
    assert len(pngs) == 1 and pngs[0].startswith(f"{s.classes[0]}/")
    assert "labels.csv" in names


def test_missing_image_path_shows_error(_env):
    (_env / "pics.csv").write_text("file,size\nnope_a.png,1\nnope_b.png,2\nnope_c.png,3\n")
    at = start()
    sid = at.session_state["session_id"]
    at.text_input(key="pick_path").input("pics.csv").run()
    assert at.selectbox(key="pick_role_image").value == "file"  # guessed from the .png names
    at.button(key="open_path").click().run()
    assert not at.exception
    assert any("nope_a.png" in e or "image" in e.lower() for e in errors(at)), errors(at)
    assert at.session_state["session_id"] == sid


def test_huge_file_is_refused(_env, monkeypatch):
    monkeypatch.setenv("LABELER_MAX_FILE_MB", "0.0001")
    pd.DataFrame({"u": np.arange(100.0), "v": np.arange(100.0)}).to_csv(_env / "big.csv", index=False)
    at = start()
    sid = at.session_state["session_id"]
    at.text_input(key="pick_path").input("big.csv").run()
    at.button(key="open_path").click().run()
    assert not at.exception
    assert any("above the app's limit" in e for e in errors(at)), errors(at)
    assert at.session_state["session_id"] == sid


def test_second_undo_press_on_a_page_not_yet_redrawn_is_ignored():
    # U pressed twice quickly: the second press still names the action the old page showed
    at = start()
    s = session_of(at)
    for k in range(3):
        class_button(at, k % 2).click().run()
    order = list(s.history["index"])
    old_undo = undo_button(at)
    old_undo.click().run()
    assert not at.exception
    assert labeled_count(at) == 2
    old_undo.click().run()  # the old page's widget state, as a lagging browser sends it
    assert not at.exception
    assert labeled_count(at) == 2 and list(s.history["index"]) == order[:2]
    undo_button(at).click().run()  # a press on the redrawn page undoes the next one
    assert labeled_count(at) == 1


def test_accept_from_a_page_drawn_before_a_label_is_refused():
    at = start()
    s = session_of(at)
    for k in range(4):
        class_button(at, k % 2).click().run()
    at.session_state["lower_tab"] = "Confidence"
    conf = s.predictions()["confidence"].to_numpy()
    unlabeled = s.predictions()["label"].isna().to_numpy()
    at.session_state["inspect_bin"] = int(np.clip(np.floor(np.median(conf[unlabeled]) * 10), 0, 9))
    at.run()
    old_accept = accept_button(at)
    class_button(at, 0).click().run()  # the state changes before the accept press arrives
    assert labeled_count(at) == 5
    old_accept.click().run()
    assert not at.exception
    assert labeled_count(at) == 5 and "accepted" not in set(s.history["source"])


def test_open_builtin_with_pca_and_initial_labels():
    at = start()
    at.number_input(key="pick_n").set_value(150).run()
    at.number_input(key="pick_pca").set_value(1).run()
    at.number_input(key="pick_initial").set_value(6).run()
    at.button(key="open_builtin").click().run()
    assert not at.exception and not errors(at), errors(at)
    s = session_of(at)
    assert s.config.pca_components == 1 and s.X.shape == (150, 1)
    assert s.n_labeled == 6 and set(s.history["source"]) == {"initial"}
    assert labeled_count(at) == 6
    undo_button(at).click().run()  # the initial labels are one undo step
    assert not at.exception and session_of(at).n_labeled == 0


def test_open_path_with_initial_labels_and_bad_pca(_env):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(60, 3)), columns=["u", "v", "w"])
    frame["label"] = np.where(frame["u"] > 0, "up", "down")
    frame.to_csv(_env / "pool.csv", index=False)
    at = start()
    sid = at.session_state["session_id"]
    at.text_input(key="pick_path").input("pool.csv").run()
    at.number_input(key="pick_pca").set_value(4).run()  # more than the 3 columns
    at.button(key="open_path").click().run()
    assert not at.exception
    assert any("pca_components" in e for e in errors(at)), errors(at)
    assert at.session_state["session_id"] == sid
    at.number_input(key="pick_pca").set_value(2).run()
    at.number_input(key="pick_initial").set_value(5).run()
    at.button(key="open_path").click().run()
    assert not at.exception and not errors(at), errors(at)
    s = session_of(at)
    assert s.config.pca_components == 2 and s.n_labeled == 5
    assert set(s.labels.values()) == {"up", "down"}
    assert set(s.export_table()["source"]) == {"initial"}


def test_initial_labels_on_unlabelled_data_show_an_error(_env):
    rng = np.random.default_rng(1)
    pd.DataFrame(rng.normal(size=(40, 2)), columns=["a", "b"]).to_csv(_env / "plain.csv", index=False)
    at = start()
    sid = at.session_state["session_id"]
    at.text_input(key="pick_path").input("plain.csv").run()
    at.number_input(key="pick_initial").set_value(3).run()
    at.button(key="open_path").click().run()
    assert not at.exception
    assert any("true labels" in e for e in errors(at)), errors(at)
    assert at.session_state["session_id"] == sid


def test_a_session_with_class_weights_renders_and_can_switch_back():
    """weighting={class: weight} is no named weighting: the page shows the weights (it used to
    raise TypeError, unhashable dict, on every render)."""
    at = start()
    s = session_of(at)
    s.set_weighting({s.classes[0]: 2.0, s.classes[1]: 0.5})
    at.run()
    assert not at.exception, at.exception
    assert any("Custom: 0 2, 1 0.5" in c.value for c in at.caption)
    class_button(at, 0).click().run()
    assert not at.exception and labeled_count(at) == 1
    at.radio(key=f"weighting_{s.id}").set_value("none").run()
    assert not at.exception and s.config.weighting == "none"


def test_a_programming_error_is_not_shown_as_a_user_message(monkeypatch):
    """Only the errors meant for the user become messages; a bug raises."""
    at = start()
    s = session_of(at)

    def broken(*args, **kw):
        raise KeyError("bug")

    monkeypatch.setattr(type(s), "skip", broken)
    step_button(at, "skip").click().run()
    assert at.exception


# ---- hostile text from the data never becomes page elements ---------------------------------
HOSTILE = (
    '<div style="position:fixed;top:0;left:0;width:100%;height:100%;z-index:9999">owned</div>',
    '<img src=x onerror="window.__pwned=1">',
    "</script><script>window.__pwned=2</script>",
    "![t](http://127.0.0.1:9/t.png) [link](javascript:alert(1))",
)
#: the tags and attributes the app itself writes into its HTML
OWN_TAGS = {"span", "div", "b", "style"}
OWN_ATTRS = {"class", "style", "data-point", "data-query", "data-labeled"}


def _html_parts(text: str) -> tuple[list, list]:
    """(tags, attributes) of an HTML fragment, from the standard library's parser."""
    from html.parser import HTMLParser

    tags, attrs = [], []

    class Collect(HTMLParser):
        def handle_starttag(self, tag, a):
            tags.append(tag)
            attrs.extend(a)

    Collect().feed(text)
    return tags, attrs


def _markdown_marks(text: str) -> list[str]:
    """Unescaped Markdown/HTML marks in ``text``: an image, link or tag would render."""
    marks, k = [], 0
    while k < len(text):
        ch = text[k]
        if ch == "\\":
            k += 2
            continue
        if ch in "<>[]!":
            marks.append(text[max(0, k - 10):k + 10])
        k += 1
    return marks


def test_hostile_class_names_ids_and_file_name_are_shown_as_text(_env, monkeypatch):
    import json

    rng = np.random.default_rng(0)
    n = 30
    frame = pd.DataFrame(rng.normal(size=(n, 2)), columns=["u", "v"])
    frame["label"] = [HOSTILE[i % 3] for i in range(n)]
    frame["name"] = [f"{HOSTILE[(i + 1) % 4]}{i}" for i in range(n)]
    path = _env / "<img src=x onerror=alert(1)>.csv"
    frame.to_csv(path, index=False)
    monkeypatch.setenv("LABELER_DATA", str(path))
    monkeypatch.setenv("LABELER_DATA_OPTIONS", json.dumps({"id_col": "name"}))
    at = start()
    s = session_of(at)
    assert sorted(s.classes) == sorted(HOSTILE[:3])
    class_button(at, 0).click().run()
    labelled = next(iter(s.labels))
    at.text_input(key="new_class_name").input(HOSTILE[3]).run()
    at.button(key="add_class").click().run()
    at.session_state["scatter"] = {"selection": {  # the labelled point: "Already labelled ..."
        "points": [{"curve_number": 0, "point_index": labelled}], "point_indices": [labelled],
        "box": [], "lasso": []}}
    at.session_state["lower_tab"] = "Shortcuts"  # the class names in a Markdown table
    at.run()
    assert not at.exception
    assert HOSTILE[3] in s.classes
    assert any("Already labelled" in i.value for i in at.info)

    html_seen = markdown_seen = 0
    for md in [*at.markdown, *at.caption]:
        if md.proto.allow_html:
            tags, attrs = _html_parts(md.value)
            assert set(tags) <= OWN_TAGS, (tags, md.value)
            assert {a for a, _ in attrs} <= OWN_ATTRS, (attrs, md.value)
            assert not any("position" in (v or "") for a, v in attrs if a == "style"), md.value
            # Markdown is still read between the tags: no image or link may start there
            assert not _markdown_marks(re.sub(r"<[^>]*>", "", md.value)), md.value
            html_seen += "&lt;" in md.value
        else:
            assert not _markdown_marks(md.value), md.value
            markdown_seen += "\\<" in md.value
    for alert in [*at.info, *at.error, *at.warning, *at.success]:
        assert not _markdown_marks(alert.value), alert.value
    for button in at.button:
        assert not _markdown_marks(button.label), button.label
        assert not _markdown_marks(button.proto.help), button.proto.help
    assert html_seen and markdown_seen  # the hostile names did reach the page, escaped
    figures = [json.loads(chart.proto.spec) for chart in at.get("plotly_chart")] + [map_figure(at)]
    for spec in figures:
        for trace in spec["data"]:
            assert "<" not in str(trace.get("name", "")), trace.get("name")


def test_sidebar_downloads_the_session_as_one_store_file(tmp_path):
    from labeler.session import LabelingSession
    from labeler.ui.export_panel import session_file_bytes, session_file_name

    at = start()
    for k in range(3):
        class_button(at, k % 2).click().run()
    assert "download_session" in [b.key for b in at.get("download_button")]
    s, lock = REGISTRY.get(at.session_state["app_config"].store, at.session_state["session_id"])
    data = session_file_bytes(s, lock)
    assert data[:16] == b"SQLite format 3\x00" and session_file_name(s).endswith(".sqlite")
    (tmp_path / "copy.sqlite").write_bytes(data)
    assert [i.id for i in LabelingSession.list_sessions(tmp_path / "copy.sqlite")] == [s.id]
    with LabelingSession.open(tmp_path / "copy.sqlite", s.id) as t:
        assert t.labels == s.labels and t.next_query() == s.next_query()


# ---- column roles of a table, and its text ------------------------------------------------------
HOSTILE_TEXT = '<img src=x onerror="alert(1)"> **loud** [link](http://e.x) # heading'


def write_texts(path, n=60):
    topics = ["rain wind cold storm", "goal match team striker", "soup bread oven garlic"]
    rng = np.random.default_rng(0)
    rows = []
    for i in range(n):
        words = rng.choice(topics[i % 3].split(), size=4)
        rows.append({"id": 1000 + i, "text": " ".join(words) + f" note {i}", "stars": float(i % 5),
                     "label": ["weather", "football", "cooking"][i % 3]})
    rows[0]["text"] = HOSTILE_TEXT
    pd.DataFrame(rows).to_csv(path, index=False)


def test_the_picker_shows_the_guessed_roles_and_opens_with_the_changed_ones(_env):
    write_texts(_env / "notes.csv")
    at = start()
    at.text_input(key="pick_path").input("notes.csv").run()
    assert not at.exception
    assert at.selectbox(key="pick_role_id").value == "id"
    assert at.selectbox(key="pick_role_label").value == "label"
    assert at.selectbox(key="pick_role_text").value == "text"
    assert at.radio(key="pick_role_source").value == "columns"  # 'stars' is numeric
    assert at.multiselect(key="pick_role_features").value == ["stars"]
    assert any("Columns of notes.csv" in md.value for md in at.markdown)
    assert any("named like an id" in c.value for c in at.caption)
    at.radio(key="pick_role_source").set_value("text").run()
    at.button(key="open_path").click().run()
    assert not at.exception and not errors(at), errors(at)
    s = session_of(at)
    assert s.dataset.load_options["features_from"] == "text" and s.X.shape[0] == 60
    assert s.config.dataset_options["id_col"] == "id" and s.classes == ["cooking", "football", "weather"]
    assert 1000 not in s.X  # the numeric id is no feature
    # the shown point's text, escaped: the data never becomes markup
    point = point_tag(at)[0]
    panel = [md.value for md in at.markdown if 'class="point-text"' in md.value]
    assert len(panel) == 1 and f'data-point="{point}"' in panel[0]
    at.session_state["selected"] = 0
    at.run()
    panel = [md.value for md in at.markdown if 'class="point-text"' in md.value][0]
    assert "<img" not in panel and "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in panel
    assert "&#42;&#42;loud&#42;&#42;" in panel and "&#91;link&#93;" in panel  # marks as references


def test_a_role_choice_that_cannot_work_is_named_before_opening(_env):
    write_texts(_env / "notes.csv")
    at = start()
    sid = at.session_state["session_id"]
    at.text_input(key="pick_path").input("notes.csv").run()
    at.multiselect(key="pick_role_features").set_value(["stars", "id"]).run()
    assert any("'id' is the numeric id column" in shown_text(w.value) for w in at.warning)
    at.button(key="open_path").click().run()
    assert any("numeric id column" in e for e in errors(at)), errors(at)
    assert at.session_state["session_id"] == sid
    at.selectbox(key="pick_role_id").set_value("(none)").run()  # then it may be a feature
    assert not at.warning
    at.button(key="open_path").click().run()
    assert not errors(at), errors(at)
    assert session_of(at).dataset.feature_names == ["stars", "id"]


def test_harmonic_session_from_the_sidebar_labels_a_point():
    at = start()
    at.selectbox(key="pick_model").set_value("harmonic").run()
    at.number_input(key="pick_graph_k").set_value(8).run()
    at.button(key="open_builtin").click().run()
    assert not at.exception and not errors(at), errors(at)
    s = session_of(at)
    assert s.config.model == "harmonic" and s.config.knn == 8 and s.config.posterior == "graph"
    panel = " ".join(md.value for md in at.markdown)
    assert "Model: Harmonic function (kNN graph)" in panel and "Zhu et al." in panel
    assert "width" not in {t.key.split("_")[0] for t in at.text_input}  # no width / lam inputs
    _, q0 = point_tag(at)
    class_button(at, 1).click().run()
    assert not at.exception and not errors(at), errors(at)
    assert s.learner.labels == {q0: s.classes[1]}
    assert labeled_count(at) == 1


def test_poisson_session_from_the_model_box_labels_and_offers_the_variance_strategies():
    at = start()
    assert "Poisson learning (kNN graph)" in at.selectbox(key="pick_model").options
    at.selectbox(key="pick_model").set_value("poisson").run()
    at.button(key="open_builtin").click().run()
    assert not at.exception and not errors(at), errors(at)
    s = session_of(at)
    assert s.config.model == "poisson" and s.config.posterior == "graph"
    panel = " ".join(md.value for md in at.markdown)
    assert "Model: Poisson learning (kNN graph)" in panel
    radio = at.radio(key=f"strategy_{s.id}")
    assert "VOpt (graph variance)" in radio.options and "ARLS (expected risk)" not in radio.options
    assert radio.value == "auto" and "Auto (VOpt, then margin)" in radio.options
    header = next(md.value for md in at.markdown if 'class="counts"' in md.value)
    assert "Auto (VOpt, then margin)" in header  # the header names the strategy as the panel does
    _, q0 = point_tag(at)
    class_button(at, 0).click().run()
    assert not at.exception and not errors(at), errors(at)
    assert s.learner.labels == {q0: s.classes[0]}
    radio = at.radio(key=f"strategy_{s.id}")
    radio.set_value("sigmaopt").run()
    assert not at.exception and not errors(at), errors(at)
    assert s.config.strategy == "sigmaopt"


@pytest.mark.parametrize("tab", ["Progress", "Confidence", "Export"])
def test_lgc_session_from_labeler_model_renders_the_tabs_and_colours(monkeypatch, tab):
    monkeypatch.setenv("LABELER_MODEL", '{"model": "lgc", "alpha": 0.9}')  # labeler app --model lgc --alpha 0.9
    at = start()
    s = session_of(at)
    assert s.config.model == "lgc" and s.config.alpha == 0.9 and s.config.strategy == "auto"  # VOpt while cold, then margin
    assert at.selectbox(key="pick_model").value == "lgc"  # the form starts from --model
    for k in range(5):
        class_button(at, k % 2).click().run()
    assert s.n_labeled == 5
    # LGC has no expected-risk rule: the map does not offer the colouring (it would be blank)
    assert "expected risk" not in at.button_group(key="color_mode").options  # labels: "current label", ...
    at.button_group(key="color_mode").set_value("confidence").run()
    at.session_state["lower_tab"] = tab
    at.run()
    assert not at.exception, at.exception
    assert not errors(at), errors(at)


def test_a_link_to_the_risk_colouring_opens_an_lgc_session_coloured_by_label(monkeypatch):
    monkeypatch.setenv("LABELER_MODEL", '{"model": "lgc"}')
    at = start(color_mode="expected_risk")
    assert at.button_group(key="color_mode").value == "label"
    assert "expected risk" not in at.button_group(key="color_mode").options  # labels: "current label", ...
    assert not errors(at)


def test_the_standardise_box_reaches_the_new_session():
    at = start()
    assert at.selectbox(key="pick_standardize").value == "auto"
    at.selectbox(key="pick_builtin").set_value("moons").run()
    at.selectbox(key="pick_standardize").set_value("on").run()
    at.button(key="open_builtin").click().run()
    assert not at.exception, at.exception
    s = session_of(at)
    assert s.config.standardize is True and "standardize" not in s.auto_settings
    assert np.allclose(s.X.std(axis=0), 1.0)
