"""Throughput of the engine against NumPy, looped and batched, in seed-steps per second.

For every benchmarked agent and run count this prints how many seed-steps (runs x rounds) per
second ``jb.simulate`` plays (compile time excluded, reported separately), next to two NumPy
yardsticks of the same algorithm, and the engine's ratio to each:

* the NumPy loop (``NumPy loop seed-steps/s``, ``ratio``): one seed at a time with a Python loop
  per step, float64, the way the papers' own code runs. Its rate per seed-step does not depend on
  the number of runs;
* batched NumPy (``batched NumPy seed-steps/s``, ``ratio batched``; the linear agents ``lin-ts``,
  ``lin-ucb``, ``lin-es``, ``ensemble-pp``): all R runs at once as a leading array axis
  (``(R, d, d)``, ``(R, K, d)``, ...), one Python loop over time, batched ``einsum`` products and
  one ``(R, ...)`` random draw per round, float32 (``--batched-dtype``), in one process, what a
  careful NumPy user would write. Its rate depends on R (the Python overhead per round is shared
  by R runs), so it is measured at every run count. It costs per round what the engine's forms
  cost, O(d^2 + K d + d M) per run: no factorisation (lin-ts samples through a square root of
  ``V^{-1}`` kept by the Potter update, where the loop takes a Cholesky per step) and no
  O(K d^2) widths (lin-ucb downdates them by Sherman-Morrison, where the loop recomputes them).

Targets, printed with "met" / "NOT met" at 1,000 runs, never asserted: >= 100x the
NumPy loop and >= 10x batched NumPy for the linear agents (>= 30x the loop for ``glm-es``, which
has no batched reference). Correctness: each NumPy reference's mean final regret must be in the
range of the JAX agent's, over ``--check-seeds`` seeds for the loop and ``--check-runs`` runs
for the batched reference (both printed, ``consistent`` or ``MISMATCH``).

Roofline: for the linear agents at the top run count the script prints the engine's achieved
GFLOP/s, ``rate x FLOP per seed-step / 1e9``, and its fraction of ``--peak-gflops`` (default 142,
the f32 matrix-multiply peak of the 2-core reference machine, shared/PERFORMANCE.md). The FLOP
counts are approximate analytic counts of the engine's forms (``FLOPS_PER_STEP``; a multiply-add
is 2 FLOP; random draws, argmax and the environment are not counted), e.g. lin-ts
8d^2 + 2Kd + O(d) = 5,380 at d = 20, K = 50.

Benchmarked by default, each on the environment its NumPy reference names (d = 20, K = 50, the
environment's defaults otherwise) and with the agent's default hyperparameters:

* ``lin-ts``, ``lin-ucb`` on ``linear``: ridge agents, ``V^{-1}`` kept by Sherman-Morrison (in
  the references; the engine keeps a square root of it);
* ``lin-es`` on ``linear``: linear ensemble sampling (Lee & Oh), m = 25 perturbed members that
  share one Sherman-Morrison ``V^{-1}``;
* ``ensemble-pp[M=8]`` and ``ensemble-pp[M=32]`` on ``linear``: linear Ensemble++ with the
  Kalman-form update of the factor ``A`` (Li et al. 2024, Sec. 3.1);
* ``glm-es`` on ``logistic`` (Sun et al. 2025, Sec. 7.1): GLM ensemble sampling with its G-optimal
  warm-up (500 rounds), then m = 10 members of 100 gradient steps each per round. Its NumPy
  reference refits every member on the whole perturbed history every round, as the paper's code
  does, so its per-step cost grows with t; the engine fits on per-arm statistics, flat in t. A
  section "flat in t" prints both: the engine's seed-steps/s over growing horizons, and the
  NumPy reference's time per step early and late in a run. Timings are printed, never asserted.

Neural agents (``neural-es``, ``neural-ucb``, ``neurallog-ucb-2``) given in ``--agents`` are
measured against their PyTorch references by ``throughput_neural.py`` (1, 10 and 100 runs, flat
in t; ``--runs`` and ``--quick`` are passed on).

Run it from the repository root::

    python -m benchmarks.throughput                      # the full benchmark (long on a laptop)
    python -m benchmarks.throughput --quick              # a smoke test (about a minute)
    python -m benchmarks.throughput --agents lin-ts,ensemble-pp:ensemble_size=16 --markdown
    python -m benchmarks.throughput --no-reference --runs 1000,1000000 --block-runs all  # a GPU

An agent is given as ``name[:field=value[:field=value...]]``, the fields being overrides of
``jb.make_agent``: ``ensemble-pp:ensemble_size=8:reference=sphere`` is the row
``ensemble-pp[M=8,reference=sphere]`` (``ensemble_size`` is written ``M`` in labels).

Timing: each (agent, run count) is measured in ``--repeats`` trials (fewer once ``--max-time``
seconds have been spent on it); a trial repeats the same ``simulate`` call until its summed wall
time (compile excluded) reaches ``--min-time`` seconds, and the best trial is reported. The NumPy
loop's rate is the best of ``--check-seeds`` seeds of ``--numpy-horizon`` steps; per seed-step it
does not depend on the number of runs (it would play them one after another), so one loop rate
serves every run count. Batched NumPy is timed at each run count R in ``--repeats`` trials too: a
trial plays batches of R runs (fresh instances, ``--numpy-horizon`` rounds each, the last cut
short) until ``--min-time`` seconds of play, and the best trial is reported (its per-round cost
is flat in t, so a cut play's rate is a whole one's). The loop's rate does depend on the horizon
when the reference's per-step cost grows with t (``glm-es``): such agents are timed in JAX over
``--numpy-horizon`` rounds too (the ``horizon`` column), so the ratio compares equal horizons.

Cost: at the defaults each linear agent takes about two minutes on a busy 2-core CPU (the batched
NumPy reference adds about 3 s per run count and its regret check a few seconds). ``glm-es``
(10 members x 100 gradient steps per round) costs about 100 times more per seed-step, so its
1,000-run row, its regret check and the flat-in-t section take most of the time (about an hour
on such a machine). Use ``--agents``, ``--runs``, ``--numpy-horizon``, ``--check-seeds``,
``--check-runs`` and ``--flat-*`` to shorten it, e.g. ``--agents glm-es --runs 1,10,100
--numpy-horizon 1000 --check-seeds 4 --check-runs 50`` (about 6 minutes there).

Adding an agent: write a NumPy reference class (``__init__(agent, dim, rng)``, ``act(arms) ->
int``, ``update(x, y)``; read the hyperparameters from the JAX agent object so both run the same
configuration) and decorate it with ``@numpy_reference("agent-name")`` (``env="logistic"`` to
benchmark it there). See ``LinTSReference``. A batched reference (``__init__(agent, runs, dim,
rng, dtype)``, ``act(arms (R, K, d)) -> (R,)``, ``update(x (R, d), y (R,))``) is registered with
``@numpy_batched_reference("agent-name")`` (see ``BatchedLinTS``), and a FLOP count per seed-step
in ``FLOPS_PER_STEP`` gives the agent its roofline line.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from benchmarks import throughput_neural  # neural agents: the PyTorch comparison
from benchmarks.timing import (
    BLOCK_RUNS_HELP,
    CPU_DEVICES_HELP,
    block_runs_option,
    fmt_rate,
    int_list,
    parse_agent_spec,
    print_table,
    time_jax,
)
from tests.references.numpy_linear import (
    NUMPY_BATCHED,
    NUMPY_REFERENCES,
    NumpyRun,
    numpy_batched_run,
    numpy_run,
)
from tests.references.parity import regret_agreement
from tests.references.torch_neural import TORCH_REFERENCES

# jax and jaxbandits are imported in main(), after --cpu-devices has split the CPU
# (the functions below import them lazily, so this module can be imported for its references).

TARGET_RUNS = 1000  # the run count the targets are set at
TARGET_RATIO = 30.0  # the engine's goal against the NumPy loop (agents with no batched reference)
# the agents with a batched NumPy reference: against the loop and against the batch
LOOP_TARGET, BATCHED_TARGET = 100.0, 10.0
DEFAULT_AGENTS = ("lin-ts,lin-ucb,lin-es,ensemble-pp:ensemble_size=8,"
                  "ensemble-pp:ensemble_size=32,glm-es")
# quick: a 50-round warm-up, so that glm-es's gradient steps run within the short horizon
QUICK_AGENTS = ("lin-ts,lin-ucb,lin-es,ensemble-pp:ensemble_size=8,"
                "ensemble-pp:ensemble_size=32,glm-es:warmup=50")
LABEL_ALIASES = {"ensemble_size": "M"}  # how an override is written in a row label


# ------------------------------------------------------------------------------------------------
# The engine's arithmetic per seed-step, for the roofline line: approximate FLOP counts of the JAX
# agents' forms (a multiply-add counts 2; random draws, argmax, the environment's reward lookup
# and the engine's bookkeeping are not counted). Every ridge agent's update is the Potter
# square-root step of ``jaxbandits.linalg.ridge_update``: S^T x (2d^2), S s (2d^2), the rank-one
# downdate of S (2d^2) and O(d) for q, the mean and log det: 6d^2 + 7d.


def _ridge_update_flops(d: int) -> int:
    return 6 * d * d + 7 * d


def _lin_ts_flops(agent, d: int, k: int) -> int:
    # sample S z (2d^2) and mean + scale S z (2d); scores arms @ theta (2Kd); Potter update
    return 2 * d * d + 2 * d + 2 * k * d + _ridge_update_flops(d)


def _lin_ucb_flops(agent, d: int, k: int) -> int:
    # scores arms @ mean (2Kd) + bonus * sqrt(widths) (3K); Potter update; widths downdate on the
    # fixed arm set: arms @ (S s) (2Kd) and w - u^2 / (1 + q) (3K)
    return 4 * k * d + 6 * k + _ridge_update_flops(d)


def _lin_es_flops(agent, d: int, k: int) -> int:
    # member mu + A e_j (d); scores (2Kd); Potter update; gain (d); x^T A (2dm), targets - x^T A
    # (m), A += gain residual^T (2dm)
    m = int(agent.ensemble_size)
    return 2 * d + 2 * k * d + _ridge_update_flops(d) + 4 * d * m + m


def _ensemble_pp_flops(agent, d: int, k: int) -> int:
    # A zeta (2dM), mu + beta A zeta (2d); scores (2Kd); Potter update; gain (d); sigma z (M),
    # x^T A (2dM), residual (M), A += gain residual^T (2dM)
    m = int(agent.ensemble_size)
    return 3 * d + 2 * k * d + _ridge_update_flops(d) + 6 * d * m + 2 * m


FLOPS_PER_STEP: dict[str, Callable[[Any, int, int], int]] = {
    "lin-ts": _lin_ts_flops,  # 8d^2 + 2Kd + O(d): 5,380 at d = 20, K = 50
    "lin-ucb": _lin_ucb_flops,  # 6d^2 + 4Kd + O(K + d): 6,840
    "lin-es": _lin_es_flops,  # 6d^2 + 4dm + 2Kd + O(d + m): 6,605 at m = 25
    "ensemble-pp": _ensemble_pp_flops,  # 6d^2 + 6dM + 2Kd + O(d + M): 5,576 (M=8), 8,504 (M=32)
}


# ------------------------------------------------------------------------------------------------
# What is benchmarked: an agent name, its overrides, its row label and its environment.


@dataclasses.dataclass(frozen=True)
class BenchEntry:
    """One benchmarked configuration, parsed from ``name[:field=value...]``."""

    label: str
    name: str
    overrides: tuple[tuple[str, Any], ...] = ()

    @property
    def reference(self):
        return NUMPY_REFERENCES[self.name]

    def make(self, dim: int, num_arms: int):
        """``(env, agent)``: the reference's environment and the configured JAX agent."""
        import jaxbandits as jb

        env = jb.make_env(self.reference.env_name, dim=dim, num_arms=num_arms)
        return env, jb.make_agent(self.name, **dict(self.overrides))


