"""Export tab: one download button per format (the file is made when the button is clicked)."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import streamlit as st

from labeler.atomic import sweep_stale_dirs
from labeler.ui.text import md_text

__all__ = ["render_export", "columns_caption", "export_bytes", "session_file_bytes", "session_file_name", "EXPORT_MIME"]

EXPORT_MIME = {
    "csv": "text/csv",
    "jsonl": "application/x-ndjson",
    "parquet": "application/vnd.apache.parquet",
    "zip": "application/zip",
}


_TMP_PREFIX = "labeler-export-"


def export_bytes(session, lock, format: str, include_predictions: bool = False) -> bytes:
    """The content of ``session.export(...)`` in ``format``, made in a temporary folder (those
    that killed servers left behind, older than an hour, are removed first)."""
    sweep_stale_dirs(_TMP_PREFIX)
    with tempfile.TemporaryDirectory(prefix=_TMP_PREFIX) as tmp:
        path = Path(tmp) / f"labels.{format}"
        with lock:
            session.export(path, format=format, include_predictions=include_predictions)
        return path.read_bytes()


def session_file_bytes(session, lock) -> bytes:
    """The session alone as one self-contained SQLite store file (``session.backup``)."""
    sweep_stale_dirs(_TMP_PREFIX)
    with tempfile.TemporaryDirectory(prefix=_TMP_PREFIX) as tmp:
        path = Path(tmp) / "session.sqlite"
        with lock:
            session.backup(path)
        return path.read_bytes()


def session_file_name(session) -> str:
    """Download name of :func:`session_file_bytes`."""
    return f"{_base_name(session)}.sqlite"


def _base_name(session) -> str:
    name = session.config.name or Path(str(session.config.dataset or "labels")).stem
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{name}-{session.id}").strip("-") or "labels"


def render_export(session, lock, n_labeled: int) -> None:
    """Download buttons for CSV, JSONL, Parquet and (with images) a zip of class folders."""
    with_pred = st.toggle("Include predictions of every point", key="export_predictions",
                          bind="query-params",
                          help="Adds predicted class and confidence; unlabelled points get an "
                               "empty label.")
    if n_labeled == 0 and not with_pred:
        st.caption("Nothing labelled yet: the files would be empty.")
    has_images = session.dataset.images is not None or session.dataset.image_paths is not None
    formats = ["csv", "jsonl", "parquet"] + (["zip"] if has_images else [])
    names = {"csv": "CSV", "jsonl": "JSONL", "parquet": "Parquet", "zip": "Images (zip per class)"}
    base = _base_name(session)
    with st.container(horizontal=True, gap="small"):
        for fmt in formats:
            st.download_button(
                names[fmt],
                data=lambda fmt=fmt: export_bytes(session, lock, fmt, with_pred),
                file_name=f"{base}.{fmt}",
                mime=EXPORT_MIME[fmt],
                key=f"download_{fmt}",
                on_click="ignore",
                icon=":material/download:",
            )
    st.caption(md_text(columns_caption(with_pred)))


def columns_caption(include_predictions: bool) -> str:
    """The export's columns in the order the file has them (:mod:`labeler.export`): ``origin``
    and, with predictions, ``predicted`` and ``confidence`` included."""
    from labeler.export import ORIGINS
    from labeler.store import LABEL_SOURCES

    origins = " / ".join(dict.fromkeys(ORIGINS.values()))
    predicted = "predicted, confidence, " if include_predictions else ""
    return (f"Columns: id, label, source ({' / '.join(LABEL_SOURCES)}), origin ({origins}: the labels "
            f"ending in 'guess' repeat the model's guess), order, timestamp, {predicted}then the original "
            "columns.")
