"""Peak memory of loading a data set: CSV files and folders of large images.

Each measurement runs in a fresh subprocess and reads its peak resident memory (``VmHWM`` of
``/proc/self/status``, which starts afresh at exec, unlike ``ru_maxrss``) before and after
the load. Rows:

* ``pandas.read_csv`` + ``to_numpy``: the way files were read before (whole file, then the
  numeric columns copied as one block) -- the reference;
* ``load_dataset``: the labeller's loader (estimate, chunked reading, column-wise features;
  images decoded one at a time);
* ``images, all at full size``: the earlier image decoding (every image decoded before any is
  resized).

``bound`` is what the loader's peak growth should stay near: for a CSV file the final arrays
(table + features) plus one chunk of about 32 MB; for images one image decoded at full size
(RGB), since they are decoded one at a time.

Usage::

    python benchmarks/load_memory.py [--rows 1000000] [--images 8] [--side 8000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = textwrap.dedent("""
    import json, sys, warnings
    from pathlib import Path
    import numpy as np, pandas as pd
    from labeler.data import load_dataset

    def hwm():
        with open("/proc/self/status") as fh:
            return next(int(line.split()[1]) * 1024 for line in fh if line.startswith("VmHWM:"))

    path, how = Path(sys.argv[1]), sys.argv[2]
    from PIL import Image  # imported before the baseline by every variant
    warnings.simplefilter("ignore")
    before = hwm()
    if how == "pandas":
        frame = pd.read_csv(path)
        numeric = [c for c in frame.columns if pd.api.types.is_numeric_dtype(frame[c])]
        X = frame[numeric].to_numpy(dtype=np.float64)
        final = frame.memory_usage(index=False, deep=True).sum() + X.nbytes
    elif how == "load":
        d = load_dataset(path)
        final = d.X.nbytes + (d.images.nbytes if d.images is not None else
                              d.frame.memory_usage(index=False, deep=True).sum())
    elif how == "images-full":
        from labeler.data.images import _common_size, _is_gray
        from labeler.data.dataset import FileOptions
        paths = sorted(p for p in path.rglob("*.png"))
        pictures = []
        for p in paths:
            with Image.open(p) as im:
                im.load()
                pictures.append(im.convert("RGB"))
        gray = all(_is_gray(np.asarray(im)) for im in pictures)
        if gray:
            pictures = [im.convert("L") for im in pictures]
        h, w = _common_size([(im.height, im.width) for im in pictures], FileOptions())
        images = np.stack([np.asarray(im.resize((w, h), Image.Resampling.LANCZOS)) for im in pictures])
        final = images.nbytes
    if how != "pandas" and path.is_dir():  # images: one decoded at full size is the bound
        with Image.open(next(path.rglob("*.png"))) as im:
            final = im.width * im.height * 3
    print(json.dumps({"before": before, "after": hwm(), "final": int(final)}))
""")


def measure(path: Path, how: str) -> dict:
    """Run one load in a fresh interpreter; its peak memory before and after, and the result's size."""
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path), how], capture_output=True, text=True,
                         cwd=ROOT, env={"PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"})
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def make_csv(path: Path, rows: int, kind: str) -> None:
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    if kind == "short":  # one-digit numbers: 2 bytes of text, 8 bytes in memory
        frame = pd.DataFrame(rng.integers(0, 10, size=(rows, 50)), columns=[f"c{j}" for j in range(50)])
    else:  # full-precision floats: ~20 bytes of text each
        frame = pd.DataFrame(rng.normal(size=(rows, 10)), columns=[f"f{j}" for j in range(10)])
    frame["label"] = np.where(rng.random(rows) < 0.5, "cat", "dog")
    frame.to_csv(path, index=False)


def make_images(folder: Path, count: int, side: int) -> None:
    import numpy as np
    from PIL import Image

    for k in range(count):
        sub = folder / f"class{k % 2}"
        sub.mkdir(parents=True, exist_ok=True)
        arr = np.zeros((side, side, 3), np.uint8)
        arr[::9, ::7] = (20 * k % 256, 200, 40)  # coloured dots: RGB, compresses well
        Image.fromarray(arr).save(sub / f"{k}.png")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="rows of each CSV file")
    parser.add_argument("--images", type=int, default=8, help="number of PNG files")
    parser.add_argument("--side", type=int, default=8000, help="side of each PNG, in pixels")
    parser.add_argument("--keep", type=Path, default=None, help="folder for the generated files (kept)")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        cases = []
        for kind in ("short", "floats"):
            path = folder / f"{kind}.csv"
            if not path.exists():
                make_csv(path, args.rows if kind == "short" else args.rows, kind)
            cases += [(f"CSV {kind} numbers", path, "pandas"), (f"CSV {kind} numbers", path, "load")]
        images = folder / f"png{args.side}"
        if not images.exists():
            make_images(images, args.images, args.side)
        cases += [(f"{args.images} PNG {args.side}x{args.side}", images, "images-full"),
                  (f"{args.images} PNG {args.side}x{args.side}", images, "load")]

        print(f"{'data':<26} {'on disk':>9} {'way':<22} {'before':>8} {'peak':>8} {'growth':>8} "
              f"{'bound':>8} {'growth/bound':>12}")
        for label, path, how in cases:
            size = path.stat().st_size if path.is_file() else sum(p.stat().st_size for p in path.rglob("*.png"))
            m = measure(path, how)
            way = {"pandas": "pandas.read_csv", "load": "load_dataset", "images-full": "all at full size"}[how]
            if "error" in m:
                print(f"{label:<26} {size / 2**20:>7.0f}MB {way:<22} failed: {m['error']}")
                continue
            growth = m["after"] - m["before"]
            print(f"{label:<26} {size / 2**20:>7.0f}MB {way:<22} {m['before'] / 2**20:>6.0f}MB "
                  f"{m['after'] / 2**20:>6.0f}MB {growth / 2**20:>6.0f}MB {m['final'] / 2**20:>6.0f}MB "
                  f"{growth / max(m['final'], 1):>12.2f}")


if __name__ == "__main__":
    main()
