"""Start-up without reading the file again (labeler/session/source_snapshot.py) and the cache's
checksum (labeler/session/cache.py): a changed file is read again and refused by its session,
a damaged snapshot is rebuilt with a message, and a reopened session shows the same query as
the cold start."""

from __future__ import annotations

import os
import struct
import threading
import zlib

import numpy as np
import pytest

import labeler.session.cache as cache_module
import labeler.session.source_snapshot as snap
from labeler.cli.app import _app_data_options
from labeler.cli.entry import build_parser
from labeler.session import LabelingSession, SessionConfig
from labeler.session.cache import cache_folder, checksum


# ---- the checksum against a plain one -----------------------------------------------------------
def _checksum_oracle(data: bytes, block: int) -> str:
    """Word by word in Python: sum of 64-bit little-endian words per block of ``block`` bytes."""
    n_words = len(data) // 8
    total = weighted = 0
    for b, a in enumerate(range(0, n_words * 8, block)):
        chunk = data[a:min(a + block, n_words * 8)]
        s = sum(struct.unpack(f"<{len(chunk) // 8}Q", chunk)) % 2**64
        total += s
        weighted += (b + 1) * s
    return f"{total % 2**64:016x}-{weighted % 2**64:016x}-{zlib.crc32(data[n_words * 8:]):08x}"


@pytest.mark.parametrize("threads", [1, 3])
@pytest.mark.parametrize("dtype,size", [(np.float64, 1000), (np.uint8, 1003), (np.int32, 7), (np.float64, 0)])
def test_checksum_equals_the_word_by_word_sum(monkeypatch, dtype, size, threads):
    monkeypatch.setattr(cache_module, "_CRC_BLOCK", 256)  # several blocks
    a = np.random.default_rng(3).integers(0, 2**31, size).astype(dtype)
    assert checksum(a, threads=threads) == _checksum_oracle(a.tobytes(), 256)


def test_checksum_sees_a_flipped_bit_and_swapped_blocks(monkeypatch):
    monkeypatch.setattr(cache_module, "_CRC_BLOCK", 64)
    a = np.random.default_rng(1).standard_normal(64)
    base = checksum(a)
    for byte in (0, 77, 511):
        raw = bytearray(a.tobytes())
        raw[byte] ^= 0x04
        assert checksum(np.frombuffer(bytes(raw), dtype=np.float64)) != base
    swapped = np.concatenate([a[8:16], a[:8], a[16:]])  # the first two 64-byte blocks traded
    assert checksum(swapped) != base


