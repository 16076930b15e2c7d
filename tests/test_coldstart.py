"""Cold start by typicality and coverage (core.coldstart, issue 20 §5)."""

from __future__ import annotations

import numpy as np
import pytest

from core import coldstart
from core.coldstart import ColdStart, typicality, typiclust_pick


def _blobs(seed=0):
    rng = np.random.default_rng(seed)
    centres = np.array([[0, 0], [10, 0], [0, 10], [10, 10]], dtype=float)
    sizes = [60, 40, 30, 20]
    X = np.vstack([c + rng.normal(size=(m, 2)) for c, m in zip(centres, sizes)])
    return X, np.repeat(np.arange(4), sizes)


def _slow_typicality(X):
    """Oracle: 1 / mean distance to the K nearest other points, by sorting every row."""
    D = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    k = min(coldstart.NEIGHBOURS, len(X) - 1)
    out = []
    for i in range(len(X)):
        d = np.sort(np.delete(D[i], i))[:k]
        out.append(1.0 / d.mean())
    return np.array(out)


def _slow_pick(X, labeled, seed, exclude=()):
    """Oracle: the rule in words with loops (the same seeded k-means labels)."""
    from sklearn.cluster import KMeans
    k = len(set(labeled)) + 1
    cluster = KMeans(n_clusters=k, n_init=1, random_state=seed).fit_predict(X)
    blocked = set(labeled) | set(exclude)
    best = None
    for c in range(k):
        members = [i for i in range(len(X)) if cluster[i] == c]
        free = [i for i in members if i not in blocked]
        if not free or any(cluster[j] == c for j in labeled) or len(members) < coldstart.MIN_CLUSTER:
            continue
        if best is None or len(members) > best[0]:
            best = (len(members), c, members)
    assert best is not None
    _, c, members = best
    typ = _slow_typicality(X[members])
    cands = [(typ[t], -i) for t, i in enumerate(members) if i not in blocked]
    return -max(cands)[1]


def test_typicality_matches_sorting_every_row():
    X, _ = _blobs()
    np.testing.assert_allclose(typicality(X[:50]), _slow_typicality(X[:50]), rtol=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_pick_matches_the_rule_in_words(seed):
    X, _ = _blobs(seed)
    labeled = []
    for _ in range(3):
        i = typiclust_pick(X, labeled, seed=seed)
        assert i == _slow_pick(X, labeled, seed)
        labeled.append(i)


def test_first_picks_cover_the_clusters_one_each():
    X, blob = _blobs()
    labeled = []
    for _ in range(4):
        labeled.append(typiclust_pick(X, labeled, seed=0))
    assert sorted(blob[labeled]) == [0, 1, 2, 3]


def test_exclude_and_labelled_points_are_never_picked():
    X, _ = _blobs()
    first = typiclust_pick(X, [], seed=0)
    again = typiclust_pick(X, [], seed=0, exclude=[first])
    assert again != first
    with pytest.raises(ValueError, match="nothing left"):
        typiclust_pick(X[:3], [0, 1], exclude=[2])


def test_subsampled_pool_picks_pool_indices(monkeypatch):
    X, blob = _blobs()
    monkeypatch.setattr(coldstart, "MAX_POINTS", 80)
    cs = ColdStart(X, n_labels=2, seed=0)
    i = cs.pick([])
    assert 0 <= i < len(X) and i in set(cs._rows.tolist())
    assert cs.active(1) and not cs.active(2)


def test_query_one_uses_the_cold_start_only_for_auto():
    from core.kernels import Kernel
    from core.learner import ActiveRLS
    from core.strategies import query_one
    X, blob = _blobs()
    learner = ActiveRLS.from_features(X, classes=[0, 1, 2, 3], kernel=Kernel("rbf", width=2.0), lam=0.1,
                                      random_state=0)
    cs = ColdStart(X, n_labels=2, seed=0)
    assert query_one(learner, "auto", cold_start=cs) == typiclust_pick(X, [], seed=0)
    learner.add(0, int(blob[0]))
    learner.add(70, int(blob[70]))
    rng = np.random.default_rng(0)
    assert query_one(learner, "auto", np.random.default_rng(0), cold_start=cs) == query_one(learner, "auto", rng)
    with pytest.raises(ValueError, match="n_labels"):
        ColdStart(X, n_labels=-1)


def test_a_session_asks_the_cold_start_picks_first(tmp_path, monkeypatch):
    from labeler.session import LabelingSession, SessionConfig
    monkeypatch.setattr(coldstart, "COLD_START_LABELS", 2)
    monkeypatch.setattr(coldstart, "COLD_START_MIN_CLASSES", 0)  # moons has two classes
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 120}))
    y = np.asarray(s.dataset.y)
    first = s.next_query()
    assert first == typiclust_pick(s.X, [], seed=s.config.seed)
    assert s.label(first, str(y[first]), expected_query=first)
    second = s.next_query()
    assert second == typiclust_pick(s.X, [first], seed=s.config.seed)
    monkeypatch.setattr(coldstart, "COLD_START_LABELS", 0)
    s2 = LabelingSession.create(tmp_path / "t.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 120}))
    assert s2._cold_start() is None


def test_cold_start_labels_by_class_count(monkeypatch):
    monkeypatch.setattr(coldstart, "COLD_START_LABELS", 10)
    monkeypatch.setattr(coldstart, "COLD_START_MIN_CLASSES", 0)
    assert [coldstart.cold_start_labels(k) for k in (1, 2, 3, 10)] == [10, 10, 10, 10]
    monkeypatch.setattr(coldstart, "COLD_START_MIN_CLASSES", 3)
    assert [coldstart.cold_start_labels(k) for k in (1, 2, 3, 10)] == [0, 0, 10, 10]
    monkeypatch.setattr(coldstart, "COLD_START_LABELS", 0)
    assert coldstart.cold_start_labels(10) == 0
    with pytest.raises(ValueError, match="n_classes"):
        coldstart.cold_start_labels(-1)


def test_a_two_class_session_has_no_cold_start_when_it_needs_three(tmp_path, monkeypatch):
    from labeler.session import LabelingSession, SessionConfig
    monkeypatch.setattr(coldstart, "COLD_START_LABELS", 2)
    monkeypatch.setattr(coldstart, "COLD_START_MIN_CLASSES", 3)
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 120}))
    assert len(s.classes) == 2 and s._cold_start() is None