def parse_entry(spec: str) -> BenchEntry:
    """``"ensemble-pp:ensemble_size=8"`` -> the entry labelled ``ensemble-pp[M=8]``."""
    name, overrides = parse_agent_spec(spec)
    if name not in NUMPY_REFERENCES:
        raise ValueError(f"no NumPy reference for {name!r} (have: {', '.join(NUMPY_REFERENCES)})"
                         "; add one with @numpy_reference")
    label = name
    if overrides:
        label += "[" + ",".join(f"{LABEL_ALIASES.get(k, k)}={v}" for k, v in overrides) + "]"
    return BenchEntry(label, name, tuple(overrides))


# ------------------------------------------------------------------------------------------------
# Measurements.


def check_numpy(env, agent, name: str, *, horizon: int, seeds: int, jax_runs: int,
                chunk_size: int | None, seed: int) -> dict:
    """NumPy seed-steps/s (best seed) and final regret against the JAX agent's mean regret."""
    import jaxbandits as jb

    runs = [numpy_run(env, agent, name, horizon, seed=10_000 + s) for s in range(seeds)]
    regrets = [r.regret for r in runs]
    rates = [horizon / r.seconds for r in runs]
    result = jb.simulate(env, agent, seed, horizon, jax_runs, progress=False,
                         chunk_size=chunk_size)
    jax_mean, jax_half = result.final("regret")
    # the program this call compiled: (runs, rounds per chunk), reused by a timing of that shape
    compiled = (jax_runs, result.extras["chunk_size"])
    return {
        "rate": max(rates),
        "rate_median": float(np.median(rates)),
        **regret_agreement(regrets, jax_mean, jax_half, jax_runs),
        "numpy_runs": runs,
        "compiled": {compiled: result.compile_time},
    }


