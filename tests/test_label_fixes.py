"""Fixing labels and managing classes on the session object: relabel, unlabel, un-skip, rename,
delete, move or unlabel a class; each one undoable action, exact in the learner (oracle: a
direct solve on the net labels), stored, and restored on reopening."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from arls_oracle import direct_solve, expected_class_weights
from core.calibration import fit_calibration
from core.kernels import Kernel
from labeler.session import LabelingSession, SessionConfig
from labeler.store import Store

N = 80


def config(**kw):
    base = dict(dataset="moons", dataset_options={"n": N}, seed=3, strategy="random")
    base.update(kw)
    return SessionConfig(**base)


@pytest.fixture
def store(tmp_path):
    return tmp_path / "labels.sqlite"


def truth(s, i):
    return str(s.dataset.y[i])


def label_some(s, k):
    done = []
    for _ in range(k):
        q = s.next_query()
        assert s.label(q, truth(s, q), expected_query=q)
        done.append(q)
    return done


def m_of(s):
    return np.array(s.learner.decision_values, dtype=np.float64, copy=True)


def oracle_m(s):
    """Direct solve on the session's net labels, classes, lam, width and class weights."""
    K = Kernel("rbf", width=s.config.width)(s.X)
    weights = expected_class_weights(s.labels, s.classes, s.config.weighting)
    m, _ = direct_solve(K, s.labels, s.classes, s.config.lam, weights)
    return m


def same_state(a, b, atol=1e-10):
    assert a.labels == b.labels and list(a.labels) == list(b.labels)
    assert a.classes == b.classes and a.skipped == b.skipped and a.config == b.config
    assert a.n_events == b.n_events and a.last_action == b.last_action
    np.testing.assert_allclose(m_of(a), m_of(b), rtol=0, atol=atol)


def n_stored(store, sid):
    with Store(store) as st:
        return st.n_events(sid)


def other(s, label):
    return next(c for c in s.classes if c != label)


# ---- relabel ------------------------------------------------------------------------------------


@pytest.mark.parametrize("weighting", ["none", "balanced"])
def test_relabel_an_old_label_is_one_exact_action_and_undo_restores_it(store, weighting):
    s = LabelingSession.create(store, config(weighting=weighting))
    pts = label_some(s, 12)
    old = pts[2]
    was, order, m_before, hist = s.labels[old], list(s.labels), m_of(s), s.history
    n = s.n_events
    assert s.relabel(old, other(s, was), expected_label=was)
    assert s.n_events == n + 1 == n_stored(store, s.id)  # one event, no undoing of later labels
    assert s.labels[old] == other(s, was) and list(s.labels) == [p for p in order if p != old] + [old]
    assert s.predictions().loc[old, "source"] == "chosen"
    np.testing.assert_allclose(m_of(s), oracle_m(s), rtol=0, atol=1e-10)
    assert not np.allclose(m_of(s), m_before)
    assert s.history["estimated_risk"].iloc[-1] == pytest.approx(float(s.learner.estimated_risk()))
    assert s.undo(expected_action=s.last_action) == old
    assert s.labels[old] == was and list(s.labels) == order
    np.testing.assert_allclose(m_of(s), m_before, rtol=0, atol=1e-10)
    pd.testing.assert_frame_equal(s.history, hist)


def test_relabel_refusals_write_nothing_and_say_why(store):
    s = LabelingSession.create(store, config())
    pts = label_some(s, 4)
    i, was = pts[0], s.labels[pts[0]]
    free = next(j for j in range(N) if j not in s.labels)
    n = s.n_events
    assert not s.relabel(free, s.classes[0])
    assert "not labelled any more" in s.why_not_changed(free, "relabel", s.classes[0])
    assert not s.relabel(i, was)  # its own class: nothing to change
    assert "already labelled" in s.why_not_changed(i, "relabel", was)
    assert not s.relabel(i, other(s, was), expected_label=other(s, was))  # the page showed another label
    assert f"now labelled {was!r}" in s.why_not_changed(i, "relabel", other(s, was), other(s, was))
    assert not s.unlabel(i, expected_label=other(s, was))
    assert s.n_events == n == n_stored(store, s.id)
    with pytest.raises(ValueError, match="not one of the classes"):
        s.relabel(i, "nope")
    with pytest.raises(IndexError):
        s.relabel(N + 5, s.classes[0])
    with pytest.raises(ValueError, match="expected_label"):
        s.relabel(i, other(s, was), expected_label=3)


