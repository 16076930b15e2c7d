"""Tests of LabelingSession (labeler/session/) on small pools with real SQLite files."""

from __future__ import annotations

import gc
import json
import sqlite3

import numpy as np
import pandas as pd
import pytest

from core.calibration import fit_temperature
from core.kernels import Kernel
from labeler.session import DEFAULT_LAM, LabelingSession, SessionConfig
from labeler.store import Store, StoreVersionError, UnknownSessionError
from labeler.store.schema import query_digest

N = 120
MOONS = {"dataset": "moons", "dataset_options": {"n": N}}


def config(**kw):
    base = dict(MOONS, seed=3)
    base.update(kw)
    return SessionConfig(**base)


@pytest.fixture
def store(tmp_path):
    return tmp_path / "labels.sqlite"


def truth(s, i):
    return str(s.dataset.y[i])


def label_queried(s, k):
    """Label k queried points with their true class, as a user would."""
    done = []
    for _ in range(k):
        q = s.next_query()
        assert s.label(q, truth(s, q), expected_query=q)
        done.append(q)
    return done


def m_of(s):
    return np.array(s.learner.decision_values, dtype=np.float64, copy=True)


def n_events_on_disk(store, sid):
    with Store(store) as st:
        return st.n_events(sid)


def direct_m(s, indices, lam=None, width=None):
    """Oracle: unweighted RLS without offset by a direct solve, m = K_XL (K_LL + lam I)^-1 Y_L."""
    cfg = s.config
    K = Kernel("rbf", width=width or cfg.width)(s.X)
    L = list(indices)
    labs = [s.labels[i] for i in L]
    classes = s.classes
    if len(classes) == 2:
        Y = np.array([[1.0 if c == classes[1] else -1.0] for c in labs])
    else:
        Y = -np.ones((len(L), len(classes)))
        Y[np.arange(len(L)), [classes.index(c) for c in labs]] = 1.0
    A = K[np.ix_(L, L)] + (lam or cfg.lam) * np.eye(len(L))
    return K[:, L] @ np.linalg.solve(A, Y)


# ---- creation and settings ----------------------------------------------------------------


def test_create_resolves_auto_settings_and_lists(store):
    s = LabelingSession.create(store, config(name="first"))
    from scipy.spatial.distance import pdist

    cfg = s.config
    assert cfg.width == pytest.approx(float(np.median(pdist(s.X))), rel=0, abs=0)
    assert cfg.lam == DEFAULT_LAM
    assert s.auto_settings == {
        "width": "median pairwise distance", "lam": f"default {DEFAULT_LAM}",
        "standardize": "on (columns on different scales)",
    }
    assert s.classes == [str(c) for c in s.dataset.classes]
    assert np.allclose(s.X.mean(axis=0), 0) and np.allclose(s.X.std(axis=0), 1)
    info = LabelingSession.list_sessions(store)
    assert [(i.id, i.name, i.n_labeled) for i in info] == [(s.id, "first", 0)]
    with sqlite3.connect(store) as con:
        stored = json.loads(con.execute("SELECT config FROM sessions").fetchone()[0])
    assert stored["width"] == cfg.width and stored["lam"] == DEFAULT_LAM  # numbers, not "auto"
    assert s.layout.shape == (N, 2)


def test_explicit_settings_are_kept(store):
    s = LabelingSession.create(store, config(width=0.7, lam=0.25, weighting="none", strategy="margin",
                                             standardize=True))
    cfg = s.config
    assert (cfg.width, cfg.lam, cfg.weighting, cfg.strategy) == (0.7, 0.25, "none", "margin")
    assert s.auto_settings == {}


@pytest.mark.parametrize(
    "kw, exc, match",
    [
        (dict(strategy="best"), ValueError, "Unknown strategy"),
        (dict(kernel="sigmoid"), ValueError, "Unknown kernel"),
        (dict(layout="mds"), ValueError, "Unknown layout"),
        (dict(weighting="inverse"), ValueError, "Unknown weighting"),
        (dict(width=-1.0), ValueError, "width"),
        (dict(lam=0), ValueError, "lam"),
        (dict(lam=1e301), ValueError, r"between 1e-300 and 1e\+300"),
        (dict(lam=1e-310), ValueError, r"between 1e-300 and 1e\+300"),
        (dict(width=1e300), ValueError, r"between 1e-150 and 1e\+150"),
        (dict(seed=-1), ValueError, "seed"),
        (dict(classes=["a", "a"]), ValueError, "already exists"),
        (dict(classes=["a", " "]), ValueError, "cannot be empty"),
        (dict(classes=["only"]), ValueError, "at least two"),
    ],
)
def test_bad_config_creates_nothing(store, kw, exc, match):
    with pytest.raises(exc, match=match):
        LabelingSession.create(store, config(**kw))
    assert not store.exists() or LabelingSession.list_sessions(store) == []


# ---- persistence: kill and reopen ---------------------------------------------------------


def test_kill_and_reopen_restores_labels_model_and_next_query(store):
    s = LabelingSession.create(store, config())
    label_queried(s, 10)
    sid, labels, hist = s.id, s.labels, s.history
    m, q = m_of(s), s.next_query()
    del s  # dropped without close(), as when the server is killed
    gc.collect()
    r = LabelingSession.open(store, sid)
    assert r.labels == labels
    assert list(r.labels) == list(labels)  # same order
    np.testing.assert_allclose(m_of(r), m, rtol=0, atol=1e-10)
    assert r.next_query() == q
    pd.testing.assert_frame_equal(r.history, hist)
    # the recorded query aside, recomputing it from the rebuilt state gives the same point
    r.close()
    with sqlite3.connect(store) as con:
        con.execute("DELETE FROM queries")
    assert LabelingSession.open(store, sid).next_query() == q


def test_reopen_after_mixed_actions(store):
    s = LabelingSession.create(store, config(strategy="random"))
    label_queried(s, 6)
    s.skip(s.next_query())
    s.accept_predictions([0, 1, 2, 3])
    s.undo()  # the whole batch
    s.add_class("other")
    pts = [i for i in range(N) if i not in s.labels][:3]
    s.label(pts[0], "other", source="chosen")
    s.set_weighting("none")
    s.label(pts[1], truth(s, pts[1]), source="chosen")
    s.skip(pts[2])
    s.undo()
    s.set_lam(0.3)
    s.set_strategy("arls")
    state = (s.labels, s.skipped, s.classes, s.config, m_of(s), s.next_query(), s.n_events)
    r = LabelingSession.open(store, s.id)
    assert r.labels == state[0] and r.skipped == state[1] and r.classes == state[2]
    assert r.config == state[3]
    np.testing.assert_allclose(m_of(r), state[4], rtol=0, atol=1e-10)
    assert r.next_query() == state[5] and r.n_events == state[6]
    assert LabelingSession.list_sessions(store)[0].n_labeled == len(state[0])


def test_next_query_depends_only_on_seed_and_events(store):
    a = LabelingSession.create(store, config(strategy="random"))
    b = LabelingSession.create(store, config(strategy="random"))
    assert a.next_query() == b.next_query()  # same seed, same (empty) log
    c = LabelingSession.create(store, config(strategy="random", seed=4))
    qs = {LabelingSession.create(store, config(strategy="random", seed=k)).next_query() for k in range(8)}
    assert len(qs) > 1 and c.next_query() in range(N)
    q = a.next_query()
    assert all(a.next_query() == q for _ in range(3))  # cached, no generator state


# ---- label, stale clicks, undo -----------------------------------------------------------


def test_label_is_stored_before_the_learner_updates(store, monkeypatch):
    s = LabelingSession.create(store, config())
    q = s.next_query()
    seen = []
    add = s.learner.add

    def spy(i, label):
        seen.append(n_events_on_disk(store, s.id))
        return add(i, label)

    monkeypatch.setattr(s.learner, "add", spy)
    assert s.label(q, truth(s, q), expected_query=q)
    assert seen == [1]


