"""Ensemble++ (Li et al. 2024), App. F.2 / Fig. 10(f): LMC-TS and the baselines on every task.

Li et al. 2024, App. F.2: Ensemble++ (M = 8), Ensemble+, Greedy (the authors' presets, a 2 x 64
ReLU MLP), LMC-TS (the official configurations, the whole horizon in its buffer) and random on
the Quadratic, Neural, Shuttle and Mushroom tasks. Mushroom's file is read from ``--set
data_path=DIR`` or ``$JAXBANDITS_DATA``, else scikit-learn's breast_cancer stands in (the panel
says so). Claim: Ensemble++ ends below the others on every task. Evidence:
docs/reproductions/li-2024.md::

    python -m benchmarks.reproduce ensemble_pp_tasks --scale small --set data_path=~/data
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import jaxbandits as jb
from benchmarks import ensemble_pp_neural as neural
from benchmarks import framework as C

NAME = "ensemble_pp_tasks"
TITLE = "Ensemble++ App. F.2 / Fig. 10(f): LMC-TS, Ensemble+ and Greedy on every task"
AGENTS = (*neural.AGENTS, neural.LMC, neural.RANDOM)  # ES++, Ensemble+, EpiNet, Greedy, ...
#: task -> (environment, Ensemble++ preset, LMC-TS configuration: ``shuttle`` where the
#: official code has none)
TASKS = {"quadratic": ("quadratic-pool", "quadratic", "quadratic"),
         "neural": ("random-mlp-bernoulli", "neural-classification", "shuttle"),
         "shuttle": ("shuttle-epp", "shuttle", "shuttle"),
         "mushroom": ("mushroom-epp", "mushroom", "shuttle")}


@dataclasses.dataclass(frozen=True)
class Config:
    """T, runs, tasks, agents (labels of :data:`AGENTS`), the ensemble size, the backbone, field
    overrides of every index agent / of LMC-TS (tiny sizes), where Mushroom is read, and runner
    options."""

    horizon: int
    num_runs: int
    tasks: tuple[str, ...] = tuple(TASKS)
    agents: tuple[str, ...] = ("ES++", "Ensemble+", "Greedy", "LMC-TS", "random")
    ensemble_size: int = 8
    hidden: tuple[int, ...] = (64, 64)
    env_overrides: tuple[tuple[str, object], ...] = ()
    agent_overrides: tuple[tuple[str, object], ...] = ()
    lmc_overrides: tuple[tuple[str, object], ...] = ()
    data_path: str | None = None
    chunk_size: int = 1000
    num_records: int = 30


SCALES = {
    "tiny": Config(horizon=40, num_runs=2, tasks=("quadratic", "mushroom"),
                   agents=("ES++", "LMC-TS"), ensemble_size=2, hidden=(8,),
                   env_overrides=(("dim", 6), ("pool_size", 30), ("num_arms", 5)),
                   agent_overrides=(("batch_size", 8), ("buffer_size", 64), ("update_start", 8)),
                   lmc_overrides=(("backbone", jb.nets.MLPBackbone((8,), "leaky_relu")),
                                  ("num_grad_steps", 3)), chunk_size=40, num_records=10),
    "small": Config(horizon=1000, num_runs=4),
    "paper": Config(horizon=10_000, num_runs=10, agents=tuple(AGENTS), num_records=60),
}


def standin():
    """scikit-learn's breast_cancer with Ensemble++'s encoding (the Mushroom stand-in)."""
    import sklearn.datasets

    bunch = sklearn.datasets.load_breast_cancer()
    table = jb.data.make_table(bunch.data, bunch.target, name="breast_cancer")
    return jb.envs.ClassificationEnv(data=table, pool_size=None, sampling="sequential",
                                     normalize="none", unit_norm=True, noise_std=1.0)


def environment(task: str, c: Config):
    name = TASKS[task][0]
    if task in ("quadratic", "neural"):  # the authors' instance; their recipe at other sizes
        instance = "authors_recipe" if c.env_overrides else "authors"
        return jb.make_env(name, instance=instance, authors_rounds=c.horizon,
                           **dict(c.env_overrides)), task
    if task == "shuttle":
        return jb.make_env(name), task
    env, note = C.user_data(lambda: jb.make_env(name, path=c.data_path), standin, "Mushroom")
    return env, task + (" (stand-in: breast_cancer)" if note else "")


def agent(label: str, task: str, env, c: Config):
    """``ensemble_pp_neural``'s agent with the task's preset (LMC-TS: its configuration)."""
    preset = TASKS[task][2 if label == neural.LMC else 1]
    return neural.make_agent(label, neural.Task(task, task, preset, c.horizon, c.num_runs), c, env)


def experiments(c: Config) -> dict[str, C.Experiment]:
    options = C.run_options(c.horizon, c.chunk_size, c.num_records, block_runs=c.num_runs)
    out = {}
    for task in c.tasks:
        env, title = environment(task, c)
        out[title] = C.Experiment(env, {a: agent(a, task, env, c) for a in c.agents},
                                  c.horizon, c.num_runs, options=options)
    return out


def body(r: C.Run) -> C.Page:
    c = r.config
    panels = C.run_experiments(r, experiments(c))
    claims = [(f"[Fig. 10(f)] {other} ends above Ensemble++ on {key}",
               *C.worse_than(p[other], p["ES++"], tol=math.inf))
              for key, p in panels.items() for other in ("LMC-TS", "Ensemble+", "EpiNet", "Greedy")
              if other in p and "ES++" in p]
    return C.Page(C.draw_panels(panels), [C.final_table(
        "Final cumulative regret (mean ± 95% CI)", panels)], claims, (
        f"T = {c.horizon}, {c.num_runs} runs; Ensemble++ M = {c.ensemble_size}, backbone "
        f"{c.hidden}; agents {', '.join(c.agents)}."), {"panels": panels, "config": c})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
