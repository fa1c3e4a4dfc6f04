"""Neural Ensemble++ (Li et al. 2024): Figs. 1/10, 3, 4, 11, 14, App. F.2 (LMC-TS), G.5.

Li et al. 2024, Sec. 5.2, App. F.2 and G.5: ``neural-ensemble-pp`` ("ES++"), ``ensemble-plus``,
``epinet`` and ``neural-greedy`` with the authors' per-task presets on a 2 x 64 ReLU MLP, beside
uniform random and LMC-TS; the moderation task on the offline stand-in corpus with a small random
transformer. Common random numbers; every point cached and shared by panels. The evidence, the
authors' code's findings and the causes of misses: docs/reproductions/li-2024.md::

    python -m benchmarks.ensemble_pp_neural                  # small
    python -m benchmarks.ensemble_pp_neural --scale paper    # GPU
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import time
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import jaxbandits as jb
from benchmarks import framework as C
from jaxbandits import Result

NAME = "ensemble_pp_neural"
TITLE = "Neural Ensemble++: Figs. 1/10, 3, 4, 11, 14, LMC-TS (App. F.2), moderation (App. G.5)"
AGENTS = {"ES++": "neural-ensemble-pp", "Ensemble+": "ensemble-plus", "EpiNet": "epinet",
          "Greedy": "neural-greedy"}  # label -> registry name
HEADS = {"ES++": "ensemble++", "Ensemble+": "ensemble+", "EpiNet": "epinet", "Greedy": "none"}
RANDOM, LMC = "random", "LMC-TS"
PAPER_COUNTS = {"ES++": 11_713, "EpiNet": 17_931, "Ensemble+": 22_288}  # Fig. 1, M = 8
PAPER_HORIZON = 100_000  # the horizon of the paper's synthetic-task figures
AUTHORS_HORIZON = 20_000  # the authors' code, quadratic preset, T <= 20,000
DISCRETE = ("coordinate", "cube", "sparse", "one_hot")
CONTINUOUS = ("sphere", "gaussian")
#: Fig. 14's ablations: (label, the agent field, the Config field of its laws, the paper's claim)
ABLATIONS = (("update", "update_index", "updates", "discrete update sets are better"),
             ("reference", "reference", "references", "continuous references are better"),
             ("perturbation", "perturbation", "perturbations",
              "the perturbation law makes no difference"))
SLIGHT = 0.10  # "only slightly" (Fig. 11), "no difference" (Fig. 14(c)): within 10%
FLAT = 0.25    # "largely unaffected" (Fig. 4): within 25%
GROWTH, STEADY = 1.5, 1.3  # App. F.2: late / early cost >= 1.5 for LMC-TS, <= 1.3 for ES++


@dataclasses.dataclass(frozen=True)
class Config:
    """Sizes of one scale: T and runs per task, M of Figs. 1 / 10 (``sizes``), pools, buffers
    and laws (first: the default), moderation's transformer (``lm_*``), ``long_*`` (T = 10^5;
    None: not run), the tests' overrides and ``blocks`` per point (results depend on it);
    ``lmc_block_runs`` 1 on a CPU (multi-run LMC-TS blocks grew to 18 GB at T = 2,000)."""

    horizon: int
    num_runs: int
    sizes: tuple[int, ...]
    shuttle_horizon: int
    shuttle_runs: int
    pool_sizes: tuple[int, ...]
    pool_ensemble_sizes: tuple[int, ...]
    buffers: tuple[int, ...]
    lmc_horizon: int
    lmc_runs: int
    mod_horizon: int
    mod_runs: int
    ensemble_size: int = 8
    agents: tuple[str, ...] = tuple(AGENTS)
    param_tasks: tuple[str, ...] = ("quadratic", "neural")
    tasks: tuple[str, ...] = ("quadratic", "neural", "shuttle")
    quad_env: tuple[tuple[str, Any], ...] = ()
    neural_env: tuple[tuple[str, Any], ...] = ()
    buffer_task: str = "neural"
    updates: tuple[str, ...] = ("coordinate", "cube", "sparse", "sphere", "gaussian")
    references: tuple[str, ...] = ("sphere", "gaussian", "cube", "coordinate", "sparse")
    perturbations: tuple[str, ...] = ("sphere", "gaussian", "cube", "coordinate", "sparse")
    vector_env: tuple[tuple[str, Any], ...] = ()
    time_chunk: int = 100
    lmc_agents: tuple[str, ...] = ("ES++", LMC, RANDOM)
    lmc_block_runs: int | None = 1
    mod_rows: int = 2000
    mod_length: int = 16
    lm_width: int = 16
    lm_heads: int = 2
    lm_layers: int = 1
    mod_agents: tuple[str, ...] = ("ES++", "Ensemble+", "Greedy")
    mod_frozen: tuple[str, ...] = ("ES++", "Ensemble+", "Greedy")
    long_horizon: int | None = None
    long_runs: int = 2
    long_agents: tuple[str, ...] = ("ES++", "Ensemble+", "Greedy")
    hidden: tuple[int, ...] = (64, 64)
    agent_overrides: tuple[tuple[str, Any], ...] = ()
    lmc_overrides: tuple[tuple[str, Any], ...] = ()
    blocks: int = 2
    chunk_size: int = 1000
    num_records: int = 40


_TINY_ENV = (("dim", 6), ("pool_size", 30), ("num_arms", 5))
SCALES = {
    # tiny: the smoke test's eight programs (Figs. 1, 4, 11, 14 share the default point)
    "tiny": Config(horizon=40, num_runs=2, sizes=(2,), ensemble_size=2, agents=("ES++", "Greedy"),
                   param_tasks=("quadratic",), tasks=("quadratic",), shuttle_horizon=40,
                   shuttle_runs=2, quad_env=_TINY_ENV, neural_env=_TINY_ENV, pool_sizes=(30,),
                   pool_ensemble_sizes=(2,), buffer_task="quadratic", buffers=(64,),
                   updates=("coordinate",), references=("sphere",), perturbations=("sphere",),
                   lmc_horizon=40, lmc_runs=2, vector_env=(("dim", 4), ("num_arms", 5)),
                   time_chunk=10, lmc_agents=("ES++", LMC), mod_horizon=40, mod_runs=2,
                   mod_rows=50, mod_length=8, lm_width=8, lm_heads=1, lm_layers=1,
                   mod_agents=("ES++",), mod_frozen=(), long_agents=("ES++",), hidden=(8,),
                   agent_overrides=(("batch_size", 8), ("buffer_size", 64), ("update_start", 8)),
                   lmc_overrides=(("backbone", jb.nets.MLPBackbone((8,), "leaky_relu")),
                                  ("num_grad_steps", 3)), chunk_size=40, num_records=12),
    # not on the command line: notebooks/neural_ensemblepp.ipynb's sizes
    "notebook": Config(horizon=1500, num_runs=2, sizes=(8,), param_tasks=("quadratic",),
                       tasks=("quadratic", "shuttle"), shuttle_horizon=400, shuttle_runs=2,
                       pool_sizes=(1000,), pool_ensemble_sizes=(8,), buffer_task="quadratic",
                       buffers=(10_000,), updates=("coordinate", "sphere"),
                       references=("sphere", "coordinate"), perturbations=("sphere",),
                       lmc_horizon=1000, lmc_runs=2, mod_horizon=6000, mod_runs=2,
                       mod_agents=("ES++", "Greedy"), mod_frozen=("ES++",), num_records=30),
    "small": Config(horizon=3000, num_runs=4, sizes=(2, 8, 32), shuttle_horizon=800,
                    shuttle_runs=4, pool_sizes=(200, 1000, 5000), pool_ensemble_sizes=(2, 8, 32),
                    buffers=(300, 1000, 10_000),
                    references=("sphere", "gaussian", "coordinate", "cube"),
                    perturbations=("sphere", "gaussian", "coordinate"), lmc_horizon=2000,
                    lmc_runs=4, mod_horizon=20_000, mod_runs=4, mod_frozen=("ES++",),
                    long_horizon=100_000, long_runs=2),
    "paper": Config(horizon=100_000, num_runs=10, sizes=(1, 2, 4, 8, 16, 32, 64),
                    shuttle_horizon=10_000, shuttle_runs=10,
                    pool_sizes=(100, 1000, 10_000, 100_000), pool_ensemble_sizes=(2, 8, 32),
                    buffers=(1000, 10_000, 100_000), lmc_horizon=10_000, lmc_runs=10,
                    time_chunk=250, lmc_block_runs=None, mod_horizon=100_000, mod_runs=4,
                    mod_length=32, lm_width=64, lm_heads=4, lm_layers=2, long_horizon=None,
                    blocks=1, chunk_size=2000, num_records=100),
}


@dataclasses.dataclass(frozen=True)
class Task:
    """A task (long: the quadratic at the paper's horizon): preset, T, runs, head outputs C."""

    key: str
    title: str
    preset: str
    horizon: int
    num_runs: int
    outputs: int = 1

    @property
    def short(self) -> str:
        return self.title.split(" (")[0]


def make_tasks(config: Config) -> dict[str, Task]:
    tasks = [Task("quadratic", "Quadratic (authors' instance)", "quadratic", config.horizon,
                  config.num_runs),
             Task("neural", "Neural (random MLP, Bernoulli)", "neural-classification",
                  config.horizon, config.num_runs, outputs=2),
             Task("shuttle", "Shuttle", "shuttle", config.shuttle_horizon, config.shuttle_runs),
             Task("vector", "Vector-quadratic (LMC-TS's task)", "vector-quadratic",
                  config.lmc_horizon, config.lmc_runs),
             Task("moderation", "Moderation (stand-in corpus)", "hate-speech",
                  config.mod_horizon, config.mod_runs)]
    if config.long_horizon is not None:
        tasks.append(Task("long", "Quadratic (authors' instance), paper horizon", "quadratic",
                          config.long_horizon, config.long_runs))
    return {t.key: t for t in tasks}


def make_env(task: Task, config: Config):
    """The authors' instance at their sizes, their recipe at the tests' (``*_env`` set)."""
    instance = {True: "authors_recipe", False: "authors"}
    if task.key in ("quadratic", "long"):  # the authors' subset sequence for the longest T
        return jb.make_env("quadratic-pool", instance=instance[bool(config.quad_env)],
                           authors_rounds=max(config.horizon, config.long_horizon or 0),
                           **dict(config.quad_env))
    if task.key == "neural":
        return jb.make_env("random-mlp-bernoulli", instance=instance[bool(config.neural_env)],
                           authors_rounds=config.horizon, **dict(config.neural_env))
    if task.key == "vector":
        return jb.make_env("vector-quadratic", **dict(config.vector_env))
    if task.key == "moderation":
        return jb.make_env("text-moderation", num_rows=config.mod_rows,
                           max_length=config.mod_length)
    return jb.make_env("shuttle-epp")


def make_agent(label: str, task: Task, config: Config, env=None):
    """A neural index agent with the task's preset (resolved: a swept field at its preset value
    is the same program), LMC-TS with the whole horizon in its buffer, or random."""
    if label == RANDOM:
        return jb.make_agent("random")
    if label == LMC:
        return jb.make_agent("lmc-ts", preset=task.preset, env=env, horizon=task.horizon,
                             **{"buffer_size": task.horizon, **dict(config.lmc_overrides)})
    fields = dict(config.agent_overrides)
    if task.key == "moderation":
        fields["backbone"] = jb.nets.TransformerNetwork(
            max_length=config.mod_length, width=config.lm_width, num_heads=config.lm_heads,
            num_layers=config.lm_layers)
    else:
        fields["backbone"] = jb.nets.MLPBackbone(hidden=config.hidden)
        if label != "Greedy":
            fields["ensemble_size"] = config.ensemble_size
    return jb.make_agent(AGENTS[label], preset=task.preset, **fields).resolved()


class Runner:
    """The tasks' environments and agents; each point runs once (:class:`framework.Runner`)."""

    def __init__(self, config: Config, key: jax.Array, progress: bool | None = False,
                 log=None, cache=None):
        self.config, self.key, self.progress = config, key, progress
        self.tasks = make_tasks(config)
        self.log = log or (lambda message: None)
        self.runs = C.Runner(key, cache=cache, progress=progress, log=log)

    @functools.cache  # noqa: B019 - one environment per task and runner
    def env(self, task: str):
        return make_env(self.tasks[task], self.config)

    @functools.cache  # noqa: B019
    def agent(self, task: str, label: str):
        return make_agent(label, self.tasks[task], self.config, self.env(task))

    def update_start(self, task: str) -> int:
        """The round after which the task's agents train (their preset's ``update_start``)."""
        return int(self.agent(task, "ES++").update_start)

    def options(self, task: str) -> dict[str, Any]:
        t = self.tasks[task]
        marks = (min(self.update_start(task), t.horizon), t.horizon // 2, late_start(t.horizon))
        block_runs = math.ceil(t.num_runs / self.config.blocks)
        if task == "vector" and self.config.lmc_block_runs is not None:
            block_runs = self.config.lmc_block_runs
        return C.config_options(self.config, marks, self.progress, t.horizon, block_runs)

    def grid(self, task: str, label: str, field: str | None, values: Sequence[Any] = (None,),
             **fixed: Any) -> dict[Any, Result]:
        """``{value: Result}``: ``label`` on ``task`` at each value of ``field`` (None: the
        agent itself; ``"env.<name>"``: an environment field), ``fixed`` fields set."""
        t, env, agent = self.tasks[task], self.env(task), self.agent(task, label)
        env_fields = {n[4:]: v for n, v in fixed.items() if n.startswith("env.")}
        agent_fields = {n: v for n, v in fixed.items() if not n.startswith("env.")}
        env = env.replace(**env_fields) if env_fields else env
        agent = agent.replace(**agent_fields) if agent_fields else agent
        sizes = (t.horizon, t.num_runs)
        results = ([self.runs.simulate(env, agent, *sizes, name=label, **self.options(task))]
                   if field is None else self.runs.sweep(env, agent, field, list(values), *sizes,
                                                         name=label, **self.options(task)))
        return dict(zip(values, results, strict=True))

    def one(self, task: str, label: str, **fields: Any) -> Result:
        """``label`` on ``task`` with ``fields`` set (one point)."""
        return self.grid(task, label, None, **fields)[None]


def late_start(horizon: int) -> int:
    """The start of the "late" window, the last fifth of the rounds (``4 T // 5``)."""
    return max(1, (4 * horizon) // 5)


@functools.cache
def _timed_programs():
    """``jb.runner.init`` / ``play_chunk`` jitted for one unbatched run (cached)."""
    return (jax.jit(jb.runner.init, static_argnames="num_slots"),
            jax.jit(jb.runner.play_chunk, static_argnames="length", donate_argnums=2))


def round_costs(env, agent, key: jax.Array, horizon: int, chunk: int) -> dict[str, Any]:
    """Wall time per round of run 0 of ``jb.simulate(env, agent, key, horizon)`` against t,
    timed by chunks after a compiling call: ``{"steps", "ms" per round, "regret": final}``."""
    init, play = _timed_programs()
    chunk = max(1, min(chunk, horizon))
    steps, end = jnp.asarray([horizon], jnp.int32), jnp.int32(horizon)
    carry = init(env, agent, key, jnp.uint32(0), num_slots=1)
    carry = jax.block_until_ready(play(env, agent, carry, end, end, steps, length=chunk))
    ends, ms = [], []
    for start in range(0, horizon, chunk):
        t0 = time.perf_counter()
        carry = jax.block_until_ready(play(env, agent, carry, jnp.int32(start), end, steps,
                                           length=chunk))
        ends.append(min(start + chunk, horizon))
        ms.append(1e3 * (time.perf_counter() - t0) / (ends[-1] - start))
    return {"steps": np.asarray(ends), "ms": np.asarray(ms),
            "regret": float(np.asarray(carry.cumulative)[0])}


# -- The panels (later panels reuse earlier points) ----------------------------------------------


def index_agents(config: Config) -> list[str]:
    """The agents of Figs. 1 / 10 (those with an index) that run."""
    return [label for label in ("ES++", "Ensemble+", "EpiNet") if label in config.agents]


def run_params(runner: Runner) -> dict[str, dict[str, dict[int, Result]]]:
    """Figs. 1 / 10: ``{task: {label: {M: Result}}}``."""
    return {task: {label: runner.grid(task, label, "ensemble_size", runner.config.sizes)
                   for label in index_agents(runner.config)}
            for task in runner.config.param_tasks}


def run_comparison(runner: Runner) -> dict[str, dict[str, Result]]:
    """Fig. 3: ``{task: {label: Result}}``, the agents at M = ``ensemble_size`` and random."""
    return {task: {label: runner.one(task, label) for label in (*runner.config.agents, RANDOM)}
            for task in runner.config.tasks}


def run_long(runner: Runner) -> dict[str, Result] | None:
    """The quadratic at ``long_horizon`` (None when the scale has none)."""
    return ({label: runner.one("long", label) for label in (*runner.config.long_agents, RANDOM)}
            if "long" in runner.tasks else None)


def run_pools(runner: Runner) -> dict[int, dict[int, Result]]:
    """Fig. 4: ``{pool size: {M: Result}}``, ES++ on the quadratic (the authors' recipe at
    other pool sizes)."""
    out, env = {}, runner.env("quadratic")
    for pool in runner.config.pool_sizes:
        if env.num_arms > pool:
            raise ValueError(f"pool size {pool} is below the arms per round")
        fixed = {"env.pool_size": pool}
        if pool != env.pool_size:
            fixed["env.instance"] = "authors_recipe"
        out[pool] = runner.grid("quadratic", "ES++", "ensemble_size",
                                runner.config.pool_ensemble_sizes, **fixed)
    return out


def run_buffers(runner: Runner) -> dict[int, Result]:
    """Fig. 11: ``{C: Result}`` for ES++ on ``buffer_task``."""
    return runner.grid(runner.config.buffer_task, "ES++", "buffer_size", runner.config.buffers)


def run_ablations(runner: Runner) -> dict[str, dict[str, Result]]:
    """Fig. 14: ``{ablation: {law: Result}}``, ES++ on the quadratic, one law at a time."""
    return {name: runner.grid("quadratic", "ES++", field, getattr(runner.config, laws))
            for name, field, laws, _ in ABLATIONS}


def run_lmc(runner: Runner) -> tuple[dict[str, Result], dict[str, dict[str, np.ndarray]]]:
    """App. F.2: ``({label: Result}, {label: round_costs})`` on ``vector-quadratic``."""
    results = {label: runner.one("vector", label) for label in runner.config.lmc_agents}
    horizon, costs = runner.tasks["vector"].horizon, {}
    for label in (k for k in ("ES++", LMC) if k in results):
        start = time.perf_counter()
        costs[label] = round_costs(runner.env("vector"), runner.agent("vector", label),
                                   runner.key, horizon, runner.config.time_chunk)
        runner.log(f"vector: timed {label} over {horizon} rounds, 1 run: "
                   f"{time.perf_counter() - start:.1f} s")
    return results, costs


def run_moderation(runner: Runner) -> tuple[dict[str, Result], str | None]:
    """``({label: Result}, why nothing ran or None)``; frozen agents as ``"<label> frozen"``."""
    try:
        runner.env("moderation")
    except (ImportError, OSError) as err:  # the lm extra or the stand-in's word lists missing
        return {}, f"text-moderation unavailable: {err}"
    out = {label: runner.one("moderation", label) for label in runner.config.mod_agents}
    for label in runner.config.mod_frozen:
        out[f"{label} frozen"] = runner.one("moderation", label, train_backbone=False)
    return out, None


@dataclasses.dataclass
class Panels:
    """Every panel's results (see the ``run_*`` functions)."""

    params: dict[str, dict[str, dict[int, Result]]]
    comparison: dict[str, dict[str, Result]]
    long: dict[str, Result] | None
    pools: dict[int, dict[int, Result]]
    buffers: dict[int, Result]
    ablations: dict[str, dict[str, Result]]
    lmc: dict[str, Result]
    costs: dict[str, dict[str, np.ndarray]]
    moderation: dict[str, Result]
    moderation_note: str | None


def run(runner: Runner) -> Panels:
    return Panels(run_params(runner), run_comparison(runner), run_long(runner),
                  run_pools(runner), run_buffers(runner), run_ablations(runner),
                  *run_lmc(runner), *run_moderation(runner))


# -- Statistics and tables -----------------------------------------------------------------------


def after_start(result: Result, start: int) -> np.ndarray:
    """``(runs,)`` regret accumulated in rounds ``start + 1 .. T``."""
    return C.final_regret(result) - C.final_regret(result, start)


def late_rate(result: Result) -> np.ndarray:
    """``(runs,)`` regret per round over the last fifth of the rounds."""
    start = late_start(result.horizon)
    return after_start(result, start) / (result.horizon - start)


def accuracy(result: Result, start: int = 0) -> np.ndarray:
    """``(runs,)`` the fraction of optimal actions in rounds ``start + 1 .. T`` (moderation)."""
    before = C.final_regret(result, start, "correct") if start else 0.0
    return (C.final_regret(result, metric="correct") - before) / (result.horizon - start)


def group_verdict(finals: Mapping[str, np.ndarray], good: Sequence[str],
                  bad: Sequence[str]) -> tuple[bool | None, str]:
    """"Every law of ``good`` has lower regret than every law of ``bad``": True on the means,
    False when some good law is significantly above some bad one (paired), else None."""
    good, bad = [g for g in good if g in finals], [b for b in bad if b in finals]
    if not good or not bad:
        return None, "only one group was run"
    worst_good = max(good, key=lambda g: finals[g].mean())
    best_bad = min(bad, key=lambda b: finals[b].mean())
    return C.decide(finals[worst_good].mean() < finals[best_bad].mean(),
                    any(C.lower(finals[g], finals[b]) is False for g in good for b in bad)), (
        f"worst of {good}: {worst_good} {finals[worst_good].mean():.1f}; best of "
        f"{bad}: {best_bad} {finals[best_bad].mean():.1f}")


def param_count(label: str, dim: int, config: Config, outputs: int, size: int) -> int:
    """The paper's parameter count of ``label``'s network (Li et al. 2024, Fig. 1)."""
    return jb.nets.paper_param_count(HEADS[label], dim, config.hidden, outputs, size)


def count_table(config: Config) -> C.Table:
    """The parameter counts at M = 8 for d = 100, D = 64, C = 1 (paper and trainable)."""
    nets = {k: jb.nets.IndexNetwork(HEADS[k], 100, ensemble_size=8)
            for k in ("ES++", "EpiNet", "Ensemble+", "Greedy")}
    return C.table("Parameter counts at M = 8 (d = 100, D = 64, C = 1)",
                   ["network", "paper count (incl. frozen prior)", "trainable (library)",
                    "frozen (library)"],
                   [(k, f"{jb.nets.paper_param_count(HEADS[k], 100):,}", f"{n.num_trainable:,}",
                     f"{n.num_frozen:,}") for k, n in nets.items()],
                   "The paper's formulas (App. A.7.1, `jb.nets.paper_param_count`) beside the "
                   "library networks' `num_trainable` / `num_frozen`.")


def params_table(runner: Runner, params) -> C.Table:
    config, tasks = runner.config, runner.tasks
    dims = {task: runner.env(task).spec().dim for task in params}
    return C.table(
        f"Figs. 1 / 10: final regret at T = {config.horizon} against parameter count",
        ["agent, M"] + [f"{tasks[t].short}: {c}" for t in params for c in ("params", "R_T")],
        [(f"{label}, M = {m}", *[c for task, by_label in params.items() for c in (
            f"{param_count(label, dims[task], config, tasks[task].outputs, m):,}",
            C.fmt_ci(C.final_regret(by_label[label][m])))])
         for label in index_agents(config) for m in config.sizes],
        f"Mean ± 95% CI over {config.num_runs} runs; the paper's parameter counts.")


def comparison_table(runner: Runner, comparison) -> C.Table:
    tasks = [runner.tasks[t] for t in comparison]
    return C.table(
        "Fig. 3: final regret and regret per round over the last fifth of the rounds",
        ["agent"] + [c for t in tasks for c in (f"{t.short} R_T (T = {t.horizon})",
                                                f"{t.short} R/round, last fifth")],
        [(label, *[c for by_label in comparison.values() for c in (
            C.fmt_ci(C.final_regret(by_label[label])), f"{late_rate(by_label[label]).mean():.3f}")])
         for label in (*runner.config.agents, RANDOM)],
        "Mean ± 95% CI over runs (" + ", ".join(f"{t.short}: {t.num_runs}" for t in tasks)
        + f"); M = {runner.config.ensemble_size}.")


def start_gaps(runner: Runner, task: str, by_label) -> dict[str, np.ndarray]:
    """``{agent: paired regret after the update start minus random's}``."""
    u = runner.update_start(task)
    return {label: after_start(by_label[label], u) - after_start(by_label[RANDOM], u)
            for label in runner.config.agents}


def start_table(runner: Runner, comparison) -> C.Table:
    gaps = {task: start_gaps(runner, task, by_label) for task, by_label in comparison.items()}
    return C.table(
        "Fig. 3: regret after the update start minus uniform random's (paired)",
        ["agent"] + [f"{runner.tasks[t].short} (after round {runner.update_start(t)})"
                     for t in comparison],
        [(label, *[C.gap_text(gaps[task][label]) for task in comparison])
         for label in runner.config.agents],
        "Run by run, R_T - R_u minus random's (u: the preset's update_start), mean ± 95% CI.")


def long_table(runner: Runner, long) -> C.Table:
    t = runner.tasks.get("long")
    if long is None or t is None:
        return C.table("Paper horizon (T = 10^5) on the quadratic", ["agent", "R_T"],
                       [("not run", "—")], "No separate check at this scale.")
    recorded = set(np.asarray(long[RANDOM].steps).tolist())
    steps = [s for s in (t.horizon // 10, t.horizon // 5, t.horizon // 2) if s in recorded]
    return C.table(
        f"Paper horizon: the quadratic at T = {t.horizon:,}",
        ["agent", *[f"R at {s:,}" for s in steps], f"R_T (T = {t.horizon:,})",
         "R/round, last fifth"],
        [(label, *[C.fmt_ci(C.final_regret(result, s)) for s in steps],
          C.fmt_ci(C.final_regret(result)), f"{late_rate(result).mean():.3f}")
         for label, result in long.items()],
        f"Mean ± 95% CI over {t.num_runs} runs (EpiNet, 10x dearer a round, not run).")


def pools_table(runner: Runner, pools) -> C.Table:
    config, sizes = runner.config, runner.config.pool_ensemble_sizes
    return C.table(
        f"Fig. 4: ES++ final regret at T = {config.horizon} against pool size and M",
        ["pool size", *[f"M = {m}" for m in sizes]],
        [(f"{pool:,}", *[C.fmt_ci(C.final_regret(by_size[m])) for m in sizes])
         for pool, by_size in pools.items()],
        f"Mean ± 95% CI over {config.num_runs} runs; {runner.env('quadratic').num_arms} arms "
        "a round from the pool.")


def buffers_table(runner: Runner, buffers) -> C.Table:
    task, largest = runner.tasks[runner.config.buffer_task], max(buffers)
    full = C.final_regret(buffers[largest])
    gaps = {c: C.final_regret(r) - full for c, r in buffers.items()}
    return C.table(
        f"Fig. 11: ES++ buffer capacity on the {task.short} task (T = {task.horizon})",
        ["capacity C", "R_T", f"R_T - R_T(C = {largest:,}) (paired)", "relative"],
        [(f"{c:,}", C.fmt_ci(C.final_regret(r)), C.gap_text(gaps[c]),
          f"{100 * gaps[c].mean() / max(full.mean(), 1e-12):+.1f}%") for c, r in buffers.items()],
        f"Mean ± 95% CI over {task.num_runs} runs.")


def ablations_table(runner: Runner, ablations) -> C.Table:
    return C.table(
        f"Fig. 14: ES++ index laws on the quadratic (T = {runner.config.horizon})",
        ["ablation", "law", "R_T", "R_T - default (paired)"],
        [(name, law, C.fmt_ci(C.final_regret(r)),
          C.gap_text(C.final_regret(r) - C.final_regret(next(iter(by_law.values())))))
         for name, by_law in ablations.items() for law, r in by_law.items()],
        f"Mean ± 95% CI over {runner.config.num_runs} runs; one law varied at a time; the "
        "first row of each ablation is the default.")


def window_ms(costs: Mapping[str, np.ndarray], lo: float, hi: float) -> float:
    """ms per round of the fastest chunk ending in ``(lo, hi]`` (load only slows chunks)."""
    pick = (costs["steps"] > lo) & (costs["steps"] <= hi)
    return float(np.min(costs["ms"][pick])) if pick.any() else math.nan


def cost_windows(horizon: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """App. F.2's early and late windows: rounds ``(T/4, T/2]`` and ``(3T/4, T]``."""
    return (horizon / 4, horizon / 2), (3 * horizon / 4, horizon)


def lmc_table(runner: Runner, lmc, costs) -> C.Table:
    task = runner.tasks["vector"]
    early, late = cost_windows(task.horizon)

    def cells(label):
        if label not in costs:
            return ["—"] * 3
        a, b = window_ms(costs[label], *early), window_ms(costs[label], *late)
        return [f"{a:.3f}", f"{b:.3f}", f"{b / a:.2f}"]

    return C.table(
        f"App. F.2: Ensemble++ against LMC-TS on vector-quadratic (T = {task.horizon})",
        ["agent", "R_T", f"ms/round, rounds {early[0]:.0f}-{early[1]:.0f}",
         f"ms/round, rounds {late[0]:.0f}-{late[1]:.0f}", "late / early"],
        [(label, C.fmt_ci(C.final_regret(r)), *cells(label)) for label, r in lmc.items()],
        f"Regret: mean ± 95% CI over {task.num_runs} runs. Cost: one run timed in chunks of "
        f"{min(runner.config.time_chunk, task.horizon)} rounds (the window's fastest chunk).")


def always_rates(runner: Runner) -> dict[str, tuple[float, float]]:
    """``{policy: (accuracy, expected regret per round)}`` of always-block and always-publish,
    in closed form from the corpus' hate rate and the environment's rewards."""
    env = runner.env("moderation")
    hate, block = float(env.data.meta.hate_rate), float(env.block_reward)
    posts = ((1.0 - hate, float(env.free_reward)), (hate, float(env.hate_reward)))  # (P, publish)
    return {policy: (sum(w * float(take(block, p) >= max(block, p)) for w, p in posts),
                     sum(w * (max(block, p) - take(block, p)) for w, p in posts))
            for policy, take in (("always block", lambda b, p: b),
                                 ("always publish", lambda b, p: p))}


def moderation_table(runner: Runner, moderation, note: str | None) -> C.Table:
    task, late = runner.tasks["moderation"], late_start(runner.tasks["moderation"].horizon)
    rows = [("not run", "—", "—", "—", "—")] if note else [
        (label, C.fmt_ci(C.final_regret(r)), C.fmt_ci(accuracy(r)), C.fmt_ci(accuracy(r, late)),
         f"{(C.final_regret(r, metric='blocked') / task.horizon).mean():.2f}")
        for label, r in moderation.items()] + [
        (policy, f"{rate * task.horizon:.1f}", f"{acc:.2f}", f"{acc:.2f}",
         "1.00" if policy == "always block" else "0.00")
        for policy, (acc, rate) in always_rates(runner).items()]
    return C.table(
        f"Moderation (stand-in corpus, T = {task.horizon:,}): accuracy beside regret",
        ["agent", "R_T", "accuracy (all rounds)", f"accuracy, rounds {late + 1:,}-{task.horizon:,}",
         "blocked"], rows,
        note or f"Mean ± 95% CI over {task.num_runs} runs; 'frozen' trains the heads only.")


def tables(runner: Runner, panels: Panels) -> list[C.Table]:
    p = panels
    return [count_table(runner.config), params_table(runner, p.params),
            comparison_table(runner, p.comparison), start_table(runner, p.comparison),
            long_table(runner, p.long), pools_table(runner, p.pools),
            buffers_table(runner, p.buffers), ablations_table(runner, p.ablations),
            lmc_table(runner, p.lmc, p.costs),
            moderation_table(runner, p.moderation, p.moderation_note)]


# -- Claims (Li et al. 2024, Sec. 5.2, App. F.2, G.5; the authors' code) ------------------------


def check_claims(runner: Runner, panels: Panels) -> list[tuple[str, bool | None, str]]:
    """Every claim's ``(claim, verdict, evidence)``."""
    config, tasks, comparison = runner.config, runner.tasks, panels.comparison
    counts = {label: jb.nets.paper_param_count(HEADS[label], 100) for label in PAPER_COUNTS}
    claims = [("Parameter ordering at M = 8 (d = 100, D = 64, C = 1): Ensemble++ 11,713 < EpiNet "
               "17,931 < Ensemble+ 22,288",
               counts == PAPER_COUNTS and counts["ES++"] < counts["EpiNet"] < counts["Ensemble+"],
               ", ".join(f"{k} {v:,}" for k, v in counts.items()))]
    for task in (t for t in ("shuttle", "quadratic") if t in comparison):
        gaps, t = start_gaps(runner, task, comparison[task]), tasks[task]
        claims.append((f"Every agent beats uniform random on {t.title} once past its update "
                       f"start (rounds {runner.update_start(task) + 1}-{t.horizon})",
                       C.all_of([C.verdict_at_most(g, 0.0) for g in gaps.values()]),
                       "; ".join(f"{k} {C.gap_text(g)}" for k, g in gaps.items())))
    if "quadratic" in comparison and tasks["quadratic"].horizon <= AUTHORS_HORIZON:
        by_label = comparison["quadratic"]
        es, verdicts, parts = C.final_regret(by_label["ES++"]), [], []
        for other in (k for k in ("Greedy", "Ensemble+") if k in by_label):
            mean, half = C.paired_gap(es, C.final_regret(by_label[other]))
            verdicts.append(C.decide(mean >= 0, mean + half < 0))
            parts.append(f"R(ES++) - R({other}) = {mean:+.1f} ± {half:.1f}")
        claims.append((f"As in the authors' code at T = {tasks['quadratic'].horizon:,}: "
                       "Ensemble++ is not below Greedy or Ensemble+ on the quadratic",
                       C.all_of(verdicts), "; ".join(parts)))
    claims += paper_ordering_claims(runner, panels.long, comparison)
    checks = {}
    for task in (t for t in ("quadratic", "neural") if t in comparison):
        finals = {k: C.final_regret(comparison[task][k]) for k in config.agents}
        if "Greedy" not in finals or len(finals) < 3:
            continue
        rank = sorted(finals, key=lambda k: finals[k].mean(), reverse=True).index("Greedy") + 1
        better = [k for k in finals if k != "Greedy"  # the gap's 95% interval below 0
                  and sum(C.paired_gap(finals["Greedy"], finals[k])) < 0]
        checks[task] = (C.decide(rank <= 2, len(better) >= 2), f"Greedy ranks {rank} of "
                        f"{len(finals)} from the worst, significantly below {better or 'none'}")
    if checks:
        claims.append((f"Fig. 3: Greedy is the worst or near-worst on the synthetic tasks "
                       f"(T = {config.horizon:,})", *C.every(checks)))
    for task, by_label in panels.params.items():
        if "ES++" not in by_label or len(by_label) < 2:
            continue
        pairs = {f"M={m} vs {k}": (C.final_regret(by_label["ES++"][m]),
                                    C.final_regret(by_label[k][m]))
                 for m in config.sizes for k in ("Ensemble+", "EpiNet") if k in by_label}
        claims.append((f"Figs. 1 / 10 on {tasks[task].title}: Ensemble++ has lower regret than "
                       "Ensemble+ and EpiNet at every M", *C.every(
                           {n: (C.lower(a, b), C.gap_text(a - b)) for n, (a, b) in pairs.items()})))
    claims += pools_claims(config, panels.pools) + buffer_claims(runner, panels.buffers)
    claims += ablation_claims(panels.ablations) + lmc_claims(runner, panels.lmc, panels.costs)
    return claims + moderation_claims(runner, panels.moderation, panels.moderation_note)


def paper_ordering_claims(runner: Runner, long, comparison) -> list:
    """Fig. 3's ordering at T = 10^5: from the paper-horizon check, or from Fig. 3 when that
    runs at the paper's horizon; "not run" otherwise."""
    claim = "Fig. 3: on the quadratic at T = 10^5 Ensemble++ has the lowest regret"
    t = runner.tasks["quadratic" if long is None else "long"]
    left = ", EpiNet left out" if long is not None and "EpiNet" not in long else ""
    if long is None and "quadratic" in comparison and t.horizon >= PAPER_HORIZON:
        long = comparison["quadratic"]
    elif long is None:
        return [(claim, None, "not run at this scale")]
    learners = [k for k in long if k != RANDOM]
    best = min(learners, key=lambda k: C.mean_final(long[k]))
    es = C.final_regret(long["ES++"])
    verdict = C.decide(best == "ES++", C.lower(es, C.final_regret(long[best])) is False)
    return [(claim + f" (T = {t.horizon:,}, {t.num_runs} runs{left})", verdict,
             f"lowest: {best}; " + "; ".join(f"R(ES++) - R({k}) = "
                                            f"{C.gap_text(es - C.final_regret(long[k]))}"
                                            for k in learners if k != "ES++")
             + "; regret per round over the last fifth: " + ", ".join(
                 f"{k} {late_rate(v).mean():.3f}" for k, v in long.items()))]


def pools_claims(config: Config, pools) -> list:
    claims, sizes = [], config.pool_ensemble_sizes
    if len(pools) > 1:
        checks = {}
        for m in sizes:
            finals = {p: C.final_regret(pools[p][m]) for p in pools}
            means = {p: v.mean() for p, v in finals.items()}
            hi, lo = max(means, key=means.get), min(means, key=means.get)
            spread = means[hi] / max(means[lo], 1e-12) - 1.0
            (a, ha), (b, hb) = C.mean_ci(finals[hi]), C.mean_ci(finals[lo])
            checks[f"M={m}"] = (C.decide(spread <= FLAT, a - ha > (1 + FLAT) * (b + hb)),
                                f"spread {100 * spread:.0f}% (pool {lo:,} lowest, {hi:,} highest)")
        claims.append((f"Fig. 4: regret is largely unaffected by the pool size (within "
                       f"{100 * FLAT:.0f}%)", *C.every(checks)))
    if len(sizes) > 1:
        gaps = {pool: (C.final_regret(by_size[max(sizes)]), C.final_regret(by_size[min(sizes)]))
                for pool, by_size in pools.items()}
        claims.append(("Fig. 4: a larger M helps (lower regret at the largest M than at the "
                       "smallest)", C.all_of([C.lower(*g) for g in gaps.values()]), "; ".join(
                           f"pool {pool:,}: R(M={max(sizes)}) - R(M={min(sizes)}) = "
                           f"{C.gap_text(big - small)}" for pool, (big, small) in gaps.items())))
    return claims


def buffer_claims(runner: Runner, buffers) -> list:
    task, largest = runner.tasks[runner.config.buffer_task], max(buffers)
    smaller = [c for c in buffers if c < largest]
    if not smaller:
        return []
    # the paper's C = 10^4 at T = 10^5: a tenth of the horizon (the nearest capacity run)
    capacity = min(smaller, key=lambda c: abs(math.log(c / (task.horizon / 10))))
    full = C.final_regret(buffers[largest])
    mean, half = C.mean_ci(C.final_regret(buffers[capacity]) - full)
    scale = max(full.mean(), 1e-12)
    verdict = C.decide(abs(mean) <= SLIGHT * scale, abs(mean) - half > SLIGHT * scale)
    return [(f"Fig. 11: a buffer of C = {capacity:,} (about T/10) changes final regret by less "
             f"than {100 * SLIGHT:.0f}% against C = {largest:,}", verdict,
             f"paired gap {mean:+.1f} ± {half:.1f} = {100 * mean / scale:+.1f}% of "
             f"{full.mean():.1f} ({task.short}, T = {task.horizon:,})")]


def ablation_claims(ablations) -> list:
    claims = []
    for name, field, _, text in ABLATIONS:
        finals = {law: C.final_regret(r) for law, r in ablations.get(name, {}).items()}
        if len(finals) < 2:
            continue
        if name != "perturbation":
            good, bad = (DISCRETE, CONTINUOUS) if name == "update" else (CONTINUOUS, DISCRETE)
            claims.append((f"Fig. 14 ({field}): {text}", *group_verdict(finals, good, bad)))
            continue
        means = [v.mean() for v in finals.values()]
        scale = max(np.mean(means), 1e-12)
        pairs = [(a, b, *C.paired_gap(finals[a], finals[b]))
                 for a, b in itertools.combinations(finals, 2)]
        significant = [(a, b, g) for a, b, g, h in pairs if abs(g) - h > 0]
        large = [g for *_, g in significant if abs(g) > SLIGHT * scale]
        claims.append((f"Fig. 14 ({field}): {text}", C.decide(not significant, bool(large)),
                       f"spread of the means {100 * (max(means) - min(means)) / scale:.1f}%; "
                       f"significant pairs {[(a, b) for a, b, _ in significant] or 'none'}"))
    return claims


def lmc_claims(runner: Runner, lmc, costs) -> list:
    task = runner.tasks["vector"]
    if "ES++" not in lmc or LMC not in lmc:
        return []
    es, mc = C.final_regret(lmc["ES++"]), C.final_regret(lmc[LMC])
    early, late = cost_windows(task.horizon)
    ratios = {k: window_ms(v, *late) / window_ms(v, *early) for k, v in costs.items()}
    enough = (int(np.sum(costs["ES++"]["steps"] > early[0])) >= 8
              and runner.update_start("vector") < early[0])
    return [(f"App. F.2: Ensemble++ has lower regret than LMC-TS on vector-quadratic "
             f"(T = {task.horizon:,})", C.lower(es, mc),
             f"paired R(ES++) - R(LMC-TS) = {C.gap_text(es - mc)}"),
            (f"App. F.2: LMC-TS's cost a round grows with t, Ensemble++'s is flat (late / early "
             f">= {GROWTH:g} for LMC-TS, <= {STEADY:g} for ES++)",
             (ratios[LMC] >= GROWTH and ratios["ES++"] <= STEADY) if enough else None,
             ", ".join(f"{k} {ratios[k]:.2f}x" for k in costs)
             + ("" if enough else "; too few timed chunks past the update start"))]


def moderation_claims(runner: Runner, moderation, note: str | None) -> list:
    title = "App. G.5 (moderation, stand-in): "
    if note:
        return [(title + "Ensemble++'s accuracy is above Ensemble+'s and Greedy's", None, note)]
    task = runner.tasks["moderation"]
    late = late_start(task.horizon)
    acc = {k: accuracy(v, late) for k, v in moderation.items()}
    claims = []

    def above(pairs: dict[str, tuple[str, str]]):  # {name: (a, b)}: a's accuracy above b's
        return C.every({name: (C.lower(-acc[a], -acc[b]), f"{C.gap_text(100 * (acc[a] - acc[b]))}"
                               " points") for name, (a, b) in pairs.items()})

    others = [k for k in ("Ensemble+", "Greedy") if k in acc]
    if "ES++" in acc and others:
        claims.append((title + f"Ensemble++'s accuracy over rounds {late + 1:,}-{task.horizon:,} "
                       "is above " + " and ".join(f"{o}'s" for o in others),
                       *above({f"ES++ - {o}": ("ES++", o) for o in others})))
    frozen = [k for k in runner.config.mod_frozen if f"{k} frozen" in acc]
    if frozen:
        claims.append((title + "fine-tuning the backbone beats freezing it (accuracy, last "
                       "fifth)", *above({k: (k, f"{k} frozen") for k in frozen})))
    if "ES++" in moderation:
        best = min(rate for _, rate in always_rates(runner).values()) * task.horizon
        es = C.final_regret(moderation["ES++"])
        claims.append((title + "Ensemble++ beats always-block and always-publish (lower regret)",
                       C.verdict_at_most(es, best),
                       f"ES++ R_T {C.fmt_ci(es)}; the better constant policy {best:.1f}"))
    return claims


# -- Drawing and main ----------------------------------------------------------------------------


def draw_params(ax, runner: Runner, task: str, by_label) -> None:
    """Final regret (mean, 95% CI) against the paper's parameter count, one line per agent."""
    t, dim = runner.tasks[task], runner.env(task).spec().dim
    for label, by_size in by_label.items():
        sizes = sorted(by_size)
        x = [param_count(label, dim, runner.config, t.outputs, m) for m in sizes]
        C.draw_errorbars(ax, x, [by_size[m] for m in sizes], label)
        for xi, m in zip(x, sizes, strict=True):
            ax.annotate(f"{m}", (xi, C.mean_final(by_size[m])), textcoords="offset points",
                        xytext=(3, 3), fontsize=7)
    C.style_axes(ax, "parameters (paper's count; labels: M)", f"regret at T = {t.horizon:,}",
                 f"Fig. {'1' if task == 'quadratic' else '10'}: {t.short}", legend=7,
                 which="both", log="x")


def draw_costs(ax, costs) -> None:
    for label, c in costs.items():
        ax.plot(c["steps"], c["ms"], marker=".", label=label)
    C.style_axes(ax, "round t", "wall time per round (ms, one run)",
                 "App. F.2: cost per round against t", legend=7, which="both", log="y")


def draw_accuracy(ax, moderation, runner: Runner) -> None:
    for label, result in moderation.items():
        steps = np.asarray(result.steps)
        ax.plot(steps, result.mean("correct") / steps, label=label,
                linestyle="--" if label.endswith("frozen") else "-")
    for policy, (acc, _) in always_rates(runner).items():
        ax.axhline(acc, color="k", linestyle=":", linewidth=0.8)
        ax.annotate(policy, (1, acc), fontsize=7)
    C.style_axes(ax, "round t", "accuracy so far", "Moderation (stand-in): accuracy", legend=7,
                 which="both", log="x")


def draw_laws(ax, field: str, by_law) -> None:
    """Fig. 14: final regret (mean, 95% CI) of each law, the default first."""
    stats = np.nan_to_num(np.array([C.mean_ci(C.final_regret(r)) for r in by_law.values()]))
    ax.bar(range(len(by_law)), stats[:, 0], yerr=stats[:, 1], capsize=3,
           color=["C0"] + ["C1"] * (len(by_law) - 1))
    ax.set_xticks(range(len(by_law)), list(by_law), rotation=30, fontsize=8)
    low, high = np.min(stats[:, 0] - stats[:, 1]), np.max(stats[:, 0] + stats[:, 1])
    ax.set_ylim(max(0.0, low - 0.5 * (high - low)), high + 0.2 * (high - low) + 1e-9)
    ax.grid(alpha=0.3, axis="y")
    ax.set(ylabel="ES++ final regret", title=f"Fig. 14: {field}")


def draw(runner: Runner, panels: Panels):
    """The figure: 3 rows of 5 panels."""
    config = runner.config
    fig, axes = C.new_figure(3, 5, width=4.4, height=3.6)
    ax = iter(axes.ravel())
    for task in ("quadratic", "neural"):
        if task in panels.params:
            draw_params(next(ax), runner, task, panels.params[task])
        else:
            C.not_run(next(ax), f"Fig. {'1' if task == 'quadratic' else '10'}")
    for task in ("quadratic", "neural", "shuttle"):
        a, t = next(ax), runner.tasks[task]
        if task in panels.comparison:
            jb.plot_regret(panels.comparison[task], ax=a, title=f"Fig. 3: {t.short}")
            a.axvline(runner.update_start(task), color="k", linestyle=":", linewidth=0.8)
        else:
            C.not_run(a, f"Fig. 3: {t.title}")
    if panels.long is not None:
        jb.plot_regret(panels.long, ax=next(ax),
                       title=f"Quadratic at T = {runner.tasks['long'].horizon:,}")
    else:
        C.not_run(next(ax), "Quadratic at T = 10^5")
    a, pools = next(ax), sorted(panels.pools)
    for m in config.pool_ensemble_sizes:
        C.draw_errorbars(a, pools, [panels.pools[p][m] for p in pools], f"M = {m}")
    C.style_axes(a, "pool size (decision set)", f"ES++ regret at T = {config.horizon:,}",
                 "Fig. 4: decision-set size", legend=7, which="both", log="x")
    a.set_xticks(pools, [f"{p:,}" for p in pools])
    a.minorticks_off()
    jb.plot_regret({f"C = {c:,}": r for c, r in panels.buffers.items()}, ax=next(ax),
                   title=f"Fig. 11: buffer ({runner.tasks[config.buffer_task].short})")
    for name, field, *_ in ABLATIONS:
        draw_laws(next(ax), field, panels.ablations[name])
    jb.plot_regret(panels.lmc, ax=next(ax), title="App. F.2: vector-quadratic")
    draw_costs(next(ax), panels.costs)
    a, b = next(ax), next(ax)
    if panels.moderation:
        jb.plot_regret(panels.moderation, ax=a, title="Moderation (stand-in): regret")
        draw_accuracy(b, panels.moderation, runner)
    else:
        for x in (a, b):
            C.not_run(x, "Moderation", panels.moderation_note or "not run")
    return fig


def body(r: C.Run) -> C.Page:
    config = r.config
    runner = Runner(config, r.key, r.progress, log=r.log, cache=r.args.cache)
    panels = run(runner)
    intro = ", ".join(f"{t.short}: T = {t.horizon:,}, {t.num_runs} runs"
                      for t in runner.tasks.values())
    intro += (f"; backbone {' x '.join(map(str, config.hidden))} ReLU MLP, M = "
              f"{config.ensemble_size} unless swept.")
    return C.Page(draw(runner, panels), tables(runner, panels), check_claims(runner, panels),
                  intro, {"config": config, "runner": runner, "panels": panels})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
