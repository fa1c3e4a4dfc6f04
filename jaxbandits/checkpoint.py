"""Crash-safe checkpoints: one atomic commit of (metadata, arrays), locked to one writer.

A checkpoint directory holds:

- ``checkpoint.json``: the manifest, the only commit point. It names the experiment (a
  ``fingerprint`` and a human ``describe``), the commit's ``sequence`` number, the state file with
  its size and sha256, the arrays it holds (names, shapes, dtypes), the caller's ``meta`` (for
  the runner: rounds done, wall time...) and the records file, if any.
- ``state-<n>.npz``: the arrays of commit ``n`` (no pickle).
- ``records.npy``: optional rows written in place between commits (the runner's curves of
  completed blocks of runs); rows a manifest claims are durable, rows past them are scratch.
- ``lock``: held with ``flock`` by the one :class:`Checkpoint` writing here. The OS drops it when
  the process dies, so a ``kill -9`` never leaves a stale lock; the file itself is never removed.

A commit writes ``state-<n>.npz`` (temporary name, fsync, rename), fsyncs ``records.npy``, then
replaces the manifest atomically, then removes older state files. A manifest only ever names a
state file that is complete and durable, so a kill between any two file operations leaves either
the previous commit or the new one, never a mix (metadata from one commit and arrays from
another). :meth:`Checkpoint.load` verifies everything the manifest claims (format, fingerprint,
sizes, sha256, array names and shapes) and raises :class:`CheckpointError` for anything it cannot
trust; a checkpoint of another experiment is never silently replaced (``overwrite=True``).

Why not orbax-checkpoint: orbax commits a step atomically too (a renamed temporary directory, or
a ``commit_success`` file on object stores) and shines at sharded, multi-host ``jax.Array``
trees, but it does not provide the other guarantees asked here: no exclusive lock against a
second writer on one directory, no check that a checkpoint belongs to this experiment (its
step cleanup would happily delete another run's steps), and no in-place streaming of row blocks
of completed runs. The runner brings each block's carry to host NumPy anyway, so orbax's
asynchronous tensorstore machinery would buy nothing while adding tensorstore, protobuf and
background threads as dependencies and an on-disk layout that changes between versions. A small
module over ``os.replace``, ``fsync`` and ``flock`` is easy to test exhaustively (a kill between
every pair of file operations, see ``tests/test_faults_files.py``), which is the guarantee that
matters.
"""

from __future__ import annotations

import errno
import json
import os
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from jaxbandits import _io
from jaxbandits._io import NpyRows

__all__ = ["Checkpoint", "CheckpointError"]

FORMAT = "jaxbandits-checkpoint"
VERSION = 1
MANIFEST = "checkpoint.json"
RECORDS = "records.npy"
LOCK = "lock"
_STATE = re.compile(r"state-([1-9][0-9]*)\.npz")
_LEGACY = ("carry.npz", "meta.json")  # the single-rename checkpoints of jaxbandits <= 0.1


class CheckpointError(ValueError):
    """A checkpoint that cannot be used: foreign, corrupt, mismatched, or locked by another
    writer."""


