"""Seed-steps/s of one agent over ``block_runs``, the runs a compiled program plays at once::

    python -m benchmarks.block_runs --agent lin-ts --runs 10000 --blocks 128,1024,8192,10000
    python -m benchmarks.block_runs --agent neural-ucb --env quadratic --runs 1000 --horizon 10
"""

from __future__ import annotations

import sys

from benchmarks.timing import cli, fmt_rate, int_list, make_agent, print_table, time_jax


def main(argv=None) -> int:
    args = cli(__doc__, argv, agent=("lin-ts", "name[:field=value...]"), env="linear", dim=20,
               num_arms=50, runs=10_000, horizon=1000, repeats=2, min_time=0.3,
               blocks=(int_list, None, "block sizes (default: the engine's default, 1024, 8192 "
                       "and all runs)"), markdown=False)
    import jax

    import jaxbandits as jb

    env = jb.make_env(args.env, dim=args.dim, num_arms=args.num_arms)
    agent = make_agent(args.agent)
    default = jb.default_block_runs(agent)
    blocks = [b for b in args.blocks or sorted({default, 1024, 8192, args.runs}) if b <= args.runs]
    print(f"{args.agent} on {args.env} (d={args.dim}, K={args.num_arms}), {args.runs:,} runs x "
          f"{args.horizon} rounds | jax {jax.__version__} on {jax.devices()[0].device_kind} "
          f"({jax.device_count()} device(s)); default block_runs {default}")
    rows = []
    for block in blocks:
        m = time_jax(env, agent, args.horizon, args.runs, repeats=args.repeats,
                     min_time=args.min_time, chunk_size=None, seed=0, block_runs=block)
        rows.append([block, -(-args.runs // (block * jax.device_count())), f"{m['compile']:.2f}",
                     fmt_rate(m["rate"])])
        print(f"block_runs={block}: {fmt_rate(m['rate'])} seed-steps/s", flush=True)
    print_table(["block_runs", "waves", "compile s", "seed-steps/s"], rows, args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
