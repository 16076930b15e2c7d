"""Labelling many points at once on the session object: a selection (lasso / box) with one
class, "more like this" (nearest neighbours), a batch of queries; each one undoable action,
exact in the learner (oracle: a direct solve on the net labels), replayed on reopening, shown
and exported with its own source, and refused with a reason when stale or empty."""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd
import pytest

from arls_oracle import direct_solve, expected_class_weights
from core.kernels import Kernel
from labeler.session import LabelingSession, SessionConfig
from labeler.session.batch import BATCH_RULES, batch_queries, diverse_batch
from labeler.session.neighbours import nearest_neighbours, similar_points
from labeler.store import LogState, Store, group_actions

N = 80


def config(**kw):
    base = dict(dataset="moons", dataset_options={"n": N}, seed=3, strategy="arls")
    base.update(kw)
    return SessionConfig(**base)


@pytest.fixture
def store(tmp_path):
    return tmp_path / "labels.sqlite"


def truth(s, i):
    return str(s.dataset.y[i])


def label_some(s, k):
    for _ in range(k):
        q = s.next_query()
        assert s.label(q, truth(s, q), expected_query=q)


def m_of(s):
    return np.array(s.learner.decision_values, dtype=np.float64, copy=True)


def oracle_m(s):
    K = Kernel("rbf", width=s.config.width)(s.X)
    weights = expected_class_weights(s.labels, s.classes, s.config.weighting)
    m, _ = direct_solve(K, s.labels, s.classes, s.config.lam, weights)
    return m


def n_stored(store, sid):
    with Store(store) as st:
        return st.n_events(sid)


def stored_rows(store, sid):
    con = sqlite3.connect(store)
    try:
        return con.execute("SELECT action, kind, idx, label, source, value FROM events "
                           "WHERE session_id = ? ORDER BY seq", (sid,)).fetchall()
    finally:
        con.close()


# ---- a selection labelled with one class --------------------------------------------------------


@pytest.mark.parametrize("weighting", ["none", "balanced"])
def test_a_selection_is_one_exact_action_undone_and_redone_as_one(store, weighting):
    s = LabelingSession.create(store, config(weighting=weighting))
    label_some(s, 4)
    before_labels, m_before = dict(s.labels), m_of(s)
    sel = [i for i in range(N) if i not in s.labels][:9]
    version = s.n_events
    assert s.label_points(sel + sel[:2], "1", expected_version=version) == 9  # repeats count once
    assert s.n_labeled == 13  # (a re-tune may add a setting event)
    assert all(s.labels[i] == "1" for i in sel)
    np.testing.assert_allclose(m_of(s), oracle_m(s), rtol=0, atol=1e-10)  # live = direct solve
    with LabelingSession.open(store, s.id) as r:  # replay = live
        assert r.labels == s.labels and list(r.labels) == list(s.labels)
        np.testing.assert_allclose(m_of(r), m_of(s), rtol=0, atol=1e-10)
    action = s.last_action
    assert s.undo(expected_action=action) is not None  # the whole selection in one step
    assert s.labels == before_labels
    # (balanced: a re-tune may have moved the width since; the oracle uses the current one)
    np.testing.assert_allclose(m_of(s), oracle_m(s), rtol=0, atol=1e-10)
    if weighting == "none":
        np.testing.assert_allclose(m_of(s), m_before, rtol=0, atol=1e-10)
    assert s.label_points(sel, "1", expected_version=s.n_events) == 9  # "redo"
    np.testing.assert_allclose(m_of(s), oracle_m(s), rtol=0, atol=1e-10)
    with LabelingSession.open(store, s.id) as r:
        assert r.labels == s.labels
        np.testing.assert_allclose(m_of(r), oracle_m(s), rtol=0, atol=1e-10)
    history = s.history
    assert list(history["source"].iloc[-9:]) == ["selection"] * 9


def test_stale_selections_write_nothing_and_say_why(store):
    s = LabelingSession.create(store, config())
    label_some(s, 2)
    drawn = s.n_events
    sel = [i for i in range(N) if i not in s.labels][:5]
    label_some(s, 1)  # another press (or tab) changed the state after the selection was drawn
    stored = n_stored(store, s.id)
    assert s.label_points(sel, "0", expected_version=drawn) == 0
    assert n_stored(store, s.id) == stored
    assert "changed since this selection was drawn" in s.why_not_labelled(sel, drawn)
    # a second tab that is behind catches up inside the commit, then refuses
    with LabelingSession.open(store, s.id) as other:
        label_some(other, 1)
    assert s.label_points(sel, "0", expected_version=s.n_events) == 0
    assert n_stored(store, s.id) == stored + 1
    # every selected point labelled already: nothing written, and said so
    done = list(s.labels)[:3]
    assert s.label_points(done, "0", expected_version=s.n_events) == 0
    assert "labelled already" in s.why_not_labelled(done, s.n_events)


