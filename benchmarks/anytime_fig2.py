"""Anytime ensemble sampling (Sun, Wang & Xu), Figure 2 (a)-(c): GLM-ES ablations (logistic).

Reproduces the one-at-a-time ablations of Sun et al. 2025, Fig. 2, around the paper's GLM-ES
(m = 10, lambda = 1, sigma_R = 0.1, tau design warm-up rounds, 100 gd steps of 0.01), on the
logistic bandit (``logistic``: ``sigmoid(<x, theta*>) + N(0, 0.5^2)``, unit theta* and arms),
App. F:

* **(a) ensemble size m** in {5, 10, 20, 50}. Claim: m = 5 is worse and more variable (its spread
  over instances is the largest); m = 50 gains only marginally over m = 10.
* **(b) regulariser lambda** in {0.001, 0.1, 1, 10, 100} (the paper's "lambda ~ 0" is 0.001:
  the loss needs lambda > 0). Claim: lambda ~ 1 is best; lambda ~ 0 and very large lambda are
  worse.
* **(c) perturbation scale sigma_R** in {0.001, 0.01, 0.1, 1, 10}. Claim: sigma_R ~ 0.1 is best;
  tiny sigma_R is greedy (steep late regret), huge sigma_R explores too much (large early regret).

Panel (d), the network-structure ablation on the quadratic bandit, belongs to the neural
reproduction.

Each panel is one ``jb.sweep``, one compiled program: ``ensemble_size`` is static, so panel (a)
allocates the largest m and sweeps ``active_members`` (``j_t`` is drawn from the first m members;
members are independent given the data, so this is exactly an m-member GLM-ES), and panels (b)
and (c) have grids of the same length, so they share one program. Every configuration sees the
same instances and noise (common random numbers), so gaps are paired run by run; the baseline
(m = 10, lambda = 1, sigma_R = 0.1) is the same run in all three panels.

Run it from the repository root::

    python -m benchmarks.anytime_fig2                   # --scale small (CPU, minutes)
    python -m benchmarks.anytime_fig2 --scale paper     # d = 20, K = 50, T = 10,000

``--solver gd`` (default) or ``newton``. It writes ``anytime_fig2.png`` and ``anytime_fig2.md``
into ``--out`` (default ``results/reproduce/anytime_fig2/``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import jax
import numpy as np

import jaxbandits as jb
from benchmarks import anytime_fig1 as fig1
from benchmarks import framework as C
from jaxbandits import Result

NAME = "anytime_fig2"
TITLE = "Anytime ensemble sampling, Figure 2 (a)-(c): GLM-ES ablations of m, lambda and sigma_R"

#: ablation -> (swept field, symbol, baseline value)
ABLATIONS = {"m": ("active_members", "m", 10), "lambda": ("reg", "lambda", 1.0),
             "sigma_R": ("perturb_std", "sigma_R", 0.1)}


@dataclasses.dataclass(frozen=True)
class Config:
    """Sizes of one scale.

    Attributes:
      dim, num_arms, horizon, num_runs, warmup: the logistic bandit's d and K, T, instances,
        and tau.
      sizes, regs, perturbs: the grids of panels (a), (b) and (c); each holds the baseline value
        (10, 1 and 0.1).
      chunk_size, num_records: runner options.
    """

    dim: int
    num_arms: int
    horizon: int
    num_runs: int
    warmup: int
    sizes: tuple[int, ...] = (5, 10, 20, 50)
    regs: tuple[float, ...] = (0.001, 0.1, 1.0, 10.0, 100.0)
    perturbs: tuple[float, ...] = (0.001, 0.01, 0.1, 1.0, 10.0)
    chunk_size: int = 500
    num_records: int = 60

    def grid(self, ablation: str) -> tuple:
        return {"m": self.sizes, "lambda": self.regs, "sigma_R": self.perturbs}[ablation]


SCALES = {
    "tiny": Config(dim=3, num_arms=5, horizon=60, num_runs=4, warmup=10, sizes=(5, 10),
                   regs=(0.001, 1.0, 100.0), perturbs=(0.001, 0.1, 10.0), chunk_size=60,
                   num_records=20),
    # not on the command line: the sizes of notebooks/anytime_glm.ipynb
    "notebook": Config(dim=8, num_arms=16, horizon=1000, num_runs=8, warmup=100,
                       sizes=(5, 10, 20), regs=(0.001, 1.0, 100.0), perturbs=(0.001, 0.1, 10.0),
                       num_records=40),
    "small": Config(dim=10, num_arms=20, horizon=2000, num_runs=10, warmup=200),
    "paper": Config(dim=20, num_arms=50, horizon=10_000, num_runs=10, warmup=500,
                    chunk_size=1000, num_records=100),
}


# ------------------------------------------------------------------------------------------------
# Experiments.


def run_ablation(ablation: str, config: Config, key: jax.Array, solver: str = "gd",
                 progress: bool | None = False) -> dict:
    """``{value: Result}`` of one ablation: one ``jb.sweep`` around the paper's GLM-ES."""
    field = ABLATIONS[ablation][0]
    values = config.grid(ablation)
    size = max(config.sizes) if ablation == "m" else 10
    agent = fig1.glm_es(config.warmup, solver, ensemble_size=size)
    env = fig1.log_env(config)
    options = C.run_options(config.horizon, config.chunk_size, config.num_records,
                            include=(config.warmup, *fig1.checkpoints(config.horizon,
                                                                      config.warmup)),
                            progress=progress)
    results = jb.sweep(env, agent, key, {field: list(values)}, config.horizon, config.num_runs,
                       **options)
    return dict(zip(values, results.values(), strict=True))


