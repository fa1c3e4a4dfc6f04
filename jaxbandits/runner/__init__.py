"""The runner: one run as pure functions (its keys, its carry, ``init``, one round ``step``, a
``rollout`` over chunks of rounds), and ``simulate`` / ``compare`` / ``sweep``, which play many
runs as one jitted program of scans, ``vmap`` over a block of runs and ``shard_map`` over
devices.

Modules, each with one purpose (see ``docs/concepts/design.md`` for which may import which):

* :mod:`~jaxbandits.runner.run`: one run (public: :class:`RunKeys`, :class:`Carry`,
  :func:`run_keys`, :func:`init` (:func:`init_instance` then :func:`init_agent`),
  :func:`step`, :func:`round_fn`, :func:`play_chunk`, :func:`rollout`);
* :mod:`~jaxbandits.runner.api`: :func:`simulate`, :func:`compare`, :func:`sweep`;
* :mod:`~jaxbandits.runner.options`: the checked, frozen :class:`RunOptions` of one call;
* :mod:`~jaxbandits.runner.engine`: plays a call wave by wave, chunk by chunk;
* :mod:`~jaxbandits.runner.programs`: the compiled programs and their cache
  (:func:`clear_compiled`, :func:`trace_counts`);
* :mod:`~jaxbandits.runner.plan`: the wave plan and the default block and chunk sizes;
* :mod:`~jaxbandits.runner.sink`: where finished blocks' records go;
* :mod:`~jaxbandits.runner.resume`, :mod:`~jaxbandits.runner.fingerprint`: checkpoints;
* :mod:`~jaxbandits.runner.multihost`: several processes;
* :mod:`~jaxbandits.runner.progress`, :mod:`~jaxbandits.runner.memory`,
  :mod:`~jaxbandits.runner.checks`, :mod:`~jaxbandits.runner.divergence`.
"""

from jaxbandits.runner.api import compare, simulate, sweep
from jaxbandits.runner.checks import as_arrays, as_key, log_spaced_steps
from jaxbandits.runner.options import RunOptions
from jaxbandits.runner.plan import (
    ACCELERATOR_BLOCK_FACTOR,
    default_block_runs,
    default_chunk_size,
    use_cpu_cores,
)
from jaxbandits.runner.programs import clear_compiled, trace_counts
from jaxbandits.runner.progress import Progress, progress_mode
from jaxbandits.runner.run import (
    Carry,
    RunKeys,
    init,
    init_agent,
    init_instance,
    num_columns,
    play_chunk,
    rollout,
    round_fn,
    run_keys,
    step,
)

__all__ = [
    "ACCELERATOR_BLOCK_FACTOR",
    "Carry",
    "Progress",
    "RunKeys",
    "RunOptions",
    "as_arrays",
    "as_key",
    "clear_compiled",
    "compare",
    "default_block_runs",
    "default_chunk_size",
    "init",
    "init_agent",
    "init_instance",
    "log_spaced_steps",
    "num_columns",
    "play_chunk",
    "progress_mode",
    "rollout",
    "round_fn",
    "run_keys",
    "simulate",
    "step",
    "sweep",
    "trace_counts",
    "use_cpu_cores",
]
