"""kNN graphs and Laplacian eigenvectors at 10^5-10^6 points: which method, how fast, how good.

Two tables (issue 23 §3), on a seeded Gaussian mixture of ``--dim`` dimensions (the stand-in for
embeddings of benchmarks/scale.py):

* ``knn``: the k = 10 nearest other points of every point by each method of
  :mod:`core.kernels.knn_search` (``cells``: exact distances inside probed k-means cells, the
  default from 50,000 to 150,000 points; ``hnsw``: hnswlib, one-thread build; ``nndescent``:
  pynndescent with numba's on-disk cache turned on; ``exact``: scikit-learn), with recall@10
  against exact neighbours of ``--sample`` random points (brute force in blocks), the time of
  a first call in a new process (what a user waits for: pynndescent's per-process compilation
  is timed apart, on 2,000 points first), its CPU time, and the peak resident memory of the
  process. Exact search is run up to ``--exact-max`` points (O(n^2 d): hours at 10^6).
* ``sweep``: the hnsw method's settings (``--hnsw M=..,ef_construction=..,parts=..``, ``--refine``):
  the indices built once, then for each query ``ef`` of ``--efs`` the recall of the merged search,
  the recall after the local join (:mod:`core.kernels.knn_refine`) and the CPU / wall time of
  build, query and refinement.
* ``cells``: the cell search at each number of probed cells of ``--probes`` (``--cells`` for the
  other settings): the recall of its candidates and after each of ``--refine`` rounds, CPU / wall.
* ``locality``: the renumberings of :mod:`core.kernels.locality` alone (the stored graph and its
  points): one Chebyshev step's time in the given, reverse Cuthill-McKee and k-means cell
  numberings, and an hnsw index over half the points built and queried in the given and in cell
  order (``--locality`` turns both renumberings off in the other parts).
* ``pipeline``: what ``--posterior spectral`` builds, in one process: the kNN search, the graph and
  ``--rank`` eigenpairs, against the issue's targets (recall@10 >= 0.95, <= 300 s, <= 6 GB), with
  the peak memory and the load average at start and end.
* ``eig``: the ``--rank`` smallest eigenpairs of the normalised Laplacian of that graph by each
  method of :func:`core.kernels.graph.laplacian_eigenpairs` (``eigsh``: Lanczos on ``2 I - L``;
  ``lobpcg``: LOBPCG preconditioned by pyamg's smoothed aggregation), with the largest residual
  ``||L v - lambda v||``, the largest eigenvalue error and the smallest cosine between the two
  eigenspaces against a kept run (``--against``: eigsh, or a ``--label``-ed run), time, CPU
  time and peak memory; for the Chebyshev filter its settings (``--degree``, ``--cut`` or
  ``--cut-rule``, ``--ncv``), its filtered products and the estimated first cut.

Every measurement runs in a fresh subprocess (its peak memory ``ru_maxrss`` is its own; numba's
compilation is counted as a user meets it). The load average is printed with each table: on a
shared machine the wall time grows with the load, the CPU time much less (a quiet 2-core
machine runs a two-thread job in about CPU / 2 seconds).

Usage::

    python benchmarks/knn_scale.py                      # n = 10^5: both tables (minutes)
    python benchmarks/knn_scale.py --n 100000,1000000   # adds 10^6 (start it with nice -n 10)
    python benchmarks/knn_scale.py --quick              # n = 20,000, seconds
    python benchmarks/knn_scale.py --part knn --methods hnsw,nndescent
    python benchmarks/knn_scale.py --n 100000 --part sweep --efs 20,60   # hnsw: one build, several ef,
                                                                         # recall before/after the local join
    python benchmarks/knn_scale.py --n 1000000 --part sweep --hnsw M=12,ef_construction=60,parts=2 --refine 1
    python benchmarks/knn_scale.py --n 1000000 --part refine --refine 3   # the stored graph, round by round
    python benchmarks/knn_scale.py --n 100000 --part eig --methods chebyshev,subspace,eigsh
    python benchmarks/knn_scale.py --n 100000 --part eig --methods chebyshev --cut 0.4   # the filter's cut
    python benchmarks/knn_scale.py --n 1000000 --part eig --methods chebyshev --data mnist-like
    python benchmarks/knn_scale.py --n 1000000 --part eig --methods chebyshev --data mnist-like \
        --cut-rule fixed --ncv arpack --label before --keep-vectors           # the fifth pass's settings, kept
    python benchmarks/knn_scale.py --n 1000000 --part eig --methods chebyshev --data mnist-like \
        --keep-vectors --against chebyshev-before                            # the defaults, against them
    python benchmarks/knn_scale.py --n 1000000 --part eig --methods chebyshev --data mnist-like \
        --locality off --label given --keep-vectors                          # the graph not renumbered
    python benchmarks/knn_scale.py --n 1000000 --part locality --data mnist-like   # the renumberings alone
    python benchmarks/knn_scale.py --n 100000 --part cells --probes 8,16,32 --refine 1
    python benchmarks/knn_scale.py --n 1000000 --part pipeline            # the issue's targets, end to end
    python benchmarks/knn_scale.py --n 1000000 --part pipeline --data classification --methods cells,hnsw
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from labeler.runtime import configure_threads  # noqa: E402

configure_threads()  # before numpy and numba load (labeler/runtime.py)

import numpy as np  # noqa: E402

HERE = os.path.abspath(__file__)
KNN_METHODS = ("cells", "hnsw", "nndescent", "exact")
EIG_METHODS = ("subspace", "chebyshev", "lobpcg", "eigsh")


def mixture(n: int, d: int, seed: int) -> np.ndarray:
    """n points of 6 Gaussian clusters (centres 1.5 sigma apart per axis) in d dimensions
    (benchmarks/scale.py's mixture, 2 classes)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((6, d)) * 1.5
    comp = rng.integers(6, size=n)
    X = np.empty((n, d))
    for a in range(0, n, 100_000):
        c = comp[a:a + 100_000]
        X[a:a + 100_000] = centres[c] + rng.standard_normal((c.size, d))
    return X


def classification(n: int, d: int, seed: int) -> np.ndarray:
    """n rows of benchmarks/make_large_file.py's table (scikit-learn's ``make_classification``,
    2 classes, d / 2 informative and d / 8 redundant features), the features only."""
    from sklearn.datasets import make_classification

    X, _ = make_classification(n_samples=n, n_features=d, n_informative=d // 2, n_redundant=d // 8,
                               n_classes=2, random_state=seed)
    return X


def mnist_like(n: int, d: int, seed: int, labels: bool = False):
    """n points drawn from 10 Gaussians fit to the shipped MNIST test images: one per digit, with
    that digit's share of the file, mean and full covariance in the file's first d principal
    components (pixels / 255). Image-like data at any n: the variance falls across directions as
    MNIST's does (participation ratio of the 32 components 17; within a digit 3.5-13, against 32
    for :func:`mixture`'s isotropic clusters), so a point's nearest neighbours stand out from
    the rest of its cluster as they do in real embeddings. Not MNIST's manifold: each class is
    one Gaussian, which makes neighbour search harder than on the images themselves. With
    ``labels``, ``(X, digit)``: each point's digit (its Gaussian), shape (n,)."""
    from labeler.data.bundled import load_mnist

    data = load_mnist(seed=0, n=None)
    A = np.asarray(data.X, dtype=np.float64)
    A = A - A.mean(axis=0)
    basis = np.linalg.svd(A, full_matrices=False)[2][:d]
    Z = A @ basis.T
    y = np.asarray(data.y)
    classes, counts = np.unique(y, return_counts=True)
    rng = np.random.default_rng(seed)
    comp = rng.choice(classes.size, size=n, p=counts / counts.sum())
    X = np.empty((n, d))
    for c in range(classes.size):
        rows = np.flatnonzero(comp == c)
        Zc = Z[y == classes[c]]
        L = np.linalg.cholesky(np.cov(Zc, rowvar=False) + 1e-9 * np.eye(d))
        for a in range(0, rows.size, 100_000):
            part = rows[a:a + 100_000]
            X[part] = Zc.mean(axis=0) + rng.standard_normal((part.size, d)) @ L.T
    return (X, classes[comp]) if labels else X


DATASETS = {"mixture": mixture, "classification": classification, "mnist-like": mnist_like}


def points(n: int, args) -> np.ndarray:
    return DATASETS[args.data](n, args.dim, args.seed)


#: The issue's targets (issue 23 item 3) printed beside the measurements.
TARGETS = {"recall": 0.95, "seconds": 300.0, "peak_gb": 6.0}


def peak_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux


def exact_sample(X: np.ndarray, sample: np.ndarray, k: int) -> np.ndarray:
    """The k exact nearest other points of ``X[sample]`` (brute force, 100 queries at a time:
    at most 100 x n distances held), shape (s, k)."""
    out = np.empty((sample.size, k), dtype=np.int64)
    norms = np.einsum("ij,ij->i", X, X)
    for a in range(0, sample.size, 100):
        rows = sample[a:a + 100]
        d2 = norms[rows][:, None] - 2.0 * X[rows] @ X.T + norms[None, :]
        d2[np.arange(rows.size), rows] = np.inf
        part = np.argpartition(d2, k, axis=1)[:, :k]
        order = np.argsort(np.take_along_axis(d2, part, 1), axis=1, kind="stable")
        out[a:a + 100] = np.take_along_axis(part, order, 1)
    return out


def graph_path(n: int, args) -> str:
    data = "" if args.data == "mixture" else f"-{args.data}"
    return f"/tmp/knn_scale{data}-{n}-{args.dim}-{args.k}-{args.seed}.npz"


def _set_params(text, params: dict, flag: str) -> None:
    """Apply ``key=value,...`` (integers) of option ``flag`` to the settings dict ``params``."""
    for item in (text or "").split(","):
        if not item:
            continue
        key, value = item.split("=")
        if key not in params:
            raise SystemExit(f"{flag}: unknown setting {key!r}; known: {', '.join(params)}")
        params[key] = int(value)


def hnsw_settings(args) -> str:
    """Apply ``--hnsw`` and ``--refine`` to core.kernels.knn_search; the settings in use, as text."""
    from core.kernels import knn_search

    _set_params(args.hnsw, knn_search.HNSW_PARAMS, "--hnsw")
    if args.refine is not None:
        knn_search.REFINE_ROUNDS = args.refine
    p = knn_search.HNSW_PARAMS
    return (f"`M` {p['M']}, `ef_construction` {p['ef_construction']}, `ef` {p['ef']}, {p['parts']} indices, "
            f"{knn_search.REFINE_ROUNDS} refinement rounds")


def cell_settings(args, probes: bool = True) -> str:
    """Apply ``--cells`` and ``--refine`` to core.kernels.knn_cells / knn_search; the settings, as text."""
    from core.kernels import knn_cells, knn_search

    _set_params(args.cells, knn_cells.CELL_PARAMS, "--cells")
    if args.refine is not None:
        knn_search.REFINE_ROUNDS = args.refine
    p = knn_cells.CELL_PARAMS
    probed = f"{p['probes']} probed, " if probes else ""
    return (f"cells of {p['cell_size']} points, {probed}{p['point_probes']} named per point, "
            f"{knn_search.REFINE_ROUNDS} refinement rounds")


def method_settings(method: str, args) -> str:
    return hnsw_settings(args) if method == "hnsw" else cell_settings(args) if method == "cells" else ""


def knn_job(method: str, n: int, args) -> dict:
    from core.kernels.knn_search import nearest_neighbours

    X = points(n, args)
    out = {"data_gb": peak_gb(), "settings": method_settings(method, args)}
    if method == "nndescent":  # numba's compilation in this new process, timed apart
        t0, c0 = time.perf_counter(), time.process_time()
        nearest_neighbours(X[:2000], args.k, method=method, seed=args.seed)
        out["compile_s"] = time.perf_counter() - t0
        out["compile_cpu_s"] = time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    ind, dist = nearest_neighbours(X, args.k, method=method, seed=args.seed)
    out["search_s"] = time.perf_counter() - t0
    out["cpu_s"] = time.process_time() - c0
    out["peak_gb"] = peak_gb()
    again = None
    if args.repeat and n <= 200_000:
        again = nearest_neighbours(X, args.k, method=method, seed=args.seed)
        out["same_twice"] = bool(np.array_equal(again[0], ind) and np.array_equal(again[1], dist))
    sample = np.random.default_rng(args.seed + 1).choice(n, size=min(args.sample, n), replace=False)
    exact = exact_sample(X, sample, args.k)
    out["recall"] = float(np.mean([len(set(a) & set(b)) / args.k for a, b in zip(ind[sample], exact)]))
    if method == args.graph_from and not os.path.exists(graph_path(n, args)):
        np.savez(graph_path(n, args), ind=ind, dist=dist)
    return out


def sweep_job(method: str, n: int, args) -> dict:
    """hnsw settings at several query ``ef``: one build, then per ef the query, the recall of the
    merged search, one refinement round (REFINE_ROUNDS of ``--refine``) and its recall."""
    from core.kernels import knn_search
    from core.kernels.knn_refine import refine_neighbours

    X = points(n, args)
    settings = hnsw_settings(args)
    sample = np.random.default_rng(args.seed + 1).choice(n, size=min(args.sample, n), replace=False)
    exact = exact_sample(X, sample, args.k)

    def recall(ind):
        return float(np.mean([len(set(a) & set(b)) / args.k for a, b in zip(ind[sample], exact)]))

    Xf = np.ascontiguousarray(X, dtype=np.float32)
    t0, c0 = time.perf_counter(), time.process_time()
    indices, blocks = knn_search.hnsw_build(Xf, args.k, args.seed)
    out = {"settings": settings, "build_s": time.perf_counter() - t0, "build_cpu_s": time.process_time() - c0,
           "rows": []}
    print(json.dumps({"built": out}), file=sys.stderr, flush=True)
    for ef in [int(v) for v in args.efs.split(",")]:
        t0, c0 = time.perf_counter(), time.process_time()
        cand = knn_search.hnsw_query(indices, blocks, Xf, args.k, ef)
        ind, _ = refine_neighbours(X, cand, rounds=0)
        ind = np.ascontiguousarray(ind[:, :args.k])
        row = {"ef": ef, "query_s": time.perf_counter() - t0, "query_cpu_s": time.process_time() - c0,
               "recall_search": recall(ind)}
        print(json.dumps({"partial": row}), file=sys.stderr, flush=True)
        del cand
        row.update(refine_s=0.0, refine_cpu_s=0.0, recall_rounds=[])
        for _ in range(knn_search.REFINE_ROUNDS):  # one round at a time: the recall after each
            t0, c0 = time.perf_counter(), time.process_time()
            ind, _ = refine_neighbours(X, ind, rounds=1)
            row["refine_s"] += time.perf_counter() - t0
            row["refine_cpu_s"] += time.process_time() - c0
            row["recall_rounds"].append(recall(ind))
            print(json.dumps({"partial": row}), file=sys.stderr, flush=True)
        row["recall"] = row["recall_rounds"][-1] if row["recall_rounds"] else row["recall_search"]
        out["rows"].append(row)
    out["peak_gb"] = peak_gb()
    return out


def cells_job(method: str, n: int, args) -> dict:
    """The cell search at each number of probed cells of ``--probes``: the recall of its
    candidates, then after each refinement round, with the CPU / wall time of each phase."""
    from core.kernels import knn_cells
    from core.kernels.knn_refine import refine_neighbours

    X = points(n, args)
    settings = cell_settings(args, probes=False)
    sample = np.random.default_rng(args.seed + 1).choice(n, size=min(args.sample, n), replace=False)
    exact = exact_sample(X, sample, args.k)

    def recall(ind):
        return float(np.mean([len(set(a) & set(b)) / args.k for a, b in zip(ind[sample], exact)]))

    out = {"settings": settings, "rows": []}
    for probes in [int(v) for v in args.probes.split(",")]:
        t0, c0 = time.perf_counter(), time.process_time()
        cand = knn_cells.cell_candidates(X, args.k, args.seed, params={"probes": probes})
        ind, _ = refine_neighbours(X, cand, rounds=0)
        ind = np.ascontiguousarray(ind[:, :args.k])
        row = {"probes": probes, "search_s": time.perf_counter() - t0, "search_cpu_s": time.process_time() - c0,
               "recall_search": recall(ind), "load": os.getloadavg()[0]}
        del cand
        row.update(refine_s=0.0, refine_cpu_s=0.0, recall_rounds=[])
        for _ in range(int(args.refine or 0)):
            t0, c0 = time.perf_counter(), time.process_time()
            ind, _ = refine_neighbours(X, ind, rounds=1)
            row["refine_s"] += time.perf_counter() - t0
            row["refine_cpu_s"] += time.process_time() - c0
            row["recall_rounds"].append(recall(ind))
        out["rows"].append(row)
        print(json.dumps({"partial": row}), file=sys.stderr, flush=True)
    out["peak_gb"] = peak_gb()
    return out


def pipeline_job(method: str, n: int, args) -> dict:
    """What ``--posterior spectral`` builds, timed phase by phase in one process: the kNN search
    (``method``, "auto" the default), the graph, the ``--rank`` eigenpairs (the default solver) and
    the spectral factor; the recall of the search and the eigenpairs' largest residual."""
    from core.kernels.graph import knn_neighbours, laplacian, neighbour_graph, spectral_factor
    from core.kernels.knn_search import SearchReport

    X = points(n, args)
    settings = method_settings(method, args) if method != "auto" else ""
    out = {"settings": settings, "load_start": os.getloadavg()[0], "data_gb": peak_gb()}
    t0, c0 = time.perf_counter(), time.process_time()
    report = SearchReport()
    ind, dist = knn_neighbours(X, args.k, seed=args.seed, method=method, report=report)
    out["knn_s"], out["knn_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
    out["estimate"] = (", ".join(f"{r:.3f}" for r in report.recalls) or "-") + \
        (f" (± {report.error:.3f} on {report.sample} points)" if report.error is not None else "")
    out["widths"] = ", ".join(map(str, report.widths)) or "-"
    index = ", ".join(f"{key} {value}" for key, value in report.index.items() if key != "parts")
    first = report.first_search_recall
    out["index"] = (index or "-") + ("" if first is None else f" (first index's search {first:.3f})")
    from core.kernels import knn_search, laplacian_eigen

    above = [report.method == "hnsw" and knn_search.HNSW_ORDER_ABOVE is not None and n >= knn_search.HNSW_ORDER_ABOVE,
             laplacian_eigen.LOCALITY_ORDER_ABOVE is not None and n >= laplacian_eigen.LOCALITY_ORDER_ABOVE]
    out["index"] += {(True, True): "; points and graph renumbered", (True, False): "; points renumbered",
                     (False, True): "; graph renumbered", (False, False): "; given numbering"}[tuple(above)]
    out["knn_gb"] = peak_gb()
    t0, c0 = time.perf_counter(), time.process_time()
    W = neighbour_graph(ind, dist)
    Phi, lam = spectral_factor(W, args.rank, seed=args.seed)
    out["eig_s"], out["eig_cpu_s"] = time.perf_counter() - t0, time.process_time() - c0
    out["peak_gb"] = peak_gb()
    out["load_end"] = os.getloadavg()[0]
    sample = np.random.default_rng(args.seed + 1).choice(n, size=min(args.sample, n), replace=False)
    exact = exact_sample(X, sample, args.k)
    out["recall"] = float(np.mean([len(set(a) & set(b)) / args.k for a, b in zip(ind[sample], exact)]))
    V = Phi * np.sqrt(lam + 1e-2)  # spectral_factor's gaussian_field transform undone: unit eigenvectors
    del Phi
    out["max_residual"] = float(np.linalg.norm(laplacian(W) @ V - V * lam, axis=0).max())
    out["eigenvalue_last"] = float(lam[-1])
    if not os.path.exists(graph_path(n, args)):
        np.savez(graph_path(n, args), ind=ind, dist=dist)
    return out


def refine_job(method: str, n: int, args) -> dict:
    """The stored neighbours of ``graph_path`` (written by the knn table) refined round by round
    (``--refine`` rounds): the recall after each and each round's CPU / wall time."""
    from core.kernels.knn_refine import refine_neighbours

    X = points(n, args)
    ind = np.load(graph_path(n, args))["ind"]
    sample = np.random.default_rng(args.seed + 1).choice(n, size=min(args.sample, n), replace=False)
    exact = exact_sample(X, sample, args.k)

    def recall(ind):
        return float(np.mean([len(set(a) & set(b)) / args.k for a, b in zip(ind[sample], exact)]))

    out = {"recall_start": recall(ind), "rounds": []}
    for _ in range(args.refine if args.refine is not None else 2):
        t0, c0 = time.perf_counter(), time.process_time()
        ind, _ = refine_neighbours(X, ind, rounds=1)
        out["rounds"].append({"recall": recall(ind), "cpu_s": time.process_time() - c0,
                              "wall_s": time.perf_counter() - t0, "load": os.getloadavg()[0]})
        print(json.dumps({"partial": out}), file=sys.stderr, flush=True)
    out["peak_gb"] = peak_gb()
    return out


def locality_job(method: str, n: int, args) -> dict:
    """The two renumberings of core/kernels/locality.py measured alone: one fused Chebyshev step
    on the stored graph's Laplacian in the given, reverse Cuthill-McKee and k-means cell orders
    (mean ``|i - j|`` of the entries, ms per step: 20 steps, three rounds in turn); an hnsw index
    (``HNSW_FIRST``'s settings) over the first half of the points built in the given order and in
    cell order at the same time (one thread each: thread CPU seconds), its search recall within the
    half on 300 points, and n / 5 queries (``ef`` 30, 22 neighbours) in either order on either index."""
    from concurrent.futures import ThreadPoolExecutor

    import hnswlib

    from core.kernels.graph import laplacian, neighbour_graph
    from core.kernels.knn_search import HNSW_FIRST, exact_neighbours_of
    from core.kernels.laplacian_eigen import _chebyshev_step
    from core.kernels.locality import cell_order, locality_order, symmetric_permutation

    out = {"steps": {}, "spread": {}, "order_cpu_s": {}}
    f = np.load(graph_path(n, args))
    L = laplacian(neighbour_graph(f["ind"], f["dist"])).tocsr()
    X = points(n, args)
    c0 = time.process_time()
    orders = {"given": None, "reverse Cuthill-McKee": locality_order(L)}
    out["order_cpu_s"]["reverse Cuthill-McKee"] = time.process_time() - c0
    c0 = time.process_time()
    cells = cell_order(X, args.seed, blocks=2)
    out["order_cpu_s"]["k-means cells"] = time.process_time() - c0
    orders["k-means cells"] = cells
    mats = {name: (L if o is None else symmetric_permutation(L, o)) for name, o in orders.items()}
    for name, M in mats.items():
        C = M.tocoo()
        out["spread"][name] = float(np.mean(np.abs(C.row.astype(np.int64) - C.col)))
    v = np.random.default_rng(args.seed).standard_normal(n)
    w = np.empty(n)
    for _ in range(3):
        for name, M in mats.items():
            _chebyshev_step(M.indptr, M.indices, M.data, v, v, w, 1.0, 0.5, 2.0, 1.0)
            t = time.perf_counter()
            for _ in range(20):
                _chebyshev_step(M.indptr, M.indices, M.data, v, v, w, 1.0, 0.5, 2.0, 1.0)
            out["steps"].setdefault(name, []).append((time.perf_counter() - t) / 20 * 1000)
    del mats, L
    Xf = np.ascontiguousarray(X, dtype=np.float32)
    half = n // 2
    rows_by = {"given": np.arange(half), "k-means cells": cells[:half]}  # the first block, as the search holds it

    def build(rows):
        index = hnswlib.Index(space="l2", dim=Xf.shape[1])
        index.init_index(max_elements=rows.size, ef_construction=HNSW_FIRST["ef_construction"], M=HNSW_FIRST["M"],
                         random_seed=int(args.seed))
        index.set_num_threads(1)
        c, t = time.thread_time(), time.perf_counter()
        for a in range(0, rows.size, 10_000):
            index.add_items(Xf[rows[a:a + 10_000]], rows[a:a + 10_000], num_threads=1)
        return index, time.thread_time() - c, time.perf_counter() - t

    with ThreadPoolExecutor(max_workers=2) as pool:
        built = dict(zip(rows_by, pool.map(build, rows_by.values())))
    out["build"] = {name: [cpu, wall] for name, (_, cpu, wall) in built.items()}
    sample = np.sort(np.random.default_rng(args.seed + 1).choice(half, size=min(300, half), replace=False))
    exact, _ = exact_neighbours_of(X[:half], sample, 11)
    out["search_recall"] = {}
    for name, (index, _, _) in built.items():
        index.set_ef(HNSW_FIRST["ef"])
        found, _ = index.knn_query(Xf[sample], k=11, num_threads=1)
        out["search_recall"][name] = float(np.mean([len(set(a) & set(b)) / 11 for a, b in zip(found, exact)]))
    queries = np.arange(0, n, 5)
    position = np.empty(n, dtype=np.int64)
    position[cells] = np.arange(n)
    query_orders = {"given": queries, "k-means cells": queries[np.argsort(position[queries], kind="stable")]}
    out["queries"] = {}
    for _ in range(2):
        for iname, (index, _, _) in built.items():
            for qname, q in query_orders.items():
                c, t = time.process_time(), time.perf_counter()
                index.knn_query(Xf[q], k=22, num_threads=2)
                out["queries"].setdefault(f"{iname} index, {qname} queries", []).append(
                    [time.process_time() - c, time.perf_counter() - t])
    out["load_end"] = os.getloadavg()[0]
    return out


def eig_job(method: str, n: int, args) -> dict:
    from core.kernels.graph import laplacian, laplacian_eigenpairs, neighbour_graph

    from core.kernels import laplacian_eigen

    if args.degree:
        laplacian_eigen.CHEBYSHEV_DEGREE = args.degree
    if args.cut:
        laplacian_eigen.CHEBYSHEV_CUT = args.cut / 2.0  # a fraction of the normalised Laplacian's bound 2
        laplacian_eigen.CHEBYSHEV_ESTIMATE = False  # the given cut, not the estimate
    if args.cut_rule:
        laplacian_eigen.CHEBYSHEV_ESTIMATE = args.cut_rule == "estimate"
    if args.ncv:
        laplacian_eigen.CHEBYSHEV_NCV_EXTRA = None if args.ncv == "arpack" else int(args.ncv) - args.rank
    cuts = []
    plain_estimate = laplacian_eigen.estimated_cut

    def recorded_estimate(*a, **kw):  # the estimated cut and its CPU time
        c = time.process_time()
        cut = plain_estimate(*a, **kw)
        cuts.append((cut, time.process_time() - c))
        return cut

    laplacian_eigen.estimated_cut = recorded_estimate
    filtered = {"products": 0, "seconds": 0.0}
    plain_filter = laplacian_eigen.chebyshev_filter

    def counted_filter(*a, **kw):  # the filter's applications counted and timed
        apply = plain_filter(*a, **kw)

        def timed(v):
            t = time.perf_counter()
            out = apply(v)
            filtered["seconds"] += time.perf_counter() - t
            filtered["products"] += 1
            return out
        return timed

    laplacian_eigen.chebyshev_filter = counted_filter
    f = np.load(graph_path(n, args))
    W = neighbour_graph(f["ind"], f["dist"])
    base = peak_gb()
    t0, c0 = time.perf_counter(), time.process_time()
    lam, V = laplacian_eigenpairs(W, args.rank, seed=args.seed, method=method)
    out = {"eig_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "peak_gb": peak_gb(),
           "graph_gb": base, "filtered": filtered["products"], "filter_s": filtered["seconds"],
           "estimated_cut": cuts[0][0] if cuts else None, "estimate_cpu_s": cuts[0][1] if cuts else 0.0}
    L = laplacian(W)
    res = np.linalg.norm(L @ V - V * lam, axis=0)
    out["max_residual"] = float(res.max())
    out["orthogonality"] = float(np.abs(V.T @ V - np.eye(V.shape[1])).max())
    stem = eig_stem(n, method, args.label, args)
    np.save(f"{stem}.npy", lam)
    if args.keep_vectors:
        np.save(f"{stem}-V.npy", V)
    le = laplacian_eigen
    ncv = "2r+1" if le.CHEBYSHEV_NCV_EXTRA is None else f"r+{le.CHEBYSHEV_NCV_EXTRA}"
    cut = "estimated" if le.CHEBYSHEV_ESTIMATE else f"{2.0 * le.CHEBYSHEV_CUT:g}"
    renumbered = le.LOCALITY_ORDER_ABOVE is not None and n >= le.LOCALITY_ORDER_ABOVE
    out["settings"] = (f"degree {le.CHEBYSHEV_DEGREE}, ncv {ncv}, cut {cut}, "
                       f"{'renumbered' if renumbered else 'given order'}") if method == "chebyshev" else ""
    out["lambda_last"] = float(lam[-1])
    return out


def eig_stem(n: int, method: str, label: str, args) -> str:
    """Where ``--part eig`` keeps a run's eigenvalues (``.npy``) and, with ``--keep-vectors``, its
    eigenvectors (``-V.npy``): by data set, size, method and ``--label``."""
    data = "" if args.data == "mixture" else f"-{args.data}"
    return f"/tmp/knn_scale-eig{data}-{n}-{method}{'-' + label if label else ''}"


def run_child(part: str, method: str, n: int, args) -> dict:
    cmd = [sys.executable, HERE, "--child", part, method, str(n)] + args.passthrough
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else "failed"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} (1 / 5 / 15 min) on {os.cpu_count()} cores"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", default="100000", help="pool sizes, comma-separated")
    p.add_argument("--quick", action="store_true", help="n = 20,000")
    p.add_argument("--dim", type=int, default=32)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--rank", type=int, default=100, help="eigenpairs (the spectral posterior's default)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sample", type=int, default=1000, help="points whose exact neighbours give the recall")
    p.add_argument("--exact-max", type=int, default=200_000, help="largest n searched exactly")
    p.add_argument("--degree", type=int, default=0, help="the Chebyshev filter's degree (default the module's)")
    p.add_argument("--cut", type=float, default=0.0, help="the Chebyshev filter's first cut (default the module's, 0.5)")
    p.add_argument("--cut-rule", choices=("fixed", "estimate"), default=None,
                   help="the Chebyshev filter's first cut: fixed (CHEBYSHEV_CUT) or estimated (default the module's)")
    p.add_argument("--ncv", default="", help="ARPACK's Lanczos vectors in the Chebyshev solve: a number, or "
                   "'arpack' for its 2 r + 1 (default the module's)")
    p.add_argument("--locality", choices=("on", "off"), default="on",
                   help="renumber the points by k-means cell for the hnsw search and the graph for the "
                        "eigenpairs' products (the default), or keep the pool's own numbering "
                        "(--part knn, eig, pipeline; --part sweep builds its indices in the given order)")
    p.add_argument("--label", default="", help="names the eigenpairs --part eig keeps in /tmp (e.g. today)")
    p.add_argument("--against", default="eigsh", help="the kept eigenpairs to compare with: method[-label]")
    p.add_argument("--keep-vectors", action="store_true", help="keep the eigenvectors too (n x r float64 in /tmp)")
    p.add_argument("--eigsh-max", type=int, default=10**7, help="largest n solved by eigsh")
    p.add_argument("--part", choices=("knn", "eig", "both", "sweep", "cells", "refine", "pipeline", "locality"),
                   default="both",
                   help="sweep: hnsw with the --hnsw settings, built once, queried at each of --efs; "
                        "cells: the cell search at each number of probed cells of --probes; "
                        "refine: the stored graph of the knn table refined round by round (--refine rounds); "
                        "pipeline: kNN search + graph + --rank eigenpairs in one process, against the targets")
    p.add_argument("--data", choices=tuple(DATASETS), default="mixture",
                   help="mixture: 6 isotropic Gaussian clusters; classification: make_large_file.py's rows")
    p.add_argument("--probes", default="16,32", help="probed cells of --part cells")
    p.add_argument("--cells", default="", help="cell-search settings, e.g. cell_size=1000,probes=24")
    p.add_argument("--efs", default="40,100", help="query ef values of --part sweep")
    p.add_argument("--methods", default=None, help="kNN methods (default all) or, with --part eig, eigen methods")
    p.add_argument("--graph-from", default="hnsw", help="the kNN method whose graph the eig table uses")
    p.add_argument("--repeat", action="store_true", help="search twice (n <= 200,000) and check the same answer")
    p.add_argument("--hnsw", default="", help="hnsw settings to try, e.g. M=12,ef_construction=60,ef=40,parts=2")
    p.add_argument("--refine", type=int, default=None,
                   help="refinement rounds after the search (default core.kernels.knn_search.REFINE_ROUNDS)")
    p.add_argument("--child", nargs=3, metavar=("PART", "METHOD", "N"), help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.passthrough = [f"--dim={args.dim}", f"--k={args.k}", f"--rank={args.rank}", f"--seed={args.seed}",
                        f"--sample={args.sample}", f"--graph-from={args.graph_from}", f"--hnsw={args.hnsw}", f"--efs={args.efs}",
                        f"--data={args.data}", f"--probes={args.probes}", f"--cells={args.cells}",
                        f"--degree={args.degree}", f"--cut={args.cut}", f"--ncv={args.ncv}", f"--label={args.label}",
                        f"--locality={args.locality}"] + \
        (["--keep-vectors"] if args.keep_vectors else []) + \
        ([f"--cut-rule={args.cut_rule}"] if args.cut_rule else []) + \
        (["--repeat"] if args.repeat else []) + ([f"--refine={args.refine}"] if args.refine is not None else [])
    if args.child:
        part, method, n = args.child
        if args.locality == "off":  # the points and the graph in the pool's own numbering
            from core.kernels import knn_search, laplacian_eigen

            knn_search.HNSW_ORDER_ABOVE = None
            laplacian_eigen.LOCALITY_ORDER_ABOVE = None
        out = {"knn": knn_job, "eig": eig_job, "sweep": sweep_job, "refine": refine_job, "cells": cells_job,
               "pipeline": pipeline_job, "locality": locality_job}[part](method, int(n), args)
        print(json.dumps(out))
        return 0
    sizes = [20_000] if args.quick else [int(v) for v in args.n.split(",")]
    if args.part == "sweep":
        print(f"hnsw, built once, queried at several ef; k = {args.k}, {args.dim} dimensions; {load()}")
        print("| n | settings | ef | recall@10 search | recall@10 refined | build CPU s (wall) | query CPU s (wall) "
              "| refinement CPU s (wall) | total CPU s | peak GB |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for n in sizes:
            r = run_child("sweep", "hnsw", n, args)
            if "error" in r:
                print(f"| {n:,} | error: {r['error']} | | | | | | | | |")
                continue
            for row in r["rows"]:
                total = r["build_cpu_s"] + row["query_cpu_s"] + row["refine_cpu_s"]
                print(f"| {n:,} | {r['settings']} | {row['ef']} | {row['recall_search']:.4f} | {row['recall']:.4f} | "
                      f"{r['build_cpu_s']:.1f} ({r['build_s']:.1f}) | {row['query_cpu_s']:.1f} ({row['query_s']:.1f}) | "
                      f"{row['refine_cpu_s']:.1f} ({row['refine_s']:.1f}) | {total:.1f} | {r['peak_gb']:.2f} |", flush=True)
        print(load())
        return 0
    if args.part == "cells":
        print(f"cell search at several numbers of probed cells; k = {args.k}, {args.dim} dimensions, "
              f"data {args.data}; target recall@10 >= {TARGETS['recall']}; {load()}")
        print("| n | settings | probed cells | recall@10 search | recall@10 after each round | search CPU s (wall) "
              "| refinement CPU s (wall) | load | peak GB |")
        print("|---|---|---|---|---|---|---|---|---|")
        for n in sizes:
            r = run_child("cells", "cells", n, args)
            if "error" in r:
                print(f"| {n:,} | error: {r['error']} | | | | | | | |")
                continue
            for row in r["rows"]:
                rounds = ", ".join(f"{v:.4f}" for v in row["recall_rounds"]) or "-"
                print(f"| {n:,} | {r['settings']} | {row['probes']} | {row['recall_search']:.4f} | {rounds} | "
                      f"{row['search_cpu_s']:.1f} ({row['search_s']:.1f}) | {row['refine_cpu_s']:.1f} "
                      f"({row['refine_s']:.1f}) | {row['load']:.1f} | {r['peak_gb']:.2f} |", flush=True)
        print(load())
        return 0
    if args.part == "pipeline":
        methods = args.methods.split(",") if args.methods else ["auto"]
        t = TARGETS
        print(f"kNN search + graph + {args.rank} eigenpairs (what --posterior spectral builds), one process each; "
              f"k = {args.k}, {args.dim} dimensions, data {args.data}; {load()}")
        print(f"| n | method | index used | recall@10 (target >= {t['recall']}) | its own estimates | widened to | kNN s (CPU s) | graph + eigenpairs s (CPU s) "
              f"| total s (target <= {t['seconds']:.0f}) | max residual | peak GB (target <= {t['peak_gb']:.0f}) "
              "| load start / end |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for n in sizes:
            for m in methods:
                r = run_child("pipeline", m, n, args)
                if "error" in r:
                    print(f"| {n:,} | {m} | | error: {r['error']} | | | | | | | | |")
                    continue
                total = r["knn_s"] + r["eig_s"]
                print(f"| {n:,} | {m} {r['settings']} | {r['index']} | {r['recall']:.4f} | {r['estimate']} | {r['widths']} | "
                      f"{r['knn_s']:.1f} ({r['knn_cpu_s']:.1f}) | "
                      f"{r['eig_s']:.1f} ({r['eig_cpu_s']:.1f}) | {total:.1f} | {r['max_residual']:.1e} | "
                      f"{r['peak_gb']:.2f} | {r['load_start']:.1f} / {r['load_end']:.1f} |", flush=True)
        print(load())
        return 0
    if args.part == "locality":
        print(f"the renumberings of core/kernels/locality.py alone, on the stored {args.graph_from} graph and its "
              f"points; {load()}")
        for n in sizes:
            r = run_child("locality", args.graph_from, n, args)
            if "error" in r:
                print(f"| {n:,} | error: {r['error']} |")
                continue
            print("| n | numbering | mean abs(i - j) of the entries | order CPU s | ms per Chebyshev step (3 rounds) |")
            print("|---|---|---|---|---|")
            for name, ms in r["steps"].items():
                cpu = r["order_cpu_s"].get(name)
                print(f"| {n:,} | {name} | {r['spread'][name]:,.0f} | {'' if cpu is None else f'{cpu:.1f}'} | "
                      f"{', '.join(f'{m:.1f}' for m in ms)} |")
            print()
            print("| n | hnsw index over the first half, inserted in | build CPU s (wall) | search recall@11 in the half |")
            print("|---|---|---|---|")
            for name, (cpu, wall) in r["build"].items():
                print(f"| {n:,} | {name} order | {cpu:.1f} ({wall:.1f}) | {r['search_recall'][name]:.4f} |")
            print()
            print(f"| n | {n // 5:,} queries | CPU s (wall), two rounds |")
            print("|---|---|---|")
            for name, runs in r["queries"].items():
                print(f"| {n:,} | {name} | {', '.join(f'{c:.1f} ({w:.1f})' for c, w in runs)} |")
        print(load())
        return 0
    if args.part == "refine":
        print(f"the stored {args.graph_from} neighbours refined round by round; k = {args.k}; {load()}")
        print("| n | recall@10 stored | round | recall@10 | CPU s (wall) | load | peak GB |")
        print("|---|---|---|---|---|---|---|")
        for n in sizes:
            r = run_child("refine", args.graph_from, n, args)
            if "error" in r:
                print(f"| {n:,} | error: {r['error']} | | | | | |")
                continue
            for j, row in enumerate(r["rounds"], 1):
                print(f"| {n:,} | {r['recall_start']:.4f} | {j} | {row['recall']:.4f} | {row['cpu_s']:.1f} "
                      f"({row['wall_s']:.1f}) | {row['load']:.1f} | {r['peak_gb']:.2f} |", flush=True)
        print(load())
        return 0
    if args.part in ("knn", "both"):
        methods = args.methods.split(",") if args.methods and args.part == "knn" else list(KNN_METHODS)
        if args.graph_from in methods:  # the graph the eig table reads comes first
            methods.remove(args.graph_from)
            methods.insert(0, args.graph_from)
        print(f"kNN search, k = {args.k}, {args.dim} dimensions; {load()}")
        print("| n | method | settings | recall@10 | first call s | of it compile s | CPU s | peak GB | same twice |")
        print("|---|---|---|---|---|---|---|---|---|")
        for n in sizes:
            for m in methods:
                if m == "exact" and n > args.exact_max:
                    print(f"| {n:,} | exact | | 1 (by definition) | not run: O(n^2 d), above --exact-max | | | | |")
                    continue
                r = run_child("knn", m, n, args)
                if "error" in r:
                    print(f"| {n:,} | {m} | | error: {r['error']} | | | | | |")
                    continue
                compile_s = r.get("compile_s", 0.0)
                print(f"| {n:,} | {m} | {r['settings']} | {r['recall']:.4f} | {r['search_s'] + compile_s:.1f} | "
                      f"{compile_s:.1f} | {r['cpu_s'] + r.get('compile_cpu_s', 0.0):.1f} | {r['peak_gb']:.2f} | "
                      f"{r.get('same_twice', '')} |", flush=True)
        print(load())
    if args.part in ("eig", "both"):
        methods = args.methods.split(",") if args.methods and args.part == "eig" else list(EIG_METHODS)
        print(f"\n{args.rank} smallest eigenpairs of the normalised Laplacian of the {args.graph_from} graph; {load()}")
        print(f"| n | method | settings | time s | CPU s | filtered products (share of the time) | estimated cut (CPU s) "
              f"| r-th eigenvalue | max residual | max eigenvalue gap to {args.against} | subspace cosine to {args.against} "
              "| peak GB |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|")
        for n in sizes:
            if not os.path.exists(graph_path(n, args)):
                run_child("knn", args.graph_from, n, args)
            rows = {}
            for m in methods:
                if m == "eigsh" and n > args.eigsh_max:
                    continue
                rows[m] = run_child("eig", m, n, args)
            ref = eig_stem(n, "", "", args)[:-1] + f"-{args.against}"  # e.g. .../knn_scale-eig-100000-eigsh
            for m, r in rows.items():
                if "error" in r:
                    print(f"| {n:,} | {m} | error: {r['error']} | | | | | | | | | |")
                    continue
                gap = cosine = ""
                mine = eig_stem(n, m, args.label, args)
                if os.path.exists(f"{ref}.npy") and ref != mine:
                    gap = f"{np.abs(np.load(f'{mine}.npy') - np.load(f'{ref}.npy')).max():.1e}"
                    if os.path.exists(f"{ref}-V.npy") and os.path.exists(f"{mine}-V.npy"):
                        # the smallest cosine of the principal angles between the two r-dimensional subspaces
                        prod = np.load(f"{ref}-V.npy", mmap_mode="r").T @ np.load(f"{mine}-V.npy", mmap_mode="r")
                        cosine = f"{np.linalg.svd(prod, compute_uv=False).min():.10f}"
                share = f"{r['filtered']} ({r['filter_s'] / r['eig_s']:.0%})" if r["filtered"] else "-"
                est = f"{r['estimated_cut']:.4f} ({r['estimate_cpu_s']:.1f})" if r.get("estimated_cut") else "-"
                print(f"| {n:,} | {m} | {r['settings']} | {r['eig_s']:.1f} | {r['cpu_s']:.1f} | {share} | {est} | "
                      f"{r['lambda_last']:.4f} | {r['max_residual']:.1e} | {gap} | {cosine} | {r['peak_gb']:.2f} |",
                      flush=True)
        print(load())
    return 0


if __name__ == "__main__":
    sys.exit(main())
