"""A lin-ts / lin-ucb round on one CPU core, piece by piece (the library's functions vmapped
over a block of runs in a ``lax.scan``), against the budget the CPU targets of ``throughput``
leave it, ``cores * 1e9 / (ratio * yardstick)`` ns a seed-step::

    python -m benchmarks.linear_floor                  # d = 20, K = 50, 1,000 runs
"""

from __future__ import annotations

import functools
import os
import sys

from benchmarks.throughput import BATCHED_TARGET, LOOP_TARGET, time_batched
from benchmarks.timing import best_seconds, cli, print_table, time_jax

TARGETS = {"loop": LOOP_TARGET, "batched": BATCHED_TARGET}  # x the per-seed loop, batched NumPy


def piece_costs(dim: int, num_arms: int, runs: int, horizon: int, repeats: int) -> dict:
    """ns per seed-step of each piece on one device: a scan of ``horizon`` rounds over ``runs``
    vmapped runs (each piece feeds the next round, so none is hoisted out of the loop)."""
    import jax
    import jax.numpy as jnp

    from jaxbandits.agents import greedy_index
    from jaxbandits.linalg import ridge_init, ridge_sample, ridge_sq_widths_update, ridge_update

    key = jax.random.key(0)
    streams = jax.vmap(lambda r: jax.random.fold_in(key, r))(jnp.arange(runs))
    arms = jax.random.normal(jax.random.key(1), (runs, num_arms, dim)) / jnp.sqrt(dim)
    ridge = jax.vmap(lambda _: ridge_init(dim, 1.0))(jnp.arange(runs))

    def draw(carry, t):
        z = jax.vmap(lambda s: jax.random.normal(jax.random.fold_in(s, t), (dim,)))(streams)
        return carry + z, None

    def bits(carry, t):
        def one(s):
            return jax.random.bits(jax.random.fold_in(s, t), (dim,)).astype(carry.dtype)
        return carry + jax.vmap(one)(streams), None

    def sample(carry, t):
        def one(state, stream):
            return ridge_sample(state, jax.random.fold_in(stream, t), 0.5)
        return carry + jax.vmap(one)(ridge, streams), None

    def select(theta, t):
        def one(theta, arms):
            x = arms[greedy_index(arms @ theta)]
            return theta + 1e-3 * x  # the chosen row moves theta: the next argmax differs
        return jax.vmap(one)(theta, arms), None

    def update(state, t):
        x = arms[:, t % num_arms]
        return jax.vmap(ridge_update)(state, x, x[:, 0]), None

    def update_widths(carry, t):
        state, widths = carry
        x = arms[:, t % num_arms]
        widths = jax.vmap(ridge_sq_widths_update)(state, widths, arms, x)
        return (jax.vmap(ridge_update)(state, x, x[:, 0]), widths), None

    def program(body):
        return jax.jit(lambda c: jax.lax.scan(body, c, jnp.arange(horizon))[0])

    theta0 = jnp.zeros((runs, dim))
    cases = {"draw": (draw, theta0), "bits": (bits, theta0), "sample": (sample, theta0),
             "select": (select, theta0 + 0.1), "update": (update, ridge),
             "update+widths": (update_widths, (ridge, jnp.ones((runs, num_arms))))}
    return {k: 1e9 * best_seconds(functools.partial(program(body), carry), repeats, warmup=True)
            / (runs * horizon) for k, (body, carry) in cases.items()}


def rates(name: str, runs: int, horizon: int, repeats: int, min_time: float) -> dict:
    """ns per seed-step of the engine on ``linear`` (one device, best of ``repeats`` calls after
    the compiling one) and seed-steps/s of the per-seed NumPy loop (best of three seeds) and of
    batched NumPy at ``runs`` (best of two trials)."""
    import numpy as np

    import jaxbandits as jb
    from tests.references.numpy_linear import numpy_run

    env, agent = jb.make_env("linear"), jb.make_agent(name)
    engine = time_jax(env, agent, horizon, runs, repeats=repeats, min_time=0.0, chunk_size=None,
                      seed=0)["rate"]
    loop = max(horizon / numpy_run(env, agent, name, horizon, seed).seconds for seed in (1, 2, 3))
    batched = time_batched(env, agent, name, horizon=horizon, runs=runs, repeats=2,
                           min_time=min_time, seed=0, dtype=np.float32)["rate"]
    return {"engine": 1e9 / engine, "loop": loop, "batched": batched}


def main(argv: list[str] | None = None) -> int:
    args = cli(__doc__, argv, {"runs": 4, "block": 4, "horizon": 8, "repeats": 1},
               runs=(1000, "runs of the engine and NumPy"),
               block=(int, None, "runs of the pieces' scans (default: the engine's CPU block)"),
               horizon=(500, "rounds of each timed scan"),
               cores=(os.cpu_count(), "cores the targets' engine run uses"), repeats=3)

    import jax

    import jaxbandits as jb

    jb.use_cpu_cores(1)  # one device: every cost below is one core's
    env = jb.make_env("linear")
    dim, num_arms = env.dim, env.num_arms
    block = args.block or jb.default_block_runs(jb.make_agent("lin-ts"))
    print(f"jax {jax.__version__}, {jax.devices()[0].platform}, 1 device; linear d = {dim}, "
          f"K = {num_arms}; pieces on blocks of {block} runs, {args.horizon} rounds a scan; "
          f"engine and NumPy at {args.runs} runs; budgets for {args.cores} core(s)")
    pieces = piece_costs(dim, num_arms, block, args.horizon, args.repeats)
    print_table(["piece", "ns per seed-step (one core)"],
                [[piece, f"{ns:.1f}"] for piece, ns in pieces.items()], False)
    floor = {"lin-ts": pieces["sample"] + pieces["select"] + pieces["update"],
             "lin-ucb": pieces["select"] + pieces["update+widths"]}
    for name in ("lin-ts", "lin-ucb"):
        measured = rates(name, args.runs, 2 * args.horizon, args.repeats,
                         min_time=0.001 if args.quick else 1.0)
        print(f"{name}: engine {measured['engine']:.1f} ns per seed-step on one core (its pieces: "
              f"{floor[name]:.1f}); NumPy loop {measured['loop']:,.0f} and batched NumPy "
              f"{measured['batched']:,.0f} seed-steps/s")
        for yardstick, ratio in TARGETS.items():
            budget = args.cores * 1e9 / (ratio * measured[yardstick])
            verdict = "within" if floor[name] <= budget else "OVER"
            print(f"  {ratio:g}x {yardstick}: budget {budget:.1f} ns per seed-step per core; "
                  f"the pieces alone are {verdict} it ({floor[name] / budget:.2f}x)")
            if yardstick == "batched" and name == "lin-ts":
                share = pieces["draw"] / budget
                print(f"  (the Gaussian draw alone is {share:.2f}x that budget)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
