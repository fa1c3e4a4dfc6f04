"""Experiment trackers: the running statistics of an experiment sent to TensorBoard, MLflow or
Weights & Biases.

A tracker is a callback ``tracker(stats, run_info)`` called between chunks of rounds (and
``tracker.close()`` at the end) with:

- ``stats``: ``{name: number}``, the running statistics; ``stats["step"]`` is the number of
  rounds done, every other entry a metric at that step (``"regret/mean"``, ``"reward/mean"``,
  ...);
- ``run_info``: how the experiment is made (:attr:`jaxbandits.Result.run_info`: versions,
  devices, sizes, key, the caller's entries), the same dict at every call.

Each adapter sends ``run_info`` once, at its first call, as the tracker's parameters
(:func:`flat_params`: nested keys joined by ``"."``, lists as JSON), and every call's metrics
at ``step``. The adapters import their tracker only when built (``pip install
'jaxbandits[tensorboard]'``, ``[mlflow]``, ``[wandb]``), and each has an offline mode: a
TensorBoard log directory, an MLflow ``file:`` store, W&B's ``mode="offline"``.

``compare`` and ``sweep`` call one tracker for several configurations: their ``run_info``
holds ``"name"`` (the agent's name, or the grid point's label) and, for a sweep, ``"grid"``
(the point's values). An adapter logs each name as a run of its own, the tracker's usual way
to compare runs: a TensorBoard subfolder ``<logdir>/<name>``, an MLflow run nested under the
tracker's run, a W&B run in the tracker's group. Without a ``"name"`` (``simulate``),
everything goes to the tracker's own run.

:func:`log_result` replays a finished :class:`~jaxbandits.Result`'s recorded curves into a
tracker, step by step.

Example::

    tracker = jb.tracking.TensorBoardTracker("runs/lin-ts")
    jb.tracking.log_result(result, tracker)          # tensorboard --logdir runs
"""

from __future__ import annotations

import importlib
import json
import os
import time
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "MLflowTracker",
    "TensorBoardTracker",
    "Tracker",
    "WandbTracker",
    "flat_params",
    "log_result",
    "result_stats",
    "running_stats",
]


@runtime_checkable
class Tracker(Protocol):
    """The callback protocol: called between chunks, closed at the end."""

    def __call__(self, stats: Mapping[str, float], run_info: Mapping[str, Any]) -> None:
        """Records ``stats`` (``"step"`` and the metrics) and, on the first call, ``run_info``."""

    def close(self) -> None:
        """Flushes and ends the tracker's run."""


