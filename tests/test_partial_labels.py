"""A table whose label column is filled in some rows only: those labels start the session.

Data layer (:func:`labeler.data.tables._label_column`, :class:`labeler.data.dataset.FileLabels`),
the session (:func:`labeler.session.config.prepare`: initial labels of source "initial",
export origin "file", exact reopening) and the point panel (the label column never shown).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labeler.data import DatasetError, load_dataset
from labeler.errors import SettingsError
from labeler.session import LabelingSession, SessionConfig
from labeler.ui.point_panel import hidden_columns

N = 60
LABELLED = {0: "a", 7: "b", 13: "a", 21: "c", 40: "b"}  # class "c": a single labelled row


def write_table(path, labels: dict, empty=np.nan, n=N):
    """Two blobs of features; ``label`` filled at ``labels``' rows, ``empty`` elsewhere."""
    rng = np.random.default_rng(5)
    frame = pd.DataFrame({"f": rng.normal(size=n), "g": rng.normal(size=n)})
    frame.loc[: n // 2, "f"] += 3.0
    column = [empty] * n
    for i, lab in labels.items():
        column[i] = lab
    frame["label"] = pd.Series(column, dtype=object)
    frame.to_csv(path, index=False)
    return path


@pytest.mark.parametrize("empty", [np.nan, None, "", "   "])
def test_partly_filled_label_column_is_accepted_as_file_labels(tmp_path, empty):
    labels = {**LABELLED, 30: " \t"}  # whitespace only: empty as well
    ds = load_dataset(write_table(tmp_path / "t.csv", labels, empty=empty))  # guessed as the label column
    assert ds.y is None
    assert ds.classes == ["a", "b", "c"]  # "c" has one labelled row: allowed
    np.testing.assert_array_equal(ds.file_labels.rows, sorted(LABELLED))
    assert ds.file_labels.labels.tolist() == [LABELLED[i] for i in sorted(LABELLED)]
    assert ds.file_labels.summary() == "5 of 60 rows carry a label in column 'label'; they start the session"
    assert ds.load_options["label_col"] == "label"
    assert "label" not in ds.feature_names and ds.X.shape == (N, 2)


def test_integer_labels_with_gaps_stay_integers(tmp_path):
    path = write_table(tmp_path / "t.csv", {2: 0, 3: 1, 50: 1})
    ds = load_dataset(path)  # the CSV reads the column as floats 0.0 / 1.0 / NaN
    assert ds.classes == [0, 1] and ds.file_labels.labels.tolist() == [0, 1, 1]


def test_all_empty_label_column_gives_no_labels(tmp_path):
    ds = load_dataset(write_table(tmp_path / "t.csv", {}), label_col="label")
    assert ds.y is None and ds.file_labels is None and ds.classes == []
    assert ds.load_options["label_col"] == "label" and ds.feature_names == ["f", "g"]


def test_a_single_labelled_class_is_refused_with_the_fix(tmp_path):
    path = write_table(tmp_path / "t.csv", {1: "spam", 4: "spam"})
    with pytest.raises(DatasetError, match=r"the 2 labelled row\(s\) of label column 'label' all have the "
                       r"label 'spam'.*Label at least one row of another class"):
        load_dataset(path)


def test_full_column_is_still_the_truth(tmp_path):
    path = write_table(tmp_path / "t.csv", {i: "ab"[i % 2] for i in range(N)})
    ds = load_dataset(path)
    assert ds.file_labels is None and ds.y.tolist() == ["ab"[i % 2] for i in range(N)]


def test_missing_drop_keeps_the_unlabelled_rows(tmp_path):
    path = write_table(tmp_path / "t.csv", LABELLED)
    frame = pd.read_csv(path)
    frame.loc[3, "g"] = np.nan  # an unlabelled row with a missing feature
    frame.to_csv(path, index=False)
    ds = load_dataset(path, missing="drop")
    assert ds.X.shape[0] == N - 1
    assert ds.file_labels.rows.tolist() == [0, 6, 12, 20, 39]  # renumbered after the dropped row 3


def test_session_starts_from_the_file_labels_and_reopens_exactly(tmp_path):
    path = write_table(tmp_path / "t.csv", LABELLED)
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset=str(path), seed=1))
    assert s.labels == LABELLED
    assert s.auto_settings["file_labels"] == "5 of 60 rows carry a label in column 'label'; they start the session"
    assert s.config.classes == ["a", "b", "c"]
    suspects = s.suspects()  # the Suspects tab ranks the file's labels like any other
    assert sorted(suspects["index"]) == sorted(LABELLED) and set(suspects["source"]) == {"initial"}
    q = s.next_query()
    assert q not in LABELLED
    s.label(q, "c", expected_query=q)
    labels, preds, q2 = s.labels, s.predictions(), s.next_query()
    sid = s.id
    s.close()
    r = LabelingSession.open(store, sid)
    assert r.labels == labels and list(r.labels) == list(labels)
    pd.testing.assert_frame_equal(r.predictions(), preds)
    assert r.next_query() == q2
    table = r.export_table()
    by_id = table.set_index("id")
    for i, lab in LABELLED.items():
        assert by_id.loc[i, "label"] == lab and by_id.loc[i, "origin"] == "file"
        assert by_id.loc[i, "source"] == "initial"
    assert by_id.loc[q, "origin"] == "user"
    r.undo()  # the user's label goes; the file's labels are one action of their own
    assert r.labels == LABELLED
    r.close()


