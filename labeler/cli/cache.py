"""``labeler cache [--store F] [--clear]``: the session cache beside the store
(:mod:`labeler.session.cache`): its size on disk, and clearing it.

The cache holds what a session needs at start (prepared features, layouts, Nystrom landmarks
and factor rows, spectral factors, kNN neighbours) as ``.npy`` files in ``<store>.cache/``;
clearing it loses nothing (every array is recomputed, or read from the store, when a session
next needs it; the first start after it is slow again).
"""

from __future__ import annotations

from pathlib import Path

from labeler.cli.common import Command

__all__ = ["COMMAND"]


def add_parser(sub):
    cache = sub.add_parser(
        "cache",
        help="show (or clear) the session cache beside the store",
        description="Show how many arrays the session cache beside the store holds and their size on disk "
        "(the folder <store>.cache); --clear removes them (they are recomputed when needed). "
        "LABELER_CACHE=off runs the app without it.",
    )
    cache.add_argument("--store", metavar="FILE", help="the store (default $LABELER_STORE or ~/.labeler/labeler.sqlite)")
    cache.add_argument("--clear", action="store_true", help="remove every cached array")
    return cache


def run(args) -> int:
    from labeler.session.cache import SessionCache, cache_folder
    from labeler.store import default_store_path

    store = Path(args.store).expanduser() if args.store else default_store_path()
    cache = SessionCache(cache_folder(store))
    if args.clear:
        gone = cache.clear()
        print(f"Cleared the session cache {gone.folder}: {gone.entries} arrays, "
              f"{gone.n_bytes / 2**20:,.1f} MiB freed.")
    else:
        print(f"Session cache {cache.usage()} (clear it with `labeler cache --clear`).")
    return 0


COMMAND = Command("cache", add_parser, run, warnings_as_lines=False)
