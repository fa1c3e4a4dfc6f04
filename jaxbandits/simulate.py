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
import dataclasses
import functools
import hashlib
import itertools
import json
import math
import os
import sys
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxbandits.core import Agent, Env, float_dtype
from jaxbandits.results import Result, config_of

__all__ = ["compare", "log_spaced_steps", "simulate", "sweep", "trace_counts", "use_cpu_cores"]

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
      cumulative: ``(3,)`` cumulative regret, reward and accepted rounds.
      records: ``(S + 1, 3)`` the cumulative values at the recorded steps (the last row is a
        scratch slot written by unrecorded steps).
      bad_step: ``()`` int32, the first round with a non-finite reward or regret, or -1.
    """

    env_state: PyTree
    agent_state: PyTree
    keys: RunKeys
    cumulative: jax.Array
    records: jax.Array
    bad_step: jax.Array


def init_run(env: Env, agent: Agent, key: jax.Array, run_id: jax.Array, num_slots: int) -> Carry:
    """The carry of run ``run_id`` before its first round."""
    run_key = jax.random.fold_in(key, run_id)
    streams = [jax.random.fold_in(run_key, i) for i in range(6)]
    dtype = float_dtype()
    return Carry(
        env_state=env.init(streams[0]),
        agent_state=agent.init(streams[1], env.spec()),
        keys=RunKeys(*streams[2:]),
        cumulative=jnp.zeros((3,), dtype),
        records=jnp.zeros((num_slots + 1, 3), dtype),
        bad_step=jnp.full((), -1, jnp.int32),
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
    cumulative = carry.cumulative + jnp.stack([regret, reward * accepted, accepted])
    bad = ~(jnp.isfinite(reward) & jnp.isfinite(regret))
    bad_step = jnp.where((carry.bad_step < 0) & bad, t, carry.bad_step)
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
    )


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
# The batched programs.


@functools.cache
def _programs(num_slots: int, length: int, grid: bool, sharding: NamedSharding):
    """Jitted ``init(env, agent, key, run_ids)`` and ``chunk(env, agent, carry, start, ...)``."""

    def init(env, agent, key, run_ids):
        _TRACES["init"] += 1
        f = jax.vmap(functools.partial(init_run, num_slots=num_slots), (None, None, None, 0))
        if grid:
            f = jax.vmap(f, (0, 0, None, None))
        return f(env, agent, key, run_ids)

    def chunk(env, agent, carry, start, horizon, steps):
        _TRACES["chunk"] += 1
        f = jax.vmap(functools.partial(chunk_run, length=length), (None, None, 0, None, None, None))
        if grid:
            f = jax.vmap(f, (0, 0, 0, None, None, None))
        return f(env, agent, carry, start, horizon, steps)

    # Each device plays its own block of runs (shard_map): a loop whose trip count is batched
    # over runs (a training round's gradient steps) then ends on a local "any run left?",
    # where the same vmap partitioned by jit alone would all-reduce that predicate across
    # devices at every iteration (on CPU devices, slower than one device below ~100 runs).
    replicated, runs = PartitionSpec(), sharding.spec
    local = functools.partial(jax.shard_map, mesh=sharding.mesh, out_specs=runs,
                              check_vma=False)
    init = local(init, in_specs=(replicated, replicated, replicated, PartitionSpec("runs")))
    chunk = local(chunk, in_specs=(replicated, replicated, runs) + (replicated,) * 3)
    return (
        jax.jit(init, out_shardings=sharding),
        jax.jit(chunk, out_shardings=sharding, donate_argnums=2),
    )


_COMPILED: dict[Any, Any] = {}


def _compiled(fn, name: str, *args) -> tuple[Any, float]:
    """An ahead-of-time compiled ``fn`` for these argument shapes (cached), and its compile time."""
    leaves, treedef = jax.tree.flatten(args)
    shapes = tuple((np.shape(x), _dtype(x), _sharding(x)) for x in leaves)
    signature = (id(fn), name, treedef, shapes)
    if signature in _COMPILED:
        return _COMPILED[signature], 0.0
    start = time.perf_counter()
    compiled = fn.lower(*args).compile()
    _COMPILED[signature] = compiled
    return compiled, time.perf_counter() - start


def _dtype(x) -> Any:
    return getattr(x, "dtype", type(x))


def _sharding(x) -> Any:
    return getattr(x, "sharding", None)


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
    progress: bool | None = None,
    name: str | None = None,
    devices: Sequence[jax.Device] | None = None,
) -> Result:
    """Runs ``agent`` on ``env`` for ``horizon`` rounds and ``num_runs`` independent runs.

    Args:
      env: an environment (see :mod:`jaxbandits.core`).
      agent: an agent that can play ``env.spec().action_kind``.
      key: a JAX key (or an int seed). Run ``r`` uses ``fold_in(key, r)``.
      horizon: T, the number of rounds.
      num_runs: the number of runs (seeds), a batch axis sharded over ``devices``.
      chunk_size: rounds per compiled scan (default ``min(T, 1000)``); never changes results.
      record: ``"log"`` (about ``num_records`` log-spaced steps, T included), ``"all"`` (every
        step) or an explicit increasing sequence of steps in ``[1, T]``.
      num_records: how many log-spaced steps to record.
      checkpoint_dir: if given, the state is saved there after every chunk, and a call with the
        same arguments resumes from it (and ends with exactly the same numbers).
      progress: show a progress bar (default: when stderr is a terminal).
      name: the result's label (default: the agent's registered name).
      devices: the devices the runs are sharded over (default: all of ``jax.devices()``; at
        most ``num_runs`` of them are used).

    Returns:
      A :class:`~jaxbandits.results.Result` with ``(num_runs, S)`` cumulative regret and reward.

    Example::

        result = jb.simulate(jb.make_env("linear"), jb.make_agent("lin-ts"), key, 10_000, 100)
        print(result.final())
    """
    return _run(env, agent, key, horizon, num_runs, None, chunk_size, record, num_records,
                checkpoint_dir, progress, [name or _label(agent)], devices)[0]


def compare(
    env: Env,
    agents: Mapping[str, Agent],
    key: jax.Array | int,
    horizon: int,
    num_runs: int = 1,
    *,
    checkpoint_dir: str | Path | None = None,
    **kwargs: Any,
) -> dict[str, Result]:
    """Runs several agents on ``env`` with common random numbers; returns ``{name: Result}``.

    Run ``r`` of every agent sees the same problem instance, contexts and reward noise. Takes the
    keyword arguments of :func:`simulate`; checkpoints go to ``checkpoint_dir/<name>``.
    """
    if not agents:
        raise ValueError("compare needs at least one agent")
    results = {}
    for label, agent in agents.items():
        ckpt = None if checkpoint_dir is None else Path(checkpoint_dir) / _safe(label)
        results[label] = simulate(env, agent, key, horizon, num_runs, name=label,
                                  checkpoint_dir=ckpt, **kwargs)
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
    progress: bool | None = None,
    devices: Sequence[jax.Device] | None = None,
) -> dict[str, Result]:
    """Runs ``agent`` over the Cartesian product of ``grid`` in one compiled program.

    ``grid`` maps numeric field names to values: agent fields (``"explore_scale"``) or
    environment fields (``"env.noise_std"``). Grid points are a batch axis, so the sweep compiles
    once; run ``r`` of every grid point uses the same keys (common random numbers). Returns
    ``{"field=value,...": Result}`` in grid order.

    Example::

        results = jb.sweep(env, jb.make_agent("lin-ucb"), key,
                           {"explore_scale": [0.1, 0.3, 1.0]}, horizon=2_000, num_runs=50)
    """
    if not grid:
        raise ValueError("sweep needs a non-empty grid {field: values}")
    names = list(grid)
    values = [list(grid[n]) for n in names]
    for n, v in zip(names, values, strict=True):
        if not v:
            raise ValueError(f"sweep: grid field {n!r} has no values")
    points = list(itertools.product(*values))
    envs, agents, labels = [], [], []
    for point in points:
        env_over = {n[4:]: v for n, v in zip(names, point, strict=True) if n.startswith("env.")}
        agent_over = {n: v for n, v in zip(names, point, strict=True) if not n.startswith("env.")}
        envs.append(_override(env, env_over, "environment"))
        agents.append(_override(agent, agent_over, "agent"))
        labels.append(",".join(f"{n}={v}" for n, v in zip(names, point, strict=True)))
    return dict(zip(labels, _run(envs, agents, key, horizon, num_runs, len(points), chunk_size,
                                 record, num_records, checkpoint_dir, progress, labels, devices),
                    strict=True))


def log_spaced_steps(horizon: int, num: int) -> np.ndarray:
    """About ``num`` distinct log-spaced steps in ``[1, horizon]``, always ending at ``horizon``."""
    steps = np.unique(np.round(np.geomspace(1, horizon, max(num, 2))).astype(np.int64))
    return np.unique(np.append(steps, horizon)).astype(np.int32)


# ------------------------------------------------------------------------------------------------
# Implementation.


def _run(env, agent, key, horizon, num_runs, grid_size, chunk_size, record, num_records,
         checkpoint_dir, progress, labels, devices) -> list[Result]:
    grid = grid_size is not None
    envs = env if grid else [env]
    agents = agent if grid else [agent]
    _check_sizes(horizon=horizon, num_runs=num_runs, num_records=num_records)
    chunk_size = min(horizon, 1000) if chunk_size is None else chunk_size
    _check_sizes(chunk_size=chunk_size)
    for e, a in zip(envs, agents, strict=True):
        _check_pair(e, a)
    steps = _record_steps(record, horizon, num_records)
    key = _as_key(key)

    devices = list(jax.devices() if devices is None else devices)
    devices = devices[: max(1, min(len(devices), num_runs))]  # no device plays only padding
    padded_runs = math.ceil(num_runs / len(devices)) * len(devices)
    mesh = Mesh(np.asarray(devices), ("runs",))
    spec = PartitionSpec(None, "runs") if grid else PartitionSpec("runs")
    sharding = NamedSharding(mesh, spec)
    env_arg = _stack(envs) if grid else _as_arrays(env)
    agent_arg = _stack(agents) if grid else _as_arrays(agent)

    init_fn, chunk_fn = _programs(len(steps), chunk_size, grid, sharding)
    run_ids = jax.device_put(jnp.arange(padded_runs, dtype=jnp.uint32),
                             NamedSharding(mesh, PartitionSpec("runs")))
    init_c, compile_time = _compiled(init_fn, "init", env_arg, agent_arg, key, run_ids)
    carry = init_c(env_arg, agent_arg, key, run_ids)

    steps_arr = jnp.asarray(steps)
    horizon_arr = jnp.asarray(horizon, jnp.int32)
    start0 = jnp.zeros((), jnp.int32)
    chunk_c, chunk_compile = _compiled(chunk_fn, "chunk", env_arg, agent_arg, carry, start0,
                                       horizon_arr, steps_arr)
    compile_time += chunk_compile

    ckpt = None
    done, wall = 0, 0.0
    if checkpoint_dir is not None:
        fingerprint = _fingerprint(envs, agents, key, horizon, num_runs, padded_runs,
                                   chunk_size, steps, labels)
        ckpt = _Checkpoint(Path(checkpoint_dir), fingerprint)
        restored = ckpt.load(carry)
        if restored is not None:
            leaves, done, wall = restored
            carry = jax.device_put(jax.tree.unflatten(jax.tree.structure(carry), leaves),
                                   sharding)

    show = sys.stderr.isatty() if progress is None else progress
    label = labels[0] if len(labels) == 1 else f"sweep of {len(labels)}"
    with _Progress(show, label, horizon, num_runs * len(labels), done, wall) as bar:
        while done < horizon:
            start = time.perf_counter()
            carry = chunk_c(env_arg, agent_arg, carry, jnp.asarray(done, jnp.int32),
                            horizon_arr, steps_arr)
            bad = np.asarray(carry.bad_step)  # blocks until the chunk is done
            wall += time.perf_counter() - start
            done = min(done + chunk_size, horizon)
            _raise_if_bad(bad, num_runs, labels)
            if ckpt is not None:
                ckpt.save(carry, done, wall)
            bar.advance(done, wall)

    records = np.asarray(carry.records)
    if not grid:
        records = records[None]
    records = records[:, :num_runs, : len(steps)]
    replay = envs[0].spec().replay
    extras = {"horizon": horizon, "num_runs": num_runs, "devices": len(devices),
              "chunk_size": chunk_size, "key": np.asarray(jax.random.key_data(key)).tolist()}
    return [
        Result(
            steps=steps.astype(np.int64),
            cumulative_regret=records[g, :, :, 0],
            cumulative_reward=records[g, :, :, 1],
            accepted=records[g, :, :, 2] if replay else None,
            wall_time=wall / len(labels),
            compile_time=compile_time,
            name=labels[g],
            env_config=config_of(envs[g]),
            agent_config=config_of(agents[g]),
            extras=extras,
        )
        for g in range(len(labels))
    ]


def _label(agent: Agent) -> str:
    return getattr(agent, "name", "") or type(agent).__name__


def _safe(label: str) -> str:
    return "".join(c if c.isalnum() or c in "-_.=," else "_" for c in label)


def _check_sizes(**sizes: int) -> None:
    for field, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value <= 0:
            raise ValueError(f"{field} must be a positive integer, got {value!r}")


def _record_steps(record, horizon: int, num_records: int) -> np.ndarray:
    if isinstance(record, str):
        if record == "log":
            return log_spaced_steps(horizon, num_records)
        if record == "all":
            return np.arange(1, horizon + 1, dtype=np.int32)
        raise ValueError(f"record must be 'log', 'all' or a sequence of steps, got {record!r}")
    steps = np.asarray(record, dtype=np.int64)
    if steps.ndim != 1 or steps.size == 0 or np.any(np.diff(steps) <= 0):
        raise ValueError("record steps must be a non-empty, strictly increasing sequence")
    if steps[0] < 1 or steps[-1] > horizon:
        raise ValueError(f"record steps must lie in [1, horizon={horizon}]")
    return steps.astype(np.int32)


def _as_key(key) -> jax.Array:
    if isinstance(key, (int, np.integer)):
        return jax.random.key(int(key))
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
    structures = {jax.tree.structure(o) for o in objs}
    if len(structures) != 1:
        raise ValueError("sweep: grid values must only change numeric (non-static) fields")
    return jax.tree.map(lambda *xs: jnp.stack(xs), *[_as_arrays(o) for o in objs])


def _override(obj, overrides: dict[str, Any], what: str):
    if not overrides:
        return obj
    fields = {f.name: f for f in dataclasses.fields(obj)}
    for name in overrides:
        if name not in fields:
            raise ValueError(f"sweep: {type(obj).__name__} has no field {name!r}")
        if not fields[name].metadata.get("pytree_node", True):
            raise ValueError(
                f"sweep: {name!r} is a static field of the {what} (a size or switch); sweep "
                "numeric fields only, or run one simulate per value"
            )
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
    if spec.action_kind not in agent.action_kinds:
        raise ValueError(
            f"agent {agent_name!r} cannot act on environment {env_name!r}: it plays "
            f"{'/'.join(agent.action_kinds)} actions, the environment needs "
            f"{spec.action_kind!r} actions"
        )
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
    if jax.tree.structure(updated) != jax.tree.structure(state) or any(
        (a.shape, a.dtype) != (b.shape, b.dtype)
        for a, b in zip(jax.tree.leaves(updated), jax.tree.leaves(state), strict=True)
    ):
        raise ValueError(f"agent {agent_name!r}: update must keep the state's tree, shapes and "
                         "dtypes")


def _raise_if_bad(bad: np.ndarray, num_runs: int, labels: list[str]) -> None:
    bad = bad.reshape(len(labels), -1)[:, :num_runs]
    hits = np.argwhere(bad >= 0)
    if hits.size:
        g, run = hits[np.argmin(bad[hits[:, 0], hits[:, 1]])]
        step = int(bad[g, run])
        where = f" ({labels[g]})" if len(labels) > 1 else ""
        raise FloatingPointError(
            f"non-finite reward or regret in run {int(run)}{where} at step {step} (0-based "
            f"round index); {len(hits)} run(s) affected. Check the environment's feedback."
        )


def _fingerprint(envs, agents, key, horizon, num_runs, padded_runs, chunk, steps, labels) -> str:
    blob = json.dumps({
        "envs": [repr(e) for e in envs], "agents": [repr(a) for a in agents],
        "key": np.asarray(jax.random.key_data(key)).tolist(), "horizon": horizon,
        "num_runs": num_runs, "padded_runs": padded_runs, "chunk": chunk,
        "steps": hashlib.sha256(steps.tobytes()).hexdigest(), "labels": labels,
        "x64": bool(jax.config.jax_enable_x64),
    }, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


class _Checkpoint:
    """The carry saved at chunk boundaries as ``carry.npz`` + ``meta.json`` (written atomically)."""

    def __init__(self, directory: Path, fingerprint: str):
        self.directory, self.fingerprint = directory, fingerprint

    def save(self, carry: Carry, done: int, wall: float) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        leaves = [np.asarray(_key_data(x)) for x in jax.tree.leaves(carry)]
        tmp = self.directory / "carry.tmp.npz"
        np.savez(tmp, *leaves)
        meta = {"fingerprint": self.fingerprint, "done": done, "wall_time": wall}
        (self.directory / "meta.tmp.json").write_text(json.dumps(meta))
        tmp.replace(self.directory / "carry.npz")
        (self.directory / "meta.tmp.json").replace(self.directory / "meta.json")

    def load(self, like: Carry) -> tuple[list, int, float] | None:
        meta_path, data_path = self.directory / "meta.json", self.directory / "carry.npz"
        if not (meta_path.exists() and data_path.exists()):
            return None
        meta = json.loads(meta_path.read_text())
        if meta.get("fingerprint") != self.fingerprint:
            return None  # another experiment's checkpoint: start afresh (and overwrite it)
        with np.load(data_path, allow_pickle=False) as data:
            arrays = [data[f"arr_{i}"] for i in range(len(data.files))]
        leaves = [
            jax.random.wrap_key_data(a, impl=jax.random.key_impl(x)) if _is_key(x) else a
            for a, x in zip(arrays, jax.tree.leaves(like), strict=True)
        ]
        return leaves, int(meta["done"]), float(meta["wall_time"])


def _is_key(x) -> bool:
    return jnp.issubdtype(x.dtype, jax.dtypes.prng_key)


def _key_data(x):
    return jax.random.key_data(x) if _is_key(x) else x


class _Progress:
    """A rich progress bar over rounds, showing runs and seed-steps per second (or nothing)."""

    def __init__(self, show: bool, label: str, horizon: int, runs: int, done: int, wall: float):
        self.show, self.label, self.horizon, self.runs = show, label, horizon, runs
        self.done0, self.wall0, self.bar = done, wall, None

    def __enter__(self):
        if self.show:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                TextColumn("rounds, {task.fields[runs]} runs, {task.fields[rate]} seed-steps/s"),
                TimeElapsedColumn(), TimeRemainingColumn(), transient=False,
            )
            self.bar.start()
            self.task = self.bar.add_task(self.label, total=self.horizon, completed=self.done0,
                                          runs=self.runs, rate="-")
        return self

    def advance(self, done: int, wall: float) -> None:
        if self.bar is not None:
            rate = self.runs * (done - self.done0) / max(wall - self.wall0, 1e-9)
            self.bar.update(self.task, completed=done, rate=f"{rate:,.0f}")

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()
