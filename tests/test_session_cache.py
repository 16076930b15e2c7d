"""The session cache beside the store (labeler/session/cache.py): hit, miss, damage, stale
input, and a reopened session from the cache bit-identical to one computed afresh."""

from __future__ import annotations

import json

import numpy as np
import pytest

from labeler.session import LabelingSession, SessionConfig
from labeler.session.cache import SessionCache, cache_folder


# ---- the cache alone ----------------------------------------------------------------------------
def test_roundtrip_is_memory_mapped_read_only_and_exact(tmp_path):
    cache = SessionCache(tmp_path / "c")
    a = np.random.default_rng(0).standard_normal((50, 7))
    key = cache.key(what="x", seed=1)
    assert cache.load("x", key) is None and cache.misses == ["x"]
    assert cache.save("x", key, a, inputs={"seed": 1}).suffix == ".npy"
    b = cache.load("x", key)
    assert isinstance(b, np.memmap) and not b.flags.writeable
    assert b.dtype == a.dtype and np.array_equal(b, a) and cache.hits == ["x"]
    assert cache.load("x", key, shape=(50, 8)) is None  # the caller needs another shape: a miss
    assert cache.usage().entries == 1 and cache.usage().n_bytes > a.nbytes


def test_key_depends_on_every_input(tmp_path):
    k = SessionCache.key
    assert k(a=1, b="x") == k(b="x", a=1)
    assert len({k(a=1), k(a=2), k(a=1, b=None), k(a="1")}) == 4


@pytest.mark.parametrize("damage", ["flip", "truncate", "manifest", "no-manifest", "shape"])
def test_damaged_entry_is_a_miss_with_a_message_and_is_removed(tmp_path, damage):
    cache = SessionCache(tmp_path / "c")
    a = np.arange(200, dtype=np.float64).reshape(40, 5)
    key = cache.key(what="x")
    path = cache.save("x", key, a)
    meta = path.with_suffix(".json")
    if damage == "flip":
        raw = bytearray(path.read_bytes())
        raw[-9] ^= 0x10  # one bit of the data
        path.write_bytes(bytes(raw))
    elif damage == "truncate":
        path.write_bytes(path.read_bytes()[:-16])
    elif damage == "manifest":
        meta.write_text("{not json")
    elif damage == "no-manifest":
        meta.unlink()
    else:
        m = json.loads(meta.read_text())
        m["shape"] = [5, 40]
        meta.write_text(json.dumps(m))
    assert cache.load("x", key) is None
    if damage != "no-manifest":  # (without a manifest the entry never counted)
        assert "was not used" in cache.messages[-1] and "recomputed" in cache.messages[-1]
        assert not path.exists() and not meta.exists()
    cache.save("x", key, a)  # stored again, read again
    assert np.array_equal(cache.load("x", key), a)


def test_off_reads_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv("LABELER_CACHE", "off")
    cache = SessionCache.for_store(tmp_path / "s.sqlite")
    assert cache.folder == cache_folder(tmp_path / "s.sqlite") == tmp_path / "s.sqlite.cache"
    assert cache.save("x", "k", np.zeros(3)) is None and cache.load("x", "k") is None
    assert not cache.folder.exists()


def test_clear_and_usage(tmp_path):
    cache = SessionCache(tmp_path / "c")
    for i in range(3):
        cache.save("x", cache.key(i=i), np.zeros((10, i + 1)))
    used = cache.usage()
    assert used.entries == 3 and "3 arrays" in str(used)
    assert cache.clear() == used
    assert cache.usage().entries == 0 and not cache.folder.exists()


def test_objects_refused_and_no_pickle(tmp_path):
    cache = SessionCache(tmp_path / "c")
    with pytest.raises(TypeError, match="numeric arrays only"):
        cache.save("x", "k", np.array([{"a": 1}], dtype=object))


def test_unwritable_folder_keeps_nothing_and_says_so(tmp_path):
    (tmp_path / "c").write_text("a file where the folder should be")
    cache = SessionCache(tmp_path / "c")
    assert cache.save("x", "k", np.zeros(3)) is None
    assert "could not be kept" in cache.messages[-1]


# ---- sessions -------------------------------------------------------------------------------------
@pytest.fixture
def pool(tmp_path):
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(150, 6)), rng.normal(size=(150, 6)) + 2.5])
    y = np.array(["a"] * 150 + ["b"] * 150)
    path = tmp_path / "pool.npz"
    np.savez(path, X=X, y=y)
    return path


def _config(path, **kw):
    kw = {"layout": "pca", **kw}
    return SessionConfig(dataset=str(path), posterior="nystrom", rank=40, seed=5, initial_labels=4, **kw)


def _state(s):
    return dict(values=s.learner.decision_values.copy(), factor=np.array(s.learner.posterior.factor),
                X=np.array(s.X), layout=np.array(s.layout), query=s.next_query(), labels=s.labels)


def _labelled(store, path, monkeypatch):
    s = LabelingSession.create(store, _config(path))
    for _ in range(3):
        q = s.next_query()
        s.label(q, "a" if q < 150 else "b")
    sid = s.id
    s.close()
    return sid


