"""Requests per second of ``jb.OnlinePolicy`` serving batches of B requests (``act``,
``update`` and one cycle of both), after ``--prefill`` logged rounds::

    python -m benchmarks.online_policy --agents lin-ts,neural-ucb:update_every=100 --batches 1,100
"""

from __future__ import annotations

import datetime
import os
import platform
import time

import numpy as np

from benchmarks.timing import best_seconds, cli, make_agent, print_table


def make_policy(spec: str, dim: int, arms: int, prefill: int, seed: int = 0):
    """``(policy, seconds)``: the agent ``spec`` serving ``(K, d)`` requests after learning
    from ``prefill`` logged rounds (uniform actions), and the seconds that took (compile
    included)."""
    import jaxbandits as jb

    policy = jb.OnlinePolicy(make_agent(spec), jb.Spec(dim=dim, num_arms=arms), seed=seed)
    start = time.perf_counter()
    if prefill:
        rng = np.random.default_rng(seed + 1)
        contexts, actions, rewards = _requests(rng, prefill, dim, arms)
        policy.warm_start(contexts=contexts, actions=actions, rewards=rewards)
    return policy, time.perf_counter() - start


def _requests(rng, batch: int, dim: int, arms: int, policy=None):
    """Gaussian ``(B, K, d)`` contexts, uniform actions (or ``policy``'s) and their rewards
    ``<x, theta>`` plus noise, theta one problem throughout."""
    contexts = (rng.normal(size=(batch, arms, dim)) / np.sqrt(dim)).astype(np.float32)
    theta = np.random.default_rng(0).normal(size=dim) / np.sqrt(dim)
    if policy is not None:
        policy.compile(contexts)  # both programs, nothing served
    actions = rng.integers(0, arms, batch) if policy is None else policy.act(contexts)
    rewards = contexts[np.arange(batch), actions] @ theta + 0.1 * rng.normal(size=batch)
    return contexts, actions, rewards


def measure(policy, batch: int, repeats: int, min_seconds: float, budget: float,
            seed: int = 0) -> dict[str, float]:
    """``{"act", "update", "cycle"}`` requests per second for batches of ``batch``, and
    ``"update_seconds"`` and ``"seconds"`` (the whole measurement)."""
    start = time.perf_counter()
    contexts, actions, rewards = _requests(np.random.default_rng(seed), batch, policy.spec.dim,
                                           policy.spec.num_arms, policy)
    act = best_seconds(lambda: policy.act(contexts), repeats, min_seconds, budget)
    update = best_seconds(lambda: policy.update(contexts, actions, rewards), repeats,
                          min_seconds, budget)
    return {"act": batch / act, "update": batch / update, "cycle": batch / (act + update),
            "update_seconds": update, "seconds": time.perf_counter() - start}


def main(argv: list[str] | None = None) -> None:
    args = cli(__doc__, argv, agents=("lin-ts,neural-ucb", "agents, each name[:field=value...]"),
               batches=[1, 100, 10_000], dim=(20, "context dimension d"),
               arms=(50, "arms per request K"), prefill=(2000, "logged rounds learned first"),
               repeats=3, min_seconds=1.0, budget_seconds=(60.0, "no further repeats of a "
                                                           "measurement after this many seconds"))
    import jax

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"# jb.OnlinePolicy requests/s, d={args.dim}, K={args.arms}, prefill "
          f"{args.prefill:,}; jax {jax.__version__}, {jax.devices()[0].device_kind} "
          f"({jax.default_backend()}), {platform.machine()} {os.cpu_count()} cores; "
          f"{datetime.date.today()}; load average {load}")
    rows = []
    for spec in args.agents.split(","):
        policy, seconds = make_policy(spec, args.dim, args.arms, args.prefill)
        print(f"<!-- {spec}: prefill of {args.prefill:,} rounds in {seconds:.1f} s -->",
              flush=True)
        for batch in args.batches:
            r = measure(policy, batch, args.repeats, args.min_seconds, args.budget_seconds)
            rows.append([spec, f"{batch:,}", f"{r['act']:,.0f}", f"{r['update']:,.0f}",
                         f"{r['cycle']:,.0f}", f"{r['update_seconds']:.3g}", f"{r['seconds']:.0f}"])
    print_table(["agent", "B", "act req/s", "update req/s", "act + update req/s",
                 "s per update call", "s for the row"], rows, markdown=True)
    print(f"<!-- load average at the end {', '.join(f'{x:.1f}' for x in os.getloadavg())} -->")


if __name__ == "__main__":
    main()
