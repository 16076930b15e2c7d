"""Typed stand-ins for what the UI (``labeler/ui/``) reads of a data set and of a session.

The UI reads the attributes of :class:`labeler.data.Dataset` and
:class:`labeler.session.LabelingSession` directly, without ``getattr`` / ``hasattr`` guards.
A test that stands in for one of them uses these classes: each carries every attribute the UI
code it replaces reads, with the real type, and ``tests/test_ui_helpers.py`` checks that each
attribute exists on the real class (a stub cannot drift from what it stands for).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd


@dataclass
class StubDataset:
    """The attributes of :class:`labeler.data.Dataset` that ``labeler/ui/view.py``,
    ``point_panel.py``, ``bulk_panels.py``, ``export_panel.py`` and ``charts.py`` read.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features)
    name, feature_names, ids, images, image_paths, frame, texts, load_options, params
        As :class:`labeler.data.Dataset`'s; None / empty where the data set has none.
    """

    X: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))
    name: str = "stub"
    feature_names: list[str] = field(default_factory=list)
    ids: np.ndarray | None = None
    images: np.ndarray | None = None
    image_paths: list[str] | None = None
    frame: pd.DataFrame | None = None
    texts: np.ndarray | None = None
    load_options: dict = field(default_factory=dict)
    params: dict = field(default_factory=dict)


class StubSession:
    """What the session registry (``labeler/ui/registry.py``) reads and calls on a session:
    ``id``, ``n_samples``, ``closed`` and ``close()``; subclasses add ``open`` / ``create``."""

    def __init__(self, sid: str, n_samples: int = 0):
        self.id = sid
        self.n_samples = int(n_samples)
        self.closed = False

    def close(self) -> None:
        self.closed = True
