"""The runner: ``simulate``, ``compare`` and ``sweep`` as one jitted program of scans and vmaps.

One run is a ``lax.scan`` over rounds of ``observe -> act -> feedback -> update``; runs are a
``vmap`` (sharded over the local devices), and in a sweep the grid points are another ``vmap``.
The horizon is cut into chunks of equal length driven from Python, so that a progress bar,
non-finite checks and checkpoints happen between chunks; the program is compiled once per shape
and chunking never changes the numbers.

Randomness: every key derives from the user key and the run index with ``fold_in``, and each
round's keys from the round index, never from the batch layout. Run ``r`` therefore has the same
curve whatever ``num_runs``, chunking or device count, and run ``r`` of every agent in
``compare`` / ``sweep`` sees the same instance, contexts and reward noise (common random numbers).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import hashlib
import itertools
import json
import math
import os
import re
import sys
import time
import types
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxbandits.core import Agent, Env, check_inputs, float_dtype, wrapped_agent
from jaxbandits.results import (
    Result,
    check_metric_names,
    config_of,
    environment_info,
    lock_result,
)

__all__ = [
    "clear_compiled",
    "compare",
    "default_block_runs",
    "default_chunk_size",
    "log_spaced_steps",
    "simulate",
    "sweep",
    "trace_counts",
    "use_cpu_cores",
]

PyTree = Any
_TRACES: collections.Counter[str] = collections.Counter()


def trace_counts() -> dict[str, int]:
    """How many times the runner's programs were traced (compiled), by program name."""
    return dict(_TRACES)


# ------------------------------------------------------------------------------------------------
# One run, written for a single seed.


class RunKeys(struct.PyTreeNode):
    """The per-run key streams; round ``t`` uses ``fold_in(stream, t)``."""

    env_observe: jax.Array
    env_feedback: jax.Array
    agent_act: jax.Array
    agent_update: jax.Array


class Carry(struct.PyTreeNode):
    """Everything one run carries between rounds.

    Attributes:
      env_state / agent_state: the instance and the agent's state.
      keys: the run's key streams.
      cumulative: ``(3 + M,)`` cumulative regret, reward and accepted rounds, then the M extra
        metrics of the environment (``Spec.metrics``, in its order).
      records: ``(S + 1, 3 + M)`` the cumulative values at the recorded steps (the last row is
        a scratch slot written by unrecorded steps).
      bad_step: ``(2,)`` int32, the first round with a non-finite reward, regret or extra
        metric (or a cumulative sum of them that overflowed), and the first round whose action
        was out of range (an index outside ``[0, K)``, a non-finite vector), each -1 if none.
      bad_state: ``(2,)`` int32, the first round after whose update the agent's state held a
        non-finite value, and the index of its first such leaf among the state's floating
        leaves (see :func:`_state_leaf_paths`); -1 if none.
    """

    env_state: PyTree
    agent_state: PyTree
    keys: RunKeys
    cumulative: jax.Array
    records: jax.Array
    bad_step: jax.Array
    bad_state: jax.Array


def run_keys(key: jax.Array, run_id: jax.Array) -> tuple[jax.Array, jax.Array, RunKeys]:
    """``(env_init, agent_init, streams)``: the keys of run ``run_id`` (the instance draw, the
    agent's initial draw and the per-round streams), ``fold_in(fold_in(key, run_id), i)``."""
    run_key = jax.random.fold_in(key, run_id)
    streams = [jax.random.fold_in(run_key, i) for i in range(6)]
    return streams[0], streams[1], RunKeys(*streams[2:])


def init_run(env: Env, agent: Agent, key: jax.Array, run_id: jax.Array, num_slots: int) -> Carry:
    """The carry of run ``run_id`` before its first round."""
    env_key, agent_key, keys = run_keys(key, run_id)
    dtype = float_dtype()
    columns = _num_columns(env.spec())
    return Carry(
        env_state=env.init(env_key),
        agent_state=agent.init(agent_key, env.spec()),
        keys=keys,
        cumulative=jnp.zeros((columns,), dtype),
        records=jnp.zeros((num_slots + 1, columns), dtype),
        bad_step=jnp.full((2,), -1, jnp.int32),
        bad_state=jnp.full((2,), -1, jnp.int32),
    )


def step_run(env: Env, agent: Agent, carry: Carry, t: jax.Array, steps: jax.Array) -> Carry:
    """Plays round ``t`` (0-based) of one run and records it if ``t + 1`` is in ``steps``."""
    keys = carry.keys
    context = env.observe(jax.random.fold_in(keys.env_observe, t), carry.env_state, t)
    action, acted = agent.act(carry.agent_state, jax.random.fold_in(keys.agent_act, t), context)
    feedback = env.feedback(
        jax.random.fold_in(keys.env_feedback, t), carry.env_state, context, action
    )
    agent_state = agent.update(
        acted, jax.random.fold_in(keys.agent_update, t), context, action, feedback
    )
    dtype = carry.cumulative.dtype
    accepted = jnp.asarray(feedback.accepted, dtype)
    if env.spec().replay:  # rejected replay rounds never happened, for the agent
        agent_state = jax.tree.map(
            lambda new, old: jnp.where(accepted > 0, new, old), agent_state, carry.agent_state
        )
    reward = jnp.asarray(feedback.reward, dtype)
    regret = jnp.asarray(feedback.regret, dtype)
    extra = [jnp.asarray(feedback.metrics[name], dtype) for name in env.spec().metrics]
    cumulative = carry.cumulative + jnp.stack([regret, reward * accepted, accepted, *extra])
    finite = jnp.isfinite(reward) & jnp.isfinite(regret) & jnp.all(jnp.isfinite(cumulative))
    for value in extra:
        finite = finite & jnp.isfinite(value)
    bad = jnp.stack([~finite, ~_action_in_range(env.spec(), action)])
    bad_step = jnp.where((carry.bad_step < 0) & bad, t, carry.bad_step)
    bad_state = carry.bad_state
    floats = [x for x in jax.tree.leaves(agent_state) if jnp.issubdtype(x.dtype, jnp.inexact)]
    if floats:  # one reduction per leaf: which leaf first went NaN or inf, if any
        leaf_ok = jnp.stack([jnp.all(jnp.isfinite(x)) for x in floats])
        diverged = (bad_state[0] < 0) & ~jnp.all(leaf_ok)
        bad_state = jnp.where(diverged, jnp.stack([t, jnp.argmin(leaf_ok).astype(jnp.int32)]),
                              bad_state)
    num_slots = steps.shape[0]
    slot = jnp.minimum(jnp.searchsorted(steps, t + 1), num_slots - 1)
    slot = jnp.where(steps[slot] == t + 1, slot, num_slots)
    return Carry(
        env_state=carry.env_state,
        agent_state=agent_state,
        keys=keys,
        cumulative=cumulative,
        records=carry.records.at[slot].set(cumulative),
        bad_step=bad_step,
        bad_state=bad_state,
    )


def _num_columns(spec) -> int:
    """Columns of the cumulative values: regret, reward, accepted, then the extra metrics."""
    return 3 + len(spec.metrics)


def _action_in_range(spec, action: jax.Array) -> jax.Array:
    """Whether ``action`` is a valid action of ``spec`` (an environment would clamp it)."""
    if spec.action_kind == "vector":
        return jnp.all(jnp.isfinite(action))
    if not jnp.issubdtype(action.dtype, jnp.integer):
        return jnp.all((action == jnp.round(action)) & (action >= 0) & (action < spec.num_arms))
    return jnp.all((action >= 0) & (action < spec.num_arms))


def chunk_run(
    env: Env,
    agent: Agent,
    carry: Carry,
    start: jax.Array,
    horizon: jax.Array,
    steps: jax.Array,
    length: int,
) -> Carry:
    """Plays rounds ``start, ..., start + length - 1`` of one run (those before ``horizon``).

    ``start`` and ``horizon`` are shared by all runs, so the trip count ``min(length, horizon -
    start)`` is not batched under ``vmap`` and a last, shorter chunk simply stops early. The loop
    body is the bare round (no ``cond`` around it), so XLA hoists what does not change between
    rounds, such as functions of a fixed arm set, out of the loop.
    """

    def body(offset: jax.Array, carry: Carry) -> Carry:
        return step_run(env, agent, carry, start + offset, steps)

    stop = jnp.clip(horizon - start, 0, length).astype(jnp.int32)
    return jax.lax.fori_loop(jnp.zeros((), jnp.int32), stop, body, carry)


# ------------------------------------------------------------------------------------------------
# The batched programs: one wave, in which every device plays one block of ``block_runs`` runs.