def test_a_stale_tab_cannot_relabel_a_point_another_tab_changed(store):
    a = LabelingSession.create(store, config())
    pts = label_some(a, 5)
    b = LabelingSession.open(store, a.id)
    i, was = pts[1], a.labels[pts[1]]
    assert a.relabel(i, other(a, was), expected_label=was)
    # tab b still shows the old label: its press is refused after catching up, and explained
    assert not b.relabel(i, other(b, was), expected_label=was) or b.labels[i] == other(b, was)
    assert not b.unlabel(i, expected_label=was)
    assert f"now labelled {other(b, was)!r}" in b.why_not_changed(i, "unlabel", expected_label=was)
    a.unlabel(i)
    assert not b.relabel(i, was, expected_label=other(b, was))
    assert "not labelled any more" in b.why_not_changed(i, "relabel", was, other(b, was))
    same_state(a, b)


# ---- unlabel ------------------------------------------------------------------------------------


def test_unlabel_makes_the_point_queryable_and_undo_puts_it_back_in_place(store):
    s = LabelingSession.create(store, config(weighting="balanced"))
    pts = label_some(s, 10)
    order, m_before = list(s.labels), m_of(s)
    target = pts[3]
    was = s.labels[target]
    assert s.unlabel(target, expected_label=was)
    assert target not in s.labels and s.n_labeled == 9 and target in s.learner.unlabeled_indices
    assert LabelingSession.list_sessions(store)[0].n_labeled == 9
    np.testing.assert_allclose(m_of(s), oracle_m(s), rtol=0, atol=1e-10)
    assert not s.unlabel(target)
    assert "not labelled any more" in s.why_not_changed(target, "unlabel")
    assert s.undo() == target
    assert list(s.labels) == order and s.labels[target] == was
    np.testing.assert_allclose(m_of(s), m_before, rtol=0, atol=1e-10)
    assert LabelingSession.list_sessions(store)[0].n_labeled == 10


# ---- skip / un-skip -------------------------------------------------------------------------------


def test_any_unlabelled_point_can_be_skipped_for_good_and_unskipped(store):
    s = LabelingSession.create(store, config())
    label_some(s, 3)
    q = s.next_query()
    chosen = next(i for i in range(N) if i not in s.labels and i != q)
    assert s.skip(chosen)  # not the query: skipped from the point panel
    assert s.skipped == [chosen]
    assert not s.skip(chosen) and "already skipped" in s.why_not_applied(chosen)
    assert s.unskip(chosen) and s.skipped == []
    assert not s.unskip(chosen)
    assert "not skipped any more" in s.why_not_changed(chosen, "unskip")
    assert s.undo() == chosen and s.skipped == [chosen]  # undo of the un-skip skips it again
    s.skip(q)
    assert s.skipped == [chosen, q]
    s.unskip(chosen)
    s.undo()
    assert s.skipped == [chosen, q]  # back at its place
    r = LabelingSession.open(store, s.id)
    assert r.skipped == [chosen, q] and r.next_query() == s.next_query() not in (chosen, q)
    s.label(q, s.classes[0], source="chosen")  # a skipped point may still be labelled ...
    assert s.unskip(q) and s.labels[q] == s.classes[0]  # ... and un-skipped: only the mark goes
    labelled = next(iter(s.labels))
    assert not s.unskip(labelled) and "labelled now" in s.why_not_changed(labelled, "unskip")


# ---- classes ------------------------------------------------------------------------------------

HOSTILE = ['<img src=x onerror="alert(1)">', "![t](http://127.0.0.1:9/t.png)", "# heading",
           "a\\b*c*_d_", "  padded  ", "çà 中文 🐱"]


@pytest.mark.parametrize("name", HOSTILE)
def test_rename_keeps_the_model_and_stores_hostile_names_as_text(store, tmp_path, name):
    s = LabelingSession.create(store, config(weighting="balanced"))
    pts = label_some(s, 8)
    old = s.classes[0]
    m, n_old = m_of(s), s.class_counts()[old]
    stored = s.rename_class(old, name)
    assert stored == name.strip() and s.classes[0] == stored and old not in s.classes
    assert s.class_counts()[stored] == n_old
    assert s.learner.classes == s.classes
    np.testing.assert_array_equal(m_of(s), m)  # names only
    assert set(s.predictions()["predicted"]) <= set(s.classes)
    table = s.export_table()
    assert set(table["label"]) <= set(s.classes) and (table["label"] == stored).sum() == n_old
    path = s.export(tmp_path / "out.csv")
    assert (pd.read_csv(path)["label"].astype(str) == stored).sum() == n_old
    r = LabelingSession.open(store, s.id)
    same_state(r, s)
    assert r.labels == {i: (stored if lab == old else lab) for i, lab in s.labels.items()}
    assert s.undo() == -1 and s.classes[0] == old and m_of(s).tolist() == m.tolist()
    assert set(pts) == set(s.labels)


