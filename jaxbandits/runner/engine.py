"""The engine: plays one call's configurations wave by wave (a wave gives one block of runs to
each device), chunk by chunk, between chunks checking for divergence, committing checkpoints,
streaming finished blocks to the sink and advancing the progress display.

Randomness: every key derives from the user key and the run index with ``fold_in``, and each
round's keys from the round index, never from the batch layout. Run ``r`` therefore has the same
curve whatever ``num_runs``, chunking or device count, and run ``r`` of every agent in
``compare`` / ``sweep`` sees the same instance, contexts and reward noise (common random
numbers).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxbandits.results import Result, config_of, environment_info, lock_result
from jaxbandits.runner.checks import label_of
from jaxbandits.runner.divergence import Divergence, state_leaf_paths
from jaxbandits.runner.fingerprint import fingerprint
from jaxbandits.runner.memory import check_memory
from jaxbandits.runner.multihost import any_process, host, put, share_restored
from jaxbandits.runner.options import Configs, RunOptions
from jaxbandits.runner.plan import Plan
from jaxbandits.runner.programs import (
    block_programs,
    compile_program,
    forget_unfinished,
    held,
    release_if_over_bound,
    stack_grid,
)
from jaxbandits.runner.programs import compile_ahead as ahead
from jaxbandits.runner.progress import Progress
from jaxbandits.runner.resume import (
    carry_arrays,
    pad_blocks,
    position_meta,
    read_position,
    restore_carry,
)
from jaxbandits.runner.sink import Sink, result_paths
from jaxbandits.tracking import running_stats

__all__ = ["compile_ahead", "compiling_ahead", "play"]

PyTree = Any


@dataclasses.dataclass(frozen=True)
class _Files:
    """A group's files: the result paths (None: results stay in memory), its checkpoint (None:
    none, or not this process's to write) and what that checkpoint held when loaded."""

    paths: list[Path] | None
    ckpt: Any = None
    restored: Any = None


def play(configs: Configs, options: RunOptions) -> list[Result]:
    """Plays ``configs`` (a sweep's grid points, or one) under ``options``; one result each."""
    release_if_over_bound()
    # with several processes, process 0 writes the files; the others keep results in memory
    paths = (result_paths(options.save_to, configs.labels, options.save_folder)
             if jax.process_index() == 0 else None)
    # one writer per result, from before compiling to the last file (reentrant: the writers
    # take the same locks again)
    with contextlib.ExitStack() as locks:
        for path in paths or []:
            locks.enter_context(lock_result(path))
        return _play_groups(configs, options, paths)


def _static_groups(configs: Configs) -> list[list[int]]:
    """The configurations' indices grouped by static structure (one program pair per group)."""
    groups: dict[Any, list[int]] = {}
    for i, (e, a) in enumerate(zip(configs.envs, configs.agents, strict=True)):
        groups.setdefault((jax.tree.structure(e), jax.tree.structure(a)), []).append(i)
    return list(groups.values())


def _group_plan(configs: Configs, options: RunOptions) -> tuple[Plan, RunOptions]:
    """Where a group's runs are played, and its options with the devices it uses."""
    plan = Plan(len(configs.envs), options.num_runs, options.block_runs, 1)
    plan = dataclasses.replace(plan, num_devices=min(len(options.devices), plan.num_blocks))
    return plan, options.replace(devices=options.devices[: plan.num_devices])


def compile_ahead(configs: Configs, options: RunOptions,
                  executor: concurrent.futures.Executor) -> None:
    """Lowers here the programs that ``play(configs, options)`` will run and compiles them on
    ``executor``; ``play`` then waits for them instead of compiling (``compare`` compiles its
    agents' programs while the first agents play). Never changes results: the programs are
    the ones ``play`` would compile."""
    for members in _static_groups(configs):
        group = configs.pick(members) if len(members) < len(configs.labels) else configs
        plan, group_options = _group_plan(group, options)
        inputs = _Inputs(group, group_options, plan)
        env_w, agent_w = inputs.params(plan.wave(0))
        instance = ahead(inputs.programs.instance, "instance", env_w, inputs.key,
                         inputs.run_ids(plan.wave(0)), executor=executor)
        init = ahead(inputs.programs.agent_init, "init", env_w, agent_w,
                     inputs.on_blocks(instance), executor=executor)
        ahead(inputs.programs.chunk, "chunk", env_w, agent_w, inputs.on_blocks(init),
              inputs.zero, inputs.horizon, inputs.steps, executor=executor)


