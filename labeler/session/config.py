"""What a session is made of: :class:`SessionConfig`, its defaults and the checks of settings.

Settings resolved at creation
-----------------------------
The session starts without labels, so leave-one-out cannot be used yet (:func:`prepare`):

* ``width="auto"`` (RBF): the data set's recommended width (``Dataset.params["width"]``, the
  thesis' value where it gives one) when it refers to the same scaling as the session
  (``params["standardize"]`` equals ``config.standardize``); otherwise the median pairwise
  Euclidean distance of the (standardised) pool, over a fixed subsample of at most 1000
  points (:func:`core.rls.default_widths`; sessions created before this used a subsample
  seeded with ``config.seed``, and keep the width they stored). ``set_width("auto")`` later
  chooses the width by exact LOO on the labelled points over that grid,
  ``median * 2**[-3, -2.5, ..., 2]``, at the current lam (:mod:`core.rls.tuning`).
* ``standardize="auto"``: off for an image data set (the pixels share one scale; scaling each
  pixel would inflate near-constant border pixels and warn about constant ones), for text
  features (unit-length TF-IDF vectors, :mod:`labeler.data.text`: their inner products are
  cosines) and for a table whose columns share one geometry
  (:func:`labeler.data.preprocessing.shared_scale`: pixel-like value ranges, or PCA / SVD
  components, where standardising is whitening); on otherwise. "on" / "off" are accepted
  for True / False (``--standardize``).
  With ``pca_components=k`` the kernel sees the (standardised) features projected on their k
  leading principal components, computed once and stored (bit-identical on reopening).
* ``initial_labels=m``: m points labelled with the data set's true labels (stratified, seeded),
  one "accept" action (one undo step) before the first query, stored with the source
  "initial" (a column of the events table since schema version 3) and shown and exported so
  (export origin "file"). A table whose label column is filled in some rows only
  (``Dataset.file_labels``) starts likewise from every labelled row (``initial_labels`` must
  be 0); ``config["auto"]["file_labels"]`` says "N of M rows carry a label in column C; they
  start the session". The labels are events of the store, so reopening replays them without
  the file's label column.
* ``lam="auto"``: likewise ``Dataset.params["lam"]`` when it is a number and applies, else
  :data:`DEFAULT_LAM` = 0.1 (the thesis' value for most of its experiments, docs/algorithms.md §4).
* ``auto_tune``: which of width and lam the session re-tunes by exact LOO while labels arrive
  (:func:`core.rls.tuning.auto_tune` on the schedule of :func:`core.rls.tuning.retune_due`),
  the values above being only where it starts. Default (None): the ones given as "auto".
  Every re-tune that moves a value is a ``setting`` event with the chosen number, so a
  reopened session replays it without running the tuner. Sessions stored before this field
  existed read it as None -> ``{}`` and are never re-tuned unless asked (``set_width("auto")``).

The resolved numbers and how they were chosen (``auto``) are stored with the session, so
reopening never re-resolves them. The data set options are stored with the seed filled in
(``load_dataset(..., seed=config.seed)`` unless the options name their own seed) and, for a
table, with the column roles used (guessed ones resolved: ``Dataset.load_options``, see
:mod:`labeler.data.roles`), so a session reopens with the same features even if the guess
would now choose differently; a SHA-256 of the features guards against a data file changed
under a session. Stored configs
are read with :meth:`SessionConfig.from_dict`, which ignores keys it does not know and gives
missing ones their defaults, so configs of older versions still load.

The names of strategies and weightings are core's (:data:`core.strategies.STRATEGIES`,
:data:`core.learner.WEIGHTINGS`); this module adds no list of its own.
"""

from __future__ import annotations

import numbers
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

import numpy as np

from core.learner import WEIGHTINGS
from core.learner.weighting import check_weighting as _check_weighting
from core.kernels import KERNELS, median_distance
from core.rls.tuning import DEFAULT_LAM
from core.strategies import STRATEGIES
from core.validation import LAM_RANGE, WIDTH_RANGE, check_lam, check_positive

from labeler.data.classnames import check_class_name
from labeler.errors import SettingsError
from labeler.data.preprocessing import ColumnMoments, parse_standardize, shared_scale

