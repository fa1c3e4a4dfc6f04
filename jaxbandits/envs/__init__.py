"""Environments, one module per family; each registers itself by name."""

from jaxbandits.envs.ensemble_pp import FreqRussoEnv, LinearVaryingEnv, RussoEnv, VaryingContext
from jaxbandits.envs.linear import LinearEnv, LinearEnvState, LinearSphereEnv, draw_vectors
from jaxbandits.envs.logistic import LogisticBernoulliEnv, LogisticEnv
from jaxbandits.envs.nonlinear import (
    DistanceEnv,
    NonlinearEnv,
    NonlinearEnvState,
    QuadraticEnv,
    RandomMLPEnv,
)

__all__ = [
    "DistanceEnv",
    "FreqRussoEnv",
    "LinearEnv",
    "LinearEnvState",
    "LinearSphereEnv",
    "LinearVaryingEnv",
    "LogisticBernoulliEnv",
    "LogisticEnv",
    "NonlinearEnv",
    "NonlinearEnvState",
    "QuadraticEnv",
    "RandomMLPEnv",
    "RussoEnv",
    "VaryingContext",
    "draw_vectors",
]