def check_batched(env, agent, name: str, *, horizon: int, runs: int, seed: int, dtype,
                  jax_mean: float, jax_half: float) -> dict:
    """The batched reference's mean final regret over ``runs`` runs against the JAX agent's
    (``jax_mean +- jax_half``, from ``check_numpy``), and its seed-steps/s at ``runs``."""
    run = numpy_batched_run(env, agent, name, horizon, runs, seed, dtype=dtype)
    return {"rate": runs * run.steps / run.seconds,
            **regret_agreement(run.regrets, jax_mean, jax_half, runs)}


def time_batched(env, agent, name: str, *, horizon: int, runs: int, repeats: int,
                 min_time: float, seed: int, dtype) -> dict:
    """Best-of-``repeats`` seed-steps/s of the batched reference at ``runs`` runs.

    A trial plays fresh batches of ``runs`` runs (``horizon`` rounds each, the last one cut
    short) until ``min_time`` seconds of play; the per-round cost is flat in t, so the rate of
    a cut play is that of a whole one. Returns ``{"rate", "steps", "seconds"}`` (best trial).
    """
    best = {"rate": 0.0, "steps": 0, "seconds": 0.0}
    for trial in range(repeats):
        steps, seconds, play = 0, 0.0, 0
        while seconds < min_time:
            run = numpy_batched_run(env, agent, name, horizon, runs,
                                    seed + 1_000 * trial + play, dtype=dtype,
                                    time_budget=min_time - seconds)
            steps, seconds, play = steps + run.steps, seconds + run.seconds, play + 1
        if runs * steps / seconds > best["rate"]:
            best = {"rate": runs * steps / seconds, "steps": steps, "seconds": seconds}
    return best