def _play_groups(configs: Configs, options: RunOptions, paths) -> list[Result]:
    # Grid points that differ in static fields (sizes, laws) are played by programs of their
    # own, one group per distinct structure; each point's runs are the same bits either way.
    groups = _static_groups(configs)
    if len(groups) == 1:
        return _play_group(configs, options, paths)
    results: list[Result | None] = [None] * len(configs.labels)
    with compiling_ahead() as pool:  # the next groups compile while the first play
        compile_ahead(configs, options, pool)
        for number, members in enumerate(groups):
            folder = options.checkpoint_dir
            sub = options.replace(
                checkpoint_dir=None if folder is None else Path(folder) / f"static-{number}")
            done = _play_group(configs.pick(members), sub,
                               None if paths is None else [paths[i] for i in members])
            for i, result in zip(members, done, strict=True):
                results[i] = result
    return results


@contextlib.contextmanager
def compiling_ahead():
    """A background thread for :func:`compile_ahead`; on leaving, the compiles not started
    are dropped (a later call compiles them itself). Programs held past the bound are dropped
    first, and none while it lasts."""
    release_if_over_bound()
    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="jaxbandits-compile")
    try:
        with held():
            yield pool
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
        forget_unfinished()


def _play_group(configs: Configs, options: RunOptions, paths) -> list[Result]:
    """Plays configurations of one static structure (one pair of compiled programs)."""
    envs, agents, labels = configs.envs, configs.agents, configs.labels
    plan, options = _group_plan(configs, options)
    warn_padding(plan, labels, options)
    check_memory(envs[0], agents[0], plan, options,
                 streamed=paths is not None or options.checkpoint_dir is not None)

    # Files are checked (writable, not another experiment's, not locked) before any compute.
    ckpt = None
    if options.checkpoint_dir is not None and jax.process_index() == 0:  # one process writes it
        from jaxbandits.checkpoint import Checkpoint

        o = options
        digest = fingerprint(envs, configs.given or agents, labels, o)
        describe = {"agents": labels, "env": label_of(envs[0]), "horizon": o.horizon,
                    "num_runs": o.num_runs, "block_runs": o.block_runs}
        ckpt = Checkpoint(o.checkpoint_dir, digest, describe=describe, overwrite=o.overwrite)
    try:
        # load before compiling: a foreign or corrupt checkpoint is refused at once (and load
        # comes before the records file is opened, since it drops uncommitted ones)
        restored = None if ckpt is None else ckpt.load()
        return _play(configs, options, plan, _Files(paths, ckpt, restored))
    finally:
        if ckpt is not None:
            ckpt.close()


def warn_padding(plan: Plan, labels: list[str], options: RunOptions) -> None:
    """Warns when the default block leaves more than half of the runs computed unused (they are
    played and dropped), naming ``block_runs`` and a block that fits."""
    real = plan.num_points * plan.num_runs
    computed = plan.num_blocks * plan.block_runs
    if not options.block_runs_default or 2 * real >= computed:
        return
    fits = min(plan.block_runs, plan.num_runs)
    warnings.warn(
        f"{labels[0] if len(labels) == 1 else 'sweep'}: {plan.num_runs} run(s) in blocks of "
        f"{plan.block_runs} (the default block_runs): {computed - real} of the {computed} runs "
        f"computed are padding, played and dropped. block_runs={fits} computes no padding "
        "(results depend on block_runs: the same block size gives the same numbers).",
        UserWarning, stacklevel=_stacklevel())


