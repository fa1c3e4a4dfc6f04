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

The package: this module (atomic writes, naming errors, directories, hashes, ``.npz``),
``_lock`` (:class:`WriterLock`, ``flock``) and ``_npy`` (:class:`NpyRows`, :func:`read_npy`);
every name is imported from ``jaxbandits._io``.

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
    "npy_header",
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


# The lock and the row-block files, re-exported (they call this module's fault_point).
from jaxbandits._io._lock import WriterLock, flock, flock_held  # noqa: E402
from jaxbandits._io._npy import NpyRows, npy_header, read_npy  # noqa: E402
