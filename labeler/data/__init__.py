"""Data for the labeller: built-in data sets, file loaders, preprocessing, display layouts.

``load_dataset(name_or_path, ...)`` returns a :class:`Dataset`; :mod:`labeler.data.preprocessing`
standardises features and reduces image pixels by PCA; :mod:`labeler.data.layout` computes the
2-D coordinates the app draws. File reading lives here, never in :mod:`core`.
"""

from labeler.data.dataset import (
    BUILTIN_DATA_DIR,
    BUILTIN_DATASETS,
    Dataset,
    DatasetError,
    load_dataset,
    read_idx,
)

__all__ = ["Dataset", "DatasetError", "load_dataset", "read_idx", "BUILTIN_DATASETS", "BUILTIN_DATA_DIR"]