def step_time_windows(runs: Sequence[NumpyRun], num_windows: int = 4) -> list[tuple]:
    """Median over seeds of the mean seconds per step in ``(first, last, seconds)`` windows:
    the warm-up (if any), then the rest of the run cut into ``num_windows`` equal parts."""
    horizon = len(runs[0].step_seconds)
    warmup = min(runs[0].warmup_steps, horizon)
    edges = [0] if warmup == 0 else [0, warmup]
    rest = horizon - edges[-1]
    edges += [edges[-1] + round(rest * (i + 1) / num_windows) for i in range(num_windows)]
    windows = []
    for lo, hi in zip(edges[:-1], edges[1:], strict=True):
        if hi > lo:
            per_step = [float(np.mean(r.step_seconds[lo:hi])) for r in runs]
            windows.append((lo + 1, hi, float(np.median(per_step))))
    return windows


def flat_in_t(entry: BenchEntry, env, agent, *, horizons: Sequence[int], runs: int,
              seed: int) -> list[dict]:
    """The engine's seed-steps/s of ``agent`` over growing ``horizons`` at ``runs`` runs, and the
    marginal rate of the rounds each horizon adds to the previous one (compile excluded; one
    compiled program, the chunk size being the smallest horizon's)."""
    import jaxbandits as jb

    chunk = min(min(horizons), 1000)
    rows, previous_t, previous_wall = [], 0, 0.0
    for horizon in sorted(horizons):
        result = jb.simulate(env, agent, seed, horizon, runs, progress=False, chunk_size=chunk)
        added = horizon - previous_t
        marginal = runs * added / max(result.wall_time - previous_wall, 1e-9)
        rows.append({"agent": entry.label, "horizon": horizon, "wall": result.wall_time,
                     "rate": runs * horizon / result.wall_time, "from": previous_t + 1,
                     "marginal": marginal})
        previous_t, previous_wall = horizon, result.wall_time
    return rows


