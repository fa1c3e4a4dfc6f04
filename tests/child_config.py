"""The experiment tests/test_distributed.py plays in one process and in two (not a test)."""

import jaxbandits as jb


def experiment():
    env = jb.make_env("linear", dim=3, num_arms=5)
    agents = {"lin-ts": jb.make_agent("lin-ts"),
              "ensemble-pp": jb.make_agent("ensemble-pp", ensemble_size=4)}
    grid = {"explore_scale": [0.5, 1.0]}
    kwargs = dict(horizon=30, num_runs=10, block_runs=3, chunk_size=7, record="all",
                  progress=False)
    return env, agents, grid, kwargs
