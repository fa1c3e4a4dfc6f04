"""Seed-steps/s of one agent over ``block_runs``, the runs a compiled program plays at once.

``jb.simulate`` plays runs in blocks of ``block_runs`` (default 128, 8 for neural agents), one
block per device per wave, so that a run's numbers never depend on how many runs or devices
share the call. On a CPU the default block already fills the cores; a GPU needs far wider
blocks. This prints the rate for each block size, so that the choice is a measurement::

    python -m benchmarks.block_runs --agent lin-ts --runs 10000 --blocks 128,1024,8192,10000
    python -m benchmarks.block_runs --agent neural-ucb --env quadratic --runs 1000 --horizon 10
"""

from __future__ import annotations

import argparse
import sys

from benchmarks.timing import fmt_rate, int_list, parse_agent_spec, print_table, time_jax


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agent", default="lin-ts", help="name[:field=value...]")
    p.add_argument("--env", default="linear")
    p.add_argument("--dim", type=int, default=20)
    p.add_argument("--num-arms", type=int, default=50)
    p.add_argument("--runs", type=int, default=10_000)
    p.add_argument("--blocks", type=int_list, default=None,
                   help="block sizes (default: the engine's default, 1024, 8192 and all runs)")
    p.add_argument("--horizon", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--min-time", type=float, default=0.3)
    p.add_argument("--markdown", action="store_true")
    args = p.parse_args(argv)

    import jax

    import jaxbandits as jb

    name, overrides = parse_agent_spec(args.agent)
    env = jb.make_env(args.env, dim=args.dim, num_arms=args.num_arms)
    agent = jb.make_agent(name, **dict(overrides))
    default = jb.default_block_runs(agent)
    blocks = args.blocks or sorted({default, 1024, 8192, args.runs})
    blocks = [b for b in blocks if b <= args.runs]
    print(f"{args.agent} on {args.env} (d={args.dim}, K={args.num_arms}), {args.runs:,} runs x "
          f"{args.horizon} rounds | jax {jax.__version__} on {jax.devices()[0].device_kind} "
          f"({jax.device_count()} device(s)); default block_runs {default}")
    rows = []
    for block in blocks:
        m = time_jax(env, agent, args.horizon, args.runs, repeats=args.repeats,
                     min_time=args.min_time, chunk_size=None, seed=0, block_runs=block)
        rows.append([str(block), str(-(-args.runs // (block * jax.device_count()))),
                     f"{m['compile']:.2f}", fmt_rate(m["rate"])])
        print(f"block_runs={block}: {fmt_rate(m['rate'])} seed-steps/s", flush=True)
    print_table(["block_runs", "waves", "compile s", "seed-steps/s"], rows, args.markdown)
    return 0


if __name__ == "__main__":
    sys.exit(main())
