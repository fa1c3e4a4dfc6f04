"""The best-distinct-pair floor of the synthetic dueling tasks (Oh et al. 2026, Sec. 6).

An agent that never plays an arm against itself pays at least the average regret of the best
pair of two distinct arms each round, ``(u_(1) - u_(2)) / 2`` for the round's two largest
utilities. :class:`DuelingPairFloorEnv` is ``dueling-synthetic`` whose feedback is that floor,
whatever is played (weak regret 0, strong regret ``u_(1) - u_(2)``, reward 0). The runner draws
run r's instance and contexts from the key and r alone, so a run of this environment with the
key of real runs sums, run by run, the floors of exactly the instances and contexts those runs
saw: the lowest R(t) an agent that never self-duels can reach there. The reproduction of Oh et
al. 2026 reads the paper's Table E.2 against it (values below the floor need self-duels).
It is a yardstick, not a task of the paper, so it has no registry name (and no saved arrays
in ``tests/data/numbers_kept``); build it from the class.

Example::

    env = jb.envs.DuelingPairFloorEnv(utility="square")
    floor = jb.simulate(env, jb.make_agent("random"), key, horizon=2000, num_runs=20)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from jaxbandits.core import Feedback
from jaxbandits.envs.dueling import DuelingSyntheticEnv


class DuelingPairFloorEnv(DuelingSyntheticEnv):
    """``dueling-synthetic`` whose regret is the best distinct pair's, ``(u_(1) - u_(2)) / 2``
    per round, whatever the agent plays (same fields, instances and contexts)."""

    name = "dueling-pair-floor"  # the runner's label; not registered
    description = ("the best-distinct-pair floor of dueling-synthetic: regret (u_(1) - u_(2)) / 2 "
                   "a round, whatever is played")

    def feedback(self, key, env_state, context, action) -> Feedback:
        top = jax.lax.top_k(self.utilities(env_state, context.arms), 2)[0]
        gap = top[0] - top[1]
        zero = jnp.zeros_like(gap)
        return Feedback(reward=zero, regret=0.5 * gap,
                        metrics={"weak_regret": zero, "strong_regret": gap})
