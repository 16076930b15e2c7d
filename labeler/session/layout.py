"""The map's 2-D layout of a session: which coordinates the map shows now, and the slow layout
computed outside the session's lock.

:class:`MapLayout` is owned by :class:`~labeler.session.session.LabelingSession` (as
``session.map_layout``; the session's ``layout``, ``layout_pending``, ``layout_method``,
``fast_layout`` and ``compute_layout`` delegate to it). It reads only the features, the data
set's own layout, the layout setting and the seed, the session's stored arrays and the session
cache, never the event log or the learner, and it has its own lock: the map's coordinates are
read and swapped under it, never computed under it, so a UMAP of 10^5 points (minutes) holds up
neither the session nor the map.

The session's layout method (``config.layout``) is shown once it is there: kept in the store
and the session cache, or computed when it is fast (PCA; "given" is the data set's own). A slow
method (:data:`SLOW_LAYOUTS`: UMAP, t-SNE) is computed only by :meth:`MapLayout.compute` (the
app runs it in the background, :mod:`labeler.ui.startup`); until then the map shows the fast
layout (the data set's own coordinates when it has them, else PCA).
"""

from __future__ import annotations

import threading

import numpy as np

from . import data

__all__ = ["MapLayout", "SLOW_LAYOUTS"]

#: Layout methods too slow for the first query: the map starts with :meth:`MapLayout.fast`
#: and :meth:`MapLayout.compute` puts them in (the app runs it in the background).
SLOW_LAYOUTS = ("umap", "tsne")