@pytest.mark.parametrize("new, exc, match", [
    ("", ValueError, "cannot be empty"),
    ("   ", ValueError, "cannot be empty"),
    (None, TypeError, "must be a string"),
    (7, TypeError, "must be a string"),
])
def test_bad_new_names_are_refused(store, new, exc, match):
    s = LabelingSession.create(store, config())
    n = s.n_events
    with pytest.raises(exc, match=match):
        s.rename_class(s.classes[0], new)
    with pytest.raises(ValueError, match="already exists"):
        s.rename_class(s.classes[0], s.classes[1])
    with pytest.raises(ValueError, match="no class 'zz'"):
        s.rename_class("zz", "yy")
    assert s.n_events == n == n_stored(store, s.id)


def test_a_name_an_undo_would_give_back_is_kept_for_it(store):
    s = LabelingSession.create(store, config())
    a, b = s.classes
    s.rename_class(a, "alpha")
    with pytest.raises(ValueError, match=f"{a!r} is kept for Undo.*renamed to 'alpha'"):
        s.add_class(a)
    s.rename_class(b, a)  # a rename may take it: its own undo comes first
    s.add_class("c")
    s.delete_class("c")
    with pytest.raises(ValueError, match="'c' is kept for Undo.*deleted"):
        s.add_class("c")
    s.undo()
    s.undo()
    s.undo()
    assert s.classes == [a, b, "c"]
    r = LabelingSession.open(store, s.id)
    assert r.classes == s.classes


def test_delete_refuses_a_class_with_labels_and_points_to_the_ways_out(store):
    s = LabelingSession.create(store, config(weighting="balanced"))
    label_some(s, 10)
    s.add_class("noise")
    free = [i for i in range(N) if i not in s.labels][:3]
    for i in free:
        s.label(i, "noise", source="chosen")
    n = s.n_events
    with pytest.raises(ValueError, match="'noise' still has 3 labelled points.*Move them.*unlabel"):
        s.delete_class("noise")
    with pytest.raises(ValueError, match="at least two classes"):
        LabelingSession.create(store, config()).delete_class("0")
    assert s.n_events == n
    # the ways out: move them (one action), or unlabel them (one action)
    m_before = m_of(s)
    assert s.move_class_labels("noise", "1") == 3
    assert s.class_counts()["noise"] == 0 and all(s.labels[i] == "1" for i in free)
    np.testing.assert_allclose(m_of(s), oracle_m(s), rtol=0, atol=1e-10)
    s.undo()
    np.testing.assert_allclose(m_of(s), m_before, rtol=0, atol=1e-10)
    assert s.unlabel_class("noise", expected_version=s.n_events) == 3
    assert s.unlabel_class("noise") == 0
    np.testing.assert_allclose(m_of(s), oracle_m(s), rtol=0, atol=1e-10)
    three = m_of(s)
    s.delete_class("noise")
    assert s.classes == ["0", "1"] and s.learner.n_outputs == 1  # back to one binary output
    np.testing.assert_allclose(m_of(s), oracle_m(s), rtol=0, atol=1e-10)
    same_state(LabelingSession.open(store, s.id), s)
    s.undo()
    assert s.classes == ["0", "1", "noise"]
    np.testing.assert_allclose(m_of(s), three, rtol=0, atol=1e-10)


def test_class_moves_refuse_a_changed_state(store):
    s = LabelingSession.create(store, config())
    label_some(s, 6)
    version = s.n_events
    label_some(s, 1)
    n = s.n_events
    assert s.move_class_labels("0", "1", expected_version=version) == 0
    assert s.unlabel_class("0", expected_version=version) == 0
    assert s.n_events == n
    with pytest.raises(ValueError, match="another class"):
        s.move_class_labels("0", "0")
    with pytest.raises(ValueError, match="expected_version"):
        s.unlabel_class("0", expected_version="3")


