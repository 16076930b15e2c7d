"""Loading within the memory the machine has: CSV files estimated before reading and read in
chunks (peak about the final arrays plus one chunk), Parquet files estimated from their
metadata, images decoded one at a time with a pixel limit checked before decoding."""

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pandas.testing import assert_frame_equal

from labeler import memory
from labeler.data import DatasetError, load_dataset
from labeler.data import table_files
from labeler.data.table_files import estimate_csv, read_csv_bounded

ROOT = Path(__file__).resolve().parents[1]


# --------------------------------------------------------------------------- chunked CSV == pandas
def _awkward_table(n=3000, seed=0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    t = pd.DataFrame({
        "f": rng.normal(size=n),
        "i": rng.integers(-5, 5, size=n),
        "late_nan": rng.integers(0, 9, size=n).astype(float),
        "flag": rng.random(n) < 0.5,
        "text": [f"row {k}, with \"quotes\"" + ("\nand a line break" if k % 97 == 0 else "") for k in range(n)],
        "label": np.where(rng.random(n) < 0.3, "cät", "dog"),
    })
    t.loc[n - 5, "late_nan"] = np.nan  # an integer column that turns float in the last chunk
    return t


@pytest.mark.parametrize("chunk_bytes", [4_000, 50_000, 10**9])
def test_chunked_csv_equals_a_whole_file_read(tmp_path, chunk_bytes):
    path = tmp_path / "t.csv"
    _awkward_table().to_csv(path, index=False)
    expected = pd.read_csv(path)
    got = read_csv_bounded(path, chunk_bytes=chunk_bytes)
    assert_frame_equal(got, expected, check_dtype=True)


def test_chunked_csv_unifies_a_column_that_turns_to_text(tmp_path):
    path = tmp_path / "t.csv"
    t = pd.DataFrame({"a": np.arange(5000), "b": np.arange(5000) % 3})
    t["a"] = t["a"].astype(object)
    t.loc[4990, "a"] = "oops"
    t.to_csv(path, index=False)
    got = read_csv_bounded(path, chunk_bytes=2_000)
    assert not pd.api.types.is_numeric_dtype(got["a"])
    assert got["a"].astype(str).tolist() == pd.read_csv(path)["a"].astype(str).tolist()
    with pytest.raises(DatasetError, match=r"'a'.* not numbers: row 4990 \('oops'\)"):
        load_dataset(path, id_col=None, feature_cols=["a", "b"])  # the guess: a is a row counter


def test_a_header_only_file_and_an_empty_file(tmp_path):
    (tmp_path / "h.csv").write_text("a,b\n")
    assert list(read_csv_bounded(tmp_path / "h.csv").columns) == ["a", "b"]
    (tmp_path / "e.csv").write_text("")
    with pytest.raises(DatasetError, match="empty"):
        load_dataset(tmp_path / "e.csv")


# --------------------------------------------------------------------------- estimate and refusal
def test_the_estimate_is_close_to_the_real_table(tmp_path):
    rng = np.random.default_rng(1)
    t = pd.DataFrame(rng.integers(0, 100, size=(20_000, 12)), columns=[f"c{j}" for j in range(12)])
    t["label"] = np.where(rng.random(len(t)) < 0.5, "a", "b")
    path = tmp_path / "t.csv"
    t.to_csv(path, index=False)
    est = estimate_csv(path, pd.read_csv(path, nrows=1000))
    assert abs(est.rows - len(t)) <= 0.02 * len(t)
    assert (est.columns, est.numeric_columns) == (13, 12)
    real = pd.read_csv(path).memory_usage(index=False, deep=True).sum() + 8 * 12 * len(t)
    assert 0.8 * real <= est.rows * est.row_bytes <= 1.25 * real


def test_a_file_that_does_not_fit_is_refused_with_its_size_and_what_fits(tmp_path, monkeypatch):
    rng = np.random.default_rng(2)
    path = tmp_path / "wide.csv"
    pd.DataFrame(rng.normal(size=(5000, 40))).to_csv(path, index=False)
    est = estimate_csv(path, pd.read_csv(path, nrows=1000))
    avail = (est.fixed_bytes + est.rows * est.row_bytes / 2) / table_files.LOAD_FRACTION
    monkeypatch.setattr(memory, "available_memory", lambda: int(avail))
    reads = []
    real_read = pd.read_csv
    monkeypatch.setattr(pd, "read_csv", lambda *a, **k: reads.append(k) or real_read(*a, **k))
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    text = str(info.value)
    assert "wide.csv" in text and "5,0" in text and "40 columns" in text and "available" in text
    fit = int(text.split("About ")[1].split(" rows fit")[0].replace(",", ""))
    assert abs(fit - 2500) <= 50
    assert f"head -n {fit + 1}" in text
    assert all("nrows" in k for k in reads)  # only the sample was parsed


def test_a_parquet_file_that_does_not_fit_is_refused_before_reading(tmp_path, monkeypatch):
    path = tmp_path / "t.parquet"
    pd.DataFrame(np.random.default_rng(3).normal(size=(4000, 8))).rename(columns=str).to_parquet(path)
    monkeypatch.setattr(memory, "available_memory", lambda: 100_000)
    monkeypatch.setattr(pd, "read_parquet", lambda *a, **k: pytest.fail("read although it cannot fit"))
    with pytest.raises(DatasetError, match=r"t.parquet .*4,000 rows x 8 columns.*rows fit"):
        load_dataset(path)


def test_unknown_memory_means_no_check(tmp_path, monkeypatch):
    path = tmp_path / "t.csv"
    pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [3.0, 1.0, 2.0]}).to_csv(path, index=False)
    monkeypatch.setattr(memory, "available_memory", lambda: None)
    assert load_dataset(path).X.shape == (3, 2)