# ---- the file's identity ------------------------------------------------------------------------
def test_identity_changes_with_the_contents_even_with_size_and_time_kept(tmp_path, monkeypatch):
    path = tmp_path / "f.bin"
    data = bytearray(np.random.default_rng(0).bytes(50_000))
    path.write_bytes(bytes(data))
    first = snap.file_identity(path)
    st = os.stat(path)

    def rewrite(offset):
        changed = bytearray(data)
        changed[offset] ^= 0x01
        path.write_bytes(bytes(changed))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # the time put back, as cp -p does
        return snap.file_identity(path)

    assert snap.file_identity(path) == first
    assert rewrite(25_000) != first  # small file: hashed whole, every byte counts
    monkeypatch.setattr(snap, "WHOLE_FILE_BYTES", 1000)
    monkeypatch.setattr(snap, "N_BLOCKS", 4)
    monkeypatch.setattr(snap, "BLOCK_BYTES", 100)
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    sampled = snap.file_identity(path)
    last = len(data) - 100
    assert rewrite(last // 3 + 5) != sampled  # inside the second sampled block
    assert rewrite(len(data) - 1) != sampled  # the last byte is in the last block
    path.write_bytes(bytes(data))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert snap.file_identity(path) != sampled  # the time alone


# ---- the command line and the session -----------------------------------------------------------
def _wait_for_writers():
    for t in threading.enumerate():
        if t.name == "labeler-snapshot-write":
            t.join()


@pytest.fixture
def npz_file(tmp_path):
    rng = np.random.default_rng(2)
    X = np.vstack([rng.normal(-1, 1, (150, 3)), rng.normal(1, 1, (150, 3))])
    path = tmp_path / "pool.npz"
    np.savez(path, X=X, y=np.array(["a"] * 150 + ["b"] * 150))
    return path


@pytest.fixture
def parquet_file(tmp_path):
    import pandas as pd

    rng = np.random.default_rng(3)
    frame = pd.DataFrame({"id": np.arange(300) + 1000, **{f"f{j}": rng.normal(size=300) for j in range(3)},
                          "label": np.where(np.arange(300) < 150, "a", "b")})
    path = tmp_path / "t.parquet"
    frame.to_parquet(path)
    return path


def _cli(path, store):
    args = build_parser().parse_args(["app", str(path), "--store", str(store)])
    options = _app_data_options(args)
    _wait_for_writers()
    return options


def _start(path, store, session_id=None):
    """What ``labeler app FILE`` does: the command line's load, then the session."""
    options = _cli(path, store)
    if session_id is None:
        return LabelingSession.create(store, SessionConfig(dataset=str(path), dataset_options=options,
                                                           posterior="nystrom", rank=30, layout="pca"))
    return LabelingSession.open(store, session_id)


def _reads(monkeypatch):
    """Calls of the readers of NPZ files and tables, from now on."""
    import labeler.data.load as load

    calls = []
    real_npz, real_table = load.load_npz, load.read_table
    monkeypatch.setattr(load, "load_npz", lambda *a, **k: calls.append(a) or real_npz(*a, **k))
    monkeypatch.setattr(load, "read_table", lambda *a, **k: calls.append(a) or real_table(*a, **k))
    return calls


@pytest.mark.parametrize("which", ["npz_file", "parquet_file"])
def test_reopen_maps_the_snapshot_and_shows_the_cold_starts_query(tmp_path, monkeypatch, request, which, capsys):
    import pandas as pd

    path = request.getfixturevalue(which)
    store = tmp_path / "s.sqlite"
    with _start(path, store) as cold:
        sid, query, cold_data = cold.id, cold.next_query(), cold.dataset
    printed_cold = capsys.readouterr().err
    reads = _reads(monkeypatch)
    with _start(path, store, sid) as again:
        assert reads == []  # the file was not read: the snapshot was mapped
        assert again.next_query() == query
        assert {"features", "nystrom-factor", "nystrom-norms"} <= set(again.disk_cache.hits)
        d = again.dataset
        assert isinstance(d.X, np.memmap) and np.array_equal(d.X, cold_data.X)
        assert d.y.dtype == cold_data.y.dtype and np.array_equal(d.y, cold_data.y)
        assert d.ids.dtype == cold_data.ids.dtype and np.array_equal(d.ids, cold_data.ids)
        assert d.classes == cold_data.classes and d.feature_names == cold_data.feature_names
        assert d.load_options == cold_data.load_options and d.params == cold_data.params
        pd.testing.assert_frame_equal(d.frame, cold_data.frame)
        if which == "parquet_file":  # the feature columns are views of the mapped features, not copies
            assert all(np.shares_memory(d.frame[f"f{j}"].to_numpy(), d.X) for j in range(3))
            assert not list(cache_folder(store).glob("dataset-col1-*"))  # (f0: not kept twice)
        values = again.learner.decision_values.copy()
    assert capsys.readouterr().err == printed_cold  # the same lines (a table's roles) printed
    monkeypatch.setenv("LABELER_CACHE", "off")  # everything read and computed afresh
    with _start(path, store, sid) as fresh:
        assert fresh.next_query() == query and np.array_equal(fresh.learner.decision_values, values)


def test_a_changed_file_is_read_again_and_refused_by_its_session(tmp_path, npz_file):
    store = tmp_path / "s.sqlite"
    with _start(npz_file, store) as cold:
        sid = cold.id
    st = os.stat(npz_file)
    with np.load(npz_file) as f:
        X, y = f["X"].copy(), f["y"]
    X[7, 2] += 1e-9  # one value of one row; same size, and the time put back
    np.savez(npz_file, X=X, y=y)
    assert os.stat(npz_file).st_size == st.st_size
    os.utime(npz_file, ns=(st.st_atime_ns, st.st_mtime_ns))
    with pytest.raises(ValueError, match="has changed"):
        _start(npz_file, store, sid)


def test_a_damaged_snapshot_is_rebuilt_with_a_message(tmp_path, npz_file, capsys, monkeypatch):
    store = tmp_path / "s.sqlite"
    with _start(npz_file, store) as cold:
        sid, query = cold.id, cold.next_query()
    [features] = cache_folder(store).glob("dataset-X-*.npy")
    raw = bytearray(features.read_bytes())
    raw[len(raw) - 40] ^= 0x20
    features.write_bytes(bytes(raw))
    capsys.readouterr()
    reads = _reads(monkeypatch)
    with _start(npz_file, store, sid) as again:
        assert len(reads) == 1  # read from the file again
        assert again.next_query() == query
    err = capsys.readouterr().err
    assert "dataset-X" in err and "checksum" in err and "recomputed" in err
    reads.clear()
    with _start(npz_file, store, sid):
        assert reads == []  # kept again, whole
    [truncated] = cache_folder(store).glob("dataset-X-*.npy")
    truncated.write_bytes(truncated.read_bytes()[:-64])
    reads.clear()
    with _start(npz_file, store, sid) as again:
        assert len(reads) == 1 and again.next_query() == query
    assert "bytes, not" in capsys.readouterr().err


def test_cache_off_keeps_no_snapshot(tmp_path, npz_file, monkeypatch):
    monkeypatch.setenv("LABELER_CACHE", "off")
    store = tmp_path / "s.sqlite"
    _cli(npz_file, store)
    assert not cache_folder(store).exists() or not list(cache_folder(store).glob("dataset-*"))


def test_data_sets_with_texts_or_images_are_not_kept(tmp_path):
    from labeler.data import load_dataset

    d = load_dataset("digits")  # images
    assert snap.snapshot_arrays(d, "", "x", {}) is None


# ---- 10^6 points ---------------------------------------------------------------------------------
@pytest.mark.large
def test_reopen_at_a_million_points_shows_the_cold_starts_query(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1_000_000, 32))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(1_000_000) > 0, "pos", "neg")
    path = tmp_path / "big.npz"
    np.savez(path, X=X, y=y)
    del X
    store = tmp_path / "s.sqlite"
    options = _cli(path, store)
    with LabelingSession.create(store, SessionConfig(dataset=str(path), dataset_options=options)) as cold:
        sid, query = cold.id, cold.next_query()
    with _start(path, store, sid) as again:
        assert isinstance(again.dataset.X, np.memmap)
        assert {"features", "nystrom-factor"} <= set(again.disk_cache.hits)
        assert again.next_query() == query


