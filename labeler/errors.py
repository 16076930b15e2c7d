"""The error of a setting that cannot work, shared by the layers that check settings.

:class:`SettingsError` is raised where a value the user chose (an option of ``labeler``, a
session setting, an experiment's parameter) cannot work, with a message naming the fix. The
command line prints it as one ``labeler: error:`` line (exit 2); any other ``ValueError`` is a
bug and keeps its traceback. It is a ``ValueError``, so code that checks arguments keeps
catching what it caught. Data files that cannot be loaded raise
:class:`labeler.data.DatasetError` instead, the store its :class:`labeler.store.StoreError` kinds.
"""

from __future__ import annotations

__all__ = ["SettingsError"]


class SettingsError(ValueError):
    """A setting chosen by the user cannot work; the message names the problem and the fix."""