@functools.cache
def _programs(num_slots: int, length: int, mesh: Mesh):
    """Jitted ``init(env, agent, key, run_ids)`` and ``chunk(env, agent, carry, start, ...)``.

    Inputs and outputs carry a leading axis of ``num_devices * block_runs`` runs (the carry and
    ``run_ids``) or ``num_devices`` blocks (the environment and agent leaves, one grid point per
    block), split over ``mesh``: each device sees exactly one block, whatever the number of
    runs, grid points or devices, so every run always meets the same compiled program.
    """

    def init(env, agent, key, run_ids):
        _TRACES["init"] += 1
        f = jax.vmap(functools.partial(init_run, num_slots=num_slots), (None, None, None, 0))
        return f(_first(env), _first(agent), key, run_ids)

    def chunk(env, agent, carry, start, horizon, steps):
        _TRACES["chunk"] += 1
        f = jax.vmap(functools.partial(chunk_run, length=length), (None, None, 0, None, None, None))
        return f(_first(env), _first(agent), carry, start, horizon, steps)

    # shard_map: each device plays its own block (a loop whose trip count is batched over runs,
    # such as a training round's gradient steps, ends on a local "any run left?", where jit's
    # partitioner would all-reduce that predicate across devices at every iteration).
    blocks, replicated = PartitionSpec("runs"), PartitionSpec()
    local = functools.partial(jax.shard_map, mesh=mesh, out_specs=blocks, check_vma=False)
    init = local(init, in_specs=(blocks, blocks, replicated, blocks))
    chunk = local(chunk, in_specs=(blocks, blocks, blocks) + (replicated,) * 3)
    sharding = NamedSharding(mesh, blocks)
    return (
        jax.jit(init, out_shardings=sharding),
        jax.jit(chunk, out_shardings=sharding, donate_argnums=2),
    )


def _first(tree: PyTree) -> PyTree:
    return jax.tree.map(lambda x: x[0], tree)


_COMPILED: dict[Any, Any] = {}


def clear_compiled() -> None:
    """Drops the runner's compiled programs (its own cache of ahead-of-time compiled chunks and
    the jitted functions per mesh), so that their memory can be freed; the next run compiles
    again. :func:`jax.clear_caches` does not reach them."""
    _COMPILED.clear()
    _programs.cache_clear()


def _compiled(fn, name: str, *args, announce=None) -> tuple[Any, float]:
    """An ahead-of-time compiled ``fn`` for these argument shapes (cached), and its compile time;
    ``announce()`` is called before compiling (not on a cache hit)."""
    leaves, treedef = jax.tree.flatten(args)
    shapes = tuple((np.shape(x), _dtype(x), _sharding(x)) for x in leaves)
    signature = (id(fn), name, treedef, shapes)
    if signature in _COMPILED:
        return _COMPILED[signature], 0.0
    if announce is not None:
        announce()
    start = time.perf_counter()
    compiled = fn.lower(*args).compile()
    _COMPILED[signature] = compiled
    return compiled, time.perf_counter() - start


def _dtype(x) -> Any:
    return getattr(x, "dtype", type(x))


def _sharding(x) -> Any:
    return getattr(x, "sharding", None)


@dataclasses.dataclass(frozen=True)
class _Plan:
    """Where every run is played: grid point g's runs form blocks of ``block_runs`` (run r is
    always position ``r % block_runs`` of block ``r // block_runs``), and a wave gives one block
    to each device; the last wave is padded with copies of its last block."""

    num_points: int
    num_runs: int
    block_runs: int
    num_devices: int

    @property
    def blocks_per_point(self) -> int:
        return math.ceil(self.num_runs / self.block_runs)

    @property
    def num_blocks(self) -> int:
        return self.num_points * self.blocks_per_point

    @property
    def num_waves(self) -> int:
        return math.ceil(self.num_blocks / self.num_devices)

    def wave(self, w: int) -> list[tuple[int, int, int]]:
        """``(grid point, first run, real runs)`` of each device's block in wave ``w``."""
        first = w * self.num_devices
        return self.group(first, min(self.num_devices, self.num_blocks - first))

    def group(self, first: int, count: int) -> list[tuple[int, int, int]]:
        """``(grid point, first run, real runs)`` of blocks ``first .. first + count - 1``, one
        per device, padded with copies of the last one (0 real runs)."""
        out = []
        for i in range(first, first + self.num_devices):
            g, b = divmod(min(i, first + count - 1), self.blocks_per_point)
            start = b * self.block_runs
            real = min(self.block_runs, self.num_runs - start) if i < first + count else 0
            out.append((g, start, real))
        return out

    def runs_before(self, w: int) -> int:
        """Real runs (over all grid points) in the waves before ``w``."""
        return self.rows_before(min(w * self.num_devices, self.num_blocks))

    def rows_before(self, block: int) -> int:
        """Real runs (over all grid points) in the blocks before ``block``: the records rows
        of blocks played in order."""
        g, b = divmod(block, self.blocks_per_point)
        return g * self.num_runs + min(b * self.block_runs, self.num_runs)


# ------------------------------------------------------------------------------------------------
# Public entry points.


