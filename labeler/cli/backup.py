"""``labeler backup OUT [--store F] [--session ID]``: one self-contained copy of the store (or
of one session), consistent while the app runs (:meth:`labeler.store.Store.backup`)."""

from __future__ import annotations

from pathlib import Path

from labeler.cli.common import CLIError, Command

__all__ = ["COMMAND"]


def add_parser(sub):
    bak = sub.add_parser(
        "backup",
        help="copy the store (or one session) to one self-contained SQLite file",
        description="Write a consistent copy of the store, or of one session, to a new file: one "
        "SQLite file without -wal / -shm files, safe to make while the app runs. Open it with "
        "`labeler app --store OUT`.",
    )
    bak.add_argument("out", metavar="OUT", help="the new file (an existing one is refused)")
    bak.add_argument("--store", metavar="FILE", help="store to copy (default $LABELER_STORE or ~/.labeler/labeler.sqlite)")
    bak.add_argument("--session", metavar="ID", help="copy only this session")
    return bak


def run(args) -> int:
    from labeler.store import Store, StoreError, default_store_path

    source = Path(args.store).expanduser() if args.store else default_store_path()
    if not source.is_file():
        raise CLIError(f"no store at {source}; give it with --store FILE.")
    try:
        with Store(source) as store:
            out = store.backup(args.out, session_id=args.session)
            sessions = store.list_sessions()
    except (StoreError, FileExistsError) as exc:
        raise CLIError(str(exc)) from None
    kept = [s for s in sessions if args.session in (None, s.id)]
    print(f"Wrote {out}: {len(kept)} session(s), {sum(s.n_labeled for s in kept)} labels, one "
          "self-contained SQLite file (open it with --store).")
    return 0


COMMAND = Command("backup", add_parser, run, warnings_as_lines=False)
