"""The ``keep`` event (schema version 4): a reviewed label leaves the suspects list, is stored,
replayed exactly and undone; version-3 stores are upgraded with their chain intact."""

from __future__ import annotations

import sqlite3

import numpy as np
import pytest

from labeler.session import LabelingSession, SessionConfig
from labeler.session.views import KEEP_SCORE_MARGIN
from labeler.store import Event, Keep, LogState, SCHEMA_VERSION, Store, StoreCorruptError, group_actions
from labeler.store.schema import _SCHEMA_V3, migrate_v2_to_v3

from test_store_migration import all_events, make_v2_store, user_version


def ev(seq, kind, index=None, label=None, source=None, value=None, action=None):
    return Event(seq, action or seq, kind, index, label, source, value, "t")


def fold(events, classes=("a", "b", "c"), n=10) -> LogState:
    s = LogState(list(classes), n_samples=n)
    for g in group_actions(events):
        s.apply(g)
    return s


# ---- the fold ---------------------------------------------------------------------------------


def test_fold_keep_and_its_undo_restore_the_previous_keep():
    base = [ev(1, "label", 3, "a", "queried")]
    keep1 = ev(2, "keep", 3, "a", value={"score": 0.7, "suggested": "b"})
    keep2 = ev(3, "keep", 3, "a", value={"score": 0.9, "suggested": "c"})
    s = fold(base + [keep1, keep2])
    assert s.kept[3].score == 0.9 and s.kept[3].suggested == "c" and s.labels[3].label == "a"
    s.apply([ev(4, "undo", value={"undoes": 3})])
    assert s.kept[3].score == 0.7 and s.kept[3].suggested == "b"
    s.apply([ev(5, "undo", value={"undoes": 2})])
    assert s.kept == {} and s.labels[3].label == "a"  # the label was never touched


def test_fold_rename_carries_the_kept_label_and_suggestion():
    s = fold([ev(1, "label", 3, "a", "queried"), ev(2, "keep", 3, "a", value={"score": 0.6, "suggested": "b"}),
              ev(3, "rename_class", label="x", value={"from": "b"}), ev(4, "rename_class", label="y", value={"from": "a"})])
    assert (s.kept[3].label, s.kept[3].suggested) == ("y", "x")
    s.apply([ev(5, "undo", value={"undoes": 4})])
    assert (s.kept[3].label, s.kept[3].suggested) == ("a", "x")


@pytest.mark.parametrize("bad, match", [
    (ev(2, "keep", 4, "a", value={"score": 0.5, "suggested": "b"}), "not labelled"),
    (ev(2, "keep", 3, "b", value={"score": 0.5, "suggested": "a"}), "labelled 'a'"),
    (ev(2, "keep", 3, "a", value={"score": 1.5, "suggested": "b"}), "score"),
    (ev(2, "keep", 3, "a", value=None), "score"),
])
def test_fold_rejects_a_keep_that_contradicts_the_state(bad, match):
    with pytest.raises(StoreCorruptError, match=match):
        fold([ev(1, "label", 3, "a", "queried"), bad])


def test_keep_constructor_checks_its_score():
    with pytest.raises(ValueError, match=r"score must be a number in \[0, 1\]"):
        Keep(1, "a", 1.2)
    assert Keep(1, "a", 0.25, "b").columns() == (1, "a", None, {"score": 0.25, "suggested": "b"})


# ---- a session --------------------------------------------------------------------------------


@pytest.fixture
def labelled(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 200},
                                                                  seed=4, strategy="arls"))
    y = np.asarray(s.dataset.y).astype(str)
    for _ in range(14):
        q = s.next_query()
        s.label(q, y[q], expected_query=q)
    j = int(s.suspects().iloc[-1]["index"])
    s.relabel(j, next(c for c in s.classes if c != y[j]))  # a wrong label: the most suspect
    return s, j


def test_keep_is_stored_hides_the_label_replays_and_undoes(labelled):
    s, j = labelled
    top = s.suspects().set_index("index").loc[j]
    assert not top["kept"] and top["score"] > 0.5
    before, labels = s.n_events, dict(s.labels)
    assert s.keep(j, expected_label=str(top["label"]))
    assert s.n_events == before + 1 and s.labels == labels and s.last_action_kind == "keep"
    table = s.suspects()
    assert bool(table.loc[table["index"] == j, "kept"].iloc[0])
    assert j not in s.suspects(hide_kept=True)["index"].tolist()
    assert len(s.suspects(hide_kept=True)) == len(table) - 1
    path, sid = s.store_path, s.id
    s.close()
    with Store(path) as st:
        kinds = [e.kind for e in st.events(sid)]  # the chain verifies
    assert kinds[-1] == "keep"
    r = LabelingSession.open(path, sid)
    assert r.labels == labels and r._log.kept[j].score == pytest.approx(float(top["score"]))
    assert j not in r.suspects(hide_kept=True)["index"].tolist()
    assert r.undo() == j and j in r.suspects(hide_kept=True)["index"].tolist()
    assert r.labels == labels
    r.close()


