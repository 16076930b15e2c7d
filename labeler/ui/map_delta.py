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
lost its copy), else the delta from the last WHOLE figure sent. Each message carries ``rev``
(its number) and ``from`` (the rev of that whole figure): the page keeps the whole figure and
applies each delta to it, so a message it never drew (two reruns in quick succession, the
second one drawn) costs nothing; a delta from a whole figure the page does not hold is not
applied: the page asks for the whole figure (:data:`NEED_FULL`), never draws a wrong map.
Deltas from the whole figure are hardly larger than deltas from the previous state: what
changes on a label (colours, the labelled trace, the query) is replaced whole either way, and
what does not (coordinates, texts, template, axes) is in neither.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["figure_state", "spec_state", "hover_arrays", "figure_delta", "apply_delta", "MapSync", "next_message", "NEED_FULL",
           "message_size", "HOVER_KEY", "compact_pool_hover", "expand_hover"]

#: Trace key of the compact tooltips of the pool trace (:func:`compact_pool_hover`).
HOVER_KEY = "labelerHover"

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


_TEMPLATE: list = []


def _default_template() -> dict:
    """The JSON of plotly's default template (``layout.template`` of every new figure), read
    once."""
    if not _TEMPLATE:
        import plotly.graph_objects as go

        _TEMPLATE.append(json.loads(go.Figure().to_json())["layout"].get("template"))
    return _TEMPLATE[0]


#: Keys whose arrays plotly never turns into typed arrays (``_plotly_utils.utils.is_skipped_key``).
_PLAIN_ARRAY_KEYS = frozenset({"geojson", "layer", "layers", "range"})


