"""The integrity chain of schema version 3: damaged events are named, the session is offered
read-only up to the damage, and no flipped byte of a store file changes a session silently.

The byte-flip test flips one bit of every byte of a small store file (one file per flip) and
opens the session as the labeller does: list the sessions, read the record (checksum), check
the cached arrays (digests), read and verify the event log (chain and head) and fold it. Each
flip must end in one of two ways:

* **detected**: a :class:`~labeler.store.StoreError` with what to do (damaged, unknown
  session, newer version; the chain's :class:`~labeler.store.ChainBrokenError` names the
  event);
* **harmless**: the session reads back exactly as written: the same record, events, net
  labels and cached arrays. A recorded query or risk may be missing (a derived value whose row
  fails its digest is left out and computed again by the same rule), never different.

Which bytes can be harmless, and why (the test classifies every offset by the page it is in,
read from SQLite's ``dbstat`` and the b-tree page headers): SQLite reads neither the
unallocated space between a page's cell pointers and its cells, nor freed blocks or free
pages, nor several header fields (the change counter, the "version valid for" number, the
SQLite version that wrote the file, reserved bytes); a b-tree *internal* (interior) page holds copies of
keys used only to navigate, and the file header's and page headers' hints (e.g. the count of
fragmented bytes) are recomputed. A flip there leaves every stored value as it was. Every
flip in a cell of the ``events`` table's leaf pages (or their overflow pages) must be
detected.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from labeler.session import LabelingSession
from labeler.store import (
    Accept,
    ChainBrokenError,
    Label,
    LogState,
    Relabel,
    Setting,
    Skip,
    Store,
    StoreError,
    StoreReadOnlyError,
    Undo,
    UnknownSessionError,
    group_actions,
    make_events,
)


def build_small_store(path: Path) -> str:
    """A store of one session with every kind of row: initial labels, labels of each source,
    a skip, a selection, a relabel, two settings in one action, an undo, a cached array, a
    recorded query and risks; then rewritten with 1024-byte pages (a small file)."""
    with Store(path) as st:
        sid = st.create_session(
            name="flip", dataset="moons", config={"classes": ["a", "b"], "lam": 0.5},
            arrays={"layout-pca": np.arange(8.0).reshape(4, 2)},
            events=make_events([Accept(0, "a", "initial"), Accept(1, "b", "initial")], after=0))
        n = 2
        for drafts in ([Label(2, "a", "queried")], [Label(3, "b", "chosen")], [Skip(4)],
                       [Accept(5, "a", "selection"), Accept(6, "b", "selection")],
                       [Relabel(2, "b", was="a")],
                       [Setting("lam", 0.25), Setting("auto_tune", {"lam": False, "width": True})],
                       [Undo(8)]):
            n = st.append(sid, drafts, after=n)[-1].seq
        st.put_query(sid, n, 9)
        st.put_risks(sid, {3: 0.25, 4: 0.125})
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode = DELETE")
    con.execute("PRAGMA page_size = 1024")  # an event fits in its page: no overflow
    con.execute("VACUUM")
    con.execute("PRAGMA journal_mode = WAL")
    con.close()
    return sid


def read_session(path: Path, sid: str):
    """What opening the session reads, checked as opening checks it."""
    with Store(path) as st:
        listed = [info.id for info in st.list_sessions()]
        record = st.session(sid)
        st.check_arrays(sid)
        events = st.events(sid)
        log = LogState(record.config["classes"], 20)
        for group in group_actions(events):
            log.apply(group)
        array = st.get_array(sid, "layout-pca")
        return {"listed": listed, "record": record, "events": events, "labels": dict(log.labels),
                "array": None if array is None else (array.dtype.str, array.shape, array.tobytes()),
                "query": st.get_query(sid, len(events)), "risks": st.risks(sid)}


def regions(path: Path) -> list[str]:
    """The region of every byte of the file: "header", "<table> <leaf|interior|overflow>
    <page header|pointers|unallocated|cells>", or "free page"."""
    con = sqlite3.connect(path)
    pages = {pageno: (name, kind) for name, pageno, kind in
             con.execute("SELECT name, pageno, pagetype FROM dbstat")}
    page_size = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    raw = path.read_bytes()
    out = []
    for pageno in range(1, len(raw) // page_size + 1):
        start = (pageno - 1) * page_size
        if pageno not in pages:
            out += ["free page"] * page_size
            continue
        name, kind = pages[pageno]
        if kind == "overflow":
            out += [f"{name} overflow"] * page_size
            continue
        base = start + (100 if pageno == 1 else 0)
        header = 12 if raw[base] in (2, 5) else 8
        n_cells = int.from_bytes(raw[base + 3:base + 5], "big")
        content = int.from_bytes(raw[base + 5:base + 7], "big") or 65536
        pointers_end = base + header + 2 * n_cells
        for off in range(start, start + page_size):
            if off < base:
                where = "header"
            elif off < base + header:
                where = f"{name} {kind} page header"
            elif off < pointers_end:
                where = f"{name} {kind} pointers"
            elif off < start + content:
                where = f"{name} {kind} unallocated"
            else:
                where = f"{name} {kind} cells"
            out.append(where)
    return out


def flip_outcome(raw: bytes, offset: int, folder: Path, sid: str, reference: dict) -> str:
    """"detected", "harmless" or "CHANGED: ..." for one bit flipped at ``offset``."""
    damaged = bytearray(raw)
    damaged[offset] ^= 1 << (offset % 8)
    copy = folder / "flip.sqlite"
    copy.write_bytes(bytes(damaged))
    try:
        try:
            got = read_session(copy, sid)
        except StoreError as exc:
            assert isinstance(exc, UnknownSessionError) or any(
                w in str(exc) for w in ("backup", "Restore", "another store", "Upgrade")), exc
            return "detected"
        # every listed session opens intact or with a named error
        for other in got["listed"]:
            if other != sid:
                with pytest.raises(StoreError):
                    read_session(copy, other)
        same = all(got[k] == reference[k] for k in ("record", "events", "labels", "array"))
        derived_ok = got["query"] in (None, reference["query"]) and \
            got["risks"].items() <= reference["risks"].items()
        if same and derived_ok:
            return "harmless"
        return f"CHANGED: {[k for k in reference if got[k] != reference[k]]}"
    finally:
        for p in folder.glob("flip.sqlite*"):
            p.unlink()


@pytest.fixture(scope="module")
def small_store(tmp_path_factory):
    folder = tmp_path_factory.mktemp("small")
    path = folder / "small.sqlite"
    sid = build_small_store(path)
    return path, sid, read_session(path, sid), regions(path)


@pytest.fixture
def flip_folder(tmp_path):
    """A folder in memory where there is one (each flip writes and fsyncs a file)."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    folder = Path(tempfile.mkdtemp(dir=shm, prefix="flips-"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _flip_every(offsets, small_store, tmp_path):
    path, sid, reference, where = small_store
    raw = path.read_bytes()
    table: Counter = Counter()
    changed = []
    for offset in offsets:
        outcome = flip_outcome(raw, offset, tmp_path, sid, reference)
        table[(where[offset], outcome)] += 1
        if outcome.startswith("CHANGED"):
            changed.append((offset, where[offset], outcome))
    assert not changed, changed[:10]  # never a silently changed session
    missed = {w: n for (w, outcome), n in table.items()
              if w in ("events leaf cells", "events overflow") and outcome != "detected"}
    assert not missed, missed  # every flip in an event is detected
    return table


def test_every_byte_of_the_events_and_a_sample_of_the_rest_flipped(small_store, flip_folder):
    """Quick: every byte of the events' cells (the stored events), every 32nd byte elsewhere."""
    path, sid, reference, where = small_store
    offsets = [k for k in range(len(where)) if where[k].startswith(("events leaf cells", "events overflow"))
               or k % 32 == 0]
    table = _flip_every(offsets, small_store, flip_folder)
    assert sum(n for (w, o), n in table.items() if o == "detected") > len(offsets) // 5


@pytest.mark.slow
def test_every_byte_flipped(small_store, flip_folder):
    path, sid, reference, where = small_store
    table = _flip_every(range(len(where)), small_store, flip_folder)
    harmless = {w for (w, o) in table if o == "harmless"}
    # the chain's rows are never harmless: events (cells and overflow) and the heads
    assert not harmless & {"events leaf cells", "events overflow", "heads leaf cells"}, table
    # the rest lies where no value of the session is kept, or is a key the b-tree search still
    # finds, a derived value left out (queries, risks), schema text SQLite tolerates (e.g. a
    # constant of a CHECK), or the unused end of an overflow page (see the module docstring)
    assert all(w in ("header", "free page") or w.endswith(("unallocated", "page header", "pointers", "overflow"))
               or "internal" in w or w.split()[0] in ("sqlite_schema", "sessions", "sqlite_autoindex_sessions_1",
                                                      "queries", "risks", "arrays")
               for w in harmless), harmless


def test_one_bit_of_a_stored_label_is_named_and_the_session_opens_read_only_up_to_it(small_store, tmp_path):
    path, sid, reference, _ = small_store
    copy = tmp_path / "label.sqlite"
    shutil.copy(path, copy)
    con = sqlite3.connect(copy)
    # 'a' -> 'c' is one bit (0x61 -> 0x63): the label of point 5 in event 6 (a selection)
    con.execute("UPDATE events SET label = 'c' WHERE seq = 6")
    con.commit()
    con.close()
    with pytest.raises(ChainBrokenError, match="damaged from event 6 on") as caught:
        Store(copy).events(sid)
    exc = caught.value
    assert exc.first_bad == 6 and [e.seq for e in exc.good_events] == [1, 2, 3, 4, 5]
    assert exc.good_events == reference["events"][:5]


def _session_store(tmp_path) -> tuple[Path, str]:
    from labeler.session import SessionConfig

    path = tmp_path / "s.sqlite"
    cfg = SessionConfig(dataset="moons", dataset_options={"n": 60}, seed=3)
    with LabelingSession.create(path, cfg) as s:
        for _ in range(6):
            q = s.next_query()
            s.label(q, str(s.dataset.y[q]), expected_query=q)
        return path, s.id


def test_a_damaged_session_opens_read_only_up_to_the_damage_and_exports(tmp_path):
    path, sid = _session_store(tmp_path)
    with LabelingSession.open(path, sid) as s:
        labels = dict(s.labels)
    con = sqlite3.connect(path)
    con.execute("UPDATE events SET idx = idx + 1 WHERE seq = 4")  # the 4th label moved
    con.commit()
    con.close()
    with pytest.raises(ChainBrokenError, match="event 4") as caught:
        LabelingSession.open(path, sid)
    assert caught.value.first_bad == 4
    with LabelingSession.open(path, sid, up_to_damage=True) as s:
        assert s.read_only and s.damage.first_bad == 4
        assert s.labels == dict(list(labels.items())[:3])
        with pytest.raises(StoreReadOnlyError):
            q = s.next_query()
            s.label(q, s.classes[0])
        out = s.export(tmp_path / "prefix.csv")
        assert len(out.read_text().strip().splitlines()) == 1 + 3  # header and the three labels


def test_a_missing_last_event_is_found_by_the_head(tmp_path):
    path, sid = _session_store(tmp_path)
    con = sqlite3.connect(path)
    con.execute("DELETE FROM events WHERE seq = (SELECT max(seq) FROM events)")
    con.commit()
    con.close()
    with pytest.raises(ChainBrokenError, match="log ends at event 5 but its head says 6"):
        LabelingSession.open(path, sid)


def test_the_app_shows_a_damaged_session_read_only_up_to_the_damage(tmp_path, monkeypatch):
    from streamlit.testing.v1 import AppTest

    from labeler.ui.registry import REGISTRY

    path, sid = _session_store(tmp_path)
    con = sqlite3.connect(path)
    con.execute("UPDATE events SET label = CASE label WHEN '0' THEN '1' ELSE '0' END WHERE seq = 4")
    con.commit()
    con.close()
    app = str(Path(__file__).resolve().parents[1] / "labeler" / "app.py")
    monkeypatch.setenv("LABELER_STORE", str(path))
    monkeypatch.setenv("LABELER_DATA", "moons")
    monkeypatch.setenv("LABELER_DATA_OPTIONS", '{"n": 60}')
    monkeypatch.setenv("LABELER_SESSION", sid)
    REGISTRY.clear()
    try:
        at = AppTest.from_file(app, default_timeout=120)
        at.run()
        assert not at.exception, at.exception
        assert at.session_state["session_id"] == sid
        assert any("damaged from event 4" in w.value for w in at.warning), [w.value for w in at.warning]
        session, _ = REGISTRY.get(path, sid)
        assert session.read_only and session.n_labeled == 3
    finally:
        REGISTRY.clear()
