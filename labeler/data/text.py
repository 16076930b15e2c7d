"""Features of a text column: word and character TF-IDF in a low-dimensional latent space
(or, as an option, with the exact cosines of the sparse vectors), rows of unit length.

Seed 004 (Zhu et al., its 20-newsgroups tasks) compares documents by "the standard cosine
similarity between tf.idf vectors"; this module gives the kernel that geometry. Two recipes
(``recipe``):

``"ngrams"`` (the default since issue 20)
   Word unigrams and character 3-5-grams within word boundaries (``char_wb``, of the word
   tokens only), each a sublinear, smoothed TF-IDF block (terms in at least ``min_df`` texts)
   with unit rows, joined with weight ``1/sqrt(2)`` each, so that
   ``t . t' = (cos_words + cos_chars) / 2``: a word's inflections and compounds (``quantile`` /
   ``quantiles``, ``logsumexp``) share character n-grams where they share no word. Then the
   truncated SVD to :data:`DEFAULT_NGRAM_COMPONENTS` (20) components, unit rows. With
   ``exact=True`` (pools of at most :data:`EXACT_MAX_TEXTS` (3,000) texts that fit the memory,
   :func:`exact_fits`) the features are exact instead: with more terms than texts the
   eigen-factor ``Z = V sqrt(Lambda)`` of the Gram matrix ``G = T T^T`` (the cosines, from the
   sparse product; eigenvalues above ``n eps lambda_max`` kept), so ``Z Z^T = G`` to rounding
   and every kernel of the cosine is the one on the sparse vectors; with fewer terms than texts,
   the TF-IDF itself. Measured (``benchmarks/text_topics.py``): the exact cosines separate the
   topics no better than 100 SVD components, 20 components much better (few labels generalise
   through the words' co-occurrence over the whole pool; two texts without a shared term have
   cosine 0), so the SVD is the default and the exact features an option.
``"words-svd"`` (sessions made before issue 20 reopen with it; the steps below)

1. TF-IDF (scikit-learn's ``TfidfVectorizer``): lower-cased word tokens of two or more
   letters or digits, accents stripped, sublinear term frequency ``1 + log(tf)``, smoothed
   idf, rows normalised to unit length. Words in fewer than ``min_df`` texts are dropped
   (default 2: a word seen once says nothing about similarity); if that leaves no word, every
   word is kept (``min_df = 1``).
2. When the vocabulary has more than ``n_components`` words, a truncated SVD (randomized,
   seeded) keeps ``k = min(n_components, n_texts)`` components: the latent semantic space,
   where texts sharing related words come close. With k at least the rank of the TF-IDF matrix
   nothing is lost (inner products are kept exactly).
3. Rows are normalised to unit length again, so that ``x . x' = cos(x, x')``: the linear
   kernel on these features is the cosine kernel, and the RBF kernel,
   ``exp(-|x - x'|^2 / (2 s^2)) = exp(-(1 - cos) / s^2)``, a function of the cosine alone.
   A text without any kept word is a row of zeros (its count is reported).

Every step is deterministic (the SVD draws from ``seed`` and runs on one BLAS thread), so
loading the same texts with the same options on one machine gives bit-identical features. On
another machine (other CPU kernels in the BLAS) the SVD's last bits may differ: a session
therefore recognises its data by the SHA-256 of the TF-IDF matrix (``source_sha256``, exact
everywhere) and keeps the features it was made with in its store. The features are on one scale and are not standardised (the session's
``standardize="auto"`` is off for them, as for pixels). The digest of ``"words-svd"`` is the
one sessions made before issue 20 stored; ``"ngrams"`` has its own.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from labeler.data.dataset import DEFAULT_MIN_DF, DEFAULT_TEXT_COMPONENTS, DatasetError

__all__ = ["DEFAULT_TEXT_COMPONENTS", "DEFAULT_MIN_DF", "TextFeatures", "text_features", "TEXT_RECIPES",
           "DEFAULT_TEXT_RECIPE", "LEGACY_TEXT_RECIPE", "EXACT_MAX_TEXTS", "exact_fits", "default_components",
           "DEFAULT_NGRAM_COMPONENTS"]

#: The recipes of :func:`text_features` (module docstring).
TEXT_RECIPES = ("ngrams", "words-svd")
DEFAULT_TEXT_RECIPE = "ngrams"
#: What a stored session without a recipe was made with.
LEGACY_TEXT_RECIPE = "words-svd"
#: Largest pool whose exact text features are computed (the Gram matrix's eigen-factor, on one
#: BLAS thread for bit-identical results). Measured with ``python benchmarks/text_topics.py
#: --timing`` on this 2-core machine at load 15-19: the eigen-decomposition of the n x n Gram
#: matrix took 1.2 s at 1,000 texts, 8.8 s at 2,000, 29 s at 3,000 and 129 s at 5,000; beyond
#: 3,000 the wait at every load (a stored session recomputes its TF-IDF's source on open) is
#: more than the option is worth, and the truncated SVD answers.
EXACT_MAX_TEXTS = 3_000
#: SVD components of the "ngrams" recipe. ``python benchmarks/text_topics.py`` (5-topic pool of
#: 1,318 docstrings, accuracy on the unlabelled rest after 40 labels, seeds 0-4): 20 components
#: 84.8 ± 2.2 %, 100 components 76.9 ± 3.5 %, the exact cosines 73.9 %, the recipe before issue
#: 20 75.9 ± 3.0 %; 30 and 50 components gave 82.4 % and 77.9 % (seeds 0-1). A few dimensions
#: per topic generalise from the few labels through the words' co-occurrence over the whole
#: pool, where the exact cosine of two texts without a shared term is 0. (20 was chosen on this
#: one pool: the benchmark of issue 20 item 1 should confirm it on its held-out text tasks.)
DEFAULT_NGRAM_COMPONENTS = 20
#: Word and character n-grams of the "ngrams" recipe (word bigrams lowered the accuracy on that
#: pool: 55 % against 62 % with random labels and exact cosines).
WORD_NGRAMS = (1, 1)
CHAR_NGRAMS = (3, 5)


def default_components(recipe: str) -> int:
    """SVD components of ``recipe`` when none are given: 100 (``"words-svd"``), 20 (``"ngrams"``)."""
    return DEFAULT_TEXT_COMPONENTS if recipe == LEGACY_TEXT_RECIPE else DEFAULT_NGRAM_COMPONENTS


def exact_fits(n_texts: int, available: int | None = None) -> bool:
    """Whether the exact features of ``n_texts`` texts are computed: at most
    :data:`EXACT_MAX_TEXTS` texts, and three n x n float64 arrays (the Gram matrix, its
    eigenvectors and LAPACK's work space) within half the memory available now
    (:func:`labeler.memory.available_memory`; unknown memory: the size limit alone)."""
    if n_texts > EXACT_MAX_TEXTS:
        return False
    if available is None:
        from labeler.memory import available_memory

        available = available_memory()
    return available is None or 3 * 8 * n_texts**2 <= available // 2


@dataclass(frozen=True)
class TextFeatures:
    """Result of :func:`text_features`.

    Attributes
    ----------
    X : ndarray of shape (n_texts, n_features), float64
        Unit-length rows (zero rows for texts without a kept word).
    names : list of str
        ``svd_0 ... svd_{k-1}`` after the SVD, else ``tfidf_<word>``.
    n_terms : int
        Vocabulary size after ``min_df``.
    n_components : int or None
        k of the SVD, None when the features are exact (the TF-IDF itself, or the Gram
        matrix's eigen-factor: ``X X^T`` is the TF-IDF's cosine matrix to rounding).
    min_df : int
        The ``min_df`` used (1 when ``min_df`` left no word).
    n_empty : int
        Texts without any kept word (zero rows).
    source_sha256 : str
        SHA-256 of what determines the features exactly: the TF-IDF matrix (computed without
        BLAS: the same bits on every machine) and the SVD's settings. The SVD's own last bits
        may differ between machines (CPU kernels of the BLAS), so a session recognises its
        data by this digest and keeps the features it was made with.
    """

    X: np.ndarray
    names: list
    n_terms: int
    n_components: int | None
    min_df: int
    n_empty: int
    source_sha256: str = ""
    recipe: str = LEGACY_TEXT_RECIPE

    def summary(self) -> str:
        """One line for the user: what the features are."""
        if self.recipe == LEGACY_TEXT_RECIPE:
            reduced = (f"reduced to {self.n_components} SVD components" if self.n_components
                       else "not reduced (small vocabulary)")
            empty = f"; {self.n_empty} text(s) without any kept word" if self.n_empty else ""
            return (f"TF-IDF of {self.n_terms:,} words (each in at least {self.min_df} texts), "
                    f"{reduced}, unit length (cosine){empty}")
        reduced = (f"reduced to {self.n_components} SVD components" if self.n_components
                   else f"exact cosines ({self.X.shape[1]:,} dimensions)")
        empty = f"; {self.n_empty} text(s) without any kept term" if self.n_empty else ""
        return (f"TF-IDF of {self.n_terms:,} word and character n-grams (each in at least {self.min_df} "
                f"texts), {reduced}, unit length{empty}")


def _check_int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise DatasetError(f"{name} must be an integer >= {low}; got {value!r}.")
    return int(value)


def text_features(texts, *, n_components: int | None = None,
                  min_df: int = DEFAULT_MIN_DF, seed: int = 0, name: str = "text",
                  recipe: str = DEFAULT_TEXT_RECIPE, exact: bool = False) -> TextFeatures:
    """TF-IDF features of ``texts`` with the cosine geometry (see the module docstring).

    Parameters
    ----------
    texts : sequence of str of length n_texts
        Missing values (None, NaN) count as empty texts.
    n_components : int >= 1, optional
        SVD components (largest number for ``"words-svd"``); default :func:`default_components`.
    min_df : int >= 1
        Least number of texts a term must appear in.
    seed : int
        Seed of the randomized SVD.
    name : str
        The column's name, for messages.
    recipe : {"ngrams", "words-svd"}
    exact : bool, default False
        ``"ngrams"`` only: exact cosine features instead of the SVD (refused beyond
        :func:`exact_fits`).

    Returns
    -------
    TextFeatures

    Raises
    ------
    DatasetError
        No text has a word (all empty, or only one-letter tokens and punctuation), or bad
        options.
    """
    if recipe not in TEXT_RECIPES:
        raise DatasetError(f"text_recipe must be one of {', '.join(TEXT_RECIPES)}; got {recipe!r}.")
    n_components = _check_int("text_components", default_components(recipe) if n_components is None
                              else n_components, 1)
    min_df = _check_int("text_min_df", min_df, 1)
    if not isinstance(exact, (bool, np.bool_)):
        raise DatasetError(f"text_exact must be true or false; got {exact!r}.")
    docs = ["" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in texts]
    if len(docs) < 2:
        raise DatasetError(f"The text column {name!r} has {len(docs)} text(s); at least two are needed.")
    if recipe == LEGACY_TEXT_RECIPE:
        return _words_svd(docs, n_components, min_df, seed, name)
    if exact and not exact_fits(len(docs)):
        raise DatasetError(f"exact text features of {len(docs):,} texts need an n x n Gram matrix beyond "
                           f"{EXACT_MAX_TEXTS:,} texts or half the free memory; leave text_exact off (the SVD).")
    return _ngrams_cosine(docs, n_components, min_df, seed, name, bool(exact))


def _no_words(name: str) -> DatasetError:
    return DatasetError(
        f"The text column {name!r} has no words (every text is empty or only punctuation "
        "and one-letter tokens), so it cannot give features. Choose another text column "
        "or other features."
    )


def _tfidf_block(docs, min_df: int, **kw):
    """``(vectorizer, csr TF-IDF, min_df used)``; ``min_df`` falls back to 1 when it leaves
    nothing; ``None`` when even that has no term."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    for df in dict.fromkeys((min(min_df, len(docs)), 1)):
        vec = TfidfVectorizer(lowercase=True, strip_accents="unicode", sublinear_tf=True, min_df=df,
                              dtype=np.float64, norm="l2", **kw)
        try:
            T = vec.fit_transform(docs)
        except ValueError:  # "After pruning, no terms remain" / "empty vocabulary"
            continue
        if T.shape[1]:
            return vec, T.tocsr(), df
    return None


def _ngrams_cosine(docs, n_components: int, min_df: int, seed: int, name: str, exact: bool) -> TextFeatures:
    from scipy import sparse
    from scipy.linalg import eigh
    from sklearn.decomposition import TruncatedSVD
    from sklearn.preprocessing import normalize
    from threadpoolctl import threadpool_limits

    words = _tfidf_block(docs, min_df, analyzer="word", ngram_range=WORD_NGRAMS)
    if words is None:
        raise _no_words(name)
    # character n-grams of the words only (the word tokens re-joined: no n-grams of punctuation,
    # so a text without words stays a zero row)
    tokens = words[0].build_analyzer()
    unigrams = [" ".join(t for t in tokens(d) if " " not in t) for d in docs]
    chars = _tfidf_block(unigrams, min_df, analyzer="char_wb", ngram_range=CHAR_NGRAMS)
    blocks = [words[1]] + ([chars[1]] if chars is not None else [])
    T = sparse.hstack(blocks, format="csr") / np.sqrt(len(blocks))
    T = normalize(T, norm="l2")  # a text with words but no character n-gram kept: unit again
    T.sort_indices()
    used_df = words[2]
    n, n_terms = T.shape
    n_empty = int((T.getnnz(axis=1) == 0).sum())
    with threadpool_limits(limits=1, user_api="blas"):  # the same bits whatever the thread count
        if exact and n_terms <= n:
            X, k = T.toarray(), None
        elif exact:
            G = (T @ T.T).toarray()  # the cosines (a sparse product: no BLAS)
            lam, V = eigh(G)
            keep = lam > n * np.finfo(float).eps * max(lam[-1], 1e-300)
            lam, V = lam[keep][::-1], V[:, keep][:, ::-1]
            V *= np.where(V[np.abs(V).argmax(axis=0), np.arange(V.shape[1])] < 0, -1.0, 1.0)  # fixed signs
            X, k = V * np.sqrt(lam), None
        else:
            k = min(n_components, n, n_terms)
            svd = TruncatedSVD(n_components=k, algorithm="randomized", n_iter=7, random_state=int(seed))
            X = svd.fit_transform(T)
    X = np.ascontiguousarray(normalize(X, norm="l2"), dtype=np.float64)
    names = [f"cos_{j}" if k is None else f"svd_{j}" for j in range(X.shape[1])]
    digest = hashlib.sha256(repr(("tfidf-ngrams-v1", T.shape, k, int(seed), used_df, WORD_NGRAMS,
                                  CHAR_NGRAMS)).encode())
    for part in (T.data, T.indices, T.indptr):
        digest.update(np.ascontiguousarray(part).tobytes())
    return TextFeatures(X=X, names=names, n_terms=n_terms, n_components=k, min_df=used_df, n_empty=n_empty,
                        source_sha256=digest.hexdigest(), recipe="ngrams")


def _words_svd(docs, n_components: int, min_df: int, seed: int, name: str) -> TextFeatures:
    """The recipe of sessions made before issue 20 (bit for bit: their digests must match)."""
    from scipy import sparse
    from sklearn.decomposition import TruncatedSVD
    from threadpoolctl import threadpool_limits
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.preprocessing import normalize

    def vectorize(df):
        vec = TfidfVectorizer(lowercase=True, strip_accents="unicode", sublinear_tf=True,
                              min_df=df, dtype=np.float64, norm="l2")
        return vec, vec.fit_transform(docs)

    used_df = min(min_df, len(docs))
    try:
        vec, tfidf = vectorize(used_df)
    except ValueError:  # "After pruning, no terms remain" / "empty vocabulary"
        tfidf = None
    if tfidf is None or tfidf.shape[1] == 0:
        used_df = 1
        try:
            vec, tfidf = vectorize(1)
        except ValueError:
            raise _no_words(name) from None
    tfidf = sparse.csr_matrix(tfidf)
    n_terms = tfidf.shape[1]
    n_empty = int((tfidf.getnnz(axis=1) == 0).sum())
    k = None if n_terms <= n_components else min(n_components, len(docs))
    if k is None:
        X = tfidf.toarray()
        names = [f"tfidf_{w}" for w in vec.get_feature_names_out()]
    else:
        svd = TruncatedSVD(n_components=k, algorithm="randomized", n_iter=7, random_state=int(seed))
        # one BLAS thread: the same bits whatever OPENBLAS_NUM_THREADS says (a blocked product
        # split over threads adds in another order)
        with threadpool_limits(limits=1, user_api="blas"):
            X = normalize(svd.fit_transform(tfidf), norm="l2")
        names = [f"svd_{j}" for j in range(k)]
    X = np.ascontiguousarray(X, dtype=np.float64)
    tfidf.sort_indices()
    digest = hashlib.sha256(repr(("tfidf-svd-v1", tfidf.shape, k, int(seed), used_df)).encode())
    for part in (tfidf.data, tfidf.indices, tfidf.indptr):
        digest.update(np.ascontiguousarray(part).tobytes())
    return TextFeatures(X=X, names=names, n_terms=n_terms, n_components=k, min_df=used_df,
                        n_empty=n_empty, source_sha256=digest.hexdigest())
