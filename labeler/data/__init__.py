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
``layout``         2-D display layouts (PCA, t-SNE, UMAP)
=================  ============================================================================

File reading lives here, never in :mod:`core` (numerics only).
"""

from labeler.data.bundled import BUILTIN_DATA_DIR, read_idx
from labeler.data.dataset import FILE_SUFFIXES, IMAGE_SUFFIXES, Dataset, DatasetError
from labeler.data.load import BUILTIN_DATASETS, load_dataset, read_roles

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