def test_session_refuses_initial_labels_and_unknown_classes(tmp_path):
    path = write_table(tmp_path / "t.csv", LABELLED)
    with pytest.raises(SettingsError, match=r"5 of 60 rows carry a label.*initial_labels=0"):
        LabelingSession.create(tmp_path / "a.sqlite", SessionConfig(dataset=str(path), initial_labels=4))
    with pytest.raises(SettingsError, match=r"label\(s\) \['c'\], not among the session's classes"):
        LabelingSession.create(tmp_path / "b.sqlite", SessionConfig(dataset=str(path), classes=["a", "b"]))


def test_the_label_column_is_never_shown_beside_a_point(tmp_path):
    from labeler.ui.view import feature_table

    ds = load_dataset(write_table(tmp_path / "t.csv", LABELLED))
    assert "label" in hidden_columns(ds)
    for i in (7, 8):  # a labelled row and an unlabelled one
        shown = feature_table(ds, i, skip=hidden_columns(ds))
        assert shown["feature"].tolist() == ["f", "g"]


def test_app_opens_the_table_with_its_labels_and_says_so(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from labeler.ui.registry import REGISTRY

    path = write_table(tmp_path / "t.csv", LABELLED)
    monkeypatch.setenv("LABELER_STORE", str(tmp_path / "s.sqlite"))
    monkeypatch.setenv("LABELER_DATA", str(path))
    monkeypatch.delenv("LABELER_DATA_OPTIONS", raising=False)
    monkeypatch.delenv("LABELER_SESSION", raising=False)
    REGISTRY.clear()
    try:
        app = str(__import__("pathlib").Path(__file__).resolve().parents[1] / "labeler" / "app.py")
        at = AppTest.from_file(app, default_timeout=120)
        at.run()
        assert not at.exception, at.exception
        s, _ = REGISTRY.get(at.session_state["app_config"].store, at.session_state["session_id"])
        assert s.labels == LABELLED
        said = [md.value for md in at.markdown if 'class="file-labels"' in md.value]
        assert len(said) == 1  # the column's name escaped as HTML
        assert "5 of 60 rows carry a label in column &#x27;label&#x27;; they start the session." in said[0]
        assert 'data-labeled="5"' in "".join(md.value for md in at.markdown)
        panel = [df.value for df in at.dataframe] + [t.value for t in at.table]
        for shown in panel:  # the point's table: its features, never the label column
            if "feature" in getattr(shown, "columns", ()):
                assert "label" not in shown["feature"].astype(str).tolist()
    finally:
        REGISTRY.clear()


def write_partial_blobs(path, n=120, labelled=40, flips=(3, 17)):
    """Two separated blobs; the first ``labelled`` rows carry a label (``flips`` wrong), the rest empty."""
    rng = np.random.default_rng(0)
    y = rng.integers(2, size=n)
    X = rng.standard_normal((n, 2)) + 5.0 * y[:, None]
    label = np.where(y == 1, "pos", "neg").astype(object)
    for i in flips:
        label[i] = "neg" if label[i] == "pos" else "pos"
    label[labelled:] = ""
    pd.DataFrame({"id": [f"row{i}" for i in range(n)], "f1": X[:, 0], "f2": X[:, 1],
                  "label": label}).to_csv(path, index=False)
    return path


def test_cli_suspects_ranks_only_the_labelled_rows(tmp_path, capsys):
    from labeler import cli

    path = write_partial_blobs(tmp_path / "t.csv")
    code = cli.main(["suspects", str(path), "--out", str(tmp_path / "s.csv")])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "40 of 120 rows carry a label in column 'label'; ranking those, ignoring the 80 unlabelled row(s)" in err
    table = pd.read_csv(tmp_path / "s.csv")
    assert len(table) == 40 and set(table["id"]) == {f"row{i}" for i in range(40)}
    assert set(table["id"][:2]) == {"row3", "row17"}  # the wrong labels first


def test_cli_simulate_refuses_a_partly_filled_label_column_with_the_fix(tmp_path, capsys):
    from labeler import cli

    path = write_partial_blobs(tmp_path / "t.csv")
    code = cli.main(["simulate", str(path), "--budget", "5"])
    err = capsys.readouterr().err
    assert code == 2
    assert "40 of 120 rows carry a label in column 'label', but labeler simulate needs a label in every row" in err
    assert "Fill column 'label' in every row" in err and f"labeler app {path}" in err


def test_reopening_replays_the_store_not_the_file_labels(tmp_path):
    path = write_table(tmp_path / "t.csv", LABELLED)
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset=str(path), seed=1))
    sid, labels = s.id, s.labels
    s.close()
    write_table(path, {**LABELLED, 50: "b", 0: "b"})  # the file's labels edited since
    r = LabelingSession.open(store, sid)
    assert r.labels == labels  # the session's own events, not the file's current labels
    r.close()