def test_stale_and_repeated_clicks_are_ignored(store):
    s = LabelingSession.create(store, config())
    q = s.next_query()
    assert s.label(q, truth(s, q), expected_query=q)
    events, m = s.n_events, m_of(s)
    assert not s.label(q, truth(s, q), expected_query=q)  # double click
    assert not s.label(q, truth(s, q), source="chosen")  # already labelled
    other = next(i for i in range(N) if i not in s.labels and i != s.next_query())
    assert not s.label(other, truth(s, other), expected_query=q)  # the query has moved on
    assert not s.label(other, truth(s, other), expected_query=other)  # never was the query
    assert s.n_events == events == n_events_on_disk(store, s.id)
    assert np.array_equal(m_of(s), m)
    assert s.label(other, truth(s, other), source="chosen")  # a deliberate pick still works


def test_undo_equals_never_having_labelled(store):
    # width and lam fixed: this checks the exact downdate (an undo reverts labels, not re-tunes)
    fixed = {"width": False, "lam": False}
    a = LabelingSession.create(store, config(weighting="none", auto_tune=fixed))
    b = LabelingSession.create(store, config(weighting="none", auto_tune=fixed))
    first = label_queried(a, 5)
    for i in first:
        b.label(i, truth(b, i), source="chosen")
    q = a.next_query()
    a.label(q, truth(a, q))
    assert a.undo() == q
    assert a.labels == b.labels
    np.testing.assert_allclose(m_of(a), m_of(b), rtol=0, atol=1e-10)
    np.testing.assert_allclose(m_of(a), direct_m(a, first), rtol=0, atol=1e-10)
    # a bulk accept is one undo step
    batch = [i for i in range(N) if i not in a.labels][:7]
    assert a.accept_predictions(batch) == 7
    assert a.n_labeled == 12
    assert a.undo() == batch[-1]
    assert a.labels == b.labels
    np.testing.assert_allclose(m_of(a), m_of(b), rtol=0, atol=1e-10)
    pd.testing.assert_frame_equal(
        a.history.drop(columns=["timestamp", "source"]), b.history.drop(columns=["timestamp", "source"])
    )


def test_undo_balanced_weighting_against_fresh_session(store):
    # no re-tunes: an undo reverts labels, not a width the extra labels moved (README)
    fixed = {"width": False, "lam": False}
    a = LabelingSession.create(store, config(auto_tune=fixed))
    b = LabelingSession.create(store, config(auto_tune=fixed))
    first = label_queried(a, 8)
    for i in first:
        b.label(i, truth(b, i), source="chosen")
    extra = [i for i in range(N) if i not in a.labels][:3]
    for i in extra:
        a.label(i, truth(a, i), source="chosen")
    for _ in extra:
        a.undo()
    np.testing.assert_allclose(m_of(a), m_of(b), rtol=0, atol=1e-10)


def test_undo_skip_and_nothing_to_undo(store):
    s = LabelingSession.create(store, config(strategy="random"))
    assert s.undo() is None and s.n_events == 0
    q = s.next_query()
    assert s.skip(q) and not s.skip(q)
    assert s.skipped == [q]
    assert s.undo() == q and s.skipped == []
    assert s.undo() is None


def test_skipped_points_are_never_queried(store):
    s = LabelingSession.create(store, config(strategy="random", dataset_options={"n": 30}))
    skipped = set()
    for _ in range(10):
        q = s.next_query()
        assert q not in skipped
        s.skip(q)
        skipped.add(q)
    for _ in range(20):
        q = s.next_query()
        assert q not in skipped and q not in s.labels
        s.label(q, truth(s, q), expected_query=q)
    assert s.next_query() is None  # everything labelled or skipped
    r = LabelingSession.open(store, s.id)
    assert set(r.skipped) == skipped and r.next_query() is None


def test_accept_predictions_labels_with_predicted_class(store):
    s = LabelingSession.create(store, config())
    label_queried(s, 6)
    pred = s.predictions()["predicted"]
    todo = [i for i in range(N) if i not in s.labels][:5]
    assert s.accept_predictions(todo + todo[:2]) == 5  # repeats ignored
    assert all(s.labels[i] == pred[i] for i in todo)
    assert set(s.history["source"].iloc[-5:]) == {"accepted"}
    assert s.accept_predictions(todo) == 0  # all labelled already: nothing written
    assert s.accept_predictions([]) == 0


# ---- bad input: clear errors, nothing changed ---------------------------------------------


def unchanged(s, store, before):
    events, labels, m, classes, cfg = before
    assert s.n_events == events == n_events_on_disk(store, s.id)
    assert s.labels == labels and s.classes == classes and s.config == cfg
    assert np.array_equal(m_of(s), m)


@pytest.mark.parametrize(
    "action, exc, match",
    [
        (lambda s: s.label(0, "cat"), ValueError, "not one of the classes"),
        (lambda s: s.label(0, 1), ValueError, "not one of the classes"),
        (lambda s: s.label(N, "0"), IndexError, "out of range"),
        (lambda s: s.label(-1, "0"), IndexError, "out of range"),
        (lambda s: s.label(1.5, "0"), IndexError, "integer"),
        (lambda s: s.label(True, "0"), IndexError, "integer"),
        (lambda s: s.label(0, "0", source="guessed"), ValueError, "Unknown source"),
        (lambda s: s.label(0, "0", expected_query=N + 5), IndexError, "out of range"),
        (lambda s: s.skip(N), IndexError, "out of range"),
        (lambda s: s.accept_predictions([1, 2, N]), IndexError, "out of range"),
        (lambda s: s.accept_predictions([[1, 2]]), ValueError, "1-D"),
        (lambda s: s.add_class("0"), ValueError, "already exists"),
        (lambda s: s.add_class(" 1 "), ValueError, "already exists"),
        (lambda s: s.add_class(""), ValueError, "cannot be empty"),
        (lambda s: s.add_class("   "), ValueError, "cannot be empty"),
        (lambda s: s.add_class(None), TypeError, "must be a string"),
        (lambda s: s.set_strategy("best"), ValueError, "Unknown strategy"),
        (lambda s: s.set_weighting("inverse"), ValueError, "Unknown weighting"),
        (lambda s: s.set_weighting({"0": 1.0}), ValueError, "lacks class"),
        (lambda s: s.set_lam(-0.1), ValueError, "lam"),
        (lambda s: s.set_lam("automatic"), ValueError, "lam"),
        (lambda s: s.set_lam(1e301), ValueError, r"between 1e-300 and 1e\+300"),
        (lambda s: s.set_width(1e300), ValueError, r"between 1e-150 and 1e\+150"),
        (lambda s: s.set_width(0.0), ValueError, "width"),
        (lambda s: s.set_width(float("nan")), ValueError, "width"),
    ],
)
def test_bad_input_changes_nothing(store, action, exc, match):
    s = LabelingSession.create(store, config())
    label_queried(s, 3)
    before = (s.n_events, s.labels, m_of(s), s.classes, s.config)
    with pytest.raises(exc, match=match):
        action(s)
    unchanged(s, store, before)


def test_loo_tuning_needs_labels(store):
    s = LabelingSession.create(store, config())
    before = (s.n_events, s.labels, m_of(s), s.classes, s.config)
    for call in (lambda: s.set_lam("auto"), lambda: s.set_width("auto"), s.loo_curve):
        with pytest.raises(ValueError, match="Label more points"):
            call()
    unchanged(s, store, before)


def test_unknown_session_id(store):
    s = LabelingSession.create(store, config())
    with pytest.raises(UnknownSessionError, match="No session 'missing'"):
        LabelingSession.open(store, "missing")
    with pytest.raises(UnknownSessionError):
        LabelingSession.delete_session(store, "missing")
    assert [i.id for i in LabelingSession.list_sessions(store)] == [s.id]


def test_delete_session(store):
    a = LabelingSession.create(store, config())
    b = LabelingSession.create(store, config())
    label_queried(a, 2)
    LabelingSession.delete_session(store, a.id)
    assert [i.id for i in LabelingSession.list_sessions(store)] == [b.id]
    with pytest.raises(UnknownSessionError):
        LabelingSession.open(store, a.id)
    with pytest.raises(UnknownSessionError):  # the live object cannot write into the void
        a.label(next(i for i in range(N) if i not in a.labels), "0", source="chosen")


def test_newer_store_version_is_refused(store):
    s = LabelingSession.create(store, config())
    s.close()
    with sqlite3.connect(store) as con:
        con.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreVersionError, match="newer version"):
        LabelingSession.open(store, s.id)
    with pytest.raises(StoreVersionError):
        LabelingSession.list_sessions(store)


