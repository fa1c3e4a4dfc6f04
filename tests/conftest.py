"""Shared fixtures: float64 switch, tiny environments, and a common reference-parity helper."""

from __future__ import annotations

import jax
import pytest

# Start JAX's backend now, with the devices the environment asks for (XLA's single CPU device by
# default), so that a script run in-process (the CLI, the benchmarks and reproductions call
# jb.use_cpu_cores()) cannot change the device count of the tests that run after it.
jax.devices()


@pytest.fixture
def x64():
    """Runs a test with ``jax_enable_x64`` on (float64 identity tests use it module-wide)."""
    with jax.enable_x64(True):
        yield
