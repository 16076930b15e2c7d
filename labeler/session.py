"""A labelling session: data, incremental learner, persistent event log, undo, next query, export.

:class:`LabelingSession` is a plain object (no Streamlit): the app's pages call it and the tests
drive it directly. Everything the user does is an event in the SQLite store
(:mod:`labeler.store`), committed BEFORE the session applies it to its learner and reports it
done, so closing the browser, reloading or killing the server loses nothing.

Reopening restores the same state
---------------------------------
A session is rebuilt from its configuration (every "auto" setting stored resolved, as a number)
and its event log: the events are folded into the net labels (undone ones dropped), skips,
classes and settings, and the learner is built with the final settings and given the net
labels in labelling order in one block update (``ActiveRLS.add_many``). Every live update is
exact (add, ``remove`` on undo, reweighting, new class, ``set_lam``, ``set_kernel``), so the
rebuilt outputs agree with the live ones to rounding (tests: 1e-10), at the cost of one
O(n^2 |L|) product instead of replaying |L| steps that each cost up to O(n^2 |L|) under
"balanced" weights.

The next query is computed once per state version (the number of events), with ties broken by
``numpy.random.default_rng([seed, n_events])`` (no generator whose state would depend on how
often it was called), and recorded in the store: a reloaded page, a reopened session and a
second tab show the same point even where rounding could split a near-tie.

Settings resolved at creation
-----------------------------
The session starts without labels, so leave-one-out cannot be used yet:

* ``width="auto"`` (RBF): the data set's recommended width (``Dataset.params["width"]``, the
  thesis' value where it gives one) when it refers to the same scaling as the session
  (``params["standardize"]`` equals ``config.standardize``); otherwise the median pairwise
  Euclidean distance of the (standardised) pool, over a fixed subsample of at most 1000
  points (:func:`core.rls.default_widths`; sessions created before this used a subsample
  seeded with ``config.seed``, and keep the width they stored). ``set_width("auto")`` later
  chooses the width by exact LOO on the labelled points
  (:class:`core.rls.WeightedRLSClassifier`) over that grid, ``median * 2**[-3, -2.5, ..., 2]``,
  at the current lam.
* ``standardize="auto"``: off for an image data set (the pixels share one scale; scaling each
  pixel would inflate near-constant border pixels and warn about constant ones), on otherwise.
  With ``pca_components=k`` the kernel sees the (standardised) features projected on their k
  leading principal components, computed once and stored (bit-identical on reopening).
* ``initial_labels=m``: m points labelled with the data set's true labels (stratified, seeded),
  one "accept" action (one undo step) before the first query. The events table only allows the
  sources "queried", "chosen" and "accepted" (a CHECK constraint of schema version 1), so they
  are stored as "accepted" events marked ``{"initial": true}`` and shown and exported with the
  source "initial".
* ``lam="auto"``: likewise ``Dataset.params["lam"]`` when it is a number and applies, else
  :data:`DEFAULT_LAM` = 0.1 (the thesis' value for most of its experiments, ALGORITHMS §4).
  ``set_lam("auto")`` chooses it by exact LOO classification error on the labelled points
  (ALGORITHMS §1; ties go to the largest lam, as in the seed).

The resolved numbers and how they were chosen (``auto_settings``) are stored with the session,
so reopening never re-resolves them. The data set options are stored with the seed filled in
(``load_dataset(..., seed=config.seed)`` unless the options name their own seed), and a
SHA-256 of the features guards against a data file changed under a session.

LOO tuning fits weighted RLS without offset with the learner's own class weights: that is
the model ARLS maintains, ``f = K_XL (K_LL + lam diag(1/w))^-1 y_L`` (ALGORITHMS §1, last line).

Concurrency: two tabs (or processes) may hold the same session. Every action is appended only
if the tab has seen the whole log; otherwise it first applies the other tab's events and
decides again (a click on a point the other tab just changed is then stale and ignored).
"""

from __future__ import annotations

import hashlib
import numbers
import threading
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

import numpy as np
import pandas as pd

from core import strategies
from core.arls import ActiveRLS
from core.confidence import confidence_bins as _confidence_bins
from core.confidence import soft_confidence
from core.kernels import KERNELS, Kernel
from core.risk import predicted_class_indices
from core.rls import WeightedRLSClassifier, default_widths
from core.validation import check_index, check_positive
from labeler.data import load_dataset
from labeler.data.preprocessing import pca_reduce, standardize

from . import export as _export
from .store import (
    LABEL_SOURCES,
    ConcurrentUpdateError,
    LogState,
    SessionInfo,
    Store,
    UnknownSessionError,
    group_actions,
)

__all__ = [
    "LabelingSession",
    "SessionConfig",
    "SessionInfo",
    "DEFAULT_LAM",
    "DEFAULT_CLASSES",
    "WEIGHTINGS",
    "LAYOUTS",
    "UnknownSessionError",
]

DEFAULT_LAM = 0.1
DEFAULT_CLASSES = ("negative", "positive")  # for a data set without classes (user can add more)
WEIGHTINGS = ("balanced", "none")
LAYOUTS = ("auto", "pca", "tsne", "umap", "given")


# --------------------------------------------------------------------------------------------
# Configuration
# --------------------------------------------------------------------------------------------


