"""The run axis sharded over 4 forced host devices gives the same runs, bit for bit."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = textwrap.dedent(
    """
    import jax, numpy as np, jaxbandits as jb
    assert len(jax.devices()) == 4, jax.devices()
    env = jb.make_env("linear", dim=4, num_arms=6)
    for name in ("lin-ts", "lin-ucb"):
        agent = jb.make_agent(name)
        kw = dict(record="all", progress=False)
        four = jb.simulate(env, agent, 7, 150, 8, **kw)
        one = jb.simulate(env, agent, 7, 150, 8, devices=jax.devices()[:1], **kw)
        odd = jb.simulate(env, agent, 7, 150, 5, **kw)  # padded to 8 runs over 4 devices
        assert four.extras["devices"] == 4 and one.extras["devices"] == 1
        np.testing.assert_array_equal(four.cumulative_regret, one.cumulative_regret)
        np.testing.assert_array_equal(four.cumulative_reward, one.cumulative_reward)
        np.testing.assert_array_equal(odd.cumulative_regret, four.cumulative_regret[:5])
        grid = jb.sweep(env, agent, 7, {"explore_scale": [0.5, 1.0]}, 150, 8, **kw)
        np.testing.assert_array_equal(grid["explore_scale=1.0"].cumulative_regret[:, :1],
                                      four.cumulative_regret[:, :1])
    print("sharding ok")
    """
)


def test_runs_sharded_over_four_host_devices_match_one_device():
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=4",
               JAX_PLATFORMS="cpu")
    root = Path(__file__).resolve().parents[1]
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "sharding ok" in out.stdout