class Checkpoint:
    """A checkpoint directory owned by this object until :meth:`close`.

    Args:
      directory: the checkpoint directory, created if needed and checked writable now (before
        any compute).
      fingerprint: identifies the experiment (a hash of everything that determines its numbers);
        :meth:`load` refuses a checkpoint with another fingerprint.
      describe: a short JSON-friendly description of the experiment (agent, horizon, runs...),
        stored in the manifest and shown when another experiment finds it.
      overwrite: replace a checkpoint that cannot be resumed (another experiment's, or corrupt)
        instead of raising. A checkpoint of this very experiment is still resumed: it gives the
        same numbers.

    Raises:
      CheckpointError: the directory is not writable, or another process (or another
        ``Checkpoint`` in this one) is writing to it.

    Example::

        with Checkpoint(path, fingerprint, describe={"agent": "lin-ts"}) as ckpt:
            restored = ckpt.load()            # None, or (meta, arrays) of the last commit
            ...
            ckpt.commit({"done": 1200}, {"carry_0": x, "carry_1": y})
    """

    def __init__(self, directory: str | os.PathLike, fingerprint: str, *,
                 describe: dict | None = None, overwrite: bool = False):
        if not isinstance(fingerprint, str) or not fingerprint:
            raise ValueError(f"fingerprint must be a non-empty string, got {fingerprint!r}")
        try:
            self.directory = _io.check_writable_dir(directory)
        except ValueError as e:
            raise CheckpointError(f"checkpoint {e}") from e
        self.fingerprint = fingerprint
        self.describe = dict(describe or {})
        json.dumps(self.describe, default=str)  # fails now if it cannot be stored
        self.overwrite = bool(overwrite)
        self._lock_fd: int | None = None
        self._lock_fd = _acquire(self.directory / LOCK)
        self._sequence: int | None = None  # of the last commit; None before load
        self._claimed: dict | None = None  # the records entry of the last commit
        self._records: NpyRows | None = None

    # ------------------------------------------------------------------------------ public

    def load(self) -> tuple[dict, dict[str, np.ndarray]] | None:
        """The last commit's ``(meta, arrays)``, or None if there is none (a fresh directory).

        Leftovers of a killed commit (temporary files, a state file no manifest names) are
        removed. With ``overwrite=True``, a foreign or corrupt checkpoint is deleted and None
        returned.

        Raises:
          CheckpointError: the manifest belongs to another experiment (both are named), or is
            not valid, or the state or records file it names is missing, truncated or altered.
        """
        self._check_open()
        self._sweep_temps()
        if not (self.directory / MANIFEST).exists():
            legacy = [n for n in _LEGACY if (self.directory / n).exists()]
            if legacy and not self.overwrite:
                raise CheckpointError(
                    f"checkpoint directory {self._where} holds a checkpoint of an older "
                    f"jaxbandits ({', '.join(legacy)}) that cannot be resumed; "
                    f"{_OVERWRITE_HINT}")
            self._clear()  # only uncommitted files (or, with overwrite, the legacy ones)
            return None
        try:
            manifest = self._read_manifest()
            self._check_fingerprint(manifest)
            arrays = self._read_state(manifest)
            self._check_records(manifest)
        except CheckpointError:
            if not self.overwrite:
                raise
            self._clear()
            return None
        self._sequence, self._claimed = manifest["sequence"], manifest["records"]
        for path in self.directory.iterdir():  # a state a kill left unnamed or undeleted
            if _STATE.fullmatch(path.name) and path.name != manifest["state_file"]:
                _io.remove(path)
        return manifest["meta"], arrays

    def commit(self, meta: dict, arrays: dict[str, np.ndarray]) -> None:
        """Commits ``meta`` (JSON-friendly) and ``arrays`` (no object arrays) atomically, after
        making the records file durable; the previous commit stays readable until the new one
        is complete."""
        self._check_open()
        if not isinstance(meta, dict):
            raise TypeError(f"meta must be a dict, got {type(meta).__name__}")
        meta_copy = json.loads(json.dumps(meta, default=_plain))  # fails before any file op
        arrays = _as_arrays(arrays)
        if self._sequence is None:
            self.load()  # never commits over a checkpoint it has not checked
        sequence = self._sequence + 1
        state = self.directory / f"state-{sequence}.npz"
        _io.atomic_write(state, lambda f: _io.write_npz(f, arrays))
        records = None
        if self._records is not None and not self._records.closed:
            self._records.flush()
            records = {"file": RECORDS, "shape": list(self._records.shape),
                       "dtype": self._records.dtype.str}
        manifest = {
            "format": FORMAT, "version": VERSION, "fingerprint": self.fingerprint,
            "describe": self.describe, "sequence": sequence, "state_file": state.name,
            "state_sha256": _io.sha256_file(state), "state_bytes": state.stat().st_size,
            "arrays": {k: {"shape": list(a.shape), "dtype": a.dtype.str}
                       for k, a in arrays.items()},
            "meta": meta_copy, "records": records,
        }
        data = json.dumps(manifest, indent=1, default=str).encode()
        _io.atomic_write_bytes(self.directory / MANIFEST, data)
        self._sequence, self._claimed = sequence, records
        for path in self.directory.iterdir():
            if _STATE.fullmatch(path.name) and path.name != state.name:
                _io.remove(path)

    def records(self, shape, dtype) -> NpyRows:
        """The records file ``records.npy`` of ``shape`` and ``dtype``, open for writing.

        Reopened when the last commit names it (its shape and dtype must match), else created
        (zeros). Every :meth:`commit` fsyncs it before writing the manifest, so the rows a
        manifest covers are durable; write only rows that no commit covers yet.

        Raises:
          CheckpointError: the committed records file has another shape or dtype.
        """
        self._check_open()
        if self._sequence is None:
            self.load()
        shape, dtype = tuple(int(n) for n in shape), np.dtype(dtype)
        if self._records is not None and not self._records.closed:
            if (self._records.shape, self._records.dtype) != (shape, dtype):
                raise CheckpointError(f"records of {self._where} are open as {self._records.dtype}"
                                      f" {self._records.shape}, not {dtype} {shape}")
            return self._records
        path = self.directory / RECORDS
        if self._claimed is None:
            self._records = NpyRows.create(path, shape, dtype)
            return self._records
        claimed = (tuple(self._claimed["shape"]), np.dtype(self._claimed["dtype"]))
        if claimed != (shape, dtype):
            raise CheckpointError(f"the checkpoint in {self._where} records {claimed[1]} "
                                  f"{claimed[0]}, not {dtype} {shape}")
        try:
            self._records = NpyRows.open(path, shape, dtype)
        except ValueError as e:
            raise CheckpointError(f"checkpoint {self._where}: {e}") from e
        return self._records

    def close(self) -> None:
        """Closes the records file and releases the lock (idempotent); the files stay."""
        if self._records is not None:
            self._records.close()
            self._records = None
        if self._lock_fd is not None:
            fd, self._lock_fd = self._lock_fd, None
            _release(fd)

    def __enter__(self) -> Checkpoint:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __del__(self):
        if getattr(self, "_lock_fd", None) is not None:
            self.close()

    def __repr__(self) -> str:
        return f"Checkpoint({str(self.directory)!r}, sequence={self._sequence})"

    # ----------------------------------------------------------------------------- helpers

    @property
    def _where(self) -> str:
        return repr(str(self.directory))

    def _check_open(self) -> None:
        if self._lock_fd is None:
            raise CheckpointError(f"checkpoint {self._where} is closed")

    def _corrupt(self, what: str) -> CheckpointError:
        return CheckpointError(f"checkpoint directory {self._where} cannot be resumed: {what}; "
                               f"{_OVERWRITE_HINT}")

    def _read_manifest(self) -> dict[str, Any]:
        path = self.directory / MANIFEST
        try:
            manifest = json.loads(path.read_bytes())
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise self._corrupt(f"{MANIFEST} is not valid JSON ({e})") from e
        except OSError as e:
            raise self._corrupt(f"{MANIFEST} cannot be read ({e})") from e
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            found = manifest.get("format") if isinstance(manifest, dict) else None
            raise self._corrupt(f"{MANIFEST} is not a jaxbandits checkpoint manifest "
                                f"(format {found!r})")
        if manifest.get("version") != VERSION:
            raise self._corrupt(f"{MANIFEST} has version {manifest.get('version')!r}; this "
                                f"jaxbandits reads version {VERSION}")
        problems = [f"{key!r} should be {kind}" for key, kind, ok in (
            ("fingerprint", "a string", isinstance(manifest.get("fingerprint"), str)),
            ("describe", "an object", isinstance(manifest.get("describe"), dict)),
            ("sequence", "a positive integer", _is_int(manifest.get("sequence"), 1)),
            ("state_sha256", "a sha256", isinstance(manifest.get("state_sha256"), str)),
            ("state_bytes", "a size", _is_int(manifest.get("state_bytes"), 0)),
            ("arrays", "an object", isinstance(manifest.get("arrays"), dict)),
            ("meta", "an object", isinstance(manifest.get("meta"), dict)),
            ("records", "null or an object", _is_records(manifest.get("records"))),
        ) if not ok]
        if not problems and manifest.get("state_file") != f"state-{manifest['sequence']}.npz":
            problems.append(f"'state_file' should be 'state-{manifest['sequence']}.npz'")
        if problems:
            raise self._corrupt(f"{MANIFEST} is malformed: {'; '.join(problems)}")
        return manifest

    def _check_fingerprint(self, manifest: dict) -> None:
        if manifest["fingerprint"] == self.fingerprint:
            return
        raise CheckpointError(
            f"checkpoint directory {self._where} holds another experiment: "
            f"{_describe(manifest['describe'])} (fingerprint {manifest['fingerprint'][:12]}), "
            f"not this one: {_describe(self.describe)} (fingerprint {self.fingerprint[:12]}). "
            f"Use another directory, or {_OVERWRITE_HINT}")

    def _read_state(self, manifest: dict) -> dict[str, np.ndarray]:
        name = manifest["state_file"]
        path = self.directory / name
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            raise self._corrupt(f"its state file {name} is missing") from None
        if size != manifest["state_bytes"]:
            raise self._corrupt(f"{name} has {size} bytes, the manifest says "
                                f"{manifest['state_bytes']} (truncated or altered)")
        if _io.sha256_file(path) != manifest["state_sha256"]:
            raise self._corrupt(f"{name} does not match its sha256 in the manifest (altered)")
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays = {k: data[k] for k in data.files}
        except (zipfile.BadZipFile, zlib.error, ValueError, OSError, EOFError, KeyError) as e:
            raise self._corrupt(f"{name} is not a readable .npz ({type(e).__name__}: {e})") \
                from e
        listed = manifest["arrays"]
        if set(arrays) != set(listed):
            missing, extra = sorted(set(listed) - set(arrays)), sorted(set(arrays) - set(listed))
            raise self._corrupt(f"{name} holds arrays {sorted(arrays)}; the manifest lists "
                                f"{sorted(listed)} (missing {missing}, unexpected {extra})")
        for key, array in arrays.items():
            entry = listed[key]
            if not isinstance(entry, dict) or entry.get("shape") != list(array.shape) or \
                    entry.get("dtype") != array.dtype.str:
                raise self._corrupt(f"array {key!r} of {name} is {array.dtype.str} "
                                    f"{list(array.shape)}; the manifest says {entry}")
        return arrays

    def _check_records(self, manifest: dict) -> None:
        records = manifest["records"]
        if records is None:
            return
        try:
            shape, dtype, _ = _io.npy_header(self.directory / RECORDS)
        except ValueError as e:
            raise self._corrupt(f"its records file: {e}") from e
        if list(shape) != records["shape"] or dtype.str != records["dtype"]:
            raise self._corrupt(f"{RECORDS} is {dtype.str} {list(shape)}; the manifest says "
                                f"{records['dtype']} {records['shape']}")

    def _sweep_temps(self) -> None:
        """Removes the temporary files of killed writes (this object holds the lock, so no
        other writer can be using them)."""
        for path in self.directory.iterdir():
            if _ours(_io.temp_target(path.name)):
                _io.remove(path)

    def _clear(self) -> None:
        """Removes every file this module writes, manifest first (so a kill midway leaves no
        commit, never half of one); the lock file stays."""
        _io.remove(self.directory / MANIFEST)
        for path in self.directory.iterdir():
            if _STATE.fullmatch(path.name) or path.name in (RECORDS, *_LEGACY):
                _io.remove(path)
        self._sequence, self._claimed = 0, None


