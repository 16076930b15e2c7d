"""The integrity chain of the event log, and the digests of the store's other rows.

SQLite keeps no checksums of the data it stores: a flipped bit in a page is read back as a
different label, index or setting. Since schema version 3 every event stores

    hash_k = SHA-256(hash_{k-1} || canonical bytes of event k)

with ``hash_0 = SHA-256("labeler event chain" || session id)`` (:func:`genesis`), and the
table ``heads`` keeps each session's last seq and hash. Reading a session's events
recomputes the chain; the first event whose stored hash differs from the recomputed one is
the first damaged event (:class:`~labeler.store.faults.ChainBrokenError` carries the good
events before it). A missing tail is caught by ``heads``.

The canonical bytes of an event (:func:`event_bytes`) are the compact JSON list of its stored
fields: session id, seq, action, kind, point index, label, source, the stored JSON text of its
value (byte for byte, not re-serialised) and the timestamp. JSON lists are unambiguous: no two
different events have the same bytes.

What the chain does not protect: it detects accidental damage, not a deliberate rewrite; who
can write the file can recompute every hash after an edit (no key is involved).
"""

import hashlib
import json

_GENESIS = b"labeler event chain\x00"
_NPY_SUM = b"LBLSHA256"  # trailer of a stored .npy blob: marker + SHA-256 of the .npy bytes


def genesis(session_id: str) -> bytes:
    """The hash "before" a session's first event (32 bytes); it binds the chain to the
    session's id, so events moved to another session break the chain."""
    return hashlib.sha256(_GENESIS + str(session_id).encode("utf-8", "surrogatepass")).digest()


def event_bytes(session_id, seq, action, kind, index, label, source, value_text, timestamp) -> bytes:
    """The canonical bytes of an event (see the module docstring)."""
    fields = [session_id, seq, action, kind, index, label, source, value_text, timestamp]
    return json.dumps(fields, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def event_hash(prev: bytes, session_id, seq, action, kind, index, label, source, value_text,
               timestamp) -> bytes:
    """``SHA-256(prev || event_bytes(...))``: the stored ``hash`` of an event (32 bytes)."""
    return hashlib.sha256(bytes(prev) + event_bytes(session_id, seq, action, kind, index, label,
                                                    source, value_text, timestamp)).digest()


def row_digest(*fields) -> bytes:
    """A 16-byte digest of a row of ``queries`` or ``risks`` (a derived value: a damaged one
    is left out and recomputed, never used)."""
    return hashlib.sha256(json.dumps(list(fields), ensure_ascii=True, separators=(",", ":"))
                          .encode("ascii")).digest()[:16]


def record_checksum(sid: str, name: str, dataset: str, created: str, config: dict) -> str:
    """SHA-256 (hex) of a session's record (id, name, data set, creation time, configuration)."""
    text = json.dumps([sid, name, dataset, created, config], allow_nan=False, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def with_npy_checksum(data: bytes) -> bytes:
    """``.npy`` bytes followed by the marker and their SHA-256 (``np.load`` ignores trailing
    bytes)."""
    return bytes(data) + _NPY_SUM + hashlib.sha256(data).digest()


def split_npy_checksum(blob: bytes) -> tuple[bytes, bytes | None]:
    """``(npy bytes, stored SHA-256 or None when the blob has no trailer)``."""
    blob = bytes(blob)
    k = len(_NPY_SUM) + 32
    if len(blob) >= k and blob[-k:-32] == _NPY_SUM:
        return blob[:-k], blob[-32:]
    return blob, None
