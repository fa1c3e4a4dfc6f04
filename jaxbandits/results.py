"""``Result``: the recorded curves of one simulation, their statistics, and save / load.

A result holds cumulative regret and reward for every run at the recorded steps (log-spaced by
default), plus timing and the configuration of the environment and the agent. It saves as an
``.npz`` of arrays beside a ``.json`` of metadata; no pickle.

Replay environments (logged data, ``Spec.replay``) have no regret: their results also hold the
cumulative number of accepted rounds, and their headline metric (:attr:`Result.default_metric`,
used by :meth:`Result.final`, :meth:`Result.mean`, the plots and the command line) is the
click-through rate ``CTR = reward over accepted rounds / accepted rounds`` instead of regret.
"""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Result", "config_of", "t_quantile"]

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
      wall_time: seconds spent running, compile excluded.
      compile_time: seconds spent compiling.
      name: a label (the agent's name, or a grid point's).
      env_config / agent_config: the configuration of the environment and the agent.
      extras: any other metadata (key, horizon, devices...).
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
    def seed_steps_per_second(self) -> float:
        """Rounds played per second of wall time, summed over runs (compile excluded)."""
        return self.num_runs * self.horizon / max(self.wall_time, 1e-12)

    def _metric(self, metric: str | None) -> np.ndarray:
        metric = self.default_metric if metric is None else metric
        if metric == "regret":
            return self.cumulative_regret
        if metric == "reward":
            return self.cumulative_reward
        if metric in ("ctr", "accepted"):  # replay only
            if self.accepted is None:
                raise ValueError(f"metric {metric!r} needs a replay result (with `accepted`)")
            if metric == "accepted":
                return self.accepted
            return self.cumulative_reward / np.maximum(self.accepted, 1)  # 0 before any
        raise ValueError(f"metric must be 'regret', 'reward', 'ctr' or 'accepted', got "
                         f"{metric!r}")

    def mean(self, metric: str | None = None) -> np.ndarray:
        """``(S,)`` mean over runs of ``metric`` (default :attr:`default_metric`).

        Metrics: ``"regret"`` and ``"reward"`` (cumulative), and for replay results ``"ctr"``
        (each run's clicks over its accepted rounds so far) and ``"accepted"`` (cumulative).
        """
        return self._metric(metric).mean(axis=0)

    def confidence_band(self, metric: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """``(lower, upper)``, each ``(S,)``: the 95% Student-t confidence band of the mean."""
        values = self._metric(metric)
        mean = values.mean(axis=0)
        n = values.shape[0]
        if n < 2:
            return mean, mean
        half = t_quantile(n - 1) * values.std(axis=0, ddof=1) / math.sqrt(n)
        return mean - half, mean + half

    def final(self, metric: str | None = None) -> tuple[float, float]:
        """``(mean, half-width of its 95% confidence interval)`` at the last step.

        The metric defaults to :attr:`default_metric`: final cumulative regret, or for a replay
        result the final CTR.
        """
        lower, upper = self.confidence_band(metric)
        return float(self.mean(metric)[-1]), float((upper[-1] - lower[-1]) / 2)

    def plot(self, path: str | Path | None = None, **kwargs):
        """Plots this result's regret (replay: CTR) curve (see
        :func:`jaxbandits.plotting.plot_regret`)."""
        from jaxbandits.plotting import plot_regret

        return plot_regret({self.name or "agent": self}, path=path, **kwargs)

    # ---------------------------------------------------------------------------- persistence

    def save(self, path: str | Path) -> Path:
        """Writes ``path.npz`` (arrays) and ``path.json`` (metadata); returns the ``.npz`` path."""
        path = Path(path).with_suffix("")
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {
            "steps": self.steps,
            "cumulative_regret": self.cumulative_regret,
            "cumulative_reward": self.cumulative_reward,
        }
        if self.accepted is not None:
            arrays["accepted"] = self.accepted
        np.savez(path.with_suffix(".npz"), **arrays)
        meta = {
            "name": self.name,
            "wall_time": self.wall_time,
            "compile_time": self.compile_time,
            "env_config": self.env_config,
            "agent_config": self.agent_config,
            "extras": self.extras,
        }
        path.with_suffix(".json").write_text(json.dumps(meta, indent=2, default=_jsonable))
        return path.with_suffix(".npz")

    @classmethod
    def load(cls, path: str | Path) -> Result:
        """Reads a result written by :meth:`save` (give either file, or the stem)."""
        path = Path(path).with_suffix("")
        with np.load(path.with_suffix(".npz"), allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        meta = json.loads(path.with_suffix(".json").read_text())
        return cls(**arrays, **meta)


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