def run(config: Config, key: jax.Array, solver: str = "gd",
        progress: bool | None = False) -> dict[str, dict]:
    """``{ablation: {value: Result}}`` for the three ablations."""
    return {a: run_ablation(a, config, key, solver, progress) for a in ABLATIONS}


# ------------------------------------------------------------------------------------------------
# Statistics, drawing, tables and claims.


def early_regret(result: Result, warmup: int) -> np.ndarray:
    """``(runs,)`` regret over the first 20% of the rounds after the warm-up."""
    w1, _, _ = fig1.checkpoints(result.horizon, warmup)
    return fig1.regret_at(result, w1) - fig1.regret_at(result, warmup)


def late_slope(result: Result, warmup: int) -> np.ndarray:
    """``(runs,)`` regret per round over the last 20% of the rounds."""
    _, w2, horizon = fig1.checkpoints(result.horizon, warmup)
    return (fig1.regret_at(result, horizon) - fig1.regret_at(result, w2)) / (horizon - w2)


def value_label(ablation: str, value) -> str:
    return f"{ABLATIONS[ablation][1]} = {value:g}"


def draw_ablation(ax, ablation: str, by_value: dict, title: str, warmup: int) -> None:
    """Regret curves with 95% bands: the baseline gray solid, the variants dashed (as the paper)."""
    base = ABLATIONS[ablation][2]
    for value, result in by_value.items():
        steps = np.asarray(result.steps)
        style = ({"color": "0.35", "linestyle": "-", "linewidth": 2.0} if value == base
                 else {"linestyle": "--"})
        (line,) = ax.plot(steps, result.mean("regret"), label=value_label(ablation, value),
                          **style)
        lower, upper = result.confidence_band("regret")
        ax.fill_between(steps, lower, upper, color=line.get_color(), alpha=0.12, linewidth=0)
    ax.axvline(warmup, color="0.6", linewidth=0.8, linestyle=":")
    ax.set_xlabel("round t")
    ax.set_ylabel("cumulative regret")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)


def ablation_table(ablation: str, by_value: dict, config: Config) -> C.Table:
    base = ABLATIONS[ablation][2]
    reference = C.final_regret(by_value[base])
    w1, w2, _ = fig1.checkpoints(config.horizon, config.warmup)
    table = C.Table(
        f"({'abc'[list(ABLATIONS).index(ablation)]}) {ABLATIONS[ablation][1]}: final regret at "
        f"T = {config.horizon}",
        ["setting", "final regret (mean ± 95% CI)", "sd over runs", "gap to baseline (paired)",
         f"early regret (t = {config.warmup}..{w1})", f"late slope x1000 (t > {w2})"],
        note=(f"Logistic bandit, d = {config.dim}, K = {config.num_arms}, {config.num_runs} "
              "instances "
              f"(common random numbers), tau = {config.warmup}; other settings at the baseline "
              "m = 10, lambda = 1, sigma_R = 0.1 (marked *). Early regret: mean over the first "
              "20% of the rounds after the warm-up; late slope: mean regret per round over the "
              "last 20%."))
    for value, result in by_value.items():
        final = C.final_regret(result)
        table.add(value_label(ablation, value) + (" *" if value == base else ""),
                  C.fmt_ci(final), f"{final.std(ddof=1) if final.size > 1 else 0.0:.1f}",
                  "—" if value == base else C.fmt_ci(final - reference),
                  f"{early_regret(result, config.warmup).mean():.1f}",
                  f"{1000 * late_slope(result, config.warmup).mean():.2f}")
    return table


