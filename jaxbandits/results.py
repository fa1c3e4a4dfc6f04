"""``Result``: the recorded curves of one simulation, their statistics, and save / load.

A result holds cumulative regret and reward for every run at the recorded steps (log-spaced by
default), plus timing and the configuration of the environment and the agent.

On disk a result is ``<name>.json`` (metadata, the format, and every array's shape and dtype)
beside its arrays: one ``<name>.npz`` (:meth:`Result.save`), or, for results larger than memory,
one ``<name>.<curve>.npy`` per curve written block by block by :class:`ResultWriter` and
memory-mapped by :meth:`Result.load`. Files are written atomically with the JSON last, loading
validates everything against the JSON, and no pickle is ever written or read. The JSON records the
sha256 of every array file and of its own fields (format version 2), and :meth:`Result.load`
checks them, so an edited value, a swapped or replaced file (another seed's arrays of the same
shape) or an edited field (the key) is an error naming the file; version-1 files, written before
the hashes, load as before. One process at a time writes a result (a lock beside it, taken
before the first file is touched and held until its JSON is written). The statistics
(:meth:`Result.mean`, :meth:`Result.confidence_band`, :meth:`Result.final`) reduce over blocks of
runs with float64 accumulators, so a memory-mapped result never needs to fit in memory.

Environments that report extra per-round metrics (``Spec.metrics``, such as a dueling
environment's weak regret) add one cumulative curve per metric (:attr:`Result.metrics`), stored
beside the others (``metric.<name>`` arrays) and understood wherever a metric name is.

Replay environments (logged data, ``Spec.replay``) have no regret: their results also hold the
cumulative number of accepted rounds, and their headline metric (:attr:`Result.default_metric`,
used by :meth:`Result.final`, :meth:`Result.mean`, the plots and the command line) is the
click-through rate ``CTR = reward over accepted rounds / accepted rounds`` instead of regret.

Every result also records how it was made (:attr:`Result.run_info`: versions, devices, sizes,
key; see :func:`environment_info`). :func:`paired_difference` compares two results of common
random numbers run by run. This module never imports :mod:`jaxbandits.plotting` nor matplotlib.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import math
import zipfile
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.lib import format as npy_format

from jaxbandits import _io

__all__ = [
    "RESERVED_METRICS",
    "Result",
    "ResultWriter",
    "check_metric_names",
    "common_random_numbers",
    "config_of",
    "environment_info",
    "is_result_file",
    "lock_result",
    "paired_difference",
    "t_quantile",
]

#: Names an extra metric (``Spec.metrics``) may not take: the built-in metrics.
RESERVED_METRICS = ("regret", "reward", "accepted", "ctr")


def check_metric_names(names: Any, where: str) -> tuple[str, ...]:
    """``names`` as a tuple of extra metric names, or ``ValueError`` naming ``where``: a
    sequence of distinct strings, each a Python identifier and none of :data:`RESERVED_METRICS`.
    """
    if isinstance(names, (str, bytes)) or not isinstance(names, Sequence):
        raise ValueError(f"{where}: metrics must be a tuple of names, got {names!r}")
    names = tuple(names)
    for name in names:
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"{where}: metric names must be Python identifiers, got {name!r}")
        if name in RESERVED_METRICS:
            raise ValueError(f"{where}: metric name {name!r} is taken by a built-in metric "
                             f"({', '.join(RESERVED_METRICS)})")
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: metric names must be distinct, got {names!r}")
    return names

# Two-sided 95% Student-t quantiles t_{0.975, df} for df = 1..30; beyond, the normal 1.96.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t_quantile(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (normal past 30)."""
    if df < 1:
        return math.inf
    return _T975[df - 1] if df <= len(_T975) else 1.96 + 2.4 / df  # within 1e-3 for df > 30


