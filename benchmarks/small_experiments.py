"""Small experiments: seed-steps per second, compile included, at 1 to 1,000 runs.

Each run count in a fresh compile, beside MABWiser and OBP on the disjoint problem, then the
default ``jaxbandits run`` on a cold and a warm cache; docs/benchmarks.md has the figures::

    python -m benchmarks.small_experiments --quick
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks import timing as T

# (engine agents, yardstick algorithms) of each problem; the yardsticks' LinUCB and LinTS are
# per-arm (disjoint) models with one shared context, so they play the disjoint problem only.
PROBLEMS = {
    "linear": (["lin-ucb", "lin-ts", "ensemble-pp"], []),
    "disjoint-linear": (["disjoint-lin-ucb", "disjoint-lin-ts", "disjoint-ensemble-pp"],
                        ["lin-ucb", "lin-ts"]),
}


def _blocks(text: str) -> list[int | None]:
    return [None if v.strip() == "default" else int(v) for v in text.split(",")]


def _rate(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.2f}M"
    return f"{x / 1e3:.1f}k" if x >= 1e3 else f"{x:.0f}"


def engine_rate(env, agent, horizon: int, num_runs: int, block_runs: int | None) -> dict:
    """One experiment from a cold start (the runner's and JAX's in-memory caches cleared):
    seed-steps/s over compile + play, and the compile and play seconds."""
    import jax

    import jaxbandits as jb

    jb.clear_compiled()
    jax.clear_caches()
    start = time.perf_counter()
    result = jb.simulate(env, agent, 0, horizon, num_runs, block_runs=block_runs,
                         progress=False)
    jax.block_until_ready(result.cumulative_regret)
    total = time.perf_counter() - start
    return {"rate": num_runs * horizon / total, "total": total,
            "compile": result.compile_time, "play": result.wall_time,
            "block_runs": result.extras["block_runs"],
            "regret": result.final()[0]}


def cli_wall(extra: list[str]) -> tuple[float, float, str]:
    """Seconds of ``jaxbandits run`` (``extra`` appended) in a fresh process on an empty cache
    folder, then again on that folder; and the last line it printed."""
    times, last = [], ""
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "JAXBANDITS_COMPILATION_CACHE": str(Path(tmp) / "cache")}
        for i in range(2):
            cmd = [sys.executable, "-m", "jaxbandits.cli", "run", "--out",
                   str(Path(tmp) / f"out{i}"), "--progress", "none", *extra]
            start = time.perf_counter()
            out = subprocess.run(cmd, capture_output=True, text=True, env=env)
            times.append(time.perf_counter() - start)
            if out.returncode:
                raise RuntimeError(f"{' '.join(cmd)} failed:\n{out.stderr[-2000:]}")
            lines = out.stdout.splitlines()
            last = next((ln for ln in lines if ln.startswith("compile time")), last)
    return times[0], times[1], last


def main(argv=None) -> int:
    args = T.cli(__doc__, argv, quick_defaults={
        "runs": [1, 10, 30], "horizon": 200, "problems": "linear", "cli": "quick"},
                 runs=([1, 10, 30, 100, 1000], "run counts"), horizon=(1000, "T"),
                 dim=10, num_arms=20,
                 problems=(",".join(PROBLEMS), "problems, among those registered"),
                 agents=(str, None, "only these engine agents"),
                 block_runs=(_blocks, [None], "block sizes, 'default' for the engine's"),
                 cpu_devices=(int, None, T.CPU_DEVICES_HELP),
                 mabwiser_python=(str, None, "a Python with mabwiser (default: this one)"),
                 obp_python=(str, None, "a Python 3.10 with obp 0.5.7 (default: this one)"),
                 yardstick_budget=(20.0, "seconds each yardstick plays runs for"),
                 warm_cache=(False, "time each experiment on a warm persistent cache (played "
                             "once untimed into a fresh cache folder first)"),
                 cli=({"choices": ("default", "quick", "skip")}, "default",
                      "time the default `jaxbandits run`, a short one (quick: --horizon 1000 "
                      "--runs 10) or not"),
                 markdown=False)
    import jaxbandits as jb

    jb.use_cpu_cores(args.cpu_devices)
    # compile included, every time; or read from a warm persistent cache
    cache_dir = tempfile.mkdtemp(prefix="small-experiments-") if args.warm_cache else None
    jb.use_compilation_cache(cache_dir or "off")
    import jax

    from jaxbandits.registry import AGENTS, ENVS

    horizon, runs = args.horizon, args.runs
    print(f"small experiments: d={args.dim}, K={args.num_arms}, T={horizon}, runs {runs} | "
          f"jax {jax.__version__}, {jax.device_count()} x {jax.devices()[0].device_kind}, "
          f"{os.cpu_count()} cores | {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
          flush=True)
    for problem in args.problems.split(","):
        if problem not in PROBLEMS:
            raise SystemExit(f"unknown problem {problem!r}: one of {', '.join(PROBLEMS)}")
        if problem not in ENVS:
            print(f"\n{problem}: not registered in this jaxbandits, skipped")
            continue
        env = jb.make_env(problem, dim=args.dim, num_arms=args.num_arms)
        names, algos = PROBLEMS[problem]
        only = args.agents.split(",") if args.agents else names
        print(f"\n{problem} (d={args.dim}, K={args.num_arms}, T={horizon}): seed-steps/s, "
              f"compile included ({'warm' if cache_dir else 'no'} persistent cache)", flush=True)
        rows = []
        for name in [n for n in names if n in AGENTS and n in only]:
            agent = jb.make_agent(name)
            for n in runs:
                for block in args.block_runs:
                    if cache_dir:
                        engine_rate(env, agent, horizon, n, block)  # fills the cache
                    m = engine_rate(env, agent, horizon, n, block)
                    tag = "default" if block is None else str(block)
                    rows.append([name, str(n), f"{tag} ({m['block_runs']})",
                                 f"{m['compile']:.2f}", f"{m['play']:.2f}", f"{m['total']:.2f}",
                                 _rate(m["rate"]), f"{m['regret']:.1f}"])
                    print("  " + " ".join(rows[-1]), flush=True)
        T.print_table(["agent", "runs", "block_runs", "compile s", "play s", "total s",
                       "seed-steps/s", "mean regret"], rows, args.markdown)
        if algos:
            yardsticks(args, algos, horizon, runs)
    if cache_dir:
        shutil.rmtree(cache_dir, ignore_errors=True)
    if args.cli != "skip":
        extra = ["--horizon", "1000", "--runs", "10"] if args.cli == "quick" else []
        cold, warm, line = cli_wall(extra)
        print(f"\n`jaxbandits run {' '.join(extra)}`: cold cache {cold:.1f} s, warm cache "
              f"{warm:.1f} s end to end ({line.strip()})")
    return 0


def yardsticks(args, algos: list[str], horizon: int, runs: list[int]) -> None:
    """MABWiser's and OBP's ``algos`` (one library at a time, in its Python) on up to 100
    ``disjoint-linear`` instances of ``disjoint_peers``, each playing runs for
    ``--yardstick-budget`` seconds: a row per run count, import + runs x seconds per run."""
    from benchmarks import disjoint_peers as peers

    instances = peers.draw_instances(min(max(runs), 100), horizon, args.dim, args.num_arms,
                                     0.5, 0)
    hp = dict(alpha=1.0, v=1.0, epsilon=0.1, reg=1.0)
    rows = []
    for lib in ("mabwiser", "obp"):
        python = getattr(args, f"{lib}_python") or sys.executable
        data = peers.play_peers({lib: python}, instances, algos, hp, args.yardstick_budget)
        for algo, final in data.get(lib, {"final_regret": {}})["final_regret"].items():
            per_run = data[lib]["seconds"][algo] / len(final)
            for n in runs:
                total = data[lib]["import"] + n * per_run
                rows.append([f"{lib} {algo}", str(n), f"{data[lib]['import']:.2f}",
                             f"{total:.1f}", _rate(n * horizon / total),
                             f"{final.mean():.1f} ({len(final)} runs)"])
    if rows:
        print("yardsticks (import + runs x the measured seconds per run):")
        T.print_table(["library", "runs", "import s", "total s", "seed-steps/s", "mean regret"],
                      rows, args.markdown)


if __name__ == "__main__":
    sys.exit(main())
