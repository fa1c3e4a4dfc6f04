"""``.npy`` files written by blocks of rows (:class:`NpyRows`) and read back memory-mapped
(:func:`read_npy`), never pickled (see :mod:`jaxbandits._io`)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from numpy.lib import format as npy_format

from jaxbandits import _io
from jaxbandits._io._lock import _same_file, flock


class NpyRows:
    """A ``.npy`` file of fixed shape ``(n, *row_shape)`` and dtype, written by blocks of rows.

    The file has a valid ``.npy`` header from the start (rows not yet written read as zeros: the
    file is preallocated sparse), so :func:`read_npy` / ``np.load`` can map it at any time. Rows
    are written with ``os.pwrite`` at their byte offset: no memory map, so the writer's resident
    memory stays that of one block whatever the file's size.

    Example::

        rows = NpyRows.create("curves.npy", (1_000_000, 32), np.float32)
        for start in range(0, 1_000_000, 4096):
            rows.write(start, block)          # (<= 4096, 32)
        rows.flush(); rows.close()
        curves = read_npy("curves.npy")       # read-only memmap
    """

    def __init__(self, path: Path, shape: tuple[int, ...], dtype: np.dtype, offset: int,
                 fd: int):
        self.path, self.shape, self.dtype, self.offset = path, shape, dtype, offset
        self._fd: int | None = fd
        self._row_bytes = int(np.prod(shape[1:], dtype=np.int64)) * dtype.itemsize

    @classmethod
    def create(cls, path: str | os.PathLike, shape, dtype) -> NpyRows:
        """Creates (or replaces) ``path``: header and full preallocated size, written under a
        temporary name, fsynced and renamed, so a crash never leaves a truncated ``path``."""
        path, shape, dtype = Path(path), _check_shape(shape), _check_dtype(dtype)
        header = {"descr": npy_format.dtype_to_descr(dtype), "fortran_order": False,
                  "shape": shape}
        size = [0]

        def write(f):
            npy_format.write_array_header_1_0(f, header) if _fits_v1(header) else \
                npy_format.write_array_header_2_0(f, header)
            size[0] = f.tell()
            f.truncate(size[0] + _nbytes(shape, dtype))

        _io.atomic_write(path, write)
        with _io.naming(path):
            return cls(path, shape, dtype, size[0], os.open(path, os.O_RDWR))

    @classmethod
    def open(cls, path: str | os.PathLike, shape, dtype) -> NpyRows:
        """Reopens an existing file for writing, after checking that its header says ``shape``
        and ``dtype`` and that its size matches.

        Raises:
          ValueError: the file is not such an ``.npy`` (another shape or dtype, truncated, not an
            ``.npy`` at all).
        """
        path, shape, dtype = Path(path), _check_shape(shape), _check_dtype(dtype)
        found_shape, found_dtype, offset = npy_header(path)
        if found_shape != shape or found_dtype != dtype:
            raise ValueError(f"{str(path)!r} holds a {found_dtype} array of shape "
                             f"{found_shape}, not {dtype} of shape {shape}")
        return cls(path, shape, dtype, offset, os.open(path, os.O_RDWR))

    def write(self, start: int, rows) -> None:
        """Writes ``rows`` (``(m, *row_shape)``) as rows ``start .. start + m - 1``."""
        fd = self._opened()
        rows = np.asarray(rows)
        if rows.shape[1:] != self.shape[1:]:
            raise ValueError(f"rows of shape {rows.shape[1:]} for {str(self.path)!r}, whose "
                             f"rows have shape {self.shape[1:]}")
        start = int(start)
        if start < 0 or start + rows.shape[0] > self.shape[0]:
            raise ValueError(f"rows {start}..{start + rows.shape[0] - 1} are outside "
                             f"0..{self.shape[0] - 1} of {str(self.path)!r}")
        if not np.can_cast(rows.dtype, self.dtype, "same_kind"):
            raise ValueError(f"cannot write {rows.dtype} rows into {str(self.path)!r} "
                             f"({self.dtype})")
        data = np.ascontiguousarray(rows, dtype=self.dtype).reshape(-1).view(np.uint8)
        view, position = memoryview(data), self.offset + start * self._row_bytes
        with _io.naming(self.path):
            while view.nbytes:  # pwrite may write less than asked (and at most ~2 GiB at once)
                written = os.pwrite(fd, view[: 1 << 30], position)
                view, position = view[written:], position + written

    def flush(self) -> None:
        """Makes every written row durable (fsync)."""
        if self._fd is not None:
            _io.fault_point("fsync-rows")
            with _io.naming(self.path):
                os.fsync(self._fd)

    def lock(self) -> None:
        """Takes an exclusive ``flock`` on the file until :meth:`close`, so that another writer
        sees it in use (:func:`flock_held`) even if a lock file beside it was removed."""
        flock(self._opened())

    def sha256(self) -> str:
        """The hex sha256 of the file as this object wrote it (read through its descriptor)."""
        return _io.sha256_fd(self._opened())

    def replaced(self) -> bool:
        """Whether ``path`` no longer names the file this object writes (removed or replaced)."""
        return not _same_file(self.path, self._opened())

    def _opened(self) -> int:
        if self._fd is None:
            raise ValueError(f"{str(self.path)!r} is closed")
        return self._fd

    def close(self) -> None:
        """Closes the file (idempotent); unflushed rows stay in the OS cache."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    @property
    def closed(self) -> bool:
        return self._fd is None

    def __enter__(self) -> NpyRows:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        if getattr(self, "_fd", None) is not None:
            self.close()


