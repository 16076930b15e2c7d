"""A labelling session: configuration, model factory, event-logged state and read-only views.

=====================  ==========================================================================
:mod:`.config`         :class:`SessionConfig`, defaults, checks of settings, creation-time resolving
:mod:`.data`           the data set, the features the kernel sees, initial labels, 2-D layout
:mod:`.spec`           the model's settings: :class:`RlsSpec` | :class:`GraphSpec` (a tagged union)
:mod:`.model`          the only builder of the learner (the one place that tells models apart); LOO tuning
:mod:`.costs`          a session's memory and dense step's time before it is allocated; the posterior of "auto"
:mod:`.graphs`         the graph models (harmonic, lgc): checks, resolving, the stored kNN graph
:mod:`.session`        :class:`LabelingSession`: create, open, event log (commit, refresh), next query;
                       owns the collaborators below and delegates its public methods to them
:mod:`.labelling`      :class:`Labelling` (``session.labelling``): label, skip, undo, accept predictions
:mod:`.classes`        :class:`ClassActions` (``session.class_actions``): add, rename, delete a class
:mod:`.settings`       :class:`Settings` (``session.settings``): setters, re-tuning, stopping checkpoints
:mod:`.views`          :class:`Views` (``session.views``): prediction and history tables, bins, export
:mod:`.layout`         :class:`MapLayout` (``session.map_layout``): the map's 2-D coordinates, slow ones computed aside
=====================  ==========================================================================
"""

from core.learner import WEIGHTINGS
from core.strategies import STRATEGIES

from ..store import SessionInfo, UnknownSessionError
from .config import DEFAULT_CLASSES, DEFAULT_LAM, LAYOUTS, SessionConfig
from .costs import MemoryBudgetError
from .spec import GraphSpec, ModelSpec, RlsSpec
from .session import LabelingSession
from .views import INITIAL_SOURCE

__all__ = [
    "LabelingSession",
    "SessionConfig",
    "SessionInfo",
    "ModelSpec",
    "RlsSpec",
    "GraphSpec",
    "MemoryBudgetError",
    "DEFAULT_LAM",
    "DEFAULT_CLASSES",
    "WEIGHTINGS",
    "STRATEGIES",
    "LAYOUTS",
    "INITIAL_SOURCE",
    "UnknownSessionError",
]
