"""A labelling session: data, incremental learner, persistent event log, undo, next query.

:class:`LabelingSession` is a plain object (no Streamlit): the app's pages call it and the tests
drive it directly. Everything the user does is an event in the SQLite store
(:mod:`labeler.store`), committed BEFORE the session reports it done, so closing the browser,
reloading or killing the server loses nothing. A setting or a new class is given to the learner
first and written only when the learner took it (a value the learner rejects, e.g. a lam so
small that ``K_LL + Lambda_L`` is not positive definite, is refused and never stored, so the
log always reopens); on a failed write the learner is put back.

The session's parts: :mod:`.config` (settings, defaults, checks, creation), :mod:`.data` (data
set, features, layout), :mod:`.model` (the only builder of the learner; settings changes and
LOO tuning go through it), :mod:`.costs` (the memory and step time checked before a learner is
built).

The session owns these collaborators, split by job (composition: each is given the narrow state
it needs, never the session, and none imports this module):

==========================  ===================================================================
``session.labelling``       :class:`.labelling.Labelling`: label, skip, un-skip, relabel,
                            unlabel, undo, accept, label many (given the point count, the log
                            state, the commit function, a learner getter, the next query)
``session.class_actions``   :class:`.classes.ClassActions`: add, rename, delete, move or unlabel
                            a class (the log state, the config, the commit function)
``session.settings``        :class:`.settings.Settings`: the setters, automatic re-tuning, the
                            stopping checkpoints (the config, the log state, the commit function,
                            the per-state cache, a learner getter, the features, the session's
                            stored arrays)
``session.views``           :class:`.views.Views`: read-only tables, bins, LOO curve,
                            calibration, suspects, export (a learner getter, the data, the log
                            state, the config, the cache, the settings, the recorded risks)
``session.map_layout``      :class:`.layout.MapLayout`: the map's 2-D coordinates, the fast
                            one shown while a slow one (UMAP, t-SNE) is computed outside the
                            session's lock (the config, the data set, the features, the stored
                            arrays, the session cache)
==========================  ===================================================================

What stays here: creation and reopening, the event log (``_commit``: one user action, stored
first, then learnt; ``refresh``; the rebuild on open), the learner (built, given settings and new
classes, rebuilt), the per-state cache, the state properties (``classes``, ``labels``,
``n_events``, ...) and the next query. The public methods the UI, the command line
and the tests call (``label``, ``set_lam``, ``rename_class``, ``predictions``, ...) are one-line
delegations to the collaborators, written out below.

Reopening restores the same state
---------------------------------
A session is rebuilt from its configuration (every "auto" setting stored resolved, as a number)
and its event log: the events are folded into the net labels (undone ones dropped), skips,
classes and settings, and the learner is built with the final settings and given the net
labels in labelling order in one block update (``ActiveRLS.add_many``). Every live update is
exact (add, ``remove`` on undo and unlabel, ``relabel``, reweighting, new class,
``rename_class``, ``set_lam``, ``set_kernel``; deleting a class, or undoing that, rebuilds the
learner by a direct solve), so the
rebuilt outputs agree with the live ones to rounding (tests: 1e-10), at the cost of one
O(n^2 |L|) product instead of replaying |L| steps that each cost up to O(n^2 |L|) under
"balanced" weights.

The next query is computed once per state version (the number of events), with ties broken by
``numpy.random.default_rng([seed, n_events])`` (no generator whose state would depend on how
often it was called), and recorded in the store: a reloaded page, a reopened session and a
second tab show the same point even where rounding could split a near-tie.

Concurrency: two tabs (or processes) may hold the same session. Every action is appended only
if the tab has seen the whole log; otherwise it first applies the other tab's events and
decides again (a click on a point the other tab just changed is then stale and ignored).
"""

from __future__ import annotations

import numbers
import os
import threading
from pathlib import Path

import numpy as np

from core import coldstart, strategies

from . import costs, data, model
from .cache import SessionCache
from ..data.point_names import point_name
from ..distributed import process_executor
from .config import SessionConfig, check_setting, prepare
from .classes import ClassActions
from .labelling import Labelling
from .layout import MapLayout
from .settings import Settings
from .graph_refit import GraphRefits
from .model_selection import ModelChoice, model_words
from .views import Views
from ..store import (
    Accept,
    ChainBrokenError,
    ConcurrentUpdateError,
    StoreCorruptError,
    StoreError,
    StoreWriteError,
    LogState,
    SessionInfo,
    SessionRecord,
    Store,
    group_actions,
    make_events,
    new_session_id,
    utc_now,
)

__all__ = ["LabelingSession"]