# ---- settings and model views ---------------------------------------------------------------


@pytest.mark.parametrize("huge", [1e20, 1e300])
def test_a_huge_lambda_and_back_leaves_the_live_model_exact(store, huge):
    """lambda 0.1 -> huge -> 0.1 with 20 labels: the live predictions used to differ from a direct
    solve on 47 of 200 points, silently; the guard now rebuilds (and says so)."""
    from core.learner import NumericalRebuildWarning

    s = LabelingSession.create(store, config(weighting="none", lam=0.1, strategy="random"))
    pts = label_queried(s, 20)
    with pytest.warns(NumericalRebuildWarning):
        s.set_lam(huge)
        s.set_lam(0.1)
    want = direct_m(s, pts, lam=0.1)
    np.testing.assert_allclose(m_of(s), want, rtol=0, atol=1e-8 * np.abs(want).max())
    assert (np.sign(m_of(s)) == np.sign(want)).all()


def test_set_lam_and_width_rebuild_and_persist(store):
    s = LabelingSession.create(store, config(weighting="none"))
    pts = label_queried(s, 12)
    s.set_lam(0.37)
    np.testing.assert_allclose(m_of(s), direct_m(s, pts, lam=0.37), rtol=0, atol=1e-10)
    s.set_width(0.9)
    np.testing.assert_allclose(m_of(s), direct_m(s, pts, lam=0.37, width=0.9), rtol=0, atol=1e-10)
    r = LabelingSession.open(store, s.id)
    assert (r.config.lam, r.config.width) == (0.37, 0.9)
    np.testing.assert_allclose(m_of(r), m_of(s), rtol=0, atol=1e-10)


def _brute_loo_error(K, y, classes, lam, w=None):
    """Oracle: refit RLS without offset n times, each time without point i (weights w)."""
    codes = np.where(np.asarray(y) == classes[1], 1.0, -1.0)
    w = np.ones(len(y)) if w is None else np.asarray(w, dtype=float)
    wrong = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        A = K[np.ix_(keep, keep)] + np.diag(lam / w[keep])
        f = K[i, keep] @ np.linalg.solve(A, codes[keep])
        wrong.append((f > 0) != (codes[i] > 0))
    return float(np.sum(w * np.array(wrong)) / np.sum(w))


def test_loo_curve_equals_brute_force_refits_and_set_lam_auto_applies_the_tuner(store):
    from core.rls.tuning import auto_tune

    s = LabelingSession.create(store, config(weighting="none", auto_tune={"width": False, "lam": False}))
    pts = label_queried(s, 12)
    y = [s.labels[i] for i in pts]
    curve = s.loo_curve()
    assert curve["current"] == DEFAULT_LAM and not curve["auto"]["lam"]
    assert np.all((curve["errors"] >= 0) & (curve["errors"] <= 1))
    for lam, err in zip(curve["lams"][::3], curve["errors"][::3]):  # the lam curve at the width in use
        K = Kernel("rbf", width=s.config.width)(s.X[pts])
        assert err == pytest.approx(_brute_loo_error(K, y, s.classes, lam), abs=1e-12)
    for width, err in zip(curve["widths"][::4], curve["width_errors"][::4]):  # the width curve at lam
        K = Kernel("rbf", width=width)(s.X[pts])
        assert err == pytest.approx(_brute_loo_error(K, y, s.classes, s.config.lam), abs=1e-12)
    ref = auto_tune(s.X[pts], y, s.classes, s.learner.class_weights, kernel=Kernel("rbf", width=s.config.width),
                    lam=s.config.lam, tune_width=False, tune_lam=True)
    s.set_lam("auto")
    assert s.config.lam == ref.lam and s.auto_tune == {"width": False, "lam": True}
    assert s.tuning_status()["auto"]["lam"]
    r = LabelingSession.open(store, s.id)
    assert r.config.lam == ref.lam and r.auto_tune["lam"]
    s.set_lam(0.3)  # a number fixes it again
    assert s.config.lam == 0.3 and not s.auto_tune["lam"]
    assert not LabelingSession.open(store, s.id).auto_tune["lam"]


def test_predictions_history_counts(store):
    s = LabelingSession.create(store, config())
    pts = label_queried(s, 8)
    assert list(s.predictions().columns) == ["id", "predicted", "confidence", "label", "source"]
    p = s.predictions(with_risk=True)
    assert list(p.columns) == ["id", "predicted", "confidence", "expected_risk", "label", "source"]
    np.testing.assert_array_equal(p["expected_risk"].to_numpy(), s.learner.expected_risk())
    assert len(p) == N
    assert np.all(np.isinf(p["expected_risk"].to_numpy()[pts]))
    unl = np.setdiff1d(np.arange(N), pts)
    assert np.all(np.isfinite(p["expected_risk"].to_numpy()[unl]))
    assert list(p["predicted"]) == [str(c) for c in s.learner.predict()]
    assert p["label"].to_numpy()[pts].tolist() == [s.labels[i] for i in pts]
    assert p["label"].to_numpy()[unl].tolist() == [None] * len(unl)
    conf = p["confidence"].to_numpy()
    assert np.all((conf >= 0.5) & (conf <= 1.0))  # binary soft confidence
    h = s.history
    assert list(h.columns) == ["order", "index", "id", "label", "source", "timestamp", "n_labeled", "estimated_risk"]
    assert h["index"].tolist() == pts and h["order"].tolist() == list(range(1, 9))
    assert h["timestamp"].is_monotonic_increasing and str(h["timestamp"].dt.tz) == "UTC"
    counts = s.class_counts()
    assert counts == {c: sum(1 for v in s.labels.values() if v == c) for c in s.classes}


def test_estimated_risk_in_history_matches_learner_at_that_time(store):
    s = LabelingSession.create(store, config())
    risks = []
    for _ in range(5):
        label_queried(s, 1)
        risks.append(float(s.learner.estimated_risk()))
    assert s.history["estimated_risk"].tolist() == risks


def test_confidence_bins_from_loo_and_points_in_bin(store):
    s = LabelingSession.create(store, config(weighting="none"))
    pts = label_queried(s, 15)
    bins = s.confidence_bins(n_bins=5)
    assert int(np.sum(bins.counts)) == 15
    # oracle: LOO outputs by refitting without each point (direct solve)
    loo = np.array([direct_m(s, [j for j in pts if j != i])[i, 0] for i in pts])
    # the calibrated confidence (one temperature fitted on these LOO values, docs/algorithms.md §11)
    codes = np.array([s.classes.index(s.labels[i]) for i in pts])
    _, conf = fit_temperature(loo, codes).confidence(loo)
    pred = np.where(loo > 0, s.classes[1], s.classes[0])
    correct = pred == np.array([s.labels[i] for i in pts])
    edges = np.linspace(0, 1, 6)
    idx = np.clip(np.searchsorted(edges, conf, side="right") - 1, 0, 4)
    assert np.array_equal(bins.counts, np.bincount(idx, minlength=5))
    hits = np.bincount(idx, weights=correct, minlength=5)
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(bins.accuracy, hits / np.bincount(idx, minlength=5), equal_nan=True)
    # points_in_bin partitions the unlabelled points
    c = s.predictions()["confidence"].to_numpy()
    got = np.concatenate([s.points_in_bin(lo, hi) for lo, hi in zip(edges[:-1], edges[1:])])
    assert sorted(got.tolist()) == sorted(set(range(N)) - set(pts))
    top = s.points_in_bin(0.8, 1.0)
    assert np.all(c[top] >= 0.8)


def test_add_class_goes_multiclass_and_persists(store):
    s = LabelingSession.create(store, config(weighting="none"))
    pts = label_queried(s, 6)
    s.add_class("noise")
    assert s.classes == ["0", "1", "noise"]
    free = [i for i in range(N) if i not in s.labels][:2]
    for i in free:
        assert s.label(i, "noise", source="chosen")
    np.testing.assert_allclose(m_of(s), direct_m(s, pts + free), rtol=0, atol=1e-10)
    assert s.class_counts()["noise"] == 2
    r = LabelingSession.open(store, s.id)
    assert r.classes == s.classes
    np.testing.assert_allclose(m_of(r), m_of(s), rtol=0, atol=1e-10)


