"""The compiled programs: one block of runs per device (``vmap`` over the block, ``shard_map``
over the devices), and the cache of ahead-of-time compiled programs with its explicit clear.

Every program sees exactly one block per device, whatever the number of runs, grid points or
devices, so every run always meets the same compiled program (the numbers depend on
``block_runs``, never on the layout). :func:`clear_compiled` empties the cache (the test suite's
fixture calls it after each module); :func:`trace_counts` counts the traces.
"""

from __future__ import annotations

import collections
import functools
import time
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

from jaxbandits.runner import run
from jaxbandits.runner.checks import as_arrays

__all__ = [
    "block_programs", "clear_compiled", "compile_program", "stack_grid", "trace_counts",
]

PyTree = Any

_TRACES: collections.Counter[str] = collections.Counter()


def trace_counts() -> dict[str, int]:
    """How many times the runner's programs were traced (compiled), by program name."""
    return dict(_TRACES)


@functools.cache
def block_programs(num_slots: int, length: int, mesh: Mesh, timing=None):
    """Jitted ``init(env, agent, key, run_ids)`` and ``chunk(env, agent, carry, start, ...)``.

    Inputs and outputs carry a leading axis of ``num_devices * block_runs`` runs (the carry and
    ``run_ids``) or ``num_devices`` blocks (the environment and agent leaves, one grid point per
    block), split over ``mesh``: each device sees exactly one block, whatever the number of
    runs, grid points or devices, so every run always meets the same compiled program.
    ``timing``: delayed or batched feedback (:class:`~jaxbandits.runner.delay.Timing`).
    """

    def init(env, agent, key, run_ids):
        _TRACES["init"] += 1
        f = jax.vmap(functools.partial(run.init, num_slots=num_slots, timing=timing),
                     (None, None, None, 0))
        return f(_first(env), _first(agent), key, run_ids)

    def chunk(env, agent, carry, start, horizon, steps):
        _TRACES["chunk"] += 1
        f = jax.vmap(functools.partial(run.play_chunk, length=length, timing=timing),
                     (None, None, 0, None, None, None))
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
    block_programs.cache_clear()


def compile_program(fn, name: str, *args, announce=None) -> tuple[Any, float]:
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


def stack_grid(objs: list[PyTree]) -> PyTree:
    """The objects' leaves (as :func:`~jaxbandits.runner.checks.as_arrays`) stacked on a new
    leading axis: one entry per grid point."""
    return jax.tree.map(lambda *xs: jnp.stack(xs), *[as_arrays(o) for o in objs])
