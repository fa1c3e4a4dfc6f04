"""Neural Logistic Bandits (Bae & Lee 2025): Figs. 1-2 and Table 2.

Bae & Lee 2025, Sec. 7 and App. J: Fig. 1 (synthetic h1-h3), Fig. 2 (shuttle, magic, digits for
mnist) and Table 2 (OBD replay over m, kappa and S), nu tuned per agent by one sweep. Setup:
docs/reproductions/bae-lee-2025.md::

    python -m benchmarks.neurallog_figs                 # small: d = 10, pool 500, T = 1,000
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Sequence

import numpy as np

import jaxbandits as jb
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
OBD_AGENTS = ("ncbf-ucb", *LINEAR, *NEURALLOG_UCB, *TS)  # Table 2's columns
ALL_AGENTS = ("random", *LINEAR, "ncbf-ucb", *NEURALLOG_UCB, *TS, "neural-ucb", "neural-ts")


@dataclasses.dataclass(frozen=True)
class Config:
    """Figs. 1-2's sizes, functions, data sets, agents, width m and nu grid (multiples of each
    default); Table 2's logged events, runs, agents and m, kappa, S sweeps (each first value
    the shared default row)."""

    dim: int
    num_arms: int
    pool_size: int
    horizon: int
    num_runs: int
    functions: tuple[str, ...]
    datasets: tuple[str, ...]
    agents: tuple[str, ...]
    width: int = 20
    nu_factors: tuple[float, ...] = (0.1, 1.0, 10.0)
    obd_horizon: int = 4000
    obd_runs: int = 3
    obd_agents: tuple[str, ...] = OBD_AGENTS
    widths: tuple[int, ...] = (20, 50)
    kappas: tuple[float, ...] = (50.0, 100.0, 200.0)
    bounds: tuple[float, ...] = (1.0, 10.0, 100.0)
    chunk_size: int = 500
    num_records: int = 30


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


def make_agent(name: str, config: Config, horizon: int, width: int | None = None, **fields):
    """The paper's practical settings: width m, updates every 50 rounds, a buffer of
    ``horizon``."""
    if name == "random":
        return jb.make_agent("random")
    kw = {"buffer_size": horizon, "update_every": 50, **fields}
    if name not in LINEAR:
        kw["width"] = width or config.width
    if name in ("neural-ucb", "neural-ts"):
        kw["depth"] = 2
    return jb.make_agent(name, **kw)


def entry(name: str, config: Config) -> C.Entry:
    """A panel's agent, nu tuned over the scale's grid (random or one value: one run)."""
    agent = make_agent(name, config, config.horizon)
    kind = "es" if name == "neurallog-ucb-2" else "baseline"
    if name == "random" or len(config.nu_factors) < 2:
        return C.Entry(LABELS[name], agent, kind=kind)
    values = tuple(float(agent.explore_scale) * f for f in config.nu_factors)
    return C.Entry(LABELS[name], agent, "explore_scale", values, tune=True, kind=kind)


def run_figures(config: Config, key, progress: bool | None = False) -> dict[str, C.PanelResult]:
    """Figures 1 and 2: ``{title: PanelResult}`` (one compilation per agent and environment)."""
    envs = {f"Fig. 1 {f}": jb.make_env("neurallog-synthetic", dim=config.dim,
                                       num_arms=config.num_arms, function=f,
                                       pool_size=config.pool_size) for f in config.functions}
    envs |= {f"Fig. 2 {d}": jb.make_env(d) for d in config.datasets}
    entries = tuple(entry(n, config) for n in config.agents)
    return {title: C.run_panel(C.Panel(title, env, entries, "NL-UCB-2"), key, config, progress)
            for title, env in envs.items()}


def run_obd(config: Config, key,
            progress: bool | None = False) -> dict[tuple[str, float], dict[str, Result]]:
    """Table 2: ``{(sweep, value): {label: Result}}``, sweeps ``"m"``, ``"kappa"``, ``"S"``
    sharing the default row's run; ``--set obd_runs=0``: no rows."""
    if config.obd_runs == 0:
        return {}
    env = jb.make_env("obd-replay")
    options = C.config_options(config, progress=progress, horizon=config.obd_horizon)
    kappa0, bound0 = config.kappas[0], config.bounds[0]
    sweeps = {"m": config.widths, "kappa": config.kappas, "S": config.bounds}
    rows: dict[tuple[str, float], dict[str, Result]] = {(s, v): {} for s in sweeps
                                                        for v in sweeps[s]}
    for name in config.obd_agents:
        label = LABELS[name]
        agent = make_agent(name, config, config.obd_horizon, config.widths[0])
        swept = jb.sweep(env, agent, key, {"kappa": list(config.kappas), "param_bound": list(
            config.bounds)}, config.obd_horizon, config.obd_runs, **options)
        by_point = dict(zip(itertools.product(config.kappas, config.bounds), swept.values(),
                            strict=True))
        for kappa in config.kappas:
            rows["kappa", kappa][label] = by_point[kappa, bound0]
        for bound in config.bounds:
            rows["S", bound][label] = by_point[kappa0, bound]
        for width in config.widths:  # the first width, or none (linear): the default row
            default = width == config.widths[0] or name in LINEAR
            rows["m", width][label] = by_point[kappa0, bound0] if default else jb.simulate(
                env, make_agent(name, config, config.obd_horizon, width, kappa=kappa0,
                                param_bound=bound0), key, config.obd_horizon, config.obd_runs,
                name=label, **options)
    return rows


