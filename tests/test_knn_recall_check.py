"""The approximate searches' own recall estimate and their widening rounds (core/kernels/knn_search.py)."""

import numpy as np
import pytest

from core.kernels import knn_search
from core.kernels.knn_search import SearchReport, exact_neighbours_of, nearest_neighbours, sampled_recall
from knn_oracle import brute_force


def gaussian(n, d, seed=0):
    """Isotropic points: the hard case for graph searches (intrinsic dimension d)."""
    return np.random.default_rng(seed).standard_normal((n, d))


def true_recall(ind, exact):
    return float(np.mean([len(set(a) & set(b)) / len(b) for a, b in zip(ind, exact)]))


def test_exact_neighbours_of_is_brute_force_with_ties_by_index():
    """The sample's exact neighbours against a brute force in numpy, and equal distances (copies
    of a point) in index order."""
    X = gaussian(2_503, 6, seed=1)
    rows = np.array([0, 5, 17, 2_500, 2_502])
    ref, ref_dist = brute_force(X, 9)
    got, d2 = exact_neighbours_of(X, rows, 9)
    assert got.shape == d2.shape == (5, 9) and not (got == rows[:, None]).any()
    np.testing.assert_array_equal(got, ref[rows])
    np.testing.assert_allclose(np.sqrt(d2), ref_dist[rows], rtol=1e-12)
    copies = np.repeat(gaussian(50, 3, seed=2), 4, axis=0)  # each point 4 times: 3 copies at distance 0
    got, d2 = exact_neighbours_of(copies, np.array([0, 7]), 5)
    np.testing.assert_array_equal(got[:, :3], [[1, 2, 3], [4, 5, 6]])
    assert (d2[:, :3] == 0).all() and (d2[:, 3:] > 0).all()


def test_sampled_recall_is_one_for_exact_lists_and_counts_misses():
    X = gaussian(1_500, 5, seed=2)
    ref, _ = brute_force(X, 10)
    recall, used = sampled_recall(X, ref, 10, seed=0, sample=300)
    assert used == 300 and recall == 1.0
    damaged = ref.copy()
    damaged[:, 9] = (damaged[:, 9] + 1) % 1_500  # the 10th neighbour replaced by another point (mostly wrong)
    recall, _ = sampled_recall(X, damaged, 10, seed=0, sample=1_500)
    assert recall == pytest.approx(true_recall(damaged, ref), abs=1e-12) and recall < 0.95


def test_widening_runs_while_the_estimate_is_low_and_never_loses_recall(monkeypatch):
    """A weak search (a tiny hnsw ``ef`` and ``M``) on isotropic data falls short of the target:
    the widening rounds run in order, each estimate at least the one before, and the answer's
    true recall is above the plain search's; with the target met, no round runs."""
    X = gaussian(6_000, 16, seed=3)
    ref, _ = brute_force(X, 10)
    monkeypatch.setattr(knn_search, "HNSW_FIRST", None)  # the weak index alone
    monkeypatch.setitem(knn_search.HNSW_PARAMS, "M", 4)
    monkeypatch.setitem(knn_search.HNSW_PARAMS, "ef_construction", 10)
    monkeypatch.setitem(knn_search.HNSW_PARAMS, "ef", 11)
    monkeypatch.setattr(knn_search, "RECALL_SAMPLE", 300)
    monkeypatch.setattr(knn_search, "RECALL_TARGET", 2.0)  # never met: every width runs
    wide = SearchReport()
    ind_wide, dist_wide = nearest_neighbours(X, 10, method="hnsw", seed=0, report=wide)
    assert wide.method == "hnsw" and wide.widths == list(knn_search.WIDEN_WIDTHS)
    assert len(wide.recalls) == 1 + len(knn_search.WIDEN_WIDTHS) and wide.sample == 300
    assert all(b >= a for a, b in zip(wide.recalls, wide.recalls[1:]))
    monkeypatch.setattr(knn_search, "RECALL_TARGET", 0.0)  # met at once: no widening
    plain = SearchReport()
    ind_plain, dist_plain = nearest_neighbours(X, 10, method="hnsw", seed=0, report=plain)
    assert plain.widths == [] and plain.recalls == [plain.recall]
    assert plain.recall == wide.recalls[0]  # the same search and first round
    assert true_recall(ind_wide, ref) > true_recall(ind_plain, ref)
    assert (dist_wide <= dist_plain + 1e-12).all()  # each j-th distance at most the plain one's
    np.testing.assert_allclose(dist_wide, np.linalg.norm(X[ind_wide] - X[:, None, :], axis=2), rtol=1e-12)
    again = nearest_neighbours(X, 10, method="hnsw", seed=0)  # target 0: deterministic, as plain
    np.testing.assert_array_equal(again[0], ind_plain)
    monkeypatch.setattr(knn_search, "RECALL_TARGET", 2.0)
    cells = SearchReport()  # the cell search's table is k + 1 + 5 wide: only the width it holds runs
    nearest_neighbours(X, 10, method="cells", seed=0, report=cells)
    assert cells.widths == [15]


