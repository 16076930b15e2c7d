"""Reading CSV and Parquet files within the memory the machine has.

``pandas.read_csv`` of a whole file holds the parser's buffers and the typed columns at the
same time, about twice the final table; the table's numbers then become the float64 features
(another 8 bytes per number), so a file of short numbers ("0,1,3,...") needed more than ten
times its size. Here a file is

1. estimated before it is parsed: a sample of its first rows gives the memory per row of the
   table and its numeric columns, a count of its line breaks the number of rows (an
   over-estimate when quoted fields hold line breaks). What loading needs -- the
   table, its numbers as 8-byte features, one chunk being parsed -- is compared with
   :func:`labeler.memory.available_memory`, and a file that does not fit is refused with its
   size and how many rows would fit (:class:`~labeler.data.dataset.DatasetError`);
   Before that, one scan of the file's bytes gives its line breaks, its longest line and the
   fields of its header: a file too wide (:data:`MAX_COLUMNS`) or whose longest line alone
   would not parse within the memory available is refused before pandas reads a byte, so
   the peak is bounded whatever the line structure (a file without line breaks is one line);
2. read in chunks of about :data:`CHUNK_BYTES` of text, each numeric column written into one
   array allocated once (text columns are joined at the end; pandas' own rules unify the
   chunks' types, as in a whole-file read), so the peak is the final table plus one chunk.

``benchmarks/load_memory.py`` measures the peak memory of both ways.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from labeler import memory
from labeler.data.dataset import DatasetError

__all__ = ["CHUNK_BYTES", "LOAD_FRACTION", "MAX_COLUMNS", "TableEstimate", "LineScan", "estimate_csv",
           "estimate_parquet", "check_fits", "check_line_structure", "scan_lines", "read_csv_bounded"]

#: Text parsed at once when a CSV file is read in chunks (measured on 100 MB of short
#: numbers: 4 MiB chunks read 10 % slower than one whole-file read, 16 MiB ones as fast but
#: leave about 80 MB more in the process).
CHUNK_BYTES = 4 << 20
#: Memory a chunk being parsed takes besides the table, per byte of its text (measured: about
#: 6-8 for short numbers; see benchmarks/load_memory.py).
CHUNK_OVERHEAD = 8
#: Fraction of the available memory loading a table may take.
LOAD_FRACTION = 0.9
_SAMPLE_ROWS = 1000
_BLOCK_BYTES = 8 << 20
#: Memory pandas takes per byte of one line it parses (a line is parsed whole, however long;
#: measured about 6-10 for short numbers).
LINE_OVERHEAD = 10
#: Memory pandas takes per column of a table besides its values (measured: about 1.4 KiB per
#: column of a one-row table of 50,000 columns).
COLUMN_OVERHEAD = 2048
#: Widest table read: a header of more fields than this is refused before parsing (pandas
#: needs minutes and gigabytes for a million columns; a file without line breaks is one line).
MAX_COLUMNS = 100_000


@dataclass(frozen=True)
class TableEstimate:
    """What loading a table needs.

    Attributes
    ----------
    rows : int
        Rows (estimated for a CSV file).
    columns, numeric_columns : int
        All columns, and those that may become float64 features.
    row_bytes : float
        Memory per row: the table's columns plus 8 bytes per numeric column.
    fixed_bytes : int
        Memory that does not grow with the rows (a chunk being parsed).
    text_row_bytes : float
        Bytes of text per row (CSV), to size the chunks.
    """

    rows: int
    columns: int
    numeric_columns: int
    row_bytes: float
    fixed_bytes: int
    text_row_bytes: float = 0.0

    @property
    def need_bytes(self) -> int:
        """Peak memory of loading: ``rows * row_bytes + fixed_bytes``."""
        return int(self.rows * self.row_bytes) + self.fixed_bytes


def _numeric_count(frame: pd.DataFrame) -> int:
    return sum(
        pd.api.types.is_numeric_dtype(frame[c]) or pd.api.types.is_bool_dtype(frame[c]) for c in frame.columns
    )


def estimate_csv(path: Path, sample: pd.DataFrame, chunk_bytes: int | None = None,
                 lines: int | None = None, scan: LineScan | None = None) -> TableEstimate:
    """Estimate what reading the CSV file ``path`` needs from ``sample``, its first rows.

    The rows are the file's line breaks (``lines``, counted when not given) less the header:
    exact for a plain CSV file, an over-estimate when quoted fields hold line breaks. The
    fixed part is a chunk being parsed, or the longest line if that takes more
    (:data:`LINE_OVERHEAD`), plus :data:`COLUMN_OVERHEAD` per column.
    """
    size = path.stat().st_size
    chunk_bytes = CHUNK_BYTES if chunk_bytes is None else int(chunk_bytes)
    scan = scan_lines(path) if scan is None else scan
    lines = scan.lines if lines is None else lines
    bytes_per_line = size / max(lines, 1)
    rows = max(len(sample), lines - 1 + (size > 0 and not _ends_with_newline(path)))
    n_sample = max(len(sample), 1)
    table_row = float(sample.memory_usage(index=False, deep=True).sum()) / n_sample
    numeric = _numeric_count(sample)
    return TableEstimate(rows=rows, columns=sample.shape[1], numeric_columns=numeric,
                         row_bytes=table_row + 8.0 * numeric,
                         fixed_bytes=max(CHUNK_OVERHEAD * min(chunk_bytes, size), LINE_OVERHEAD * scan.longest)
                         + COLUMN_OVERHEAD * sample.shape[1],
                         text_row_bytes=bytes_per_line)


def estimate_parquet(path: Path) -> TableEstimate:
    """Estimate what reading the Parquet file ``path`` needs from its metadata (nothing else is read).

    The table is counted twice (Arrow's columns, then pandas'), plus 8 bytes per number.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    meta = pq.ParquetFile(path).metadata
    schema = meta.schema.to_arrow_schema()
    numeric = sum(
        pa.types.is_integer(f.type) or pa.types.is_floating(f.type) or pa.types.is_boolean(f.type) for f in schema
    )
    raw = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    rows = int(meta.num_rows)
    return TableEstimate(rows=rows, columns=len(schema), numeric_columns=numeric,
                         row_bytes=2.0 * raw / max(rows, 1) + 8.0 * numeric, fixed_bytes=0)