def use_cpu_cores(count: int | None = None) -> int:
    """Splits the host CPU into ``count`` XLA devices so that :func:`simulate` shards its runs
    over every core; returns the number of CPU devices in effect.

    XLA's CPU backend is one device by default, and a vmapped program of small per-run
    operations (a bandit round) keeps only one core busy: with one device per core, each core
    plays its own block of runs. Measured on a 2-core machine: lin-ts at 1,000 runs 1.2M ->
    2.1M seed-steps/s, neurallog-ucb-2 at 10 runs 13k -> 27k. Results do not change (runs are
    independent; sharding is bit-for-bit). GPUs and TPUs are unaffected.

    Call it right after the imports, before the first JAX computation: the CPU backend's device
    count is fixed once it starts. Afterwards it returns the count in effect, and warns if an
    explicit ``count`` could not be honoured (the default adapts quietly, so a notebook, script
    or command that calls it also runs inside a process where JAX is already up). The command
    line, benchmarks and reproduction scripts call it (``--cpu-devices``).

    Args:
      count: the number of devices (default: the cores this process may run on, unless
        ``XLA_FLAGS`` already sets ``--xla_force_host_platform_device_count``).

    Example::

        import jaxbandits as jb
        jb.use_cpu_cores()
        result = jb.simulate(env, agent, 0, 10_000, 1_000)   # runs split over the cores
    """
    asked = count is not None
    if not asked:
        if "xla_force_host_platform_device_count" in os.environ.get("XLA_FLAGS", ""):
            return len(jax.devices("cpu"))  # the user's own split wins
        count = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
    if int(count) != count or count < 1:
        raise ValueError(f"count must be a positive integer, got {count!r}")
    try:
        jax.config.update("jax_num_cpu_devices", int(count))
    except RuntimeError:  # the backends are already up
        current = len(jax.devices("cpu"))
        if asked and current != count:
            warnings.warn(f"use_cpu_cores({count}) came after JAX started its CPU backend; "
                          f"it keeps {current} device(s). Call it before the first JAX "
                          "computation.", stacklevel=2)
        return current
    return int(count)


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
    return _run([env], [agent], [name or _label(agent)], key, horizon, num_runs,
                chunk_size=chunk_size, record=record, num_records=num_records,
                checkpoint_dir=checkpoint_dir, overwrite=overwrite, save_to=save_to,
                progress=progress, devices=devices, block_runs=block_runs,
                max_memory=max_memory, run_info=run_info)[0]


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
    keyword arguments of :func:`simulate`; checkpoints go to ``checkpoint_dir/<name>`` and
    streamed results to ``save_to/<name>``.
    """
    _check_agents(agents)
    results = {}
    for label, agent in agents.items():
        results[label] = simulate(env, agent, key, horizon, num_runs, name=label,
                                  checkpoint_dir=_under(checkpoint_dir, label),
                                  save_to=_under(save_to, label), **kwargs)
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
) -> dict[str, Result]:
    """Runs ``agent`` over the Cartesian product of ``grid`` with one compiled program.

    ``grid`` maps field names to sequences of values: agent fields (``"explore_scale"``) or
    environment fields (``"env.noise_std"``). Every grid point plays the same program as
    :func:`simulate`, so grid point ``p``'s run ``r`` equals ``simulate(env_p, agent_p, key,
    ...)``'s run ``r`` bit for bit (common random numbers). Numeric fields are batched: a grid
    over them compiles once. Static fields (``ensemble_size``, a distribution law, a network
    width) are allowed too: one program is compiled per distinct static value.
    Returns ``{"field=value,...": Result}`` in grid order; ``save_to`` is a folder. Takes the
    keyword arguments of :func:`simulate` (``progress``, ``run_info``...).

    Example::

        results = jb.sweep(env, jb.make_agent("lin-ucb"), key,
                           {"explore_scale": [0.1, 0.3, 1.0]}, horizon=2_000, num_runs=50)
    """
    names, values = _check_grid(grid)
    _check_grid_values(env, agent, names, values)
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
    results = _run(envs, agents, labels, key, horizon, num_runs, chunk_size=chunk_size,
                   record=record, num_records=num_records, checkpoint_dir=checkpoint_dir,
                   overwrite=overwrite, save_to=save_to, progress=progress, devices=devices,
                   block_runs=block_runs, max_memory=max_memory, run_info=run_info,
                   save_folder=True)
    return dict(zip(labels, results, strict=True))


ACCELERATOR_BLOCK_FACTOR = 128
"""On a GPU or TPU the default block is this many times the CPU one (1,024 runs for neural
agents, 16,384 otherwise). Measured on one H200 (jax 0.11.2, ``benchmarks/block_runs.py``):
lin-ts at 10^4 runs 0.66M seed-steps/s in blocks of 128, 22M in blocks of 8,192, 39M in one
block; neural-ucb at 1,000 runs 17k in blocks of 8, 2.1M in one block."""


def default_block_runs(agent: Agent, platform: str | None = None) -> int:
    """The default number of runs per block for ``agent`` on ``platform`` (``"cpu"``, ``"gpu"``,
    ``"tpu"``; default: JAX's default backend).

    On a CPU: the agent's ``runs_per_block`` attribute if it has one, else 8 for neural agents
    (a round is costly; little is gained by wider blocks, and padding a few runs up to a block
    costs less) and 128 otherwise (measured on 2 CPU cores: lin-ts at 64-1,024 runs per device
    within 15% of each other). On an accelerator, :data:`ACCELERATOR_BLOCK_FACTOR` times that:
    a GPU needs thousands of runs in flight (a block of 128 runs leaves an H200 98% idle).
    Results depend on ``block_runs``, so runs on a CPU and on a GPU are different draws unless
    ``block_runs`` is given explicitly (floating point differs between backends anyway)."""
    own = agent.runs_per_block if isinstance(agent, Agent) else None
    inner = wrapped_agent(agent)  # a wrapper such as the anytime doubling trick
    if own is not None:
        cpu = int(own)
    elif isinstance(inner, Agent):
        cpu = default_block_runs(inner, "cpu")
    else:
        cpu = 8 if getattr(agent, "family", "") == "neural" else 128
    platform = jax.default_backend() if platform is None else platform
    return cpu if platform == "cpu" else cpu * ACCELERATOR_BLOCK_FACTOR


def default_chunk_size(agent: Agent, horizon: int) -> int:
    """The default rounds per compiled scan: ``min(T, 1000)``, or ``min(T, 250)`` for agents
    with costly rounds (neural training loops: a CPU default block below 128 runs).

    Why the shorter chunk: when such an agent's blocks are spread over several CPU devices
    (``jb.use_cpu_cores()``), XLA's CPU runtime holds about 2 MB per round until the chunk ends
    (measured: neural-ucb on ``quadratic``, 2 devices, blocks of 2 or 8 runs, peak RSS 683 MB
    at T = 200 and 1,902 MB at T = 800 in one chunk; flat on one device; lmc-ts alike). With
    250-round chunks that is at most ~0.5 GB, at the price of a host synchronisation every 250
    rounds of milliseconds each. Chunking never changes the numbers."""
    costly = default_block_runs(agent, "cpu") < 128
    return min(horizon, 250 if costly else 1000)


def log_spaced_steps(horizon: int, num: int) -> np.ndarray:
    """About ``num`` distinct log-spaced steps in ``[1, horizon]``, always ending at ``horizon``."""
    steps = np.unique(np.round(np.geomspace(1, horizon, max(num, 2))).astype(np.int64))
    return np.unique(np.append(steps, horizon)).astype(np.int32)


# ------------------------------------------------------------------------------------------------
# Implementation.


def _run(envs, agents, labels, key, horizon, num_runs, *, chunk_size, record, num_records,
         checkpoint_dir, overwrite, save_to, progress, devices, block_runs, max_memory,
         run_info=None, save_folder=False) -> list[Result]:
    """Plays ``len(envs)`` configurations (a sweep's grid points, or one) wave by wave."""
    horizon, num_runs, num_records, chunk_size, block_runs, max_memory = map(
        _as_size, (horizon, num_runs, num_records, chunk_size, block_runs, max_memory))
    _check_sizes(horizon=horizon, num_runs=num_runs, num_records=num_records)
    progress = _progress_mode(progress)
    run_info = _check_run_info(run_info)
    if horizon >= 2**31 - 1:
        raise ValueError(f"horizon must be below 2**31 - 1 (rounds are int32), got {horizon}")
    if num_runs > 2**32:
        raise ValueError(f"num_runs must be at most 2**32 (run ids are uint32), got {num_runs}")
    chunk_size = default_chunk_size(agents[0], horizon) if chunk_size is None else chunk_size
    _check_sizes(chunk_size=chunk_size)
    for e, a in zip(envs, agents, strict=True):
        _check_pair(e, a)
    _warn_long_warmups(envs, agents, labels, horizon)
    steps = _record_steps(record, horizon, num_records)
    key = _as_key(key)
    devices = _check_devices(devices)
    block_runs = (default_block_runs(agents[0], devices[0].platform) if block_runs is None
                  else block_runs)
    _check_sizes(block_runs=block_runs)
    if not isinstance(overwrite, bool):
        raise ValueError(f"overwrite must be True or False, got {overwrite!r}")
    if max_memory is not None:
        _check_sizes(max_memory=max_memory)
    # with several processes, process 0 writes the files; the others keep results in memory
    paths = _result_paths(save_to, labels, save_folder) if jax.process_index() == 0 else None
    # one writer per result, from before compiling to the last file (reentrant: the writers
    # take the same locks again)
    with contextlib.ExitStack() as locks:
        for path in paths or []:
            locks.enter_context(lock_result(path))
        return _run_groups(envs, agents, labels, key, horizon, num_runs, steps, chunk_size,
                           checkpoint_dir, overwrite, paths, progress, devices, block_runs,
                           max_memory, run_info)


def _run_groups(envs, agents, labels, key, horizon, num_runs, steps, chunk_size,
                checkpoint_dir, overwrite, paths, progress, devices, block_runs, max_memory,
                run_info) -> list[Result]:
    # Grid points that differ in static fields (sizes, laws) are played by programs of their
    # own, one group per distinct structure; each point's runs are the same bits either way.
    groups: dict[Any, list[int]] = {}
    for i, (e, a) in enumerate(zip(envs, agents, strict=True)):
        groups.setdefault((jax.tree.structure(e), jax.tree.structure(a)), []).append(i)
    if len(groups) == 1:
        return _run_group(envs, agents, labels, key, horizon, num_runs, steps, chunk_size,
                          checkpoint_dir, overwrite, paths, progress, devices, block_runs,
                          max_memory, run_info)
    results: list[Result | None] = [None] * len(envs)
    for number, members in enumerate(groups.values()):
        pick = functools.partial(_pick, members)
        sub = None if checkpoint_dir is None else Path(checkpoint_dir) / f"static-{number}"
        done = _run_group(pick(envs), pick(agents), pick(labels), key, horizon, num_runs, steps,
                          chunk_size, sub, overwrite, None if paths is None else pick(paths),
                          progress, devices, block_runs, max_memory, run_info)
        for i, result in zip(members, done, strict=True):
            results[i] = result
    return results


def _pick(indices: list[int], items: list) -> list:
    return [items[i] for i in indices]


def _run_group(envs, agents, labels, key, horizon, num_runs, steps, chunk_size, checkpoint_dir,
               overwrite, paths, progress, devices, block_runs, max_memory,
               run_info) -> list[Result]:
    """Plays configurations of one static structure (one pair of compiled programs)."""
    plan = _Plan(len(envs), num_runs, block_runs, 1)
    plan = dataclasses.replace(plan, num_devices=min(len(devices), plan.num_blocks))
    devices = devices[: plan.num_devices]
    dtype = float_dtype()
    _check_memory(envs[0], agents[0], key, len(steps), plan, devices, max_memory,
                  streamed=paths is not None or checkpoint_dir is not None)

    # Files are checked (writable, not another experiment's, not locked) before any compute.
    ckpt = None
    if checkpoint_dir is not None and jax.process_index() == 0:  # one process writes it
        from jaxbandits.checkpoint import Checkpoint

        fingerprint = _fingerprint(envs, agents, key, horizon, num_runs, block_runs, steps,
                                   labels)
        describe = {"agents": labels, "env": _label(envs[0]), "horizon": horizon,
                    "num_runs": num_runs, "block_runs": block_runs}
        ckpt = Checkpoint(checkpoint_dir, fingerprint, describe=describe, overwrite=overwrite)
    try:
        # load before compiling: a foreign or corrupt checkpoint is refused at once (and load
        # comes before the records file is opened, since it drops uncommitted ones)
        restored = None if ckpt is None else ckpt.load()
        return _play(envs, agents, labels, key, horizon, steps, plan, devices, chunk_size,
                     dtype, ckpt, restored, paths, progress, run_info)
    finally:
        if ckpt is not None:
            ckpt.close()


def _play(envs, agents, labels, key, horizon, steps, plan, devices, chunk_size, dtype, ckpt,
          restored, paths, progress, run_info) -> list[Result]:
    mesh = Mesh(np.asarray(devices), ("runs",))
    blocks = NamedSharding(mesh, PartitionSpec("runs"))
    replicated = NamedSharding(mesh, PartitionSpec())
    env_grid, agent_grid = _stack(envs), _stack(agents)
    init_fn, chunk_fn = _programs(len(steps), chunk_size, mesh)
    B, N, S, D = plan.block_runs, plan.num_runs, len(steps), plan.num_devices

    params_cache: dict[tuple[int, ...], tuple[PyTree, PyTree]] = {}

    def params(wave):
        points = tuple(g for g, _, _ in wave)
        if points not in params_cache:
            pick = lambda x: x[np.asarray(points)]  # noqa: E731
            params_cache[points] = _put(
                (jax.tree.map(pick, env_grid), jax.tree.map(pick, agent_grid)), blocks)
        return params_cache[points]

    def run_ids(wave):
        ids = np.concatenate([start + np.arange(B, dtype=np.int64) for _, start, _ in wave])
        return _put(ids.astype(np.uint32), blocks)

    key = _put(key, replicated)
    steps_arr = _put(np.asarray(steps), replicated)
    horizon_arr = _put(np.asarray(horizon, np.int32), replicated)
    zero = _put(np.zeros((), np.int32), replicated)
    wave0 = plan.wave(0)
    env_w, agent_w = params(wave0)
    label = labels[0] if len(labels) == 1 else f"sweep of {len(labels)}"
    bar = _Progress(progress, label, plan.num_points * N * horizon, plan.num_points * N)
    with bar:  # shows the compile phase, then the seed-steps played
        init_c, compile_time = _compiled(init_fn, "init", env_w, agent_w, key, run_ids(wave0),
                                         announce=bar.compiling)
        like = init_c.out_info  # the carry's shapes, dtypes and shardings
        chunk_c, chunk_compile = _compiled(chunk_fn, "chunk", env_w, agent_w, like, zero,
                                           horizon_arr, steps_arr, announce=bar.compiling)
        compile_time += chunk_compile
        bar.compiled(compile_time)

        if restored is not None and jax.process_index() == 0:
            restored = _position(restored, plan, like, horizon, ckpt)
        if jax.process_count() > 1:  # process 0 read the checkpoint; every process resumes
            restored = _share_restored(restored, like, B)
        first_block, partial, done, wall, rest = 0, 0, 0, 0.0, {}
        if restored is not None:
            first_block, partial, done, wall, rest = restored
        sink = _Sink(plan, steps, dtype, paths, ckpt, any(e.spec().replay for e in envs),
                     envs[0].spec().metrics)
        if ckpt is not None and ckpt.version == 1:  # rows without hashes: hashed from now on
            sink.rows.cover(0, plan.rows_before(first_block))
        # The groups of blocks still to play, in block order, ``(first block, count, round,
        # restored host carry or None)``: the blocks a checkpoint left mid-way (split over
        # this run's devices, whatever the device count that wrote it), then whole waves.
        todo = [(first_block + j, min(D, partial - j), done,
                 {k: v[j * B: (j + D) * B] for k, v in rest.items()})
                for j in range(0, partial, D)]
        block = first_block + partial
        while block < plan.num_blocks:
            todo.append((block, min(D, plan.num_blocks - block), 0, None))
            block += todo[-1][1]

        t0, played = time.perf_counter(), bool(todo)
        checkpointed = _any_process(ckpt is not None)
        spec = envs[0].spec()
        leaf_paths = _state_leaf_paths(agents[0], spec)

        def elapsed() -> float:
            return wall + time.perf_counter() - t0 if played else wall

        def check(carry, group) -> None:
            _raise_if_bad(_host(carry.bad_step), _host(carry.bad_state), group, B, labels,
                          spec, leaf_paths)

        def finish(first, count, group, carry) -> None:
            """Checks a group's last chunk and writes its records (and commits them, with the
            restored blocks still waiting at their round)."""
            check(carry, group)
            records = _host(carry.records)
            for i, (g, start, real) in enumerate(group):
                if real:
                    sink.write(g, start, records[i * B: i * B + real, :S])
            end = first + count
            if ckpt is not None:
                sink.flush()
                waiting = max(0, first_block + partial - end)
                kept = {k: v[(end - first_block) * B:] for k, v in rest.items()} if waiting \
                    else {}
                ckpt.commit(_meta(plan, end, waiting, done if waiting else 0, elapsed()), kept)
            waiting_rows = plan.rows_before(max(end, first_block + partial)) - plan.rows_before(end)
            bar.advance(plan.rows_before(end) * horizon + done * waiting_rows, elapsed())

        # A group's last chunk is collected after the next group is dispatched, so the devices
        # play while the host writes records (a finished group is always written before the
        # next one's first checkpoint commit).
        pending = None
        bar.advance(plan.rows_before(first_block) * horizon
                    + done * (plan.rows_before(first_block + partial)
                              - plan.rows_before(first_block)), wall)
        for index, (first, count, at, host) in enumerate(todo):
            group = plan.group(first, count)
            env_w, agent_w = params(group)
            if host is None:
                carry = init_c(env_w, agent_w, key, run_ids(group))
            else:
                carry = _restore_carry(like, _pad_blocks(host, count, D, B), blocks,
                                       jax.random.key_impl(key))
            # mid-group commits hold one round for every unfinished block: not while restored
            # blocks wait at another round
            waits = index + 1 < len(todo) and todo[index + 1][3] is not None
            real = plan.rows_before(first + count) - plan.rows_before(first)
            played_to = at
            while True:
                carry = chunk_c(env_w, agent_w, carry, jnp.asarray(played_to, jnp.int32),
                                horizon_arr, steps_arr)
                played_to = min(played_to + chunk_size, horizon)
                if pending is not None:
                    finish(*pending)
                    pending = None
                if played_to >= horizon:
                    break
                check(carry, group)
                if checkpointed and not waits:
                    arrays = _carry_arrays(carry, count * B)  # gathered by every process
                    if ckpt is not None:
                        ckpt.commit(_meta(plan, first, count, played_to, elapsed()), arrays)
                bar.advance(plan.rows_before(first) * horizon + played_to * real, elapsed())
            pending = (first, count, group, carry)
        if pending is not None:
            finish(*pending)
        if checkpointed and jax.process_count() > 1:  # blocks a resumed run did not replay
            sink.share_from_process_zero()
        wall = elapsed()

    extras = {"horizon": horizon, "num_runs": N, "devices": len(devices),
              "block_runs": B, "chunk_size": chunk_size,
              "key": np.asarray(jax.random.key_data(key)).tolist()}
    info = json.dumps({**environment_info(devices), "horizon": horizon, "num_runs": N,
                       "block_runs": B, "chunk_size": chunk_size, "key": extras["key"],
                       **run_info})
    return [
        sink.result(g, wall_time=wall / len(labels),
                    compile_time=compile_time, name=labels[g], env_config=config_of(envs[g]),
                    agent_config=config_of(agents[g]), extras=extras,
                    run_info=json.loads(info))  # each result its own copy
        for g in range(len(labels))
    ]


def _real(plan: _Plan, wave_index: int) -> int:
    if wave_index >= plan.num_waves:
        return 0
    return sum(real for _, _, real in plan.wave(wave_index))


class _Sink:
    """Where finished blocks' records go: host memory, the result files (``save_to``), or the
    checkpoint's records file (so that a resumed run has them)."""

    def __init__(self, plan: _Plan, steps: np.ndarray, dtype, paths, ckpt, replay: bool,
                 metrics: tuple[str, ...] = ()):
        self.plan, self.paths, self.replay, self.dtype = plan, paths, replay, dtype
        self.metrics = metrics
        self.steps = steps.astype(np.int64)
        shape = (plan.num_points * plan.num_runs, len(steps), 3 + len(metrics))
        self.memory = self.rows = self.writers = None
        if ckpt is not None:
            self.rows = ckpt.records(shape, dtype)
        elif paths is not None:
            self.writers = [self._writer(p) for p in paths]
        else:
            self.memory = np.zeros(shape, dtype)

    def _writer(self, path):
        from jaxbandits.results import ResultWriter

        return ResultWriter(path, self.plan.num_runs, self.steps, replay=self.replay,
                            dtype=self.dtype, metrics=self.metrics)

    def _write_rows(self, writer, start: int, rows: np.ndarray) -> None:
        writer.write(start, rows[..., 0], rows[..., 1], rows[..., 2] if self.replay else None,
                     {m: rows[..., 3 + i] for i, m in enumerate(self.metrics)})

    def write(self, g: int, start: int, rows: np.ndarray) -> None:
        offset = g * self.plan.num_runs + start
        if self.memory is not None:
            self.memory[offset: offset + len(rows)] = rows
        elif self.rows is not None:
            self.rows.write(offset, rows)
        else:
            self._write_rows(self.writers[g], start, rows)

    def flush(self) -> None:
        if self.rows is not None:
            self.rows.flush()

    def share_from_process_zero(self) -> None:
        """Process 0's records (its checkpoint's records file holds the waves finished before a
        resume), in every process (a collective)."""
        from jax.experimental import multihost_utils

        rows = _read_rows(self.rows) if self.rows is not None else self.memory
        shared = np.asarray(multihost_utils.broadcast_one_to_all(np.asarray(rows)))
        if self.memory is not None:
            self.memory = shared

    def result(self, g: int, **fields) -> Result:
        n = self.plan.num_runs
        if self.writers is None and self.paths is None:
            rows = self.memory if self.memory is not None else _read_rows(self.rows)
            block = rows[g * n: (g + 1) * n]
            return Result(steps=self.steps, cumulative_regret=np.ascontiguousarray(block[..., 0]),
                          cumulative_reward=np.ascontiguousarray(block[..., 1]),
                          accepted=np.ascontiguousarray(block[..., 2]) if self.replay else None,
                          metrics={m: np.ascontiguousarray(block[..., 3 + i])
                                   for i, m in enumerate(self.metrics)},
                          **fields)
        if self.writers is None:  # checkpointed and streamed: copy the rows into the result
            source = _read_rows(self.rows)
            writer = self._writer(self.paths[g])
            step = max(1, (64 << 20) // max(1, source[0].nbytes))
            for start in range(0, n, step):
                rows = np.asarray(source[g * n + start: g * n + min(n, start + step)])
                self._write_rows(writer, start, rows)
            return writer.finish(**fields)
        return self.writers[g].finish(**fields)


def _read_rows(rows) -> np.ndarray:
    from jaxbandits._io import read_npy

    rows.flush()
    return read_npy(rows.path, mmap=True)


def _result_paths(save_to, labels: list[str], folder: bool) -> list[Path] | None:
    if save_to is None:
        return None
    from jaxbandits._io import check_writable_dir

    save_to = Path(save_to)
    if folder or len(labels) > 1:
        check_writable_dir(save_to)
        return [save_to / _safe(label) for label in labels]
    check_writable_dir(save_to.parent)
    return [save_to]


def _carry_arrays(carry: Carry, rows: int) -> dict[str, np.ndarray]:
    """The carry's leaves on the host (keys as key data), its first ``rows`` runs (the real
    blocks)."""
    return {f"leaf_{i}": _host(_key_data(x))[:rows] for i, x in enumerate(jax.tree.leaves(carry))}


def _pad_blocks(arrays: dict[str, np.ndarray], count: int, num_devices: int,
                block_runs: int) -> dict[str, np.ndarray]:
    """``count`` blocks of carry rows padded to one block per device with copies of the last."""
    last = slice((count - 1) * block_runs, count * block_runs)
    return {k: np.concatenate([v[: count * block_runs]] + [v[last]] * (num_devices - count))
            for k, v in arrays.items()}


def _meta(plan: _Plan, first: int, partial: int, done: int, wall: float) -> dict[str, Any]:
    """A checkpoint's position, by blocks of runs (independent of the device count): blocks
    ``[0, blocks_done)`` are finished (their records committed), the next ``partial`` blocks
    have played ``done`` rounds (their carry is the commit's arrays), the rest have not
    started."""
    return {"blocks_done": first, "partial": partial, "done": done,
            "runs_done": plan.rows_before(first), "wall": wall}


def _position(restored, plan: _Plan, like: Carry, horizon: int, ckpt):
    """``(blocks done, partial blocks, round, wall, their carry arrays)`` of a loaded
    checkpoint ``(meta, arrays)``, checked against this experiment.

    Raises:
      CheckpointError: the position or arrays do not fit this experiment, or a version-1
        checkpoint (progress in waves) cannot be read on this device count.
    """
    from jaxbandits.checkpoint import CheckpointError

    meta, arrays = restored
    if "wave" in meta:
        return _legacy_position(meta, arrays, plan, like, horizon, ckpt)
    try:
        first, partial, done = (int(meta[k]) for k in ("blocks_done", "partial", "done"))
        wall = float(meta["wall"])
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"the checkpoint's position is unreadable: {meta!r}") from err
    if not (0 <= first <= plan.num_blocks and 0 <= partial <= plan.num_blocks - first
            and 0 <= done < horizon and (partial == 0) == (done == 0)):
        raise CheckpointError(f"the checkpoint's position ({first} blocks done, {partial} at "
                              f"round {done}) lies outside this experiment "
                              f"({plan.num_blocks} blocks of {plan.block_runs} runs, horizon "
                              f"{horizon})")
    _check_carry_arrays(arrays, like, partial * plan.block_runs)
    return first, partial, done, wall, arrays


def _legacy_position(meta, arrays, plan: _Plan, like: Carry, horizon: int, ckpt):
    """The position of a version-1 checkpoint, which counted waves of one block per device
    without recording the device count: read from its carry's size when it stopped mid-wave;
    at a wave boundary, assumed to be this run's, and refused if that claims runs whose
    records are empty (it was then written on fewer devices)."""
    from jaxbandits import _io
    from jaxbandits.checkpoint import RECORDS, CheckpointError

    try:
        wave, done, wall = int(meta["wave"]), int(meta["done"]), float(meta["wall"])
    except (KeyError, TypeError, ValueError) as err:
        raise CheckpointError(f"the checkpoint's position is unreadable: {meta!r}") from err
    B, D = plan.block_runs, plan.num_devices
    if not (0 <= wave <= plan.num_waves and 0 <= done < horizon):
        raise CheckpointError(f"the checkpoint's position (wave {wave}, round {done}) lies "
                              "outside this experiment")
    if done:
        rows = np.shape(arrays.get("leaf_0", np.zeros(0)))
        written = rows[0] // B if rows and rows[0] % B == 0 else 0
        first = wave * written
        partial = min(written, plan.num_blocks - first)
        if partial <= 0:
            raise CheckpointError(f"the checkpoint's carry ({rows} for leaf_0) does not fit "
                                  f"wave {wave} of blocks of {B} runs")
        arrays = {k: v[: partial * B] for k, v in arrays.items()}
        num_leaves = len(jax.tree.leaves(like))
        if len(arrays) == num_leaves - 1:  # no bad_state yet: nothing was flagged
            arrays[f"leaf_{num_leaves - 1}"] = np.full((partial * B, 2), -1, np.int32)
        _check_carry_arrays(arrays, like, partial * B)
        return first, partial, done, wall, arrays
    first = min(wave * D, plan.num_blocks)
    records = None if ckpt is None else _io.read_npy(ckpt.directory / RECORDS)
    for block in range(first if records is not None else 0):
        start, stop = plan.rows_before(block), plan.rows_before(block + 1)
        if not np.any(records[start:stop]):
            raise CheckpointError(
                f"this checkpoint, of an older jaxbandits (version 1), counts progress in "
                f"waves of one block per device and does not record its device count; read "
                f"with this run's {D} device(s) its {wave} wave(s) claim runs "
                f"{start}..{stop - 1} done, but their records are empty: it was written on "
                f"fewer than {D} devices. Resume it on the device count that wrote it, or "
                "start afresh (overwrite=True)")
    return first, 0, 0, wall, {}


def _check_carry_arrays(arrays: dict, like: Carry, rows: int) -> None:
    """Checks that ``arrays`` are the carry leaves of ``rows`` runs (keys as key data)."""
    from jaxbandits.checkpoint import CheckpointError

    templates = jax.tree.leaves(like)
    if not rows:
        if arrays:
            raise CheckpointError(f"the checkpoint holds {len(arrays)} carry arrays at a "
                                  "block boundary, where it needs none")
        return
    if set(arrays) != {f"leaf_{i}" for i in range(len(templates))}:
        raise CheckpointError(f"the checkpoint holds arrays {sorted(arrays)}; the run's carry "
                              f"has {len(templates)} leaves (leaf_0 .. "
                              f"leaf_{len(templates) - 1})")
    for i, t in enumerate(templates):
        shape = (rows, *t.shape[1:]) + ((2,) if _is_key(t) else ())
        dtype = np.dtype(np.uint32) if _is_key(t) else np.dtype(t.dtype)
        a = arrays[f"leaf_{i}"]
        if a.shape != shape or a.dtype != dtype:
            raise CheckpointError(f"checkpoint array leaf_{i} is {a.dtype} {a.shape}; this "
                                  f"run's carry of {rows} runs needs {dtype} {shape}")


# ------------------------------------------------------------------------------------------------
# Several processes (jax.distributed): the run axis spans every process's devices; host data is
# the same in every process, results are gathered, files are written by process 0.


def _put(tree: PyTree, sharding) -> PyTree:
    """``jax.device_put`` onto ``sharding``, also when it spans other processes' devices (the
    host values are the same in every process: they are put from NumPy)."""
    if jax.process_count() == 1:
        return jax.device_put(tree, sharding)

    def put(x):
        if _is_key(x):
            data = put(np.asarray(jax.random.key_data(x)))
            return jax.random.wrap_key_data(data, impl=jax.random.key_impl(x))
        return jax.device_put(np.asarray(x), sharding)

    return jax.tree.map(put, tree)


def _host(x: jax.Array) -> np.ndarray:
    """The whole of ``x`` on the host, gathered from every process when it is spread over them
    (a collective: every process calls it)."""
    if getattr(x, "is_fully_addressable", True):
        return np.asarray(x)
    from jax.experimental import multihost_utils

    return np.asarray(multihost_utils.process_allgather(x, tiled=True))


def _any_process(flag: bool) -> bool:
    """``flag`` of process 0 (which alone opens checkpoints and result files), in every
    process."""
    if jax.process_count() == 1:
        return flag
    from jax.experimental import multihost_utils

    return bool(multihost_utils.broadcast_one_to_all(np.asarray(flag)))


def _share_restored(restored, like: Carry, block_runs: int):
    """Process 0's checked position ``(blocks done, partial, round, wall, arrays)`` (or None),
    in every process."""
    from jax.experimental import multihost_utils

    have = restored is not None
    first, partial, done, wall, arrays = restored if have else (0, 0, 0, 0.0, {})
    head = multihost_utils.broadcast_one_to_all(
        (np.asarray(have), np.asarray([first, partial, done], np.int64), np.asarray(wall)))
    if not bool(head[0]):
        return None
    first, partial, done = (int(v) for v in head[1])
    if partial:
        rows = partial * block_runs
        zeros = {f"leaf_{i}": np.zeros((rows, *t.shape[1:]) + ((2,) if _is_key(t) else ()),
                                       np.uint32 if _is_key(t) else t.dtype)
                 for i, t in enumerate(jax.tree.leaves(like))}
        shared = multihost_utils.broadcast_one_to_all(
            arrays if jax.process_index() == 0 else zeros)
        arrays = {k: np.asarray(v) for k, v in shared.items()}
    return first, partial, done, float(head[2]), arrays if partial else {}


def _restore_carry(like: Carry, arrays: dict[str, np.ndarray], sharding, impl) -> Carry:
    """The carry held by ``arrays`` (checked by :func:`_check_carry_arrays`, one block per
    device), on the devices."""
    leaves = [jax.random.wrap_key_data(arrays[f"leaf_{i}"], impl=impl) if _is_key(t)
              else arrays[f"leaf_{i}"] for i, t in enumerate(jax.tree.leaves(like))]
    return _put(jax.tree.unflatten(jax.tree.structure(like), leaves), sharding)


def _check_memory(env, agent, key, num_slots: int, plan: _Plan, devices, max_memory,
                  streamed: bool) -> None:
    """Estimates, from abstract shapes alone, what one block needs on a device and what the
    results need on the host; raises ``ValueError`` before anything is allocated if either
    does not fit."""
    carry = jax.eval_shape(
        lambda k: init_run(env, agent, k, jnp.zeros((), jnp.uint32), num_slots), key)
    per_run = _nbytes(carry)
    # The carry in and out of a chunk, and a round's temporaries (about as much again).
    fixed = _nbytes(env) + _nbytes(agent)
    need = 4 * per_run * plan.block_runs + fixed
    budget = max_memory if max_memory is not None else _device_budget(devices)
    if need > budget:
        fits = (budget - fixed) // (4 * per_run) if budget > fixed else 0
        hint = (f"block_runs={2 ** int(math.log2(fits))} fits" if fits >= 1
                else "not even one run fits")
        raise ValueError(
            f"one block of {plan.block_runs} run(s) needs about {_gib(need)} per device "
            f"({_gib(per_run)} of state per run), more than the {_gib(budget)} available"
            + (" (max_memory)" if max_memory is not None else "")
            + f": lower block_runs ({hint}) or the problem's sizes, or raise max_memory")
    results = (plan.num_points * plan.num_runs * num_slots * _num_columns(env.spec())
               * np.dtype(float_dtype()).itemsize)
    if not streamed and results > _host_available() // 2:
        raise ValueError(
            f"the recorded curves of {plan.num_points * plan.num_runs:,} runs need "
            f"{_gib(results)} of host memory, more than half of the {_gib(_host_available())} "
            "available: pass save_to=PATH to stream them to disk, or record fewer steps")


def _nbytes(tree: PyTree) -> int:
    total = 0
    for x in jax.tree.leaves(tree):
        if not hasattr(x, "dtype"):
            x = np.asarray(x)
        itemsize = 8 if _is_key(x) else np.dtype(x.dtype).itemsize
        total += int(np.prod(np.shape(x), dtype=np.float64)) * itemsize
    return total


def _gib(n: float) -> str:
    return f"{n / 2**30:,.2f} GiB" if n >= 2**27 else f"{n / 2**20:,.1f} MiB"


def _host_available() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


def _device_budget(devices) -> int:
    stats = None
    local = [d for d in devices if d.process_index == jax.process_index()] or list(devices)
    devices = local
    try:
        stats = devices[0].memory_stats()
    except Exception:  # noqa: BLE001 - not every backend reports memory
        stats = None
    if stats and stats.get("bytes_limit"):
        return int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0))
    cpu = len(jax.local_devices(backend="cpu")) if devices[0].platform == "cpu" else 1
    return _host_available() // max(1, cpu)


