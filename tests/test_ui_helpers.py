"""Plain helpers of the app: keyboard keys, input checks, start-up config, view, serve."""

from __future__ import annotations

import os
import types

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs
from streamlit.elements.lib.shortcut_utils import normalize_shortcut

from labeler.data import FILE_SUFFIXES, load_dataset
from labeler.serve import APP_SCRIPT, streamlit_argv
from labeler.ui.config import AppConfig
from labeler.ui.inputs import DATA_SUFFIXES, check_data_path, parse_positive_or_auto
from labeler.ui.keyboard import BACK_KEY, RESERVED, SKIP_KEY, UNDO_KEY, class_shortcuts
from labeler.ui.registry import SessionRegistry
from labeler.ui.view import build_view, class_codes, feature_table, point_image, upscale
from ui_stubs import StubDataset, StubSession


# ---- keyboard --------------------------------------------------------------------------------
def test_digit_classes_use_their_own_key():
    assert class_shortcuts([str(d) for d in range(10)]) == [str(d) for d in range(10)]


def test_named_classes_get_positional_keys():
    assert class_shortcuts(["negative", "positive"]) == ["1", "2"]
    assert class_shortcuts(["cat", "1"]) == ["1", "2"]  # "1" is taken: next free key


def test_reserved_letters_never_given():
    keys = class_shortcuts(["c", "r", "s", "u", "x"])
    assert not set(keys) & RESERVED
    assert keys[-1] == "x"


def test_every_key_is_accepted_by_streamlit():
    for key in [*class_shortcuts([f"class {j}" for j in range(40)]), SKIP_KEY, UNDO_KEY, BACK_KEY]:
        if key is not None:
            normalize_shortcut(key)  # raises on keys Streamlit 1.67 refuses


@settings(max_examples=200, deadline=None)
@given(hs.lists(hs.text(min_size=1, max_size=3), min_size=1, max_size=40, unique=True),
       hs.text(min_size=1, max_size=3))
def test_keys_distinct_and_stable_when_a_class_is_added(classes, new):
    keys = class_shortcuts(classes)
    used = [k for k in keys if k is not None]
    assert len(used) == len(set(used))
    assert not set(used) & RESERVED
    if new not in classes:
        assert class_shortcuts(classes + [new])[:-1] == keys


# ---- inputs ----------------------------------------------------------------------------------
@pytest.fixture
def data_dir(tmp_path):
    root = tmp_path / "data"
    root.mkdir()
    (root / "pool.csv").write_text("a,b\n1,2\n3,4\n")
    (root / "empty.csv").write_text("")
    (root / "notes.txt").write_text("hello")
    (root / "images").mkdir()
    (tmp_path / "outside.csv").write_text("a\n1\n")
    return root


def test_relative_and_absolute_paths_inside(data_dir):
    assert check_data_path("pool.csv", data_dir, 10) == (data_dir / "pool.csv").resolve()
    assert check_data_path(str(data_dir / "pool.csv"), data_dir, 10) == (data_dir / "pool.csv").resolve()
    assert check_data_path("images", data_dir, 10) == (data_dir / "images").resolve()


@pytest.mark.parametrize("text,match", [
    ("", "No path given"),
    ("   ", "No path given"),
    ("../outside.csv", "outside the data folder"),
    ("/etc/passwd", "outside the data folder"),
    ("missing.csv", "does not exist"),
    ("notes.txt", "unsupported type"),
    ("empty.csv", "empty"),
])
def test_bad_paths(data_dir, text, match):
    with pytest.raises(ValueError, match=match):
        check_data_path(text, data_dir, 10)


def test_symlink_escaping_the_data_folder_is_refused(data_dir):
    link = data_dir / "link.csv"
    os.symlink(data_dir.parent / "outside.csv", link)
    with pytest.raises(ValueError, match="outside the data folder"):
        check_data_path("link.csv", data_dir, 10)


def test_huge_file_is_refused(data_dir):
    big = data_dir / "big.csv"
    with open(big, "wb") as fh:
        fh.truncate(3_000_000)  # sparse file of 3 MB
    with pytest.raises(ValueError, match="above the app's limit of 2 MB"):
        check_data_path("big.csv", data_dir, 2)
    assert check_data_path("big.csv", data_dir, 4) == big.resolve()