from . import data
from .graphs import MODELS, check_graph_strategy, check_model_settings, resolve_graph
from .costs import POSTERIORS, check_memory, choose_posterior, dense_exact_pick_max_points
from .lowrank import LANDMARKS, default_rank, scoring_note
from .spec import RlsSpec

__all__ = [
    "SessionConfig",
    "Prepared",
    "prepare",
    "DEFAULT_LAM",
    "DEFAULT_CLASSES",
    "LAYOUTS",
    "WEIGHTINGS",
    "STRATEGIES",
    "MIN_WIDTH",
    "MAX_WIDTH",
    "check_setting",
    "check_class_name",
    "check_auto_tune",
    "resolve_model",
    "resolve_posterior",
    "resolve_graph",
    "check_model_settings",
    "check_graph_strategy",
    "MODELS",
    "DEFAULTS",
]

#: The model defaults of a new session, which ``labeler simulate`` uses too (one set of
#: defaults: :func:`labeler.experiments.simulate.app_settings`). "auto" width and lam start
#: from the data (:func:`resolve_model`) and are re-tuned by LOO as labels arrive.
DEFAULTS = {"kernel": "rbf", "width": "auto", "lam": "auto", "strategy": "auto",
            "weighting": "balanced", "standardize": "auto"}

DEFAULT_CLASSES = ("negative", "positive")  # for a data set without classes (user can add more)
LAYOUTS = ("auto", "pca", "tsne", "umap", "given")
#: Above this many points a Nystrom session does not re-tune its width by default.
WIDTH_RETUNE_MAX = 200_000
#: RBF widths outside this range make ``1 / (2 s^2)`` overflow or vanish in float64.
MIN_WIDTH, MAX_WIDTH = WIDTH_RANGE
#: lam outside this range leaves no usable model in float64 (core.validation.LAM_RANGE).
MIN_LAM, MAX_LAM = LAM_RANGE