def test_cli_app_says_how_many_rows_carry_a_label(tmp_path, capsys, monkeypatch):
    import labeler.serve
    from labeler import cli

    calls = []
    monkeypatch.setattr(labeler.serve, "run_app", lambda **kw: calls.append(kw))
    monkeypatch.setenv("LABELER_CACHE", "off")
    monkeypatch.delenv("LABELER_DATA_OPTIONS", raising=False)
    path = write_partial_blobs(tmp_path / "t.csv")
    code = cli.main(["app", str(path), "--port", "9003"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert ("labeler: t: 120 points, 2 features, 2 classes; 40 of 120 rows carry a label in column 'label'; "
            "they start the session; starting the app") in err
    assert calls and calls[-1]["data_options"]["label_col"] == "label"


def test_a_column_named_label_stays_hidden_when_loaded_without_a_label_column(tmp_path):
    from labeler.ui.view import feature_table

    ds = load_dataset(write_table(tmp_path / "t.csv", LABELLED), label_col=None)
    assert ds.file_labels is None and ds.y is None
    assert "label" in hidden_columns(ds)
    assert feature_table(ds, 7, skip=hidden_columns(ds))["feature"].tolist() == ["f", "g"]
    numeric = pd.DataFrame({"f": [0.1, 0.5, 0.9, 0.3], "label": [1.0, 2.0, 3.0, 4.0]})
    numeric.to_csv(tmp_path / "n.csv", index=False)
    ds = load_dataset(tmp_path / "n.csv", label_col=None, feature_cols=["f", "label"])
    assert "label" not in hidden_columns(ds)  # a feature is shown: it is what the model sees