def _check_devices(devices) -> list:
    if devices is None:
        return list(jax.devices())
    if isinstance(devices, (str, bytes)) or not isinstance(devices, Sequence | np.ndarray):
        raise ValueError(f"devices must be a sequence of jax devices, got {devices!r}")
    devices = list(devices)
    if not devices:
        raise ValueError("devices must name at least one device (got an empty sequence)")
    for d in devices:
        if not isinstance(d, jax.Device):
            raise ValueError(f"devices must be jax devices (jax.devices()), got {d!r}")
    if len(set(devices)) != len(devices):
        raise ValueError("devices must not repeat a device")
    if len({d.platform for d in devices}) != 1:
        raise ValueError("devices must all be of one platform")
    return devices


def _check_agents(agents) -> None:
    if not isinstance(agents, Mapping):
        raise ValueError("compare takes agents as a mapping {name: agent}, e.g. "
                         "{'lin-ts': jb.make_agent('lin-ts')}; got "
                         f"{type(agents).__name__}")
    if not agents:
        raise ValueError("compare needs at least one agent")
    for label, agent in agents.items():
        if not isinstance(label, str) or not label:
            raise ValueError(f"compare: agent names must be non-empty strings, got {label!r}")
        if not isinstance(agent, Agent):
            raise ValueError(f"compare: {label!r} is not a jaxbandits Agent "
                             f"({type(agent).__name__})")
    safe = [_safe(label) for label in agents]
    if len(set(safe)) != len(safe):
        raise ValueError("compare: agent names must stay distinct as file names")


