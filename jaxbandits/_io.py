"""Crash-safe file primitives, in one place: atomic writes, directory checks, row-block ``.npy``.

Everything jaxbandits persists (checkpoints, results) goes through these few functions, so that
the guarantees are argued once:

- :func:`atomic_write` / :func:`atomic_write_bytes` write a whole file under a unique temporary
  name in the target directory (``.<name>.<pid>.<uuid4 hex>.tmp``), fsync it, ``os.replace`` it
  onto the target and fsync the directory. A reader sees the old file or the new one, never a
  partial one; two processes never share a temporary name; a failure removes the temporary file
  (a kill leaves it behind, and the checkpoint loader sweeps such leftovers).
- :func:`check_writable_dir` proves a directory writable before any compute, with a
  ``ValueError`` naming the path.
- :class:`NpyRows` is a preallocated ``.npy`` file filled by blocks of rows with ``os.pwrite``
  (no memory map, so the writer's resident memory does not grow with the file), and
  :func:`read_npy` maps one back read-only.
- :class:`WriterLock` holds an exclusive ``flock`` on a lock file or a directory, so that one
  process at a time writes a result or a results folder; the OS drops it when the holder dies.
- A failed write (disk full, file-size limit, read-only or immutable directory) raises an
  ``OSError`` of the same kind that names the file being written, never only its temporary name.

Fault injection: every file operation of the commit protocols first calls :func:`fault_point`
with a short name. It does nothing; tests replace it with a function that raises at its k-th call
(and at every call after, as a killed process performs no further operation) to check that a kill
between any two operations leaves a readable state.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import uuid
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np
from numpy.lib import format as npy_format

__all__ = [
    "NpyRows",
    "WriterLock",
    "atomic_write",
    "atomic_write_bytes",
    "check_writable_dir",
    "fault_point",
    "flock_held",
    "flock",
    "fsync_dir",
    "naming",
    "temp_name",
    "temp_target",
    "read_npy",
    "remove",
    "sha256_fd",
    "sha256_file",
    "write_npz",
]

_TMP_SUFFIX = ".tmp"


def fault_point(name: str) -> None:
    """Called before every file operation of a commit; a no-op that fault-injection tests patch.

    Always call it as ``_io.fault_point(...)`` (a module attribute looked up at call time), never
    through a ``from`` import, so that the patch takes effect.
    """


def temp_name(path: str | os.PathLike) -> Path:
    """A unique temporary sibling of ``path``: ``.<name>.<pid>.<uuid4 hex>.tmp``."""
    path = Path(path)
    return path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}{_TMP_SUFFIX}")


def temp_target(name: str) -> str | None:
    """The target name of a temporary name made by :func:`temp_name`, or None if ``name`` is
    not one (``".state-3.npz.123.<32 hex>.tmp"`` -> ``"state-3.npz"``)."""
    if not (name.startswith(".") and name.endswith(_TMP_SUFFIX)):
        return None
    parts = name[1 : -len(_TMP_SUFFIX)].rsplit(".", 2)
    if len(parts) != 3 or not parts[1].isdigit() or len(parts[2]) != 32:
        return None
    return parts[0] or None


def atomic_write(path: str | os.PathLike, write: Callable[[BinaryIO], None]) -> None:
    """Writes ``path`` atomically: ``write(file)`` fills a unique temporary file in the same
    directory, which is flushed, fsynced, renamed onto ``path``, and the directory fsynced.

    ``path`` is never seen partial: it keeps its old content until the rename. On an exception
    the temporary file is removed and ``path`` is untouched.
    """
    path = Path(path)
    tmp = temp_name(path)
    try:
        with naming(path):
            fault_point("create-temp")
            with open(tmp, "xb") as f:
                fault_point("write-temp")
                write(f)
                f.flush()
                fault_point("fsync-temp")
                os.fsync(f.fileno())
            fault_point("rename")
            os.replace(tmp, path)
    except BaseException:
        remove(tmp)
        raise
    fault_point("fsync-dir")
    with naming(path):
        fsync_dir(path.parent)


@contextlib.contextmanager
def naming(path: str | os.PathLike):
    """Re-raises an ``OSError`` of the block as the same kind of error naming ``path``: disk
    full, a file-size limit or a permission problem on a temporary file reads
    ``cannot write '<path>': No space left on device``, not the temporary's name.

    ``OSError(errno, text, filename)`` keeps ``errno`` (and the subclass, such as
    ``PermissionError``), so callers that test either still work.
    """
    try:
        yield
    except OSError as e:
        if getattr(e, "_names_target", False) or e.errno is None:
            raise
        reason = e.strerror or str(e)
        if e.errno == errno.EFBIG:
            reason += " (the file-size limit, ulimit -f)"
        elif e.errno == errno.EPERM:
            reason += " (an immutable or append-only file or directory?)"
        error = type(e)(e.errno, f"cannot write {str(path)!r}: {reason}")
        error._names_target = True
        raise error from e


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Writes ``data`` to ``path`` atomically (see :func:`atomic_write`)."""
    atomic_write(path, lambda f: f.write(data))


