"""Cost of the event log's integrity chain (schema version 3) when a session's events are read.

For a session of n events (single labels, one action each, written through the store), the
table prints the seconds to read the events with the chain checked (``Store.events``, what
opening a session does) and to read the same rows without it (the rows decoded as events, no
hash), and the share of the time the chain takes; plus the seconds to append one action
(one transaction: the event, its hash, the head).

Usage: ``python benchmarks/store_chain.py [--n 1000 10000 50000]`` (best of 3; the machine is
shared: read the ratio, taken in the same run).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from labeler.store import Label, Store, make_events


def _best(fn, repeat=3):
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return min(out)


def _plain(st: Store, sid: str):
    with st._snapshot() as con:
        rows = con.execute("SELECT seq, action, kind, idx, label, source, value, timestamp FROM events "
                           "WHERE session_id = ? ORDER BY seq", (sid,)).fetchall()
    return [st._event(sid, row) for row in rows]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1000, 10000, 50000])
    args = parser.parse_args(argv)
    print(f"{'events':>8} {'checked (s)':>12} {'unchecked (s)':>14} {'chain share':>12} {'append (ms)':>12}")
    for n in args.n:
        with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "s.sqlite") as st:
            events = []
            for k in range(n):  # n actions of one label each, as labelling writes them
                events += make_events([Label(k, "a")], after=k, timestamp="2026-01-01T00:00:00+00:00")
            sid = st.create_session(name="bench", dataset="d", config={}, events=events)
            checked = _best(lambda: st.events(sid))
            plain = _best(lambda: _plain(st, sid))
            append = _best(lambda: st.append(sid, [Label(n + 10 ** 7, "a")], after=st.n_events(sid)), repeat=5)
            share = (checked - plain) / checked
            print(f"{n:>8} {checked:>12.3f} {plain:>14.3f} {share:>11.0%} {1000 * append:>12.2f}")


if __name__ == "__main__":
    main()
