"""The session cache: what a session needs at start, kept beside the store as ``.npy`` files.

A session's start costs little once its expensive arrays exist: the features the kernel sees,
the map layout, a Nystrom posterior's landmarks and factor rows, a spectral posterior's factor
and eigenvalues. They are kept in the folder ``<store>.cache/`` next to the SQLite store (the
store itself keeps the session's own record; this folder can be deleted at any time and is
refilled):

* each array is one ``.npy`` file (no pickle: ``np.save(allow_pickle=False)``), read back
  memory-mapped (``np.load(mmap_mode="r")``): a reopened session pages in what it touches and
  does not copy a 2.4 GB factor;
* its name is a content hash of its inputs (:meth:`SessionCache.key`: the source file's bytes
  hash, :func:`source_digest`, the load and preprocessing settings, the seed, and whatever else
  the array depends on), so an array made for other inputs is never read;
* beside each ``.npy`` a small JSON manifest records its shape, dtype, file size and a
  checksum of its data bytes (:func:`checksum`); the array is checked against it on every
  load (size, shape, dtype, checksum), and a mismatch, a missing manifest or an unreadable
  file is a miss: the array is recomputed, the bad files removed, and
  :attr:`SessionCache.messages` says what happened;
* both files are written atomically (:mod:`labeler.atomic`), the manifest last, so a killed
  writer leaves no entry that looks complete.

The checksum finds damaged files (a truncated write, a flipped bit, a zeroed or overwritten
page), not deliberate tampering: the folder is the user's own, as the store is. It is a
position-weighted sum of the data's 64-bit words (:func:`checksum`, "sum64"): one pass at
memory speed, about 3x faster than CRC-32 (``zlib``; ``benchmarks/startup_parts.py``), which
matters since every reopen checks every array it maps (2.7 GB for a 10^6-point session). Manifests written with CRC-32 (``"crc32"``) are still checked with it. ``LABELER_CACHE=off`` turns the cache off (nothing read or written);
``labeler cache`` reports its size and clears it.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from labeler.atomic import atomic_write, atomic_write_text

__all__ = ["SessionCache", "CacheUsage", "source_digest", "cache_folder", "CACHE_VERSION"]

#: Part of every key: a change of what the arrays mean makes every old entry a miss.
CACHE_VERSION = 1
#: Bytes of the data checked per step (the memory map is read in slices this large).
_CRC_BLOCK = 1 << 26
#: The manifest field of :func:`checksum`.
CHECKSUM = "sum64"
_SUFFIX = ".cache"


def cache_folder(store_path) -> Path:
    """The cache folder of a store: ``<store file name>.cache`` beside it."""
    store_path = Path(store_path).expanduser()
    return store_path.with_name(store_path.name + _SUFFIX)


@dataclass(frozen=True)
class CacheUsage:
    """What a cache folder holds: ``entries`` arrays in ``n_bytes`` bytes (manifests included)."""

    folder: Path
    entries: int
    n_bytes: int

    def __str__(self) -> str:
        return f"{self.folder}: {self.entries} arrays, {self.n_bytes / 2**20:,.1f} MiB"


_DIGESTS: dict = {}
_DIGESTS_LOCK = threading.Lock()


def source_digest(source) -> str:
    """A content hash of a data source: SHA-256 of a file's bytes; of a folder, of every file's
    relative path and bytes (sorted); a built-in name stands for itself (with the package's
    version, which fixes its data).

    A file is hashed once per process for a given (size, modification time, inode): ``labeler
    app FILE`` loads it before the session starts and the session asks again.
    """
    path = Path(str(source)).expanduser()
    if not path.exists():
        return f"builtin:{source}:{package_version()}"
    files = [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file())
    stamp = tuple((str(p), *_stat(p)) for p in files)
    with _DIGESTS_LOCK:
        if stamp in _DIGESTS:
            return _DIGESTS[stamp]
    h = hashlib.sha256()
    for p in files:
        if path.is_dir():
            h.update(str(p.relative_to(path)).encode() + b"\0")
        with open(p, "rb") as fh:
            while chunk := fh.read(1 << 24):
                h.update(chunk)
    digest = "sha256:" + h.hexdigest()
    with _DIGESTS_LOCK:
        _DIGESTS[stamp] = digest
    return digest


def package_version() -> str:
    """The installed package's version ("unknown" when it is run from a checkout alone)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("arls-labeler")
    except PackageNotFoundError:
        return "unknown"


def _stat(p: Path) -> tuple:
    st = p.stat()
    return st.st_size, st.st_mtime_ns, st.st_ino


