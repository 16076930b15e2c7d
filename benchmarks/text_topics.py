"""Text features that separate topics: accuracy after 40 labels on a 5-topic docstring pool.

The pool is built offline from the docstrings of installed packages, one topic per group of
modules (numpy, scipy.special, scipy.stats, sklearn.metrics, pandas; see :data:`TOPICS`): every
public function with at least five words of documentation, the "Examples" section and all after
it cut off (it names the module: ``np.``, ``pd.``), texts found in two topics dropped, at most
:data:`PER_TOPIC` per topic (a seeded draw). Columns ``id, text, label``. The pool depends on the
installed versions, which the script prints.

Each text recipe (:mod:`labeler.data.text`) is run as ``labeler simulate POOL --budget 40`` runs
it: the app's default model and settings (``labeler.experiments.simulate.app_settings``, strategy
"auto"), 40 queries from no label, accuracy on the unlabelled rest, mean ± sd over the seeds:

- ``words-svd``: word TF-IDF reduced to 100 SVD components (the recipe before issue 20);
- ``ngrams, exact cosines``: word unigrams and character 3-5-grams, exact cosines (no truncation);
- ``ngrams, SVD 100``: the same n-grams reduced to 100 components;
- ``ngrams, SVD 20``: reduced to 20 components (the default).

Usage::

    python benchmarks/text_topics.py [--seeds 5] [--budget 40] [--csv POOL.csv] [--timing] [--layout]

``--layout`` prints how well the PCA and the UMAP map of the default features show the topics
(10-NN accuracy in the plane). ``--csv`` also writes the pool (then ``labeler simulate POOL.csv --budget 40 --seed 0 --text-col
text --label-col label --id-col id`` gives the default row's first seed). ``--timing`` prints
the seconds of the exact features' eigen-decomposition at several pool sizes (the measurement
behind ``labeler.data.text.EXACT_MAX_TEXTS``).
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import re
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

#: topic -> modules (or classes) whose public functions' docstrings make the topic
TOPICS = {
    "numpy": ("numpy", "numpy.linalg", "numpy.fft"),
    "scipy.special": ("scipy.special",),
    "scipy.stats": ("scipy.stats", "scipy.stats.mstats"),
    "sklearn.metrics": ("sklearn.metrics", "sklearn.metrics.pairwise", "sklearn.metrics.cluster"),
    "pandas": ("pandas", "pandas.DataFrame", "pandas.Series"),
}
PER_TOPIC = 300
RECIPES = (("words-svd (before)", {"text_recipe": "words-svd"}),
           ("ngrams, exact cosines", {"text_recipe": "ngrams", "text_exact": True}),
           ("ngrams, SVD 100", {"text_recipe": "ngrams", "text_components": 100}),
           ("ngrams, SVD 20 (default)", {}))


def _owner(path: str):
    try:
        return importlib.import_module(path)
    except ImportError:
        head, _, attr = path.rpartition(".")
        return getattr(importlib.import_module(head), attr)


def _functions(path: str):
    owner = _owner(path)
    for name in sorted(dir(owner)):
        if name.startswith("_"):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            obj = getattr(owner, name, None)
        if obj is None or inspect.isclass(obj) or inspect.ismodule(obj) or not callable(obj):
            continue
        yield name, obj


def _description(doc: str) -> str:
    """What a docstring says before its first numpydoc section (Parameters, Returns, ...):
    the summary and the extended summary, with the signature line of a ufunc removed."""
    doc = re.split(r"\n[^\n]*\n\s*-{3,}\s*\n", "\n" + doc)[0]
    lines = [ln for ln in doc.strip().splitlines() if not re.match(r"^\s*\w+\(.*\)\s*$", ln)]
    return " ".join(" ".join(lines).split())


def docstring_pool(per_topic: int = PER_TOPIC, seed: int = 0):
    """The pool as a pandas DataFrame with columns ``id, text, label`` (see the module docstring)."""
    import pandas as pd

    found = {}
    for topic, paths in TOPICS.items():
        texts = {}
        for path in paths:
            for name, obj in _functions(path):
                doc = inspect.getdoc(obj) or ""
                doc = _description(doc)
                if len(doc.split()) >= 5:
                    texts.setdefault(doc, f"{path}.{name}")
        found[topic] = texts
    count = {}
    for texts in found.values():
        for doc in texts:
            count[doc] = count.get(doc, 0) + 1
    rows = []
    rng = np.random.default_rng(seed)
    for topic, texts in found.items():
        docs = sorted(d for d in texts if count[d] == 1)
        if len(docs) > per_topic:
            docs = [docs[i] for i in sorted(rng.choice(len(docs), per_topic, replace=False))]
        rows += [(texts[d], d, topic) for d in docs]
    return pd.DataFrame(rows, columns=["id", "text", "label"])


def run_recipe(csv: Path, options: dict, seed: int, budget: int) -> tuple[float, str]:
    """Accuracy on the unlabelled rest after ``budget`` queries, as ``labeler simulate`` runs it,
    and the features' summary."""
    from labeler.data import load_dataset
    from labeler.experiments.simulate import app_settings, simulate

    ds = load_dataset(str(csv), seed=seed, id_col="id", label_col="label", text_col="text", **options)
    chosen = app_settings(ds, seed)
    curve = simulate(ds, strategy="auto", budget=budget, seed=seed, kernel=chosen["kernel"], lam=chosen["lam"],
                     weighting=chosen["weighting"], X=chosen["X"], auto_tune=chosen["auto_tune"],
                     posterior=chosen["posterior"], rank=chosen["rank"], landmarks=chosen["landmarks"],
                     knn=chosen["knn"])
    row = curve[curve["n_labeled"] == budget].iloc[-1]
    return float(row["accuracy"]), ds.params["text_features"]["summary"]


