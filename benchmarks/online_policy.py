"""Requests per second of an online policy (``jb.OnlinePolicy``) serving batches of requests.

For each agent and batch size B, a policy serves ``act`` on B requests and then ``update``s
with their B rewards, timed after one untimed warm-up call of each shape (the compilation)::

    python -m benchmarks.online_policy          # lin-ts, neural-ucb; B = 1, 100, 10,000
    python -m benchmarks.online_policy --agents lin-ts --batches 1,100 --dim 8 --arms 10

It prints, per (agent, B): requests per second of ``act`` alone, of ``update`` alone, and of a
whole serve-and-learn cycle (act + update), each the best of ``--repeats`` timed rounds of at
least ``--min-seconds`` each. Contexts are Gaussian ``(B, K, d)``, rewards ``<x, theta>`` plus
noise. Only public names are used.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np


def _time(fn, min_seconds: float) -> float:
    """Seconds per call of ``fn``, over at least ``min_seconds`` of calls."""
    calls, start = 0, time.perf_counter()
    while True:
        fn()
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return elapsed / calls


def measure(name: str, batch: int, dim: int, arms: int, repeats: int, min_seconds: float,
            seed: int = 0) -> dict[str, float]:
    """``{"act", "update", "cycle"}``: requests per second of each, for one agent and B."""
    import jaxbandits as jb

    rng = np.random.default_rng(seed)
    policy = jb.OnlinePolicy(name, jb.Spec(dim=dim, num_arms=arms), seed=seed)
    theta = rng.normal(size=dim) / np.sqrt(dim)
    contexts = (rng.normal(size=(batch, arms, dim)) / np.sqrt(dim)).astype(np.float32)

    def rewards(actions):
        chosen = contexts[np.arange(batch), actions]
        return chosen @ theta + 0.1 * rng.normal(size=batch)

    actions = policy.act(contexts)                       # compile both programs
    policy.update(contexts, actions, rewards(actions))
    r = rewards(actions)
    best = {"act": 0.0, "update": 0.0, "cycle": 0.0}
    for _ in range(repeats):
        act = _time(lambda: policy.act(contexts), min_seconds)
        update = _time(lambda: policy.update(contexts, actions, r), min_seconds)
        cycle = _time(lambda: policy.update(contexts, policy.act(contexts), r), min_seconds)
        for key, seconds in (("act", act), ("update", update), ("cycle", cycle)):
            best[key] = max(best[key], batch / seconds)
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", default="lin-ts,neural-ucb",
                        help="comma-separated registered agent names")
    parser.add_argument("--batches", default="1,100,10000", help="comma-separated batch sizes")
    parser.add_argument("--dim", type=int, default=20, help="context dimension d")
    parser.add_argument("--arms", type=int, default=50, help="arms per request K")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--min-seconds", type=float, default=1.0)
    args = parser.parse_args(argv)
    import jax

    batches = [int(b) for b in args.batches.split(",")]
    print(f"# jb.OnlinePolicy requests/s, d={args.dim}, K={args.arms}; jax {jax.__version__}, "
          f"{jax.devices()[0].device_kind} ({jax.default_backend()}), "
          f"{platform.machine()} {platform.processor() or ''}".rstrip())
    print("| agent | B | act req/s | update req/s | act + update req/s |")
    print("|---|---:|---:|---:|---:|")
    for name in args.agents.split(","):
        for batch in batches:
            r = measure(name, batch, args.dim, args.arms, args.repeats, args.min_seconds)
            print(f"| {name} | {batch:,} | {r['act']:,.0f} | {r['update']:,.0f} | "
                  f"{r['cycle']:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
