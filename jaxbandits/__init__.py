"""jaxbandits: a JAX-vectorised simulation engine for contextual bandits.

Agents and environments are pure functions of explicit keys and states; :func:`simulate`,
:func:`compare` and :func:`sweep` run whole experiments (runs, agents, hyperparameter grids) as one
jitted program of ``lax.scan`` over rounds and ``vmap`` over runs.
"""

from jaxbandits import agents, data, envs, linalg, nets, ope, runner
from jaxbandits.cache import use_compilation_cache
from jaxbandits.checkpoint import CheckpointError
from jaxbandits.core import Agent, Assumptions, Context, Env, Feedback, Spec
from jaxbandits.differentiable import (
    GradientEstimate,
    MetaLearnResult,
    meta_learn,
    policy_gradient,
    relaxed_gradient,
    relaxed_rollout,
)
from jaxbandits.registry import (
    agent_names,
    default_agent_names,
    env_names,
    make_agent,
    make_env,
    well_specified,
)
from jaxbandits.results import (
    Result,
    ResultWriter,
    common_random_numbers,
    environment_info,
    paired_difference,
)
from jaxbandits.simulate import (
    clear_compiled,
    compare,
    default_block_runs,
    default_chunk_size,
    log_spaced_steps,
    simulate,
    sweep,
    use_cpu_cores,
)

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "Assumptions",
    "CheckpointError",
    "Context",
    "Env",
    "Feedback",
    "GradientEstimate",
    "MetaLearnResult",
    "Result",
    "ResultWriter",
    "Spec",
    "agent_names",
    "agents",
    "clear_compiled",
    "common_random_numbers",
    "data",
    "compare",
    "default_agent_names",
    "default_block_runs",
    "default_chunk_size",
    "env_names",
    "environment_info",
    "envs",
    "linalg",
    "log_spaced_steps",
    "make_agent",
    "make_env",
    "meta_learn",
    "nets",
    "ope",
    "paired_difference",
    "plot_regret",
    "policy_gradient",
    "relaxed_gradient",
    "relaxed_rollout",
    "runner",
    "simulate",
    "sweep",
    "use_compilation_cache",
    "use_cpu_cores",
    "well_specified",
]


def __getattr__(name: str):
    # plot_regret is imported on first use: importing jaxbandits (or jaxbandits.results) never
    # imports jaxbandits.plotting, nor matplotlib through it.
    if name == "plot_regret":
        from jaxbandits.plotting import plot_regret

        return plot_regret
    raise AttributeError(f"module 'jaxbandits' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | {"plot_regret"})
