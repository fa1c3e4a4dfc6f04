"""The linear dueling baselines on NVLDB's synthetic tasks, next to the first author's linear code.

``colstim``, ``maxinp`` and ``maxpair-ucb`` with ``preset="rcdp"`` (rcdp-public's settings), uniform
pairs, the default agents and ``vacdb`` on cosine, square and quadratic (vector form): R(T)/T
(mean ± s.e.) beside that code's numbers (:data:`REFERENCE`, d = K = 5, T = 2,000, 20 seeds);
the differences: docs/guides/dueling.md. Not a test (minutes on a 2-core CPU)::

    python -m benchmarks.dueling_linear_check                # 20 runs, T = 2000
    python -m benchmarks.dueling_linear_check --runs 4 --horizon 200
"""

from __future__ import annotations

import time

import jaxbandits as jb
from benchmarks import framework as C
from benchmarks.timing import cli, start

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
    args = cli(__doc__, argv, runs=20, horizon=2000, seed=0,
               agents=(",".join(AGENTS), "comma-separated labels of AGENTS to run"),
               cpu_devices=(int, None, None))
    start(args.cpu_devices)
    chosen = {label.strip(): AGENTS[label.strip()] for label in args.agents.split(",")
              if label.strip()}
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for task, (env_name, overrides) in TASKS.items():
        env = jb.make_env(env_name, **overrides)
        agents = {label: jb.make_agent("random") if name == "random" else
                  jb.make_agent(name, env=env, horizon=args.horizon, **fields)
                  for label, (name, fields, _) in chosen.items()}
        begin = time.perf_counter()
        results = jb.compare(env, agents, args.seed, horizon=args.horizon,
                             num_runs=args.runs, progress=False)
        out[task] = {label: C.mean_se(C.final_regret(r) / args.horizon)
                     for label, r in results.items()}
        C.table(f"{task}: R(T)/T, T = {args.horizon}, {args.runs} runs "
                f"({time.perf_counter() - begin:.0f} s)",
                ["agent", "R(T)/T (mean ± s.e.)", "reference (authors' code)"],
                ([label, "{:.3f} ± {:.3f}".format(*out[task][label]),
                  f"{REFERENCE[task][column]:.3f}" if column else ""]
                 for label, (_, _, column) in chosen.items())).print(plain=True)
    return out


if __name__ == "__main__":
    main()