# ------------------------------------------------------------------------------------------------
# Command line.


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--agents", default=None,
                   help="comma-separated agents, each name[:field=value...] (NumPy references: "
                        f"{', '.join(NUMPY_REFERENCES)}; PyTorch, via throughput_neural.py: "
                        f"{', '.join(TORCH_REFERENCES)}) (default {DEFAULT_AGENTS}; quick: "
                        "glm-es with warmup=50)")
    p.add_argument("--runs", type=int_list, default=None,
                   help="comma-separated run counts (default 1,10,100,1000; quick: 10)")
    p.add_argument("--horizon", type=int, default=None,
                   help="JAX rounds per simulate call (default 5000; quick: 200); agents whose "
                        "NumPy cost grows with t use --numpy-horizon")
    p.add_argument("--numpy-horizon", type=int, default=None,
                   help="NumPy steps per seed, also the horizon of the regret check "
                        "(default 2000; quick: 200)")
    p.add_argument("--check-seeds", type=int, default=None,
                   help="NumPy seeds (timed and regret-checked) (default 8; quick: 2)")
    p.add_argument("--check-runs", type=int, default=None,
                   help="JAX runs of the regret check, also the runs of the batched NumPy "
                        "reference's check (default 200; quick: 10)")
    p.add_argument("--repeats", type=int, default=None,
                   help="timing trials per JAX measurement, best reported (default 3; quick: 1)")
    p.add_argument("--min-time", type=float, default=None,
                   help="seconds of wall time per trial, JAX and batched NumPy (default 1.0; "
                        "quick: 0.05)")
    p.add_argument("--max-time", type=float, default=None,
                   help="no further trial of a JAX measurement once this many seconds have been "
                        "spent on it (default 60)")
    p.add_argument("--chunk-size", type=int, default=None,
                   help="simulate's chunk_size (default: the engine's)")
    p.add_argument("--flat", default=None,
                   help="the agent of the flat-in-t section, name[:field=value...]; 'none' skips "
                        "it (default glm-es; quick: glm-es:warmup=50)")
    p.add_argument("--flat-horizons", type=int_list, default=None,
                   help="JAX horizons of the flat-in-t section (default 1000,4000,16000; "
                        "quick: 200,400)")
    p.add_argument("--flat-runs", type=int, default=None,
                   help="JAX runs of the flat-in-t section (default 10)")
    p.add_argument("--batched-dtype", choices=("float32", "float64"), default="float32",
                   help="the batched NumPy references' float type")
    p.add_argument("--peak-gflops", type=float, default=142.0,
                   help="the machine's f32 peak for the roofline line (142: the f32 "
                        "matrix-multiply peak of the 2-core reference machine, "
                        "shared/PERFORMANCE.md)")
    p.add_argument("--dim", type=int, default=20)
    p.add_argument("--num-arms", type=int, default=50)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cpu-devices", type=int, default=None, help=CPU_DEVICES_HELP)
    p.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test (~1 min)")
    p.add_argument("--markdown", action="store_true", help="print the tables as markdown")
    p.add_argument("--block-runs", type=block_runs_option, default=None, help=BLOCK_RUNS_HELP)
    p.add_argument("--no-reference", action="store_true",
                   help="JAX numbers only: no NumPy loop, no batched NumPy, no regret checks, no "
                        "flat-in-t section; a run count that does not fit the device is printed "
                        "as such and the benchmark goes on (for GPU sweeps to 10^6 runs)")
    args = p.parse_args(argv)
    quick = args.quick
    defaults = {
        "agents": QUICK_AGENTS if quick else DEFAULT_AGENTS,
        "runs": [10] if quick else [1, 10, 100, 1000],
        "horizon": 200 if quick else 5000,
        "numpy_horizon": 200 if quick else 2000,
        "check_seeds": 2 if quick else 8,
        "check_runs": 10 if quick else 200,
        "repeats": 1 if quick else 3,
        "min_time": 0.05 if quick else 1.0,
        "max_time": 60.0,
        "flat": "glm-es:warmup=50" if quick else "glm-es",
        "flat_horizons": [200, 400] if quick else [1000, 4000, 16000],
        "flat_runs": 10,
    }
    runs_given, flat_given = args.runs is not None, args.flat is not None
    for field, value in defaults.items():
        if getattr(args, field) is None:
            setattr(args, field, value)
    specs = [a.strip() for a in args.agents.split(",") if a.strip()]
    if not specs:
        p.error("--agents is empty")
    # neural agents are measured against PyTorch by throughput_neural.py (same options)
    args.neural = [a for a in specs if parse_agent_spec(a)[0] in TORCH_REFERENCES]
    args.neural_runs = args.runs if runs_given else None
    try:
        args.agents = [parse_entry(a) for a in specs if a not in args.neural]
        linear = (bool(args.agents) or flat_given) and not args.no_reference
        args.flat = None if args.flat.lower() == "none" or not linear else parse_entry(args.flat)
    except ValueError as err:
        p.error(str(err))
    return args


