"""The results folder of ``run`` and ``sweep``: made (or checked empty) and locked before anything
is computed, the files a run writes recorded so that ``--overwrite`` removes only those, and a
checkpointed run's record for its resume (see :mod:`jaxbandits.cli`)."""

from __future__ import annotations

import datetime
import itertools
import json
import os
import tempfile
from pathlib import Path
from typing import Any

RESUME_MARKER = ".jaxbandits-run"  # a checkpointed run's command, for its resume
FILES_RECORD = ".jaxbandits-files"  # the files a run wrote into its folder (for --overwrite)
#: What a run writes, for folders without a FILES_RECORD (written by an older jaxbandits).
RESULT_FILES = ("*.npz", "*.json", "*.npy", "*.png", "summary.md")


def _prepare_out(out: str | None, env_name: str, overwrite: bool, checkpoint: str | None,
                 record: dict[str, Any] | None = None) -> tuple[Path, bool, Any]:
    """The results folder, locked and ready before anything is computed; returns it, whether it
    was created here, and its lock (:class:`jaxbandits._io.WriterLock`, held until the command
    ends: a second command into the same folder is refused).

    The default is a new ``results/<env>-<time>`` folder, made with an exclusive ``mkdir`` and
    suffixed ``-2``, ``-3``, ... when another run took the name in the same second. ``--out`` must
    be a folder that can be created and written; an existing one must be empty (a checkpoint
    folder inside it aside) unless ``overwrite``, which removes the files an earlier run wrote
    (:func:`_remove_written`). With a checkpoint, the folder keeps ``record`` (everything that
    fixes the run's numbers) in ``.jaxbandits-run``: the same command, killed and started again,
    resumes into it; a command that differs in anything recorded is refused, naming what.
    """
    from jaxbandits._io import WriterLock

    record = {} if record is None else record
    try:
        if out is None:
            path = _new_folder(Path("results") / f"{env_name}-{_stamp()}")
            lock = WriterLock(path, f"results folder {str(path)!r}")
            _start_record(path, [])
            return path, True, lock
        path = Path(out)
        if path.exists() and not path.is_dir():
            raise ValueError(f"--out {out} is an existing file, not a folder")
        created = False
        if not path.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            created = True
        lock = WriterLock(path, f"--out {out}")
    except OSError as err:
        raise ValueError(f"--out {out or 'results/'}: cannot use it as the results folder "
                         f"({err})") from err
    try:
        _ready(path, out, overwrite, checkpoint, record)
    except BaseException:
        lock.release()
        raise
    return path, created, lock


def _ready(path: Path, out: str, overwrite: bool, checkpoint: str | None,
           record: dict[str, Any]) -> None:
    """Makes the locked ``--out`` folder ready (see :func:`_prepare_out`)."""
    try:
        ckpt = None if checkpoint is None else Path(checkpoint).resolve()
        ours = {FILES_RECORD, RESUME_MARKER}
        stale = [p for p in path.iterdir() if p.resolve() != ckpt and p.name not in ours]
        marker = path / RESUME_MARKER
        if ckpt is not None and marker.is_file() and not overwrite:
            before = _read_json(marker)
            if before == record:
                return  # the same checkpointed command again: it resumes here
            raise ValueError(f"--out {out} holds a checkpointed run of another command "
                             f"({_differences(before, record)}); run the same command to "
                             "resume it, pass --overwrite to replace it, or choose a new folder")
        if stale and not overwrite:
            raise ValueError(f"--out {out} is not empty ({len(stale)} entries); pass --overwrite "
                             "to replace the results there, or choose a new folder")
        if stale or (path / FILES_RECORD).exists():
            _remove_written(path)
        marker.unlink(missing_ok=True)
        _check_writable(path)
        _start_record(path, sorted(p.name for p in path.iterdir()))
        if ckpt is not None:
            marker.write_text(json.dumps(record, indent=1))
    except OSError as err:
        raise ValueError(f"--out {out}: cannot use it as the results folder ({err})") from err


def _remove_written(path: Path) -> None:
    """Removes the files an earlier run wrote into ``path``: those its ``.jaxbandits-files``
    lists (a run that did not finish: every file it found absent when it started), or, in a
    folder from a jaxbandits without that record, the patterns of :data:`RESULT_FILES`. Never a
    folder (a checkpoint inside stays), never a file the run did not write."""
    from jaxbandits._io import temp_target

    record = _read_json(path / FILES_RECORD) if (path / FILES_RECORD).is_file() else None
    if isinstance(record, dict) and isinstance(record.get("written"), list):
        doomed = [path / name for name in record["written"] if isinstance(name, str)]
        doomed += [p for p in path.iterdir() if temp_target(p.name) is not None]
    elif isinstance(record, dict) and isinstance(record.get("before"), list):
        kept = set(record["before"]) | {FILES_RECORD, RESUME_MARKER}
        doomed = [p for p in path.iterdir() if p.name not in kept]
    else:
        doomed = [old for pattern in RESULT_FILES for old in path.glob(pattern)]
    for old in doomed:
        if Path(old.name).name == old.name and (old.is_symlink() or old.is_file()):
            old.unlink()
    (path / FILES_RECORD).unlink(missing_ok=True)


def _start_record(path: Path, before: list[str]) -> None:
    """Starts ``.jaxbandits-files``: the entries present before this run (not its own)."""
    (path / FILES_RECORD).write_text(json.dumps({"before": before, "written": None}))


def _record_files(path: Path) -> None:
    """Completes ``.jaxbandits-files``: every file now in ``path`` that was not there before."""
    record = _read_json(path / FILES_RECORD)
    before = set(record.get("before") or []) if isinstance(record, dict) else set()
    written = sorted(p.name for p in path.iterdir() if p.name not in before | {
        FILES_RECORD, RESUME_MARKER} and (p.is_file() or p.is_symlink()))
    (path / FILES_RECORD).write_text(json.dumps({"before": sorted(before),
                                                 "written": written}))


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None


def _differences(before: Any, now: dict[str, Any]) -> str:
    """Which recorded settings differ, in words (``--runs: 200 then 100``)."""
    if not isinstance(before, dict) or "options" not in before:
        return "its record is from an older jaxbandits"
    flat = lambda r: {**{f"--{k.replace('_', '-')}": v for k, v in  # noqa: E731
                         (r.get("options") or {}).items()},
                      **{k: v for k, v in r.items() if k != "options"}}
    a, b = flat(before), flat(now)
    names = {"x64": "float64 (JAX_ENABLE_X64)",
             "backend": "backend", "jaxbandits": "jaxbandits version"}
    diffs = [f"{names.get(k, k)}: {a.get(k)!r} then {b.get(k)!r}"
             for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k)]
    return "; ".join(diffs) or "its record differs"


def _stamp() -> str:
    return datetime.datetime.now().strftime("%Y%m%d-%H%M%S")


def _new_folder(base: Path) -> Path:
    """Creates ``base`` or, when it exists, ``base-2``, ``base-3``, ... (exclusive mkdir)."""
    base.parent.mkdir(parents=True, exist_ok=True)
    for n in itertools.count(1):
        path = base if n == 1 else base.with_name(f"{base.name}-{n}")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        _check_writable(path)
        return path


def _check_writable(path: Path) -> None:
    """Raises ``OSError`` unless a file can be created in ``path`` (also for root on a
    read-only file system, where ``os.access`` says yes)."""
    fd, probe = tempfile.mkstemp(dir=path, prefix=".jaxbandits-write-test-")
    os.close(fd)
    os.unlink(probe)