# ---- two tabs ------------------------------------------------------------------------------


def test_two_tabs_on_one_session(store):
    a = LabelingSession.create(store, config())
    b = LabelingSession.open(store, a.id)
    q = b.next_query()
    assert a.next_query() == q
    assert a.label(q, truth(a, q), expected_query=q)
    # tab b still shows q: its click is stale once it sees a's label
    assert not b.label(q, truth(b, q), expected_query=q)
    assert b.labels == a.labels
    free = next(i for i in range(N) if i not in a.labels)
    assert b.label(free, truth(b, free), source="chosen")
    a.refresh()
    assert a.labels == b.labels and a.n_events == b.n_events == 2
    np.testing.assert_allclose(m_of(a), m_of(b), rtol=0, atol=1e-10)
    assert a.next_query() == b.next_query()
    assert a.undo() == free
    assert b.refresh() and b.labels == a.labels


# ---- export through the session ------------------------------------------------------------


def test_export_csv_reads_back(store, tmp_path):
    s = LabelingSession.create(store, config())
    label_queried(s, 5)
    s.accept_predictions([i for i in range(N) if i not in s.labels][:2])
    path = s.export(tmp_path / "labels.csv")
    back = pd.read_csv(path)
    h = s.history
    assert back["id"].tolist() == h["id"].tolist()
    assert back["label"].astype(str).tolist() == h["label"].tolist()
    assert back["source"].tolist() == h["source"].tolist()
    assert back["order"].tolist() == h["order"].tolist()
    assert pd.to_datetime(back["timestamp"], utc=True).tolist() == h["timestamp"].tolist()
    X = np.asarray(s.dataset.X)
    for j, name in enumerate(s.dataset.feature_names):
        assert back[name].tolist() == X[h["index"], j].tolist()  # raw features, exact


def test_export_with_predictions_has_every_point(store, tmp_path):
    s = LabelingSession.create(store, config())
    pts = label_queried(s, 4)
    path = s.export(tmp_path / "all.jsonl", include_predictions=True)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    p = s.predictions()
    assert len(rows) == N
    for i, row in enumerate(rows):
        # moons' classes are ints: the export writes them as ints (the session names them "0", "1")
        assert row["predicted"] == int(p["predicted"][i]) and row["confidence"] == p["confidence"][i]
        if i in s.labels:
            assert row["label"] == int(s.labels[i]) and row["order"] == pts.index(i) + 1
        else:
            assert row["label"] is None and row["order"] is None and row["source"] is None


def test_zip_export_needs_images(store, tmp_path):
    s = LabelingSession.create(store, config())
    with pytest.raises(Exception, match="no images"):
        s.export(tmp_path / "x.zip")
    assert not (tmp_path / "x.zip").exists()
    with pytest.raises(Exception, match="Unknown export format"):
        s.export(tmp_path / "x.csv", format="xls")


# ---- data sets other than moons ----------------------------------------------------------


def test_auto_settings_from_dataset_params(store):
    s = LabelingSession.create(store, config(standardize=False))
    assert (s.config.width, s.config.lam) == (0.5, 0.1)  # moons' recommended values (raw scale)
    assert s.auto_settings == {"width": "data set recommendation", "lam": "data set recommendation"}
    assert np.array_equal(s.X, s.dataset.X)


def test_image_dataset_zip_export(store, tmp_path):
    import io
    import zipfile

    from PIL import Image

    s = LabelingSession.create(store, SessionConfig(dataset="digits", dataset_options={"n": 40}, seed=1))
    pts = label_queried(s, 6)
    acc = [i for i in range(40) if i not in s.labels][:3]
    s.accept_predictions(acc)
    path = s.export(tmp_path / "digits.zip")
    ids = s.dataset.ids
    with zipfile.ZipFile(path) as zf:
        expected = sorted([f"{s.labels[i]}/{ids[i]}.png" for i in pts + acc] + ["labels.csv"])
        assert sorted(zf.namelist()) == expected
        for i in pts + acc:
            with Image.open(io.BytesIO(zf.read(f"{s.labels[i]}/{ids[i]}.png"))) as im:
                assert np.array_equal(np.asarray(im), s.dataset.images[i])
        manifest = pd.read_csv(io.BytesIO(zf.read("labels.csv")))
    assert manifest["id"].tolist() == [ids[i] for i in pts + acc]
    assert manifest["source"].tolist() == ["queried"] * 6 + ["accepted"] * 3
    assert manifest["label_original"].tolist() == [int(s.dataset.y[i]) for i in pts + acc]


def write_points(path, rows=50, bump=0.0):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({
        "a": rng.normal(size=rows), "b": rng.normal(size=rows), "c": rng.integers(0, 5, rows),
        "name": [f"r{i}" for i in range(rows)],
    })
    df.loc[7, "a"] += bump
    df.to_csv(path, index=False)
    return df


def test_unlabelled_csv_dataset_and_changed_file(store, tmp_path):
    csv = tmp_path / "points.csv"
    df = write_points(csv)
    s = LabelingSession.create(store, SessionConfig(dataset=str(csv), dataset_options={"id_col": "name"}))
    assert s.classes == ["negative", "positive"]
    s.add_class("unsure")
    s.label(3, "positive", source="chosen")
    s.label(9, "unsure", source="chosen")
    s.label(4, "negative", source="chosen")
    back = pd.read_csv(s.export(tmp_path / "out.csv"))
    assert back["id"].tolist() == ["r3", "r9", "r4"]
    assert back["label"].tolist() == ["positive", "unsure", "negative"]
    for col in ("a", "b", "c"):
        assert back[col].tolist() == df[col].to_numpy()[[3, 9, 4]].tolist()
    sid = s.id
    s.close()
    write_points(csv, bump=1e-9)  # the file changes under the session
    with sqlite3.connect(store) as con:
        before = con.execute("SELECT count(*) FROM events").fetchone()[0]
    with pytest.raises(ValueError, match="has changed since session"):
        LabelingSession.open(store, sid)
    with sqlite3.connect(store) as con:
        assert con.execute("SELECT count(*) FROM events").fetchone()[0] == before
    write_points(csv)  # restored: opens again
    assert LabelingSession.open(store, sid).labels == {3: "positive", 9: "unsure", 4: "negative"}


def test_reopen_works_from_another_directory(store, tmp_path, monkeypatch):
    sub = tmp_path / "data"
    sub.mkdir()
    write_points(sub / "p.csv")
    monkeypatch.chdir(sub)
    s = LabelingSession.create(store, SessionConfig(dataset="p.csv", dataset_options={"id_col": "name"}))
    s.label(0, "positive", source="chosen")
    monkeypatch.chdir(tmp_path)
    assert LabelingSession.open(store, s.id).labels == {0: "positive"}


# ---- a real kill ---------------------------------------------------------------------------

_KILLED = r"""
import json, os, signal, sys
import numpy as np
sys.path.insert(0, {root!r})
from labeler.session import LabelingSession, SessionConfig
s = LabelingSession.create({store!r}, SessionConfig(dataset="moons", dataset_options={{"n": {n}}}, seed=3))
for _ in range(10):
    q = s.next_query()
    s.label(q, str(s.dataset.y[q]), expected_query=q)
s.skip(s.next_query())
m = s.learner.decision_values
print(json.dumps({{"id": s.id, "labels": {{str(k): v for k, v in s.labels.items()}},
                  "m": [float(v) for v in m.ravel()], "next": s.next_query()}}), flush=True)
os.kill(os.getpid(), signal.SIGKILL)  # no close(), no atexit, no finalizers
"""


def test_sigkilled_process_loses_nothing(store):
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    code = _KILLED.format(root=root, store=str(store), n=N)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == -9, proc.stderr
    out = json.loads(proc.stdout)
    r = LabelingSession.open(store, out["id"])
    assert {str(k): v for k, v in r.labels.items()} == out["labels"]
    m = m_of(r).ravel()
    np.testing.assert_allclose(m, out["m"], rtol=0, atol=1e-10)
    assert r.next_query() == out["next"]