def _crc32(array: np.ndarray) -> int:
    flat = _bytes(array)
    crc = 0
    for a in range(0, flat.shape[0], _CRC_BLOCK):
        crc = zlib.crc32(flat[a:a + _CRC_BLOCK], crc)
    return crc


def _bytes(array: np.ndarray) -> np.ndarray:
    return array.reshape(-1).view(np.uint8) if array.size else np.zeros(0, np.uint8)


def checksum(array: np.ndarray, threads: int = 1) -> str:
    """A checksum of ``array``'s bytes, as a hex string: for each block ``b = 0, 1, ...`` of
    :data:`_CRC_BLOCK` bytes, ``s_b`` = the sum of its little-endian 64-bit words modulo 2^64,
    the bytes after the last whole word as a CRC-32; the result is ``sum_b s_b`` and
    ``sum_b (b + 1) s_b`` (modulo 2^64), plus that CRC-32.

    Any change of one word changes the first sum (a flipped bit adds or removes ``2^k``);
    blocks that trade places change the second. Not a cryptographic hash: it finds damage, not
    tampering (the module docstring). One pass at memory speed.

    Parameters
    ----------
    array : ndarray (C-contiguous; a memory map is read block by block)
    threads : int, default 1
        Threads summing blocks at once (:func:`labeler.runtime.block_threads` when a cached
        array is loaded); the result does not depend on it.

    Returns
    -------
    str
        ``"<16 hex>-<16 hex>-<8 hex>"``.
    """
    flat = _bytes(array)
    n_words = flat.shape[0] // 8
    words = flat[:n_words * 8].view("<u8")
    step = _CRC_BLOCK // 8
    starts = range(0, n_words, step)

    def block_sum(a: int) -> int:
        return int(np.add.reduce(words[a:a + step], dtype=np.uint64))

    threads = min(threads or 1, len(starts))
    if threads > 1:  # blocks summed at once (numpy's sums release the GIL); the same integers
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=threads, thread_name_prefix="labeler-checksum") as pool:
            sums = list(pool.map(block_sum, starts))
    else:
        sums = [block_sum(a) for a in starts]
    total = weighted = 0
    for b, s in enumerate(sums):
        total += s
        weighted += (b + 1) * s
    tail = zlib.crc32(flat[n_words * 8:])
    mask = (1 << 64) - 1
    return f"{total & mask:016x}-{weighted & mask:016x}-{tail:08x}"


def _matches(array: np.ndarray, meta: dict) -> bool:
    """Whether ``array``'s bytes match the manifest's checksum (its own kind, or CRC-32)."""
    if CHECKSUM in meta:
        from labeler.runtime import block_threads

        return checksum(array, threads=block_threads()) == str(meta[CHECKSUM])
    return _crc32(array) == int(meta["crc32"])


