"""Features files: rows of a layer's outputs in a ``.npy`` file, written and read without memory maps.

- :class:`NpyWriter`: rows appended to a ``.npy`` file written under a temporary name and renamed
  into place with its sha256 (safe for two processes at once);
- :func:`read_npy_rows`, :func:`read_rows`: chosen rows and columns with positional reads, so a process
  grows by the result only (a memory map would count every page it touched, which a Dask nanny watches);
- :func:`expand_rows`: one row block per stimulus from a file of the unique images' rows.

Split out of :mod:`brainscore.models.extraction.core`, which re-exports these names.
"""
from __future__ import annotations

import hashlib
import io
import os
import tempfile
from pathlib import Path

import numpy as np

from brainscore import caching
from brainscore.errors import BrainScoreError, ValidationError

__all__ = ["NpyWriter", "read_npy_rows", "read_rows", "expand_rows", "npy_layout", "COPY_BLOCK_BYTES"]

#: Bytes of rows a copy between files (:func:`expand_rows`) holds at a time, and the widest run of columns
#: :meth:`~brainscore.models.extraction.core.LayerBlocks.read` reads at once for scattered neuroids.
COPY_BLOCK_BYTES = 32 << 20


def npy_layout(path: Path) -> tuple[int, tuple[int, ...], np.dtype]:
    """(offset of the data in bytes, shape, dtype) of a C-ordered ``.npy`` file, from its header.

    Raises
    ------
    BrainScoreError
        If the file is Fortran-ordered (this package writes C order only).
    """
    with open(path, "rb") as file:
        version = np.lib.format.read_magic(file)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran_order, dtype = read_header(file)
        offset = file.tell()
    if fortran_order:
        raise BrainScoreError(f"{path} holds a Fortran-ordered array; features files are C-ordered")
    return offset, tuple(shape), np.dtype(dtype)


def _pread_into(fd: int, buffer: memoryview, offset: int) -> None:
    """Fill ``buffer`` with the bytes of ``fd`` from ``offset`` (no file position, no memory map).

    Raises
    ------
    BrainScoreError
        If the file ends first.
    """
    while len(buffer):
        if hasattr(os, "preadv"):
            got = os.preadv(fd, [buffer], offset)
        else:  # pragma: no cover - Windows
            data = os.pread(fd, len(buffer), offset)
            buffer[:len(data)] = data
            got = len(data)
        if got <= 0:
            raise BrainScoreError(f"features file ended early at byte {offset}: it is truncated")
        buffer, offset = buffer[got:], offset + got


