"""The saved sessions as a person finds them: by file, model, label count and last use.

The sidebar's "Sessions" list names each session by its data (the file's name, or the
built-in's), its model (RLS and its posterior, or a graph model), its number of labels and
the time it was last used (its last event, else its creation), most recently used first;
the id comes last, only to tell apart two otherwise equal lines. A fresh tab without a
``?session=`` link or a data set given at start opens the session used last
(:func:`last_used`), not a new demo session.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

__all__ = ["SessionSummary", "session_summaries", "describe", "describe_stable", "last_used", "model_words"]

_MODELS = {"rls": "RLS", "harmonic": "harmonic graph", "lgc": "LGC graph", "poisson": "Poisson graph"}


@dataclass(frozen=True)
class SessionSummary:
    """One saved session, for the list: id, data, model, labels, creation and last use (ISO 8601)."""

    id: str
    name: str
    dataset: str
    model: str
    n_labeled: int
    created: str
    last_used: str


def model_words(config: dict) -> str:
    """``"RLS (dense)"``, ``"RLS (nystrom)"``, ``"harmonic graph"``... from a stored configuration."""
    model = str(config.get("model") or "rls")
    words = _MODELS.get(model, model)
    if model == "rls":
        posterior = config.get("posterior")
        kernel = config.get("kernel")
        extra = [str(v) for v in (kernel if kernel not in (None, "rbf") else None, posterior) if v]
        if extra:
            words += f" ({', '.join(extra)})"
    return words


def data_words(dataset: str) -> str:
    """A data set's name as a person knows it: a file's name (not its folder), or the built-in's."""
    text = str(dataset)
    return Path(text).name if ("/" in text or "\\" in text) else text


def session_summaries(store_path) -> list[SessionSummary]:
    """Every session of the store, most recently used first (reads one event per session)."""
    from labeler.store import Store

    out = []
    with Store(store_path) as store:
        for info in store.list_sessions():
            try:
                config = dict(store.session(info.id).config or {})
                n = store.n_events(info.id)
                last = store.events(info.id, after=n - 1)[-1].timestamp if n else str(info.created)
            except Exception:  # noqa: BLE001 - a damaged session is still listed (it fails to open with the reason)
                config, last = {}, str(info.created)
            out.append(SessionSummary(info.id, info.name, str(info.dataset), model_words(config),
                                      int(info.n_labeled), str(info.created), str(last)))
    out.sort(key=lambda s: (s.last_used, s.created), reverse=True)
    return out


def describe(summary: SessionSummary, duplicates: bool = False) -> str:
    """``"penguins.csv · RLS (dense) · 12 labels · 2026-11-26 07:40"`` (the id only when needed)."""
    when = summary.last_used[:16].replace("T", " ")
    labels = f"{summary.n_labeled} label{'s' if summary.n_labeled != 1 else ''}"
    text = f"{data_words(summary.dataset)} · {summary.model} · {labels} · {when}"
    if summary.name and summary.name not in (summary.id, data_words(summary.dataset), Path(summary.dataset).stem):
        text = f"{summary.name} — {text}"
    return text + (f" · {summary.id[:6]}" if duplicates else "")


def describe_stable(summary: SessionSummary, duplicates: bool = False) -> str:
    """``"birds.csv · RLS (dense) · created 2026-11-26 07:40"``: what never changes (a select
    box's option text must stay the same while labels arrive; the count goes beside it)."""
    when = summary.created[:16].replace("T", " ")
    text = f"{data_words(summary.dataset)} · {summary.model} · created {when}"
    if summary.name and summary.name not in (summary.id, data_words(summary.dataset), Path(summary.dataset).stem):
        text = f"{summary.name} — {text}"
    return text + (f" · {summary.id[:6]}" if duplicates else "")


def last_used(summaries: list[SessionSummary]) -> SessionSummary | None:
    """The session used last (the first of :func:`session_summaries`), or None."""
    return summaries[0] if summaries else None