def test_the_shipped_rule_is_ten_labels_on_three_classes_or_more():
    """The defaults chosen on the benchmark's first half (docs/defaults.md, rounds 5 and 6)."""
    assert coldstart.COLD_START_LABELS == 10 and coldstart.COLD_START_MIN_CLASSES == 3
    assert coldstart.CLUSTER_COVER == "model"
    assert coldstart.cold_start_labels(2) == 0 and coldstart.cold_start_labels(3) == 10


# --------------------------------------------------------------------------- cluster cover
def _slow_cover_pick(X, comp, labeled, exclude=()):
    """Oracle: the largest cluster (ties: lower id) with no label and a free point; its most
    typical free point (typicality by sorting every row)."""
    blocked = set(labeled) | set(exclude)
    best = None
    for c in sorted(set(comp.tolist()) - {-1}):
        members = [i for i in range(len(X)) if comp[i] == c]
        if any(comp[j] == c for j in labeled) or all(i in blocked for i in members):
            continue
        if best is None or len(members) > len(best):
            best = members
    if best is None:
        return None
    typ = _slow_typicality(X[best])
    return max((typ[t], -i) for t, i in enumerate(best) if i not in blocked)[1] * -1


def test_cover_pick_matches_the_rule_in_words():
    X, blob = _blobs(1)
    comp = blob.copy()
    comp[:3] = -1  # points of no cluster are never a cluster of their own
    labeled, exclude = [], [70]
    for _ in range(5):
        i = coldstart.cover_pick(X, comp, labeled, exclude)
        assert i == _slow_cover_pick(X, comp, labeled, exclude)
        if i is None:
            break
        labeled.append(i)
    assert sorted(comp[labeled]) == [0, 1, 2, 3]  # one per cluster, then None


def test_cluster_cover_stops_for_good_once_a_cluster_holds_two_classes():
    X, blob = _blobs(2)
    labels = {}
    cover = coldstart.ClusterCover(X, blob, lambda: labels)
    assert cover.active(0)
    labels[int(np.flatnonzero(blob == 0)[0])] = "a"
    assert cover.active(1) and blob[cover.pick(list(labels))] != 0
    labels[int(np.flatnonzero(blob == 0)[1])] = "b"  # cluster 0 holds two classes
    assert not cover.active(2)
    del labels[int(np.flatnonzero(blob == 0)[1])]
    assert not cover.active(1)  # refuted once, off for good


def test_starters_answer_in_order():
    X, blob = _blobs(3)
    labels = {}
    both = coldstart.Starters(ColdStart(X, 1, seed=0), coldstart.ClusterCover(X, blob, lambda: labels))
    assert both.active(0) and both.pick([]) == typiclust_pick(X, [], seed=0)
    first = typiclust_pick(X, [], seed=0)
    labels[first] = blob[first]
    assert both.active(1) and both.pick([first]) == coldstart.cover_pick(X, blob, [first])


def test_cluster_cover_by_score_takes_the_best_scored_point_of_an_uncovered_cluster():
    X, blob = _blobs(4)
    rng = np.random.default_rng(0)
    s = rng.random(len(X))
    first = int(np.flatnonzero(blob == 1)[0])
    labels = {first: 1}
    cover = coldstart.ClusterCover(X, blob, lambda: labels, score=lambda: s)
    exclude = [int(np.argmin(np.where(blob != 1, s, np.inf)))]  # the best point outside cluster 1, skipped
    free = [i for i in range(len(X)) if blob[i] != 1 and i not in exclude]
    assert cover.pick([first], exclude) == min(free, key=lambda i: (s[i], i))


def test_a_session_on_clusters_asks_one_label_per_cluster_first(tmp_path, monkeypatch):
    """The session asks the cluster cover's picks, as `labeler simulate` does."""
    from labeler.session import LabelingSession, SessionConfig
    monkeypatch.setattr(coldstart, "CLUSTER_COVER", "model")
    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="spheres", dataset_options={"n": 720}))
    clusters = s.settings.pool_clusters()
    assert clusters is not None and clusters.max() + 1 == 60
    y = np.asarray(s.dataset.y)
    asked = []
    for _ in range(4):
        q = s.next_query()
        assert q == s._cluster_cover().pick(list(s.labels))
        assert s.label(q, str(y[q]), expected_query=q)
        asked.append(q)
    assert len(set(clusters[asked].tolist())) == 4
    monkeypatch.setattr(coldstart, "CLUSTER_COVER", False)
    s2 = LabelingSession.create(tmp_path / "t.sqlite", SessionConfig(dataset="spheres", dataset_options={"n": 720}))
    assert s2._cluster_cover() is None