def test_an_empty_or_bad_selection_is_refused_with_the_fix(store):
    s = LabelingSession.create(store, config())
    label_some(s, 2)
    stored = n_stored(store, s.id)
    with pytest.raises(ValueError, match="selection is empty.*lasso or box"):
        s.label_points([], "0")
    assert "No points are selected" in s.why_not_labelled([])
    with pytest.raises(ValueError, match="not one of the classes.*add the class"):
        s.label_points([5, 6], "nope")
    with pytest.raises(ValueError, match="Unknown bulk source"):
        s.label_points([5, 6], "0", via="magic")
    with pytest.raises(ValueError, match="two labels"):
        s.label_many([(5, "0"), (5, "1")], "similar")
    with pytest.raises(IndexError, match="out of range"):
        s.label_points([5, N], "0")
    with pytest.raises(ValueError, match="state version"):
        s.label_points([5], "0", expected_version="3")
    with pytest.raises(ValueError, match="1-D sequence"):
        s.label_points([[1, 2]], "0")
    assert n_stored(store, s.id) == stored


# ---- stored form, export -----------------------------------------------------------------------


def test_bulk_labels_are_stored_as_accept_events_with_their_source_in_its_column(store, tmp_path):
    s = LabelingSession.create(store, config(initial_labels=4))
    label_some(s, 2)
    free = [i for i in range(N) if i not in s.labels]
    s.label_points(free[:3], "0", expected_version=s.n_events)
    s.label_many({free[3]: "1", free[4]: "0"}, "similar", expected_version=s.n_events)
    s.label_many([(free[5], "1"), (free[6], "1")], "batch", expected_version=s.n_events)
    rows = stored_rows(store, s.id)
    bulk = [r for r in rows if r[4] in ("selection", "similar", "batch")]  # schema 3: a column
    assert [(r[1], r[4], r[5]) for r in bulk] == [("accept", "selection", None)] * 3 + [
        ("accept", "similar", None)] * 2 + [("accept", "batch", None)] * 2
    # the store's fold reads the same net labels
    with Store(store) as st:
        events = st.events(s.id)
    state = LogState(["0", "1"], N)
    for g in group_actions(events):
        state.apply(g)
    assert {i: r.label for i, r in state.labels.items()} == s.labels
    table = pd.read_csv(s.export(tmp_path / "labels.csv"))
    ids = [str(i) for i in s.dataset.ids]
    source = dict(zip(table["id"].astype(str), table["source"]))
    assert [source[ids[i]] for i in free[:7]] == ["selection"] * 3 + ["similar"] * 2 + ["batch"] * 2
    assert sorted(set(source.values())) == ["batch", "initial", "queried", "selection", "similar"]
    with LabelingSession.open(store, s.id) as r:
        assert list(r.history["source"]) == list(s.history["source"])


# ---- more like this -----------------------------------------------------------------------------


def brute_neighbours(X, index, k, candidates):
    cand = [int(c) for c in candidates if c != index]
    d = [float(np.sum((X[c] - X[index]) ** 2)) for c in cand]
    return [c for _, c in sorted(zip(d, cand))][:k]


@pytest.mark.parametrize("seed", range(6))
def test_nearest_neighbours_match_a_full_sort(seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 3, size=(60, 2)).astype(float)  # many exact ties
    cand = np.sort(rng.choice(60, size=40, replace=False))
    for k in (1, 5, 39, 40, 100):
        got = nearest_neighbours(X, int(cand[3]), k, cand)
        assert got.tolist() == brute_neighbours(X, int(cand[3]), k, cand)


def test_similar_points_leave_out_labelled_skipped_and_the_point(store):
    s = LabelingSession.create(store, config())
    label_some(s, 5)
    q = s.next_query()
    s.skip(q, expected_query=q)
    got = similar_points(s, 0, k=10)
    allowed = [i for i in range(N) if i not in s.labels and i not in s.skipped and i != 0]
    assert got.tolist() == brute_neighbours(s.X, 0, 10, allowed)
    assert set(similar_points(s, 0, k=N, include_labelled=True).tolist()) >= set(s.labels) - {0}
    with pytest.raises(ValueError, match="positive number"):
        similar_points(s, 0, k=0)
    with pytest.raises(IndexError, match="out of range"):
        similar_points(s, N, k=3)


