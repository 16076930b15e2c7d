"""A session on a table keeps its column roles: stored resolved in the config, so that reopening
loads the same features (also when the guess would now choose differently, and for the text
features an SVD may compute with other last bits elsewhere); older sessions keep their fixed
roles."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd

import pytest

import labeler.data.tables as tables
from labeler.store.chain import record_checksum
from labeler.session import LabelingSession, SessionConfig
from labeler.store import Store

SENTENCES = Path(__file__).resolve().parents[1] / "sample_data" / "sentences.csv"
ROLES = ("id_col", "label_col", "text_col", "image_col", "layout_cols", "feature_cols", "features_from")


@pytest.fixture
def sentences(tmp_path):
    path = tmp_path / "sentences.csv"
    shutil.copy(SENTENCES, path)
    return path


def stored_config(store, sid) -> dict:
    with sqlite3.connect(store) as con:
        return json.loads(con.execute("SELECT config FROM sessions WHERE id = ?", (sid,)).fetchone()[0])


def test_a_text_session_stores_its_roles_and_reopens_with_bit_identical_features(tmp_path, sentences):
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset=str(sentences), seed=1))
    assert s.config.standardize is False  # unit-length TF-IDF rows: cosine geometry kept
    assert "text features" in s.auto_settings["standardize"]
    assert s.classes == ["cooking", "football", "weather"]
    assert s.X.shape == (300, 20)
    cfg = stored_config(store, s.id)
    options = cfg["dataset_options"]
    assert {k: options[k] for k in ROLES} == {
        "id_col": "id", "label_col": "label", "text_col": "text", "image_col": None,
        "layout_cols": None, "feature_cols": [], "features_from": "text"}
    assert options["seed"] == 1 and options["text_components"] == 20
    assert cfg["fingerprint"].startswith("text:")
    with Store(store) as st:
        kept = st.get_array(s.id, "features-text")
    assert kept.tobytes() == s.dataset.X.tobytes()
    q = s.next_query()
    s.label(q, str(s.dataset.y[q]), expected_query=q)
    X, sid = s.X.copy(), s.id
    s.close()

    again = LabelingSession.open(store, sid)
    assert again.X.tobytes() == X.tobytes()
    assert again.labels == {q: str(again.dataset.y[q])}
    assert list(again.dataset.texts[:2]) == list(pd.read_csv(sentences)["text"][:2])


def test_reopening_does_not_guess_again(tmp_path, sentences, monkeypatch):
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset=str(sentences)))
    X, sid = s.X.copy(), s.id
    s.close()
    real = tables.guess_roles

    def other_guess(frame, **given):  # a later version would guess no text column
        given = {k: (None if k == "text_col" and v is tables.GUESS else v) for k, v in given.items()}
        return real(frame, **given)

    monkeypatch.setattr(tables, "guess_roles", other_guess)
    assert LabelingSession.open(store, sid).X.tobytes() == X.tobytes()


def test_text_features_computed_with_other_last_bits_still_open_the_session(tmp_path, sentences, monkeypatch):
    """Another machine's BLAS may round the SVD differently: the session uses the features it
    was made with (kept in the store) and recognises the data by the exact TF-IDF."""
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset=str(sentences)))
    X, sid = s.X.copy(), s.id
    s.close()
    real = tables.text_features

    def elsewhere(*args, **kwargs):
        feats = real(*args, **kwargs)
        noisy = feats.X * (1 + 1e-15 * np.random.default_rng(0).standard_normal(feats.X.shape))
        assert noisy.tobytes() != feats.X.tobytes()
        return type(feats)(**{**feats.__dict__, "X": noisy})

    monkeypatch.setattr(tables, "text_features", elsewhere)
    reopened = LabelingSession.open(store, sid)
    assert reopened.X.tobytes() == X.tobytes()


def test_changed_texts_are_refused(tmp_path, sentences):
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset=str(sentences)))
    sid = s.id
    s.close()
    frame = pd.read_csv(sentences)
    frame.loc[5, "text"] = frame.loc[5, "text"] + " extra words"
    frame.to_csv(sentences, index=False)
    with pytest.raises(ValueError, match="has changed since session"):
        LabelingSession.open(store, sid)


def test_a_session_made_before_roles_were_stored_reopens_with_its_fixed_roles(tmp_path):
    """Its stored options have no roles: the fixed roles of then (every column but label, id,
    x, y a feature) apply, not today's guess (which takes 'target' as the label)."""
    path = tmp_path / "old.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.normal(size=50), "b": rng.normal(size=50),
                  "target": np.arange(50) % 2}).to_csv(path, index=False)
    store = tmp_path / "s.sqlite"
    made_then = {"label_col": None, "feature_cols": ["a", "b", "target"]}
    s = LabelingSession.create(store, SessionConfig(dataset=str(path), dataset_options=made_then))
    s.label(4, "positive", source="chosen")
    sid, X = s.id, s.X.copy()
    s.close()
    cfg = stored_config(store, sid)
    cfg["dataset_options"] = {"seed": cfg["dataset_options"]["seed"]}  # as stored back then
    cfg.pop("checksum")  # (an upgraded store gives such a record a checksum: as the upgrade does)
    with sqlite3.connect(store) as con:
        name, dataset, created = con.execute("SELECT name, dataset, created FROM sessions WHERE id = ?",
                                             (sid,)).fetchone()
        cfg["checksum"] = record_checksum(sid, name, dataset, created, cfg)
        con.execute("UPDATE sessions SET config = ? WHERE id = ?", (json.dumps(cfg), sid))
    again = LabelingSession.open(store, sid)
    assert again.dataset.feature_names == ["a", "b", "target"]
    assert again.X.tobytes() == X.tobytes() and again.labels == {4: "positive"}


def test_a_numeric_id_is_no_feature_of_the_session(tmp_path):
    path = tmp_path / "items.csv"
    rng = np.random.default_rng(1)
    pd.DataFrame({"id": np.arange(1000, 1060), "u": rng.normal(size=60), "v": rng.normal(size=60),
                  "label": np.arange(60) % 2}).to_csv(path, index=False)
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset=str(path)))
    assert s.dataset.feature_names == ["u", "v"] and s.X.shape == (60, 2)
    assert list(s.dataset.ids[:3]) == [1000, 1001, 1002]
    assert s.export_table()["id"].tolist() == []  # nothing labelled yet
    s.label(2, "1", source="chosen")
    assert s.export_table()["id"].tolist() == [1002]