def _fmt_ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.1f}x"


def print_throughput(rows: list[dict], markdown: bool, references: bool = True) -> None:
    """The throughput table; without ``references``, the engine's columns alone."""
    header = ["agent", "env", "runs", "horizon", "compile s", "wall s", "JAX seed-steps/s"]
    body = [[r["agent"], r["env"], str(r["runs"]), str(r["horizon"]), f"{r['compile']:.2f}",
             f"{r['wall']:.2f}", fmt_rate(r["rate"])] for r in rows]
    if references:
        header += ["NumPy loop seed-steps/s", "ratio", "batched NumPy seed-steps/s",
                   "ratio batched"]
        for line, r in zip(body, rows, strict=True):
            line += [fmt_rate(r["np_rate"]), _fmt_ratio(r["ratio"]),
                     fmt_rate(r["batched_rate"]), _fmt_ratio(r["batched_ratio"])]
    print_table(header, body, markdown)


def _against(ratio: float, target: float, runs: int) -> str:
    if runs < TARGET_RUNS:
        return f"{ratio:.1f}x"
    return f"{ratio:.1f}x (target >= {target:g}x: {'met' if ratio >= target else 'NOT met'})"


def summary_line(label: str, row: dict, runs: int) -> str:
    """``ratio LABEL at RUNS runs: ...`` against the NumPy loop (and the batched reference, if
    any), with the targets' verdicts at ``TARGET_RUNS`` runs or more (printed, never asserted)."""
    if row["batched_ratio"] is None:
        return f"ratio {label} at {runs} runs: {_against(row['ratio'], TARGET_RATIO, runs)}"
    return (f"ratio {label} at {runs} runs: {_against(row['ratio'], LOOP_TARGET, runs)} vs the "
            f"NumPy loop, {_against(row['batched_ratio'], BATCHED_TARGET, runs)} vs batched "
            "NumPy")


def roofline_line(label: str, row: dict, runs: int, flops: int, peak_gflops: float) -> str:
    """The engine's achieved GFLOP/s (``rate * flops / 1e9``) and its fraction of the peak."""
    achieved = row["rate"] * flops / 1e9
    return (f"roofline {label} at {runs} runs: ~{flops:,} FLOP per seed-step x "
            f"{fmt_rate(row['rate'])} seed-steps/s = {achieved:.2f} GFLOP/s achieved = "
            f"{100.0 * achieved / peak_gflops:.2f}% of the {peak_gflops:g} GFLOP/s f32 peak")


def print_flat(entry: BenchEntry, rows: list[dict], runs: int, numpy_runs: Sequence[NumpyRun],
               markdown: bool) -> None:
    print(f"flat in t: {entry.label}, JAX seed-steps/s at {runs} run(s) over growing horizons; "
          "'marginal' is the rate of the rounds a horizon adds to the previous one")
    header = ["agent", "horizon", "wall s", "JAX seed-steps/s", "rounds", "marginal seed-steps/s"]
    body = [[r["agent"], str(r["horizon"]), f"{r['wall']:.2f}", fmt_rate(r["rate"]),
             f"{r['from']}-{r['horizon']}", fmt_rate(r["marginal"])] for r in rows]
    print_table(header, body, markdown)
    if numpy_runs:
        warm = numpy_runs[0].warmup_steps
        parts = [f"{lo}-{hi}{' (warm-up)' if warm and hi <= warm else ''}: {1e3 * s:.3f}"
                 for lo, hi, s in step_time_windows(numpy_runs)]
        print(f"NumPy reference of {entry.label}, ms per step (median of {len(numpy_runs)} "
              f"seed(s)) by rounds: {' | '.join(parts)}")