def _check_grid(grid) -> tuple[list[str], list[list[Any]]]:
    if not isinstance(grid, Mapping) or not grid:
        raise ValueError("sweep needs a non-empty grid {field: [values, ...]}")
    names, values = [], []
    for name, v in grid.items():
        if not isinstance(name, str):
            raise ValueError(f"sweep: grid fields must be names, got {name!r}")
        if isinstance(v, (str, bytes)) or not isinstance(v, Sequence | np.ndarray):
            raise ValueError(f"sweep: grid field {name!r} needs a sequence of values, e.g. "
                             f"{{{name!r}: [{v!r}]}}; got {v!r}")
        v = list(v)
        if not v:
            raise ValueError(f"sweep: grid field {name!r} has no values")
        names.append(name)
        values.append(v)
    return names, values


def _check_grid_values(env: Env, agent: Agent, names: list[str], values: list[list]) -> None:
    """Each grid field's values fit the field (an array is refused for a scalar field) and are
    distinct as the engine holds them (``[1, 1.0]`` is one float32 value, played twice)."""
    for name, vals in zip(names, values, strict=True):
        owner, field = (env, name[4:]) if name.startswith("env.") else (agent, name)
        current = getattr(owner, field, None)
        scalar = isinstance(current, (int, float, np.number)) or (
            isinstance(current, (np.ndarray, jax.Array)) and np.ndim(current) == 0)
        for i, v in enumerate(vals):
            if scalar and isinstance(v, (np.ndarray, jax.Array, list)) and np.ndim(v) > 0:
                raise ValueError(f"sweep: grid field {name!r} is a scalar field, but value #{i} "
                                 f"is an array of shape {np.shape(v)}; give a flat list of "
                                 f"scalars, e.g. {{{name!r}: [0.1, 0.3]}}")
        held = None
        try:
            held = np.asarray(jnp.stack([_as_arrays(v) for v in vals]))
            keys = [held[i].tobytes() for i in range(len(vals))] if held.ndim == 1 else None
        except (TypeError, ValueError):
            keys = None
        if keys is None:
            keys = [repr(v) for v in vals]
        seen: dict[Any, int] = {}
        for i, k in enumerate(keys):
            if k in seen:
                j = seen[k]
                raise ValueError(f"sweep: grid field {name!r} repeats a value: {vals[j]!r} and "
                                 f"{vals[i]!r} are the same "
                                 f"{'value' if held is None else held.dtype} once converted, "
                                 "so that point would be played twice")
            seen[k] = i


