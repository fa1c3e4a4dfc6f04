"""Neural Ensemble++ (Li, Xu, Wang & Luo): Figs. 1/10, 3, 4, 11, 14, App. F.2, G.5.

Reproduces Li et al. 2024, Sec. 5.2, App. F.2 and G.5, as the authors' code behaves (what running
it showed)
asks: at horizons a CPU can run, the authors' own code does **not** show Ensemble++ below Greedy
or Ensemble+ on the quadratic preset (that is a T = 10^5 result), so the small-scale numbers are
judged against the authors' code and the paper's ordering is tested at the paper's horizon only.
Every panel plays the library agents ``neural-ensemble-pp`` ("ES++"), ``ensemble-plus``,
``epinet`` and ``neural-greedy`` with the authors' per-task presets (applied to every method, as
they did; Sec. 3.3, our reading), the 2 x 64 ReLU MLP backbone, next to uniform random:

* **Fig. 1 / Fig. 10**: final regret against the paper's parameter count
  (``jb.nets.paper_param_count``; 11,713 / 17,931 / 22,288 at M = 8 for d = 100, C = 1),
  varied by sweeping M, on ``quadratic-pool`` (the authors' instance, preset ``"quadratic"``)
  and ``random-mlp-bernoulli`` (the "Neural" task, ``"neural-classification"``).
* **Fig. 3**: the four agents and uniform random on those two tasks and on
  ``shuttle-epp`` (preset ``"shuttle"``, G = 50); regret curves, final regret, and the regret
  accumulated after the agents' update start, paired run by run with random's.
* **Paper horizon** (Fig. 3 at T = 10^5): Ensemble++, Ensemble+, Greedy and random on the quadratic
  at ``long_horizon`` (EpiNet, ten times dearer per round, is left out on a CPU).
* **Fig. 4**: Ensemble++ on the quadratic with pools of several sizes (the decision set
  the 50 arms per round are drawn from; the authors' recipe at each size) and several M.
* **Fig. 11**: Ensemble++'s buffer capacity C on the Neural task (the paper's Sec. 5.2).
* **Fig. 14**: Ensemble++'s update-index, reference and perturbation laws on the quadratic
  (one law varied at a time, the others at their defaults: Coordinate / Sphere / Sphere).
* **App. F.2**: Ensemble++ against LMC-TS (``lmc-ts``, its full-history Langevin steps: the buffer
  holds the whole horizon) on ``vector-quadratic`` (LMC-TS's task, d = 20, K = 50), regret and
  the measured wall time per round against t (:func:`round_costs`: one run played in chunks of
  rounds by the runner's own round function, each chunk timed; the runner reports only total
  times).
* **Moderation** (App. G.5, on the offline stand-in): Ensemble++, Ensemble+ and Greedy with
  ``preset="hate-speech"`` on ``text-moderation`` (the generated corpus; GPT-2 token ids) with a
  small randomly initialised ``jb.nets.TransformerNetwork`` backbone, fine-tuned and frozen
  (``train_backbone=False``), accuracy beside regret. (No pretrained GPT-2 ships offline.)

Runs are common random numbers: run r of every agent of a task sees the same instance, arm
subsets and noise (the authors' instances are shared by all runs, as in their code; only the
noise and the agents vary), so gaps are paired run by run. Static fields (M, a law, the buffer
capacity, a pool size) are swept with ``jb.sweep`` (one program per distinct value, every point's
runs equal to ``jb.simulate``'s); results are cached, so a point two panels share (ES++ at M = 8
is Fig. 1's, Fig. 3's, Fig. 4's, Fig. 11's and Fig. 14's default) runs once.

Scales: ``small`` (quadratic and Neural T = 3,000 with 4 runs; Shuttle T = 800, 4 runs; App. F.2
T = 2,000, 4 runs; moderation T = 20,000, 4 runs; the paper-horizon check T = 10^5 with 2
runs; M in {2, 8, 32}; 5, 4 and 3 update, reference and perturbation laws; pools of 200, 1,000
and 5,000; C in {300, 1,000, 10,000}; about 60 programs): 1,562 s (26 min; 1,913 s of CPU) on
the 2-core development machine, shared with other jobs for most of the run. EpiNet is the
dearest agent (its epistemic network runs on each of 16 index draws per row: about ten times
Ensemble++'s cost per round, 7 against 0.5 ms per run on the quadratic preset), so it sets the
Fig. 1 and Shuttle sizes and is left out of the T = 10^5 check. App. F.2 (139 s alone) plays one
run per block (``lmc_block_runs``; see :class:`Config`). ``paper`` (T = 10^5 on the synthetic
tasks, 10^4 on Shuttle and App. F.2, 10 runs, M up to 64; for a GPU); ``tiny`` is for the tests.
Run it from the repository root::

    python -m benchmarks.ensemble_pp_neural                  # --scale small
    python -m benchmarks.ensemble_pp_neural --scale paper    # GPU

It writes ``ensemble_pp_neural.png`` and ``ensemble_pp_neural.md`` into ``--out`` (default
``results/reproduce/ensemble_pp_neural/``).
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

#: label -> registry name of the four neural index agents.
AGENTS = {"ES++": "neural-ensemble-pp", "Ensemble+": "ensemble-plus", "EpiNet": "epinet",
          "Greedy": "neural-greedy"}
#: label -> the ``head`` of ``jb.nets.paper_param_count``.
HEADS = {"ES++": "ensemble++", "Ensemble+": "ensemble+", "EpiNet": "epinet", "Greedy": "none"}
RANDOM = "random"
LMC = "LMC-TS"
#: the paper's parameter counts at d = 100, D = 64, C = 1, M = 8 (Li et al. 2024, Fig. 1).
PAPER_COUNTS = {"ES++": 11_713, "EpiNet": 17_931, "Ensemble+": 22_288}
PAPER_HORIZON = 100_000  # the horizon of the paper's synthetic-task figures (App. F.2)
AUTHORS_HORIZON = 20_000  # the authors' code, quadratic preset, T <= 20,000
#: the discrete and continuous index laws (Fig. 14's groups).
DISCRETE = ("coordinate", "cube", "sparse", "one_hot")
CONTINUOUS = ("sphere", "gaussian")
#: Fig. 14's ablations: (label, the agent field, what the paper claims).
ABLATIONS = (("update", "update_index", "discrete update sets are better"),
             ("reference", "reference", "continuous references are better"),
             ("perturbation", "perturbation", "the perturbation law makes no difference"))
SLIGHT = 0.10  # "only slightly" (Fig. 11) and "no difference" (Fig. 14(c)): within 10%
FLAT = 0.25    # "largely unaffected" (Fig. 4): within 25%
GROWTH = 1.5   # App. F.2: LMC-TS's late rounds cost at least 1.5 x its early ones ...
STEADY = 1.3   # ... and Ensemble++'s at most 1.3 x


# ------------------------------------------------------------------------------------------------
# Configuration.


@dataclasses.dataclass(frozen=True)
class Config:
    """Sizes of one scale.

    Attributes:
      horizon, num_runs: T and runs of the quadratic and Neural tasks (Figs. 1, 3, 4, 10, 11, 14).
      sizes: the M of Figs. 1 / 10 (must hold ``ensemble_size``).
      ensemble_size: the M of every other panel (8, the paper's).
      agents: the neural agents of Figs. 1 / 3 / 10 (labels of :data:`AGENTS`).
      param_tasks: the tasks of Figs. 1 / 10 (``"quadratic"``, ``"neural"``).
      tasks: the tasks of Fig. 3 (``"quadratic"``, ``"neural"``, ``"shuttle"``).
      shuttle_horizon, shuttle_runs: T and runs on Shuttle (G = 50 steps a round: dear).
      quad_env, neural_env: overrides of ``quadratic-pool`` / ``random-mlp-bernoulli`` (tiny
        problems for the tests), as ``((field, value), ...)``.
      pool_sizes, pool_ensemble_sizes: Fig. 4's pool sizes and M.
      buffer_task, buffers: Fig. 11's task and capacities C (the agent's default 10,000 is the
        shared default point).
      updates, references, perturbations: Fig. 14's laws (each first one is the default).
      lmc_horizon, lmc_runs, vector_env, time_chunk: App. F.2's T, runs, ``vector-quadratic``
        overrides and the rounds per timed chunk; lmc_agents: App. F.2's agents; lmc_block_runs:
        App. F.2's runs per block (1 on a multi-core CPU: with blocks of several runs on several CPU
        devices, LMC-TS's nested loops made the process' memory grow with every round -- 18 GB
        at T = 2,000 -- while one run per block stays near 0.5 GB; None: the shared rule).
      mod_horizon, mod_runs, mod_rows, mod_length: the moderation task's T, runs, stand-in
        corpus rows and tokens per post; lm_width, lm_heads, lm_layers: the transformer;
        mod_agents, mod_frozen: the agents run fine-tuned, and those also run frozen.
      long_horizon, long_runs, long_agents: the paper-horizon check (None: not run).
      hidden: the MLP backbone's widths.
      agent_overrides, lmc_overrides: fields set on every neural index agent / on LMC-TS (the
        tests' tiny networks and buffers), as ``((field, value), ...)``.
      blocks: blocks each point's runs are split into (2: one per core of the 2-core machine;
        1 on a GPU); results depend on it, not on the device count.
      chunk_size, num_records: runner options (see :func:`benchmarks.framework.run_options`).
    """

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


_TINY_AGENT = (("batch_size", 8), ("buffer_size", 64), ("update_start", 8))
SCALES = {
    # tiny: the smoke test's sizes (d = 6, a pool of 30, K = 5, a one-layer net of 8): ES++,
    # Greedy and random on the quadratic (Figs. 1, 4, 11 and 14 at their shared default point
    # only), ES++ and LMC-TS on a 4-dimensional vector-quadratic (run and timed), ES++ on 50
    # posts: eight programs in all
    "tiny": Config(horizon=40, num_runs=2, sizes=(2,), ensemble_size=2,
                   agents=("ES++", "Greedy"), param_tasks=("quadratic",),
                   tasks=("quadratic",), shuttle_horizon=40, shuttle_runs=2,
                   quad_env=(("dim", 6), ("pool_size", 30), ("num_arms", 5)),
                   neural_env=(("dim", 6), ("pool_size", 30), ("num_arms", 5)),
                   pool_sizes=(30,), pool_ensemble_sizes=(2,), buffer_task="quadratic",
                   buffers=(64,), updates=("coordinate",), references=("sphere",),
                   perturbations=("sphere",), lmc_horizon=40, lmc_runs=2,
                   vector_env=(("dim", 4), ("num_arms", 5)), time_chunk=10,
                   lmc_agents=("ES++", LMC), mod_horizon=40, mod_runs=2, mod_rows=50,
                   mod_length=8, lm_width=8, lm_heads=1, lm_layers=1, mod_agents=("ES++",),
                   mod_frozen=(), long_agents=("ES++",), hidden=(8,),
                   agent_overrides=_TINY_AGENT,
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
    """One environment of the reproduction, with its preset, horizon and runs.

    ``key``: ``"quadratic"``, ``"neural"``, ``"shuttle"``, ``"vector"``, ``"moderation"`` or
    ``"long"`` (the quadratic at the paper's horizon); ``outputs``: C, the head's outputs.
    """

    key: str
    title: str
    preset: str
    horizon: int
    num_runs: int
    outputs: int = 1


def make_tasks(config: Config) -> dict[str, Task]:
    """``{key: Task}`` of a configuration."""
    tasks = {
        "quadratic": Task("quadratic", "Quadratic (authors' instance)", "quadratic",
                          config.horizon, config.num_runs),
        "neural": Task("neural", "Neural (random MLP, Bernoulli)", "neural-classification",
                       config.horizon, config.num_runs, outputs=2),
        "shuttle": Task("shuttle", "Shuttle", "shuttle", config.shuttle_horizon,
                        config.shuttle_runs),
        "vector": Task("vector", "Vector-quadratic (LMC-TS's task)", "vector-quadratic",
                       config.lmc_horizon, config.lmc_runs),
        "moderation": Task("moderation", "Moderation (stand-in corpus)", "hate-speech",
                           config.mod_horizon, config.mod_runs),
    }
    if config.long_horizon is not None:
        tasks["long"] = Task("long", "Quadratic (authors' instance), paper horizon", "quadratic",
                             config.long_horizon, config.long_runs)
    return tasks


def quadratic_rounds(config: Config) -> int:
    """Rounds of the authors' subset sequence to precompute: the longest quadratic horizon (so
    that every horizon sees their exact sequence and all quadratic runs share one environment)."""
    return max(config.horizon, config.long_horizon or 0)


def _instance(sizes: tuple[tuple[str, Any], ...]) -> str:
    """``"authors"`` (their instance at their sizes), or ``"authors_recipe"`` with other sizes."""
    return "authors_recipe" if sizes else "authors"


def make_env(task: Task, config: Config):
    """The environment of ``task``."""
    # the authors' instance at their sizes; their recipe at the tiny test sizes
    if task.key in ("quadratic", "long"):
        return jb.make_env("quadratic-pool", instance=_instance(config.quad_env),
                           authors_rounds=quadratic_rounds(config), **dict(config.quad_env))
    if task.key == "neural":
        return jb.make_env("random-mlp-bernoulli", instance=_instance(config.neural_env),
                           authors_rounds=config.horizon, **dict(config.neural_env))
    if task.key == "shuttle":
        return jb.make_env("shuttle-epp")
    if task.key == "vector":
        return jb.make_env("vector-quadratic", **dict(config.vector_env))
    if task.key == "moderation":
        return jb.make_env("text-moderation", num_rows=config.mod_rows,
                           max_length=config.mod_length)
    raise ValueError(f"unknown task {task.key!r}")


def transformer(config: Config):
    """The moderation task's text backbone (randomly initialised; GPT-2's vocabulary)."""
    return jb.nets.TransformerNetwork(max_length=config.mod_length, width=config.lm_width,
                                      num_heads=config.lm_heads, num_layers=config.lm_layers)


def make_agent(label: str, task: Task, config: Config, env=None):
    """The agent ``label`` on ``task``: a neural index agent with the task's preset (resolved,
    so that a swept field equal to its preset value is the same program), LMC-TS with the
    whole horizon in its buffer, or uniform random."""
    if label == RANDOM:
        return jb.make_agent("random")
    if label == LMC:
        fields = {"buffer_size": task.horizon, **dict(config.lmc_overrides)}
        return jb.make_agent("lmc-ts", preset=task.preset, env=env, horizon=task.horizon,
                             **fields)
    fields = dict(config.agent_overrides)
    if task.key == "moderation":
        fields["backbone"] = transformer(config)
    else:
        fields["backbone"] = jb.nets.MLPBackbone(hidden=config.hidden)
        if label != "Greedy":
            fields["ensemble_size"] = config.ensemble_size
    return jb.make_agent(AGENTS[label], preset=task.preset, **fields).resolved()


# ------------------------------------------------------------------------------------------------
# Running (with a cache shared by the panels).


class Runner:
    """Runs agents on the tasks through the reproductions' cached runner
    (:class:`benchmarks.framework.Runner`: common random numbers, each point run once).

    :meth:`results` runs one agent on one task at the values of one field (an agent field, or
    an environment field as ``"env.<name>"``), the others fixed: one ``jb.sweep`` over the
    values not run yet, so a point asked for by two panels runs once.
    """

    def __init__(self, config: Config, key: jax.Array, progress: bool | None = False,
                 log: Callable[[str], None] | None = None, cache=None):
        self.config, self.key, self.progress = config, key, progress
        self.tasks = make_tasks(config)
        self.log = log or (lambda message: None)
        self.runs = C.Runner(key, cache=cache, progress=progress)
        self._envs: dict[str, Any] = {}
        self._agents: dict[tuple[str, str], Any] = {}

    def env(self, task: str):
        if task not in self._envs:
            self._envs[task] = make_env(self.tasks[task], self.config)
        return self._envs[task]

    def agent(self, task: str, label: str):
        if (task, label) not in self._agents:
            self._agents[task, label] = make_agent(label, self.tasks[task], self.config,
                                                   self.env(task))
        return self._agents[task, label]

    def update_start(self, task: str) -> int:
        """The round after which the task's agents train (their preset's ``update_start``)."""
        return int(self.agent(task, "ES++").update_start)

    def options(self, task: str) -> dict[str, Any]:
        t = self.tasks[task]
        marks = (min(self.update_start(task), t.horizon), t.horizon // 2, late_start(t.horizon))
        options = C.run_options(t.horizon, self.config.chunk_size, self.config.num_records,
                                include=marks, progress=self.progress)
        block_runs = math.ceil(t.num_runs / self.config.blocks)
        if task == "vector" and self.config.lmc_block_runs is not None:
            block_runs = self.config.lmc_block_runs
        return {**options, "block_runs": block_runs}

    def _apply(self, task: str, label: str, fields: Mapping[str, Any]):
        env_fields = {n[4:]: v for n, v in fields.items() if n.startswith("env.")}
        agent_fields = {n: v for n, v in fields.items() if not n.startswith("env.")}
        env, agent = self.env(task), self.agent(task, label)
        return (env.replace(**env_fields) if env_fields else env,
                agent.replace(**agent_fields) if agent_fields else agent)

    def results(self, task: str, label: str, field: str | None = None,
                values: Sequence[Any] = (None,), fixed: Mapping[str, Any] | None = None
                ) -> list[Result]:
        """``label`` on ``task`` at each of ``values`` of ``field`` (None: the base agent),
        with ``fixed`` fields set; one Result per value, in order."""
        t = self.tasks[task]
        env, agent = self._apply(task, label, dict(fixed or {}))
        start = time.perf_counter()
        if field is None:
            results = [self.runs.simulate(env, agent, t.horizon, t.num_runs, name=label,
                                          **self.options(task))]
        else:
            results = self.runs.sweep(env, agent, field, list(values), t.horizon, t.num_runs,
                                      name=label, **self.options(task))
        compiled = sum(r.compile_time for r in results)
        what = label if field is None else f"{label}, {field} in {list(values)}"
        self.log(f"{task} (T = {t.horizon}, {t.num_runs} runs): {what}: compile "
                 f"{compiled:.1f} s, total {time.perf_counter() - start:.1f} s")
        return results

    def one(self, task: str, label: str, **fields: Any) -> Result:
        """``label`` on ``task`` with ``fields`` set (one point)."""
        return self.results(task, label, values=(None,), fixed=fields)[0]


def late_start(horizon: int) -> int:
    """The start of the "late" window, the last fifth of the rounds (``4 T // 5``)."""
    return max(1, (4 * horizon) // 5)


@functools.cache
def _timed_programs():
    """The runner's public one-run functions (``jb.runner.init`` / ``jb.runner.play_chunk``),
    jitted for one unbatched run (module-level, so that a second call, e.g. from the notebook,
    reuses the compiled programs)."""
    return (jax.jit(jb.runner.init, static_argnames="num_slots"),
            jax.jit(jb.runner.play_chunk, static_argnames="length", donate_argnums=2))


def round_costs(env, agent, key: jax.Array, horizon: int, chunk: int) -> dict[str, Any]:
    """Wall time per round of one run against t, measured chunk by chunk.

    Plays run 0 of ``jb.simulate(env, agent, key, horizon)`` (``jb.runner.init`` /
    ``play_chunk``, unbatched) in chunks of ``chunk`` rounds and times each one
    (``block_until_ready``); a first call that plays no round compiles the program, so no chunk
    pays for compilation. Returns ``{"steps": the rounds each chunk ends at, "ms": milliseconds
    per round in each chunk, "regret": the run's final cumulative regret}``.
    """
    init, play = _timed_programs()
    chunk = max(1, min(chunk, horizon))
    steps = jnp.asarray([horizon], jnp.int32)
    end = jnp.int32(horizon)
    carry = init(env, agent, key, jnp.uint32(0), num_slots=1)
    carry = play(env, agent, carry, end, end, steps, length=chunk)  # compiles; plays nothing
    jax.block_until_ready(carry)
    ends, ms = [], []
    for start in range(0, horizon, chunk):
        t0 = time.perf_counter()
        carry = play(env, agent, carry, jnp.int32(start), end, steps, length=chunk)
        jax.block_until_ready(carry)
        stop = min(start + chunk, horizon)
        ends.append(stop)
        ms.append(1e3 * (time.perf_counter() - t0) / (stop - start))
    return {"steps": np.asarray(ends), "ms": np.asarray(ms),
            "regret": float(np.asarray(carry.cumulative)[0])}


# ------------------------------------------------------------------------------------------------
# The panels.


def index_agents(config: Config) -> list[str]:
    """The agents of Figs. 1 / 10 (those with an index): ES++, Ensemble+ and EpiNet if run."""
    return [label for label in ("ES++", "Ensemble+", "EpiNet") if label in config.agents]


def run_params(runner: Runner) -> dict[str, dict[str, dict[int, Result]]]:
    """Figs. 1 / 10: ``{task: {label: {M: Result}}}`` for ES++, Ensemble+ and EpiNet."""
    config = runner.config
    out: dict[str, dict[str, dict[int, Result]]] = {}
    for task in config.param_tasks:
        out[task] = {}
        for label in index_agents(config):
            results = runner.results(task, label, "ensemble_size", config.sizes)
            out[task][label] = dict(zip(config.sizes, results, strict=True))
    return out


def run_comparison(runner: Runner, tasks: Sequence[str] | None = None
                   ) -> dict[str, dict[str, Result]]:
    """Fig. 3: ``{task: {label: Result}}``, the four agents at M = ``ensemble_size`` and
    uniform random (cached points of Figs. 1 / 10 are reused)."""
    config = runner.config
    tasks = config.tasks if tasks is None else tasks
    return {task: {label: runner.one(task, label) for label in (*config.agents, RANDOM)}
            for task in tasks}


def run_long(runner: Runner) -> dict[str, Result] | None:
    """The paper-horizon check: ``{label: Result}`` on the quadratic at ``long_horizon`` (None
    when the scale has none)."""
    if "long" not in runner.tasks:
        return None
    return {label: runner.one("long", label) for label in (*runner.config.long_agents, RANDOM)}


def run_pools(runner: Runner) -> dict[int, dict[int, Result]]:
    """Fig. 4: ``{pool size: {M: Result}}`` for ES++ on the quadratic."""
    config = runner.config
    out = {}
    for pool in config.pool_sizes:
        if runner.env("quadratic").num_arms > pool:
            raise ValueError(f"pool size {pool} is below the arms per round")
        fixed = {"env.pool_size": pool}
        if pool != runner.env("quadratic").pool_size:  # the authors' recipe at another size
            fixed["env.instance"] = "authors_recipe"
        results = runner.results("quadratic", "ES++", "ensemble_size",
                                 config.pool_ensemble_sizes, fixed=fixed)
        out[pool] = dict(zip(config.pool_ensemble_sizes, results, strict=True))
    return out


def run_buffers(runner: Runner) -> dict[int, Result]:
    """Fig. 11: ``{C: Result}`` for ES++ on ``buffer_task``."""
    config = runner.config
    results = runner.results(config.buffer_task, "ES++", "buffer_size", config.buffers)
    return dict(zip(config.buffers, results, strict=True))


def run_ablations(runner: Runner) -> dict[str, dict[str, Result]]:
    """Fig. 14: ``{ablation: {law: Result}}`` for ES++ on the quadratic (one law varied at a
    time; the first law of each list is the agent's default, the shared point)."""
    config = runner.config
    laws = {"update": config.updates, "reference": config.references,
            "perturbation": config.perturbations}
    out = {}
    for name, field, _ in ABLATIONS:
        results = runner.results("quadratic", "ES++", field, laws[name])
        out[name] = dict(zip(laws[name], results, strict=True))
    return out


def run_lmc(runner: Runner) -> tuple[dict[str, Result], dict[str, dict[str, np.ndarray]]]:
    """App. F.2 (LMC-TS): ``({label: Result}, {label: round_costs})`` for ES++ and LMC-TS on
    ``vector-quadratic`` (and random's regret)."""
    results = {label: runner.one("vector", label) for label in runner.config.lmc_agents}
    task = runner.tasks["vector"]
    costs = {}
    for label in (k for k in ("ES++", LMC) if k in results):
        start = time.perf_counter()
        costs[label] = round_costs(runner.env("vector"), runner.agent("vector", label),
                                   runner.key, task.horizon, runner.config.time_chunk)
        runner.log(f"vector: timed {label} over {task.horizon} rounds, 1 run: "
                   f"{time.perf_counter() - start:.1f} s")
    return results, costs


def run_moderation(runner: Runner) -> tuple[dict[str, Result], str | None]:
    """The moderation task: ``({label: Result}, reason)``; fine-tuned agents under their label,
    frozen ones as ``"<label> frozen"``. ``reason`` says why nothing ran (the ``lm`` extra or
    the stand-in's word lists are missing), else None."""
    config = runner.config
    try:
        runner.env("moderation")
    except (ImportError, OSError) as err:
        return {}, f"text-moderation unavailable: {err}"
    out = {label: runner.one("moderation", label) for label in config.mod_agents}
    for label in config.mod_frozen:
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
    """Every panel, in an order that lets later panels reuse earlier points."""
    params = run_params(runner)
    comparison = run_comparison(runner)
    long = run_long(runner)
    pools = run_pools(runner)
    buffers = run_buffers(runner)
    ablations = run_ablations(runner)
    lmc, costs = run_lmc(runner)
    moderation, note = run_moderation(runner)
    return Panels(params, comparison, long, pools, buffers, ablations, lmc, costs, moderation,
                  note)


# ------------------------------------------------------------------------------------------------
# Statistics.


def after_start(result: Result, start: int) -> np.ndarray:
    """``(runs,)`` regret accumulated in rounds ``start + 1 .. T``."""
    return C.final_regret(result) - C.final_regret(result, start)


def late_rate(result: Result) -> np.ndarray:
    """``(runs,)`` regret per round over the last fifth of the rounds."""
    start = late_start(result.horizon)
    return (C.final_regret(result) - C.final_regret(result, start)) / (result.horizon - start)


def accuracy(result: Result, start: int = 0) -> np.ndarray:
    """``(runs,)`` the fraction of optimal actions in rounds ``start + 1 .. T`` (moderation)."""
    correct = np.asarray(result.metrics["correct"], np.float64)
    steps = np.asarray(result.steps)
    if start == 0:
        return correct[:, -1] / steps[-1]
    index = int(np.flatnonzero(steps == start)[0])
    return (correct[:, -1] - correct[:, index]) / (steps[-1] - start)


def gap_text(values: np.ndarray, digits: int = 1) -> str:
    mean, half = C.mean_ci(values)
    return f"{mean:+.{digits}f} ± {half:.{digits}f}"


def combine(verdicts: Sequence[bool | None]) -> bool | None:
    """All True: True; any False: False; else None."""
    if any(v is False for v in verdicts):
        return False
    return True if all(v is True for v in verdicts) else None


def lower_verdict(a: np.ndarray, b: np.ndarray) -> bool | None:
    """"``a`` is lower than ``b``" (paired): True on the mean, False when the 95% interval of
    ``a - b`` lies above 0, else None."""
    mean, half = C.paired_gap(a, b)
    if mean < 0:
        return True
    return False if mean - half > 0 else None


def group_verdict(finals: Mapping[str, np.ndarray], good: Sequence[str],
                  bad: Sequence[str]) -> tuple[bool | None, str]:
    """"Every law of ``good`` has lower regret than every law of ``bad``": True on the means,
    False when some good law is significantly above some bad one (paired), else None."""
    good = [g for g in good if g in finals]
    bad = [b for b in bad if b in finals]
    if not good or not bad:
        return None, "only one group was run"
    worst_good = max(good, key=lambda g: finals[g].mean())
    best_bad = min(bad, key=lambda b: finals[b].mean())
    if finals[worst_good].mean() < finals[best_bad].mean():
        verdict = True
    else:
        contradicted = any(C.paired_gap(finals[g], finals[b])[0]
                           - C.paired_gap(finals[g], finals[b])[1] > 0
                           for g in good for b in bad)
        verdict = False if contradicted else None
    text = (f"worst of {good}: {worst_good} {finals[worst_good].mean():.1f}; best of {bad}: "
            f"{best_bad} {finals[best_bad].mean():.1f}")
    return verdict, text


# ------------------------------------------------------------------------------------------------
# Tables.


def param_count(label: str, dim: int, config: Config, outputs: int, size: int) -> int:
    """The paper's parameter count of ``label``'s network (Li et al. 2024, Fig. 1; our count of
    their networks)."""
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
    columns = ["agent, M"]
    for task in params:
        title = runner.tasks[task].title.split(" (")[0]
        columns += [f"{title}: params", f"{title}: R_T"]
    table = C.Table(f"Figs. 1 / 10: final regret at T = {config.horizon} against parameter count",
                    columns,
                    note=(f"Mean ± 95% CI over {config.num_runs} runs; parameter counts by the "
                          "paper's formulas (the backbone's "
                          f"{' x '.join(map(str, config.hidden))} MLP, C = 1 on the quadratic, "
                          "2 on the Neural task's classification head)."))
    for label in index_agents(config):
        for m in config.sizes:
            cells = []
            for task, by_label in params.items():
                dim = runner.env(task).spec().dim
                cells += [f"{param_count(label, dim, config, runner.tasks[task].outputs, m):,}",
                          C.fmt_ci(C.final_regret(by_label[label][m]))]
            table.add(f"{label}, M = {m}", *cells)
    return table


def comparison_table(runner: Runner, comparison) -> C.Table:
    columns = ["agent"]
    for task in comparison:
        t = runner.tasks[task]
        columns += [f"{t.title.split(' (')[0]} R_T (T = {t.horizon})",
                    f"{t.title.split(' (')[0]} R/round, last fifth"]
    table = C.Table("Fig. 3: final regret and regret per round over the last fifth of the rounds",
                    columns,
                    note=("Mean ± 95% CI over runs (" + ", ".join(
                        f"{runner.tasks[t].title}: {runner.tasks[t].num_runs}"
                        for t in comparison) + "). Presets: " + ", ".join(
                        runner.tasks[t].preset for t in comparison)
                        + f"; M = {runner.config.ensemble_size}."))
    for label in (*runner.config.agents, RANDOM):
        cells = []
        for by_label in comparison.values():
            cells += [C.fmt_ci(C.final_regret(by_label[label])),
                      f"{late_rate(by_label[label]).mean():.3f}"]
        table.add(label, *cells)
    return table


def start_table(runner: Runner, comparison) -> C.Table:
    columns = ["agent"] + [f"{runner.tasks[t].title.split(' (')[0]} (after round "
                           f"{runner.update_start(t)})" for t in comparison]
    table = C.Table("Fig. 3: regret after the update start minus uniform random's (paired)",
                    columns,
                    note=("Run by run, R_T - R_u of the agent minus the same for uniform random "
                          "(u = the preset's update_start), mean ± 95% CI; negative = better "
                          "than random once training has started."))
    for label in runner.config.agents:
        cells = []
        for task, by_label in comparison.items():
            u = runner.update_start(task)
            cells.append(gap_text(after_start(by_label[label], u)
                                  - after_start(by_label[RANDOM], u)))
        table.add(label, *cells)
    return table


def long_table(runner: Runner, long) -> C.Table:
    t = runner.tasks.get("long")
    if long is None or t is None:
        table = C.Table("Paper horizon (T = 10^5) on the quadratic", ["agent", "R_T"],
                        note=(f"No separate check at this scale (Fig. 3 runs the quadratic at "
                              f"T = {runner.config.horizon:,}; `--scale paper` at T = 10^5)."))
        table.add("not run", "—")
        return table
    marks = (t.horizon // 10, t.horizon // 5, t.horizon // 2)
    steps = [s for s in marks if s in set(np.asarray(long[RANDOM].steps).tolist())]
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
    config = runner.config
    sizes = config.pool_ensemble_sizes
    table = C.Table(f"Fig. 4: ES++ final regret at T = {config.horizon} against pool size and M",
                    ["pool size", *[f"M = {m}" for m in sizes]],
                    note=(f"Mean ± 95% CI over {config.num_runs} runs; "
                          f"{runner.env('quadratic').num_arms} arms per round drawn from the "
                          "pool (the authors' recipe at each size, seed 2022)."))
    for pool, by_size in pools.items():
        table.add(f"{pool:,}", *[C.fmt_ci(C.final_regret(by_size[m])) for m in sizes])
    return table


def buffers_table(runner: Runner, buffers) -> C.Table:
    config = runner.config
    task = runner.tasks[config.buffer_task]
    full = buffers[max(buffers)]
    table = C.Table(f"Fig. 11: ES++ buffer capacity on the {task.title.split(' (')[0]} task "
                    f"(T = {task.horizon})",
                    ["capacity C", "R_T", f"R_T - R_T(C = {max(buffers):,}) (paired)",
                     "relative"],
                    note=(f"Mean ± 95% CI over {task.num_runs} runs; C = {max(buffers):,} "
                          f"{'holds the whole horizon' if max(buffers) >= task.horizon else ''}"
                          "."))
    for capacity, result in buffers.items():
        gap = C.final_regret(result) - C.final_regret(full)
        rel = gap.mean() / max(C.final_regret(full).mean(), 1e-12)
        table.add(f"{capacity:,}", C.fmt_ci(C.final_regret(result)), gap_text(gap),
                  f"{100 * rel:+.1f}%")
    return table


def ablations_table(runner: Runner, ablations) -> C.Table:
    config = runner.config
    table = C.Table(f"Fig. 14: ES++ index laws on the quadratic (T = {config.horizon})",
                    ["ablation", "law", "R_T", "R_T - default (paired)"],
                    note=(f"Mean ± 95% CI over {config.num_runs} runs; one law varied at a time, "
                          "the others at the defaults (update Coordinate, reference Sphere, "
                          "perturbation Sphere); the first row of each ablation is the default."))
    for name, by_law in ablations.items():
        default = C.final_regret(next(iter(by_law.values())))
        for law, result in by_law.items():
            table.add(name, law, C.fmt_ci(C.final_regret(result)),
                      gap_text(C.final_regret(result) - default))
    return table


def window_ms(costs: Mapping[str, np.ndarray], lo: float, hi: float) -> float:
    """ms per round of the fastest chunk ending in ``(lo, hi]`` (the fastest: other processes
    on the machine only ever slow a chunk down)."""
    steps, ms = costs["steps"], costs["ms"]
    pick = (steps > lo) & (steps <= hi)
    return float(np.min(ms[pick])) if pick.any() else math.nan


def cost_windows(horizon: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """The early and late windows of App. F.2's cost comparison: rounds ``(T/4, T/2]`` and
    ``(3T/4, T]``."""
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
        if label in costs:
            a, b = window_ms(costs[label], *early), window_ms(costs[label], *late)
            table.add(label, C.fmt_ci(C.final_regret(result)), f"{a:.3f}", f"{b:.3f}",
                      f"{b / a:.2f}")
        else:
            table.add(label, C.fmt_ci(C.final_regret(result)), "—", "—", "—")
    return table


def always_rates(runner: Runner) -> dict[str, tuple[float, float]]:
    """``{policy: (accuracy, expected regret per round)}`` of always-block and always-publish
    (closed forms from the corpus' hate rate and the environment's rewards: block 0.5, publish
    +1 for a free post and -0.5 for a hateful one, so blocking a free post costs 0.5 and
    publishing a hateful one 1.0)."""
    env = runner.env("moderation")
    hate = float(env.data.meta.hate_rate)
    block, free, bad = (float(env.block_reward), float(env.free_reward),
                        float(env.hate_reward))
    out = {}
    for policy, take in (("always block", lambda b, p: b), ("always publish", lambda b, p: p)):
        acc = regret = 0.0
        for weight, publish in ((1.0 - hate, free), (hate, bad)):
            best, got = max(block, publish), take(block, publish)
            acc += weight * float(got >= best)
            regret += weight * (best - got)
        out[policy] = (acc, regret)
    return out


def moderation_table(runner: Runner, moderation, note: str | None) -> C.Table:
    task = runner.tasks["moderation"]
    late = late_start(task.horizon)
    table = C.Table(f"Moderation (stand-in corpus, T = {task.horizon:,}): accuracy beside regret",
                    ["agent", "R_T", "accuracy (all rounds)",
                     f"accuracy, rounds {late + 1:,}-{task.horizon:,}", "blocked"],
                    note=(f"Mean ± 95% CI over {task.num_runs} runs; preset hate-speech (M = 4, "
                          "B = 32, one Adam step every 10 rounds from round 20, lr 1e-4) on a "
                          f"randomly initialised {runner.config.lm_layers}-block transformer "
                          f"(width {runner.config.lm_width}; GPT-2's tokenizer, "
                          f"{runner.config.mod_length} tokens per post); 'frozen' trains the "
                          "heads only. Always-block / always-publish: closed forms."))
    if note:
        table.note = note
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


# ------------------------------------------------------------------------------------------------
# Claims.

Claim = tuple[str, bool | None, str]


def count_claims() -> list[Claim]:
    counts = {label: jb.nets.paper_param_count(HEADS[label], 100) for label in PAPER_COUNTS}
    ok = counts == PAPER_COUNTS and counts["ES++"] < counts["EpiNet"] < counts["Ensemble+"]
    return [("Parameter ordering at M = 8 (d = 100, D = 64, C = 1): Ensemble++ 11,713 < EpiNet "
             "17,931 < Ensemble+ 22,288", ok,
             ", ".join(f"{k} {v:,}" for k, v in counts.items()) + " by the paper's formulas")]


def beats_random_claims(runner: Runner, comparison) -> list[Claim]:
    claims = []
    for task in ("shuttle", "quadratic"):
        if task not in comparison:
            continue
        by_label = comparison[task]
        u = runner.update_start(task)
        verdicts, parts = [], []
        for label in runner.config.agents:
            gap = after_start(by_label[label], u) - after_start(by_label[RANDOM], u)
            verdicts.append(C.verdict_at_most(gap, 0.0))
            parts.append(f"{label} {gap_text(gap)}")
        t = runner.tasks[task]
        claims.append((f"Every agent beats uniform random on {t.title} once past its update "
                       f"start (rounds {u + 1}-{t.horizon})", combine(verdicts),
                       "paired regret after round u minus random's: " + "; ".join(parts)))
    return claims


def small_ordering_claims(runner: Runner, comparison) -> list[Claim]:
    """The authors' code: at T <= 20,000 it does not show ES++ below Greedy or
    Ensemble+ on the quadratic preset; a match is ES++ not (significantly) below either."""
    t = runner.tasks["quadratic"]
    if "quadratic" not in comparison or t.horizon > AUTHORS_HORIZON:
        return []
    by_label = comparison["quadratic"]
    es = C.final_regret(by_label["ES++"])
    verdicts, parts = [], []
    for other in (k for k in ("Greedy", "Ensemble+") if k in by_label):
        mean, half = C.paired_gap(es, C.final_regret(by_label[other]))
        verdicts.append(True if mean >= 0 else (False if mean + half < 0 else None))
        parts.append(f"R(ES++) - R({other}) = {mean:+.1f} ± {half:.1f}")
    return [(f"Small scale matches the authors' code: on the quadratic preset at "
             f"T = {t.horizon:,} Ensemble++ is not below Greedy or Ensemble+",
             combine(verdicts), "; ".join(parts))]


def paper_ordering_claims(runner: Runner, long, comparison=None) -> list[Claim]:
    """The paper's ordering on the quadratic at T = 10^5: from the paper-horizon check, or from
    Fig. 3 when that runs at the paper's horizon (``--scale paper``); "not run" otherwise."""
    claim = ("Paper's ordering (Fig. 3): on the quadratic at T = 10^5 Ensemble++ has "
             "the lowest regret")
    quadratic = runner.tasks["quadratic"]
    if long is None and comparison and "quadratic" in comparison \
            and quadratic.horizon >= PAPER_HORIZON:
        long, t, left = comparison["quadratic"], quadratic, ""
    elif long is None:
        return [(claim, None, "not run at this scale (`--scale paper` runs Fig. 3 at "
                              "T = 10^5; `--scale small` checks it with two runs)")]
    else:
        t = runner.tasks["long"]
        left = (", EpiNet left out" if "EpiNet" not in long else "")
    learners = [k for k in long if k != RANDOM]
    best = min(learners, key=lambda k: C.final_regret(long[k]).mean())
    es = C.final_regret(long["ES++"])
    parts = [f"R(ES++) - R({k}) = {gap_text(es - C.final_regret(long[k]))}"
             for k in learners if k != "ES++"]
    if best == "ES++":
        verdict = True
    else:
        mean, half = C.paired_gap(es, C.final_regret(long[best]))
        verdict = False if mean - half > 0 else None
    return [(claim + f" (run here at T = {t.horizon:,} with {t.num_runs} runs{left})",
             verdict, f"lowest: {best}; " + "; ".join(parts) + "; regret per round over the "
             "last fifth: " + ", ".join(f"{k} {late_rate(v).mean():.3f}"
                                        for k, v in long.items()))]


def greedy_claims(runner: Runner, comparison) -> list[Claim]:
    verdicts, parts = [], []
    for task in ("quadratic", "neural"):
        if task not in comparison:
            continue
        by_label = comparison[task]
        finals = {k: C.final_regret(by_label[k]) for k in runner.config.agents}
        if "Greedy" not in finals or len(finals) < 3:
            continue
        order = sorted(finals, key=lambda k: finals[k].mean(), reverse=True)
        rank = order.index("Greedy") + 1  # 1 = worst
        count = len(finals)
        better = [k for k in finals if k != "Greedy"
                  and C.paired_gap(finals["Greedy"], finals[k])[0]
                  + C.paired_gap(finals["Greedy"], finals[k])[1] < 0]
        verdicts.append(True if rank <= 2 else (False if len(better) >= 2 else None))
        parts.append(f"{task}: Greedy ranks {rank} of {count} from the worst, significantly below "
                     f"{better or 'none'}")
    if not verdicts:
        return []
    return [(f"Greedy is the worst or near-worst on the synthetic tasks (Fig. 3; at "
             f"T = {runner.config.horizon:,})", combine(verdicts), "; ".join(parts))]


def frontier_claims(runner: Runner, params) -> list[Claim]:
    claims = []
    for task, by_label in params.items():
        if "ES++" not in by_label or len(by_label) < 2:
            continue
        verdicts, parts = [], []
        for m in runner.config.sizes:
            es = C.final_regret(by_label["ES++"][m])
            for other in (k for k in ("Ensemble+", "EpiNet") if k in by_label):
                verdicts.append(lower_verdict(es, C.final_regret(by_label[other][m])))
                parts.append(f"M={m} vs {other}: "
                             f"{gap_text(es - C.final_regret(by_label[other][m]))}")
        claims.append((f"Figs. 1 / 10 on {runner.tasks[task].title}: Ensemble++ has lower regret "
                       "than Ensemble+ and EpiNet at every M (and fewer parameters)",
                       combine(verdicts), "paired R(ES++) - R(other): " + "; ".join(parts)))
    return claims


def pools_claims(runner: Runner, pools) -> list[Claim]:
    claims = []
    sizes = runner.config.pool_ensemble_sizes
    if len(pools) > 1:
        verdicts, parts = [], []
        for m in sizes:
            finals = {p: C.final_regret(pools[p][m]) for p in pools}
            means = {p: v.mean() for p, v in finals.items()}
            hi, lo = max(means, key=means.get), min(means, key=means.get)
            spread = means[hi] / max(means[lo], 1e-12) - 1.0
            if spread <= FLAT:
                verdicts.append(True)
            else:
                (a, ha), (b, hb) = C.mean_ci(finals[hi]), C.mean_ci(finals[lo])
                verdicts.append(False if a - ha > (1 + FLAT) * (b + hb) else None)
            parts.append(f"M={m}: spread {100 * spread:.0f}% (pool {lo:,} lowest, {hi:,} "
                         "highest)")
        claims.append((f"Fig. 4: regret is largely unaffected by the pool size (within "
                       f"{100 * FLAT:.0f}%)", combine(verdicts), "; ".join(parts)))
    if len(sizes) > 1:
        verdicts, parts = [], []
        for pool, by_size in pools.items():
            big, small = C.final_regret(by_size[max(sizes)]), C.final_regret(by_size[min(sizes)])
            verdicts.append(lower_verdict(big, small))
            parts.append(f"pool {pool:,}: R(M={max(sizes)}) - R(M={min(sizes)}) = "
                         f"{gap_text(big - small)}")
        claims.append(("Fig. 4: a larger M helps (lower regret at the largest M than at the "
                       "smallest)", combine(verdicts), "; ".join(parts)))
    return claims


def buffer_claims(runner: Runner, buffers) -> list[Claim]:
    task = runner.tasks[runner.config.buffer_task]
    largest = max(buffers)
    smaller = [c for c in buffers if c < largest]
    if not smaller:
        return []
    # the paper's C = 10^4 at T = 10^5: a tenth of the horizon (the nearest capacity run)
    capacity = min(smaller, key=lambda c: abs(math.log(c / (task.horizon / 10))))
    full = C.final_regret(buffers[largest])
    gap = C.final_regret(buffers[capacity]) - full
    mean, half = C.mean_ci(gap)
    scale = max(full.mean(), 1e-12)
    if abs(mean) <= SLIGHT * scale:
        verdict = True
    else:
        verdict = False if (mean - half > SLIGHT * scale or mean + half < -SLIGHT * scale) \
            else None
    whole = "C >= T" if largest >= task.horizon else f"C = {largest:,}"
    return [(f"Fig. 11: a buffer of C = {capacity:,} (about T/10, as 10^4 is at T = 10^5) "
             f"changes final regret only slightly against {whole} (within "
             f"{100 * SLIGHT:.0f}%)", verdict,
             f"paired gap {mean:+.1f} ± {half:.1f} = {100 * mean / scale:+.1f}% of "
             f"{full.mean():.1f} ({task.title}, T = {task.horizon:,})")]


def ablation_claims(ablations) -> list[Claim]:
    claims = []
    for name, field, text in ABLATIONS:
        by_law = ablations.get(name, {})
        finals = {law: C.final_regret(r) for law, r in by_law.items()}
        if len(finals) < 2:
            continue
        if name == "update":
            verdict, evidence = group_verdict(finals, DISCRETE, CONTINUOUS)
        elif name == "reference":
            verdict, evidence = group_verdict(finals, CONTINUOUS, DISCRETE)
        else:
            laws = list(finals)
            scale = max(np.mean([v.mean() for v in finals.values()]), 1e-12)
            pairs = [(a, b, *C.paired_gap(finals[a], finals[b]))
                     for a, b in itertools.combinations(laws, 2)]
            significant = [(a, b, g) for a, b, g, h in pairs if abs(g) - h > 0]
            large = [(a, b, g) for a, b, g in significant if abs(g) > SLIGHT * scale]
            spread = (max(v.mean() for v in finals.values())
                      - min(v.mean() for v in finals.values())) / scale
            verdict = True if not significant else (False if large else None)
            evidence = (f"spread of the means {100 * spread:.1f}% of their average; "
                        f"significant pairs {[(a, b) for a, b, _ in significant] or 'none'}")
        claims.append((f"Fig. 14 ({field}): {text}", verdict, evidence))
    return claims


def lmc_claims(runner: Runner, lmc, costs) -> list[Claim]:
    task = runner.tasks["vector"]
    if "ES++" not in lmc or LMC not in lmc:
        return []
    es, mc = C.final_regret(lmc["ES++"]), C.final_regret(lmc[LMC])
    claims = [(f"App. F.2: Ensemble++ has lower regret than LMC-TS on vector-quadratic "
               f"(T = {task.horizon:,})", lower_verdict(es, mc),
               f"paired R(ES++) - R(LMC-TS) = {gap_text(es - mc)}; ES++ {C.fmt_ci(es)}, "
               f"LMC-TS {C.fmt_ci(mc)}")]
    early, late = cost_windows(task.horizon)
    ratios = {k: window_ms(v, *late) / window_ms(v, *early) for k, v in costs.items()}
    chunks = int(np.sum(costs["ES++"]["steps"] > early[0]))
    enough = chunks >= 8 and runner.update_start("vector") < early[0]
    if not enough:
        verdict = None
    else:
        verdict = ratios[LMC] >= GROWTH and ratios["ES++"] <= STEADY
    claims.append((f"App. F.2: LMC-TS's per-round cost grows with t while Ensemble++'s is "
                   f"flat (late / early >= {GROWTH:g} for LMC-TS, <= {STEADY:g} for ES++)",
                   verdict,
                   f"measured ms per round, rounds {late[0]:.0f}-{late[1]:.0f} over "
                   f"{early[0]:.0f}-{early[1]:.0f}: "
                   + ", ".join(f"{k} {ratios[k]:.2f}x ({window_ms(costs[k], *early):.3f} -> "
                               f"{window_ms(costs[k], *late):.3f} ms)" for k in costs)
                   + ("" if enough else "; too few timed chunks past the update start")))
    return claims


def moderation_claims(runner: Runner, moderation, note: str | None) -> list[Claim]:
    if note:
        return [("Moderation (Fig. 3, App. G.5; on the stand-in): Ensemble++'s accuracy is above "
                 "Ensemble+'s (about +5 points) and Greedy's", None, note)]
    task = runner.tasks["moderation"]
    late = late_start(task.horizon)
    acc = {k: accuracy(v, late) for k, v in moderation.items()}
    claims = []
    others = [k for k in ("Ensemble+", "Greedy") if k in acc]
    if "ES++" in acc and others:
        verdicts, parts = [], []
        for other in others:
            verdicts.append(lower_verdict(-acc["ES++"], -acc[other]))
            parts.append(f"ES++ - {other}: {gap_text(100 * (acc['ES++'] - acc[other]))} points")
        claims.append(("Moderation (Fig. 3, App. G.5; on the stand-in): Ensemble++'s accuracy "
                       f"over rounds {late + 1:,}-{task.horizon:,} is above "
                       + " and ".join(f"{o}'s" for o in others)
                       + " (paper: about +5 points over Ensemble+)", combine(verdicts),
                       "paired accuracy gaps: " + "; ".join(parts)))
    frozen = [k for k in runner.config.mod_frozen if f"{k} frozen" in acc]
    if frozen:
        verdicts, parts = [], []
        for k in frozen:
            verdicts.append(lower_verdict(-acc[k], -acc[f"{k} frozen"]))
            parts.append(f"{k}: {gap_text(100 * (acc[k] - acc[f'{k} frozen']))} points")
        claims.append(("Moderation: fine-tuning the backbone beats freezing it (accuracy over "
                       "the last fifth)", combine(verdicts),
                       "paired fine-tuned - frozen: " + "; ".join(parts)))
    if "ES++" in moderation:
        rates = always_rates(runner)
        best = min(rate for _, rate in rates.values()) * task.horizon
        es = C.final_regret(moderation["ES++"])
        claims.append(("Moderation (App. G.5): Ensemble++ beats always-block and "
                       "always-publish (lower regret)", C.verdict_at_most(es, best),
                       f"ES++ R_T {C.fmt_ci(es)}; the better constant policy {best:.1f}"))
    return claims


def check_claims(runner: Runner, panels: Panels) -> list[Claim]:
    """Every claim checked (Li et al. 2024, Sec. 5.2, App. F.2, G.5; and the authors' code),
    ``(claim, verdict, evidence)``."""
    return (count_claims()
            + beats_random_claims(runner, panels.comparison)
            + small_ordering_claims(runner, panels.comparison)
            + paper_ordering_claims(runner, panels.long, panels.comparison)
            + greedy_claims(runner, panels.comparison)
            + frontier_claims(runner, panels.params)
            + pools_claims(runner, panels.pools)
            + buffer_claims(runner, panels.buffers)
            + ablation_claims(panels.ablations)
            + lmc_claims(runner, panels.lmc, panels.costs)
            + moderation_claims(runner, panels.moderation, panels.moderation_note))


def tables(runner: Runner, panels: Panels) -> list[C.Table]:
    return [count_table(runner.config), params_table(runner, panels.params),
            comparison_table(runner, panels.comparison),
            start_table(runner, panels.comparison), long_table(runner, panels.long),
            pools_table(runner, panels.pools), buffers_table(runner, panels.buffers),
            ablations_table(runner, panels.ablations),
            lmc_table(runner, panels.lmc, panels.costs),
            moderation_table(runner, panels.moderation, panels.moderation_note)]


# ------------------------------------------------------------------------------------------------
# Drawing.


def _not_run(ax, title: str, text: str) -> None:
    ax.set_title(title)
    ax.text(0.5, 0.5, text, ha="center", va="center", wrap=True, fontsize=9,
            transform=ax.transAxes)
    ax.set_axis_off()


def draw_params(ax, runner: Runner, task: str, by_label) -> None:
    """Final regret (mean, 95% CI) against the paper's parameter count, one line per agent."""
    config, t = runner.config, runner.tasks[task]
    dim = runner.env(task).spec().dim
    for label, by_size in by_label.items():
        sizes = sorted(by_size)
        x = [param_count(label, dim, config, t.outputs, m) for m in sizes]
        stats = np.array([C.mean_ci(C.final_regret(by_size[m])) for m in sizes])
        ax.errorbar(x, stats[:, 0], yerr=np.nan_to_num(stats[:, 1]), marker="o", capsize=3,
                    label=label)
        for xi, yi, m in zip(x, stats[:, 0], sizes, strict=True):
            ax.annotate(f"{m}", (xi, yi), textcoords="offset points", xytext=(3, 3), fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("parameters (paper's count; labels: M)")
    ax.set_ylabel(f"regret at T = {t.horizon:,}")
    ax.set_title(f"Fig. {'1' if task == 'quadratic' else '10'}: {t.title.split(' (')[0]}")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)


def draw_pools(ax, pools, config: Config) -> None:
    pool_sizes = sorted(pools)
    for m in config.pool_ensemble_sizes:
        stats = np.array([C.mean_ci(C.final_regret(pools[p][m])) for p in pool_sizes])
        ax.errorbar(pool_sizes, stats[:, 0], yerr=np.nan_to_num(stats[:, 1]), marker="o",
                    capsize=3, label=f"M = {m}")
    ax.set_xscale("log")
    ax.set_xticks(pool_sizes, [f"{p:,}" for p in pool_sizes])
    ax.minorticks_off()
    ax.set_xlabel("pool size (decision set)")
    ax.set_ylabel(f"ES++ regret at T = {config.horizon:,}")
    ax.set_title("Fig. 4: decision-set size")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)


def draw_bars(ax, by_law, title: str) -> None:
    laws = list(by_law)
    stats = np.array([C.mean_ci(C.final_regret(by_law[law])) for law in laws])
    colors = ["C0"] + ["C1"] * (len(laws) - 1)
    ax.bar(range(len(laws)), stats[:, 0], yerr=np.nan_to_num(stats[:, 1]), capsize=3,
           color=colors)
    ax.set_xticks(range(len(laws)))
    ax.set_xticklabels(laws, rotation=30, fontsize=8)
    low = np.nanmin(stats[:, 0] - np.nan_to_num(stats[:, 1]))
    high = np.nanmax(stats[:, 0] + np.nan_to_num(stats[:, 1]))
    ax.set_ylim(max(0.0, low - 0.5 * (high - low)), high + 0.2 * (high - low) + 1e-9)
    ax.set_ylabel("ES++ final regret")
    ax.set_title(title)
    ax.grid(alpha=0.3, axis="y")


def draw_costs(ax, costs) -> None:
    for label, c in costs.items():
        ax.plot(c["steps"], c["ms"], marker=".", label=label)
    ax.set_yscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("wall time per round (ms, one run)")
    ax.set_title("App. F.2: LMC-TS and Ensemble++, per-round cost against t")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)


def draw_accuracy(ax, moderation, runner: Runner) -> None:
    for label, result in moderation.items():
        steps = np.asarray(result.steps)
        ax.plot(steps, result.mean("correct") / steps, label=label,
                linestyle="--" if label.endswith("frozen") else "-")
    for policy, (acc, _) in always_rates(runner).items():
        ax.axhline(acc, color="k", linestyle=":", linewidth=0.8)
        ax.annotate(policy, (1, acc), fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("round t")
    ax.set_ylabel("accuracy so far")
    ax.set_title("Moderation (stand-in): accuracy")
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)


def draw(runner: Runner, panels: Panels):
    """The figure: 3 rows of 5 panels."""
    config = runner.config
    fig, axes = C.new_figure(3, 5, width=4.4, height=3.6)
    ax = iter(axes.ravel())
    for task in ("quadratic", "neural"):
        a = next(ax)
        if task in panels.params:
            draw_params(a, runner, task, panels.params[task])
        else:
            _not_run(a, f"Fig. {'1' if task == 'quadratic' else '10'}", "not run at this scale")
    for task in ("quadratic", "neural", "shuttle"):
        a = next(ax)
        t = runner.tasks[task]
        if task in panels.comparison:
            jb.plot_regret(panels.comparison[task], ax=a,
                           title=f"Fig. 3: {t.title.split(' (')[0]}")
            a.axvline(runner.update_start(task), color="k", linestyle=":", linewidth=0.8)
        else:
            _not_run(a, f"Fig. 3: {t.title}", "not run at this scale")
    a = next(ax)
    if panels.long is not None:
        horizon = runner.tasks["long"].horizon
        jb.plot_regret(panels.long, ax=a, title=f"Quadratic at T = {horizon:,}")
    else:
        _not_run(a, "Quadratic at T = 10^5", "not run at this scale")
    draw_pools(next(ax), panels.pools, config)
    task = runner.tasks[config.buffer_task]
    jb.plot_regret({f"C = {c:,}": r for c, r in panels.buffers.items()}, ax=next(ax),
                   title=f"Fig. 11: buffer ({task.title.split(' (')[0]})")
    for (name, field, _), a in zip(ABLATIONS, [next(ax), next(ax), next(ax)], strict=True):
        draw_bars(a, panels.ablations[name], f"Fig. 14: {field}")
    jb.plot_regret(panels.lmc, ax=next(ax), title="App. F.2: vector-quadratic")
    draw_costs(next(ax), panels.costs)
    a, b = next(ax), next(ax)
    if panels.moderation:
        jb.plot_regret(panels.moderation, ax=a, title="Moderation (stand-in): regret")
        draw_accuracy(b, panels.moderation, runner)
    else:
        _not_run(a, "Moderation", panels.moderation_note or "not run")
        _not_run(b, "Moderation", panels.moderation_note or "not run")
    return fig


# ------------------------------------------------------------------------------------------------
# Main.


def main(argv: Sequence[str] | None = None) -> C.Report:
    """Runs the reproduction at ``--scale`` and writes the PNG and the markdown report."""
    args = C.parse_args(NAME, __doc__.splitlines()[0], argv)
    config = C.configure(SCALES, args)
    out = C.output_dir(NAME, args.out)
    start = C.timer()
    print(f"{TITLE}\nscale {args.scale}: {config}", flush=True)

    def log(message: str) -> None:
        print(f"  [{C.timer() - start:4.0f} s] {message}", flush=True)

    runner = Runner(config, jax.random.key(args.seed),
                    progress=False if args.no_progress else None, log=log, cache=args.cache)
    panels = run(runner)
    figure = C.save_figure(draw(runner, panels), out / f"{NAME}.png")
    claims = check_claims(runner, panels)
    seconds = C.timer() - start
    long = (f"the paper-horizon check: T = {config.long_horizon:,}, {config.long_runs} runs"
            if config.long_horizon else "no paper-horizon check at this scale")
    intro = (f"Scale `{args.scale}`, seed {args.seed}. Li et al. 2024, Sec. 5.2, App. F.2 and G.5, "
             f"with the authors' code's findings. Quadratic (`quadratic-pool`, the authors' "
             f"instance and subset sequence) "
             f"and Neural (`random-mlp-bernoulli`, the authors' pool, tau = 0.1) tasks: "
             f"T = {config.horizon:,}, {config.num_runs} runs; Shuttle (`shuttle-epp`): "
             f"T = {config.shuttle_horizon:,}, {config.shuttle_runs} runs; App. F.2 "
             f"(`vector-quadratic`): T = {config.lmc_horizon:,}, {config.lmc_runs} runs; "
             f"moderation (`text-moderation`, generated stand-in corpus): "
             f"T = {config.mod_horizon:,}, {config.mod_runs} runs; {long}. The authors' presets "
             "(quadratic, neural-classification, shuttle, vector-quadratic, hate-speech) apply "
             "to every method; backbone a "
             f"{' x '.join(map(str, config.hidden))} ReLU MLP (a small random transformer for "
             f"moderation); M = {config.ensemble_size} unless swept. Common random numbers: "
             "gaps are paired run by run. The authors' own code does not show "
             "Ensemble++ below Greedy or Ensemble+ at T <= 20,000 on the quadratic preset, so "
             "small-scale orderings are compared with their code and the paper's ordering is "
             "a T = 10^5 claim. Verdicts: *not reproduced* when the 95% interval of the paired "
             "difference contradicts the claim, *not decidable here* when it straddles it.")
    return C.finish(NAME, TITLE, intro, tables(runner, panels), claims, figure, out, args,
                    seconds, data={"config": config, "runner": runner, "panels": panels})


if __name__ == "__main__":
    main()
