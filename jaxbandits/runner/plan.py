"""The wave plan (which device plays which block of runs when) and the default block and chunk
sizes.

Grid point ``g``'s runs form blocks of ``block_runs``; run ``r`` is always position
``r % block_runs`` of block ``r // block_runs``, so its numbers never depend on the device count
or the number of runs. A wave gives one block to each device.
"""

from __future__ import annotations

import dataclasses
import math
import os
import warnings

import jax

from jaxbandits.core import Agent, wrapped_agent

__all__ = [
    "ACCELERATOR_BLOCK_FACTOR",
    "Plan",
    "default_block_runs",
    "default_chunk_size",
    "use_cpu_cores",
]


@dataclasses.dataclass(frozen=True)
class Plan:
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
