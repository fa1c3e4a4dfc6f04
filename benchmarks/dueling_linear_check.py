"""The linear dueling baselines on NVLDB's synthetic tasks, next to the first author's linear code.

Runs ``colstim``, ``maxinp`` and ``maxpair-ucb`` with ``preset="rcdp"`` (the settings of the
NVLDB first author's linear code, rcdp-public: ColSTIM and MaxInP with scale 0.5, MaxPairUCB
with sqrt(d), lambda = 1, one online Newton step a round), uniform pairs, and the default
(``preset="vacdb"``) agents and ``vacdb``, on ``dueling-cosine``, ``-square`` and ``-quadratic``
(``quadratic_form="vector"``), and prints R(T)/T (mean ± s.e.) beside that code's numbers
(:data:`REFERENCE`: d = K = 5, T = 2,000, 20 seeds, BTL). Known differences: rcdp-public's MaxInP
is a leader/challenger variant (here the library's symmetric CSYM rule); uniform pairs here are
two distinct arms (the same expected regret). Not a test (minutes on a 2-core CPU)::

    python -m benchmarks.dueling_linear_check                # 20 runs, T = 2000
    python -m benchmarks.dueling_linear_check --runs 4 --horizon 200
"""

from __future__ import annotations

import argparse
import time

import jaxbandits as jb
from benchmarks import framework as C

TASKS = {  # label: (environment, overrides)
    "cosine": ("dueling-cosine", {}),
    "square": ("dueling-square", {}),
    "quadratic (vector)": ("dueling-quadratic", {"quadratic_form": "vector"}),
}
REFERENCE = {  # R^a(T)/T of the first author's linear code (rcdp-public)
    "cosine": {"colstim": 0.703, "maxinp": 0.699, "maxpair-ucb": 0.650, "random": 0.724},
    "square": {"colstim": 4.654, "maxinp": 4.615, "maxpair-ucb": 3.124, "random": 5.157},
    "quadratic (vector)": {"colstim": 0.481, "maxinp": 0.476, "maxpair-ucb": 0.423,
                           "random": 0.516},
}
AGENTS = {  # label: (registered name, overrides, reference column)
    "colstim (rcdp)": ("colstim", {"preset": "rcdp"}, "colstim"),
    "maxinp (rcdp)": ("maxinp", {"preset": "rcdp"}, "maxinp"),
    "maxpair-ucb (rcdp)": ("maxpair-ucb", {"preset": "rcdp"}, "maxpair-ucb"),
    "uniform pairs": ("random", {}, "random"),
    "colstim (vacdb)": ("colstim", {}, None),
    "maxinp (vacdb)": ("maxinp", {}, None),
    "maxpair-ucb (vacdb)": ("maxpair-ucb", {}, None),
    "vacdb": ("vacdb", {}, None),
}


def main(argv=None) -> dict[str, dict[str, tuple[float, float]]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--horizon", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--agents", default=",".join(AGENTS),
                        help="comma-separated labels of AGENTS to run")
    parser.add_argument("--cpu-devices", type=int, default=None)
    args = parser.parse_args(argv)
    jb.use_cpu_cores(args.cpu_devices)
    jb.use_compilation_cache()
    labels = [label.strip() for label in args.agents.split(",") if label.strip()]
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for task, (env_name, overrides) in TASKS.items():
        env = jb.make_env(env_name, **overrides)
        agents = {}
        for label in labels:
            name, agent_overrides, _ = AGENTS[label]
            agents[label] = (jb.make_agent(name, env=env, horizon=args.horizon,
                                           **agent_overrides) if name != "random"
                             else jb.make_agent(name))
        start = time.perf_counter()
        results = jb.compare(env, agents, args.seed, horizon=args.horizon,
                             num_runs=args.runs, progress=False)
        out[task] = {label: C.mean_se(C.final_regret(r) / args.horizon)
                     for label, r in results.items()}
        table = C.Table(f"{task}: R(T)/T, T = {args.horizon}, {args.runs} runs "
                        f"({time.perf_counter() - start:.0f} s)",
                        ["agent", "R(T)/T (mean ± s.e.)", "reference (authors' code)"])
        for label in labels:
            mean, se = out[task][label]
            column = AGENTS[label][2]
            ref = REFERENCE[task][column] if column else None
            table.add(label, f"{mean:.3f} ± {se:.3f}", "" if ref is None else f"{ref:.3f}")
        table.print(plain=True)
    return out


if __name__ == "__main__":
    main()
