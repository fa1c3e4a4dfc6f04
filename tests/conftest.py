"""Shared fixtures: float64 switch, tiny environments, and a common reference-parity helper."""

from __future__ import annotations

import os
from pathlib import Path

import jax
import pytest

# The CLI, benchmarks and reproductions turn JAX's persistent compilation cache on by default;
# tests that call them in-process keep it off (tests/test_cache.py checks it in subprocesses).
os.environ["JAXBANDITS_COMPILATION_CACHE"] = "off"

# The shared data files (UCI shuttle and magic, the OBD samples) live in ../shared/data beside
# the repository; the library does not know that folder, the tests point JAXBANDITS_DATA at it.
os.environ.setdefault("JAXBANDITS_DATA",
                      str(Path(__file__).resolve().parents[2] / "shared" / "data"))

# Start JAX's backend now, with the devices the environment asks for (XLA's single CPU device by
# default), so that a script run in-process (the CLI, the benchmarks and reproductions call
# jb.use_cpu_cores()) cannot change the device count of the tests that run after it.
jax.devices()


@pytest.fixture
def x64():
    """Runs a test with ``jax_enable_x64`` on (float64 identity tests use it module-wide)."""
    with jax.enable_x64(True):
        yield


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_programs():
    """Drops JAX's caches of compiled programs after each test module.

    A pytest-xdist worker plays hundreds of modules in one process; without this every
    program any of them compiled stays alive (3.8 GB of resident memory per worker at 80% of
    the suite), and two CI runs lost a worker to a crash inside XLA's compiler late in the run.
    Programs are rarely shared between modules, so little is recompiled. The runner keeps its
    own ahead-of-time compiled programs, which :func:`jax.clear_caches` does not reach."""
    yield
    jax.clear_caches()
    from jaxbandits.simulate import clear_compiled

    clear_compiled()