@dataclass
class SessionConfig:
    """What a session is made of.

    Parameters
    ----------
    dataset : str
        Built-in data set name or a file path (see :func:`labeler.data.load_dataset`).
    dataset_options : dict
        Keyword arguments of ``load_dataset`` (JSON-serialisable).
    kernel : {"rbf", "linear", "poly"}
    width : float > 0 or "auto"
        RBF width ``s`` in ``exp(-||x - x'||^2 / (2 s^2))``; "auto": the data set's recommended
        width or the median pairwise distance (see the module docstring).
    lam : float > 0 or "auto"
        Regularisation; "auto": the data set's recommended lam or :data:`DEFAULT_LAM`, until
        re-tuned by LOO (``set_lam("auto")``).
    strategy : {"auto", "arls", "margin", "random", "vopt", "sigmaopt"}
        Query strategy (:data:`core.strategies.STRATEGIES`; vopt and sigmaopt: graph models only); "auto" (the default) is expected
        risk until every class has a few labels, then margin (:mod:`core.criteria.auto`).
    weighting : {"none", "balanced"} or dict {class: weight}
        Class weights of the learner (:data:`core.learner.WEIGHTINGS`; "balanced" is the
        learner's ``w_y = n_L / (T n_y)``).
    standardize : bool or "auto"
        Scale every feature to mean 0, standard deviation 1 before the kernel. "auto" (the
        default): False for an image data set (``images`` or ``image_paths`` present: pixels
        share one scale, and scaling each pixel would blow up near-constant border pixels and
        warn about the constant ones), True otherwise. Resolved once at creation and stored.
    pca_components : int or None
        None (the default): the kernel sees the (standardised) features themselves. An integer
        ``k`` with ``1 <= k <= min(n_samples, n_features)``: it sees their projection on the
        ``k`` leading principal components (:func:`labeler.data.preprocessing.pca_reduce`, seeded
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
        UMAP for features of more than 3 dimensions on 5,000 to 200,000 points, else "pca"
        (:func:`labeler.data.layout.auto_layout_method`; why is stored in ``auto``). Resolved
        once at creation and stored: sessions made before keep theirs.
    seed : int
        Seed of every random choice (tie-breaking, layouts, built-in data sets).
    name : str, optional
        Display name; default "<dataset> <date>".
    classes : list of str, optional
        Class names. Default: the data set's classes, or :data:`DEFAULT_CLASSES` if it has
        none. More can be added while labelling (``LabelingSession.add_class``).
    auto_tune : dict {"width": bool, "lam": bool}, optional
        Which values are re-tuned by LOO as labels arrive (see the module docstring). Default:
        those given as "auto" (the width only with the rbf kernel). Stored resolved.
    posterior : {"auto", "dense", "nystrom", "spectral"}
        The learner's posterior (:mod:`labeler.session.model`): the exact n x n one, or a
        low-rank one for large pools. "auto" (the default): dense while it needs under half of
        the available memory, else nystrom (said in ``config["auto"]["posterior"]``). Stored
        resolved; sessions stored before this field reopen as "dense".
    rank : int, optional
        Nystrom landmarks or Laplacian eigenpairs; default 300 / 100. Stored resolved.
    landmarks : {"uniform", "kmeans"}
        How Nystrom landmarks are chosen.
    knn : int
        Neighbours of the kNN graph (the spectral posterior's, and a graph model's).
    model : {"rls", "harmonic", "lgc", "poisson"}
        The learner: kernel RLS (the default; sessions stored before this field reopen as
        "rls"), or a graph model on the ``knn``-NN graph of the pool (issue 10 §2;
        :class:`core.graph.active.GraphLearner`: the harmonic function, or local and global
        consistency; issue 20 §3: Poisson learning, :class:`core.graph.poisson_learner.
        PoissonLearner`). A graph model has no kernel, width, lam, class weights or posterior:
        giving one is refused (:func:`check_model_settings`), and they are stored as None /
        "graph". Its "auto" strategy is Zhu et al.'s expected risk for the first 10 labels
        then margin (harmonic, up to :data:`~labeler.session.graphs.ZHU_SESSION_MAX` points),
        else VOpt for the first 10 labels then margin (:func:`core.strategies.cold_strategy`;
        why in ``auto``). Every graph model also runs "vopt" and "sigmaopt".
    alpha : float
        LGC's propagation weight in (0, 1) (default 0.99); only with model "lgc".
    class_mass : bool
        Class mass normalisation of a graph model's outputs (seed 003 eq. 2.7).
    model_choice : {"fixed", "auto"}
        "auto" (given as ``model="auto"``: stored with "rls" and its settings; the first model
        is chosen from the pool at creation, a switch to a graph model a ``setting`` event): the
        model that answers is chosen by exact leave-one-out among RLS and the graph models as
        labels arrive, each switch a ``setting`` event of ``model``
        (:mod:`labeler.session.model_selection`).
    """

    dataset: str = "moons"
    dataset_options: dict = field(default_factory=dict)
    kernel: str = DEFAULTS["kernel"]
    width: float | str = DEFAULTS["width"]
    lam: float | str = DEFAULTS["lam"]
    strategy: str = DEFAULTS["strategy"]
    weighting: str | dict = DEFAULTS["weighting"]
    standardize: bool | str = DEFAULTS["standardize"]
    layout: str = "auto"
    seed: int = 0
    name: str | None = None
    classes: list | None = None
    pca_components: int | None = None
    initial_labels: int = 0
    auto_tune: dict | None = None
    posterior: str = "auto"
    rank: int | None = None
    landmarks: str = "uniform"
    knn: int = 10
    model: str = "rls"
    alpha: float = 0.99
    class_mass: bool = False
    model_choice: str = "fixed"

    def to_dict(self) -> dict:
        """JSON-serialisable dict of the fields."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> SessionConfig:
        """Inverse of :meth:`to_dict` (unknown keys are ignored, missing ones get defaults)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


# --------------------------------------------------------------------------------------------
# Checks of single settings: each returns the normalised value or raises SettingsError (a ValueError)
# --------------------------------------------------------------------------------------------


def _check_choice(name: str, value, choices) -> str:
    if not isinstance(value, str) or value not in choices:
        raise SettingsError(f"Unknown {name} {value!r}; choose one of {', '.join(choices)}.")
    return value


