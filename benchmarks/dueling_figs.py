"""Neural variance-aware dueling bandits (Oh, Park & Paik, AISTATS 2026): Fig. 2, Figs. E.1 and
E.5-E.8, Tables E.2-E.3, the Statlog variance study and App. E.3's compute comparison.

Oh et al. 2026, Sec. 6 and App. E at reduced sizes, one key for every agent (paired gaps), beside
the best-distinct-pair floor (``jb.envs.DuelingPairFloorEnv``); the configuration, the verdict
rules and the evidence are on docs/reproductions/oh-2026.md::

    python -m benchmarks.dueling_figs                 # small
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

import jaxbandits as jb
from benchmarks import framework as C
from jaxbandits import Result
from jaxbandits.envs import DataNotFoundError

NAME = "dueling_figs"
TITLE = ("Neural variance-aware dueling bandits (NVLDB): Fig. 2, Figs. E.1 and E.5-E.8, "
         "Tables E.2-E.3, the Statlog study, App. E.3 compute")
RULES = ("ucb-asym", "ts-asym", "ucb-osym", "ts-osym", "ucb-csym", "ts-csym")
TABLE_RULES = ("ucb-asym", "ucb-osym", "ucb-csym")
BASELINES = ("ndb-ucb", "ndb-ts", "colstim", "vacdb")  # Fig. 2's
YARDSTICKS = ("maxinp", "maxpair-ucb", "random")  # not in the paper
ACCEPTANCE = ("colstim", "maxpair-ucb", "random")  # every NVLDB variant below these
ACCEPTANCE_TASKS = ("square", "cosine")
LABELS = {"ndb-ucb": "NDB-UCB", "ndb-ts": "NDB-TS", "colstim": "CoLSTIM", "vacdb": "VACDB",
          "maxinp": "MaxInP", "maxpair-ucb": "MaxPairUCB", "random": "uniform"}
LABELS |= {f"{p}-{r}": f"{p.upper()}-{r.upper()}" for p in ("nvldb", "nldb") for r in RULES}
#: Tables E.2 / E.3: the paper's (d, widths, T) and R(t)/t at t = 2,000 / 6,000 / 10,000
#: (mean ± spread) by (width, rule)
PAPER_SIZES = {"E.2": (5, (500, 1000), 10_000), "E.3": (20, (100,), 10_000)}
PAPER = {"E.2": {(500, "ucb-asym"): ("1.66 ± 0.78", "0.82 ± 0.39", "0.54 ± 0.19"),
                 (500, "ucb-osym"): ("0.97 ± 0.17", "0.51 ± 0.07", "0.39 ± 0.04"),
                 (500, "ucb-csym"): ("1.13 ± 0.35", "0.61 ± 0.13", "0.46 ± 0.07"),
                 (1000, "ucb-asym"): ("1.37 ± 0.22", "0.65 ± 0.09", "0.42 ± 0.04"),
                 (1000, "ucb-osym"): ("1.73 ± 0.65", "0.81 ± 0.27", "0.52 ± 0.13"),
                 (1000, "ucb-csym"): ("1.54 ± 0.65", "0.73 ± 0.27", "0.51 ± 0.14")},
         "E.3": {(100, "ucb-asym"): ("9.33 ± 1.89", "6.79 ± 1.09", "6.05 ± 0.74"),
                 (100, "ucb-osym"): ("9.49 ± 2.05", "6.82 ± 1.11", "6.07 ± 0.83"),
                 (100, "ucb-csym"): ("10.76 ± 1.29", "7.69 ± 0.80", "6.73 ± 0.58")}}
PAPER_STATLOG = {"nvldb-ucb-osym": 0.017, "nldb-ucb-osym": 0.199}  # R(200)/200
#: App. E.3: minutes for 2,000 rounds (mean ± std over 20 seeds), RTX 3060 + Ryzen 9 5950X
PAPER_MINUTES = {"nvldb-ucb-asym": "1.71 ± 0.78", "ndb-ucb": "48.8 ± 15.5"}
TABLE_FRACTIONS = (0.2, 0.6, 1.0)  # the tables' checkpoints (the paper's 2k / 6k / 10k)
SPEEDUP = 10.0  # App. E.3: NDB at least this many times slower per round than NVLDB
FACTOR = 2.0  # Tables E.2-E.3: R(T)/T within this factor of the paper's
FLOOR = "floor: best distinct pair"
BAND_RUNS = 4  # runs below which no 95% band is drawn


@dataclasses.dataclass(frozen=True)
class Config:
    """Sizes of one scale, panel by panel (``ndb_full_horizon``: an extra NDB-UCB with the full
    design, 0: none; the floor's first ``num_runs`` runs are the real runs')."""

    num_runs: int
    tasks: tuple[tuple[str, int], ...]
    nvldb: tuple[str, ...] = RULES
    baselines: tuple[str, ...] = ("colstim", "vacdb", "maxinp", "maxpair-ucb", "random")
    ndb: tuple[str, ...] = ("ndb-ucb", "ndb-ts")
    ndb_tasks: tuple[str, ...] = ("cosine", "square", "quadratic")
    ablation_rules: tuple[str, ...] = RULES
    ablation_horizon: int = 2000
    scales: tuple[float, ...] = (0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0)
    sweep_horizon: int = 2000
    statlog_agents: tuple[str, ...] = ("nvldb-ucb-osym", "nldb-ucb-osym", "colstim",
                                       "maxpair-ucb", "random")
    statlog_horizon: int = 200
    statlog_runs: int = 20
    statlog_self_duels: tuple[str, ...] = ("nvldb-ucb-osym", "nldb-ucb-osym")
    real_tasks: tuple[str, ...] = ("magic", "covertype")
    real_agents: tuple[str, ...] = ("nvldb-ucb-asym", "colstim", "maxpair-ucb", "random")
    real_horizon: int = 2000
    table_rules: tuple[str, ...] = TABLE_RULES
    e2_widths: tuple[int, ...] = (500, 1000)
    e2_horizon: int = 10_000
    e3_dim: int = 20
    e3_width: int = 100
    e3_horizon: int = 10_000
    table_lr: float | None = 1e-3
    width: int = 32
    learning_rate: float = 1e-2
    dim: int = 5
    num_arms: int = 5
    ndb_full_horizon: int = 0
    floor_runs: int = 200
    demo_agents: tuple[str, ...] = ("nvldb-ucb-asym", "nvldb-ts-osym", "colstim",
                                    "maxpair-ucb", "random")
    demo_horizon: int = 500
    chunk_size: int = 500
    num_records: int = 40
    block_runs: int = 1

    @property
    def buffer_size(self) -> int:
        """Pairs kept by every neural agent: the largest horizon (one program for every T)."""
        return max(*dict(self.tasks).values(), self.ablation_horizon, self.sweep_horizon,
                   self.statlog_horizon, self.real_horizon, self.e2_horizon, self.e3_horizon,
                   self.demo_horizon)

    def horizon(self, task: str) -> int:
        """T of the Fig. 2 panel of ``task``."""
        return dict(self.tasks)[task]


SCALES = {
    "tiny": Config(num_runs=2, tasks=(("square", 40),), nvldb=("ucb-asym",),
                   baselines=("random",), ndb=(), ndb_tasks=(),
                   ablation_rules=("ucb-asym",), ablation_horizon=30, scales=(0.1, 1.0),
                   sweep_horizon=30, statlog_horizon=30, statlog_runs=2,
                   statlog_agents=("nvldb-ucb-osym", "nldb-ucb-osym"),
                   statlog_self_duels=(), real_tasks=(),
                   table_rules=("ucb-asym",), e2_widths=(8,), e2_horizon=40, e3_dim=5,
                   e3_width=8, e3_horizon=40, table_lr=None, width=8, chunk_size=30,
                   num_records=10, floor_runs=8, demo_agents=("nvldb-ucb-asym", "random"),
                   demo_horizon=40),
    "small": Config(num_runs=2, tasks=(("cosine", 2000), ("square", 2000), ("quadratic", 500)),
                    ndb=("ndb-ucb",), ndb_tasks=("square",),
                    ablation_rules=TABLE_RULES, ablation_horizon=500,
                    scales=(0.01, 0.1, 1.0, 10.0), sweep_horizon=500, statlog_runs=4,
                    real_tasks=("magic", "covertype"), real_horizon=500,
                    e2_widths=(32,), e2_horizon=2000, e3_width=32, e3_horizon=500,
                    table_lr=None, floor_runs=100),
    "paper": Config(num_runs=20, tasks=(("cosine", 2000), ("square", 2000),
                                        ("quadratic", 2000)),
                    ndb_full_horizon=2000, chunk_size=1000, num_records=60, block_runs=20),
}


def synthetic_env(utility: str, config: Config, dim: int | None = None):
    return jb.make_env(f"dueling-{utility}", dim=dim or config.dim, num_arms=config.num_arms)


def label(name: str) -> str:
    return LABELS.get(name, name)


def self_duel_label(name: str) -> str:
    """The label of ``name`` run with ``forbid_self_duel=False`` (the listings' semantics)."""
    return f"{label(name)} (self-duels)"


SELF_DUELS = self_duel_label("nvldb-ucb-asym")


def make_agent(name: str, env, config: Config, horizon: int, **fields):
    """A registry agent for ``env`` over ``horizon`` rounds (neural ones with the scale's
    network and ``config.buffer_size`` pairs); ``fields`` override."""
    if name == "random":
        return jb.make_agent("random")
    kw = {"buffer_size": config.buffer_size, "width": config.width} if name.startswith(
        ("nvldb", "nldb", "ndb")) else {}
    kw |= {"learning_rate": config.learning_rate} if name.startswith(("nvldb", "nldb")) else {}
    return jb.make_agent(name, env=env, horizon=horizon, **{**kw, **fields})


def options(config: Config, horizon: int, include: Sequence[int] = (),
            progress: bool | None = False) -> dict:
    """The scale's chunk length, records and runs per block: one program for every horizon."""
    return C.config_options(config, include, progress, horizon, config.block_runs)


def run_agents(env, agents: dict[str, tuple[str, dict]], config: Config, key, horizon: int,
               num_runs: int | None = None, include: Sequence[int] = (),
               progress: bool | None = False) -> dict[str, Result]:
    """``{label: Result}`` of ``{label: (registry name, fields)}`` with ``jb.compare``; T/2 and
    the tables' checkpoints recorded."""
    made = {lbl: make_agent(name, env, config, horizon, **fields)
            for lbl, (name, fields) in agents.items()}
    marks = {max(1, horizon // 2)} | {max(1, round(f * horizon)) for f in TABLE_FRACTIONS}
    return jb.compare(env, made, key, horizon, num_runs or config.num_runs,
                      **options(config, horizon, (*include, *sorted(marks)), progress))


def entries(names: Sequence[str]) -> dict[str, tuple[str, dict]]:
    return {label(n): (n, {}) for n in names}


def figure2_agents(task: str, config: Config) -> list[str]:
    """The Fig. 2 agents of ``task``: the NVLDB variants, NDB where configured, the others."""
    ndb = list(config.ndb) if task in config.ndb_tasks else []
    return [f"nvldb-{r}" for r in config.nvldb] + ndb + list(config.baselines)


def extra_steps(config: Config, horizon: int) -> list[int]:
    """The other panels' horizons recorded in a Fig. 2 run (they read it there)."""
    return [s for s in (config.ablation_horizon, config.sweep_horizon) if s <= horizon]


def run_figure2(config: Config, key, progress: bool | None = False) -> dict[str, dict]:
    """Fig. 2 / E.1(a-c): ``{task: {label: Result}}``."""
    return {task: run_agents(synthetic_env(task, config), entries(figure2_agents(task, config)),
                             config, key, horizon, include=extra_steps(config, horizon),
                             progress=progress) for task, horizon in config.tasks}


def run_floor(config: Config, key, utility: str, dim: int, horizon: int, num_runs: int,
              include: Sequence[int] = (), progress: bool | None = False) -> Result:
    """The best-distinct-pair floor of one synthetic setting over ``num_runs`` runs with the
    real runs' key (its first runs are theirs)."""
    env = jb.envs.DuelingPairFloorEnv(utility=utility, dim=dim, num_arms=config.num_arms)
    return run_agents(env, {FLOOR: ("random", {})}, config, key, horizon, num_runs,
                      include=include, progress=progress)[FLOOR]


@dataclasses.dataclass
class Runs:
    """Every result of a scale."""

    figure2: dict[str, dict[str, Result]]
    ablation: dict[str, dict[str, Result]]
    sweep: dict[str, dict[float, Result]]
    statlog: dict[str, Result]
    real: dict[str, dict[str, Result] | str]
    tables: dict[str, dict[tuple[int, int, str], Result]]
    compute: dict[str, dict[str, Result]]
    floors: dict[tuple[str, int, int], Result]


def table_setups(config: Config) -> dict[str, tuple[int, tuple[int, ...], int]]:
    """``{"E.2" | "E.3": (d, widths, T)}`` at this scale."""
    return {"E.2": (config.dim, config.e2_widths, config.e2_horizon),
            "E.3": (config.e3_dim, (config.e3_width,), config.e3_horizon)}


def run(config: Config, key, progress: bool | None = False) -> Runs:
    """Every experiment of the scale, each stage announced with the time elapsed."""
    start = time.perf_counter()
    stage = lambda name: print(f"[{time.perf_counter() - start:6.0f} s] {name}", flush=True)
    stage("Fig. 2 / E.1(a-c)")
    figure2 = run_figure2(config, key, progress)
    stage("Figs. E.5-E.7 (NLDB)")
    if any(config.ablation_horizon > horizon for _, horizon in config.tasks):
        raise ValueError(f"ablation_horizon {config.ablation_horizon} exceeds a Fig. 2 horizon "
                         f"{config.tasks}: the NVLDB side is read from those runs")
    ablation = {task: run_agents(synthetic_env(task, config),
                                 entries([f"nldb-{r}" for r in config.ablation_rules]), config,
                                 key, config.ablation_horizon, progress=progress)
                for task, _ in config.tasks}
    stage("Fig. E.8 (explore_scale sweeps)")
    sweep = {}
    for task, _ in config.tasks:
        env = synthetic_env(task, config)
        swept = jb.sweep(env, make_agent("nvldb-ucb-asym", env, config, config.sweep_horizon),
                         key, {"explore_scale": list(config.scales)}, config.sweep_horizon,
                         config.num_runs, **options(config, config.sweep_horizon, (), progress))
        sweep[task] = dict(zip(config.scales, swept.values(), strict=True))
    stage("Statlog")
    agents = entries(config.statlog_agents) | {
        self_duel_label(n): (n, {"forbid_self_duel": False}) for n in config.statlog_self_duels}
    statlog = run_agents(jb.make_env("dueling-statlog"), agents, config, key,
                         config.statlog_horizon, config.statlog_runs, progress=progress)
    stage("Fig. E.1 real data")
    real: dict[str, dict[str, Result] | str] = {}
    for dataset in config.real_tasks:
        try:
            env = jb.make_env(f"dueling-{dataset}")
        except DataNotFoundError as err:  # never downloaded
            real[dataset] = f"skipped: {str(err).splitlines()[0]}"
            continue
        agents = entries(config.real_agents)
        if env.spec().num_arms == 2 and "nvldb-ucb-asym" in config.real_agents:
            agents[SELF_DUELS] = ("nvldb-ucb-asym", {"forbid_self_duel": False})
        real[dataset] = run_agents(env, agents, config, key, config.real_horizon,
                                   progress=progress)
    stage("Tables E.2 / E.3")
    lr, square = config.table_lr or config.learning_rate, figure2.get("square", {})

    def table_run(dim: int, width: int, rule: str, horizon: int) -> Result:
        lbl = label(f"nvldb-{rule}")
        if ((dim, width, lr, horizon) == (config.dim, config.width, config.learning_rate,
                                           dict(config.tasks).get("square")) and lbl in square):
            return square[lbl]  # the Fig. 2 run
        return run_agents(synthetic_env("square", config, dim),
                          {lbl: (f"nvldb-{rule}", {"width": width, "learning_rate": lr})},
                          config, key, horizon, progress=progress)[lbl]

    tables = {table: {(dim, w, r): table_run(dim, w, r, horizon)
                      for w in widths for r in config.table_rules}
              for table, (dim, widths, horizon) in table_setups(config).items()}
    stage("App. E.3 compute")
    compute = run_compute(config, key, figure2, progress)
    stage("best-distinct-pair floors")
    settings = [(task, config.dim, horizon) for task, horizon in config.tasks]
    settings += [("square", d, t) for d, _, t in table_setups(config).values()]
    floors = {(u, d, t): run_floor(config, key, u, d, t, max(config.num_runs, config.floor_runs),
                                   include=extra_steps(config, t), progress=progress)
              for u, d, t in dict.fromkeys(settings)}
    return Runs(figure2, ablation, sweep, statlog, real, tables, compute, floors)


def run_compute(config: Config, key, figure2, progress: bool | None = False) -> dict:
    """App. E.3: ``{setting: {label: Result}}``: the first Fig. 2 task with NVLDB-UCB-ASYM and
    NDB-UCB (the Fig. 2 runs themselves); with ``ndb_full_horizon``, NDB-UCB with the full
    design on square (beside the Fig. 2 runs when the horizons agree, else with both again)."""
    pair = ("NVLDB-UCB-ASYM", "NDB-UCB")
    task = next((t for t, results in figure2.items() if set(pair) <= set(results)), None)
    out = {}
    if task is not None:
        out[f"{task}, T = {config.horizon(task)}"] = {k: figure2[task][k] for k in pair}
    horizon = config.ndb_full_horizon
    if not horizon:
        return out
    agents = {"NDB-UCB (full design)": ("ndb-ucb", {"design": "full"})}
    shared = {k: v for k, v in figure2.get("square", {}).items()
              if k in pair and v.horizon == horizon}
    if "NVLDB-UCB-ASYM" not in shared:
        agents = {pair[0]: ("nvldb-ucb-asym", {}), pair[1]: ("ndb-ucb", {}), **agents}
        shared = {}
    out.setdefault(f"square, T = {horizon}", {}).update(
        {**shared, **run_agents(synthetic_env("square", config), agents, config, key, horizon,
                                progress=progress)})
    return out


def average(result: Result, step: int | None = None, metric: str = "regret") -> np.ndarray:
    """``(runs,)`` R(t)/t of ``metric`` at a recorded step (default T)."""
    step = step or result.horizon
    return C.final_regret(result, step, metric) / step


def fmt(values: np.ndarray) -> str:
    """``"mean ± 95% half-width"`` with three decimals (R(t)/t values)."""
    mean, half = C.mean_ci(values)
    return f"{mean:.3f}" if math.isnan(half) else f"{mean:.3f} ± {half:.3f}"


def below(a: np.ndarray, b: np.ndarray) -> tuple[bool | None, str]:
    """Whether ``a`` (per run) ends below ``b`` (same runs): :func:`framework.ordering`."""
    return C.ordering(float(np.mean(b)), float(np.mean(a)), C.paired_gap(b, a))


def decreasing(result: Result) -> tuple[bool | None, float, float]:
    """Whether R(t)/t decreases over the second half (:func:`framework.verdict_at_most` of the
    per-run change from T/2 to T), and the two mean values."""
    half, end = average(result, max(1, result.horizon // 2)), average(result)
    return C.verdict_at_most(end - half, 0.0), float(half.mean()), float(end.mean())


def minutes(result: Result) -> float:
    """Minutes one run of 2,000 rounds takes, compilation apart (App. E.3's unit)."""
    return 2000 / max(result.seed_steps_per_second, 1e-12) / 60


def floor_rows(values: Sequence[np.ndarray], num_runs: int, *extra: str) -> list[list]:
    """The floor's table rows from its ``(runs,)`` R(t)/t per column: over the real runs (its
    first ``num_runs``), then over all its instances; ``extra`` cells end each."""
    return [[FLOOR, *(fmt(v[:num_runs]) for v in values), *extra],
            [f"{FLOOR}, {len(values[0])} instances", *(fmt(v) for v in values), *extra]]


def nvldb_below(results: dict[str, Result], others: Sequence[str]) -> tuple[bool | None, str]:
    """Every NVLDB variant of ``results`` below every agent of ``others`` (labels present)."""
    nvldb = [k for k in results if k.startswith("NVLDB")]
    others = [k for k in others if k in results]
    if not nvldb or not others:
        return None, "nothing to compare at this scale"
    checks = {(a, b): below(average(results[a]), average(results[b])) for a in nvldb
              for b in others}
    a, b = min(checks, key=lambda p: average(results[p[1]]).mean()
               / max(average(results[p[0]]).mean(), 1e-12))
    verdicts = [v for v, _ in checks.values()]
    return C.all_of(verdicts), (f"{verdicts.count(True)} of {len(verdicts)} pairs below; "
                                f"closest pair {a} vs {b}: {checks[a, b][1]}")


def all_decreasing(results: dict[str, Result]) -> tuple[bool | None, str]:
    checks = {k: decreasing(r) for k, r in results.items() if k.startswith("NVLDB")}
    verdicts = [v for v, _, _ in checks.values()]
    worst = max(checks, key=lambda k: checks[k][2] - checks[k][1])
    return C.all_of(verdicts), (f"{verdicts.count(True)} of {len(verdicts)} decreasing in mean; "
                                f"least decrease {worst}: {checks[worst][1]:.3f} -> "
                                f"{checks[worst][2]:.3f}")


def acceptance_claims(figure2: dict[str, dict[str, Result]], config: Config) -> list:
    """The ordering of Fig. 2 on square and cosine from the Fig. 2 runs (also
    ``dueling_acceptance``'s)."""
    claims = []
    for task in (t for t in ACCEPTANCE_TASKS if t in figure2):
        ok_order, order = nvldb_below(figure2[task], [label(n) for n in ACCEPTANCE])
        ok_decay, decay = all_decreasing(figure2[task])
        t = config.horizon(task)
        claims.append((f"[Fig. 2 ordering] on {task}, d = K = {config.dim}"
                       + ("" if t == 2000 else f" (here T = {t}, not 2,000)") + ": every NVLDB "
                       "variant ends below CoLSTIM, MaxPairUCB and uniform pairs, and its R(t)/t "
                       "decreases over the second half", C.all_of([ok_order, ok_decay]),
                       f"{order}; {decay}; {config.num_runs} paired runs"))
    return claims


class Section(NamedTuple):
    """An experiment's part of the report: tables, claims and figure panels (``ax -> None``)."""

    tables: list[C.Table]
    claims: list
    panels: list


def figure2_section(runs: Runs, config: Config) -> Section:
    """Fig. 2 / E.1(a-c): R(T)/T beside the floor, the NVLDB variants' decay, the orderings."""
    fig2, tasks = runs.figure2, list(runs.figure2)
    floors = {t: runs.floors[t, config.dim, config.horizon(t)] for t in tasks}
    rows = [[k, *(fmt(average(fig2[t][k])) if k in fig2[t] else "—" for t in tasks)]
            for k in dict.fromkeys(k for results in fig2.values() for k in results)]
    table = C.table("Fig. 2 / Fig. E.1(a-c): R(T)/T (mean ± 95% CI)",
                    ["agent", *(f"{t} (T = {config.horizon(t)})" for t in tasks)],
                    rows + floor_rows([average(f) for f in floors.values()], config.num_runs),
                    note=f"{config.num_runs} runs; MaxInP, MaxPairUCB, uniform: yardsticks.")
    nvldb = [k for k in fig2[tasks[0]] if k.startswith("NVLDB")]
    decay = C.table("Fig. 2: R(t)/t of the NVLDB variants over the second half, T/2 -> T",
                    ["agent", *tasks], ([k, *("{1:.3f} -> {2:.3f}".format(*decreasing(fig2[t][k]))
                                              for t in tasks)] for k in nvldb),
                    note="Mean R(t)/t at t = T/2 and t = T.")
    claims = acceptance_claims(fig2, config)
    for task, results in fig2.items():
        claims += [(f"[Fig. 2] every NVLDB variant ends below every baseline (NDB, CoLSTIM, "
                    f"VACDB) on {task}, T = {config.horizon(task)}",
                    *nvldb_below(results, [label(n) for n in BASELINES])),
                   (f"[Fig. 2] every NVLDB variant ends below MaxInP, MaxPairUCB and uniform "
                    f"pairs on {task}", *nvldb_below(results, [label(n) for n in YARDSTICKS])),
                   (f"[Fig. 2] R(t)/t of every NVLDB variant decreases over the second half on "
                    f"{task}", *all_decreasing(results))]
    return Section([table, decay], claims, [
        lambda ax, t=t, f=f: draw_regret(ax, fig2[t], f"Fig. 2: {t}", floor=(
            np.asarray(f.steps), np.asarray(f.cumulative_regret)[:config.num_runs].mean(axis=0)))
        for t, f in floors.items()])


def ablation_section(runs: Runs, config: Config) -> Section:
    """Figs. E.5-E.7: NVLDB (its Fig. 2 runs) against NLDB at the NLDB horizon, rule by rule."""
    t, rules = config.ablation_horizon, config.ablation_rules
    pairs = {(task, rule): (average(runs.figure2[task][label(f"nvldb-{rule}")], t)
                            if label(f"nvldb-{rule}") in runs.figure2[task] else None,
                            average(results[label(f"nldb-{rule}")]))
             for task, results in runs.ablation.items() for rule in rules}
    table = C.table(f"Figs. E.5-E.7: NVLDB vs NLDB, R(t)/t at t = {t}",
                    ["rule", *(f"{task}: NVLDB | NLDB" for task in runs.ablation)],
                    ([rule.upper(), *(f"{'—' if a is None else fmt(a)} | {fmt(b)}"
                                      for (_, r), (a, b) in pairs.items() if r == rule)]
                     for rule in rules),
                    note=f"{config.num_runs} runs; NVLDB: the Fig. 2 runs at t = {t}.")
    ran = {key: (a, b) for key, (a, b) in pairs.items() if a is not None}
    lower = sum(a.mean() <= b.mean() for a, b in ran.values())
    decided = [below(a, b)[0] for a, b in ran.values()]
    claims = [("[Figs. E.5-E.7] NVLDB has a lower mean R(t)/t than NLDB in most rule x task pairs",
               C.decide(2 * lower > len(ran), 2 * lower < len(ran)),
               f"NVLDB lower in {lower} of {len(ran)} pairs at t = {t}; decided: "
               f"{decided.count(True)} for NVLDB, {decided.count(False)} for NLDB")] if ran else []
    claims += [(f"[Fig. E.7(c)] the paper's exception: NLDB-{rule.upper()} below "
                f"NVLDB-{rule.upper()} on quadratic", *below(b, a))
               for (task, rule), (a, b) in ran.items()
               if rule.endswith("csym") and task == "quadratic"]

    def draw(ax):  # NVLDB filled, NLDB open, a gap between tasks
        xs = [i + i // len(rules) for i in range(len(pairs))]
        for x, (a, b) in zip(xs, pairs.values(), strict=True):
            if a is not None:
                ax.plot(x, a.mean(), "o", color="C0")
            ax.plot(x, b.mean(), "o", color="C3", fillstyle="none")
        ax.set_xticks(xs, [f"{task}\n{rule}" for task, rule in pairs], fontsize=5, rotation=90)
        C.style_axes(ax, "", f"R(t)/t at t = {t}", "Figs. E.5-E.7: NVLDB (filled) vs NLDB (open)",
                     log="y")

    return Section([table], claims, [draw])


def sweep_section(runs: Runs, config: Config) -> Section:
    """Fig. E.8: NVLDB-UCB-ASYM over explore_scale a_t, a moderate value best."""
    means = {task: {s: average(r[s]).mean() for s in r} for task, r in runs.sweep.items()}
    best = {task: min(m, key=m.get) for task, m in means.items()}
    table = C.table(f"Fig. E.8: R(T)/T of NVLDB-UCB-ASYM over explore_scale a_t "
                    f"(T = {config.sweep_horizon})", ["a_t", *runs.sweep],
                    ([f"{s:g}", *(fmt(average(r[s])) + ("*" if best[task] == s else "")
                                  for task, r in runs.sweep.items())] for s in config.scales),
                    note=f"{config.num_runs} runs; * marks the lowest mean.")
    same = {task: [s for s in sorted(r) if np.array_equal(  # runs bit-identical to the first's
        np.asarray(r[s].cumulative_regret), np.asarray(r[min(r)].cumulative_regret))]
        for task, r in runs.sweep.items()}
    same = {task: values for task, values in same.items() if len(values) > 1}
    if same:
        table.note += " Bit-identical runs: " + "; ".join(
            f"{task}: a_t = {', '.join(f'{v:g}' for v in values)}" for task, values in same.items())
    claims = []
    for task, m in means.items():
        by_scale, scales = runs.sweep[task], sorted(m)
        if len(scales) < 3:
            claims.append((f"[Fig. E.8] a moderate a_t is best on {task}", None,
                           f"only {len(scales)} values at this scale"))
            continue
        lowest, ends = min(scales, key=m.get), (scales[0], scales[-1])
        if lowest in ends:  # an end is best: refuted if it clearly is
            inner = min(scales[1:-1], key=m.get)
            ok = False if below(average(by_scale[lowest]), average(by_scale[inner]))[0] else None
        else:
            ok = C.all_of([below(average(by_scale[lowest]), average(by_scale[s]))[0]
                           for s in ends])
        claims.append((f"[Fig. E.8] a moderate a_t is best on {task}, too small or too large "
                       "worse", ok, f"best {lowest:g}; R(T)/T "
                       + ", ".join(f"{s:g}: {m[s]:.3f}" for s in scales)))

    def draw(ax):
        for task, m in means.items():
            ax.plot(sorted(m), [m[s] for s in sorted(m)], "o-", label=task)
        C.style_axes(ax, "explore_scale a_t", f"R(T)/T, T = {config.sweep_horizon}",
                     "Fig. E.8: NVLDB-UCB-ASYM over a_t", legend=7, log="xy")

    return Section([table], claims, [draw])


def statlog_section(runs: Runs, config: Config) -> Section:
    """The Statlog variance study and Fig. E.1(d): R(T)/T and the weak regret."""
    statlog = runs.statlog
    paper = {lbl: PAPER_STATLOG[n] for n in PAPER_STATLOG for lbl in (label(n), self_duel_label(n))}
    table = C.table(f"Statlog (Fig. E.1(d), the main text's variance study): R(T)/T at "
                    f"T = {config.statlog_horizon}",
                    ["agent", "R(T)/T", "weak R(T)/T", "paper R(T)/T"],
                    ([lbl, fmt(average(r)), fmt(average(r, metric="weak_regret")),
                      f"{paper[lbl]:.3f}" if lbl in paper else "—"] for lbl, r in statlog.items()),
                    note=f"{config.statlog_runs} runs; distinct arms cost at least 1/2 a round.")
    claims = [(f"[Statlog study] NVLDB-UCB-OSYM below NLDB-UCB-OSYM at T = "
               f"{config.statlog_horizon}, {semantics} (paper R(T)/T 0.017 vs 0.199)",
               *below(average(statlog[name("nvldb-ucb-osym")]),
                      average(statlog[name("nldb-ucb-osym")])))
              for name, semantics in ((label, "self-duels forbidden, the default"),
                                      (self_duel_label, "self-duels allowed, the listings' "
                                                        "semantics"))
              if name("nvldb-ucb-osym") in statlog and name("nldb-ucb-osym") in statlog]
    others = [k for k in statlog if not k.startswith(("NVLDB", "NLDB"))]
    if others:
        claims.append(("[Fig. E.1(d)] NVLDB ends below the baselines on Statlog",
                       *nvldb_below(statlog, others)))
    return Section([table], claims, [
        lambda ax: draw_regret(ax, statlog, "Fig. E.1(d): Statlog (deterministic)")])


def real_section(runs: Runs, config: Config) -> Section:
    """Fig. E.1(e-f): the real datasets ("skipped" where the data file is missing)."""
    if not runs.real:
        return Section([], [], [])
    ran = {dataset: r for dataset, r in runs.real.items() if isinstance(r, dict)}
    table = C.table(f"Fig. E.1(e-f): real data, R(T)/T at T = {config.real_horizon}",
                    ["agent", *runs.real],
                    ([k, *("skipped" if isinstance(r, str) else fmt(average(r[k])) if k in r
                           else "—" for r in runs.real.values())]
                     for k in dict.fromkeys(k for r in ran.values() for k in r)),
                    note=f"{config.num_runs} runs, preference 0.7.")
    claims = []
    for dataset, results in runs.real.items():
        if isinstance(results, str):
            claims.append((f"[Fig. E.1] NVLDB below the baselines on {dataset}", None, results))
            continue
        claims.append((f"[Fig. E.1] every NVLDB variant ends below the baselines on {dataset}",
                       *nvldb_below(results, [k for k in results if not k.startswith("NVLDB")])))
        if SELF_DUELS in results:  # K = 2: two distinct arms cost exactly 1/2 a round
            distinct = [k for k in results if k.startswith("NVLDB") and k != SELF_DUELS]
            distinct += [k for k in results if k == label("random")]
            exact = all(np.allclose(np.asarray(results[k].cumulative_regret),
                                    np.asarray(results[k].steps)[None, :] / 2, atol=1e-3)
                        for k in distinct)
            claims.append((f"[diagnostic] on {dataset} (K = 2) the agents that never self-duel "
                           f"({', '.join(distinct)}) have R(t) = t/2 exactly", exact, ""))
    return Section([table], claims, [lambda ax, d=d, r=r: draw_regret(ax, r, f"Fig. E.1: {d}")
                                     for d, r in ran.items()])


def tables_section(runs: Runs, config: Config) -> Section:
    """Tables E.2 / E.3: R(t)/t at T/5, 3T/5 and T beside the paper's at 2k / 6k / 10k and the
    floor; its decay, the paper's level against the floor and against ours."""
    tables, claims = [], []
    for table, (dim, widths, horizon) in table_setups(config).items():
        results, paper = runs.tables[table], PAPER[table]
        floor = runs.floors["square", dim, horizon]
        steps = [max(1, round(f * horizon)) for f in TABLE_FRACTIONS]
        # another width: the paper's row at its first width
        ref = {(w, r): paper.get((w, r)) or paper.get((PAPER_SIZES[table][1][0], r))
               for _, w, r in results}
        title = f"Table {table}: square, d = {dim}, K = {config.num_arms}, R(t)/t"
        scaled = (dim, widths, horizon) != PAPER_SIZES[table]
        if scaled:
            title += f" (scaled down: d = {dim}, width {'/'.join(map(str, widths))}, T = {horizon})"
        tables.append(C.table(
            title, ["algorithm", *(f"t = {s}" for s in steps), "paper t = 2k / 6k / 10k"],
            [*([f"{rule.upper()} m={w}", *(fmt(average(r, s)) for s in steps),
                " / ".join(ref[w, rule]) if ref[w, rule] else "—"]
               for (_, w, rule), r in results.items()),
             *floor_rows([average(floor, s) for s in steps], config.num_runs, "—")],
            note=(f"{config.num_runs} runs, lr {config.table_lr or config.learning_rate:g}"
                  "; the paper's values at its own width.")))
        claims.append((f"[Table {table}] R(t)/t decays from t = {steps[0]} to {horizon}",
                       C.all_of([C.verdict_at_most(average(r) - average(r, steps[0]), 0.0)
                                 for r in results.values()]),
                       "; ".join(f"{rule.upper()} m={width} {average(r, steps[0]).mean():.3f} -> "
                                 f"{average(r).mean():.3f}"
                                 for (_, width, rule), r in results.items())))
        finals = [float(v[2].split(" ")[0]) for v in paper.values()]
        f_mean, f_half = C.mean_ci(average(floor))
        claims.append((f"[diagnostic, Table {table}] the paper's R(10,000)/10,000 "
                       f"({min(finals):g}-{max(finals):g}) lies below the best-distinct-pair floor",
                       C.decide(max(finals) < f_mean - f_half, max(finals) > f_mean + f_half),
                       f"floor R(T)/T {f_mean:.3f} ± {f_half:.3f} over {floor.num_runs} "
                       f"instances, d = {dim}"))
        level = f"[Table {table}, level] R(T)/T within a factor {FACTOR:g} of the paper's"
        if scaled:
            claims.append((level, None, "other d / width / T than the paper's"))
            continue
        ratios = [average(r).mean() / float(ref[w, rule][2].split(" ")[0])
                  for (_, w, rule), r in results.items()]
        claims.append((level, all(1 / FACTOR <= x <= FACTOR for x in ratios),
                       "ratios to the paper " + ", ".join(f"{x:.2f}" for x in ratios)))

    def draw(ax):
        for table, results in runs.tables.items():
            for (dim, width, rule), result in results.items():
                steps = np.asarray(result.steps)
                ax.plot(steps, result.mean("regret") / steps, "-" if table == "E.2" else "--",
                        label=f"{table} d={dim} m={width} {rule}")
        C.style_axes(ax, "round t", "R(t)/t", "Tables E.2 / E.3: R(t)/t on square", legend=6,
                     log="y")

    return Section(tables, claims, [draw])


def compute_section(runs: Runs, config: Config) -> Section:
    """App. E.3: the steady wall time of NVLDB-UCB-ASYM and NDB-UCB, compilation apart."""
    rows = [(f"{lbl}\n{setting}", lbl, setting, r) for setting, results in runs.compute.items()
            for lbl, r in results.items()]
    if not rows:
        return Section([], [], [])
    table = C.table("App. E.3 compute: wall time, compilation apart",
                    ["agent", "task, T", "runs", "compile (s)", "run (s)", "seed-steps/s",
                     "min per 2,000 rounds", "paper (min)"],
                    ([lbl, setting, r.num_runs, f"{r.compile_time:.1f}", f"{r.wall_time:.1f}",
                      f"{r.seed_steps_per_second:.1f}", f"{minutes(r):.2f}",
                      PAPER_MINUTES["nvldb-ucb-asym" if lbl.startswith("NVLDB") else "ndb-ucb"]
                      if lbl.startswith("NVLDB") or "full" in lbl else "—"]
                     for _, lbl, setting, r in rows),
                    note="min per 2,000 rounds = 2,000 / (seed-steps per second) / 60.")
    claims = []
    for setting, results in runs.compute.items():
        nvldb = results["NVLDB-UCB-ASYM"]
        for lbl in (k for k in ("NDB-UCB", "NDB-UCB (full design)") if k in results):
            ratio = results[lbl].wall_time / max(nvldb.wall_time, 1e-12)
            design = "full p x p" if "full" in lbl else "diagonal (APOHF)"
            claims.append((f"[App. E.3] NDB-UCB ({design} design) at least {SPEEDUP:g}x slower "
                           f"than NVLDB-UCB-ASYM ({setting}; paper about 28x)",
                           bool(ratio >= SPEEDUP),
                           f"run time ratio {ratio:.1f}x ({results[lbl].wall_time:.1f} s vs "
                           f"{nvldb.wall_time:.1f} s, compilation excluded)"))

    def draw(ax):
        values = [minutes(r) for *_, r in rows]
        ax.barh(range(len(rows)), values,
                color=["C0" if lbl.startswith("NVLDB") else "C3" for _, lbl, _, _ in rows])
        ax.set_yticks(range(len(rows)), [tick for tick, *_ in rows], fontsize=6)
        C.style_axes(ax, "minutes per 2,000 rounds (one run, compilation excluded)", "",
                     "App. E.3: compute", log="x" if max(values) > 10 * min(values) else "")

    return Section([table], claims, [draw])


SECTIONS = (figure2_section, ablation_section, sweep_section, statlog_section, real_section,
            tables_section, compute_section)


def draw_regret(ax, results: dict[str, Result], title: str, metric: str = "regret",
                floor: tuple[np.ndarray, np.ndarray] | None = None) -> None:
    """Mean cumulative ``metric`` (95% bands from :data:`BAND_RUNS` runs on); NVLDB solid, NLDB
    dotted, others dashed; ``floor`` ``(steps, values)``: the best-distinct-pair floor, black."""
    for lbl, result in results.items():
        steps = np.asarray(result.steps)
        style = "-" if lbl.startswith("NVLDB") else (":" if lbl.startswith("NLDB") else "--")
        (line,) = ax.plot(steps, result.mean(metric), style, label=lbl)
        if result.num_runs >= BAND_RUNS:
            lower, upper = result.confidence_band(metric)
            ax.fill_between(steps, lower, upper, color=line.get_color(), alpha=0.12,
                            linewidth=0)
    if floor is not None:
        ax.plot(*floor, ":", color="black", linewidth=1.2, label=FLOOR)
    C.style_axes(ax, "round t", "cumulative average regret" if metric == "regret"
                 else f"cumulative {metric}", title, legend=6)


def body(r: C.Run) -> C.Page:
    config = r.config
    runs = run(config, r.key, r.progress)
    sections = [section(runs, config) for section in SECTIONS]
    panels = [panel for s in sections for panel in s.panels]
    fig, axes = C.new_figure(math.ceil(len(panels) / 3), 3, width=5.0, height=3.8)
    for ax, panel in zip(axes.flat, panels, strict=False):
        panel(ax)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    tasks = ", ".join(f"{t} (T = {h})" for t, h in config.tasks)
    intro = (f"Fig. 2: {tasks}, d = {config.dim}, K = {config.num_arms}, {config.num_runs} runs; "
             f"networks of width {config.width}, Adam lr {config.learning_rate:g}, "
             f"{config.buffer_size} pairs kept. The paper uses 20 seeds and T = 2,000 (10,000 "
             "for the tables).")
    return C.Page(fig, [t for s in sections for t in s.tables],
                  [c for s in sections for c in s.claims], intro, {"runs": runs, "config": config})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