def _stacklevel() -> int:
    """The stack level of the first frame outside jaxbandits (the user's call)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("jaxbandits"):
        frame, level = frame.f_back, level + 1
    return level


def _flagged_at_chunk_end(bad_state: np.ndarray, wave, block_runs: int) -> bool:
    """Whether a real run of ``wave`` holds a state flag, which the runner's chunks set at
    their last round (:func:`~jaxbandits.runner.run.play_chunk`), not at the round."""
    return any(np.any(bad_state[i * block_runs: i * block_runs + real, 0] >= 0)
               for i, (_, _, real) in enumerate(wave))


class _Inputs:
    """A group's programs and their inputs on the devices: the environment and agent leaves of
    a wave (``params``), its run ids, the key, horizon, recorded steps and a zero round."""

    def __init__(self, configs: Configs, options: RunOptions, plan: Plan):
        mesh = Mesh(np.asarray(options.devices), ("runs",))
        self.blocks = NamedSharding(mesh, PartitionSpec("runs"))
        replicated = NamedSharding(mesh, PartitionSpec())
        self.programs = block_programs(len(options.steps), options.chunk_size, mesh,
                                       options.timing)
        # the same rounds, the state checked every round (played only to name the round of a
        # divergence that a chunk's end check found)
        self.exact_chunk_fn = block_programs(len(options.steps), options.chunk_size, mesh,
                                             options.timing, check_state_each_round=True).chunk
        self._grid = (stack_grid(configs.envs), stack_grid(configs.agents))
        self._params: dict[tuple[int, ...], tuple[PyTree, PyTree]] = {}
        self._block_runs = plan.block_runs
        self.key = put(options.key, replicated)
        self.steps = put(np.asarray(options.steps), replicated)
        self.horizon = put(np.asarray(options.horizon, np.int32), replicated)
        self.zero = put(np.zeros((), np.int32), replicated)

    def on_blocks(self, shapes: PyTree) -> PyTree:
        """Output shapes as the inputs of the next program (split over the devices)."""
        return jax.tree.map(
            lambda s: jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=self.blocks), shapes)

    def params(self, wave) -> tuple[PyTree, PyTree]:
        points = tuple(g for g, _, _ in wave)
        if points not in self._params:
            pick = lambda x: x[np.asarray(points)]  # noqa: E731
            self._params[points] = put(tuple(jax.tree.map(pick, g) for g in self._grid),
                                       self.blocks)
        return self._params[points]

    def run_ids(self, wave) -> jax.Array:
        B = self._block_runs
        ids = np.concatenate([start + np.arange(B, dtype=np.int64) for _, start, _ in wave])
        return put(ids.astype(np.uint32), self.blocks)


def _play(configs: Configs, options: RunOptions, plan: Plan, files: _Files) -> list[Result]:
    envs, agents, labels = configs.envs, configs.agents, configs.labels
    key, horizon, steps, devices = options.key, options.horizon, options.steps, options.devices
    chunk_size = options.chunk_size
    ckpt, restored, paths = files.ckpt, files.restored, files.paths
    inputs = _Inputs(configs, options, plan)
    programs, params, run_ids = inputs.programs, inputs.params, inputs.run_ids
    blocks, key, zero = inputs.blocks, inputs.key, inputs.zero
    horizon_arr, steps_arr = inputs.horizon, inputs.steps
    B, N, S, D = plan.block_runs, plan.num_runs, len(steps), plan.num_devices
    wave0 = plan.wave(0)
    env_w, agent_w = params(wave0)
    label = labels[0] if len(labels) == 1 else f"sweep of {len(labels)}"
    extras = {"horizon": horizon, "num_runs": N, "devices": len(devices),
              "block_runs": B, "chunk_size": chunk_size,
              "key": np.asarray(jax.random.key_data(key)).tolist()}
    timing = {} if options.timing.immediate else options.timing.describe()
    info = json.dumps({**environment_info(devices), "horizon": horizon, "num_runs": N,
                       "block_runs": B, "chunk_size": chunk_size, "key": extras["key"],
                       **timing, **options.run_info})
    callback = options.callback

    def track(carry, group, step, reporting) -> None:
        """Sends the running statistics of the runs in flight of each grid point in
        ``reporting`` to the callback, with the point's label."""
        cumulative = host(carry.cumulative)
        for g in reporting:
            real = np.concatenate([i * B + np.arange(n) for i, (h, _, n) in enumerate(group)
                                   if h == g])
            callback(labels[g], running_stats(step, cumulative[real, 0], cumulative[real, 1]),
                     json.loads(info))
    bar = Progress(options.progress, label, plan.num_points * N * horizon, plan.num_points * N)
    with bar:  # shows the compile phase, then the seed-steps played
        instance_c, compile_time = compile_program(programs.instance, "instance", env_w, key,
                                                   run_ids(wave0), announce=bar.compiling)
        agent_c, agent_compile = compile_program(programs.agent_init, "init", env_w, agent_w,
                                                 instance_c.out_info, announce=bar.compiling)
        like = agent_c.out_info  # the carry's shapes, dtypes and shardings
        chunk_c, chunk_compile = compile_program(programs.chunk, "chunk", env_w, agent_w, like,
                                                 zero, horizon_arr, steps_arr,
                                                 announce=bar.compiling)
        compile_time += agent_compile + chunk_compile

        def init_c(env_w, agent_w, key, ids):
            return agent_c(env_w, agent_w, instance_c(env_w, key, ids))
        bar.compiled(compile_time)

        if restored is not None and jax.process_index() == 0:
            restored = read_position(restored, plan, like, horizon, ckpt)
        if jax.process_count() > 1:  # process 0 read the checkpoint; every process resumes
            restored = share_restored(restored, like, B)
        first_block, partial, done, wall, rest = 0, 0, 0, 0.0, {}
        if restored is not None:
            first_block, partial, done, wall, rest = restored
        sink = Sink(plan, steps, paths, ckpt, any(e.spec().replay for e in envs),
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

        # each grid point reports live in the first group that plays its runs
        points = [list(dict.fromkeys(g for g, _, n in plan.group(first, count) if n))
                  for first, count, _, _ in todo]
        live = [[g for g in p if not any(g in q for q in points[:i])]
                for i, p in enumerate(points)]
        t0, played = time.perf_counter(), bool(todo)
        checkpointed = any_process(ckpt is not None)
        spec = envs[0].spec()
        report = Divergence(labels, spec, state_leaf_paths(agents[0], spec), B)

        def elapsed() -> float:
            return wall + time.perf_counter() - t0 if played else wall

        def check(carry, group, played_to) -> None:
            bad, bad_state = host(carry.bad_step), host(carry.bad_state)
            if _flagged_at_chunk_end(bad_state, group, B):
                bad, bad_state = locate(group, played_to)
            report.raise_if_bad(bad, bad_state, group)

        def locate(group, played_to) -> tuple[np.ndarray, np.ndarray]:
            """The flags of ``group`` replayed from round 0 to ``played_to`` by the program
            that checks every round (the same rounds: only the flags differ)."""
            env_g, agent_g = params(group)
            exact, _ = compile_program(inputs.exact_chunk_fn, "chunk", env_g, agent_g, like,
                                       zero, horizon_arr, steps_arr)
            carry = init_c(env_g, agent_g, key, run_ids(group))
            for at in range(0, played_to, chunk_size):
                carry = exact(env_g, agent_g, carry, jnp.asarray(at, jnp.int32), horizon_arr,
                              steps_arr)
            return host(carry.bad_step), host(carry.bad_state)

        def finish(first, count, group, carry) -> None:
            """Checks a group's last chunk and writes its records (and commits them, with the
            restored blocks still waiting at their round)."""
            check(carry, group, horizon)
            records = host(carry.records)
            for i, (g, start, real) in enumerate(group):
                if real:
                    sink.write(g, start, records[i * B: i * B + real, :S])
            end = first + count
            if ckpt is not None:
                sink.flush()
                waiting = max(0, first_block + partial - end)
                kept = {k: v[(end - first_block) * B:] for k, v in rest.items()} if waiting \
                    else {}
                ckpt.commit(position_meta(plan, end, waiting, done if waiting else 0,
                                          elapsed()), kept)
            waiting_rows = (plan.rows_before(max(end, first_block + partial))
                            - plan.rows_before(end))
            bar.advance(plan.rows_before(end) * horizon + done * waiting_rows, elapsed())

        # A group's last chunk is collected after the next group is dispatched, so the devices
        # play while the host writes records (a finished group is always written before the
        # next one's first checkpoint commit).
        pending = None
        bar.advance(plan.rows_before(first_block) * horizon
                    + done * (plan.rows_before(first_block + partial)
                              - plan.rows_before(first_block)), wall)
        for index, (first, count, at, saved) in enumerate(todo):
            group = plan.group(first, count)
            env_w, agent_w = params(group)
            if saved is None:
                carry = init_c(env_w, agent_w, key, run_ids(group))
            else:
                carry = restore_carry(like, pad_blocks(saved, count, D, B), blocks,
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
                if callback is not None and live[index]:
                    track(carry, group, played_to, live[index])
                if pending is not None:
                    finish(*pending)
                    pending = None
                if played_to >= horizon:
                    break
                check(carry, group, played_to)
                if checkpointed and not waits:
                    arrays = carry_arrays(carry, count * B)  # gathered by every process
                    if ckpt is not None:
                        ckpt.commit(position_meta(plan, first, count, played_to, elapsed()),
                                    arrays)
                bar.advance(plan.rows_before(first) * horizon + played_to * real, elapsed())
            pending = (first, count, group, carry)
        if pending is not None:
            finish(*pending)
        if checkpointed and jax.process_count() > 1:  # blocks a resumed run did not replay
            sink.share_from_process_zero()
        wall = elapsed()

    results = [
        sink.result(g, wall_time=wall / len(labels),
                    compile_time=compile_time, name=labels[g], env_config=config_of(envs[g]),
                    agent_config=config_of(agents[g]), extras=extras,
                    run_info=json.loads(info))  # each result its own copy
        for g in range(len(labels))
    ]
    if callback is not None and int(steps[-1]) == horizon:
        for g, result in enumerate(results):
            if sum(g in p for p in points) != 1:
                # the live statistics covered the first blocks only: all runs' at the end
                regret, reward = result.cumulative_regret, result.cumulative_reward
                callback(labels[g], running_stats(horizon, regret[:, -1], reward[:, -1]),
                         json.loads(info))
    return results
