"""The disjoint (per-arm) linear model against MABWiser and OBP, on the same instances.

Same problem, same hyperparameters: ``R`` runs of the disjoint linear bandit (d = 10, K = 20,
T = 1,000 by default; per run K unit theta*_a, a unit context x_t per round, rewards
``x_t^T theta*_a + N(0, 0.5^2)``) are drawn once with NumPy. The engine plays them through
``jb.envs.ArrayEnv`` (realised rewards as given, regret against the means), and each peer plays
the very same arrays in its own Python (``benchmarks/_disjoint_peers_child.py``):

=================  =====================  =========================  =========================
algorithm          engine                 MABWiser                   OBP 0.5.7
=================  =====================  =========================  =========================
LinUCB             ``disjoint-lin-ucb``   ``LinUCB(alpha,            ``LinUCB(epsilon=alpha)``
                   ``alpha``, ``reg``     l2_lambda=reg)``           (lambda fixed at 1)
LinTS              ``disjoint-lin-ts``    ``LinTS(alpha=v,           ``LinTS()`` (v = 1,
                   ``v``, ``reg``         l2_lambda=reg)``           lambda = 1)
epsilon-greedy     ``disjoint-epsilon-    ``LinGreedy(epsilon,       ``LinEpsilonGreedy(
                   greedy`` ``epsilon``   l2_lambda=reg)``           epsilon)``
=================  =====================  =========================  =========================

It prints the mean final regret with its standard error per algorithm and library (a peer is
left out when its Python is not given) and each peer's paired difference from the engine, then
the engine's rate (seed-steps per second, compile excluded) of each disjoint agent on
``disjoint-linear`` against its shared-theta counterpart on ``linear`` at the same d and K, and
whether it is within 2x (``--rate-only`` prints just that; ``random`` on both environments
shows what the environments cost alone). Peers run in their own
interpreters, named by ``--mabwiser-python`` / ``--obp-python`` or the environment variables
``JAXBANDITS_MABWISER_PYTHON`` / ``JAXBANDITS_OBP_PYTHON``::

    python -m benchmarks.disjoint_peers --mabwiser-python ~/venvs/mabwiser/bin/python \\
        --obp-python ~/venvs/obp/bin/python              # OBP 0.5.7 needs Python 3.10
    python -m benchmarks.disjoint_peers --rate-only      # the rates against `linear` only
    python -m benchmarks.disjoint_peers --quick          # a smoke test, engine only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import jaxbandits as jb

CHILD = Path(__file__).resolve().parent / "_disjoint_peers_child.py"
ALGORITHMS = ("lin-ucb", "lin-ts", "epsilon-greedy")
LABELS = {"lin-ucb": "LinUCB", "lin-ts": "LinTS", "epsilon-greedy": "epsilon-greedy"}


def draw_instances(runs: int, horizon: int, dim: int, arms: int, noise: float, seed: int):
    """``(shared (R, T, d), means (R, T, K), rewards (R, T, K))``: unit theta*_a and x_t."""
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(runs, arms, dim))
    theta /= np.linalg.norm(theta, axis=-1, keepdims=True)
    shared = rng.normal(size=(runs, horizon, dim))
    shared /= np.linalg.norm(shared, axis=-1, keepdims=True)
    means = np.einsum("rtd,rkd->rtk", shared, theta)
    rewards = means + noise * rng.normal(size=means.shape)
    return shared, means, rewards


def engine_agents(hp: dict) -> dict:
    return {
        "lin-ucb": jb.make_agent("disjoint-lin-ucb", alpha=hp["alpha"], reg=hp["reg"]),
        "lin-ts": jb.make_agent("disjoint-lin-ts", v=hp["v"], reg=hp["reg"]),
        "epsilon-greedy": jb.make_agent("disjoint-epsilon-greedy", epsilon=hp["epsilon"],
                                        reg=hp["reg"]),
    }


def run_engine(shared, means, rewards, hp: dict, seed: int) -> dict[str, np.ndarray]:
    env = jb.envs.ArrayEnv(shared=shared, means=means, rewards=rewards, seed=seed)
    results = jb.compare(env, engine_agents(hp), seed, horizon=shared.shape[1],
                         num_runs=shared.shape[0], progress=False)
    return {name: np.asarray(r.cumulative_regret)[:, -1] for name, r in results.items()}


def start_peer(python: str, library: str, instances: Path, folder: Path):
    out = folder / f"{library}.json"
    process = subprocess.Popen([python, str(CHILD), str(instances), library, str(out)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return process, out


def finish_peer(library: str, process, out: Path) -> dict | None:
    _, err = process.communicate()
    if process.returncode != 0:
        print(f"{library}: failed ({err.strip().splitlines()[-1] if err.strip() else '?'})")
        return None
    data = json.loads(out.read_text())
    return {name: np.asarray(v) for name, v in data["final_regret"].items()}


def mean_se(values: np.ndarray) -> str:
    se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")
    return f"{values.mean():.1f} ± {se:.1f}"


PAIRS = (("disjoint-lin-ucb", "lin-ucb", "alpha"), ("disjoint-lin-ts", "lin-ts", "v"),
         ("disjoint-epsilon-greedy", "epsilon-greedy", "epsilon"))


def rates(dim: int, arms: int, horizon: int, runs: int, hp: dict, repeats: int = 3,
          context_pool: int | None = None) -> list[tuple[str, str, float]]:
    """Seed-steps per second (play time, compile excluded, the best of ``repeats`` alternating
    passes, the default ``block_runs``) of each disjoint agent on ``disjoint-linear``, of its
    shared-theta counterpart on ``linear`` (one fixed arm set per run, the default) and on
    ``linear`` with fresh arms every round, and of ``random`` on ``disjoint-linear`` and
    ``linear`` (what the environment and the runner cost alone). ``context_pool``: the
    ``disjoint-linear`` option (N contexts per run, one shown per round) instead of a fresh
    context every round."""
    disjoint = jb.make_env("disjoint-linear", dim=dim, num_arms=arms, context_pool=context_pool)
    fixed = jb.make_env("linear", dim=dim, num_arms=arms)
    fresh = jb.make_env("linear", dim=dim, num_arms=arms, fresh_arms=True)
    cases = []
    for ours, theirs, field in PAIRS:
        cases.append((ours, "disjoint-linear", disjoint, jb.make_agent(ours, **{field: hp[field]})))
        shared_fields = {"epsilon": hp["epsilon"]} if field == "epsilon" else {}
        cases.append((theirs, "linear", fixed, jb.make_agent(theirs, **shared_fields)))
        cases.append((theirs, "linear fresh_arms", fresh, jb.make_agent(theirs, **shared_fields)))
    cases.append(("random", "disjoint-linear", disjoint, jb.make_agent("random")))
    cases.append(("random", "linear", fixed, jb.make_agent("random")))
    best = [0.0] * len(cases)
    for _ in range(repeats):
        for i, (_, _, env, agent) in enumerate(cases):
            result = jb.simulate(env, agent, 0, horizon=horizon, num_runs=runs, progress=False)
            best[i] = max(best[i], result.seed_steps_per_second)
    return [(agent, env, rate) for (agent, env, _, _), rate in zip(cases, best, strict=True)]


def print_rates(measured: list[tuple[str, str, float]]) -> None:
    """The rate table (each row's rate over the disjoint agent's: how many times faster) and
    the acceptance line: each disjoint agent within 2x of its counterpart on ``linear``."""
    rate = {(agent, env): r for agent, env, r in measured}
    print("| agent | environment | seed-steps/s | this / disjoint agent's |\n|---|---|---|---|")
    for ours, theirs, _ in PAIRS:
        base = rate[(ours, "disjoint-linear")]
        for agent, env in ((ours, "disjoint-linear"), (theirs, "linear"),
                           (theirs, "linear fresh_arms")):
            print(f"| {agent} | {env} | {rate[(agent, env)]:,.0f} | "
                  f"{rate[(agent, env)] / base:.2f} |")
    env_ratio = rate[("random", "linear")] / rate[("random", "disjoint-linear")]
    for env in ("disjoint-linear", "linear"):
        print(f"| random | {env} | {rate[('random', env)]:,.0f} | — |")
    print()
    for ours, theirs, _ in PAIRS:
        slower = rate[(theirs, "linear")] / rate[(ours, "disjoint-linear")]
        print(f"{ours} on disjoint-linear: {slower:.2f}x slower than {theirs} on linear "
              f"({'within' if slower <= 2.0 else 'NOT within'} 2x)")
    print(f"(random plays linear {env_ratio:.1f}x faster than disjoint-linear: what the "
          "environments cost alone, a round's context draw against a fixed arm set)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--horizon", type=int, default=1000)
    parser.add_argument("--dim", type=int, default=10)
    parser.add_argument("--arms", type=int, default=20)
    parser.add_argument("--noise", type=float, default=0.5)
    parser.add_argument("--alpha", type=float, default=1.0, help="LinUCB's alpha")
    parser.add_argument("--v", type=float, default=1.0, help="LinTS's v (OBP: 1 only)")
    parser.add_argument("--epsilon", type=float, default=0.1)
    parser.add_argument("--reg", type=float, default=1.0, help="lambda (OBP: 1 only)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mabwiser-python", default=os.environ.get("JAXBANDITS_MABWISER_PYTHON"))
    parser.add_argument("--obp-python", default=os.environ.get("JAXBANDITS_OBP_PYTHON"))
    parser.add_argument("--rate-runs", type=int, default=1000,
                        help="runs of the rate comparison (0: skip it)")
    parser.add_argument("--rate-only", action="store_true",
                        help="only the rate comparison (no regret table, no peers)")
    parser.add_argument("--context-pool", type=int, default=0,
                        help="time disjoint-linear with context_pool=N (N contexts per run) "
                             "instead of a fresh context every round (0: fresh)")
    parser.add_argument("--cpu-devices", type=int, default=1,
                        help="split the CPU into this many XLA devices for the engine "
                             "(jb.use_cpu_cores; default 1, XLA's single CPU device; 0: one "
                             "per core, as jaxbandits run does)")
    parser.add_argument("--quick", action="store_true", help="a smoke test: tiny, no peers")
    args = parser.parse_args(argv)
    jb.use_cpu_cores(args.cpu_devices or None)
    if args.quick:
        args.runs, args.horizon, args.rate_runs = 3, 50, 16
        args.mabwiser_python = args.obp_python = None
    hp = dict(alpha=args.alpha, v=args.v, epsilon=args.epsilon, reg=args.reg)
    if not args.rate_only:
        compare_regret(args, hp)
    if args.rate_runs:
        import jax

        print(f"\nengine rate, seed-steps/s ({args.rate_runs} runs, T = {args.horizon}, "
              f"d = {args.dim}, K = {args.arms}, {len(jax.devices())} "
              f"{jax.default_backend()} device(s), best of 3, compile excluded)\n")
        if args.context_pool:
            print(f"disjoint-linear with context_pool={args.context_pool}\n")
        print_rates(rates(args.dim, args.arms, args.horizon, args.rate_runs, hp,
                          context_pool=args.context_pool or None))


def compare_regret(args, hp: dict) -> None:
    """The regret table: the engine and the peers given on the same instances."""
    shared, means, rewards = draw_instances(args.runs, args.horizon, args.dim, args.arms,
                                            args.noise, args.seed)
    print(f"disjoint linear bandit: d = {args.dim}, K = {args.arms}, T = {args.horizon}, "
          f"{args.runs} runs, noise {args.noise}; alpha = {args.alpha}, v = {args.v}, "
          f"epsilon = {args.epsilon}, lambda = {args.reg}")
    finals = {}
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        instances = folder / "instances.npz"
        np.savez(instances, shared=shared, means=means, rewards=rewards,
                 algorithms=np.array(ALGORITHMS), **hp)
        peers = {lib: start_peer(py, lib, instances, folder)
                 for lib, py in (("mabwiser", args.mabwiser_python), ("obp", args.obp_python))
                 if py}
        start = time.perf_counter()
        finals["engine"] = run_engine(shared, means, rewards, hp, args.seed)
        print(f"engine: {time.perf_counter() - start:.1f} s (compiles included)")
        for lib, (process, out) in peers.items():
            got = finish_peer(lib, process, out)
            if got is not None:
                finals[lib] = got
    names = {"engine": "engine", "mabwiser": "MABWiser", "obp": "OBP"}
    columns = [lib for lib in ("engine", "mabwiser", "obp") if lib in finals]
    print(f"\nmean final regret ± standard error ({args.runs} runs, the same instances)\n")
    print("| algorithm | " + " | ".join(names[c] for c in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name in ALGORITHMS:
        cells = [mean_se(finals[c][name]) if name in finals[c] else "—" for c in columns]
        print(f"| {LABELS[name]} | " + " | ".join(cells) + " |")
    peers_done = [c for c in columns if c != "engine"]
    if peers_done:
        print("\npaired difference peer - engine, per run on the same instance (mean ± standard "
              "error; within noise when |mean| < 2 se)\n")
        print("| algorithm | " + " | ".join(names[c] for c in peers_done) + " |")
        print("|---|" + "---|" * len(peers_done))
        for name in ALGORITHMS:
            cells = [mean_se(finals[c][name] - finals["engine"][name]) for c in peers_done]
            print(f"| {LABELS[name]} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
