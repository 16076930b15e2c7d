"""Write a large labelled table for the scale benchmarks: id, 64 float features, label.

The rows are scikit-learn's ``make_classification`` (seeded): ``--classes`` classes, half of the
features informative and an eighth redundant, as :mod:`benchmarks.scale`'s ``simulate`` row
uses. The file is what ``labeler app PATH`` and ``labeler simulate PATH`` read: an ``id`` column
(unique integers, never a feature), feature columns ``f00``..``f63`` and a ``label`` column
(class names ``c0``, ``c1``, ...). The suffix chooses the format: ``.parquet``, ``.csv`` or
``.npz`` (arrays ``X``, ``y``, ``ids``; ``--dim 32`` for the start-up benchmark).
10^6 rows take about 30 s and 1.7 GB of memory to make (a 0.6 GB file). Never committed: write
it to /tmp. ``--data mnist-like`` writes image-like rows instead (``benchmarks/knn_scale.py``'s
``mnist_like``: 10 Gaussians fit to the shipped MNIST test images in their first ``--dim``
principal components; the label is the digit), the data on which the kNN graph and eigenpairs at
10^6 points meet their target (docs/benchmarks.md §15).

Usage::

    python benchmarks/make_large_file.py /tmp/million.parquet            # 10^6 rows, 2 classes
    python benchmarks/make_large_file.py /tmp/m.parquet --n 100000 --classes 4
    python benchmarks/make_large_file.py /tmp/digits1m.npz --dim 32 --data mnist-like   # 10 digits
    labeler simulate /tmp/digits1m.npz --posterior spectral --budget 10 --initial 20
    python benchmarks/ui_latency.py --data /tmp/million.parquet --presses 10 --weightings balanced --posterior auto
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

def table(n: int, dim: int = 64, n_classes: int = 2, seed: int = 0, data: str = "classification"):
    """The rows as a pyarrow table: ``id`` (n,) int64, ``f00``.. (n,) float64, ``label`` (n,) str."""
    import pyarrow as pa

    if data == "mnist-like":
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from knn_scale import mnist_like

        X, digit = mnist_like(n, dim, seed, labels=True)
        classes, y = np.unique(digit, return_inverse=True)
        names = np.array([str(c) for c in classes])
    else:
        from sklearn.datasets import make_classification

        X, y = make_classification(n_samples=n, n_features=dim, n_informative=dim // 2,
                                   n_redundant=dim // 8, n_classes=n_classes, random_state=seed)
        names = np.array([f"c{c}" for c in range(n_classes)])
    cols = {"id": np.arange(n, dtype=np.int64)}
    cols.update({f"f{j:02d}": np.ascontiguousarray(X[:, j]) for j in range(dim)})
    del X
    cols["label"] = names[y]
    return pa.table(cols)


def write(path: Path, n: int, dim: int = 64, n_classes: int = 2, seed: int = 0, data: str = "classification") -> None:
    """Write ``n`` rows to ``path`` (.parquet or .csv), atomically (a ``.part`` file renamed)."""
    suffix = path.suffix.lower()
    if suffix not in (".parquet", ".csv", ".npz"):
        raise SystemExit(f"{path}: give a .parquet, .csv or .npz path")
    t = table(n, dim, n_classes, seed, data)
    tmp = path.with_name(path.name + ".part")
    try:
        if suffix == ".npz":  # X (n, dim) float64, y (n,) class names, ids (n,) int64
            X = np.column_stack([t.column(f"f{j:02d}").to_numpy() for j in range(dim)])
            y = np.asarray(t.column("label").to_pylist(), dtype=str)
            with open(tmp, "wb") as fh:
                np.savez(fh, X=X, y=y, ids=t.column("id").to_numpy())
            del X
        elif suffix == ".parquet":
            import pyarrow.parquet as pq

            pq.write_table(t, tmp, row_group_size=100_000)
        else:
            import pyarrow.csv as pcsv

            pcsv.write_csv(t, tmp)
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("path", type=Path, help="output file: .parquet, .csv or .npz (e.g. /tmp/million.parquet)")
    p.add_argument("--n", type=int, default=1_000_000, help="rows (default 10^6)")
    p.add_argument("--dim", type=int, default=64, help="float features (default 64)")
    p.add_argument("--classes", type=int, default=2, help="classes, 2-4 (default 2)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--data", choices=("classification", "mnist-like"), default="classification",
                   help="make_classification rows (default), or image-like rows labelled by digit (10 classes)")
    args = p.parse_args(argv)
    write(args.path, args.n, args.dim, args.classes, args.seed, args.data)
    classes = 10 if args.data == "mnist-like" else args.classes
    print(f"{args.path}: {args.n:,} rows, id + {args.dim} features + label ({classes} classes), "
          f"{args.path.stat().st_size / 2**20:.0f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