def _under(folder, label: str) -> Path | None:
    return None if folder is None else Path(folder) / _safe(label)


def _label(agent: Agent) -> str:
    return getattr(agent, "name", "") or type(agent).__name__


def _safe(label: str) -> str:
    """``label`` as a file name: other characters become ``_``, and ``.`` / ``..`` are refused
    (they would name the folder or its parent)."""
    if label in (".", ".."):
        raise ValueError(f"a label cannot be {label!r}: it names a folder, not a result file")
    return "".join(c if c.isalnum() or c in "-_.=," else "_" for c in label)


def _check_sizes(**sizes: int) -> None:
    for field, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
            raise ValueError(f"{field} must be a positive integer, got {value!r}")


def _as_size(value):
    """A NumPy integer as a Python int (``horizon=np.int64(10)``); anything else unchanged,
    for :func:`_check_sizes` to judge."""
    return int(value) if isinstance(value, np.integer) else value


def _progress_mode(progress) -> str | None:
    """``"bar"``, ``"lines"`` or None (nothing) for the ``progress`` argument."""
    if progress is None:
        return "bar" if sys.stderr.isatty() else None
    if isinstance(progress, bool):
        return "bar" if progress else None
    if isinstance(progress, str) and progress in ("bar", "lines"):
        return progress
    raise ValueError(f"progress must be None, True, False, 'bar' or 'lines', got {progress!r}")


_RUN_INFO_KEYS = ("horizon", "num_runs", "block_runs", "chunk_size", "key")


def _check_run_info(run_info) -> dict[str, Any]:
    """The caller's ``run_info`` entries as a plain JSON dict (a copy); ``{}`` for None."""
    if run_info is None:
        return {}
    if not isinstance(run_info, Mapping):
        raise ValueError(f"run_info must be a dict, got {type(run_info).__name__}")
    reserved = set(environment_info([])) | set(_RUN_INFO_KEYS)
    for k in run_info:
        if not isinstance(k, str):
            raise ValueError(f"run_info keys must be strings, got {k!r}")
        if k in reserved:
            raise ValueError(f"run_info key {k!r} is recorded by the runner; the runner fills "
                             f"{sorted(reserved)}")
    try:
        return json.loads(json.dumps(dict(run_info), allow_nan=False))
    except (TypeError, ValueError) as err:
        raise ValueError(f"run_info values must be JSON-serialisable (str, int, float, bool, "
                         f"None, lists and dicts of them): {err}") from err


def _warn_long_warmups(envs, agents, labels, horizon: int) -> None:
    """Warns for each agent whose forced exploration lasts longer than the horizon."""
    for env, agent, label in zip(envs, agents, labels, strict=True):
        warmup = agent.warmup_rounds(env.spec())
        if warmup > horizon:
            warnings.warn(
                f"agent {label!r} has {warmup:,} warm-up rounds, more than the horizon "
                f"{horizon:,}: it only explores and never acts on its own rule. Pass a smaller "
                f"warmup= (e.g. make_agent(..., warmup={max(1, horizon // 10)})) or a longer "
                "horizon.", UserWarning, stacklevel=_user_stacklevel())


