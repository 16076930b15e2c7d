"""Sessions a person can find: named by file, model, label count and last use; a fresh tab
without a data set given opens the session used last, not a new demo."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest

from labeler.session import LabelingSession, SessionConfig
from labeler.ui.session_list import describe, last_used, session_summaries

APP = str(Path(__file__).resolve().parents[1] / "labeler" / "app.py")


def _table(path: Path) -> Path:
    rng = np.random.default_rng(0)
    pd.DataFrame({"a": rng.normal(size=60), "b": rng.normal(size=60),
                  "label": np.arange(60) % 2}).to_csv(path, index=False)
    return path


def test_the_list_names_file_model_labels_and_time_most_recent_first(tmp_path):
    store = tmp_path / "s.sqlite"
    demo = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": 80}))
    demo.close()
    time.sleep(1.1)  # timestamps have a one-second resolution at least
    table = LabelingSession.create(store, SessionConfig(dataset=str(_table(tmp_path / "birds.csv")),
                                                        posterior="dense"))
    table.label(table.next_query(), table.classes[0])
    table.close()
    summaries = session_summaries(store)
    assert [s.id for s in summaries] == [table.id, demo.id]  # the one used last first
    line = describe(summaries[0])
    assert line.startswith("birds.csv · RLS (dense) · 1 label · ")
    assert table.id[:6] not in line and str(tmp_path) not in line  # no hash, no folder
    assert "moons" in describe(summaries[1]) and "0 labels" in describe(summaries[1])
    assert last_used(summaries).id == table.id


def test_a_fresh_tab_opens_the_session_used_last_not_the_demo(tmp_path, monkeypatch):
    store = tmp_path / "s.sqlite"
    older = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": 80}))
    older.close()
    time.sleep(1.1)
    used = LabelingSession.create(store, SessionConfig(dataset=str(_table(tmp_path / "birds.csv"))))
    used.label(used.next_query(), used.classes[1])
    used.close()
    monkeypatch.setenv("LABELER_STORE", str(store))
    monkeypatch.delenv("LABELER_DATA", raising=False)
    monkeypatch.delenv("LABELER_SESSION", raising=False)
    at = AppTest.from_file(APP, default_timeout=120).run()
    assert not at.exception
    assert at.session_state["session_id"] == used.id
    assert len(LabelingSession.list_sessions(store)) == 2  # no new demo session
