"""Neural dueling bandits (Oh, Park & Paik): Figs. E.2-E.4, the d = 100 run, Figs. E.9-E.10.

Oh et al. 2026, App. E.1-E.4 and Sec. 6: Fig. 2's synthetic tasks with one size changed at a time
(E.2: width 100, E.3: d = 10, E.4: K = 10; d = 100 and the TS rules at m = 500 / 1,000 at
T = 10^4, lr 1e-3); setup and evidence: docs/reproductions/oh-2026.md::

    python -m benchmarks.reproduce dueling_scaling --scale small
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import jaxbandits as jb
from benchmarks import framework as C

NAME = "dueling_scaling"
TITLE = "NVLDB: Figs. E.2 (m = 100), E.3 (d = 10), E.4 (K = 10), d = 100, Figs. E.9-E.10"
LABELS = {"colstim": "CoLSTIM", "vacdb": "VACDB", "ndb-ucb": "NDB-UCB", "ndb-ts": "NDB-TS",
          "random": "uniform"}


@dataclasses.dataclass(frozen=True)
class Config:
    """Runs and T of Figs. E.2-E.4 (``tasks``: utilities; ``rules``: NVLDB arm selections;
    ``baselines``: registry names), their widths and sizes, and the T = 10^4 runs: ``long_*``
    (T, runs, lr), ``big_dim`` / ``big_width`` / ``big_rules`` (main text) and ``ts_widths`` /
    ``ts_rules`` (Figs. E.9-E.10); ``figures`` selects among ``E.2``, ``E.3``, ``E.4``,
    ``d100``, ``E.9``."""

    num_runs: int
    horizon: int
    tasks: tuple[str, ...] = ("cosine", "square", "quadratic")
    rules: tuple[str, ...] = ("ucb-asym", "ts-asym", "ucb-osym", "ts-osym", "ucb-csym",
                              "ts-csym")
    baselines: tuple[str, ...] = ("colstim", "vacdb", "ndb-ucb", "ndb-ts", "random")
    width: int = 32
    wide: int = 100
    dim: int = 5
    num_arms: int = 5
    large_dim: int = 10
    many_arms: int = 10
    long_horizon: int = 10_000
    long_runs: int = 20
    long_lr: float = 1e-3
    big_dim: int = 100
    big_width: int = 100
    big_rules: tuple[str, ...] = ("ucb-asym", "ucb-osym", "ucb-csym")
    ts_widths: tuple[int, ...] = (500, 1000)
    ts_rules: tuple[str, ...] = ("ts-asym", "ts-osym", "ts-csym")
    figures: tuple[str, ...] = ("E.2", "E.3", "E.4", "d100", "E.9")
    chunk_size: int = 500
    num_records: int = 40


SCALES = {
    "tiny": Config(num_runs=8, horizon=100, tasks=("square",), rules=("ucb-asym",),
                   baselines=("random",), wide=8, width=8, large_dim=6, many_arms=8,
                   long_horizon=100, long_runs=2, big_dim=8, big_width=8, big_rules=("ucb-asym",),
                   ts_widths=(8,), ts_rules=("ts-osym",), figures=("E.2", "d100"),
                   chunk_size=100, num_records=12),
    "small": Config(num_runs=4, horizon=500, tasks=("square",), rules=("ucb-asym", "ts-osym"),
                    baselines=("colstim", "vacdb", "random"), long_horizon=1000, long_runs=2,
                    big_rules=("ucb-asym",), ts_widths=(500,), ts_rules=("ts-osym",)),
    "paper": Config(num_runs=20, horizon=2000, chunk_size=1000, num_records=60),
}


def nvldbs(rules: Sequence[str], env, horizon: int, **fields) -> dict:
    """``{"NVLDB-<RULE>": agent}`` keeping ``horizon`` pairs; ``fields`` override."""
    return {f"NVLDB-{r.upper()}": jb.make_agent(f"nvldb-{r}", env=env, horizon=horizon,
                                                buffer_size=horizon, **fields) for r in rules}


def baseline(name: str, env, horizon: int):
    if name == "random":
        return jb.make_agent("random")
    extra = {"buffer_size": horizon} if name.startswith("ndb") else {}
    return jb.make_agent(name, env=env, horizon=horizon, **extra)


def experiments(c: Config) -> dict[str, C.Experiment]:
    sizes = {"E.2": (c.dim, c.num_arms, c.wide, f"m = {c.wide}"),
             "E.3": (c.large_dim, c.num_arms, c.width, f"d = {c.large_dim}"),
             "E.4": (c.dim, c.many_arms, c.width, f"K = {c.many_arms}")}
    panels = {}  # title: (env, agents, T, runs)
    for fig in (f for f in ("E.2", "E.3", "E.4") if f in c.figures):
        dim, arms, width, what = sizes[fig]
        for task in c.tasks:
            env = jb.make_env(f"dueling-{task}", dim=dim, num_arms=arms)
            agents = nvldbs(c.rules, env, c.horizon, width=width)
            agents |= {LABELS[b]: baseline(b, env, c.horizon) for b in c.baselines}
            panels[f"Fig. {fig}: {task}, {what}"] = (env, agents, c.horizon, c.num_runs)
    T, lr = c.long_horizon, c.long_lr
    if "d100" in c.figures:
        env = jb.make_env("dueling-square", dim=c.big_dim, num_arms=c.num_arms)
        panels[f"Sec. 6: square, d = {c.big_dim}, m = {c.big_width}"] = (
            env, nvldbs(c.big_rules, env, T, width=c.big_width, learning_rate=lr), T, c.long_runs)
    if "E.9" in c.figures:
        env = jb.make_env("dueling-square", dim=c.dim, num_arms=c.num_arms)
        for m in c.ts_widths:
            panels[f"Figs. E.9-E.10: square, m = {m}"] = (
                env, nvldbs(c.ts_rules, env, T, width=m, learning_rate=lr), T, c.long_runs)
    return {title: C.Experiment(env, agents, horizon, runs, options=C.run_options(
        horizon, c.chunk_size, c.num_records, include=(horizon // 2,), block_runs=runs))
        for title, (env, agents, horizon, runs) in panels.items()}


def claims(panels, c: Config) -> list[tuple[str, bool | None, str]]:
    out = []
    for key, res in panels.items():
        (fig, where), ours = key.split(": "), [k for k in res if k.startswith("NVLDB")]
        if len(ours) < len(res):
            out.append((f"[{fig}] every NVLDB variant ends below every baseline on {where}",
                        *C.every({f"{b} vs {a}": C.worse_than(res[b], res[a], tol=math.inf)
                                  for a in ours for b in res if b not in ours})))
        out.append((f"[{fig}] every NVLDB variant's R(t)/t decreases over the second half on "
                    f"{where}", *C.every({k: C.sublinear(res[k]) for k in ours})))
    return out


def tables(panels, c: Config) -> list[C.Table]:
    table = C.Table("R(T)/T, the cumulative average regret at the horizon (mean ± 95% CI)",
                    ["panel", "agent", "R(T/2)/(T/2)", "R(T)/T"],
                    note=f"BTL preferences; common random numbers; T = {c.horizon} "
                         f"({c.num_runs} runs) for Figs. E.2-E.4, {c.long_horizon} "
                         f"({c.long_runs} runs) otherwise.")
    for key, results in panels.items():
        for label, r in results.items():
            steps = list(r.steps)
            half = steps.index(min(steps, key=lambda s: abs(s - r.horizon / 2)))
            table.add(key, label, C.fmt_ci(r.cumulative_regret[:, half] / steps[half]),
                      C.fmt_ci(r.cumulative_regret[:, -1] / steps[-1]))
    return [table]


def body(r: C.Run) -> C.Page:
    c = r.config
    panels = C.run_experiments(r, experiments(c))
    return C.Page(C.draw_panels(panels), tables(panels, c), claims(panels, c), (
        f"{', '.join(c.tasks)}; Figs. E.2-E.4: T = {c.horizon}, {c.num_runs} runs, width "
        f"{c.width} (E.2: {c.wide}), rules {', '.join(c.rules)}, baselines "
        f"{', '.join(c.baselines)}; d = {c.big_dim} and m in {c.ts_widths}: T = "
        f"{c.long_horizon}, {c.long_runs} runs, lr {c.long_lr:g}."),
        {"panels": panels, "config": c})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