# --------------------------------------------------------------------------- measured peak (subprocess)
_PEAK_CHILD = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    import numpy as np, pandas as pd
    from labeler.data import table_files
    from labeler.data import load_dataset
    table_files.CHUNK_BYTES = 1 << 20  # a small chunk: the bound below is about the table
    path, how = Path(sys.argv[1]), sys.argv[2]
    def rss():  # peak resident memory of this process (VmHWM starts afresh at exec, ru_maxrss does not)
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))
    base = rss()
    if how == "load":
        d = load_dataset(path)
        final = d.frame.memory_usage(index=False, deep=True).sum() + d.X.nbytes
    else:
        frame = pd.read_csv(path) if how == "pandas" else table_files.read_csv_bounded(path, chunk_bytes=1 << 20)
        final = frame.memory_usage(index=False, deep=True).sum()
    print(json.dumps({"peak": rss() - base, "final": int(final)}))
""")


def _peak(path: Path, how: str) -> dict:
    out = subprocess.run([sys.executable, "-c", _PEAK_CHILD, str(path), how], capture_output=True, text=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}, timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


needs_proc = pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak memory is read from /proc")


@pytest.fixture(scope="module")
def short_numbers_csv(tmp_path_factory):
    """About 30 MB of one-digit numbers: 8 bytes each once parsed, four times the text."""
    path = tmp_path_factory.mktemp("mem") / "digits.csv"
    rng = np.random.default_rng(4)
    t = pd.DataFrame(rng.integers(0, 10, size=(300_000, 50)), columns=[f"c{j}" for j in range(50)])
    t["label"] = np.where(rng.random(len(t)) < 0.5, "a", "b")
    t.to_csv(path, index=False)
    return path


@needs_proc
def test_reading_peaks_at_the_table_plus_one_chunk(short_numbers_csv):
    bounded = _peak(short_numbers_csv, "read")
    assert bounded["peak"] <= 1.15 * bounded["final"] + (24 << 20), bounded
    whole = _peak(short_numbers_csv, "pandas")  # what read_table did before
    assert whole["peak"] > 1.15 * whole["final"] + (24 << 20), whole


@needs_proc
def test_loading_peaks_at_the_final_arrays_plus_one_chunk(short_numbers_csv):
    got = _peak(short_numbers_csv, "load")
    assert got["peak"] <= 1.15 * got["final"] + (32 << 20), got


# --------------------------------------------------------------------------- images
def _old_open_images(paths, opts):
    """The decoding of earlier versions, kept as the oracle: every image decoded at full size,
    converted to RGB, to L when all are gray, then resized with LANCZOS."""
    from PIL import Image

    from labeler.data.images import _common_size, _is_gray

    pictures = []
    for p in paths:
        with Image.open(p) as im:
            im.load()
            pictures.append(im.convert("RGB"))
    gray = all(_is_gray(np.asarray(im)) for im in pictures) if opts.color == "auto" else opts.color == "gray"
    if gray:
        pictures = [im.convert("L") for im in pictures]
    h, w = _common_size([(im.height, im.width) for im in pictures], opts)
    return np.stack([np.asarray(im if im.size == (w, h) else im.resize((w, h), Image.Resampling.LANCZOS))
                     for im in pictures])


def _image_zoo(folder: Path, gray: bool) -> list[Path]:
    from PIL import Image

    rng = np.random.default_rng(5)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for k, (h, w) in enumerate([(40, 30), (40, 30), (90, 70), (12, 200), (40, 30), (300, 260)]):
        base = rng.integers(0, 256, size=(h, w), dtype=np.uint8)
        arr = np.stack([base] * 3, axis=-1) if gray else rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)
        im = Image.fromarray(arr)
        kind = k % 5
        if kind == 1:
            im = im.convert("P") if not gray else im.convert("L")
        elif kind == 2:
            im = im.convert("RGBA" if not gray else "LA")
        elif kind == 3 and gray:
            im = Image.fromarray(base.astype(np.uint16) * 257)  # 16-bit gray
        path = folder / f"im{k}.{'jpg' if kind == 4 else 'png'}"
        im.convert("RGB").save(path, quality=95) if kind == 4 else im.save(path)
        paths.append(path)
    return paths


@pytest.mark.parametrize("gray", [False, True])
@pytest.mark.parametrize("color, image_size, side", [("auto", None, 64), ("rgb", None, 16), ("gray", (20, 25), 64),
                                                      ("auto", None, 400)])
def test_images_decoded_one_at_a_time_equal_the_earlier_decoding(tmp_path, gray, color, image_size, side):
    import warnings

    from labeler.data.dataset import FileOptions
    from labeler.data.images import _open_images

    paths = _image_zoo(tmp_path, gray)
    opts = FileOptions(color=color, image_size=image_size, max_image_side=side)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = _open_images(paths, opts, "zoo")
    np.testing.assert_array_equal(got, _old_open_images(paths, opts))


def _png_header_only(path: Path, width: int, height: int):
    """A PNG whose header announces width x height pixels (8-bit gray) and holds no pixels."""
    import struct
    import zlib

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b""))


def test_a_decompression_bomb_is_refused_by_name_before_decoding(tmp_path):
    from PIL import Image

    folder = tmp_path / "imgs"
    folder.mkdir()
    Image.fromarray(np.zeros((8, 8), np.uint8)).save(folder / "a.png")
    _png_header_only(folder / "bomb.png", 30_000, 30_000)  # 900 million pixels in 60 bytes
    with pytest.raises(DatasetError, match=r"bomb\.png.*900,?000,?000 pixels.*limit"):
        load_dataset(folder)


def test_the_pixel_limit_is_checked_on_the_header(tmp_path, monkeypatch):
    from PIL import Image

    folder = tmp_path / "imgs"
    folder.mkdir()
    Image.fromarray(np.zeros((8, 8), np.uint8)).save(folder / "a.png")
    _png_header_only(folder / "big.png", 300, 200)  # would fail to decode: no pixel data
    from labeler.data import images

    monkeypatch.setattr(images, "MAX_PIXELS", 40_000)
    with pytest.raises(DatasetError, match=r"big\.png is 300 x 200 pixels \(60,000\).*40,000"):
        load_dataset(folder)


_IMAGE_CHILD = textwrap.dedent("""
    import json, sys, warnings
    from pathlib import Path
    import numpy as np
    from labeler.data import load_dataset
    def hwm():
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))
    base = hwm()
    warnings.simplefilter("ignore")
    d = load_dataset(Path(sys.argv[1]))
    print(json.dumps({"peak": hwm() - base, "shape": list(d.images.shape)}))