def _assert_same(a, b):
    for name in ("values", "factor", "X", "layout"):
        assert a[name].dtype == b[name].dtype and np.array_equal(a[name], b[name]), name  # bit for bit
    assert a["query"] == b["query"] and a["labels"] == b["labels"]


def test_reopen_from_the_cache_is_bit_identical_to_a_fresh_computation(tmp_path, pool, monkeypatch):
    store = tmp_path / "s.sqlite"
    sid = _labelled(store, pool, monkeypatch)
    with LabelingSession.open(store, sid) as cached:
        assert {"features", "nystrom-factor"} <= set(cached.disk_cache.hits)  # (the layout: the store)
        assert isinstance(cached.X, np.memmap)
        hit = _state(cached)
    monkeypatch.setenv("LABELER_CACHE", "off")
    with LabelingSession.open(store, sid) as fresh:  # everything recomputed (or read from the store)
        assert fresh.disk_cache.hits == [] and not isinstance(fresh.X, np.memmap)
        _assert_same(hit, _state(fresh))


def test_a_damaged_factor_is_recomputed_with_a_message(tmp_path, pool, monkeypatch):
    store = tmp_path / "s.sqlite"
    sid = _labelled(store, pool, monkeypatch)
    with LabelingSession.open(store, sid) as s:
        good = _state(s)
    [factor] = cache_folder(store).glob("nystrom-factor-*.npy")
    raw = bytearray(factor.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    factor.write_bytes(bytes(raw))
    with LabelingSession.open(store, sid) as s:
        assert "nystrom-factor" in s.disk_cache.misses
        assert any("checksum" in m for m in s.disk_cache.messages)
        _assert_same(good, _state(s))
    with LabelingSession.open(store, sid) as s:  # kept again, whole
        assert "nystrom-factor" in s.disk_cache.hits


def test_a_changed_file_never_reads_the_old_arrays(tmp_path, pool, monkeypatch):
    store = tmp_path / "s.sqlite"
    LabelingSession.create(store, _config(pool)).close()
    before = {p.name for p in cache_folder(store).glob("*.npy")}
    with np.load(pool) as f:
        X, y = f["X"].copy(), f["y"]
    X[7, 2] += 1e-9  # one feature of one row
    np.savez(pool, X=X, y=y)
    s = LabelingSession.create(store, _config(pool))
    assert s.disk_cache.hits == []  # the new data's keys: nothing of the old file is read
    after = {p.name for p in cache_folder(store).glob("*.npy")}
    assert before < after  # new entries beside the old ones
    s.close()


def test_a_second_session_on_the_same_file_reuses_the_factor(tmp_path, pool):
    store = tmp_path / "s.sqlite"
    LabelingSession.create(store, _config(pool)).close()
    with LabelingSession.create(store, _config(pool, name="again")) as s:
        # (creation computes the features itself, to resolve the "auto" settings on them)
        assert {"factor-nystrom-uniform-r40-s5-landmarks", "nystrom-factor"} <= set(s.disk_cache.hits)


def test_other_settings_other_entries(tmp_path, pool):
    store = tmp_path / "s.sqlite"
    LabelingSession.create(store, _config(pool)).close()
    with LabelingSession.create(store, _config(pool, width=0.7)) as s:
        assert "nystrom-factor" not in s.disk_cache.hits  # another width: another factor
        assert "factor-nystrom-uniform-r40-s5-landmarks" in s.disk_cache.hits  # same landmarks
    with LabelingSession.create(store, _config(pool, standardize=False)) as s:
        assert s.disk_cache.hits == []  # other features: nothing shared


def test_background_layout_swap_in_the_session(tmp_path, pool):
    calls = []

    def slow_layout(X, method, seed):
        calls.append(method)
        return np.asarray(X)[:, :2] * 3.0 + seed

    store = tmp_path / "s.sqlite"
    s = LabelingSession.create(store, _config(pool, layout="umap"))
    assert s.layout_pending and s.layout_method == "pca" and s.layout.shape == (300, 2)
    q = s.next_query()  # the first query does not wait for the layout
    Z = s.compute_layout(compute=slow_layout)
    assert calls == ["umap"] and not s.layout_pending and s.layout_method == "umap"
    assert np.array_equal(s.layout, Z) and s.next_query() == q
    sid = s.id
    s.close()
    with LabelingSession.open(store, sid) as again:  # kept with the session
        assert not again.layout_pending and np.array_equal(again.layout, Z)
    SessionCache.for_store(store).clear()  # the store alone keeps it too
    with LabelingSession.open(store, sid) as again:
        assert np.array_equal(again.layout, Z) and calls == ["umap"]


def test_cli_reports_and_clears_the_cache(tmp_path, pool, capsys):
    from labeler.cli import main

    store = tmp_path / "s.sqlite"
    LabelingSession.create(store, _config(pool)).close()
    assert main(["cache", "--store", str(store)]) == 0
    out = capsys.readouterr().out
    assert "s.sqlite.cache" in out and "arrays" in out and "MiB" in out and "--clear" in out
    assert main(["cache", "--store", str(store), "--clear"]) == 0
    assert "Cleared" in capsys.readouterr().out and not cache_folder(store).exists()
    with LabelingSession.create(store, _config(pool)) as s:  # refilled as needed
        assert s.disk_cache.hits == [] and s.learner is not None


def test_the_command_line_reads_a_table_once_and_summarises_it_once(tmp_path, monkeypatch):
    import pandas as pd

    import labeler.data.columns as columns
    import labeler.data.load as load
    from labeler.cli.columns import open_data
    from labeler.cli.entry import build_parser

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"id": np.arange(50), **{f"f{j}": rng.normal(size=50) for j in range(4)},
                          "label": np.where(np.arange(50) < 25, "a", "b")})
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    reads, summaries = [], []
    real_read, real_summary = load.read_table, columns._summarize_columns
    monkeypatch.setattr(load, "read_table", lambda *a: reads.append(a) or real_read(*a))
    monkeypatch.setattr(columns, "_summarize_columns", lambda f: summaries.append(1) or real_summary(f))
    args = build_parser().parse_args(["app", str(path)])
    dataset, options = open_data(str(path), args, seed=0, quiet=True)
    assert len(reads) == 1 and len(summaries) == 1
    assert dataset.X.shape == (50, 4) and options["label_col"] == "label" and load._KEPT_FRAME is None
    # a later load of the same file reads it again (nothing kept)
    load.load_dataset(str(path), **{k: options[k] for k in ("label_col", "id_col")})
    assert len(reads) == 2