class SessionCache:
    """Arrays kept in a folder, named by a hash of their inputs and checked on load.

    Parameters
    ----------
    folder : str or Path
        Created on the first write.
    enabled : bool
        False: every load misses and nothing is written (``LABELER_CACHE=off``).

    Attributes
    ----------
    messages : list of str
        What happened that a user may want to know (a damaged entry recomputed, a full disk).
    hits, misses : list of str
        Names of the arrays read from the cache and of those not found (for tests and the
        start-up benchmark).
    """

    def __init__(self, folder, enabled: bool = True):
        self.folder = Path(folder).expanduser()
        self.enabled = bool(enabled)
        self.messages: list[str] = []
        self.hits: list[str] = []
        self.misses: list[str] = []

    @classmethod
    def for_store(cls, store_path) -> SessionCache:
        """The cache beside ``store_path`` (:func:`cache_folder`), off when the environment
        variable ``LABELER_CACHE`` is ``off`` (or ``0``, ``no``, ``false``)."""
        enabled = os.environ.get("LABELER_CACHE", "on").strip().lower() not in ("off", "0", "no", "false")
        return cls(cache_folder(store_path), enabled=enabled)

    @staticmethod
    def key(**inputs) -> str:
        """SHA-256 of the inputs as canonical JSON (sorted keys; numbers, strings, lists, dicts)
        and :data:`CACHE_VERSION`: the name of the arrays computed from them."""
        text = json.dumps({"version": CACHE_VERSION, **inputs}, sort_keys=True, default=str,
                          separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    def _paths(self, name: str, key: str) -> tuple[Path, Path]:
        stem = f"{name}-{key[:40]}"
        return self.folder / f"{stem}.npy", self.folder / f"{stem}.json"

    def load(self, name: str, key: str, shape=None, dtype=None) -> np.ndarray | None:
        """The array ``name`` made from the inputs hashed to ``key``, memory-mapped read-only,
        or None (not there, the cache off, or damaged: then recomputed by the caller).

        Parameters
        ----------
        shape : tuple, optional
            The shape the caller needs; another shape is a miss.
        dtype : numpy dtype, optional
            Likewise.

        Returns
        -------
        numpy.memmap (read-only) or None
        """
        if not self.enabled:
            return None
        data_path, meta_path = self._paths(name, key)
        if not meta_path.exists():
            self.misses.append(name)
            return None
        problem = None
        try:
            meta = json.loads(meta_path.read_text(encoding="utf-8"))
            if meta.get("key") != key or meta.get("name") != name:
                problem = "its manifest belongs to other inputs"
            elif data_path.stat().st_size != int(meta["file_bytes"]):
                problem = f"the file has {data_path.stat().st_size:,} bytes, not {int(meta['file_bytes']):,}"
            else:
                array = np.load(data_path, mmap_mode="r", allow_pickle=False)
                if list(array.shape) != list(meta["shape"]) or str(array.dtype) != meta["dtype"]:
                    problem = f"it holds {array.dtype} {array.shape}, its manifest says {meta['dtype']} {tuple(meta['shape'])}"
                elif not _matches(array, meta):
                    problem = "its checksum does not match (damaged file)"
        except (OSError, ValueError, KeyError, TypeError) as exc:
            problem = f"it cannot be read ({exc})"
        if problem is not None:
            self.messages.append(f"The cached {name} ({data_path.name}) was not used: {problem}; "
                                 "it is recomputed and stored again.")
            self._remove(data_path, meta_path)
            self.misses.append(name)
            return None
        if (shape is not None and tuple(array.shape) != tuple(shape)) or \
                (dtype is not None and array.dtype != np.dtype(dtype)):
            self.misses.append(name)
            return None
        self.hits.append(name)
        return array

    def save(self, name: str, key: str, array, inputs: dict | None = None) -> Path | None:
        """Keep ``array`` as ``name`` for ``key`` (atomically: the ``.npy`` file, then its
        manifest). A write that fails (full disk, read-only folder) keeps nothing and adds a
        message; the session goes on without the cache.

        Parameters
        ----------
        inputs : dict, optional
            What the key was made from, kept in the manifest for the reader.

        Returns
        -------
        Path or None
            The ``.npy`` file, or None when nothing was written.
        """
        if not self.enabled:
            return None
        array = np.asarray(array)
        if array.dtype.hasobject:
            raise TypeError(f"The session cache keeps numeric arrays only; {name} is {array.dtype}.")
        data_path, meta_path = self._paths(name, key)
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            if meta_path.exists():  # there already (another session on the same inputs)
                return data_path
            atomic_write(data_path, lambda tmp: _save_npy(tmp, array))
            meta = {"name": name, "key": key, "shape": list(array.shape), "dtype": str(array.dtype),
                    "file_bytes": data_path.stat().st_size, CHECKSUM: checksum(array),
                    "inputs": inputs or {}}
            atomic_write_text(meta_path, json.dumps(meta, sort_keys=True, default=str, indent=1))
        except OSError as exc:
            self._remove(data_path, meta_path)
            self.messages.append(f"The {name} could not be kept in the session cache {self.folder} ({exc}); "
                                 "it will be recomputed next time.")
            return None
        return data_path

    def usage(self) -> CacheUsage:
        """How many arrays the folder holds and their bytes on disk."""
        if not self.folder.is_dir():
            return CacheUsage(self.folder, 0, 0)
        files = [p for p in self.folder.iterdir() if p.is_file()]
        return CacheUsage(self.folder, sum(p.suffix == ".npy" for p in files),
                          sum(p.stat().st_size for p in files))

    def clear(self) -> CacheUsage:
        """Remove every array of the folder (and the folder); returns what was removed. A
        session that has arrays memory-mapped keeps reading them (the files go when it closes)."""
        before = self.usage()
        if self.folder.is_dir():
            for p in self.folder.iterdir():
                if p.is_file() and (p.suffix in (".npy", ".json") or p.name.endswith(".part")):
                    p.unlink(missing_ok=True)
            try:
                self.folder.rmdir()
            except OSError:  # something else in it: left alone
                pass
        return before

    @staticmethod
    def _remove(*paths: Path) -> None:
        for p in paths:
            try:
                p.unlink(missing_ok=True)
            except OSError:
                pass


def _save_npy(path: str, array: np.ndarray) -> None:
    with open(path, "wb") as fh:
        np.save(fh, np.ascontiguousarray(array), allow_pickle=False)