def test_tabs_agree_on_the_recorded_query(store):
    a = LabelingSession.create(store, config(strategy="random"))
    b = LabelingSession.open(store, a.id)
    with sqlite3.connect(store) as con:
        con.execute("INSERT INTO queries VALUES (?, 0, 17, ?)",  # as if another tab chose 17
                    (a.id, query_digest(a.id, 0, 17)))
    assert a.next_query() == b.next_query() == 17
    a.label(17, truth(a, 17), expected_query=17)
    b.refresh()
    assert a.next_query() == b.next_query() != 17


def test_invalid_recorded_query_is_ignored(store):
    s = LabelingSession.create(store, config())
    label_queried(s, 3)
    sid, q = s.id, s.next_query()
    s.close()
    labelled = next(iter(s.labels))
    with sqlite3.connect(store) as con:
        con.execute("UPDATE queries SET idx = ? WHERE session_id = ?", (labelled, sid))
    assert LabelingSession.open(store, sid).next_query() == q


def test_accepted_batch_shares_the_risk_after_the_batch(store):
    s = LabelingSession.create(store, config())
    label_queried(s, 4)
    s.accept_predictions([i for i in range(N) if i not in s.labels][:3])
    h = s.history
    assert h["estimated_risk"].iloc[-3:].tolist() == [float(s.learner.estimated_risk())] * 3
    assert np.isfinite(h["estimated_risk"]).all()


def test_auto_tuning_under_balanced_weights_keeps_the_learner_exact(store):
    s = LabelingSession.create(store, config(dataset="moons-imbalanced", dataset_options={"n": 110}))
    assert s.auto_tune == {"width": True, "lam": True}  # the default: both "auto"
    pts = label_queried(s, 15)
    y = np.array([s.labels[i] for i in pts])
    weights = s.learner.class_weights
    assert len(set(weights.values())) == 2  # the classes really are weighted differently
    # whatever the re-tunes chose, the learner is ARLS at the values in use:
    # m = K_XL (K_LL + lam diag(1/w))^-1 Y_L
    K = Kernel("rbf", width=s.config.width)(s.X)
    w = np.array([weights[c] for c in y])
    Y = np.where(y == s.classes[1], 1.0, -1.0)[:, None]
    m = K[:, pts] @ np.linalg.solve(K[np.ix_(pts, pts)] + np.diag(s.config.lam / w), Y)
    np.testing.assert_allclose(m_of(s), m, rtol=0, atol=1e-10)


def test_layout_auto_uses_given_coordinates_else_pca(store, tmp_path):
    """'auto' resolves to the file's x, y columns when present, else to a PCA map (stored)."""
    rng = np.random.default_rng(5)
    feats = rng.normal(size=(60, 3))
    xy = rng.uniform(-5, 5, size=(60, 2))
    frame = pd.DataFrame({"f0": feats[:, 0], "f1": feats[:, 1], "f2": feats[:, 2],
                          "x": xy[:, 0], "y": xy[:, 1], "label": rng.integers(0, 2, 60)})
    path = tmp_path / "pool.csv"
    frame.to_csv(path, index=False)
    given = LabelingSession.create(store, SessionConfig(dataset=str(path)))
    assert given.config.layout == "given"
    np.testing.assert_allclose(given.layout, xy, rtol=0, atol=1e-12)

    frame.drop(columns=["x", "y"]).to_csv(path, index=False)
    pca = LabelingSession.create(store, SessionConfig(dataset=str(path)))
    assert pca.config.layout == "pca"
    assert pca.layout.shape == (60, 2)
    reopened = LabelingSession.open(store, pca.id)
    assert reopened.config.layout == "pca"
    np.testing.assert_array_equal(reopened.layout, pca.layout)


# ---- stale clicks on undo, skip and accept (decided inside the commit) ---------------------


def test_undo_with_expected_action_undoes_one_action_per_press(store):
    s = LabelingSession.create(store, config())
    pts = label_queried(s, 3)
    shown = s.last_action
    assert shown > 0
    assert s.undo(expected_action=shown) == pts[-1]
    events, m = s.n_events, m_of(s)
    assert s.undo(expected_action=shown) is None  # the same press again: stale, nothing written
    assert s.n_events == events == n_events_on_disk(store, s.id) and np.array_equal(m_of(s), m)
    assert s.labels == {i: truth(s, i) for i in pts[:2]}
    assert s.undo(expected_action=0) is None  # drawn when there was nothing to undo
    assert s.undo(expected_action=s.last_action) == pts[1]
    with pytest.raises(ValueError, match="expected_action"):
        s.undo(expected_action="1")
    assert s.undo() == pts[0] and s.last_action == 0  # no check without expected_action
    assert s.undo(expected_action=0) is None


def test_undo_from_a_stale_tab_is_refused_after_catching_up(store):
    a = LabelingSession.create(store, config())
    label_queried(a, 2)
    b = LabelingSession.open(store, a.id)
    shown = b.last_action  # tab b draws its Undo button
    label_queried(a, 1)  # tab a labels another point
    assert b.undo(expected_action=shown) is None  # would undo a's label, never seen by b
    assert b.labels == a.labels and b.n_events == a.n_events == n_events_on_disk(store, a.id)


def test_skip_with_expected_query_is_checked_inside_the_commit(store):
    a = LabelingSession.create(store, config())
    label_queried(a, 4)
    b = LabelingSession.open(store, a.id)
    q = b.next_query()  # tab b shows q
    # tab a labels a point other than q that moves the query on
    for p in (i for i in range(N) if i not in a.labels and i != q):
        before = a.n_events
        a.label(p, truth(a, p), source="chosen")
        if a.next_query() != q:
            break
        a.undo()
        assert a.n_events == before + 2
    assert a.next_query() != q
    assert not b.skip(q, expected_query=q)  # stale once b has caught up: nothing written
    assert b.skipped == [] and b.n_events == a.n_events == n_events_on_disk(store, a.id)
    q2 = b.next_query()
    assert b.skip(q2, expected_query=q2) and b.skipped == [q2]
    assert not b.skip(q2, expected_query=q2)


def test_accept_uses_the_shown_labels_and_refuses_a_changed_state(store):
    s = LabelingSession.create(store, config())
    label_queried(s, 6)
    todo = [i for i in range(N) if i not in s.labels][:4]
    predicted = s.predictions()["predicted"]
    other = {c: next(d for d in s.classes if d != c) for c in s.classes}
    shown = [other[predicted[i]] for i in todo]  # what the page showed (here: not the prediction)
    version = s.n_events
    free = next(i for i in range(N) if i not in s.labels and i not in todo)
    s.label(free, truth(s, free), source="chosen")  # the state moves on
    events, m = s.n_events, m_of(s)
    assert s.accept_predictions(todo, labels=shown, expected_version=version) == 0
    assert s.n_events == events == n_events_on_disk(store, s.id) and np.array_equal(m_of(s), m)
    assert s.accept_predictions(todo, labels=shown, expected_version=s.n_events) == 4
    assert [s.labels[i] for i in todo] == shown  # the shown classes, not learner.predict()
    s.undo()
    assert s.accept_predictions(todo, labels=dict(zip(todo, shown))) == 4
    assert [s.labels[i] for i in todo] == shown


def test_accept_from_a_stale_tab_is_refused_after_catching_up(store):
    a = LabelingSession.create(store, config())
    label_queried(a, 5)
    b = LabelingSession.open(store, a.id)
    version = b.n_events
    todo = [i for i in range(N) if i not in b.labels][:3]
    shown = [str(b.predictions()["predicted"][i]) for i in todo]
    label_queried(a, 1)
    assert b.accept_predictions(todo, labels=shown, expected_version=version) == 0
    assert b.n_events == a.n_events == n_events_on_disk(store, a.id)


@pytest.mark.parametrize(
    "kw, match",
    [
        ({"labels": ["0"]}, "one label per index"),
        ({"labels": ["0", "bird"]}, "not one of the classes"),
        ({"labels": {5: "0"}}, "no class for point"),
        ({"expected_version": "3"}, "expected_version"),
        ({"expected_version": -1}, "expected_version"),
    ],
)
def test_accept_bad_shown_labels_or_version(store, kw, match):
    s = LabelingSession.create(store, config())
    label_queried(s, 3)
    before = (s.n_events, s.labels, m_of(s), s.classes, s.config)
    with pytest.raises(ValueError, match=match):
        s.accept_predictions([5, 6], **kw)
    unchanged(s, store, before)


