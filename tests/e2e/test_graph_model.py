"""A harmonic-function session in a real browser (issue 10 §2): labels, undo, reload, export.

The app starts as ``labeler app --model harmonic`` does (``LABELER_MODEL``), on 300 moons.
"""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlparse

import numpy as np
import pandas as pd
import pytest
from harness import (AppServer, class_keys, download_export_csv, labeled_count, open_app, press, shown, wait_labeled,
                     wait_query_changed)

pytestmark = pytest.mark.e2e


def test_harmonic_session_labels_undo_reload_export(tmp_path, page):
    from core.graph import HarmonicFunction
    from labeler.session import LabelingSession

    with AppServer(tmp_path / "store.sqlite", data_options={"n": 300},
                   env={"LABELER_MODEL": json.dumps({"model": "harmonic"})}) as server:
        open_app(page, server.url)
        assert "Model: Harmonic function" in page.locator("section[data-testid='stSidebar']").inner_text()
        keys = class_keys(page)
        names = list(keys)
        given = {}
        for k in range(3):
            point, query = shown(page)
            assert point == query is not None
            press(page, keys[names[k % 2]])
            wait_labeled(page, k + 1)
            wait_query_changed(page, query)
            given[query] = names[k % 2]
        last = list(given)[-1]
        press(page, "u")  # undo the third label
        wait_labeled(page, 2)
        del given[last]

        session_id = parse_qs(urlparse(page.url).query)["session"][0]
        page.reload()
        open_app(page, page.url)
        assert labeled_count(page) == 2
        reopened = LabelingSession.open(server.store, session_id)
        assert reopened.config.model == "harmonic" and reopened.labels == given
        learner = reopened.learner
        ref = HarmonicFunction(solver="direct").fit(learner.graph, np.fromiter(given, dtype=np.int64),
                                                   list(given.values()), classes=reopened.classes)
        np.testing.assert_allclose(learner.raw_values, ref.decision_values_, atol=1e-8)

        table = pd.read_csv(download_export_csv(page, tmp_path / "labels.csv"))
        ids = reopened.dataset.ids
        assert dict(zip(table["id"].astype(str), table["label"].astype(str))) == \
            {str(ids[i]): name for i, name in given.items()}
        assert set(table["source"]) == {"queried"}
        reopened.close()
