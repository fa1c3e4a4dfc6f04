"""Streaming over runs: peak memory and throughput of ``lin-ts`` from 10^4 to 10^7 runs, each
run count streamed (``save_to``) in a fresh process (its own peak RSS)::

    python -m benchmarks.streaming --runs 10000,100000  # quicker than the default 10^4-10^7
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from benchmarks.timing import CPU_DEVICES_HELP, cli

CHILD = textwrap.dedent(
    """
    import json, os, resource, sys, threading, time
    import jaxbandits as jb
    runs, horizon, cpu_devices, stream_dir, block_runs = json.loads(sys.argv[1])
    jb.use_cpu_cores(cpu_devices)
    import jax

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    samples, stop = [], threading.Event()
    def sample():
        while not stop.wait(0.5):
            samples.append(rss())
    env, agent = jb.make_env("linear"), jb.make_agent("lin-ts")
    kw = dict(progress=False, block_runs=block_runs)
    jb.simulate(env, agent, 1, horizon, 2 * (block_runs or 128), **kw)  # compile, warm up
    start_rss = rss()
    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    save_to = None if stream_dir is None else os.path.join(stream_dir, "lin-ts")
    result = jb.simulate(env, agent, 0, horizon, runs, save_to=save_to, **kw)
    stop.set()
    thread.join()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    final = result.final()
    print(json.dumps({
        "runs": runs, "rate": result.seed_steps_per_second, "wall": result.wall_time,
        "compile": result.compile_time, "peak_rss": peak, "start_rss": start_rss,
        "samples": samples, "final": final, "devices": result.extras["devices"],
        "block_runs": result.extras["block_runs"], "jax": jax.__version__,
    }))
    """
)


def main(argv: list[str] | None = None) -> int:
    args = cli(__doc__, argv, runs=[10**4, 10**5, 10**6, 10**7],
               reference=(10**4, "the run count played in memory, not streamed"),
               horizon=100, block_runs=(int, None, "runs per block (default: the runner's)"),
               cpu_devices=(int, None, CPU_DEVICES_HELP))
    root = Path(__file__).resolve().parents[1]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for runs in sorted({args.reference, *args.runs}):
            stream = None if runs == args.reference else tmp
            payload = json.dumps([runs, args.horizon, args.cpu_devices, stream, args.block_runs])
            proc = subprocess.run([sys.executable, "-c", CHILD, payload], cwd=root,
                                  capture_output=True, text=True,
                                  env=dict(os.environ, PYTHONPATH=str(root)))
            if proc.returncode != 0:
                print(proc.stderr[-3000:], file=sys.stderr)
                return proc.returncode
            rows.append(row := json.loads(proc.stdout.strip().splitlines()[-1]))
            samples = row["samples"] or [row["start_rss"]]
            print(f"{runs:>11,} runs {'streamed' if stream else 'in memory':>9}: "
                  f"{row['rate']:>12,.0f} seed-steps/s ({row['rate'] / rows[0]['rate']:6.1%} of "
                  f"the reference), wall {row['wall']:8.1f} s, peak RSS {_mib(row['peak_rss'])}, "
                  f"RSS while running {_mib(min(samples))}-{_mib(max(samples))} ({len(samples)} "
                  f"samples), final regret {row['final'][0]:.2f} ± {row['final'][1]:.2f}",
                  flush=True)
            for leftover in Path(tmp).glob("lin-ts*"):
                leftover.unlink()
    first = rows[0]
    print(f"\nlin-ts, linear (d = 20, K = 50), T = {args.horizon}, {first['devices']} device(s), "
          f"{first['block_runs']} runs per block, jax {first['jax']}")
    return 0


def _mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


if __name__ == "__main__":
    sys.exit(main())
