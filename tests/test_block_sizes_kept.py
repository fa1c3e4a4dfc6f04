"""An explicit ``block_runs=N`` keeps the numbers it gave before the runner chose block sizes
to fit the experiment: tiny experiments (10 runs, so one block is padded for every N below)
replay arrays saved by ``tests/data/make_block_sizes_kept.py``, bit for bit, on the jax version
and backend that recorded them, from the set recorded on this machine's CPU
(``numbers_kept_cases.saved_set``)."""

from __future__ import annotations

import numpy as np
import pytest
from numbers_kept_cases import same_streams, saved_set

import jaxbandits as jb

FILE, META = "block_sizes_kept.npz", "block_sizes_kept.json"
HORIZON, NUM_RUNS, KEY = 24, 10, 3
BLOCKS = (1, 8, 128)
_TINY = dict(dim=3, num_arms=5)
CASES = {
    "lin-ts": lambda: (jb.make_env("linear", **_TINY), jb.make_agent("lin-ts")),
    "lin-ucb": lambda: (jb.make_env("linear", **_TINY), jb.make_agent("lin-ucb")),
    "ensemble-pp": lambda: (jb.make_env("linear", **_TINY), jb.make_agent("ensemble-pp")),
    "neural-ucb": lambda: (jb.make_env("quadratic", **_TINY),
                           jb.make_agent("neural-ucb", width=8, num_grad_steps=5)),
}


def play(env, agent, block: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``(NUM_RUNS, S)`` cumulative regret and reward in blocks of ``block`` runs."""
    result = jb.simulate(env, agent, KEY, HORIZON, NUM_RUNS, block_runs=block, progress=False)
    return np.asarray(result.cumulative_regret), np.asarray(result.cumulative_reward)


# what the test replays (the file keeps every case at every block size): each block size once
# on a cheap agent, and the costly agents in the block their family defaults to on a CPU
CHECKED = {"lin-ts": BLOCKS, "lin-ucb": (8, 128), "ensemble-pp": (8,), "neural-ucb": (8,)}


@pytest.mark.full
@pytest.mark.parametrize("label", list(CASES))
def test_explicit_block_runs_keeps_its_numbers(label):
    if (found := saved_set(FILE, META)) is None:
        pytest.skip("no arrays recorded on this CPU")
    arrays, meta = found
    if not same_streams(meta):
        pytest.skip(f"arrays recorded on jax {meta['jax']} ({meta['backend']})")
    saved = np.load(arrays)
    env, agent = CASES[label]()
    for block in CHECKED[label]:
        regret, reward = play(env, agent, block)
        np.testing.assert_array_equal(regret, saved[f"{label}/{block}/regret"],
                                      err_msg=f"{label}, block_runs={block}, {arrays.name}")
        np.testing.assert_array_equal(reward, saved[f"{label}/{block}/reward"],
                                      err_msg=f"{label}, block_runs={block}, {arrays.name}")