@dataclasses.dataclass
class Result:
    """Cumulative regret and reward of ``num_runs`` runs at the recorded steps.

    Attributes:
      steps: ``(S,)`` int, the number of rounds played at each record (1-based; the last is T).
      cumulative_regret: ``(runs, S)`` cumulative pseudo-regret.
      cumulative_reward: ``(runs, S)`` cumulative observed reward.
      accepted: ``(runs, S)`` cumulative number of accepted rounds (replay environments), or None.
        With it, ``cumulative_reward`` sums the rewards of accepted rounds only.
      metrics: ``{name: (runs, S)}`` the cumulative sums of the environment's extra per-round
        metrics (``Spec.metrics``, in its order), floating; empty for most environments. Each
        name is a metric of :meth:`mean`, :meth:`final`, :meth:`to_dataframe`...
      wall_time: seconds spent running, compile excluded.
      compile_time: seconds spent compiling.
      name: a label (the agent's name, or a grid point's).
      env_config / agent_config: the configuration of the environment and the agent.
      extras: any other metadata (key, horizon, devices...).
      run_info: a record of how the result was made (JSON object): the versions and devices
        of :func:`environment_info`, the run's sizes and key, and the caller's own entries.
    """

    steps: np.ndarray
    cumulative_regret: np.ndarray
    cumulative_reward: np.ndarray
    accepted: np.ndarray | None = None
    wall_time: float = 0.0
    compile_time: float = 0.0
    name: str = ""
    env_config: dict[str, Any] = dataclasses.field(default_factory=dict)
    agent_config: dict[str, Any] = dataclasses.field(default_factory=dict)
    extras: dict[str, Any] = dataclasses.field(default_factory=dict)
    run_info: dict[str, Any] = dataclasses.field(default_factory=dict)
    metrics: dict[str, np.ndarray] = dataclasses.field(default_factory=dict)

    @property
    def num_runs(self) -> int:
        return int(self.cumulative_regret.shape[0])

    @property
    def horizon(self) -> int:
        return int(self.steps[-1])

    @property
    def replay(self) -> bool:
        """Whether this is a replay result (it records accepted rounds; regret is not defined)."""
        return self.accepted is not None

    @property
    def default_metric(self) -> str:
        """The headline metric: ``"ctr"`` for replay results, else ``"regret"``."""
        return "ctr" if self.replay else "regret"

    @property
    def metric_names(self) -> tuple[str, ...]:
        """Every metric name this result understands: ``"regret"``, ``"reward"``, for replay
        results ``"ctr"`` and ``"accepted"``, then the extra metrics (:attr:`metrics`)."""
        builtin = ("regret", "reward") + (("ctr", "accepted") if self.replay else ())
        return builtin + tuple(self.metrics)

    @property
    def seed_steps_per_second(self) -> float:
        """Rounds played per second of wall time, summed over runs (compile excluded)."""
        return self.num_runs * self.horizon / max(self.wall_time, 1e-12)

    def _metric(self, metric: str | None) -> np.ndarray:
        """The ``(runs, S)`` values of ``metric`` (in memory; the statistics use blocks)."""
        return np.concatenate(list(self._metric_blocks(metric, slice(None))), axis=0)

    def _metric_blocks(self, metric: str | None, columns: slice):
        """``metric`` over blocks of runs, as float64 ``(rows, S')`` arrays of ``columns``.

        Memory-mapped results (see :class:`ResultWriter`) are read one block at a time, so the
        statistics of a result larger than memory need only one block in memory.
        """
        metric = self.default_metric if metric is None else metric
        if metric in ("ctr", "accepted") and self.accepted is None:
            raise ValueError(f"metric {metric!r} needs a replay result (with `accepted`)")
        sources = {"regret": (self.cumulative_regret,), "reward": (self.cumulative_reward,),
                   "accepted": (self.accepted,), "ctr": (self.cumulative_reward, self.accepted)}
        if isinstance(metric, str) and metric in self.metrics and metric not in sources:
            sources[metric] = (self.metrics[metric],)
        if not isinstance(metric, str) or metric not in sources:
            raise ValueError(f"metric must be one of {', '.join(map(repr, self.metric_names))} "
                             f"(for result {self.name!r}), got {metric!r}")
        arrays = sources[metric]
        runs, width = arrays[0].shape[0], len(range(arrays[0].shape[1])[columns])
        rows = max(1, _BLOCK_BYTES // (8 * len(arrays) * max(width, 1)))
        for start in range(0, max(runs, 1), rows):
            block = [np.asarray(a[start : start + rows, columns], np.float64) for a in arrays]
            if metric == "ctr":  # 0 before the first accepted round
                yield block[0] / np.maximum(block[1], 1.0)
            else:
                yield block[0]

    def _moments(self, metric: str | None, columns: slice = slice(None)):
        """``(mean, sample std or None, runs)`` over runs, each ``(S',)`` float64: one pass over
        blocks of runs, merged with Chan et al.'s pairwise update (exact for one block)."""
        count, mean, m2 = 0, None, None
        for block in self._metric_blocks(metric, columns):
            n = block.shape[0]
            if n == 0:
                continue
            block_mean = block.mean(axis=0)
            block_m2 = np.square(block - block_mean).sum(axis=0)
            if mean is None:
                count, mean, m2 = n, block_mean, block_m2
                continue
            delta, total = block_mean - mean, count + n
            mean = mean + delta * (n / total)
            m2 = m2 + block_m2 + np.square(delta) * (count * n / total)
            count = total
        if mean is None:  # no runs
            width = len(range(self.cumulative_regret.shape[1])[columns])
            return np.full(width, np.nan), None, 0
        std = np.sqrt(m2 / (count - 1)) if count > 1 else None
        return mean, std, count

    def mean(self, metric: str | None = None) -> np.ndarray:
        """``(S,)`` mean over runs of ``metric`` (default :attr:`default_metric`), float64.

        Metrics: ``"regret"`` and ``"reward"`` (cumulative), for replay results ``"ctr"``
        (each run's clicks over its accepted rounds so far) and ``"accepted"`` (cumulative), and
        the environment's extra metrics (the names of :attr:`metrics`, cumulative). Any other
        name raises ``ValueError`` listing :attr:`metric_names`.
        """
        return self._moments(metric)[0]

    def confidence_band(self, metric: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)``, each ``(S,)``: the 95% Student-t confidence band of the mean."""
        return _band(*self._moments(metric))

    def final(self, metric: str | None = None) -> tuple[float, float]:
        """``(mean, half-width of its 95% confidence interval)`` at the last step.

        The metric defaults to :attr:`default_metric`: final cumulative regret, or for a replay
        result the final CTR. Only the last column is read.
        """
        mean, std, count = self._moments(metric, slice(-1, None))
        lower, upper = _band(mean, std, count)
        return float(mean[-1]), float((upper[-1] - lower[-1]) / 2)

    def to_dataframe(self, metrics: str | Sequence[str] | None = None):
        """The curves as a tidy pandas DataFrame with columns ``run, step, metric, value``.

        One row per run, recorded step and metric (``runs * S * len(metrics)`` rows, ordered by
        metric, run, step); ``value`` is float64, ``metric`` a categorical. Everything is read
        into memory.

        Args:
          metrics: a metric name or a sequence of them (see :meth:`mean`); default
            ``("regret", "reward")``, or for replay results ``("ctr", "reward", "accepted")``
            (their regret is always 0), followed by the extra metrics (:attr:`metrics`).

        Raises:
          ImportError: pandas is not installed (``pip install pandas``).

        Example::

            df = result.to_dataframe()
            df[df.metric == "regret"].groupby("step").value.mean()
        """
        try:
            import pandas as pd
        except ImportError as err:
            raise ImportError("Result.to_dataframe needs pandas: pip install pandas") from err
        if metrics is None:
            metrics = ("ctr", "reward", "accepted") if self.replay else ("regret", "reward")
            metrics += tuple(self.metrics)
        metrics = [metrics] if isinstance(metrics, str) else list(metrics)
        if not metrics or len(set(metrics)) != len(metrics):
            raise ValueError(f"metrics must be distinct metric names, got {metrics!r}")
        values = [self._metric(m).ravel() for m in metrics]  # each (runs * S,), run-major
        steps = np.asarray(self.steps, np.int64)
        runs, size = self.num_runs, steps.size
        return pd.DataFrame({
            "run": np.tile(np.repeat(np.arange(runs, dtype=np.int64), size), len(metrics)),
            "step": np.tile(steps, runs * len(metrics)),
            "metric": pd.Categorical(np.repeat(metrics, runs * size), categories=metrics),
            "value": np.concatenate(values),
        })

    # ---------------------------------------------------------------------------- persistence

    def save(self, path: str | Path) -> Path:
        """Writes ``<path>.npz`` (arrays) and ``<path>.json`` (metadata); returns the ``.npz``.

        The whole name is kept (``sweep/explore_scale=0.1`` writes
        ``sweep/explore_scale=0.1.npz``); only a trailing ``.npz`` or ``.json`` is dropped. Both
        files are written atomically, the JSON last: a result loads only once both are complete
        (an older result under the same name is removed first, so the two never mix). The JSON
        records the format, every array's shape and dtype, the ``.npz``'s sha256 and that of its
        own fields, which :meth:`load` checks. The result's lock is held while writing.

        Raises:
          ValueError: ``path`` is an existing folder, ``.`` or ``..``, lies inside a file, or
            another process is writing a result under this name.
          OSError: the disk is full (or another write failure), naming the file.
        """
        stem = _check_stem(_stem(path))
        arrays = _result_arrays(self)
        _check_arrays(arrays, f"result {self.name!r}")
        _io.check_writable_dir(stem.parent)
        json_path, npz_path = _sibling(stem, ".json"), _sibling(stem, ".npz")
        buffer = io.BytesIO()
        _io.write_npz(buffer, arrays)
        data = buffer.getvalue()
        with _lock(stem):
            _io.remove(json_path)  # from here until the new JSON, no result loads under this name
            _io.atomic_write_bytes(npz_path, data)
            files = {"npz": hashlib.sha256(data).hexdigest()}
            _io.atomic_write_bytes(json_path, _result_json(self, "npz", arrays, files=files))
        return npz_path

    @classmethod
    def load(cls, path: str | Path) -> Result:
        """Reads a result written by :meth:`save` or :class:`ResultWriter` (give the name, or
        its ``.json`` or ``.npz``).

        The JSON says which form holds the arrays: one ``.npz`` (read into memory) or one
        ``.npy`` per array (memory-mapped read-only, for results larger than memory). Everything
        is checked: the JSON's keys and types, that the arrays are the ones it lists with its
        shapes and dtypes, floating curves of shape ``(runs, S)``, integer ``steps`` positive and
        increasing, ``accepted`` present exactly for replay results, extra metrics
        (``metric.<name>``) with valid names, and (version 2) the sha256 of every array file and
        of the JSON's own fields. No pickle is ever loaded.

        Raises:
          FileNotFoundError: there is no ``<path>.json``.
          ValueError: saying what is wrong and in which file.
        """
        return cls._load(_stem(path), verify=True)

    @classmethod
    def _load(cls, stem: Path, verify: bool) -> Result:
        """:meth:`load`; ``verify=False`` skips the sha256 of the array files (a writer that
        has just hashed what it wrote)."""
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
        return cls(**arrays, **meta, metrics=metrics)


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


# ------------------------------------------------------------------- comparisons and provenance


def common_random_numbers(a: Result, b: Result) -> bool:
    """Whether run ``r`` of ``a`` and of ``b`` saw the same instance, contexts and noise.

    True when both record the same key (``extras["key"]``), horizon, recorded steps, number of
    runs and environment configuration, as the results of one :func:`~jaxbandits.compare` or
    :func:`~jaxbandits.sweep` over agent fields do.
    """
    return _crn_mismatch(a, b) is None


def paired_difference(a: Result, b: Result, metric: str | None = None) -> tuple[float, float]:
    """``(mean, half-width)``: the mean over runs of ``a``'s final ``metric`` minus ``b``'s in
    the same run, and the half-width of its 95% Student-t confidence interval.

    With common random numbers the run-by-run differences cancel the variation of the instances
    and the noise, so the interval is usually much narrower than the unpaired one built from
    :meth:`Result.final` of each. The half-width is nan for a single run.

    Args:
      a / b: results with common random numbers (see :func:`common_random_numbers`).
      metric: see :meth:`Result.mean`; default: :attr:`Result.default_metric` (both must agree).

    Raises:
      ValueError: the results are not common random numbers (saying why), or the metric
        does not apply.

    Example::

        results = jb.compare(env, {"lin-ts": ts, "lin-ucb": ucb}, key, 1_000, 50)
        diff, half = paired_difference(results["lin-ts"], results["lin-ucb"])   # regret
    """
    reason = _crn_mismatch(a, b)
    if reason is not None:
        raise ValueError(f"paired_difference needs common random numbers: {reason}")
    if metric is None and a.default_metric != b.default_metric:
        raise ValueError(f"the default metrics differ ({a.default_metric!r}, "
                         f"{b.default_metric!r}); pass metric=")
    last = slice(-1, None)
    diff = np.concatenate(list(a._metric_blocks(metric, last)))[:, 0] \
        - np.concatenate(list(b._metric_blocks(metric, last)))[:, 0]
    n = diff.size
    if n < 2:
        return float(diff.mean()), math.nan
    return float(diff.mean()), float(t_quantile(n - 1) * diff.std(ddof=1) / math.sqrt(n))


def _crn_mismatch(a: Result, b: Result) -> str | None:
    """Why ``a`` and ``b`` are not common random numbers, or None if they are."""
    for which, r in (("a", a), ("b", b)):
        if not isinstance(r, Result):
            raise ValueError(f"{which} must be a Result, got {type(r).__name__}")
        if r.extras.get("key") is None:
            return f"{which} ({r.name!r}) does not record its key (extras['key'])"
    if a.num_runs != b.num_runs:
        return f"the numbers of runs differ ({a.num_runs} and {b.num_runs})"
    if a.horizon != b.horizon:
        return f"the horizons differ ({a.horizon} and {b.horizon})"
    if not np.array_equal(a.steps, b.steps):
        return "the recorded steps differ"
    if _canonical(a.extras["key"]) != _canonical(b.extras["key"]):
        return f"the keys differ ({a.extras['key']} and {b.extras['key']})"
    if _canonical(a.env_config) != _canonical(b.env_config):
        return (f"the environments differ ({a.env_config.get('name', '?')!r} and "
                f"{b.env_config.get('name', '?')!r} configurations)")
    return None


def _canonical(value: Any) -> str:
    """``value`` as sorted JSON, so a tuple in memory equals the list it loads back as."""
    return json.dumps(value, sort_keys=True, default=_jsonable)


def environment_info(devices: Sequence[Any] | None = None) -> dict[str, Any]:
    """The software and hardware a result was made with, as a JSON-friendly dict.

    Keys: ``jaxbandits``, ``jax``, ``jaxlib``, ``numpy`` and ``python`` (versions),
    ``platform`` (the OS), ``x64`` (whether JAX runs in float64), and ``devices``:
    ``{"backend", "kind", "count"}`` of ``devices`` (default: ``jax.devices()``).

    Example::

        environment_info()["devices"]   # {'backend': 'cpu', 'kind': 'cpu', 'count': 1}
    """
    import platform
    import sys

    import jax
    import jaxlib

    devices = list(jax.devices() if devices is None else devices)
    return {
        "jaxbandits": _package_version(),
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "numpy": np.__version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "x64": bool(jax.config.jax_enable_x64),
        "devices": {
            "backend": devices[0].platform if devices else None,
            "kind": ", ".join(sorted({d.device_kind for d in devices})) or None,
            "count": len(devices),
        },
    }


def _package_version() -> str:
    import sys

    version = getattr(sys.modules.get("jaxbandits"), "__version__", None)
    if version is None:  # while jaxbandits/__init__ is still importing
        from importlib import metadata

        try:
            version = metadata.version("jaxbandits")
        except metadata.PackageNotFoundError:
            version = "unknown"
    return version


# ------------------------------------------------------------------------------------- helpers

_FORMAT, _VERSION = "jaxbandits-result", 2  # 2: with sha256 (version 1 files load without)
_BLOCK_BYTES = 1 << 25  # float64 bytes per block of runs in the statistics (32 MiB)
_CURVES = ("cumulative_regret", "cumulative_reward", "accepted")
_NPY_NAMES = {"steps": "steps", "cumulative_regret": "regret", "cumulative_reward": "reward",
              "accepted": "accepted"}
# An extra metric ``name`` is the array ``metric.<name>`` (in the .npz, and in the JSON's
# "arrays" in the environment's order), stored by ``save_to`` as ``<path>.metric.<name>.npy``.
_METRIC_PREFIX = "metric."
_META_TYPES = {"name": (str,), "wall_time": (int, float), "compile_time": (int, float),
               "env_config": (dict,), "agent_config": (dict,), "extras": (dict,),
               "run_info": (dict,)}
_OPTIONAL_KEYS = {"run_info"}  # absent from older version-1 files: loads as {}
_LEGACY_KEYS = set(_META_TYPES) - _OPTIONAL_KEYS  # written before the format was recorded


@dataclasses.dataclass(frozen=True)
class _Spec:
    """The shape and dtype of an array that is on disk but not in memory."""

    shape: tuple[int, ...]
    dtype: np.dtype


def _band(mean: np.ndarray, std: np.ndarray | None, count: int):
    if std is None:
        return mean, mean
    half = t_quantile(count - 1) * std / math.sqrt(count)
    return mean - half, mean + half


def _stem(path: str | Path) -> Path:
    """The result's name: ``path`` without a trailing ``.npz`` / ``.json`` (and nothing else)."""
    path = Path(path)
    return path.with_suffix("") if path.suffix in (".npz", ".json") else path


def _sibling(stem: Path, suffix: str) -> Path:
    return stem.with_name(stem.name + suffix)


def _npy_name(array: str) -> str:
    """The middle of an array's ``.npy`` file name: ``<path>.<this>.npy``."""
    return array if array.startswith(_METRIC_PREFIX) else _NPY_NAMES[array]


def _result_arrays(result: Result) -> dict[str, np.ndarray]:
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


def _result_json(result: Result, storage: str, arrays: dict, replay: bool | None = None, *,
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


def _check_meta_types(meta: dict, where: str) -> None:
    for key, types in _META_TYPES.items():
        if key not in meta:  # an optional key (the required ones are checked before)
            continue
        if isinstance(meta[key], bool) or not isinstance(meta[key], types):
            names = " or ".join(t.__name__ for t in types)
            raise ValueError(f"{where}: {key!r} must be {names}, got {meta[key]!r}")


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


def _check_listed(arrays: dict, listed: dict, json_path: Path, stem: Path, storage: str) -> None:
    """The arrays on disk are exactly those the JSON lists, with its shapes and dtypes."""
    def data(name=None):
        if storage == "npz":
            return repr(str(_sibling(stem, ".npz")))
        return "the .npy files" if name is None else repr(str(_sibling(stem,
                                                                        f".{_npy_name(name)}.npy")))

    if set(arrays) != set(listed):
        missing, extra = sorted(set(listed) - set(arrays)), sorted(set(arrays) - set(listed))
        raise ValueError(f"{data()} and {str(json_path)!r} disagree: arrays missing {missing}, "
                         f"unexpected {extra}")
    for name, entry in listed.items():
        try:
            dtype = np.dtype(entry["dtype"])
        except TypeError as e:
            raise ValueError(f"{str(json_path)!r}: {name!r} has an unknown dtype "
                             f"{entry['dtype']!r}") from e
        array = arrays[name]
        if list(array.shape) != entry["shape"] or array.dtype != dtype:
            raise ValueError(f"{str(json_path)!r} says {name!r} is {dtype} of shape "
                             f"{tuple(entry['shape'])}, but {data(name)} holds {array.dtype} of "
                             f"shape {array.shape} (tampered or mismatched files)")


def _check_steps(steps: np.ndarray, where: str) -> None:
    if not np.issubdtype(steps.dtype, np.integer) or steps.ndim != 1 or steps.size == 0:
        raise ValueError(f"{where}: 'steps' must be a non-empty (S,) integer array, got "
                         f"{steps.dtype} of shape {steps.shape}")
    if steps[0] < 1 or np.any(np.diff(steps) <= 0):
        raise ValueError(f"{where}: 'steps' must be positive and increasing, got "
                         f"{np.asarray(steps).tolist()[:10]}")


def _check_arrays(arrays: dict, where: str) -> None:
    """Names, dtypes and shapes of a result's arrays (see :meth:`Result.load`)."""
    required = {"steps", "cumulative_regret", "cumulative_reward"}
    names = set(arrays)
    metrics = [n for n in arrays if n.startswith(_METRIC_PREFIX)]
    unexpected = names - required - {"accepted"} - set(metrics)
    if not required <= names or unexpected:
        raise ValueError(f"{where}: arrays must be {sorted(required)} and optionally "
                         f"'accepted' and '{_METRIC_PREFIX}<name>' metrics; missing "
                         f"{sorted(required - names)}, unexpected {sorted(unexpected)}")
    check_metric_names([n[len(_METRIC_PREFIX):] for n in metrics], where)
    steps = arrays["steps"]
    _check_steps(steps, where)
    shape = None
    for name in ("cumulative_regret", "cumulative_reward", "accepted", *metrics):
        if name not in arrays:
            continue
        array = arrays[name]
        kinds = (np.floating, np.integer) if name == "accepted" else (np.floating,)
        if not any(np.issubdtype(array.dtype, k) for k in kinds):
            raise ValueError(f"{where}: {name!r} must be floating, got {array.dtype}")
        if array.ndim != 2 or array.shape[1] != steps.shape[0]:
            raise ValueError(f"{where}: {name!r} must be (runs, {steps.shape[0]}) (one column "
                             f"per recorded step), got shape {array.shape}")
        if shape is not None and array.shape != shape:
            raise ValueError(f"{where}: {name!r} has shape {array.shape}, the other curves "
                             f"{shape}")
        shape = array.shape


def _jsonable(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if hasattr(value, "tolist"):
        return np.asarray(value).tolist()
    return repr(value)


def config_of(obj: Any) -> dict[str, Any]:
    """The configuration of an environment or agent as a JSON-friendly dict (with its name)."""
    config: dict[str, Any] = {"name": getattr(obj, "name", "") or type(obj).__name__}
    for field in dataclasses.fields(obj):
        value = getattr(obj, field.name)
        if hasattr(value, "tolist"):
            value = np.asarray(value).tolist()
        elif dataclasses.is_dataclass(value):
            value = config_of(value)
        elif not isinstance(value, (int, float, str, bool, type(None), list, tuple)):
            value = repr(value)
        config[field.name] = value
    return config
