"""The run axis sharded over 4 forced host devices gives the same runs, bit for bit; and
``use_cpu_cores`` splits the CPU into devices."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.full

SCRIPT = textwrap.dedent(
    """
    import jax, numpy as np, jaxbandits as jb
    assert len(jax.devices()) == 4, jax.devices()
    env = jb.make_env("linear", dim=4, num_arms=6)
    for name in ("lin-ts", "lin-ucb"):
        agent = jb.make_agent(name)
        kw = dict(record="all", progress=False, block_runs=2)
        four = jb.simulate(env, agent, 7, 150, 8, **kw)  # 4 blocks of 2: one per device
        one = jb.simulate(env, agent, 7, 150, 8, devices=jax.devices()[:1], **kw)
        odd = jb.simulate(env, agent, 7, 150, 5, **kw)  # 3 blocks, the last padded
        assert four.extras["devices"] == 4 and one.extras["devices"] == 1
        assert odd.extras["devices"] == 3
        two_runs = jb.simulate(env, agent, 7, 150, 2, **kw)  # one block: one device, no more
        assert two_runs.extras["devices"] == 1
        np.testing.assert_array_equal(two_runs.cumulative_regret, four.cumulative_regret[:2])
        np.testing.assert_array_equal(four.cumulative_regret, one.cumulative_regret)
        np.testing.assert_array_equal(four.cumulative_reward, one.cumulative_reward)
        np.testing.assert_array_equal(odd.cumulative_regret, four.cumulative_regret[:5])
        grid = jb.sweep(env, agent, 7, {"explore_scale": [0.5, 1.0]}, 150, 8, **kw)
        np.testing.assert_array_equal(grid["explore_scale=1.0"].cumulative_regret[:, :1],
                                      four.cumulative_regret[:, :1])
    print("sharding ok")
    """
)

CORES_SCRIPT = textwrap.dedent(
    """
    import warnings
    import jax, jaxbandits as jb
    assert jb.use_cpu_cores(3) == 3
    assert len(jax.devices()) == 3, jax.devices()
    result = jb.simulate(jb.make_env("linear", dim=4, num_arms=6), jb.make_agent("lin-ts"), 0,
                         20, 5, progress=False, block_runs=2)
    assert result.extras["devices"] == 3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert jb.use_cpu_cores(2) == 3  # too late: the backend is up
    assert any("before the first JAX computation" in str(w.message) for w in caught)
    try:
        jb.use_cpu_cores(0)
    except ValueError as error:
        assert "positive integer" in str(error)
    else:
        raise AssertionError("use_cpu_cores(0) did not raise")
    print("cores ok")
    """
)


def _run_script(script: str, **extra_env) -> str:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    env.update(JAX_PLATFORMS="cpu", **extra_env)
    root = Path(__file__).resolve().parents[1]
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    return out.stdout


def test_runs_sharded_over_four_host_devices_match_one_device():
    out = _run_script(SCRIPT, XLA_FLAGS="--xla_force_host_platform_device_count=4")
    assert "sharding ok" in out


def test_use_cpu_cores_splits_the_cpu_before_jax_starts_and_warns_after():
    assert "cores ok" in _run_script(CORES_SCRIPT)