def remove(path: str | os.PathLike) -> None:
    """Removes a file if it can (a fault point first; a missing file or any ``OSError`` is
    ignored: removal only ever cleans up)."""
    fault_point("remove")
    try:
        os.unlink(path)
    except OSError:
        pass


def fsync_dir(path: str | os.PathLike) -> None:
    """Fsyncs a directory, so that renames and creations inside it survive a power loss.

    A no-op where directories cannot be opened or synced (Windows, some network file systems).
    """
    if os.name == "nt":
        return
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.fsync(fd)
    except OSError as e:
        if e.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def check_writable_dir(path: str | os.PathLike) -> Path:
    """Creates ``path`` (and its parents) if needed and proves it writable; returns it.

    The proof creates, writes, fsyncs and removes a uniquely named probe file, so a read-only
    mount, a full disk quota on inodes or a permission problem shows up now, before any compute.

    Raises:
      ValueError: naming the path, when it cannot be created (for example a parent is a regular
        file), is not a directory, or a file cannot be written inside it.
    """
    path = Path(path)
    try:
        if path.exists() and not path.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, "it exists and is not a directory")
        path.mkdir(parents=True, exist_ok=True)
        probe = path / f".probe.{os.getpid()}.{uuid.uuid4().hex}{_TMP_SUFFIX}"
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, b"jaxbandits")
            os.fsync(fd)
        finally:
            os.close(fd)
            os.unlink(probe)
    except OSError as e:
        reason = e.strerror or str(e)
        raise ValueError(f"directory {str(path)!r} is not writable: {reason}") from e
    return path


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    """The hex sha256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def sha256_fd(fd: int, chunk: int = 1 << 24) -> str:
    """The hex sha256 of the whole file open as ``fd``, read with ``os.pread`` (the file
    position is untouched; what was written through ``fd`` is what is hashed, even if the path
    now names another file)."""
    digest, position = hashlib.sha256(), 0
    while block := os.pread(fd, chunk, position):
        digest.update(block)
        position += len(block)
    return digest.hexdigest()


def write_npz(file: BinaryIO, arrays: dict[str, np.ndarray]) -> None:
    """Writes ``arrays`` to an open binary file as an ``.npz`` that ``np.load`` reads, never
    pickling (object arrays raise ``ValueError``). Unlike ``np.savez`` any name is allowed,
    ``"file"`` included."""
    with zipfile.ZipFile(file, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                npy_format.write_array(member, np.asanyarray(value), allow_pickle=False)


# --------------------------------------------------------------------------------- WriterLock

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None


class WriterLock:
    """An exclusive, non-blocking ``flock`` on ``path`` (a lock file, created if needed, or an
    existing directory), held until :meth:`release` and dropped by the OS if the process dies.

    A second process is refused with a ``ValueError`` naming ``what``, ``path`` and the holder's
    pid. Within one process the lock is reentrant (a count per path), so a caller may take it
    early (before compiling) and the writer it starts take it again.

    A lock file is robust to its removal: after the ``flock`` the path must still name the
    locked file (else the lock is taken again on the new one), so a newcomer never holds a lock
    on a removed file while a holder locks its successor. A holder whose lock file was removed
    under it is not seen by the newcomer: writers that must be robust to that also lock the files
    they write (:func:`flock_held` checks them before replacing them). A directory cannot be
    removed while it holds files, so locking the folder itself needs nothing more. On release
    the lock file is removed (while still locked; a newcomer that opened it then sees its path
    gone and retries).
    """

    _held: dict[str, list] = {}  # realpath -> [fd, count], this process's locks

    def __init__(self, path: str | os.PathLike, what: str):
        self.path, self.what = Path(path), what
        self._key = os.path.realpath(self.path)
        self._released = False
        held = self._held.get(self._key)
        if held is not None and _same_file(self.path, held[0]):
            held[1] += 1
            return
        if fcntl is None:
            raise ValueError(f"{what}: locking {str(self.path)!r} needs POSIX file locking "
                             "(fcntl), which this platform lacks")
        fd = self._acquire()  # (this process's earlier lock file was removed: lock the new one)
        if held is not None:
            os.close(held[0])
        self._held[self._key] = [fd, 1 if held is None else held[1] + 1]

    def _acquire(self) -> int:
        directory = self.path.is_dir()
        for _ in range(100):  # each retry means the lock file was removed meanwhile
            try:
                fd = os.open(self.path, os.O_RDONLY if directory else os.O_RDWR | os.O_CREAT,
                             0o644)
            except OSError as e:
                raise ValueError(f"{self.what}: cannot create the lock {str(self.path)!r} "
                                 f"({e.strerror or e})") from e
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as e:
                holder = "" if directory else _pid_in(fd)
                os.close(fd)
                if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise ValueError(
                        f"{self.what} is being written by another process{holder} (lock "
                        f"{str(self.path)!r}); wait for it to finish or choose another "
                        "name") from None
                raise ValueError(f"{self.what}: cannot lock {str(self.path)!r} "
                                 f"({e.strerror or e})") from e
            if _same_file(self.path, fd):
                if not directory:
                    os.ftruncate(fd, 0)
                    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
                return fd
            os.close(fd)  # removed or replaced between open and flock: take the new one
        raise ValueError(f"{self.what}: the lock {str(self.path)!r} keeps being removed")

    def release(self) -> None:
        """Releases the lock (idempotent); the last release in the process frees it."""
        if self._released:
            return
        self._released = True
        held = self._held.get(self._key)
        if held is None:
            return
        held[1] -= 1
        if held[1] > 0:
            return
        del self._held[self._key]
        fd = held[0]
        if not self.path.is_dir() and _same_file(self.path, fd):
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        os.close(fd)  # drops the flock

    def __enter__(self) -> WriterLock:
        return self

    def __exit__(self, *exc) -> None:
        self.release()


def flock_held(path: str | os.PathLike) -> bool:
    """Whether another open file holds an exclusive ``flock`` on ``path`` (False if ``path``
    does not exist or cannot be opened)."""
    if fcntl is None:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)
    return False


def flock(fd: int) -> None:
    """Takes an exclusive ``flock`` on an open file (see :func:`flock_held`); raises
    ``ValueError`` if another open file holds one."""
    if fcntl is None:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        raise ValueError(f"a file is locked by another writer ({e.strerror or e})") from e


def _same_file(path: Path, fd: int) -> bool:
    try:
        a, b = os.stat(path), os.fstat(fd)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _pid_in(fd: int) -> str:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (pid {text})" if text.isdigit() else ""


# ------------------------------------------------------------------------------------ NpyRows


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

        atomic_write(path, write)
        with naming(path):
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
        with naming(self.path):
            while view.nbytes:  # pwrite may write less than asked (and at most ~2 GiB at once)
                written = os.pwrite(fd, view[: 1 << 30], position)
                view, position = view[written:], position + written

    def flush(self) -> None:
        """Makes every written row durable (fsync)."""
        if self._fd is not None:
            fault_point("fsync-rows")
            with naming(self.path):
                os.fsync(self._fd)

    def lock(self) -> None:
        """Takes an exclusive ``flock`` on the file until :meth:`close`, so that another writer
        sees it in use (:func:`flock_held`) even if a lock file beside it was removed."""
        flock(self._opened())

    def sha256(self) -> str:
        """The hex sha256 of the file as this object wrote it (read through its descriptor)."""
        return sha256_fd(self._opened())

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