def test_class_actions_from_a_stale_tab_are_refused_after_catching_up(store):
    a = LabelingSession.create(store, config())
    label_some(a, 4)
    a.add_class("c")
    b = LabelingSession.open(store, a.id)
    a.rename_class("0", "zero")
    n = a.n_events
    with pytest.raises(ValueError, match="no class '0'.*renamed or deleted in another tab"):
        b.rename_class("0", "nil")  # b still shows "0"
    assert b.classes == ["zero", "1", "c"]  # caught up
    free = next(i for i in range(N) if i not in a.labels)
    a.label(free, "c", source="chosen")
    with pytest.raises(ValueError, match="'c' still has 1 labelled point"):
        b.delete_class("c")  # b showed "c" empty
    assert b.move_class_labels("c", "1", expected_version=n) == 0  # b's page is out of date
    assert b.unlabel_class("c", expected_version=n) == 0
    assert a.n_events == n + 1 == n_stored(store, a.id)
    same_state(a, b)


def test_a_weighting_dict_follows_renames_and_deletions(store):
    s = LabelingSession.create(store, config())
    s.add_class("c")
    s.set_weighting({"0": 1.0, "1": 2.0, "c": 3.0})
    label_some(s, 6)
    s.rename_class("1", "one")
    assert s.config.weighting == {"0": 1.0, "one": 2.0, "c": 3.0}
    assert s.learner.class_weights == {"0": 1.0, "one": 2.0, "c": 3.0}
    s.delete_class("c")
    assert s.config.weighting == {"0": 1.0, "one": 2.0}
    np.testing.assert_allclose(m_of(s), oracle_m(s), rtol=0, atol=1e-10)
    same_state(LabelingSession.open(store, s.id), s)
    s.undo()
    assert s.config.weighting == {"0": 1.0, "one": 2.0, "c": 3.0}
    assert s.learner.class_weights == {"0": 1.0, "one": 2.0, "c": 3.0}
    np.testing.assert_allclose(m_of(s), oracle_m(s), rtol=0, atol=1e-10)
    s.undo()
    assert s.config.weighting == {"0": 1.0, "1": 2.0, "c": 3.0}
    same_state(LabelingSession.open(store, s.id), s)


# ---- export and views ----------------------------------------------------------------------------


def test_export_shows_final_labels_of_relabels_and_renames(store, tmp_path):
    s = LabelingSession.create(store, config(initial_labels=4))
    pts = label_some(s, 6)
    init = next(i for i in s.labels if i not in pts)
    s.relabel(init, other(s, s.labels[init]))
    s.relabel(pts[0], other(s, s.labels[pts[0]]))
    s.unlabel(pts[1])
    s.rename_class("1", "one")
    table = pd.read_csv(s.export(tmp_path / "labels.csv"))
    ids = s.dataset.ids
    assert dict(zip(table["id"].astype(str), table["label"].astype(str))) == {
        str(ids[i]): lab for i, lab in s.labels.items()}
    assert str(ids[pts[1]]) not in set(table["id"].astype(str))
    by_id = dict(zip(table["id"].astype(str), table["source"]))
    assert by_id[str(ids[init])] == by_id[str(ids[pts[0]])] == "chosen"
    assert list(table["order"]) == list(range(1, len(s.labels) + 1))
    assert list(table["id"].astype(str))[-2:] == [str(ids[init]), str(ids[pts[0]])]  # when given
    assert pd.to_datetime(table["timestamp"]).is_monotonic_increasing


def test_confidence_bins_after_a_relabel_use_each_points_own_loo_value(store):
    s = LabelingSession.create(store, config(weighting="none"))
    pts = label_some(s, 14)
    s.relabel(pts[0], other(s, s.labels[pts[0]]))  # the learner keeps pts[0] first, the log last
    s.unlabel(pts[5])
    s.undo()  # the learner gets pts[5] back at its end, the log at its place
    assert list(s.learner.labels) != list(s.labels)
    bins = s.confidence_bins(n_bins=5)
    K = Kernel("rbf", width=s.config.width)(s.X)
    labels = s.labels
    loo = []
    for i in labels:  # oracle: refit without each point (direct solve)
        rest = {j: c for j, c in labels.items() if j != i}
        m, _ = direct_solve(K, rest, s.classes, s.config.lam, np.ones(2))
        loo.append(m[i, 0])
    loo = np.array(loo)
    codes = np.array([s.classes.index(c) for c in labels.values()])
    _, conf = fit_calibration(loo, codes).confidence(loo)  # calibrated as the app does (docs/algorithms.md §11)
    correct = np.where(loo > 0, s.classes[1], s.classes[0]) == np.array(list(labels.values()))
    idx = np.clip(np.searchsorted(np.linspace(0, 1, 6), conf, side="right") - 1, 0, 4)
    assert np.array_equal(bins.counts, np.bincount(idx, minlength=5))
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(bins.accuracy, np.bincount(idx, weights=correct, minlength=5)
                                   / np.bincount(idx, minlength=5), equal_nan=True)