def timing(sizes=(500, 1000, 2000, 3000, 5000)) -> None:
    from scipy.linalg import eigh
    from threadpoolctl import threadpool_limits

    print("| texts | eigh of the Gram matrix (s) |\n|---|---|")
    rng = np.random.default_rng(0)
    for n in sizes:
        A = rng.standard_normal((n, 64))
        G = A @ A.T
        t = time.perf_counter()
        with threadpool_limits(limits=1, user_api="blas"):
            eigh(G)
        print(f"| {n:,} | {time.perf_counter() - t:.1f} |")


def layout_separation(pool, seed: int = 0) -> None:
    """How well each 2-D layout of the default features shows the topics: leave-one-out accuracy
    of the 10 nearest neighbours in the plane (a blob scores near the largest topic's share)."""
    from sklearn.model_selection import cross_val_score
    from sklearn.neighbors import KNeighborsClassifier

    from labeler.data.layout import compute_layout
    from labeler.data.text import text_features

    X = text_features(pool["text"].tolist(), seed=seed).X
    print("| layout | 10-NN accuracy in the plane (%) | seconds |\n|---|---|---|")
    for method in ("pca", "umap"):
        t = time.perf_counter()
        Z = compute_layout(X, method, seed=seed)
        secs = time.perf_counter() - t
        acc = cross_val_score(KNeighborsClassifier(10), Z, pool["label"], cv=len(pool) // 50).mean()
        print(f"| {method} | {100 * acc:.1f} | {secs:.0f} |", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--csv", type=Path, default=None, help="also write the pool here")
    parser.add_argument("--timing", action="store_true")
    parser.add_argument("--layout", action="store_true", help="how well PCA and UMAP maps show the topics")
    args = parser.parse_args(argv)
    if args.timing:
        timing()
        return 0
    if args.layout:
        layout_separation(docstring_pool())
        return 0
    import pandas as pd
    import scipy
    import sklearn

    pool = docstring_pool()
    versions = f"numpy {np.__version__}, scipy {scipy.__version__}, scikit-learn {sklearn.__version__}, " \
               f"pandas {pd.__version__}"
    counts = ", ".join(f"{t} {c}" for t, c in pool["label"].value_counts().sort_index().items())
    print(f"Pool: {len(pool):,} docstrings ({counts}); {versions}.")
    with tempfile.TemporaryDirectory() as tmp:
        csv = args.csv if args.csv is not None else Path(tmp) / "topics.csv"
        pool.to_csv(csv, index=False)
        print(f"\nAccuracy (%) on the unlabelled rest after {args.budget} labels (`labeler simulate` defaults, "
              f"strategy auto), mean ± sd over seeds 0-{args.seeds - 1}:\n")
        print("| features | accuracy | seconds per run | what the features are (seed 0) |\n|---|---|---|---|")
        for label, options in RECIPES:
            accs, secs, summary = [], [], ""
            for seed in range(args.seeds):
                t = time.perf_counter()
                acc, text = run_recipe(csv, options, seed, args.budget)
                secs.append(time.perf_counter() - t)
                accs.append(acc)
                summary = summary or text
            a = 100 * np.asarray(accs)
            print(f"| {label} | {a.mean():.1f} ± {a.std():.1f} | {np.mean(secs):.0f} | {summary} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