def test_widening_runs_until_the_estimate_is_surely_above_the_target(monkeypatch):
    """The rule is the estimate less RECALL_CONFIDENCE standard errors: a target between that bound
    and the estimate widens the lists; with no margin asked it does not. The standard error is
    the spread of the sampled points' shares found (against brute force) over sqrt(points)."""
    X = gaussian(6_000, 16, seed=3)
    ref, _ = brute_force(X, 10)
    monkeypatch.setattr(knn_search, "HNSW_FIRST", None)
    monkeypatch.setitem(knn_search.HNSW_PARAMS, "M", 4)
    monkeypatch.setitem(knn_search.HNSW_PARAMS, "ef_construction", 10)
    monkeypatch.setitem(knn_search.HNSW_PARAMS, "ef", 11)
    monkeypatch.setattr(knn_search, "RECALL_SAMPLE", 300)
    monkeypatch.setattr(knn_search, "RECALL_TARGET", 0.0)
    plain = SearchReport()
    ind, _ = nearest_neighbours(X, 10, method="hnsw", seed=0, report=plain)
    rows, _ = knn_search._recall_sample(X, 10, 0)
    share = np.array([len(set(ind[i]) & set(ref[i])) / 10 for i in rows])
    assert plain.recall == pytest.approx(share.mean(), abs=1e-12)
    assert plain.error == pytest.approx(share.std(ddof=1) / np.sqrt(300), rel=1e-9) and plain.error > 0
    monkeypatch.setattr(knn_search, "RECALL_TARGET", plain.recall - 0.5 * plain.error)
    monkeypatch.setattr(knn_search, "RECALL_CONFIDENCE", 1.64)
    unsure = SearchReport()
    nearest_neighbours(X, 10, method="hnsw", seed=0, report=unsure)
    assert unsure.widths[:1] == [knn_search.WIDEN_WIDTHS[0]]
    monkeypatch.setattr(knn_search, "RECALL_CONFIDENCE", 0.0)
    sure = SearchReport()
    nearest_neighbours(X, 10, method="hnsw", seed=0, report=sure)
    assert sure.widths == []


def test_duplicates_count_as_found_whichever_copy_a_list_holds():
    """Exact lists of a pool of 20 copies of each point: every list is right, whichever copies it
    names, so the estimate is 1 (counting only the brute force's own choice gave 0.56)."""
    X = np.repeat(gaussian(300, 5, seed=5), 20, axis=0)
    own = np.arange(X.shape[0])
    group = own // 20
    lists = np.array([[j for j in range(g * 20 + 19, g * 20 - 1, -1) if j != i][:10]  # the other copies, last first
                      for i, g in zip(own, group)])
    recall, used = sampled_recall(X, lists, 10, seed=0, sample=500)
    assert used == 500 and recall == 1.0
    wrong = lists.copy()
    wrong[:, :5] = (wrong[:, :5] + 20) % X.shape[0]  # five of them copies of another point
    assert sampled_recall(X, wrong, 10, seed=0, sample=500)[0] == pytest.approx(0.5)


def test_estimate_tracks_the_true_recall(monkeypatch):
    """On isotropic points and a weak index (true recall well below 1), the estimate on its seeded
    sample is within a few points of the recall over all points."""
    X = gaussian(6_000, 16, seed=4)
    ref, _ = brute_force(X, 10)
    monkeypatch.setattr(knn_search, "HNSW_FIRST", None)  # the weak index alone
    monkeypatch.setitem(knn_search.HNSW_PARAMS, "M", 4)
    monkeypatch.setitem(knn_search.HNSW_PARAMS, "ef_construction", 10)
    monkeypatch.setitem(knn_search.HNSW_PARAMS, "ef", 11)
    monkeypatch.setattr(knn_search, "RECALL_TARGET", 0.0)  # no widening: the first round's lists
    report = SearchReport()
    ind, _ = nearest_neighbours(X, 10, method="hnsw", seed=1, report=report)
    truth = true_recall(ind, ref)
    assert report.method == "hnsw" and truth < 0.97
    assert abs(report.recall - truth) < 0.04
    exact = SearchReport()
    nearest_neighbours(X, 10, method="exact", report=exact)
    assert exact.method == "exact" and exact.recall is None


