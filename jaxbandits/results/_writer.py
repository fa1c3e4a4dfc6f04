""":class:`ResultWriter`: a result too big for memory, written block by block as one ``.npy``
per curve and memory-mapped back."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib import format as npy_format

from jaxbandits import _io
from jaxbandits.metrics import check_metric_names
from jaxbandits.results._files import _result_json, lock_result
from jaxbandits.results._format import (
    _CURVES,
    _META_TYPES,
    _METRIC_PREFIX,
    _npy_name,
    _sibling,
    _Spec,
    _stem,
)
from jaxbandits.results._result import Result
from jaxbandits.results._validate import _check_steps


class ResultWriter:
    """Writes a result too big for memory block by block, as one ``.npy`` per curve.

    Creates ``<path>.regret.npy``, ``<path>.reward.npy`` (and ``<path>.accepted.npy`` when
    ``replay``, and ``<path>.metric.<name>.npy`` for each extra metric), each ``(num_runs, S)``
    of ``dtype``, preallocated; :meth:`write` fills blocks of runs with positioned writes
    (resident memory stays one block); :meth:`finish` writes ``<path>.steps.npy`` and, last and
    atomically, ``<path>.json`` (``"storage": "npy"``), and returns the :class:`Result` with
    read-only memory-mapped curves. Until then no result loads under ``path`` (an older one is
    removed when the writer starts). The JSON records the sha256 of every file, hashed once at
    :meth:`finish` from the written files.

    One process at a time writes a result: the writer holds ``.<name>.lock`` beside it (taken
    when it starts, or earlier by the caller with :func:`lock_result`; released by
    :meth:`finish` / :meth:`close`) and a ``flock`` on each curve file, so a second writer is
    refused with a ``ValueError`` even if the lock file was removed.

    Args:
      path: the result's name (as for :meth:`Result.save`; the whole name is kept).
      num_runs: rows of each curve.
      steps: ``(S,)`` the recorded steps (positive, increasing).
      replay: whether to record ``accepted`` rounds (replay environments).
      dtype: the curves' floating dtype.
      metrics: the names of the extra metrics (``Spec.metrics``) to record, in order.

    Example::

        writer = ResultWriter("out/lin-ts", num_runs, steps, replay=False)
        for start, regret, reward in blocks:            # each (rows, S)
            writer.write(start, regret, reward)
        result = writer.finish(name="lin-ts", wall_time=wall)
    """

    def __init__(self, path: str | Path, num_runs: int, steps, *, replay: bool,
                 dtype=np.float32, metrics: Sequence[str] = ()):
        self.stem = _stem(path)
        steps = np.asarray(steps)
        if steps.ndim != 1:
            raise ValueError(f"steps must be the (S,) recorded steps, got shape {steps.shape}")
        self.steps = steps.astype(np.int64) if np.issubdtype(steps.dtype, np.integer) else steps
        _check_steps(self.steps, "ResultWriter")
        if isinstance(num_runs, bool) or not isinstance(num_runs, (int, np.integer)) \
                or num_runs < 1:
            raise ValueError(f"num_runs must be a positive integer, got {num_runs!r}")
        self.dtype = np.dtype(dtype)
        if not np.issubdtype(self.dtype, np.floating):
            raise ValueError(f"dtype must be floating, got {self.dtype}")
        self.num_runs, self.replay = int(num_runs), bool(replay)
        self.metrics = check_metric_names(metrics, "ResultWriter")
        names = (_CURVES if self.replay else _CURVES[:2]) + tuple(
            _METRIC_PREFIX + m for m in self.metrics)
        shape = (self.num_runs, len(self.steps))
        self._rows: dict[str, _io.NpyRows] = {}
        self._lock = lock_result(self.stem)
        try:
            files = [_sibling(self.stem, f".{_npy_name(n)}.npy") for n in names]
            busy = [str(f) for f in files if _io.flock_held(f)]
            if busy:  # a writer whose lock file was removed under it
                raise ValueError(f"result {str(self.stem)!r} is being written by another "
                                 f"writer ({busy[0]!r} is locked); wait for it to finish or "
                                 "choose another name")
            _io.remove(_sibling(self.stem, ".json"))
            for name, file in zip(names, files, strict=True):
                self._rows[name] = _io.NpyRows.create(file, shape, self.dtype)
                self._rows[name].lock()
        except BaseException:
            self.close()
            raise

    def write(self, start: int, regret_rows, reward_rows, accepted_rows=None,
              metric_rows: Mapping[str, Any] | None = None) -> None:
        """Writes runs ``start .. start + rows - 1``: each argument ``(rows, S)``; ``accepted_rows``
        exactly when ``replay``; ``metric_rows`` ``{name: (rows, S)}`` for exactly the writer's
        ``metrics``."""
        if (accepted_rows is not None) != self.replay:
            raise ValueError("accepted_rows must be given exactly for a replay result "
                             f"(replay={self.replay})")
        metric_rows = {} if metric_rows is None else dict(metric_rows)
        if set(metric_rows) != set(self.metrics):
            raise ValueError(f"metric_rows must give exactly the metrics {list(self.metrics)}, "
                             f"got {sorted(metric_rows)}")
        blocks = {"cumulative_regret": regret_rows, "cumulative_reward": reward_rows,
                  "accepted": accepted_rows}
        blocks.update({_METRIC_PREFIX + m: rows for m, rows in metric_rows.items()})
        sizes = {np.shape(b)[0] for b in blocks.values() if b is not None}
        if len(sizes) != 1:
            raise ValueError(f"the row blocks have different numbers of rows: {sorted(sizes)}")
        for name, rows in self._open().items():
            rows.write(start, blocks[name])

    def flush(self) -> None:
        """Makes every written row durable (fsync)."""
        for rows in self._open().values():
            rows.flush()

    def finish(self, **result_fields) -> Result:
        """Flushes and closes the curves, writes ``<path>.steps.npy`` then ``<path>.json`` (with
        ``result_fields``: ``name``, ``wall_time``, ``compile_time``, ``env_config``,
        ``agent_config``, ``extras``, ``run_info``) atomically, and returns the memory-mapped
        :class:`Result`."""
        unknown = sorted(set(result_fields) - set(_META_TYPES))
        if unknown:
            raise TypeError(f"unknown result fields {unknown}; allowed: {sorted(_META_TYPES)}")
        rows = self._open()
        try:
            self.flush()
            files = {}
            for name, r in rows.items():  # hashed from what this writer wrote
                if r.replaced():
                    raise ValueError(f"{str(r.path)!r} was replaced or removed while "
                                     f"{str(self.stem)!r} was being written; the result is "
                                     "not saved")
                files[f"{_npy_name(name)}.npy"] = r.sha256()
            for r in rows.values():
                r.close()
            buffer = io.BytesIO()
            npy_format.write_array(buffer, self.steps, allow_pickle=False)
            _io.atomic_write_bytes(_sibling(self.stem, ".steps.npy"), buffer.getvalue())
            files["steps.npy"] = hashlib.sha256(buffer.getvalue()).hexdigest()
            arrays = {"steps": self.steps}
            arrays.update({name: _Spec(r.shape, r.dtype) for name, r in rows.items()})
            template = Result(steps=self.steps, cumulative_regret=None, cumulative_reward=None,
                              **result_fields)
            _io.atomic_write_bytes(_sibling(self.stem, ".json"), _result_json(
                template, "npy", arrays, replay=self.replay, files=files))
            return Result._load(self.stem, verify=False)
        finally:
            self.close()

    def close(self) -> None:
        """Closes the files without finishing (idempotent): no result loads under ``path``;
        releases the lock."""
        for rows in getattr(self, "_rows", {}).values():
            rows.close()
        if getattr(self, "_lock", None) is not None:
            self._lock.release()

    def __enter__(self) -> ResultWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _open(self) -> dict[str, _io.NpyRows]:
        if any(rows.closed for rows in self._rows.values()):
            raise ValueError(f"the ResultWriter of {str(self.stem)!r} is closed")
        return self._rows

