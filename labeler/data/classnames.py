"""Class names: one rule for labels read from files, class folders and classes added by hand.

A class name is a string with its surrounding whitespace removed (``" cat "`` is ``"cat"``);
a blank name is refused, and so are two spellings that become the same name (``"cat"`` and
``"cat "`` in one label column), each with a message naming both spellings: merging them
silently could join two classes the user meant to keep apart, keeping them apart would show
two classes that look the same.

The data loaders raise these errors as :class:`~labeler.data.dataset.DatasetError`.
Names already stored by earlier versions are read back as stored; :func:`check_class_name`
compares a new name with their normalised forms, so ``"cat"`` cannot be added beside a
stored ``"cat "``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["normalise_class_name", "check_class_name", "normalise_names", "normalise_labels"]


def normalise_class_name(name) -> str:
    """``name`` without surrounding whitespace.

    Raises
    ------
    TypeError
        ``name`` is not a string.
    ValueError
        ``name`` is empty or only whitespace.
    """
    if not isinstance(name, str):
        raise TypeError(f"A class name must be a string; got {name!r} ({type(name).__name__}).")
    stripped = name.strip()
    if not stripped:
        raise ValueError(f"A class name cannot be empty or blank (got {name!r}); type a name such as 'cat'.")
    return stripped


def check_class_name(name, classes) -> str:
    """A new class name, normalised, that no class of ``classes`` has once normalised.

    Parameters
    ----------
    name : str
        The name typed (or given in a configuration).
    classes : sequence of str
        The existing classes, as stored (possibly with whitespace, from older stores).

    Returns
    -------
    str
        ``name`` without surrounding whitespace.

    Raises
    ------
    TypeError, ValueError
        Not a string, blank, or an existing class up to surrounding whitespace (both
        spellings named).
    """
    stripped = normalise_class_name(name)
    for existing in classes:
        if str(existing).strip() == stripped:
            if str(existing) == stripped:
                raise ValueError(f"Class {stripped!r} already exists (classes: {list(classes)}); pick another name.")
            raise ValueError(
                f"{name!r} is the existing class {existing!r} up to surrounding whitespace; use "
                f"{existing!r}, or pick a name that differs in more than spaces."
            )
    return stripped


def normalise_names(names, what: str) -> dict:
    """Map each distinct name to its normalised form, refusing blank names and collisions.

    Parameters
    ----------
    names : iterable of str
    what : str
        What the names are, for messages (e.g. ``"pets.csv: label column 'label'"``).

    Raises
    ------
    ValueError
        A blank name, or two names that differ only in surrounding whitespace (both named).
    """
    mapping: dict = {}
    seen: dict = {}
    for original in dict.fromkeys(names):
        stripped = str(original).strip()
        if not stripped:
            raise ValueError(
                f"{what}: the class name {original!r} is blank. Give those points a real class "
                "name (or drop them)."
            )
        if stripped in seen:
            first = seen[stripped]
            raise ValueError(
                f"{what}: class names {first!r} and {original!r} differ only in surrounding "
                f"whitespace. Use one spelling ({stripped!r}) for both, or names that differ in "
                "more than spaces if they are different classes."
            )
        seen[stripped] = original
        mapping[original] = stripped
    return mapping


def normalise_labels(y: np.ndarray, what: str) -> np.ndarray:
    """String labels without surrounding whitespace (other labels unchanged).

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels; strings (dtype ``U`` or object) are normalised, numbers returned as they are.
    what : str
        The labels' source, for messages.

    Returns
    -------
    ndarray of shape (n,)

    Raises
    ------
    ValueError
        A blank label (its first row named) or two spellings of one name
        (:func:`normalise_names`).
    """
    if y.dtype.kind not in "OU":
        return y
    import pandas as pd

    text = y.astype(str)
    # worked on the distinct labels (a few, against 10^6 rows: 1-3 s less at start-up), then
    # spread back by their codes; the same result as stripping every row
    codes, uniques = pd.factorize(text)
    uniques = np.asarray(uniques, dtype=str)
    stripped_uniques = np.char.strip(uniques)
    blank_codes = np.flatnonzero(stripped_uniques == "")
    if blank_codes.size:
        blank = np.flatnonzero(np.isin(codes, blank_codes))
        raise ValueError(
            f"{what}: a blank label {str(text[blank[0]])!r} at row {int(blank[0])} ({blank.size} "
            "blank label(s) in all). Fill in those labels or drop the rows."
        )
    normalise_names(sorted(uniques.tolist()), what)
    return stripped_uniques[codes].astype(np.char.strip(text[:1]).dtype, copy=False)
