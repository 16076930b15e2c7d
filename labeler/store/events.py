"""Typed constructors of the events a user action writes: one small frozen class per kind.

Callers build these instead of ``{"kind": ...}`` dicts; :meth:`labeler.store.Store.append`
(and :func:`labeler.store.make_events`) turn them into stored :class:`~labeler.store.Event`
rows. Each class knows its kind and how its fields map to the stored columns (``idx``,
``label``, ``source``, ``value``), so the JSON payloads (``{"from": ...}``, ``{"undoes": ...}``,
``{"name": ..., "value": ...}``) are written in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

__all__ = ["NewEvent", "Label", "Accept", "Skip", "Unskip", "Relabel", "Unlabel", "Undo",
           "AddClass", "RenameClass", "DeleteClass", "Setting", "Keep", "LABEL_EVENT_SOURCES",
           "ACCEPT_EVENT_SOURCES", "GUESS_SOURCES"]

#: The sources a ``label`` event takes (one point the user labelled).
LABEL_EVENT_SOURCES = ("queried", "chosen", "accepted")
#: The sources an ``accept`` event takes (points labelled many at once).
ACCEPT_EVENT_SOURCES = ("accepted", "initial", "selection", "similar", "batch", "batch_guess",
                        "similar_guess")
#: The sources of labels that only repeat the model's guess: predictions accepted, and picks of
#: a batch or "more like this" grid left on the guess the picker started on.
GUESS_SOURCES = ("accepted", "batch_guess", "similar_guess")


def _check_source(kind: str, source, allowed):
    if source not in allowed:
        raise ValueError(f"A {kind} event's source must be one of {', '.join(allowed)}; got {source!r}.")


class NewEvent:
    """Base of the event constructors: ``kind`` and :meth:`columns`."""

    kind: ClassVar[str]

    def columns(self) -> tuple:
        """``(index, label, source, value)`` as stored (value a JSON-able object or None)."""
        raise NotImplementedError


@dataclass(frozen=True)
class Label(NewEvent):
    """Point ``index`` labelled ``label`` by the user (``queried``: the point the learner
    asked for; ``chosen``: a point the user picked; ``accepted``: one prediction accepted)."""

    kind: ClassVar[str] = "label"
    index: int
    label: str
    source: str = "queried"

    def __post_init__(self):
        _check_source(self.kind, self.source, LABEL_EVENT_SOURCES)

    def columns(self):
        return int(self.index), self.label, self.source, None


@dataclass(frozen=True)
class Accept(NewEvent):
    """One point of an action that labels many at once (one undo step): predictions accepted
    (``accepted``), the data set's labels at creation (``initial``), a lasso or box
    (``selection``), "more like this" (``similar``), a batch of queries (``batch``); a pick of
    those two grids left on the model's guess is ``similar_guess`` / ``batch_guess``."""

    kind: ClassVar[str] = "accept"
    index: int
    label: str
    source: str = "accepted"

    def __post_init__(self):
        _check_source(self.kind, self.source, ACCEPT_EVENT_SOURCES)

    def columns(self):
        return int(self.index), self.label, self.source, None


@dataclass(frozen=True)
class Skip(NewEvent):
    """Point ``index`` is not queried again."""

    kind: ClassVar[str] = "skip"
    index: int

    def columns(self):
        return int(self.index), None, None, None


@dataclass(frozen=True)
class Unskip(NewEvent):
    """Skipped point ``index`` is queryable again."""

    kind: ClassVar[str] = "unskip"
    index: int

    def columns(self):
        return int(self.index), None, None, None


@dataclass(frozen=True)
class Relabel(NewEvent):
    """Labelled point ``index`` changes from class ``was`` to ``label`` (source ``chosen``)."""

    kind: ClassVar[str] = "relabel"
    index: int
    label: str
    was: str
    source: str = "chosen"

    def __post_init__(self):
        _check_source(self.kind, self.source, ("chosen",))

    def columns(self):
        return int(self.index), self.label, self.source, {"from": self.was}


@dataclass(frozen=True)
class Unlabel(NewEvent):
    """Point ``index`` loses its label ``label``."""

    kind: ClassVar[str] = "unlabel"
    index: int
    label: str

    def columns(self):
        return int(self.index), self.label, None, None


@dataclass(frozen=True)
class Undo(NewEvent):
    """Reverts the action whose first event has seq ``undoes`` (the top of the undo stack)."""

    kind: ClassVar[str] = "undo"
    undoes: int

    def columns(self):
        return None, None, None, {"undoes": int(self.undoes)}


@dataclass(frozen=True)
class AddClass(NewEvent):
    """A new class ``name``."""

    kind: ClassVar[str] = "add_class"
    name: str

    def columns(self):
        return None, self.name, None, None


@dataclass(frozen=True)
class RenameClass(NewEvent):
    """Class ``old`` is called ``new`` from now on."""

    kind: ClassVar[str] = "rename_class"
    old: str
    new: str

    def columns(self):
        return None, self.new, None, {"from": self.old}


@dataclass(frozen=True)
class DeleteClass(NewEvent):
    """Class ``name`` (holding no label) is removed; ``weight``: its weight in a weighting
    dict, given back by an undo."""

    kind: ClassVar[str] = "delete_class"
    name: str
    weight: float | None = None

    def columns(self):
        return None, self.name, None, (None if self.weight is None else {"weight": self.weight})


@dataclass(frozen=True)
class Setting(NewEvent):
    """Setting ``name`` takes ``value``; ``notes``: what else to keep with it (an automatic
    re-tune's ``{"auto": true, "loo_error", "n_labels", "reason"}``). Several settings
    changed together are one action: several ``Setting`` events of distinct names."""

    kind: ClassVar[str] = "setting"
    name: str
    value: object
    notes: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.name, str) or {"name", "value"} & set(self.notes):
            raise ValueError(f"A setting event needs a name (str) and notes without 'name' or "
                             f"'value'; got {self.name!r}, {self.notes!r}.")

    def columns(self):
        return None, None, None, {"name": self.name, "value": self.value, **self.notes}



@dataclass(frozen=True)
class Keep(NewEvent):
    """The user reviewed labelled point ``index`` among the suspects and kept its label
    ``label`` (schema version 4). ``score`` and ``suggested``: the suspicion score in [0, 1]
    and the class the model suggested when it was kept; the point stays off the suspects list
    until the model's view of it changes materially (:mod:`labeler.session.views`)."""

    kind: ClassVar[str] = "keep"
    index: int
    label: str
    score: float
    suggested: str | None = None

    def __post_init__(self):
        score = self.score
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not 0.0 <= float(score) <= 1.0:
            raise ValueError(f"A keep event's score must be a number in [0, 1]; got {score!r}.")

    def columns(self):
        return int(self.index), self.label, None, {"score": float(self.score), "suggested": self.suggested}