def _user_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the first caller outside jaxbandits."""
    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 1  # the function that warns is level 1
    while frame is not None and frame.f_code.co_filename.startswith(package):
        frame, level = frame.f_back, level + 1
    return level


def _record_steps(record, horizon: int, num_records: int) -> np.ndarray:
    if isinstance(record, str):
        if record == "log":
            return log_spaced_steps(horizon, num_records)
        if record == "all":
            return np.arange(1, horizon + 1, dtype=np.int32)
        raise ValueError(f"record must be 'log', 'all' or a sequence of steps, got {record!r}")
    raw = np.asarray(record)
    whole = np.issubdtype(raw.dtype, np.integer) or (
        np.issubdtype(raw.dtype, np.floating) and bool(np.all(raw == np.round(raw))))
    if raw.dtype == bool or not whole:
        raise ValueError(f"record steps must be whole numbers of rounds, got {record!r}")
    steps = raw.astype(np.int64)
    if steps.ndim != 1 or steps.size == 0 or np.any(np.diff(steps) <= 0):
        raise ValueError("record steps must be a non-empty, strictly increasing sequence")
    if steps[0] < 1 or steps[-1] > horizon:
        raise ValueError(f"record steps must lie in [1, horizon={horizon}]")
    return steps.astype(np.int32)


def _as_key(key) -> jax.Array:
    if isinstance(key, bool):
        raise ValueError(f"key must be a jax.random.key, a PRNGKey or an int seed, got {key!r}")
    if isinstance(key, (int, np.integer)):
        if not -(2**63) <= int(key) < 2**63:
            raise ValueError(f"an int seed must lie in [-2**63, 2**63), got {key}")
        return jax.random.key(int(key))
    if not isinstance(key, (jax.Array, np.ndarray)):
        raise ValueError(f"key must be a jax.random.key, a PRNGKey or an int seed, got {key!r}")
    key = jnp.asarray(key) if not isinstance(key, jax.Array) else key
    if jnp.issubdtype(key.dtype, jax.dtypes.prng_key):
        if key.shape != ():
            raise ValueError(f"key must be a single key, got shape {key.shape}")
        return key
    if key.dtype == jnp.uint32 and key.shape == (2,):
        return jax.random.wrap_key_data(key)
    raise ValueError(f"key must be a jax.random.key, a PRNGKey or an int seed, got {key!r}")


def _as_arrays(obj: PyTree) -> PyTree:
    """Numeric leaves as arrays of the default dtypes, so compiled programs are reused."""

    def convert(x):
        if isinstance(x, bool):
            return jnp.asarray(x)
        if isinstance(x, int):
            return jnp.asarray(x, jnp.int32)
        if isinstance(x, float):
            return jnp.asarray(x, float_dtype())
        return jnp.asarray(x)

    return jax.tree.map(convert, obj)


def _stack(objs: list[PyTree]) -> PyTree:
    return jax.tree.map(lambda *xs: jnp.stack(xs), *[_as_arrays(o) for o in objs])


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


def _check_pair(env: Env, agent: Agent) -> None:
    """Validates both and checks, by abstract evaluation (no compilation), that they fit."""
    if not isinstance(env, Env):
        raise ValueError(f"env must be a jaxbandits Env, got {type(env).__name__}")
    if not isinstance(agent, Agent):
        raise ValueError(f"agent must be a jaxbandits Agent, got {type(agent).__name__}")
    env.validate()
    agent.validate()
    spec = env.spec()
    env_name, agent_name = _label(env), _label(agent)
    metric_names = check_metric_names(spec.metrics, f"environment {env_name!r}: Spec.metrics")
    if spec.action_kind not in agent.action_kinds:
        raise ValueError(
            f"agent {agent_name!r} cannot act on environment {env_name!r}: it plays "
            f"{'/'.join(agent.action_kinds)} actions, the environment needs "
            f"{spec.action_kind!r} actions"
        )
    check_inputs(spec, agent, env_name, agent_name)
    key = jax.random.key(0)
    t = jnp.zeros((), jnp.int32)
    try:
        env_state = jax.eval_shape(env.init, key)
        context = jax.eval_shape(env.observe, key, env_state, t)
    except Exception as err:  # noqa: BLE001 - re-raised with context
        raise ValueError(f"environment {env_name!r} fails to produce a context: {err}") from err
    arms = getattr(context, "arms", None)
    if spec.action_kind in ("index", "pair"):
        if arms is None or arms.shape != (spec.num_arms, spec.dim):
            raise ValueError(
                f"dimension mismatch: environment {env_name!r} declares (num_arms, dim) = "
                f"({spec.num_arms}, {spec.dim}) but its context arms have shape "
                f"{None if arms is None else arms.shape}"
            )
    try:
        state = jax.eval_shape(lambda k: agent.init(k, spec), key)
        action, acted = jax.eval_shape(agent.act, state, key, context)
    except Exception as err:  # noqa: BLE001
        raise ValueError(
            f"dimension mismatch: agent {agent_name!r} cannot act on environment {env_name!r} "
            f"(dim={spec.dim}, num_arms={spec.num_arms}): {err}"
        ) from err
    expected = {"index": (), "pair": (2,), "vector": (spec.dim,)}[spec.action_kind]
    if action.shape != expected:
        raise ValueError(
            f"dimension mismatch: agent {agent_name!r} returned an action of shape "
            f"{action.shape}, environment {env_name!r} expects {expected} "
            f"({spec.action_kind!r} actions)"
        )
    try:
        feedback = jax.eval_shape(env.feedback, key, env_state, context, action)
        updated = jax.eval_shape(agent.update, acted, key, context, action, feedback)
    except Exception as err:  # noqa: BLE001
        raise ValueError(f"agent {agent_name!r} and environment {env_name!r} do not fit: "
                         f"{err}") from err
    _check_feedback_metrics(feedback, metric_names, env_name)
    if jax.tree.structure(updated) != jax.tree.structure(state) or any(
        (a.shape, a.dtype) != (b.shape, b.dtype)
        for a, b in zip(jax.tree.leaves(updated), jax.tree.leaves(state), strict=True)
    ):
        raise ValueError(f"agent {agent_name!r}: update must keep the state's tree, shapes and "
                         "dtypes")


def _check_feedback_metrics(feedback, names: tuple[str, ...], env_name: str) -> None:
    """The (abstract) feedback's ``metrics`` are exactly the spec's names, each a real scalar."""
    metrics = getattr(feedback, "metrics", {})
    if not isinstance(metrics, Mapping):
        raise ValueError(f"environment {env_name!r}: Feedback.metrics must be a dict "
                         f"{{name: ()}}, got {type(metrics).__name__}")
    if set(metrics) != set(names):
        raise ValueError(
            f"environment {env_name!r}: Feedback.metrics has keys {sorted(metrics)} but "
            f"Spec.metrics names {list(names)}; they must be the same names")
    for name in names:
        value = metrics[name]
        shape, dtype = getattr(value, "shape", None), getattr(value, "dtype", None)
        real = dtype is not None and (jnp.issubdtype(dtype, jnp.floating) or jnp.issubdtype(
            dtype, jnp.integer) or dtype == jnp.bool_)
        if shape != () or not real:
            raise ValueError(f"environment {env_name!r}: Feedback.metrics[{name!r}] must be a "
                             f"real scalar (shape ()), got {dtype} of shape {shape}")


def _raise_if_bad(bad: np.ndarray, bad_state: np.ndarray, wave, block_runs: int,
                  labels: list[str], spec, leaf_paths: list[str]) -> None:
    """Raises for the earliest problem among real runs: a non-finite reward (regret, extra
    metric, or an overflowed cumulative sum), a diverged agent state (a NaN or inf in a state
    leaf after an update) or an out-of-range action; at the same round in that order."""
    hits = []  # (step, kind, run, grid point, leaf)
    for i, (g, start, real) in enumerate(wave):
        rows = slice(i * block_runs, i * block_runs + real)
        for kind, steps in ((0, bad[rows, 0]), (1, bad_state[rows, 0]), (2, bad[rows, 1])):
            hits += [(int(steps[j]), kind, start + int(j), g, int(bad_state[rows, 1][j]))
                     for j in np.flatnonzero(steps >= 0)]
    if not hits:
        return
    step, kind, run, g, leaf = min(hits)
    affected = len({(h[2], h[3]) for h in hits if h[1] == kind})
    where = f" ({labels[g]})" if len(labels) > 1 else ""
    if kind == 0:
        what = ("reward or regret" if not spec.metrics else
                f"reward, regret or metric ({', '.join(spec.metrics)})")
        raise FloatingPointError(
            f"non-finite {what} in run {run}{where} at step {step} (0-based round index; a "
            f"cumulative sum that overflowed counts too); {affected} run(s) affected. Check "
            "the environment's feedback and scale.")
    if kind == 1:
        path = leaf_paths[leaf] if 0 <= leaf < len(leaf_paths) else f"#{leaf}"
        raise FloatingPointError(
            f"agent {labels[g]!r} diverged: its state leaf {path} holds a non-finite value (NaN "
            f"or inf) after the update of step {step} (0-based round index) in run {run}; "
            f"{affected} run(s) affected. Lower its learning rate or raise its "
            "regularisation.")
    allowed = ("a finite vector" if spec.action_kind == "vector" else
               f"indices in [0, {spec.num_arms})")
    raise ValueError(
        f"agent {labels[g]!r} returned an out-of-range action in run {run} at step {step} "
        f"(0-based round index): {spec.action_kind!r} actions must be {allowed}; "
        f"{affected} run(s) affected.")


def _state_leaf_paths(agent: Agent, spec) -> list[str]:
    """The paths (``jax.tree_util.keystr``) of the agent state's floating leaves, in the order
    of :attr:`Carry.bad_state`'s leaf index."""
    state = jax.eval_shape(lambda k: agent.init(k, spec), jax.random.key(0))
    return [f"state{jax.tree_util.keystr(path)}"
            for path, x in jax.tree_util.tree_flatten_with_path(state)[0]
            if jnp.issubdtype(x.dtype, jnp.inexact)]