# ---- the factor's finiteness, checked on its row norms ------------------------------------------
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_factor_with_a_non_finite_value_is_refused_where_it_is(bad):
    from core.posteriors import FactorPosterior

    Phi = np.random.default_rng(0).standard_normal((40, 5))
    Phi[17, 3] = bad
    with pytest.raises(ValueError, match=r"1 NaN or infinite value\(s\), first at row 17, column 3"):
        FactorPosterior(Phi)
    Phi[17, 3] = 1e200  # finite, but its square is not
    with pytest.raises(ValueError, match="row 17 has a squared norm beyond float64"):
        FactorPosterior(Phi)
    Phi[17, 3] = 1.0
    assert FactorPosterior(Phi).rank == 5


# ---- the PCA map without scikit-learn ------------------------------------------------------------
@pytest.mark.parametrize("n,d", [(400, 2), (500, 5), (3000, 40), (70_000, 8)])
def test_pca_map_equals_scikit_learns_pca(n, d):
    from sklearn.decomposition import PCA

    from labeler.data.layout import pca_2d

    rng = np.random.default_rng(n + d)
    X = rng.standard_normal((n, d)) * np.linspace(4, 1, d) + rng.normal(0, 10, d)  # off-centre
    want = PCA(n_components=2, random_state=0).fit_transform(X)
    got = pca_2d(X)
    assert got.shape == (n, 2)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 * np.abs(want).max())  # signs included


def test_numba_warm_up_leaves_the_kernels_exact():
    """The warm-up (numba's target loaded in a thread while the file is read) changes no result:
    the expected risk after it equals the plain reference."""
    from core.criteria._expected_risk_numba import expected_risk_binary
    from core.criteria.risk import expected_risk_reference_rows
    from labeler.runtime import warm_numba_in_background

    warm_numba_in_background().join()
    rng = np.random.default_rng(5)
    R, m = rng.standard_normal((4, 30)), rng.uniform(-1.5, 1.5, 30)
    rows, cand = np.arange(30), np.array([3, 7, 11, 29])
    out = np.empty(4)
    expected_risk_binary(R, rows, m, cand, 0.5, 0.5, 1.0, 1.0, out)
    want = expected_risk_reference_rows(R, rows, m[None, :].T, cand, np.array([0.5, 0.5]), np.ones(2))
    np.testing.assert_allclose(out, want, rtol=1e-12, atol=1e-12)