_PCA_ARRAY = "features-pca"  # store array: the PCA-reduced kernel features
_TEXT_ARRAY = "features-text"  # store array: the features of a text column (TF-IDF + SVD)


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
    dataset : labeler.data.Dataset
    learner : core.learner.ActiveRLS
    classes : list of str
    X : ndarray of shape (n_samples, n_features) or (n_samples, config.pca_components)
        Features the learner sees (standardised if ``config.standardize``, then PCA-reduced
        if ``config.pca_components``).
    labelling : labeler.session.labelling.Labelling
    class_actions : labeler.session.classes.ClassActions
    settings : labeler.session.settings.Settings
    views : labeler.session.views.Views
    map_layout : labeler.session.layout.MapLayout
        The collaborators the session owns (see the module docstring); the session's public
        methods of the same names delegate to them.
    """

    # ---- construction ----------------------------------------------------------------------
    def __init__(self, store: Store, record, *, _dataset=None, _X=None, _new=False, _progress=None,
                 _events=None):
        self._lock = threading.RLock()
        self._store = store
        self.store_path = store.path
        self.id = record.id
        self.name = record.name
        self.created = record.created
        self._stored_config = dict(record.config)
        cfg = SessionConfig.from_dict(record.config)
        if "posterior" not in record.config:  # stored before low-rank posteriors existed
            cfg.posterior = "dense"
        self.dataset = (_dataset if _dataset is not None
                        else data.load(cfg.dataset, cfg.dataset_options, stored=True))
        X_raw = np.ascontiguousarray(self.dataset.X, dtype=np.float64)
        # (a new session's fingerprint was just computed from this data set by prepare())
        stored_fingerprint = record.config.get("fingerprint")
        if _dataset is None and stored_fingerprint not in (None, data.fingerprint_of(self.dataset, X_raw)):
            raise ValueError(_changed_data_message(cfg, self.id, self.dataset, X_raw, stored_fingerprint))
        if _dataset is None and data.is_text_features(self.dataset):
            # the text features the session was made with (an SVD's last bits may differ here)
            kept = store.get_array(self.id, _TEXT_ARRAY)
            if kept is not None and kept.shape == X_raw.shape and kept.dtype == np.float64:
                X_raw = self.dataset.X = np.ascontiguousarray(kept)
            else:
                self._cache_array(_TEXT_ARRAY, X_raw)
        # the session cache beside the store (labeler/session/cache.py): every array there is
        # named by a hash of what it is computed from: the data's content (its fingerprint, a
        # SHA-256 of the features), the load options, the preprocessing and the seed
        self.disk_cache = SessionCache.for_store(store.path)
        self._writers: list[threading.Thread] = []  # session cache writes under way (_keep_later)
        self._later: dict = {}  # store arrays waiting for the background writer (_cache_array_later)
        self._later_lock = threading.Lock()
        self._later_thread: threading.Thread | None = None
        self._closing = False  # close() began (under _later_lock): no background writer starts then
        self._cache_inputs = {
            "data": record.config.get("fingerprint") or data.fingerprint(X_raw),
            "options": record.config.get("dataset_options") or {}, "n": int(X_raw.shape[0]),
            "standardize": bool(cfg.standardize), "pca": cfg.pca_components, "seed": int(cfg.seed),
            # text features: the session's own (an SVD's last bits may differ between machines)
            **({"session": record.id} if data.is_text_features(self.dataset) else {}),
        }
        features_key = self.disk_cache.key(what="features", **self._cache_inputs)
        cached_X = None if _X is not None else self.disk_cache.load("features", features_key, dtype=np.float64)
        if cached_X is not None and cached_X.ndim == 2 and cached_X.shape[0] == X_raw.shape[0]:
            self.X = cached_X  # memory-mapped, read-only
        elif _X is not None:
            self.X = _X
        elif cfg.pca_components is None:
            self.X = data.kernel_features(X_raw, bool(cfg.standardize), None, cfg.seed)
        else:  # the projection stored at creation: bit-identical whatever the BLAS does
            k = int(cfg.pca_components)
            X = store.get_array(self.id, _PCA_ARRAY)
            if X is None or X.shape != (X_raw.shape[0], k) or X.dtype != np.float64:
                X = data.kernel_features(X_raw, bool(cfg.standardize), k, cfg.seed)
                self._cache_array(_PCA_ARRAY, X)
            self.X = np.ascontiguousarray(X)
        if cached_X is None or self.X is not cached_X:
            self._keep_later("features", features_key, self.X)
        self.n_samples = self.X.shape[0]
        self._initial_classes = list(cfg.classes)
        self._config = cfg
        self._log = LogState(cfg.classes, self.n_samples)
        self._cache: dict[str, object] = {}  # replaced, never cleared: a render may hold the old one
        self._cache_version = None  # (events in the log, learner generation) of what _cache holds
        self._generation = 0  # bumped when the learner is replaced without an event (_refitted, _rebuild)
        # the collaborators, each given the narrow state it needs (never the session)
        self.labelling = Labelling(self.n_samples, self._log, self._commit, lambda: self.learner,
                                   self.next_query, point_name=self.point_name)
        self.class_actions = ClassActions(self._log, self._config, self._commit)
        self.settings = Settings(self._config, self._log, self._commit, self._cached, lambda: self.learner,
                                 self.X, lambda name: store.get_array(self.id, name), self._cache_array_later,
                                 lambda: self._store.read_only, self._stored_config.get("auto", {}),
                                 swap=self._swap_learner, lock=self._lock,
                                 pending=lambda: self.graph_refits.pending_indices)
        self.model_choice = ModelChoice(self._config, self._log, self._commit, lambda: self.learner, self.X,
                                        lambda: self._store.read_only, lambda: self._store.events(self.id),
                                        swap=self._swap_learner, lock=self._lock,
                                        first_reason=self._stored_config.get("auto", {}).get("first model", ""))
        # a graph model's refit after a label, off the key press's request on large pools (the app)
        self.graph_refits = GraphRefits(lambda: self.learner, self._refitted, self.n_samples, lock=self._lock)
        self.views = Views(lambda: self.learner, self.dataset, self.X, self._log, self._config, self._cached,
                           self.settings, self._stored_config.get("auto", {}),
                           lambda: self._store.risks(self.id), self.next_query, cold_start=self._cold_start)
        self.map_layout = MapLayout(self._config, self.dataset, self.X, lambda name: store.get_array(self.id, name),
                                    self._cache_array, self.disk_cache, self._cache_inputs, lambda: self.closed)
        self.closed = False
        self._factor_parts: dict = {}  # a low-rank posterior's landmarks / factor (data.factor_arrays)
        self._factor_new: dict = {}  # ... as arrays to store, when built here and not yet stored
        if self._spec.has_parts and not _new:
            self._factor_parts = (self._disk_parts(self._spec)
                                  or data.load_factor_parts(lambda name: store.get_array(self.id, name), self._spec))
        if _new:  # not in the store yet: see create()
            self.learner = self._build_learner(_progress)
        else:
            self._restore(_progress, _events)
            for name, array in self._factor_new.items():
                self._cache_array(name, array)
            self._factor_new = {}

    @classmethod
    def create(cls, store_path, config: SessionConfig | None = None, progress=None) -> LabelingSession:
        """Create a new session in the store file ``store_path`` (created if missing).

        The data set is loaded, ``width="auto"`` / ``lam="auto"`` are resolved and stored as
        numbers with how they were chosen (``config["auto"]``), then the session is written.

        All or nothing: the learner is built and given the initial labels first, in memory;
        then the session's row, its PCA features, its initial labels and their estimated risk
        are written in ONE transaction (:meth:`Store.create_session`). A failure before that
        (a setting, a ``MemoryError`` for the n x n matrix) or a killed process leaves no
        session in the store; after it the session is complete.

        ``progress(message, fraction)``, if given, hears the long build steps of a low-rank
        posterior (landmarks, factor rows, kNN graph, eigenpairs); the factor's parts are
        stored with the session, so reopening does not redo them.

        Raises
        ------
        ValueError
            A setting is invalid (unknown kernel, strategy, weighting, layout, class names,
            a width or lam out of range), or the session does not fit in the available memory
            (:class:`~labeler.session.costs.MemoryBudgetError`); nothing is stored.
        """
        prep = prepare(config)
        cfg, X, initial = prep.config, prep.X, prep.initial
        store = Store(store_path)
        try:
            record = SessionRecord(new_session_id(), cfg.name, cfg.dataset, prep.stored, utc_now())
            session = cls(store, record, _dataset=prep.dataset, _X=X, _new=True, _progress=progress)
            events, risks = [], {}
            first = session.model_choice.first_switch(cfg.seed)  # model "auto": chosen from the pool
            if session.model_choice.first_reason:
                record.config.setdefault("auto", {})["first model"] = session.model_choice.first_reason
            if first is not None:  # a switch to the graph model, one action before any label
                session._give_to_learner([first])
                events = make_events([first], after=0)
                session._apply(session._log.apply(events), given=True)
            if initial is not None:  # one action, one undo step, before the first query
                accepted = make_events([Accept(i, lab, "initial") for i, lab in zip(*initial)], after=len(events))
                session._apply(session._log.apply(accepted))
                risk = float(session.learner.estimated_risk())
                risks = {ev.seq: risk for ev in accepted}
                events += accepted
            arrays = {_PCA_ARRAY: X} if cfg.pca_components is not None else {}
            if data.is_text_features(prep.dataset):
                arrays[_TEXT_ARRAY] = np.ascontiguousarray(prep.dataset.X, dtype=np.float64)
            arrays.update(session._factor_new)
            session._factor_new = {}
            store.create_session(name=record.name, dataset=record.dataset, config=record.config,
                                 session_id=record.id, created=record.created, arrays=arrays,
                                 events=events, risks=risks)
            if initial is not None:  # initial labels: the first re-tune and stopping checkpoint
                session.settings.after_labels_change(0)
            return session
        except BaseException:  # the store is closed and the error (Ctrl-C too) goes on at once
            store.close()
            raise

    @classmethod
    def open(cls, store_path, session_id: str, progress=None, *, up_to_damage: bool = False) -> LabelingSession:
        """Reopen a session: same labels, same model state, same next query.

        Opening checks the session's record, its cached arrays and the integrity chain of its
        event log (:mod:`labeler.store.chain`).

        Parameters
        ----------
        up_to_damage : bool, default False
            When the event log is damaged (:class:`~labeler.store.ChainBrokenError`), open the
            session as it was before the first damaged event, read-only (its labels can be
            viewed and exported, nothing can be changed); :attr:`damage` names the damage.

        Raises
        ------
        UnknownSessionError
            No such session in the store.
        ChainBrokenError
            An event does not match its hash (``up_to_damage=False``): the error names the
            first damaged event and carries the intact events before it.
        StoreVersionError, StoreCorruptError
            The store file is from a newer version or damaged (it is left unchanged).
        """
        store = Store(store_path)
        try:
            record = store.session(session_id)
            store.check_arrays(session_id)
            try:
                events = store.events(session_id)
            except ChainBrokenError as exc:
                if not up_to_damage:
                    raise
                store.close()
                store = Store(store_path, read_only=True)
                session = cls(store, record, _progress=progress, _events=exc.good_events)
                session.damage = exc
                return session
            return cls(store, record, _progress=progress, _events=events)
        except BaseException:  # the store is closed and the error (Ctrl-C too) goes on at once
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
        """Checkpoint and close the store connection and free the learner (idempotent; the
        session object is unusable afterwards)."""
        later_lock = getattr(self, "_later_lock", None)
        if later_lock is not None:
            with later_lock:  # from now on arrays are written in their request (or dropped)
                self._closing = True
                writers = list(self._writers)
            for worker in writers:
                worker.join()  # a cache write under way finishes (the array stays valid meanwhile)
        with self._lock:
            self.settings.cancel_retune()
            self.settings.cancel_curves()
            self.model_choice.cancel()
            self.graph_refits.drop()
            self.closed = True
            self._store.close()
            self.learner = None
            self._cache.clear()

    @property
    def read_only(self) -> bool:
        """Whether the store is read-only: the session can be viewed, not changed."""
        return self._store.read_only

    def backup(self, path) -> Path:
        """Write this session alone to ``path``: one self-contained store file (no ``-wal``),
        which ``LabelingSession.open(path, session.id)`` opens. See :meth:`Store.backup`."""
        with self._lock:
            return self._store.backup(path, session_id=self.id)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (
            f"LabelingSession(id={self.id!r}, dataset={self._config.dataset!r}, "
            f"n_labeled={self.n_labeled}, n_samples={self.n_samples})"
        )

    # ---- state -----------------------------------------------------------------------------
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
    def last_action(self) -> int:
        """Id of the action :meth:`undo` would revert (0 when there is nothing to undo).

        A page draws its Undo button with this id and passes it back as ``expected_action``,
        so a repeated press (or a second tab's undo meanwhile) cannot undo a second action.
        """
        top = self._log.last_undoable
        return 0 if top is None else int(top[0])

    @property
    def last_action_kind(self) -> str | None:
        """Kind of the action :meth:`undo` would revert ("label", "keep", ...), or None."""
        top = self._log.last_undoable
        return None if top is None else str(top[1])

    # ---- learner plumbing ------------------------------------------------------------------
    @property
    def _spec(self) -> model.ModelSpec:
        """The model settings of the current configuration."""
        return model.ModelSpec.from_config(self._config)

    def _build_learner(self, progress=None, spec=None):
        """A learner for the current settings (or ``spec``) and classes, given the net labels in labelling
        order in one block update (``ActiveRLS.add_many``). A low-rank posterior is rebuilt
        from the factor parts kept (store or memory); parts built here wait in
        ``_factor_new`` to be stored."""
        recs = list(self._log.labels.values())
        spec = self._spec if spec is None else spec
        if spec.has_parts and not self._factor_parts:  # e.g. another session on the same data made them
            self._factor_parts = self._disk_parts(spec)
        parts = dict(self._factor_parts) if spec.has_parts else None
        factor_cached = norms_cached = False
        if spec.low_rank and spec.posterior == "nystrom" and parts.get("landmarks") is not None:
            factor_key = self._nystrom_key(spec, parts["landmarks"])
            Phi = self.disk_cache.load("nystrom-factor", factor_key, dtype=np.float64)
            factor_cached = Phi is not None
            if Phi is not None:
                parts["factor"] = Phi  # the factor rows k(X, Z) T, memory-mapped: not recomputed
                # their squared norms, kept beside them (a pass over the factor saved); missing: computed
                norms = self.disk_cache.load("nystrom-norms", factor_key, shape=(Phi.shape[0],),
                                             dtype=np.float64)
                norms_cached = norms is not None
                if norms is not None:
                    parts["factor_norms"] = norms
        executor = process_executor() if spec.low_rank else None
        learner = model.build_learner(spec, self.X, self._log.classes, n_block=len(recs), parts=parts,
                                      progress=progress, executor=executor)
        if parts is not None:
            if not self._factor_parts:
                self._factor_parts = parts
                self._factor_new = data.factor_arrays(spec, parts)
            key = self._parts_key(spec)
            for name, value in self._factor_parts.items():  # (kept already: nothing written)
                self._keep_later(f"{spec.parts_name}-{name}", key, value)
        if spec.low_rank and spec.posterior == "nystrom" and not factor_cached:
            # computed here (a new width recomputes it: kept under the width's own key); written
            # by a background thread (2.4 GB at 10^6 points, rank 300), which close() waits for
            factor_key = self._nystrom_key(spec, learner.posterior.landmarks)
            self._keep_later("nystrom-factor", factor_key, learner.posterior.factor)
            self._keep_later("nystrom-norms", factor_key, learner.posterior.prior_diag())
        elif factor_cached and not norms_cached:  # a factor cached before its norms were
            self._keep_later("nystrom-norms", self._nystrom_key(spec, learner.posterior.landmarks),
                             learner.posterior.prior_diag())
        if recs:
            learner.add_many([r.index for r in recs], [r.label for r in recs])
        return learner

    def _keep_later(self, name: str, key: str, array) -> None:
        """Write ``array`` to the session cache in a background thread (``close`` waits for it)."""
        if not self.disk_cache.enabled:
            return
        def write():
            try:  # Linux: this thread alone at the lowest priority (the first query goes first)
                os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
            except (AttributeError, OSError):
                pass
            self.disk_cache.save(name, key, array, inputs=self._cache_inputs)

        worker = threading.Thread(target=write, name="labeler-cache-write", daemon=True)
        with self._later_lock:
            if self._closing:  # a cache: recomputed when needed
                return
            self._writers = [w for w in self._writers if w.is_alive()] + [worker]
            worker.start()

    def _parts_key(self, spec) -> str:
        """Cache key of the stored parts of ``spec`` (landmarks; a spectral factor; kNN neighbours)."""
        return self.disk_cache.key(what=spec.parts_name, **self._cache_inputs)

    def _nystrom_key(self, spec, landmarks) -> str:
        """Cache key of the Nystrom factor rows: the data, the landmarks' bytes, the kernel."""
        import hashlib

        Z = np.ascontiguousarray(landmarks, dtype=np.float64)
        k = spec.kernel_function()
        return self.disk_cache.key(what="nystrom-factor", landmarks=hashlib.sha256(Z.tobytes()).hexdigest(),
                                   kernel=[k.kind, repr(k.width), k.degree, k.coef0], **self._cache_inputs)

    def _disk_parts(self, spec) -> dict:
        """The parts of ``spec`` from the session cache, or {} unless all of them are there."""
        key = self._parts_key(spec)
        parts = {name: self.disk_cache.load(f"{spec.parts_name}-{name}", key) for name in spec.part_keys}
        return parts if all(v is not None for v in parts.values()) else {}

    #: The damage of the event log when the session was opened up to it (read-only), or None.
    damage: ChainBrokenError | None = None

    def _restore(self, progress=None, events=None):
        """Rebuild the session from its stored log: fold every event into the net state
        (labels, skips, classes, settings), then build the learner once with the final
        settings and add the net labels (:meth:`_build_learner`). Mathematically this is the
        live state (every live update is exact); numerically it agrees to rounding. The next
        query is the one recorded in the store for this state, so it is the same point as
        before the reload."""
        if events is None:
            events = self._store.events(self.id)
        for group in group_actions(events):
            change = self._log.apply(group)
            self._class_change_to_config(change)
            for name, value in change.settings:
                try:  # only checked values are ever stored: anything else is damage
                    value = check_setting(name, value, self._config.kernel, self._log.classes)
                except (TypeError, ValueError) as exc:
                    raise StoreCorruptError(
                        f"Session {self.id!r} in {self.store_path} holds a damaged setting at "
                        f"event {group[0].seq} ({exc}). Restore the store from a backup, or "
                        "delete this session."
                    ) from None
                setattr(self._config, name, value)
        self.learner = self._build_learner(progress)

    def _rebuild(self):
        """Replace the learner by one built from the log (after a failed write)."""
        self.graph_refits.drop()  # the learner built from the log holds every label
        self.learner = None  # one n x n matrix at a time
        self._new_generation({})
        self.learner = self._build_learner()

    def _swap_learner(self, rows, learner):
        """Write the ``setting`` rows of a background re-tune or model choice and swap in
        ``learner``, built for them (:mod:`.retune`, :mod:`.choice_job`); when the write fails
        the learner in use stays. Called
        within an action (the session's lock is held)."""
        with self._lock:
            events = self._store.append(self.id, rows, after=self._log.n_events)
            change = self._log.apply(events)
            self.graph_refits.drop()  # the learner swapped in was given every label of the log
            self.learner = learner
            self._apply(change, given=True)

    def retune_in_background(self, on: bool = True) -> None:
        """Run the automatic re-tunes of width and lam (and the rebuild they need) and the
        model choice's evaluations (``model="auto"``) in background workers instead of in the
        request that made them due (the app; see :mod:`.retune` and :mod:`.choice_job`). Off
        by default: the library and ``labeler simulate`` re-tune and compare in step, so a
        run is deterministic."""
        self.settings.background = bool(on)
        self.model_choice.background = bool(on)
        if not on:
            with self._lock:
                self.graph_refits.settle()
        self.graph_refits.background = bool(on)
        if not on:
            self.settings.cancel_retune()
            self.settings.cancel_curves()
            self.model_choice.cancel()

    def _refitted(self, learner) -> None:
        """Swap in a graph learner refitted in the background (:mod:`.graph_refit`; under the
        session's lock): what was computed from the learner it replaces goes, but the next
        query of this state (recorded in the store) stays."""
        self.learner = learner
        query = self._cache.get("next_query")
        self._new_generation({} if query is None else {"next_query": query})
        self.settings.record_stopping()  # the checkpoint of the labels this learner holds

    def _new_generation(self, kept: dict) -> None:
        """The learner was replaced without an event: a new (empty but ``kept``) view cache,
        so a page render computing from the learner replaced stores its result nowhere seen."""
        self._generation += 1
        if self._cache_version is not None:  # ``kept`` belongs to the state it was computed in
            self._cache_version = (self._cache_version[0], self._generation)
        self._cache = kept

    def _give_to_learner(self, rows):
        """Give a setting or a new class to the learner BEFORE it is written (the learner
        keeps its state when it rejects it, and the error reaches the caller with nothing
        stored). Returns how to take it back if the write then fails, or None for rows that
        are applied after the write (labels, skips, undo)."""
        kind = rows[0].kind
        if kind in ("setting", "add_class"):
            self.graph_refits.settle()  # the learner holds every label first
        if kind == "setting" and any(row.name == "model" for row in rows):  # a model choice: another learner
            return self._switch_model(next(row.value for row in rows if row.name == "model"),
                                      {row.name: row.value for row in rows if row.name != "model"})
        if kind == "setting":  # one or several settings changed together: one model.apply
            old = new = self._spec
            for row in rows:
                new = new.with_setting(row.name, row.value)
            model.apply(old, new, self.learner)
            return lambda: model.apply(new, old, self.learner)
        if kind == "add_class":
            try:
                model.add_class(self._spec, self.learner, rows[0].name)
            except Exception:  # a slow rebuild: not on Ctrl-C
                self._rebuild()  # it may hold the class without its weight
                raise
            return self._rebuild
        return None

    def _switch_model(self, name: str, settings: dict | None = None):
        """Make ``name`` the model that answers (a ``model`` setting of ``model_choice="auto"``,
        with the other ``settings`` of its action: the width and lam RLS takes over with):
        the candidate's warm learner when the model choice holds one, else one built on the
        labels. Returns how to take it back."""
        old_name, old_learner = self._config.model, self.learner
        held = self.model_choice.held_state()
        learner = self.model_choice.take(name, settings)
        if learner is None:
            learner = self._build_learner(spec=self.model_choice.target_spec(name, settings))
        self.learner = learner
        self.model_choice.keep(old_name, old_learner)

        def take_back():  # the write failed: the candidates and rls_since as before the switch
            self.model_choice.put_back(held, name, self.learner)
            self.learner = old_learner

        return take_back

    def _apply(self, change, given: bool = False):
        """Apply one action to the learner incrementally (live, and events of other tabs);
        ``given``: its setting or new class is in the learner already. Labels added to a graph
        model of a large pool go to a background refit in the app (:mod:`.graph_refit`); any
        other change first settles it."""
        if self.graph_refits.defers(change):
            self.graph_refits.add(change.added)
            return
        self.graph_refits.settle()
        learner = self.learner
        if len(change.removed) == 1:
            learner.remove(change.removed[0].index)  # exact undo (docs/algorithms.md §3)
        elif change.removed:  # an undone batch: one block downdate (or rebuild), not k passes
            learner.remove_many([r.index for r in change.removed])
        if len(change.added) == 1:
            learner.add(change.added[0].index, change.added[0].label)
        elif change.added:  # an accepted batch: one block update
            learner.add_many([r.index for r in change.added], [r.label for r in change.added])
        if change.relabeled:
            self._relabel_in_learner([after for _, after in change.relabeled])
        if change.new_class is not None and not given:
            model.add_class(self._spec, learner, change.new_class)
        if change.renamed is not None:
            learner.rename_class(*change.renamed)  # names only: the outputs stay as they are
        self._class_change_to_config(change)
        if change.deleted_class is not None or change.restored_class is not None:
            self._rebuild()  # rare: a direct solve with the new list of classes
        if change.settings and not given and any(name == "model" for name, _ in change.settings):
            self._switch_model(next(value for name, value in change.settings if name == "model"),
                               {name: value for name, value in change.settings if name != "model"})
            given = True  # another tab's model choice
        if change.settings:
            # the learner first (it keeps its old state if this raises), then the config:
            # the two never disagree
            if not given:
                new = self._spec
                for name, value in change.settings:
                    new = new.with_setting(name, value)
                model.apply(self._spec, new, learner)
            for name, value in change.settings:
                setattr(self._config, name, value)

    def _relabel_in_learner(self, records):
        """Give the learner the new labels of relabelled points: one exact relabel, or for a
        batch one block removal and one block addition (each an exact update; k single
        relabels would each reweight whole classes under "balanced" weights)."""
        learner = self.learner
        if len(records) == 1:
            learner.relabel(records[0].index, records[0].label)
            return
        idx = [r.index for r in records]
        try:
            learner.remove_many(idx)
            learner.add_many(idx, [r.label for r in records])
        except Exception:  # a slow rebuild: not on Ctrl-C (the next open rebuilds)
            self._rebuild()  # the labels are stored: the learner must hold them all or be rebuilt
            raise

    def _class_change_to_config(self, change):
        """Keep a weighting dict of the configuration in step with renamed, deleted and
        restored classes (a restored class gets its weight back)."""
        weighting = self._config.weighting
        if not isinstance(weighting, dict):
            return
        if change.renamed is not None:
            old, new = change.renamed
            weighting = {(new if c == old else c): w for c, w in weighting.items()}
        if change.deleted_class is not None:
            weighting = {c: w for c, w in weighting.items() if c != change.deleted_class}
        if change.restored_class is not None and change.class_weight is not None:
            weighting = {**weighting, change.restored_class: float(change.class_weight)}
        self._config.weighting = weighting

    def refresh(self) -> bool:
        """Apply events written by another tab or process; True if there were any."""
        with self._lock:
            new = self._store.events(self.id, after=self._log.n_events)
            for group in group_actions(new):
                self._apply(self._log.apply(group))
            return bool(new)

    def _commit(self, build):
        """Run one user action: ``build()`` validates and returns the rows to append (or None
        when there is nothing to do). A setting or new class goes to the learner first and is
        written only if the learner took it; other rows are written, then applied. Retried
        after catching up if another tab wrote first."""
        with self._lock:
            while True:
                before = len(self._log.labels)
                rows = build()
                if rows is None:
                    return None
                take_back = self._give_to_learner(rows)
                try:
                    events = self._store.append(self.id, rows, after=self._log.n_events)
                except ConcurrentUpdateError as exc:
                    if take_back is not None:
                        take_back()
                    if not self.refresh():  # the store says "newer events" but has none
                        raise StoreCorruptError(
                            f"The event log of session {self.id!r} in {self.store_path} is "
                            f"inconsistent ({exc}). Restore the store from a backup, or delete "
                            "this session."
                        ) from None
                    continue
                except BaseException as exc:
                    # the store rolled back: the learner is put back too, then the error goes
                    # on; after Ctrl-C a take-back that is a rebuild (a new class) is not
                    # started (O(n^2 |L|)): reopen the session
                    if take_back is not None and (isinstance(exc, Exception) or take_back != self._rebuild):
                        take_back()
                    raise
                change = self._log.apply(events)
                self._apply(change, given=take_back is not None)
                if not change.settings and change.new_class is None:
                    self.settings.after_labels_change(before)  # auto re-tune, stopping checkpoint
                    self.model_choice.after_labels_change(before)  # model choice by LOO (model "auto")
                given_now = change.added + [after for _, after in change.relabeled]
                if given_now and not change.kind.startswith("undo"):
                    # for the history chart; not needed to restore the state
                    risk = float(self.learner.estimated_risk())
                    try:
                        self._store.put_risks(self.id, {rec.seq: risk for rec in given_now})
                    except StoreWriteError:  # the label is stored; its risk is history only
                        pass
                return change

    def _cache_array(self, name: str, array):
        """Keep an array that is expensive to recompute (PCA features, a layout) in the store;
        on a read-only store or a full disk it is only kept in memory (recomputed next time)."""
        try:
            self._store.put_array(self.id, name, array)
        except StoreWriteError:
            pass
        except StoreError:
            if not self._store.closed:
                raise  # (a store closed meanwhile: recomputed next time)

    def _cache_array_later(self, name: str, array):
        """:meth:`_cache_array` in a background thread: the stopping checkpoints (24 MB at 10^6
        points, written every fifth label) are history that only delays a verdict, and no key
        press waits for them. The newest array of a name wins; :meth:`close` waits. Once the
        session is closing it is written in the request (the store is closed under the
        session's lock, which the request holds; after the close it is dropped)."""
        with self._later_lock:
            closing = self._closing
            if not closing:
                self._later[name] = array
                if self._later_thread is not None:  # the writer takes it before it stops
                    return
                worker = self._later_thread = threading.Thread(target=self._write_later,
                                                               name="labeler-array-write", daemon=True)
                self._writers = [w for w in self._writers if w.is_alive()] + [worker]
                worker.start()  # under the lock: close() joins every writer started before it began
        if closing:
            self._cache_array(name, array)

    def _write_later(self):
        try:  # Linux: this thread alone at the lowest priority (the key presses go first)
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
        except (AttributeError, OSError):
            pass
        try:
            while True:
                with self._later_lock:
                    if not self._later:
                        self._later_thread = None
                        return
                    name, array = self._later.popitem()
                self._cache_array(name, array)
        except BaseException:  # not written; the next array of a name starts a new writer
            with self._later_lock:
                self._later_thread = None
            raise

    def _cached(self, key, compute):
        """``compute()``, kept until the next event or learner swapped in (a render thread reads
        this without the session's lock while a refit may swap the learner: the result is
        kept only when no swap came during ``compute``, in the dict of its own state)."""
        version = (self._log.n_events, self._generation)
        cache = self._cache
        if self._cache_version != version:
            cache = {}
            self._cache_version, self._cache = version, cache
        if key in cache:
            return cache[key]
        value = compute()
        if self._cache is cache and (self._log.n_events, self._generation) == version:
            cache[key] = value  # a swap from now on replaces ``cache``: this value is never read then
        return value

    # ---- the 2-D layout (MapLayout) --------------------------------------------------------
    @property
    def layout(self) -> np.ndarray:
        """See :attr:`.layout.MapLayout.coordinates`: shape (n_samples, 2)."""
        return self.map_layout.coordinates

    @property
    def layout_pending(self) -> bool:
        """See :attr:`.layout.MapLayout.pending`."""
        return self.map_layout.pending

    @property
    def layout_method(self) -> str:
        """See :attr:`.layout.MapLayout.method`."""
        return self.map_layout.method

    def fast_layout(self) -> np.ndarray:
        """See :meth:`.layout.MapLayout.fast`."""
        return self.map_layout.fast()

    def compute_layout(self, compute=None) -> np.ndarray:
        """See :meth:`.layout.MapLayout.compute`."""
        return self.map_layout.compute(compute)

    # ---- the next query --------------------------------------------------------------------
    @property
    def scoring_note(self) -> str:
        """In words, why the next query is an approximate pick (a low-rank posterior on a large
        pool scores a subset of candidates on a subsample), or "" when it is exact."""
        return model.scoring_note(self._spec, self.n_samples, costs.dense_exact_pick_max_points())

    def _rng(self) -> np.random.Generator:
        # tie-breaking depends only on (seed, number of events): same query after reopening
        return np.random.default_rng([self._config.seed, self._log.n_events])

    def _queryable(self, i) -> bool:
        return (
            isinstance(i, numbers.Integral) and 0 <= i < self.n_samples
            and i not in self._log.labels and i not in self._log.skipped
        )

    def _cold_start(self):
        """The typicality cold start of the "auto" strategy (:mod:`core.coldstart`) for an RLS
        model or a model chosen by leave-one-out (whichever answers, as ``labeler simulate``),
        built once per pool; None while :func:`core.coldstart.cold_start_labels` of the
        session's class count is 0."""
        n = coldstart.cold_start_labels(len(self.classes))
        rls_or_auto = isinstance(self._spec, model.RlsSpec) or self._config.model_choice == "auto"
        starter = None
        if n > 0 and rls_or_auto:
            starter = getattr(self, "_starter", None)
            if starter is None or starter.n_labels != n:
                starter = self._starter = coldstart.ColdStart(self.X, n, self._config.seed)
        cover = self._cluster_cover() if rls_or_auto else None
        return starter if cover is None else coldstart.Starters(starter, cover)

    def _cluster_cover(self):
        """One label per pool cluster first (:class:`core.coldstart.ClusterCover`, as
        ``labeler simulate``) while :data:`core.coldstart.CLUSTER_COVER` is on and the pool has
        clusters (``settings.pool_clusters``); built once per pool, None otherwise."""
        if not coldstart.CLUSTER_COVER:
            return None
        cached = getattr(self, "_cover", None)
        if cached is None:
            clusters = self.settings.pool_clusters()  # None above settings' MAX_CLUSTER_POINTS:
            # the cover was chosen on pools where every point has its cluster
            score = ((lambda: strategies.scores(self.learner, "auto")) if coldstart.CLUSTER_COVER == "model"
                     else None)
            cached = self._cover = ((None,) if clusters is None else
                                    (coldstart.ClusterCover(self.X, clusters, lambda: self.labels, score=score),))
        return cached[0]

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
                # labels still being fitted in the background (large graph pools): never asked again
                exclude = np.union1d(exclude, self.graph_refits.pending_indices).astype(np.intp)
                if np.isin(self.learner.unlabeled_indices, exclude).all():
                    return None  # every point labelled or skipped
                q = strategies.query_one(self.learner, self._config.strategy, self._rng(), exclude=exclude,
                                         cold_start=self._cold_start())
                try:
                    recorded = self._store.put_query(self.id, version, int(q))
                except StoreWriteError:  # read-only store or full disk: shown, not recorded
                    return int(q)
                return recorded if self._queryable(recorded) else int(q)

            return self._cached("next_query", compute)


    # ---- classes (ClassActions) -----------------------------------------------------------
    def add_class(self, name: str):
        """See :meth:`.classes.ClassActions.add_class`."""
        return self.class_actions.add_class(name)

    def check_new_class_name(self, name) -> str:
        """See :meth:`.classes.ClassActions.check_new_class_name`."""
        return self.class_actions.check_new_class_name(name)

    def rename_class(self, old, new) -> str:
        """See :meth:`.classes.ClassActions.rename_class`."""
        return self.class_actions.rename_class(old, new)

    def delete_class(self, name) -> None:
        """See :meth:`.classes.ClassActions.delete_class`."""
        return self.class_actions.delete_class(name)

    def move_class_labels(self, old, new, expected_version=None) -> int:
        """See :meth:`.classes.ClassActions.move_class_labels`."""
        return self.class_actions.move_class_labels(old, new, expected_version)

    def unlabel_class(self, name, expected_version=None) -> int:
        """See :meth:`.classes.ClassActions.unlabel_class`."""
        return self.class_actions.unlabel_class(name, expected_version)

    # ---- labelling (Labelling) -------------------------------------------------------------
    def label(self, index, label, source: str = "queried", expected_query=None) -> bool:
        """See :meth:`.labelling.Labelling.label`."""
        return self.labelling.label(index, label, source, expected_query)

    def skip(self, index, expected_query=None) -> bool:
        """See :meth:`.labelling.Labelling.skip`."""
        return self.labelling.skip(index, expected_query)

    def unskip(self, index) -> bool:
        """See :meth:`.labelling.Labelling.unskip`."""
        return self.labelling.unskip(index)

    def relabel(self, index, label, expected_label=None) -> bool:
        """See :meth:`.labelling.Labelling.relabel`."""
        return self.labelling.relabel(index, label, expected_label)

    def keep(self, index, expected_label=None) -> bool:
        """Keep the label of a labelled point (reviewed among the suspects): one undoable
        action, stored with the point's suspicion score and suggestion now (:meth:`suspects`);
        the point leaves the suspects list until the model's view of it changes materially
        (:data:`.views.KEEP_SCORE_MARGIN`). See :meth:`.labelling.Labelling.keep`."""
        table = self.views.suspects()
        row = table[table["index"] == int(index)]
        if not len(row):  # not labelled (False) or out of range (IndexError)
            return self.labelling.keep(index, 0.0, None, expected_label)
        score = float(np.clip(row["score"].iloc[0], 0.0, 1.0))
        return self.labelling.keep(index, score, row["suggested"].iloc[0], expected_label)

    def unlabel(self, index, expected_label=None) -> bool:
        """See :meth:`.labelling.Labelling.unlabel`."""
        return self.labelling.unlabel(index, expected_label)

    def undo(self, expected_action=None) -> int | None:
        """See :meth:`.labelling.Labelling.undo`."""
        return self.labelling.undo(expected_action)

    def accept_predictions(self, indices, labels=None, expected_version=None) -> int:
        """See :meth:`.labelling.Labelling.accept_predictions`."""
        with self._lock:
            if labels is None:  # the predictions of the learner holding every label
                self.graph_refits.settle()
            return self.labelling.accept_predictions(indices, labels, expected_version)

    def label_many(self, labels, via: str, expected_version=None, guessed=()) -> int:
        """See :meth:`.labelling.Labelling.label_many`."""
        return self.labelling.label_many(labels, via, expected_version, guessed)

    def label_points(self, indices, label, via: str = "selection", expected_version=None) -> int:
        """See :meth:`.labelling.Labelling.label_points`."""
        return self.labelling.label_points(indices, label, via, expected_version)

    def point_name(self, index) -> str:
        """How the messages and the page name point ``index``: "#58", or "#58 (1058)" with the
        data's own ids, never with the label column's value
        (:func:`labeler.data.point_names.point_name`)."""
        return point_name(self.dataset, index)

    def why_not_applied(self, index, expected_query=None) -> str:
        """See :meth:`.labelling.Labelling.why_not_applied`."""
        return self.labelling.why_not_applied(index, expected_query)

    def why_not_changed(self, index, action: str, label=None, expected_label=None) -> str:
        """See :meth:`.labelling.Labelling.why_not_changed`."""
        return self.labelling.why_not_changed(index, action, label, expected_label)

    def why_not_labelled(self, indices, expected_version=None) -> str:
        """See :meth:`.labelling.Labelling.why_not_labelled`."""
        return self.labelling.why_not_labelled(indices, expected_version)

    # ---- settings (Settings) ---------------------------------------------------------------
    def set_strategy(self, name: str):
        """See :meth:`.settings.Settings.set_strategy`."""
        return self.settings.set_strategy(name)

    def set_weighting(self, weighting):
        """See :meth:`.settings.Settings.set_weighting`."""
        return self.settings.set_weighting(weighting)

    def set_lam(self, value):
        """See :meth:`.settings.Settings.set_lam`."""
        return self.settings.set_lam(value)

    def set_width(self, value):
        """See :meth:`.settings.Settings.set_width`."""
        return self.settings.set_width(value)

    @property
    def model_name(self) -> str:
        """See :attr:`.settings.Settings.model_name`."""
        return self.settings.model_name

    def model_summary(self) -> dict:
        """See :meth:`.settings.Settings.model_summary`; with ``model_choice="auto"`` its ``why``
        opens with the leave-one-out comparison (:meth:`.model_selection.ModelChoice.summary`)."""
        summary = self.settings.model_summary()
        choice = self.model_choice.summary()
        if choice is not None:
            # the text opens with "Model: <name> — " (the header's line); the sidebar's "Why:" sits
            # under the model's name already, so it gives the reason only
            why = choice["text"]
            head = f"Model: {model_words(choice['model'])}"
            if why.startswith(head):
                why = why[len(head):].strip()
                why = why[1:].strip() if why.startswith("—") else why.strip("()")
            # the reason has parentheses of its own ("waiting for 10 labels (9 so far)"), as may the
            # comparison: joined by "; ", not put in parentheses inside parentheses
            summary["why"] = why + (f"; {choice['reason']}" if choice["reason"] else "")
            summary["choice"] = choice
        return summary

    def model_choice_summary(self) -> dict | None:
        """See :meth:`.model_selection.ModelChoice.summary` (None for a session with a fixed model)."""
        return self.model_choice.summary()

    @property
    def auto_tune(self) -> dict:
        """See :attr:`.settings.Settings.auto_tune`."""
        return self.settings.auto_tune

    @property
    def refit_note(self) -> str:
        """See :attr:`.graph_refit.GraphRefits.note` (a graph model's background refit failed)."""
        return self.graph_refits.note

    @property
    def tuning_note(self) -> str:
        """See :attr:`.settings.Settings.tuning_note`."""
        return self.settings.tuning_note

    @property
    def stopping_monitor(self):
        """See :attr:`.settings.Settings.stopping_monitor`."""
        return self.settings.stopping_monitor

    # ---- read-only views (Views) ------------------------------------------------------------
    def cold_start_answering(self):
        """See :meth:`.views.Views.cold_start_answering`."""
        return self.views.cold_start_answering()

    def loo_curve(self) -> dict:
        """See :meth:`.views.Views.loo_curve`."""
        return self.views.loo_curve()

    def tuning_status(self) -> dict:
        """See :meth:`.views.Views.tuning_status`."""
        return self.views.tuning_status()

    def calibration(self):
        """See :meth:`.views.Views.calibration`."""
        return self.views.calibration()

    def pool_error_rate(self, level: float = 0.95):
        """See :meth:`.views.Views.pool_error_rate`."""
        return self.views.pool_error_rate(level)

    def error_rate_trace(self):
        """See :meth:`.views.Views.error_rate_trace`."""
        return self.views.error_rate_trace()

    def suspects(self, hide_kept: bool = False):
        """See :meth:`.views.Views.suspects`."""
        return self.views.suspects(hide_kept)

    def stopping_signal(self):
        """See :meth:`.views.Views.stopping_signal`."""
        return self.views.stopping_signal()

    def bulk_accept_risk(self, lo: float, hi: float, n_bins: int = 10) -> dict:
        """See :meth:`.views.Views.bulk_accept_risk`."""
        return self.views.bulk_accept_risk(lo, hi, n_bins)

    def explain_query(self, index: int | None = None, n_alternatives: int = 3):
        """See :meth:`.views.Views.explain_query`."""
        return self.views.explain_query(index, n_alternatives)

    def expected_risk(self) -> np.ndarray:
        """See :meth:`.views.Views.expected_risk`."""
        return self.views.expected_risk()

    def predictions(self, with_risk: bool = False):
        """See :meth:`.views.Views.predictions`."""
        return self.views.predictions(with_risk)

    def confidence_bins(self, n_bins: int = 10):
        """See :meth:`.views.Views.confidence_bins`."""
        return self.views.confidence_bins(n_bins)

    def points_in_bin(self, lo: float, hi: float) -> np.ndarray:
        """See :meth:`.views.Views.points_in_bin`."""
        return self.views.points_in_bin(lo, hi)

    def confidence(self) -> np.ndarray:
        """See :meth:`.views.Views.confidence`."""
        return self.views.confidence()

    def point_codes(self):
        """See :meth:`.views.Views.point_codes`."""
        return self.views.point_codes()

    def class_counts(self) -> dict[str, int]:
        """See :meth:`.views.Views.class_counts`."""
        return self.views.class_counts()

    @property
    def history(self):
        """See :attr:`.views.Views.history`."""
        return self.views.history

    def export_table(self, include_predictions: bool = False):
        """See :meth:`.views.Views.export_table`."""
        self._settle_for_predictions(include_predictions)
        return self.views.export_table(include_predictions)

    def export(self, path, format: str | None = None, include_predictions: bool = False) -> Path:
        """See :meth:`.views.Views.export`."""
        self._settle_for_predictions(include_predictions)
        return self.views.export(path, format, include_predictions)

    def _settle_for_predictions(self, include_predictions: bool) -> None:
        """Predictions exported are those of the learner holding every label of the log: a
        graph refit under way is waited for (:mod:`.graph_refit`)."""
        if include_predictions:
            with self._lock:
                self.graph_refits.settle()


def _changed_data_message(cfg, session_id: str, dataset, X_raw: np.ndarray, stored_fingerprint: str) -> str:
    """Why a session's data set no longer matches its stored fingerprint, in words for the user.

    One cause is named on its own: a session made with ``--missing drop`` on a table whose label
    column is partly empty, before such rows became the unlabelled pool (they were dropped
    then, they are kept now), recognised by the stored fingerprint being that of the rows with
    a label. Any other change gets the general message.
    """
    known = dataset.file_labels
    if ((cfg.dataset_options or {}).get("missing") == "drop" and known is not None
            and data.fingerprint(X_raw[known.rows]) == stored_fingerprint):
        kept = known.n_rows - len(known.rows)
        return (f"Session {session_id!r} was made with --missing drop when rows with an empty label were "
                f"dropped: {kept:,} rows of {cfg.dataset!r} have an empty label column {known.column!r}, and "
                f"rows with an empty label are now the unlabelled pool, kept, so the table gives "
                f"{known.n_rows:,} rows where the session has {len(known.rows):,}: its stored labels would "
                f"point at the wrong rows. To reopen it, give it its rows again: save the file without those "
                f"{kept:,} rows under the same name (keep the full file under another). To label them too, "
                "create a new session on the full file (its labelled rows start it).")
    return (f"The data set {cfg.dataset!r} has changed since session {session_id!r} was created "
            "(its features differ), so the stored labels would point at the wrong rows. "
            "Restore the original data or create a new session.")