def flat_params(run_info: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """``run_info`` as flat tracker parameters: nested dicts joined with ``"."`` (``
    {"devices": {"count": 1}}`` -> ``{"devices.count": 1}``), numbers, strings and bools kept,
    None as ``"None"``, lists as JSON text."""
    out: dict[str, Any] = {}
    for key, value in run_info.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.update(flat_params(value, f"{name}."))
        elif isinstance(value, (bool, int, float, str)):
            out[name] = value
        elif value is None:
            out[name] = "None"
        else:
            out[name] = json.dumps(value, default=str)
    return out


def running_stats(step: int, regret: Any, reward: Any) -> dict[str, float]:
    """The statistics at ``step`` of runs whose cumulative regret and reward there are
    ``regret`` and ``reward`` ``(runs,)``: ``step``, the means over runs, the regret's standard
    error (0 for one run)."""
    regret, reward = np.asarray(regret, np.float64), np.asarray(reward, np.float64)
    runs = regret.shape[0]
    stderr = float(np.std(regret, ddof=1) / np.sqrt(runs)) if runs > 1 else 0.0
    return {"step": int(step), "regret/mean": float(regret.mean()), "regret/stderr": stderr,
            "reward/mean": float(reward.mean())}


def result_stats(result: Any) -> list[dict[str, float]]:
    """The running statistics of a :class:`~jaxbandits.Result` at each recorded step
    (:func:`running_stats`)."""
    regret = np.asarray(result.cumulative_regret, np.float64)
    reward = np.asarray(result.cumulative_reward, np.float64)
    return [running_stats(step, regret[:, j], reward[:, j])
            for j, step in enumerate(np.asarray(result.steps).tolist())]


def log_result(result: Any, tracker: Tracker, *, close: bool = True) -> None:
    """Sends a finished result's statistics (:func:`result_stats`) and ``run_info`` to
    ``tracker``, as the runner's chunks would have, then closes it unless ``close=False``."""
    run_info = dict(result.run_info)
    for stats in result_stats(result):
        tracker(stats, run_info)
    if close:
        tracker.close()


class _Adapter:
    """Shared plumbing: per run (``run_info["name"]``, None for the tracker's own), the
    parameters once, then metrics at ``stats["step"]``."""

    def __init__(self) -> None:
        self._started: set[str | None] = set()

    def __call__(self, stats: Mapping[str, float], run_info: Mapping[str, Any]) -> None:
        if "step" not in stats:
            raise ValueError(f"{type(self).__name__}: stats must hold 'step' (rounds done), "
                             f"got keys {sorted(stats)}")
        name = run_info.get("name")
        name = None if name is None else str(name)
        if name not in self._started:
            self._params(name, flat_params(run_info))
            self._started.add(name)
        metrics = {k: float(v) for k, v in stats.items() if k != "step"}
        self._metrics(name, int(stats["step"]), metrics)

    def _params(self, name: str | None, params: dict[str, Any]) -> None:
        raise NotImplementedError

    def _metrics(self, name: str | None, step: int, metrics: dict[str, float]) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _require(module: str, tracker: str, extra: str) -> Any:
    """``module`` imported, or an ``ImportError`` that names the extra installing it."""
    try:
        return importlib.import_module(module)
    except ImportError as err:
        raise ImportError(f"{tracker} needs {module}: pip install 'jaxbandits[{extra}]'") from err


def _folder_name(name: str) -> str:
    """``name`` as one path component (separators and leading dots replaced)."""
    out = "".join("_" if c in "/\\\0" else c for c in name).lstrip(".")
    return out or "_"


class TensorBoardTracker(_Adapter):
    """Writes TensorBoard event files with ``tensorboardX`` (``pip install
    'jaxbandits[tensorboard]'``): metrics as scalars, ``run_info`` as hyperparameters and as a
    text summary. Offline by nature: ``tensorboard --logdir <logdir>`` reads it. A named run
    (``compare``, ``sweep``) writes to ``<logdir>/<name>``, so TensorBoard draws the agents
    or grid points as runs over one another."""

    def __init__(self, logdir: str | os.PathLike, **writer_kwargs: Any):
        super().__init__()
        self._SummaryWriter = _require("tensorboardX", "TensorBoardTracker",
                                       "tensorboard").SummaryWriter
        self.logdir = os.fspath(logdir)
        # the hyperparameters go through a writer of their own in the same folder, whose file
        # would replace this one's if both were named in the same second: a suffix keeps them apart
        writer_kwargs.setdefault("filename_suffix", ".metrics")
        self._writer_kwargs = writer_kwargs
        self.writer = self._SummaryWriter(self.logdir, **writer_kwargs)
        self.writers: dict[str, Any] = {}  # the named runs'

    def _writer(self, name: str | None):
        if name is None:
            return self.writer
        if name not in self.writers:
            self.writers[name] = self._SummaryWriter(
                os.path.join(self.logdir, _folder_name(name)), **self._writer_kwargs)
        return self.writers[name]

    def _params(self, name: str | None, params: dict[str, Any]) -> None:
        writer = self._writer(name)
        writer.add_text("run_info", "\n".join(f"    {k}: {v}" for k, v in params.items()))
        writer.add_hparams(params, {}, name=".")

    def _metrics(self, name: str | None, step: int, metrics: dict[str, float]) -> None:
        writer = self._writer(name)
        for key, value in metrics.items():
            writer.add_scalar(key, value, step)

    def close(self) -> None:
        for writer in self.writers.values():
            writer.close()
        self.writer.close()


class MLflowTracker(_Adapter):
    """Logs to an MLflow run (``pip install 'jaxbandits[mlflow]'``): ``run_info`` as the run's
    parameters, metrics with ``step``. Offline: ``tracking_uri="file:./mlruns"`` (a local store;
    MLflow 3 asks for ``MLFLOW_ALLOW_FILE_STORE=true`` there) or ``"sqlite:///mlflow.db"``.
    A named run (``compare``, ``sweep``) is a child run nested under this one (MLflow's
    ``mlflow.parentRunId`` tag), ended by :meth:`close`.

    Args:
      experiment: the experiment's name (None: MLflow's default).
      run_name: the run's name.
      tracking_uri: where to log (None: MLflow's default, ``./mlruns``).
    """

    def __init__(self, experiment: str | None = None, run_name: str | None = None,
                 tracking_uri: str | None = None):
        super().__init__()
        self.mlflow = mlflow = _require("mlflow", "MLflowTracker", "mlflow")
        if tracking_uri is not None:
            mlflow.set_tracking_uri(tracking_uri)
        if experiment is not None:
            mlflow.set_experiment(experiment)
        self.run = mlflow.start_run(run_name=run_name)
        self.children: dict[str, str] = {}  # name -> run id
        self._client = None

    def _child(self, name: str) -> str:
        if name not in self.children:
            if self._client is None:
                self._client = self.mlflow.MlflowClient()
            info = self.run.info
            child = self._client.create_run(info.experiment_id, run_name=name,
                                            tags={"mlflow.parentRunId": info.run_id})
            self.children[name] = child.info.run_id
        return self.children[name]

    def _params(self, name: str | None, params: dict[str, Any]) -> None:
        # MLflow keeps parameters as strings of at most 6,000 characters
        params = {k: str(v)[:6000] for k, v in params.items()}
        if name is None:
            self.mlflow.log_params(params)
        else:
            from mlflow.entities import Param

            run_id = self._child(name)
            self._client.log_batch(run_id, params=[Param(k, v) for k, v in params.items()])

    def _metrics(self, name: str | None, step: int, metrics: dict[str, float]) -> None:
        if name is None:
            self.mlflow.log_metrics(metrics, step=step)
            return
        from mlflow.entities import Metric

        run_id, now = self._child(name), int(time.time() * 1000)
        self._client.log_batch(run_id, metrics=[Metric(k, v, now, step)
                                                for k, v in metrics.items()])

    def close(self) -> None:
        for run_id in self.children.values():
            self._client.set_terminated(run_id)
        self.mlflow.end_run()


class WandbTracker(_Adapter):
    """Logs to a Weights & Biases run (``pip install 'jaxbandits[wandb]'``): ``run_info`` as
    the run's config, metrics with ``step``. Offline by default (``mode="offline"``: files under
    ``dir``, uploaded later with ``wandb sync``). A named run (``compare``, ``sweep``) is a W&B
    run of that name in the group ``init_kwargs["group"]`` (default: the project), one per
    name, all kept open until :meth:`close` (W&B's ``reinit="create_new"``, wandb >= 0.19.10).

    Args:
      project: the W&B project.
      mode: ``"offline"`` (default), ``"online"`` or ``"disabled"``.
      init_kwargs: passed to ``wandb.init`` (``dir``, ``name``, ``entity``, ``tags``...).
    """

    def __init__(self, project: str | None = None, mode: str = "offline", **init_kwargs: Any):
        super().__init__()
        self.wandb = _require("wandb", "WandbTracker", "wandb")
        self.project, self.mode, self.init_kwargs = project, mode, init_kwargs
        self.run = None
        self.runs: dict[str, Any] = {}  # the named runs'

    def _params(self, name: str | None, params: dict[str, Any]) -> None:
        if name is None:
            self.run = self.wandb.init(project=self.project, mode=self.mode, config=params,
                                       **self.init_kwargs)
            return
        kwargs = {**self.init_kwargs, "name": name, "reinit": "create_new"}
        kwargs.setdefault("group", self.project)
        self.runs[name] = self.wandb.init(project=self.project, mode=self.mode, config=params,
                                          **kwargs)

    def _metrics(self, name: str | None, step: int, metrics: dict[str, float]) -> None:
        (self.run if name is None else self.runs[name]).log(metrics, step=step)

    def close(self) -> None:
        for run in self.runs.values():
            run.finish()
        if self.run is not None:
            self.run.finish()
