"""Text recipes (labeler.data.text): the word + character n-gram TF-IDF against a by-hand build,
exact cosines against the sparse product, the SVD default, the recipe of older sessions bit for
bit, and the text layout rule."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from numpy.testing import assert_allclose
from scipy import sparse
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.preprocessing import normalize

import labeler.data.text as text_mod
from labeler.data import DatasetError, load_dataset
from labeler.data.layout import UMAP_TEXT_MIN_SAMPLES, auto_layout_method, available_layout_methods
from labeler.data.text import DEFAULT_NGRAM_COMPONENTS, text_features
from labeler.session import data as session_data

ROOT = Path(__file__).resolve().parents[1]
SENTENCES = ROOT / "sample_data" / "sentences.csv"
#: SHA-256 of the sample sentences' TF-IDF as sessions made before issue 20 stored it.
LEGACY_SOURCE = "7bd176c89880be91137f4cba4e1b148b1bc447ef1abf82a519b352cedd4cb387"


def corpus(n: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    stems = ["quantile", "variance", "merge", "frame", "bessel", "gamma", "score", "recall", "array", "axis"]
    ends = ["", "s", "d", "ing"]
    return [" ".join(rng.choice(stems) + rng.choice(ends) for _ in range(7)) for _ in range(n)]


def ngram_tfidf_by_hand(docs, min_df=2):
    """The recipe written out with scikit-learn's vectorizers: word and char_wb 3-5 blocks."""
    kw = dict(lowercase=True, strip_accents="unicode", sublinear_tf=True, min_df=min_df, norm="l2")
    W = TfidfVectorizer(**kw).fit_transform(docs)
    C = TfidfVectorizer(analyzer="char_wb", ngram_range=(3, 5), **kw).fit_transform(docs)
    return normalize(sparse.hstack([W, C]) / np.sqrt(2)).toarray()


def test_exact_features_keep_the_cosines_of_the_sparse_vectors():
    docs = corpus(120)
    feats = text_features(docs, exact=True)
    T = ngram_tfidf_by_hand(docs)
    assert feats.n_components is None and feats.n_terms == T.shape[1] > len(docs)
    assert_allclose(feats.X @ feats.X.T, T @ T.T, atol=1e-10)
    assert_allclose(np.linalg.norm(feats.X, axis=1), 1.0, rtol=1e-12)
    assert feats.names[0] == "cos_0" and "exact cosines" in feats.summary()


def test_exact_features_with_fewer_terms_than_texts_are_the_tfidf_itself():
    docs = ["red green", "green blue", "blue red", "red red blue"] * 40
    feats = text_features(docs, exact=True)
    T = ngram_tfidf_by_hand(docs)
    assert feats.X.shape == T.shape
    assert_allclose(feats.X, T, atol=1e-12)


def test_the_default_is_the_svd_of_the_ngrams_with_unit_rows_and_the_same_bits_every_call():
    docs = corpus(200, seed=1)
    a, b = text_features(docs, seed=3), text_features(docs, seed=3)
    assert a.X.shape == (200, DEFAULT_NGRAM_COMPONENTS) and a.names[0] == "svd_0"
    assert a.X.tobytes() == b.X.tobytes() and a.source_sha256 == b.source_sha256
    assert_allclose(np.linalg.norm(a.X, axis=1), 1.0, rtol=1e-12)
    # the leading components span the exact cosines' leading directions: close cosines
    T = ngram_tfidf_by_hand(docs)
    full = text_features(docs, seed=3, n_components=200)
    assert_allclose(full.X @ full.X.T, T @ T.T, atol=1e-8)  # k = rank: nothing lost


def test_character_ngrams_join_inflections_that_share_no_word():
    docs = ["quantiles of data", "the quantile function", "merge two frames", "merged frame columns"] * 10
    X = text_features(docs, exact=True).X
    words = normalize(TfidfVectorizer(min_df=2, sublinear_tf=True).fit_transform(docs)).toarray()
    assert words[0] @ words[1] == 0.0  # no shared word ...
    assert X[0] @ X[1] > X[0] @ X[2] + 0.1  # ... but the n-grams of 'quantile'


def test_older_sessions_recipe_is_bit_for_bit_what_they_stored():
    ds = load_dataset(SENTENCES, text_recipe="words-svd")
    assert ds.params["text_features"]["source_sha256"] == LEGACY_SOURCE
    assert ds.X.shape == (300, 100)
    # a stored table's options without a recipe are of that recipe
    stored = {"id_col": "id", "label_col": "label", "text_col": "text", "image_col": None, "layout_cols": None,
              "feature_cols": [], "features_from": "text", "text_components": 100, "text_min_df": 2}
    again = session_data.load(str(SENTENCES), stored, stored=True)
    assert again.params["text_features"]["source_sha256"] == LEGACY_SOURCE
    assert again.X.tobytes() == ds.X.tobytes()
    new = load_dataset(SENTENCES)
    assert new.load_options["text_recipe"] == "ngrams" and new.load_options["text_components"] == 20
    assert new.params["text_features"]["source_sha256"] != LEGACY_SOURCE
    reopened = session_data.load(str(SENTENCES), new.load_options, stored=True)
    assert reopened.X.tobytes() == new.X.tobytes()


def test_bad_recipe_options_are_named(monkeypatch):
    with pytest.raises(DatasetError, match="text_recipe must be one of"):
        text_features(["a b c", "d e f"], recipe="bert")
    with pytest.raises(DatasetError, match="text_exact must be true or false"):
        text_features(["ab cd", "cd ef"], exact="yes")
    monkeypatch.setattr(text_mod, "EXACT_MAX_TEXTS", 10)
    with pytest.raises(DatasetError, match="leave text_exact off"):
        text_features(corpus(20), exact=True)


def test_exact_fits_follows_the_size_and_the_memory():
    assert text_mod.exact_fits(1000, available=10 * 2**30)
    assert not text_mod.exact_fits(1000, available=2**20)
    assert not text_mod.exact_fits(text_mod.EXACT_MAX_TEXTS + 1, available=2**40)


def test_text_features_get_umap_from_a_few_texts():
    method, why = auto_layout_method(300, 20, text=True)
    if "umap" in available_layout_methods():
        assert method == "umap" and "topics" in why
    else:
        assert method == "pca" and "umap-learn" in why
    assert auto_layout_method(UMAP_TEXT_MIN_SAMPLES - 1, 20, text=True)[0] == "pca"
    assert auto_layout_method(300, 20)[0] == "pca"  # other features: unchanged