def npy_header(path: str | os.PathLike) -> tuple[tuple[int, ...], np.dtype, int]:
    """``(shape, dtype, data offset)`` of a C-ordered ``.npy`` file whose size matches.

    Raises:
      ValueError: naming the file, if it is not such an ``.npy`` (bad magic or header, Fortran
        order, object dtype, truncated or padded).
    """
    path = Path(path)
    try:
        with open(path, "rb") as f:
            version = npy_format.read_magic(f)
            if version == (1, 0):
                shape, fortran, dtype = npy_format.read_array_header_1_0(f)
            else:
                shape, fortran, dtype = npy_format.read_array_header_2_0(f)
            offset = f.tell()
    except (ValueError, OSError, EOFError) as e:
        raise ValueError(f"{str(path)!r} is not a readable .npy file ({e})") from e
    if fortran or dtype.hasobject:
        raise ValueError(f"{str(path)!r} is a Fortran-ordered or object .npy file")
    expected = offset + _nbytes(shape, dtype)
    size = path.stat().st_size
    if size != expected:
        raise ValueError(f"{str(path)!r} has {size} bytes; its header ({dtype}, shape {shape}) "
                         f"needs {expected} (truncated or corrupt)")
    return tuple(int(n) for n in shape), dtype, offset


def read_npy(path: str | os.PathLike, mmap: bool = True) -> np.ndarray:
    """Reads an ``.npy`` file: a read-only memory map (default) or an in-memory array.

    Raises:
      ValueError: naming the file, if it is truncated or not an ``.npy`` (no pickle is loaded).
    """
    npy_header(path)  # a clear error for truncated files, before numpy's own
    try:
        return np.load(path, mmap_mode="r" if mmap else None, allow_pickle=False)
    except (ValueError, OSError, EOFError) as e:
        raise ValueError(f"{str(path)!r} is not a readable .npy file ({e})") from e


def _check_shape(shape) -> tuple[int, ...]:
    shape = tuple(int(n) for n in np.atleast_1d(shape))
    if any(n < 0 for n in shape):
        raise ValueError(f"a shape has no negative sizes, got {shape}")
    return shape


def _check_dtype(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype.hasobject:
        raise ValueError(f"object dtypes cannot be written without pickle, got {dtype}")
    return dtype


def _nbytes(shape, dtype: np.dtype) -> int:
    return int(np.prod(shape, dtype=np.int64)) * dtype.itemsize


def _fits_v1(header: dict) -> bool:
    return len(repr(header)) < 65_000  # version 1.0 headers hold at most 65,535 bytes