def check_weighting(weighting, classes):
    """``"none"``, ``"balanced"`` or a dict giving every class of ``classes`` a weight > 0 (keys
    as stored: str): :func:`core.learner.weighting.check_weighting` with ``every_class``; a bad
    value is the user's (:class:`SettingsError`)."""
    if isinstance(weighting, dict):
        weighting = {str(k): v for k, v in weighting.items()}
    try:
        return _check_weighting(weighting, classes, every_class=True)
    except ValueError as exc:
        raise SettingsError(str(exc)) from None


def check_width(value) -> float:
    """An RBF width: a finite number in ``[MIN_WIDTH, MAX_WIDTH]``."""
    value = check_positive("width", value)
    if not MIN_WIDTH <= value <= MAX_WIDTH:
        raise SettingsError(
            f"width must be between {MIN_WIDTH:g} and {MAX_WIDTH:g}; got {value:g}, for which the "
            "kernel exp(-d^2 / (2 width^2)) cannot be computed in floating point. Use a width "
            "of the order of the distances between the points, or 'auto'."
        )
    return value


def check_setting(name: str, value, kernel: str, classes):
    """A value for ``LabelingSession.set_<name>`` (numbers, not "auto"), normalised.

    Raises
    ------
    labeler.errors.SettingsError
        Unknown setting, or a value outside its range.
    """
    if name == "strategy":
        return _check_choice("strategy", value, STRATEGIES)
    if name == "weighting":
        return check_weighting(value, classes)
    if name == "lam":
        return check_lam(value)
    if name == "width":
        if kernel != "rbf":
            raise SettingsError(f"The width only applies to the rbf kernel; this session uses {kernel!r}.")
        return check_width(value)
    if name == "auto_tune":
        return check_auto_tune(value)
    if name == "model":  # a switch of model_choice "auto" (labeler/session/model_selection.py)
        return _check_choice("model", value, MODELS)
    raise SettingsError(f"Unknown setting {name!r}; settings are strategy, weighting, lam, width, auto_tune and "
                        "model.")


def check_auto_tune(value) -> dict:
    """``{"width": bool, "lam": bool}`` (missing keys are False)."""
    if not isinstance(value, dict) or set(value) - {"width", "lam"} \
            or not all(isinstance(v, (bool, np.bool_)) for v in value.values()):
        raise SettingsError(
            f"auto_tune must be a dict {{'width': True/False, 'lam': True/False}}; got {value!r}."
        )
    return {"width": bool(value.get("width", False)), "lam": bool(value.get("lam", False))}


