"""Environments, one module per family; each registers itself by name."""

from jaxbandits.envs.linear import LinearEnv, LinearEnvState, LinearSphereEnv, draw_vectors

__all__ = ["LinearEnv", "LinearEnvState", "LinearSphereEnv", "draw_vectors"]