# ---- random sequences: live = direct solve = reopened = second tab --------------------------------

NAMES = ["cat", "dog", "<b>x</b>", "a b", "ß"]


def random_step(s, rng, step):
    kind = rng.choice(["label"] * 5 + ["relabel"] * 3 + ["undo"] * 2 + [
        "unlabel", "rename", "skip", "unskip", "add_class", "move", "unlabel_class", "delete"])
    labelled = list(s.labels)
    free = [i for i in range(N) if i not in s.labels and i not in s.skipped]
    if kind == "label" and free:
        i = int(rng.choice(free))
        assert s.label(i, str(rng.choice(s.classes)), source="chosen")
    elif kind == "relabel" and labelled:
        i = int(rng.choice(labelled))
        assert s.relabel(i, str(rng.choice([c for c in s.classes if c != s.labels[i]])),
                         expected_label=s.labels[i])
    elif kind == "unlabel" and labelled:
        i = int(rng.choice(labelled))
        assert s.unlabel(i, expected_label=s.labels[i])
    elif kind == "undo":
        s.undo(expected_action=s.last_action)
    elif kind == "rename":
        old = str(rng.choice(s.classes))
        new = str(rng.choice(NAMES + list(s._log.reserved_names()) + s.classes))
        if new.strip() in s.classes:
            with pytest.raises(ValueError, match="already exists"):
                s.rename_class(old, new)
        else:  # a name an undo would give back is fine for a rename
            assert s.rename_class(old, new) == new.strip()
    elif kind == "skip" and free:
        assert s.skip(int(rng.choice(free)))
    elif kind == "unskip" and s.skipped:
        assert s.unskip(int(rng.choice(s.skipped)))
    elif kind == "add_class" and len(s.classes) < 5:
        try:
            s.add_class(f"new{step}")
        except ValueError as exc:
            assert "kept for Undo" in str(exc)
    elif kind == "move":
        old, new = rng.choice(s.classes, size=2, replace=False)
        s.move_class_labels(str(old), str(new), expected_version=s.n_events)
    elif kind == "unlabel_class":
        s.unlabel_class(str(rng.choice(s.classes)), expected_version=s.n_events)
    elif kind == "delete":
        name = str(rng.choice(s.classes))
        if s.class_counts()[name] == 0 and len(s.classes) > 2:
            s.delete_class(name)
        else:
            with pytest.raises(ValueError, match="still has|at least two"):
                s.delete_class(name)


@pytest.mark.parametrize("weighting", ["none", "balanced"])
@pytest.mark.parametrize("seed", [3, 6, 7])
def test_random_fix_sequences_match_a_direct_solve_and_reopen_equal(store, weighting, seed):
    rng = np.random.default_rng(seed)
    s = LabelingSession.create(store, config(weighting=weighting, initial_labels=6))
    tab = LabelingSession.open(store, s.id)
    for step in range(90):
        random_step(s, rng, step)
        np.testing.assert_allclose(m_of(s), oracle_m(s), rtol=0, atol=1e-9)
        if step % 10 == 9:
            with LabelingSession.open(store, s.id) as r:
                # the reopened state is a fresh replay (it equals the direct solve to rounding):
                # it may differ from the live one by as much as the live one from the oracle
                # above (lam re-tuned to 0.001 makes the system ill-conditioned: 6e-10 seen)
                same_state(r, s, atol=1e-9)
                assert r.next_query() == s.next_query()
                pd.testing.assert_frame_equal(r.history, s.history)
                pd.testing.assert_frame_equal(r.export_table(), s.export_table())
            assert LabelingSession.list_sessions(store)[0].n_labeled == s.n_labeled
            tab.refresh()
            same_state(tab, s, atol=1e-8)
    with Store(store) as st:
        stored = {e.kind for e in st.events(s.id)}
    assert stored - {"setting"} == {"accept", "label", "relabel", "unlabel", "undo", "skip", "unskip",
                      "add_class", "rename_class", "delete_class"}
    while s.undo() is not None:  # everything undoable undone: only the added classes remain
        np.testing.assert_allclose(m_of(s), oracle_m(s), rtol=0, atol=1e-9)
    assert s.n_labeled == 0 and s.skipped == []
