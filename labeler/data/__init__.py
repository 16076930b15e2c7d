"""Data for the labeller: built-in data sets, file loaders, preprocessing, display layouts.

=================  ============================================================================
``dataset``        :class:`Dataset`, :class:`DatasetError`, the accepted file suffixes, shared checks
``load``           :func:`load_dataset`: built-in name or path -> :class:`Dataset`
``synthetic``      the thesis' synthetic sets (moons, spheres, circles), seeded
``bundled``        MAGIC, MNIST (files shipped in ``files/``) and scikit-learn's digits
``tables``         CSV / Parquet tables: their columns made into a data set
``roles``          column roles of a table (id, label, text, image, layout, features), guessed
``text``           features of a text column: TF-IDF, truncated SVD, unit rows (cosine)
``images``         image folders, image columns, decoding and resizing
``npz``            NumPy archives (no pickle)
``preprocessing``  standardisation, PCA of image pixels
``point_names``    how a point is named to the user (its id without the answer, "#58 (1058)")
``layout``         2-D display layouts (PCA, t-SNE, UMAP)
``layout_job``     a layout computed in a process of its own (``python -m labeler.data.layout_job``)
=================  ============================================================================

File reading lives here, never in :mod:`core` (numerics only).
"""

import importlib

#: Where each name of the package lives: imported when first used (PEP 562), so that a process
#: that needs one light module (``layout_job``: the map layout in its own process) does not
#: import the loaders and pandas (1.8 s and 130 MB against 0.3 s and 26 MB).
_EXPORTS = {
    "Dataset": "dataset", "DatasetError": "dataset", "FILE_SUFFIXES": "dataset", "IMAGE_SUFFIXES": "dataset",
    "load_dataset": "load", "read_roles": "load", "BUILTIN_DATASETS": "load",
    "read_idx": "bundled", "BUILTIN_DATA_DIR": "bundled",
}

__all__ = [
    "Dataset",
    "DatasetError",
    "load_dataset",
    "read_roles",
    "read_idx",
    "BUILTIN_DATASETS",
    "BUILTIN_DATA_DIR",
    "FILE_SUFFIXES",
    "IMAGE_SUFFIXES",
]


def __getattr__(name: str):
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"labeler.data.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'labeler.data' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