def final_ctr(result: Result) -> np.ndarray:
    """``(runs,)`` final CTR (clicks over accepted events)."""
    accepted = np.maximum(np.asarray(result.accepted[:, -1], np.float64), 1.0)
    return np.asarray(result.cumulative_reward[:, -1], np.float64) / accepted


def short(result: C.PanelResult) -> dict[str, Result]:
    """The curves by agent label (without the tuned value)."""
    return {k.split(" (")[0]: v for k, v in result.curves.items()}


def figure_table(results: dict[str, C.PanelResult], config: Config) -> C.Table:
    """Final regret of every plotted (tuned) curve, one column per environment."""
    return C.table(
        f"Figures 1-2: final cumulative regret at T = {config.horizon} (mean ± 95% CI)",
        ["agent", *results],
        [(name, *(C.fmt_ci(C.final_regret(short(r)[name])) for r in results.values()))
         for name in short(next(iter(results.values())))],
        f"{config.num_runs} runs; nu tuned per agent and environment (tuning table).")


def tuning_table(results: dict[str, C.PanelResult]) -> C.Table:
    return C.table("Tuning: the nu chosen per environment (lowest mean final regret)",
                   ["environment", "choices"],
                   [(title, ", ".join(f"{k} {v:.2g}" for k, v in result.tuned.items()) or "—")
                    for title, result in results.items()])


def ctr_table(title: str, rows: dict[tuple[str, float], dict[str, Result]],
              labels: Sequence[str], note: str) -> C.Table:
    """Table 2's layout: a row per ``(sweep, value)``, the mean final CTR of each label."""
    return C.table(title, ["sweep", "value", *labels, "accepted (mean)"],
                   [(sweep, f"{value:g}", *(f"{final_ctr(by[k]).mean():.4f}" for k in labels),
                     f"{np.mean([float(r.accepted[:, -1].mean()) for r in by.values()]):.0f}")
                    for (sweep, value), by in rows.items()], note)


def obd_table(rows: dict[tuple[str, float], dict[str, Result]], config: Config) -> C.Table:
    return ctr_table(
        f"Table 2 (OBD replay): final CTR after {config.obd_horizon} logged events", rows,
        [LABELS[n] for n in config.obd_agents],
        f"Mean over {config.obd_runs} runs of clicks / accepted events. Defaults m = "
        f"{config.widths[0]}, kappa = {config.kappas[0]:g}, S = {config.bounds[0]:g} (in every "
        "sweep). The paper's CTRs: .0013-.0052.")


def ts_on_top(rows: Iterable[dict[str, Result]],
              ts: Sequence[str]) -> tuple[bool | None, str]:
    """A TS agent's mean CTR highest in every row of ``{label: Result}``: False where another
    agent's is above the best TS agent's with a paired 95% CI excluding 0."""
    tops, failed = 0, []
    for by_agent in rows:
        ctr = {k: final_ctr(v) for k, v in by_agent.items()}
        best_ts = max((k for k in ctr if k in ts), key=lambda k: ctr[k].mean())
        other = max((k for k in ctr if k not in ts), key=lambda k: ctr[k].mean())
        if ctr[best_ts].mean() >= ctr[other].mean():
            tops += 1
        else:
            gap, half = C.paired_gap(ctr[other], ctr[best_ts])
            failed.append(gap - half > 0)
    return C.decide(not failed, any(failed)), (
        f"a TS agent highest in {tops} of {tops + len(failed)} rows; significantly below "
        f"another agent in {sum(failed)}")


