"""The stopping signal (labeler.session.stopping): stabilising predictions (Bloodgood &
Vijay-Shanker 2009), the changed share and the LOO error with its interval; on a session, and
against the true error on an easy and a hard data set."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from labeler.session import LabelingSession, SessionConfig
from labeler.session.stopping import KEEP_GOING, LIKELY_ENOUGH, StoppingMonitor, cohen_kappa, uncovered_share


def test_cohen_kappa_matches_scikit_learn_and_edge_cases():
    rng = np.random.default_rng(0)
    for k in (2, 3, 5):
        a = rng.integers(0, k, 300)
        b = np.where(rng.random(300) < 0.8, a, rng.integers(0, k, 300))
        assert cohen_kappa(a, b) == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) == 1.0  # one class everywhere, full agreement
    assert cohen_kappa([0, 1, 0, 1], [1, 0, 1, 0]) == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="1-D"):
        cohen_kappa([0, 1], [0, 1, 1])


def test_monitor_checkpoints_spacing_undo_and_round_trip():
    m = StoppingMonitor(6, spacing=5, window=3)
    codes = np.zeros(6, dtype=np.int32)
    assert m.record(4, codes) and not m.record(7, codes) and m.record(9, codes)
    assert m.checkpoints == [4, 9]
    m.record(6, codes)  # an undo back to 6 labels drops the checkpoint at 9 ...
    assert m.checkpoints == [4]
    assert m.record(9, codes + 1)  # ... and a new one is taken at the next spacing
    copy = StoppingMonitor(6, spacing=5, window=3)
    copy.load_array(m.to_array(), n_labels=9)
    assert copy.checkpoints == [4, 9] and np.array_equal(copy.to_array(), m.to_array())
    copy.load_array(m.to_array(), n_labels=5)  # rows past the current count are dropped
    assert copy.checkpoints == [4]
    copy.load_array(np.zeros((2, 3)), n_labels=9)  # a malformed array is ignored (a cache)
    assert copy.checkpoints == []
    with pytest.raises(ValueError, match="integer class codes"):
        m.record(20, np.zeros(5))


def test_monitor_verdicts_and_the_loo_interval():
    m = StoppingMonitor(100, spacing=5, window=3, threshold=0.99, changed_over=10)
    base = np.zeros(100, dtype=np.int32)
    base[50:] = 1
    sig = m.signal(0, base)
    assert sig.verdict == KEEP_GOING and "too early" in sig.message and np.isnan(sig.mean_kappa)
    for n, flips in ((5, 0), (10, 20), (15, 10), (20, 5)):  # predictions still changing
        codes = base.copy()
        codes[:flips] = 1
        m.record(n, codes)
    sig = m.signal(20, codes, loo_correct=[True] * 18 + [False] * 2)
    assert sig.verdict == KEEP_GOING and "still changing" in sig.message
    assert len(sig.kappas) == 3 and sig.mean_kappa < 0.99
    assert sig.changed_since == 10 and sig.changed_fraction == pytest.approx(0.15)
    assert sig.loo_error == pytest.approx(0.1) and sig.loo_n == 20
    assert sig.loo_lower == pytest.approx(1 - 0.9721, abs=1e-3) and sig.loo_upper == pytest.approx(1 - 0.6990, abs=1e-3)
    for n in (25, 30, 35):  # then stable
        m.record(n, codes)
    sig = m.signal(35, codes)
    assert sig.verdict == LIKELY_ENOUGH and sig.enough and sig.kappas == (1.0, 1.0, 1.0)
    assert "unlikely to change" in sig.message and sig.changed_fraction == 0.0


def _labels_until_full(m: StoppingMonitor, n_labels: int, codes) -> int:
    """The oracle: label one at a time on a copy of ``m`` until the window is full."""
    copy = StoppingMonitor(m.n_points, spacing=m.spacing, window=m.window)
    copy.load_array(m.to_array(), n_labels)
    more = 0
    while len(copy.signal(n_labels + more, codes).kappas) < copy.window:
        more += 1
        copy.record(n_labels + more, codes)
    return more


@pytest.mark.parametrize("jumps", [[1] * 20, [3, 1, 1, 9, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]])
def test_labels_to_go_is_what_labelling_one_at_a_time_takes(jumps):
    """The estimate in "Keep going: too early" is the count the checkpoint rule needs, at
    every step (not off by one at the start, not floored at the spacing near the end), also
    after a bulk labelling jumped ahead; and it is written "1 label" / "N labels"."""
    m = StoppingMonitor(8, spacing=5, window=3)
    codes = np.zeros(8, dtype=np.int32)
    n, seen = 0, set()
    for step in [0] + jumps:
        n += step
        if step:
            m.record(n, codes)
        sig = m.signal(n, codes)
        want = _labels_until_full(m, n, codes)
        assert sig.labels_to_go == want, (n, m.checkpoints)
        if want:
            words = "1 more label first" if want == 1 else f"{want} more labels first"
            assert words in sig.message and "(s)" not in sig.message
            seen.add(want)
    assert 16 in seen and 1 in seen


def _label_truly(s, k, record=None):
    y = np.asarray(s.dataset.y).astype(str)
    for _ in range(k):
        q = s.next_query()
        assert s.label(q, y[q], expected_query=q)
        if record is not None:
            record.append((s.n_labeled, s.stopping_signal(),
                           float(np.mean(np.asarray(s.learner.predict()).astype(str) == y))))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_session_says_keep_going_early_and_likely_enough_late_on_moons(tmp_path, seed):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", seed=seed))
    seen = []
    _label_truly(s, 60, seen)
    verdicts = [sig.verdict for _, sig, _ in seen]
    assert set(verdicts[:15]) == {KEEP_GOING}
    assert verdicts[-1] == LIKELY_ENOUGH
    # it never says "enough" while the pool is less than 98 % right
    assert all(acc >= 0.98 for _, sig, acc in seen if sig.enough), [(n, a) for n, g, a in seen if g.enough]
    # the checkpoints live in the store: a reopened session gives the same signal
    last = seen[-1][1]
    r = LabelingSession.open(tmp_path / "s.sqlite", s.id)
    again = r.stopping_signal()
    assert (again.verdict, again.kappas) == (last.verdict, pytest.approx(last.kappas, abs=1e-12))


def test_accepted_predictions_do_not_count_as_labels(tmp_path):
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 150}))
    _label_truly(s, 6)
    before = s.stopping_signal().n_labels
    free = [i for i in range(150) if i not in s.labels][:20]
    s.accept_predictions(free)
    assert s.n_labeled == 26 and s.stopping_signal().n_labels == before == 6


@pytest.mark.slow
@pytest.mark.parametrize("name, options, budget, seed", [("magic", {"n": 800}, 150, 1),
                                                         ("moons-imbalanced", {}, 100, 2)])
def test_it_does_not_say_enough_while_the_true_error_is_high(name, options, budget, seed):
    """On harder sets (MAGIC: noisy, 10-D; imbalanced moons) the app's defaults and re-tunes
    (simulate with app_settings); wherever the signal says "likely enough" the balanced error
    on the validation set is within 3 points of the least error the run reaches, and it says
    "keep going" while the balanced error is above 15 %."""
    from labeler.data import load_dataset
    from labeler.experiments.simulate import app_settings, simulate

    ds = load_dataset(name, seed=seed, **options)
    a = app_settings(ds, seed, X_val=ds.X_val)
    curve = simulate(ds, "arls", budget, seed, kernel=a["kernel"], lam=a["lam"], weighting=a["weighting"],
                     X=a["X"], X_val=a["X_val"], y_val=ds.y_val, auto_tune=a["auto_tune"])
    error = 1.0 - curve["balanced_accuracy"].to_numpy()
    enough = curve["stop"].to_numpy() == LIKELY_ENOUGH
    assert np.all(error[enough] <= error.min() + 0.03), list(zip(curve["n_labeled"][enough], error[enough]))
    assert not np.any(enough & (error > 0.15))
    assert np.sum(error > 0.15) >= 10  # not vacuous: a long hard phase, all of it "keep going"


def test_uncovered_share_against_a_loop():
    rng = np.random.default_rng(3)
    for _ in range(20):
        comps = rng.integers(-1, 6, 200)
        labelled = rng.choice(200, size=rng.integers(0, 8), replace=False)
        slow = sum(1 for i in range(200) if comps[i] >= 0 and not any(comps[j] == comps[i] for j in labelled)) / 200
        assert uncovered_share(comps, labelled) == pytest.approx(slow, abs=1e-15)
    assert uncovered_share([0, 0, 1, 1, -1], []) == pytest.approx(0.8)  # small clusters (-1) never count
    with pytest.raises(ValueError, match="labelled indices"):
        uncovered_share([0, 1], [2])
    with pytest.raises(ValueError, match="components"):
        uncovered_share([0.5, 1.0], [0])


def test_stable_predictions_are_not_enough_while_a_cluster_has_no_label():
    """Spheres-like: predictions in a cluster without a label come from other clusters and do
    not change, so kappa is 1; the rule keeps going until every sizeable cluster holds a label."""
    m = StoppingMonitor(100, spacing=5, window=3, threshold=0.99, max_uncovered=0.02)
    codes = np.zeros(100, dtype=np.int32)
    for n in (5, 10, 15, 20):
        m.record(n, codes)
    comps = np.repeat(np.arange(10), 10)
    sig = m.signal(20, codes, uncovered=uncovered_share(comps, [0, 10, 20, 30, 40, 50, 60, 70, 80]))
    assert sig.mean_kappa == 1.0 and sig.verdict == KEEP_GOING
    assert sig.uncovered == pytest.approx(0.1) and "10.0 % of the pool" in sig.message
    sig = m.signal(20, codes, uncovered=uncovered_share(comps, np.arange(0, 100, 10)))
    assert sig.verdict == LIKELY_ENOUGH and sig.uncovered == 0.0
    assert np.isnan(m.signal(20, codes).uncovered) and m.signal(20, codes).enough  # no clusters: kappa alone
    with pytest.raises(ValueError, match="uncovered"):
        m.signal(20, codes, uncovered=1.5)


def test_session_reports_the_share_of_the_pool_in_clusters_without_a_label(tmp_path):
    """Spheres: 60 discs of 20 points, each a cluster of the pool's 10-NN graph. With labels
    in 3 discs, 57 of 60 discs (95 % of the pool) hold none; accepted predictions cover nothing."""
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="spheres", seed=0))
    y = np.asarray(s.dataset.y).astype(str)
    for i in (0, 20, 40):  # the generator draws 20 points per disc, disc by disc
        assert s.label(i, y[i])
    sig = s.stopping_signal()
    assert sig.uncovered == pytest.approx(57 / 60)
    s.accept_predictions([60, 80])
    assert s.stopping_signal().uncovered == pytest.approx(57 / 60)


def _blobs(n_per, seed=0):
    """Well-separated 2-D blobs of the given sizes (unit spread, 40 apart), point i in blob of[i]."""
    rng = np.random.default_rng(seed)
    of = np.repeat(np.arange(len(n_per)), n_per)
    centres = 40.0 * np.column_stack([np.arange(len(n_per)), np.arange(len(n_per)) % 2])
    return centres[of] + rng.normal(size=(of.size, 2)), of


def test_sampled_clusters_find_the_nearest_sample_point_as_a_loop_does():
    from core.coverage import SampledClusters

    rng = np.random.default_rng(5)
    X = rng.normal(size=(400, 3))
    sample = np.sort(rng.choice(400, 60, replace=False))
    clusters = SampledClusters(X, sample, np.zeros(60, dtype=np.intp))
    points = rng.choice(400, 50, replace=False)
    slow = [int(np.argmin([np.sum((X[p] - X[s]) ** 2) for s in sample])) for p in points]
    assert clusters.nearest_sample(points).tolist() == slow
    assert clusters.nearest_sample(sample[[3, 7]]).tolist() == [3, 7]  # a sample point is its own nearest
    with pytest.raises(ValueError, match="labelled indices"):
        clusters.uncovered_share([400])


def test_sampled_uncovered_share_tracks_the_exact_one_on_a_pool_above_the_limit():
    """A pool of 12,000 points in 7 blobs (one of 2 %, one of 0.8 %): the share estimated on a
    sample of 3,000 points against the exact share of the pool's own 10-NN graph, for label
    sets that leave different blobs without a label."""
    from core.coverage import sampled_clusters
    from core.rls.width_scale import MAX_CLUSTER_POINTS, large_components, neighbour_components

    sizes = [4000, 3000, 2000, 1500, 1164, 240, 96]
    X, of = _blobs(sizes)
    assert X.shape[0] > MAX_CLUSTER_POINTS
    exact = large_components(neighbour_components(X))
    assert exact is not None and len(np.unique(exact[exact >= 0])) == 7
    sampled = sampled_clusters(X, max_points=3000, seed=0)
    assert sampled is not None and sampled.sample.size == 3000
    # every sampled cluster lies inside one blob
    for c in np.unique(sampled.components[sampled.components >= 0]):
        assert np.unique(of[sampled.sample[sampled.components == c]]).size == 1
    first = np.array([np.flatnonzero(of == b)[0] for b in range(7)])
    rng = np.random.default_rng(1)
    for blobs in ([], [0], [0, 1, 2, 3, 4], [0, 1, 2, 3, 4, 5], list(range(7)), [5, 6]):
        labelled = np.concatenate([first[blobs], rng.choice(np.flatnonzero(np.isin(of, blobs)), 3)]) \
            if blobs else np.zeros(0, dtype=np.int64)
        truth = uncovered_share(exact, labelled)
        assert uncovered_share(sampled, labelled) == pytest.approx(truth, abs=0.01), blobs
    # the 2 % blob unlabelled keeps the rule going; with it labelled, only the 0.8 % one is left
    assert uncovered_share(sampled, first[:6]) <= 0.01 < uncovered_share(sampled, first[:5])
    assert sampled_clusters(np.random.default_rng(2).normal(size=(6000, 2)), max_points=3000) is None  # one mass


def test_session_pool_clusters_above_the_limit_come_from_a_sample(tmp_path, monkeypatch):
    """Above MAX_CLUSTER_POINTS (lowered here to 500 for a small session) the session's
    clusters are a sample's: spheres, 60 discs of 20 points, labels in 3 discs."""
    from core.coverage import SampledClusters
    from labeler.session import settings

    monkeypatch.setattr(settings, "MAX_CLUSTER_POINTS", 500)
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="spheres", seed=0))
    assert s.n_samples > 500
    y = np.asarray(s.dataset.y).astype(str)
    for i in (0, 20, 40):
        assert s.label(i, y[i])
    assert s.settings.pool_clusters() is None  # no cluster per point above the limit
    clusters = s.settings.coverage_clusters()
    assert isinstance(clusters, SampledClusters) and clusters.sample.size == s.n_samples  # pool <= the sample size
    assert s.stopping_signal().uncovered == pytest.approx(57 / 60)