@dataclass
class SessionConfig:
    """What a session is made of.

    Parameters
    ----------
    dataset : str
        Built-in data set name or a file path (see :func:`core.datasets.load_dataset`).
    dataset_options : dict
        Keyword arguments of ``load_dataset`` (JSON-serialisable).
    kernel : {"rbf", "linear", "poly"}
    width : float > 0 or "auto"
        RBF width ``s`` in ``exp(-||x - x'||^2 / (2 s^2))``; "auto": the data set's recommended
        width or the median pairwise distance (see the module docstring).
    lam : float > 0 or "auto"
        Regularisation; "auto": the data set's recommended lam or :data:`DEFAULT_LAM`, until
        re-tuned by LOO (``set_lam("auto")``).
    strategy : {"arls", "margin", "random"}
        Query strategy (:mod:`core.strategies`).
    weighting : {"balanced", "none"} or dict {class: weight}
        Class weights of the learner.
    standardize : bool or "auto"
        Scale every feature to mean 0, standard deviation 1 before the kernel. "auto" (the
        default): False for an image data set (``images`` or ``image_paths`` present: pixels
        share one scale, and scaling each pixel would blow up near-constant border pixels and
        warn about the constant ones), True otherwise. Resolved once at creation and stored.
    pca_components : int or None
        None (the default): the kernel sees the (standardised) features themselves. An integer
        ``k`` with ``1 <= k <= min(n_samples, n_features)``: it sees their projection on the
        ``k`` leading principal components (:func:`core.preprocessing.pca_reduce`, seeded
        with ``seed``), e.g. image pixels reduced to 50 numbers. The projection is computed
        once at creation and kept in the store, so a reopened session has bit-identical
        features.
    initial_labels : int
        0 (the default): start without labels. ``m > 0``: start with ``m`` points labelled with
        the data set's own true labels (``Dataset.y``: the label column, or an image folder's
        subfolder names), drawn with ``seed``, one per class first (as many classes as
        ``m`` allows), the rest a uniform sample of the other points; written as one action
        (one undo step) before the first query. Their source is shown as "initial".
    layout : {"auto", "pca", "tsne", "umap", "given"}
        2-D coordinates for display; "given" uses the data set's own; "auto" (the default)
        means "given" when the data set has coordinates (e.g. ``x``, ``y`` columns), else
        "pca". Resolved once at creation and stored.
    seed : int
        Seed of every random choice (tie-breaking, layouts, built-in data sets).
    name : str, optional
        Display name; default "<dataset> <date>".
    classes : list of str, optional
        Class names. Default: the data set's classes, or :data:`DEFAULT_CLASSES` if it has
        none. More can be added while labelling (:meth:`LabelingSession.add_class`).
    """

    dataset: str = "moons"
    dataset_options: dict = field(default_factory=dict)
    kernel: str = "rbf"
    width: float | str = "auto"
    lam: float | str = "auto"
    strategy: str = "arls"
    weighting: str | dict = "balanced"
    standardize: bool | str = "auto"
    layout: str = "auto"
    seed: int = 0
    name: str | None = None
    classes: list | None = None
    pca_components: int | None = None
    initial_labels: int = 0

    def to_dict(self) -> dict:
        """JSON-serialisable dict of the fields."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> SessionConfig:
        """Inverse of :meth:`to_dict` (unknown keys are ignored)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def _check_weighting(weighting, classes):
    if isinstance(weighting, str):
        if weighting not in WEIGHTINGS:
            raise ValueError(
                f"Unknown weighting {weighting!r}; choose one of {', '.join(WEIGHTINGS)} or a "
                "dict {class: weight}."
            )
        return weighting
    if isinstance(weighting, dict):
        out = {}
        for k, v in weighting.items():
            if str(k) not in classes:
                raise ValueError(f"Weighting names class {k!r}, which is not one of {classes}.")
            out[str(k)] = check_positive(f"weight of class {k!r}", v)
        missing = [c for c in classes if c not in out]
        if missing:
            raise ValueError(f"Weighting dict lacks class(es) {missing}; give a weight for every class.")
        return out
    raise ValueError(f"weighting must be 'balanced', 'none' or a dict {{class: weight}}; got {weighting!r}.")


def _learner_weighting(weighting, classes):
    """The config's weighting as the learner takes it (a dict may lack later-added classes)."""
    if isinstance(weighting, dict):
        return {c: float(weighting.get(c, 1.0)) for c in classes}
    return weighting


def _check_class_name(name, classes) -> str:
    if not isinstance(name, str):
        raise TypeError(f"A class name must be a string; got {name!r} ({type(name).__name__}).")
    stripped = name.strip()
    if not stripped:
        raise ValueError("A class name cannot be empty; type a name such as 'cat'.")
    if stripped in classes:
        raise ValueError(f"Class {stripped!r} already exists (classes: {list(classes)}); pick another name.")
    return stripped


def _width_grid(X: np.ndarray) -> np.ndarray:
    """:func:`core.rls.default_widths` of the pool: median pairwise Euclidean distance (over a
    fixed subsample of at most 1000 points) times ``2**[-3, -2.5, ..., 2]``."""
    try:
        return default_widths(X)
    except ValueError:
        raise ValueError(
            "Cannot choose the RBF width automatically: the median distance between the points "
            "is 0 (duplicated or constant points). Pass width=<number> in SessionConfig."
        ) from None


def _median_distance(X: np.ndarray) -> float:
    """Median pairwise Euclidean distance of ``X``: the centre of :func:`_width_grid`."""
    return float(_width_grid(X)[_MEDIAN_AT])


_MEDIAN_AT = 6  # default_widths is median * 2**[-3, -2.5, ..., 2]: index 6 is the factor 2**0


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and np.isfinite(v) and v > 0


def _fingerprint(X: np.ndarray) -> str:
    h = hashlib.sha256()
    h.update(repr(X.shape).encode())
    h.update(np.ascontiguousarray(X, dtype=np.float64).tobytes())
    return h.hexdigest()


INITIAL_SOURCE = "initial"  # shown source of the labels drawn from the data set at creation
_PCA_ARRAY = "features-pca"  # store array: the PCA-reduced kernel features


def _is_image_data(dataset) -> bool:
    """Whether the data set's features are pixels (it has images or image files)."""
    return getattr(dataset, "images", None) is not None or getattr(dataset, "image_paths", None) is not None