def jax_only(args) -> int:
    """``--no-reference``: the engine's seed-steps/s and compile time per (agent, run count),
    the best run count per agent, and the roofline at ``--peak-gflops``. A run count whose
    state does not fit the device (the engine's memory check, or the device's allocator) is
    printed as ``does not fit`` and the run counts after it are skipped."""
    if args.neural:
        print(f"(neural agents {', '.join(args.neural)}: run "
              "python -m benchmarks.throughput_neural --no-torch for them)")
    t0 = time.perf_counter()
    rows, flops = [], {}
    for entry in args.agents:
        env, agent = entry.make(args.dim, args.num_arms)
        if entry.name in FLOPS_PER_STEP:
            flops[entry.label] = FLOPS_PER_STEP[entry.name](agent, env.dim, env.num_arms)
        for runs in args.runs:
            try:
                m = time_jax(env, agent, args.horizon, runs, repeats=args.repeats,
                             min_time=args.min_time, max_time=args.max_time,
                             chunk_size=args.chunk_size, seed=args.seed,
                             block_runs=args.block_runs)
            except Exception as err:  # noqa: BLE001 - out of memory, whatever the backend says
                message = str(err).splitlines()[0][:160]
                print(f"[jax]   {entry.label} runs={runs}: does not fit ({type(err).__name__}: "
                      f"{message}); the run counts after it skipped")
                sys.stdout.flush()
                break
            rows.append({"agent": entry.label, "env": env.name, "runs": runs,
                         "horizon": args.horizon, **m})
            print(f"[jax]   {entry.label} runs={runs}: {fmt_rate(m['rate'])} seed-steps/s, "
                  f"compile {m['compile']:.2f} s, {m['calls']} call(s)")
            sys.stdout.flush()
    print()
    print_throughput(rows, args.markdown, references=False)
    print()
    for entry in args.agents:
        mine = [r for r in rows if r["agent"] == entry.label]
        if not mine:
            continue
        best = max(mine, key=lambda r: r["rate"])
        print(f"best {entry.label}: {fmt_rate(best['rate'])} seed-steps/s at {best['runs']:,} "
              f"runs (compile {best['compile']:.2f} s)")
        if entry.label in flops:
            print(roofline_line(entry.label, best, best["runs"], flops[entry.label],
                                args.peak_gflops))
    print(f"total benchmark time {time.perf_counter() - t0:.1f} s")
    return 0


