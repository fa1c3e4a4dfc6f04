"""Neural Logistic Bandits (Bae & Lee): Figure 1 (synthetic), Figure 2 (classification), Table 2.

Reproduces the experiments of Bae & Lee 2025 (Sec. 7, App. J) at
reduced sizes:

* **Figure 1** (``neurallog-synthetic``, Bernoulli rewards ``mu(h(x))``, K = 5 arms drawn per
  round from a pool of Unif(-1, 1)^d vectors): h1 ``0.2 (x^T theta)^4``, h2 ``20 cos(x^T theta)``,
  h3 ``5 x^T Theta x`` (``function=``).
* **Figure 2** (classification as a K-armed bandit, reward 1 for the true class): ``shuttle``,
  ``magic`` and ``digits`` (the offline stand-in for mnist: sklearn's 8x8 digits, d = 64).
* **Table 2** (``obd-replay``, the Open Bandit Dataset's uniform-random log replayed with K = 5
  candidates): final CTR over sweeps of the width m (kappa = 50, S = 1), kappa (m = 20, S = 1) and
  S (``param_bound``; m = 20, kappa = 50). kappa and S go in one ``jb.sweep`` per agent (their
  Cartesian grid, one compilation); each extra width is one more compilation.

Agents: the paper's (1) NCBF-UCB, (2) Logistic-UCB-1, (3) ada-OFU-ECOLog, (4) NeuralLog-UCB-1,
(5) NeuralLog-UCB-2, its TS-1 / TS-2, plus Neural-UCB, Neural-TS and uniform random. Every network
is the paper's two-layer, width-m net (m = 20 unless swept) updated every 50 rounds by 100 gd
steps of 0.01; every agent keeps a ring buffer of the whole horizon (arms change every round).
Each agent's exploration scale nu is tuned over ``{0.1, 1, 10} x`` its default by one ``jb.sweep``
(the paper tunes nu and lambda over a grid and plots the best; tuning on the evaluation runs).
Common random numbers: run r of every agent sees the same instance, arms and reward noise.

Scales: ``small`` (d = 10, pool 500, T = 1,000, 4 runs, h1 and h3 and shuttle, 7 agents, OBD 4,000
logged events (~800 accepted) x 3 runs; 1,010 s on the 2-core development machine),
``paper`` (d = 20, pool 2,500, T = 2,000, 10 runs, OBD 10,000 events x 5 runs; for a GPU);
``tiny`` is for the tests. Run it from the repository root::

    python -m benchmarks.neurallog_figs                 # --scale small

It writes ``neurallog_figs.png`` and ``neurallog_figs.md`` into ``--out`` (default
``results/reproduce/neurallog_figs/``).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Sequence

import jax
import numpy as np

import jaxbandits as jb
from benchmarks import anytime_fig1 as A
from benchmarks import framework as C
from jaxbandits import Result

NAME = "neurallog_figs"
TITLE = "Neural Logistic Bandits: Figure 1 (synthetic), Figure 2 (classification), Table 2 (OBD)"

LABELS = {"ncbf-ucb": "NCBF-UCB", "logistic-ucb-1": "Log-UCB-1",
          "ada-ofu-ecolog": "ada-OFU-ECOLog", "neurallog-ucb-1": "NL-UCB-1",
          "neurallog-ucb-2": "NL-UCB-2", "neurallog-ts-1": "NL-TS-1", "neurallog-ts-2": "NL-TS-2",
          "neural-ucb": "Neural-UCB", "neural-ts": "Neural-TS", "random": "random"}
LINEAR = ("logistic-ucb-1", "ada-ofu-ecolog")
NEURALLOG_UCB = ("neurallog-ucb-1", "neurallog-ucb-2")
TS = ("neurallog-ts-1", "neurallog-ts-2")
#: the paper's Table 2 columns
OBD_AGENTS = ("ncbf-ucb", "logistic-ucb-1", "ada-ofu-ecolog", "neurallog-ucb-1",
              "neurallog-ucb-2", "neurallog-ts-1", "neurallog-ts-2")
NU_FACTORS = (0.1, 1.0, 10.0)


@dataclasses.dataclass(frozen=True)
class Config:
    """Sizes of one scale.

    Attributes:
      dim, num_arms, pool_size: d, K and the pool N of the synthetic environment.
      horizon, num_runs: T and the number of runs of Figures 1 and 2.
      functions, datasets: the synthetic functions and classification environments run.
      agents: the registry names of Figures 1 and 2.
      width: m, the network width (paper: 20).
      nu_factors: the nu grid, as multiples of each agent's default ``explore_scale``.
      obd_horizon, obd_runs: logged events replayed (about a fifth are accepted) and runs.
      obd_agents, widths, kappas, bounds: Table 2's columns and its m, kappa and S sweeps (the
        first value of each is the shared default row).
      chunk_size, num_records: runner options (see :func:`benchmarks.framework.run_options`).
    """

    dim: int
    num_arms: int
    pool_size: int
    horizon: int
    num_runs: int
    functions: tuple[str, ...]
    datasets: tuple[str, ...]
    agents: tuple[str, ...]
    width: int = 20
    nu_factors: tuple[float, ...] = NU_FACTORS
    obd_horizon: int = 4000
    obd_runs: int = 3
    obd_agents: tuple[str, ...] = OBD_AGENTS
    widths: tuple[int, ...] = (20, 50)
    kappas: tuple[float, ...] = (50.0, 100.0, 200.0)
    bounds: tuple[float, ...] = (1.0, 10.0, 100.0)
    chunk_size: int = 500
    num_records: int = 30


ALL_AGENTS = ("random", "logistic-ucb-1", "ada-ofu-ecolog", "ncbf-ucb", "neurallog-ucb-1",
              "neurallog-ucb-2", "neurallog-ts-1", "neurallog-ts-2", "neural-ucb", "neural-ts")

SCALES = {
    "tiny": Config(dim=4, num_arms=3, pool_size=50, horizon=100, num_runs=2, functions=("h1",),
                   datasets=("magic",), agents=("random", "logistic-ucb-1", "neurallog-ucb-2"),
                   width=8, nu_factors=(1.0,), obd_horizon=200, obd_runs=2,
                   obd_agents=("logistic-ucb-1", "neurallog-ucb-2"), widths=(8,),
                   kappas=(50.0, 100.0), bounds=(1.0, 10.0), chunk_size=100, num_records=10),
    # not on the command line: the sizes notebooks/neural.ipynb tells the story at
    "notebook": Config(dim=6, num_arms=5, pool_size=200, horizon=300, num_runs=3,
                       functions=("h1",), datasets=("magic",),
                       agents=("random", "logistic-ucb-1", "neurallog-ucb-2", "neurallog-ts-2"),
                       nu_factors=(1.0,), obd_horizon=1000, obd_runs=2,
                       obd_agents=("logistic-ucb-1", "neurallog-ucb-2", "neurallog-ts-2"),
                       widths=(20,), kappas=(50.0, 100.0), bounds=(1.0,), chunk_size=300,
                       num_records=20),
    "small": Config(dim=10, num_arms=5, pool_size=500, horizon=1000, num_runs=4,
                    functions=("h1", "h3"), datasets=("shuttle",),
                    agents=("random", "logistic-ucb-1", "ada-ofu-ecolog", "ncbf-ucb",
                            "neurallog-ucb-1", "neurallog-ucb-2", "neurallog-ts-2"),
                    nu_factors=(1.0, 10.0), widths=(20,)),
    "paper": Config(dim=20, num_arms=5, pool_size=2500, horizon=2000, num_runs=10,
                    functions=("h1", "h2", "h3"), datasets=("shuttle", "magic", "digits"),
                    agents=ALL_AGENTS, obd_horizon=10_000, obd_runs=5, widths=(20, 50, 100),
                    chunk_size=1000, num_records=60),
}


# ------------------------------------------------------------------------------------------------
# Agents and environments.


def make_agent(name: str, config: Config, horizon: int, width: int | None = None, **fields):
    """A registry agent with the paper's practical settings: width m, updates every 50 rounds,
    a ring buffer of ``horizon`` observations (arms change every round)."""
    if name == "random":
        return jb.make_agent("random")
    kw = {"buffer_size": horizon, "update_every": 50, **fields}
    if name not in LINEAR:
        kw["width"] = width or config.width
    if name in ("neural-ucb", "neural-ts"):
        kw["depth"] = 2
    return jb.make_agent(name, **kw)


def entry(name: str, config: Config, horizon: int, width: int | None = None) -> A.Entry:
    """One agent of a panel: nu tuned over the scale's grid (random and one-value grids: a
    single run)."""
    agent = make_agent(name, config, horizon, width)
    label = LABELS[name]
    kind = "es" if name == "neurallog-ucb-2" else "baseline"
    if name == "random" or len(config.nu_factors) < 2:
        return A.Entry(label, agent, kind=kind)
    values = tuple(float(agent.explore_scale) * f for f in config.nu_factors)
    return A.Entry(label, agent, "explore_scale", values, tune=True, kind=kind)


def envs(config: Config) -> dict[str, object]:
    """``{panel title: env}`` of Figures 1 and 2."""
    out = {f"Fig. 1 {f}": jb.make_env("neurallog-synthetic", dim=config.dim,
                                      num_arms=config.num_arms, function=f,
                                      pool_size=config.pool_size)
           for f in config.functions}
    out |= {f"Fig. 2 {d}": jb.make_env(d) for d in config.datasets}
    return out


def run_figures(config: Config, key: jax.Array,
                progress: bool | None = False) -> dict[str, A.PanelResult]:
    """Figures 1 and 2: ``{title: PanelResult}`` (one compilation per agent and environment)."""
    results = {}
    for title, env in envs(config).items():
        panel = A.Panel(title=title, env=env, reference="NL-UCB-2",
                        entries=tuple(entry(n, config, config.horizon) for n in config.agents))
        results[title] = A.run_panel(panel, key, config, progress)
    return results


def run_obd(config: Config, key: jax.Array,
            progress: bool | None = False) -> dict[tuple[str, float], dict[str, Result]]:
    """Table 2: ``{(sweep, value): {agent label: Result}}`` with sweeps ``"m"``, ``"kappa"`` and
    ``"S"``; the default row (first value of each) is one shared run. ``obd_runs = 0``
    (``--set obd_runs=0``, e.g. where the OBD sample is not installed): no rows."""
    if config.obd_runs == 0:
        return {}
    env = jb.make_env("obd-replay")
    options = C.run_options(config.obd_horizon, config.chunk_size, config.num_records,
                            progress=progress)
    kappa0, bound0 = config.kappas[0], config.bounds[0]
    rows: dict[tuple[str, float], dict[str, Result]] = {}
    for name in config.obd_agents:
        label = LABELS[name]
        agent = make_agent(name, config, config.obd_horizon, config.widths[0])
        grid = {"kappa": list(config.kappas), "param_bound": list(config.bounds)}
        swept = jb.sweep(env, agent, key, grid, config.obd_horizon, config.obd_runs, **options)
        by_point = dict(zip(itertools.product(config.kappas, config.bounds), swept.values(),
                            strict=True))
        for kappa in config.kappas:
            rows.setdefault(("kappa", kappa), {})[label] = by_point[kappa, bound0]
        for bound in config.bounds:
            rows.setdefault(("S", bound), {})[label] = by_point[kappa0, bound]
        for width in config.widths:
            if width == config.widths[0] or name in LINEAR:  # no width: the default row
                rows.setdefault(("m", width), {})[label] = by_point[kappa0, bound0]
                continue
            wide = make_agent(name, config, config.obd_horizon, width, kappa=kappa0,
                              param_bound=bound0)
            rows.setdefault(("m", width), {})[label] = jb.simulate(
                env, wide, key, config.obd_horizon, config.obd_runs, name=label, **options)
    order = [("m", w) for w in config.widths] + [("kappa", k) for k in config.kappas]
    return {k: rows[k] for k in order + [("S", s) for s in config.bounds]}


# ------------------------------------------------------------------------------------------------
# Tables and claims.


def final_ctr(result: Result) -> np.ndarray:
    """``(runs,)`` final CTR (clicks over accepted events)."""
    accepted = np.maximum(np.asarray(result.accepted[:, -1], np.float64), 1.0)
    return np.asarray(result.cumulative_reward[:, -1], np.float64) / accepted


def figure_table(results: dict[str, A.PanelResult], config: Config) -> C.Table:
    """Final regret of every plotted (tuned) curve, one column per environment."""
    titles = list(results)
    short = [lbl.split(" (")[0] for lbl in next(iter(results.values())).curves]
    table = C.Table(f"Figures 1-2: final cumulative regret at T = {config.horizon} "
                    "(mean ± 95% CI)", ["agent", *titles],
                    note=(f"{config.num_runs} runs, common random numbers; nu tuned per agent "
                          "and environment (the chosen value in the tuning table). Synthetic: "
                          f"d = {config.dim}, K = {config.num_arms}, pool {config.pool_size}; "
                          f"classification: full datasets, pool 2500, width m = {config.width}."))
    for name in short:
        cells = []
        for title in titles:
            curves = {k.split(" (")[0]: v for k, v in results[title].curves.items()}
            cells.append(C.fmt_ci(C.final_regret(curves[name])))
        table.add(name, *cells)
    return table


def tuning_table(results: dict[str, A.PanelResult]) -> C.Table:
    table = C.Table("Tuning: the nu chosen per environment (lowest mean final regret)",
                    ["environment", "choices"])
    for title, result in results.items():
        table.add(title, ", ".join(f"{k} {v:.2g}" for k, v in result.tuned.items()) or "—")
    return table


def obd_table(rows: dict[tuple[str, float], dict[str, Result]], config: Config) -> C.Table:
    labels = [LABELS[n] for n in config.obd_agents]
    table = C.Table(f"Table 2 (OBD replay): final CTR after {config.obd_horizon} logged events",
                    ["sweep", "value", *labels, "accepted (mean)"],
                    note=(f"Mean over {config.obd_runs} runs of clicks / accepted events "
                          "(about a fifth of the logged events are accepted). Defaults m = "
                          f"{config.widths[0]}, kappa = {config.kappas[0]:g}, S = "
                          f"{config.bounds[0]:g}; the default row appears in every sweep "
                          "(the paper's default). The paper's CTRs are .0013-.0052; a few clicks "
                          "separate "
                          "the columns, so most differences are noise."))
    for (sweep, value), by_agent in rows.items():
        accepted = np.mean([float(r.accepted[:, -1].mean()) for r in by_agent.values()])
        table.add(sweep, f"{value:g}", *(f"{final_ctr(by_agent[lbl]).mean():.4f}"
                                         for lbl in labels), f"{accepted:.0f}")
    return table


def figure_claims(results: dict[str, A.PanelResult]) -> list[tuple[str, bool | None, str]]:
    claims = []
    for title, result in results.items():
        curves = {k.split(" (")[0]: v for k, v in result.curves.items()}
        learners = {k: v for k, v in curves.items() if k != "random"}
        if "NL-UCB-2" in curves:
            best = min(learners, key=lambda k: A.mean_final(learners[k]))
            gap, half = C.paired_gap(C.final_regret(curves["NL-UCB-2"]),
                                     C.final_regret(learners[best]))
            ok = True if best == "NL-UCB-2" else (False if gap - half > 0 else None)
            claims.append((f"[Figs. 1-2] NL-UCB-2 is lowest or within its CI of the lowest on "
                           f"{title}", ok,
                           f"lowest {best} {A.mean_final(learners[best]):.1f}, NL-UCB-2 "
                           f"{A.mean_final(curves['NL-UCB-2']):.1f}, paired gap "
                           f"{gap:+.1f} ± {half:.1f}"))
        lin = [LABELS[n] for n in LINEAR if LABELS[n] in curves]
        neural = [LABELS[n] for n in NEURALLOG_UCB if LABELS[n] in curves]
        if lin and neural:
            best_lin = min(lin, key=lambda k: A.mean_final(curves[k]))
            best_nl = min(neural, key=lambda k: A.mean_final(curves[k]))
            ok, evidence = A.worse_than(curves[best_lin], curves[best_nl])
            claims.append((f"[Figs. 1-2] the linear logistic baselines are worse than "
                           f"NeuralLog-UCB on {title} ({best_lin} vs {best_nl})", ok, evidence))
    return claims


def obd_claims(rows: dict[tuple[str, float], dict[str, Result]],
               config: Config) -> list[tuple[str, bool | None, str]]:
    claims = []
    ts = [LABELS[n] for n in TS if n in config.obd_agents]
    if ts:
        tops, failed = 0, []
        for by_agent in rows.values():
            ctr = {k: final_ctr(v) for k, v in by_agent.items()}
            best_ts = max(ts, key=lambda k: ctr[k].mean())
            others = [k for k in ctr if k not in ts]
            best_other = max(others, key=lambda k: ctr[k].mean())
            if ctr[best_ts].mean() >= ctr[best_other].mean():
                tops += 1
            else:
                gap, half = C.paired_gap(ctr[best_other], ctr[best_ts])
                failed.append(gap - half > 0)
        ok = True if not failed else (False if any(failed) else None)
        claims.append(("[Table 2] a NeuralLog-TS agent has the highest CTR in every row", ok,
                       f"{tops} of {len(rows)} rows; the others within noise: "
                       f"{not any(failed)}"))
    invariant = [LABELS[n] for n in ("neurallog-ucb-2", "neurallog-ts-2", "ada-ofu-ecolog")
                 if n in config.obd_agents]
    kappa_rows = [rows["kappa", k] for k in config.kappas]
    if invariant and len(kappa_rows) > 1:
        same = all(np.array_equal(np.asarray(r[lbl].cumulative_reward),
                                  np.asarray(kappa_rows[0][lbl].cumulative_reward))
                   and np.array_equal(np.asarray(r[lbl].accepted),
                                      np.asarray(kappa_rows[0][lbl].accepted))
                   for r in kappa_rows for lbl in invariant)
        claims.append(("[Table 2] kappa-invariance: " + ", ".join(invariant) + " give identical "
                       "results for every kappa", same, "bit-identical clicks and accepted "
                       "counts" if same else "results differ across kappa"))
    return claims


# ------------------------------------------------------------------------------------------------
# Drawing and main.


def draw(results: dict[str, A.PanelResult], rows, config: Config):
    ncols = len(results) + 1
    fig, axes = C.new_figure(1, ncols, width=4.6, height=3.8)
    for ax, (title, result) in zip(axes[0], results.items(), strict=False):
        A.draw_curves(ax, result.curves, result.kinds, title)
        ax.legend(fontsize=6)
    ax = axes[0][-1]
    default = rows[next(iter(rows))] if rows else {}
    for label, res in default.items():
        ax.plot(np.asarray(res.steps), res.mean("reward"), label=label)
    ax.set_xlabel("logged event")
    ax.set_ylabel("cumulative clicks")
    ax.set_title("OBD replay, default row")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=6)
    return fig


def run(config: Config, key: jax.Array, progress: bool | None = False):
    """``(figures, obd_rows)``: see :func:`run_figures` and :func:`run_obd`."""
    return run_figures(config, key, progress), run_obd(config, key, progress)


def main(argv: Sequence[str] | None = None) -> C.Report:
    """Runs the reproduction at ``--scale`` and writes the PNG and the markdown report."""
    args = C.parse_args(NAME, __doc__.splitlines()[0], argv)
    config = C.configure(SCALES, args)
    out = C.output_dir(NAME, args.out)
    start = C.timer()
    print(f"{TITLE}\nscale {args.scale}: {config}", flush=True)
    figures, rows = run(config, jax.random.key(args.seed),
                        progress=False if args.no_progress else None)
    figure = C.save_figure(draw(figures, rows, config), out / f"{NAME}.png")
    tables = [figure_table(figures, config), tuning_table(figures)]
    claims = figure_claims(figures)
    if rows:
        tables.append(obd_table(rows, config))
        claims += obd_claims(rows, config)
    seconds = C.timer() - start
    intro = (f"Scale `{args.scale}`, seed {args.seed}. Figures 1-2: T = {config.horizon}, "
             f"{config.num_runs} runs, agents " + ", ".join(LABELS[a] for a in config.agents)
             + f"; synthetic d = {config.dim}, K = {config.num_arms}, pool "
             f"{config.pool_size}, Unif(-1, 1) features; networks: two layers, width m = "
             f"{config.width}, updated every 50 rounds (100 gd steps of 0.01), S = 1, kappa = "
             "10, lambda = 1, nu tuned over {" + ", ".join(f"{f:g}" for f in config.nu_factors)
             + "} x each agent's default. Table 2: OBD replay (merged men+women random "
             f"samples, K = 5 candidates), {config.obd_horizon} logged events x "
             f"{config.obd_runs} runs, agents' default nu. Bae & Lee 2025, Sec. 7 and "
             "App. J. Reduced sizes: the paper uses d = 20, pool 2500, T = 2000, 10 runs, and "
             "mnist where `digits` (8x8, 1797 images) stands in. An ordering is decided at a "
             f"{100 * A.ORDER_TOL:.0f}% difference of means or a paired 95% CI excluding 0.")
    return C.finish(NAME, TITLE, intro, tables, claims, figure, out, args, seconds,
                    data={"figures": figures, "obd": rows, "config": config})


if __name__ == "__main__":
    main()
