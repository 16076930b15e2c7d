"""Where a key press of the labelling screen spends its time, server side, per model.

One process, no browser: a session on the ``moons`` built-in (``--n`` points, the app's
defaults, its re-tunes in the background as in the app) receives ``--presses`` labels, each
followed by the session calls one render of the labelling screen makes
(:func:`labeler.ui.view.build_view` with the map coloured by label, the header's counts and
model summary, the point panel's "Why this point?", the Progress tab: stopping signal, pool
error rate and its trace, the LOO curves). The label cycles through the classes, as
``benchmarks/ui_latency.py`` presses the keys. Each part is timed by wrapping the method that
does it (the parts nest: "label" holds "model update" and "after label"; "next query" holds
"query criterion"; "predictions" holds "calibration (LOO)").

Large pools without a session (``--neighbours FILE``: the kNN neighbours ``ind``, ``dist`` of
``benchmarks/scale.py``'s Gaussian mixture of n points in 32 dimensions, as
``benchmarks/knn_scale.py`` stores them): the graph learner alone receives ``--presses`` labels,
each the margin query of the model of the moment, with the reads a session makes per press
(``loo_decision_values`` for the calibration, ``decision_values``, ``predict``, the next margin
query); the refit runs in a worker thread on the learner's twin while the press is timed, as
``labeler/session/graph_refit.py`` does (``--in-request``: in the press, as before).

Poisson learning's solves (``--solves``): the learner alone, part by part, on ``--pool moons``
(two-moons, noise 0.1) or ``--pool mixture`` (``benchmarks/scale.py``'s Gaussian mixture in 32
dimensions, a kNN graph with hubs) of ``--n`` points, or on ``--neighbours FILE``: the graph, the
learner's checks, the first fit (one label per class), the first LOO (the unit-source solves of
those labels), then per press the label's update (one unit-source solve) and the LOO after it;
wall and CPU seconds (the process's, all threads: what the work costs when the machine's other
jobs take turns on its cores), the largest CG iteration count of the part's solves, the solver
(a kept sparse LU, or CG with the multigrid hierarchies built so far). ``--max-minutes``: a part
still running then is reported as unfinished and the run stops (the process exits).

Usage::

    python benchmarks/graph_keypress.py [--n 20000] [--models rls harmonic lgc poisson] [--presses 20]
    python benchmarks/graph_keypress.py --neighbours /tmp/knn_scale-1000000-32-10-0.npz --models harmonic lgc poisson --presses 5
    python benchmarks/graph_keypress.py --solves --pool mixture --n 20000 100000 --presses 5

prints, per model, the median and 95th percentile of each part in milliseconds and the load
average before and after. Wall-clock times of a process sharing the machine: compare rows of
one run only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from contextlib import contextmanager

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from labeler.session import LabelingSession, SessionConfig  # noqa: E402

#: (module, class, method, part name): the methods timed inside a press.
PARTS = [
    ("core.graph.active", "GraphLearner", "add", "model update"),
    ("core.graph.poisson_learner", "PoissonLearner", "add", "model update"),
    ("core.learner", "ActiveRLS", "add", "model update"),
    ("labeler.session.settings", "Settings", "after_labels_change", "after label (stopping, re-tune)"),
    ("core.strategies", None, "query_one", "query criterion"),
    ("labeler.session.views", "Views", "calibration", "calibration (LOO)"),
]

SPENT: dict = defaultdict(float)


def _wrap(owner, name: str, part: str) -> None:
    inner = getattr(owner, name)

    def timed(*args, **kwargs):
        t = time.perf_counter()
        try:
            return inner(*args, **kwargs)
        finally:
            SPENT[part] += time.perf_counter() - t

    timed.__wrapped__ = inner
    setattr(owner, name, timed)


def install_timers() -> None:
    import importlib

    for module, cls, name, part in PARTS:
        mod = importlib.import_module(module)
        owner = mod if cls is None else getattr(mod, cls)
        _wrap(owner, name, part)


@contextmanager
def part(name: str):
    t = time.perf_counter()
    try:
        yield
    finally:
        SPENT[name] += time.perf_counter() - t


def render(session) -> None:
    """The session calls of one render of the labelling screen (labeler/app.py)."""
    from labeler.ui.view import build_view

    with part("next query"):
        session.next_query()
    with part("predictions"):
        view = build_view(session, color_mode="label")
    with part("header + sidebar"):
        session.class_counts()
        session.model_summary()
    with part("why this point"):
        if view.query is not None:
            try:
                session.explain_query(view.query)
            except (ValueError, IndexError):
                pass
    with part("progress tab"):
        session.stopping_signal()
        try:
            session.pool_error_rate()
            session.error_rate_trace()
        except ValueError:
            pass
        try:
            session.loo_curve()
        except ValueError:
            pass


def run(n: int, model: str, presses: int, seed: int = 0) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        store = os.path.join(tmp, "s.sqlite")
        t = time.perf_counter()
        s = LabelingSession.create(store, SessionConfig(dataset="moons", dataset_options={"n": n}, model=model,
                                                        layout="pca", seed=seed))
        s.retune_in_background(True)
        create = time.perf_counter() - t
        classes = list(s.classes)
        render(s)
        rows = []
        for k in range(presses + 1):  # the first press is a warm-up (as ui_latency.py)
            SPENT.clear()
            q = s.next_query()
            t = time.perf_counter()
            with part("label"):
                s.label(q, classes[k % len(classes)], expected_query=q)
            render(s)
            SPENT["total"] = time.perf_counter() - t
            if k:
                rows.append(dict(SPENT))
        s.close()
    return {"create": create, "rows": rows}


LEARNER_ORDER = ["key press (request)", "refit (worker)", "refit (in the request)"]
ORDER = ["total", "label", "model update", "after label (stopping, re-tune)", "next query", "query criterion",
         "predictions", "calibration (LOO)", "header + sidebar", "why this point", "progress tab"]


def run_learner(neighbours: str, model: str, presses: int, seed: int = 0, background: bool = True) -> dict:
    """The graph learner alone on stored neighbours (see the module docstring).

    Each press: the margin query of the learner of the moment (the labels being fitted
    excluded), then its reads (decision values, predictions, LOO values) in this thread, timed
    as "key press (request)"; with ``background`` the label goes to the learner's twin in a
    worker thread meanwhile ("refit (worker)", as labeler/session/graph_refit.py runs it), which
    is swapped in before the next press; without, the refit is part of the press."""
    import threading

    from scale import mixture  # benchmarks/scale.py: the pool the neighbours were searched on

    from core import strategies
    from core.graph.active import GraphLearner
    from core.graph.poisson_learner import PoissonLearner
    from core.kernels.graph import neighbour_graph

    f = np.load(neighbours)
    ind, dist = f["ind"], f["dist"]
    n = ind.shape[0]
    _, y = mixture(n, 32, 2, seed)
    t = time.perf_counter()
    W = neighbour_graph(ind, dist)
    del ind, dist
    classes = ["0", "1"]
    learner = (PoissonLearner(W, classes, random_state=seed) if model == "poisson"
               else GraphLearner(W, classes, model, random_state=seed))
    rng = np.random.default_rng(seed)
    first = [int(rng.choice(np.flatnonzero(y == c))) for c in range(2)]
    learner.add_many(first, [str(y[i]) for i in first])
    learner.loo_decision_values()
    create = time.perf_counter() - t
    background = background and hasattr(learner, "twin")
    rows = []
    for _ in range(presses):
        SPENT.clear()
        t = time.perf_counter()
        i = strategies.query_one(learner, "margin", rng)
        worker = None
        if background:
            twin = learner.twin()

            def refit(twin=twin, i=i):
                t0 = time.perf_counter()
                twin.add(i, str(y[i]))
                twin.loo_decision_values()
                SPENT["refit (worker)"] = time.perf_counter() - t0

            worker = threading.Thread(target=refit)
            worker.start()
        else:
            with part("refit (in the request)"):
                learner.add(i, str(y[i]))
                learner.loo_decision_values()
        learner.decision_values
        learner.predict()
        learner.loo_decision_values()
        nxt = strategies.query_one(learner, "margin", rng, exclude=np.array([i]))
        SPENT["key press (request)"] = time.perf_counter() - t
        if worker is not None:
            worker.join()
            learner = twin
        assert nxt != i
        rows.append(dict(SPENT))
    return {"create": create, "rows": rows, "n": n}


def poisson_pool(pool: str, n: int, seed: int = 0):
    """The kNN graph (k = 10) and labels of ``pool`` ("moons" or "mixture") of n points."""
    from core.kernels.graph import knn_graph

    if pool == "moons":
        from sklearn.datasets import make_moons

        X, y = make_moons(n, noise=0.1, random_state=seed)
    else:
        from scale import mixture  # benchmarks/scale.py

        X, y = mixture(n, 32, 2, seed)
    return knn_graph(X, 10, seed=seed), y


def run_solves(pool: str, n: int | None, neighbours: str | None, presses: int, max_minutes: float,
               seed: int = 0) -> str:
    """Poisson learning's parts (module docstring), each printed as a table row as it ends (the
    solver on the last two rows); returns a note describing the graph."""
    import threading

    from core import strategies
    from core.graph.poisson_learner import PoissonLearner

    rows = []
    state = {"part": None}

    def watchdog():
        start = time.perf_counter()
        while True:
            time.sleep(5)
            if state["part"] is None:
                return
            if time.perf_counter() - start > 60 * max_minutes:
                print(f"| {pool} | {n or 'file'} | {state['part']} | not finished after {max_minutes:g} min (CPU "
                      f"{time.process_time():.0f} s in all) | | | |", flush=True)
                os._exit(3)

    def timed(name, fn, iterations=lambda: "", show=True):
        state["part"] = name
        w, c = time.perf_counter(), time.process_time()
        fn()
        rows.append((name, time.perf_counter() - w, time.process_time() - c, iterations()))
        if show:  # as it comes: a part that never ends still leaves the ones before it
            print(f"| {pool} | {W.shape[0]:,} | {name} | {rows[-1][1]:.2f} | {rows[-1][2]:.2f} | {rows[-1][3]} | |",
                  flush=True)
        return rows[-1]

    state["part"] = "graph"
    threading.Thread(target=watchdog, daemon=True).start()
    w, c = time.perf_counter(), time.process_time()
    if neighbours:
        from scale import mixture
        from core.kernels.graph import neighbour_graph

        f = np.load(neighbours)
        W = neighbour_graph(f["ind"][:, :10], f["dist"][:, :10])
        _, y = mixture(W.shape[0], 32, 2, seed)
    else:
        W, y = poisson_pool(pool, n, seed)
    rows.append(("graph (kNN, k = 10)", time.perf_counter() - w, time.process_time() - c, ""))
    print(f"| {pool} | {W.shape[0]:,} | {rows[-1][0]} | {rows[-1][1]:.2f} | {rows[-1][2]:.2f} | | |", flush=True)
    from scipy.sparse.csgraph import connected_components

    sizes = np.bincount(connected_components(W, directed=False)[1])
    note = (f"{pool}, n = {W.shape[0]:,}: {sizes.size} components, the largest {sizes.max():,} nodes; degrees "
            f"{int(W.getnnz(axis=1).min())}-{int(W.getnnz(axis=1).max())}")
    holder = {}
    timed("learner (graph checks)", lambda: holder.setdefault("l", PoissonLearner(W, ["0", "1"], random_state=seed)))
    learner = holder["l"]
    rng = np.random.default_rng(seed)
    first = [int(rng.choice(np.flatnonzero(y == c))) for c in range(2)]
    timed("first fit (1 label per class)", lambda: learner.add_many(first, [str(y[i]) for i in first]),
          lambda: learner._fit.n_iter_)
    timed("first LOO (unit sources of those)", learner.loo_decision_values, lambda: learner._fit.unit_iter_)
    adds, loos = [], []
    for _ in range(presses):
        i = strategies.query_one(learner, "margin", rng)
        adds.append(timed("label added", lambda i=i: learner.add(i, str(y[i])), lambda: learner._fit.n_iter_,
                          show=False))
        loos.append(timed("LOO after it", learner.loo_decision_values, show=False))
        del rows[-2:]
    solver = "kept sparse LU" if learner._direct else f"CG, {learner._multigrid.n_builds} hierarchies"
    for name, got in (("label added (median)", adds), ("LOO after it (median)", loos)):
        if got:
            row = (name, statistics.median(r[1] for r in got), statistics.median(r[2] for r in got),
                   max((r[3] for r in got if r[3] != ""), default=""))
            print(f"| {pool} | {W.shape[0]:,} | {name} | {row[1]:.2f} | {row[2]:.2f} | {row[3]} | {solver} |",
                  flush=True)
    state["part"] = None
    return note


def main_solves(args) -> int:
    import warnings

    from core.graph.poisson import DisconnectedGraphWarning

    warnings.simplefilter("ignore", DisconnectedGraphWarning)  # the mixture's clusters: its own components
    print("load average before:", " ".join(f"{v:.2f}" for v in os.getloadavg()))
    print("| pool | n | part | wall s | CPU s | CG iterations (max) | solver |")
    print("|---|---:|---|---:|---:|---:|---|")
    notes = []
    for n in ([None] if args.neighbours else args.n):
        pool = "mixture (stored neighbours)" if args.neighbours else args.pool
        notes.append(run_solves(pool, n, args.neighbours, args.presses, args.max_minutes))
    for note in notes:
        print(note)
    print("load average after:", " ".join(f"{v:.2f}" for v in os.getloadavg()))
    return 0


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, nargs="+", default=[20000])
    p.add_argument("--presses", type=int, default=20)
    p.add_argument("--models", nargs="+", default=["rls", "harmonic", "lgc", "poisson"],
                   choices=["rls", "harmonic", "lgc", "poisson"])
    p.add_argument("--neighbours", help="the graph learner alone on these stored kNN neighbours (.npz: ind, dist)")
    p.add_argument("--in-request", action="store_true",
                   help="with --neighbours: the refit in the press (as before the background refits)")
    p.add_argument("--solves", action="store_true", help="Poisson learning's solves part by part (module docstring)")
    p.add_argument("--pool", choices=["moons", "mixture"], default="mixture", help="with --solves")
    p.add_argument("--max-minutes", type=float, default=20.0, help="with --solves: stop a part running longer")
    args = p.parse_args(argv)
    if args.solves:
        return main_solves(args)
    if not args.neighbours:
        install_timers()
    print("load average before:", " ".join(f"{v:.2f}" for v in os.getloadavg()))
    print("| model | n | part | median ms | p95 ms |")
    print("|---|---|---|---|---|")
    for n in ([None] if args.neighbours else args.n):
        for model in args.models:
            if args.neighbours:
                r = run_learner(args.neighbours, model, args.presses, background=not args.in_request)
                n = r["n"]
                print(f"| {model} | {n:,} | first fit + LOO | {1000 * r['create']:.0f} | |", flush=True)
            else:
                r = run(n, model, args.presses)
            for name in (LEARNER_ORDER if args.neighbours else ORDER):
                vals = [1000 * row[name] for row in r["rows"] if name in row]
                if not vals:
                    continue
                p95 = float(np.percentile(vals, 95))
                print(f"| {model} | {n:,} | {name} | {statistics.median(vals):.0f} | {p95:.0f} |", flush=True)
    print("load average after:", " ".join(f"{v:.2f}" for v in os.getloadavg()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
