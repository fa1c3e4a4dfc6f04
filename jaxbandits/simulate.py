"""Compatibility module: the runner now lives in the :mod:`jaxbandits.runner` package.

``from jaxbandits.simulate import ...`` keeps working for every name this module held
(``simulate``, ``compare``, ``sweep``, ``clear_compiled``, ``trace_counts``, the one-run
functions under their former names ``init_run`` / ``step_run`` / ``chunk_run``, ...). New code
imports from :mod:`jaxbandits.runner` (``jb.runner.rollout``, ``jb.runner.init``, ...).
"""

from jaxbandits.runner.api import compare, simulate, sweep
from jaxbandits.runner.checks import as_arrays as _as_arrays
from jaxbandits.runner.checks import as_key as _as_key
from jaxbandits.runner.checks import check_pair as _check_pair
from jaxbandits.runner.checks import log_spaced_steps
from jaxbandits.runner.checks import record_steps as _record_steps
from jaxbandits.runner.divergence import state_leaf_paths as _state_leaf_paths
from jaxbandits.runner.plan import (
    ACCELERATOR_BLOCK_FACTOR,
    default_block_runs,
    default_chunk_size,
    use_cpu_cores,
)
from jaxbandits.runner.plan import Plan as _Plan
from jaxbandits.runner.programs import _COMPILED, _TRACES, clear_compiled, trace_counts
from jaxbandits.runner.progress import Progress as _Progress
from jaxbandits.runner.progress import progress_mode as _progress_mode
from jaxbandits.runner.run import Carry, RunKeys, run_keys
from jaxbandits.runner.run import init as init_run
from jaxbandits.runner.run import play_chunk as chunk_run
from jaxbandits.runner.run import step as step_run

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

# Names of the former module that code outside the library may hold (not part of __all__).
_FORMER = (ACCELERATOR_BLOCK_FACTOR, Carry, RunKeys, chunk_run, init_run, run_keys, step_run,
           _COMPILED, _TRACES, _Plan, _Progress, _as_arrays, _as_key, _check_pair,
           _progress_mode, _record_steps, _state_leaf_paths)
