"""The disjoint (per-arm) linear model against MABWiser and OBP, on the same instances.

The engine (``jb.envs.ArrayEnv``) and each peer in its own Python (``_disjoint_peers_child.py``)
play the same NumPy-drawn runs; then the engine's rate of each disjoint agent against its
shared-theta counterpart on ``linear``. docs/benchmarks.md has the figures and commands::

    python -m benchmarks.disjoint_peers --quick          # a smoke test, engine only
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import jaxbandits as jb
from benchmarks.timing import cli, print_table

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


def play_peers(pythons: dict, instances: tuple, algorithms, hp: dict, budget: float = 0,
               meanwhile=None) -> dict:
    """``{library: what its child wrote}`` (final regrets as arrays) for each ``{library:
    python}`` playing ``instances`` (``draw_instances``) in parallel, ``meanwhile()`` called
    while they run; a peer that failed is said and left out."""
    done = {}
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "instances.npz"
        np.savez(path, **dict(zip(("shared", "means", "rewards"), instances, strict=True)),
                 algorithms=np.array(algorithms), **hp)
        running = {lib: subprocess.Popen(
            [py, str(CHILD), str(path), lib, str(Path(folder) / f"{lib}.json")]
            + ([str(budget)] if budget else []),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for lib, py in pythons.items() if py}
        if meanwhile is not None:
            meanwhile()
        for lib, process in running.items():
            err = process.communicate()[1].strip()
            if process.returncode != 0:
                print(f"{lib}: failed ({err.splitlines()[-1] if err else '?'})")
                continue
            data = json.loads((Path(folder) / f"{lib}.json").read_text())
            done[lib] = {**data, "final_regret": {k: np.asarray(v) for k, v in
                                                  data["final_regret"].items()}}
    return done


def mean_se(values: np.ndarray) -> str:
    se = values.std(ddof=1) / np.sqrt(len(values)) if len(values) > 1 else float("nan")
    return f"{values.mean():.1f} ± {se:.1f}"


PAIRS = (("disjoint-lin-ucb", "lin-ucb", "alpha"), ("disjoint-lin-ts", "lin-ts", "v"),
         ("disjoint-epsilon-greedy", "epsilon-greedy", "epsilon"))


def rates(dim: int, arms: int, horizon: int, runs: int, hp: dict, repeats: int = 3,
          context_pool: int | None = None) -> list[tuple[str, str, float]]:
    """Seed-steps/s (compile excluded, best of ``repeats`` alternating passes) of each disjoint
    agent on ``disjoint-linear``, its shared-theta counterpart on ``linear`` (fixed and fresh
    arms) and ``random`` on both (what the environments cost alone)."""
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
    """The rate table (each rate over the disjoint agent's) and whether each disjoint agent is
    within 2x of its counterpart on ``linear``."""
    rate = {(agent, env): r for agent, env, r in measured}
    rows = [[agent, env, f"{rate[(agent, env)]:,.0f}",
             f"{rate[(agent, env)] / rate[(ours, 'disjoint-linear')]:.2f}"]
            for ours, theirs, _ in PAIRS for agent, env in (
                (ours, "disjoint-linear"), (theirs, "linear"), (theirs, "linear fresh_arms"))]
    rows += [["random", env, f"{rate[('random', env)]:,.0f}", "—"]
             for env in ("disjoint-linear", "linear")]
    print_table(["agent", "environment", "seed-steps/s", "this / disjoint agent's"], rows,
                markdown=True)
    env_ratio = rate[("random", "linear")] / rate[("random", "disjoint-linear")]
    print()
    for ours, theirs, _ in PAIRS:
        slower = rate[(theirs, "linear")] / rate[(ours, "disjoint-linear")]
        print(f"{ours} on disjoint-linear: {slower:.2f}x slower than {theirs} on linear "
              f"({'within' if slower <= 2.0 else 'NOT within'} 2x)")
    print(f"(random plays linear {env_ratio:.1f}x faster than disjoint-linear: what the "
          "environments cost alone, a round's context draw against a fixed arm set)")


def main(argv: list[str] | None = None) -> None:
    args = cli(__doc__, argv, runs=20, horizon=1000, dim=10, arms=20, noise=0.5,
               alpha=(1.0, "LinUCB's alpha"), v=(1.0, "LinTS's v (OBP: 1 only)"), epsilon=0.1,
               reg=(1.0, "lambda (OBP: 1 only)"), seed=0,
               mabwiser_python=(str, os.environ.get("JAXBANDITS_MABWISER_PYTHON"), None),
               obp_python=(str, os.environ.get("JAXBANDITS_OBP_PYTHON"), None),
               rate_runs=(1000, "runs of the rate comparison (0: skip it)"),
               rate_only=(False, "only the rate comparison (no regret table, no peers)"),
               context_pool=(0, "time disjoint-linear with context_pool=N (0: a fresh context "
                             "every round)"),
               cpu_devices=(1, "XLA CPU devices for the engine (0: one per core)"),
               quick=(False, "a smoke test: tiny, no peers"))
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

    def engine():
        start = time.perf_counter()
        finals["engine"] = run_engine(shared, means, rewards, hp, args.seed)
        print(f"engine: {time.perf_counter() - start:.1f} s (compiles included)")

    peers = play_peers({"mabwiser": args.mabwiser_python, "obp": args.obp_python},
                       (shared, means, rewards), ALGORITHMS, hp, meanwhile=engine)
    finals.update({lib: data["final_regret"] for lib, data in peers.items()})
    names = {"engine": "engine", "mabwiser": "MABWiser", "obp": "OBP"}
    columns = [lib for lib in ("engine", "mabwiser", "obp") if lib in finals]
    print(f"\nmean final regret ± standard error ({args.runs} runs, the same instances)\n")
    print_table(["algorithm", *(names[c] for c in columns)],
                [[LABELS[name], *(mean_se(finals[c][name]) if name in finals[c] else "—"
                                  for c in columns)] for name in ALGORITHMS], markdown=True)
    peers_done = [c for c in columns if c != "engine"]
    if peers_done:
        print("\npaired difference peer - engine, per run on the same instance (mean ± standard "
              "error; within noise when |mean| < 2 se)\n")
        print_table(["algorithm", *(names[c] for c in peers_done)],
                    [[LABELS[name], *(mean_se(finals[c][name] - finals["engine"][name])
                                      for c in peers_done)] for name in ALGORITHMS],
                    markdown=True)


if __name__ == "__main__":
    main()
