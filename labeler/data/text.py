"""Features of a text column: TF-IDF, reduced by a truncated SVD (LSA), rows of unit length.

Seed 004 (Zhu et al., its 20-newsgroups tasks) compares documents by "the standard cosine
similarity between tf.idf vectors"; this module gives the kernel that geometry:

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
``standardize="auto"`` is off for them, as for pixels).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from labeler.data.dataset import DEFAULT_MIN_DF, DEFAULT_TEXT_COMPONENTS, DatasetError

__all__ = ["DEFAULT_TEXT_COMPONENTS", "DEFAULT_MIN_DF", "TextFeatures", "text_features"]

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
        k of the SVD, None when the TF-IDF vectors themselves are the features.
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

    def summary(self) -> str:
        """One line for the user: what the features are."""
        reduced = (f"reduced to {self.n_components} SVD components" if self.n_components
                   else "not reduced (small vocabulary)")
        empty = f"; {self.n_empty} text(s) without any kept word" if self.n_empty else ""
        return (f"TF-IDF of {self.n_terms:,} words (each in at least {self.min_df} texts), "
                f"{reduced}, unit length (cosine){empty}")


def _check_int(name: str, value, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise DatasetError(f"{name} must be an integer >= {low}; got {value!r}.")
    return int(value)


def text_features(texts, *, n_components: int = DEFAULT_TEXT_COMPONENTS,
                  min_df: int = DEFAULT_MIN_DF, seed: int = 0, name: str = "text") -> TextFeatures:
    """TF-IDF features of ``texts``, SVD-reduced and L2-normalised (see the module docstring).

    Parameters
    ----------
    texts : sequence of str of length n_texts
        Missing values (None, NaN) count as empty texts.
    n_components : int >= 1
        Largest number of SVD components.
    min_df : int >= 1
        Least number of texts a word must appear in.
    seed : int
        Seed of the randomized SVD.
    name : str
        The column's name, for messages.

    Returns
    -------
    TextFeatures

    Raises
    ------
    DatasetError
        No text has a word (all empty, or only one-letter tokens and punctuation), or bad
        options.
    """
    from scipy import sparse
    from sklearn.decomposition import TruncatedSVD
    from threadpoolctl import threadpool_limits
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.preprocessing import normalize

    n_components = _check_int("text_components", n_components, 1)
    min_df = _check_int("text_min_df", min_df, 1)
    docs = ["" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in texts]
    if len(docs) < 2:
        raise DatasetError(f"The text column {name!r} has {len(docs)} text(s); at least two are needed.")

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
            raise DatasetError(
                f"The text column {name!r} has no words (every text is empty or only punctuation "
                "and one-letter tokens), so it cannot give features. Choose another text column "
                "or other features."
            ) from None
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