""")


@needs_proc
def test_large_images_are_not_all_held_at_full_size(tmp_path):
    from PIL import Image

    folder = tmp_path / "big"
    for k in range(6):
        (folder / f"c{k % 2}").mkdir(parents=True, exist_ok=True)
        arr = np.zeros((3000, 3000, 3), np.uint8)
        arr[::7, ::5] = (10 * k, 200, 30)
        Image.fromarray(arr).save(folder / f"c{k % 2}" / f"{k}.png")
    out = subprocess.run([sys.executable, "-c", _IMAGE_CHILD, str(folder)], capture_output=True, text=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}, timeout=300)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.strip().splitlines()[-1])
    full = 3000 * 3000 * 3  # one decoded image, 27 MB
    assert got["shape"] == [6, 64, 64, 3]
    assert got["peak"] < 4 * full, got  # six at full size took more than 6 x full



@pytest.mark.parametrize("suffix", ["jpg", "png"])
def test_huge_images_are_decoded_reduced_and_stay_close_to_a_full_decode(tmp_path, monkeypatch, suffix):
    from PIL import Image

    from labeler.data import images
    from labeler.data.dataset import FileOptions

    yy, xx = np.mgrid[0:1200, 0:1600]
    arr = np.stack([(xx / 7) % 256, (yy / 5) % 256, (xx + yy) / 11 % 256], axis=-1).astype(np.uint8)
    path = tmp_path / f"big.{suffix}"
    Image.fromarray(arr).save(path, quality=95) if suffix == "jpg" else Image.fromarray(arr).save(path)
    opts = FileOptions(image_size=(48, 64))
    full = images._open_images([path], opts, "big")
    monkeypatch.setattr(images, "REDUCE_ABOVE_PIXELS", 100_000)
    from PIL import JpegImagePlugin

    calls = []
    real_draft, real_reduce = JpegImagePlugin.JpegImageFile.draft, Image.Image.reduce
    monkeypatch.setattr(JpegImagePlugin.JpegImageFile, "draft",
                        lambda self, *a: calls.append("draft") or real_draft(self, *a))
    monkeypatch.setattr(Image.Image, "reduce", lambda self, *a: calls.append("reduce") or real_reduce(self, *a))
    reduced = images._open_images([path], opts, "big")
    assert ("draft" if suffix == "jpg" else "reduce") in calls
    assert reduced.shape == full.shape == (1, 48, 64, 3)
    assert np.abs(reduced.astype(int) - full.astype(int)).mean() < 3.0


# --------------------------------------------------------------------------- line structure, rlimits
@pytest.mark.parametrize("seed", range(4))
def test_scan_lines_equals_a_plain_split_across_block_boundaries(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    parts = []
    for _ in range(rng.integers(1, 30)):
        parts.append(b",".join(b"x" * int(k) for k in rng.integers(0, 9, size=rng.integers(1, 12))))
    text = b"\n".join(parts) + (b"\n" if seed % 2 else b"")
    path = tmp_path / "t.csv"
    path.write_bytes(text)
    monkeypatch.setattr(table_files, "_BLOCK_BYTES", int(rng.integers(1, 7)))
    scan = table_files.scan_lines(path)
    lines = text.split(b"\n")
    assert scan.lines == text.count(b"\n")
    assert scan.header_fields == lines[0].count(b",") + 1
    longest = max(len(line) + (1 if k < len(lines) - 1 else 0) for k, line in enumerate(lines))
    assert scan.longest == longest


def _peak_of(code: str, limit_as: int | None = None) -> dict:
    """Run ``code`` in a fresh interpreter; its JSON line (with the peak RSS added)."""
    code = textwrap.dedent(code)
    if limit_as is not None:  # after the imports (shared libraries need address space to load)
        code = code.replace("# LIMIT", textwrap.dedent(f"""
            import resource
            def _vm():
                for line in open('/proc/self/status'):
                    if line.startswith('VmSize:'):
                        return int(line.split()[1]) * 1024
            resource.setrlimit(resource.RLIMIT_AS, (_vm() + {limit_as}, resource.RLIM_INFINITY))
        """))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=240, cwd=str(ROOT), env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_csv_without_line_breaks_is_refused_before_parsing_with_a_bounded_peak(tmp_path):
    """One line of 400,000 fields (1.6 MB): pandas took minutes and ~10x its size; refused at once."""
    path = tmp_path / "one_line.csv"
    path.write_bytes(b",".join([b"1.5"] * 400_000))
    result = _peak_of(f"""
        import json, resource
        import pandas  # noqa: F401  (the baseline includes it)
        from labeler.data import DatasetError, load_dataset
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            load_dataset({str(path)!r})
            message = None
        except DatasetError as exc:
            message = str(exc)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({{"message": message, "extra_kib": peak - base}}))
    """)
    assert result["message"] and "400,000 fields in its first line" in result["message"]
    assert "no line break" in result["message"]
    assert result["extra_kib"] < 64 * 1024  # the scan's blocks, not ten times the file


def test_available_memory_honours_rlimit_as():
    result = _peak_of("""
        import json
        from labeler.memory import available_memory, rlimit_room
        # LIMIT
        print(json.dumps({"avail": available_memory(), "room": rlimit_room()}))
    """, limit_as=300 << 20)
    assert result["room"] is not None and result["room"] <= 300 << 20
    assert result["avail"] <= 300 << 20


def test_a_csv_that_fits_the_machine_but_not_the_rlimit_is_refused_with_a_message(tmp_path):
    path = tmp_path / "numbers.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame(rng.integers(0, 9, size=(400_000, 8))).to_csv(path, index=False)  # ~6.4 MB, ~60 MB to load
    result = _peak_of(f"""
        import json
        import pandas, pyarrow  # noqa: F401  (loaded before the limit, as in a running app)
        from labeler.data import DatasetError, load_dataset
        # LIMIT
        try:
            load_dataset({str(path)!r})
            message = None
        except DatasetError as exc:
            message = str(exc)
        except MemoryError:
            message = "MemoryError"
        print(json.dumps({{"message": message}}))
    """, limit_as=30 << 20)
    assert result["message"] not in (None, "MemoryError")
    assert "is available now" in result["message"] or "available" in result["message"]


def test_cgroup_room_reads_the_process_own_cgroup_and_its_parents(tmp_path):
    proc = tmp_path / "cgroup"
    proc.write_text("4:memory:/jobs/one\n0::/\n")
    inner = tmp_path / "cg" / "memory" / "jobs" / "one"
    inner.mkdir(parents=True)
    (inner / "memory.limit_in_bytes").write_text(f"{2 << 30}\n")
    (inner / "memory.usage_in_bytes").write_text(f"{1 << 30}\n")
    parent = tmp_path / "cg" / "memory" / "jobs"
    (parent / "memory.limit_in_bytes").write_text(f"{(1 << 30) + (200 << 20)}\n")
    (parent / "memory.usage_in_bytes").write_text(f"{1 << 30}\n")
    assert memory.cgroup_room(tmp_path / "cg", proc) == 200 << 20
