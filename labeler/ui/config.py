"""What the app opens at start, read from the environment (set by :func:`labeler.serve.run_app`).

Kept apart from Streamlit so the tests can build it directly.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from labeler.store import default_store_path

__all__ = ["BUILTIN_CHOICES", "SIZED_BUILTINS", "DEFAULT_MAX_FILE_MB", "AppConfig"]

#: Built-in data sets offered by the sidebar picker (names understood by labeler.data).
BUILTIN_CHOICES: tuple[str, ...] = (
    "moons", "moons-imbalanced", "spheres", "circles", "digits", "mnist", "magic",
)
#: Built-in data sets whose pool size the picker lets the user choose.
SIZED_BUILTINS: tuple[str, ...] = ("moons", "moons-imbalanced", "circles")
#: Largest data file the in-app picker opens, in megabytes (override: LABELER_MAX_FILE_MB).
DEFAULT_MAX_FILE_MB = 200.0


@dataclass(frozen=True)
class AppConfig:
    """Start-up settings of the app.

    Attributes
    ----------
    data : str
        Data set opened when no session is chosen: built-in name or absolute path.
    data_options : dict
        Options of the data set (e.g. ``{"n": 20000}`` for moons).
    store : pathlib.Path
        SQLite store file.
    session : str or None
        Saved session to resume at start.
    data_dir : pathlib.Path
        Folder the in-app path picker may read from (files outside are refused).
    max_file_mb : float
        Largest file the in-app path picker accepts.
    token : str or None
        Access token a tab must give before it sees anything (``LABELER_TOKEN``).
    """

    data: str = "moons"
    data_options: dict = field(default_factory=dict)
    store: Path = field(default_factory=default_store_path)
    session: str | None = None
    data_dir: Path = field(default_factory=Path.cwd)
    max_file_mb: float = DEFAULT_MAX_FILE_MB
    token: str | None = field(default=None, repr=False)
    model: dict = field(default_factory=dict)  # LABELER_MODEL: posterior, rank, landmarks, knn, model, alpha, class_mass
    data_given: bool = False  # LABELER_DATA set (else the demo, and a fresh tab opens the session used last)

    @classmethod
    def from_env(cls, environ=None) -> "AppConfig":
        """Read ``LABELER_DATA``, ``LABELER_DATA_OPTIONS`` (JSON object), ``LABELER_STORE``,
        ``LABELER_SESSION``, ``LABELER_DATA_DIR``, ``LABELER_MAX_FILE_MB`` and ``LABELER_TOKEN``.

        Raises
        ------
        ValueError
            If ``LABELER_DATA_OPTIONS`` is not a JSON object or ``LABELER_MAX_FILE_MB`` is not
            a positive number.
        """
        env = os.environ if environ is None else environ
        options_text = env.get("LABELER_DATA_OPTIONS", "").strip()
        options = {}
        if options_text:
            try:
                options = json.loads(options_text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"LABELER_DATA_OPTIONS is not valid JSON ({exc}); give an object "
                                 "such as '{\"n\": 2000}'.") from None
            if not isinstance(options, dict):
                raise ValueError("LABELER_DATA_OPTIONS must be a JSON object such as '{\"n\": 2000}'.")
        max_mb = env.get("LABELER_MAX_FILE_MB", "")
        try:
            max_file_mb = float(max_mb) if max_mb else DEFAULT_MAX_FILE_MB
        except ValueError:
            raise ValueError(f"LABELER_MAX_FILE_MB must be a number of megabytes; got {max_mb!r}.") from None
        if not max_file_mb > 0:
            raise ValueError(f"LABELER_MAX_FILE_MB must be > 0; got {max_mb!r}.")
        return cls(
            data=env.get("LABELER_DATA") or "moons",
            data_options=options,
            store=(Path(env["LABELER_STORE"]).expanduser() if env.get("LABELER_STORE")
                   else default_store_path()),
            session=env.get("LABELER_SESSION") or None,
            data_dir=Path(env.get("LABELER_DATA_DIR") or os.getcwd()).expanduser(),
            max_file_mb=max_file_mb,
            token=env.get("LABELER_TOKEN") or None,
            model=_model_options(env.get("LABELER_MODEL", "")),
            data_given=bool(env.get("LABELER_DATA")),
        )


def _model_options(text: str) -> dict:
    """``LABELER_MODEL`` (JSON set by ``labeler app --posterior ... --model ...``): the model and
    posterior settings of the app's first new session (and the sidebar's default model); only the
    keys posterior, rank, landmarks, knn, model, alpha, class_mass, standardize are kept."""
    try:
        value = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ValueError(f"LABELER_MODEL is not valid JSON ({exc}); give an object such as "
                         "'{\"posterior\": \"nystrom\"}'.") from None
    if not isinstance(value, dict):
        raise ValueError("LABELER_MODEL must be a JSON object such as '{\"posterior\": \"nystrom\"}'.")
    return {k: v for k, v in value.items()
            if k in ("posterior", "rank", "landmarks", "knn", "model", "alpha", "class_mass", "standardize")}
