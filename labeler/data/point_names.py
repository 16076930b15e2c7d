"""How a point is named to the user: its own id (without the answer the data came with) and the
"#58 (1058)" name every message, title and row of the app uses.

Plain functions of a :class:`~labeler.data.dataset.Dataset`: the session's messages
(:mod:`labeler.session.labelling`) and the page (:mod:`labeler.ui`) name points the same way.
"""

from __future__ import annotations

__all__ = ["shown_id", "point_name"]


def shown_id(dataset, index: int) -> str:
    """The point's id as the labeller sees it: without the answer the data came with.

    An image folder's id is ``class/file.png``; a path component equal to the point's own
    label (the class folder) is left out, so ``cat/001.png`` shows as ``001.png``. The full id
    stays in the data set and the export.
    """
    ident = str(dataset.ids[index])
    y = getattr(dataset, "y", None)
    if y is None or "/" not in ident:
        return ident
    answer = str(y[index])
    parts = [p for p in ident.split("/") if p != answer]
    return "/".join(parts) if parts else ident


def point_name(dataset, index: int) -> str:
    """How the app names point ``index`` of ``dataset``: "#58", or "#58 (1058)" when the data
    has its own ids (:func:`shown_id`; never the label column's value)."""
    index = int(index)
    if dataset is None or dataset.ids is None:
        return f"#{index}"
    ident = shown_id(dataset, index)
    return f"#{index}" if ident == str(index) else f"#{index} ({ident})"
