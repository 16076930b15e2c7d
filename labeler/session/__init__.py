"""A labelling session (see :mod:`.session`)."""

from .session import *  # noqa: F401,F403
from .session import __all__  # noqa: F401