def test_reopening_a_table_session_takes_the_command_lines_data_set(tmp_path, monkeypatch):
    """``labeler app FILE`` on a saved session: the file read by the command line is the one
    the session opens with (not read again for the stored options)."""
    import pandas as pd

    import labeler.data.load as load
    from labeler.cli.columns import open_data
    from labeler.cli.entry import build_parser

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"id": np.arange(60), **{f"f{j}": rng.normal(size=60) for j in range(3)},
                          "label": np.where(np.arange(60) < 30, "a", "b")})
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    args = build_parser().parse_args(["app", str(path)])
    store = tmp_path / "s.sqlite"
    dataset, options = open_data(str(path), args, seed=0, quiet=True)
    load.hand_over(dataset)
    with LabelingSession.create(store, SessionConfig(dataset=str(path), dataset_options=options)) as s:
        sid = s.id
        assert s.dataset is dataset
    dataset, options = open_data(str(path), args, seed=0, quiet=True)  # the next `labeler app FILE`
    load.hand_over(dataset)
    reads = []
    real_read = load.read_table
    monkeypatch.setattr(load, "read_table", lambda *a: reads.append(a) or real_read(*a))
    with LabelingSession.open(store, sid) as again:
        assert again.dataset is dataset and reads == []


def test_column_summary_of_few_distinct_strings_equals_the_per_row_one():
    """The label-column shortcut of labeler/data/columns.py (distinct values weighted by their
    counts) against the plain per-row means."""
    import pandas as pd

    import labeler.data.columns as columns

    rng = np.random.default_rng(4)
    values = np.array(["cat", "two words", "img/a.png", " spaced x ", "", "7"], dtype=object)
    col = pd.Series(values[rng.integers(0, len(values), 500)])
    col[rng.choice(500, 20, replace=False)] = None
    frame = pd.DataFrame({"s": col, "n": pd.Series(["x"] * 5 + ["1", "2"] * 247 + ["3"])})
    fast = columns._summarize_columns(frame)
    text = col.dropna().astype(str)
    assert fast[0].n_unique == 6 and fast[0].n_missing == 20
    assert np.isclose(fast[0].mean_words, text.str.split().str.len().mean(), rtol=1e-12)
    assert np.isclose(fast[0].mean_chars, text.str.len().mean(), rtol=1e-12)
    assert np.isclose(fast[0].image_share,
                      text.str.lower().str.strip().str.endswith(columns.IMAGE_SUFFIXES).mean(), rtol=1e-12)
    assert fast[1].kind == "mixed" and fast[1].n_stray == 5  # the strays still found


# ---- background writers and close ---------------------------------------------------------------
def test_an_array_kept_while_the_session_closes_is_written_in_its_request(tmp_path):
    """``close`` refuses new background writers once it began (it joined the ones before): an
    array arriving then is written in its request while the store is open, dropped after."""
    from labeler.store import Store

    s = LabelingSession.create(tmp_path / "s.sqlite", SessionConfig(dataset="moons", dataset_options={"n": 60},
                                                                    layout="pca"))
    sid = s.id
    started = []
    s._write_later = lambda: started.append("writer")  # a background writer would call this
    close_store = s._store.close

    def arrives_while_closing():  # after close() joined the writers, before the store closes
        s._cache_array_later("late", np.arange(3.0))
        close_store()

    s._store.close = arrives_while_closing
    s.close()
    s._cache_array_later("after", np.arange(3.0))  # the store is closed: dropped, nothing raised
    assert started == []
    with Store(tmp_path / "s.sqlite") as store:
        assert np.array_equal(store.get_array(sid, "late"), np.arange(3.0))
        assert store.get_array(sid, "after") is None
