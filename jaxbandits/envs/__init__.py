"""Environments, one module per family; each registers itself by name."""

from jaxbandits.envs.ensemble_pp import FreqRussoEnv, LinearVaryingEnv, RussoEnv, VaryingContext
from jaxbandits.envs.linear import LinearEnv, LinearEnvState, LinearSphereEnv, draw_vectors

__all__ = [
    "FreqRussoEnv",
    "LinearEnv",
    "LinearEnvState",
    "LinearSphereEnv",
    "LinearVaryingEnv",
    "RussoEnv",
    "VaryingContext",
    "draw_vectors",
]