def test_a_keep_ends_when_the_label_or_the_models_view_changes(labelled):
    s, j = labelled
    row = s.suspects().set_index("index").loc[j]
    score, suggested, label = float(row["score"]), str(row["suggested"]), str(row["label"])
    assert score > KEEP_SCORE_MARGIN
    # kept when the score was lower by more than the margin: the view changed materially
    assert s.labelling.keep(j, score - KEEP_SCORE_MARGIN - 0.01, suggested)
    assert not s.suspects().set_index("index").loc[j, "kept"]
    # kept with another suggestion: changed too
    other = next(c for c in s.classes if c != suggested)
    assert s.labelling.keep(j, score, other)
    assert not s.suspects().set_index("index").loc[j, "kept"]
    assert s.labelling.keep(j, score - KEEP_SCORE_MARGIN + 0.01, suggested)
    assert s.suspects().set_index("index").loc[j, "kept"]
    # a new label of the point ends the keep; undoing the relabel brings it back
    assert s.relabel(j, suggested, expected_label=label)
    assert not s.suspects().set_index("index").loc[j, "kept"]
    s.undo()
    assert s.suspects().set_index("index").loc[j, "kept"]


def test_keep_refuses_a_stale_or_unlabelled_point(labelled):
    s, j = labelled
    other = next(c for c in s.classes if c != s.labels[j])
    n = s.n_events
    assert not s.keep(j, expected_label=other)
    free = next(i for i in range(s.n_samples) if i not in s.labels)
    assert not s.keep(free)
    assert s.n_events == n
    with pytest.raises(IndexError):
        s.keep(s.n_samples + 5)


# ---- version 3 -> 4 ---------------------------------------------------------------------------


def make_v3_store(path):
    """A version-3 store: a version-2 store taken to version 3 by the version-3 migration alone."""
    make_v2_store(path)
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("BEGIN IMMEDIATE")
    migrate_v2_to_v3(con)
    con.execute("COMMIT")
    con.close()
    assert user_version(path) == 3
    return all_events(path)


def test_a_version_3_store_is_upgraded_keeping_events_and_chain(tmp_path):
    path = tmp_path / "v3.sqlite"
    events = make_v3_store(path)
    con = sqlite3.connect(path)
    ddl = con.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    con.close()
    assert "'keep'" not in ddl and "'keep'" not in _SCHEMA_V3
    with Store(path) as st:
        assert st.schema_version == SCHEMA_VERSION == 4
        for info in st.list_sessions():
            st.events(info.id)  # the hashes copied still verify
    assert all_events(path) == events
    con = sqlite3.connect(path)
    ddl = con.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    assert "'keep'" in ddl and "'batch_guess'" in ddl and "'similar_guess'" in ddl
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()


# ---- labels left on the model's guess ----------------------------------------------------------


def test_grid_picks_left_on_the_guess_are_stored_apart_and_exported_as_guesses(labelled, tmp_path):
    s, _ = labelled
    free = [i for i in range(s.n_samples) if i not in s.labels][:4]
    pred = s.predictions()["predicted"]
    other = {i: next(c for c in s.classes if c != pred[i]) for i in free}
    labels = {free[0]: pred[free[0]], free[1]: pred[free[1]], free[2]: other[free[2]], free[3]: pred[free[3]]}
    with pytest.raises(ValueError, match="guessed must name points"):
        s.label_many(labels, "batch", guessed=[999])
    with pytest.raises(ValueError, match="guessed must name points"):
        s.label_many(labels, "selection", guessed=[free[0]])
    slope_before = s.calibration().slope
    # free[3] equals the guess but its picker started on "not sure": the user's own pick
    assert s.label_many(labels, "batch", guessed=[free[0], free[1]]) == 4
    sources = {i: s._log.labels[i].source for i in free}
    assert sources == {free[0]: "batch_guess", free[1]: "batch_guess", free[2]: "batch", free[3]: "batch"}
    idx, y, F, keep = s.views._loo_rows()
    assert dict(zip(idx.tolist(), keep.tolist()))[free[0]] is False  # guesses do not calibrate
    assert dict(zip(idx.tolist(), keep.tolist()))[free[2]] is True
    assert slope_before > 0
    table = s.export_table()
    origin = table.set_index("id")["origin"]
    ids = np.asarray(s.dataset.ids)
    assert [origin[ids[i]] for i in free] == ["batch-guess", "batch-guess", "batch-confirmed", "batch-confirmed"]
    assert set(origin[[ids[i] for i in s.labels if i not in free]]) == {"user"}
    guessed = table[table["origin"].str.endswith("guess")]
    assert sorted(guessed.index.tolist()) == sorted(free[:2])
    s.accept_predictions([i for i in range(s.n_samples) if i not in s.labels][:2])
    assert (s.export_table()["origin"] == "bulk-guess").sum() == 2
    path = s.export(tmp_path / "out.csv")
    import pandas as pd
    back = pd.read_csv(path)
    assert list(back.columns[:4]) == ["id", "label", "source", "origin"]
    assert (back["origin"].str.endswith("guess")).sum() == 4
    # stored and replayed
    sid, store = s.id, s.store_path
    s.close()
    with LabelingSession.open(store, sid) as r:
        assert {i: r._log.labels[i].source for i in free} == sources