def _check_count(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise SettingsError(f"{name} must be an integer >= {minimum}; got {value!r}.")
    return int(value)


def _check_pca_components(k, shape) -> int | None:
    """``None`` or an int in ``[1, min(n_samples, n_features)]`` (a clear error otherwise)."""
    if k is None:
        return None
    n, d = shape
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= min(n, d):
        raise SettingsError(
            f"pca_components must be None (raw features) or an integer between 1 and "
            f"min(n_samples, n_features) = min({n}, {d}) = {min(n, d)}; got {k!r}. Choose a "
            "value in that range, or None (0 in the app) to use the features as they are."
        )
    return int(k)


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and np.isfinite(v) and v > 0


# --------------------------------------------------------------------------------------------
# Creation: check, load, resolve
# --------------------------------------------------------------------------------------------


@dataclass
class Prepared:
    """A new session before it is stored: see :func:`prepare`."""

    config: SessionConfig  # every "auto" resolved
    stored: dict  # the config dict to store (with "auto", "n_samples", "fingerprint")
    dataset: object
    X: np.ndarray  # the features the kernel sees
    initial: tuple | None  # (indices, labels) to label at creation


def _check_new(config: SessionConfig | None) -> SessionConfig:
    """The settings that need no data, checked (a copy)."""
    cfg = SessionConfig.from_dict((config or SessionConfig()).to_dict())
    _check_choice("kernel", cfg.kernel, KERNELS)
    _check_choice("strategy", cfg.strategy, STRATEGIES)
    _check_choice("layout", cfg.layout, LAYOUTS)
    if isinstance(cfg.seed, bool) or not isinstance(cfg.seed, numbers.Integral) or cfg.seed < 0:
        raise SettingsError(f"seed must be a non-negative integer; got {cfg.seed!r}.")
    cfg.seed = int(cfg.seed)
    if not isinstance(cfg.dataset_options, dict):
        raise SettingsError(f"dataset_options must be a dict; got {cfg.dataset_options!r}.")
    cfg.dataset_options = {"seed": cfg.seed, **cfg.dataset_options}  # stored: exact reload
    if not (isinstance(cfg.standardize, (bool, np.bool_)) or cfg.standardize == "auto"):
        try:
            cfg.standardize = parse_standardize(cfg.standardize)  # "on" / "off", else a clear error
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
    if cfg.pca_components is not None:
        _check_count("pca_components", cfg.pca_components, 1)
    cfg.initial_labels = _check_count("initial_labels", cfg.initial_labels, 0)
    _check_choice("model_choice", cfg.model_choice, ("fixed", "auto"))
    if cfg.model == "auto":  # chosen by LOO as labels arrive; stored with RLS's settings (the
        # session's ModelChoice.first_switch may start it on a graph model, as one setting event)
        cfg.model, cfg.model_choice = "rls", "auto"
    check_model_settings(cfg)
    path = Path(str(cfg.dataset)).expanduser()
    if path.exists():
        cfg.dataset = str(path.resolve())  # reopen from any working directory
    return cfg


def prepare(config: SessionConfig | None) -> Prepared:
    """Check a new session's settings, load its data set and resolve every "auto" setting.

    Raises
    ------
    labeler.errors.SettingsError
        A setting is invalid (unknown kernel, strategy, weighting, layout, class names,
        counts) or does not fit the data set. (A lam or width out of range raises core's
        ``ValueError``; the data set's own errors are :class:`~labeler.data.DatasetError`.)
    MemoryBudgetError
        (a ValueError) The session would not fit in the available memory
        (:func:`~labeler.session.costs.check_memory`).
    """
    cfg = _check_new(config)
    dataset = data.load(cfg.dataset, cfg.dataset_options)
    X_raw = np.ascontiguousarray(dataset.X, dtype=np.float64)
    layout_note = None
    if cfg.layout == "auto":  # the data set's own, else UMAP where it pays, else PCA
        cfg.layout, layout_note = data.auto_layout(dataset, X_raw.shape)
    if cfg.layout == "given" and getattr(dataset, "layout", None) is None:
        raise SettingsError(f"Data set {cfg.dataset!r} has no given layout; use layout='pca' or 'tsne'.")

    if cfg.classes is None:
        ds_classes = [str(c) for c in (getattr(dataset, "classes", None) or [])]
        cfg.classes = ds_classes if len(ds_classes) >= 2 else list(DEFAULT_CLASSES)
    else:
        names: list[str] = []
        for c in list(cfg.classes):
            names.append(check_class_name(c, names))
        if len(names) < 2:
            raise SettingsError(f"Give at least two class names; got {names}.")
        cfg.classes = names
    cfg.weighting = check_weighting(cfg.weighting, cfg.classes)

    initial = None
    file_labels = getattr(dataset, "file_labels", None)
    if file_labels is not None:  # a partly filled label column: its labels start the session
        initial = _file_initial(file_labels, cfg)
    elif cfg.initial_labels > 0:
        if getattr(dataset, "y", None) is None:
            raise SettingsError(
                f"initial_labels={cfg.initial_labels} needs the data set's true labels, but "
                f"{cfg.dataset!r} has none (give a label column, or an image folder with one "
                "subfolder per class), or set initial_labels=0."
            )
        initial = data.initial_choice(dataset.y, cfg.classes, cfg.initial_labels, cfg.seed)
    n_initial = 0 if initial is None else len(initial[0])

    # the learner must fit before anything is computed for it
    n_kernel_features = X_raw.shape[1] if cfg.pca_components is None else int(cfg.pca_components)
    if cfg.model == "rls":
        posterior_note = resolve_posterior(cfg, X_raw.shape[0], n_kernel_features, n_labels=n_initial)
    else:
        posterior_note = resolve_graph(cfg, X_raw.shape[0])
        check_memory(X_raw.shape[0], n_kernel_features, len(cfg.classes), n_initial, posterior="graph",
                     knn=cfg.knn)

    # the roles and text settings used, resolved: reopening loads exactly this data set
    cfg.dataset_options = data.stored_options(cfg.dataset_options, dataset)
    X, auto = resolve_model(cfg, dataset, X_raw)
    if layout_note:
        auto["layout"] = layout_note
    auto.update(posterior_note)
    if file_labels is not None:
        auto["file_labels"] = file_labels.summary()
    if cfg.name is None:
        cfg.name = f"{getattr(dataset, 'name', None) or Path(cfg.dataset).name}"
    if not isinstance(cfg.name, str) or not cfg.name.strip():
        raise SettingsError(f"Session name must be a non-empty string; got {cfg.name!r}.")

    stored = cfg.to_dict()
    stored.update(auto=auto, n_samples=int(X.shape[0]), fingerprint=data.fingerprint_of(dataset, X_raw))
    return Prepared(cfg, stored, dataset, X, initial)


def _file_initial(file_labels, cfg: SessionConfig) -> tuple[list[int], list[str]]:
    """The initial labels of a partly filled label column (:class:`labeler.data.dataset.FileLabels`):
    every labelled row, with its label, written as one action ("initial") at creation, so the
    store replays them without the file's label column."""
    if cfg.initial_labels > 0:
        raise SettingsError(
            f"initial_labels={cfg.initial_labels} draws labels from a fully labelled data set, but "
            f"{file_labels.summary()}. Set initial_labels=0 (--initial 0): those labels are the initial ones."
        )
    labels = [str(v) for v in np.asarray(file_labels.labels).tolist()]
    unknown = sorted(set(labels) - set(cfg.classes))
    if unknown:
        raise SettingsError(
            f"Label column {file_labels.column!r} has the label(s) {unknown[:5]}, not among the session's "
            f"classes {cfg.classes}; add them to the classes, or leave classes unset (the column's own)."
        )
    return [int(i) for i in np.asarray(file_labels.rows).tolist()], labels


def resolve_posterior(cfg: SessionConfig, n_samples: int, n_features: int, available: int | None = None,
                      n_labels: int | None = None) -> dict:
    """Check and resolve ``posterior``, ``rank``, ``landmarks``, ``knn`` of ``cfg`` in place, and
    check that the learner fits in memory (before anything is built).

    Returns
    -------
    dict
        Notes for ``config["auto"]``: ``"posterior"`` when "auto" chose, ``"scoring"`` when the
        next query will be an approximate pick (:func:`~labeler.session.lowrank.scoring_note`).

    Raises
    ------
    labeler.errors.SettingsError
        An unknown posterior or landmark method, a rank or k out of range.
    MemoryBudgetError
        (a ValueError) It does not fit; for a dense posterior the message names
        ``--posterior nystrom``.
    """
    n = int(n_samples)
    _check_choice("posterior", cfg.posterior, POSTERIORS)
    _check_choice("landmarks", cfg.landmarks, LANDMARKS)
    cfg.knn = _check_count("knn", cfg.knn, 1)
    if cfg.rank is not None:
        cfg.rank = _check_count("rank", cfg.rank, 1)
    n_classes = len(cfg.classes or DEFAULT_CLASSES)
    n_labels = cfg.initial_labels if n_labels is None else int(n_labels)
    cfg.posterior, note = choose_posterior(cfg.posterior, n, n_features, n_classes, n_labels,
                                           available=available)
    notes = {"posterior": note} if note else {}
    if cfg.posterior == "dense":
        cfg.rank = None
    else:
        limit = n if cfg.posterior == "nystrom" else n - 1
        if cfg.rank is None:
            cfg.rank = default_rank(cfg.posterior, n)
        if not 1 <= cfg.rank <= limit:
            raise SettingsError(f"rank must be between 1 and {limit} for a {cfg.posterior} posterior on {n:,} "
                             f"points; got {cfg.rank}. Choose a smaller --rank.")
        if cfg.posterior == "spectral" and not cfg.knn < n:
            raise SettingsError(f"knn must be below the pool size {n:,}; got {cfg.knn}.")
    check_memory(n, n_features, n_classes, n_labels, available=available,
                 posterior=cfg.posterior, rank=cfg.rank, knn=cfg.knn)
    spec = RlsSpec(strategy=cfg.strategy, posterior=cfg.posterior, rank=cfg.rank)
    scoring = scoring_note(spec, n, dense_exact_pick_max_points())
    if scoring:
        notes["scoring"] = scoring
    return notes


def resolve_model(cfg: SessionConfig, dataset, X_raw: np.ndarray) -> tuple[np.ndarray, dict]:
    """Resolve the model settings of ``cfg`` in place, from the data (no labels exist yet).

    ``standardize``, ``pca_components``, ``auto_tune``, ``width`` and ``lam`` (see the module
    docstring); shared by :func:`prepare` and ``labeler simulate``
    (:func:`labeler.experiments.simulate.app_settings`), so both start from the same model.

    Returns
    -------
    X : ndarray of shape (n_samples, n_kernel_features)
        The features the kernel sees.
    auto : dict
        How each "auto" value was resolved, in words.
    """
    auto = {}
    moments = ColumnMoments(X_raw)  # computed when first needed, shared by the test and the scaling
    cfg.standardize = parse_standardize(cfg.standardize)  # "on" / "off" -> bool; "auto" stays
    if isinstance(cfg.standardize, str):  # "auto"
        image, text = data.is_image_data(dataset), data.is_text_features(dataset)
        shared = None if (image or text) else shared_scale(X_raw, moments=moments)
        cfg.standardize = not (image or text or shared)
        auto["standardize"] = (
            "off for image data (pixels share one scale)" if image
            else "off for text features (unit-length TF-IDF vectors: cosine geometry)" if text
            else f"off: {shared}" if shared
            else "on (columns on different scales)"
        )
    cfg.standardize = bool(cfg.standardize)
    cfg.pca_components = _check_pca_components(cfg.pca_components, X_raw.shape)
    X = data.kernel_features(X_raw, cfg.standardize, cfg.pca_components, cfg.seed, moments=moments)
    if getattr(cfg, "model", "rls") != "rls":  # the graph is built on X; no width or lam (resolve_graph)
        return X, auto
    params = dict(getattr(dataset, "params", None) or {})
    # the data set's recommended values hold for its own scaling only
    use_params = (
        bool(params.get("standardize", False)) == cfg.standardize and cfg.kernel == "rbf"
        and cfg.pca_components is None
    )
    if cfg.auto_tune is None:
        cfg.auto_tune = {"width": cfg.kernel == "rbf" and cfg.width == "auto", "lam": cfg.lam == "auto"}
        if cfg.auto_tune["width"] and cfg.posterior == "nystrom" and X_raw.shape[0] > WIDTH_RETUNE_MAX:
            # every new width recomputes the n x r factor (about 15 s at 10^6 points)
            cfg.auto_tune["width"] = False
            auto["width re-tune"] = (f"off above {WIDTH_RETUNE_MAX:,} points with a low-rank posterior "
                                     "(each new width rebuilds the factor); set a width to change it")
    cfg.auto_tune = check_auto_tune(cfg.auto_tune)
    if cfg.posterior == "spectral":  # the graph kernel has no width
        cfg.auto_tune["width"] = False
    if cfg.kernel != "rbf":
        cfg.width = None
        cfg.auto_tune["width"] = False
    elif cfg.width == "auto":
        if use_params and _is_number(params.get("width")):
            cfg.width = check_width(float(params["width"]))
            auto["width"] = "data set recommendation"
        else:
            try:
                cfg.width = median_distance(X)
            except ValueError:  # identical points: the user's data, not a bug
                raise SettingsError(
                    "Cannot choose the RBF width automatically: the median distance between the "
                    "points is 0 (duplicated or constant points). Pass width=<number> in "
                    "SessionConfig (--width W)."
                ) from None
            auto["width"] = "median pairwise distance"
    else:
        cfg.width = check_width(cfg.width)
    if cfg.lam == "auto":
        if use_params and _is_number(params.get("lam")):
            cfg.lam = check_lam(float(params["lam"]))
            auto["lam"] = "data set recommendation"
        else:
            cfg.lam = DEFAULT_LAM
            auto["lam"] = f"default {DEFAULT_LAM}"
    else:
        cfg.lam = check_lam(cfg.lam)
    return X, auto