def test_high_kappa_is_not_enough_while_the_window_still_changes_more_than_its_limit():
    """Ten balanced classes: 0.8 % of the pool changes between models 5 labels apart, so kappa
    is about 0.991 >= 0.99, but the window's net change is 2.4 % > 0.5 %: keep going. With the
    condition off (max_window_changed 1) kappa alone says "likely enough"; at 0.1 % per step
    (0.3 % net) both do."""
    n = 1000

    def run(step_changed, **options):
        m = StoppingMonitor(n, **options)
        codes = np.arange(n) % 10
        for k, labels in enumerate((5, 10, 15, 20)):
            if k:
                codes = codes.copy()
                moved = np.arange((k - 1) * step_changed, k * step_changed)  # fresh points each step
                codes[moved] = (codes[moved] + 1) % 10
            m.record(labels, codes.astype(np.int32))
        return m.signal(20, codes.astype(np.int32))

    sig = run(8)
    assert sig.mean_kappa >= 0.99 and sig.window_changed == pytest.approx(0.024)
    assert sig.verdict == KEEP_GOING
    assert "2.4 % of the pool's predictions changed over the last 15 labels" in sig.message
    assert run(8, max_window_changed=1.0).verdict == LIKELY_ENOUGH
    sig = run(1)
    assert sig.enough and sig.window_changed == pytest.approx(0.003)
    with pytest.raises(ValueError, match="max_window_changed"):
        StoppingMonitor(n, max_window_changed=2.0)


