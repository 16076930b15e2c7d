"""What the browser needs to turn the map it shows into the new map: a delta of two figure
states, and the exchange that decides between a delta and the whole figure (plain code, no
Streamlit).

A *figure state* is a plotly figure as JSON-ready plain data (:func:`figure_state`): ``{"data":
[trace, ...], "layout": {...}}`` with every numpy array already a base64 typed array
(``{"dtype": "u1", "bdata": "..."}``, as ``plotly.io.to_json`` writes it and plotly.js reads
it). Between two reruns most of it is equal: the pool's coordinates, hover texts, the template,
the axes. :func:`figure_delta` lists only the leaves that changed (a leaf is anything that is
not a dict: a number, a string, a list, a typed array), :func:`apply_delta` puts them in; the
page's script (``labeler/ui/map_component/map.js``) applies the same delta the same way.
``apply_delta(old, figure_delta(old, new)) == new`` for any two states (tests/test_map_delta.py).

:func:`next_message` is the server's half of the exchange: the whole figure when the page has
nothing to apply a delta to (first draw, another map key, the page asked for it because it
lost its copy), else the delta from the last state sent. Each message carries ``rev`` (its
number) and ``from`` (the rev the delta applies to): the page applies a delta only to that
rev, and otherwise asks for the whole figure (:data:`NEED_FULL`), so a lost message costs one
full draw, never a wrong map.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["figure_state", "figure_delta", "apply_delta", "MapSync", "next_message", "NEED_FULL",
           "message_size"]

#: State key the page sets to ask for the whole figure: ``{"base": ..., "rev": ..., "seq": ...}``.
NEED_FULL = "need_full"


def figure_state(fig) -> dict:
    """A plotly figure as plain JSON-ready data with typed arrays (base64), as the page gets it.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure

    Returns
    -------
    dict
        ``{"data": list of dict, "layout": dict}``.
    """
    state = json.loads(fig.to_json())
    return {"data": state.get("data", []), "layout": state.get("layout", {})}


def _is_branch(value) -> bool:
    """A dict that is not a typed array (those are leaves: replaced whole)."""
    return isinstance(value, dict) and "bdata" not in value


def _diff(old: dict, new: dict, path: list, sets: list, unsets: list) -> None:
    for key, value in new.items():
        if key not in old:
            sets.append(([*path, key], value))
        elif _is_branch(value) and _is_branch(old[key]):
            _diff(old[key], value, [*path, key], sets, unsets)
        elif old[key] != value:
            sets.append(([*path, key], value))
    for key in old:
        if key not in new:
            unsets.append([*path, key])


def figure_delta(old: dict, new: dict) -> dict:
    """The changes that turn figure state ``old`` into ``new``.

    Parameters
    ----------
    old, new : dict
        Figure states (:func:`figure_state`).

    Returns
    -------
    dict
        ``{"n_traces": int, "traces": [[i, trace], ...], "set": [[path, value], ...],
        "unset": [path, ...]}``: traces beyond ``old``'s count whole (``traces``); for the
        others and the layout, each changed leaf as ``[path, value]`` with ``path`` starting
        with ``"data", i`` or ``"layout"``, and each removed key's path.
    """
    sets: list = []
    unsets: list = []
    old_data, new_data = old.get("data", []), new.get("data", [])
    shared = min(len(old_data), len(new_data))
    for i in range(shared):
        _diff(old_data[i], new_data[i], ["data", i], sets, unsets)
    _diff(old.get("layout", {}), new.get("layout", {}), ["layout"], sets, unsets)
    return {"n_traces": len(new_data),
            "traces": [[i, new_data[i]] for i in range(shared, len(new_data))],
            "set": [[path, value] for path, value in sets],
            "unset": unsets}


def _copy_path(root: dict, path: list) -> Any:
    """Copy the dicts/lists along ``path[:-1]`` (copy on write) and return the parent of the
    last key; missing dicts on the way are created."""
    node = root
    for key in path[:-1]:
        child = node[key] if (isinstance(node, list) or key in node) else {}
        child = list(child) if isinstance(child, list) else dict(child)
        node[key] = child
        node = child
    return node


def apply_delta(old: dict, delta: dict) -> dict:
    """``old`` with ``delta`` applied: a new state; ``old`` is not changed and shares every
    part the delta does not touch (what the page does too, so plotly sees new objects only
    where something changed).

    Parameters
    ----------
    old : dict
        Figure state the delta was computed from.
    delta : dict
        :func:`figure_delta` ``(old, new)``.

    Returns
    -------
    dict
        Equal to ``new``.
    """
    new = {"data": list(old.get("data", []))[: delta["n_traces"]], "layout": old.get("layout", {})}
    for i, trace in delta["traces"]:
        while len(new["data"]) <= i:
            new["data"].append({})
        new["data"][i] = trace
    for path, value in delta["set"]:
        _copy_path(new, path)[path[-1]] = value
    for path in delta["unset"]:
        parent = _copy_path(new, path)
        parent.pop(path[-1], None)
    return new


@dataclass
class MapSync:
    """What the server last sent one page's map (kept in that page's session state).

    Attributes
    ----------
    base : str or None
        Key of the map the page holds (session, layout, pool size, colour mode...): a delta is
        only sent within one base.
    rev : int
        Number of the last message sent (0: none yet).
    state : dict or None
        The figure state that message brought the page to.
    full_requests : set of str
        Requests for the whole figure (:data:`NEED_FULL`) already answered.
    """

    base: str | None = None
    rev: int = 0
    state: dict | None = None
    full_requests: set = field(default_factory=set)


def next_message(sync: MapSync, base: str, state: dict, need_full=None) -> dict:
    """The message that brings the page's map to ``state``, and ``sync`` updated to it.

    Parameters
    ----------
    sync : MapSync
        What was sent before (changed in place).
    base : str
        Key of the new map (:attr:`MapSync.base`).
    state : dict
        The new figure state (:func:`figure_state`).
    need_full : dict, optional
        The page's last request for the whole figure (its :data:`NEED_FULL` state value).

    Returns
    -------
    dict
        ``{"base", "rev", "from", "full": True, "figure"}`` or ``{"base", "rev", "from",
        "full": False, "delta"}``; ``rev`` increases by one per message.
    """
    request = None
    if isinstance(need_full, dict):
        request = json.dumps(need_full, sort_keys=True, default=str)
    asked = request is not None and request not in sync.full_requests
    if asked:
        sync.full_requests.add(request)
    full = asked or sync.state is None or sync.base != base
    message = {"base": base, "rev": sync.rev + 1, "from": sync.rev, "full": full}
    if full:
        message["figure"] = state
    else:
        message["delta"] = figure_delta(sync.state, state)
    sync.base, sync.rev, sync.state = base, sync.rev + 1, state
    return message


def message_size(message: dict) -> int:
    """Bytes of ``message`` as JSON (what the page receives, before compression)."""
    return len(json.dumps(message, separators=(",", ":")))
