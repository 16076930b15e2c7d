"""A session made with ``--missing drop`` on a table whose label column is partly empty, before
empty labels became the unlabelled pool: the loader then dropped those rows, now it keeps them,
so the features have more rows on reopen. The reopen refuses with the cause and the fix named
(not the generic "the data set has changed")."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from labeler.session import LabelingSession, SessionConfig


def _table(n=40, seed=0):
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"f1": rng.normal(size=n), "f2": rng.normal(size=n),
                          "label": np.where(np.arange(n) % 2, "a", "b").astype(object)})
    frame.loc[[3, 11, 12, 30], "label"] = None  # a partly empty label column
    frame.loc[7, "f2"] = np.nan  # a gap in a feature: dropped by --missing drop, then and now
    return frame


def _old_store(tmp_path):
    """The store as the earlier loader left it: the session's rows are the rows with every
    chosen column filled, the label column included (made here from the file without the rows
    of an empty label, then the file put back as the user has it)."""
    path, store = tmp_path / "pool.csv", tmp_path / "store.sqlite"
    full = _table()
    full.dropna(subset=["label"]).to_csv(path, index=False)
    config = SessionConfig(dataset=str(path), dataset_options={"missing": "drop", "label_col": "label"},
                           seed=1, strategy="random")
    s = LabelingSession.create(store, config)
    assert s.n_samples == 35  # 40 rows, 4 without a label and 1 with a gap: dropped
    s.label(s.next_query(), "a")
    sid = s.id
    s.close()
    full.to_csv(path, index=False)
    return store, sid


def test_reopen_names_the_dropped_empty_label_rows_and_the_fix(tmp_path):
    store, sid = _old_store(tmp_path)
    with pytest.raises(ValueError) as info:
        LabelingSession.open(store, sid)
    message = str(info.value)
    assert "--missing drop" in message and "empty" in message and "'label'" in message
    assert "4 rows" in message  # the rows now kept
    assert "39" in message and "35" in message  # rows now, rows then
    assert "create a new session" in message.lower()


def test_other_changes_keep_the_generic_message(tmp_path):
    store, sid = _old_store(tmp_path)
    changed = _table()
    changed["f1"] += 1.0
    changed.to_csv(tmp_path / "pool.csv", index=False)
    with pytest.raises(ValueError, match="has changed since session") as info:
        LabelingSession.open(store, sid)
    assert "--missing drop" not in str(info.value)
