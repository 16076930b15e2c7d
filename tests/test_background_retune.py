"""Automatic re-tunes in the background (labeler.session.retune): the key press's request only
updates and queries; a finished re-tune takes effect at the next label, is written then, and a
reopened session replays it; an undo while it runs makes it stale, and it is discarded."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from labeler.session import LabelingSession, SessionConfig, model
from labeler.store import Store

WAIT = 300.0  # seconds: a generous bound for a shared machine (never a timing assertion)


def _label_next(s):
    q = s.next_query()
    assert s.label(q, str(s.dataset.y[q]), expected_query=q)
    return q


def _settings_events(store, sid):
    with Store(store) as st:
        events = st.events(sid)
    out = []
    n_labels = 0
    for e in events:
        if e.kind in ("label", "accept"):
            n_labels = None if n_labels is None else n_labels + 1
        elif e.kind in ("undo", "unlabel"):
            n_labels = None  # counts are checked only on logs without removals
        if e.kind == "setting":
            out.append((e, n_labels))
    return out


def _predicted(s):
    return np.asarray(s.predictions() if hasattr(s, "predictions") else s.learner.predict())


POSTERIORS = {"dense": {}, "nystrom": {"posterior": "nystrom", "rank": 40},
              # lam far too small: the LOO moves it (lam is the only value of a spectral posterior)
              "spectral": {"posterior": "spectral", "rank": 20, "lam": 1e-3,
                           "auto_tune": {"width": False, "lam": True}}}


def _session_with_background_retune(store, max_labels=40, posterior="dense"):
    """A moons session labelled by the truth with background re-tunes until one has moved a value."""
    s = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": 200}, seed=2,
                                                    **POSTERIORS[posterior]))
    s.retune_in_background(True)
    for _ in range(max_labels):
        _label_next(s)
        if s.settings.retune_pending:
            assert s.settings.wait_for_retune(WAIT)
            _label_next(s)  # the finished re-tune takes effect here
            if any(e.value.get("background") for e, _ in _settings_events(store, s.id)):
                return s
    pytest.fail("no background re-tune moved a value")


@pytest.mark.parametrize("posterior", ["dense", "nystrom", "spectral"])
def test_a_background_re_tune_is_written_where_it_takes_effect_and_replays_exactly(tmp_path, posterior):
    """Dense, Nystrom (a new width: the factor rebuilt on the session's landmarks in the worker)
    and spectral (lam alone: the LOO on the factor's rows in the worker, applied in place)."""
    store = tmp_path / "s.sqlite"
    s = _session_with_background_retune(store, posterior=posterior)
    assert s.config.posterior == posterior
    events = [(e, n) for e, n in _settings_events(store, s.id) if e.value.get("background")]
    for e, n_labels in events:
        # written at a definite label count, after a label: computed on fewer or as many labels
        assert e.value["effective_labels"] == n_labels
        assert e.value["n_labels"] <= n_labels and e.value["auto"] is True
    assert events[-1][0].value["value"] == getattr(s.config, events[-1][0].value["name"])
    # the swapped-in learner (rebuilt in the background, then caught up) is the model of the log
    fresh = s._build_learner()
    np.testing.assert_allclose(np.asarray(s.learner.decision_values), np.asarray(fresh.decision_values),
                               rtol=0, atol=1e-10)
    del fresh
    s.retune_in_background(False)  # from here on both copies re-tune in step (deterministic)
    backup = s.backup(tmp_path / "copy.sqlite")
    m = np.asarray(s.learner.decision_values)
    pred = np.asarray(s.learner.predict())
    query = s.next_query()
    r = LabelingSession.open(backup, s.id)
    assert (r.config.width, r.config.lam) == (s.config.width, s.config.lam)
    np.testing.assert_array_equal(np.asarray(r.learner.predict()), pred)
    np.testing.assert_allclose(np.asarray(r.learner.decision_values), m, rtol=0, atol=1e-10)
    assert r.next_query() == query
    # the same queries from here on, in the live session and in the reopened one
    assert [_label_next(s) for _ in range(5)] == [_label_next(r) for _ in range(5)]
    np.testing.assert_array_equal(np.asarray(r.learner.predict()), np.asarray(s.learner.predict()))
    s.close()
    r.close()


def test_an_undo_while_a_re_tune_runs_discards_it(tmp_path, monkeypatch):
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": 200}, seed=2))
    s.retune_in_background(True)
    gate = threading.Event()
    real = model.auto_tune_labels
    snapshots = []

    def held(spec, X, labels, *args, **kwargs):
        snapshots.append(dict(labels))
        assert gate.wait(WAIT)
        return real(spec, X, labels, *args, **kwargs)

    monkeypatch.setattr(model, "auto_tune_labels", held)
    for _ in range(30):
        _label_next(s)
        if s.settings.retune_pending:
            break
    assert s.settings.retune_pending
    stale_job = s.settings._job
    undone = s.undo()
    assert undone is not None
    # an undo is a change of the labels: the running job is found stale then and cancelled
    assert stale_job.cancelled and s.settings._job is not stale_job
    gate.set()
    assert stale_job.wait(WAIT)
    assert stale_job.learner is None  # discarded, never applied
    # a fresh re-tune runs on the labels now (started by the undo or the next label); it
    # applies at the label after it is done
    _label_next(s)
    assert s.settings.retune_pending
    assert s.settings.wait_for_retune(WAIT)
    _label_next(s)
    # every re-tune written was computed on labels that were all still there when it took effect
    assert len(snapshots) >= 2
    for e, _ in _settings_events(store, s.id):
        if e.value.get("background"):
            assert e.value["n_labels"] != len(snapshots[0]) or e.value["effective_labels"] > len(snapshots[0])
    assert set(s.learner.labels) == set(s.labels)
    fresh = s._build_learner()
    np.testing.assert_allclose(np.asarray(s.learner.decision_values), np.asarray(fresh.decision_values),
                               rtol=0, atol=1e-10)
    pred = np.asarray(s.learner.predict())
    sid = s.id
    s.close()
    r = LabelingSession.open(store, sid)
    np.testing.assert_array_equal(np.asarray(r.learner.predict()), pred)
    r.close()


def test_a_stale_job_is_never_swapped_in(tmp_path):
    """The job's own check: labels it read that were undone, changed settings or classes."""
    from labeler.session.retune import RetuneJob, RetuneSnapshot

    spec = model.RlsSpec()
    snap = RetuneSnapshot(spec, ("a", "b"), ((3, "a"), (5, "b")), {"a": 1.0, "b": 1.0}, True, True)
    job = RetuneJob(snap, np.zeros((10, 2)), start=False)
    assert job.stale_reason(spec, ["a", "b"], [(3, "a"), (5, "b"), (7, "a")]) == ""
    assert "undone" in job.stale_reason(spec, ["a", "b"], [(3, "a")])
    assert "undone" in job.stale_reason(spec, ["a", "b"], [(3, "a"), (5, "a")])
    assert "classes" in job.stale_reason(spec, ["a", "b", "c"], [(3, "a"), (5, "b")])
    assert "settings" in job.stale_reason(spec.with_setting("lam", 0.5), ["a", "b"], [(3, "a"), (5, "b")])
    job.cancel()
    assert job.stale_reason(spec, ["a", "b"], [(3, "a"), (5, "b")])


def test_a_value_fixed_while_its_re_tune_runs_is_not_moved(tmp_path, monkeypatch):
    """Typing the value in use turns its "auto" off without changing the model: the running
    re-tune of it is discarded, and no automatic setting event follows."""
    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": 200}, seed=2))
    s.retune_in_background(True)
    gate = threading.Event()
    real = model.auto_tune_labels

    def held(*args, **kwargs):
        assert gate.wait(WAIT)
        return real(*args, **kwargs)

    monkeypatch.setattr(model, "auto_tune_labels", held)
    for _ in range(30):
        _label_next(s)
        if s.settings.retune_pending:
            break
    job = s.settings._job
    s.set_width(s.config.width)
    s.set_lam(s.config.lam)
    assert s.auto_tune == {"width": False, "lam": False}
    gate.set()
    assert job.wait(WAIT)
    n_auto = sum(1 for e, _ in _settings_events(store, s.id) if e.value.get("auto"))
    _label_next(s)
    assert job.cancelled and not s.settings.retune_pending
    assert sum(1 for e, _ in _settings_events(store, s.id) if e.value.get("auto")) == n_auto
    s.close()
