"""Small experiments: ``compare`` compiles its agents' programs ahead (on a background thread)
and gets the numbers of one ``simulate`` per agent; a default block that leaves most of its runs
unused says so, naming ``block_runs``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jaxbandits as jb
from jaxbandits.runner import clear_compiled, trace_counts

ENV = jb.make_env("linear", dim=3, num_arms=5)
T = 12


def test_compare_compiles_ahead_with_the_numbers_of_simulate():
    agents = {"lin-ts": jb.make_agent("lin-ts"), "lin-ucb": jb.make_agent("lin-ucb")}
    clear_compiled()
    before = trace_counts().get("chunk", 0)
    results = jb.compare(ENV, agents, 5, T, 3, block_runs=2, progress=False)
    # one trace per agent: the program lowered ahead is the one each agent's call uses
    assert trace_counts()["chunk"] == before + len(agents)
    assert all(r.compile_time > 0 for r in results.values())
    clear_compiled()  # the second agent (compiled while the first played) compiled here alone
    alone = jb.simulate(ENV, agents["lin-ucb"], 5, T, 3, block_runs=2, progress=False)
    np.testing.assert_array_equal(results["lin-ucb"].cumulative_regret, alone.cumulative_regret)
    np.testing.assert_array_equal(results["lin-ucb"].cumulative_reward, alone.cumulative_reward)


def test_a_mostly_empty_default_block_warns_naming_block_runs():
    agent = jb.make_agent("lin-ts")
    block = jb.default_block_runs(agent)
    if block < 4:
        pytest.skip("the default block is too small to leave most of it unused")
    with pytest.warns(UserWarning, match=r"block_runs=1 computes no padding"):
        jb.simulate(ENV, agent, 0, T, 1, progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jb.simulate(ENV, agent, 0, T, 1, block_runs=block, progress=False)  # chosen: no warning
        jb.simulate(ENV, agent, 0, T, block, progress=False)  # a full block: no warning