# ---- settings: in place, config only after the learner ------------------------------------


def test_set_lam_and_width_update_the_learner_in_place(store):
    s = LabelingSession.create(store, config())
    label_queried(s, 10)
    learner, C = s.learner, s.learner.posterior._C
    s.set_lam(0.23)
    s.set_width(0.7)
    assert s.learner is learner and s.learner.posterior._C is C  # no second n x n matrix
    assert (learner.lam, learner.kernel.width) == (0.23, 0.7) == (s.config.lam, s.config.width)
    fresh = LabelingSession.open(store, s.id)  # rebuilt from the log with the final settings
    np.testing.assert_allclose(m_of(s), m_of(fresh), rtol=0, atol=1e-10)
    np.testing.assert_allclose(s.learner.posterior_variance(), fresh.learner.posterior_variance(),
                               rtol=0, atol=1e-10)


@pytest.mark.parametrize("setter, method, value", [("set_lam", "set_lam", 0.5), ("set_width", "set_kernel", 0.4)])
def test_failed_learner_update_leaves_config_and_learner_agreeing(store, monkeypatch, setter, method, value):
    s = LabelingSession.create(store, config())
    label_queried(s, 6)
    cfg, m = s.config, m_of(s)

    def fail(*args, **kw):
        raise MemoryError("simulated")

    monkeypatch.setattr(s.learner, method, fail)
    with pytest.raises(MemoryError):
        getattr(s, setter)(value)
    assert s.config == cfg and np.array_equal(m_of(s), m)
    assert s.learner.lam == s.config.lam and s.learner.kernel.width == s.config.width


def test_set_lam_auto_reuses_the_cached_loo_fit(store, monkeypatch):
    from labeler.session import model as session_model

    s = LabelingSession.create(store, config(weighting="none"))
    label_queried(s, 12)
    chosen = s.loo_curve()["lam"]  # drawn by the Progress tab: the fit is cached

    def refit(*args, **kw):
        raise AssertionError("LOO refitted although the fit of this state was cached")

    monkeypatch.setattr(session_model, "tune", refit)
    s.set_lam("auto")
    assert s.config.lam == chosen


# ---- expected risk only when asked -----------------------------------------------------------


@pytest.mark.parametrize("strategy", ["margin", "random"])
def test_expected_risk_is_computed_only_when_asked(store, monkeypatch, strategy):
    s = LabelingSession.create(store, config(strategy=strategy))
    label_queried(s, 4)
    real, calls = s.learner.expected_risk, []

    def counting(*args, **kw):
        calls.append(1)
        return real(*args, **kw)

    monkeypatch.setattr(s.learner, "expected_risk", counting)
    s.next_query()
    table = s.predictions()
    assert "expected_risk" not in table and calls == []
    E = s.expected_risk()
    assert len(calls) == 1
    np.testing.assert_array_equal(s.predictions(with_risk=True)["expected_risk"].to_numpy(), E)
    np.testing.assert_array_equal(s.expected_risk(), E)
    assert len(calls) == 1  # cached per state
    label_queried(s, 1)
    s.predictions()
    assert len(calls) == 1
    assert not np.array_equal(s.expected_risk(), E) and len(calls) == 2


# ---- width from core, core modules imported directly -----------------------------------------


def test_auto_width_uses_core_default_widths(store, monkeypatch):
    from core.rls import default_widths
    from labeler.session import model as session_model

    from core.kernels import median_distance

    from core.rls.width_scale import WidthScale, width_scale

    s = LabelingSession.create(store, config(dataset_options={"n": 60}))
    assert s.config.width == median_distance(s.X)  # core's one median distance ...
    assert s.config.width == default_widths(s.X)[6]  # ... the centre of the width grid (factor 2**0)
    assert np.any(np.isclose(width_scale(s.X).widths, s.config.width, rtol=1e-12, atol=0))  # ... on the pool's grid
    grid = default_widths(np.random.default_rng(0).standard_normal((30, 2)))
    monkeypatch.setattr(session_model, "_width_scale", lambda X, **kw: WidthScale(widths=grid, median=1.0))
    label_queried(s, 8)
    seen = []
    real = session_model.auto_tune
    monkeypatch.setattr(session_model, "auto_tune", lambda *a, **kw: seen.append(kw.get("scale")) or real(*a, **kw))
    s.set_width(1.0)
    s.set_width("auto")
    assert any(sc is not None and sc.widths is grid for sc in seen)
    monkeypatch.undo()
    # a stored (resolved) width is never re-resolved: reopening gives the same state
    r = LabelingSession.open(store, s.id)
    assert r.config.width == s.config.width
    np.testing.assert_allclose(m_of(r), m_of(s), rtol=0, atol=1e-10)


def test_median_width_is_the_median_pairwise_distance():
    from scipy.spatial.distance import pdist

    from core.kernels import median_distance
    from labeler.session import model

    X = np.random.default_rng(5).standard_normal((200, 3))
    assert median_distance(X) == float(np.median(pdist(X)))
    assert not hasattr(model, "median_distance")  # one median distance: core's
    with pytest.raises(ValueError, match="explicit width="):
        median_distance(np.zeros((5, 2)))


def test_no_adapters_core_modules_used_directly():
    import labeler.session as session_module

    for name in ("_strategies", "_query", "_load_dataset", "_make_learner", "_WIDTH_FACTORS", "_MEDIAN_POINTS"):
        assert not hasattr(session_module, name), name


def test_a_skipped_point_labelled_later_does_not_end_the_queries(store):
    s = LabelingSession.create(store, config(strategy="random", dataset_options={"n": 30}))
    q = s.next_query()
    assert s.skip(q, expected_query=q)
    assert s.label(q, truth(s, q), source="chosen")  # skipped, then labelled by choice
    for i in [i for i in range(30) if i != q][:-1]:
        s.label(i, truth(s, i), source="chosen")
    last = next(i for i in range(30) if i not in s.labels)
    assert s.next_query() == last  # labels + skips = 30, but one point is still open
    s.label(last, truth(s, last), expected_query=last)
    assert s.next_query() is None


# ---- kernel features: PCA, standardisation of image data ------------------------------------

DIGITS = {"dataset": "digits", "dataset_options": {"n": 150}}


def test_pca_features_shape_and_bit_identical_on_reopen(store):
    from labeler.data.preprocessing import pca_reduce

    s = LabelingSession.create(store, SessionConfig(**DIGITS, seed=4, pca_components=6, weighting="none"))
    assert s.config.pca_components == 6 and s.config.standardize is False
    assert s.X.shape == (150, 6)
    raw = np.asarray(s.dataset.X, dtype=np.float64)
    assert np.array_equal(s.X, pca_reduce(raw, 6, seed=4)[0])  # recomputation: same bits
    label_queried(s, 8)
    X, m, q, sid = s.X.copy(), m_of(s), s.next_query(), s.id
    assert np.allclose(m, direct_m(s, list(s.labels)), atol=1e-10)  # the model uses the PCA features
    s.close()
    with LabelingSession.open(store, sid) as t:
        assert np.array_equal(t.X, X)
        assert t.next_query() == q
        assert np.allclose(m_of(t), m, atol=1e-10)
    # the stored projection is used on reopening; without it, it is recomputed identically
    with sqlite3.connect(store) as con:
        assert con.execute("SELECT COUNT(*) FROM arrays WHERE name = 'features-pca'").fetchone()[0] == 1
        con.execute("DELETE FROM arrays WHERE name = 'features-pca'")
    with LabelingSession.open(store, sid) as t:
        assert np.array_equal(t.X, X)


def test_pca_on_standardised_columns(store):
    from labeler.data.preprocessing import pca_reduce, standardize

    s = LabelingSession.create(store, config(pca_components=1))
    assert s.config.standardize is True and s.X.shape == (N, 1)
    assert np.array_equal(s.X, pca_reduce(standardize(np.asarray(s.dataset.X, float))[0], 1, seed=3)[0])
    # the data set's recommended width is for the full features: the width is the median
    from scipy.spatial.distance import pdist

    assert s.auto_settings["width"] == "median pairwise distance"
    assert s.config.width == float(np.median(pdist(s.X)))


