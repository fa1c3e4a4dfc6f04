"""Requests per second of an online policy (``jb.OnlinePolicy``) serving batches of requests.

For each agent and batch size B, a policy that has first learned from ``--prefill`` logged
rounds (steady state: a neural agent's buffer of 2,000 rows is full) serves ``act`` on B
requests and ``update``s with their B rewards, after ``policy.compile`` for that shape (so no
timed call compiles)::

    python -m benchmarks.online_policy          # lin-ts, neural-ucb; B = 1, 100, 10,000
    python -m benchmarks.online_policy --agents lin-ts,neural-ucb:update_every=100 --batches 1,100

It prints, per (agent, B): requests per second of ``act`` alone, of ``update`` alone, and of a
serve-and-learn cycle (B over the seconds of one act plus one update call), each the best of
up to ``--repeats`` timed rounds of at least ``--min-seconds`` (and at least one call); a
measurement stops repeating once it has spent ``--budget-seconds``. The last columns give the
seconds of one update call and of the whole row. Contexts are Gaussian ``(B, K, d)``, rewards
``<x, theta>`` plus noise. An agent is ``name[:field=value...]`` (``neural-ucb:update_every=100``
trains once per 100 rewards). Only public names are used.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import time

import numpy as np

from benchmarks.timing import int_list, parse_agent_spec


def _best(fn, repeats: int, min_seconds: float, budget: float) -> float:
    """The fewest seconds per call of ``fn`` over up to ``repeats`` rounds of at least
    ``min_seconds`` (and one call) each, stopping once ``budget`` seconds are spent."""
    best, spent = float("inf"), 0.0
    for _ in range(repeats):
        calls, start = 0, time.perf_counter()
        while True:
            fn()
            calls += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_seconds:
                break
        best, spent = min(best, elapsed / calls), spent + elapsed
        if spent >= budget:
            break
    return best


def make_policy(spec: str, dim: int, arms: int, prefill: int, seed: int = 0):
    """``(policy, seconds)``: the agent ``spec`` serving ``(K, d)`` requests after learning
    from ``prefill`` logged rounds (uniform actions), and the seconds that took (compile
    included)."""
    import jaxbandits as jb

    name, overrides = parse_agent_spec(spec)
    policy = jb.OnlinePolicy(jb.make_agent(name, **dict(overrides)),
                             jb.Spec(dim=dim, num_arms=arms), seed=seed)
    start = time.perf_counter()
    if prefill:
        rng = np.random.default_rng(seed + 1)
        contexts, theta = _problem(rng, prefill, dim, arms)
        actions = rng.integers(0, arms, prefill)
        rewards = contexts[np.arange(prefill), actions] @ theta + 0.1 * rng.normal(size=prefill)
        policy.warm_start(contexts=contexts, actions=actions, rewards=rewards)
    return policy, time.perf_counter() - start


def _problem(rng, batch: int, dim: int, arms: int):
    contexts = (rng.normal(size=(batch, arms, dim)) / np.sqrt(dim)).astype(np.float32)
    theta = np.random.default_rng(0).normal(size=dim) / np.sqrt(dim)  # one problem throughout
    return contexts, theta


def measure(policy, batch: int, repeats: int, min_seconds: float, budget: float,
            seed: int = 0) -> dict[str, float]:
    """``{"act", "update", "cycle"}`` requests per second for batches of ``batch``, and
    ``"update_seconds"``, ``"compile_seconds"``, ``"seconds"`` (the whole measurement)."""
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    dim, arms = policy.spec.dim, policy.spec.num_arms
    contexts, theta = _problem(rng, batch, dim, arms)
    policy.compile(contexts)                       # both programs, nothing served
    compiled = time.perf_counter() - start
    actions = policy.act(contexts)
    rewards = contexts[np.arange(batch), actions] @ theta + 0.1 * rng.normal(size=batch)
    act = _best(lambda: policy.act(contexts), repeats, min_seconds, budget)
    update = _best(lambda: policy.update(contexts, actions, rewards), repeats, min_seconds,
                   budget)
    return {"act": batch / act, "update": batch / update, "cycle": batch / (act + update),
            "update_seconds": update, "compile_seconds": compiled,
            "seconds": time.perf_counter() - start}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", default="lin-ts,neural-ucb",
                        help="comma-separated agents, each name[:field=value...]")
    parser.add_argument("--batches", type=int_list, default=[1, 100, 10_000],
                        help="comma-separated batch sizes")
    parser.add_argument("--dim", type=int, default=20, help="context dimension d")
    parser.add_argument("--arms", type=int, default=50, help="arms per request K")
    parser.add_argument("--prefill", type=int, default=2000,
                        help="logged rounds learned before timing (0: none)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--min-seconds", type=float, default=1.0)
    parser.add_argument("--budget-seconds", type=float, default=60.0,
                        help="no further repeats of a measurement after this many seconds")
    args = parser.parse_args(argv)
    import jax

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"# jb.OnlinePolicy requests/s, d={args.dim}, K={args.arms}, prefill "
          f"{args.prefill:,}; jax {jax.__version__}, {jax.devices()[0].device_kind} "
          f"({jax.default_backend()}), {platform.machine()} {os.cpu_count()} cores; "
          f"{datetime.date.today()}; load average {load}")
    print("| agent | B | act req/s | update req/s | act + update req/s | s per update call "
          "| s for the row |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for spec in args.agents.split(","):
        policy, seconds = make_policy(spec, args.dim, args.arms, args.prefill)
        print(f"<!-- {spec}: prefill of {args.prefill:,} rounds in {seconds:.1f} s -->",
              flush=True)
        for batch in args.batches:
            r = measure(policy, batch, args.repeats, args.min_seconds, args.budget_seconds)
            print(f"| {spec} | {batch:,} | {r['act']:,.0f} | {r['update']:,.0f} | "
                  f"{r['cycle']:,.0f} | {r['update_seconds']:.3g} | {r['seconds']:.0f} |",
                  flush=True)
    print(f"<!-- load average at the end {', '.join(f'{x:.1f}' for x in os.getloadavg())} -->")


if __name__ == "__main__":
    main()