def _check_count(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def _check_pca_components(k, shape) -> int | None:
    """``None`` or an int in ``[1, min(n_samples, n_features)]`` (a clear error otherwise)."""
    if k is None:
        return None
    n, d = shape
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= min(n, d):
        raise ValueError(
            f"pca_components must be None (raw features) or an integer between 1 and "
            f"min(n_samples, n_features) = min({n}, {d}) = {min(n, d)}; got {k!r}. Choose a "
            "value in that range, or None (0 in the app) to use the features as they are."
        )
    return int(k)


def _kernel_features(X_raw: np.ndarray, scale: bool, pca_components: int | None, seed: int) -> np.ndarray:
    """The features the kernel sees: ``X_raw`` standardised if ``scale``, then projected on
    its ``pca_components`` leading principal components if given (seeded with ``seed``).

    Parameters
    ----------
    X_raw : ndarray of shape (n_samples, n_features)
    scale : bool
    pca_components : int or None
    seed : int

    Returns
    -------
    ndarray of shape (n_samples, n_features) or (n_samples, pca_components)
    """
    X = standardize(X_raw)[0] if scale else X_raw
    if pca_components is not None:
        X = pca_reduce(X, int(pca_components), seed=seed)[0]
    return np.ascontiguousarray(X, dtype=np.float64)


def _initial_choice(y, classes, m: int, seed: int) -> tuple[list[int], list[str]]:
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


# --------------------------------------------------------------------------------------------
# The session
# --------------------------------------------------------------------------------------------


class LabelingSession:
    """An interactive labelling session backed by a SQLite store.

    Build one with :meth:`create` or :meth:`open`, never directly.

    Attributes
    ----------
    id : str
    name : str
    store_path : Path
    config : SessionConfig
        Current settings, "auto" values resolved to numbers.
    dataset : core.datasets.Dataset
    learner : core.arls.ActiveRLS
    classes : list of str
    X : ndarray of shape (n_samples, n_features) or (n_samples, config.pca_components)
        Features the learner sees (standardised if ``config.standardize``, then PCA-reduced
        if ``config.pca_components``).
    """

    # ---- construction ----------------------------------------------------------------------
    def __init__(self, store: Store, record, *, _dataset=None, _X=None):
        self._lock = threading.RLock()
        self._store = store
        self.store_path = store.path
        self.id = record.id
        self.name = record.name
        self.created = record.created
        self._stored_config = dict(record.config)
        cfg = SessionConfig.from_dict(record.config)
        self.dataset = _dataset if _dataset is not None else load_dataset(cfg.dataset, **cfg.dataset_options)
        X_raw = np.ascontiguousarray(self.dataset.X, dtype=np.float64)
        if record.config.get("fingerprint") not in (None, _fingerprint(X_raw)):
            raise ValueError(
                f"The data set {cfg.dataset!r} has changed since session {self.id!r} was created "
                "(its features differ), so the stored labels would point at the wrong rows. "
                "Restore the original data or create a new session."
            )
        if _X is not None:
            self.X = _X
        elif cfg.pca_components is None:
            self.X = _kernel_features(X_raw, bool(cfg.standardize), None, cfg.seed)
        else:  # the projection stored at creation: bit-identical whatever the BLAS does
            k = int(cfg.pca_components)
            X = store.get_array(self.id, _PCA_ARRAY)
            if X is None or X.shape != (X_raw.shape[0], k) or X.dtype != np.float64:
                X = _kernel_features(X_raw, bool(cfg.standardize), k, cfg.seed)
                store.put_array(self.id, _PCA_ARRAY, X)
            self.X = np.ascontiguousarray(X)
        self.n_samples = self.X.shape[0]
        self._initial_actions: set[int] = set()  # actions that wrote the initial labels
        self._initial_classes = list(cfg.classes)
        self._config = cfg
        self._log = LogState(cfg.classes, self.n_samples)
        self._cache: dict[str, object] = {}
        self._cache_version = -1
        self._layout = None
        self._restore()

    @classmethod
    def create(cls, store_path, config: SessionConfig | None = None) -> LabelingSession:
        """Create a new session in the store file ``store_path`` (created if missing).

        The data set is loaded, ``width="auto"`` / ``lam="auto"`` are resolved and stored as
        numbers with how they were chosen (``config["auto"]``), then the session is written.

        Raises
        ------
        ValueError
            A setting is invalid (unknown kernel, strategy, weighting, layout, class names).
        """
        cfg = SessionConfig.from_dict((config or SessionConfig()).to_dict())
        if cfg.kernel not in KERNELS:
            raise ValueError(f"Unknown kernel {cfg.kernel!r}; choose one of {', '.join(KERNELS)}.")
        if cfg.strategy not in strategies.STRATEGIES:
            raise ValueError(
                f"Unknown strategy {cfg.strategy!r}; choose one of {', '.join(strategies.STRATEGIES)}."
            )
        if cfg.layout not in LAYOUTS:
            raise ValueError(f"Unknown layout {cfg.layout!r}; choose one of {', '.join(LAYOUTS)}.")
        if isinstance(cfg.seed, bool) or not isinstance(cfg.seed, numbers.Integral) or cfg.seed < 0:
            raise ValueError(f"seed must be a non-negative integer; got {cfg.seed!r}.")
        cfg.seed = int(cfg.seed)
        if not isinstance(cfg.dataset_options, dict):
            raise ValueError(f"dataset_options must be a dict; got {cfg.dataset_options!r}.")
        cfg.dataset_options = {"seed": cfg.seed, **cfg.dataset_options}  # stored: exact reload
        if not (isinstance(cfg.standardize, (bool, np.bool_)) or cfg.standardize == "auto"):
            raise ValueError(f"standardize must be True, False or 'auto'; got {cfg.standardize!r}.")
        if cfg.pca_components is not None:
            _check_count("pca_components", cfg.pca_components, 1)
        cfg.initial_labels = _check_count("initial_labels", cfg.initial_labels, 0)
        path = Path(str(cfg.dataset)).expanduser()
        if path.exists():
            cfg.dataset = str(path.resolve())  # reopen from any working directory
        dataset = load_dataset(cfg.dataset, **cfg.dataset_options)
        X_raw = np.ascontiguousarray(dataset.X, dtype=np.float64)
        if cfg.layout == "auto":
            cfg.layout = "given" if getattr(dataset, "layout", None) is not None else "pca"
        if cfg.layout == "given" and getattr(dataset, "layout", None) is None:
            raise ValueError(f"Data set {cfg.dataset!r} has no given layout; use layout='pca' or 'tsne'.")

        # classes
        if cfg.classes is None:
            ds_classes = [str(c) for c in (getattr(dataset, "classes", None) or [])]
            cfg.classes = ds_classes if len(ds_classes) >= 2 else list(DEFAULT_CLASSES)
        else:
            names: list[str] = []
            for c in list(cfg.classes):
                names.append(_check_class_name(c, names))
            if len(names) < 2:
                raise ValueError(f"Give at least two class names; got {names}.")
            cfg.classes = names
        cfg.weighting = _check_weighting(cfg.weighting, cfg.classes)

        initial = None
        if cfg.initial_labels > 0:
            if getattr(dataset, "y", None) is None:
                raise ValueError(
                    f"initial_labels={cfg.initial_labels} needs the data set's true labels, but "
                    f"{cfg.dataset!r} has none (give a label column, or an image folder with one "
                    "subfolder per class), or set initial_labels=0."
                )
            initial = _initial_choice(dataset.y, cfg.classes, cfg.initial_labels, cfg.seed)

        # resolve "auto" settings once, from the data (no labels exist yet)
        auto = {}
        if isinstance(cfg.standardize, str):  # "auto"
            image = _is_image_data(dataset)
            cfg.standardize = not image
            auto["standardize"] = (
                "off for image data (pixels share one scale)" if image else "on (not image data)"
            )
        cfg.standardize = bool(cfg.standardize)
        cfg.pca_components = _check_pca_components(cfg.pca_components, X_raw.shape)
        X = _kernel_features(X_raw, cfg.standardize, cfg.pca_components, cfg.seed)
        params = dict(getattr(dataset, "params", None) or {})
        # the data set's recommended values hold for its own scaling only
        use_params = (
            bool(params.get("standardize", False)) == cfg.standardize and cfg.kernel == "rbf"
            and cfg.pca_components is None
        )
        if cfg.kernel != "rbf":
            cfg.width = None
        elif cfg.width == "auto":
            if use_params and _is_number(params.get("width")):
                cfg.width = check_positive("width", float(params["width"]))
                auto["width"] = "data set recommendation"
            else:
                cfg.width = _median_distance(X)
                auto["width"] = "median pairwise distance"
        else:
            cfg.width = check_positive("width", cfg.width)
        if cfg.lam == "auto":
            if use_params and _is_number(params.get("lam")):
                cfg.lam = check_positive("lam", float(params["lam"]))
                auto["lam"] = "data set recommendation"
            else:
                cfg.lam = DEFAULT_LAM
                auto["lam"] = f"default {DEFAULT_LAM}"
        else:
            cfg.lam = check_positive("lam", cfg.lam)
        if cfg.name is None:
            cfg.name = f"{getattr(dataset, 'name', None) or Path(cfg.dataset).name}"
        if not isinstance(cfg.name, str) or not cfg.name.strip():
            raise ValueError(f"Session name must be a non-empty string; got {cfg.name!r}.")

        stored = cfg.to_dict()
        stored.update(auto=auto, n_samples=int(X.shape[0]), fingerprint=_fingerprint(X_raw))
        store = Store(store_path)
        try:
            sid = store.create_session(name=cfg.name, dataset=cfg.dataset, config=stored)
            if cfg.pca_components is not None:
                store.put_array(sid, _PCA_ARRAY, X)
            session = cls(store, store.session(sid), _dataset=dataset, _X=X)
            if initial is not None:  # one action, one undo step, before the first query
                # stored with the schema's "accepted" source (the events table's CHECK
                # constraint allows no other) and marked {"initial": true}: shown as "initial"
                rows = [
                    {"kind": "accept", "index": i, "label": lab, "source": "accepted",
                     "value": {"initial": True}}
                    for i, lab in zip(*initial)
                ]
                session._commit(lambda: rows)
            return session
        except BaseException:
            store.close()
            raise

    @classmethod
    def open(cls, store_path, session_id: str) -> LabelingSession:
        """Reopen a session: same labels, same model state, same next query.

        Raises
        ------
        UnknownSessionError
            No such session in the store.
        StoreVersionError, StoreCorruptError
            The store file is from a newer version or damaged (it is left unchanged).
        """
        store = Store(store_path)
        try:
            return cls(store, store.session(session_id))
        except BaseException:
            store.close()
            raise

    @staticmethod
    def list_sessions(store_path) -> list[SessionInfo]:
        """Sessions in the store: id, name, dataset, created, n_labeled (oldest first)."""
        with Store(store_path) as store:
            return store.list_sessions()

    @staticmethod
    def delete_session(store_path, session_id: str):
        """Delete a session and all its events; :class:`UnknownSessionError` if absent."""
        with Store(store_path) as store:
            store.delete_session(session_id)

    def close(self):
        """Close the store connection (the session object is unusable afterwards)."""
        self._store.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (
            f"LabelingSession(id={self.id!r}, dataset={self._config.dataset!r}, "
            f"n_labeled={self.n_labeled}, n_samples={self.n_samples})"
        )

    # ---- learner plumbing ------------------------------------------------------------------
    def _kernel(self, width=None) -> Kernel:
        cfg = self._config
        if cfg.kernel == "rbf":
            return Kernel("rbf", width=float(cfg.width if width is None else width))
        return Kernel(cfg.kernel)

    def _new_learner(self):
        cfg = self._config
        return ActiveRLS(
            self.X, classes=list(self._log.classes), kernel=self._kernel(), lam=float(cfg.lam),
            weighting=_learner_weighting(cfg.weighting, self._log.classes), random_state=cfg.seed,
        )

    def _restore(self):
        """Rebuild the session from its stored log: fold every event into the net state
        (labels, skips, classes, settings), then build the learner once with the final
        settings and add the net labels in labelling order with one block update
        (``ActiveRLS.add_many``). Mathematically this is the live state (every live update is
        exact); numerically it agrees to rounding. The next query is the one recorded in the
        store for this state, so it is the same point as before the reload."""
        for group in group_actions(self._store.events(self.id)):
            self._note_origin(group)
            change = self._log.apply(group)
            if change.setting is not None:
                setattr(self._config, *change.setting)
        self.learner = self._new_learner()
        recs = list(self._log.labels.values())
        if recs:
            self.learner.add_many([r.index for r in recs], [r.label for r in recs])

    def _apply(self, change):
        """Apply one action to the learner incrementally (live, and events of other tabs)."""
        learner = self.learner
        if len(change.removed) == 1:
            learner.remove(change.removed[0].index)  # exact undo (ALGORITHMS §3)
        elif change.removed:  # an undone batch: one block downdate (or rebuild), not k passes
            learner.remove_many([r.index for r in change.removed])
        if len(change.added) == 1:
            learner.add(change.added[0].index, change.added[0].label)
        elif change.added:  # an accepted batch: one block update
            learner.add_many([r.index for r in change.added], [r.label for r in change.added])
        if change.new_class is not None:
            learner.add_class(change.new_class)
            if isinstance(self._config.weighting, dict):  # the new class gets weight 1, explicitly
                learner.set_weighting(_learner_weighting(self._config.weighting, self._log.classes))
        if change.setting is not None:
            # the learner first (it keeps its old state if this raises), then the config:
            # the two never disagree
            name, value = change.setting
            if name == "weighting":
                learner.set_weighting(_learner_weighting(value, self._log.classes))
            elif name == "lam":
                learner.set_lam(float(value))  # exact block reweight, no new n x n array
            elif name == "width":
                learner.set_kernel(self._kernel(width=value))  # C refilled in place
            setattr(self._config, name, value)

    def _note_origin(self, events):
        """Remember the action that wrote the initial labels (accept events marked
        ``{"initial": true}``)."""
        first = events[0] if events else None
        if first is not None and first.kind == "accept" and isinstance(first.value, dict) \
                and first.value.get("initial") is True:
            self._initial_actions.add(int(first.action))

    def _shown_source(self, rec) -> str:
        """A label's source as shown and exported: "initial" for the initial labels."""
        return INITIAL_SOURCE if rec.action in self._initial_actions else rec.source

    def _shown_records(self) -> list:
        return [
            replace(r, source=INITIAL_SOURCE) if r.action in self._initial_actions else r
            for r in self._log.labels.values()
        ]

    def refresh(self) -> bool:
        """Apply events written by another tab or process; True if there were any."""
        with self._lock:
            new = self._store.events(self.id, after=self._log.n_events)
            for group in group_actions(new):
                self._note_origin(group)
                self._apply(self._log.apply(group))
            return bool(new)

    def _commit(self, build):
        """Run one user action: ``build()`` validates and returns the rows to append (or None
        when there is nothing to do); the rows are committed, then applied. Retried after
        catching up if another tab wrote first."""
        with self._lock:
            while True:
                rows = build()
                if rows is None:
                    return None
                try:
                    events = self._store.append(self.id, rows, after=self._log.n_events)
                except ConcurrentUpdateError:
                    self.refresh()
                    continue
                self._note_origin(events)
                change = self._log.apply(events)
                self._apply(change)
                if change.added:  # for the history chart; not needed to restore the state
                    risk = float(self.learner.estimated_risk())
                    self._store.put_risks(self.id, {rec.seq: risk for rec in change.added})
                return change

    def _cached(self, key, compute):
        if self._cache_version != self._log.n_events:
            self._cache.clear()
            self._cache_version = self._log.n_events
        if key not in self._cache:
            self._cache[key] = compute()
        return self._cache[key]

    # ---- read-only state -------------------------------------------------------------------
    @property
    def config(self) -> SessionConfig:
        """Current settings (a copy)."""
        return SessionConfig.from_dict(self._config.to_dict())

    @property
    def auto_settings(self) -> dict:
        """How the "auto" settings were resolved at creation, e.g. {"width": "median ..."}."""
        return dict(self._stored_config.get("auto", {}))

    @property
    def classes(self) -> list[str]:
        """Class names (creation order, then added ones)."""
        return list(self._log.classes)

    @property
    def labels(self) -> dict[int, str]:
        """Net labels {point index: class}, in labelling order."""
        return {i: r.label for i, r in self._log.labels.items()}

    @property
    def skipped(self) -> list[int]:
        """Skipped points, in skipping order."""
        return list(self._log.skipped)

    @property
    def n_labeled(self) -> int:
        return len(self._log.labels)

    @property
    def n_events(self) -> int:
        """Number of stored events (the state version)."""
        return self._log.n_events

    @property
    def can_undo(self) -> bool:
        return self._log.can_undo

    @property
    def layout(self) -> np.ndarray:
        """2-D coordinates of every point, shape (n_samples, 2); computed once, kept in the store."""
        if self._layout is None:
            method = self._config.layout
            if method == "given":
                Z = np.asarray(self.dataset.layout, dtype=np.float64)
            else:
                Z = self._store.get_array(self.id, f"layout-{method}")
                if Z is None or Z.shape != (self.n_samples, 2):
                    from labeler.data.layout import compute_layout

                    Z = compute_layout(self.X, method=method, seed=self._config.seed)
                    self._store.put_array(self.id, f"layout-{method}", Z)
            self._layout = Z
        return self._layout

    def _rng(self) -> np.random.Generator:
        # tie-breaking depends only on (seed, number of events): same query after reopening
        return np.random.default_rng([self._config.seed, self._log.n_events])

    def _queryable(self, i) -> bool:
        return (
            isinstance(i, numbers.Integral) and 0 <= i < self.n_samples
            and i not in self._log.labels and i not in self._log.skipped
        )

    def next_query(self) -> int | None:
        """The point the strategy asks for next; None when every point is labelled or skipped.

        Computed once per state (number of events) and recorded in the store, so a reloaded
        page, a reopened session and a second tab all show the same point. Ties are broken
        with ``default_rng([seed, n_events])``.
        """
        with self._lock:
            def compute():
                version = self._log.n_events
                stored = self._store.get_query(self.id, version)
                if stored is not None and self._queryable(stored):
                    return stored
                exclude = np.fromiter(self._log.skipped, dtype=np.intp, count=len(self._log.skipped))
                if np.isin(self.learner.unlabeled_indices, exclude).all():
                    return None  # every point labelled or skipped
                q = strategies.query(self.learner, self._config.strategy, self._rng(), exclude=exclude)
                recorded = self._store.put_query(self.id, version, int(q))
                return recorded if self._queryable(recorded) else int(q)

            return self._cached("next_query", compute)

    # ---- actions ---------------------------------------------------------------------------
    def _check_point(self, index) -> int:
        return check_index(index, self.n_samples, name="point index")

    def _check_label(self, label) -> str:
        if not isinstance(label, str) or label not in self._log.classes:
            raise ValueError(
                f"Label {label!r} is not one of the classes {self._log.classes}; pick one of "
                "them or add the class first (add_class)."
            )
        return str(label)

    def label(self, index, label, source: str = "queried", expected_query=None) -> bool:
        """Label a point: stored first, then learnt.

        Parameters
        ----------
        index : int
            Point index in ``[0, n_samples)``.
        label : str
            One of :attr:`classes`.
        source : {"queried", "chosen", "accepted"}
            "queried": the point the learner asked for; "chosen": picked by the user.
        expected_query : int, optional
            The query the user saw. If it is no longer :meth:`next_query` (a stale click,
            e.g. a double click or another tab labelled meanwhile), nothing happens.

        Returns
        -------
        bool
            True if the label was stored; False (nothing written) for a stale click or a
            point already labelled.

        Raises
        ------
        IndexError
            ``index`` out of range. ValueError: unknown label or source. Nothing changes.
        """
        index = self._check_point(index)
        label = self._check_label(label)
        if source not in LABEL_SOURCES:
            raise ValueError(f"Unknown source {source!r}; choose one of {', '.join(LABEL_SOURCES)}.")
        if expected_query is not None:
            expected_query = self._check_point(expected_query)

        def build():
            if index in self._log.labels:
                return None
            if expected_query is not None and expected_query != self.next_query():
                return None
            return [{"kind": "label", "index": index, "label": label, "source": source}]

        return self._commit(build) is not None

    def skip(self, index, expected_query=None) -> bool:
        """Do not query this point again in this session.

        Parameters
        ----------
        index : int
        expected_query : int, optional
            The query the user saw. If it is no longer :meth:`next_query` (a stale click:
            decided inside the commit, after catching up with other tabs), nothing happens.

        Returns
        -------
        bool
            True if stored; False (nothing written) if labelled, already skipped or stale.
        """
        index = self._check_point(index)
        if expected_query is not None:
            expected_query = self._check_point(expected_query)

        def build():
            if index in self._log.labels or index in self._log.skipped:
                return None
            if expected_query is not None and expected_query != self.next_query():
                return None
            return [{"kind": "skip", "index": index}]

        return self._commit(build) is not None

    @property
    def last_action(self) -> int:
        """Id of the action :meth:`undo` would revert (0 when there is nothing to undo).

        A page draws its Undo button with this id and passes it back as ``expected_action``,
        so a repeated press (or a second tab's undo meanwhile) cannot undo a second action.
        """
        top = self._log.last_undoable
        return 0 if top is None else int(top[0])

    def undo(self, expected_action=None) -> int | None:
        """Undo the last label, accepted batch (all of it) or skip, exactly.

        Parameters
        ----------
        expected_action : int, optional
            The :attr:`last_action` the user saw. If the last undoable action is another one
            (decided inside the commit, after catching up with other tabs), nothing happens:
            a double press undoes one action, not two.

        Returns
        -------
        int or None
            The point whose label or skip was undone (for a batch, its last point); None if
            there is nothing to undo or the press is stale.
        """
        if expected_action is not None and (
            isinstance(expected_action, bool) or not isinstance(expected_action, numbers.Integral)
        ):
            raise ValueError(
                "expected_action must be an action id (an int, session.last_action); got "
                f"{expected_action!r}."
            )

        def build():
            top = self._log.last_undoable
            if top is None:
                return None
            if expected_action is not None and int(expected_action) != top[0]:
                return None
            return [{"kind": "undo", "value": {"undoes": top[0]}}]

        change = self._commit(build)
        if change is None:
            return None
        if change.unskipped:
            return change.unskipped[-1]
        return change.removed[0].index  # removed in reverse order: [0] is the batch's last

    def accept_predictions(self, indices, labels=None, expected_version=None) -> int:
        """Label the given points with their predicted class (source "accepted").

        Already labelled points and repeated indices are left out. The whole batch is one
        transaction and one undo step.

        Parameters
        ----------
        indices : sequence of int
        labels : sequence of str (same length as ``indices``) or dict {index: str}, optional
            The classes the user was shown. Default: the prediction at the time of the call.
        expected_version : int, optional
            The :attr:`n_events` of the state the page was drawn from. If the state has
            changed since (decided inside the commit, after catching up with other tabs),
            nothing is written: the predictions the user saw may no longer hold.

        Returns
        -------
        int
            Number of points labelled (0 when stale or nothing to do).
        """
        idx = np.asarray(indices)
        if idx.ndim != 1 or (idx.size and idx.dtype.kind not in "iu"):
            raise ValueError(f"indices must be a 1-D sequence of point indices; got {indices!r}.")
        checked = [self._check_point(int(i)) for i in idx.tolist()]
        shown = None
        if labels is not None:
            if isinstance(labels, dict):
                missing = [i for i in checked if i not in labels]
                if missing:
                    raise ValueError(f"labels gives no class for point(s) {missing[:5]}; give one per index.")
                shown = {i: self._check_label(labels[i]) for i in checked}
            else:
                labels = list(labels)
                if len(labels) != len(checked):
                    raise ValueError(
                        f"got {len(checked)} indices but {len(labels)} labels; give one label per index."
                    )
                shown = {}
                for i, lab in zip(checked, labels):
                    lab = self._check_label(lab)
                    if shown.setdefault(i, lab) != lab:
                        raise ValueError(f"point {i} is given two labels ({shown[i]!r}, {lab!r}).")
        if expected_version is not None and (
            isinstance(expected_version, bool) or not isinstance(expected_version, numbers.Integral)
            or expected_version < 0
        ):
            raise ValueError(
                f"expected_version must be a state version (session.n_events); got {expected_version!r}."
            )

        def build():
            if expected_version is not None and int(expected_version) != self._log.n_events:
                return None
            todo = list(dict.fromkeys(i for i in checked if i not in self._log.labels))
            if not todo:
                return None
            if shown is None:
                predicted = self.learner.predict()
                chosen = {i: str(predicted[i]) for i in todo}
            else:
                chosen = shown
            return [
                {"kind": "accept", "index": i, "label": chosen[i], "source": "accepted"}
                for i in todo
            ]

        change = self._commit(build)
        return 0 if change is None else len(change.added)

    def add_class(self, name: str):
        """Add a class while labelling (binary -> multiclass). Persisted; not undoable."""
        def build():
            return [{"kind": "add_class", "label": _check_class_name(name, self._log.classes)}]

        self._commit(build)

    def _set(self, name: str, value, **extra):
        def build():
            if getattr(self._config, name) == value:
                return None
            return [{"kind": "setting", "value": {"name": name, "value": value, **extra}}]

        self._commit(build)

    def set_strategy(self, name: str):
        """Change the query strategy (persisted)."""
        if name not in strategies.STRATEGIES:
            raise ValueError(f"Unknown strategy {name!r}; choose one of {', '.join(strategies.STRATEGIES)}.")
        self._set("strategy", name)

    def set_weighting(self, weighting):
        """Change the class weighting: "balanced", "none" or {class: weight} (persisted)."""
        self._set("weighting", _check_weighting(weighting, self._log.classes))

    def set_lam(self, value):
        """Set the regularisation: a number > 0, or "auto" (exact LOO on the labelled points)."""
        if isinstance(value, str) and value == "auto":
            fit = self._cached("loo_fit", self._loo_fit)  # the fit loo_curve() shows, if drawn
            self._set("lam", float(fit.lam_), requested="auto", loo_error=float(fit.loo_error_))
        else:
            self._set("lam", check_positive("lam", value))

    def set_width(self, value):
        """Set the RBF width: a number > 0, or "auto" (exact LOO over a width grid at the
        current lam, on the labelled points)."""
        if self._config.kernel != "rbf":
            raise ValueError(
                f"The width only applies to the rbf kernel; this session uses {self._config.kernel!r}."
            )
        if isinstance(value, str) and value == "auto":
            grid = _width_grid(self.X)
            fit = self._loo_fit(width="auto", lam=float(self._config.lam), widths=grid)
            self._set("width", float(fit.width_), requested="auto", loo_error=float(fit.loo_error_))
        else:
            self._set("width", check_positive("width", value))

    # ---- model views -----------------------------------------------------------------------
    def _labelled_arrays(self):
        idx = np.fromiter(self._log.labels, dtype=np.intp, count=len(self._log.labels))
        y = np.array([r.label for r in self._log.labels.values()], dtype=object)
        return idx, y

    def _loo_fit(self, width=None, lam="auto", widths=None):
        """:class:`core.rls.WeightedRLSClassifier` fitted on the labelled points as ARLS
        models them: no offset, the learner's current class weights (ALGORITHMS §1, last
        line). Only the classes that have labels take part (a class without labels has no
        LOO error to measure).

        Parameters
        ----------
        width : float or "auto", optional
            RBF width (default: the session's).
        lam : float or "auto"
        widths : ndarray of shape (W,), optional
            Width grid for ``width="auto"``.
        """
        idx, y = self._labelled_arrays()
        present = sorted(set(y.tolist()))
        if len(idx) < 3 or len(present) < 2:
            raise ValueError(
                f"Leave-one-out tuning needs at least 3 labelled points of at least 2 classes; "
                f"there are {len(idx)} of {len(present)} class(es). Label more points first."
            )
        single = [c for c in present if int(np.sum(y == c)) < 2]
        if single:
            # leaving out a class's only label always misclassifies it: the curve is flat
            raise ValueError(
                f"Leave-one-out tuning needs at least 2 labels of every labelled class; "
                f"{', '.join(map(str, single[:5]))}{' ...' if len(single) > 5 else ''} "
                f"{'has' if len(single) == 1 else 'have'} only one. Label more points first."
            )
        weights = self.learner.class_weights
        cfg = self._config
        est = WeightedRLSClassifier(
            kernel=cfg.kernel,
            width=(cfg.width if width is None else width) if cfg.kernel == "rbf" else 1.0,
            lam=lam,
            fit_offset=False,
            class_weight={c: float(weights[c]) for c in present},
            widths=widths,
        )
        return est.fit(self.X[idx], y.astype(str))

    def loo_curve(self) -> dict:
        """LOO classification error over a lambda grid on the labelled points.

        Returns
        -------
        dict
            ``lams`` (L,), ``errors`` (L,) weighted LOO classification error, ``squared`` (L,),
            ``lam`` the LOO choice, ``current`` the session's lam.
        """
        fit = self._cached("loo_fit", self._loo_fit)
        curve = fit.loo_curve_
        return {
            "lams": np.asarray(curve["lam"]),
            "errors": np.asarray(curve["classification"]),
            "squared": np.asarray(curve["squared"]),
            "lam": float(fit.lam_),
            "current": float(self._config.lam),
        }

    def _soft(self):
        def compute():
            _, conf = soft_confidence(self.learner.decision_values)
            return np.asarray(self.learner.predict()), conf

        return self._cached("soft", compute)

    def expected_risk(self) -> np.ndarray:
        """Expected risk of querying each point (eq. 3.50; +inf for labelled points), shape
        (n_samples,). Computed only when asked, once per state (the "arls" strategy's
        :meth:`next_query` computes the same scores, which the learner keeps)."""
        def compute():
            return np.asarray(self.learner.expected_risk(), dtype=np.float64)

        return self._cached("expected_risk", compute).copy()

    def predictions(self, with_risk: bool = False) -> pd.DataFrame:
        """Per point: id, predicted, confidence (soft, ALGORITHMS §2), label (or None), source
        (or None); with ``with_risk`` also expected_risk (:meth:`expected_risk`, +inf for
        labelled points: an O(n^2) pass, so only when asked). Indexed by point index."""
        def compute():
            predicted, conf = self._soft()
            label = np.full(self.n_samples, None, dtype=object)
            source = np.full(self.n_samples, None, dtype=object)
            for i, rec in self._log.labels.items():
                label[i], source[i] = rec.label, self._shown_source(rec)
            return pd.DataFrame(
                {
                    "id": np.asarray(self.dataset.ids),
                    "predicted": pd.Series(predicted.astype(object), dtype=object),
                    "confidence": conf,
                    "label": pd.Series(label, dtype=object),
                    "source": pd.Series(source, dtype=object),
                },
                index=pd.RangeIndex(self.n_samples, name="index"),
            )

        table = self._cached("predictions", compute).copy()
        if with_risk:
            table.insert(3, "expected_risk", self.expected_risk())
        return table

    def confidence_bins(self, n_bins: int = 10):
        """Accuracy per soft-confidence bin of the labelled points' LOO predictions.

        Uses the learner's exact LOO outputs (ALGORITHMS §3: ``y_j - m_j`` after removing j),
        so the accuracy is an honest estimate. Accepted predictions are left out: their label
        is the model's own guess, so they would only confirm it. Returns
        :class:`core.confidence.ConfidenceBins`.
        """
        idx, y = self._labelled_arrays()
        F = np.asarray(self.learner.loo_decision_values(), dtype=np.float64)
        keep = np.array([self._shown_source(r) != "accepted" for r in self._log.labels.values()],
                        dtype=bool)
        idx, y, F = idx[keep], y[keep], F[keep] if F.size else F
        if idx.size == 0:
            return _confidence_bins(np.zeros(0), np.zeros(0, dtype=bool), n_bins)
        _, conf = soft_confidence(F)
        classes = np.array(self._log.classes, dtype=object)
        pred = classes[predicted_class_indices(F)]  # the learner's own decision rule
        return _confidence_bins(conf, pred == y, n_bins)

    def points_in_bin(self, lo: float, hi: float) -> np.ndarray:
        """Unlabelled points with soft confidence in ``[lo, hi)`` (``[lo, 1]`` when hi >= 1,
        matching the last bin of :meth:`confidence_bins`). Sorted indices."""
        lo, hi = float(lo), float(hi)
        if not lo < hi:
            raise ValueError(f"Need lo < hi; got lo={lo}, hi={hi}.")
        _, conf = self._soft()
        inside = (conf >= lo) & ((conf < hi) | ((hi >= 1.0) & (conf <= hi)))
        inside[list(self._log.labels)] = False
        return np.flatnonzero(inside)

    def class_counts(self) -> dict[str, int]:
        """Number of labels per class (every class, zeros included)."""
        counts = {c: 0 for c in self._log.classes}
        for rec in self._log.labels.values():
            counts[rec.label] += 1
        return counts

    @property
    def history(self) -> pd.DataFrame:
        """One row per net label, in labelling order: order (1-based), index, id, label,
        source, timestamp (UTC), n_labeled, estimated_risk (of the model right after the
        label, or after the whole accepted batch; NaN if the process died before recording
        it)."""
        ids = np.asarray(self.dataset.ids)
        recs = list(self._log.labels.values())
        order = np.arange(1, len(recs) + 1)
        risks = self._store.risks(self.id) if recs else {}
        return pd.DataFrame(
            {
                "order": order,
                "index": np.array([r.index for r in recs], dtype=np.intp),
                "id": ids[[r.index for r in recs]] if recs else ids[:0],
                "label": pd.Series([r.label for r in recs], dtype=object),
                "source": pd.Series([self._shown_source(r) for r in recs], dtype=object),
                "timestamp": pd.to_datetime(
                    pd.Series([r.timestamp for r in recs], dtype=object), utc=True, format="ISO8601"
                ),
                "n_labeled": order,
                "estimated_risk": np.array([risks.get(r.seq, np.nan) for r in recs], dtype=np.float64),
            }
        )

    # ---- export ----------------------------------------------------------------------------
    def export_table(self, include_predictions: bool = False) -> pd.DataFrame:
        """The table :meth:`export` writes (see :mod:`labeler.export`)."""
        ds = self.dataset
        original = getattr(ds, "frame", None)
        if original is None:
            names = list(getattr(ds, "feature_names", None) or [f"x{j}" for j in range(self.X.shape[1])])
            original = pd.DataFrame(np.asarray(ds.X), columns=names)
        kw = {}
        if include_predictions:
            predicted, conf = self._soft()
            kw = {"predicted": predicted.astype(object), "confidence": conf}
        table = _export.label_table(ds.ids, self._shown_records(), original=original, **kw)
        return self._native_class_values(table)

    def _native_class_values(self, table: pd.DataFrame) -> pd.DataFrame:
        """Give ``label`` and ``predicted`` the data set's own class values (e.g. ints).

        The session names classes by strings; when every class is one of the data set's and
        those are not strings, the exported columns use the original values, so that they
        compare equal to the data set's own label column. Classes added while labelling keep
        the strings (one column must have one type).
        """
        native = {}
        for c in getattr(self.dataset, "classes", None) or []:
            value = c.item() if isinstance(c, np.generic) else c
            native[str(value)] = value
        if not native or any(isinstance(v, str) for v in native.values()) \
                or not set(self._log.classes) <= set(native):
            return table
        ints = all(isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in native.values())
        for col in ("label", "predicted"):
            if col in table:
                values = table[col].map(lambda v: native.get(v, v) if isinstance(v, str) else v)
                # nullable integers: unlabelled rows (None) must not turn the column into floats
                table[col] = values.astype("Int64") if ints else values
        return table

    def export(self, path, format: str | None = None, include_predictions: bool = False) -> Path:
        """Write the labels to ``path`` atomically; returns the path.

        Parameters
        ----------
        path : path-like
        format : {"csv", "jsonl", "parquet", "zip"}, optional
            Default: from the file suffix. "zip" needs an image data set.
        include_predictions : bool
            Add predicted class and confidence and export every point.

        Raises
        ------
        labeler.export.ExportError
            Unknown format, zip without images. OSError subclasses: unwritable path.
        """
        fmt = _export.infer_format(path, format)
        if fmt == "zip":
            images = getattr(self.dataset, "images", None)
            paths = getattr(self.dataset, "image_paths", None)
            if images is None and paths is None:
                raise _export.ExportError(
                    f"The zip export writes one folder of images per class, but data set "
                    f"{self._config.dataset!r} has no images. Export CSV, JSONL or Parquet instead."
                )
            table = self.export_table(include_predictions)
            return _export.write_image_zip(table, path, images=images, image_paths=paths)
        return _export.write_table(self.export_table(include_predictions), path, fmt)

    def export_bytes(self, format: str, include_predictions: bool = False) -> bytes:
        """The bytes of a CSV, JSONL or Parquet export (for a download button)."""
        return _export.table_bytes(self.export_table(include_predictions), format)
