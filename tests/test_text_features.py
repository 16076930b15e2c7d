"""Text features (labeler.data.text): the "words-svd" recipe's TF-IDF against a by-hand oracle,
the SVD, unit rows (cosine geometry), determinism (also across BLAS thread counts), and text
tables end to end (the default "ngrams" recipe: tests/test_text_recipes.py)."""

from __future__ import annotations

import hashlib
import math
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from core.kernels import Kernel
from labeler.data import DatasetError, load_dataset
from labeler.data.text import text_features

ROOT = Path(__file__).resolve().parents[1]
SENTENCES = ROOT / "sample_data" / "sentences.csv"
WORDS = ["cat", "dog", "sun", "rain", "goal", "match", "bread", "soup", "wind", "cold", "team", "oven"]


def corpus(n: int, seed: int = 0, words=WORDS, length=6) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(words, size=length)) for _ in range(n)]


def tfidf_by_hand(docs, min_df=1):
    """Sublinear TF-IDF, smoothed idf, unit rows: the slow, obvious definition."""
    tokens = [re.findall(r"\b\w\w+\b", d.lower()) for d in docs]
    df = Counter(w for t in tokens for w in set(t))
    vocab = sorted(w for w, c in df.items() if c >= min_df)
    n = len(docs)
    idf = {w: math.log((1 + n) / (1 + df[w])) + 1 for w in vocab}
    X = np.zeros((n, len(vocab)))
    for i, t in enumerate(tokens):
        for w, c in Counter(t).items():
            if w in idf:
                X[i, vocab.index(w)] = (1 + math.log(c)) * idf[w]
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    return np.divide(X, norms, out=np.zeros_like(X), where=norms > 0), vocab


def test_small_vocabulary_gives_the_tfidf_itself_as_the_oracle_says():
    docs = corpus(30) + ["cat cat cat dog", "a b"]  # one-letter tokens are no words
    feats = text_features(docs, n_components=100, recipe="words-svd")
    expected, vocab = tfidf_by_hand(docs, min_df=2)
    assert feats.n_components is None and feats.names == [f"tfidf_{w}" for w in vocab]
    assert_allclose(feats.X, expected, rtol=1e-12, atol=1e-15)
    assert feats.n_empty == 1 and feats.min_df == 2
    assert_array_equal(feats.X[-1], 0.0)


def test_the_svd_keeps_the_cosines_when_it_keeps_the_rank():
    rng = np.random.default_rng(1)
    vocab = [f"w{j:03d}" for j in range(400)]
    docs = [" ".join(rng.choice(vocab, size=12)) for _ in range(60)]
    feats = text_features(docs, n_components=100, min_df=1, recipe="words-svd")
    assert feats.n_components == 60 and feats.X.shape == (60, 60)  # k = min(100, n_texts)
    tfidf, _ = tfidf_by_hand(docs)
    assert_allclose(feats.X @ feats.X.T, tfidf @ tfidf.T, atol=1e-10)  # cosine geometry


def test_a_truncated_svd_gives_unit_rows_and_kernels_of_the_cosine():
    rng = np.random.default_rng(2)
    vocab = [f"w{j:03d}" for j in range(300)]
    docs = [" ".join(rng.choice(vocab, size=10)) for _ in range(150)]
    feats = text_features(docs, n_components=20, seed=3, recipe="words-svd")
    assert feats.X.shape == (150, 20) and feats.names[0] == "svd_0"
    assert_allclose(np.linalg.norm(feats.X, axis=1), 1.0, rtol=1e-12)
    cos = feats.X @ feats.X.T
    assert_allclose(Kernel("linear")(feats.X), cos, atol=1e-12)
    assert_allclose(Kernel("rbf", width=0.7)(feats.X), np.exp(-(1 - cos) / 0.7**2), atol=1e-12)


def test_features_are_bit_identical_on_every_call_and_change_with_the_seed():
    rng = np.random.default_rng(4)
    vocab = [f"w{j:03d}" for j in range(500)]
    docs = [" ".join(rng.choice(vocab, size=15)) for _ in range(300)]
    a, b = text_features(docs, seed=5, recipe="words-svd"), text_features(docs, seed=5, recipe="words-svd")
    assert a.X.tobytes() == b.X.tobytes()
    c = text_features(docs, seed=6, recipe="words-svd")
    assert c.X.tobytes() != a.X.tobytes()  # another random start: another basis of the subspace
    assert_allclose(c.X @ c.X.T, a.X @ a.X.T, atol=0.15)  # ... nearly the same geometry


_DIGEST = """
import hashlib, sys
sys.path.insert(0, {root!r})
from labeler.data import load_dataset
ds = load_dataset({path!r})
print(hashlib.sha256(ds.X.tobytes()).hexdigest())
"""


def test_features_are_bit_identical_across_processes_and_blas_thread_counts():
    """A session stores a SHA-256 of its features: reopening must compute the same bits."""
    code = _DIGEST.format(root=str(ROOT), path=str(SENTENCES))
    digests = set()
    for threads in ("1", "2"):
        env = {**os.environ, "OPENBLAS_NUM_THREADS": threads, "OMP_NUM_THREADS": threads}
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                             timeout=300, check=True)
        digests.add(out.stdout.strip())
    here = hashlib.sha256(load_dataset(SENTENCES).X.tobytes()).hexdigest()
    assert digests == {here}


def test_min_df_falls_back_to_every_word_and_no_words_is_an_error():
    feats = text_features(["red apple", "green pear"], recipe="words-svd")  # no word in two texts
    assert feats.min_df == 1 and feats.n_terms == 4
    with pytest.raises(DatasetError, match="'notes' has no words.*another text column"):
        text_features(["", "?", None, float("nan")], name="notes")
    with pytest.raises(DatasetError, match="text_components must be an integer >= 1"):
        text_features(["a b", "c d"], n_components=0)


def test_sample_sentences_load_as_text_features_with_ids_labels_and_texts():
    ds = load_dataset(SENTENCES)
    frame = pd.read_csv(SENTENCES)
    assert ds.X.shape == (300, 20) and ds.classes == ["cooking", "football", "weather"]
    assert_array_equal(ds.ids, frame["id"].to_numpy())  # the numeric id: not a feature
    assert list(ds.texts) == list(frame["text"])
    assert ds.params["standardize"] is False and ds.params["text_features"]["components"] == 20
    assert ds.load_options["features_from"] == "text" and ds.load_options["text_components"] == 20
    assert_allclose(np.linalg.norm(ds.X, axis=1), 1.0, rtol=1e-12)


def test_a_missing_text_is_an_empty_text(tmp_path):
    pd.DataFrame({"id": [1, 2, 3, 4], "text": ["rain and wind", None, "wind and sun", "sun"],
                  "label": ["a", "b", "a", "b"]}).to_csv(tmp_path / "t.csv", index=False)
    ds = load_dataset(tmp_path / "t.csv")
    assert list(ds.texts) == ["rain and wind", "", "wind and sun", "sun"]
    assert ds.params["text_features"]["empty"] == 1
    assert_array_equal(ds.X[1], 0.0)


def test_text_components_option_and_subsets(tmp_path):
    ds = load_dataset(SENTENCES, text_components=10, n=120, seed=2)
    assert ds.X.shape == (120, 10) and ds.load_options["text_components"] == 10
    again = load_dataset(SENTENCES, n=120, seed=2, **ds.load_options)
    assert again.X.tobytes() == ds.X.tobytes()
