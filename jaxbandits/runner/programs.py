"""The compiled programs: one block of runs per device (``vmap`` over the block, ``shard_map``
over the devices), and the cache of ahead-of-time compiled programs with its explicit clear.

Every program sees exactly one block per device, whatever the number of runs, grid points or
devices, so every run always meets the same compiled program (the numbers depend on
``block_runs``, never on the layout). :func:`clear_compiled` empties the cache (the test suite's
fixture calls it after each module); :func:`trace_counts` counts the traces.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib
import functools
import threading
import time
from typing import Any, NamedTuple

import jax
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxbandits.runner import run
from jaxbandits.runner.checks import stack_values

__all__ = [
    "Programs", "block_programs", "clear_compiled", "compile_ahead", "compile_program",
    "forget_unfinished", "held", "release_if_over_bound", "stack_grid", "trace_counts",
]

PyTree = Any

_TRACES: collections.Counter[str] = collections.Counter()


def trace_counts() -> dict[str, int]:
    """How many times the runner's programs were traced (compiled), by program name."""
    return dict(_TRACES)


@functools.cache
def block_programs(num_slots: int, length: int, mesh: Mesh, timing=None,
                   check_state_each_round: bool = False):
    """The jitted :class:`Programs` of a block: the instances, the carries and a chunk of rounds.

    Inputs and outputs carry a leading axis of ``num_devices * block_runs`` runs (the carry and
    ``run_ids``) or ``num_devices`` blocks (the environment and agent leaves, one grid point per
    block), split over ``mesh``: each device sees exactly one block, whatever the number of
    runs, grid points or devices, so every run always meets the same compiled program.
    ``timing``: delayed or batched feedback (:class:`~jaxbandits.runner.delay.Timing`).
    ``check_state_each_round``: see :func:`~jaxbandits.runner.run.play_chunk` (the runner plays
    with False and replays with True to locate a flagged divergence).
    """

    def instance(env, key, run_ids):
        _TRACES["init"] += 1
        return jax.vmap(run.init_instance, (None, None, 0))(_first(env), key, run_ids)

    def agent_init(env, agent, instance):
        f = jax.vmap(functools.partial(run.init_agent, num_slots=num_slots, timing=timing),
                     (None, None, 0))
        return f(_first(env), _first(agent), instance)

    def chunk(env, agent, carry, start, horizon, steps):
        _TRACES["chunk"] += 1
        f = jax.vmap(functools.partial(run.play_chunk, length=length, timing=timing,
                                       check_state_each_round=check_state_each_round),
                     (None, None, 0, None, None, None))
        return f(_first(env), _first(agent), carry, start, horizon, steps)

    # shard_map: each device plays its own block (a loop whose trip count is batched over runs,
    # such as a training round's gradient steps, ends on a local "any run left?", where jit's
    # partitioner would all-reduce that predicate across devices at every iteration).
    blocks, replicated = PartitionSpec("runs"), PartitionSpec()
    local = functools.partial(jax.shard_map, mesh=mesh, out_specs=blocks, check_vma=False)
    instance = local(instance, in_specs=(blocks, replicated, blocks))
    agent_init = local(agent_init, in_specs=(blocks, blocks, blocks))
    chunk = local(chunk, in_specs=(blocks, blocks, blocks) + (replicated,) * 3)
    sharding = NamedSharding(mesh, blocks)
    return Programs(
        jax.jit(instance, out_shardings=sharding),
        jax.jit(agent_init, out_shardings=sharding),
        jax.jit(chunk, out_shardings=sharding, donate_argnums=2),
    )


class Programs(NamedTuple):
    """A block's jitted programs: ``instance(env, key, run_ids)`` (the instances and keys, one
    program for every agent of a comparison), ``agent_init(env, agent, instance)`` (the
    carries) and ``chunk(env, agent, carry, start, horizon, steps)``."""

    instance: Any
    agent_init: Any
    chunk: Any


def _first(tree: PyTree) -> PyTree:
    return jax.tree.map(lambda x: x[0], tree)


# signature -> Future of ``(compiled program, compile seconds)``: a program lowered by one caller
# (``compile_ahead``) may be compiled on a worker thread while another waits for it.
_COMPILED: dict[Any, concurrent.futures.Future] = {}
_CLAIMED: set[Any] = set()  # signatures whose compile seconds a result has counted
_LOCK = threading.Lock()
#: The most compiled programs held between runs. Each holds about a hundred memory mappings on
#: a CPU, and a process may map only about 65,000: a long series of sweeps over static fields
#: (hundreds of programs) would otherwise end in "LLVM ERROR: Unable to allocate section
#: memory". Past it, the next run starts by dropping them all (:func:`release_if_over_bound`).
MAX_COMPILED = 200
_HOLDERS = 0  # open held() contexts


def clear_compiled() -> None:
    """Drops the runner's compiled programs (its own cache of ahead-of-time compiled chunks and
    the jitted functions per mesh), so that their memory can be freed; the next run compiles
    again. :func:`jax.clear_caches` does not reach them. A run that starts with more than
    ``jaxbandits.runner.programs.MAX_COMPILED`` (200) programs held calls it first."""
    with _LOCK:
        _COMPILED.clear()
        _CLAIMED.clear()
    block_programs.cache_clear()


