"""What one render of the labelling screen needs from the session, computed once per run.

Plain code (no Streamlit): the tests build a :class:`ScreenView` from a session directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pandas as pd
from PIL import Image

from labeler.data.dataset import DatasetError
from labeler.data.images import to_uint8
from labeler.data.point_names import shown_id  # the one naming, also the session's messages'
from labeler.data.tables import filled_value
from labeler.session.views import class_codes  # re-exported: the screen's name for it

__all__ = ["ScreenView", "build_view", "class_codes", "point_image", "upscale", "feature_table", "shown_id", "own_ids",
           "map_hover_texts"]


@dataclass
class ScreenView:
    """Snapshot of a session for one render.

    Attributes
    ----------
    classes : list of str
    query : int or None
        Next query (None when every point is labelled or skipped).
    label_codes, predicted_codes : ndarray of shape (n_samples,) of int32
        Class codes of the current labels (-1 unlabelled) and of the predictions.
    confidence : ndarray of shape (n_samples,)
        The calibrated confidence of each prediction (the ``confidence`` column of
        :attr:`predictions`).
    n_samples, n_labeled : int
    expected_risk : ndarray of shape (n_samples,) or None
        ``session.expected_risk()`` when asked for (the map coloured by it), else None.
    version : int
        ``session.n_events`` of this snapshot (actions drawn from it pass it back).
    skipped : frozenset of int
        Points marked "not sure / skip for good" (``session.skipped``).
    table : callable, optional
        Returns :attr:`predictions` (read on first use).
    predictions : pandas.DataFrame
        ``session.predictions()``: predicted, confidence, label, source, and expected_risk
        when it was asked for. Built on first use only: at 10^6 points a table of Python
        strings costs a few tenths of a second, and the labelling screen needs none of it (the
        codes and the confidence above are what it draws); the tabs that list points read it.
    """

    classes: list
    query: int | None
    label_codes: np.ndarray
    predicted_codes: np.ndarray
    confidence: np.ndarray
    n_samples: int
    n_labeled: int
    expected_risk: np.ndarray | None = None
    version: int = 0
    skipped: frozenset = frozenset()
    table: Callable[[], pd.DataFrame] | None = field(default=None, repr=False, compare=False)
    _predictions: pd.DataFrame | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def predictions(self) -> pd.DataFrame:
        if self._predictions is None:
            self._predictions = self.table()
        return self._predictions

    def predicted_name(self, index: int):
        """The predicted class of point ``index`` as :attr:`predictions` names it."""
        code = int(self.predicted_codes[index])
        if 0 <= code < len(self.classes):
            return self.classes[code]
        return self.predictions["predicted"].iloc[int(index)]  # a class outside the list


def build_view(session, color_mode: str | None = None) -> ScreenView:
    """Read the next query, the class codes and the confidence of ``session`` once (the
    predictions table when first used).

    Parameters
    ----------
    session : LabelingSession
    color_mode : str, optional
        The map's colour mode. The expected risk (an O(n^2) pass unless the "arls" strategy
        already computed it for the query) is read only for ``"expected_risk"``; ``None``
        (caller does not say) reads it too, as a column of ``predictions``.
    """
    query = session.next_query()
    with_risk = color_mode is None or color_mode == "expected_risk"
    classes = list(session.classes)
    # the codes of the labels and predictions from integers: what class_codes of the table's
    # "label" and "predicted" columns gives (tests/test_ui_helpers.py checks it)
    label_codes, predicted_codes = session.point_codes()
    return ScreenView(
        classes=classes,
        query=None if query is None else int(query),
        label_codes=label_codes,
        predicted_codes=predicted_codes,
        confidence=session.confidence(),
        n_samples=int(label_codes.shape[0]),
        n_labeled=int((label_codes >= 0).sum()),
        expected_risk=session.expected_risk() if with_risk else None,
        version=int(session.n_events),
        skipped=frozenset(int(i) for i in session.skipped),
        table=lambda: session.predictions(with_risk=with_risk),
    )


def own_ids(dataset) -> np.ndarray | None:
    """Each point's id as shown (:func:`shown_id`), or None when the ids are the pool indices
    (then "point 5" names a point already).

    Returns
    -------
    ndarray of shape (n_samples,) of str (object), or None
    """
    ids = dataset.ids
    if ids is None:
        return None
    values = np.asarray(ids)
    # integer ids read as their indices exactly when they equal them: no 10^6 strings to compare
    # (0.3-0.7 s of the first map at 10^6 points)
    if values.dtype.kind in "iu" and values.ndim == 1 \
            and np.array_equal(values, np.arange(values.shape[0], dtype=np.int64)):
        return None
    texts = values.astype(str)
    if np.array_equal(texts, np.arange(texts.shape[0]).astype(str)):
        return None
    if dataset.y is not None and np.char.find(texts, "/").max(initial=-1) >= 0:
        return np.array([shown_id(dataset, i) for i in range(texts.shape[0])], dtype=object)
    return texts.astype(object)


def map_hover_texts(dataset) -> np.ndarray | None:
    """The map's tooltip texts of ``dataset``: the point's own id when the data has one
    ("id T00005", :func:`own_ids`), then :func:`~labeler.ui.figures.hover_texts` of its text
    column; None when there is neither.

    Computed once per data set (kept on the object, for its ``texts`` and ``ids`` arrays as
    they are): about a second at 20,000 texts, and even the answer None costs an O(n) pass
    (:func:`own_ids` compares every id with its index as strings: 50-300 ms at 10^5 points),
    which every label paid between the next query and the map before.
    """
    texts, ids = dataset.texts, dataset.ids
    cached = getattr(dataset, "_map_hover_texts", None)
    if cached is not None and cached[0] is texts and cached[1] is ids:
        return cached[2]
    own = own_ids(dataset)
    value = None
    if texts is not None or own is not None:
        from labeler.ui.figures import hover_texts
        from labeler.ui.text import plot_text

        value = hover_texts(texts)
        if own is not None:
            head = np.array(["id " + plot_text(i) for i in own.tolist()], dtype=object)
            value = head if value is None else head + "<br>" + value
    dataset._map_hover_texts = (texts, ids, value)  # the texts and ids of a data set never change
    return value


def upscale(image: np.ndarray, target: int = 280) -> np.ndarray:
    """Enlarge a small image by an integer factor (nearest neighbour: sharp pixels).

    Parameters
    ----------
    image : ndarray of shape (h, w) or (h, w, c)
    target : int
        Approximate size in pixels of the longer side after enlarging; images already that
        large are returned unchanged.
    """
    image = np.asarray(image)
    factor = max(1, int(target // max(image.shape[0], image.shape[1])))
    if factor == 1:
        return image
    return image.repeat(factor, axis=0).repeat(factor, axis=1)


def point_image(dataset, index: int) -> np.ndarray | None:
    """Image of point ``index`` as a uint8 array, or None when the data set has no images.

    Uses ``dataset.images`` when present, else reads ``dataset.image_paths[index]`` with PIL.
    Pixels that are not uint8 go through the loaders' checked conversion
    (:func:`labeler.data.images.to_uint8`: integers 0-255 kept, floats in [0, 1] scaled by 255
    and rounded), so an image the loaders would refuse is refused here too, never clipped.

    Raises
    ------
    ValueError
        If the image file of the point cannot be read (missing or not an image), or
        (:class:`~labeler.data.DatasetError`) its pixels are not 0-255 integers or floats in
        [0, 1] (negative, too large, fractional, NaN).
    """
    images = dataset.images
    if images is not None:
        image = np.asarray(images[index])
        if image.dtype != np.uint8:
            image = to_uint8(image, f"the image of point {index}")
        return image
    paths = dataset.image_paths
    if paths is not None:
        path = paths[index]
        try:
            with Image.open(path) as im:
                return np.asarray(im.convert("RGB"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"The image of point {index} ({path}) cannot be read: {exc}. "
                             "Restore the file or remove the point from the data.") from None
    return None


def feature_table(dataset, index: int, max_rows: int = 40, skip=()) -> pd.DataFrame:
    """Feature values of point ``index``: original columns when known, else the features.

    ``skip`` names original columns left out (e.g. the text column, shown on its own).

    Returns
    -------
    pandas.DataFrame
        Columns ``feature`` and ``value`` (strings, so mixed types display uniformly).
    """
    frame = dataset.frame
    feature_names = [str(n) for n in dataset.feature_names or [f"x{j}" for j in range(dataset.X.shape[1])]]
    if frame is not None:
        row = frame.iloc[index]
        row = row[[c for c in row.index if str(c) not in set(skip)]]
        names, values = list(map(str, row.index)), list(row.to_numpy())
        if _frame_lacks_features(dataset, feature_names):  # an NPZ's frame: ids and labels only
            names += feature_names
            values += list(np.asarray(dataset.X[index]))
    else:
        names, values = feature_names, list(np.asarray(dataset.X[index]))
    shown = [f"{v:.4g}" if isinstance(v, (float, np.floating)) else str(v) for v in values]
    if dataset.load_options.get("missing") == "mean" and frame is not None:
        features = set(feature_names)  # a gap elsewhere (an unused column) stays a gap
        shown = [_filled(frame, name, text) if name in features else text for name, text in zip(names, shown)]
    return pd.DataFrame({"feature": names[:max_rows], "value": shown[:max_rows]})


def _filled(frame: pd.DataFrame, name: str, text: str) -> str:
    """A table cell as shown: a gap of a numeric column that ``--missing mean`` filled shows the
    value the features hold, marked ("0.53 (filled: mean)"), not "nan"."""
    if text != "nan" or name not in frame.columns:
        return text
    series = frame[name]
    if not (pd.api.types.is_numeric_dtype(series) or pd.api.types.is_bool_dtype(series)):
        return text
    try:
        value, how = filled_value(series)
    except DatasetError:  # a column without any value was never filled (not a feature)
        return text
    return f"{value:.4g} (filled: {how})"


def _frame_lacks_features(dataset, feature_names) -> bool:
    """True when the data set's table holds none of its feature columns although the features
    are its own values (an NPZ's ``X``: the table has only ids and labels), not numbers derived
    from its text (TF-IDF components) or images (pixels), which are never listed."""
    if not feature_names or "text_features" in dataset.params or dataset.images is not None \
            or dataset.image_paths is not None:
        return False
    return not set(feature_names) & set(map(str, dataset.frame.columns))