def _fingerprint(envs, agents, key, horizon, num_runs, block_runs, steps, labels) -> str:
    """A digest of everything that determines the numbers (not the layout: chunking and the
    device count never change them, so a checkpoint resumes under either)."""
    digest = hashlib.sha256()
    identity = {
        "key": np.asarray(jax.random.key_data(key)).tolist(), "horizon": horizon,
        "num_runs": num_runs, "block_runs": block_runs, "labels": labels,
        "steps": hashlib.sha256(steps.tobytes()).hexdigest(), "jax": jax.__version__,
        "x64": bool(jax.config.jax_enable_x64),
    }
    metrics = list(envs[0].spec().metrics)
    if metrics:  # only when there are some: older checkpoints keep their fingerprint
        identity["metrics"] = metrics
    digest.update(json.dumps(identity, sort_keys=True).encode())
    for obj in (*envs, *agents):
        leaves, treedef = jax.tree.flatten(obj)
        statics = str(treedef)
        if _ADDRESS.search(statics):  # a static named by its address: described by value
            statics = _by_value(treedef, _label(obj))
        digest.update(f"{type(obj).__module__}.{type(obj).__qualname__}|{statics}".encode())
        for leaf in leaves:
            a = np.asarray(leaf)
            if a.dtype.hasobject:
                a = np.frombuffer(_by_value(leaf, _label(obj)).encode(), np.uint8)
            digest.update(f"{a.dtype}{a.shape}".encode())
            digest.update(np.ascontiguousarray(a).tobytes())
    return digest.hexdigest()


_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def _by_value(x, owner: str) -> str:
    """A description of ``x`` that depends on its value alone, never on its address (the same
    in every process): static pytree data, functions by their code, closure and defaults.

    Raises:
      ValueError: ``x`` (or a part of it) is an object known only by its identity.
    """
    describe = functools.partial(_by_value, owner=owner)
    if isinstance(x, jax.tree_util.PyTreeDef):
        data = x.node_data()
        head = "*" if data is None else f"{describe(data[0])}:{describe(data[1])}"
        return f"{head}({','.join(describe(c) for c in x.children())})"
    if x is None or isinstance(x, (bool, int, float, complex, str, bytes)):
        return repr(x)
    if isinstance(x, (tuple, list, set, frozenset)):
        items = sorted(map(describe, x)) if isinstance(x, (set, frozenset)) else map(describe, x)
        return f"{type(x).__name__}[{','.join(items)}]"
    if isinstance(x, Mapping):
        return "{" + ",".join(sorted(f"{describe(k)}:{describe(v)}" for k, v in x.items())) + "}"
    if isinstance(x, (np.ndarray, np.generic, jax.Array)) and not _is_key(x):
        a = np.asarray(x)
        if not a.dtype.hasobject:
            return f"{a.dtype}{a.shape}:{hashlib.sha256(a.tobytes()).hexdigest()}"
    named = _importable_name(x)
    if named is not None:
        return named
    if isinstance(x, functools.partial):
        return f"partial({describe(x.func)},{describe(x.args)},{describe(x.keywords)})"
    if isinstance(x, types.MethodType):
        return f"method({describe(x.__self__)},{describe(x.__func__)})"
    if isinstance(x, types.FunctionType):
        cells = [c.cell_contents for c in x.__closure__ or ()]
        return (f"function({x.__module__}.{x.__qualname__},{_code_value(x.__code__)},"
                f"{describe(x.__defaults__)},{describe(x.__kwdefaults__)},{describe(cells)})")
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        fields = {f.name: getattr(x, f.name) for f in dataclasses.fields(x)}
        return f"{type(x).__module__}.{type(x).__qualname__}{describe(fields)}"
    text = repr(x)
    if _ADDRESS.search(text) or " object at " in text:
        raise ValueError(
            f"cannot fingerprint {text} (in {owner!r}) for a checkpoint: it is known only by "
            "its address, which another process does not share, so the checkpoint could never "
            "be resumed. Use a module-level function or class, a functools.partial or a "
            "dataclass of them, or run without checkpoint_dir")
    return f"{type(x).__module__}.{type(x).__qualname__}:{text}"


def _importable_name(x) -> str | None:
    """``module.qualname`` when that name imports back to ``x`` itself (module-level functions,
    classes, jitted functions...)."""
    module, name = getattr(x, "__module__", None), getattr(x, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(name, str) or "<" in name:
        return None
    found = sys.modules.get(module)
    for part in name.split("."):
        found = getattr(found, part, None)
    return f"{module}.{name}" if found is x else None


def _code_value(code: types.CodeType) -> str:
    """A digest of a code object's bytecode, constants (nested code included) and names."""
    consts = [_code_value(c) if isinstance(c, types.CodeType) else repr(c)
              for c in code.co_consts]
    text = json.dumps([code.co_code.hex(), consts, code.co_names, code.co_varnames])
    return hashlib.sha256(text.encode()).hexdigest()


def _is_key(x) -> bool:
    return jnp.issubdtype(x.dtype, jax.dtypes.prng_key)


def _key_data(x):
    return jax.random.key_data(x) if _is_key(x) else x


class _Progress:
    """Progress over seed-steps (runs x rounds) with the throughput: a rich bar (``"bar"``),
    plain lines on stderr (``"lines"``: at the start, whenever 10% more is done or 30 s have
    passed, and at the end), or nothing (None). Both show the compile phase."""

    def __init__(self, mode: str | None, label: str, total: int, runs: int):
        self.mode, self.label, self.total, self.runs = mode, label, total, runs
        self.done0 = self.wall0 = self.bar = None
        self.compiling_shown = False
        self.latest = None  # (done, wall) of the last advance
        self.last = None  # (done, wall, time) of the last line printed

    def __enter__(self):
        if self.mode == "bar":
            from rich.progress import (
                BarColumn,
                Progress,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), TaskProgressColumn(),
                TextColumn("{task.fields[runs]} runs, {task.fields[rate]} seed-steps/s"),
                TimeElapsedColumn(), TimeRemainingColumn(), transient=False,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=self.total, runs=self.runs,
                                          rate="-")
        return self

    def compiling(self) -> None:
        """A program is about to be compiled (shown once however many programs follow)."""
        if self.compiling_shown:
            return
        self.compiling_shown = True
        if self.bar is not None:
            self.bar.update(self.task, description=f"compiling {self.label}")
        elif self.mode == "lines":
            self._print(f"compiling {self.label} ...")

    def compiled(self, seconds: float) -> None:
        """The compile phase is over; ``seconds`` spent compiling."""
        if not self.compiling_shown:
            return
        if self.bar is not None:
            self.bar.update(self.task, description=self.label)
        elif self.mode == "lines":
            self._print(f"{self.label} compiled in {seconds:.1f} s")

    def advance(self, done: int, wall: float) -> None:
        """``done`` seed-steps played so far, ``wall`` seconds spent playing them."""
        if self.done0 is None:
            self.done0, self.wall0 = done, wall
        self.latest = (done, wall)
        if self.bar is not None:
            rate = self._rate(done, wall)
            self.bar.update(self.task, completed=done, rate=f"{rate:,.0f}" if rate else "-")
        elif self.mode == "lines":
            now = time.perf_counter()
            if (self.last is None or done - self.last[0] >= self.total / 10
                    or now - self.last[2] >= 30):
                self._line(done, wall, now)

    def __exit__(self, exc_type, *exc):
        if self.bar is not None:
            self.bar.stop()
        elif self.mode == "lines" and exc_type is None and self.last is not None \
                and self.last[:2] != self.latest:  # the final line
            self._line(*self.latest, time.perf_counter())

    def _rate(self, done: int, wall: float) -> float:
        seconds = wall - self.wall0
        return (done - self.done0) / seconds if seconds > 0 else 0.0

    def _line(self, done: int, wall: float, now: float) -> None:
        rate = self._rate(done, wall)
        eta = _clock((self.total - done) / rate) if rate else ("0:00:00" if done >= self.total
                                                               else "-")
        percent = 100 * done // max(self.total, 1)
        self._print(f"{self.label} {percent:3d}% {done:,}/{self.total:,} seed-steps, "
                    f"{f'{rate:,.0f}' if rate else '-'} seed-steps/s, {_clock(wall)} elapsed, "
                    f"ETA {eta}")
        self.last = (done, wall, now)

    @staticmethod
    def _print(message: str) -> None:
        print(f"jaxbandits: {message}", file=sys.stderr, flush=True)


def _clock(seconds: float) -> str:
    """``H:MM:SS``."""
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}"
