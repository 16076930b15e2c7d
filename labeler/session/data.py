"""The session's data: loading the data set, the features the kernel sees, the initial labels,
the 2-D layout and the fingerprint that guards a stored session against changed data.

The only module of the session package that imports the data modules of ``core``
(:mod:`labeler.data`, :mod:`labeler.data.preprocessing`, :mod:`labeler.data.layout`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from labeler.data import load_dataset
from labeler.data.dataset import PARQUET_SUFFIXES
from labeler.data.preprocessing import pca_reduce, standardize

#: Suffixes of the tables, whose column roles a session stores.
TABLE_SUFFIXES = (".csv", *PARQUET_SUFFIXES)

__all__ = [
    "load",
    "stored_options",
    "fingerprint",
    "fingerprint_of",
    "is_image_data",
    "is_text_features",
    "kernel_features",
    "initial_choice",
    "compute_layout",
    "auto_layout",
]


def load(name: str, options: dict, *, stored: bool = False):
    """:func:`labeler.data.load_dataset` ``(name, **options)``.

    ``stored=True``: the options of a stored session. Sessions store the column roles of a
    table (``text_col`` among them) since roles are guessed; a stored table without them was
    made before, with fixed roles, and is loaded with those (``legacy_roles``) so that it
    reopens with the same features; likewise stored text options without a ``text_recipe``
    are of the recipe before issue 20 (``"words-svd"``, :mod:`labeler.data.text`).
    """
    options = dict(options)
    if stored and Path(str(name)).suffix.lower() in TABLE_SUFFIXES and "text_col" not in options:
        options["legacy_roles"] = True
    if (stored and Path(str(name)).suffix.lower() in TABLE_SUFFIXES and "text_recipe" not in options
            and (options.get("legacy_roles") or options.get("text_col") is not None
                 or options.get("features_from") == "text")):
        # text features of a session made before issue 20 (a table without a text column has
        # none: its options stay as given, so the command line's hand-over still matches)
        options["text_recipe"] = "words-svd"
    return load_dataset(name, **options)


def stored_options(options: dict, dataset) -> dict:
    """``options`` with the data set's resolved load options (a table's column roles and text
    settings) filled in, so that the stored session reloads exactly this data set."""
    return {**options, **dict(getattr(dataset, "load_options", None) or {})}


def fingerprint(X: np.ndarray) -> str:
    """SHA-256 of the shape and float64 bytes of ``X``."""
    h = hashlib.sha256()
    h.update(repr(X.shape).encode())
    h.update(np.ascontiguousarray(X, dtype=np.float64))  # its buffer: no copy of the bytes
    return h.hexdigest()


def fingerprint_of(dataset, X_raw: np.ndarray) -> str:
    """What a session stores to recognise its data: :func:`fingerprint` of the features, or
    for text features the digest of their exact source (the TF-IDF matrix and the SVD's
    settings, :mod:`labeler.data.text`), since the SVD's last bits may differ between
    machines; the session keeps the text features it was made with in its store."""
    info = (getattr(dataset, "params", None) or {}).get("text_features") or {}
    if info.get("source_sha256"):
        return "text:" + str(info["source_sha256"])
    # (digest, shape) of dataset.X, kept with a loaded-data snapshot (labeler/session/source_snapshot.py)
    known = getattr(dataset, "_fingerprint", None)
    if known is not None and _same_array(X_raw, getattr(dataset, "X", None)) and known[1] == X_raw.shape:
        return known[0]
    return fingerprint(X_raw)


def _same_array(a, b) -> bool:
    """Whether ``a`` and ``b`` are the same memory (a view of one C-contiguous array)."""
    if not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray):
        return False
    return (a.__array_interface__["data"][0] == b.__array_interface__["data"][0] and a.shape == b.shape
            and a.dtype == b.dtype and a.flags.c_contiguous and b.flags.c_contiguous)


def is_image_data(dataset) -> bool:
    """Whether the data set's features are pixels (it has images or image files)."""
    return getattr(dataset, "images", None) is not None or getattr(dataset, "image_paths", None) is not None


def is_text_features(dataset) -> bool:
    """Whether the data set's features are the TF-IDF of a text column (unit-length rows whose
    inner products are cosines: scaling each column would break that)."""
    return "text_features" in (getattr(dataset, "params", None) or {})


def kernel_features(X_raw: np.ndarray, scale: bool, pca_components: int | None, seed: int,
                    moments=None) -> np.ndarray:
    """The features the kernel sees: ``X_raw`` standardised if ``scale``, then projected on
    its ``pca_components`` leading principal components if given (seeded with ``seed``).

    Parameters
    ----------
    X_raw : ndarray of shape (n_samples, n_features)
    scale : bool
    pca_components : int or None
    seed : int
    moments : labeler.data.preprocessing.ColumnMoments, optional
        ``X_raw``'s column moments if computed already (the "auto" standardisation's test).

    Returns
    -------
    ndarray of shape (n_samples, n_features) or (n_samples, pca_components)
    """
    X = standardize(X_raw, moments=moments)[0] if scale else X_raw
    if pca_components is not None:
        X = pca_reduce(X, int(pca_components), seed=seed)[0]
    return np.ascontiguousarray(X, dtype=np.float64)


