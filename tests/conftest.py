"""Shared fixtures: float64 switch, tiny environments, and a common reference-parity helper."""

from __future__ import annotations

import jax
import pytest


@pytest.fixture
def x64():
    """Runs a test with ``jax_enable_x64`` on (float64 identity tests use it module-wide)."""
    with jax.enable_x64(True):
        yield
