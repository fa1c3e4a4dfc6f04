"""Throughput of the neural agents against a PyTorch loop, in seed-steps per second.

For each neural agent and run count this prints how many seed-steps (runs x rounds) per second
``jb.simulate`` plays once training is under way (compile time excluded, reported separately),
next to a PyTorch implementation of the same algorithm (on the CPU, or on a GPU with
``--torch-device cuda``) that plays one seed at a time with a Python loop per step, as the
papers' code does: the same network and initialisation, the same
number of full-batch gradient steps on the same loss, the same retraining schedule. It also shows
that the engine's cost per round is flat in t (per-arm statistics, fixed shapes) and checks that
each PyTorch reference is a correct implementation:

* **training check** (pathwise): from identical inputs (theta_0, arms, a pull history), one
  training round of the reference (``num_grad_steps`` steps of ``torch.optim.SGD``) must land on
  the parameters :func:`jaxbandits.nets.net_gd` finds, up to float32 rounding. The dueling
  references are checked against the agent's own ``update`` (jitted) instead: from the agent's
  initial state with a fixed pair history, two rounds on both sides must give the same
  parameters and the same ``V`` / ``U``, and ``agent.act`` and the reference the same pairs;
  in float64 (``jax.enable_x64``, double tensors), because Adam's normalised steps amplify
  float32 rounding (the float32 differences are printed too). So are the Ensemble++ and LMC-TS
  references (Li et al. 2024): three rounds of ``agent.update`` on a stored buffer (Ensemble++: 12
  Adam steps, a ring wrap, ``reg / |D|`` at two sizes) or two (LMC-TS: t = 39 and 40, the
  held and the decayed step size), with the agent's random draws fed to the reference (the new
  row's ``z`` read from the agent's buffer; the minibatch indices and the Langevin noise
  replayed from the update's key as the library draws them), must give the same parameters to
  1e-9 of the largest one in float64 (they agree to ~1e-16), and the same arm scores;
* **regret check** (statistical): the reference's mean final regret over a few seeds must be in
  the range of the JAX agent's (both are printed).

Run it from the repository root::

    python -m benchmarks.throughput_neural                   # the full benchmark (~15 min)
    python -m benchmarks.throughput_neural --quick           # a smoke test
    python -m benchmarks.throughput_neural --agents neural-es --runs 1,10,100,1000 --markdown
    python -m benchmarks.throughput_neural --agents nvldb-ucb-asym,ndb-ucb   # dueling (~15 min)
    python -m benchmarks.throughput_neural --agents neural-ensemble-pp,lmc-ts --runs 1,10,100 \
        --markdown                  # Li et al. 2024 (~11 min on a loaded 2-core machine)

PyTorch is an optional benchmark dependency (``pip install -e '.[bench]'``, which pins the CPU
build ``torch==2.13.0``); without it the script prints the JAX numbers and says how to install it.

What is timed:

* **JAX**: ``jb.simulate`` with the agent's ``warmup=0``. Agents on per-arm statistics
  (neural-es, neural-ucb on ``quadratic``, training every round) cost the same every round after the
  warm-up, so a short horizon (``--horizon``) gives their steady state. Agents with a ring
  buffer of B rows (neurallog-ucb-2: the arms change every round) train on the rows filled so
  far, so their rounds get dearer until the buffer is full: they are timed over the PyTorch
  reference's whole horizon (T = 2000, training every 50 rounds), the same rounds the
  reference's rate averages. So are the dueling agents (nvldb-ucb-asym, ndb-ucb on
  dueling-square): they train on the pair history, so both sides' rounds get dearer with t;
  their buffer is the one ``jb.make_agent(name, env=env, horizon=T)`` sizes (``min(T, 2000)``
  rows: the whole history, as the reference keeps), and T is the reference's horizon (100 by
  default, so that both dueling agents at 1, 10 and 100 runs take about 13 minutes on a loaded
  2-core machine; at the paper's T = 2000 an average round of either side costs ~10x more,
  and there are 20x as many). neural-ensemble-pp (the authors' ``quadratic`` preset on
  ``quadratic-pool``: d = 100, K = 50 of a pool of 1,000) takes G = 4 Adam steps on B = 128
  rows a round from ``update_start = 128``, whatever t and the buffer's fill: it is timed with
  ``update_start=1`` (every round a training round) over 100 rounds a call, the cost of the
  PyTorch reference's rounds past its start. lmc-ts (``vector-quadratic``: d = 20, K = 50 fresh
  contexts) takes ``min(t, 50)`` Langevin steps on the whole history a round, on both sides: it
  is timed over the reference's horizon (T = 200) from an empty history, with a history of 2T
  rows (every round of the flatness runs kept). Best of ``--repeats`` trials of at least
  ``--min-time`` seconds of wall time (lmc-ts: no further trial, nor flatness repeat, once 20 s
  went into a measurement, and its regret-check call, the same program, horizon and runs,
  counts as the first trial at 100 runs); compile time is reported separately. One compiled
  program per run count is shared by the timing, the flatness and the regret runs (same
  ``--chunk-size``).
* **Flat in t**: one simulate call per horizon in ``--flat-horizons`` (``--flat-runs`` runs,
  best of ``--repeats``; default 50, 200, 800, B/2, B, 2B for a buffer agent, whose cost
  grows while the buffer fills and is flat after, and T/2, T, 2T for lmc-ts, whose cost grows
  with t throughout): seed-steps/s over increasing horizons, and
  the per-round time of each window between consecutive horizons (early vs late), from the
  differences of the wall times.
* **PyTorch**: the rounds after the warm-up of the regret-check seeds (``--torch-horizon``
  rounds each, default warm-up; by default 60 rounds past the warm-up for neural-es and
  neural-ucb, whose references take up to a second a round, the paper's T = 2000 for
  neurallog-ucb-2, 100 rounds for the dueling agents; neural-ensemble-pp 400, of which rounds
  128-400 train and are timed; lmc-ts 200), the best seed. The reference trains on
  the **full history**
  (``--torch-data history``, default: what the papers' code does, so its cost per round grows
  with t) or on the per-arm statistics (``stats``, the engine's data: the same gradients, flat
  in t). The ratio is taken against the faster of the two data modes measured, so it is a lower
  bound for the papers' full-history code at larger t. One thread (``--torch-threads``): the
  ops are tiny (well below PyTorch's intra-op grain), and on a loaded 2-core machine a second
  thread only spins.

Adding an agent: write a reference class (see ``TorchNeuralES``; for a dueling agent,
``TorchNVLDB``; for one checked against the agent's ``update`` with its own random draws,
``TorchEnsemblePP`` or ``TorchLMCTS``) and decorate it with ``@torch_reference("agent-name",
env="env-name")``; the environment needs a NumPy twin in ``NUMPY_ENVS``.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time

import numpy as np

from benchmarks.timing import (
    BLOCK_RUNS_HELP,
    CPU_DEVICES_HELP,
    block_runs_option,
    fmt_rate,
    int_list,
    matmul_gflops,
    parse_agent_spec,
    print_table,
    time_jax,
)
from tests.references.parity import regret_agreement
from tests.references.torch_neural import (
    REFERENCE_ENVS,
    TORCH_REFERENCES,
    check_training,
    import_torch,
    torch_run,
)

# jax, jaxbandits and torch are imported in main() and the functions below, after --cpu-devices
# has split the CPU; the module itself imports without either.

TARGET_RATIO = 20.0  # the goal at TARGET_RUNS runs, against the PyTorch loop
TARGET_RUNS = 100
DEFAULT_AGENTS = "neural-es,neural-ucb,neurallog-ucb-2"
INSTALL_HINT = ("pip install -e '.[bench]'   (the CPU build torch==2.13.0; on this project's "
                "machines it installs under Python 3.11)")

def flatness(env, agent, horizons: list[int], runs: int, *, repeats: int, chunk_size: int,
             seed: int, max_time: float = math.inf) -> list:
    """One simulate call per horizon (the best of ``repeats``; no further repeat once
    ``max_time`` seconds went into that horizon); the per-round time of each window between
    consecutive horizons, from the differences of the wall times."""
    import jaxbandits as jb

    rows, prev_h, prev_wall = [], 0, 0.0
    for h in horizons:
        walls = []
        for _ in range(repeats):
            if walls and sum(walls) >= max_time:
                break
            walls.append(jb.simulate(env, agent, seed, h, runs, progress=False,
                                     chunk_size=chunk_size).wall_time)
        wall = min(walls)
        window = (wall - prev_wall) / (h - prev_h)
        rows.append({"horizon": h, "rate": runs * h / wall, "window": (prev_h + 1, h),
                     "ms_per_round": 1e3 * window})
        prev_h, prev_wall = h, wall
    return rows


# ------------------------------------------------------------------------------------------------
# Command line.


def parse_entry(text: str) -> tuple[str, dict]:
    """``name[:field=value...]`` -> ``(name, overrides)``."""
    name, overrides = parse_agent_spec(text)
    return name, dict(overrides)


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--agents", default=DEFAULT_AGENTS,
                   help="comma-separated agents, each name[:field=value...] (PyTorch "
                        f"references: {', '.join(TORCH_REFERENCES)}); an agent jaxbandits does "
                        "not have is skipped with a note")
    p.add_argument("--runs", type=int_list, default=None,
                   help="comma-separated run counts (default 1,10,100; quick: 1,2)")
    p.add_argument("--horizon", type=int, default=None,
                   help="JAX rounds per timed simulate call, rounded up to a multiple of the "
                        "agent's update_every (default 20, neural-ensemble-pp 100; quick: 2)")
    p.add_argument("--chunk-size", type=int, default=None,
                   help="simulate's chunk_size for every JAX call, so that the timing, flatness "
                        "and regret runs of a run count share one compiled program "
                        "(default 10; quick: 2)")
    p.add_argument("--flat-horizons", type=int_list, default=None,
                   help="horizons of the flatness runs (default 50,200,800, B/2,B,2B for "
                        "an agent with a ring buffer of B rows, T/2,T,2T for lmc-ts (T its "
                        "PyTorch horizon); quick: 4,8)")
    p.add_argument("--flat-runs", type=int, default=1, help="runs of the flatness runs")
    p.add_argument("--torch-horizon", type=int, default=None,
                   help="rounds per PyTorch seed, also the horizon of the regret check "
                        "(default: the warm-up plus 60, neurallog-ucb-2 the paper's 2000, "
                        "the dueling agents 100, neural-ensemble-pp 400, lmc-ts 200; "
                        "quick: the warm-up plus 2, or one training period)")
    p.add_argument("--torch-data", choices=("history", "stats", "both"), default=None,
                   help="the PyTorch reference's training data: the full history (the papers' "
                        "code), the per-arm statistics, or both (default both; quick: history)")
    p.add_argument("--torch-threads", type=int, default=1, help="torch.set_num_threads")
    p.add_argument("--torch-device", default="cpu",
                   help="device of the PyTorch reference (cpu, cuda): the papers' code runs on "
                        "a GPU when it has one, one seed at a time")
    p.add_argument("--check-seeds", type=int, default=None,
                   help="PyTorch seeds (timed and regret-checked) (default 3; quick: 1)")
    p.add_argument("--check-runs", type=int, default=None,
                   help="JAX runs of the regret check (default 100; quick: 2)")
    p.add_argument("--repeats", type=int, default=None,
                   help="timing trials per JAX measurement, best reported (default 2; quick: 1)")
    p.add_argument("--min-time", type=float, default=None,
                   help="seconds of JAX wall time per trial (default 1.0; quick: 0.01)")
    p.add_argument("--dim", type=int, default=20, help="d of the quadratic environment")
    p.add_argument("--num-arms", type=int, default=50, help="K of the quadratic environment")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-torch", action="store_true", help="JAX numbers only")
    p.add_argument("--block-runs", type=block_runs_option, default=None, help=BLOCK_RUNS_HELP)
    p.add_argument("--cpu-devices", type=int, default=None, help=CPU_DEVICES_HELP)
    p.add_argument("--quick", action="store_true", help="tiny sizes: a smoke test")
    p.add_argument("--markdown", action="store_true", help="print the tables as markdown")
    args = p.parse_args(argv)
    quick = args.quick
    args.horizon_set = args.horizon is not None  # else a reference's steady_horizon may apply
    defaults = {
        "runs": [1, 2] if quick else [1, 10, 100],
        "horizon": 2 if quick else 20,
        "chunk_size": 2 if quick else 10,
        "flat_horizons": [4, 8] if quick else [50, 200, 800],
        "torch_data": "history" if quick else "both",
        "check_seeds": 1 if quick else 3,
        "check_runs": 2 if quick else 100,
        "repeats": 1 if quick else 2,
        "min_time": 0.01 if quick else 1.0,
    }
    # None: an agent with a ring buffer of B rows picks B/2, B, 2B (quick: the defaults)
    args.flat_horizons_set = args.flat_horizons or ([4, 8] if quick else None)
    for field, value in defaults.items():
        if getattr(args, field) is None:
            setattr(args, field, value)
    try:
        args.agents = [parse_entry(a) for a in args.agents.split(",") if a.strip()]
    except ValueError as error:
        p.error(str(error))
    if sorted(args.flat_horizons) != args.flat_horizons:
        p.error("--flat-horizons must increase")
    return args


def _label(name: str, overrides: dict) -> str:
    if not overrides:
        return name
    return name + "[" + ",".join(f"{k}={v}" for k, v in overrides.items()) + "]"


def _warmup(agent, env, name: str) -> int:
    """Rounds before the agent's rule (or, for a reference that says so, its training) starts:
    the rounds the PyTorch rate leaves out."""
    reference = TORCH_REFERENCES.get(name)
    if hasattr(reference, "warmup_rounds"):
        return reference.warmup_rounds(agent)
    return agent.warmup_rounds(env.spec())


def _torch_horizon(args, agent, env, name: str) -> int:
    """Rounds per PyTorch seed: ``--torch-horizon``, else the reference's own (the paper's T),
    else the warm-up plus 60 rounds (quick: plus one training period)."""
    warmup = _warmup(agent, env, name)
    every = int(_setting(agent, "update_every", 1))
    if args.torch_horizon:
        return args.torch_horizon
    if args.quick:
        return warmup + max(2, every)
    reference = TORCH_REFERENCES.get(name)
    return getattr(reference, "horizon", None) or warmup + max(60, every)


def _setting(agent, field: str, default):
    """An agent's value of ``field`` once its preset is applied (``resolved()`` or
    ``setting()``), ``default`` when it has no such field."""
    if hasattr(agent, "resolved"):
        agent = agent.resolved()
    if hasattr(agent, "setting") and hasattr(agent, field):
        return agent.setting(field)
    value = getattr(agent, field, default)
    return default if value is None else value


def _round_up(value: int, multiple: int) -> int:
    return max(multiple, -(-value // multiple) * multiple)


def nvldb_flops(agent, dim: int, horizon: int) -> float | None:
    """FLOP per seed-step of an NVLDB / NLDB agent's rounds 1..``horizon`` from an empty buffer
    (None for any other agent): round t trains ``n`` Adam steps on t pairs, each a forward and a
    backward pass (about 3 forward passes) over the 2t arms, and rebuilds ``V`` with one more
    forward pass: ``2 MACs 2t (3n + 1)``, ``MACs = d m + (L - 2) m^2 + m D`` per arm; averaged
    over t, with t capped at the buffer's size (the selection's K arms and the D x D algebra are
    negligible)."""
    from jaxbandits.agents import NVLDB

    if not isinstance(agent, NVLDB):
        return None
    net = agent.network(dim)
    macs = (net.in_features * net.width + (net.depth - 2) * net.width**2
            + net.width * net.out_features)
    rows = np.minimum(np.arange(1, horizon + 1), agent.buffer_size or horizon).mean()  # mean t
    steps = agent.num_grad_steps / agent.update_every
    return 2.0 * macs * 2.0 * rows * (3.0 * steps + 1.0)


def main(argv=None) -> int:
    args = parse_args(argv)
    t0 = time.perf_counter()
    import jax

    import jaxbandits as jb
    from jaxbandits.registry import agent_names

    jb.use_cpu_cores(args.cpu_devices)
    jb.use_compilation_cache()  # compile times are reported apart; the cache shortens reruns

    torch = None if args.no_torch else import_torch()
    have_torch = torch is not None
    if have_torch:
        torch.set_num_threads(args.torch_threads)
        torch.set_default_device(args.torch_device)
    print(f"jaxbandits neural throughput benchmark | jax {jax.__version__}, backend "
          f"{jax.default_backend()}, {jax.device_count()} device(s) "
          f"[{jax.devices()[0].device_kind}] | "
          + (f"torch {torch.__version__} on {args.torch_device} ({torch.get_num_threads()} "
             f"thread(s))" if have_torch else "torch: not used") +
          f" | python {platform.python_version()} | {os.cpu_count()} CPU(s), load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"JAX: warmup=0, {args.horizon}+ rounds per call (agents with a ring buffer: the "
          f"PyTorch horizon), chunk "
          f"{args.chunk_size}, best of {args.repeats} trial(s) of >= {args.min_time:g} s; "
          f"flatness at {args.flat_runs} run(s), horizons "
          f"{','.join(map(str, args.flat_horizons))}"
          f"{'; quick mode' if args.quick else ''}")
    if not have_torch:
        why = "--no-torch" if args.no_torch else "PyTorch is not installed"
        print(f"[note] {why}: JAX numbers only. The PyTorch reference is an optional "
              f"benchmark dependency: {INSTALL_HINT}")
    sys.stdout.flush()

    known = set(agent_names())
    timing_rows, flat_rows, notes, summary = [], [], [], []
    for name, overrides in args.agents:
        label = _label(name, overrides)
        if name not in known:
            note = f"[skip] {name}: jaxbandits has no agent of this name (yet)"
            print(note)
            notes.append(note)
            continue
        env_name = REFERENCE_ENVS.get(name, "quadratic")
        env_kwargs = {"dim": args.dim, "num_arms": args.num_arms} if env_name == "quadratic" \
            else {}
        env = jb.make_env(env_name, **env_kwargs)
        known_reference = TORCH_REFERENCES.get(name)
        defaults = dict(getattr(known_reference, "agent_defaults", {}))
        agent = jb.make_agent(name, **{**defaults, **overrides})
        if env.spec().action_kind == "pair" and getattr(agent, "buffer_size", 0) is None:
            # A pair history (dueling): the buffer make_agent sizes for the horizon both sides
            # play (min(T, AUTO_BUFFER) rows: the whole history, as the reference keeps).
            agent = jb.make_agent(name, env=env, horizon=_torch_horizon(args, agent, env, name),
                                  **overrides)
        every = int(_setting(agent, "update_every", 1))
        period = math.lcm(every, args.chunk_size)
        reference = known_reference if have_torch else None
        buffer = getattr(agent, "buffer_size", None)
        growth = getattr(known_reference, "growth", None) or (
            "flat" if buffer is None else "buffer")
        if growth == "flat":
            # Per-arm statistics, or minibatches of a fixed size: every round after the warm-up
            # (the training start) costs the same.
            steady_horizon = getattr(known_reference, "steady_horizon", None)
            if args.horizon_set or args.quick or steady_horizon is None:
                steady_horizon = args.horizon
            horizon = _round_up(steady_horizon, period)
            flat_horizons = args.flat_horizons
            timed = f"timed horizon {horizon}"
        elif growth == "history":
            # Training on the whole history (LMC-TS): a round costs O(t), on both sides. Time the
            # PyTorch reference's horizon from an empty history; the history holds every round
            # of the runs (no sliding window): the flatness horizons T/2, T, 2T included.
            horizon = _round_up(_torch_horizon(args, agent, env, name), period)
            flat_horizons = args.flat_horizons_set or [max(1, horizon // 2), horizon,
                                                       2 * horizon]
            if buffer is None:
                buffer = max([horizon] + [_round_up(h, period) for h in flat_horizons])
                agent = agent.replace(buffer_size=buffer)
            timed = (f"timed horizon {horizon} from an empty history (the PyTorch reference's "
                     f"rounds; {buffer} rows kept)")
        else:
            # A ring buffer: training covers the filled rows, so a round costs more as the
            # buffer fills (up to buffer_size rows, flat after), like the papers' code on its
            # history. Time the whole horizon the PyTorch reference plays, so both average the
            # same rounds, and show the growth and the plateau (B/2, B, 2B).
            horizon = _round_up(_torch_horizon(args, agent, env, name), period)
            flat_horizons = args.flat_horizons_set or [
                max(1, buffer // 2), buffer, 2 * buffer]
            timed = (f"timed horizon {horizon} from an empty buffer of {buffer} rows (the "
                     f"PyTorch reference's rounds)")
        if hasattr(known_reference, "steady_agent"):
            steady = known_reference.steady_agent(agent)
        else:
            steady = agent.replace(warmup=0) if hasattr(agent, "warmup") else agent
        preset = f", preset {agent.preset}" if getattr(agent, "preset", None) else ""
        steady_note = ("; JAX timed with update_start=1 (training every round, the cost of a "
                       "round past the start)") if steady is not agent and hasattr(
                           steady, "update_start") else ""
        print(f"\n== {label} on {env_name} (d={env.dim}, K={env.num_arms}{preset}); trains every "
              f"{every} round(s), {_setting(agent, 'num_grad_steps', 1)} gradient steps; "
              f"{timed}{steady_note}")
        sys.stdout.flush()

        # PyTorch reference: the training check, then the timed regret-check seeds.
        torch_rates, check, check_result = {}, None, None
        max_time = getattr(known_reference, "trial_max_time", math.inf)
        if have_torch and reference is None:
            print(f"[note] {label}: no PyTorch reference; JAX numbers only")
        if reference is not None:
            train = check_training(env, agent, name, seed=args.seed, quick=args.quick)
            verdict = "consistent" if train["ok"] else "MISMATCH: check the PyTorch reference"
            errors = ", ".join(f"{v:.1e} ({k})" for k, v in train["errors"].items())
            what = f" ({train['what']})" if train.get("what") else ""
            print(f"[check] {label}: one training round from identical inputs{what}: max "
                  f"|theta_torch - theta_jax| / max |theta| = {errors}; the round moved theta "
                  f"by {train['moved']:.1e}{train.get('note', '')} -> {verdict}")
            warmup = _warmup(agent, env, name)
            torch_horizon = _torch_horizon(args, agent, env, name)
            asked = ["history", "stats"] if args.torch_data == "both" else [args.torch_data]
            modes = [mode for mode in asked if mode in reference.data_modes]
            if not modes:
                modes = list(reference.data_modes[:1])
                print(f"[note] {label}: the PyTorch reference has no {args.torch_data} mode; "
                      f"using {modes[0]}")
            regrets = []
            for mode in modes:
                rates, early, late = [], [], []
                # the regret check uses the papers' data (history) on every seed; the other
                # mode is timed on one seed
                seeds = args.check_seeds if mode == modes[0] else 1
                for s in range(seeds):
                    out = torch_run(env, agent, name, torch_horizon, 10_000 + s, mode)
                    if mode == modes[0]:
                        regrets.append(out["regret"])
                    times = out["times"][out["warmup"]:]
                    if times.size:
                        rates.append(times.size / times.sum())
                        w = max(1, min(max(10, 2 * every), times.size // 3))
                        early.append(1e3 * times[:w].mean())
                        late.append(1e3 * times[-w:].mean())
                if rates:
                    best = int(np.argmax(rates))
                    torch_rates[mode] = rates[best]
                    print(f"[torch] {label} ({mode}): {fmt_rate(rates[best])} seed-steps/s over"
                          f" rounds {warmup + 1}-{torch_horizon} (best of {len(rates)} seed(s));"
                          f" {early[best]:.1f} ms per round early, {late[best]:.1f} ms late")
                    sys.stdout.flush()
            check_runs = args.check_runs
            result = jb.simulate(env, agent, args.seed, torch_horizon, check_runs,
                                 progress=False, chunk_size=args.chunk_size)
            if steady is agent and torch_horizon == horizon:  # also a timing trial (below)
                check_result = result
            jax_mean, jax_half = result.final("regret")
            agreement = regret_agreement(regrets, jax_mean, jax_half, check_runs)
            np_mean, np_half = agreement["np_regret"], agreement["np_half"]
            consistent = agreement["consistent"]
            check = {"train": train, "consistent": consistent}
            verdict = "consistent" if consistent else "MISMATCH: check the PyTorch reference"
            print(f"[check] {label}: final regret at T={torch_horizon}: PyTorch "
                  f"({modes[0]}) {np_mean:.2f} +- {np_half:.2f} ({len(regrets)} seed(s)), JAX "
                  f"{jax_mean:.2f} +- {jax_half:.2f} ({check_runs} runs) -> {verdict}")
            sys.stdout.flush()
        torch_rate = max(torch_rates.values()) if torch_rates else None
        torch_mode = max(torch_rates, key=torch_rates.get) if torch_rates else None

        # JAX: steady-state rate per run count, then flatness.
        for runs in args.runs:
            if (check_result is not None and runs == args.check_runs
                    and check_result.wall_time >= min(max_time, args.min_time)):
                # The regret-check call was this very call (the same compiled program,
                # horizon and runs) and took long enough to be a trial of its own.
                m = {"rate": runs * horizon / check_result.wall_time,
                     "wall": check_result.wall_time, "compile": check_result.compile_time,
                     "calls": 1}
                if check_result.wall_time < max_time:  # room for the other trials
                    more = time_jax(env, steady, horizon, runs, repeats=args.repeats - 1,
                                    min_time=args.min_time, chunk_size=args.chunk_size,
                                    seed=args.seed, max_time=max_time,
                                    block_runs=args.block_runs)
                    if more["rate"] > m["rate"]:
                        m = {**more, "compile": m["compile"]}
                    m["calls"] = 1 + more["calls"]
            else:
                m = time_jax(env, steady, horizon, runs, repeats=args.repeats,
                             min_time=args.min_time, chunk_size=args.chunk_size,
                             seed=args.seed, max_time=max_time, block_runs=args.block_runs)
            ratio = m["rate"] / torch_rate if torch_rate else None
            timing_rows.append({"agent": label, "runs": runs, "horizon": horizon, **m,
                                "torch": torch_rate, "torch_mode": torch_mode, "ratio": ratio})
            print(f"[jax]   {label} runs={runs}: {fmt_rate(m['rate'])} seed-steps/s, compile "
                  f"{m['compile']:.2f} s, {m['calls']} call(s)")
            sys.stdout.flush()
        horizons = [_round_up(h, period) for h in flat_horizons]
        horizons = sorted(set(horizons))
        rows = flatness(env, steady, horizons, args.flat_runs, repeats=args.repeats,
                        chunk_size=args.chunk_size, seed=args.seed, max_time=max_time)
        for row in rows:
            flat_rows.append({"agent": label, "runs": args.flat_runs, **row})
        first, last = rows[0]["ms_per_round"], rows[-1]["ms_per_round"]
        print(f"[flat]  {label}: {first:.2f} ms per round in rounds {rows[0]['window'][0]}-"
              f"{rows[0]['window'][1]}, {last:.2f} in rounds {rows[-1]['window'][0]}-"
              f"{rows[-1]['window'][1]} (late / early = {last / first:.2f})")
        sys.stdout.flush()
        summary.append((label, check, nvldb_flops(steady, env.spec().dim, horizon)))

    print()
    header = ["agent", "runs", "horizon", "compile s", "wall s", "JAX seed-steps/s",
              "PyTorch seed-steps/s", "ratio"]
    body = [[r["agent"], str(r["runs"]), str(r["horizon"]), f"{r['compile']:.2f}",
             f"{r['wall']:.2f}", fmt_rate(r["rate"]),
             fmt_rate(r["torch"]) + (f" ({r['torch_mode']})" if r["torch_mode"] else ""),
             f"{r['ratio']:.1f}x" if r["ratio"] else "-"] for r in timing_rows]
    if body:
        print_table(header, body, args.markdown)
        print()
        header = ["agent", "runs", "horizon", "JAX seed-steps/s", "rounds", "ms per round"]
        body = [[r["agent"], str(r["runs"]), str(r["horizon"]), fmt_rate(r["rate"]),
                 f"{r['window'][0]}-{r['window'][1]}", f"{r['ms_per_round']:.2f}"]
                for r in flat_rows]
        print_table(header, body, args.markdown)
        print()
    for note in notes:
        print(note)
    top = max(args.runs)
    peak = matmul_gflops() if any(flops for *_, flops in summary) else None
    for label, check, flops in summary:
        row = next(r for r in timing_rows if r["agent"] == label and r["runs"] == top)
        if row["ratio"] is None:
            why = "PyTorch not used" if not have_torch else "no PyTorch reference"
            print(f"ratio {label} at {top} runs: - ({why})")
            continue
        status = ""
        if top >= TARGET_RUNS:
            met = "met" if row["ratio"] >= TARGET_RATIO else "NOT met"
            status = f" (target >= {TARGET_RATIO:g}x at {TARGET_RUNS} runs: {met})"
        checks = "" if check is None or (check["train"]["ok"] and check["consistent"]) else \
            " [reference check failed]"
        print(f"ratio {label} at {top} runs: {row['ratio']:.1f}x against PyTorch "
              f"({row['torch_mode']}){status}{checks}")
        if flops:
            need = TARGET_RATIO * row["torch"] * flops / 1e9
            print(f"roofline {label} at {top} runs: about {flops / 1e6:.3g} MFLOP of training "
                  f"per seed-step, so {row['rate'] * flops / 1e9:.3g} GFLOP/s (PyTorch "
                  f"{row['torch'] * flops / 1e9:.3g}); a {TARGET_RATIO:g}x ratio needs "
                  f"{need:.3g} GFLOP/s, {100 * need / peak:.0f}% of the {peak:.3g} GFLOP/s "
                  "of a 2048 x 2048 float32 matmul here")
    if not have_torch:
        print(f"PyTorch reference not run; to compare, install it: {INSTALL_HINT}")
    print(f"total benchmark time {time.perf_counter() - t0:.1f} s; load average at the end "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
