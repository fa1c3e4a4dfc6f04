"""Parity of a reference with the engine: one rule for every NumPy and PyTorch reference.

:func:`regret_agreement` compares a reference's mean final regret over its seeds with the JAX
agent's (same algorithm, same problem distribution): the rule ``benchmarks.throughput`` and
``benchmarks.throughput_neural`` print and the tests assert.
"""

from __future__ import annotations

import math


def regret_agreement(regrets, jax_mean: float, jax_half: float, jax_runs: int) -> dict:
    """A reference's mean final regret over its seeds against the JAX agent's (``jax_mean``
    +- ``jax_half``, the 95% half-width over ``jax_runs`` runs): consistent when the means agree
    up to sampling noise (same algorithm, same problem distribution; a generous margin, since a
    handful of reference seeds is noisy).

    One seed has no spread of its own: it gets that of one JAX run, ``jax_half *
    sqrt(jax_runs)``, since both are draws from the same distribution (with no spread, one
    unlucky seed of a high-variance problem reads as a mismatch). Returns ``{"np_regret",
    "np_half", "jax_regret", "jax_half", "consistent"}``."""
    seeds = len(regrets)
    mean = sum(regrets) / seeds
    if seeds > 1:
        spread = math.sqrt(sum((r - mean) ** 2 for r in regrets) / (seeds - 1))
        half = 1.96 * spread / math.sqrt(seeds)
    else:
        half = jax_half * math.sqrt(jax_runs)
    margin = 2.0 * math.hypot(half, jax_half) + 0.15 * abs(jax_mean)
    return {"np_regret": float(mean), "np_half": float(half), "jax_regret": jax_mean,
            "jax_half": jax_half, "consistent": abs(mean - jax_mean) <= margin}
