"""A map layout computed in a process of its own: ``python -m labeler.data.layout_job``.

The app computes a slow layout (UMAP, t-SNE) in another process (UMAP's numba code holds the
GIL for seconds at a time; :mod:`labeler.ui.startup`). That process is this module run as a
program, not a ``multiprocessing`` worker: a spawned worker re-imports the parent's main
script (``multiprocessing.spawn`` runs the ``__main__`` module's file again as
``__mp_main__``), and under ``streamlit run`` that is the whole app (hundreds of "missing
ScriptRunContext" warnings, about 1 GB for a 10^5-point pool). This module imports numpy,
:mod:`labeler.data.layout` and what the layout method needs; never streamlit, pandas or the app.

Usage::

    python -m labeler.data.layout_job FEATURES.npy OUT.npy METHOD SEED [PARENT_PID]

``FEATURES.npy`` is read memory-mapped (the session cache's features file, or a temporary
copy), the layout goes to ``OUT.npy`` atomically (written beside it, then renamed: a killed
process leaves no ``OUT.npy``). Exit status 0 when it is written; 1 with the error's type and
message as the last line of stderr (``LayoutError: ...``), 2 for bad arguments. With
``PARENT_PID`` the process watches its parent and exits (status 3) when the parent is gone,
so a server that was killed leaves no layout computing on.
"""

from __future__ import annotations

import os
import sys
import threading
import time

__all__ = ["main", "run_layout", "watch_parent", "PARENT_GONE_STATUS"]

#: Exit status of a layout process whose parent is gone.
PARENT_GONE_STATUS = 3
#: Seconds between two looks at the parent.
_WATCH_S = 1.0


def watch_parent(parent_pid: int, poll_s: float = _WATCH_S) -> threading.Thread:
    """Exit this process (status :data:`PARENT_GONE_STATUS`) as soon as ``parent_pid`` is no
    longer its parent (it died: the process was handed to another parent); checked every
    ``poll_s`` seconds by a daemon thread, which is returned."""
    def watch():
        while os.getppid() == parent_pid:
            time.sleep(poll_s)
        os._exit(PARENT_GONE_STATUS)  # no clean-up to do: the output is written atomically or not at all

    thread = threading.Thread(target=watch, name="labeler-layout-watch", daemon=True)
    thread.start()
    return thread


def run_layout(features_path: str, out_path: str, method: str, seed: int) -> None:
    """Compute the layout of the features in ``features_path`` (an ``.npy`` file of shape
    (n_samples, n_features)) and write it, of shape (n_samples, 2) float64, to ``out_path``
    atomically."""
    import numpy as np

    from labeler.data.layout import compute_layout

    X = np.load(features_path, mmap_mode="r", allow_pickle=False)
    Z = compute_layout(np.asarray(X), method=method, seed=seed)
    part = f"{out_path}.part.npy"
    try:
        with open(part, "wb") as f:
            np.save(f, np.ascontiguousarray(Z, dtype=np.float64), allow_pickle=False)
            f.flush()
            os.fsync(f.fileno())
        os.replace(part, out_path)
    finally:
        if os.path.exists(part):
            os.remove(part)


def main(argv: list[str] | None = None) -> int:
    """The program: parse ``argv`` (see the module's usage), compute, write; the exit status."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (4, 5):
        print("usage: python -m labeler.data.layout_job FEATURES.npy OUT.npy METHOD SEED [PARENT_PID]",
              file=sys.stderr)
        return 2
    features_path, out_path, method, seed = args[:4]
    if len(args) == 5:
        watch_parent(int(args[4]))
    try:
        run_layout(features_path, out_path, method, int(seed))
    except Exception as exc:  # the parent shows the last line of stderr
        print(f"{type(exc).__name__}: {exc}".replace("\n", " "), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
