"""Keyboard shortcuts of the labelling screen (``st.button(..., shortcut=KEY)``).

Streamlit 1.67 accepts one alphanumeric key, a function key or a named key (Enter, Esc, ...),
optionally with modifiers; ``C`` and ``R`` are reserved by Streamlit and punctuation is not
supported (``streamlit.elements.lib.shortcut_utils.normalize_shortcut``).

Class keys are stable while classes are added: classes are taken in their order (new ones at
the end); a class whose name is a single letter or digit gets that key when it is still free
(digits "0".."9" are labelled with their own key), any other class gets the next free key of
``1 2 ... 9 0 a b ...``. Adding a class never changes the key of an earlier one; renaming or
deleting one may change the keys of the classes after it. The same keys press "Change to
<class>" on a labelled point (those buttons replace the class buttons there).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["SKIP_KEY", "UNDO_KEY", "BACK_KEY", "RESERVED", "class_shortcuts"]

SKIP_KEY = "s"
UNDO_KEY = "u"
BACK_KEY = "Escape"
#: Keys never given to a class: Streamlit's own (c, r) and the app's (s, u).
RESERVED = frozenset({"c", "r", SKIP_KEY, UNDO_KEY})
_SEQUENCE = "1234567890" + "".join(ch for ch in "abdefghijklmnopqtvwxyz" if ch not in RESERVED)


def class_shortcuts(classes: Sequence) -> list[str | None]:
    """Shortcut key of each class, or None once the keys run out.

    Parameters
    ----------
    classes : sequence
        Class names in their order of creation.

    Returns
    -------
    list of (str or None), same length as ``classes``
        Lower-case keys, all distinct, none in :data:`RESERVED`.
    """
    used: set[str] = set()
    keys: list[str | None] = []
    for name in classes:
        own = str(name).strip().lower()
        if len(own) == 1 and own.isascii() and own.isalnum() and own not in RESERVED and own not in used:
            key = own
        else:
            key = next((k for k in _SEQUENCE if k not in used), None)
        if key is not None:
            used.add(key)
        keys.append(key)
    return keys