def read_npy_rows(path: Path, rows: np.ndarray, start: int = 0, stop: int | None = None) -> np.ndarray:
    """Columns ``start:stop`` of ``rows`` (in that order) of a 2-D view ``(rows, -1)`` of a ``.npy`` file.

    Reads with plain positional reads into a new array (:func:`read_rows`), so the process's memory
    grows by the result only: a memory map of the whole file would count every page it touched in
    the process's resident memory, which is what a Dask nanny watches.

    Parameters
    ----------
    path : Path
    rows : ndarray of int, shape (n,)
    start, stop : int
        Column range of the flattened rows (``stop`` None: to the end).

    Returns
    -------
    ndarray of shape (n, stop - start), the file's dtype

    Raises
    ------
    ValidationError
        For rows or columns outside the file.
    """
    offset, shape, dtype = npy_layout(path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
    try:
        return read_rows(fd, rows, shape[0], int(np.prod(shape[1:])), dtype, start, stop, offset)
    finally:
        os.close(fd)


def read_rows(fd: int, rows: np.ndarray, n_rows: int, width: int, dtype, start: int = 0, stop: int | None = None,
              offset: int = 0) -> np.ndarray:
    """Columns ``start:stop`` of ``rows`` of a C-ordered ``(n_rows, width)`` array stored in file ``fd`` at ``offset``.

    One positional read per row (in file order; one read for consecutive full rows), into a new array.

    Returns
    -------
    ndarray of shape (len(rows), stop - start), ``dtype``

    Raises
    ------
    ValidationError
        For rows or columns outside the array.
    """
    dtype = np.dtype(dtype)
    stop = width if stop is None else int(stop)
    if not 0 <= start <= stop <= width:
        raise ValidationError(f"columns {start}:{stop} are outside the array's {width}")
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    if len(rows) and (rows.min() < 0 or rows.max() >= n_rows):
        raise ValidationError(f"rows outside the array's {n_rows}")
    out = np.empty((len(rows), stop - start), dtype=dtype)
    if out.size == 0:
        return out
    item = dtype.itemsize
    if start == 0 and stop == width and np.array_equal(rows, np.arange(len(rows)) + rows[0]):
        _pread_into(fd, memoryview(out).cast("B"), offset + int(rows[0]) * width * item)  # one range
    else:
        for i in np.argsort(rows, kind="stable"):
            _pread_into(fd, memoryview(out[i]).cast("B"), offset + (int(rows[i]) * width + start) * item)
    return out


class NpyWriter:
    """Appends rows to a ``.npy`` file written under a temporary name; ``commit`` renames it into place.

    With ``checksum=True`` the file's sha256 is computed while writing and stored beside it
    (:func:`brainscore.caching.commit_file`) before the rename.
    """

    def __init__(self, target: Path, rows: int, checksum: bool = True):
        self.target = Path(target)
        self.rows = rows
        self.written = 0
        self.checksum = checksum
        self.digest = hashlib.sha256()
        self.target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.target.parent, prefix=f".{self.target.name}.", suffix=".part")
        self.tmp = Path(tmp)
        self.file = os.fdopen(fd, "wb", buffering=0)
        self.unit_shape: tuple[int, ...] | None = None

    def _write(self, data) -> None:
        self.digest.update(data)
        view = memoryview(data).cast("B")
        while len(view):  # unbuffered: each batch is on disk (and in the file's size) once written
            view = view[self.file.write(view):]

    def append(self, batch: np.ndarray) -> None:
        batch = np.ascontiguousarray(batch, dtype="<f4")
        if self.unit_shape is None:
            self.unit_shape = tuple(batch.shape[1:])
            header = {"descr": "<f4", "fortran_order": False, "shape": (self.rows, *self.unit_shape)}
            buffer = io.BytesIO()
            np.lib.format.write_array_header_2_0(buffer, header)
            self._write(buffer.getvalue())
        elif tuple(batch.shape[1:]) != self.unit_shape:
            raise BrainScoreError(f"layer output changed shape between batches: {self.unit_shape} then "
                                  f"{tuple(batch.shape[1:])}; images must all be preprocessed to one size")
        self._write(memoryview(batch).cast("B"))
        self.written += batch.shape[0]

    def commit(self) -> Path:
        self.file.close()
        if self.written != self.rows:
            self.abort()
            raise BrainScoreError(f"wrote {self.written} rows to {self.target.name}, expected {self.rows}")
        if self.checksum:
            caching.commit_file(self.tmp, self.target, self.digest.hexdigest())
        else:
            os.replace(self.tmp, self.target)
        return self.target

    def abort(self) -> None:
        if not self.file.closed:
            self.file.close()
        self.tmp.unlink(missing_ok=True)


def expand_rows(unique_file: Path, target: Path, first_of: np.ndarray, trials: int, checksum: bool = True) -> None:
    """Write ``target`` with one row block per stimulus from a file of unique images' rows, then delete it.

    Rows are copied :data:`COPY_BLOCK_BYTES` at a time with positional reads (:func:`read_npy_rows`),
    never through a memory map of the whole file, so the process holds one block whatever the layer's size.
    """
    _, shape, _ = npy_layout(unique_file)
    row_bytes = 4 * int(np.prod(shape[1:]))
    writer = NpyWriter(target, len(first_of) * trials, checksum=checksum)
    try:
        step = max(1, COPY_BLOCK_BYTES // max(1, row_bytes * trials))  # stimuli per block
        for start in range(0, len(first_of), step):
            index = np.asarray(first_of[start:start + step], dtype=np.int64)
            rows = (index[:, None] * trials + np.arange(trials)[None, :]).ravel()
            writer.append(read_npy_rows(unique_file, rows).reshape((len(rows),) + tuple(shape[1:])))
        writer.commit()
    except BaseException:
        writer.abort()
        raise
    finally:
        Path(unique_file).unlink(missing_ok=True)