def _write_table(path, frame):
    """``frame`` saved in the format its suffix names (CSV, Parquet, NPZ)."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        frame.to_csv(path, index=False)
    elif suffix == ".npz":
        np.savez(path, X=frame[["a", "b"]].to_numpy(), y=frame["label"].to_numpy())
    else:
        frame.to_parquet(path, engine="pyarrow")


@pytest.mark.parametrize("suffix", sorted(DATA_SUFFIXES))
def test_every_file_type_the_picker_accepts_is_one_the_loader_reads(tmp_path, suffix):
    # One list (labeler.data) serves both: a picked .pq file used to be refused by the loader.
    assert DATA_SUFFIXES is FILE_SUFFIXES
    frame = pd.DataFrame({"a": [0.0, 1.0, 2.0, 3.0], "b": [1.0, 0.5, 0.0, 2.0], "label": [0, 1, 0, 1]})
    path = tmp_path / f"pool{suffix}"
    _write_table(path, frame)
    assert check_data_path(path.name, tmp_path, 10) == path.resolve()
    data = load_dataset(path)
    assert data.X.shape == (4, 2) and data.classes == [0, 1]


@pytest.mark.parametrize("text,want", [("auto", "auto"), ("", "auto"), (" AUTO ", "auto"),
                                       ("0.5", 0.5), ("2", 2.0), ("1e-3", 1e-3)])
def test_parse_positive_or_auto(text, want):
    assert parse_positive_or_auto(text, "lam") == want


@pytest.mark.parametrize("text", ["0", "-1", "nan", "inf", "abc"])
def test_parse_positive_or_auto_refuses(text):
    with pytest.raises(ValueError, match="lam must be 'auto' or a"):
        parse_positive_or_auto(text, "lam")


# ---- config ----------------------------------------------------------------------------------
def test_config_from_env(tmp_path):
    env = {"LABELER_DATA": "digits", "LABELER_DATA_OPTIONS": '{"n": 300}',
           "LABELER_STORE": str(tmp_path / "s.sqlite"), "LABELER_SESSION": "abc",
           "LABELER_DATA_DIR": str(tmp_path), "LABELER_MAX_FILE_MB": "5"}
    cfg = AppConfig.from_env(env)
    assert cfg.data == "digits" and cfg.data_options == {"n": 300}
    assert cfg.store == tmp_path / "s.sqlite" and cfg.session == "abc"
    assert cfg.data_dir == tmp_path and cfg.max_file_mb == 5.0


def test_config_defaults(monkeypatch, tmp_path):
    monkeypatch.delenv("LABELER_STORE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    cfg = AppConfig.from_env({})
    assert cfg.data == "moons" and cfg.data_options == {} and cfg.session is None
    assert cfg.store == tmp_path / ".labeler" / "labeler.sqlite"


@pytest.mark.parametrize("env,match", [
    ({"LABELER_DATA_OPTIONS": "{n: 3"}, "not valid JSON"),
    ({"LABELER_DATA_OPTIONS": "[1]"}, "JSON object"),
    ({"LABELER_MAX_FILE_MB": "big"}, "number of megabytes"),
    ({"LABELER_MAX_FILE_MB": "-1"}, "> 0"),
])
def test_config_bad_env(env, match):
    with pytest.raises(ValueError, match=match):
        AppConfig.from_env(env)


# ---- view helpers ----------------------------------------------------------------------------
def test_class_codes_against_loop():
    classes = ["a", "b", "c"]
    values = np.array(["b", None, "c", "a", "zz", None], dtype=object)
    want = [classes.index(v) if v in classes else -1 for v in values]
    np.testing.assert_array_equal(class_codes(values, classes), want)
    assert class_codes(values, classes).dtype == np.int32


def _class_codes_by_map(values, classes):
    """The obvious version (what class_codes did before it factorised): Series.map(dict)."""
    code_of = {c: j for j, c in enumerate(classes)}
    code_of.update({str(c): j for j, c in enumerate(classes)})
    return pd.Series(values, dtype=object).map(code_of).fillna(-1).to_numpy(dtype=np.int32)


@pytest.mark.parametrize("classes", [["a", "b", "c"], [0, 1, 2], ["0", 1, "x"], [True, "b"]])
def test_class_codes_against_series_map(classes):
    rng = np.random.default_rng(3)
    pool = [*classes, *map(str, classes), None, np.nan, "zz", 7, np.int64(1), 1.0, ""]
    values = np.empty(500, dtype=object)
    values[:] = [pool[k] for k in rng.integers(len(pool), size=500)]
    got = class_codes(values, classes)
    np.testing.assert_array_equal(got, _class_codes_by_map(values, classes))
    assert got.dtype == np.int32 and got.shape == (500,)
    assert class_codes(np.array([], dtype=object), classes).shape == (0,)
    assert class_codes(np.full(4, None, dtype=object), classes).tolist() == [-1] * 4


def test_class_codes_int_classes_and_string_values():
    np.testing.assert_array_equal(class_codes(np.array([0, 1, None], dtype=object), [0, 1]), [0, 1, -1])
    np.testing.assert_array_equal(class_codes(np.array(["1", "0"], dtype=object), [0, 1]), [1, 0])


def test_upscale_is_nearest_neighbour():
    img = np.arange(6, dtype=np.uint8).reshape(2, 3)
    big = upscale(img, target=9)
    assert big.shape == (6, 9)
    for r in range(6):
        for c in range(9):
            assert big[r, c] == img[r // 3, c // 3]
    assert upscale(np.zeros((500, 400)), 280).shape == (500, 400)


def test_point_image_from_array_paths_and_none(tmp_path):
    from PIL import Image

    ds = StubDataset(images=np.linspace(0, 1, 2 * 4 * 4).reshape(2, 4, 4), image_paths=None)
    img = point_image(ds, 1)
    assert img.dtype == np.uint8 and img.shape == (4, 4) and img.max() == 255
    Image.fromarray(np.full((5, 6, 3), 7, np.uint8)).save(tmp_path / "a.png")
    ds = StubDataset(images=None, image_paths=[str(tmp_path / "a.png"), str(tmp_path / "gone.png")])
    assert point_image(ds, 0).shape == (5, 6, 3)
    with pytest.raises(ValueError, match="cannot be read"):
        point_image(ds, 1)
    assert point_image(StubDataset(images=None, image_paths=None), 0) is None


@pytest.mark.parametrize("pixels,message", [
    (np.array([[-1.2, 0.3], [0.8, 2.1]]), "pixel values must be integers 0-255"),  # standardised pixels
    (np.array([[12.5, 40.0], [0.0, 255.0]]), "pixel values must be integers 0-255"),  # fractional
    (np.array([[0, 300], [10, 20]]), "pixel values must be integers 0-255"),  # over 255
    (np.array([[0.2, np.nan], [0.1, 0.4]]), "NaN or infinity"),
])
def test_point_image_refuses_pixels_the_loaders_refuse_instead_of_clipping(pixels, message):
    # np.clip(image * scale, 0, 255) showed these as a saturated or black image without a word
    from labeler.data import DatasetError

    ds = StubDataset(images=pixels[None], image_paths=None)
    with pytest.raises(DatasetError, match=message) as info:
        point_image(ds, 0)
    assert "the image of point 0" in str(info.value)


def test_point_image_converts_pixels_as_the_loaders_do():
    from labeler.data.images import to_uint8

    unit = np.array([[0.5, 0.2], [1.0, 0.0]])
    assert point_image(StubDataset(images=unit[None], image_paths=None), 0).tolist() == \
        to_uint8(unit, "x").tolist() == [[128, 51], [255, 0]]  # rounded (clipping truncated 127.5 to 127)
    whole = np.array([[3.0, 200.0]])
    assert point_image(StubDataset(images=whole[None], image_paths=None), 0).tolist() == [[3, 200]]


def test_the_ui_stubs_stand_for_real_attributes(tmp_path):
    """Every attribute of the typed UI stubs exists on the object it stands in for."""
    import dataclasses

    from labeler.data import Dataset
    from labeler.session import LabelingSession, SessionConfig

    assert {f.name for f in dataclasses.fields(StubDataset)} <= {f.name for f in dataclasses.fields(Dataset)}
    real = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 40}))
    try:
        stub = StubSession("s", 3)
        for name in [*vars(stub), "close"]:
            assert hasattr(real, name), name
        assert real.n_samples == 40 and real.closed is False
    finally:
        real.close()


def test_feature_table_prefers_original_frame():
    X = np.array([[1.23456789, 2.0], [3.0, 4.0]])
    ds = StubDataset(X=X, feature_names=["u", "v"], frame=None)
    t = feature_table(ds, 0)
    assert list(t["feature"]) == ["u", "v"] and list(t["value"]) == ["1.235", "2"]
    ds.frame = pd.DataFrame({"name": ["x", "y"], "u": [1.5, 3.0]})
    t = feature_table(ds, 1)
    assert list(t["feature"]) == ["name", "u"] and list(t["value"]) == ["y", "3"]


# ---- serve -----------------------------------------------------------------------------------
def test_streamlit_argv_binds_localhost_by_default():
    argv = streamlit_argv()
    assert argv[:2] == ["run", str(APP_SCRIPT)] and APP_SCRIPT.exists()
    assert argv[argv.index("--server.address") + 1] == "127.0.0.1"
    assert argv[argv.index("--server.port") + 1] == "8501"
    assert argv[argv.index("--browser.gatherUsageStats") + 1] == "false"
    argv = streamlit_argv(port=9000, host="0.0.0.0", extra_args=["--server.headless", "true"])
    assert argv[argv.index("--server.address") + 1] == "0.0.0.0"
    assert argv[-2:] == ["--server.headless", "true"]


@pytest.mark.parametrize("kw", [dict(port=0), dict(port=70000), dict(port="80"), dict(port=True),
                                dict(host=""), dict(host=None)])
def test_streamlit_argv_bad(kw):
    with pytest.raises(ValueError):
        streamlit_argv(**kw)


def test_run_app_refuses_missing_path(tmp_path):
    from labeler.serve import run_app

    with pytest.raises(ValueError, match="does not exist"):
        run_app(data=str(tmp_path / "nope.csv"))


# ---- registry --------------------------------------------------------------------------------
class _FakeSessionClass(StubSession):
    opened: list = []

    @classmethod
    def open(cls, store, sid, up_to_damage=False):
        cls.opened.append(sid)
        if sid == "missing":
            raise KeyError(sid)
        return cls(sid)

    @classmethod
    def create(cls, store, config):
        return cls(f"new-{config}")


def test_registry_lru_and_reuse(monkeypatch, tmp_path):
    import labeler.ui.registry as R

    monkeypatch.setattr(R, "_session_module", lambda: types.SimpleNamespace(LabelingSession=_FakeSessionClass))
    _FakeSessionClass.opened = []
    reg = SessionRegistry(max_open=2)
    s1, lock1 = reg.get(tmp_path, "a")
    assert reg.get(tmp_path, "a")[0] is s1 and reg.get(tmp_path, "a")[1] is lock1
    reg.get(tmp_path, "b")
    reg.get(tmp_path, "a")            # a most recent
    reg.get(tmp_path, "c")            # evicts b
    reg.get(tmp_path, "a")
    reg.get(tmp_path, "b")            # reopened
    assert _FakeSessionClass.opened == ["a", "b", "c", "b"]
    with pytest.raises(KeyError):
        reg.get(tmp_path, "missing")
    s, _ = reg.create(tmp_path, "cfg")
    assert reg.get(tmp_path, "new-cfg")[0] is s
    reg.forget(tmp_path, "new-cfg")
    with pytest.raises(KeyError):
        reg._open[reg._key(tmp_path, "new-cfg")]


def test_start_up_recognises_a_saved_file_session_from_a_relative_path(tmp_path, monkeypatch):
    """Sessions store absolute paths; `labeler app data.csv` must still find them."""
    from labeler.ui.state import _same_data

    (tmp_path / "data.csv").write_text("a,label\n1,0\n2,1\n")
    monkeypatch.chdir(tmp_path)
    saved = str((tmp_path / "data.csv").resolve())
    assert _same_data(saved, "data.csv")
    assert _same_data("moons", "moons")
    assert not _same_data(saved, "other.csv")
    assert not _same_data("moons", "moons-imbalanced")


@pytest.mark.parametrize("strategy", ["margin", "random"])
def test_build_view_reads_expected_risk_only_for_its_colour_mode(tmp_path, monkeypatch, strategy):
    from labeler.session import LabelingSession, SessionConfig

    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(
        dataset="moons", dataset_options={"n": 60}, strategy=strategy, seed=1))
    for i in range(4):
        s.label(i, str(s.dataset.y[i]), source="chosen")
    calls = []
    real = s.learner.expected_risk
    monkeypatch.setattr(s.learner, "expected_risk", lambda *a, **k: calls.append(1) or real(*a, **k))
    for mode in ("label", "predicted", "confidence"):
        view = build_view(s, color_mode=mode)
        assert view.expected_risk is None and "expected_risk" not in view.predictions
    assert calls == []
    view = build_view(s, color_mode="expected_risk")
    assert len(calls) == 1 and view.version == s.n_events == 4
    np.testing.assert_array_equal(view.expected_risk, real())
    legacy = build_view(s)  # caller that does not say: the column is there, as before
    np.testing.assert_array_equal(legacy.predictions["expected_risk"].to_numpy(), real())


def test_a_press_from_an_earlier_panel_is_refused_never_carried_over(monkeypatch):
    """A press names the panel whose button it clicked: from the panel on the page it is
    applied to that panel's point; from an earlier panel it is applied only when the panel on
    the page shows the same point (a rerun redrew it), else refused and said (never applied to
    the point drawn since, which the user may not have seen)."""
    from labeler.ui import actions

    calls, fake_state = [], {"panel_rev": 3, "panel_point": 5}
    monkeypatch.setattr(actions.st, "session_state", fake_state)
    monkeypatch.setattr(actions, "_applied_or_why", lambda do, i, q: calls.append((i, q)) or (True, None))
    monkeypatch.setattr(actions.state, "clear_selection", lambda: None)
    for rev in (2, 1):
        fake_state["flash"] = []
        actions.label(3, "a", "queried", 3, rev)
        assert calls == [] and [k for k, _ in fake_state["flash"]] == ["warning"]
        actions.skip(3, 3, rev)
        assert calls == []
    actions.label(5, "a", "queried", 5, 2)  # an earlier panel of the point on the page now
    assert calls == [(5, 5)] and fake_state["last_action"] == ("label", 5, "a")
    actions.skip(7, 7, 3)  # the panel on the page now
    assert calls[-1] == (7, 7)
    actions.label(8, "b", "chosen", None)  # no panel number: the session's checks alone
    assert calls[-1] == (8, None)


def test_the_twin_of_an_applied_key_press_says_nothing(monkeypatch):
    """The same button read twice for one point (a double click): one label, no warning; the
    same press long after goes to the session (which says why it does not apply)."""
    from labeler.ui import actions

    clock = [100.0]
    calls, fake_state = [], {"panel_rev": 2, "panel_point": 5}
    monkeypatch.setattr(actions.st, "session_state", fake_state)
    monkeypatch.setattr(actions.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(actions, "_applied_or_why", lambda do, i, q: calls.append(i) or (True, None))
    monkeypatch.setattr(actions.state, "clear_selection", lambda: None)
    actions.label(5, "a", "queried", 5, 2)  # applied
    clock[0] += 0.01
    actions.label(5, "a", "queried", 5, 2)  # its twin: silent
    assert calls == [5] and not fake_state.get("flash")
    clock[0] += actions.TWIN_SECONDS + 1
    actions.label(5, "a", "queried", 5, 2)  # a real repeated press, long after: to the session
    assert calls == [5, 5]


# ---- text from the data made safe for the page ------------------------------------------------
def _commonmark_unescape(text: str) -> str:
    """What CommonMark shows for backslash escapes: the punctuation character itself."""
    import re

    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", text)


@settings(max_examples=300, deadline=None)
@given(hs.text(alphabet=hs.sampled_from(list("ab1 .-+#>()[]!<>*_`~|$&\\\n:=")), max_size=30))
def test_md_text_shows_the_text_as_written_and_escapes_every_mark(text):
    from labeler.ui.text import md_text

    out = md_text(text)
    assert "\n" not in out
    assert _commonmark_unescape(out) == " ".join(text.splitlines())
    # every mark that starts Markdown or HTML syntax is escaped
    k = 0
    while k < len(out):
        if out[k] == "\\":
            k += 2
            continue
        assert out[k] not in "<>[]!*_`~|$&", (text, out)
        k += 1
    stripped = out.lstrip()
    assert not stripped[:1] in ("#", "-", "+", ">", "="), out
    assert not __import__("re").match(r"\d+[.)]", stripped), out


def test_html_and_plot_text_escape_tags():
    from labeler.ui.text import html_text, plot_text

    assert html_text('<img src="x" onerror=\'y\'>') == "&lt;img src=&quot;x&quot; onerror=&#x27;y&#x27;&gt;"
    assert plot_text("<b>a</b> & c") == "&lt;b&gt;a&lt;/b&gt; &amp; c"
    assert html_text(3) == "3"
    # Streamlit reads Markdown between the tags too: an image there would render
    assert html_text("![t](http://e/t.png)") == "&#33;&#91;t&#93;(http://e/t.png)"
    assert html_text("a\n# b") == "a # b"
    # references, not backslashes: inside a <div> block Markdown is not read and a backslash shows
    assert html_text("feature_request") == "feature&#95;request"


@settings(max_examples=300, deadline=None)
@given(hs.text(alphabet=hs.sampled_from(list("ab1 .-+#>()[]!<>*_`~|$&\\\n:=\"'")), max_size=30))
def test_html_text_reads_as_written_in_html_and_leaves_no_mark_nor_backslash(text):
    import html
    import re

    from labeler.ui.text import html_text

    out = html_text(text)
    assert "\n" not in out
    assert html.unescape(out) == " ".join(text.splitlines())  # what the browser shows in a <div>
    plain = re.sub(r"&(#\d+|#x[0-9a-f]+|[a-z]+);", "", out)  # every character left as typed
    assert not set(plain) & set("<>[]!*_`~|$&\\\"'"), (text, out)
    stripped = out.lstrip()  # no block mark starts the line
    assert not stripped[:1] in ("#", "-", "+", ">", "="), out
    assert not re.match(r"\d+[.)]", stripped), out


@pytest.mark.parametrize("text", ["1e300", "1e301", "1e-301"])
def test_the_lambda_box_refuses_values_float64_does_not_support_with_the_range(text):
    from core.validation import LAM_RANGE
    if float(text) <= LAM_RANGE[1] and float(text) >= LAM_RANGE[0]:
        assert parse_positive_or_auto(text, "λ", LAM_RANGE) == float(text)
        return
    with pytest.raises(ValueError, match=r"between 1e-300 and 1e\+300"):
        parse_positive_or_auto(text, "λ", LAM_RANGE)


@pytest.mark.parametrize("model", ["rls", "harmonic"])
def test_point_codes_are_the_codes_of_the_tables_names(tmp_path, model):
    """The screen's label and prediction codes (from integers, per state) against class_codes
    of the predictions table's names, through labels, a relabel, a new class, undo, unlabel."""
    from labeler.session import LabelingSession, SessionConfig

    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(
        dataset="moons", dataset_options={"n": 80}, model=model, seed=2))

    def check():
        pred = s.predictions()
        label, predicted = s.point_codes()
        np.testing.assert_array_equal(label, class_codes(pred["label"].to_numpy(), s.classes))
        np.testing.assert_array_equal(predicted, class_codes(pred["predicted"].to_numpy(), s.classes))
        assert label.dtype == predicted.dtype == np.int32
        view = build_view(s, color_mode="label")
        np.testing.assert_array_equal(view.label_codes, label)
        np.testing.assert_array_equal(view.predicted_codes, predicted)
        # the screen's confidence and predicted names, read without the table
        np.testing.assert_array_equal(view.confidence, pred["confidence"].to_numpy(dtype=float))
        assert [view.predicted_name(i) for i in range(len(pred))] == pred["predicted"].tolist()
        assert view._predictions is None  # not built until read
        pd.testing.assert_frame_equal(view.predictions, pred)

    check()
    for i in range(5):
        s.label(i, str(s.dataset.y[i]), source="chosen")
        check()
    s.relabel(1, s.classes[1 - s.classes.index(s.labels[1])])
    check()
    s.add_class("third")
    s.label(7, "third", source="chosen")
    check()
    s.undo()
    s.unlabel(2)
    check()
    s.close()