def main(argv=None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    import jax

    import jaxbandits as jb

    jb.use_cpu_cores(args.cpu_devices)
    jb.use_compilation_cache()  # compile times are reported apart; the cache shortens reruns

    print(f"jaxbandits throughput benchmark | jax {jax.__version__}, backend "
          f"{jax.default_backend()}, {jax.device_count()} device(s) "
          f"[{jax.devices()[0].device_kind}] | numpy {np.__version__} | python "
          f"{platform.python_version()} | {os.cpu_count()} CPU(s), load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.no_reference:
        print(f"envs d={args.dim}, K={args.num_arms}, defaults otherwise; JAX horizon "
              f"{args.horizon}, best of {args.repeats} trial(s) of >= {args.min_time:g} s; "
              "JAX only (--no-reference)")
        return jax_only(args)
    grows = "" if args.horizon == args.numpy_horizon else (
        f" ({args.numpy_horizon} for agents whose NumPy cost grows with t)")
    print(f"envs d={args.dim}, K={args.num_arms}, defaults otherwise; JAX horizon "
          f"{args.horizon}{grows}, best of {args.repeats} trial(s) of >= {args.min_time:g} s; "
          f"NumPy loop {args.numpy_horizon} steps x {args.check_seeds} seed(s), best seed; "
          f"batched NumPy ({args.batched_dtype}, one process) best of {args.repeats} "
          f"trial(s) of >= {args.min_time:g} s in plays of <= {args.numpy_horizon} rounds"
          f"{'; quick mode' if args.quick else ''}")
    sys.stdout.flush()

    if args.neural:
        neural_args = ["--agents", ",".join(args.neural)] + (
            ["--runs", ",".join(map(str, args.neural_runs))] if args.neural_runs else []) + (
            ["--quick"] if args.quick else []) + (["--markdown"] if args.markdown else [])
        print(f"\nneural agents ({', '.join(args.neural)}): against PyTorch, as "
              f"`python -m benchmarks.throughput_neural {' '.join(neural_args)}`")
        sys.stdout.flush()
        throughput_neural.main(neural_args)
        if not args.agents and args.flat is None:
            return 0
        print()

    dtype = np.dtype(args.batched_dtype).type
    rows, checks = [], {}
    for entry in args.agents:
        env, agent = entry.make(args.dim, args.num_arms)
        batched = entry.name in NUMPY_BATCHED
        check = check_numpy(env, agent, entry.name, horizon=args.numpy_horizon,
                            seeds=args.check_seeds, jax_runs=args.check_runs,
                            chunk_size=args.chunk_size, seed=args.seed)
        checks[entry.label] = check
        verdict = "consistent" if check["consistent"] else "MISMATCH: check the NumPy reference"
        print(f"[check] {entry.label} on {env.name}: final regret at T={args.numpy_horizon}: "
              f"NumPy {check['np_regret']:.1f} +- {check['np_half']:.1f} ({args.check_seeds} "
              f"seeds), JAX {check['jax_regret']:.1f} +- {check['jax_half']:.1f} "
              f"({args.check_runs} runs) -> {verdict}; NumPy {fmt_rate(check['rate'])} "
              f"seed-steps/s (best), {fmt_rate(check['rate_median'])} (median)")
        sys.stdout.flush()
        if batched:
            bcheck = check_batched(env, agent, entry.name, horizon=args.numpy_horizon,
                                   runs=args.check_runs, seed=20_000, dtype=dtype,
                                   jax_mean=check["jax_regret"], jax_half=check["jax_half"])
            verdict = ("consistent" if bcheck["consistent"]
                       else "MISMATCH: check the batched NumPy reference")
            print(f"[batched] {entry.label} on {env.name}: final regret at "
                  f"T={args.numpy_horizon}: batched NumPy {bcheck['np_regret']:.1f} +- "
                  f"{bcheck['np_half']:.1f} ({args.check_runs} runs, {args.batched_dtype}), "
                  f"JAX {bcheck['jax_regret']:.1f} +- {bcheck['jax_half']:.1f} -> {verdict}; "
                  f"{fmt_rate(bcheck['rate'])} seed-steps/s at {args.check_runs} runs")
            sys.stdout.flush()
        horizon = args.numpy_horizon if entry.reference.grows_with_t else args.horizon
        for runs in args.runs:
            b_rate = None
            if batched:
                b = time_batched(env, agent, entry.name, horizon=args.numpy_horizon, runs=runs,
                                 repeats=args.repeats, min_time=args.min_time, seed=30_000,
                                 dtype=dtype)
                b_rate = b["rate"]
                print(f"[batched] {entry.label} runs={runs}: {fmt_rate(b_rate)} seed-steps/s "
                      f"(best trial: {b['steps']} rounds in {b['seconds']:.2f} s)")
            m = time_jax(env, agent, horizon, runs, repeats=args.repeats,
                         min_time=args.min_time, max_time=args.max_time,
                         chunk_size=args.chunk_size, seed=args.seed,
                         block_runs=args.block_runs)
            chunk = (jb.default_chunk_size(agent, horizon) if args.chunk_size is None
                     else args.chunk_size)
            m["compile"] += check["compiled"].get((runs, chunk), 0.0)  # compiled by the check
            rows.append({"agent": entry.label, "env": env.name, "runs": runs,
                         "horizon": horizon, **m, "np_rate": check["rate"],
                         "ratio": m["rate"] / check["rate"], "batched_rate": b_rate,
                         "batched_ratio": None if b_rate is None else m["rate"] / b_rate})
            print(f"[jax]   {entry.label} runs={runs}: {fmt_rate(m['rate'])} seed-steps/s, "
                  f"compile {m['compile']:.2f} s, {m['calls']} call(s)")
            sys.stdout.flush()

    print()
    print_throughput(rows, args.markdown)
    print()
    top = max(args.runs)
    for entry in args.agents:
        row = next(r for r in rows if r["agent"] == entry.label and r["runs"] == top)
        print(summary_line(entry.label, row, top))
    for entry in args.agents:
        flops = FLOPS_PER_STEP.get(entry.name)
        if flops is not None:
            row = next(r for r in rows if r["agent"] == entry.label and r["runs"] == top)
            env, agent = entry.make(args.dim, args.num_arms)
            print(roofline_line(entry.label, row, top, flops(agent, env.dim, env.num_arms),
                                args.peak_gflops))
    grows = [e.label for e in args.agents if e.reference.grows_with_t]
    if grows:
        print(f"({', '.join(grows)}: the NumPy reference's per-step cost grows with t, so its "
              f"rows compare both sides over the same {args.numpy_horizon} rounds)")

    if args.flat is not None:
        print()
        env, agent = args.flat.make(args.dim, args.num_arms)
        flat_rows = flat_in_t(args.flat, env, agent, horizons=args.flat_horizons,
                              runs=args.flat_runs, seed=args.seed)
        numpy_runs = checks.get(args.flat.label, {}).get("numpy_runs")
        if numpy_runs is None:
            numpy_runs = [numpy_run(env, agent, args.flat.name, args.numpy_horizon, 10_000)]
        print_flat(args.flat, flat_rows, args.flat_runs, numpy_runs, args.markdown)
    print(f"total benchmark time {time.perf_counter() - t0:.1f} s; load average at the end "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