_OVERWRITE_HINT = ("pass overwrite=True (--overwrite on the command line) to replace it with "
                   "a fresh checkpoint")


def _ours(target: str | None) -> bool:
    """Whether a temporary file for ``target`` is one this module (or the writability probe)
    makes."""
    return target is not None and (target in (MANIFEST, RECORDS, "probe")
                                   or bool(_STATE.fullmatch(target)))


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"checkpoint meta must be JSON-friendly, got {type(value).__name__}")


def _describe(describe: dict) -> str:
    if not describe:
        return "an undescribed experiment"
    return ", ".join(f"{k}={v}" for k, v in describe.items())


def _is_int(value: Any, low: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def _is_records(value: Any) -> bool:
    if value is None:
        return True
    if not isinstance(value, dict) or value.get("file") != RECORDS:
        return False
    shape = value.get("shape")
    if not isinstance(shape, list) or not all(_is_int(n, 0) for n in shape):
        return False
    try:
        np.dtype(value.get("dtype"))
    except TypeError:
        return False
    return isinstance(value.get("dtype"), str)


def _as_arrays(arrays: dict) -> dict[str, np.ndarray]:
    if not isinstance(arrays, dict):
        raise TypeError(f"arrays must be a dict of arrays, got {type(arrays).__name__}")
    out = {}
    for key, value in arrays.items():
        if not isinstance(key, str) or not key or "/" in key:
            raise ValueError(f"array names are non-empty strings without '/', got {key!r}")
        value = np.asarray(value)
        if value.dtype.hasobject:
            raise ValueError(f"array {key!r} has an object dtype, which needs pickle")
        out[key] = value
    return out


# ---------------------------------------------------------------------------------- locking

try:
    import fcntl
except ImportError:  # not POSIX: checkpoints are refused with a clear error, imports still work
    fcntl = None


def _acquire(path: Path) -> int:
    """Opens ``path`` and takes an exclusive, non-blocking ``flock`` on it; returns the
    descriptor (the lock lives as long as it, and dies with the process)."""
    if fcntl is None:
        raise CheckpointError("checkpoints need POSIX file locking (fcntl), which this platform "
                              "lacks")
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        holder = _holder(fd)
        os.close(fd)
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise CheckpointError(
                f"another run{holder} is writing to this checkpoint directory "
                f"{str(path.parent)!r}; wait for it to finish, stop it, or use another "
                f"directory") from None
        raise CheckpointError(f"cannot lock checkpoint directory {str(path.parent)!r}: "
                              f"{e.strerror or e}") from e
    os.ftruncate(fd, 0)  # the holder's pid, for the message another process shows
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def _release(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _holder(fd: int) -> str:
    try:
        pid = os.pread(fd, 32, 0).decode().strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (process {pid})" if pid.isdigit() else ""