def _plain(value, key=None):
    """``value`` as plotly's JSON gives it: numeric numpy arrays as typed arrays (plotly's own
    rule, ``to_typed_array_spec``), other arrays and tuples as lists, numpy scalars as numbers,
    dict entries that are None left out (plotly leaves such a property unset)."""
    import numpy as np

    if isinstance(value, dict):
        return {k: (v if k == HOVER_KEY else _plain(v, k)) for k, v in value.items() if v is not None}
    if isinstance(value, np.ndarray):
        if value.size and key not in _PLAIN_ARRAY_KEYS and value.dtype.kind in "iuf":
            from _plotly_utils.utils import to_typed_array_spec

            spec = to_typed_array_spec(value)
            if isinstance(spec, dict):
                return spec
        return [_plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def spec_state(spec: dict) -> dict:
    """The figure state of a plain figure dict (``{"data": [...], "layout": {...}}`` as
    :func:`labeler.ui.figures.scatter_spec` builds it), without plotly's validation: equal to
    :func:`figure_state` ``(go.Figure(spec))`` (tests/test_map_spec.py), in a fraction of the
    time (plotly validates every property of every trace: 50-200 ms per map).

    Parameters
    ----------
    spec : dict
        Traces (each with its ``type``) and layout; numpy arrays, tuples and numpy scalars
        allowed; None values mean "not set". Keys plotly does not know pass unchanged (the
        page's own: :data:`HOVER_KEY`).

    Returns
    -------
    dict
        ``{"data": list of dict, "layout": dict}`` with the default template in the layout.
    """
    layout = _plain(spec.get("layout", {}))
    layout.setdefault("template", _default_template())
    return {"data": [_plain(trace) for trace in spec.get("data", [])], "layout": layout}


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
    full_rev : int
        Number of the last message that sent the whole figure.
    full_state : dict or None
        That figure: deltas are computed from it.
    full_requests : set of str
        Requests for the whole figure (:data:`NEED_FULL`) already answered.
    """

    base: str | None = None
    rev: int = 0
    state: dict | None = None
    full_rev: int = 0
    full_state: dict | None = None
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
        "full": False, "delta"}`` with ``delta`` = :func:`figure_delta` (whole figure of rev
        ``from``, ``state``); ``rev`` increases by one per message.
    """
    request = None
    if isinstance(need_full, dict):
        request = json.dumps(need_full, sort_keys=True, default=str)
    asked = request is not None and request not in sync.full_requests
    if asked:
        sync.full_requests.add(request)
    full = asked or sync.full_state is None or sync.base != base
    rev = sync.rev + 1
    if full:
        message = {"base": base, "rev": rev, "from": rev, "full": True, "figure": state}
        sync.full_rev, sync.full_state = rev, state
    else:
        message = {"base": base, "rev": rev, "from": sync.full_rev, "full": False,
                   "delta": figure_delta(sync.full_state, state)}
    sync.base, sync.rev, sync.state = base, rev, state
    return message


def message_size(message: dict) -> int:
    """Bytes of ``message`` as JSON (what the page receives, before compression)."""
    return len(json.dumps(message, separators=(",", ":")))


def _typed(values, dtype: str) -> dict:
    """A base64 typed array ``{"dtype", "bdata"}`` (little-endian, as plotly.js reads it)."""
    import base64

    import numpy as np

    array = np.ascontiguousarray(values, dtype=np.dtype(dtype).newbyteorder("<"))
    return {"dtype": dtype, "bdata": base64.b64encode(array.tobytes()).decode("ascii")}


def hover_arrays(names, predicted, confidence, extra=None) -> dict | None:
    """The pool's tooltips as compact arrays (see :func:`compact_pool_hover`): ``{"names",
    "pred", "conf", "extra"}``, or None when a confidence is outside [0, 1] or not finite
    (then the strings are sent).

    Parameters
    ----------
    names : list of str
        Class names as the tooltips show them (already escaped), "?" last: code ``j`` is
        ``names[j]``, code -1 is ``names[-1]``.
    predicted : ndarray of shape (n_samples,) of int
        Predicted class code of each pool point (-1: none).
    confidence : ndarray of shape (n_samples,) of float
    extra : list of str, optional
        Each point's own text, shown after the prediction (None: no text).
    """
    import numpy as np

    predicted = np.asarray(predicted)
    conf = np.asarray(confidence, dtype=np.float64)
    # hundredths exactly as the strings print them (f"{c:.2f}": correctly rounded decimals)
    hundredths = np.char.mod("%.2f", conf).astype(np.float64) * 100.0
    if hundredths.size and (not np.all(np.isfinite(hundredths)) or hundredths.min() < 0
                            or hundredths.max() > 255):
        return None
    return {"names": list(names),
            "pred": _typed(np.where(predicted >= 0, predicted, -1), "i2"),
            "conf": _typed(np.round(hundredths), "u1"),
            "extra": extra}


def compact_pool_hover(state: dict, names, predicted, confidence) -> dict:
    """The pool trace's per-point tooltip strings (predicted class and confidence, then the
    point's own text) replaced by two compact arrays the page turns back into the strings
    (``map.js``; :func:`expand_hover` is the same in Python).

    A label changes the predictions of most points, so the strings changed on every label:
    about 16 bytes a point sent again (330 kB at 2x10^4 points). As ``int16`` class codes and
    ``uint8`` confidences in hundredths (the two decimals the tooltip prints) it is 3 bytes a
    point; the points' own texts do not change and are sent once.

    Parameters
    ----------
    state : dict
        Figure state (:func:`figure_state`); left unchanged.
    names : sequence of str
        Class names (escaped here as the figure escapes them), code ``j`` is ``names[j]``.
    predicted : ndarray of shape (n_samples,) of int
        Predicted class code of each pool point (-1: none, shown as "?").
    confidence : ndarray of shape (n_samples,) of float
        Confidence in [0, 1] of each prediction.

    Returns
    -------
    dict
        ``state`` with trace 0's ``text`` replaced by ``{HOVER_KEY: {"names", "pred", "conf",
        "extra"}}``, or ``state`` itself when trace 0 does not hold every pool point with such
        texts (the density map draws a few points: nothing to gain).
    """
    import numpy as np

    data = state.get("data", [])
    predicted = np.asarray(predicted)
    if not data or data[0].get("name") != "pool" or not isinstance(data[0].get("text"), list):
        return state
    text = data[0]["text"]
    if len(text) != predicted.shape[0]:
        return state
    prefix = "<br>"
    extra = None
    if any(prefix in t for t in text[:1]):
        extra = [t.split(prefix, 1)[1] if prefix in t else "" for t in text]
    from labeler.ui.text import plot_text

    arrays = hover_arrays([plot_text(n) for n in names] + ["?"], predicted, confidence, extra)
    if arrays is None:
        return state  # confidences outside [0, 1] or not finite: keep the strings
    pool = {k: v for k, v in data[0].items() if k != "text"}
    pool[HOVER_KEY] = arrays
    return {"data": [pool, *data[1:]], "layout": state.get("layout", {})}


def expand_hover(hover: dict) -> list[str]:
    """The tooltip strings of :func:`compact_pool_hover`'s arrays (what ``map.js`` builds)."""
    import base64

    import numpy as np

    pred = np.frombuffer(base64.b64decode(hover["pred"]["bdata"]), dtype="<i2")
    conf = np.frombuffer(base64.b64decode(hover["conf"]["bdata"]), dtype="u1")
    names, extra = hover["names"], hover["extra"]
    out = []
    for i, (p, c) in enumerate(zip(pred.tolist(), conf.tolist())):
        head = f"{names[p] if p >= 0 else names[-1]} ({c / 100:.2f})"
        out.append(head if extra is None else f"{head}<br>{extra[i]}")
    return out
