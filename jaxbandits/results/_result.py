"""The :class:`Result` type: the recorded curves of one simulation and their statistics."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from jaxbandits import metrics as _metrics
from jaxbandits.results import _files, _stats
from jaxbandits.results._format import _stem

_BLOCK_BYTES = 1 << 25  # float64 bytes per block of runs in the statistics (32 MiB)


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
        return _metrics.default_metric(self.replay)

    @property
    def metric_names(self) -> tuple[str, ...]:
        """Every metric name this result understands: ``"regret"``, ``"reward"``, for replay
        results ``"ctr"`` and ``"accepted"``, then the extra metrics (:attr:`metrics`)."""
        return _metrics.builtin_names(self.replay) + tuple(self.metrics)

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
        if isinstance(metric, str) and metric in _metrics.BUILTIN and \
                _metrics.BUILTIN[metric].replay and not self.replay:
            raise ValueError(f"metric {metric!r} needs a replay result (with `accepted`)")
        if not isinstance(metric, str) or metric not in self.metric_names:
            raise ValueError(f"metric must be one of {', '.join(map(repr, self.metric_names))} "
                             f"(for result {self.name!r}), got {metric!r}")
        m = _metrics.metric(metric)
        arrays = [self.metrics[metric] if source == "metrics" else getattr(self, source)
                  for source in m.sources]
        runs, width = arrays[0].shape[0], len(range(arrays[0].shape[1])[columns])
        rows = max(1, _BLOCK_BYTES // (8 * len(arrays) * max(width, 1)))
        for start in range(0, max(runs, 1), rows):
            yield m.per_run(*(np.asarray(a[start : start + rows, columns], np.float64)
                              for a in arrays))

    def _moments(self, metric: str | None, columns: slice = slice(None)):
        """``(mean, sample std or None, runs)`` over runs, each ``(S',)`` float64 (see
        :func:`jaxbandits.results._stats.moments`)."""
        width = len(range(self.cumulative_regret.shape[1])[columns])
        return _stats.moments(self._metric_blocks(metric, columns), width)

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
        return _stats.band(*self._moments(metric))

    def final(self, metric: str | None = None) -> tuple[float, float]:
        """``(mean, half-width of its 95% confidence interval)`` at the last step.

        The metric defaults to :attr:`default_metric`: final cumulative regret, or for a replay
        result the final CTR. Only the last column is read.
        """
        mean, std, count = self._moments(metric, slice(-1, None))
        lower, upper = _stats.band(mean, std, count)
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
        return _files.save(self, path)

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
        return cls(**_files.read(stem, verify))