def test_the_graph_progress_line_says_the_estimated_recall():
    from labeler.session.graphs import graph_ready_words

    assert graph_ready_words(SearchReport(method="exact"), 10) == "kNN graph ready"
    words = graph_ready_words(SearchReport(method="hnsw", recall=0.9531, recalls=[0.927, 0.941, 0.9531],
                                           widths=[15, 20], sample=200), 10)
    assert words == ("kNN graph ready: recall@10 0.953 (estimated on 200 points against exact neighbours; "
                     "lists widened to 15, 20)")
    assert graph_ready_words(SearchReport(method="hnsw", recall=0.9531, error=0.0042, sample=500), 10) == (
        "kNN graph ready: recall@10 0.953 ± 0.004 (estimated on 500 points against exact neighbours)")
    assert graph_ready_words(SearchReport(method="cells", recall=1.0, recalls=[1.0], sample=200), 10).endswith(
        "recall@10 1.000 (estimated on 200 points against exact neighbours)")


def test_candidates_recall_is_sampled_recall_of_the_nearest_candidates():
    """The first index's check (the k nearest distinct candidates of each sampled point, any order,
    repeats, the point itself and empty slots among them) against sampled_recall of those k
    nearest picked by brute force."""
    X = gaussian(2_000, 8, seed=7)
    ref, _ = brute_force(X, 20)
    rng = np.random.default_rng(0)
    lists = np.hstack([ref[:, rng.permutation(20)[:12]], rng.integers(0, 2_000, (2_000, 6)),
                       np.arange(2_000)[:, None], np.full((2_000, 1), -1)])
    lists[:, 1] = lists[:, 0]  # a repeat
    lists = np.take_along_axis(lists, rng.permuted(np.tile(np.arange(20), (2_000, 1)), axis=1), 1)
    nearest = np.empty((2_000, 10), dtype=np.int64)  # the obvious way: sort each row's distinct others
    for i in range(2_000):
        others = np.array(sorted({int(j) for j in lists[i] if j >= 0 and j != i}))
        d = np.linalg.norm(X[others] - X[i], axis=1)
        nearest[i] = others[np.lexsort((others, d))][:10]
    rows, kth = knn_search._recall_sample(X, 10, seed=3, sample=400)
    expected, _ = sampled_recall(X, nearest, 10, seed=3, sample=400)
    got = knn_search.candidates_recall(X, rows, kth, lists[rows], 10)
    assert got == pytest.approx(expected, abs=1e-12) and 0.3 < got < 1.0


def test_first_index_kept_when_its_search_is_good_else_the_full_one(monkeypatch):
    """The cheaper first index is kept when its sampled search recall reaches the threshold (the
    report names its settings); with the threshold out of reach it is dropped and the full
    index's answer is exactly the one of the full index alone."""
    X = gaussian(4_000, 12, seed=8)
    monkeypatch.setattr(knn_search, "RECALL_TARGET", 0.0)  # no widening: the indices' own lists
    kept = SearchReport()
    ind_kept, _ = nearest_neighbours(X, 10, method="hnsw", seed=2, report=kept)
    assert kept.first_search_recall is not None and kept.first_search_recall >= knn_search.FIRST_MIN_SEARCH_RECALL
    assert kept.index["M"] == knn_search.HNSW_FIRST["M"] and kept.index["ef"] == knn_search.HNSW_FIRST["ef"]
    monkeypatch.setattr(knn_search, "FIRST_MIN_SEARCH_RECALL", 1.01)  # never reached: the full index
    dropped = SearchReport()
    ind_full, dist_full = nearest_neighbours(X, 10, method="hnsw", seed=2, report=dropped)
    assert dropped.first_search_recall == kept.first_search_recall
    assert dropped.index["M"] == knn_search.HNSW_PARAMS["M"] and dropped.index["ef"] == knn_search.HNSW_PARAMS["ef"]
    monkeypatch.setattr(knn_search, "HNSW_FIRST", None)
    alone = SearchReport()
    ind_alone, dist_alone = nearest_neighbours(X, 10, method="hnsw", seed=2, report=alone)
    np.testing.assert_array_equal(ind_full, ind_alone)
    np.testing.assert_array_equal(dist_full, dist_alone)
    assert alone.first_search_recall is None and alone.index == dropped.index
