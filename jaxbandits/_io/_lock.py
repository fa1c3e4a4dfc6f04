"""One writer at a time: :class:`WriterLock` (an exclusive ``flock`` on a lock file or a
directory) and ``flock`` on files being written (see :mod:`jaxbandits._io`)."""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

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
