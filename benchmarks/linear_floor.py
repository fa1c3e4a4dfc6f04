"""What a lin-ts / lin-ucb round costs on one CPU core, piece by piece, against the budget that
the CPU targets (below) leave it.

The targets (``benchmarks/throughput.py``) are set at 1,000 runs on the whole machine: >= 100x
the per-seed NumPy loop and >= 10x batched NumPy; with ``C`` cores a seed-step may cost at most
``C * 1e9 / (ratio * yardstick)`` ns of one core. On one XLA device this times each piece of the
engine's round, written with the library's functions and vmapped over a block of runs inside a
``lax.scan`` as the runner plays them: ``draw`` (the Gaussian z of d numbers from the run's
``fold_in(stream, t)`` key), ``bits`` (its random bits alone), ``sample`` (``ridge_sample``),
``select`` (scores, ``greedy_index``, the chosen row), ``update`` (``ridge_update``, the Potter
step) and ``update+widths`` (with lin-ucb's ``ridge_sq_widths_update``); then ``jb.simulate`` of
each whole agent. The sums of the pieces are a floor under a round (the environment and the
recording left out), printed beside the NumPy yardsticks and the budgets they imply::

    python -m benchmarks.linear_floor                  # d = 20, K = 50, 1,000 runs
    python -m benchmarks.linear_floor --quick          # a smoke test
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from benchmarks.timing import time_jax

TARGETS = {"loop": 100.0, "batched": 10.0}  # x the per-seed loop, x batched NumPy


def _best_time(fn, *args, repeats: int) -> float:
    """Best wall time of ``fn(*args)`` over ``repeats`` calls after a compiling one."""
    import jax

    jax.block_until_ready(fn(*args))
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        best = min(best, time.perf_counter() - start)
    return best


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
    seconds = {
        "draw": _best_time(program(draw), theta0, repeats=repeats),
        "bits": _best_time(program(bits), theta0, repeats=repeats),
        "sample": _best_time(program(sample), theta0, repeats=repeats),
        "select": _best_time(program(select), theta0 + 0.1, repeats=repeats),
        "update": _best_time(program(update), ridge, repeats=repeats),
        "update+widths": _best_time(program(update_widths),
                                    (ridge, jnp.ones((runs, num_arms))), repeats=repeats),
    }
    return {k: 1e9 * s / (runs * horizon) for k, s in seconds.items()}


def agent_cost(name: str, runs: int, horizon: int, repeats: int) -> float:
    """ns per seed-step of ``jb.simulate`` of ``name`` on ``linear`` (one device; best of
    ``repeats`` calls after the compiling one, ``benchmarks.timing.time_jax``)."""
    import jaxbandits as jb

    env, agent = jb.make_env("linear"), jb.make_agent(name)
    rate = time_jax(env, agent, horizon, runs, repeats=repeats, min_time=0.0, chunk_size=None,
                    seed=0)["rate"]
    return 1e9 / rate


def numpy_rates(name: str, runs: int, horizon: int, min_time: float) -> dict:
    """seed-steps/s of the per-seed NumPy loop (the best of three seeds) and of batched NumPy at
    ``runs`` (the best of two trials)."""
    import numpy as np

    import jaxbandits as jb
    from benchmarks.throughput import time_batched
    from tests.references.numpy_linear import numpy_run

    env, agent = jb.make_env("linear"), jb.make_agent(name)
    loop = max(horizon / numpy_run(env, agent, name, horizon, seed).seconds for seed in (1, 2, 3))
    batched = time_batched(env, agent, name, horizon=horizon, runs=runs, repeats=2,
                           min_time=min_time, seed=0, dtype=np.float32)["rate"]
    return {"loop": loop, "batched": batched}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000, help="runs of the engine and NumPy")
    parser.add_argument("--block", type=int, default=None,
                        help="runs of the pieces' scans (default: the engine's CPU block)")
    parser.add_argument("--horizon", type=int, default=500, help="rounds of each timed scan")
    parser.add_argument("--cores", type=int, default=os.cpu_count(),
                        help="cores the targets' engine run uses (default: this machine's)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.block, args.horizon, args.repeats = 4, 4, 8, 1

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
    print("piece            ns per seed-step (one core)")
    for piece, ns in pieces.items():
        print(f"{piece:<16} {ns:8.1f}")
    floor = {"lin-ts": pieces["sample"] + pieces["select"] + pieces["update"],
             "lin-ucb": pieces["select"] + pieces["update+widths"]}
    for name in ("lin-ts", "lin-ucb"):
        engine = agent_cost(name, args.runs, 2 * args.horizon, args.repeats)
        rates = numpy_rates(name, args.runs, 2 * args.horizon,
                            min_time=0.001 if args.quick else 1.0)
        print(f"{name}: engine {engine:.1f} ns per seed-step on one core (its pieces: "
              f"{floor[name]:.1f}); NumPy loop {rates['loop']:,.0f} and batched NumPy "
              f"{rates['batched']:,.0f} seed-steps/s")
        for yardstick, ratio in TARGETS.items():
            budget = args.cores * 1e9 / (ratio * rates[yardstick])
            verdict = "within" if floor[name] <= budget else "OVER"
            print(f"  {ratio:g}x {yardstick}: budget {budget:.1f} ns per seed-step per core; "
                  f"the pieces alone are {verdict} it ({floor[name] / budget:.2f}x)")
            if yardstick == "batched" and name == "lin-ts":
                share = pieces["draw"] / budget
                print(f"  (the Gaussian draw alone is {share:.2f}x that budget)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