# ---- a partly filled label column ----------------------------------------------------------------
def _partly_labelled(tmp_path, suffix):
    import pandas as pd

    rng = np.random.default_rng(5)
    label = np.where(np.arange(300) < 150, "a", "b").astype(object)
    label[rng.choice(300, 240, replace=False)] = None  # 60 rows carry a label, the rest are the pool
    label[[i for i in range(300) if label[i] is None][:3]] = "  "  # blank: unlabelled too
    frame = pd.DataFrame({**{f"f{j}": rng.normal(size=300) for j in range(4)}, "label": label})
    path = tmp_path / f"partly{suffix}"
    frame.to_csv(path, index=False) if suffix == ".csv" else frame.to_parquet(path)
    return path


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_partly_filled_label_column_is_kept_and_reopens_the_same(tmp_path, monkeypatch, suffix):
    import pandas as pd

    path = _partly_labelled(tmp_path, suffix)
    store = tmp_path / "s.sqlite"
    with _start(path, store) as cold:
        sid, query, labels, cold_data = cold.id, cold.next_query(), cold.labels, cold.dataset
        assert len(labels) == 60
    assert list(cache_folder(store).glob("dataset-meta-*.npy"))  # the snapshot was kept
    reads = _reads(monkeypatch)
    with _start(path, store, sid) as again:
        assert reads == []  # mapped, not read
        assert again.next_query() == query and again.labels == labels
        known, before = again.dataset.file_labels, cold_data.file_labels
        assert known.column == before.column and known.n_rows == before.n_rows
        assert np.array_equal(known.rows, before.rows) and known.labels.dtype == before.labels.dtype
        assert np.array_equal(known.labels, before.labels)
        pd.testing.assert_frame_equal(again.dataset.frame, cold_data.frame)
    reads.clear()
    # a new session on the same file, from the snapshot, starts from the same file labels
    with _start(path, store) as second:
        assert reads == [] and second.labels == labels and second.next_query() == query


@pytest.mark.parametrize("gaps", [[None, None], [np.nan, np.nan], [None, np.nan]])
def test_string_columns_with_missing_values_come_back_exactly(tmp_path, gaps):
    import pandas as pd

    from labeler.data.dataset import Dataset
    from labeler.session.cache import SessionCache

    values = np.array(["u", gaps[0], "v", gaps[1], "u"], dtype=object)
    frame = pd.DataFrame({"f": np.arange(5.0), "s": pd.Series(values, dtype=object),
                          "t": pd.array(["p", None, "q", "p", None], dtype="string"),
                          "u": pd.Series(["p", None, "q", "p", None], dtype="str")})
    d = Dataset(name="m", X=np.arange(10.0).reshape(5, 2), y=None, classes=[], feature_names=["a", "b"],
                ids=np.arange(5), layout=None, images=None, image_paths=None, frame=frame, params={},
                load_options={})
    kept = snap.snapshot_arrays(d, "", "fp", {})
    if gaps[0] is not gaps[1]:  # missing values of two kinds: not kept (the file is read)
        assert kept is None
        return
    cache = SessionCache(tmp_path / "c")
    assert snap.save_snapshot(cache, "k", *kept)
    back, _, _ = snap.load_snapshot(cache, "k")
    pd.testing.assert_frame_equal(back.frame, frame)
    assert [type(v) for v in back.frame["s"]] == [type(v) for v in values]


# ---- the factor's row norms, kept beside it ------------------------------------------------------
def test_a_factor_posterior_given_its_row_norms_equals_one_that_computes_them():
    from core.kernels import Kernel
    from core.posteriors import FactorPosterior, NystromPosterior

    rng = np.random.default_rng(8)
    X = rng.standard_normal((200, 4))
    computed = NystromPosterior(X, Kernel("rbf", 1.5), X[:20])
    norms = np.einsum("ij,ij->i", computed.factor, computed.factor)  # the obvious way
    given = NystromPosterior(X, Kernel("rbf", 1.5), X[:20], Phi=np.array(computed.factor), row_norms=norms)
    assert np.array_equal(computed.prior_diag(), norms) and np.array_equal(given.prior_diag(), norms)
    idx = [3, 50, 120]
    for post in (computed, given):
        post.update(idx, -0.1 * np.eye(3))
    assert np.array_equal(computed.diag(), given.diag())
    with pytest.raises(ValueError, match="row_norms must have shape"):
        FactorPosterior(computed.factor, row_norms=norms[:-1])
    bad = norms.copy()
    bad[5] = np.nan  # a non-finite norm is refused as a non-finite row is
    with pytest.raises(ValueError):
        FactorPosterior(computed.factor, row_norms=bad)


def test_a_factor_cached_without_its_norms_gets_them_on_reopen(tmp_path, npz_file):
    store = tmp_path / "s.sqlite"
    with _start(npz_file, store) as cold:
        sid, query = cold.id, cold.next_query()
    for f in cache_folder(store).glob("nystrom-norms-*"):
        f.unlink()  # as a cache written before the norms were kept
    with _start(npz_file, store, sid) as again:
        assert "nystrom-factor" in again.disk_cache.hits and "nystrom-norms" in again.disk_cache.misses
        assert again.next_query() == query
    with _start(npz_file, store, sid) as third:
        assert "nystrom-norms" in third.disk_cache.hits and third.next_query() == query
