"""The memory estimator: what one block of runs needs on a device and the recorded curves on the
host, from abstract shapes alone, checked before anything is allocated."""

from __future__ import annotations

import math
import os
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxbandits.core import float_dtype
from jaxbandits.runner.multihost import is_key
from jaxbandits.runner.options import RunOptions
from jaxbandits.runner.plan import Plan
from jaxbandits.runner.run import init, num_columns

__all__ = ["check_memory"]

PyTree = Any


def check_memory(env, agent, plan: Plan, options: RunOptions, streamed: bool) -> None:
    """Estimates, from abstract shapes alone, what one block of ``plan`` needs on a device and
    what the results need on the host (unless ``streamed`` to files); raises ``ValueError``
    before anything is allocated if either does not fit."""
    key, num_slots, max_memory = options.key, len(options.steps), options.max_memory
    devices = options.devices
    carry = jax.eval_shape(
        lambda k: init(env, agent, k, jnp.zeros((), jnp.uint32), num_slots, options.timing), key)
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
    results = (plan.num_points * plan.num_runs * num_slots * num_columns(env.spec())
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
        itemsize = 8 if is_key(x) else np.dtype(x.dtype).itemsize
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
