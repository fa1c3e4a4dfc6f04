"""A result's files: writing one ``.npz`` and its JSON (:func:`save`), reading either storage
back (:func:`read`), the JSON's sha256 of its fields and files, and the writer's lock.

The format (version 2, with sha256; version-1 files and files written before the format was
recorded still load) is described in :mod:`jaxbandits.results`.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from jaxbandits import _io
from jaxbandits.metrics import check_metric_names
from jaxbandits.results._format import (
    _CURVES,
    _FORMAT,
    _LEGACY_KEYS,
    _META_TYPES,
    _METRIC_PREFIX,
    _OPTIONAL_KEYS,
    _VERSION,
    _npy_name,
    _sibling,
    _stem,
)
from jaxbandits.results._provenance import _jsonable
from jaxbandits.results._validate import _check_arrays, _check_listed, _check_meta_types


def save(result: Any, path: str | Path) -> Path:
    """Writes ``result`` as ``<path>.npz`` and ``<path>.json`` (see ``Result.save``)."""
    stem = _check_stem(_stem(path))
    arrays = _result_arrays(result)
    _check_arrays(arrays, f"result {result.name!r}")
    _io.check_writable_dir(stem.parent)
    json_path, npz_path = _sibling(stem, ".json"), _sibling(stem, ".npz")
    buffer = io.BytesIO()
    _io.write_npz(buffer, arrays)
    data = buffer.getvalue()
    with _lock(stem):
        _io.remove(json_path)  # from here until the new JSON, no result loads under this name
        _io.atomic_write_bytes(npz_path, data)
        files = {"npz": hashlib.sha256(data).hexdigest()}
        _io.atomic_write_bytes(json_path, _result_json(result, "npz", arrays, files=files))
    return npz_path


def read(stem: Path, verify: bool) -> dict[str, Any]:
    """The fields of the result saved as ``stem`` (see ``Result.load``), its extra metrics as
    ``metrics``; ``verify=False`` skips the sha256 of the array files (a writer that has just
    hashed what it wrote)."""
    json_path = _sibling(stem, ".json")
    if not json_path.is_file():
        if json_path.exists():
            raise ValueError(f"{str(json_path)!r} is not a file, so not a saved result")
        raise FileNotFoundError(f"no result named {str(stem)!r}: {str(json_path)!r} does "
                                f"not exist")
    meta, storage, listed, hashes = _read_result_json(json_path)
    if storage == "npz":
        arrays = _read_npz(_sibling(stem, ".npz"))
    else:
        arrays = {}
        for name in listed:
            file = _sibling(stem, f".{_npy_name(name)}.npy")
            if not file.exists():
                raise ValueError(f"{str(file)!r} is missing: {str(json_path)!r} lists "
                                 f"{name!r} in it")
            arrays[name] = _io.read_npy(file, mmap=name != "steps")
    if listed is not None:
        _check_listed(arrays, listed, json_path, stem, storage)
    _check_arrays(arrays, f"result {str(stem)!r}")
    if listed is not None and meta.pop("replay") != ("accepted" in arrays):
        raise ValueError(f"{str(json_path)!r} disagrees with its arrays on whether this is "
                         f"a replay result")
    if hashes is not None:
        _check_hashes(stem, json_path, storage, listed, hashes, files=verify)
    order = list(listed) if listed is not None else list(arrays)
    metrics = {name[len(_METRIC_PREFIX):]: arrays.pop(name) for name in order
               if name.startswith(_METRIC_PREFIX)}
    return {**arrays, **meta, "metrics": metrics}


def is_result_file(path: str | Path) -> bool:
    """Whether the JSON file ``path`` claims to be a saved result (its ``"format"``, or the keys
    of a result written before the format was recorded), judged by what it holds, never by an
    error's text: a folder's other JSON files (a user's configuration) are not results, while a
    result that fails to load is still one (and :meth:`Result.load` says what is wrong). A file
    that is not valid JSON counts as a result (a corrupt one), so it is never silently skipped.
    """
    try:
        meta = json.loads(Path(path).read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError):
        return True
    if not isinstance(meta, dict):
        return False
    return meta.get("format") == _FORMAT or ("format" not in meta and set(meta) == _LEGACY_KEYS)


def lock_result(path: str | Path) -> _io.WriterLock:
    """Takes the lock of result ``path`` (``.<name>.lock`` beside it) for this process, so that
    no other process writes it; returns the lock (``release()`` it, or use it as a context
    manager).

    :class:`ResultWriter` and :meth:`Result.save` take it themselves; a caller that computes
    for a long time before writing (the runner compiles first) takes it before, so a second
    writer is refused at once. Reentrant within a process.

    Raises:
      ValueError: another process holds it (naming the result and the holder's pid).
    """
    stem = _check_stem(_stem(path))
    _io.check_writable_dir(stem.parent)
    return _lock(stem)


def _lock(stem: Path) -> _io.WriterLock:
    return _io.WriterLock(stem.with_name(f".{stem.name}.lock"), f"result {str(stem)!r}")


def _check_stem(stem: Path) -> Path:
    """``stem`` if it can name a result: a file name (not ``.`` / ``..``), not a folder."""
    if stem.name in ("", ".", ".."):
        raise ValueError(f"a result's name must be a file name, got {str(stem)!r} (a label "
                         "such as '.' or '..' would write outside its folder)")
    if stem.is_dir():
        raise ValueError(f"{str(stem)!r} is an existing folder, so it cannot name a result (it "
                         f"would be written beside it as {str(stem)!r}.json); give a name inside "
                         f"it ({str(stem / 'name')!r}) or a new name")
    return stem



def _result_arrays(result: Any) -> dict[str, np.ndarray]:
    arrays = {"steps": np.asarray(result.steps),
              "cumulative_regret": np.asarray(result.cumulative_regret),
              "cumulative_reward": np.asarray(result.cumulative_reward)}
    if result.accepted is not None:
        arrays["accepted"] = np.asarray(result.accepted)
    if not isinstance(result.metrics, dict):
        raise ValueError(f"result {result.name!r}: metrics must be a dict {{name: (runs, S)}}, "
                         f"got {type(result.metrics).__name__}")
    for name, values in result.metrics.items():
        arrays[_METRIC_PREFIX + str(name)] = np.asarray(values)
    return arrays


def _result_json(result: Any, storage: str, arrays: dict, replay: bool | None = None, *,
                 files: dict[str, str]) -> bytes:
    """The result's JSON: its fields, its arrays' shapes and dtypes, and ``"sha256"``: of each
    file (``files``: ``{"npz" or "<array>.npy": hex}``) and of the JSON's own fields."""
    meta = {
        "format": _FORMAT, "version": _VERSION, "storage": storage,
        "replay": ("accepted" in arrays) if replay is None else replay,
        "arrays": {k: {"shape": [int(n) for n in a.shape], "dtype": np.dtype(a.dtype).str}
                   for k, a in arrays.items()},
        "name": result.name, "wall_time": float(result.wall_time),
        "compile_time": float(result.compile_time), "env_config": result.env_config,
        "agent_config": result.agent_config, "extras": result.extras,
        "run_info": result.run_info, "sha256": {"files": dict(files)},
    }
    meta = json.loads(json.dumps(meta, default=_jsonable))  # as load will read it back
    meta["sha256"]["fields"] = _fields_sha256(meta)
    return json.dumps(meta, indent=2).encode()


def _fields_sha256(meta: dict) -> str:
    """The sha256 of a result JSON's fields (all but ``sha256.fields`` itself), canonical."""
    fields = {**meta, "sha256": {k: v for k, v in meta["sha256"].items() if k != "fields"}}
    text = json.dumps(fields, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _check_hashes(stem: Path, json_path: Path, storage: str, listed: dict, hashes: dict, *,
                  files: bool = True) -> None:
    """The sha256 a version-2 JSON records of its fields and (``files``) of each file."""
    where = repr(str(json_path))
    if _fields_sha256(hashes["meta"]) != hashes["fields"]:
        raise ValueError(f"{where} was edited: its fields do not match the sha256 it records "
                         "(a changed key, name or configuration would make the result lie about "
                         "how it was made); save the result again instead of editing it")
    names = ["npz"] if storage == "npz" else [f"{_npy_name(n)}.npy" for n in listed]
    if set(hashes["files"]) != set(names):
        raise ValueError(f"{where} records the sha256 of {sorted(hashes['files'])}, but its "
                         f"arrays are in {sorted(names)}")
    if not files:
        return
    for name in names:
        file = _sibling(stem, f".{name}")
        if _io.sha256_file(file) != hashes["files"][name]:
            raise ValueError(f"{str(file)!r} does not match the sha256 that {where} records for "
                             "it: the file was edited, corrupted or replaced (another result's "
                             "or another seed's file?)")


def _read_result_json(path: Path) -> tuple[dict, str, dict | None, dict | None]:
    """``(Result fields, storage, listed arrays or None for a legacy file, hashes or None)`` of
    a result JSON; the hashes (version 2) are ``{"fields", "files", "meta"}`` (``meta``: the
    whole JSON, whose fields' sha256 :func:`_check_hashes` compares)."""
    where = repr(str(path))
    try:
        meta = json.loads(path.read_bytes())
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"{where} is not valid JSON ({e})") from e
    if not isinstance(meta, dict):
        raise ValueError(f"{where} is not a jaxbandits result (a JSON {type(meta).__name__})")
    if "format" not in meta and set(meta) == _LEGACY_KEYS:
        _check_meta_types(meta, where)
        return meta, "npz", None, None  # written before the format was recorded
    if meta.get("format") != _FORMAT:
        what = ("a checkpoint manifest; open it with jaxbandits.checkpoint.Checkpoint"
                if meta.get("format") == "jaxbandits-checkpoint" else
                f"format {meta.get('format')!r}, not {_FORMAT!r}")
        raise ValueError(f"{where} is not a jaxbandits result: it is {what}")
    version = meta.get("version")
    if isinstance(version, bool) or version not in (1, _VERSION):
        raise ValueError(f"{where} has version {version!r}; this jaxbandits reads result "
                         f"versions 1 and {_VERSION}")
    expected = _LEGACY_KEYS | {"format", "version", "storage", "replay", "arrays"}
    if version >= 2:
        expected = expected | {"sha256"}
    if not expected <= set(meta) <= expected | _OPTIONAL_KEYS:
        missing = sorted(expected - set(meta))
        extra = sorted(set(meta) - expected - _OPTIONAL_KEYS)
        raise ValueError(f"{where} has the wrong keys: missing {missing}, unexpected {extra}")
    _check_meta_types(meta, where)
    if meta["storage"] not in ("npz", "npy"):
        raise ValueError(f"{where}: 'storage' must be 'npz' or 'npy', got {meta['storage']!r}")
    if not isinstance(meta["replay"], bool):
        raise ValueError(f"{where}: 'replay' must be true or false, got {meta['replay']!r}")
    listed = meta["arrays"]
    names = {"steps", *(_CURVES if meta["replay"] else _CURVES[:2])}
    extra = set(listed) - names if isinstance(listed, dict) else set()
    if not isinstance(listed, dict) or not names <= set(listed) or not all(
            n.startswith(_METRIC_PREFIX) for n in extra):
        found = sorted(listed) if isinstance(listed, dict) else listed
        raise ValueError(f"{where}: 'arrays' must list {sorted(names)} and any extra metrics "
                         f"as '{_METRIC_PREFIX}<name>', got {found}")
    check_metric_names([n[len(_METRIC_PREFIX):] for n in listed if n in extra], where)
    for name, entry in listed.items():
        ok = isinstance(entry, dict) and set(entry) == {"shape", "dtype"} \
            and isinstance(entry["shape"], list) and isinstance(entry["dtype"], str) \
            and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
                    for n in entry["shape"])
        if not ok:
            raise ValueError(f"{where}: array {name!r} must be listed as {{'shape': [sizes], "
                             f"'dtype': str}}, got {entry!r}")
    hashes = None
    if version >= 2:
        recorded = meta["sha256"]
        ok = isinstance(recorded, dict) and set(recorded) == {"fields", "files"} \
            and isinstance(recorded["fields"], str) and isinstance(recorded["files"], dict) \
            and all(isinstance(v, str) for v in recorded["files"].values())
        if not ok:
            raise ValueError(f"{where}: 'sha256' must be {{'fields': hex, 'files': {{file: "
                             f"hex}}}}, got {recorded!r}")
        hashes = {**recorded, "meta": meta}
    storage = meta["storage"]
    fields = {k: v for k, v in meta.items() if k in _META_TYPES}
    fields["replay"] = meta["replay"]
    return fields, storage, listed, hashes


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    where = repr(str(path))
    if not path.exists():
        raise ValueError(f"{where} is missing (its JSON says the arrays are there)")
    try:
        data = np.load(path, allow_pickle=False)
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise ValueError("an .npy, not an .npz archive")
        with data:
            return {k: data[k] for k in data.files}
    except (zipfile.BadZipFile, zlib.error, ValueError, OSError, EOFError, KeyError) as e:
        raise ValueError(f"{where} cannot be read: {type(e).__name__}: {e} (truncated, "
                         f"corrupt or not an .npz)") from e
