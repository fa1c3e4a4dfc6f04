"""One call's options, checked once: :class:`Configs` (what is played) and :class:`RunOptions`
(how), built by :func:`run_options` from the keyword arguments of ``simulate`` / ``compare`` /
``sweep``. Everything below them takes these two objects, never a dozen loose arguments."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import jax
import numpy as np

from jaxbandits.core import Agent, Env
from jaxbandits.runner.checks import (
    as_key,
    as_size,
    check_devices,
    check_pair,
    check_run_info,
    check_sizes,
    record_steps,
    warn_long_warmups,
)
from jaxbandits.runner.delay import Timing, as_timing
from jaxbandits.runner.plan import default_block_runs, default_chunk_size
from jaxbandits.runner.progress import progress_mode

__all__ = ["Configs", "RunOptions", "run_options"]


class Configs(NamedTuple):
    """The configurations one call plays (a sweep's grid points, or one): ``envs[g]`` and
    ``agents[g]`` under the name ``labels[g]``; ``given[g]`` is the agent as the caller gave it
    (None: ``agents``), which the checkpoint's fingerprint reads."""

    envs: list[Env]
    agents: list[Agent]
    labels: list[str]
    given: list[Agent] | None = None

    def pick(self, indices: Sequence[int]) -> Configs:
        """The configurations ``indices``, in that order."""
        return Configs(*(None if items is None else [items[i] for i in indices]
                         for items in self))

    def with_presets(self) -> Configs:
        """Every agent with its preset merged into the fields it left at None, at its
        environment's context dimension (:meth:`~jaxbandits.core.Agent.with_preset`, what
        ``make_agent(..., env=env)`` does), validated if that changed it: so an agent
        constructed directly plays, and its result's configuration records, the numbers of
        its preset rather than ``None`` resolved while tracing. The fingerprint of a
        checkpoint still reads the agents as given (``given``), so checkpoints written before
        keep resuming."""
        agents = []
        for env, agent in zip(self.envs, self.agents, strict=True):
            filled = agent.with_preset(env.spec().dim)
            if filled is not agent:
                filled.validate()
            agents.append(filled)
        return self._replace(agents=agents, given=self.given or self.agents)


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """How one call plays its configurations (checked; the defaults resolved).

    Attributes:
      key: the user key (a typed key). Run ``r`` uses ``fold_in(key, r)``.
      horizon / num_runs: T and the number of runs of each configuration.
      steps: ``(S,)`` int32 the recorded steps, increasing, in ``[1, T]``.
      chunk_size: rounds per compiled chunk (never changes the numbers).
      block_runs: runs per block (part of the configuration: results depend on it).
      block_runs_default: whether ``block_runs`` is the default (the caller gave none).
      devices: the devices the blocks are spread over.
      max_memory: bytes one device may use for a block (None: its free memory).
      checkpoint_dir / overwrite: where the state is committed after every chunk, and whether
        another experiment's checkpoint there may be replaced.
      save_to / save_folder: where results are streamed (a folder of one result per name when
        ``save_folder``, or when there are several configurations).
      progress: ``"bar"``, ``"lines"`` or None.
      run_info: the caller's entries for each result's ``run_info``.
      timing: when rewards reach the agents (delayed or batched feedback; the default:
        at once, every round).
      callback: ``callback(label, stats, run_info)``, called between chunks with a
        configuration's running statistics (the entry points wrap the caller's tracker), or
        None.
    """

    key: jax.Array
    horizon: int
    num_runs: int
    steps: np.ndarray
    chunk_size: int
    block_runs: int
    devices: tuple[jax.Device, ...]
    block_runs_default: bool = False
    max_memory: int | None = None
    checkpoint_dir: Path | None = None
    overwrite: bool = False
    save_to: Path | None = None
    save_folder: bool = False
    progress: str | None = None
    run_info: dict[str, Any] = dataclasses.field(default_factory=dict)
    timing: Timing = Timing()
    callback: Any = None

    def replace(self, **changes: Any) -> RunOptions:
        return dataclasses.replace(self, **changes)


def run_options(configs: Configs, key: jax.Array | int, horizon: int, num_runs: int,
                **options: Any) -> RunOptions:
    """Checks ``configs`` and the options of a call (the keyword arguments of
    :func:`jaxbandits.simulate`, and ``save_folder``) and resolves their defaults.

    Raises:
      ValueError: an option, or an environment and agent pair, is invalid.
    """
    o = {"chunk_size": None, "record": "log", "num_records": 100, "checkpoint_dir": None,
         "overwrite": False, "save_to": None, "progress": None, "devices": None,
         "block_runs": None, "max_memory": None, "run_info": None, "save_folder": False,
         "feedback_delay": 0, "update_every": 1, "callback": None}
    unknown = set(options) - set(o)
    if unknown:
        raise TypeError(f"unknown runner options {sorted(unknown)}")
    o.update(options)
    horizon, num_runs, num_records, chunk_size, block_runs, max_memory = map(
        as_size, (horizon, num_runs, o["num_records"], o["chunk_size"], o["block_runs"],
                  o["max_memory"]))
    check_sizes(horizon=horizon, num_runs=num_runs, num_records=num_records)
    progress = progress_mode(o["progress"])
    run_info = check_run_info(o["run_info"])
    if horizon >= 2**31 - 1:
        raise ValueError(f"horizon must be below 2**31 - 1 (rounds are int32), got {horizon}")
    if num_runs > 2**32:
        raise ValueError(f"num_runs must be at most 2**32 (run ids are uint32), got {num_runs}")
    agents = configs.agents
    chunk_size = default_chunk_size(agents[0], horizon) if chunk_size is None else chunk_size
    check_sizes(chunk_size=chunk_size)
    for e, a in zip(configs.envs, agents, strict=True):
        check_pair(e, a)
    warn_long_warmups(configs.envs, agents, configs.labels, horizon)
    steps = record_steps(o["record"], horizon, num_records)
    key = as_key(key)
    for e in configs.envs:  # what only the call's key and sizes can tell (finite data)
        e.check_call(key, horizon, num_runs)
    devices = check_devices(o["devices"])
    block_runs_default = block_runs is None
    block_runs = (default_block_runs(agents[0], devices[0].platform) if block_runs_default
                  else block_runs)
    check_sizes(block_runs=block_runs)
    if not isinstance(o["overwrite"], bool):
        raise ValueError(f"overwrite must be True or False, got {o['overwrite']!r}")
    if max_memory is not None:
        check_sizes(max_memory=max_memory)
    timing = as_timing(o["feedback_delay"], o["update_every"], horizon)
    if o["callback"] is not None and not callable(o["callback"]):
        raise ValueError(f"callback must be callable (a tracker), got {o['callback']!r}")
    return RunOptions(
        key=key, horizon=horizon, num_runs=num_runs, steps=steps, chunk_size=chunk_size,
        block_runs=block_runs, devices=tuple(devices), block_runs_default=block_runs_default,
        max_memory=max_memory,
        checkpoint_dir=o["checkpoint_dir"], overwrite=o["overwrite"], save_to=o["save_to"],
        save_folder=bool(o["save_folder"]), progress=progress, run_info=run_info,
        timing=timing, callback=o["callback"])
