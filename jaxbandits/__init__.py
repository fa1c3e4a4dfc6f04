"""jaxbandits: a JAX-vectorised simulation engine for contextual bandits.

Agents and environments are pure functions of explicit keys and states; :func:`simulate`,
:func:`compare` and :func:`sweep` run whole experiments (runs, agents, hyperparameter grids) as one
jitted program of ``lax.scan`` over rounds and ``vmap`` over runs.
"""

from jaxbandits import agents, envs, linalg, nets
from jaxbandits.checkpoint import CheckpointError
from jaxbandits.core import Agent, Context, Env, Feedback, Spec
from jaxbandits.plotting import plot_regret
from jaxbandits.registry import agent_names, env_names, make_agent, make_env
from jaxbandits.results import Result, ResultWriter
from jaxbandits.simulate import (
    compare,
    default_block_runs,
    log_spaced_steps,
    simulate,
    sweep,
    use_cpu_cores,
)

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "CheckpointError",
    "Context",
    "Env",
    "Feedback",
    "Result",
    "ResultWriter",
    "Spec",
    "agent_names",
    "agents",
    "compare",
    "default_block_runs",
    "env_names",
    "envs",
    "linalg",
    "log_spaced_steps",
    "make_agent",
    "make_env",
    "nets",
    "plot_regret",
    "simulate",
    "sweep",
    "use_cpu_cores",
]