def initial_choice(y, classes, m: int, seed: int) -> tuple[list[int], list[str]]:
    """The ``m`` points labelled at creation from the true labels ``y`` and their labels.

    Stratified: one point of each class first (of ``m`` classes drawn at random when there
    are more classes than ``m``), then a uniform sample of the other points, so the classes
    keep their proportions in expectation. Drawn from ``default_rng([seed, 0, 1])``, a stream
    of its own (tie-breaking uses ``[seed, n_events]``).

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    classes : list of str
        The session's classes; every ``str(y[i])`` must be one of them.
    m : int
        ``1 <= m <= n_samples``.
    seed : int

    Returns
    -------
    indices : list of int (length m)
    labels : list of str (length m)
    """
    y = np.asarray([str(v) for v in np.asarray(y).tolist()], dtype=object)
    n = y.shape[0]
    if m > n:
        raise ValueError(
            f"initial_labels={m} exceeds the pool size {n}; choose at most {n} (or 0 for none)."
        )
    unknown = sorted(set(y.tolist()) - set(classes))
    if unknown:
        raise ValueError(
            f"The data set's labels {unknown[:5]} are not among the session's classes {classes}; "
            "leave classes unset (the data set's own) to start with its true labels."
        )
    rng = np.random.default_rng([seed, 0, 1])
    present = sorted(set(y.tolist()))
    rows = [np.flatnonzero(y == c) for c in present]
    if m >= len(present):
        which = range(len(present))
    else:
        which = sorted(rng.choice(len(present), m, replace=False).tolist())
    first = [int(rng.choice(rows[c])) for c in which]
    rest = np.setdiff1d(np.arange(n), first)
    more = rng.choice(rest, size=m - len(first), replace=False).tolist() if m > len(first) else []
    chosen = first + [int(i) for i in more]
    return chosen, [str(y[i]) for i in chosen]


def compute_layout(X: np.ndarray, method: str, seed: int) -> np.ndarray:
    """2-D coordinates of the points (:func:`labeler.data.layout.compute_layout`, imported when first
    needed: t-SNE and UMAP are slow to import)."""
    from labeler.data.layout import compute_layout as _compute

    return _compute(X, method=method, seed=seed)


def auto_layout(dataset, shape) -> tuple[str, str | None]:
    """What ``layout="auto"`` means for a new session, and why (stored in ``config["auto"]``).

    The data set's own layout ("given") when it has one; else
    :func:`labeler.data.layout.auto_layout_method` of the raw features' ``shape``: UMAP for
    more than 3 features on 5,000 to 200,000 points (text features: from 50 texts), PCA otherwise. A session stores the
    resolved method, so sessions made before keep theirs. The reason is None for "given"
    (nothing to explain).
    """
    if getattr(dataset, "layout", None) is not None:
        return "given", None
    from labeler.data.layout import auto_layout_method

    return auto_layout_method(int(shape[0]), int(shape[1]), text=is_text_features(dataset))


# --------------------------------------------------------------------------------------------
# The low-rank posterior's factor, cached in the store
# --------------------------------------------------------------------------------------------

#: Largest single array the store is given: SQLite refuses blobs beyond 1e9 bytes, and each
#: blob is copied twice on its way in and out, so a spectral factor (8 n r bytes: 800 MB at
#: 10^6 points, rank 100) is stored in row chunks of at most this many bytes.
FACTOR_CHUNK_BYTES = 1 << 27


def factor_prefix(spec) -> str:
    """Store name prefix of the parts of a spec (:mod:`labeler.session.spec`: a low-rank
    factor, a graph model's kNN neighbours): everything the parts depend on, so that no part
    is ever read for other settings; the RBF width is not in it (Nystrom landmarks do not
    depend on it, a graph factor ignores it)."""
    return spec.parts_name


def factor_arrays(spec, parts: dict) -> dict:
    """The store arrays of the factor ``parts`` (:func:`labeler.session.model.build_factor`):
    ``{name: ndarray}``, a large factor split into row chunks of at most
    :data:`FACTOR_CHUNK_BYTES`, with a ``-chunks`` array giving their number."""
    prefix = factor_prefix(spec)
    out = {}
    for key, value in parts.items():
        value = np.ascontiguousarray(value)
        if value.nbytes <= FACTOR_CHUNK_BYTES or value.ndim != 2:
            out[f"{prefix}-{key}"] = value
            continue
        rows = max(1, FACTOR_CHUNK_BYTES // max(1, value.itemsize * value.shape[1]))
        starts = range(0, value.shape[0], rows)
        for c, a in enumerate(starts):
            out[f"{prefix}-{key}-{c}"] = value[a:a + rows]
        out[f"{prefix}-{key}-chunks"] = np.array([len(starts)], dtype=np.int64)
    return out


def load_factor_parts(get_array, spec) -> dict:
    """The factor parts of ``spec`` kept in the store (``get_array(name)`` reads one array),
    chunks joined; ``{}`` when none are stored."""
    prefix = factor_prefix(spec)
    keys = spec.part_keys
    parts = {}
    for key in keys:
        value = get_array(f"{prefix}-{key}")
        if value is None:
            count = get_array(f"{prefix}-{key}-chunks")
            if count is None:
                return {}
            chunks = [get_array(f"{prefix}-{key}-{c}") for c in range(int(count[0]))]
            if any(c is None for c in chunks):
                return {}
            value = np.concatenate(chunks) if len(chunks) > 1 else chunks[0]
            del chunks
        parts[key] = value
    return parts
