"""Neural Ensemble++ (Li, Xu, Wang & Luo): Figs. 1/10, 3, 4, 11, 14, App. F.2, G.5.

Li et al. 2024, Sec. 5.2, App. F.2 and G.5, judged at the horizons a CPU can run against what
the authors' code does there (it does not show Ensemble++ below Greedy or Ensemble+ on the
quadratic preset at T <= 20,000: the paper's ordering is tested at T = 10^5 only). The library
agents ``neural-ensemble-pp`` ("ES++"), ``ensemble-plus``, ``epinet`` and ``neural-greedy`` run
with the authors' per-task presets (applied to every method) on a 2 x 64 ReLU MLP, beside
uniform random:

* **Figs. 1 / 10**: final regret against the paper's parameter count (``jb.nets.
  paper_param_count``: 11,713 / 17,931 / 22,288 at M = 8, d = 100), M swept, on
  ``quadratic-pool`` (the authors' instance) and ``random-mlp-bernoulli`` (the "Neural" task).
* **Fig. 3**: the agents and random on those tasks and ``shuttle-epp``; regret after the update
  start, paired with random's; and Ensemble++, Ensemble+, Greedy at ``long_horizon`` (T = 10^5).
* **Fig. 4**: pool sizes x M; **Fig. 11**: buffer capacity C; **Fig. 14**: update-index,
  reference and perturbation laws, one at a time.
* **App. F.2**: Ensemble++ against LMC-TS (full-history Langevin steps) on ``vector-quadratic``:
  regret, and wall time per round against t (:func:`round_costs`).
* **App. G.5** (moderation, on the offline stand-in): Ensemble++, Ensemble+, Greedy on
  ``text-moderation`` with a small random ``jb.nets.TransformerNetwork``, fine-tuned and frozen;
  accuracy beside regret (no pretrained GPT-2 ships offline).

Common random numbers (gaps paired run by run); static fields swept with ``jb.sweep``; every
point cached, so one shared by panels (ES++ at M = 8) runs once. ``small`` took 26 min on the
2-core machine; EpiNet (about 10x Ensemble++'s cost a round) is left out of the T = 10^5 check.
Verdicts: not reproduced when the paired 95% interval contradicts the claim, not decidable when
it straddles it::

    python -m benchmarks.ensemble_pp_neural                  # small
    python -m benchmarks.ensemble_pp_neural --scale paper    # GPU
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

import jaxbandits as jb
from benchmarks import framework as C
from jaxbandits import Result

NAME = "ensemble_pp_neural"
TITLE = ("Neural Ensemble++: regret vs parameters, nonlinear tasks, decision-set size, buffer, "
         "index laws, LMC-TS and moderation")
AGENTS = {"ES++": "neural-ensemble-pp", "Ensemble+": "ensemble-plus", "EpiNet": "epinet",
          "Greedy": "neural-greedy"}  # label -> registry name
HEADS = {"ES++": "ensemble++", "Ensemble+": "ensemble+", "EpiNet": "epinet", "Greedy": "none"}
RANDOM, LMC = "random", "LMC-TS"
PAPER_COUNTS = {"ES++": 11_713, "EpiNet": 17_931, "Ensemble+": 22_288}  # Fig. 1, M = 8
PAPER_HORIZON = 100_000  # the horizon of the paper's synthetic-task figures
AUTHORS_HORIZON = 20_000  # the authors' code, quadratic preset, T <= 20,000
DISCRETE = ("coordinate", "cube", "sparse", "one_hot")
CONTINUOUS = ("sphere", "gaussian")
#: Fig. 14's ablations: (label, the agent field, the paper's claim)
ABLATIONS = (("update", "update_index", "discrete update sets are better"),
             ("reference", "reference", "continuous references are better"),
             ("perturbation", "perturbation", "the perturbation law makes no difference"))
SLIGHT = 0.10  # "only slightly" (Fig. 11), "no difference" (Fig. 14(c)): within 10%
FLAT = 0.25    # "largely unaffected" (Fig. 4): within 25%
GROWTH, STEADY = 1.5, 1.3  # App. F.2: late / early cost >= 1.5 for LMC-TS, <= 1.3 for ES++


@dataclasses.dataclass(frozen=True)
class Config:
    """Sizes of one scale. ``horizon`` / ``num_runs``: the quadratic and Neural tasks; ``sizes``:
    Figs. 1 / 10's M (holding ``ensemble_size``, every other panel's M); ``agents``,
    ``param_tasks``, ``tasks``: Figs. 1 / 3's; ``shuttle_*``, ``lmc_*`` (App. F.2; lmc_block_runs
    1 on a multi-core CPU, where LMC-TS's nested loops in multi-run blocks grew the memory to 18
    GB at T = 2,000), ``mod_*`` (moderation; its transformer ``lm_*``), ``long_*`` (T = 10^5;
    None: not run): the other panels' sizes; ``quad_env`` / ``neural_env`` / ``vector_env``,
    ``agent_overrides`` / ``lmc_overrides``: ``((field, value), ...)`` for the tests' tiny sizes;
    ``pool_*`` (Fig. 4), ``buffer*`` (Fig. 11), the laws (Fig. 14, each first one the default);
    ``blocks``: blocks a point's runs are split into (results depend on it, not on devices)."""

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
    # tiny: the smoke test's sizes: ES++, Greedy and random on a tiny quadratic (Figs. 1, 4, 11
    # and 14 at their shared default point only), ES++ and LMC-TS on a 4-dimensional
    # vector-quadratic (run and timed), ES++ on 50 posts: eight programs in all
    "tiny": Config(horizon=40, num_runs=2, sizes=(2,), ensemble_size=2,
                   agents=("ES++", "Greedy"), param_tasks=("quadratic",),
                   tasks=("quadratic",), shuttle_horizon=40, shuttle_runs=2,
                   quad_env=_TINY_ENV, neural_env=_TINY_ENV, pool_sizes=(30,),
                   pool_ensemble_sizes=(2,), buffer_task="quadratic", buffers=(64,),
                   updates=("coordinate",), references=("sphere",), perturbations=("sphere",),
                   lmc_horizon=40, lmc_runs=2, vector_env=(("dim", 4), ("num_arms", 5)),
                   time_chunk=10, lmc_agents=("ES++", LMC), mod_horizon=40, mod_runs=2,
                   mod_rows=50, mod_length=8, lm_width=8, lm_heads=1, lm_layers=1,
                   mod_agents=("ES++",), mod_frozen=(), long_agents=("ES++",), hidden=(8,),
                   agent_overrides=(("batch_size", 8), ("buffer_size", 64), ("update_start", 8)),
                   lmc_overrides=(("backbone", jb.nets.MLPBackbone((8,), "leaky_relu")),
                                  ("num_grad_steps", 3)),
                   chunk_size=40, num_records=12),
    # not on the command line: the sizes notebooks/neural_ensemblepp.ipynb tells the story at
    "notebook": Config(horizon=1500, num_runs=2, sizes=(8,), param_tasks=("quadratic",),
                       tasks=("quadratic", "shuttle"), shuttle_horizon=400, shuttle_runs=2,
                       pool_sizes=(1000,), pool_ensemble_sizes=(8,), buffer_task="quadratic",
                       buffers=(10_000,), updates=("coordinate", "sphere"),
                       references=("sphere", "coordinate"), perturbations=("sphere",),
                       lmc_horizon=1000, lmc_runs=2, mod_horizon=6000, mod_runs=2,
                       mod_agents=("ES++", "Greedy"), mod_frozen=("ES++",), num_records=30),
    "small": Config(horizon=3000, num_runs=4, sizes=(2, 8, 32), shuttle_horizon=800,
                    shuttle_runs=4, pool_sizes=(200, 1000, 5000), pool_ensemble_sizes=(2, 8, 32),
                    buffers=(300, 1000, 10_000), references=("sphere", "gaussian", "coordinate",
                                                             "cube"),
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
    """An environment of the reproduction (``key``: quadratic, neural, shuttle, vector,
    moderation or long, the quadratic at the paper's horizon) with its preset, T, runs and the
    head's outputs C."""

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
    """The environment of ``task``: the authors' instance at their sizes, their recipe at the
    tests' sizes; the quadratic precomputes the authors' subset sequence for its longest T."""
    instance = {True: "authors_recipe", False: "authors"}
    if task.key in ("quadratic", "long"):
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
    """A neural index agent with the task's preset (resolved, so a swept field at its preset
    value is the same program), LMC-TS with the whole horizon in its buffer, or random."""
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
    """The tasks' environments and agents, run through :class:`framework.Runner` (common random
    numbers, each point once): :meth:`results` runs one agent on one task at the values of one
    field (``"env.<name>"`` for an environment field), the others fixed."""

    def __init__(self, config: Config, key: jax.Array, progress: bool | None = False,
                 log: Callable[[str], None] | None = None, cache=None):
        self.config, self.key, self.progress = config, key, progress
        self.tasks = make_tasks(config)
        self.log = log or (lambda message: None)
        self.runs = C.Runner(key, cache=cache, progress=progress)

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
        return {**C.run_options(t.horizon, self.config.chunk_size, self.config.num_records,
                                include=marks, progress=self.progress), "block_runs": block_runs}

    def results(self, task: str, label: str, field: str | None = None,
                values: Sequence[Any] = (None,), fixed: Mapping[str, Any] | None = None
                ) -> list[Result]:
        """``label`` on ``task`` at each of ``values`` of ``field`` (None: the agent itself),
        with ``fixed`` fields set; one Result per value."""
        t, fixed, start = self.tasks[task], dict(fixed or {}), time.perf_counter()
        env_fields = {n[4:]: v for n, v in fixed.items() if n.startswith("env.")}
        agent_fields = {n: v for n, v in fixed.items() if not n.startswith("env.")}
        env = self.env(task).replace(**env_fields) if env_fields else self.env(task)
        agent = self.agent(task, label)
        agent = agent.replace(**agent_fields) if agent_fields else agent
        if field is None:
            results = [self.runs.simulate(env, agent, t.horizon, t.num_runs, name=label,
                                          **self.options(task))]
        else:
            results = self.runs.sweep(env, agent, field, list(values), t.horizon, t.num_runs,
                                      name=label, **self.options(task))
        what = label if field is None else f"{label}, {field} in {list(values)}"
        self.log(f"{task} (T = {t.horizon}, {t.num_runs} runs): {what}: compile "
                 f"{sum(r.compile_time for r in results):.1f} s, total "
                 f"{time.perf_counter() - start:.1f} s")
        return results

    def one(self, task: str, label: str, **fields: Any) -> Result:
        """``label`` on ``task`` with ``fields`` set (one point)."""
        return self.results(task, label, fixed=fields)[0]

    def grid(self, task: str, label: str, field: str, values: Sequence[Any],
             **fixed: Any) -> dict[Any, Result]:
        return dict(zip(values, self.results(task, label, field, values, fixed), strict=True))


def late_start(horizon: int) -> int:
    """The start of the "late" window, the last fifth of the rounds (``4 T // 5``)."""
    return max(1, (4 * horizon) // 5)


@functools.cache
def _timed_programs():
    """``jb.runner.init`` / ``play_chunk`` jitted for one unbatched run (cached: a second call,
    from the notebook, reuses the programs)."""
    return (jax.jit(jb.runner.init, static_argnames="num_slots"),
            jax.jit(jb.runner.play_chunk, static_argnames="length", donate_argnums=2))


def round_costs(env, agent, key: jax.Array, horizon: int, chunk: int) -> dict[str, Any]:
    """Wall time per round of run 0 of ``jb.simulate(env, agent, key, horizon)`` against t:
    played by the runner's round function in chunks of ``chunk`` rounds, each timed (a first
    call that plays no round compiles). ``{"steps": each chunk's last round, "ms": ms per round,
    "regret": the run's final cumulative regret}``."""
    init, play = _timed_programs()
    chunk = max(1, min(chunk, horizon))
    steps, end = jnp.asarray([horizon], jnp.int32), jnp.int32(horizon)
    carry = init(env, agent, key, jnp.uint32(0), num_slots=1)
    carry = jax.block_until_ready(play(env, agent, carry, end, end, steps, length=chunk))
    ends, ms = [], []
    for start in range(0, horizon, chunk):
        t0 = time.perf_counter()
        carry = play(env, agent, carry, jnp.int32(start), end, steps, length=chunk)
        jax.block_until_ready(carry)
        ends.append(min(start + chunk, horizon))
        ms.append(1e3 * (time.perf_counter() - t0) / (ends[-1] - start))
    return {"steps": np.asarray(ends), "ms": np.asarray(ms),
            "regret": float(np.asarray(carry.cumulative)[0])}


# ------------------------------------------------------------------------------------------------
# The panels (in an order that lets later panels reuse earlier points).


def index_agents(config: Config) -> list[str]:
    """The agents of Figs. 1 / 10 (those with an index) that run."""
    return [label for label in ("ES++", "Ensemble+", "EpiNet") if label in config.agents]


def run_params(runner: Runner) -> dict[str, dict[str, dict[int, Result]]]:
    """Figs. 1 / 10: ``{task: {label: {M: Result}}}``."""
    config = runner.config
    return {task: {label: runner.grid(task, label, "ensemble_size", config.sizes)
                   for label in index_agents(config)} for task in config.param_tasks}


def run_comparison(runner: Runner, tasks: Sequence[str] | None = None
                   ) -> dict[str, dict[str, Result]]:
    """Fig. 3: ``{task: {label: Result}}``, the agents at M = ``ensemble_size`` and random."""
    return {task: {label: runner.one(task, label) for label in (*runner.config.agents, RANDOM)}
            for task in (runner.config.tasks if tasks is None else tasks)}


def run_long(runner: Runner) -> dict[str, Result] | None:
    """The quadratic at ``long_horizon`` (None when the scale has none)."""
    if "long" not in runner.tasks:
        return None
    return {label: runner.one("long", label) for label in (*runner.config.long_agents, RANDOM)}


def run_pools(runner: Runner) -> dict[int, dict[int, Result]]:
    """Fig. 4: ``{pool size: {M: Result}}`` for ES++ on the quadratic (the authors' recipe at
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
    config = runner.config
    return runner.grid(config.buffer_task, "ES++", "buffer_size", config.buffers)


def run_ablations(runner: Runner) -> dict[str, dict[str, Result]]:
    """Fig. 14: ``{ablation: {law: Result}}`` for ES++ on the quadratic, one law at a time."""
    config = runner.config
    laws = {"update": config.updates, "reference": config.references,
            "perturbation": config.perturbations}
    return {name: runner.grid("quadratic", "ES++", field, laws[name])
            for name, field, _ in ABLATIONS}


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


# ------------------------------------------------------------------------------------------------
# Statistics and tables.


def after_start(result: Result, start: int) -> np.ndarray:
    """``(runs,)`` regret accumulated in rounds ``start + 1 .. T``."""
    return C.final_regret(result) - C.final_regret(result, start)


def late_rate(result: Result) -> np.ndarray:
    """``(runs,)`` regret per round over the last fifth of the rounds."""
    start = late_start(result.horizon)
    return after_start(result, start) / (result.horizon - start)


def accuracy(result: Result, start: int = 0) -> np.ndarray:
    """``(runs,)`` the fraction of optimal actions in rounds ``start + 1 .. T`` (moderation)."""
    correct, steps = np.asarray(result.metrics["correct"], np.float64), np.asarray(result.steps)
    if start == 0:
        return correct[:, -1] / steps[-1]
    index = int(np.flatnonzero(steps == start)[0])
    return (correct[:, -1] - correct[:, index]) / (steps[-1] - start)


def group_verdict(finals: Mapping[str, np.ndarray], good: Sequence[str],
                  bad: Sequence[str]) -> tuple[bool | None, str]:
    """"Every law of ``good`` has lower regret than every law of ``bad``": True on the means,
    False when some good law is significantly above some bad one (paired), else None."""
    good, bad = [g for g in good if g in finals], [b for b in bad if b in finals]
    if not good or not bad:
        return None, "only one group was run"
    worst_good = max(good, key=lambda g: finals[g].mean())
    best_bad = min(bad, key=lambda b: finals[b].mean())
    contradicted = any(C.lower(finals[g], finals[b]) is False for g in good for b in bad)
    verdict = True if finals[worst_good].mean() < finals[best_bad].mean() else (
        False if contradicted else None)
    return verdict, (f"worst of {good}: {worst_good} {finals[worst_good].mean():.1f}; best of "
                     f"{bad}: {best_bad} {finals[best_bad].mean():.1f}")


def param_count(label: str, dim: int, config: Config, outputs: int, size: int) -> int:
    """The paper's parameter count of ``label``'s network (Li et al. 2024, Fig. 1)."""
    return jb.nets.paper_param_count(HEADS[label], dim, config.hidden, outputs, size)


def count_table(config: Config) -> C.Table:
    """The parameter counts at M = 8 for d = 100, D = 64, C = 1 (paper and trainable)."""
    table = C.Table("Parameter counts at M = 8 (d = 100, D = 64, C = 1)",
                    ["network", "paper count (incl. frozen prior)", "trainable (library)",
                     "frozen (library)"],
                    note="The paper's formulas (Appendix A.7.1; `jb.nets.paper_param_count`) "
                         "and the library networks' own counts (`IndexNetwork(...).num_"
                         "trainable` / `num_frozen`; our reading of App. A.7.1: the paper "
                         "counts a base-head bias and EpiNet's output as M + C).")
    for label in ("ES++", "EpiNet", "Ensemble+", "Greedy"):
        net = jb.nets.IndexNetwork(HEADS[label], 100, ensemble_size=8)
        table.add(label, f"{jb.nets.paper_param_count(HEADS[label], 100):,}",
                  f"{net.num_trainable:,}", f"{net.num_frozen:,}")
    return table


def params_table(runner: Runner, params) -> C.Table:
    config = runner.config
    table = C.Table(f"Figs. 1 / 10: final regret at T = {config.horizon} against parameter count",
                    ["agent, M"] + [f"{runner.tasks[t].short}: {c}" for t in params
                                    for c in ("params", "R_T")],
                    note=(f"Mean ± 95% CI over {config.num_runs} runs; parameter counts by the "
                          f"paper's formulas (the backbone's {' x '.join(map(str, config.hidden))}"
                          " MLP, C = 1 on the quadratic, 2 on the Neural task's classification "
                          "head)."))
    dims = {task: runner.env(task).spec().dim for task in params}
    for label in index_agents(config):
        for m in config.sizes:
            table.add(f"{label}, M = {m}", *[c for task, by_label in params.items() for c in (
                f"{param_count(label, dims[task], config, runner.tasks[task].outputs, m):,}",
                C.fmt_ci(C.final_regret(by_label[label][m])))])
    return table


def comparison_table(runner: Runner, comparison) -> C.Table:
    tasks = [runner.tasks[t] for t in comparison]
    table = C.Table("Fig. 3: final regret and regret per round over the last fifth of the rounds",
                    ["agent"] + [c for t in tasks for c in (f"{t.short} R_T (T = {t.horizon})",
                                                            f"{t.short} R/round, last fifth")],
                    note=("Mean ± 95% CI over runs (" + ", ".join(
                        f"{t.title}: {t.num_runs}" for t in tasks) + "). Presets: " + ", ".join(
                        t.preset for t in tasks) + f"; M = {runner.config.ensemble_size}."))
    for label in (*runner.config.agents, RANDOM):
        table.add(label, *[c for by_label in comparison.values() for c in (
            C.fmt_ci(C.final_regret(by_label[label])), f"{late_rate(by_label[label]).mean():.3f}")])
    return table


def start_gaps(runner: Runner, task: str, by_label) -> dict[str, np.ndarray]:
    """``{agent: paired regret after the update start minus random's}``."""
    u = runner.update_start(task)
    return {label: after_start(by_label[label], u) - after_start(by_label[RANDOM], u)
            for label in runner.config.agents}


def start_table(runner: Runner, comparison) -> C.Table:
    table = C.Table("Fig. 3: regret after the update start minus uniform random's (paired)",
                    ["agent"] + [f"{runner.tasks[t].short} (after round {runner.update_start(t)})"
                                 for t in comparison],
                    note=("Run by run, R_T - R_u of the agent minus the same for uniform random "
                          "(u = the preset's update_start), mean ± 95% CI; negative = better "
                          "than random once training has started."))
    gaps = {task: start_gaps(runner, task, by_label) for task, by_label in comparison.items()}
    for label in runner.config.agents:
        table.add(label, *[C.gap_text(gaps[task][label]) for task in comparison])
    return table


def long_table(runner: Runner, long) -> C.Table:
    t = runner.tasks.get("long")
    if long is None or t is None:
        table = C.Table("Paper horizon (T = 10^5) on the quadratic", ["agent", "R_T"],
                        note=(f"No separate check at this scale (Fig. 3 runs the quadratic at "
                              f"T = {runner.config.horizon:,}; `--scale paper` at T = 10^5)."))
        table.add("not run", "—")
        return table
    recorded = set(np.asarray(long[RANDOM].steps).tolist())
    steps = [s for s in (t.horizon // 10, t.horizon // 5, t.horizon // 2) if s in recorded]
    table = C.Table(f"Paper horizon: the quadratic at T = {t.horizon:,}",
                    ["agent", *[f"R at {s:,}" for s in steps], f"R_T (T = {t.horizon:,})",
                     "R/round, last fifth"],
                    note=(f"Mean ± 95% CI over {t.num_runs} runs (the authors' instance and "
                          "subset sequence, quadratic preset, M = 8, buffer 10,000); EpiNet "
                          "not run (about 10x dearer per round on a CPU)."))
    for label, result in long.items():
        table.add(label, *[C.fmt_ci(C.final_regret(result, s)) for s in steps],
                  C.fmt_ci(C.final_regret(result)), f"{late_rate(result).mean():.3f}")
    return table


def pools_table(runner: Runner, pools) -> C.Table:
    config, sizes = runner.config, runner.config.pool_ensemble_sizes
    table = C.Table(f"Fig. 4: ES++ final regret at T = {config.horizon} against pool size and M",
                    ["pool size", *[f"M = {m}" for m in sizes]],
                    note=(f"Mean ± 95% CI over {config.num_runs} runs; "
                          f"{runner.env('quadratic').num_arms} arms per round drawn from the "
                          "pool (the authors' recipe at each size, seed 2022)."))
    for pool, by_size in pools.items():
        table.add(f"{pool:,}", *[C.fmt_ci(C.final_regret(by_size[m])) for m in sizes])
    return table


def buffers_table(runner: Runner, buffers) -> C.Table:
    task, full = runner.tasks[runner.config.buffer_task], C.final_regret(buffers[max(buffers)])
    table = C.Table(f"Fig. 11: ES++ buffer capacity on the {task.short} task "
                    f"(T = {task.horizon})",
                    ["capacity C", "R_T", f"R_T - R_T(C = {max(buffers):,}) (paired)",
                     "relative"],
                    note=(f"Mean ± 95% CI over {task.num_runs} runs; C = {max(buffers):,} "
                          f"{'holds the whole horizon' if max(buffers) >= task.horizon else ''}"
                          "."))
    for capacity, result in buffers.items():
        gap = C.final_regret(result) - full
        table.add(f"{capacity:,}", C.fmt_ci(C.final_regret(result)), C.gap_text(gap),
                  f"{100 * gap.mean() / max(full.mean(), 1e-12):+.1f}%")
    return table


def ablations_table(runner: Runner, ablations) -> C.Table:
    table = C.Table(f"Fig. 14: ES++ index laws on the quadratic (T = {runner.config.horizon})",
                    ["ablation", "law", "R_T", "R_T - default (paired)"],
                    note=(f"Mean ± 95% CI over {runner.config.num_runs} runs; one law varied at "
                          "a time, the others at the defaults (update Coordinate, reference "
                          "Sphere, perturbation Sphere); the first row of each ablation is the "
                          "default."))
    for name, by_law in ablations.items():
        default = C.final_regret(next(iter(by_law.values())))
        for law, result in by_law.items():
            table.add(name, law, C.fmt_ci(C.final_regret(result)),
                      C.gap_text(C.final_regret(result) - default))
    return table


def window_ms(costs: Mapping[str, np.ndarray], lo: float, hi: float) -> float:
    """ms per round of the fastest chunk ending in ``(lo, hi]`` (other processes only ever slow
    a chunk down)."""
    pick = (costs["steps"] > lo) & (costs["steps"] <= hi)
    return float(np.min(costs["ms"][pick])) if pick.any() else math.nan


def cost_windows(horizon: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """App. F.2's early and late windows: rounds ``(T/4, T/2]`` and ``(3T/4, T]``."""
    return (horizon / 4, horizon / 2), (3 * horizon / 4, horizon)


def lmc_table(runner: Runner, lmc, costs) -> C.Table:
    task = runner.tasks["vector"]
    early, late = cost_windows(task.horizon)
    table = C.Table(f"App. F.2: Ensemble++ against LMC-TS on vector-quadratic (T = {task.horizon})",
                    ["agent", "R_T", f"ms/round, rounds {early[0]:.0f}-{early[1]:.0f}",
                     f"ms/round, rounds {late[0]:.0f}-{late[1]:.0f}", "late / early"],
                    note=(f"Regret: mean ± 95% CI over {task.num_runs} runs. Cost: one run played "
                          f"in chunks of {min(runner.config.time_chunk, task.horizon)} rounds, "
                          "each timed (the window's fastest chunk; compilation excluded). "
                          "LMC-TS keeps the whole history (buffer = T) and takes min(t, "
                          "num_iter) Langevin steps on it every round."))
    for label, result in lmc.items():
        cells = ["—"] * 3
        if label in costs:
            a, b = window_ms(costs[label], *early), window_ms(costs[label], *late)
            cells = [f"{a:.3f}", f"{b:.3f}", f"{b / a:.2f}"]
        table.add(label, C.fmt_ci(C.final_regret(result)), *cells)
    return table


def always_rates(runner: Runner) -> dict[str, tuple[float, float]]:
    """``{policy: (accuracy, expected regret per round)}`` of always-block and always-publish:
    closed forms from the corpus' hate rate and the environment's rewards."""
    env = runner.env("moderation")
    hate, block = float(env.data.meta.hate_rate), float(env.block_reward)
    out = {}
    for policy, take in (("always block", lambda b, p: b), ("always publish", lambda b, p: p)):
        acc = regret = 0.0
        for weight, publish in ((1.0 - hate, float(env.free_reward)),
                                (hate, float(env.hate_reward))):
            best, got = max(block, publish), take(block, publish)
            acc, regret = acc + weight * float(got >= best), regret + weight * (best - got)
        out[policy] = (acc, regret)
    return out


def moderation_table(runner: Runner, moderation, note: str | None) -> C.Table:
    task, config = runner.tasks["moderation"], runner.config
    late = late_start(task.horizon)
    table = C.Table(f"Moderation (stand-in corpus, T = {task.horizon:,}): accuracy beside regret",
                    ["agent", "R_T", "accuracy (all rounds)",
                     f"accuracy, rounds {late + 1:,}-{task.horizon:,}", "blocked"],
                    note=note or (f"Mean ± 95% CI over {task.num_runs} runs; preset hate-speech "
                                  "(M = 4, B = 32, one Adam step every 10 rounds from round 20, "
                                  f"lr 1e-4) on a randomly initialised {config.lm_layers}-block "
                                  f"transformer (width {config.lm_width}; GPT-2's tokenizer, "
                                  f"{config.mod_length} tokens per post); 'frozen' trains the "
                                  "heads only. Always-block / always-publish: closed forms."))
    if note:
        table.add("not run", "—", "—", "—", "—")
        return table
    for label, result in moderation.items():
        blocked = np.asarray(result.metrics["blocked"], np.float64)[:, -1] / task.horizon
        table.add(label, C.fmt_ci(C.final_regret(result)), C.fmt_ci(accuracy(result)),
                  C.fmt_ci(accuracy(result, late)), f"{blocked.mean():.2f}")
    for policy, (acc, rate) in always_rates(runner).items():
        table.add(policy, f"{rate * task.horizon:.1f}", f"{acc:.2f}", f"{acc:.2f}",
                  "1.00" if policy == "always block" else "0.00")
    return table


def tables(runner: Runner, panels: Panels) -> list[C.Table]:
    return [count_table(runner.config), params_table(runner, panels.params),
            comparison_table(runner, panels.comparison),
            start_table(runner, panels.comparison), long_table(runner, panels.long),
            pools_table(runner, panels.pools), buffers_table(runner, panels.buffers),
            ablations_table(runner, panels.ablations),
            lmc_table(runner, panels.lmc, panels.costs),
            moderation_table(runner, panels.moderation, panels.moderation_note)]


# ------------------------------------------------------------------------------------------------
# Claims.


def check_claims(runner: Runner, panels: Panels) -> list[tuple[str, bool | None, str]]:
    """Every claim checked (Li et al. 2024, Sec. 5.2, App. F.2, G.5; and the authors' code)."""
    config, tasks, comparison = runner.config, runner.tasks, panels.comparison
    counts = {label: jb.nets.paper_param_count(HEADS[label], 100) for label in PAPER_COUNTS}
    claims = [("Parameter ordering at M = 8 (d = 100, D = 64, C = 1): Ensemble++ 11,713 < EpiNet "
               "17,931 < Ensemble+ 22,288",
               counts == PAPER_COUNTS and counts["ES++"] < counts["EpiNet"] < counts["Ensemble+"],
               ", ".join(f"{k} {v:,}" for k, v in counts.items()) + " by the paper's formulas")]
    for task in (t for t in ("shuttle", "quadratic") if t in comparison):
        gaps, t, u = start_gaps(runner, task, comparison[task]), tasks[task], runner.update_start(
            task)
        claims.append((f"Every agent beats uniform random on {t.title} once past its update "
                       f"start (rounds {u + 1}-{t.horizon})",
                       C.all_of([C.verdict_at_most(g, 0.0) for g in gaps.values()]),
                       "paired regret after round u minus random's: " + "; ".join(
                           f"{k} {C.gap_text(g)}" for k, g in gaps.items())))
    if "quadratic" in comparison and tasks["quadratic"].horizon <= AUTHORS_HORIZON:
        by_label = comparison["quadratic"]
        es, verdicts, parts = C.final_regret(by_label["ES++"]), [], []
        for other in (k for k in ("Greedy", "Ensemble+") if k in by_label):
            mean, half = C.paired_gap(es, C.final_regret(by_label[other]))
            verdicts.append(True if mean >= 0 else (False if mean + half < 0 else None))
            parts.append(f"R(ES++) - R({other}) = {mean:+.1f} ± {half:.1f}")
        claims.append((f"Small scale matches the authors' code: on the quadratic preset at "
                       f"T = {tasks['quadratic'].horizon:,} Ensemble++ is not below Greedy or "
                       "Ensemble+", C.all_of(verdicts), "; ".join(parts)))
    claims += paper_ordering_claims(runner, panels.long, comparison)
    verdicts, parts = [], []
    for task in (t for t in ("quadratic", "neural") if t in comparison):
        finals = {k: C.final_regret(comparison[task][k]) for k in config.agents}
        if "Greedy" not in finals or len(finals) < 3:
            continue
        rank = sorted(finals, key=lambda k: finals[k].mean(), reverse=True).index("Greedy") + 1
        better = [k for k in finals if k != "Greedy"  # the gap's 95% interval below 0
                  and sum(C.paired_gap(finals["Greedy"], finals[k])) < 0]
        verdicts.append(True if rank <= 2 else (False if len(better) >= 2 else None))
        parts.append(f"{task}: Greedy ranks {rank} of {len(finals)} from the worst, "
                     f"significantly below {better or 'none'}")
    if verdicts:
        claims.append((f"Greedy is the worst or near-worst on the synthetic tasks (Fig. 3; at "
                       f"T = {config.horizon:,})", C.all_of(verdicts), "; ".join(parts)))
    for task, by_label in panels.params.items():
        if "ES++" not in by_label or len(by_label) < 2:
            continue
        pairs = [(m, k, C.final_regret(by_label["ES++"][m]),
                  C.final_regret(by_label[k][m])) for m in config.sizes
                 for k in ("Ensemble+", "EpiNet") if k in by_label]
        claims.append((f"Figs. 1 / 10 on {tasks[task].title}: Ensemble++ has lower regret than "
                       "Ensemble+ and EpiNet at every M (and fewer parameters)",
                       C.all_of([C.lower(a, b) for *_, a, b in pairs]),
                       "paired R(ES++) - R(other): " + "; ".join(
                           f"M={m} vs {k}: {C.gap_text(a - b)}" for m, k, a, b in pairs)))
    claims += pools_claims(config, panels.pools) + buffer_claims(runner, panels.buffers)
    claims += ablation_claims(panels.ablations) + lmc_claims(runner, panels.lmc, panels.costs)
    return claims + moderation_claims(runner, panels.moderation, panels.moderation_note)


def paper_ordering_claims(runner: Runner, long, comparison=None) -> list:
    """The paper's ordering on the quadratic at T = 10^5: from the paper-horizon check, or from
    Fig. 3 when that runs at the paper's horizon; "not run" otherwise."""
    claim = ("Paper's ordering (Fig. 3): on the quadratic at T = 10^5 Ensemble++ has "
             "the lowest regret")
    quadratic, left = runner.tasks["quadratic"], ""
    if long is None and comparison and "quadratic" in comparison \
            and quadratic.horizon >= PAPER_HORIZON:
        long, t = comparison["quadratic"], quadratic
    elif long is None:
        return [(claim, None, "not run at this scale (`--scale paper` runs Fig. 3 at "
                              "T = 10^5; `--scale small` checks it with two runs)")]
    else:
        t, left = runner.tasks["long"], ", EpiNet left out" if "EpiNet" not in long else ""
    learners = [k for k in long if k != RANDOM]
    best = min(learners, key=lambda k: C.mean_final(long[k]))
    es = C.final_regret(long["ES++"])
    verdict = True if best == "ES++" else (
        False if C.lower(es, C.final_regret(long[best])) is False else None)
    return [(claim + f" (run here at T = {t.horizon:,} with {t.num_runs} runs{left})", verdict,
             f"lowest: {best}; " + "; ".join(f"R(ES++) - R({k}) = "
                                            f"{C.gap_text(es - C.final_regret(long[k]))}"
                                            for k in learners if k != "ES++")
             + "; regret per round over the last fifth: " + ", ".join(
                 f"{k} {late_rate(v).mean():.3f}" for k, v in long.items()))]


def pools_claims(config: Config, pools) -> list:
    claims, sizes = [], config.pool_ensemble_sizes
    if len(pools) > 1:
        verdicts, parts = [], []
        for m in sizes:
            finals = {p: C.final_regret(pools[p][m]) for p in pools}
            means = {p: v.mean() for p, v in finals.items()}
            hi, lo = max(means, key=means.get), min(means, key=means.get)
            spread = means[hi] / max(means[lo], 1e-12) - 1.0
            (a, ha), (b, hb) = C.mean_ci(finals[hi]), C.mean_ci(finals[lo])
            verdicts.append(True if spread <= FLAT else (
                False if a - ha > (1 + FLAT) * (b + hb) else None))
            parts.append(f"M={m}: spread {100 * spread:.0f}% (pool {lo:,} lowest, {hi:,} "
                         "highest)")
        claims.append((f"Fig. 4: regret is largely unaffected by the pool size (within "
                       f"{100 * FLAT:.0f}%)", C.all_of(verdicts), "; ".join(parts)))
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
    verdict = True if abs(mean) <= SLIGHT * scale else (
        False if mean - half > SLIGHT * scale or mean + half < -SLIGHT * scale else None)
    whole = "C >= T" if largest >= task.horizon else f"C = {largest:,}"
    return [(f"Fig. 11: a buffer of C = {capacity:,} (about T/10, as 10^4 is at T = 10^5) "
             f"changes final regret only slightly against {whole} (within "
             f"{100 * SLIGHT:.0f}%)", verdict,
             f"paired gap {mean:+.1f} ± {half:.1f} = {100 * mean / scale:+.1f}% of "
             f"{full.mean():.1f} ({task.title}, T = {task.horizon:,})")]


def ablation_claims(ablations) -> list:
    claims = []
    for name, field, text in ABLATIONS:
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
        claims.append((f"Fig. 14 ({field}): {text}",
                       True if not significant else (False if large else None),
                       f"spread of the means {100 * (max(means) - min(means)) / scale:.1f}% of "
                       "their average; significant pairs "
                       f"{[(a, b) for a, b, _ in significant] or 'none'}"))
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
             f"paired R(ES++) - R(LMC-TS) = {C.gap_text(es - mc)}; ES++ {C.fmt_ci(es)}, "
             f"LMC-TS {C.fmt_ci(mc)}"),
            (f"App. F.2: LMC-TS's per-round cost grows with t while Ensemble++'s is flat (late "
             f"/ early >= {GROWTH:g} for LMC-TS, <= {STEADY:g} for ES++)",
             (ratios[LMC] >= GROWTH and ratios["ES++"] <= STEADY) if enough else None,
             f"measured ms per round, rounds {late[0]:.0f}-{late[1]:.0f} over "
             f"{early[0]:.0f}-{early[1]:.0f}: "
             + ", ".join(f"{k} {ratios[k]:.2f}x ({window_ms(costs[k], *early):.3f} -> "
                         f"{window_ms(costs[k], *late):.3f} ms)" for k in costs)
             + ("" if enough else "; too few timed chunks past the update start"))]


def moderation_claims(runner: Runner, moderation, note: str | None) -> list:
    if note:
        return [("Moderation (Fig. 3, App. G.5; on the stand-in): Ensemble++'s accuracy is above "
                 "Ensemble+'s (about +5 points) and Greedy's", None, note)]
    task = runner.tasks["moderation"]
    late = late_start(task.horizon)
    acc = {k: accuracy(v, late) for k, v in moderation.items()}
    claims = []

    def above(pairs: list[tuple[str, str]]):  # (a, b): a's accuracy above b's, paired
        return (C.all_of([C.lower(-acc[a], -acc[b]) for a, b in pairs]),
                [C.gap_text(100 * (acc[a] - acc[b])) for a, b in pairs])

    others = [k for k in ("Ensemble+", "Greedy") if k in acc]
    if "ES++" in acc and others:
        verdict, gaps = above([("ES++", o) for o in others])
        claims.append(("Moderation (Fig. 3, App. G.5; on the stand-in): Ensemble++'s accuracy "
                       f"over rounds {late + 1:,}-{task.horizon:,} is above "
                       + " and ".join(f"{o}'s" for o in others)
                       + " (paper: about +5 points over Ensemble+)", verdict,
                       "paired accuracy gaps: " + "; ".join(
                           f"ES++ - {o}: {g} points" for o, g in zip(others, gaps, strict=True))))
    frozen = [k for k in runner.config.mod_frozen if f"{k} frozen" in acc]
    if frozen:
        verdict, gaps = above([(k, f"{k} frozen") for k in frozen])
        claims.append(("Moderation: fine-tuning the backbone beats freezing it (accuracy over "
                       "the last fifth)", verdict, "paired fine-tuned - frozen: " + "; ".join(
                           f"{k}: {g} points" for k, g in zip(frozen, gaps, strict=True))))
    if "ES++" in moderation:
        best = min(rate for _, rate in always_rates(runner).values()) * task.horizon
        es = C.final_regret(moderation["ES++"])
        claims.append(("Moderation (App. G.5): Ensemble++ beats always-block and "
                       "always-publish (lower regret)", C.verdict_at_most(es, best),
                       f"ES++ R_T {C.fmt_ci(es)}; the better constant policy {best:.1f}"))
    return claims


# ------------------------------------------------------------------------------------------------
# Drawing and main.


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
                 "App. F.2: LMC-TS and Ensemble++, per-round cost against t", legend=7,
                 which="both", log="y")


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
    for name, field, _ in ABLATIONS:
        a, by_law = next(ax), panels.ablations[name]
        stats = np.nan_to_num(np.array([C.mean_ci(C.final_regret(r)) for r in by_law.values()]))
        a.bar(range(len(by_law)), stats[:, 0], yerr=stats[:, 1], capsize=3,
              color=["C0"] + ["C1"] * (len(by_law) - 1))
        a.set_xticks(range(len(by_law)), list(by_law), rotation=30, fontsize=8)
        low, high = np.min(stats[:, 0] - stats[:, 1]), np.max(stats[:, 0] + stats[:, 1])
        a.set_ylim(max(0.0, low - 0.5 * (high - low)), high + 0.2 * (high - low) + 1e-9)
        a.set_ylabel("ES++ final regret")
        a.set_title(f"Fig. 14: {field}")
        a.grid(alpha=0.3, axis="y")
    jb.plot_regret(panels.lmc, ax=next(ax), title="App. F.2: vector-quadratic")
    draw_costs(next(ax), panels.costs)
    a, b = next(ax), next(ax)
    if panels.moderation:
        jb.plot_regret(panels.moderation, ax=a, title="Moderation (stand-in): regret")
        draw_accuracy(b, panels.moderation, runner)
    else:
        C.not_run(a, "Moderation", panels.moderation_note or "not run")
        C.not_run(b, "Moderation", panels.moderation_note or "not run")
    return fig


def body(r: C.Run) -> C.Page:
    config = r.config
    runner = Runner(config, r.key, r.progress, log=r.log, cache=r.args.cache)
    panels = run(runner)
    long = (f"the paper-horizon check: T = {config.long_horizon:,}, {config.long_runs} runs"
            if config.long_horizon else "no paper-horizon check at this scale")
    intro = (f"Li et al. 2024, Sec. 5.2, App. F.2 and G.5, with the authors' code's findings. "
             "Quadratic (`quadratic-pool`, the authors' instance and subset sequence) and Neural "
             f"(`random-mlp-bernoulli`, the authors' pool, tau = 0.1) tasks: T = "
             f"{config.horizon:,}, {config.num_runs} runs; Shuttle (`shuttle-epp`): T = "
             f"{config.shuttle_horizon:,}, {config.shuttle_runs} runs; App. F.2 "
             f"(`vector-quadratic`): T = {config.lmc_horizon:,}, {config.lmc_runs} runs; "
             f"moderation (`text-moderation`, generated stand-in corpus): T = "
             f"{config.mod_horizon:,}, {config.mod_runs} runs; {long}. The authors' presets "
             "(quadratic, neural-classification, shuttle, vector-quadratic, hate-speech) apply "
             f"to every method; backbone a {' x '.join(map(str, config.hidden))} ReLU MLP (a "
             f"small random transformer for moderation); M = {config.ensemble_size} unless "
             "swept.")
    return C.Page(draw(runner, panels), tables(runner, panels), check_claims(runner, panels),
                  intro, {"config": config, "runner": runner, "panels": panels})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