def _signature(fn, name: str, args) -> tuple:
    leaves, treedef = jax.tree.flatten(args)
    shapes = tuple((np.shape(x), _dtype(x), _sharding(x)) for x in leaves)
    return (id(fn), name, treedef, shapes)


def _claim(signature) -> tuple[concurrent.futures.Future, bool]:
    """The future of the program with this signature, and whether this caller must compile it
    (no one has claimed it yet)."""
    with _LOCK:
        future = _COMPILED.get(signature)
        if future is not None:
            return future, False
        future = _COMPILED[signature] = concurrent.futures.Future()
        return future, True


def release_if_over_bound() -> None:
    """:func:`clear_compiled` when more than :data:`MAX_COMPILED` programs are held, none is
    compiling and no comparison holds them for its next agents (:func:`held`); called as a run
    starts, whose programs are then compiled again (from the persistent cache when it holds
    them). Dropping the runner's own references is not enough: JAX keeps each executable while
    the jitted function that lowered it lives."""
    with _LOCK:
        over = (_HOLDERS == 0 and len(_COMPILED) > MAX_COMPILED
                and all(f.done() for f in _COMPILED.values()))
    if over:
        clear_compiled()


@contextlib.contextmanager
def held():
    """Within it, :func:`release_if_over_bound` keeps every program (a comparison's agents
    compiled ahead stay until each has played)."""
    global _HOLDERS
    with _LOCK:
        _HOLDERS += 1
    try:
        yield
    finally:
        with _LOCK:
            _HOLDERS -= 1


def compile_program(fn, name: str, *args, announce=None) -> tuple[Any, float]:
    """An ahead-of-time compiled ``fn`` for these argument shapes (cached), and its compile time;
    ``announce()`` is called before compiling (not on a cache hit). A program that
    :func:`compile_ahead` is compiling on another thread is waited for, and its compile seconds
    counted once."""
    signature = _signature(fn, name, args)
    future, mine = _claim(signature)
    if mine:
        if announce is not None:
            announce()
        _compile_into(future, signature, _lower(future, signature, fn, args))
    elif not future.done() and announce is not None:
        announce()
    compiled, seconds = future.result()
    with _LOCK:
        first = signature not in _CLAIMED
        _CLAIMED.add(signature)
    return compiled, seconds if first else 0.0


def compile_ahead(fn, name: str, *args, executor: concurrent.futures.Executor) -> PyTree:
    """Lowers ``fn`` for these argument shapes here (tracing reads this thread's JAX
    configuration) and compiles it on ``executor`` unless it is cached or under way; a later
    :func:`compile_program` with the same shapes waits for it. Returns the program's output
    shapes and dtypes (the next program's inputs)."""
    signature = _signature(fn, name, args)
    future, mine = _claim(signature)
    if not mine and future.done() and future.exception() is None:
        return future.result()[0].out_info
    if not mine:  # under way elsewhere: lowered again here for its output shapes only
        return fn.lower(*args).out_info
    lowered = _lower(future, signature, fn, args)
    executor.submit(_compile_into, future, signature, lowered)
    return lowered.out_info


def forget_unfinished() -> None:
    """Drops the programs still waiting for (or under) an ahead-of-time compile whose executor
    was shut down: a later call compiles them itself instead of waiting."""
    with _LOCK:
        for signature in [s for s, f in _COMPILED.items() if not f.done()]:
            del _COMPILED[signature]


def _lower(future: concurrent.futures.Future, signature, fn, args):
    try:
        return fn.lower(*args)
    except BaseException as err:
        _fail(future, signature, err)
        raise


def _compile_into(future: concurrent.futures.Future, signature, lowered) -> None:
    start = time.perf_counter()
    try:
        compiled = lowered.compile()
    except BaseException as err:
        _fail(future, signature, err)
        return
    future.set_result((compiled, time.perf_counter() - start))


def _fail(future: concurrent.futures.Future, signature, err: BaseException) -> None:
    """Drops a program that failed to lower or compile (a later call tries again, and raises
    again) and hands the error to whoever waits for it."""
    with _LOCK:
        if _COMPILED.get(signature) is future:
            del _COMPILED[signature]
    future.set_exception(err)


def _dtype(x) -> Any:
    return getattr(x, "dtype", type(x))


def _sharding(x) -> Any:
    return getattr(x, "sharding", None)


def stack_grid(objs: list[PyTree]) -> PyTree:
    """The objects' leaves (as :func:`~jaxbandits.runner.checks.as_arrays`) stacked on a new
    leading axis: one entry per grid point.

    Leaves given as Python numbers or NumPy values are stacked on the host, as the arrays that
    ``as_arrays`` would have put on a device (no device operation, so nothing is compiled before
    the programs); any other leaf (a JAX array) is stacked with JAX."""
    return jax.tree.map(lambda *xs: stack_values(xs), *objs)
