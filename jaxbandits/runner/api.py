"""The runner's entry points: :func:`simulate`, :func:`compare` and :func:`sweep`.

Each builds the configurations it plays (:class:`~jaxbandits.runner.options.Configs`) and one
frozen :class:`~jaxbandits.runner.options.RunOptions`, and hands both to the engine
(:func:`jaxbandits.runner.engine.play`): one jitted program of scans and vmaps per static
structure. The horizon is cut into chunks of equal length driven from Python, so that a
progress bar, non-finite checks and checkpoints happen between chunks; the program is compiled
once per shape and chunking never changes the numbers.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jax

from jaxbandits.core import Agent, Env
from jaxbandits.results import Result
from jaxbandits.runner.checks import check_agents, check_grid, check_grid_values, label_of
from jaxbandits.runner.engine import compile_ahead, compiling_ahead, play
from jaxbandits.runner.options import Configs, run_options
from jaxbandits.runner.sink import under

__all__ = ["compare", "simulate", "sweep"]


def simulate(
    env: Env,
    agent: Agent,
    key: jax.Array | int,
    horizon: int,
    num_runs: int = 1,
    *,
    chunk_size: int | None = None,
    record: str | Sequence[int] = "log",
    num_records: int = 100,
    checkpoint_dir: str | Path | None = None,
    overwrite: bool = False,
    save_to: str | Path | None = None,
    progress: bool | str | None = None,
    name: str | None = None,
    devices: Sequence[jax.Device] | None = None,
    block_runs: int | None = None,
    max_memory: int | None = None,
    run_info: Mapping[str, Any] | None = None,
    feedback_delay: int | tuple[int, int] = 0,
    update_every: int = 1,
    callback: Any = None,
) -> Result:
    """Runs ``agent`` on ``env`` for ``horizon`` rounds and ``num_runs`` independent runs.

    Runs are played in blocks of ``block_runs``: every compiled program sees exactly one block
    per device, and run ``r`` is always position ``r % block_runs`` of its block, so its numbers
    are a function of ``(key, r, env, agent, block_runs)`` alone: the same bits for any
    ``num_runs``, chunk size, device count or grid. Blocks are streamed (one per device at a
    time), so memory does not grow with ``num_runs``.

    Args:
      env: an environment (see :mod:`jaxbandits.core`).
      agent: an agent that can play ``env.spec().action_kind``.
      key: a JAX key (or an int seed). Run ``r`` uses ``fold_in(key, r)``.
      horizon: T, the number of rounds (below 2**31).
      num_runs: the number of runs (seeds).
      chunk_size: rounds per compiled scan (default ``min(T, 1000)``, ``min(T, 250)`` for
        agents with costly rounds; see :func:`default_chunk_size`); never changes results.
      record: ``"log"`` (about ``num_records`` log-spaced steps, T included), ``"all"`` (every
        step) or an explicit increasing sequence of integer steps in ``[1, T]``.
      num_records: how many log-spaced steps to record.
      checkpoint_dir: if given, the state is committed there atomically after every chunk, and
        a call with the same arguments resumes from it (and ends with exactly the same numbers).
        A directory holding another experiment's checkpoint is an error unless ``overwrite``.
      overwrite: replace another experiment's (or a corrupt) checkpoint in ``checkpoint_dir``.
      save_to: if given, the result is written there (``save_to.json`` and ``.npy`` arrays)
        block by block as runs finish, and returned memory-mapped: host memory then stays flat
        whatever ``num_runs``.
      progress: ``True`` or ``"bar"``: a rich progress bar; ``"lines"``: plain lines on stderr
        (for logs: at the start, every 10% or 30 s, and at the end, with the throughput and
        ETA); ``False``: nothing. Default (None): the bar when stderr is a terminal, else
        nothing. Both show the compile phase. Never changes results.
      name: the result's label (default: the agent's registered name).
      devices: the devices the blocks are spread over (default: all of ``jax.devices()``; at
        most one per block is used). Never changes results.
      block_runs: runs per block (default on a CPU: 8 for neural agents, 128 otherwise; 128
        times that on a GPU or TPU; see :func:`default_block_runs`). Part of the
        configuration: results depend on it.
      max_memory: bytes one device may use for a block (default: the device's free memory;
        on a CPU, the host's available memory shared by the CPU devices). A block that does not
        fit raises ``ValueError`` with the estimate, before anything is allocated.
      run_info: entries (str keys, JSON values) added to the result's ``run_info``, which
        the runner fills with :func:`~jaxbandits.results.environment_info` for the devices
        used, ``horizon``, ``num_runs``, ``block_runs``, ``chunk_size`` and ``key``. Never
        changes results nor the checkpoint.
      feedback_delay: rounds until a round's reward reaches the agent: an int, or a pair
        ``(low, high)`` for a delay drawn uniformly from those integers per round (keyed on the
        run and the round, the same for every agent). 0 (default): at the end of the round
        played. Regret is still accounted at the round played.
      update_every: B, the agent is updated only at the end of every B-th round, with all the
        rewards arrived by then, in arrival order (default 1: every round). Each reward's
        update uses the key it has without delay, so runs with and without delay share their
        random numbers. The defaults play exactly the undelayed numbers; see
        :mod:`jaxbandits.runner.delay`.
      callback: a tracker (:mod:`jaxbandits.tracking`): ``callback(stats, run_info)`` is
        called after every chunk with ``stats = {"step", "regret/mean", "regret/stderr",
        "reward/mean"}`` (:func:`~jaxbandits.tracking.running_stats`) over the runs in flight
        and ``run_info`` the result's. When the runs take several blocks in turn, only the
        first block(s) report live, and the statistics over all runs at T follow at the end.
        Then ``callback.close()``, if it has one (also after an error). Never changes results
        nor the checkpoint. :func:`compare` and :func:`sweep` take one tracker for all their
        configurations, each named in ``run_info["name"]``.

    Warns:
      UserWarning: the agent's warm-up (``Agent.warmup_rounds``) exceeds the horizon.

    Returns:
      A :class:`~jaxbandits.results.Result` with ``(num_runs, S)`` cumulative regret and reward
      (and, for an environment with extra metrics, ``Spec.metrics``, their cumulative sums in
      ``Result.metrics``).

    Example::

        result = jb.simulate(jb.make_env("linear"), jb.make_agent("lin-ts"), key, 10_000, 100)
        print(result.final())
    """
    configs = Configs([env], [agent], [name or label_of(agent)])
    try:
        reporter = callback if isinstance(callback, _Reporter) else _reporter(callback)
        return _run(configs, key, horizon, num_runs, chunk_size=chunk_size, record=record,
                    num_records=num_records, checkpoint_dir=checkpoint_dir,
                    overwrite=overwrite, save_to=save_to, progress=progress, devices=devices,
                    block_runs=block_runs, max_memory=max_memory, run_info=run_info,
                    feedback_delay=feedback_delay, update_every=update_every,
                    callback=reporter)[0]
    finally:  # the tracker is flushed and ended, also when the run fails
        _close(callback)


def compare(
    env: Env,
    agents: Mapping[str, Agent],
    key: jax.Array | int,
    horizon: int,
    num_runs: int = 1,
    *,
    checkpoint_dir: str | Path | None = None,
    save_to: str | Path | None = None,
    **kwargs: Any,
) -> dict[str, Result]:
    """Runs several agents on ``env`` with common random numbers; returns ``{name: Result}``.

    Run ``r`` of every agent sees the same problem instance, contexts and reward noise. Takes the
    keyword arguments of :func:`simulate` (``feedback_delay``, ``update_every`` and
    ``callback`` included); checkpoints go to ``checkpoint_dir/<name>`` and streamed results to
    ``save_to/<name>``. The agents' programs are lowered first and compiled one after another
    on a background thread, so that an agent compiles while the ones before it play (the same
    programs, so the same numbers, as one :func:`simulate` per agent).

    A ``callback`` (a tracker, :mod:`jaxbandits.tracking`) receives each agent's statistics
    as :func:`simulate` sends them, agent after agent, with ``run_info["name"]`` the agent's
    name (the tracking adapters log each name as a run of its own); it is closed once, at the
    end.
    """
    check_agents(agents)
    callback = kwargs.pop("callback", None)
    results = {}
    try:
        reporters = {label: _reporter(callback, {label: {"name": label}}) for label in agents}
        with compiling_ahead() as pool:
            for label, agent in agents.items():
                configs = Configs([env], [agent], [label])
                try:
                    options = run_options(configs, key, horizon, num_runs, **kwargs)
                except Exception:  # noqa: BLE001 - raised again, in order, by its own call below
                    break
                compile_ahead(configs.with_presets(), options, pool)
            for label, agent in agents.items():
                results[label] = simulate(env, agent, key, horizon, num_runs, name=label,
                                          checkpoint_dir=under(checkpoint_dir, label),
                                          save_to=under(save_to, label),
                                          callback=reporters[label], **kwargs)
    finally:  # the tracker is flushed and ended once, also when a run fails
        _close(callback)
    return results


def sweep(
    env: Env,
    agent: Agent,
    key: jax.Array | int,
    grid: Mapping[str, Sequence[Any]],
    horizon: int,
    num_runs: int = 1,
    *,
    chunk_size: int | None = None,
    record: str | Sequence[int] = "log",
    num_records: int = 100,
    checkpoint_dir: str | Path | None = None,
    overwrite: bool = False,
    save_to: str | Path | None = None,
    progress: bool | str | None = None,
    devices: Sequence[jax.Device] | None = None,
    block_runs: int | None = None,
    max_memory: int | None = None,
    run_info: Mapping[str, Any] | None = None,
    feedback_delay: int | tuple[int, int] = 0,
    update_every: int = 1,
    callback: Any = None,
) -> dict[str, Result]:
    """Runs ``agent`` over the Cartesian product of ``grid`` with one compiled program.

    ``grid`` maps field names to sequences of values: agent fields (``"explore_scale"``) or
    environment fields (``"env.noise_std"``). Every grid point plays the same program as
    :func:`simulate`, so grid point ``p``'s run ``r`` equals ``simulate(env_p, agent_p, key,
    ...)``'s run ``r`` bit for bit (common random numbers). Numeric fields are batched: a grid
    over them compiles once. Static fields (``ensemble_size``, a distribution law, a network
    width) are allowed too: one program is compiled per distinct static value.
    Returns ``{"field=value,...": Result}`` in grid order; ``save_to`` is a folder. Takes the
    keyword arguments of :func:`simulate` (``progress``, ``run_info``, ``feedback_delay``,
    ``callback``...).

    A ``callback`` (a tracker, :mod:`jaxbandits.tracking`) receives each grid point's running
    statistics as :func:`simulate` sends them (live for the point's first blocks, the
    statistics over all its runs at the end if they took several), with
    ``run_info["name"]`` the point's label and ``run_info["grid"]`` its values
    (``{"explore_scale": 0.1}``); the tracking adapters log each point as a run of its own.

    Example::

        results = jb.sweep(env, jb.make_agent("lin-ucb"), key,
                           {"explore_scale": [0.1, 0.3, 1.0]}, horizon=2_000, num_runs=50)
    """
    names, values = check_grid(grid)
    check_grid_values(env, agent, names, values)
    points = list(itertools.product(*values))
    envs, agents, labels = [], [], []
    for point in points:
        env_over = {n[4:]: v for n, v in zip(names, point, strict=True) if n.startswith("env.")}
        agent_over = {n: v for n, v in zip(names, point, strict=True) if not n.startswith("env.")}
        envs.append(_override(env, env_over, "environment"))
        agents.append(_override(agent, agent_over, "agent"))
        labels.append(",".join(f"{n}={v}" for n, v in zip(names, point, strict=True)))
    if len(set(labels)) != len(labels):
        raise ValueError("sweep: the grid has repeated values")
    try:
        reporter = _reporter(callback, {
            label: {"name": label, "grid": dict(zip(names, point, strict=True))}
            for label, point in zip(labels, points, strict=True)})
        results = _run(Configs(envs, agents, labels), key, horizon, num_runs,
                       chunk_size=chunk_size, record=record, num_records=num_records,
                       checkpoint_dir=checkpoint_dir, overwrite=overwrite, save_to=save_to,
                       progress=progress, devices=devices, block_runs=block_runs,
                       max_memory=max_memory, run_info=run_info, save_folder=True,
                       feedback_delay=feedback_delay, update_every=update_every,
                       callback=reporter)
    finally:  # the tracker is flushed and ended, also when the run fails
        _close(callback)
    return dict(zip(labels, results, strict=True))


def _override(obj, overrides: dict[str, Any], what: str):
    if not overrides:
        return obj
    fields = {f.name: f for f in dataclasses.fields(obj)}
    for name in overrides:
        if name not in fields:
            raise ValueError(f"sweep: the {what} {type(obj).__name__} has no field {name!r}")
    new = obj.replace(**overrides)
    new.validate()
    return new


def _run(configs: Configs, key, horizon, num_runs, **options: Any) -> list[Result]:
    """Checks the options once (one frozen :class:`RunOptions`) and plays ``configs``."""
    options = run_options(configs, key, horizon, num_runs, **options)
    return play(configs.with_presets(), options)


class _Reporter:
    """What the engine calls between chunks, ``reporter(label, stats, run_info)``: forwards to
    the caller's tracker ``callback(stats, run_info)``, with the configuration's entries
    (``names[label]``: ``"name"``, a sweep's ``"grid"``) added to ``run_info`` when given."""

    def __init__(self, callback: Any, names: Mapping[str, Mapping[str, Any]] | None = None):
        self.callback, self.names = callback, names

    def __call__(self, label: str, stats: Mapping[str, float], run_info: dict[str, Any]) -> None:
        if self.names is not None:
            run_info = {**run_info, **self.names[label]}
        self.callback(stats, run_info)


def _reporter(callback: Any, names: Mapping[str, Mapping[str, Any]] | None = None
              ) -> _Reporter | None:
    """The engine's callback for the caller's ``callback`` (None: none)."""
    if callback is None:
        return None
    if not callable(callback):
        raise ValueError(f"callback must be callable (a tracker), got {callback!r}")
    return _Reporter(callback, names)


def _close(callback: Any) -> None:
    """Closes the caller's tracker if it has a ``close`` (never a reporter of compare's)."""
    if not isinstance(callback, _Reporter) and callable(getattr(callback, "close", None)):
        callback.close()