class MapLayout:
    """The 2-D coordinates of a session's points on the map (see the module docstring).

    Parameters
    ----------
    config : SessionConfig
        The session's settings; ``config.layout`` (the layout method, resolved at creation)
        and ``config.seed`` are read.
    dataset : labeler.data.Dataset
        The session's data set; its own coordinates ``dataset.layout`` (shape (n_samples, 2),
        or None) are the "given" layout.
    X : ndarray of shape (n_samples, n_features)
        The features the learner sees, from which a layout is computed.
    load_array : callable
        ``load_array(name)`` -> the session's stored array ``name`` or None.
    cache_array : callable
        ``cache_array(name, array)``: keep an array in the store when it can
        (``LabelingSession._cache_array``).
    disk_cache : labeler.session.cache.SessionCache
        The session cache beside the store.
    cache_inputs : dict
        What the session's cached arrays are computed from (their key's inputs).
    closed : callable
        ``closed()``: whether the session was closed (a background layout finishing after the
        close has nowhere to keep its coordinates in the store).
    """

    def __init__(self, config, dataset, X, load_array, cache_array, disk_cache, cache_inputs, closed):
        self._config = config
        self._dataset = dataset
        self.X = X
        self.n_samples = X.shape[0]
        self._load_array = load_array
        self._cache_array = cache_array
        self._disk_cache = disk_cache
        self._cache_inputs = cache_inputs
        self._closed = closed
        self._layout = None  # the session's layout method's coordinates, once there
        self._fast = None  # the fast layout shown until then (a slow method: SLOW_LAYOUTS)
        self._layout_missing = False  # a slow layout found nowhere: compute() brings it
        self._lock = threading.Lock()  # reads and the swap; never held while computing

    @property
    def coordinates(self) -> np.ndarray:
        """2-D coordinates of every point as the map shows them now, shape (n_samples, 2).

        The session's layout method's (``config.layout``) once it is there: kept in the store
        and the session cache, or computed here when it is fast (PCA; "given" is the data set's
        own). A slow method (:data:`SLOW_LAYOUTS`: UMAP, t-SNE) not computed yet is never
        computed here: until :meth:`compute` puts it in (the app runs it in the background,
        :mod:`labeler.ui.startup`), this is :meth:`fast`, and :attr:`pending` is True.
        :attr:`method` says which one this is.
        """
        with self._lock:
            if self._layout is None:
                method = self._config.layout
                Z = None if self._layout_missing else self._kept_layout(method)
                self._layout_missing = Z is None and method in SLOW_LAYOUTS  # not looked for again
                if Z is None and method not in SLOW_LAYOUTS:
                    Z = self._compute_and_keep_layout(method)
                if Z is None:
                    return self._fast_layout_locked()
                self._layout = Z
            return self._layout

    @property
    def pending(self) -> bool:
        """Whether the session's layout is a slow one still to be computed (:meth:`compute`);
        the map shows :meth:`fast` meanwhile."""
        return self.coordinates is not self._layout

    @property
    def method(self) -> str:
        """The method of the coordinates :attr:`coordinates` returns now: ``config.layout``, or
        while it is pending that of :meth:`fast` ("given" or "pca")."""
        return self._config.layout if not self.pending else self._fast_method()

    def fast(self) -> np.ndarray:
        """The layout shown before a slow one is ready, shape (n_samples, 2): the data set's own
        coordinates when it has them, else PCA (kept in the store and the cache like any
        layout)."""
        with self._lock:
            return self._fast_layout_locked()

    def compute(self, compute=None) -> np.ndarray:
        """Compute the session's layout method's coordinates if they are not there yet, keep them
        (store and session cache) and show them from now on; returns them, shape (n_samples, 2).

        Blocking (UMAP of 10^5 points: minutes): the app calls it in a background thread
        (:mod:`labeler.ui.startup`). The session's other methods go on meanwhile: the
        computation holds no lock, not even this object's, only the swap does.

        Parameters
        ----------
        compute : callable(X, method, seed) -> ndarray of shape (n_samples, 2), optional
            What computes it; default :func:`labeler.session.data.compute_layout` here (the
            app runs it in another process: UMAP's numba code holds the GIL).

        Raises
        ------
        ValueError
            ``compute`` returned coordinates of another shape (nothing is kept).
        """
        with self._lock:
            if self._layout is not None:
                return self._layout
            method = self._config.layout
            Z = self._kept_layout(method)
        if Z is None:
            Z = self._compute_and_keep_layout(method, compute)
        with self._lock:
            if self._layout is None:
                self._layout = Z
                self._fast = None  # let go of the stand-in
            return self._layout

    def _fast_method(self) -> str:
        return "given" if getattr(self._dataset, "layout", None) is not None else "pca"

    def _fast_layout_locked(self) -> np.ndarray:
        if self._fast is None:
            method = self._fast_method()
            self._fast = self._kept_layout(method)
            if self._fast is None:
                self._fast = self._compute_and_keep_layout(method)
        return self._fast

    def _layout_key(self, method: str) -> str:
        return self._disk_cache.key(what="layout", method=method, **self._cache_inputs)

    def _kept_layout(self, method: str) -> np.ndarray | None:
        """The layout of ``method`` without computing it: the data set's own ("given"), the
        store's, or the session cache's (then also put in the store); None if nowhere."""
        if method == "given":
            return np.asarray(self._dataset.layout, dtype=np.float64)
        Z = self._load_array(f"layout-{method}")
        if Z is not None and Z.shape == (self.n_samples, 2):
            self._disk_cache.save("layout", self._layout_key(method), Z, inputs={"method": method})
            return Z
        Z = self._disk_cache.load("layout", self._layout_key(method), shape=(self.n_samples, 2), dtype=np.float64)
        if Z is not None:
            Z = np.array(Z)  # 16 MB at 10^6 points: in memory, and kept with the session
            self._cache_array(f"layout-{method}", Z)
        return Z

    def _compute_and_keep_layout(self, method: str, compute=None) -> np.ndarray:
        Z = (compute or data.compute_layout)(self.X, method, self._config.seed)
        Z = np.ascontiguousarray(Z, dtype=np.float64)
        if Z.shape != (self.n_samples, 2):
            raise ValueError(f"The {method} layout has shape {Z.shape}; expected ({self.n_samples}, 2).")
        try:
            self._cache_array(f"layout-{method}", Z)
        except Exception:  # the session was closed meanwhile (a background layout): nothing to keep it in
            if not self._closed():
                raise
        self._disk_cache.save("layout", self._layout_key(method), Z, inputs={"method": method})
        return Z