# ---- batch queries ------------------------------------------------------------------------------


@pytest.mark.parametrize("weighting", ["none", "balanced"])
def test_greedy_batch_follows_hypothetical_labels_and_gives_the_learner_back(store, tmp_path, weighting):
    s = LabelingSession.create(store, config(weighting=weighting))
    label_some(s, 4)
    m_before = m_of(s)
    q = s.next_query()
    batch = batch_queries(s, 5, "greedy")
    assert len(batch) == 5 and batch[0] == q and len(set(batch.tolist())) == 5
    assert not set(batch.tolist()) & set(s.labels)
    np.testing.assert_allclose(m_of(s), m_before, rtol=0, atol=1e-10)  # learner given back
    np.testing.assert_allclose(m_of(s), oracle_m(s), rtol=0, atol=1e-10)
    assert s.next_query() == q
    # oracle: a second session that REALLY labels each pick with its predicted class queries
    # the same next point
    twin = LabelingSession.create(tmp_path / "twin.sqlite", config(weighting=weighting))
    for i, lab in s.labels.items():
        twin.label(i, lab, source="chosen")
    for t in range(4):
        pick = int(batch[t])
        predicted = str(twin.learner.predict()[pick])
        twin.label(pick, predicted, source="chosen")
        scores = twin.learner.expected_risk()
        assert int(batch[t + 1]) == int(np.argmin(scores)), t
    assert batch_queries(s, 5, "greedy").tolist() == batch.tolist()  # once per state


def test_a_labelled_batch_is_one_action_and_reopens_with_the_same_next_batch(store):
    s = LabelingSession.create(store, config())
    label_some(s, 3)
    batch = batch_queries(s, 5, "greedy")
    with LabelingSession.open(store, s.id) as r:
        assert batch_queries(r, 5, "greedy").tolist() == batch.tolist()  # a reload shows it again
    labels = {int(i): truth(s, int(i)) for i in batch}
    assert s.label_many(labels, "batch", expected_version=s.n_events) == 5
    np.testing.assert_allclose(m_of(s), oracle_m(s), rtol=0, atol=1e-10)
    s.undo(expected_action=s.last_action)
    assert not set(labels) & set(s.labels)
    np.testing.assert_allclose(m_of(s), oracle_m(s), rtol=0, atol=1e-10)
    assert batch_queries(s, 5, "greedy")[0] == s.next_query()


def brute_diverse(X, scores, first, k, candidates):
    cand = sorted((float(scores[c]), int(c)) for c in candidates if c != first)
    best = [c for _, c in cand[:max(10 * k, 50)]]
    picks = [first]
    while len(picks) < k and len(picks) < len(best) + 1:
        def dmin(c):
            return min(float(np.sum((X[c] - X[p]) ** 2)) for p in picks)
        left = [c for c in best if c not in picks]
        far = max(dmin(c) for c in left)
        picks.append(next(c for c in left if dmin(c) == far))  # best is in score order
    return picks


@pytest.mark.parametrize("seed", range(4))
def test_diverse_batch_matches_a_plain_farthest_first(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(120, 3))
    scores = rng.random(120)
    cand = np.sort(rng.choice(120, size=90, replace=False))
    first = int(cand[np.argmin(scores[cand])])
    for k in (1, 2, 5, 12):
        assert diverse_batch(X, scores, first, k, cand) == brute_diverse(X, scores, first, k, cand)


@pytest.mark.parametrize("rule", BATCH_RULES)
def test_batches_skip_skipped_points_and_stop_when_the_pool_runs_out(tmp_path, rule):
    s = LabelingSession.create(tmp_path / "s.sqlite", config(dataset_options={"n": 20}))
    free = list(range(20))
    s.label_points(free[:15], "0", expected_version=s.n_events)
    q = s.next_query()
    s.skip(q, expected_query=q)
    batch = batch_queries(s, 10, rule)
    assert sorted(batch.tolist()) == sorted(set(range(15, 20)) - {q})
    with pytest.raises(ValueError, match="from 1 to 50"):
        batch_queries(s, 0, rule)
    with pytest.raises(ValueError, match="Unknown batch rule"):
        batch_queries(s, 5, "best")