def check_claims(results: dict[str, dict], config: Config) -> list[tuple[str, bool | None, str]]:
    """Fig. 2's claims as verdicts: True / False when the means differ by at least
    :data:`anytime_fig1.ORDER_TOL` or the paired 95% CI excludes 0, else None (not decidable)."""
    claims: list[tuple[str, bool | None, str]] = []

    def sd(result):
        return float(C.final_regret(result).std(ddof=1))

    def trail(by_value, symbol, stat=fig1.mean_final, fmt="{:.1f}"):
        return ", ".join(f"{symbol}={v:g}: " + fmt.format(stat(r)) for v, r in by_value.items())

    sizes = results["m"]
    if 5 in sizes and 10 in sizes:
        verdict, evidence = fig1.worse_than(sizes[5], sizes[10])
        claims.append(("[Fig. 2] m = 5 has larger final regret than m = 10", verdict, evidence))
        verdict, evidence = fig1.ordering(sd(sizes[5]), sd(sizes[10]))
        claims.append(("[Fig. 2] m = 5 is more variable than m = 10 (sd over instances)", verdict,
                       f"sd {evidence}"))
        others = [fig1.ordering(sd(sizes[5]), sd(r))[0] for m, r in sizes.items() if m != 5]
        claims.append(("[Fig. 2] m = 5 has the largest spread of the m grid", fig1.all_of(others),
                       "sd " + trail(sizes, "m", sd)))
    if 50 in sizes and 10 in sizes:
        ok, evidence = fig1.close(sizes[50], sizes[10])
        claims.append(("[Fig. 2] m = 50 gains only marginally over m = 10 (within "
                       f"{100 * fig1.CLOSE_TOL:.0f}%)", ok, evidence))

    regs = results["lambda"]
    low, high = min(regs), max(regs)
    if 1.0 in regs and low < 1.0 < high:
        verdicts = [fig1.worse_than(regs[v], regs[1.0])[0] for v in (low, high)]
        claims.append((f"[Fig. 2] lambda = 1 beats lambda = {low:g} and lambda = {high:g}",
                       fig1.all_of(verdicts), trail(regs, "lambda")))
        verdicts = [fig1.worse_than(r, regs[1.0])[0] for v, r in regs.items() if v != 1.0]
        claims.append(("[Fig. 2] lambda = 1 is the best of the lambda grid", fig1.all_of(verdicts),
                       trail(regs, "lambda")))

    sigmas = results["sigma_R"]
    tiny = [v for v in sigmas if v < 0.1]
    huge = [v for v in sigmas if v > 0.1]
    if 0.1 in sigmas and tiny and huge:
        for name, values in (("tiny", tiny), ("huge", huge)):
            verdicts = [fig1.worse_than(sigmas[v], sigmas[0.1])[0] for v in values]
            claims.append((f"[Fig. 2] sigma_R = 0.1 beats every {name} sigma_R "
                           f"({'< 0.1' if name == 'tiny' else '> 0.1'})", fig1.all_of(verdicts),
                           trail(sigmas, "sigma_R")))
        smallest, largest = min(tiny), max(huge)
        verdict, evidence = fig1.ordering(
            1000 * float(late_slope(sigmas[smallest], config.warmup).mean()),
            1000 * float(late_slope(sigmas[0.1], config.warmup).mean()))
        claims.append((f"[Fig. 2] tiny sigma_R = {smallest:g} is greedy: steeper late regret than "
                       "sigma_R = 0.1", verdict, f"late slope x1000 {evidence}"))
        verdict, evidence = fig1.ordering(
            float(early_regret(sigmas[largest], config.warmup).mean()),
            float(early_regret(sigmas[0.1], config.warmup).mean()))
        claims.append((f"[Fig. 2] huge sigma_R = {largest:g} over-explores: larger early "
                       "regret than sigma_R = 0.1", verdict, f"early regret {evidence}"))
    return claims


# ------------------------------------------------------------------------------------------------
# Main.


def draw(results: dict[str, dict], config: Config):
    fig, axes = C.new_figure(1, len(results), width=5.0, height=4.0)
    for i, (ablation, by_value) in enumerate(results.items()):
        draw_ablation(axes[0, i], ablation, by_value,
                      f"({'abc'[i]}) logistic bandit, varying {ABLATIONS[ablation][1]}",
                      config.warmup)
    return fig


def main(argv: Sequence[str] | None = None) -> C.Report:
    """Runs the reproduction at ``--scale`` and writes the PNG and the markdown report."""
    args = fig1.parse_args(NAME, __doc__, argv)
    config = C.configure(SCALES, args)
    out = C.output_dir(NAME, args.out)
    start = C.timer()
    print(f"{TITLE}\nscale {args.scale}, solver {args.solver}: {config}", flush=True)
    results = run(config, jax.random.key(args.seed), args.solver,
                  progress=False if args.no_progress else None)

    figure = C.save_figure(draw(results, config), out / f"{NAME}.png")
    tables = [ablation_table(a, by_value, config) for a, by_value in results.items()]
    claims = check_claims(results, config)
    seconds = C.timer() - start
    intro = (f"Scale `{args.scale}`, seed {args.seed}, GLM solver `{args.solver}`: the logistic "
             "bandit with "
             f"d = {config.dim}, K = {config.num_arms}, T = {config.horizon}, "
             f"{config.num_runs} instances, noise 0.5. Baseline GLM-ES: m = 10, lambda = 1, "
             f"sigma_R = 0.1, tau = {config.warmup} G-optimal design rounds, 100 gd steps of "
             "0.01 (mean loss, warm-started); one setting varied at a time. "
             "Sun et al. 2025, Fig. 2(a)-(c).")
    return C.finish(NAME, TITLE, intro, tables, claims, figure, out, args, seconds,
                    data={"results": results, "config": config, "solver": args.solver})


if __name__ == "__main__":
    main()
