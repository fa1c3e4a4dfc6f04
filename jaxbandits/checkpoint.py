"""Crash-safe checkpoints: one atomic commit of (metadata, arrays), locked to one writer.

A checkpoint directory holds:

- ``checkpoint.json``: the manifest, the only commit point. It names the experiment (a
  ``fingerprint`` and a human ``describe``), the commit's ``sequence`` number, the state file with
  its size and sha256, the arrays it holds (names, shapes, dtypes), the caller's ``meta`` (for
  the runner: blocks and rounds done, wall time...), the records file, if any, with the sha256 of
  every range of rows a commit covers (``records_sha256``), and the sha256 of all these fields
  (``manifest_sha256``): every byte a resume reads is hashed.
- ``state-<n>.npz``: the arrays of commit ``n`` (no pickle).
- ``records.npy``: optional rows written in place between commits (the runner's curves of
  completed blocks of runs); rows a manifest claims are durable, rows past them are scratch.
- ``lock``: the process id of the one :class:`Checkpoint` writing here, which holds an ``flock``
  on the directory itself (so deleting ``lock`` under a running writer does not let a second
  one in). The OS drops it when the process dies, so a ``kill -9`` never leaves a stale lock.

A commit writes ``state-<n>.npz`` (temporary name, fsync, rename), fsyncs ``records.npy``, then
replaces the manifest atomically, then removes older state files. A manifest only ever names a
state file that is complete and durable, so a kill between any two file operations leaves either
the previous commit or the new one, never a mix (metadata from one commit and arrays from
another). :meth:`Checkpoint.load` verifies everything the manifest claims (format, fingerprint,
sizes, the sha256 of the state, of the records' committed rows and of the manifest's own fields,
array names and shapes) and raises :class:`CheckpointError` for anything it cannot
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
import hashlib
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
VERSION = 2
READS = (1, 2)  # version 1 (jaxbandits <= 0.2) has no records or manifest hashes
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
        self._lock_fd = _acquire(self.directory)
        self._sequence: int | None = None  # of the last commit; None before load
        self._claimed: dict | None = None  # the records entry of the last commit
        self._claimed_ranges: list[list] = []  # its verified [start, stop, sha256 object]
        self._records: _HashedRows | None = None
        self.version: int | None = None  # the loaded manifest's format version

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
            ranges = self._check_records(manifest)
        except CheckpointError:
            if not self.overwrite:
                raise
            self._clear()
            return None
        self._sequence, self._claimed = manifest["sequence"], manifest["records"]
        self._claimed_ranges, self.version = ranges, manifest["version"]
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
        records, ranges = None, None
        if self._records is not None and not self._records.closed:
            self._records.flush()
            records = {"file": RECORDS, "shape": list(self._records.shape),
                       "dtype": self._records.dtype.str}
            ranges = self._records.digests()
        manifest = {
            "format": FORMAT, "version": VERSION, "fingerprint": self.fingerprint,
            "describe": self.describe, "sequence": sequence, "state_file": state.name,
            "state_sha256": _io.sha256_file(state), "state_bytes": state.stat().st_size,
            "arrays": {k: {"shape": list(a.shape), "dtype": a.dtype.str}
                       for k, a in arrays.items()},
            "meta": meta_copy, "records": records, "records_sha256": ranges,
        }
        manifest = json.loads(json.dumps(manifest, default=str))
        manifest["manifest_sha256"] = _manifest_digest(manifest)
        data = json.dumps(manifest, indent=1).encode()
        _io.atomic_write_bytes(self.directory / MANIFEST, data)
        self._sequence, self._claimed = sequence, records
        self._claimed_ranges = [] if ranges is None else self._records.ranges_copy()
        for path in self.directory.iterdir():
            if _STATE.fullmatch(path.name) and path.name != state.name:
                _io.remove(path)

    def records(self, shape, dtype) -> NpyRows:
        """The records file ``records.npy`` of ``shape`` and ``dtype``, open for writing.

        Reopened when the last commit names it (its shape and dtype must match), else created
        (zeros). Every :meth:`commit` fsyncs it before writing the manifest, so the rows a
        manifest covers are durable, and records the sha256 of every range of rows written
        (consecutive writes extend one range, so a runner writing blocks in order keeps one
        hash), which :meth:`load` verifies. ``cover(start, stop)`` adds rows already in the file
        (a version-1 checkpoint's, which had no hashes) to what the next commit hashes.

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
            self._records = _HashedRows.create(path, shape, dtype)
            self._records.ranges = []
            return self._records
        claimed = (tuple(self._claimed["shape"]), np.dtype(self._claimed["dtype"]))
        if claimed != (shape, dtype):
            raise CheckpointError(f"the checkpoint in {self._where} records {claimed[1]} "
                                  f"{claimed[0]}, not {dtype} {shape}")
        try:
            self._records = _HashedRows.open(path, shape, dtype)
        except ValueError as e:
            raise CheckpointError(f"checkpoint {self._where}: {e}") from e
        self._records.ranges = [[a, b, h.copy()] for a, b, h in self._claimed_ranges]
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
        if manifest.get("version") not in READS:
            raise self._corrupt(f"{MANIFEST} has version {manifest.get('version')!r}; this "
                                f"jaxbandits reads versions {', '.join(map(str, READS))}")
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
        if manifest["version"] >= 2:
            problems += [f"{key!r} should be {kind}" for key, kind, ok in (
                ("records_sha256", "null or a list of [start, stop, sha256]",
                 _is_ranges(manifest.get("records_sha256"), manifest.get("records"))),
                ("manifest_sha256", "a sha256", isinstance(manifest.get("manifest_sha256"), str)),
            ) if not ok]
        if not problems and manifest.get("state_file") != f"state-{manifest['sequence']}.npz":
            problems.append(f"'state_file' should be 'state-{manifest['sequence']}.npz'")
        if problems:
            raise self._corrupt(f"{MANIFEST} is malformed: {'; '.join(problems)}")
        if manifest["version"] >= 2 and manifest["manifest_sha256"] != _manifest_digest(manifest):
            raise self._corrupt(f"{MANIFEST} does not match its own manifest_sha256 (a field "
                                "such as its meta was edited)")
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

    def _check_records(self, manifest: dict) -> list[list]:
        """Checks the records file's header and the sha256 of each committed range of rows;
        returns the ranges as ``[start, stop, sha256 object]``."""
        records = manifest["records"]
        if records is None:
            return []
        path = self.directory / RECORDS
        try:
            shape, dtype, offset = _io.npy_header(path)
        except ValueError as e:
            raise self._corrupt(f"its records file: {e}") from e
        if list(shape) != records["shape"] or dtype.str != records["dtype"]:
            raise self._corrupt(f"{RECORDS} is {dtype.str} {list(shape)}; the manifest says "
                                f"{records['dtype']} {records['shape']}")
        row_bytes = int(np.prod(shape[1:], dtype=np.int64)) * dtype.itemsize
        ranges = []
        for start, stop, expected in manifest.get("records_sha256") or []:
            digest = _hash_rows(path, offset, row_bytes, start, stop)
            if digest.hexdigest() != expected:
                raise self._corrupt(f"rows {start}..{stop - 1} of {RECORDS} do not match their "
                                    "sha256 in the manifest (altered, reordered or another "
                                    "experiment's)")
            ranges.append([start, stop, digest])
        return ranges

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


def _is_ranges(value: Any, records: Any) -> bool:
    if value is None:
        return records is None
    if not isinstance(value, list) or not isinstance(records, dict):
        return False
    rows = records["shape"][0] if records.get("shape") else 0
    return all(isinstance(r, list) and len(r) == 3 and _is_int(r[0], 0) and _is_int(r[1], 0)
               and r[0] < r[1] <= rows and isinstance(r[2], str) for r in value)


def _manifest_digest(manifest: dict) -> str:
    """The sha256 of every field of ``manifest`` but ``manifest_sha256`` (canonical JSON)."""
    fields = {k: v for k, v in manifest.items() if k != "manifest_sha256"}
    return hashlib.sha256(json.dumps(fields, sort_keys=True).encode()).hexdigest()


def _hash_rows(path: Path, offset: int, row_bytes: int, start: int, stop: int):
    """The sha256 object of rows ``start .. stop - 1`` of the ``.npy`` file at ``path``."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        f.seek(offset + start * row_bytes)
        left = (stop - start) * row_bytes
        while left > 0:
            block = f.read(min(left, 1 << 24))
            if not block:
                break
            digest.update(block)
            left -= len(block)
    return digest


class _HashedRows(NpyRows):
    """A records file that keeps the sha256 of each range of rows written: ``ranges`` holds
    ``[start, stop, sha256 object]`` (None: overwritten in the middle, hashed from the file at
    the next commit)."""

    ranges: list[list]

    def write(self, start: int, rows) -> None:
        super().write(start, rows)
        data = np.ascontiguousarray(rows, dtype=self.dtype)
        self._add(int(start), int(start) + data.shape[0], data)

    def cover(self, start: int, stop: int) -> None:
        """Adds rows ``start .. stop - 1``, already in the file, to what commits hash."""
        if start < stop:
            self._add(int(start), int(stop), None)

    def _add(self, start: int, stop: int, data) -> None:
        hit = [r for r in self.ranges if r[0] < stop and start < r[1]]
        if not hit and data is not None:
            for r in self.ranges:
                if r[1] == start and r[2] is not None:  # extends a range: one running hash
                    r[1] = stop
                    r[2].update(data)
                    return
            self.ranges = sorted(self.ranges + [[start, stop, hashlib.sha256(data)]],
                                 key=lambda r: r[0])
            return
        start, stop = min([start] + [r[0] for r in hit]), max([stop] + [r[1] for r in hit])
        rest = [r for r in self.ranges if all(r is not h for h in hit)]
        self.ranges = sorted(rest + [[start, stop, None]], key=lambda r: r[0])

    def digests(self) -> list[list]:
        """``[start, stop, hex sha256]`` of every range (after a flush)."""
        for r in self.ranges:
            if r[2] is None:
                r[2] = _hash_rows(self.path, self.offset, self._row_bytes, r[0], r[1])
        return [[a, b, h.hexdigest()] for a, b, h in self.ranges]

    def ranges_copy(self) -> list[list]:
        return [[a, b, h.copy()] for a, b, h in self.ranges]


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


def _acquire(directory: Path) -> int:
    """Takes an exclusive, non-blocking ``flock`` on ``directory`` itself (not on a file in it,
    which someone could delete under a running writer) and writes this process's id to its
    ``lock`` file; returns the directory's descriptor (the lock lives as long as it, and dies
    with the process)."""
    if fcntl is None:
        raise CheckpointError("checkpoints need POSIX file locking (fcntl), which this platform "
                              "lacks")
    fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        os.close(fd)
        if e.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
            raise CheckpointError(
                f"another run{_holder(directory / LOCK)} is writing to this checkpoint "
                f"directory {str(directory)!r}; wait for it to finish, stop it, or use another "
                f"directory") from None
        raise CheckpointError(f"cannot lock checkpoint directory {str(directory)!r}: "
                              f"{e.strerror or e}") from e
    try:  # the holder's pid, for the message another process shows
        pid = os.open(directory / LOCK, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            os.write(pid, f"{os.getpid()}\n".encode())
        finally:
            os.close(pid)
    except OSError:
        pass
    return fd


def _release(fd: int) -> None:
    try:
        fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _holder(path: Path) -> str:
    try:
        pid = path.read_bytes()[:32].decode().strip()
    except (OSError, UnicodeDecodeError):
        return ""
    return f" (process {pid})" if pid.isdigit() else ""