def figure_claims(results: dict[str, C.PanelResult]) -> list[tuple[str, bool | None, str]]:
    claims = []
    for title, result in results.items():
        curves = short(result)
        if "NL-UCB-2" in curves:
            best = min((k for k in curves if k != "random"), key=lambda k: C.mean_final(curves[k]))
            gap, half = C.paired_gap(C.final_regret(curves["NL-UCB-2"]),
                                     C.final_regret(curves[best]))
            claims.append((f"[Figs. 1-2] NL-UCB-2 is lowest or within its CI of the lowest on "
                           f"{title}", C.decide(best == "NL-UCB-2", gap - half > 0),
                           f"lowest {best} {C.mean_final(curves[best]):.1f}, "
                           f"NL-UCB-2 {C.mean_final(curves['NL-UCB-2']):.1f}, paired gap "
                           f"{gap:+.1f} ± {half:.1f}"))
        lin = [LABELS[n] for n in LINEAR if LABELS[n] in curves]
        neural = [LABELS[n] for n in NEURALLOG_UCB if LABELS[n] in curves]
        if lin and neural:
            best_lin = min(lin, key=lambda k: C.mean_final(curves[k]))
            best_nl = min(neural, key=lambda k: C.mean_final(curves[k]))
            claims.append((f"[Figs. 1-2] the linear logistic baselines are worse than "
                           f"NeuralLog-UCB on {title} ({best_lin} vs {best_nl})",
                           *C.worse_than(curves[best_lin], curves[best_nl])))
    return claims


def obd_claims(rows: dict[tuple[str, float], dict[str, Result]],
               config: Config) -> list[tuple[str, bool | None, str]]:
    claims = []
    ts = [LABELS[n] for n in TS if n in config.obd_agents]
    if ts:
        claims.append(("[Table 2] a NeuralLog-TS agent has the highest CTR in every row",
                       *ts_on_top(rows.values(), ts)))
    invariant = [LABELS[n] for n in ("neurallog-ucb-2", "neurallog-ts-2", "ada-ofu-ecolog")
                 if n in config.obd_agents]
    kappa_rows = [rows["kappa", k] for k in config.kappas]
    if invariant and len(kappa_rows) > 1:
        same = all(np.array_equal(np.asarray(getattr(r[lbl], field)),
                                  np.asarray(getattr(kappa_rows[0][lbl], field)))
                   for r in kappa_rows for lbl in invariant
                   for field in ("cumulative_reward", "accepted"))
        claims.append(("[Table 2] kappa-invariance: " + ", ".join(invariant) + " give identical "
                       "results for every kappa", same, "bit-identical clicks and accepted "
                       "counts" if same else "results differ across kappa"))
    return claims


def body(r: C.Run) -> C.Page:
    config = r.config
    figures, rows = run_figures(config, r.key, r.progress), run_obd(config, r.key, r.progress)
    fig, axes = C.new_figure(1, len(figures) + 1, width=4.6, height=3.8)
    for ax, (title, result) in zip(axes[0], figures.items(), strict=False):
        C.draw_curves(ax, result.curves, result.kinds, title)
        ax.legend(fontsize=6)
    for label, res in (rows[next(iter(rows))] if rows else {}).items():
        axes[0][-1].plot(np.asarray(res.steps), res.mean("reward"), label=label)
    C.style_axes(axes[0][-1], "logged event", "cumulative clicks", "OBD replay, default row",
                 legend=6)
    tables = [figure_table(figures, config), tuning_table(figures)]
    intro = (f"Figures 1-2: T = {config.horizon}, {config.num_runs} runs, agents "
             + ", ".join(LABELS[a] for a in config.agents) + f"; synthetic d = {config.dim}, "
             f"K = {config.num_arms}, pool {config.pool_size}; width m = {config.width}, nu over "
             f"{list(config.nu_factors)} x the defaults. Table 2: {config.obd_horizon} logged "
             f"events x {config.obd_runs} runs. The paper: d = 20, pool 2500, T = 2000, 10 runs,"
             " mnist (`digits` stands in). " + C.RULES)
    claims = figure_claims(figures) + (obd_claims(rows, config) if rows else [])
    return C.Page(fig, tables + ([obd_table(rows, config)] if rows else []), claims, intro,
                  {"figures": figures, "obd": rows, "config": config})


def main(argv: Sequence[str] | None = None) -> C.Report:
    return C.script(NAME, TITLE, SCALES, argv, body, doc=__doc__)


if __name__ == "__main__":
    main()