@pytest.mark.parametrize("k", [0, -1, 3, 2.5, True, "2"])
def test_bad_pca_components_is_refused_and_writes_nothing(store, k):
    with pytest.raises(ValueError, match="pca_components"):
        LabelingSession.create(store, config(pca_components=k))  # moons: d = 2
    assert LabelingSession.list_sessions(store) == []


def test_image_data_is_not_standardised_by_default_and_does_not_warn(store, recwarn):
    s = LabelingSession.create(store, SessionConfig(**DIGITS, seed=1))
    assert not [w for w in recwarn if "constant" in str(w.message).lower()], [str(w.message) for w in recwarn]
    assert s.config.standardize is False
    assert "image" in s.auto_settings["standardize"]
    assert np.array_equal(s.X, np.asarray(s.dataset.X, dtype=np.float64))
    # stored resolved: reopening does not re-decide
    with Store(store) as st:
        assert st.session(s.id).config["standardize"] is False
    # asked explicitly, the pixels are standardised (and the constant border pixels warn)
    with pytest.warns(UserWarning):
        t = LabelingSession.create(store, SessionConfig(**DIGITS, seed=1, standardize=True))
    assert t.config.standardize is True and "standardize" not in t.auto_settings
    assert LabelingSession.create(store, config()).config.standardize is True  # not images


def test_bad_standardize_is_refused(store):
    with pytest.raises(ValueError, match="standardize"):
        LabelingSession.create(store, config(standardize="yes"))
    assert LabelingSession.list_sessions(store) == []


# ---- initial true labels ----------------------------------------------------------------------


def test_initial_labels_count_stratified_source_and_model(store):
    s = LabelingSession.create(store, config(initial_labels=10, weighting="none"))
    with sqlite3.connect(store) as con:  # the first re-tune runs on the initial labels
        n_settings = con.execute("SELECT COUNT(*) FROM events WHERE kind = 'setting'").fetchone()[0]
    assert s.n_labeled == 10 and s.n_events == 10 + n_settings
    assert all(lab == truth(s, i) for i, lab in s.labels.items())
    assert set(s.labels.values()) == set(s.classes)
    assert list(s.history["source"]) == ["initial"] * 10
    table = s.predictions()
    assert (table.loc[list(s.labels), "source"] == "initial").all()
    exported = s.export_table()
    assert list(exported["source"]) == ["initial"] * 10
    assert np.allclose(m_of(s), direct_m(s, list(s.labels)), atol=1e-10)  # oracle: direct solve
    q = s.next_query()
    assert q is not None and q not in s.labels
    # later labels keep their own source
    s.label(q, truth(s, q), expected_query=q)
    assert list(s.history["source"]) == ["initial"] * 10 + ["queried"]
    # stored as "accept" events of one action whose source column says "initial" (schema v3)
    with sqlite3.connect(store) as con:
        rows = con.execute(
            "SELECT DISTINCT action, source, value FROM events WHERE kind = 'accept'"
        ).fetchall()
    assert rows == [(1, "initial", None)]


def test_initial_labels_every_class_when_possible(store):
    s = LabelingSession.create(store, SessionConfig(**DIGITS, seed=2, initial_labels=12))
    counts = s.class_counts()
    assert sum(counts.values()) == 12 and min(counts.values()) >= 1 and len(counts) == 10
    t = LabelingSession.create(store, SessionConfig(**DIGITS, seed=2, initial_labels=3))
    assert t.n_labeled == 3 and len(set(t.labels.values())) == 3  # 3 distinct classes of 10
    again = LabelingSession.create(store, SessionConfig(**DIGITS, seed=2, initial_labels=12))
    assert again.labels == s.labels  # seeded


def test_initial_labels_are_one_undo_step(store):
    plain = LabelingSession.create(store, config(seed=5))
    s = LabelingSession.create(store, config(seed=5, initial_labels=7))
    assert s.can_undo
    s.undo(expected_action=s.last_action)
    assert s.n_labeled == 0 and not s.can_undo
    assert np.allclose(m_of(s), m_of(plain), atol=1e-12)


def test_initial_labels_resume_exactly(store):
    s = LabelingSession.create(store, SessionConfig(**DIGITS, seed=6, initial_labels=10, pca_components=8))
    label_queried(s, 3)
    labels, m, q, sid = s.labels, m_of(s), s.next_query(), s.id
    hist = s.history[["index", "label", "source"]]
    s.close()
    with LabelingSession.open(store, sid) as t:
        assert t.config.initial_labels == 10
        assert t.labels == labels and t.next_query() == q
        assert np.allclose(m_of(t), m, atol=1e-10)
        pd.testing.assert_frame_equal(t.history[["index", "label", "source"]], hist)
        for _ in range(3):
            t.undo()
        assert t.n_labeled == 10  # the initial labels: one more undo step
        assert set(t.history["source"]) == {"initial"}
        t.undo()
        assert t.n_labeled == 0


def test_initial_labels_need_true_labels(store, tmp_path):
    path = tmp_path / "pool.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame(rng.normal(size=(30, 2)), columns=["a", "b"]).to_csv(path, index=False)
    with pytest.raises(ValueError, match="true labels"):
        LabelingSession.create(store, SessionConfig(dataset=str(path), initial_labels=5))
    with pytest.raises(ValueError, match="pool size"):
        LabelingSession.create(store, config(initial_labels=N + 1))
    with pytest.raises(ValueError, match="not among the session's classes"):
        LabelingSession.create(store, config(initial_labels=4, classes=["a", "b"]))
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match="initial_labels"):
            LabelingSession.create(store, config(initial_labels=bad))
    assert LabelingSession.list_sessions(store) == []
    assert LabelingSession.create(store, SessionConfig(dataset=str(path))).n_labeled == 0  # 0: fine


def test_initial_labels_from_image_folder_names(store, tmp_path):
    from PIL import Image

    rng = np.random.default_rng(0)
    for cls in ("cat", "dog"):
        (tmp_path / "imgs" / cls).mkdir(parents=True)
        for k in range(6):
            img = np.zeros((8, 8), dtype=np.uint8)  # constant border
            img[2:6, 2:6] = rng.integers(0, 256, size=(4, 4)) // (2 if cls == "cat" else 1)
            Image.fromarray(img).save(tmp_path / "imgs" / cls / f"{cls}{k}.png")
    s = LabelingSession.create(store, SessionConfig(dataset=str(tmp_path / "imgs"), initial_labels=4))
    assert s.config.standardize is False
    assert s.n_labeled == 4 and set(s.labels.values()) == {"cat", "dog"}
    assert all(lab == truth(s, i) for i, lab in s.labels.items())


def test_confidence_bins_leave_out_accepted_predictions(store):
    """Accepted labels are the model's own guesses: the calibration chart ignores them."""
    s = LabelingSession.create(store, config(weighting="none"))
    pts = label_queried(s, 12)
    before = s.confidence_bins(n_bins=5)
    unlabelled = [i for i in range(N) if i not in s.labels][:40]
    assert s.accept_predictions(unlabelled) == 40
    after = s.confidence_bins(n_bins=5)
    assert int(np.sum(after.counts)) == len(pts) == 12
    # the kept points' LOO outputs changed (the model now has 52 labels), so compare with an
    # oracle: LOO of the 12 human labels within the 52-label model, by direct solves
    labelled = list(s.labels)
    loo = np.array([direct_m(s, [j for j in labelled if j != i])[i, 0] for i in pts])
    codes = np.array([s.classes.index(s.labels[i]) for i in pts])
    _, conf = fit_temperature(loo, codes).confidence(loo)  # fitted on the human labels alone
    idx = np.clip(np.searchsorted(np.linspace(0, 1, 6), conf, side="right") - 1, 0, 4)
    assert np.array_equal(after.counts, np.bincount(idx, minlength=5))
    assert int(np.sum(before.counts)) == 12


