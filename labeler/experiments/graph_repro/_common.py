"""What the graph-seed sections share: MNIST, labelled-set draws, timing and formatting.

Every section loads the 10,000 MNIST test images shipped with the package
(:func:`labeler.data.bundled.load_mnist`, pixels / 255) once per process, draws its labelled
sets with seeded generators, and formats its numbers with the helpers of
:mod:`labeler.experiments.findings`.
"""

from __future__ import annotations

import time
from functools import lru_cache

import numpy as np

from labeler.experiments.findings import md_table

__all__ = ["mnist", "draw_labelled", "timed", "section_command", "md_table", "pm", "check_repeats"]


@lru_cache(maxsize=1)
def _mnist_all() -> tuple[np.ndarray, np.ndarray]:
    from labeler.data.bundled import load_mnist

    data = load_mnist(seed=0, n=10_000)
    order = np.argsort(np.asarray(data.ids))  # the file's order, whatever the loader's shuffle
    X = np.ascontiguousarray(data.X[order])
    y = np.asarray(data.y, dtype=np.int64)[order]
    X.setflags(write=False)
    y.setflags(write=False)
    return X, y


def mnist(n: int | None = None, digits=None, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """``n`` MNIST test images (all by default) of ``digits`` (all digits by default).

    Returns
    -------
    X : ndarray of shape (n, 784)
        Pixels / 255.
    y : ndarray of int64, shape (n,)
        Digits 0-9.
    """
    X, y = _mnist_all()
    rows = np.arange(y.size) if digits is None else np.flatnonzero(np.isin(y, list(digits)))
    if n is not None and n < rows.size:
        rows = np.sort(np.random.default_rng(seed).choice(rows, n, replace=False))
    return X[rows], y[rows]


def draw_labelled(y, size: int, rng: np.random.Generator, max_tries: int = 1000) -> np.ndarray:
    """A random labelled set of ``size`` indices holding every class of ``y`` (seed 004 §5)."""
    y = np.asarray(y)
    classes = np.unique(y)
    if size < classes.size:
        raise ValueError(f"a labelled set of {size} cannot hold all {classes.size} classes; "
                         f"use a size of at least {classes.size}.")
    for _ in range(max_tries):
        L = np.sort(rng.choice(y.size, size, replace=False))
        if np.unique(y[L]).size == classes.size:
            return L
    raise RuntimeError(f"no labelled set of {size} with every class in {max_tries} draws; use a larger size.")


def timed(fn):
    """``(fn(), seconds)``."""
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def pm(values, digits: int = 1, scale: float = 100.0) -> str:
    """``"mean ± sd"`` of ``values`` times ``scale`` (population sd)."""
    v = scale * np.asarray(values, dtype=float)
    if v.size == 0:
        return "n/a"
    return f"{v.mean():.{digits}f} ± {v.std():.{digits}f}" if v.size > 1 else f"{v[0]:.{digits}f}"


def check_repeats(repeats, default: int) -> int:
    """``repeats`` (an integer >= 1) or ``default``."""
    if repeats is None:
        return default
    if isinstance(repeats, bool) or not isinstance(repeats, (int, np.integer)) or repeats < 1:
        raise ValueError(f"repeats must be an integer >= 1; got {repeats!r}.")
    return int(repeats)


def section_command(name: str, quick: bool, repeats: int | None) -> str:
    """The command line that produces one section."""
    parts = ["labeler reproduce-graph", f"--only {name}"]
    if quick:
        parts.append("--quick")
    if repeats is not None:
        parts.append(f"--repeats {repeats}")
    return " ".join(parts)