def _ends_with_newline(path: Path) -> bool:
    with open(path, "rb") as fh:
        fh.seek(-1, 2)
        return fh.read(1) == b"\n"


def check_fits(path: Path, estimate: TableEstimate, available: int | None = None) -> None:
    """Refuse a table whose loading needs more than :data:`LOAD_FRACTION` of the available memory.

    Parameters
    ----------
    path : Path
        The file (named in the message).
    estimate : TableEstimate
    available : int, optional
        Bytes available; default :func:`labeler.memory.available_memory` (no check when unknown).

    Raises
    ------
    DatasetError
        With the file's size, rows and columns, the memory it needs and has, and how many
        rows would fit.
    """
    avail = memory.available_memory() if available is None else available
    if avail is None or estimate.need_bytes <= LOAD_FRACTION * avail:
        return
    fit = max(0, int((LOAD_FRACTION * avail - estimate.fixed_bytes) / max(estimate.row_bytes, 1.0)))
    fmt = memory.format_bytes
    raise DatasetError(
        f"{path.name} ({fmt(path.stat().st_size)} on disk, about {estimate.rows:,} rows x "
        f"{estimate.columns} columns) needs about {fmt(estimate.need_bytes)} of memory to load (the "
        f"table, and its {estimate.numeric_columns} numeric column(s) as 8-byte features), but only "
        f"{fmt(avail)} is available now. About {fit:,} rows fit: load a part of the file (e.g. "
        f"its first rows: head -n {fit + 1} {path.name} > part.csv), drop the columns you do not "
        "need, or free memory (close other sessions or programs)."
    )


def read_csv_bounded(path: Path, *, chunk_bytes: int | None = None, available: int | None = None) -> pd.DataFrame:
    """Read a CSV file after checking it fits (:func:`check_fits`), in chunks (see the module docstring).

    Parameters
    ----------
    path : Path
    chunk_bytes : int, optional
        About how much text is parsed at once (default :data:`CHUNK_BYTES`).
    available : int, optional
        Bytes available (default: read from the machine).

    Returns
    -------
    pandas.DataFrame
        The same table as ``pandas.read_csv(path)``. Numeric columns are written chunk by chunk
        into one array each, allocated once for the file's line count; a column whose type
        changes between chunks takes the type ``pandas.concat`` gives the two (integers and
        floats give float64, numbers and text object), as a whole-file read does.

    Raises
    ------
    DatasetError
        The file does not fit in memory. pandas' own errors (empty or malformed file) pass
        through.
    """
    chunk_bytes = CHUNK_BYTES if chunk_bytes is None else int(chunk_bytes)
    scan = scan_lines(path)
    check_line_structure(path, scan, available)  # before pandas parses a line
    lines = scan.lines
    sample = pd.read_csv(path, nrows=_SAMPLE_ROWS)
    estimate = estimate_csv(path, sample, chunk_bytes, lines=lines, scan=scan)
    check_fits(path, estimate, available)
    if path.stat().st_size <= chunk_bytes:
        return pd.read_csv(path)  # one chunk
    rows_per_chunk = max(100, int(chunk_bytes / max(estimate.text_row_bytes, 1.0)))
    capacity = max(lines, 1)  # data rows <= line breaks (header line, last line without one)
    columns: dict | None = None
    rows = 0
    for chunk in pd.read_csv(path, chunksize=rows_per_chunk):
        if columns is None:
            columns = {c: _Column(capacity) for c in chunk.columns}
        for c, col in columns.items():
            col.append(chunk[c], rows)
        rows += len(chunk)
        del chunk
    if columns is None:
        return sample
    return pd.DataFrame({c: col.finish(rows) for c, col in columns.items()}, copy=False)