def test_kappa_of_codes_counted_directly_is_the_sorted_unions_and_kept_per_pair():
    """cohen_kappa's bincount path against the np.unique one (the same bits), and the monitor's
    kappas kept per checkpoint pair against fresh ones through records, an undo and a reload."""
    import labeler.session.stopping as stopping

    rng = np.random.default_rng(21)
    for lo, k in ((0, 2), (-1, 4), (5, 7), (0, 1)):
        a = rng.integers(lo, lo + k, 4000).astype(np.int32)
        b = np.where(rng.random(4000) < 0.9, a, rng.integers(lo, lo + k + 1, 4000)).astype(np.int32)
        fast = cohen_kappa(a, b)
        old = stopping.KAPPA_COUNT_MAX
        stopping.KAPPA_COUNT_MAX = 0  # the sorted union
        try:
            assert fast == cohen_kappa(a, b)
        finally:
            stopping.KAPPA_COUNT_MAX = old
    m = StoppingMonitor(500, spacing=2, window=3)
    codes = rng.integers(0, 3, 500)
    for n_labels in [2, 4, 6, 8, 10, 12, 7, 8, 9, 11, 13, 15]:  # 7: an undo back past 8-12
        codes = np.where(rng.random(500) < 0.1, rng.integers(0, 3, 500), codes)
        m.record(n_labels, codes)
        got = m.signal(n_labels, codes).kappas
        keys = [k for k in m.checkpoints if k <= n_labels][-4:]
        want = tuple(cohen_kappa(m._checkpoints[a], m._checkpoints[b]) for a, b in zip(keys[:-1], keys[1:]))
        assert got == want
    again = StoppingMonitor(500, spacing=2, window=3)
    again.load_array(m.to_array(), 15)
    assert again.signal(15, codes).kappas == m.signal(15, codes).kappas


def test_the_checkpoints_written_in_the_background_are_there_when_the_session_reopens(tmp_path):
    """The stopping checkpoints go to the store from a background writer (no key press waits
    for them); close() waits for it, and a reopened session reads the newest ones."""
    from labeler.session import LabelingSession, SessionConfig
    from labeler.session.settings import STOPPING_ARRAY

    store = tmp_path / "s.sqlite"
    with LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": 200}, seed=4)) as s:
        for _ in range(16):
            q = s.next_query()
            s.label(q, str(s.dataset.y[q]))
        kept = s.settings.stopping_monitor.to_array()
        sid = s.id
    assert kept.shape[0] >= 3
    with LabelingSession.open(store, sid) as t:
        np.testing.assert_array_equal(t._store.get_array(sid, STOPPING_ARRAY), kept)
        assert t.settings.stopping_monitor.checkpoints == [int(k) for k in kept[:, 0]]
