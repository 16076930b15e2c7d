"""The settings that define a session's learner: a tagged union of an RLS spec and a graph spec.

A session's model is kernel RLS (:class:`RlsSpec`: kernel, width, lam, class weights, posterior)
or a graph model on the kNN graph of the pool (:class:`GraphSpec`: harmonic function or LGC,
``alpha``, class mass normalisation). Each holds only the settings its model has, so no
setting stands in for "does not apply" (no NaN lam, no "graph" posterior). Both are frozen
(hashable) and share the query strategy, the seed and the graph's ``knn``.

:func:`spec_from_config` reads the spec of a stored configuration; :meth:`ModelSpec.params_to`
says which learner parameters (:meth:`core.learner.base.Learner.set_params`) take the learner
from one spec to another; :mod:`labeler.session.model` builds the learner of a spec.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.kernels import Kernel

from .lowrank import DEFAULT_KNN

__all__ = ["ModelSpec", "RlsSpec", "GraphSpec", "spec_from_config"]

#: The settings a session changes while labelling (``with_setting``).
_SETTINGS = ("width", "lam", "weighting", "strategy")


@dataclass(frozen=True)
class ModelSpec:
    """What every model's spec has: the query strategy, the seed, the kNN graph's ``knn``.

    Parameters
    ----------
    strategy : {"auto", "arls", "margin", "random", "vopt", "sigmaopt"}
        Query strategy (:mod:`core.strategies`); no part of the learner itself.
    seed : int
        The learner's ``random_state`` (and the seed of landmarks, graphs, eigenpairs).
    knn : int
        Neighbours of the kNN graph (graph models, spectral posterior).
    """

    strategy: str = "arls"
    seed: int = 0
    knn: int = DEFAULT_KNN

    #: "rls", "harmonic", "lgc" or "poisson" (the tag of the union).
    model = "rls"

    @staticmethod
    def from_config(config) -> RlsSpec | GraphSpec:
        """:func:`spec_from_config`."""
        return spec_from_config(config)

    @property
    def has_parts(self) -> bool:
        """Whether building the learner makes parts worth storing (a factor, a kNN graph)."""
        raise NotImplementedError

    @property
    def low_rank(self) -> bool:
        """A low-rank posterior (built and scored in blocks, possibly on an executor)."""
        return False

    @property
    def parts_name(self) -> str:
        """Store name prefix of those parts: everything they depend on, so that no part is read
        for other settings."""
        raise NotImplementedError

    @property
    def part_keys(self) -> tuple:
        """The names of the parts (:func:`labeler.session.data.load_factor_parts`)."""
        raise NotImplementedError

    def with_setting(self, name: str, value) -> ModelSpec:
        """A copy with one setting changed ("width", "lam", "weighting" or "strategy");
        ``"auto_tune"`` (which values the session re-tunes) leaves the model as it is.

        Raises
        ------
        ValueError
            An unknown setting, or one this model does not have.
        """
        if name == "auto_tune":
            return self
        if name not in _SETTINGS:
            raise ValueError(f"Unknown setting {name!r}; settings are {', '.join(_SETTINGS)}.")
        if name == "strategy":
            return replace(self, strategy=value)
        return self._with_model_setting(name, value)

    def _with_model_setting(self, name: str, value) -> ModelSpec:
        raise ValueError(f"{name} does not apply to the {self.model} model.")

    def params_to(self, new: ModelSpec, classes) -> dict:
        """The learner parameters (``set_params``) that take a learner of ``self`` to ``new``.

        Raises
        ------
        ValueError
            A change no learner parameter makes (another kernel family, another model kind).
        """
        raise NotImplementedError


@dataclass(frozen=True)
class RlsSpec(ModelSpec):
    """Kernel RLS (:class:`core.learner.ActiveRLS`).

    Parameters
    ----------
    kernel : {"rbf", "linear", "poly"}
    width : float or None
        RBF width ``s`` in ``exp(-||x - x'||^2 / (2 s^2))``; None for other kernels.
    lam : float
        Regularisation ``lam > 0``.
    weighting : "none", "balanced" or tuple of (class, weight) pairs
        Class weighting; a dict of the configuration is kept as sorted pairs (hashable).
    posterior : {"dense", "nystrom", "spectral"}
        The exact n x n posterior, or a low-rank one on a factor ``K ~ Phi Phi^T``
        (docs/algorithms.md §8): Nystrom landmarks of the kernel, or the spectral graph kernel of
        a kNN graph (§9, Gaussian field transform; the RBF width plays no part in it).
    rank : int or None
        Landmarks (nystrom) or Laplacian eigenpairs (spectral); None: the default rank.
    landmarks : {"uniform", "kmeans"}
        How Nystrom landmarks are chosen.
    """

    kernel: str = "rbf"
    width: float | None = None
    lam: float = 0.1
    weighting: str | tuple = "balanced"
    posterior: str = "dense"
    rank: int | None = None
    landmarks: str = "uniform"

    @property
    def has_parts(self) -> bool:
        return self.posterior != "dense"

    @property
    def low_rank(self) -> bool:
        return self.posterior != "dense"

    @property
    def parts_name(self) -> str:
        if self.posterior == "nystrom":
            return f"factor-nystrom-{self.landmarks}-r{self.rank}-s{self.seed}"
        return f"factor-spectral-k{self.knn}-r{self.rank}-s{self.seed}"

    @property
    def part_keys(self) -> tuple:
        return ("landmarks",) if self.posterior == "nystrom" else ("factor", "eigenvalues")

    def _with_model_setting(self, name: str, value) -> RlsSpec:
        if name == "weighting" and isinstance(value, dict):
            value = tuple(sorted((str(k), float(v)) for k, v in value.items()))
        elif name in ("width", "lam"):
            value = float(value)
        return replace(self, **{name: value})

    def kernel_function(self) -> Kernel:
        """The :class:`core.kernels.Kernel` of this spec."""
        if self.kernel == "rbf":
            return Kernel("rbf", width=float(self.width))
        return Kernel(self.kernel)

    def learner_weighting(self, classes) -> str | dict:
        """The weighting as ``ActiveRLS`` takes it: a dict names every class of ``classes``
        (a class added after the weights were set weighs 1)."""
        if isinstance(self.weighting, tuple):
            given = dict(self.weighting)
            return {c: float(given.get(c, 1.0)) for c in classes}
        return self.weighting

    def params_to(self, new: ModelSpec, classes) -> dict:
        if not isinstance(new, RlsSpec):
            raise ValueError(f"The model of a session cannot change (rls -> {new.model}); create a new session.")
        if new.kernel != self.kernel:
            raise ValueError(
                f"The kernel of a session cannot change ({self.kernel!r} -> {new.kernel!r}); create a "
                "new session with the other kernel."
            )
        params = {}
        if new.weighting != self.weighting:
            params["weighting"] = new.learner_weighting(classes)
        if new.lam != self.lam:
            params["lam"] = new.lam
        if new.width != self.width:  # C refilled in place (nystrom: Phi recomputed from the landmarks)
            params["kernel"] = new.kernel_function()
        return params


@dataclass(frozen=True)
class GraphSpec(ModelSpec):
    """A graph model on the ``knn``-NN graph of the pool (:class:`core.graph.active.GraphLearner`,
    :class:`core.graph.poisson_learner.PoissonLearner`).

    Parameters
    ----------
    model : {"harmonic", "lgc", "poisson"}
    alpha : float
        LGC propagation weight.
    class_mass : bool
        Class mass normalisation of the outputs (seed 003 eq. 2.7).
    """

    model: str = "harmonic"
    alpha: float = 0.99
    class_mass: bool = False

    @property
    def has_parts(self) -> bool:
        return True  # the kNN neighbours (model.build_graph)

    @property
    def parts_name(self) -> str:
        return f"graph-knn-k{self.knn}-s{self.seed}"

    @property
    def part_keys(self) -> tuple:
        return ("neighbours", "distances")

    def params_to(self, new: ModelSpec, classes) -> dict:
        if not isinstance(new, GraphSpec):
            raise ValueError(f"The model of a session cannot change ({self.model} -> {new.model}); create a "
                             "new session.")
        if (new.model == "poisson") != (self.model == "poisson"):
            raise ValueError(f"The model of a session cannot change ({self.model} -> {new.model}); create a "
                             "new session.")
        names = ("class_mass",) if new.model == "poisson" else ("model", "alpha", "class_mass")
        return {name: getattr(new, name) for name in names if getattr(new, name) != getattr(self, name)}


def spec_from_config(config) -> RlsSpec | GraphSpec:
    """The spec of a resolved :class:`~labeler.session.config.SessionConfig` (numbers, not
    "auto"); stored sessions of older versions have no model: rls."""
    knn = int(getattr(config, "knn", None) or DEFAULT_KNN)
    model = str(getattr(config, "model", None) or "rls")
    if model != "rls":
        return GraphSpec(strategy=config.strategy, seed=int(config.seed), knn=knn, model=model,
                         alpha=float(getattr(config, "alpha", 0.99)),
                         class_mass=bool(getattr(config, "class_mass", False)))
    posterior = getattr(config, "posterior", "dense")
    rank = getattr(config, "rank", None)
    spec = RlsSpec(kernel=config.kernel, seed=int(config.seed), strategy=config.strategy, lam=float(config.lam),
                   posterior="dense" if posterior in (None, "auto") else str(posterior),
                   rank=None if rank is None else int(rank),
                   landmarks=str(getattr(config, "landmarks", None) or "uniform"), knn=knn)
    spec = spec.with_setting("weighting", config.weighting)
    return spec.with_setting("width", config.width) if config.kernel == "rbf" else spec