class _Column:
    """One column of a CSV file read in chunks: a preallocated numpy array while every chunk is
    numeric, else the chunks' pieces joined by ``pandas.concat`` at the end."""

    def __init__(self, capacity: int):
        self.capacity = capacity
        self.array: np.ndarray | None = None
        self.pieces: list | None = None

    def append(self, values: pd.Series, start: int) -> None:
        dtype = values.dtype
        if self.pieces is None and _plain_numeric(dtype):
            if self.array is None:
                self.array = np.empty(self.capacity, dtype=dtype)
            elif dtype != self.array.dtype:
                common = _common_dtype(self.array.dtype, dtype)
                if _plain_numeric(common):
                    self.array = self.array.astype(common)
                else:
                    self._to_pieces(start)
            if self.pieces is None:
                self.array[start:start + len(values)] = values.to_numpy()
                return
        elif self.pieces is None:
            self._to_pieces(start)
        self.pieces.append(values.reset_index(drop=True).copy())

    def _to_pieces(self, filled: int) -> None:
        self.pieces = [] if self.array is None else [pd.Series(self.array[:filled].copy())]
        self.array = None

    def finish(self, rows: int):
        if self.pieces is None:
            values = self.array[:rows]
            return values.copy() if rows < 0.9 * self.capacity else values
        return self.pieces[0] if len(self.pieces) == 1 else pd.concat(self.pieces, ignore_index=True)


def _plain_numeric(dtype) -> bool:
    """A numpy integer, float or bool dtype (what a preallocated array can hold)."""
    return isinstance(dtype, np.dtype) and dtype.kind in "biuf"


def _common_dtype(a: np.dtype, b: np.dtype):
    """The dtype ``pandas.concat`` gives a column of dtype ``a`` followed by one of dtype ``b``."""
    return pd.concat([pd.Series(np.zeros(1, a)), pd.Series(np.zeros(1, b))], ignore_index=True).dtype


def _count_lines(path: Path) -> int:
    """Line breaks in the file (read in blocks; memory does not grow with the file)."""
    return scan_lines(path).lines


@dataclass(frozen=True)
class LineScan:
    """The line structure of a text file: line breaks, the longest line (bytes), the fields of
    the first line (its commas + 1; quoted commas counted too: an over-estimate)."""

    lines: int
    longest: int
    header_fields: int


def scan_lines(path: Path) -> LineScan:
    """Scan ``path`` in blocks of :data:`_BLOCK_BYTES` (memory does not grow with the file)."""
    lines = longest = 0
    header_commas, in_header = 0, True
    current = 0  # length of the line being read
    with open(path, "rb") as fh:
        while block := fh.read(_BLOCK_BYTES):
            buf = np.frombuffer(block, dtype=np.uint8)
            breaks = np.flatnonzero(buf == 10)
            if in_header:
                end = int(breaks[0]) if breaks.size else len(block)
                header_commas += block.count(b",", 0, end)
                in_header = not breaks.size
            if breaks.size:
                lengths = np.diff(breaks, prepend=-1)
                lengths[0] += current
                longest = max(longest, int(lengths.max()))
                current = len(block) - int(breaks[-1]) - 1
            else:
                current += len(block)
            lines += int(breaks.size)
    return LineScan(lines=lines, longest=max(longest, current), header_fields=header_commas + 1)


def check_line_structure(path: Path, scan: LineScan, available: int | None = None) -> None:
    """Refuse, before pandas parses anything, a CSV file too wide or with a line too long.

    pandas parses a line whole, and a table's columns cost memory of their own, so a file
    without line breaks (one line of a million fields) used to take ten times its size and
    minutes. The bound: at most :data:`MAX_COLUMNS` fields in the header, and the longest
    line's parse (:data:`LINE_OVERHEAD` per byte) plus the columns' overhead
    (:data:`COLUMN_OVERHEAD` each) within :data:`LOAD_FRACTION` of the available memory.

    Raises
    ------
    DatasetError
        Naming the columns or the line length, and the fix.
    """
    fmt = memory.format_bytes
    if scan.header_fields > MAX_COLUMNS:
        raise DatasetError(
            f"{path.name} has about {scan.header_fields:,} fields in its first line "
            f"({'and no line break' if scan.lines == 0 else f'{scan.lines:,} line breaks'}): at most "
            f"{MAX_COLUMNS:,} columns can be read. Is it a CSV file with one row per point and one "
            "column per feature? Put each point on its own line (transpose the table if needed)."
        )
    need = LINE_OVERHEAD * scan.longest + COLUMN_OVERHEAD * scan.header_fields
    avail = memory.available_memory() if available is None else available
    if avail is not None and need > LOAD_FRACTION * avail:
        raise DatasetError(
            f"{path.name} has a line of {fmt(scan.longest)} ({scan.header_fields:,} columns): parsing it "
            f"needs about {fmt(need)} of memory, but only {fmt(avail)} is available. Put each point on "
            "its own line, drop columns you do not need, or free memory."
        )