def test_loo_curve_needs_two_labels_per_labelled_class(store):
    """With a class labelled once, LOO is meaningless: a clear error, not a flat curve."""
    s = LabelingSession.create(store, config(weighting="none"))
    y = s.dataset.y
    zeros = [int(i) for i in np.flatnonzero(y == y[0])[:3]]
    one = int(np.flatnonzero(y != y[0])[0])
    for i in zeros + [one]:
        s.label(i, s.classes[int(y[i])], source="chosen")
    with pytest.raises(ValueError, match="at least 2 labels of every labelled class"):
        s.loo_curve()
    other = int(np.flatnonzero(y != y[0])[1])
    s.label(other, s.classes[int(y[other])], source="chosen")
    assert np.isfinite(s.loo_curve()["lam"])


def test_export_uses_the_data_sets_own_class_values(store, tmp_path):
    """moons has int classes: exported labels are ints equal to the original label column."""
    s = LabelingSession.create(store, config(weighting="none"))
    pts = label_queried(s, 6)
    path = s.export(tmp_path / "labels.parquet", include_predictions=True)
    df = pd.read_parquet(path)
    done = df[df["source"].notna() & (df["source"] != "")]
    assert len(done) == len(pts)
    assert str(df["label"].dtype) == "Int64" and str(df["predicted"].dtype) == "Int64"
    assert (done["label"].to_numpy(dtype=np.int64) == done["label_original"].to_numpy()).all()
    assert df["label"].isna().sum() == N - len(pts)
    assert set(df["predicted"].unique()) <= {0, 1}
    s.add_class("maybe")  # a class the data set does not have: strings for every label
    df2 = pd.read_parquet(s.export(tmp_path / "labels2.parquet"))
    assert df2["label"].map(type).eq(str).all()


# ---- a setting the learner rejects is never stored ---------------------------------------------


def unchanged_to_rounding(s, store, before):
    """As unchanged(), but m may have been recomputed (the learner restores, then rebuilds)."""
    events, labels, m, classes, cfg = before
    assert s.n_events == events == n_events_on_disk(store, s.id)
    assert s.labels == labels and s.classes == classes and s.config == cfg
    np.testing.assert_allclose(m_of(s), m, rtol=0, atol=1e-10)


def test_a_lam_the_learner_rejects_is_refused_and_the_session_reopens(store):
    """Linear kernel, 6 labels: K_LL + 1e-300 I is not positive definite (rank 2 in 2-D)."""
    s = LabelingSession.create(store, config(kernel="linear"))
    label_queried(s, 6)
    before = (s.n_events, s.labels, m_of(s), s.classes, s.config)
    with pytest.raises(ValueError, match="not positive definite"):
        s.set_lam(1e-300)
    unchanged_to_rounding(s, store, before)
    assert s.learner.lam == s.config.lam
    r = LabelingSession.open(store, s.id)  # the log holds no such event: it reopens
    np.testing.assert_allclose(m_of(r), m_of(s), rtol=0, atol=1e-10)
    label_queried(s, 1)  # and the live session goes on
    s.set_lam(0.5)
    assert LabelingSession.open(store, s.id).config.lam == 0.5


def test_weights_the_learner_rejects_are_refused(store):
    s = LabelingSession.create(store, config(kernel="linear", lam=1e-3))
    label_queried(s, 6)
    before = (s.n_events, s.labels, m_of(s), s.classes, s.config)
    with pytest.raises(ValueError, match="not positive definite"):
        s.set_weighting({"0": 1e300, "1": 1e300})
    unchanged_to_rounding(s, store, before)
    assert LabelingSession.open(store, s.id).config.weighting == s.config.weighting


@pytest.mark.parametrize("width", [1e300, 1e-300])
def test_an_rbf_width_out_of_range_is_refused_up_front(store, width):
    s = LabelingSession.create(store, config())
    label_queried(s, 3)
    before = (s.n_events, s.labels, m_of(s), s.classes, s.config)
    with pytest.raises(ValueError, match="width must be between 1e-150 and 1e"):
        s.set_width(width)
    unchanged_to_rounding(s, store, before)
    with pytest.raises(ValueError, match="width must be between"):
        LabelingSession.create(store, config(width=width))


def test_a_class_the_learner_rejects_is_not_stored(store, monkeypatch):
    s = LabelingSession.create(store, config(weighting={"0": 2.0, "1": 1.0}))
    label_queried(s, 4)
    before = (s.n_events, s.labels, m_of(s), s.classes, s.config)

    def reject(name):
        raise ValueError("rejected by the learner")

    monkeypatch.setattr(s.learner, "add_class", reject)
    with pytest.raises(ValueError, match="rejected by the learner"):
        s.add_class("noise")
    monkeypatch.undo()
    unchanged_to_rounding(s, store, before)
    assert LabelingSession.open(store, s.id).classes == s.classes


@pytest.mark.parametrize("action", [
    lambda s: s.set_lam(0.37),
    lambda s: s.set_width(0.9),
    lambda s: s.set_weighting("none"),
    lambda s: s.add_class("noise"),
])
def test_a_failed_write_takes_the_setting_back_from_the_learner(store, monkeypatch, action):
    s = LabelingSession.create(store, config(weighting={"0": 2.0, "1": 1.0}))
    label_queried(s, 5)
    before = (s.n_events, s.labels, m_of(s), s.classes, s.config)

    def full(*args, **kw):
        raise OSError("disk full")

    monkeypatch.setattr(s._store, "append", full)
    with pytest.raises(OSError, match="disk full"):
        action(s)
    monkeypatch.undo()
    unchanged_to_rounding(s, store, before)
    assert s.learner.classes == s.classes and s.learner.lam == s.config.lam
    assert s.learner.kernel.width == s.config.width
    action(s)  # the write works now: applied once
    r = LabelingSession.open(store, s.id)
    assert r.config == s.config and r.classes == s.classes
    np.testing.assert_allclose(m_of(r), m_of(s), rtol=0, atol=1e-10)


@pytest.mark.parametrize("dataset, new_class", [("moons", False), ("moons-imbalanced", True)])
def test_session_and_simulate_re_tune_alike(store, dataset, new_class):
    """One rule and schedule: simulate(auto_tune=...) and a session given the same labels in the
    same order choose the same width and lam after every label (also with a class without
    labels: its one-vs-all column)."""
    from dataclasses import replace as dc_replace

    from labeler.experiments.simulate import app_settings, simulate

    s = LabelingSession.create(store, config(dataset=dataset, dataset_options={"n": 110}))
    if new_class:
        s.add_class("noise")
    a = app_settings(s.dataset, s.config.seed)
    np.testing.assert_array_equal(a["X"], s.X)
    assert (a["kernel"].width, a["lam"], a["weighting"], a["auto_tune"]) == \
        (s.config.width, s.config.lam, s.config.weighting, s.auto_tune)
    ds = s.dataset
    if new_class:  # simulate's learner gets the same three classes
        ds = dc_replace(ds, classes=list(ds.classes) + ["noise"])
    curve = simulate(ds, "arls", 40, s.config.seed, kernel=a["kernel"], lam=a["lam"], weighting=a["weighting"],
                     X=a["X"], auto_tune=a["auto_tune"])
    for i, width, lam in zip(curve["index"], curve["width"], curve["lam"]):
        s.label(int(i), truth(s, int(i)), source="chosen")
        assert (s.config.width, s.config.lam) == (width, lam)
    assert curve["width"].nunique() > 1  # the width did move


def test_standardize_auto_is_off_for_pca_components_and_on_off_strings_are_accepted(tmp_path):
    from sklearn.datasets import load_digits
    from sklearn.decomposition import PCA

    d = load_digits()
    Z = PCA(n_components=10, random_state=0).fit_transform(d.data[:300])
    frame = pd.DataFrame(Z, columns=[f"pc{j}" for j in range(10)])
    frame["label"] = d.target[:300]
    path = tmp_path / "pcs.csv"
    frame.to_csv(path, index=False)
    st = str(tmp_path / "s.sqlite")
    s = LabelingSession.create(st, SessionConfig(dataset=str(path)))
    assert s.config.standardize is False
    assert s.auto_settings["standardize"].startswith("off: components")
    assert np.allclose(s.X, Z)
    s2 = LabelingSession.create(st, SessionConfig(dataset=str(path), standardize="on"))
    assert s2.config.standardize is True and np.allclose(s2.X.std(axis=0), 1)
    with pytest.raises(ValueError, match="standardize must be one of auto, on, off"):
        LabelingSession.create(st, SessionConfig(dataset=str(path), standardize="maybe"))
